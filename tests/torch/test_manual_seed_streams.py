"""``funcgrad.torch.manual_seed(s)`` followed by CPU draws gives PyTorch 2.13's numbers.

Both generators are MT19937 with PyTorch's kernels on top (see funcgrad/torch/_mt_stream.py):
``rand``/``uniform_``, ``randn``/``normal_`` (per element with the cached Box-Muller
sample below 16 elements, the 16-wide fill above, float32 through avx_mathfun's log and
sincos), ``randint``/``random_``, ``randperm``, ``exponential_``, ``bernoulli``,
``multinomial``, the nn.init functions and the default inits of layers. Every comparison
here is exact (bit for bit) unless it states a tolerance; the state bytes of
``get_rng_state`` are compared with PyTorch's too, so the stream positions and the normal
cache are checked after every sequence.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft

torch = pytest.importorskip("torch")

SEEDS = st.integers(0, 2 ** 32 - 1)
# Sizes below, at and above 16, most no multiple of 16 (the redrawn last block).
SIZES = st.sampled_from([1, 2, 3, 7, 15, 16, 17, 31, 32, 33, 50, 100, 129])
DTYPES = st.sampled_from(["float32", "float64"])
BOUNDS = st.tuples(st.floats(-50, 50), st.floats(0.001, 60)).map(lambda t: (t[0], t[0] + t[1]))


def _np(t: Any) -> np.ndarray:
    return np.asarray(t.detach().numpy())


def _same(ours: Any, theirs: Any) -> None:
    a, b = _np(ours), _np(theirs)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.array_equal(a, b), (a, b, int((a != b).sum()))


def _same_state() -> None:
    """The stream position, the twister's words and the cached normal agree."""
    _same(ft.get_rng_state(), torch.get_rng_state())


def _seed(s: int) -> None:
    ft.manual_seed(s)
    torch.manual_seed(s)


@settings(max_examples=40, deadline=None)
@given(seed=SEEDS, n=SIZES, dtype=DTYPES, bounds=BOUNDS)
def test_rand_uniform_randn_normal_match(seed: int, n: int, dtype: str,
                                         bounds: tuple[float, float]) -> None:
    lo, hi = bounds
    _seed(seed)
    fd, td = getattr(ft, dtype), getattr(torch, dtype)
    _same(ft.rand(n, dtype=fd), torch.rand(n, dtype=td))
    _same(ft.empty(n, dtype=fd).uniform_(lo, hi), torch.empty(n, dtype=td).uniform_(lo, hi))
    _same(ft.randn(n, dtype=fd), torch.randn(n, dtype=td))
    mean, std = lo / 10, (hi - lo) / 10
    _same(ft.empty(n, dtype=fd).normal_(mean, std), torch.empty(n, dtype=td).normal_(mean, std))
    _same_state()


@settings(max_examples=30, deadline=None)
@given(seed=SEEDS, sizes=st.lists(SIZES, min_size=1, max_size=6),
       dtypes=st.lists(DTYPES, min_size=6, max_size=6))
def test_mixed_sequences_keep_the_stream_and_the_normal_cache(
        seed: int, sizes: list[int], dtypes: list[str]) -> None:
    """rand, then odd-sized randn (leaving a cached sample), then larger randn and fills:
    each draw starts where PyTorch's does and uses the cache as PyTorch does."""
    _seed(seed)
    for i, n in enumerate(sizes):
        fd, td = getattr(ft, dtypes[i]), getattr(torch, dtypes[i])
        _same(ft.randn(3, dtype=fd), torch.randn(3, dtype=td))  # caches a sample
        _same(ft.randn(n, dtype=fd), torch.randn(n, dtype=td))
        _same(ft.rand(n, dtype=fd), torch.rand(n, dtype=td))
        _same(ft.randn(2, 3, dtype=fd) * 2, torch.randn(2, 3, dtype=td) * 2)
        _same(ft.empty(n, dtype=fd).uniform_(-1, 3), torch.empty(n, dtype=td).uniform_(-1, 3))
        _same_state()


