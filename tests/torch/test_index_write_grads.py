"""Indexed writes with repeated indices differentiate as in PyTorch: every written value
receives the output's gradient at its index (PyTorch gathers it), not only the value that
lands (the engine's scatter rule, JAX's); the input's gradient is zero wherever anything was
written. Checked against torch 2.13 on drawn shapes, indices (repeats included) and
upstream gradients: first and second order, ``torch.func.grad`` and ``vmap`` of it, and the
nodes' operands.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft

torch = pytest.importorskip("torch")

SETTINGS = settings(max_examples=12, deadline=None)
pytestmark = pytest.mark.filterwarnings("ignore:There is a performance drop")


@st.composite
def cases(draw: Any) -> tuple[str, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """(op, x, index, values, upstream weights, dim): a 1-3-d ``x``, an index along ``dim``
    with repeats likely, values of the written shape."""
    op = draw(st.sampled_from(["scatter", "index_put", "setitem", "setitem_view",
                               "index_copy", "index_fill", "put"]))
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    dim = draw(st.integers(0, len(shape) - 1))
    n = shape[dim]
    k = draw(st.integers(1, 5))
    index = np.array(draw(st.lists(st.integers(0, n - 1), min_size=k, max_size=k)))
    floats = st.floats(-2, 2, allow_nan=False, width=64)
    x = draw(hnp.arrays(np.float64, shape, elements=floats))
    if op == "scatter":
        ishape = tuple(min(s, 3) for s in shape)
        index = draw(hnp.arrays(np.int64, ishape, elements=st.integers(0, n - 1)))
        vshape = ishape
    elif op in ("index_put", "setitem", "setitem_view"):
        vshape = (k, *shape[1:])
        dim = 0
        index = np.array(draw(st.lists(st.integers(0, shape[0] - 1), min_size=k,
                                       max_size=k)))
    elif op == "put":
        index = np.array(draw(st.lists(st.integers(0, int(np.prod(shape)) - 1),
                                       min_size=k, max_size=k)))
        vshape = (k,)
    elif op == "index_fill":
        vshape = ()
    else:
        vshape = shape[:dim] + (k,) + shape[dim + 1:]
    v = draw(hnp.arrays(np.float64, vshape, elements=floats))
    w = draw(hnp.arrays(np.float64, shape, elements=floats))
    return op, x, index, v, w, dim


def _apply(lib: Any, op: str, x: Any, index: np.ndarray, v: Any, dim: int) -> Any:
    i = lib.tensor(index)
    if op == "scatter":
        return x.scatter(dim, i, v)
    if op == "index_put":
        return x.index_put((i,), v)
    if op == "setitem":
        y = x * 1.0
        y[i] = v
        return y
    if op == "setitem_view":
        y = (x * 1.0)[:]  # a view: the write goes through CopySlices
        y[i] = v
        return y
    if op == "index_copy":
        return x.index_copy(dim, i, v)
    if op == "index_fill":
        return x.index_fill(dim, i, v)
    return x.put(i, v)


def _grads(lib: Any, case: Any, order: int) -> list[np.ndarray]:
    op, xv, index, vv, wv, dim = case
    x = lib.tensor(xv, requires_grad=True)
    v = lib.tensor(vv, requires_grad=True)
    w = lib.tensor(wv)
    y = _apply(lib, op, x, index, v, dim)
    if order == 1:
        (y * w).sum().backward()
        return [x.grad.numpy(), v.grad.numpy()]
    gx, gv = lib.autograd.grad((y * y * w).sum(), (x, v), create_graph=True)
    hx, hv = lib.autograd.grad((gx * w).sum() + (gv * gv).sum(), (x, v), allow_unused=True)
    return [h.detach().numpy() if h is not None else np.zeros_like(a)
            for h, a in ((hx, xv), (hv, vv))]


@SETTINGS
@given(cases(), st.sampled_from([1, 2]))
def test_gradients_match_torch(case: Any, order: int) -> None:
    got, want = _grads(ft, case, order), _grads(torch, case, order)
    for g, t in zip(got, want):
        np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-12)


def _func_grad(lib: Any, case: Any) -> tuple[np.ndarray, np.ndarray]:
    op, xv, index, vv, wv, dim = case
    w = lib.tensor(wv)

    def loss(x: Any, v: Any) -> Any:
        return (_apply(lib, op, x, index, v, dim) ** 2 * w).sum()

    gx, gv = lib.func.grad(loss, argnums=(0, 1))(lib.tensor(xv), lib.tensor(vv))
    batched = lib.func.vmap(lib.func.grad(loss, argnums=1), in_dims=(None, 0))(
        lib.tensor(xv), lib.stack([lib.tensor(vv), 2 * lib.tensor(vv)]))
    return np.concatenate([gx.numpy().ravel(), gv.numpy().ravel()]), batched.numpy()


@SETTINGS
@given(cases().filter(lambda c: not c[0].startswith("setitem") and c[0] != "index_fill"))
def test_torch_func_grad_and_vmap_match_torch(case: Any) -> None:
    """(Not index_fill: torch 2.13's vmap of it with a batched 0-d value and an unbatched
    tensor writes the last value into every batch element, ``vmap(lambda v:
    torch.tensor([0.]).index_fill(0, torch.tensor([0]), v))(torch.tensor([1., 2.]))`` is
    ``[[2.], [2.]]``; funcgrad's is ``[[1.], [2.]]``.)"""
    for g, t in zip(_func_grad(ft, case), _func_grad(torch, case)):
        np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-12)


