"""``torch.futures``: a result that is set once and read (or chained on) later.

funcgrad runs ``torch.jit.fork`` at once, as PyTorch's eager mode does, so the futures it
hands out are already complete; a user's own ``Future`` is completed by ``set_result``.

>>> import funcgrad.torch as torch
>>> fut = torch.futures.Future()
>>> doubled = fut.then(lambda f: f.value() * 2)
>>> fut.set_result(21)
>>> doubled.wait()
42
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

__all__ = ["Future", "collect_all", "wait_all"]

T = TypeVar("T")
S = TypeVar("S")


class Future(Generic[T]):
    """A value that arrives once: ``set_result``/``set_exception``, then ``wait``/``value``.

    >>> f = Future(); f.set_result(3); (f.done(), f.wait())
    (True, 3)
    """

    def __init__(self, *, devices: Sequence[Any] | None = None) -> None:
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._result: Any = None
        self._error: BaseException | None = None
        self._callbacks: list[Callable[[Future[T]], None]] = []

    def done(self) -> bool:
        """Whether the result (or an exception) has been set."""
        return self._done.is_set()

    def wait(self) -> T:
        """Block until the result is set; return it (or raise the exception set)."""
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._result

    def value(self) -> T:
        """The result of a completed future (raises its exception if one was set)."""
        if not self.done():
            raise RuntimeError("value() of a Future that is not completed: call wait() to "
                               "block until its result is set")
        return self.wait()

    def _complete(self, result: Any, error: BaseException | None) -> None:
        with self._lock:
            if self._done.is_set():
                raise RuntimeError("Attempting to mark a completed Future as complete again. "
                                   "Note that a Future can only be marked completed once.")
            self._result, self._error = result, error
            self._done.set()
            callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb(self)

    def set_result(self, result: T) -> None:
        """Complete the future with ``result`` and run the callbacks waiting on it."""
        self._complete(result, None)

    def set_exception(self, result: BaseException) -> None:
        """Complete the future with an exception that ``wait`` and ``value`` raise."""
        self._complete(None, result)

    def add_done_callback(self, callback: Callable[[Future[T]], None]) -> None:
        """Run ``callback(self)`` once the future completes (now, if it has)."""
        with self._lock:
            if not self._done.is_set():
                self._callbacks.append(callback)
                return
        callback(self)

    def then(self, callback: Callable[[Future[T]], S]) -> Future[S]:
        """A future of ``callback(self)``, run once this one completes."""
        out: Future[S] = Future()

        def run(fut: Future[T]) -> None:
            try:
                result = callback(fut)
            except Exception as e:  # noqa: BLE001 - handed to the chained future, as PyTorch
                out.set_exception(RuntimeError(
                    f"Got the following error when running the callback: "
                    f"{type(e).__name__}: {e}"))
            else:
                out.set_result(result)

        self.add_done_callback(run)
        return out

    def __repr__(self) -> str:
        return f"<torch.jit.Future object at {id(self):#x}>"


def collect_all(futures: Sequence[Future[Any]]) -> Future[list[Future[Any]]]:
    """A future completed, with the list of ``futures``, once all of them are.

    >>> f = Future(); f.set_result(1); collect_all([f]).wait()[0].wait()
    1
    """
    out: Future[list[Future[Any]]] = Future()
    futures = list(futures)
    remaining = [len(futures)]
    lock = threading.Lock()

    def one_done(_: Future[Any]) -> None:
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            out.set_result(futures)

    if not futures:
        out.set_result([])
    for f in futures:
        f.add_done_callback(one_done)
    return out


def wait_all(futures: Sequence[Future[Any]]) -> list[Any]:
    """The results of ``futures``, waiting for each in turn.

    >>> f = Future(); f.set_result("a"); wait_all([f])
    ['a']
    """
    return [f.wait() for f in futures]
