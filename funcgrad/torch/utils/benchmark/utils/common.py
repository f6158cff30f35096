"""What a benchmark measured (``Measurement``), what it ran (``TaskSpec``) and the number
formatting that ``Measurement`` and ``Compare`` share.

>>> from funcgrad.torch.utils.benchmark import Measurement, TaskSpec
>>> m = Measurement(10, [1e-5, 2e-5, 1.5e-5], TaskSpec("x + 1", "pass"))
>>> round(m.median, 9)
1.5e-06
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import math
import textwrap
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from funcgrad.torch._tensor_math import get_num_threads, set_num_threads

__all__ = ["Measurement", "TaskSpec", "ordered_unique", "select_unit", "set_torch_threads",
           "trim_sigfig", "unit_to_english"]

_MAX_SIGNIFICANT_FIGURES = 4
# Below 25 ns a confidence interval says more about the timer than about the statement.
_MIN_CONFIDENCE_INTERVAL = 25e-9
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


@dataclasses.dataclass(frozen=True, repr=False)
class TaskSpec:
    """What a ``Timer`` runs and how its results are labelled (everything but globals).

    >>> TaskSpec("x + 1", "pass", label="add", sub_label="float").title
    'add: float'
    """

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """The label (or the one-line statement), with the sub label after a colon."""
        suffix = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + suffix
        if "\n" not in self.stmt:
            return self.stmt + suffix
        sub = f" ({self.sub_label})" if self.sub_label else ""
        return f"stmt:{sub}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self) -> str:
        """The setup as a ``Measurement`` prints it ("" for none)."""
        if self.setup in ("pass", ""):
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self) -> str:
        """Title, description and setup, the head of a ``Measurement``'s printed form."""
        parts = [p for p in (self.title, self.description or "", self.setup_str()) if p]
        # A block of several lines is set apart from what follows by an empty line.
        return "\n".join(p + "\n" if "\n" in p else p for p in parts)


def log10_f32(x: float) -> float:
    """``log10`` of ``x`` in float32, correctly rounded (PyTorch computes these in float32;
    NumPy's float32 ``log10`` can be an ulp off, which moves ``0.001`` below -3)."""
    return float(np.float32(math.log10(abs(float(np.float32(x))))))


_TASK_FIELDS = frozenset(f.name for f in dataclasses.fields(TaskSpec))


def _quantiles(sorted_times: tuple[float, ...]) -> tuple[float, float, float, float]:
    arr = np.asarray(sorted_times, dtype=np.float64)
    p25, median, p75 = (float(v) for v in np.quantile(arr, [0.25, 0.5, 0.75]))
    return median, float(arr.mean()), p25, p75