@settings(max_examples=25, deadline=None)
@given(seed=SEEDS, n=SIZES, low=st.integers(-1000, 1000),
       span=st.sampled_from([1, 2, 7, 1000, 2 ** 28 - 1, 2 ** 28, 2 ** 40]))
def test_integer_draws_match(seed: int, n: int, low: int, span: int) -> None:
    _seed(seed)
    _same(ft.randint(low, low + span, (n,)), torch.randint(low, low + span, (n,)))
    _same(ft.randperm(n), torch.randperm(n))
    _same(ft.empty(n, dtype=ft.int64).random_(), torch.empty(n, dtype=torch.int64).random_())
    _same(ft.empty(n).random_(), torch.empty(n).random_())
    _same(ft.empty(n, dtype=ft.int32).random_(5), torch.empty(n, dtype=torch.int32).random_(5))
    _same_state()


@settings(max_examples=20, deadline=None)
@given(seed=SEEDS, n=SIZES, dtype=DTYPES, lam=st.floats(0.1, 10), p=st.floats(0.01, 0.99))
def test_other_distributions_match(seed: int, n: int, dtype: str, lam: float, p: float
                                   ) -> None:
    _seed(seed)
    fd, td = getattr(ft, dtype), getattr(torch, dtype)
    _same(ft.empty(n, dtype=fd).exponential_(lam), torch.empty(n, dtype=td).exponential_(lam))
    _same(ft.empty(n, dtype=fd).bernoulli_(p), torch.empty(n, dtype=td).bernoulli_(p))
    _same(ft.bernoulli(ft.full((n,), p, dtype=fd)), torch.bernoulli(torch.full((n,), p, dtype=td)))
    _same(ft.empty(n, dtype=fd).geometric_(p), torch.empty(n, dtype=td).geometric_(p))
    _same(ft.empty(n, dtype=fd).cauchy_(1.0, lam), torch.empty(n, dtype=td).cauchy_(1.0, lam))
    _same(ft.empty(n, dtype=fd).log_normal_(0.5, 0.5),
          torch.empty(n, dtype=td).log_normal_(0.5, 0.5))
    w = np.linspace(0.1, 1.0, 9)
    _same(ft.multinomial(ft.tensor(w, dtype=fd), 5),
          torch.multinomial(torch.tensor(w, dtype=td), 5))
    _same(ft.multinomial(ft.tensor(w, dtype=fd), 20, replacement=True),
          torch.multinomial(torch.tensor(w, dtype=td), 20, replacement=True))
    _same(ft.normal(ft.arange(float(n)), 2.0), torch.normal(torch.arange(float(n)), 2.0))
    _same_state()


def _layers(t: Any) -> list[Any]:
    nn = t.nn
    return [nn.Linear(4, 3), nn.Linear(37, 19), nn.Conv2d(3, 8, 3), nn.Conv1d(2, 5, 4),
            nn.ConvTranspose2d(3, 4, 3), nn.Embedding(10, 5), nn.Embedding(100, 7),
            nn.LSTM(4, 6, num_layers=2), nn.GRU(3, 5), nn.RNN(3, 5),
            nn.MultiheadAttention(8, 2), nn.Bilinear(3, 4, 5)]


@settings(max_examples=8, deadline=None)
@given(seed=SEEDS)
def test_default_layer_inits_match_after_manual_seed(seed: int) -> None:
    """The main payoff: ``manual_seed(s); nn.Linear(4, 3)`` has PyTorch's weights."""
    _seed(seed)
    for ours, theirs in zip(_layers(ft), _layers(torch), strict=True):
        mine, ref = list(ours.named_parameters()), list(theirs.named_parameters())
        assert [k for k, _ in mine] == [k for k, _ in ref]
        for (name, a), (_, b) in zip(mine, ref, strict=True):
            assert np.array_equal(_np(a), _np(b)), (type(theirs).__name__, name)
    _same_state()


