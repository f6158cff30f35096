"""torch.utils.data: datasets, samplers, default_collate and DataLoader (single process
and worker processes), against torch 2.13's (batches compared in content and structure;
shuffles compared as permutations, since funcgrad's generator is not PyTorch's)."""

from __future__ import annotations

import collections
import random
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft
from funcgrad.torch.utils import data as fdata

HYP = settings(max_examples=15, deadline=None)
Point = collections.namedtuple("Point", "x y")


def to_py(obj):
    """A batch as plain Python (tensor -> ('T', dtype, values)), for either library."""
    if hasattr(obj, "numpy") and hasattr(obj, "dtype") and not isinstance(obj, np.ndarray):
        return ("T", str(obj.dtype), obj.tolist())
    if isinstance(obj, dict):
        return {k: to_py(v) for k, v in obj.items()}
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return (type(obj).__name__, tuple(to_py(v) for v in obj))
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [to_py(v) for v in obj])
    return obj


SAMPLES = {
    "tuple": lambda i: (i, float(i) / 2, f"s{i}"),
    "dict": lambda i: {"a": np.arange(3) + i, "b": [i, i + 1], "c": b"x"},
    "namedtuple": lambda i: Point(np.float32(i), np.array([[i, 1.5]])),
    "bool": lambda i: bool(i % 2),
    "nested": lambda i: [{"k": (i, np.int16(i))}],
}


class ListDataset(fdata.Dataset):
    def __init__(self, items):
        self.items = items

    def __getitem__(self, i):
        return self.items[i]

    def __len__(self):
        return len(self.items)


class Stream(fdata.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = fdata.get_worker_info()
        if info is None:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))

    def __len__(self):
        return self.n


class FailingDataset(fdata.Dataset):
    def __getitem__(self, i):
        if i == 3:
            raise KeyError("three")
        return i

    def __len__(self):
        return 6


class SeedReport(fdata.Dataset):
    def __getitem__(self, i):
        info = fdata.get_worker_info()
        return (info.id, info.seed, float(ft.rand(1).item()), random.random())

    def __len__(self):
        return 4


@HYP
@given(st.sampled_from(sorted(SAMPLES)), st.integers(1, 9), st.integers(1, 4), st.booleans())
def test_dataloader_batches_match_torch(kind, n, batch_size, drop_last):
    torch = pytest.importorskip("torch")
    items = [SAMPLES[kind](i) for i in range(n)]
    ours = [to_py(b) for b in fdata.DataLoader(ListDataset(items), batch_size=batch_size,
                                               drop_last=drop_last)]
    theirs = [to_py(b) for b in torch.utils.data.DataLoader(items, batch_size=batch_size,
                                                            drop_last=drop_last)]
    assert ours == theirs
    assert len(fdata.DataLoader(items, batch_size=batch_size, drop_last=drop_last)) == len(
        torch.utils.data.DataLoader(items, batch_size=batch_size, drop_last=drop_last))


@HYP
@given(st.sampled_from(sorted(SAMPLES)))
def test_no_auto_batching_converts_like_torch(kind):
    torch = pytest.importorskip("torch")
    items = [SAMPLES[kind](i) for i in range(3)]
    assert [to_py(b) for b in fdata.DataLoader(items, batch_size=None)] == [
        to_py(b) for b in torch.utils.data.DataLoader(items, batch_size=None)]


def test_collate_errors_match_torch():
    torch = pytest.importorskip("torch")
    for bad, exc in [([[1], [1, 2]], RuntimeError), ([object()], TypeError),
                     ([np.array(["a"])], TypeError)]:
        with pytest.raises(exc) as theirs:
            torch.utils.data.default_collate(bad)
        with pytest.raises(exc) as ours:
            fdata.default_collate(bad)
        assert str(ours.value) == str(theirs.value)


def test_tensor_dataset_and_collate_stack():
    x = ft.arange(12.0).reshape(6, 2)
    y = ft.arange(6)
    ds = fdata.TensorDataset(x, y)
    assert len(ds) == 6
    (bx, by), = list(fdata.DataLoader(ds, batch_size=6))
    assert bx.tolist() == x.tolist() and by.tolist() == y.tolist()
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        fdata.TensorDataset(x, ft.arange(5))


@HYP
@given(n=st.integers(1, 30), batch_size=st.integers(1, 9), drop_last=st.booleans(),
       shuffle=st.booleans(), dtype=st.sampled_from(["float32", "float64", "int64", "bool"]),
       tail=st.sampled_from([(), (3,), (1, 2, 2)]))