WRITES: list[tuple[str, Callable[[Any, Any, Any, Any], Any]]] = [
    ("scatter_value", lambda x, i, v, s: x.scatter(0, i, 2.0)),
    ("scatter", lambda x, i, v, s: x.scatter(0, i, v)),
    ("index_copy", lambda x, i, v, s: x.index_copy(0, i, v)),
    ("index_put", lambda x, i, v, s: x.index_put((i,), v)),
    ("index_put_accumulate", lambda x, i, v, s: x.index_put((i,), v, accumulate=True)),
    ("put", lambda x, i, v, s: x.put(i, v)),
    ("index_fill_tensor", lambda x, i, v, s: x.index_fill(0, i, s)),
    ("index_fill_number", lambda x, i, v, s: x.index_fill(0, i, 2.0)),
    ("index_add", lambda x, i, v, s: x.index_add(0, i, v)),
    ("scatter_add", lambda x, i, v, s: x.scatter_add(0, i, v)),
]


@pytest.mark.parametrize("name,write", WRITES, ids=[w[0] for w in WRITES])
def test_nodes_list_what_torch_lists(name: str, write: Callable[..., Any]) -> None:
    """The node's name and operands: ``self`` and a tensor source, never the index."""
    def node(lib: Any) -> tuple[str, list[str | None]]:
        x = lib.zeros(4, requires_grad=True)
        v = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        s = lib.tensor(2.0, requires_grad=True)
        fn = write(x, lib.tensor([0, 0, 2]), v, s).grad_fn
        return type(fn).__name__, [None if n is None else type(n).__name__
                                   for n, _ in fn.next_functions]

    assert node(ft) == node(torch)


def test_an_infinite_gradient_at_an_overwritten_entry_is_dropped() -> None:
    """The input's gradient is zeroed where values were written, not multiplied by 0
    (which would turn an infinite upstream gradient into NaN)."""
    for lib in (ft, torch):
        x = lib.zeros(3, requires_grad=True)
        y = x.index_put((lib.tensor([1]),), lib.tensor([5.0]))
        y.backward(lib.tensor([1.0, float("inf"), 1.0]))
        assert x.grad.tolist() == [1.0, 0.0, 1.0]
