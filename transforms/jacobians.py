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

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad.core import get_aval
from funcgrad.transforms._util import as_leaf_array, check_differentiable, normalize_argnums
from funcgrad.transforms.jvp import jvp
from funcgrad.transforms.vjp import vjp
from funcgrad.tree_util import PyTreeDef, tree_flatten, tree_map, tree_unflatten


def _basis(aval_shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    n = int(np.prod(aval_shape, dtype=np.int64))
    return np.eye(n, dtype=dtype).reshape((n, *aval_shape))


def _stack_rows(rows: list[Any], lead_shape: tuple[int, ...], tail_shape: tuple[int, ...],
                rows_first: bool) -> Any:
    """Stack per-element results into a Jacobian block of shape out.shape + in.shape."""
    import funcgrad.numpy as fnp  # noqa: PLC0415

    n = len(rows)
    if n == 0:
        return np.zeros(lead_shape + tail_shape)
    stacked = fnp.stack(rows, axis=0)  # (n, *per_row_shape)
    if rows_first:
        return fnp.reshape(stacked, lead_shape + tail_shape)
    # rows index the input: move that axis to the end.
    moved = fnp.moveaxis(stacked, 0, -1)
    return fnp.reshape(moved, lead_shape + tail_shape)


def _arrange(blocks: list[list[Any]], out_tree: PyTreeDef, in_tree: PyTreeDef,
             single: bool) -> Any:
    """blocks[j][k]: out leaf j, in leaf k → out structure of in structure."""
    per_out = []
    for row in blocks:
        inner = tree_unflatten(in_tree, row)
        per_out.append(inner[0] if single else inner)
    return tree_unflatten(out_tree, per_out)


def _setup(fun: Callable[..., Any], argnums: int | Sequence[int], args: tuple[Any, ...],
           what: str) -> tuple[Callable[..., Any], list[Any], PyTreeDef, bool]:
    nums, single = normalize_argnums(argnums, len(args))
    args = tuple(tree_map(as_leaf_array, a) if i in nums else a for i, a in enumerate(args))
    flat_in, in_tree = tree_flatten(tuple(args[i] for i in nums))
    check_differentiable(flat_in, what)

    def f_flat(*xs: Any) -> Any:
        full = list(args)
        for i, v in zip(nums, tree_unflatten(in_tree, xs)):
            full[i] = v
        return fun(*full)

    return f_flat, flat_in, in_tree, single


def jacfwd(fun: Callable[..., Any], argnums: int | Sequence[int] = 0,
           has_aux: bool = False) -> Callable[..., Any]:
    """Jacobian by forward mode: one jvp per input element.

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> fg.jacfwd(lambda x: x ** 2)(np.array([1.0, 2.0])).tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """

    def jac(*args: Any) -> Any:
        f_flat, flat_in, in_tree, single = _setup(fun, argnums, args, "jacfwd")
        zeros = [np.zeros(get_aval(x).shape, get_aval(x).dtype) for x in flat_in]
        columns: list[list[list[Any]]] = []  # [k][element] -> out leaves
        out_tree: PyTreeDef | None = None
        out_shapes: list[tuple[int, ...]] = []
        aux = None
        for k, x in enumerate(flat_in):
            aval = get_aval(x)
            cols = []
            for b in _basis(aval.shape, aval.dtype):
                ts = list(zeros)
                ts[k] = b
                res = jvp(f_flat, tuple(flat_in), tuple(ts), has_aux=has_aux)
                out_leaves, out_tree = tree_flatten(res[0])
                out_shapes = [get_aval(o).shape for o in out_leaves]
                cols.append(tree_flatten(res[1])[0])
                if has_aux:
                    aux = res[2]
            columns.append(cols)
        if out_tree is None:  # every input is empty: still need the output's structure
            res = jvp(f_flat, tuple(flat_in), tuple(zeros), has_aux=has_aux)
            out_leaves, out_tree = tree_flatten(res[0])
            out_shapes = [get_aval(o).shape for o in out_leaves]
            aux = res[2] if has_aux else None
        blocks = [[
            _stack_rows([c[j] for c in columns[k]], out_shapes[j],
                        get_aval(flat_in[k]).shape, rows_first=False)
            for k in range(len(flat_in))] for j in range(len(out_shapes))]
        result = _arrange(blocks, out_tree, in_tree, single)
        return (result, aux) if has_aux else result

    return jac


def jacrev(fun: Callable[..., Any], argnums: int | Sequence[int] = 0,
           has_aux: bool = False) -> Callable[..., Any]:
    """Jacobian by reverse mode: one vjp per output element, sharing one forward pass.

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> fg.jacrev(lambda x: x ** 2)(np.array([1.0, 2.0])).tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """

    def jac(*args: Any) -> Any:
        f_flat, flat_in, in_tree, single = _setup(fun, argnums, args, "jacrev")
        res = vjp(f_flat, *flat_in, has_aux=has_aux)
        out, f_vjp = res[0], res[1]
        out_leaves, out_tree = tree_flatten(out)
        zeros = [np.zeros(get_aval(o).shape, get_aval(o).dtype) for o in out_leaves]
        blocks = []
        for j, o in enumerate(out_leaves):
            aval = get_aval(o)
            rows: list[list[Any]] = []
            for b in _basis(aval.shape, aval.dtype):
                cts = list(zeros)
                cts[j] = b
                rows.append(list(f_vjp(tree_unflatten(out_tree, cts))))
            blocks.append([
                _stack_rows([r[k] for r in rows], aval.shape, get_aval(flat_in[k]).shape,
                            rows_first=True)
                for k in range(len(flat_in))])
        result = _arrange(blocks, out_tree, in_tree, single)
        return (result, res[2]) if has_aux else result

    return jac


def hessian(fun: Callable[..., Any], argnums: int | Sequence[int] = 0,
            has_aux: bool = False) -> Callable[..., Any]:
    """The Hessian, ``jacfwd(jacrev(fun))``.

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> fg.hessian(lambda x: fg.numpy.sum(x ** 3))(np.array([1.0, 2.0])).tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    """
    return jacfwd(jacrev(fun, argnums, has_aux), argnums, has_aux)