def test_tensor_dataset_batches_equal_stacked_samples(n, batch_size, drop_last, shuffle, dtype,
                                                       tail):
    """A TensorDataset's batches are gathered whole: the same tensors (values, dtypes,
    shapes, structure) default_collate makes of the samples one by one, under any sampler."""
    rng = np.random.default_rng(n)
    x = ft.tensor((rng.standard_normal((n, *tail)) * 5).astype(dtype))
    y = ft.tensor(rng.integers(0, 10, n))
    ds = fdata.TensorDataset(x, y)

    def per_sample(batch):
        return fdata.default_collate(batch)  # not default_collate itself: no gather

    def batches(collate):
        gen = ft.Generator().manual_seed(7)
        return [to_py(b) for b in fdata.DataLoader(
            ds, batch_size=batch_size, shuffle=shuffle, drop_last=drop_last, generator=gen,
            collate_fn=collate)]

    gathered = batches(None)
    assert gathered == batches(per_sample)
    assert all(kind == "list" for kind, _ in gathered)


def test_tensor_dataset_batches_refuse_bad_indices_as_samples_do():
    ds = fdata.TensorDataset(ft.arange(4.0), ft.arange(4))
    for index in ([[0, 4]], [[1, -1]]):
        loader = fdata.DataLoader(ds, batch_sampler=index)
        if index == [[1, -1]]:
            (bx, by), = list(loader)  # a negative index counts from the end, as t[-1]
            assert bx.tolist() == [1.0, 3.0] and by.tolist() == [1, 3]
        else:
            with pytest.raises(IndexError, match="index 4 is out of bounds for dimension 0 "
                                                 "with size 4"):
                list(loader)
    w = ft.ones(3, requires_grad=True)
    (bw,), = list(fdata.DataLoader(fdata.TensorDataset(w * 2), batch_size=3))
    assert bw.grad_fn is not None and bw.grad_fn.name() == "StackBackward0"


def test_shuffle_is_a_permutation_and_reproducible():
    ds = list(range(20))
    seen = [b.tolist() for b in fdata.DataLoader(ds, batch_size=7, shuffle=True)]
    flat = sum(seen, [])
    assert sorted(flat) == ds and flat != ds
    a = sum((b.tolist() for b in fdata.DataLoader(
        ds, batch_size=7, shuffle=True, generator=ft.Generator().manual_seed(3))), [])
    b = sum((b.tolist() for b in fdata.DataLoader(
        ds, batch_size=7, shuffle=True, generator=ft.Generator().manual_seed(3))), [])
    assert a == b
    ft.manual_seed(5)
    c = list(fdata.RandomSampler(ds))
    ft.manual_seed(5)
    assert list(fdata.RandomSampler(ds)) == c


