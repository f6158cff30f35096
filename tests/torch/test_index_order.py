"""PyTorch's indexing order: integers (and 0-d integer tensors) are applied before advanced
indices, so an integer between a slice and a list does not move the list's dimension to the
front as NumPy would. Reads, writes and gradients against PyTorch 2.13 on drawn indices."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft

SHAPE = (2, 3, 4, 5)


@st.composite
def _index(draw):
    """A tuple index over SHAPE mixing ints, 0-d tensors, slices, lists, masks and None."""
    items, dim = [], 0
    while dim < len(SHAPE):
        n = SHAPE[dim]
        kind = draw(st.sampled_from(["int", "int0d", "slice", "list", "mask", "none", "stop"]))
        if kind == "stop":
            break
        if kind == "int":
            items.append(("int", draw(st.integers(-n, n - 1))))
        elif kind == "int0d":
            items.append(("int0d", draw(st.integers(0, n - 1))))
        elif kind == "slice":
            items.append(("slice", draw(st.integers(0, n - 1)), draw(st.integers(1, 2))))
        elif kind == "list":
            items.append(("list", draw(st.lists(st.integers(-n, n - 1), min_size=2,
                                                max_size=2))))
        elif kind == "mask":
            items.append(("mask", draw(st.lists(st.booleans(), min_size=n, max_size=n))))
        else:
            items.append(("none",))
            continue
        dim += 1
    return items


def _build(L, items):
    out = []
    for it in items:
        if it[0] == "int":
            out.append(it[1])
        elif it[0] == "int0d":
            out.append(L.tensor(it[1]))
        elif it[0] == "slice":
            out.append(slice(it[1], None, it[2]))
        elif it[0] == "list":
            out.append(L.tensor(it[1]))
        elif it[0] == "mask":
            out.append(L.tensor(it[1]))
        else:
            out.append(None)
    return tuple(out)


def _run(L, items):
    data = np.arange(float(np.prod(SHAPE))).reshape(SHAPE)
    x = L.tensor(data, requires_grad=True)
    try:
        y = x[_build(L, items)]
    except (IndexError, RuntimeError, ValueError) as e:  # funcgrad: ShapeError for masks
        return ("error", type(e).__name__)  # the types differ for unbroadcastable indices
    w = L.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)))
    (y * w).sum().backward()
    z = L.zeros(SHAPE, dtype=L.float64)
    z[_build(L, items)] = w
    return tuple(y.shape), y.detach().numpy(), x.grad.numpy(), z.numpy()


@given(_index())
@settings(deadline=None, max_examples=150)
def test_mixed_indices_read_write_and_grad_as_torch(items):
    torch = pytest.importorskip("torch", exc_type=ImportError)
    ours, theirs = _run(ft, items), _run(torch, items)
    if theirs[0] == "error":
        assert ours[0] == "error", items
        return
    assert ours[0] == theirs[0], items
    for a, b in zip(ours[1:], theirs[1:], strict=True):
        np.testing.assert_array_equal(a, b)


def test_the_reported_cases():
    a = ft.arange(24.0).view(2, 3, 4)
    assert a[0, :, [0, 3]].tolist() == [[0.0, 3.0], [4.0, 7.0], [8.0, 11.0]]
    b = ft.zeros(2, 3, 4)
    b[1, :, [0, 2]] = ft.tensor([1.0, 2.0])
    assert b[1].tolist() == [[1.0, 0.0, 2.0, 0.0]] * 3


# Out-of-range indices: PyTorch raises (each kernel its own error); nothing is clamped,
# dropped or read as NaN. Also gather's smaller index along the other dimensions.
RANGE_CASES = [
    "x.index_copy(0, L.tensor([5]), L.ones(1, 4))",
    "x.index_copy(0, L.tensor([-1]), L.ones(1, 4))",
    "x.index_fill(0, L.tensor([5]), 1.)", "x.index_fill(0, L.tensor([-3]), 1.)",
    "x.scatter_add(0, L.tensor([[5]]), L.ones(1, 1))", "x.scatter(1, L.tensor([[-1]]), 1.)",
    "x.scatter_reduce(0, L.tensor([[5]]), L.ones(1, 1), 'sum')",
    "x.index_put((L.tensor([5]),), L.tensor(1.))", "x.gather(1, L.tensor([[-1]]))",
    "x.gather(1, L.tensor([[4]]))", "x.index_select(0, L.tensor([-1]))",
    "x.index_select(0, L.tensor([3]))", "x.take(L.tensor([-1]))", "x.take(L.tensor([12]))",
    "x.take(L.tensor([-13]))", "x.gather(0, L.tensor([[0, 0, 0, 0, 0]]))",
    "x.gather(1, L.tensor([[0], [0], [0], [0]]))", "x.index_add(0, L.tensor([-1]), L.ones(1, 4))",
    "x.index_add(0, L.tensor([3]), L.ones(1, 4))",
    "L.zeros(3).index_add(0, L.tensor([-1]), L.ones(1))",
    "L.arange(12.).view(3, 4).gather(1, L.tensor([[0, 1], [2, 0]]))",
    "L.arange(12.).view(3, 4).gather(0, L.tensor([[2, 1], [0, 2]]))",
]


@pytest.mark.parametrize("expr", RANGE_CASES)
def test_index_ranges_and_errors_as_torch(expr):
    torch = pytest.importorskip("torch", exc_type=ImportError)

    def run(L):
        try:
            return ("ok", eval(expr, {"L": L, "x": L.arange(12.0).view(3, 4)}).tolist())
        except Exception as e:  # noqa: BLE001 - the error is the result compared
            return (type(e).__name__, str(e))

    assert run(ft) == run(torch)
