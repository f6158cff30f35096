r"""``lax.reduce_window``: JAX's choice between the monoid window reductions (``lax.add``,
``lax.max``, ``lax.min`` with their identities: primitives with JAX's derivative rules) and
XLA's generic ReduceWindow of any computation over a pytree of operands, composed here of
pads, strided slices and the computation mapped over every window at once (so it
differentiates, ``jit``\ s and ``vmap``\ s through those).

>>> import numpy as np
>>> from funcgrad import lax
>>> lax.reduce_window(np.arange(4.0, dtype=np.float32), 1.0, lax.mul, (2,))
Array([0., 2., 6.], dtype=float32)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.api import eval_shape
from funcgrad.conversion import asarray
from funcgrad.core import PRIMITIVES, get_aval, is_concrete
from funcgrad.primitives import elementwise as E
from funcgrad.primitives import structural as S
from funcgrad.primitives.convolution import dilate_dim, dilate_pad, padtype_to_pads
from funcgrad.primitives.windows import (
    _canon,
    _check_params,
    _offset_slices,
    identity,
    reduce_window_max_p,
    reduce_window_min_p,
    reduce_window_sum_p,
)
from funcgrad.transforms.vmap import jax_vmap
from funcgrad.tree_util import tree_flatten, tree_unflatten


def _monoid(computation: Any, init_values: Sequence[Any]) -> str | None:
    """JAX's choice of a monoid reduction: one operand, ``lax.add``/``max``/``min``, and a
    concrete scalar init_value that is the identity in its own dtype."""
    if len(init_values) != 1 or not is_concrete(init_values[0]):
        return None
    aval = get_aval(init_values[0])
    if aval.shape != ():
        return None
    value = np.asarray(init_values[0])
    for kind, name in (("sum", "add"), ("max", "max"), ("min", "min")):
        prim = PRIMITIVES[name]
        if computation is prim.lax_fn or computation is prim:
            return kind if value == identity(kind, aval.dtype) else None
    return None


def _init_like(value: Any, operand: Any) -> Any:
    """A Python number as an init_value takes its operand's dtype where the weak-type
    promotion of the two keeps that dtype (an int beside float or int32 data; JAX compares
    the number's own default dtype and refuses: sharp_bits)."""
    if not dtypes.python_scalar(value):
        return value
    dt = get_aval(operand).dtype
    if dtypes.promote((dt, False), (get_aval(value).dtype, True))[0] != dt:
        return value
    try:
        return np.asarray(value, dt)
    except OverflowError:
        return value


def _generic(operands: list[Any], inits: list[Any], computation: Callable[..., Any],
             tree: Any, params: dict[str, Any]) -> list[Any]:
    """XLA's ReduceWindow of any computation: each window starts from the init values and
    takes in its elements of the operands one at a time (padding and dilation holes are
    skipped), the computation applied elementwise across all windows at once."""
    in_avals = [get_aval(x) for x in operands]
    init_avals = [get_aval(v) for v in inits]
    if any(o.dtype != v.dtype for o, v in zip(in_avals, init_avals)):
        raise TypeError("reduce_window got inconsistent dtypes for operands and init_values: "
                        f"got operand dtypes {[o.dtype for o in in_avals]} and init_value "
                        f"dtypes {[v.dtype for v in init_avals]}.")
    if any(v.shape != () for v in init_avals):
        raise TypeError("reduce_window expected init_values to be scalars but init_values "
                        f"have shapes {[v.shape for v in init_avals]}.")
    out_shape = tuple(_check_params(in_avals[0], **params))
    init_tree = tree_unflatten(tree, inits)
    _, out_tree = tree_flatten(eval_shape(computation, init_tree, init_tree))
    if out_tree != tree:
        raise ValueError("reduce_window output must have the same tree structure as the "
                         f"operands {tree} vs. {out_tree}")

    def combine(acc: list[Any], elems: list[Any]) -> list[Any]:
        out, _ = tree_flatten(computation(tree_unflatten(tree, acc), tree_unflatten(tree, elems)))
        return [E.convert_element_type(o, a.dtype) for o, a in zip(out, in_avals)]

    size = math.prod(out_shape)
    flat = jax_vmap(combine)
    accs = [S.broadcast_in_dim(v, (size,), ()) for v in inits]
    config = [(lo, hi, b - 1) for (lo, hi), b in zip(params["padding"], params["base_dilation"])]
    # Which places of the padded, dilated operand hold an element (the rest are skipped).
    holds = dilate_pad(np, np.ones(in_avals[0].shape, bool), 0, params["base_dilation"],
                       params["padding"], False)
    padded = [S.pad(x, np.zeros((), a.dtype), config) for x, a in zip(operands, in_avals)]
    for sl in _offset_slices(params["window_dimensions"], params["window_strides"],
                             params["window_dilation"], out_shape):
        mask = holds[sl].reshape(-1)
        if size == 0 or not mask.any():
            continue
        elems = [S.reshape(x[sl], (size,)) for x in padded]
        new = flat(accs, elems)
        accs = new if mask.all() else [E.select(mask, n, a) for n, a in zip(new, accs)]
    return [S.reshape(a, out_shape) for a in accs]


def reduce_window(operand: Any, init_value: Any, computation: Callable[..., Any],
                  window_dimensions: Sequence[int], window_strides: Sequence[int] | None = None,
                  padding: Any = "VALID", base_dilation: Sequence[int] | None = None,
                  window_dilation: Sequence[int] | None = None) -> Any:
    """Reduce each window of ``operand`` (an array or a pytree of arrays) with
    ``computation`` starting from ``init_value`` (a scalar per array), as XLA's
    ReduceWindow (padding and dilation holes take no part). ``lax.add``, ``lax.max`` and
    ``lax.min`` with their identities are the monoid reductions (with derivatives by JAX's
    rules); any other computation is applied elementwise to every window at once.

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.reduce_window(np.ones((3, 3)), 0.0, lax.add, (2, 2), (1, 1), "SAME")
    Array([[4., 4., 2.],
           [4., 4., 2.],
           [2., 2., 1.]], dtype=float64)
    >>> lax.reduce_window(np.arange(1.0, 5.0, dtype=np.float32), 1.0, lax.mul, (2,))
    Array([ 2.,  6., 12.], dtype=float32)
    """
    flat_operands, tree = tree_flatten(operand)
    flat_inits, init_tree = tree_flatten(init_value)
    if tree != init_tree:
        raise ValueError("Operands must have the same tree structure as init_values: "
                         f"{tree} vs. {init_tree}")
    if not flat_operands:
        raise ValueError("reduce_window must have at least one operand.")
    dims = tuple(window_dimensions)
    if isinstance(padding, str):
        # JAX's rule: the pads of the operand's own (undilated) shape.
        wdims = dims if window_dilation is None else tuple(
            dilate_dim(w, d) for w, d in zip(dims, window_dilation))
        padding = padtype_to_pads(get_aval(flat_operands[0]).shape, wdims,
                                  window_strides or (1,) * len(dims), padding)
    nd = len(dims)
    params = _canon(flat_operands[0], dims, (1,) * nd if window_strides is None
                    else window_strides, padding, base_dilation or (1,) * nd,
                    window_dilation or (1,) * nd)
    flat_inits = [_init_like(v, x) for v, x in zip(flat_inits, flat_operands)]
    kind = _monoid(computation, flat_inits)
    if kind is None:
        outs = _generic([asarray(x) for x in flat_operands],
                        [asarray(v) for v in flat_inits], computation, tree, params)
        return tree_unflatten(tree, outs)
    prim = {"sum": reduce_window_sum_p, "max": reduce_window_max_p,
            "min": reduce_window_min_p}[kind]
    return prim.bind(flat_operands[0], **params)


__all__ = ["reduce_window"]
