"""The profiler's results as PyTorch shows them: ``FunctionEvent`` (one timed range),
``FunctionEventAvg`` (the ranges of one name added up) and ``EventList`` with its
``table``, ``key_averages`` and ``export_chrome_trace``.

>>> import funcgrad.torch as torch
>>> x = torch.ones(3, requires_grad=True)
>>> with torch.profiler.profile() as prof:
...     y = x.exp().sum()
>>> [e.key for e in prof.key_averages()][:2]
['aten::exp', 'aten::sum']
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from funcgrad.torch._profiling import Range

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "Interval"]


def _format_time(time_us: float) -> str:
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_share(time_us: float, total_us: float) -> str:
    return "NaN" if total_us == 0 else f"{time_us * 100.0 / total_us:.2f}%"


def _format_memory(nbytes: int) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


class Interval:
    """A range's start and end in microseconds from the profiler's start."""

    def __init__(self, start: float, end: float) -> None:
        self.start = start
        self.end = end

    def elapsed_us(self) -> float:
        return self.end - self.start


class _Times:
    """The ``*_str`` forms of an event's times."""

    cpu_time_total: float
    self_cpu_time_total: float
    count: int

    @property
    def cpu_time(self) -> float:
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def cpu_time_str(self) -> str:
        return _format_time(self.cpu_time)

    @property
    def cpu_time_total_str(self) -> str:
        return _format_time(self.cpu_time_total)

    @property
    def self_cpu_time_total_str(self) -> str:
        return _format_time(self.self_cpu_time_total)

    # No device timeline is recorded (docs/sharp_bits.md): device times are zero.
    device_time_total = self_device_time_total = 0.0
    device_memory_usage = self_device_memory_usage = 0
    flops = 0
    node_id = -1
    is_async = False
    is_legacy = False
    is_remote = False
    overload_name = ""
    use_device: str | None = None

    @property
    def device_time(self) -> float:
        return 0.0

    @property
    def cuda_time(self) -> float:
        return 0.0


class FunctionEvent(_Times):
    """One timed range: an operation (``aten::mm``), a backward node or a
    ``record_function`` block."""

    def __init__(self, id: int, r: Range, origin_ns: int) -> None:  # noqa: A002
        self.id = id
        self.name = r.name
        self.thread = r.thread
        self.time_range = Interval((r.start_ns - origin_ns) / 1e3, (r.end_ns - origin_ns) / 1e3)
        self.input_shapes = r.shapes
        self.is_user_annotation = r.kind == "user"
        self.cpu_children: list[FunctionEvent] = []
        self.cpu_parent: FunctionEvent | None = None
        self.count = 1
        self.stack: list[str] = []
        self.device_type = "CPU"
        self.cpu_memory_usage = r.nbytes
        self.self_cpu_memory_usage = r.nbytes

    @property
    def key(self) -> str:
        return self.name

    @property
    def cpu_time_total(self) -> float:  # type: ignore[override]
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self) -> float:  # type: ignore[override]
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    def __repr__(self) -> str:
        return (f"<FunctionEvent id={self.id} name={self.name} cpu_time={self.cpu_time_str} "
                f"start_us={self.time_range.start:.0f} end_us={self.time_range.end:.0f} "
                f"cpu_children={[c.id for c in self.cpu_children]} "
                f"input_shapes={self.input_shapes}>")


class FunctionEventAvg(_Times):
    """The events of one name (and input shapes, if grouped so) added up."""

    def __init__(self) -> None:
        self.key: str | None = None
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.input_shapes: list[list[int]] | None = None
        self.is_user_annotation = False
        self.cpu_children: Any = None
        self.cpu_parent: Any = None
        self.stack: list[str] = []
        self.device_type = "CPU"

    def add(self, other: FunctionEvent | FunctionEventAvg) -> FunctionEventAvg:
        if self.key is None:
            self.key = other.key
            self.input_shapes = other.input_shapes
            self.is_user_annotation = other.is_user_annotation
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        return self

    def __iadd__(self, other: FunctionEvent | FunctionEventAvg) -> FunctionEventAvg:
        return self.add(other)

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str}"
                f" cpu_time={self.cpu_time_str} input_shapes={self.input_shapes}>")


def events_of(ranges: Iterable[Range], origin_ns: int) -> list[FunctionEvent]:
    """The recorded ranges as events, children and parents linked."""
    made: dict[int, FunctionEvent] = {}
    out = []
    for i, r in enumerate(ranges):
        e = FunctionEvent(i + 1, r, origin_ns)
        made[id(r)] = e
        if r.parent is not None and id(r.parent) in made:
            parent = made[id(r.parent)]
            e.cpu_parent = parent
            parent.cpu_children.append(e)
            parent.self_cpu_memory_usage -= e.cpu_memory_usage
        out.append(e)
    return out


