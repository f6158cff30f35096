"""Writes through views: eagerly a view shares its base's memory, so writing through it
changes the base, and while recording gradients the base's graph is rewritten (PyTorch's
CopySlices); under a transform (or while a step is staged) Tensors hold immutable traced
values, and the write must still reach the base and the base's other views. Compared with
torch 2.13 eagerly (values, and gradients through the rewritten graph) and under ``vmap``,
``grad`` and ``compile`` on drawn inputs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from funcgrad import torch as ft


def _flat_add(lib: Any, a: Any) -> Any:
    b = a + 1
    b.view(-1).add_(1)
    return b


def _row_mul(lib: Any, a: Any) -> Any:
    b = a * 1
    b[0].mul_(3)
    return b


def _transposed_row_zero(lib: Any, a: Any) -> Any:
    b = a * 2
    b.t()[1].zero_()
    return b * a


def _chained_views(lib: Any, a: Any) -> Any:
    b = a * 3.0  # (exp would save its output: PyTorch refuses the write under grad)
    row = b[1:]
    row[:, 0].copy_(a[0, :1].expand(row.shape[0]))
    return b + row.sum()


def _base_write_seen_by_view(lib: Any, a: Any) -> Any:
    b = a * 1
    col = b[:, 2]
    b.mul_(2)
    return col * a[:, 0]


def _setitem_through_view(lib: Any, a: Any) -> Any:
    b = a.clone()
    v = b.unsqueeze(0)
    v[0, :, 1] = a[:, 2] ** 2
    return b


CASES: dict[str, Callable[[Any, Any], Any]] = {
    f.__name__.lstrip("_"): f for f in (_flat_add, _row_mul, _transposed_row_zero,
                                        _chained_views, _base_write_seen_by_view,
                                        _setitem_through_view)}
SETTINGS = settings(max_examples=8, deadline=None, database=None)
VALUES = st.lists(st.floats(-2, 2, allow_nan=False), min_size=4 * 3 * 3, max_size=4 * 3 * 3)


def _run(lib: Any, name: str, data: np.ndarray, how: str) -> Any:
    fn = CASES[name]
    x = lib.tensor(data)
    if how == "vmap":
        return lib.func.vmap(lambda a: fn(lib, a))(x)
    if how == "grad":
        return lib.func.grad(lambda a: (fn(lib, a) * a).sum())(x[0])
    if how == "eager_grad":
        # Recorded eagerly: the write through the view rewrites the base's graph
        # (PyTorch's CopySlices) and the gradient goes through it.
        leaf = lib.tensor(data[0], requires_grad=True)
        (fn(lib, leaf) * leaf).sum().backward()
        return leaf.grad
    if how == "compile":
        compiled = lib.compile(lambda a: fn(lib, a), backend="eager") if lib is not ft \
            else lib.compile(lambda a: fn(lib, a))
        return compiled(x[0])
    return fn(lib, x[0])


@SETTINGS
@given(values=VALUES)
@pytest.mark.parametrize("how", ["eager", "eager_grad", "vmap", "grad", "compile"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_writes_through_views_reach_the_base_as_in_torch(name: str, how: str,
                                                          values: list[float]) -> None:
    torch = pytest.importorskip("torch")
    data = np.asarray(values, np.float64).reshape(4, 3, 3)
    got = _run(ft, name, data, how)
    want = _run(torch, name, data, how)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12,
                               atol=1e-12)


@SETTINGS
@given(values=VALUES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_vmap_of_a_view_write_is_the_eager_result_per_example(name: str,
                                                             values: list[float]) -> None:
    data = np.asarray(values, np.float64).reshape(4, 3, 3)
    batched = _run(ft, name, data, "vmap").numpy()
    for i in range(4):
        np.testing.assert_allclose(batched[i], _run(ft, name, data[i:i + 1], "eager").numpy(),
                                   rtol=1e-12, atol=1e-12)


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(CASES))
def test_writes_through_cuda_views_rewrite_the_graph_as_on_the_cpu(name: str) -> None:
    """CuPy views share memory as NumPy's do: an in-place operation through one rewrites
    the base's graph on the GPU too (it gave wrong gradients there)."""
    from gpu_values import host, need_device  # noqa: PLC0415

    need_device()
    data = np.random.default_rng(3).standard_normal((3, 3))
    grads = []
    for dev in ("cpu", "cuda"):
        leaf = ft.tensor(data, device=dev, requires_grad=True)
        out = CASES[name](ft, leaf)
        (out * leaf).sum().backward()
        grads.append((host(out.detach()), host(leaf.grad)))
    for cpu, gpu in zip(*grads):
        np.testing.assert_allclose(gpu, cpu, rtol=1e-12, atol=1e-12)
