"""Randomness of CUDA tensors is drawn on the device (``gpu``-marked: the CuPy emulator
where no GPU is found): dropout masks, RReLU slopes and Gumbel noise of CUDA tensors come
from the device's generator, with no host-to-device copy; ``torch.cuda.manual_seed`` seeds
that generator alone, as in PyTorch (checked against torch 2.13 on the CPU side)."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from gpu_values import host, need_device

import funcgrad.torch.nn.functional as F
from funcgrad import torch
from funcgrad.torch import nn

try:
    import torch as real_torch
except ImportError:  # pragma: no cover - the compat extra is not installed
    real_torch = None


@contextlib.contextmanager
def _transfers() -> Iterator[Any]:
    """The emulator's counters over the block (None on a real GPU: nothing to count)."""
    import fakecupy  # noqa: PLC0415

    if not fakecupy.installed():
        yield None
        return
    with fakecupy.counting() as c:
        yield c


P = 0.3


def _sdpa(x: Any) -> Any:
    q = x.reshape(2, 4, 32, 32)
    return F.scaled_dot_product_attention(q, q, q, dropout_p=P)


# name -> (program on a (64, 128) CUDA tensor of ones, whether it is elementwise dropout)
CASES: dict[str, tuple[Callable[[Any], Any], bool]] = {
    "F.dropout": (lambda x: F.dropout(x, P), True),
    "nn.Dropout": (lambda x: nn.Dropout(P)(x), True),
    "dropout_inplace": (lambda x: F.dropout(x.clone(), P, inplace=True), True),
    "dropout1d": (lambda x: F.dropout1d(x[None], P)[0], False),
    "AlphaDropout": (lambda x: nn.AlphaDropout(P)(x), False),
    "feature_alpha_dropout": (lambda x: F.feature_alpha_dropout(x[None], P)[0], False),
    "sdpa_dropout": (_sdpa, False),
    "rrelu_training": (lambda x: F.rrelu(x - 2.0, training=True), False),
    "gumbel_softmax": (lambda x: F.gumbel_softmax(x, tau=0.5), False),
}


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(CASES))
def test_gpu_noise_is_drawn_on_the_device(name: str) -> None:
    need_device()
    fn, elementwise = CASES[name]
    x = torch.ones(64, 128, device="cuda", requires_grad=True)
    fn(x)  # the first call may compile kernels
    with _transfers() as c:
        y = fn(x)
    if c is not None:
        assert (c.h2d, c.d2h, c.syncs) == (0, 0, 0), c
    assert y.device.type == "cuda"
    out = host(y.detach())
    assert np.isfinite(out).all()
    if elementwise:
        # Values 0 or 1/(1-p); the kept fraction within 6 sigma of 1 - p.
        scale = np.float32(1 / (1 - P))
        assert set(np.unique(out)) <= {0.0, scale}
        kept = (out != 0).mean()
        assert abs(kept - (1 - P)) < 6 * math.sqrt(P * (1 - P) / out.size)
        y.sum().backward()
        np.testing.assert_array_equal(host(x.grad), out)


@pytest.mark.gpu
def test_gpu_rrelu_slopes_and_gumbel_noise_have_their_distributions() -> None:
    need_device()
    x = -torch.ones(200_000, device="cuda")
    slopes = -host(F.rrelu(x, lower=0.1, upper=0.4, training=True))
    assert slopes.min() >= 0.1 and slopes.max() <= 0.4
    assert abs(slopes.mean() - 0.25) < 6 * (0.3 / math.sqrt(12)) / math.sqrt(slopes.size)
    # A hard Gumbel-softmax sample over two equal logits picks each class half the time.
    z = torch.zeros(100_000, 2, device="cuda")
    picks = host(F.gumbel_softmax(z, hard=True))[:, 0]
    assert abs(picks.mean() - 0.5) < 6 * 0.5 / math.sqrt(picks.size)


