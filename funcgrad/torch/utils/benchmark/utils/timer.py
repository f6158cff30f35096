"""``Timer``: PyTorch's benchmark timer over ``timeit``, with warm-up, replicates, a fixed
thread count and device synchronisation.

>>> from funcgrad.torch.utils.benchmark import Timer
>>> m = Timer("x + 1", setup="x = torch.ones(8)").timeit(100)
>>> m.number_per_run
100
"""

from __future__ import annotations

import enum
import sys
import textwrap
import timeit
from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad.torch import cuda
from funcgrad.torch.utils.benchmark.utils import common

__all__ = ["Language", "Timer", "timer"]


def timer() -> float:
    """The current time in seconds, after the device (when there is one) has finished
    its queued work, so that a timed block includes it.

    >>> timer() <= timer()
    True
    """
    if cuda.is_available():
        cuda.synchronize()
    return timeit.default_timer()


class Language(enum.Enum):
    """The language of a timed statement."""

    PYTHON = 0
    CPP = 1


def _clean(code: str) -> str:
    code = textwrap.dedent(code)
    return (code[1:] if code.startswith("\n") else code).rstrip()


Callback = Callable[[int, float], Any]


class Timer:
    """Time a statement: ``timeit`` for a fixed count, ``blocked_autorange`` and
    ``adaptive_autorange`` for replicates whose blocks are long enough that the timer's
    own cost does not show.

    ``globals`` gives the statement its variables; ``torch`` is funcgrad's PyTorch face
    unless given. ``label``, ``sub_label``, ``description`` and ``env`` name the result
    for printing and for ``Compare``; ``num_threads`` is the thread count it runs with.

    >>> import funcgrad.torch as torch
    >>> t = Timer("a @ b", globals={"a": torch.ones(4, 4), "b": torch.ones(4, 4)})
    >>> t.timeit(10).task_spec.stmt
    'a @ b'
    """

    def __init__(self, stmt: str = "pass", setup: str = "pass", global_setup: str = "",
                 timer: Callable[[], float] = timer, globals: dict[str, Any] | None = None,  # noqa: A002
                 label: str | None = None, sub_label: str | None = None,
                 description: str | None = None, env: str | None = None,
                 num_threads: int = 1, language: Language | str = Language.PYTHON) -> None:
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language in (Language.CPP, "cpp", "c++"):
            raise ValueError(
                "Timer(language='cpp') times C++ written against libtorch, PyTorch's C++ "
                "library, which funcgrad does not have. Time the Python statement instead "
                "(language='python').")
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Invalid language `{language}`.")
        if global_setup:
            raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely "
                             "this code can simply be moved to `setup`.")
        self._globals = dict(globals or {})
        # This module lives inside the PyTorch face's package, so the face is imported
        # whenever this runs; importing it by name here would be an import cycle.
        self._globals.setdefault("torch", sys.modules["funcgrad.torch"])
        self._language = Language.PYTHON
        stmt, setup = _clean(stmt), _clean(setup)
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = common.TaskSpec(
            stmt=stmt, setup=setup, global_setup=global_setup, label=label,
            sub_label=sub_label, description=description, env=env, num_threads=num_threads)

    def _timeit(self, number: int) -> float:
        # A zero reading would divide by zero in the block-size estimate.
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number: int = 1000000) -> common.Measurement:
        """Run the statement ``number`` times (after a warm-up of a hundredth of that) and
        return one measurement of the whole block.

        >>> Timer("pass").timeit(1000).number_per_run
        1000
        """
        with common.set_torch_threads(self._task_spec.num_threads):
            self._timeit(max(number // 100, 2))
            return common.Measurement(number, [self._timeit(number)], self._task_spec)

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        """Not offered, as in PyTorch: ``blocked_autorange`` takes replicates."""
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback: Callback | None = None) -> None:
        """Not offered, as in PyTorch: ``blocked_autorange`` picks the block size."""
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _block_size(self, min_run_time: float) -> int:
        """The smallest power of ten of runs whose block outweighs the timer's overhead
        ten thousand times over (and lasts a thousandth of ``min_run_time``)."""
        with common.set_torch_threads(self._task_spec.num_threads):
            overhead = float(np.median(np.asarray([self._timeit(0) for _ in range(5)],
                                                  dtype=np.float32)))
            number = 1
            while True:
                took = self._timeit(number)
                if overhead / took <= 1e-4 and took >= min_run_time / 1000:
                    break
                if took > min_run_time or number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def _measure(self, number: int, can_stop: Callable[[list[float]], bool],
                 min_run_time: float, max_run_time: float | None,
                 callback: Callback | None) -> list[float]:
        total, times, stop = 0.0, [], False
        with common.set_torch_threads(self._task_spec.num_threads):
            while total < min_run_time or not stop:
                took = self._timeit(number)
                times.append(took)
                total += took
                if callback is not None:
                    callback(number, took)
                stop = can_stop(times)
                if max_run_time and total > max_run_time:
                    break
        return times

    def blocked_autorange(self, callback: Callback | None = None,
                          min_run_time: float = 0.2) -> common.Measurement:
        """Time blocks of runs until ``min_run_time`` seconds have passed; the block size
        makes the timer's overhead negligible.

        >>> m = Timer("pass").blocked_autorange(min_run_time=0.01)
        >>> len(m.times) >= 1
        True
        """
        number = self._block_size(min_run_time)
        times = self._measure(number, lambda _: True, min_run_time, None, callback)
        return common.Measurement(number, times, self._task_spec)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01,
                           max_run_time: float = 10.0,
                           callback: Callback | None = None) -> common.Measurement:
        """Like ``blocked_autorange``, but go on until the interquartile range is below
        ``threshold`` times the median (or ``max_run_time`` has passed).

        >>> m = Timer("pass").adaptive_autorange(max_run_time=0.05)
        >>> m.number_per_run >= 1
        True
        """
        number = self._block_size(0.05)

        def confident(times: list[float]) -> bool:
            return len(times) > 3 and common.Measurement(
                number, times, self._task_spec).meets_confidence(threshold)

        times = self._measure(number, confident, min_run_time, max_run_time, callback)
        return common.Measurement(number, times, self._task_spec)

    def collect_callgrind(self, number: int = 100, *, repeats: int | None = None,
                          collect_baseline: bool = True, retain_out_file: bool = False) -> Any:
        """Instruction counts need PyTorch's Valgrind bindings, which funcgrad lacks."""
        raise OSError(
            "Timer.collect_callgrind counts instructions through PyTorch's compiled "
            "Valgrind bindings, which funcgrad does not have. Use blocked_autorange or "
            "adaptive_autorange for wall times, or run the script under "
            "`valgrind --tool=callgrind python ...` yourself.")
