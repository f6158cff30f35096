"""Jacobians and Hessians: ``jacfwd``, ``jacrev``, ``hessian``.

Each output leaf's Jacobian with respect to each input leaf has shape
``out.shape + in.shape``; the result is nested as the output's structure of
the inputs' structure (the input level is dropped for a single ``argnums``).

>>> import numpy as np
>>> import funcgrad as fg
>>> fg.jacrev(lambda x: x * 2.0)(np.ones(2)).tolist()
[[2.0, 0.0], [0.0, 2.0]]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.array import wrap
from funcgrad.core import get_aval
from funcgrad.errors import GradError
from funcgrad.ir import ShapedArray
from funcgrad.transforms._util import (
    as_leaf_array,
    check_input_dtypes,
    check_output_kind,
    normalize_argnums,
)
from funcgrad.transforms.jvp import jvp_values as jvp
from funcgrad.transforms.vjp import vjp
from funcgrad.transforms.vmap import vmap
from funcgrad.tree_util import PyTreeDef, tree_flatten, tree_map, tree_unflatten


def _basis(aval_shape: tuple[int, ...], dtype: Any, like: Any = None) -> Any:
    n = math.prod(aval_shape)
    return _on_device_of(np.eye(n, dtype=dtype).reshape((n, *aval_shape)), like)


def _on_device_of(buf: np.ndarray, like: Any) -> Any:
    """``buf`` where ``like`` lives: the basis for a CuPy value goes to its device."""
    v = getattr(like, "_value", like)
    if not type(v).__module__.startswith("cupy"):
        return buf
    from funcgrad.devices import device_of, put_buffer  # noqa: PLC0415

    return put_buffer(buf, device_of(v))


def _to_block(stacked: Any, out_shape: tuple[int, ...], in_shape: tuple[int, ...],
              rows_first: bool) -> Any:
    """A (n, ...) stack of per-basis-vector results as a block of shape out + in."""
    from funcgrad.primitives import structural as S  # noqa: PLC0415

    if not rows_first:
        nd = get_aval(stacked).ndim
        stacked = S.transpose(stacked, (*range(1, nd), 0))
    return S.reshape(stacked, out_shape + in_shape)


def _arrange(blocks: list[list[Any]], out_tree: PyTreeDef, in_tree: PyTreeDef,
             single: bool) -> Any:
    """blocks[j][k]: out leaf j, in leaf k → out structure of in structure."""
    per_out = []
    for row in blocks:
        inner = tree_unflatten(in_tree, row)
        per_out.append(inner[0] if single else inner)
    return tree_unflatten(out_tree, per_out)


def _setup(fun: Callable[..., Any], argnums: int | Sequence[int], args: tuple[Any, ...],
           what: str, holomorphic: bool = False, allow_int: bool = False
           ) -> tuple[Callable[..., Any], list[Any], PyTreeDef, bool]:
    nums, single = normalize_argnums(argnums, len(args), grad=False)
    args = tuple(tree_map(as_leaf_array, a) if i in nums else a for i, a in enumerate(args))
    flat_in, in_tree = tree_flatten(tuple(args[i] for i in nums))
    check_input_dtypes(flat_in, what, holomorphic=holomorphic, allow_int=allow_int)

    def f_flat(*xs: Any) -> Any:
        full = list(args)
        for i, v in zip(nums, tree_unflatten(in_tree, xs)):
            full[i] = v
        return fun(*full)

    return f_flat, flat_in, in_tree, single


def jacfwd(fun: Callable[..., Any], argnums: int | Sequence[int] = 0,
           has_aux: bool = False, holomorphic: bool = False) -> Callable[..., Any]:
    """Jacobian by forward mode: a jvp vmapped over the input's basis vectors.

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> fg.jacfwd(lambda x: x ** 2)(np.array([1.0, 2.0])).tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """

    def jac(*args: Any) -> Any:
        f_flat, flat_in, in_tree, single = _setup(fun, argnums, args, "jacfwd", holomorphic)
        avals = [get_aval(x) for x in flat_in]
        sizes = [a.size for a in avals]
        n = sum(sizes)
        # JAX's standard basis: the basis vectors of all inputs in one batch, so that the
        # function (and any rule or side effect in it) runs once, primal included.
        basis, start = [], 0
        for a, x, size in zip(avals, flat_in, sizes):
            block = np.zeros((max(n, 1), size), a.dtype)
            block[start:start + size] = np.eye(size, dtype=a.dtype)
            basis.append(_on_device_of(block.reshape((max(n, 1), *a.shape)), x))
            start += size

        def push(*ts: Any) -> Any:
            return jvp(f_flat, tuple(flat_in), ts, has_aux=has_aux)

        # The primal (and aux) come back with the batch axis and are read at row 0: a
        # custom rule's batching may have batched them.
        res = vmap(push)(*basis)
        out_leaves, out_tree = tree_flatten(res[0])
        out_leaves = [o[0] for o in out_leaves]
        if holomorphic:
            for o in out_leaves:
                if get_aval(o).dtype.kind != "c":
                    raise GradError("jacfwd with holomorphic=True requires outputs with "
                                    f"complex dtype, but got {get_aval(o).dtype.name}.")
        stacked = tree_flatten(res[1])[0]
        starts = np.cumsum([0, *sizes])
        blocks = [[_to_block(t[starts[k]:starts[k + 1]], get_aval(o).shape, avals[k].shape,
                             rows_first=False)
                   for k in range(len(flat_in))] for t, o in zip(stacked, out_leaves)]
        result = _arrange(blocks, out_tree, in_tree, single)
        return (result, tree_map(lambda v: v[0], res[2])) if has_aux else result

    return jac


def jacrev(fun: Callable[..., Any], argnums: int | Sequence[int] = 0,
           has_aux: bool = False, holomorphic: bool = False,
           allow_int: bool = False) -> Callable[..., Any]:
    """Jacobian by reverse mode: one forward pass, its vjp vmapped over output basis vectors.

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> fg.jacrev(lambda x: x ** 2)(np.array([1.0, 2.0])).tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """

    def jac(*args: Any) -> Any:
        f_flat, flat_in, in_tree, single = _setup(fun, argnums, args, "jacrev", holomorphic,
                                                  allow_int)
        res = vjp(f_flat, *flat_in, has_aux=has_aux)
        out, f_vjp = res[0], res[1]
        out_leaves, out_tree = tree_flatten(out)
        for o in out_leaves:
            if holomorphic or not dtypes.is_float(get_aval(o).dtype):
                check_output_kind(get_aval(o).dtype, "jacrev", holomorphic)
        zeros = [_on_device_of(np.zeros(get_aval(o).shape, get_aval(o).dtype), o)
                 for o in out_leaves]
        blocks = []
        for j, o in enumerate(out_leaves):
            aval = get_aval(o)

            def pull(ct: Any, j: int = j) -> Any:
                cts = list(zeros)
                cts[j] = ct
                # Integer inputs' float0 cotangents are not batched: their blocks are zeros.
                return tuple(None if not dtypes.is_inexact(get_aval(x).dtype) else c
                             for x, c in zip(flat_in, f_vjp(tree_unflatten(out_tree, cts))))

            basis = _basis(aval.shape, aval.dtype, o)
            rows = list(vmap(pull)(basis)) if aval.size else [
                np.zeros((0, *get_aval(x).shape)) for x in flat_in]
            blocks.append([_int_block(aval.shape, get_aval(flat_in[k]))
                           if not dtypes.is_inexact(get_aval(flat_in[k]).dtype) else
                           _to_block(rows[k], aval.shape, get_aval(flat_in[k]).shape,
                                     rows_first=True) for k in range(len(flat_in))])
        result = _arrange(blocks, out_tree, in_tree, single)
        return (result, res[2]) if has_aux else result

    return jac


def _int_block(out_shape: tuple[int, ...], in_aval: ShapedArray) -> Any:
    """An integer input's block (``allow_int=True``): zeros of its own type, as JAX's."""
    shape = (*out_shape, *in_aval.shape)
    return wrap(np.zeros(shape, in_aval.dtype), ShapedArray(shape, in_aval.dtype,
                                                            in_aval.weak_type))


def hessian(fun: Callable[..., Any], argnums: int | Sequence[int] = 0,
            has_aux: bool = False, holomorphic: bool = False) -> Callable[..., Any]:
    """The Hessian, ``jacfwd(jacrev(fun))``.

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> fg.hessian(lambda x: fg.numpy.sum(x ** 3))(np.array([1.0, 2.0])).tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    """
    return jacfwd(jacrev(fun, argnums, has_aux, holomorphic), argnums, has_aux, holomorphic)
