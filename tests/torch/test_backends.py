"""``torch.backends`` against PyTorch 2.13, and the float32 matmul precision on a GPU (TF32
or exact float32), which ``allow_tf32`` / ``set_float32_matmul_precision`` (PyTorch face) and
``jax_default_matmul_precision`` (JAX face) choose."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
import funcgrad.torch as ft

try:
    import torch as real_torch
except ImportError:  # pragma: no cover - the compat extra is not installed
    real_torch = None

needs_torch = pytest.mark.skipif(real_torch is None, reason="PyTorch 2.13 is not installed")


@pytest.fixture(autouse=True)
def _precision_restored() -> Iterator[None]:
    before = ft.get_float32_matmul_precision()
    yield
    ft.set_float32_matmul_precision(before)
    if real_torch is not None:
        real_torch.set_float32_matmul_precision(before)


@needs_torch
def test_switches_and_their_links_match_torch() -> None:
    def probe(L: Any) -> list[Any]:
        b = L.backends
        # The defaults (an earlier test in this process may have set them).
        b.cudnn.benchmark, b.cudnn.deterministic, b.cudnn.enabled = False, False, True
        b.cuda.matmul.allow_tf32 = False
        out: list[Any] = [b.cuda.matmul.allow_tf32, b.cudnn.allow_tf32, b.cudnn.benchmark,
                          b.cudnn.deterministic, b.cudnn.enabled, b.mps.is_available(),
                          b.mps.is_built(), b.opt_einsum.enabled, b.opt_einsum.strategy,
                          b.cuda.matmul.allow_fp16_reduced_precision_reduction,
                          b.cuda.flash_sdp_enabled(), b.cuda.math_sdp_enabled()]
        b.cuda.matmul.allow_tf32 = True
        out.append(L.get_float32_matmul_precision())
        L.set_float32_matmul_precision("highest")
        out.append(b.cuda.matmul.allow_tf32)
        L.set_float32_matmul_precision("medium")
        out.append(b.cuda.matmul.allow_tf32)
        for bad in (lambda: b.cuda.matmul.no_such, lambda: setattr(b.cuda.matmul, "x", 1)):
            try:
                bad()
            except AttributeError as e:
                out.append(str(e))
        with b.cudnn.flags(enabled=False, deterministic=True):
            out.append((b.cudnn.enabled, b.cudnn.deterministic))
        out.append((b.cudnn.enabled, b.cudnn.deterministic))
        b.cuda.enable_flash_sdp(False)
        out.append(b.cuda.flash_sdp_enabled())
        b.cuda.enable_flash_sdp(True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with b.cuda.sdp_kernel(enable_math=False):
                out.append(b.cuda.math_sdp_enabled())
        out.append([(x.category.__name__, str(x.message)) for x in w])
        out.append(b.cuda.math_sdp_enabled())
        return out

    assert probe(ft) == probe(real_torch)


def test_cpu_capability_and_availability() -> None:
    assert ft.backends.cpu.get_cpu_capability() in ("AVX512", "AVX2", "DEFAULT")
    assert ft.backends.cudnn.is_available() is False and ft.backends.cudnn.version() is None
    with pytest.raises(RuntimeError, match="Invalid precision"):
        ft.set_float32_matmul_precision("low")


def _bound(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """TF32 keeps 10 mantissa bits: each operand is off by at most 2^-10 relative (2^-11
    where it rounds to nearest), plus float32 accumulation."""
    return (2.0 ** -9 + 2.0 ** -20) * (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64))


@pytest.mark.gpu
def test_gpu_float32_products_follow_the_precision_setting() -> None:
    from gpu_values import host, need_device  # noqa: PLC0415

    need_device()
    rng = np.random.default_rng(0)
    a = rng.standard_normal((16, 32)).astype(np.float32)
    b = rng.standard_normal((32, 8)).astype(np.float32)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    x, w = ft.tensor(a, device="cuda"), ft.tensor(b, device="cuda")
    ft.set_float32_matmul_precision("highest")
    np.testing.assert_allclose(host(x @ w), exact, rtol=1e-5, atol=1e-5)
    ft.backends.cuda.matmul.allow_tf32 = True
    tf32 = host(x @ w).astype(np.float64)
    assert np.all(np.abs(tf32 - exact) <= _bound(a, b))
    assert np.abs(tf32 - exact).max() > 1e-5  # the products really were rounded
    ft.backends.cuda.matmul.allow_tf32 = False
    np.testing.assert_allclose(host(x @ w), exact, rtol=1e-5, atol=1e-5)
    # The JAX face's option: the same engine setting (jit and eager alike).
    xa, wa = fg.device_put(a, "cuda"), fg.device_put(b, "cuda")
    with fg.default_matmul_precision("tensorfloat32"):
        for f in (fnp.matmul, fg.jit(fnp.matmul)):
            got = host(f(xa, wa)).astype(np.float64)
            assert np.all(np.abs(got - exact) <= _bound(a, b))
            assert np.abs(got - exact).max() > 1e-5
    np.testing.assert_allclose(host(fnp.matmul(xa, wa)), exact, rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------ pinned memory, data_ptr


@needs_torch
def test_pinning_and_addresses_without_a_gpu_match_torch() -> None:
    def probe(L: Any) -> list[Any]:
        t = L.arange(12.0).reshape(3, 4)
        out: list[Any] = [t.is_pinned(), t[1:].data_ptr() - t.data_ptr(),
                          t[:, 2].data_ptr() - t.data_ptr(), t.view(12).data_ptr() == t.data_ptr(),
                          t.clone().data_ptr() == t.data_ptr()]
        try:
            t.pin_memory()
        except RuntimeError as e:
            out.append(str(e))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            loader = L.utils.data.DataLoader(L.utils.data.TensorDataset(t), batch_size=2,
                                             pin_memory=True)
            out.append([b[0].is_pinned() for b in loader])
        out.append([str(x.message) for x in w])
        return out

    assert probe(ft) == probe(real_torch)


@pytest.mark.gpu
def test_gpu_pinned_batches_and_tensors() -> None:
    from gpu_values import host, need_device  # noqa: PLC0415

    need_device()
    t = ft.arange(6.0, requires_grad=True)
    p = t.pin_memory()
    assert p.is_pinned() and not t.is_pinned() and p.pin_memory() is p
    (p * 2).sum().backward()
    np.testing.assert_array_equal(host(t.grad), np.full(6, 2.0))
    moved = p.detach().to("cuda", non_blocking=True)
    np.testing.assert_array_equal(host(moved), np.arange(6.0))
    assert moved.data_ptr() != 0
    with pytest.raises(RuntimeError, match="only dense CPU tensors can be pinned"):
        moved.pin_memory()
    data = ft.utils.data.TensorDataset(ft.arange(8.0).reshape(4, 2), ft.arange(4))
    for workers in (0, 2):
        loader = ft.utils.data.DataLoader(data, batch_size=2, pin_memory=True,
                                          num_workers=workers)
        batches = list(loader)
        assert all(x.is_pinned() and y.is_pinned() for x, y in batches)
        np.testing.assert_array_equal(np.concatenate([host(x) for x, _ in batches]),
                                      np.arange(8.0).reshape(4, 2))


@pytest.mark.gpu
def test_gpu_peak_memory_figures() -> None:
    from gpu_values import need_device  # noqa: PLC0415

    need_device()
    cuda = ft.cuda
    cuda.reset_peak_memory_stats()
    base = cuda.memory_allocated()
    assert cuda.max_memory_allocated() == base
    n = 1 << 16
    a = ft.ones(n, device="cuda")
    b = a * 2.0
    c = b + 1.0
    live3 = cuda.memory_allocated()
    assert live3 - base >= 3 * 4 * n
    del b
    after = cuda.memory_allocated()
    assert after <= live3 - 4 * n
    peak = cuda.max_memory_allocated()
    assert peak >= live3 >= after
    stats = cuda.memory_stats()
    assert stats["allocated_bytes.all.peak"] == peak
    assert stats["allocated_bytes.all.current"] == after
    cuda.reset_peak_memory_stats()
    assert cuda.max_memory_allocated() == after
    assert cuda.max_memory_reserved() >= cuda.memory_reserved() >= after
    with pytest.warns(FutureWarning, match="reset_peak_memory_stats"):
        cuda.reset_max_memory_allocated()
    del a, c
