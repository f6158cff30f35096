"""``DataLoader``: batches from a dataset, in this process or in worker processes.

With ``num_workers > 0`` each worker is a ``multiprocessing`` process with its own
index queue; the main process hands out batches of indices round robin, keeps
``prefetch_factor`` batches per worker in flight and yields results in sampler order.
Each worker seeds funcgrad.torch's and Python's generators with ``base_seed +
worker_id`` (``get_worker_info().seed``), then calls ``worker_init_fn(worker_id)``.

>>> import funcgrad.torch as torch
>>> from funcgrad.torch.utils.data import DataLoader
>>> loader = DataLoader([{"x": 1.0, "y": "a"}, {"x": 2.0, "y": "b"}], batch_size=2)
>>> next(iter(loader))
{'x': tensor([1., 2.], dtype=torch.float64), 'y': ['a', 'b']}
"""

from __future__ import annotations

import itertools
import multiprocessing
import queue
import random
import sys
import traceback
import warnings
from collections.abc import Callable, Iterator
from typing import Any, cast

import numpy as np

from funcgrad.torch._random import manual_seed
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.utils.data._collate import default_collate, default_convert
from funcgrad.torch.utils.data.dataset import IterableDataset, TensorDataset
from funcgrad.torch.utils.data.sampler import (
    BatchSampler,
    RandomSampler,
    SequentialSampler,
    draw_seed,
)

__all__ = ["DataLoader", "get_worker_info"]

# How long the main process waits on the result queue before checking that the workers
# are still alive (when no ``timeout`` is given).
_POLL_S = 5.0


class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker process."""

    def __init__(self, id: int, num_workers: int, seed: int, dataset: Any) -> None:  # noqa: A002
        self.id, self.num_workers, self.seed, self.dataset = id, num_workers, seed, dataset

    def __repr__(self) -> str:
        return (f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed}, "
                f"dataset={self.dataset!r})")


class _Info:
    """The worker's own info (set in each worker process; ``None`` in the main one)."""

    current: WorkerInfo | None = None


_info = _Info()


def get_worker_info() -> WorkerInfo | None:
    """In a DataLoader worker: its id, the number of workers, its seed and its copy of
    the dataset; ``None`` in the main process.

    >>> get_worker_info() is None
    True
    """
    return _info.current


class _ExceptionWrapper:
    """An exception raised in a worker, re-raised in the main process with its trace."""

    def __init__(self, exc: BaseException, where: str) -> None:
        self.exc_type = type(exc)
        self.msg = f"Caught {type(exc).__name__} {where}.\nOriginal " + "".join(
            traceback.format_exception(type(exc), exc, exc.__traceback__))

    def reraise(self) -> None:
        try:
            err = self.exc_type(self.msg)
        except Exception:
            err = RuntimeError(self.msg)
        raise err


class _IterableEnd:
    """A worker's iterable dataset is exhausted."""

    def __init__(self, worker_id: int) -> None:
        self.worker_id = worker_id


class _Fetcher:
    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Callable[[Any], Any],
                 drop_last: bool) -> None:
        self.dataset, self.auto, self.collate, self.drop_last = (
            dataset, auto_collation, collate_fn, drop_last)
        self.it: Iterator[Any] | None = None
        self.ended = False

    def reset(self) -> None:
        self.it, self.ended = None, False

    def fetch(self, index: Any) -> Any:
        if isinstance(self.dataset, IterableDataset):
            if self.ended:
                raise StopIteration
            if self.it is None:
                self.it = iter(cast(Any, self.dataset))
            if self.auto:
                batch = list(itertools.islice(self.it, index))
                if not batch or (self.drop_last and len(batch) < index):
                    self.ended = True
                    raise StopIteration
                return self.collate(batch)
            try:
                return self.collate(next(self.it))
            except StopIteration:
                self.ended = True
                raise
        if self.auto:
            if self.collate is default_collate and type(self.dataset) is TensorDataset:
                gathered = _gathered(self.dataset, index)
                if gathered is not None:
                    return gathered
            getitems = getattr(self.dataset, "__getitems__", None)
            data = getitems(index) if getitems else [self.dataset[i] for i in index]
            return self.collate(data)
        return self.collate(self.dataset[index])


