"""Host callbacks: ``debug_callback`` (a side effect, no outputs) and ``pure_callback``
(arrays of declared shapes computed by a Python function).

Both run their function at run time on concrete values: eagerly when bound eagerly, on
every call of a compiled (``jit``) program when staged. ``debug_callback`` is
*effectful*: compiled programs never drop it as dead code nor merge two of them.
The user functions are ``funcgrad.debug.print``, ``funcgrad.debug.callback`` and
``funcgrad.pure_callback``.

>>> import numpy as np
>>> seen = []
>>> debug_callback_p.bind(np.arange(3), callback=lambda x: seen.append(x.tolist()))
[]
>>> seen
[[0, 1, 2]]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.array import Array, wrap
from funcgrad.core import Primitive, get_aval
from funcgrad.errors import BackendError, NonDifferentiableError
from funcgrad.ir import ShapedArray
from funcgrad.primitives.rules import batch_size, full, move_to_front, with_batch
from funcgrad.primitives.structural import concatenate, expand_dims, slice_, squeeze
from funcgrad.source_info import user_frame
from funcgrad.tree_util import PyTreeDef, tree_flatten, tree_unflatten


class CallbackDifferentiationError(NonDifferentiableError, ValueError):
    """``pure_callback`` was differentiated (JAX raises ValueError: wrap it in custom_jvp)."""


VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                "legacy_vectorized", None)


class FlatCallback:
    """A user function called on flat buffers: they become Arrays (weak types as traced)
    and are unflattened to the user's ``(args, kwargs)``. Equal when made from the same
    function and structures (so equal pure callbacks may be merged)."""

    __slots__ = ("fn", "in_tree", "weak", "out_tree")

    def __init__(self, fn: Callable[..., Any], in_tree: PyTreeDef, weak: tuple[bool, ...],
                 out_tree: PyTreeDef | None = None) -> None:
        self.fn, self.in_tree, self.weak, self.out_tree = fn, in_tree, weak, out_tree

    def _key(self) -> tuple[Any, ...]:
        return (self.fn, self.in_tree, self.weak, self.out_tree)

    def __eq__(self, other: object) -> bool:
        return type(other) is FlatCallback and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"FlatCallback({getattr(self.fn, '__name__', self.fn)!s})"

    def __call__(self, *bufs: Any) -> Any:
        # Compiled NumPy code may hand over NumPy scalars (results of reductions).
        bufs = tuple(np.asarray(b) if isinstance(b, np.generic) else b for b in bufs)
        arrays = [wrap(b, ShapedArray(b.shape, b.dtype, w)) for b, w in zip(bufs, self.weak)]
        args, kwargs = tree_unflatten(self.in_tree, arrays)
        return self.fn(*args, **kwargs)


def flat_callback(fn: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any],
                  out_tree: PyTreeDef | None = None) -> tuple[FlatCallback, list[Any]]:
    """``fn`` as a function of the flat leaves of ``(args, kwargs)``, and those leaves."""
    leaves, in_tree = tree_flatten((tuple(args), dict(kwargs)))
    weak = tuple(bool(get_aval(x).weak_type) for x in leaves)
    return FlatCallback(fn, in_tree, weak, out_tree), leaves


def _index(x: Any, i: int, dim: int | None) -> Any:
    """Element ``i`` of ``x`` along its batch axis ``dim`` (``x`` itself if unbatched)."""
    if dim is None:
        return x
    shape = get_aval(x).shape
    start = [0] * len(shape)
    limit = list(shape)
    start[dim], limit[dim] = i, i + 1
    return squeeze(slice_(x, start, limit), (dim,))


# ------------------------------------------------------------------ debug_callback


def _debug_impl(xp: Any, *bufs: Any, callback: Callable[..., Any]) -> list[Any]:
    callback(*bufs)
    return []


def _debug_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
               callback: Callable[..., Any]) -> tuple[list[Any], list[Any]]:
    # The callback sees the primal values; tangents are ignored (as in JAX).
    debug_callback_p.bind(*primals, callback=callback)
    return [], []


def _debug_vjp(cts: Sequence[Any], primals: Sequence[Any], outs: Sequence[Any], *,
               callback: Callable[..., Any]) -> list[Any]:
    return [None] * len(primals)


def _debug_batch(args: Sequence[Any], dims: Sequence[int | None], *,
                 callback: Callable[..., Any]) -> tuple[list[Any], list[Any]]:
    # As JAX: one call per element of the batch, in order.
    for i in range(batch_size(args, dims)):
        debug_callback_p.bind(*(_index(a, i, d) for a, d in zip(args, dims)),
                              callback=callback)
    return [], []


debug_callback_p = Primitive("debug_callback", abstract_eval=lambda *avals, callback: [],
                             impl=_debug_impl, jvp=_debug_jvp, vjp=_debug_vjp,
                             batch=_debug_batch, multiple_results=True)
debug_callback_p.effectful = True
debug_callback_p.zero_derivative = True
debug_callback_p.vjp_reads = ""
debug_callback_p.describe(lax=None, fusion=None, cuda=None, ufunc=None, torch_method=None)


# ------------------------------------------------------------------- pure_callback


def _pure_abstract(*avals: ShapedArray, callback: Callable[..., Any],
                   result_avals: tuple[ShapedArray, ...], vmap_method: str | None
                   ) -> list[ShapedArray]:
    return list(result_avals)


def _pure_impl(xp: Any, *bufs: Any, callback: Callable[..., Any],
               result_avals: tuple[ShapedArray, ...], vmap_method: str | None) -> list[Any]:
    got = callback(*bufs)
    leaves = tree_flatten(got)[0]
    if len(leaves) != len(result_avals):
        raise BackendError(f"pure_callback: the callback returned {len(leaves)} arrays where "
                           f"result_shape_dtypes declares {len(result_avals)}")
    outs = []
    for k, (o, av) in enumerate(zip(leaves, result_avals)):
        typed = hasattr(o, "dtype")  # an array or NumPy scalar, not a Python number
        if isinstance(o, Array):
            o = np.asarray(o)
        o = xp.asarray(o)
        if tuple(o.shape) != av.shape:
            raise BackendError(f"Incorrect output shape for return value #{k}: Expected: "
                               f"{av.shape}, Actual: {tuple(o.shape)}")
        # (a 64-bit result counts as its 32-bit type with 64-bit mode off, as JAX
        # canonicalizes what callbacks return)
        if typed and dtypes.canonicalize(o.dtype) != av.dtype:
            raise BackendError(f"Incorrect output dtype for return value #{k}: Expected: "
                               f"{av.dtype}, Actual: {o.dtype}")
        outs.append(o.astype(av.dtype, copy=False))
    return outs


def _pure_no_derivative(*args: Any, **params: Any) -> Any:
    raise CallbackDifferentiationError(
        "Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use callbacks "
        f"while taking gradients (pure_callback differentiated at {user_frame()})."
    )


def _pure_batch(args: Sequence[Any], dims: Sequence[int | None], *,
                callback: Callable[..., Any], result_avals: tuple[ShapedArray, ...],
                vmap_method: str | None) -> tuple[list[Any], list[Any]]:
    size = batch_size(args, dims)
    params = {"callback": callback, "result_avals": result_avals, "vmap_method": vmap_method}
    if vmap_method is None:
        raise NotImplementedError(
            "vmap is only supported for the pure_callback primitive when vmap_method is one "
            "of 'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
            "'legacy_vectorized'. Got vmap_method=None.")
    if vmap_method in ("sequential", "sequential_unrolled"):
        if size == 0:
            return [full((0, *av.shape), 0, av.dtype) for av in result_avals], \
                [0] * len(result_avals)
        per = [pure_callback_p.bind(*(_index(a, i, d) for a, d in zip(args, dims)), **params)
               for i in range(size)]
        outs = [concatenate([expand_dims(p[k], (0,)) for p in per], 0)
                for k in range(len(result_avals))]
        return outs, [0] * len(outs)
    if vmap_method == "broadcast_all":
        xs = [with_batch(a, d, size) for a, d in zip(args, dims)]
    elif vmap_method == "expand_dims":
        xs = [expand_dims(a, (0,)) if d is None else move_to_front(a, d)
              for a, d in zip(args, dims)]
    else:  # legacy_vectorized: unbatched operands are passed as they are
        xs = [a if d is None else move_to_front(a, d) for a, d in zip(args, dims)]
    batched = tuple(ShapedArray((size, *av.shape), av.dtype, av.weak_type)
                    for av in result_avals)
    outs = pure_callback_p.bind(*xs, callback=callback, result_avals=batched,
                                vmap_method=vmap_method)
    return list(outs), [0] * len(outs)


pure_callback_p = Primitive("pure_callback", abstract_eval=_pure_abstract, impl=_pure_impl,
                            jvp=_pure_no_derivative, vjp=_pure_no_derivative,
                            batch=_pure_batch, multiple_results=True)
pure_callback_p.vjp_fwd = _pure_no_derivative
pure_callback_p.vjp_reads = ""
pure_callback_p.describe(lax=None, fusion=None, cuda=None, ufunc=None, torch_method=None)


# --------------------------------------------------------------------- io_callback


def _io_abstract(*avals: ShapedArray, callback: Callable[..., Any],
                 result_avals: tuple[ShapedArray, ...], ordered: bool) -> list[ShapedArray]:
    return list(result_avals)


def _io_impl(xp: Any, *bufs: Any, callback: Callable[..., Any],
             result_avals: tuple[ShapedArray, ...], ordered: bool) -> list[Any]:
    return _pure_impl(xp, *bufs, callback=callback, result_avals=result_avals,
                      vmap_method=None)


def _io_no_derivative(*args: Any, **params: Any) -> Any:
    raise CallbackDifferentiationError(
        f"IO callbacks do not support JVP. (io_callback differentiated at {user_frame()})")


def _io_batch(args: Sequence[Any], dims: Sequence[int | None], *,
              callback: Callable[..., Any], result_avals: tuple[ShapedArray, ...],
              ordered: bool) -> tuple[list[Any], list[Any]]:
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback.")
    size = batch_size(args, dims)
    if size == 0:
        return [full((0, *av.shape), 0, av.dtype) for av in result_avals], \
            [0] * len(result_avals)
    # As JAX: one call per element, in order (a side effect is not vectorised).
    per = [io_callback_p.bind(*(_index(a, i, d) for a, d in zip(args, dims)),
                              callback=callback, result_avals=result_avals, ordered=False)
           for i in range(size)]
    outs = [concatenate([expand_dims(p[k], (0,)) for p in per], 0)
            for k in range(len(result_avals))]
    return outs, [0] * len(outs)


io_callback_p = Primitive("io_callback", abstract_eval=_io_abstract, impl=_io_impl,
                          jvp=_io_no_derivative, vjp=_io_no_derivative, batch=_io_batch,
                          multiple_results=True)
# A side effect: compiled programs keep it even when its results are unused. funcgrad runs
# a program's equations in order, so ordered=True needs nothing more.
io_callback_p.effectful = True
io_callback_p.vjp_fwd = _io_no_derivative
io_callback_p.vjp_reads = ""
io_callback_p.describe(lax=None, fusion=None, cuda=None, ufunc=None, torch_method=None)

__all__ = ["CallbackDifferentiationError", "FlatCallback", "debug_callback_p", "flat_callback",
           "io_callback_p", "pure_callback_p"]
