"""JAX's ``jax.monitoring``: named events, durations and scalars sent to registered listeners.

funcgrad records JAX's compile events where it compiles: ``jit`` reports
``/jax/core/compile/jaxpr_trace_duration`` when it stages a function and
``/jax/core/compile/backend_compile_duration`` when the backend compiles the program.

>>> from funcgrad import monitoring
>>> seen = []
>>> monitoring.register_event_listener(lambda event, **kw: seen.append(event))
>>> monitoring.record_event("/my/event")
>>> seen
['/my/event']
>>> monitoring.clear_event_listeners()
"""

from __future__ import annotations

from collections.abc import Callable

_event: list[Callable[..., None]] = []
_duration: list[Callable[..., None]] = []
_time_span: list[Callable[..., None]] = []
_scalar: list[Callable[..., None]] = []

TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"
COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"


def record_event(event: str, **kwargs: str | int) -> None:
    """Tell every event listener that ``event`` happened (``kwargs`` are its metadata)."""
    for cb in list(_event):
        cb(event, **kwargs)


def record_event_duration_secs(event: str, duration: float, **kwargs: str | int) -> None:
    """Tell every duration listener that ``event`` took ``duration`` seconds."""
    for cb in list(_duration):
        cb(event, duration, **kwargs)


def record_event_time_span(event: str, start_time: float, end_time: float,
                           **kwargs: str | int) -> None:
    """Tell every time-span listener that ``event`` ran from ``start_time`` to ``end_time``."""
    for cb in list(_time_span):
        cb(event, start_time, end_time, **kwargs)


def record_scalar(event: str, value: float | int, **kwargs: str | int) -> None:
    """Tell every scalar listener the value ``value`` of ``event``."""
    for cb in list(_scalar):
        cb(event, value, **kwargs)


def register_event_listener(callback: Callable[..., None]) -> None:
    """Call ``callback(event, **kwargs)`` on every recorded event."""
    _event.append(callback)


def register_event_duration_secs_listener(callback: Callable[..., None]) -> None:
    """Call ``callback(event, duration_secs, **kwargs)`` on every recorded duration.

    >>> import funcgrad as jax
    >>> from funcgrad import monitoring
    >>> got = []
    >>> monitoring.register_event_duration_secs_listener(lambda e, d, **k: got.append(e))
    >>> _ = jax.jit(lambda x: x * 3.0)(1.0)
    >>> monitoring.TRACE_EVENT in got
    True
    >>> monitoring.clear_event_listeners()
    """
    _duration.append(callback)


def register_event_time_span_listener(callback: Callable[..., None]) -> None:
    """Call ``callback(event, start_time, end_time, **kwargs)`` on every recorded span."""
    _time_span.append(callback)


def register_scalar_listener(callback: Callable[..., None]) -> None:
    """Call ``callback(event, value, **kwargs)`` on every recorded scalar."""
    _scalar.append(callback)


def _unregister(where: list[Callable[..., None]], callback: Callable[..., None],
                what: str) -> None:
    if callback not in where:
        raise AssertionError(f"callback {callback!r} is not a registered {what} listener")
    where.remove(callback)


def unregister_event_listener(callback: Callable[..., None]) -> None:
    """Stop calling ``callback`` on events (it must be registered)."""
    _unregister(_event, callback, "event")


def unregister_event_duration_listener(callback: Callable[..., None]) -> None:
    """Stop calling ``callback`` on durations (it must be registered)."""
    _unregister(_duration, callback, "event duration")


def unregister_event_time_span_listener(callback: Callable[..., None]) -> None:
    """Stop calling ``callback`` on time spans (it must be registered)."""
    _unregister(_time_span, callback, "event time span")


def unregister_scalar_listener(callback: Callable[..., None]) -> None:
    """Stop calling ``callback`` on scalars (it must be registered)."""
    _unregister(_scalar, callback, "scalar")


def clear_event_listeners() -> None:
    """Forget every listener of every kind."""
    for where in (_event, _duration, _time_span, _scalar):
        where.clear()


def listening() -> bool:
    """Whether any duration listener is registered (compile timing is skipped otherwise)."""
    return bool(_duration)


__all__ = ["clear_event_listeners", "record_event", "record_event_duration_secs",
           "record_event_time_span", "record_scalar", "register_event_duration_secs_listener",
           "register_event_listener", "register_event_time_span_listener",
           "register_scalar_listener", "unregister_event_duration_listener",
           "unregister_event_listener", "unregister_event_time_span_listener",
           "unregister_scalar_listener"]