def _gathered(dataset: TensorDataset, index: Any) -> list[Tensor] | None:
    """What default_collate makes of ``[dataset[i] for i in index]`` (one stacked tensor
    per tensor of the dataset), as one gather per tensor instead of a tensor per sample and
    a stack. None where the per-sample path is needed: a tensor that records a graph or
    lives on a device, or an index it would refuse (it then raises PyTorch's error)."""
    rows = np.asarray(index)
    if rows.ndim != 1 or rows.dtype.kind not in "iu" or not len(rows) or int(rows.min()) < 0:
        return None
    top = int(rows.max())
    out = []
    for t in dataset.tensors:
        d = t._data
        if type(d) is not np.ndarray or t.requires_grad or d.ndim == 0 or top >= d.shape[0]:
            return None
        out.append(Tensor._from_data(np.take(d, rows, axis=0)))
    return out


def _seed_process(seed: int) -> None:
    manual_seed(seed)
    random.seed(seed)


def _worker_loop(dataset: Any, index_queue: Any, result_queue: Any, fetcher: _Fetcher,
                 seed: int, init_fn: Callable[[int], Any] | None, worker_id: int,
                 num_workers: int) -> None:
    _seed_process(seed)
    _info.current = WorkerInfo(worker_id, num_workers, seed, dataset)
    init_error = None
    if init_fn is not None:
        try:
            init_fn(worker_id)
        except Exception as e:
            init_error = _ExceptionWrapper(e, f"in DataLoader worker process {worker_id}")
    while True:
        task = index_queue.get()
        if task is None:
            break
        epoch, send_idx, index = task
        if send_idx < 0:
            fetcher.reset()
            continue
        data: Any
        if init_error is not None:
            data = init_error
        else:
            try:
                data = fetcher.fetch(index)
            except StopIteration:
                data = _IterableEnd(worker_id)
            except Exception as e:
                data = _ExceptionWrapper(e, f"in DataLoader worker process {worker_id}")
        result_queue.put((epoch, send_idx, data))
    result_queue.cancel_join_thread()


def _draw_base_seed(generator: Any) -> int:
    """The workers' base seed, drawn when an iteration starts as PyTorch draws it (after
    the sampler's iterator is made, before its first index): ``random_()`` of an int64
    scalar from the loader's generator, or from the default generator without one."""
    return draw_seed(generator)


class _SingleProcessIter:
    def __init__(self, loader: DataLoader) -> None:
        self.loader = loader
        self.fetcher = _Fetcher(loader.dataset, loader._auto_collation, loader.collate_fn,
                                loader.drop_last)
        self.indices = iter(loader._index_sampler)
        _draw_base_seed(loader.generator)

    def __iter__(self) -> _SingleProcessIter:
        return self

    def __next__(self) -> Any:
        index = next(self.indices)
        return self.loader._pinned(self.fetcher.fetch(index))

    def __len__(self) -> int:
        return len(self.loader)


