"""Samplers: the orders in which a ``DataLoader`` visits a map-style dataset's indices.

Random samplers draw from the ``Generator`` they are given (its own stream) or, without
one, from a stream seeded by funcgrad.torch's global generator (``torch.manual_seed``)
each time an iteration starts, as PyTorch's do.

>>> from funcgrad.torch.utils.data import BatchSampler, SequentialSampler
>>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
[[0, 1], [2, 3], [4]]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Any, Generic, TypeVar

import numpy as np

from funcgrad.torch._random import Generator, mt_randperm, rng
from funcgrad.torch._tensor import Tensor

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler",
           "SubsetRandomSampler", "WeightedRandomSampler"]

T_co = TypeVar("T_co", covariant=True)


def generator_rng(generator: Any) -> np.random.Generator:
    """The NumPy stream to draw from: ``generator``'s own, or a fresh one seeded from the
    global generator (so ``torch.manual_seed`` makes a shuffle reproducible)."""
    if generator is not None:
        if not isinstance(generator, Generator):
            raise TypeError(f"expected a torch.Generator, but got {type(generator).__name__}")
        return generator._rng
    return np.random.default_rng(int(rng().integers(0, 2 ** 63 - 1)))


def randperm(n: int, generator: Any = None) -> list[int]:
    """A random permutation of ``range(n)`` drawn from ``generator``: PyTorch's order for
    a seeded ``torch.Generator``; without one, from a stream seeded by the global
    generator (see generator_rng)."""
    if generator is not None:
        generator_rng(generator)  # checks the type
        return mt_randperm(n, generator._mt)
    return [int(i) for i in generator_rng(None).permutation(n)]


_MT_WORD = 2 ** 32


def mt_randint(n: int, k: int, stream: np.random.RandomState) -> list[int]:
    """PyTorch's CPU ``randint(high=n, size=(k,))`` over its Mersenne Twister: each value
    is one 32-bit draw modulo ``n`` (for ``n`` below 2**32)."""
    return [int(i) for i in stream.randint(0, _MT_WORD, size=k, dtype=np.uint32) % n]


def mt_multinomial(w: np.ndarray, k: int, stream: np.random.RandomState) -> list[int]:
    """PyTorch's CPU ``multinomial(w, k, replacement=True)`` (k > 1) over its Mersenne
    Twister: each sample is a double from two 32-bit draws (53 bits), looked up in the
    normalised cumulative distribution."""
    cum = np.cumsum(w)
    cum /= cum[-1]
    words = stream.randint(0, _MT_WORD, size=(k, 2), dtype=np.uint32).astype(np.uint64)
    bits = ((words[:, 0] << np.uint64(32)) | words[:, 1]) & np.uint64(2 ** 53 - 1)
    return [int(i) for i in np.searchsorted(cum, bits.astype(np.float64) * 2.0 ** -53)]


class Sampler(Generic[T_co]):
    """Base class of samplers: an iterable over dataset indices (or lists of them).
    Subclasses define ``__iter__`` (and ``__len__`` where they know it)."""

    def __init__(self, data_source: Sized | None = None) -> None:
        return None


class SequentialSampler(Sampler[int]):
    """``0, 1, ..., len(data_source) - 1`` in order.

    >>> list(SequentialSampler("abc"))
    [0, 1, 2]
    """

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """Indices in random order: a permutation (repeated to cover ``num_samples``), or
    ``num_samples`` draws with replacement.

    >>> import funcgrad.torch as torch
    >>> sorted(RandomSampler(range(4), generator=torch.Generator().manual_seed(0)))
    [0, 1, 2, 3]
    """

    def __init__(self, data_source: Sized, replacement: bool = False,
                 num_samples: int | None = None, generator: Any = None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError("replacement should be a boolean value, but got "
                            f"replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        r = generator_rng(self.generator)
        if self.replacement:
            # A seeded torch.Generator gives PyTorch's draws (its randint over that stream).
            mt = self.generator._mt if self.generator is not None and n < _MT_WORD else None

            def draw(k: int) -> list[int]:
                return mt_randint(n, k, mt) if mt is not None else \
                    [int(i) for i in np.asarray(r.integers(0, n, k))]

            for _ in range(self.num_samples // 32):
                yield from draw(32)
            yield from draw(self.num_samples % 32)
        else:
            # A seeded torch.Generator gives PyTorch's orders (its randperm stream).
            perm = ((lambda: mt_randperm(n, self.generator._mt)) if self.generator is not None
                    else (lambda: [int(i) for i in r.permutation(n)]))
            for _ in range(self.num_samples // n):
                yield from perm()
            yield from perm()[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given indices, in random order.

    >>> sorted(SubsetRandomSampler([5, 7, 9]))
    [5, 7, 9]
    """

    def __init__(self, indices: Sequence[int], generator: Any = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        # PyTorch's order for a seeded torch.Generator: its randperm, as PyTorch's sampler.
        for i in randperm(len(self.indices), self.generator):
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """``num_samples`` indices drawn with probabilities proportional to ``weights``.

    >>> list(WeightedRandomSampler([0.0, 1.0, 0.0], 3))
    [1, 1, 1]
    """

    def __init__(self, weights: Sequence[float] | Tensor, num_samples: int,
                 replacement: bool = True, generator: Any = None) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) \
                or num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError("replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        w = np.asarray(weights._host() if isinstance(weights, Tensor) else weights,
                       dtype=np.float64)
        if w.ndim != 1:
            raise ValueError("weights should be a 1d sequence but given weights have shape "
                             f"{tuple(w.shape)}")
        self.weights = Tensor._from_data(w)
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        w = self.weights._data
        if (w < 0).any() or not np.isfinite(w).all() or w.sum() <= 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        if not self.replacement and self.num_samples > int((w > 0).sum()):
            raise RuntimeError("invalid multinomial distribution (with replacement=False, not "
                               "enough non-negative category to sample)")
        r = generator_rng(self.generator)
        if self.generator is not None and self.replacement and self.num_samples > 1:
            # PyTorch's multinomial over a seeded generator's stream (with one sample, or
            # without replacement, PyTorch draws exponentials instead: not reproduced).
            return iter(mt_multinomial(w, self.num_samples, self.generator._mt))
        drawn = r.choice(len(w), self.num_samples, replace=self.replacement, p=w / w.sum())
        return iter(int(i) for i in drawn)

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """Groups another sampler's indices into lists of ``batch_size`` (the last one shorter
    unless ``drop_last``).

    >>> list(BatchSampler(range(5), 3, drop_last=True))
    [[0, 1, 2]]
    """

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError("drop_last should be a boolean value, but got "
                             f"drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch: list[int] = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        if self.drop_last:
            return n // self.batch_size
        return (n + self.batch_size - 1) // self.batch_size
