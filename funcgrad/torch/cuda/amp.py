"""``torch.cuda.amp``: PyTorch's deprecated CUDA spellings of ``torch.amp`` (each warns as
PyTorch does, with a FutureWarning naming the new spelling)."""

from __future__ import annotations

import warnings
from typing import Any

from funcgrad.torch import _dtypes as D
from funcgrad.torch import amp as _amp

__all__ = ["GradScaler", "amp_definitely_not_available", "autocast", "custom_bwd",
           "custom_fwd"]


def _warn(old: str, new: str) -> None:
    warnings.warn(f"`torch.cuda.amp.{old}(args...)` is deprecated. Please use "
                  f"`torch.amp.{new}` instead.", FutureWarning, stacklevel=3)


def amp_definitely_not_available() -> bool:
    from funcgrad.torch._device import cuda_available  # noqa: PLC0415

    return not cuda_available()


class autocast(_amp.autocast):  # noqa: N801 - PyTorch's name
    """``torch.amp.autocast("cuda", ...)``."""

    def __init__(self, enabled: bool = True, dtype: Any = D.float16,
                 cache_enabled: bool = True) -> None:
        _warn("autocast", "autocast('cuda', args...)")
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    """``torch.amp.GradScaler("cuda", ...)``."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        _warn("GradScaler", "GradScaler('cuda', args...)")
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)


def custom_fwd(fwd: Any = None, *, cast_inputs: Any = None) -> Any:
    _warn("custom_fwd", "custom_fwd(args..., device_type='cuda')")
    return _amp.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd: Any) -> Any:
    _warn("custom_bwd", "custom_bwd(args..., device_type='cuda')")
    return _amp.custom_bwd(bwd, device_type="cuda")