class _MultiProcessIter:
    def __init__(self, loader: DataLoader) -> None:
        self.loader = loader
        self.num_workers = loader.num_workers
        self.prefetch = loader.prefetch_factor or 2
        ctx = loader.multiprocessing_context
        if ctx is None:
            ctx = multiprocessing.get_context()
        elif isinstance(ctx, str):
            ctx = multiprocessing.get_context(ctx)
        self.result_queue = ctx.Queue()
        self.index_queues = []
        self.workers = []
        self.epoch = 0
        base_seed = _draw_base_seed(loader.generator)
        for w in range(self.num_workers):
            iq = ctx.Queue()
            iq.cancel_join_thread()
            fetcher = _Fetcher(loader.dataset, loader._auto_collation, loader.collate_fn,
                               loader.drop_last)
            p = ctx.Process(target=_worker_loop, daemon=True, args=(
                loader.dataset, iq, self.result_queue, fetcher, base_seed + w,
                loader.worker_init_fn, w, self.num_workers))
            p.start()
            self.index_queues.append(iq)
            self.workers.append(p)
        self.shut = False
        self._reset(first=True)

    def _reset(self, first: bool = False) -> None:
        self.epoch += 1
        self.indices = iter(self.loader._index_sampler)
        self.send_idx = 0
        self.rcvd_idx = 0
        self.tasks: dict[int, tuple[Any, ...]] = {}
        self.active = [True] * self.num_workers
        self.cycle = itertools.cycle(range(self.num_workers))
        if not first and isinstance(self.loader.dataset, IterableDataset):
            for iq in self.index_queues:
                iq.put((self.epoch, -1, None))
        for _ in range(self.prefetch * self.num_workers):
            self._put_index()

    def _put_index(self) -> None:
        if not any(self.active):
            return
        try:
            index = next(self.indices)
        except StopIteration:
            return
        for _ in range(self.num_workers):
            w = next(self.cycle)
            if self.active[w]:
                break
        else:
            return
        self.index_queues[w].put((self.epoch, self.send_idx, index))
        self.tasks[self.send_idx] = (w,)
        self.send_idx += 1

    def __iter__(self) -> _MultiProcessIter:
        return self

    def __len__(self) -> int:
        return len(self.loader)

    def __next__(self) -> Any:
        while True:
            while self.rcvd_idx < self.send_idx:
                info = self.tasks[self.rcvd_idx]
                if len(info) == 2 or self.active[info[0]]:
                    break
                del self.tasks[self.rcvd_idx]
                self.rcvd_idx += 1
            else:
                if not self.loader.persistent_workers:
                    self._shutdown()
                raise StopIteration
            info = self.tasks[self.rcvd_idx]
            if len(info) == 2:
                del self.tasks[self.rcvd_idx]
                self.rcvd_idx += 1
                return self._process(info[1])
            epoch, idx, data = self._get()
            if epoch != self.epoch:
                continue
            if isinstance(data, _IterableEnd):
                # Its pending tasks (this one and later ones) are skipped in order.
                self.active[data.worker_id] = False
                self._put_index()
                continue
            if idx != self.rcvd_idx:
                self.tasks[idx] += (data,)
                continue
            del self.tasks[idx]
            self.rcvd_idx += 1
            return self._process(data)

    def _process(self, data: Any) -> Any:
        self._put_index()
        if isinstance(data, _ExceptionWrapper):
            data.reraise()
        return self.loader._pinned(data)

    def _get(self) -> tuple[int, int, Any]:
        timeout = self.loader.timeout
        while True:
            try:
                got: tuple[int, int, Any] = self.result_queue.get(
                    timeout=timeout if timeout > 0 else _POLL_S)
                return got
            except queue.Empty:
                if timeout > 0:
                    raise RuntimeError(
                        f"DataLoader timed out after {timeout} seconds") from None
                dead = [str(p.pid) for p in self.workers if not p.is_alive()]
                if dead:
                    self._shutdown()
                    raise RuntimeError(f"DataLoader worker (pid(s) {', '.join(dead)}) exited "
                                       "unexpectedly") from None

    def _shutdown(self) -> None:
        if self.shut:
            return
        self.shut = True
        for iq in self.index_queues:
            try:
                iq.put(None)
            except (OSError, ValueError):
                pass
        for p in self.workers:
            p.join(timeout=5.0)
            if p.is_alive():
                p.terminate()
        for q in [*self.index_queues, self.result_queue]:
            q.cancel_join_thread()
            q.close()

    def __del__(self) -> None:
        if sys is not None and not self.__dict__.get("shut", True):
            self._shutdown()


