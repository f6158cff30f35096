"""``torch.autograd.profiler``: the profiler's recording (``profile``, ``record_function``).

Every Tensor operation, backward node and ``record_function`` block run inside a profile
is a timed range; ``key_averages().table()`` prints PyTorch's table of them.

>>> import funcgrad.torch as torch
>>> x = torch.ones(2, requires_grad=True)
>>> with torch.autograd.profiler.profile() as prof:
...     with torch.autograd.profiler.record_function("block"):
...         y = x * 3
>>> [e.key for e in prof.key_averages()]
['block', 'aten::mul']
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from funcgrad.torch import _profiling
from funcgrad.torch.autograd.profiler_util import EventList, FunctionEvent, events_of

__all__ = ["EventList", "FunctionEvent", "profile", "record_function"]

F = TypeVar("F", bound=Callable[..., Any])


class record_function:  # noqa: N801 - PyTorch's name
    """A named range in the profile around a block (``with``) or every call of a function
    (as a decorator); nothing is recorded when no profiler runs.

    >>> import funcgrad.torch as torch
    >>> @record_function("double")
    ... def double(x):
    ...     return x * 2
    >>> double(torch.ones(1))
    tensor([2.])
    """

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name
        self.args = args
        self._range: _profiling.Range | None = None

    def __enter__(self) -> record_function:
        self._range = _profiling.begin(self.name, "user")
        return self

    def __exit__(self, *exc: object) -> None:
        _profiling.end(self._range)
        self._range = None

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)

        return wrapped  # type: ignore[return-value]


class profile:  # noqa: N801 - PyTorch's name
    """Record the CPU time of every operation run inside the ``with`` block
    (``record_shapes``: with its operands' shapes; ``profile_memory``: with the bytes of
    the tensors it returned).

    >>> import funcgrad.torch as torch
    >>> x = torch.ones(2, 3, requires_grad=True)
    >>> with profile(record_shapes=True) as prof:
    ...     x.sum()
    tensor(6., grad_fn=<SumBackward0>)
    >>> prof.key_averages(group_by_input_shape=True)[0].input_shapes
    [[2, 3]]
    """

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False,
                 use_device: str | None = None, record_shapes: bool = False,
                 with_flops: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_modules: bool = False,
                 use_kineto: bool = False, use_cpu: bool = True,
                 experimental_config: Any = None, acc_events: bool = False,
                 custom_trace_id_callback: Any = None, **kwargs: Any) -> None:
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_flops = with_flops
        self.use_device = "cuda" if use_cuda else use_device
        self._recorder: _profiling.Recorder | None = None
        self._outer: _profiling.Recorder | None = None
        self._events: EventList | None = None

    def _start(self) -> None:
        self._recorder = _profiling.Recorder(self.record_shapes, self.profile_memory)
        self._outer = _profiling.state.recorder
        _profiling.state.recorder = self._recorder
        self._events = None
        _profiling.install()

    def _stop(self) -> None:
        if self._recorder is not None and _profiling.state.recorder is self._recorder:
            _profiling.state.recorder = self._outer
            _profiling.release()

    def __enter__(self) -> profile:
        if self.enabled:
            self._start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop()

    @property
    def function_events(self) -> EventList:
        """Every recorded range, in the order they started."""
        if self._events is None:
            rec = self._recorder
            if rec is None:
                raise RuntimeError("Profiler didn't finish running")
            self._events = EventList(events_of(rec.ranges, rec.origin_ns), self.use_device,
                                     self.profile_memory, self.with_flops)
        return self._events

    def events(self) -> EventList:
        return self.function_events

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        """The events added up by name (and input shapes)."""
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n,
                                                 group_by_overload_name)

    def table(self, sort_by: str | None = None, row_limit: int = 100, **kwargs: Any) -> str:
        return self.function_events.table(sort_by=sort_by, row_limit=row_limit, **kwargs)

    def total_average(self) -> Any:
        return self.function_events.total_average()

    @property
    def self_cpu_time_total(self) -> float:
        return self.function_events.self_cpu_time_total

    def export_chrome_trace(self, path: str) -> None:
        self.function_events.export_chrome_trace(path)

    def __str__(self) -> str:
        return self.table()
