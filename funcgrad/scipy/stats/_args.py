"""Argument handling shared by the distributions that follow JAX's promotion exactly: list
arguments are refused as JAX refuses them, and weak types survive (a Python scalar in
gives a weakly typed result out), so constants are written as Python scalars.

>>> from funcgrad.scipy.stats._args import promote_args_inexact
>>> [a.dtype.name for a in promote_args_inexact("f", 1, 2.0)]
['float32', 'float32']
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.numpy._core import is_array, promote_args, promote_inexact


def check_arraylike(name: str, *xs: Any) -> None:
    """JAX's TypeError for an argument that is not an array or a scalar (a list, say)."""
    for pos, x in enumerate(xs):
        if not (is_array(x) or isinstance(x, (np.ndarray, np.generic))
                or dtypes.python_scalar(x)):
            raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(x)} at "
                            f"position {pos}.")


def check_dtype_known(*xs: Any) -> None:
    """JAX's TypeError where its dtype promotion meets a non-array (a list, say)."""
    for x in xs:
        if not (is_array(x) or isinstance(x, (np.ndarray, np.generic))
                or dtypes.python_scalar(x)):
            raise TypeError(f"Cannot determine dtype of {x}")


def promote_args_inexact(name: str, *xs: Any) -> list[Any]:
    """The arguments in one inexact dtype (not broadcast: the formulas do that)."""
    check_arraylike(name, *xs)
    return list(promote_inexact(*xs))


def promote_args_numeric(name: str, *xs: Any) -> list[Any]:
    """The arguments in their common dtype, integers staying integers."""
    check_arraylike(name, *xs)
    return list(promote_args(*xs))


__all__ = ["check_arraylike", "check_dtype_known", "promote_args_inexact", "promote_args_numeric"]