@settings(max_examples=15, deadline=None)
@given(seed=SEEDS, rows=st.integers(1, 20), cols=st.integers(1, 20), gain=st.floats(0.1, 3))
def test_init_functions_match(seed: int, rows: int, cols: int, gain: float) -> None:
    _seed(seed)
    for name, kwargs in [("xavier_uniform_", {"gain": gain}), ("xavier_normal_", {"gain": gain}),
                         ("kaiming_uniform_", {"a": 5 ** 0.5}), ("kaiming_normal_", {}),
                         ("uniform_", {"a": -gain, "b": gain}), ("normal_", {"std": gain}),
                         ("trunc_normal_", {"std": 0.02}), ("trunc_normal_", {"a": 1.5, "b": 3.0}),
                         ("sparse_", {"sparsity": 0.5})]:
        ours = getattr(ft.nn.init, name)(ft.empty(rows, cols), **kwargs)
        theirs = getattr(torch.nn.init, name)(torch.empty(rows, cols), **kwargs)
        assert np.array_equal(_np(ours), _np(theirs)), name
    _same_state()


def test_orthogonal_init_draws_the_same_gaussian_matrix() -> None:
    """orthogonal_ draws PyTorch's Gaussian matrix; its QR rounds differently (float32
    tolerance 1e-5), and afterwards the streams are in step again."""
    _seed(3)
    ours = ft.nn.init.orthogonal_(ft.empty(6, 9))
    theirs = torch.nn.init.orthogonal_(torch.empty(6, 9))
    assert np.allclose(_np(ours), _np(theirs), atol=1e-5)
    _same_state()


@settings(max_examples=15, deadline=None)
@given(seed=SEEDS, n=SIZES)
def test_rng_state_round_trips_and_is_pytorchs(seed: int, n: int) -> None:
    _seed(seed)
    _same(ft.randn(3), torch.randn(3))  # a cached normal is part of the state
    state = ft.get_rng_state()
    assert tuple(state.shape) == (5056,) and state.dtype == ft.uint8
    first = ft.randn(n)
    ft.set_rng_state(state)
    assert np.array_equal(_np(ft.randn(n)), _np(first))
    # PyTorch's own state bytes load here and continue its stream.
    ft.set_rng_state(ft.tensor(_np(torch.get_rng_state())))
    _same(ft.randn(n), torch.randn(n))
    gen_f, gen_t = ft.Generator().manual_seed(seed), torch.Generator().manual_seed(seed)
    _same(ft.rand(n, generator=gen_f), torch.rand(n, generator=gen_t))
    saved = gen_f.get_state()
    _same(saved, gen_t.get_state())
    a = ft.randn(n, generator=gen_f)
    gen_f.set_state(saved)
    assert np.array_equal(_np(ft.randn(n, generator=gen_f)), _np(a))
    _same(a, torch.randn(n, generator=gen_t))


def test_compiled_step_draws_what_the_eager_step_draws() -> None:
    """torch.compile records the draws and replays them on the real stream: the same
    numbers as eager (and so as PyTorch), with the normal cache carried between calls."""
    def step(x: Any) -> Any:
        return (x + ft.randn(3), x.sum() + ft.rand(20), ft.empty(17).normal_(1.0, 2.0),
                ft.randint(0, 5, (3,)), ft.randn(1))

    def reference() -> list[np.ndarray]:
        return [t.numpy() for t in (torch.randn(3), torch.rand(20),
                                    torch.empty(17).normal_(1.0, 2.0),
                                    torch.randint(0, 5, (3,)), torch.randn(1))]

    compiled = ft.compile(step)
    x = ft.zeros(3)
    ft.manual_seed(11)
    eager = [[_np(t) for t in step(x)] for _ in range(3)]
    ft.manual_seed(11)
    staged = [[_np(t) for t in compiled(x)] for _ in range(3)]
    torch.manual_seed(11)
    ref = [reference() for _ in range(3)]
    for a, b, c in zip(eager, staged, ref, strict=True):
        for u, v, w in zip(a, b, c, strict=True):
            assert np.array_equal(u, v) and np.array_equal(u, w)
