"""Differentiable transfers between the host and the device (``gpu``-marked: the CuPy
emulator where no GPU is found): ``jax.device_put`` under grad/jvp/vmap/jit and
``Tensor.to("cuda")`` / ``.cpu()`` of tensors that require grad. Gradients equal those of
the same program without the transfer and land on the operand's device."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gpu_values import host, need_device
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.testing import check_grads

pytestmark = pytest.mark.gpu

VALUES = hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
                    elements=st.floats(-2, 2, allow_nan=False))


def _on(x: Any) -> str:
    return next(iter(x.devices())).platform


@settings(max_examples=15, deadline=None, derandomize=True, database=None)
@given(VALUES, st.sampled_from([("cpu", "cuda"), ("cuda", "cpu"), ("cuda", "cuda")]))
def test_gpu_jax_device_put_is_differentiable(x: np.ndarray, where: tuple[str, str]) -> None:
    need_device()
    start, to = where

    def f(v: Any) -> Any:
        return fnp.sum(fnp.sin(fg.device_put(v * 2.0, to)) ** 2)

    def ref(v: Any) -> Any:
        return fnp.sum(fnp.sin(v * 2.0) ** 2)

    with fg.enable_x64():
        xs = fg.device_put(x, start)
        g = fg.grad(f)(xs)
        assert _on(g) == start
        np.testing.assert_allclose(host(g), host(fg.grad(ref)(x)), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(host(fg.jit(fg.grad(f))(xs)), host(g), rtol=1e-12)
        out, tan = fg.jvp(f, (xs,), (fnp.ones_like(xs),))
        np.testing.assert_allclose(float(host(tan)), float(host(fg.jvp(
            ref, (x,), (np.ones_like(x),))[1])), rtol=1e-12)
        check_grads(f, (xs,), order=2, modes=("fwd", "rev"))
        batched = fg.vmap(lambda r: fg.device_put(r, to) * 3.0)(xs)
        np.testing.assert_allclose(host(batched), x * 3.0)


def test_gpu_torch_transfers_of_tracked_tensors() -> None:
    need_device()
    from funcgrad import torch  # noqa: PLC0415

    data = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
    for make, move in [(lambda: torch.tensor(data, requires_grad=True), lambda t: t.cuda()),
                       (lambda: torch.tensor(data, requires_grad=True),
                        lambda t: (t * 1.0).to("cuda")),
                       (lambda: torch.tensor(data, device="cuda", requires_grad=True),
                        lambda t: (t * 1.0).cpu()),
                       (lambda: torch.tensor(data, requires_grad=True),
                        lambda t: t.to("cuda", torch.float32))]:
        x = make()
        y = move(x)
        assert y.grad_fn.name() == "ToCopyBackward0"
        (y.tanh() * y).sum().backward()
        assert x.grad.device == x.device and x.grad.dtype == x.dtype
        ref = torch.tensor(data, requires_grad=True)
        (ref.tanh() * ref).sum().backward()
        np.testing.assert_allclose(host(x.grad), host(ref.grad), rtol=1e-6)
    # Second order through a transfer (create_graph).
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (g1,) = torch.autograd.grad((x.cuda() ** 3).sum(), x, create_graph=True)
    assert g1.device.type == "cpu"
    (g2,) = torch.autograd.grad(g1.sum(), x)
    np.testing.assert_allclose(host(g2), [6.0, 12.0])
