"""Indexing, scatter/gather, selection and shape op kinds for the torch-face fuzzer
(tests/support/fuzz_torch_programs.py): the ops tutorials use beyond elementwise math.

``INDEX[name] = (apply, shape, min_rank)``: ``apply(t, x, dim)`` runs the op on library ``t``
(``torch`` or ``funcgrad.torch``) along ``dim``; ``shape(shape, dim)`` is the result's shape
(NumPy only, so drawing a program needs neither library). ``PAIR`` is the same for ops of
two values of one shape, ``apply(t, x, y, dim)``. Index tensors are built from the shapes
alone; where PyTorch leaves the result of duplicate indices unspecified (``scatter``,
``index_copy``, ``index_put`` without accumulation) the indices are distinct.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

Shape = tuple[int, ...]


def _idx(n: int) -> list[int]:
    # Repeated and out of order: [n-1, 0, n-1] (as long as the axis allows).
    return [n - 1, 0, n - 1][: max(1, min(3, n + 1))]


def _distinct(n: int) -> list[int]:
    return [n - 1, 0] if n > 1 else [0]


def _line_index(shape: Shape, dim: int, values: Callable[[int], list[int]]) -> np.ndarray:
    """An int64 index of ``shape`` whose entries along ``dim`` are ``values(shape[dim])``."""
    vals = np.asarray(values(shape[dim]), np.int64)
    view = [1] * len(shape)
    view[dim] = len(vals)
    full = list(shape)
    full[dim] = len(vals)
    return np.broadcast_to(vals.reshape(view), full).copy()


def _with(shape: Shape, dim: int, n: int) -> Shape:
    s = list(shape)
    s[dim] = n
    return tuple(s)


def _scatter(t: Any, x: Any, dim: int) -> Any:
    # A permutation along dim (reversed): every target written once.
    index = t.tensor(_line_index(tuple(x.shape), dim, lambda n: list(range(n - 1, -1, -1))))
    return x.scatter(dim, index, x * 0.5 + 0.25)


def _scatter_add(t: Any, x: Any, dim: int) -> Any:
    index = t.tensor(_line_index(tuple(x.shape), dim, lambda n: [j % 2 for j in range(n)]
                                 if n > 1 else [0]))
    return t.scatter_add(x, dim, index, x.square())


def _scatter_reduce(reduce: str) -> Callable[[Any, Any, int], Any]:
    def f(t: Any, x: Any, dim: int) -> Any:
        index = t.tensor(_line_index(tuple(x.shape), dim, lambda n: [0] * n))
        return x.scatter_reduce(dim, index, 0.9 * x + 0.05, reduce=reduce, include_self=True)
    return f


def _index_add(t: Any, x: Any, dim: int) -> Any:
    idx = t.tensor(_idx(x.shape[dim]))
    return x.index_add(dim, idx, t.index_select(x, dim, idx) * 0.5 + 0.25, alpha=0.5)


def _index_copy(t: Any, x: Any, dim: int) -> Any:
    idx = t.tensor(_distinct(x.shape[dim]))
    return x.index_copy(dim, idx, t.index_select(x, dim, idx).sin())


def _index_fill(t: Any, x: Any, dim: int) -> Any:
    return x.index_fill(dim, t.tensor(_idx(x.shape[dim])), -0.5)


def _index_put(t: Any, x: Any, dim: int) -> Any:
    idx = t.tensor(_idx(x.shape[0]))
    return x.index_put((idx,), x[idx] * 0.5, accumulate=True)


def _setitem_tensor(t: Any, x: Any, dim: int) -> Any:
    y = x * 1.0
    idx = t.tensor(_distinct(x.shape[0]))
    y[idx] = x[idx].cos()
    return y


def _masked_fill_value(t: Any, x: Any, dim: int) -> Any:
    return x.masked_fill(x > 0.2, x.sum() * 0.1)  # a 0-d value with a gradient


def _bool_index(t: Any, x: Any, dim: int) -> Any:
    return x + x[x > 0.1].square().sum()


def _sort_gather(t: Any, x: Any, dim: int) -> Any:
    order = x.argsort(dim=dim, descending=True)
    return t.take_along_dim(x * 1.5 + x.square(), order, dim=dim)


def _max_gather(t: Any, x: Any, dim: int) -> Any:
    i = x.max(dim=dim, keepdim=True).indices
    return t.gather(x.exp(), dim, i)


def _split_sum(t: Any, x: Any, dim: int) -> Any:
    parts = t.split(x, 1, dim=dim)
    return sum(((k + 1) * p for k, p in enumerate(parts)), parts[0] * 0.0)


def _k(n: int) -> int:
    return min(2, n)


# name -> (apply, result shape, least rank)
INDEX: dict[str, tuple[Callable[[Any, Any, int], Any], Callable[[Shape, int], Shape], int]] = {
    "scatter": (_scatter, lambda s, d: s, 1),
    "scatter_add": (_scatter_add, lambda s, d: s, 1),
    "scatter_reduce_sum": (_scatter_reduce("sum"), lambda s, d: s, 1),
    "scatter_reduce_amax": (_scatter_reduce("amax"), lambda s, d: s, 1),
    "scatter_reduce_mean": (_scatter_reduce("mean"), lambda s, d: s, 1),
    "index_add": (_index_add, lambda s, d: s, 1),
    "index_copy": (_index_copy, lambda s, d: s, 1),
    "index_fill": (_index_fill, lambda s, d: s, 1),
    "index_put_acc": (_index_put, lambda s, d: s, 1),
    "setitem_tensor": (_setitem_tensor, lambda s, d: s, 1),
    "masked_fill_value": (_masked_fill_value, lambda s, d: s, 1),
    "masked_fill": (lambda t, x, d: x.masked_fill(x < -0.3, 1.25), lambda s, d: s, 1),
    "where_scalar": (lambda t, x, d: t.where(x > 0.1, x, 0.5), lambda s, d: s, 1),
    "bool_index": (_bool_index, lambda s, d: s, 1),
    "take": (lambda t, x, d: t.take(x, t.tensor([[0, x.numel() - 1], [0, 0]])),
             lambda s, d: (2, 2), 1),
    "topk": (lambda t, x, d: x.topk(_k(x.shape[d]), dim=d).values,
             lambda s, d: _with(s, d, _k(s[d])), 1),
    "topk_smallest": (lambda t, x, d: t.topk(x, _k(x.shape[d]), dim=d, largest=False)[0],
                      lambda s, d: _with(s, d, _k(s[d])), 1),
    "sort_gather": (_sort_gather, lambda s, d: s, 1),
    "max_gather": (_max_gather, lambda s, d: _with(s, d, 1), 1),
    "kthvalue": (lambda t, x, d: x.kthvalue((x.shape[d] + 1) // 2, dim=d, keepdim=True).values,
                 lambda s, d: _with(s, d, 1), 1),
    "median": (lambda t, x, d: x.median(dim=d, keepdim=True).values,
               lambda s, d: _with(s, d, 1), 1),
    "cummax": (lambda t, x, d: x.cummax(dim=d).values, lambda s, d: s, 1),
    "cumprod": (lambda t, x, d: (x * 0.5 + 1.0).cumprod(dim=d), lambda s, d: s, 1),
    "logcumsumexp": (lambda t, x, d: t.logcumsumexp(x, dim=d), lambda s, d: s, 1),
    "stack": (lambda t, x, d: t.stack([x, x * 2.0], dim=d),
              lambda s, d: (*s[:d], 2, *s[d:]), 1),
    "permute": (lambda t, x, d: x.permute(*reversed(range(x.ndim))), lambda s, d: s[::-1], 1),
    "repeat": (lambda t, x, d: x.repeat(2, *([1] * (x.ndim - 1))),
               lambda s, d: (2 * s[0], *s[1:]), 1),
    "narrow": (lambda t, x, d: x.narrow(d, x.shape[d] - 1, 1), lambda s, d: _with(s, d, 1), 1),
    "chunk": (lambda t, x, d: t.chunk(x, 2, dim=d)[0],
              lambda s, d: _with(s, d, -(-s[d] // 2)), 1),
    "split_sum": (_split_sum, lambda s, d: _with(s, d, 1), 1),
    "unbind_stack": (lambda t, x, d: t.stack(t.unbind(x, dim=d)[::-1], dim=d),
                     lambda s, d: s, 1),
    "movedim": (lambda t, x, d: x.movedim(d, -1),
                lambda s, d: (*s[:d], *s[d + 1:], s[d]), 1),
    "pad": (lambda t, x, d: t.nn.functional.pad(x, (1, 2), value=0.5),
            lambda s, d: (*s[:-1], s[-1] + 3), 1),
    "unfold": (lambda t, x, d: x.unfold(d, _k(x.shape[d]), 1),
               lambda s, d: (*_with(s, d, s[d] - _k(s[d]) + 1), _k(s[d])), 1),
    "diff": (lambda t, x, d: t.diff(x, dim=d) if x.shape[d] > 1 else x * 1.0,
             lambda s, d: _with(s, d, s[d] - 1) if s[d] > 1 else s, 1),
    "tril": (lambda t, x, d: x.tril(), lambda s, d: s, 2),
    "triu1": (lambda t, x, d: t.triu(x, diagonal=1) + x * 0.25, lambda s, d: s, 2),
    "diagonal": (lambda t, x, d: x.diagonal(0, -2, -1) * 1.0,
                 lambda s, d: (*s[:-2], min(s[-2], s[-1])), 2),
}


def _einsum_tt(t: Any, x: Any, y: Any, dim: int) -> Any:
    return t.einsum("...ij,...kj->...ik", x, y)


# Two values of one shape.
PAIR: dict[str, tuple[Callable[[Any, Any, Any, int], Any], Callable[[Shape, int], Shape], int]] = {
    "cat2": (lambda t, x, y, d: t.cat([x, y], dim=d), lambda s, d: _with(s, d, 2 * s[d]), 1),
    "stack2": (lambda t, x, y, d: t.stack((y, x), dim=d), lambda s, d: (*s[:d], 2, *s[d:]), 1),
    "einsum_outer": (_einsum_tt, lambda s, d: (*s[:-1], s[-2]), 2),
    "matmul_t": (lambda t, x, y, d: x @ y.transpose(-1, -2), lambda s, d: (*s[:-1], s[-2]), 2),
    "einsum_dot": (lambda t, x, y, d: t.einsum("...i,...i->...", x, y), lambda s, d: s[:-1], 2),
    "where_pair": (lambda t, x, y, d: t.where(x > y, x.square(), y), lambda s, d: s, 1),
    "masked_scatter": (lambda t, x, y, d: x.masked_scatter(y > 0.3, y * 2.0),
                       lambda s, d: s, 1),
    "scatter_src": (lambda t, x, y, d: x.scatter(d, t.tensor(_line_index(
        tuple(x.shape), d, lambda n: list(range(n - 1, -1, -1)))), y), lambda s, d: s, 1),
    "index_add_src": (lambda t, x, y, d: x.index_add(d, t.tensor(_idx(x.shape[d])), t.index_select(
        y, d, t.tensor(_idx(x.shape[d])))), lambda s, d: s, 1),
}
