"""Host data meeting device arrays, and results that stay on the device (``gpu``-marked:
the CuPy emulator where no GPU is found, the device in scripts/gpu_check.sh).

JAX face: NumPy arrays, arrays made without a device and the tables funcgrad's own
functions build go to the device of the other operands, as JAX moves uncommitted data.
PyTorch face: a CUDA tensor with a CPU tensor is PyTorch's RuntimeError (a CPU scalar
tensor goes anywhere), and functions computed through the host give CUDA results for CUDA
inputs. Each case runs on "cuda" and on the CPU; the values must agree.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from gpu_values import host, need_device

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax

pytestmark = pytest.mark.gpu


RNG = np.random.default_rng(7)
A = RNG.standard_normal((3, 4))
SQ = RNG.standard_normal((3, 3)) + 3 * np.eye(3)

JAX_CASES: dict[str, Callable[[Any], Any]] = {
    "numpy_operand": lambda x: x + np.arange(4.0),
    "host_array_operand": lambda x: x * fnp.arange(4.0),
    "tril": lambda x: fnp.tril(x),
    "triu": lambda x: fnp.triu(x, 1),
    "trace": lambda x: fnp.trace(x),
    "diagonal": lambda x: fnp.diagonal(x, 1),
    "inv": lambda x: fnp.linalg.inv(x[:, :3] + 3 * fnp.eye(3)),
    "sign_grad": fg.grad(lambda x: fnp.sum(fnp.sign(x))),
    "floor_grad": fg.grad(lambda x: fnp.sum(fnp.floor(x) * x)),
    "cumlogsumexp_grad": fg.grad(lambda x: fnp.sum(lax.cumlogsumexp(x, axis=1))),
    "sort_grad": fg.grad(lambda x: fnp.sum(fnp.sort(x, axis=1) * fnp.arange(4.0))),
    "vmap_update_slice": lambda x: fg.vmap(
        lambda r, i: lax.dynamic_update_slice(r, r[:2] * 0, (i,)))(x, np.array([1, 3, 2])),
    "scatter_add_rows": lambda x: fnp.asarray(x).at[np.array([0, 2, 0])].add(1.0),
}


@pytest.mark.parametrize("name", sorted(JAX_CASES))
def test_gpu_jax_host_data_follows_the_device(name: str) -> None:
    need_device()
    f = JAX_CASES[name]
    got = f(fg.device_put(A, "cuda"))
    assert got.device.platform == "cuda"
    np.testing.assert_allclose(host(got), host(f(A)), rtol=1e-12, atol=1e-12)


TORCH_CASES: dict[str, Callable[[Any, Any], Any]] = {
    "tril": lambda torch, x: x.tril(),
    "triu": lambda torch, x: torch.triu(x, 1),
    "trace": lambda torch, x: torch.trace(x),
    "diag": lambda torch, x: torch.diag(x),
    "det": lambda torch, x: torch.det(x),
    "inv": lambda torch, x: torch.linalg.inv(x),
    "eigvalsh": lambda torch, x: torch.linalg.eigvalsh(x @ x.T),
    "diag_embed": lambda torch, x: torch.diag_embed(x),
    "block_diag": lambda torch, x: torch.block_diag(x, x),
    "einsum_trace": lambda torch, x: torch.einsum("ii", x),
    "avg_pool2d": lambda torch, x: torch.nn.functional.avg_pool2d(x.reshape(1, 1, 3, 3), 2,
                                                                   stride=1),
    "adaptive_avg_pool2d": lambda torch, x: torch.nn.functional.adaptive_avg_pool2d(
        x.reshape(1, 1, 3, 3), (2, 2)),
    "interpolate": lambda torch, x: torch.nn.functional.interpolate(
        x.reshape(1, 1, 3, 3), size=(4, 4), mode="bilinear"),
    "unfold": lambda torch, x: torch.nn.functional.unfold(x.reshape(1, 1, 3, 3), 2),
    "scatter": lambda torch, x: x.scatter(1, torch.tensor([[0, 1], [2, 0], [1, 2]],
                                                          device=x.device), 2.0),
    "scatter_add": lambda torch, x: x.scatter_add(
        1, torch.tensor([[0, 0], [2, 0], [1, 1]], device=x.device), x[:, :2]),
    "nonzero": lambda torch, x: torch.nonzero(x > 0),
    "unique_counts": lambda torch, x: torch.unique((x > 0).int(), return_counts=True)[1],
    "isclose": lambda torch, x: torch.isclose(x, x + 1e-9),
    "searchsorted": lambda torch, x: torch.searchsorted(x.flatten().sort().values, x),
    "norm_grad": lambda torch, x: _grad(torch, lambda v: v.norm(), x),
    "median_grad": lambda torch, x: _grad(torch, lambda v: v.median(), x),
    "l1_grad": lambda torch, x: _grad(
        torch, lambda v: torch.nn.functional.l1_loss(v, torch.zeros_like(v)), x),
    "scalar_cpu_tensor": lambda torch, x: x * torch.tensor(2.0),
    "tril_indices": lambda torch, x: torch.tril_indices(3, 3, device=x.device),
    "scalar_tensor": lambda torch, x: torch.scalar_tensor(3.0, device=x.device) + x,
}


def _grad(torch: Any, f: Callable[[Any], Any], x: Any) -> Any:
    v = x.clone().requires_grad_()
    f(v).backward()
    return v.grad


@pytest.mark.parametrize("name", sorted(TORCH_CASES))
def test_gpu_torch_results_stay_on_the_device(name: str) -> None:
    need_device()
    torch = pytest.importorskip("funcgrad.torch")
    f = TORCH_CASES[name]
    cpu = torch.tensor(SQ)
    got, want = f(torch, cpu.cuda()), f(torch, cpu)
    assert got.is_cuda and not want.is_cuda
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-12, atol=1e-12)


def test_gpu_torch_device_rules() -> None:
    need_device()
    torch = pytest.importorskip("funcgrad.torch")
    x = torch.ones(3, 3, device="cuda")
    for other in (torch.ones(3), torch.ones(3, 3)):
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same "
                                               "device, but found at least two devices, "
                                               "cuda:0 and cpu!"):
            x + other
    # CPU index tensors index a CUDA tensor, as in PyTorch
    idx = torch.tensor([2, 0])
    assert x[idx].is_cuda and x.index_put_((idx,), torch.tensor(5.0)).is_cuda
    np.testing.assert_array_equal(x.cpu().numpy()[:, 0], [5.0, 1.0, 5.0])
    assert x.type() == "torch.cuda.FloatTensor" and x.cpu().type() == "torch.FloatTensor"
    p = torch.full((4,), 0.5, device="cuda")
    for sample in (torch.bernoulli(p), torch.multinomial(p, 2), torch.normal(p, 1.0)):
        assert sample.is_cuda


CREATORS: dict[str, Callable[..., Any]] = {
    "zeros": lambda L, **kw: L.zeros((2, 3), **kw), "ones": lambda L, **kw: L.ones(3, **kw),
    "empty": lambda L, **kw: L.empty(2, **kw).shape,
    "full": lambda L, **kw: L.full(2, 1.5, **kw), "arange": lambda L, **kw: L.arange(4, **kw),
    "linspace": lambda L, **kw: L.linspace(0, 1, 5, **kw), "eye": lambda L, **kw: L.eye(3, **kw),
    "array": lambda L, **kw: L.array([1.0, 2.0], **kw),
    "asarray": lambda L, **kw: L.asarray(np.arange(3.0), **kw),
}


def _platform(x: Any) -> str:
    return next(iter(x.devices())).platform


@pytest.mark.parametrize("name", sorted(set(CREATORS) - {"empty"}))
def test_gpu_jax_creation_takes_device_and_the_default_device(name: str) -> None:
    """``device=`` and ``jax.default_device(...)`` place created arrays (JAX's keyword and
    context); without either they stay on the host; the values do not change."""
    need_device()
    make = CREATORS[name]
    on_host = make(fnp)
    assert _platform(on_host) == "cpu"
    gpu = fg.devices("cuda")[0]
    for placed in (make(fnp, device=gpu), make(fnp, device="cuda")):
        assert _platform(placed) == "cuda"
        np.testing.assert_array_equal(host(placed), host(on_host))
        assert placed.dtype == on_host.dtype
    with fg.default_device(gpu):
        assert _platform(make(fnp)) == "cuda"
        assert _platform(make(fnp, device="cpu")) == "cpu"
    assert _platform(fnp.zeros_like(make(fnp, device="cuda"))) == "cuda"


@pytest.mark.x32
@pytest.mark.parametrize("name", sorted(CREATORS))
def test_jax_creation_takes_the_device_keyword_as_jax_does(name: str) -> None:
    jax = pytest.importorskip("jax")
    ours = CREATORS[name](fnp, device=fg.devices("cpu")[0])
    theirs = CREATORS[name](jax.numpy, device=jax.devices("cpu")[0])
    if isinstance(theirs, tuple):
        assert ours == theirs
        return
    assert _platform(ours) == "cpu" and ours.dtype == theirs.dtype
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
