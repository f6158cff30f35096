"""``torch.profiler``: ``profile`` with PyTorch's step ``schedule`` and ``on_trace_ready``
callbacks, ``record_function``, ``tensorboard_trace_handler``.

What is timed is the CPU side of each Tensor operation, backward node and
``record_function`` block (docs/sharp_bits.md: no device timeline is recorded).

>>> import funcgrad.torch as torch
>>> from funcgrad.torch.profiler import ProfilerActivity, profile
>>> with profile(activities=[ProfilerActivity.CPU]) as prof:
...     (torch.ones(4, requires_grad=True) * 2).sum().backward()
>>> "aten::mul" in prof.key_averages().table(sort_by="cpu_time_total")
True
"""

from __future__ import annotations

import enum
import gzip
import os
import socket
import time
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from funcgrad.torch.autograd.profiler import profile as _recording
from funcgrad.torch.autograd.profiler import record_function

__all__ = ["ProfilerAction", "ProfilerActivity", "profile", "record_function", "schedule",
           "supported_activities", "tensorboard_trace_handler"]


class ProfilerActivity(enum.Enum):
    """What a profile records: CPU operations (recorded here) or device kernels."""

    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    """What the profiler does at a step of its schedule."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


def supported_activities() -> set[ProfilerActivity]:
    """The activities that can be recorded here (CPU operations)."""
    return {ProfilerActivity.CPU}


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:
    """PyTorch's step schedule: skip ``skip_first`` steps, then cycles of ``wait`` steps
    doing nothing, ``warmup`` steps, ``active`` recorded steps (``repeat`` cycles; 0: no
    end); the last active step of a cycle hands the trace to ``on_trace_ready``.

    >>> s = schedule(wait=1, warmup=1, active=2)
    >>> [s(i).name for i in range(4)]
    ['NONE', 'WARMUP', 'RECORD', 'RECORD_AND_SAVE']
    """
    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod_step < num_steps - 1 else \
            ProfilerAction.RECORD_AND_SAVE

    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup="
            f"{warmup} (need >= 0), active={active} (need > 0), repeat={repeat} (need >= 0), "
            f"skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=2)
    return schedule_fn


def _record_always(_: int) -> ProfilerAction:
    return ProfilerAction.RECORD


_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)


class profile(_recording):  # noqa: N801 - PyTorch's name
    """Profile the block; with ``schedule``, call ``prof.step()`` once per training step
    and each finished cycle is handed to ``on_trace_ready(prof)``.

    >>> import funcgrad.torch as torch
    >>> x, traces = torch.ones(2, requires_grad=True), []
    >>> with profile(schedule=schedule(wait=0, warmup=1, active=1),
    ...              on_trace_ready=lambda p: traces.append(len(p.events()))) as p:
    ...     for _ in range(4):
    ...         _ = x * 2
    ...         p.step()
    >>> traces  # (each cycle: its ProfilerStep#N range and aten::mul)
    [2, 2]
    """

    def __init__(self, *, activities: Iterable[ProfilerActivity] | None = None,
                 schedule: Callable[[int], ProfilerAction] | None = None,
                 on_trace_ready: Callable[..., Any] | None = None,
                 record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False, experimental_config: Any = None,
                 execution_trace_observer: Any = None, acc_events: bool = False,
                 use_cuda: bool | None = None, custom_trace_id_callback: Any = None,
                 post_processing_timeout_s: float | None = None) -> None:
        acts = set(activities) if activities is not None else supported_activities()
        if use_cuda:
            acts.add(ProfilerActivity.CUDA)
        super().__init__(record_shapes=record_shapes, profile_memory=profile_memory,
                         with_flops=with_flops, with_stack=with_stack,
                         use_device="cuda" if ProfilerActivity.CUDA in acts else None)
        self.activities = acts
        self.schedule = schedule if schedule is not None else _record_always
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = self.schedule(0)
        self._step_range: record_function | None = None

    def start(self) -> None:
        """Begin profiling (as entering the ``with`` block)."""
        self._transit(ProfilerAction.NONE, self.current_action)
        self._enter_step()

    def stop(self) -> None:
        """End profiling (as leaving the ``with`` block)."""
        self._exit_step()
        self._transit(self.current_action, None)

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def step(self) -> None:
        """Mark the end of a training step: the schedule decides what the next one does."""
        self._exit_step()
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(prev, self.current_action)
        self._enter_step()

    def _enter_step(self) -> None:
        if self.record_steps and self.current_action in _RECORDING:
            self._step_range = record_function(f"ProfilerStep#{self.step_num}")
            self._step_range.__enter__()

    def _exit_step(self) -> None:
        if self._step_range is not None:
            self._step_range.__exit__(None, None, None)
            self._step_range = None

    def _transit(self, prev: ProfilerAction, now: ProfilerAction | None) -> None:
        was, will = prev in _RECORDING, now in _RECORDING
        # A cycle ends after its RECORD_AND_SAVE step, or when profiling stops mid-cycle.
        if was and (prev is ProfilerAction.RECORD_AND_SAVE or not will):
            self._stop()
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)
            was = False
        if will and not was:
            self._start()

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Write each event's name and ``metric`` (microseconds) one per line."""
        with open(path, "w") as f:
            for e in self.events():
                f.write(f"{e.name} {int(getattr(e, metric))}\n")


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False, use_python_export: bool = False
                              ) -> Callable[[Any], None]:
    """An ``on_trace_ready`` that writes each trace into ``dir_name`` as
    ``{worker}.{ms}.pt.trace.json`` (``.gz`` with ``use_gzip``), TensorBoard's layout."""
    def handler_fn(prof: Any) -> None:
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker}.{time.time_ns() // 1_000_000}.pt.trace.json"
        path = os.path.join(dir_name, name)
        prof.export_chrome_trace(path)
        if use_gzip:
            with open(path, "rb") as src, gzip.open(path + ".gz", "wb") as dst:
                dst.write(src.read())
            os.remove(path)

    return handler_fn