def test_samplers():
    ds = list(range(10))
    assert list(fdata.SequentialSampler(ds)) == ds
    rs = fdata.RandomSampler(ds, replacement=True, num_samples=50)
    drawn = list(rs)
    assert len(rs) == len(drawn) == 50 and all(0 <= i < 10 for i in drawn)
    long = list(fdata.RandomSampler(ds, num_samples=25))
    assert sorted(long[:10]) == ds and sorted(long[10:20]) == ds and len(long) == 25
    assert sorted(fdata.SubsetRandomSampler([3, 5, 7])) == [3, 5, 7]
    w = list(fdata.WeightedRandomSampler([0.0, 0.0, 1.0, 0.0], 5))
    assert w == [2] * 5
    assert sorted(fdata.WeightedRandomSampler([1.0, 1.0, 1.0], 3, replacement=False)) == [0, 1, 2]
    # PyTorch's CPU multinomial draws zero weights last rather than refusing them; more
    # samples than weights is the error.
    assert list(fdata.WeightedRandomSampler([1.0, 0.0], 2, replacement=False)) == [0, 1]
    with pytest.raises(RuntimeError, match="cannot sample n_sample > prob_dist.size"):
        list(fdata.WeightedRandomSampler([1.0, 0.0], 3, replacement=False))
    assert list(fdata.BatchSampler(range(7), 3, False)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert len(fdata.BatchSampler(range(7), 3, True)) == 2


def test_sampler_errors_match_torch():
    torch = pytest.importorskip("torch")
    cases = [
        lambda m: m.RandomSampler(range(3), num_samples=0),
        lambda m: m.RandomSampler(range(3), replacement=1),
        lambda m: m.BatchSampler(range(3), 0, False),
        lambda m: m.WeightedRandomSampler([1.0], -1),
    ]
    for case in cases:
        with pytest.raises((ValueError, TypeError)) as theirs:
            case(torch.utils.data)
        with pytest.raises(type(theirs.value)) as ours:
            case(fdata)
        assert str(ours.value) == str(theirs.value)


def test_dataloader_option_errors_match_torch():
    torch = pytest.importorskip("torch")
    ds = list(range(4))
    cases = [
        dict(num_workers=-1), dict(timeout=-1), dict(prefetch_factor=2),
        dict(persistent_workers=True), dict(sampler=[0, 1], shuffle=True),
        dict(batch_sampler=[[0]], batch_size=2), dict(batch_size=None, drop_last=True),
    ]
    for kw in cases:
        with pytest.raises(ValueError) as theirs:
            torch.utils.data.DataLoader(ds, **kw)
        with pytest.raises(ValueError) as ours:
            fdata.DataLoader(ds, **kw)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        fdata.DataLoader(Stream(3), shuffle=True)
    loader = fdata.DataLoader(ds)
    with pytest.raises(ValueError, match="batch_size attribute should not be set"):
        loader.batch_size = 3


def test_random_split_lengths_and_fractions():
    torch = pytest.importorskip("torch")
    for lengths in ([3, 7], [0.5, 0.5], [0.33, 0.33, 0.34], [0.1, 0.9], [1.0]):
        ours = fdata.random_split(range(10), lengths, generator=ft.Generator().manual_seed(0))
        theirs = torch.utils.data.random_split(range(10), lengths,
                                               generator=torch.Generator().manual_seed(0))
        assert [len(s) for s in ours] == [len(s) for s in theirs]
        assert sorted(sum((list(s) for s in ours), [])) == list(range(10))
    with pytest.raises(ValueError, match="Sum of input lengths"):
        fdata.random_split(range(10), [3, 3])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fdata.random_split(range(1), [0.5, 0.5])
    assert any("index 1 is 0" in str(x.message) for x in w)


def test_concat_subset_chain():
    c = fdata.ConcatDataset([ListDataset([1, 2]), ListDataset([3, 4, 5])])
    assert len(c) == 5 and [c[i] for i in range(-5, 5)] == [1, 2, 3, 4, 5] * 2
    assert c.cumulative_sizes == [2, 5]
    both = ListDataset([1]) + ListDataset([2])
    assert isinstance(both, fdata.ConcatDataset) and list(both) == [1, 2]
    s = fdata.Subset(ListDataset([10, 11, 12]), [2, 0])
    assert [s[0], s[1]] == [12, 10]
    assert list(Stream(2) + Stream(3)) == [0, 1, 0, 1, 2]
    with pytest.raises(AssertionError, match="does not support IterableDataset"):
        fdata.ConcatDataset([Stream(2)])


def test_iterable_dataset_batches_and_len():
    loader = fdata.DataLoader(Stream(7), batch_size=3)
    assert [b.tolist() for b in loader] == [[0, 1, 2], [3, 4, 5], [6]]
    assert len(loader) == 3
    assert len(fdata.DataLoader(Stream(7), batch_size=3, drop_last=True)) == 2
    assert [b.tolist() for b in fdata.DataLoader(Stream(7), batch_size=3, drop_last=True)] == [
        [0, 1, 2], [3, 4, 5]]


# ------------------------------------------------------------ worker processes


def test_workers_give_the_same_batches_in_order():
    ds = ListDataset([SAMPLES["dict"](i) for i in range(11)])
    single = [to_py(b) for b in fdata.DataLoader(ds, batch_size=2)]
    multi = [to_py(b) for b in fdata.DataLoader(ds, batch_size=2, num_workers=2,
                                                prefetch_factor=3)]
    assert multi == single


def test_worker_seeds_info_and_init_fn():
    loader = fdata.DataLoader(SeedReport(), batch_size=None, num_workers=2,
                              worker_init_fn=_init_fn, generator=ft.Generator().manual_seed(0))
    out = list(loader)
    ids = [o[0] for o in out]
    assert ids == [0, 1, 0, 1]
    seeds = {o[0]: o[1] for o in out}
    assert seeds[1] == seeds[0] + 1
    assert out[0][2] != out[1][2]  # each worker's generator is seeded differently
    again = list(fdata.DataLoader(SeedReport(), batch_size=None, num_workers=2,
                                  worker_init_fn=_init_fn,
                                  generator=ft.Generator().manual_seed(0)))
    assert again == out


def _init_fn(worker_id):
    assert fdata.get_worker_info().id == worker_id


def test_worker_exception_is_reraised():
    loader = fdata.DataLoader(FailingDataset(), batch_size=2, num_workers=2)
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process 1"):
        list(loader)


def test_iterable_dataset_with_workers_and_persistent_workers():
    loader = fdata.DataLoader(Stream(8), batch_size=2, num_workers=2, persistent_workers=True)
    for _ in range(2):
        got = sorted(sum((b.tolist() for b in loader), []))
        assert got == list(range(8))
    it = loader._iterator
    assert it is not None and all(p.is_alive() for p in it.workers)
    it._shutdown()


def test_pin_memory_is_accepted():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loader = fdata.DataLoader([1, 2], pin_memory=True)
    assert [b.tolist() for b in loader] == [[1], [2]]