@pytest.mark.gpu
def test_gpu_cuda_manual_seed_repeats_the_draws_and_the_cpu_stream_is_separate() -> None:
    need_device()
    x = torch.ones(4096, device="cuda")
    torch.cuda.manual_seed(123)
    first = host(F.dropout(x, 0.5))
    second = host(F.dropout(x, 0.5))
    torch.cuda.manual_seed(123)
    np.testing.assert_array_equal(host(F.dropout(x, 0.5)), first)
    torch.rand(100)  # a CPU draw between does not move the CUDA stream
    np.testing.assert_array_equal(host(F.dropout(x, 0.5)), second)
    assert torch.cuda.initial_seed() == 123
    torch.cuda.manual_seed_all(7)
    assert torch.cuda.initial_seed() == 7
    third = host(F.dropout(x, 0.5))
    torch.cuda.manual_seed_all(7)
    np.testing.assert_array_equal(host(F.dropout(x, 0.5)), third)
    assert not np.array_equal(first, third)


@pytest.mark.skipif(real_torch is None, reason="PyTorch 2.13 is not installed")
def test_cuda_seeding_leaves_the_cpu_generator_alone_as_in_pytorch() -> None:
    """``torch.cuda.manual_seed``/``manual_seed_all``/``seed``/``seed_all`` change nothing
    on the CPU side (also without a GPU), in both libraries."""
    def draws(L: Any) -> list[bool]:
        L.manual_seed(1)
        a = L.rand(5).numpy().copy()
        L.manual_seed(1)
        L.cuda.manual_seed(99)
        L.cuda.manual_seed_all(98)
        L.cuda.seed()
        L.cuda.seed_all()
        b = L.rand(5).numpy().copy()
        return [bool(np.array_equal(a, b))]

    assert draws(torch) == draws(real_torch) == [True]
    assert torch.cuda.seed() is None and real_torch.cuda.seed() is None


# name -> factory call on the GPU
FACTORIES: dict[str, Callable[[], Any]] = {
    "zeros": lambda: torch.zeros(3, 4, device="cuda"),
    "ones_int": lambda: torch.ones(5, dtype=torch.int32, device="cuda"),
    "full": lambda: torch.full((2, 3), 1.5, device="cuda"),
    "empty": lambda: torch.empty(7, device="cuda"),
    "zeros_like": lambda: torch.zeros_like(torch.ones(2, 2, device="cuda")),
    "full_like_f16": lambda: torch.full_like(torch.ones(3, device="cuda").half(), 2.0),
    "rand": lambda: torch.rand(1000, device="cuda"),
    "rand_f16": lambda: torch.rand(1000, dtype=torch.float16, device="cuda"),
    "randn": lambda: torch.randn(1000, device="cuda"),
    "randn_like": lambda: torch.randn_like(torch.ones(40, 25, device="cuda")),
    "randint": lambda: torch.randint(-3, 9, (1000,), device="cuda"),
    "normal": lambda: torch.normal(torch.full((500,), 3.0, device="cuda"), 0.5),
    "bernoulli": lambda: torch.bernoulli(torch.full((1000,), 0.25, device="cuda")),
}


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_gpu_factories_make_their_values_on_the_device(name: str) -> None:
    """No host copy for a factory on the GPU, and the values have the factory's kind and
    distribution (6-sigma bounds on 500 to 1000 samples)."""
    need_device()
    make = FACTORIES[name]
    make()
    with _transfers() as c:
        t = make()
    if c is not None:
        assert (c.h2d, c.d2h, c.syncs) == (0, 0, 0), c
    assert t.device.type == "cuda"
    v = host(t).astype(np.float64)
    n = v.size
    if name.startswith("rand_") or name == "rand":
        assert t.dtype is (torch.float16 if name == "rand_f16" else torch.float32)
        assert v.min() >= 0 and v.max() < 1
        assert abs(v.mean() - 0.5) < 6 * math.sqrt(1 / 12 / n)
    elif name.startswith("randn"):
        # 6 sigma: the mean's sigma is 1/sqrt(n), the standard deviation's 1/sqrt(2n).
        assert abs(v.mean()) < 6 / math.sqrt(n) and abs(v.std() - 1) < 6 / math.sqrt(2 * n)
    elif name == "randint":
        assert t.dtype is torch.int64 and v.min() >= -3 and v.max() <= 8
        assert set(np.unique(v)) == set(range(-3, 9))
    elif name == "normal":
        assert abs(v.mean() - 3.0) < 6 * 0.5 / math.sqrt(n)
    elif name == "bernoulli":
        assert set(np.unique(v)) <= {0.0, 1.0}
        assert abs(v.mean() - 0.25) < 6 * math.sqrt(0.25 * 0.75 / n)
    else:
        want = {"zeros": 0.0, "ones_int": 1.0, "full": 1.5, "empty": 0.0,
                "zeros_like": 0.0, "full_like_f16": 2.0}[name]
        assert (v == want).all()
        assert t.dtype is {"ones_int": torch.int32, "full_like_f16": torch.float16}.get(
            name, torch.float32)