class DataLoader:
    """Iterate over a dataset in batches, as ``torch.utils.data.DataLoader``.

    >>> import funcgrad.torch as torch
    >>> from funcgrad.torch.utils.data import DataLoader, TensorDataset
    >>> ds = TensorDataset(torch.arange(6).reshape(3, 2))
    >>> loader = DataLoader(ds, batch_size=2, drop_last=True)
    >>> len(loader), list(loader)
    (1, [[tensor([[0, 1],
            [2, 3]])]])
    """

    _fixed = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
              "persistent_workers")

    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Any = None, batch_sampler: Any = None, num_workers: int = 0,
                 collate_fn: Callable[[Any], Any] | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable[[int], Any] | None = None,
                 multiprocessing_context: Any = None, generator: Any = None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        self.__initialized = False
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 "
                             "to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing.let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        if prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        # Batches are copied to pinned memory in this process (as PyTorch's pin thread does)
        # when a GPU is there to copy them to.
        self._pin = False
        if pin_memory:
            from funcgrad.torch import cuda  # noqa: PLC0415

            self._pin = cuda.is_available()
            if not self._pin:
                warnings.warn("'pin_memory' argument is set as true but no accelerator is "
                              "found, then device pinned memory won't be used.", stacklevel=2)
        if isinstance(dataset, IterableDataset):
            if shuffle not in {False, None}:
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            if isinstance(dataset, IterableDataset):
                sampler = _InfiniteSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._iterator: _MultiProcessIter | None = None
        self.__initialized = True

    def __setattr__(self, name: str, value: Any) -> None:
        if self.__dict__.get("_DataLoader__initialized") and name in self._fixed:
            raise ValueError(f"{name} attribute should not be set after "
                             f"{type(self).__name__} is initialized")
        super().__setattr__(name, value)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        if isinstance(self.dataset, IterableDataset):
            # The workers fetch from their own streams; an index is a batch size.
            return _IterableIndices(self.batch_size if self._auto_collation else None)
        return self.batch_sampler if self._auto_collation else self.sampler

    def _pinned(self, batch: Any) -> Any:
        if not self._pin:
            return batch
        from funcgrad.torch._pinned import pin_batch  # noqa: PLC0415

        return pin_batch(batch)

    def __iter__(self) -> Any:
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        if self.persistent_workers:
            if self._iterator is None:
                self._iterator = _MultiProcessIter(self)
            else:
                self._iterator._reset()
            return self._iterator
        return _MultiProcessIter(self)

    def __len__(self) -> int:
        if isinstance(self.dataset, IterableDataset):
            length = len(self.dataset)  # type: ignore[arg-type]
            if self.batch_size is not None:
                if self.drop_last:
                    return length // self.batch_size
                return (length + self.batch_size - 1) // self.batch_size
            return length
        return len(self._index_sampler)

    @property
    def multiprocessing_context(self) -> Any:
        return self.__dict__.get("_mp_context")

    @multiprocessing_context.setter
    def multiprocessing_context(self, ctx: Any) -> None:
        if ctx is not None and self.num_workers == 0:
            raise ValueError("multiprocessing_context can only be used with multi-process "
                             f"loading (num_workers > 0), but got num_workers={self.num_workers}")
        if isinstance(ctx, str):
            ctx = multiprocessing.get_context(ctx)
        self.__dict__["_mp_context"] = ctx

    def __del__(self) -> None:
        it = self.__dict__.get("_iterator")
        if it is not None:
            it._shutdown()


class _InfiniteSampler:
    """The sampler of an IterableDataset (its indices are never used)."""

    def __iter__(self) -> Iterator[None]:
        return itertools.repeat(None)


class _IterableIndices:
    """What the fetcher of an IterableDataset receives: the batch size, forever."""

    def __init__(self, batch_size: int | None) -> None:
        self.batch_size = batch_size

    def __iter__(self) -> Iterator[int | None]:
        return itertools.repeat(self.batch_size)
