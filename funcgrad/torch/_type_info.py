"""``torch.finfo`` and ``torch.iinfo``: the limits of a dtype, printed as PyTorch prints them.

>>> import funcgrad.torch as torch
>>> torch.finfo(torch.bfloat16).eps
0.0078125
>>> torch.iinfo(torch.int8)
iinfo(min=-128, max=127, dtype=int8)
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from funcgrad.torch import _dtypes as D

__all__ = ["finfo", "iinfo"]


class finfo:  # noqa: N801 - torch's name
    """Limits of a floating point dtype (the default dtype when none is given)."""

    def __init__(self, type: Any = None) -> None:  # noqa: A002 - torch's name
        dt = D.get_default_dtype() if type is None else D.to_torch(type)
        if not (dt.is_floating_point or dt.is_complex):
            # (PyTorch's text names its own class where the dtype would go)
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            "torch.iinfo to handle 'torch.finfo'")
        np_dt = np.dtype(dt.np)
        real = np.empty((), np_dt).real.dtype if np_dt.kind == "c" else np_dt
        info = ml_dtypes.finfo(real)
        self.bits = 8 * real.itemsize
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.tiny)
        self.resolution = 10.0 ** -int(info.precision)
        self.dtype = D.to_torch(real).name

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:  # noqa: N801 - torch's name
    """Limits of an integer dtype."""

    def __init__(self, type: Any) -> None:  # noqa: A002 - torch's name
        dt = D.to_torch(type)
        if dt is D.bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if dt.is_floating_point or dt.is_complex:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo "
                            "to handle 'torch.iinfo'")
        info = np.iinfo(np.dtype(dt.np))
        self.bits = info.bits
        self.min = int(info.min)
        self.max = int(info.max)
        self.dtype = dt.name

    def __repr__(self) -> str:
        return f"iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})"