@pytest.mark.gpu
def test_gpu_manual_seed_seeds_the_device_generators_too() -> None:
    need_device()
    torch.manual_seed(11)
    a = host(torch.randn(64, device="cuda"))
    b = host(torch.rand(64, device="cuda"))
    torch.manual_seed(11)
    np.testing.assert_array_equal(host(torch.randn(64, device="cuda")), a)
    np.testing.assert_array_equal(host(torch.rand(64, device="cuda")), b)
    assert torch.cuda.initial_seed() == 11


# name -> (fill, check of the float64 values) on a CUDA tensor of 4000 elements
FILLS: dict[str, tuple[Callable[[Any], Any], Callable[[np.ndarray], bool]]] = {
    "uniform_": (lambda t: t.uniform_(-2.0, 3.0),
                 lambda v: v.min() >= -2 and v.max() <= 3 and abs(v.mean() - 0.5) < 0.2),
    "normal_": (lambda t: t.normal_(4.0, 0.5),
                lambda v: abs(v.mean() - 4) < 0.05 and abs(v.std() - 0.5) < 0.05),
    "exponential_": (lambda t: t.exponential_(2.0),
                     lambda v: v.min() >= 0 and abs(v.mean() - 0.5) < 0.05),
    "geometric_": (lambda t: t.geometric_(0.25),
                   lambda v: v.min() >= 1 and (v == np.round(v)).all()
                   and abs(v.mean() - 4) < 0.4),
    "log_normal_": (lambda t: t.log_normal_(0.0, 0.25),
                    lambda v: v.min() > 0 and abs(np.log(v).mean()) < 0.05),
    "cauchy_": (lambda t: t.cauchy_(1.0, 2.0),
                lambda v: abs(np.median(v) - 1) < 0.3),
    "random_": (lambda t: t.random_(3, 7),
                lambda v: set(np.unique(v)) == {3.0, 4.0, 5.0, 6.0}),
    "bernoulli_": (lambda t: t.bernoulli_(0.75),
                   lambda v: set(np.unique(v)) == {0.0, 1.0} and abs(v.mean() - 0.75) < 0.05),
    "bernoulli_tensor_p": (lambda t: t.bernoulli_(torch.full((4000,), 0.1, device="cuda")),
                           lambda v: abs(v.mean() - 0.1) < 0.03),
    "bernoulli": (lambda t: torch.full((4000,), 0.3, device="cuda").bernoulli(),
                  lambda v: abs(v.mean() - 0.3) < 0.05),
}


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(FILLS))
def test_gpu_random_fills_draw_on_the_device(name: str) -> None:
    """PyTorch's in-place samplers of a CUDA tensor: no host copy, their distributions."""
    need_device()
    fill, check = FILLS[name]
    t = torch.empty(4000, device="cuda")
    fill(t)
    with _transfers() as c:
        out = fill(t)
    if c is not None:
        assert (c.h2d, c.d2h, c.syncs) == (0, 0, 0), c
    assert out.device.type == "cuda" and out.dtype is torch.float32
    assert check(host(out).astype(np.float64))


@pytest.mark.gpu
def test_gpu_cuda_generators_seed_their_own_draws() -> None:
    need_device()
    g = torch.Generator(device="cuda")
    g.manual_seed(5)
    a = host(torch.empty(100, device="cuda").normal_(generator=g))
    g.manual_seed(5)
    np.testing.assert_array_equal(host(torch.empty(100, device="cuda").normal_(generator=g)), a)
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator"):
        torch.empty(3, device="cuda").uniform_(generator=torch.Generator())
