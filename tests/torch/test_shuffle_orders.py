"""A seeded torch.Generator shuffles as PyTorch's: randperm, random_split, RandomSampler and
a shuffling DataLoader over several epochs give PyTorch 2.13's orders (its CPU generator is
MT19937, reproduced through NumPy's legacy RandomState)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft
from funcgrad.torch.utils.data import DataLoader, RandomSampler, random_split

SEEDS = st.integers(0, 2 ** 32 - 1)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(0, 200), seed=SEEDS)
def test_randperm_with_a_generator(n: int, seed: int) -> None:
    torch = pytest.importorskip("torch")
    ours, theirs = ft.Generator().manual_seed(seed), torch.Generator().manual_seed(seed)
    for _ in range(2):  # the stream continues as PyTorch's
        assert ft.randperm(n, generator=ours).tolist() == \
            torch.randperm(n, generator=theirs).tolist()


@settings(max_examples=20, deadline=None)
@given(n=st.integers(1, 60), frac=st.floats(0.05, 0.95), seed=SEEDS)
def test_random_split_and_random_sampler(n: int, frac: float, seed: int) -> None:
    torch = pytest.importorskip("torch")
    ours = random_split(range(n), [frac, 1 - frac], generator=ft.Generator().manual_seed(seed))
    theirs = torch.utils.data.random_split(range(n), [frac, 1 - frac],
                                           generator=torch.Generator().manual_seed(seed))
    assert [list(s.indices) for s in ours] == [list(s.indices) for s in theirs]
    a = RandomSampler(range(n), num_samples=2 * n + 1,
                      generator=ft.Generator().manual_seed(seed))
    b = torch.utils.data.RandomSampler(range(n), num_samples=2 * n + 1,
                                       generator=torch.Generator().manual_seed(seed))
    assert list(a) == list(b)


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 40), batch=st.integers(1, 7), seed=SEEDS, drop_last=st.booleans())
def test_shuffling_dataloader_epochs(n: int, batch: int, seed: int, drop_last: bool) -> None:
    torch = pytest.importorskip("torch")
    ours = DataLoader(ft.arange(n), batch_size=batch, shuffle=True, drop_last=drop_last,
                      generator=ft.Generator().manual_seed(seed))
    theirs = torch.utils.data.DataLoader(torch.arange(n), batch_size=batch, shuffle=True,
                                         drop_last=drop_last,
                                         generator=torch.Generator().manual_seed(seed))
    for _ in range(3):
        assert [b.tolist() for b in ours] == [b.tolist() for b in theirs]


def test_generator_seed_does_not_touch_the_global_stream() -> None:
    ft.manual_seed(5)
    a = ft.rand(3)
    ft.manual_seed(5)
    ft.Generator().manual_seed(99)
    assert ft.rand(3).tolist() == a.tolist()


def test_without_pytorch_orders_are_permutations() -> None:
    g = ft.Generator().manual_seed(0)
    p = ft.randperm(20, generator=g).tolist()
    assert sorted(p) == list(range(20)) and p != list(range(20))
    assert ft.randperm(5, generator=ft.Generator().manual_seed(0)).tolist() == [4, 0, 1, 3, 2]


def test_generator_constructor_default_seed_and_state_match_torch() -> None:
    torch = pytest.importorskip("torch")
    for L in (ft, torch):
        g = L.Generator("cpu")
        assert str(g.device) == "cpu" and g.initial_seed() == 67280421310721
    ours, theirs = ft.Generator(), torch.Generator(device="cpu")
    assert ft.randperm(9, generator=ours).tolist() == torch.randperm(9, generator=theirs).tolist()
    state = ours.get_state()
    first = ft.randperm(9, generator=ours).tolist()
    assert first == torch.randperm(9, generator=theirs).tolist()
    ours.set_state(state)
    assert ft.randperm(9, generator=ours).tolist() == first
    s = ours.seed()
    assert ours.initial_seed() == s
    assert ft.randperm(9, generator=ours).tolist() == \
        torch.randperm(9, generator=torch.Generator().manual_seed(s)).tolist()
