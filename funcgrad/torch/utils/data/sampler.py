"""Samplers: the orders in which a ``DataLoader`` visits a map-style dataset's indices.

Random samplers draw as PyTorch's do, from the ``Generator`` they are given or, without
one, from the default generator (``torch.manual_seed``): ``RandomSampler`` through a new
generator seeded from it each time an iteration starts, ``SubsetRandomSampler`` and
``WeightedRandomSampler`` directly. The same seed gives PyTorch's orders.

>>> from funcgrad.torch.utils.data import BatchSampler, SequentialSampler
>>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
[[0, 1], [2, 3], [4]]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Any, Generic, TypeVar, cast

import numpy as np

from funcgrad.torch._mt_stream import MTStream
from funcgrad.torch._random import Generator, rng
from funcgrad.torch._tensor import Tensor

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler",
           "SubsetRandomSampler", "WeightedRandomSampler"]

T_co = TypeVar("T_co", covariant=True)


def generator_stream(generator: Any) -> MTStream:
    """The stream to draw from: ``generator``'s own, or the default generator's (what
    ``torch.manual_seed`` seeds), as PyTorch's ``generator=None`` means."""
    if generator is not None:
        if not isinstance(generator, Generator):
            raise TypeError(f"expected a torch.Generator, but got {type(generator).__name__}")
        if generator.device.type != "cpu":
            raise RuntimeError(f"Expected a 'cpu' device type for generator but found "
                               f"'{generator.device.type}'")
        return cast(MTStream, generator._rng)
    return rng()


def draw_seed(generator: Any = None) -> int:
    """``int(torch.empty((), dtype=torch.int64).random_(generator=generator).item())``: a
    64-bit word modulo 2**63 from ``generator`` (the default generator when None)."""
    return int(generator_stream(generator).torch_random((), np.int64))


def sampler_stream(generator: Any) -> MTStream:
    """``RandomSampler``'s stream: ``generator``'s, or (without one) a new generator seeded
    with a seed drawn from the default generator, as PyTorch's ``RandomSampler`` does
    each time an iteration starts."""
    if generator is not None:
        return generator_stream(generator)
    return MTStream(draw_seed(None))


def randperm(n: int, generator: Any = None) -> list[int]:
    """``torch.randperm(n, generator=generator).tolist()`` (the default generator when
    None): PyTorch's permutation for the same seed."""
    return [int(i) for i in generator_stream(generator).torch_randperm(int(n)).tolist()]


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
        # PyTorch's: without a generator, a new one seeded from the default generator.
        n = len(self.data_source)
        stream = sampler_stream(self.generator)
        if self.replacement:  # randint(high=n, size=(32,)) at a time
            for _ in range(self.num_samples // 32):
                yield from stream.torch_random((32,), np.int64, 0, n).tolist()
            yield from stream.torch_random((self.num_samples % 32,), np.int64, 0, n).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from stream.torch_randperm(n).tolist()
            yield from stream.torch_randperm(n).tolist()[: self.num_samples % n]

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
        # torch.multinomial's checks, in its order (its CPU kernel draws zero weights last
        # rather than refusing them).
        if not self.replacement and self.num_samples > w.size:
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                               "replacement")
        if (w < 0).any() or not np.isfinite(w).all():
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element "
                               "< 0")
        if w.sum() <= 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        # torch.multinomial(weights, num_samples, replacement, generator=generator).
        drawn = generator_stream(self.generator).torch_multinomial(
            w, self.num_samples, self.replacement)
        return iter(drawn.tolist())

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
