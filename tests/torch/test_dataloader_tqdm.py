"""``tqdm(DataLoader(...))`` draws a bar of the right length and yields the loader's batches:
tqdm takes its total from ``len(loader)``, so the loader's ``__len__`` must count the batches
it yields (drop_last, samplers, batch samplers, iterable datasets), as PyTorch's does."""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft
from funcgrad.torch.utils import data as fdata
from funcgrad.torch.utils.data.distributed import DistributedSampler

tqdm = pytest.importorskip("tqdm").tqdm

HYP = settings(max_examples=20, deadline=None)


def as_lists(batches) -> list:
    return [[t.tolist() for t in b] if isinstance(b, (list, tuple)) else b.tolist()
            for b in batches]


def bar(loader) -> tuple[list, object, str]:
    """The batches tqdm yields, the bar, and what it drew (into a string, not the terminal)."""
    out = io.StringIO()
    progress = tqdm(loader, file=out, mininterval=0)
    got = list(progress)
    progress.close()
    return got, progress, out.getvalue()


def dataset(n: int) -> fdata.TensorDataset:
    x = ft.tensor(np.arange(n * 2, dtype=np.float32).reshape(n, 2))
    return fdata.TensorDataset(x, ft.tensor(np.arange(n)))


SAMPLERS = ["sequential", "random", "subset", "weighted", "distributed"]


def make_sampler(kind: str, n: int, seed: int):
    if kind == "sequential":
        return None
    if kind == "random":
        return fdata.RandomSampler(range(n), generator=ft.Generator().manual_seed(seed))
    if kind == "subset":
        return fdata.SubsetRandomSampler(list(range(0, n, 2)),
                                         generator=ft.Generator().manual_seed(seed))
    if kind == "weighted":
        return fdata.WeightedRandomSampler([1.0] * n, num_samples=n + 3,
                                           generator=ft.Generator().manual_seed(seed))
    return DistributedSampler(range(n), num_replicas=3, rank=1, shuffle=False)


def expected_batches(samples: int, batch_size: int, drop_last: bool) -> int:
    return samples // batch_size if drop_last else -(-samples // batch_size)


@HYP
@given(st.integers(1, 17), st.integers(1, 5), st.booleans(), st.sampled_from(SAMPLERS),
       st.integers(0, 3))
def test_tqdm_over_a_dataloader(n, batch_size, drop_last, kind, seed):
    def loader() -> fdata.DataLoader:
        return fdata.DataLoader(dataset(n), batch_size=batch_size, drop_last=drop_last,
                                sampler=make_sampler(kind, n, seed))

    plain = as_lists(loader())
    got, progress, drawn = bar(loader())
    assert as_lists(got) == plain
    samples = len(make_sampler(kind, n, seed) or range(n))
    total = expected_batches(samples, batch_size, drop_last)
    assert len(loader()) == len(progress) == progress.total == progress.n == len(plain) == total
    # An empty bar (every batch dropped) is drawn as a count, "0it".
    assert (f"{total}/{total}" if total else "0it") in drawn


@HYP
@given(st.integers(1, 17), st.integers(1, 5), st.booleans())
def test_len_matches_torch(n, batch_size, drop_last):
    torch = pytest.importorskip("torch")
    for kind in SAMPLERS:
        ours = make_sampler(kind, n, 0)
        theirs = None if ours is None else {
            "random": lambda: torch.utils.data.RandomSampler(range(n)),
            "subset": lambda: torch.utils.data.SubsetRandomSampler(list(range(0, n, 2))),
            "weighted": lambda: torch.utils.data.WeightedRandomSampler([1.0] * n, n + 3),
            "distributed": lambda: torch.utils.data.DistributedSampler(
                range(n), num_replicas=3, rank=1, shuffle=False),
        }[kind]()
        assert len(fdata.DataLoader(range(n), batch_size=batch_size, drop_last=drop_last,
                                    sampler=ours)) == len(
            torch.utils.data.DataLoader(range(n), batch_size=batch_size, drop_last=drop_last,
                                        sampler=theirs)), kind


def test_batch_sampler_and_no_batching() -> None:
    ds = dataset(10)
    batches = fdata.BatchSampler(fdata.SequentialSampler(ds), batch_size=4, drop_last=False)
    got, progress, _ = bar(fdata.DataLoader(ds, batch_sampler=batches))
    assert progress.total == len(got) == 3
    assert [len(b[1]) for b in got] == [4, 4, 2]
    got, progress, _ = bar(fdata.DataLoader(ds, batch_size=None))
    assert progress.total == len(got) == 10 and got[3][1].tolist() == 3


class Stream(fdata.IterableDataset):
    def __init__(self, n: int) -> None:
        self.n = n

    def __iter__(self):
        return iter(ft.tensor(i) for i in range(self.n))


class SizedStream(Stream):
    def __len__(self) -> int:
        return self.n


def test_iterable_datasets() -> None:
    got, progress, drawn = bar(fdata.DataLoader(SizedStream(7), batch_size=3, drop_last=True))
    assert progress.total == len(got) == 2 and "2/2" in drawn
    # Without __len__ the loader has no length either: tqdm counts without a total.
    unsized = fdata.DataLoader(Stream(7), batch_size=3)
    with pytest.raises(TypeError):
        len(unsized)
    got, progress, drawn = bar(unsized)
    assert progress.total is None and len(got) == progress.n == 3
    assert as_lists(got) == [[0, 1, 2], [3, 4, 5], [6]]


def test_worker_processes() -> None:
    loader = fdata.DataLoader(dataset(9), batch_size=2, num_workers=2)
    got, progress, _ = bar(loader)
    assert progress.total == len(got) == 5
    assert as_lists(got) == as_lists(fdata.DataLoader(dataset(9), batch_size=2))


def test_epochs_and_a_broken_loop() -> None:
    """A loader is iterated once per epoch; a bar left early (break) closes cleanly."""
    loader = fdata.DataLoader(dataset(8), batch_size=3, shuffle=True,
                              generator=ft.Generator().manual_seed(0))
    for _ in range(2):
        got, progress, _ = bar(loader)
        assert progress.n == progress.total == 3
        assert sorted(i for b in got for i in b[1].tolist()) == list(range(8))
    out = io.StringIO()
    with tqdm(loader, file=out, mininterval=0) as progress:
        for i, _ in enumerate(progress):
            if i == 1:
                break
    assert progress.n == 1 and progress.total == 3