@dataclasses.dataclass(repr=False)
class Measurement:
    """Times of ``number_per_run`` runs of a statement, one entry per block of runs.

    >>> m = Measurement(100, [2e-4, 3e-4], TaskSpec("f(x)", "pass"))
    >>> [round(t, 9) for t in m.times]
    [2e-06, 3e-06]
    """

    number_per_run: int
    raw_times: list[float]
    task_spec: TaskSpec
    metadata: dict[Any, Any] | None = None

    def __post_init__(self) -> None:
        self._sorted_times: tuple[float, ...] = ()
        self._warnings: tuple[str, ...] = ()
        self._median = self._mean = self._p25 = self._p75 = -1.0

    def __getattr__(self, name: str) -> Any:
        # The task's fields (stmt, label, env, num_threads, ...) read through.
        if name in _TASK_FIELDS:
            return getattr(self.task_spec, name)
        return super().__getattribute__(name)

    @property
    def times(self) -> list[float]:
        """Seconds per single run, one entry per block."""
        return [t / self.number_per_run for t in self.raw_times]

    def _lazy_init(self) -> None:
        if not self.raw_times or self._sorted_times:
            return
        self._sorted_times = tuple(sorted(self.times))
        self._median, self._mean, self._p25, self._p75 = _quantiles(self._sorted_times)
        if not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD):
            self._warn("This suggests significant environmental influence.")
        elif not self.meets_confidence(_IQR_WARN_THRESHOLD):
            self._warn("This could indicate system fluctuation.")

    def _warn(self, why: str) -> None:
        spread = self.iqr / self.median * 100
        self._warnings += (f"  WARNING: Interquartile range is {spread:.1f}% of the median "
                           f"measurement.\n           {why}",)

    @property
    def median(self) -> float:
        """The median time of one run, in seconds."""
        self._lazy_init()
        return self._median

    @property
    def mean(self) -> float:
        """The mean time of one run, in seconds."""
        self._lazy_init()
        return self._mean

    @property
    def iqr(self) -> float:
        """The interquartile range of one run's time, in seconds."""
        self._lazy_init()
        return self._p75 - self._p25

    @property
    def significant_figures(self) -> int:
        """How many digits of the median the spread of the middle half supports (1 to 4)."""
        self._lazy_init()
        n = len(self._sorted_times)
        middle = self._sorted_times[n // 4:math.ceil(np.float32(3 * n / 4))]
        std = float(np.std(np.asarray(middle, dtype=np.float32)))
        sqrt_n = float(np.sqrt(np.float32(len(middle))))
        half_width = max(1.645 * std / sqrt_n, _MIN_CONFIDENCE_INTERVAL)
        digits = int(math.floor(log10_f32(self._median / half_width)))
        return min(max(digits, 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self) -> bool:
        """Whether the spread is large enough to print a warning."""
        self._lazy_init()
        return bool(self._warnings)

    def meets_confidence(self, threshold: float = _IQR_WARN_THRESHOLD) -> bool:
        """Whether the interquartile range is below ``threshold`` times the median."""
        return self.iqr / self.median < threshold

    @property
    def title(self) -> str:
        """The task's title."""
        return self.task_spec.title

    @property
    def env(self) -> str | None:
        """The environment tag the measurement was made under."""
        return self.task_spec.env

    @property
    def as_row_name(self) -> str:
        """The row this measurement takes in a ``Compare`` table."""
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self) -> str:
        self._lazy_init()
        n = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        lines = [object.__repr__(self), self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} "
                         f"({self._p25 / scale:.2f} to {self._p75 / scale:.2f})")
        threads = f"{self.num_threads} thread{'s' if self.num_threads > 1 else ''}"
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {threads}")
        lines.extend(self._warnings)
        return "\n".join(lines).strip()

    @staticmethod
    def merge(measurements: Iterable[Measurement]) -> list[Measurement]:
        """Pool replicates of the same task into one measurement per task (one run per
        entry; metadata is dropped, since it may differ between replicates).

        >>> spec = TaskSpec("f()", "pass")
        >>> [len(m.times) for m in Measurement.merge(
        ...     [Measurement(2, [1.0], spec), Measurement(4, [1.0, 2.0], spec)])]
        [3]
        """
        groups: dict[TaskSpec, list[float]] = collections.defaultdict(list)
        for m in measurements:
            groups[m.task_spec].extend(m.times)
        return [Measurement(1, times, spec) for spec, times in groups.items()]


def select_unit(t: float) -> tuple[str, float]:
    """The unit (``"ns"``, ``"us"``, ``"ms"`` or ``"s"``) that suits ``t`` seconds, and its
    size in seconds.

    >>> select_unit(0.0042)
    ('ms', 0.001)
    """
    # In float32, as PyTorch computes it, so the unit changes at the same values.
    band = int(log10_f32(t) // 3)
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(band, "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]


def unit_to_english(u: str) -> str:
    """The English name of a time unit.

    >>> unit_to_english("us")
    'microsecond'
    """
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x: float, n: int) -> float:
    """``x`` rounded to ``n`` significant figures (in float32, as PyTorch rounds).

    >>> trim_sigfig(3.14159, 2)
    3.1000001430511475
    """
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    magnitude = int(math.ceil(log10_f32(x)))
    scale = 10 ** (magnitude - n)
    return float(np.round(np.float32(x / scale)) * np.float32(scale))


def ordered_unique(elements: Iterable[Any]) -> list[Any]:
    """The distinct elements in the order they first appear.

    >>> ordered_unique([3, 1, 3, 2, 1])
    [3, 1, 2]
    """
    return list(dict.fromkeys(elements))


@contextlib.contextmanager
def set_torch_threads(n: int) -> Iterator[None]:
    """Run a block with ``n`` intra-op threads, then restore the previous number.

    >>> with set_torch_threads(1):
    ...     pass
    """
    prior = get_num_threads()
    try:
        set_num_threads(n)
        yield
    finally:
        set_num_threads(prior)