class EventList(list[Any]):
    """A list of events with PyTorch's summaries."""

    def __init__(self, events: Iterable[Any] = (), use_device: str | None = None,
                 profile_memory: bool = False, with_flops: bool = False) -> None:
        super().__init__(events)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._with_flops = with_flops

    @property
    def self_cpu_time_total(self) -> float:
        """The self CPU time of all events (microseconds)."""
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shapes: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        """The events added up by name (and input shapes), in the order names first ran."""
        stats: dict[tuple[str, ...], FunctionEventAvg] = {}
        for e in self:
            name = "ProfilerStep*" if e.key.startswith("ProfilerStep#") else e.key
            key: tuple[str, ...] = (name, str(e.is_user_annotation))
            if group_by_input_shapes:
                key += (str(e.input_shapes),)
            avg = stats.setdefault(key, FunctionEventAvg())
            avg.add(e)
            avg.key = name
        out = EventList(stats.values(), self._use_device, self._profile_memory,
                        self._with_flops)
        if not group_by_input_shapes:
            for avg in out:
                avg.input_shapes = None
        return out

    def total_average(self) -> FunctionEventAvg:
        """All events added up in one ``FunctionEventAvg`` (key "Total")."""
        total = FunctionEventAvg()
        for e in self:
            total.add(e)
        total.key = "Total"
        return total

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_src_column_width: int = 75, max_name_column_width: int = 55,
              max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False, time_unit: str | None = None) -> str:
        """PyTorch's table of the events (``sort_by``: an attribute such as
        ``"cpu_time_total"`` or ``"self_cpu_time_total"``, largest first)."""
        return _build_table(self, sort_by, header, row_limit, max_name_column_width,
                            max_shapes_column_width, self._profile_memory,
                            top_level_events_only, time_unit)

    def export_chrome_trace(self, path: str) -> None:
        """Write the events in the Chrome trace format (chrome://tracing, Perfetto)."""
        trace = [{"name": e.name, "ph": "X", "ts": e.time_range.start,
                  "dur": e.cpu_time_total, "tid": e.thread, "pid": "CPU functions",
                  "cat": "user_annotation" if e.is_user_annotation else "cpu_op",
                  "args": {"Input Dims": e.input_shapes}} for e in self]
        with open(path, "w") as f:
            json.dump({"traceEvents": trace, "displayTimeUnit": "ms"}, f)

    def __str__(self) -> str:
        return self.table()


def _build_table(events: EventList, sort_by: str | None, header: str | None, row_limit: int,
                 max_name_width: int | None, max_shapes_width: int | None,
                 profile_memory: bool, top_level_only: bool, time_unit: str | None) -> str:
    if len(events) == 0:
        return ""
    rows = list(events)
    if sort_by is not None:
        attr = sort_by.replace("cuda", "device").replace("xpu", "device")
        rows.sort(key=lambda e: getattr(e, attr), reverse=True)
    has_shapes = any(e.input_shapes for e in rows)
    name_width = max(len(e.key) for e in rows) + 4
    if max_name_width is not None:
        name_width = min(name_width, max_name_width)
    shapes_width = max(len(str(e.input_shapes)) for e in rows) + 4
    if max_shapes_width is not None:
        shapes_width = min(shapes_width, max_shapes_width)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
    headers.append("# of Calls")
    widths = [name_width] + [12] * (len(headers) - 1)
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_width)
    row_format = "".join("{: >" + str(w) + "}  " for w in widths)
    sep = "".join("-" * w + "  " for w in widths)
    line_length = sum(w + 2 for w in widths) - 2

    def unit(time_us: float) -> str:
        scale = {"s": 1e6, "ms": 1e3, "us": 1.0}.get(time_unit or "")
        return _format_time(time_us) if scale is None else f"{time_us / scale:.3f}{time_unit}"

    total = sum(e.self_cpu_time_total for e in rows)
    out = []
    if header is not None:
        out += ["=" * line_length, header]
    if top_level_only:
        out += ["=" * line_length, "This report only display top-level ops statistics"]
    out += [sep, row_format.format(*headers), sep]
    shown = 0
    for e in rows:
        if shown == row_limit:
            break
        if top_level_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_width is not None and len(name) >= max_name_width - 3:
            name = name[:max_name_width - 3] + "..."
        values: list[Any] = [name, _format_share(e.self_cpu_time_total, total),
                             unit(e.self_cpu_time_total),
                             _format_share(e.cpu_time_total, total), unit(e.cpu_time_total),
                             unit(e.cpu_time)]
        if profile_memory:
            values += [_format_memory(e.cpu_memory_usage),
                       _format_memory(e.self_cpu_memory_usage)]
        values.append(e.count)
        if has_shapes:
            values.append(str(e.input_shapes)[:shapes_width])
        out.append(row_format.format(*values))
    out += [sep, f"Self CPU time total: {unit(total)}"]
    return "\n".join(out) + "\n"
