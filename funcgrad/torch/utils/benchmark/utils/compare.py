"""``Compare``: many measurements as one table per label, PyTorch's layout.

Rows are statements (or sub labels), grouped by thread count and environment; columns are
descriptions; cells are medians in one time unit per table.

>>> from funcgrad.torch.utils.benchmark import Compare, Measurement, TaskSpec
>>> spec = TaskSpec("x + 1", "pass", label="add", description="n=4")
>>> print(Compare([Measurement(10, [1.5e-5], spec)]))
[------ add ------]
             |  n=4
1 threads: --------
      x + 1  |  1.5
<BLANKLINE>
Times are in microseconds (us).
<BLANKLINE>
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import Any

from funcgrad.torch.utils.benchmark.utils import common

__all__ = ["Colorize", "Compare"]

_BEST = "\033[92m"
_GOOD = "\033[34m"
_BAD = "\033[2m\033[91m"
_VERY_BAD = "\033[31m"
_BOLD = "\033[1m"
_END = "\033[0m"


class Colorize(enum.Enum):
    """How ``Compare`` picks the best cell that others are coloured against."""

    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


Cell = common.Measurement | None


def _leading_digits(value: float) -> int:
    # float32, as PyTorch computes it, so column widths agree at powers of ten.
    return int(math.ceil(common.log10_f32(value)))


class _Column:
    """One description's cells: a fixed number format wide enough for all of them."""

    def __init__(self, groups: list[list[Cell]], scale: float, trim: bool,
                 highlight: bool) -> None:
        self.groups = groups
        cells = [m for g in groups for m in g if m is not None]
        self.trim = trim
        self.highlight = highlight and any(m.has_warnings for m in cells)
        digits = [(_leading_digits(m.median / scale), m) for m in cells]
        whole = max(d for d, _ in digits)
        decimals = min(max(m.significant_figures - d, 0) for d, m in digits) if trim else 1
        self.width = whole + decimals + (1 if decimals else 0)
        self.decimals = decimals

    def text(self, value: float | None, sigfigs: int, spread: float | None) -> str:
        if value is None:
            return " " * len(self.text(1.0, sigfigs, None))
        if self.trim:
            value = common.trim_sigfig(value, sigfigs)
        note = f" (! {spread * 100:.0f}%)" if self.highlight and spread is not None else ""
        return f"{value:>{self.width}.{self.decimals}f}{note:>{7 if self.highlight else 0}}"


def _paint(text: str, value: float, best: float) -> str:
    if value <= best * 1.01 or value <= best + 100e-9:
        return _BEST + _BOLD + text + _END * 2
    if value <= best * 1.1:
        return _GOOD + _BOLD + text + _END * 2
    if value >= best * 5:
        return _VERY_BAD + _BOLD + text + _END * 2
    if value >= best * 2:
        return _BAD + text + _END * 2
    return text


@dataclass
class _Row:
    cells: list[Cell]
    group: int
    threads: int | None  # set on the first row of a thread count: it prints the rule
    env: str  # "" unless the environment changes here and there are several
    columns: list[_Column] = field(default_factory=list)

    def texts(self, scale: float) -> list[str]:
        first = next(m for m in self.cells if m is not None)
        out = ["  " + self.env + first.as_row_name]
        for m, col in zip(self.cells, self.columns, strict=False):
            if m is None:
                out.append(col.text(None, 1, None))
            else:
                spread = m.iqr / m.median if m.has_warnings else None
                out.append(col.text(m.median / scale, m.significant_figures, spread))
        return out

    def best(self, how: Colorize) -> list[float | None]:
        if how == Colorize.ROWWISE:
            low = min(m.median for m in self.cells if m is not None)
            return [low] * len(self.columns)
        if how == Colorize.COLUMNWISE:
            return [min((m.median for m in c.groups[self.group] if m is not None), default=None)
                    for c in self.columns]
        return [None] * len(self.columns)


