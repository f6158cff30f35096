"""Shared helpers of the transformations: argument selection and pytree checks.

>>> from funcgrad.transforms._util import normalize_argnums
>>> normalize_argnums(0, 2)
((0,), True)
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.conversion import asarray
from funcgrad.core import Tracer, get_aval
from funcgrad.errors import (
    ArgnumsError,
    GradError,
    HasAuxError,
    IntegerInputError,
    TreeStructureError,
)
from funcgrad.tree_util import tree_flatten


def normalize_argnums(argnums: int | Sequence[int], nargs: int,
                      grad: bool = True) -> tuple[tuple[int, ...], bool]:
    """``(argnums as a tuple, whether a single int was given)``; checks the range with
    JAX's texts (``grad``/``value_and_grad``'s own for too few arguments)."""
    single = not isinstance(argnums, (tuple, list))
    nums: tuple[Any, ...] = (argnums,) if single else tuple(argnums)  # type: ignore[arg-type]
    out = []
    for a in nums:
        try:
            operator.index(a)
        except TypeError:
            raise ArgnumsError(f"argnums must be integers, got {a!r}") from None
    if grad and nums and max(operator.index(a) for a in nums) >= nargs:
        top = max(operator.index(a) for a in nums)
        raise ArgnumsError(
            f"differentiating with respect to argnums={argnums!r} requires at least "
            f"{top + 1} positional arguments to be passed by the caller, but got only "
            f"{nargs} positional arguments.")
    for a in nums:
        i = operator.index(a)
        if not -nargs <= i < nargs:
            raise ArgnumsError(
                "Positional argument indices, e.g. for `static_argnums`, must have value "
                "greater than or equal to -len(args) and less than len(args), but got value "
                f"{i} for len(args) == {nargs}.")
        if i % nargs in out:
            # JAX would compute a gradient for each copy from one tracer: refuse instead.
            raise ArgnumsError(f"argnums={argnums!r} names argument {i % nargs} twice; each "
                               "argument may be named once")
        out.append(i % nargs)
    return tuple(out), single


def as_leaf_array(x: Any) -> Any:
    """Leaves of differentiated arguments: lists of numbers become arrays."""
    return asarray(x)


def check_input_dtypes(leaves: Sequence[Any], what: str, *, holomorphic: bool = False,
                       allow_int: bool = False) -> None:
    """JAX's checks of differentiated inputs, leaf by leaf, with its TypeError texts:
    complex only with ``holomorphic=True``; otherwise floating point for ``jacfwd`` and
    inexact (or integer with ``allow_int``) for the reverse-mode transforms.

    >>> check_input_dtypes([np.float32(1.0)], "grad")
    >>> check_input_dtypes([np.int32(1)], "grad", allow_int=True)
    """
    forward = what == "jacfwd"
    for x in leaves:
        dt = get_aval(x).dtype
        if holomorphic:
            if dt.kind != "c":
                raise GradError(f"{what} with holomorphic=True requires inputs with complex "
                                f"dtype, but got {dt.name}.")
        elif forward:
            if dt.kind != "f":
                raise (GradError if dt.kind == "c" else IntegerInputError)(
                    "jacfwd requires real-valued inputs (input dtype that is a sub-dtype of "
                    f"np.floating), but got {dt.name}. For holomorphic differentiation, pass "
                    "holomorphic=True. For differentiation of non-holomorphic functions "
                    "involving complex inputs or integer inputs, use jax.jvp directly.")
        elif not allow_int and not dtypes.is_inexact(dt):
            raise IntegerInputError(
                f"{what} requires real- or complex-valued inputs (input dtype that is a "
                f"sub-dtype of np.inexact), but got {dt.name}. If you want to use Boolean- or "
                "integer-valued inputs, use vjp or set allow_int to True.")


def check_output_kind(dtype: Any, what: str, holomorphic: bool) -> None:
    """JAX's checks of a reverse-mode output: complex only (and then always) with
    ``holomorphic=True``."""
    dt = np.dtype(dtype)
    if holomorphic:
        if dt.kind != "c":
            raise GradError(f"{what} with holomorphic=True requires outputs with complex "
                            f"dtype, but got {dt.name}.")
    elif dt.kind == "c":
        raise GradError(f"{what} requires real-valued outputs (output dtype that is a "
                        f"sub-dtype of np.floating), but got {dt.name}. For holomorphic "
                        "differentiation, pass holomorphic=True. For differentiation of "
                        "non-holomorphic functions involving complex outputs, use "
                        "jax.vjp directly.")
    elif dt.kind != "f":
        raise GradError(f"{what} requires real-valued outputs (output dtype that is a "
                        f"sub-dtype of np.floating), but got {dt.name}. For differentiation "
                        "of functions with integer outputs, use jax.vjp directly.")


def split_aux(out: Any, has_aux: bool, where: str) -> tuple[Any, Any]:
    if not has_aux:
        return out, None
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise HasAuxError(
            f"{where} was given has_aux=True, so the function must return a pair "
            f"(output, aux), but it returned {type(out).__name__}"
            f"{'' if not isinstance(out, (tuple, list)) else f' of length {len(out)}'}"
        )
    return out[0], out[1]


def check_same_structure(a: Any, b: Any, what_a: str, what_b: str,
                         shapes: bool = True) -> None:
    la, ta = tree_flatten(a)
    lb, tb = tree_flatten(b)
    if ta != tb:
        raise TreeStructureError(f"{what_a} has structure {ta} but {what_b} has structure {tb}; "
                                 "they must match")
    if not shapes:
        return
    for x, y in zip(la, lb):
        if y is None:
            continue
        sx, sy = get_aval(x).shape, get_aval(y).shape
        if sx != sy:
            from funcgrad.errors import ShapeError  # noqa: PLC0415

            raise ShapeError(f"{what_b} leaf of shape {sy} does not match {what_a} leaf of "
                             f"shape {sx}")


def is_tracer(x: Any) -> bool:
    return isinstance(x, Tracer)


class _FwdMask(threading.local):
    def __init__(self) -> None:
        self.mask: tuple[bool, ...] | None = None


_fwd_mask = _FwdMask()


class offering_mask:  # noqa: N801 - used like a function: ``with offering_mask(mask):``
    """Tell the ``vjp_fwd`` rule about to run which operands are differentiated (the
    others are symbolic zeros: constants to it). The rule takes it with :func:`take_mask`
    first thing; a rule called some other way finds none and differentiates them all."""

    __slots__ = ("mask", "prev")

    def __init__(self, mask: tuple[bool, ...]) -> None:
        self.mask = mask

    def __enter__(self) -> None:
        self.prev = _fwd_mask.mask
        _fwd_mask.mask = self.mask

    def __exit__(self, *exc: object) -> None:
        _fwd_mask.mask = self.prev


def take_mask(n: int) -> tuple[bool, ...]:
    """The mask :class:`offering_mask` set for this rule (all True if none), cleared so
    that no rule the forward runs reads it.

    >>> take_mask(2)
    (True, True)
    """
    mask, _fwd_mask.mask = _fwd_mask.mask, None
    if mask is None or len(mask) != n:
        return (True,) * n
    return mask


def fix_unwanted(fun: Callable[..., Any], args: Sequence[Any], mask: Sequence[bool]
                 ) -> tuple[Callable[..., Any], list[Any]]:
    """``fun`` as a function of the ``args`` where ``mask`` is True, the others fixed: what
    is not differentiated is a constant, so a loop it alone reaches is not recorded.

    >>> g, xs = fix_unwanted(lambda a, b: a - b, [5, 2], [False, True])
    >>> xs, g(1)
    ([2], 4)
    """
    if all(mask):
        return fun, list(args)

    def fixed(*wanted: Any) -> Any:
        it = iter(wanted)
        return fun(*[next(it) if m else a for a, m in zip(args, mask)])

    return fixed, [a for a, m in zip(args, mask) if m]


def spread(values: Sequence[Any], mask: Sequence[bool]) -> list[Any]:
    """``values`` (one per True of ``mask``) back in place, None (a symbolic zero) elsewhere.

    >>> spread([7], [False, True])
    [None, 7]
    """
    it = iter(values)
    return [next(it) if m else None for m in mask]
