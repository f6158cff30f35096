"""PyTorch's rounding divisions on arrays: the floor and truncated quotients, ``remainder``
and ``fmod``, with PyTorch's signed zeros and PyTorch's derivatives.

>>> import numpy as np
>>> float(remainder(np.float32(-0.0), np.float32(1.0)))
-0.0
"""

from __future__ import annotations

from typing import Any

import funcgrad.numpy as fnp
from funcgrad.core import Tracer
from funcgrad.transforms.custom import custom_jvp, custom_vjp


def _is_float(*xs: Any) -> bool:
    return bool(fnp.issubdtype(fnp.result_type(*xs), fnp.floating))


def floor_divide(a: Any, b: Any) -> Any:
    """PyTorch's floor division: JAX's quotient, except that a zero quotient takes the sign
    of ``a / b`` (PyTorch's div_floor: ``-2.5 // -3`` is 0., where JAX's gives -0.).

    >>> import numpy as np
    >>> float(floor_divide(np.float64(-2.5), np.float64(-3.0)))
    0.0
    """
    q = fnp.floor_divide(a, b)
    if not _is_float(q):
        return q
    return fnp.where(q == 0, fnp.copysign(fnp.zeros_like(q), fnp.divide(a, b)), q)


def trunc_divide(a: Any, b: Any) -> Any:
    """The quotient rounded toward zero (C's integer division; ``trunc(a / b)`` for
    floats).

    >>> import numpy as np
    >>> int(trunc_divide(np.int64(-7), np.int64(2)))
    -3
    """
    if fnp.issubdtype(fnp.result_type(a, b), fnp.inexact):
        return fnp.trunc(fnp.divide(a, b))
    q = fnp.floor_divide(a, b)
    inexact = (fnp.remainder(a, b) != 0) & ((a < 0) != (b < 0))
    return fnp.where(inexact, q + 1, q)


def remainder(a: Any, b: Any) -> Any:
    """``a % b`` as PyTorch computes it: the divisor's sign, but a zero keeps the sign of
    the dividend (``-0. % 1.`` and ``-2. % 2.`` are -0., as JAX's; NumPy gives 0.), with
    PyTorch's derivative.

    >>> import numpy as np
    >>> float(remainder(np.float64(2.0), np.float64(-2.0)))
    0.0
    """
    if not _is_float(a, b):
        return fnp.remainder(a, b)
    if isinstance(a, Tracer) or isinstance(b, Tracer):
        return _float_remainder(a, b)
    # Constants: no derivative to define, so not the custom rule's dispatch either.
    return fnp.remainder(a, b)


def fmod(a: Any, b: Any) -> Any:
    """C's fmod (the dividend's sign), with PyTorch's derivative.

    >>> import numpy as np
    >>> float(fmod(np.float64(-7.0), np.float64(2.0)))
    -1.0
    """
    if not _is_float(a, b):
        return fnp.fmod(a, b)
    if isinstance(a, Tracer) or isinstance(b, Tracer):
        return _float_fmod(a, b)
    return fnp.fmod(a, b)


@custom_jvp
def _float_remainder(a: Any, b: Any) -> Any:
    return fnp.remainder(a, b)


@_float_remainder.defjvp
def _float_remainder_jvp(primals: Any, tangents: Any) -> Any:
    # PyTorch's derivative takes the divisor's factor from its floor division (exact, from
    # fmod), not from floor(a / b), whose rounded quotient can land on the next integer.
    (a, b), (da, db) = primals, tangents
    return _float_remainder(a, b), da - db * floor_divide(a, b)


@custom_jvp
def _float_fmod(a: Any, b: Any) -> Any:
    return fnp.fmod(a, b)


@_float_fmod.defjvp
def _float_fmod_jvp(primals: Any, tangents: Any) -> Any:
    # PyTorch's: the divisor's factor is the rounded quotient truncated, trunc(a / b).
    (a, b), (da, db) = primals, tangents
    return _float_fmod(a, b), da - db * fnp.trunc(fnp.divide(a, b))


@custom_vjp
def remainder_without_derivative(a: Any, b: Any) -> Any:
    """:func:`remainder` whose derivative raises PyTorch's error (its remainder of a
    number by a tensor has no derivative formula).

    >>> import numpy as np
    >>> float(remainder_without_derivative(np.float64(-0.0), np.float64(3.0)))
    -0.0
    """
    return remainder(a, b)


def _no_derivative_fwd(a: Any, b: Any) -> tuple[Any, None]:
    return remainder(a, b), None


def _no_derivative_bwd(res: None, g: Any) -> Any:
    raise RuntimeError("derivative for aten::remainder is not implemented")


remainder_without_derivative.defvjp(_no_derivative_fwd, _no_derivative_bwd)