def _table(results: list[common.Measurement], how: Colorize, trim: bool,
           highlight: bool) -> str:
    unit, scale = common.select_unit(min(m.median for m in results))

    def row_key(m: common.Measurement) -> tuple[int, Any, str]:
        return m.num_threads, m.env, m.as_row_name

    row_keys = common.ordered_unique(row_key(m) for m in results)
    # Stable: within one thread count and environment, statements keep their order.
    row_keys.sort(key=lambda k: (k[0], "" if k[1] is None else k[1]))
    col_keys = common.ordered_unique(m.description for m in results)
    grid: list[list[Cell]] = [[None] * len(col_keys) for _ in row_keys]
    for m in results:
        grid[row_keys.index(row_key(m))][col_keys.index(m.description)] = m

    envs = {str(m.env) for m in results}
    env_width = max(len(e) for e in envs) + 4 if len(envs) > 1 else 4
    rows: list[_Row] = []
    by_group: list[list[list[Cell]]] = []
    prior_threads, prior_env = -1, ""
    for (threads, env, _), cells in zip(row_keys, grid, strict=True):
        new_group = threads != prior_threads
        if new_group:
            prior_threads, prior_env = threads, ""
            by_group.append([])
        shown = f"({env})" if len(envs) > 1 and env != prior_env else ""
        rows.append(_Row(cells, len(by_group) - 1, threads if new_group else None,
                         shown.ljust(env_width)))
        by_group[-1].append(cells)
        prior_env = env
    columns = [_Column([[r[j] for r in g] for g in by_group], scale, trim, highlight)
               for j in range(len(col_keys))]
    for r in rows:
        r.columns = columns

    # A measurement without a description heads an empty column (PyTorch raises).
    table = [["", *("" if k is None else str(k) for k in col_keys)]]
    table += [r.texts(scale) for r in rows]
    ncols = max(len(t) for t in table)
    for t in table:
        t.extend([""] * (ncols - len(t)))
    widths = [max(len(t[j]) for t in table) for j in range(ncols)]
    header = "  |  ".join(c.center(w) for c, w in zip(table[0], widths, strict=True))
    lines = [header]
    for texts, r in zip(table[1:], rows, strict=True):
        if r.threads is not None:
            lines.append(f"{r.threads} threads: ".ljust(len(header), "-"))
        row_text = [texts[0].ljust(widths[0])]
        for text, w, cell, best in zip(texts[1:], widths[1:], r.cells, r.best(how),
                                       strict=False):
            text = text.center(w)
            if how != Colorize.NONE and cell is not None and best is not None:
                text = _paint(text, cell.median, best)
            row_text.append(text)
        lines.append("  |  ".join(row_text))
    label = results[0].label
    title = f"[{(' ' + (label or '') + ' ').center(len(header) - 2, '-')}]"
    warned = highlight and any(m.has_warnings for m in results)
    note = ("(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n"
            if warned else "")
    body = "\n".join(lines)
    return f"{title}\n{body}\n\nTimes are in {common.unit_to_english(unit)}s ({unit}).\n{note}"


class Compare:
    """A printable table of measurements: one per label, a row per statement or sub
    label, a column per description.

    >>> from funcgrad.torch.utils.benchmark import Timer
    >>> m = Timer("x * 2", setup="x = torch.ones(4)", label="mul", description="4").timeit(10)
    >>> "mul" in str(Compare([m]))
    True
    """

    def __init__(self, results: list[common.Measurement]) -> None:
        self._results: list[common.Measurement] = []
        self.extend_results(results)
        self._trim = False
        self._colorize = Colorize.NONE
        self._highlight = False

    def extend_results(self, results: list[common.Measurement]) -> None:
        """Add more measurements (each must be a ``Measurement``)."""
        for r in results:
            if not isinstance(r, common.Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        """Print only the digits each measurement's spread supports."""
        self._trim = True

    def colorize(self, rowwise: bool = False) -> None:
        """Colour cells against the best of their column (or of their row)."""
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self) -> None:
        """Mark cells whose spread is large with ``(! XX%)``."""
        self._highlight = True

    def _render(self) -> list[str]:
        by_label: dict[str | None, list[common.Measurement]] = {}
        for m in common.Measurement.merge(self._results):
            by_label.setdefault(m.label, []).append(m)
        return [_table(group, self._colorize, self._trim, self._highlight)
                for group in by_label.values()]

    def __str__(self) -> str:
        return "\n".join(self._render())

    def print(self) -> None:
        """Print the tables."""
        print(str(self))
