"""``jax.debug``: print and call back with concrete values, also inside transformations.

Both functions bind the effectful ``debug_callback`` primitive: eagerly they run right
away; under ``jit`` they run on every call of the compiled program (not while tracing),
in program order; under ``vmap`` once per element of the batch, as JAX does; under
``grad``/``jvp`` on the primal values.

>>> import funcgrad as jax
>>> import funcgrad.numpy as jnp
>>> @jax.jit
... def f(x):
...     jax.debug.print("x = {}", x)
...     return x * 2
>>> _ = f(jnp.arange(3.0))
x = [0. 1. 2.]
>>> _ = f(jnp.ones(2))
x = [1. 1.]
"""

from __future__ import annotations

import logging
import string
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad.conversion import asarray
from funcgrad.primitives.callbacks import debug_callback_p, flat_callback
from funcgrad.source_info import user_frame_info
from funcgrad.tree_util import tree_map


def _as_arrays(args: Any) -> Any:
    """Array leaves (Python numbers become weakly typed Arrays, as JAX's arguments)."""
    return tree_map(asarray, args)


def callback(callback: Callable[..., Any], *args: Any, ordered: bool = False,
             partitioned: bool = False, **kwargs: Any) -> None:
    """Call ``callback(*args, **kwargs)`` with concrete Arrays at run time; returns None.

    Its return value is ignored. Under ``vmap`` it is called once per batch element.
    ``ordered`` and ``partitioned`` are accepted for JAX compatibility (callbacks always run
    in program order here).

    >>> import funcgrad as jax
    >>> import funcgrad.numpy as jnp
    >>> seen = []
    >>> jax.vmap(lambda x: jax.debug.callback(lambda v: seen.append(float(v)), x))(
    ...     jnp.arange(3.0))
    >>> seen
    [0.0, 1.0, 2.0]
    """
    del ordered, partitioned
    fn = callback
    args, kwargs = _as_arrays((args, kwargs))
    flat, leaves = flat_callback(fn, args, kwargs)
    debug_callback_p.bind(*leaves, callback=flat)


class _FormatCheck(string.Formatter):
    """Formats nothing; refuses arguments the format string leaves unused (JAX's check,
    which catches an f-string passed as the format)."""

    def format_field(self, value: Any, format_spec: str) -> str:
        return ""

    def check_unused_args(self, used_args: Any, args: Any, kwargs: Any) -> None:
        unused = [a for i, a in enumerate(args) if i not in used_args]
        unused_kw = [k for k in kwargs if k not in used_args]
        if unused:
            raise ValueError(f"Unused positional arguments to `jax.debug.print`: {unused}")
        if unused_kw:
            raise ValueError(
                f"Unused keyword arguments to `jax.debug.print`: {unused_kw}. You may be "
                "passing an f-string (i.e, `f\"{x}\"`) into `jax.debug.print` and instead "
                "should pass in a regular string.")


_CHECK = _FormatCheck()
_LOGGER = logging.getLogger(__name__)


class _Printer:
    """The callback of one ``debug.print`` (or ``debug.log``) call: equal for equal format,
    options and log record, so a traced program keeps one."""

    __slots__ = ("fmt", "options", "placeholders", "where")

    def __init__(self, fmt: str, options: tuple[tuple[str, Any], ...], placeholders: bool,
                 where: tuple[str, int] | None) -> None:
        self.fmt, self.options = fmt, options
        self.placeholders, self.where = placeholders, where

    def _key(self) -> tuple[Any, ...]:
        return (self.fmt, self.options, self.placeholders, self.where)

    def __eq__(self, other: object) -> bool:
        return type(other) is _Printer and self._key() == other._key()

    def __hash__(self) -> int:
        return hash((self.fmt, repr(self.options), self.placeholders, self.where))

    def __repr__(self) -> str:
        return f"print({self.fmt!r})"

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        # The Arrays themselves, as JAX formats them: ``{}`` of an Array is its str (the
        # NumPy text), an Array inside a tuple or list shows its repr, ``Array([...])``.
        if self.placeholders:
            with np.printoptions(**dict(self.options)):
                text = self.fmt.format(*args, **kwargs)
        else:  # (JAX's: the format, then the arguments' texts)
            text = " ".join((self.fmt, *(str(a) for a in args)))
        if self.where is None:
            sys.stdout.write(text + "\n")
            return
        record = _LOGGER.makeRecord(_LOGGER.name, logging.INFO, self.where[0], self.where[1],
                                    text, (), None)
        _LOGGER.handle(record)


def _printer(fmt: str, args: tuple[Any, ...], kwargs: dict[str, Any],
             skip_format_check: bool, log: bool) -> _Printer:
    if not skip_format_check:
        _CHECK.format(fmt, *args, **kwargs)
    # As JAX decides it: whether the format's first piece has a replacement field.
    placeholders = bool(fmt) and next(iter(string.Formatter().parse(fmt)))[1] is not None
    where = None
    if log:
        frame = user_frame_info()
        where = (frame[0], frame[1]) if frame is not None else ("(unknown file)", 0)
    return _Printer(fmt, tuple(sorted(np.get_printoptions().items())), placeholders, where)


def print(fmt: str | None = None, *args: Any, ordered: bool = False,  # noqa: A001
          partitioned: bool = False, skip_format_check: bool = False, **kwargs: Any) -> Any:
    """Print ``fmt.format(*args, **kwargs)`` with the concrete values, at run time.

    NumPy's print options in effect at the call (while tracing, under ``jit``) are used.
    Arguments the format leaves unused are refused (a ValueError, as JAX's: an f-string
    passed as the format); a format whose first piece is no replacement field prints the
    arguments after it. ``print(ordered=True)`` without a format returns the printer.

    >>> import funcgrad as jax
    >>> import funcgrad.numpy as jnp
    >>> jax.debug.print("{x} and {y:.2f}", x=jnp.arange(2), y=jnp.float32(0.5))
    [0 1] and 0.50
    >>> _ = jax.grad(lambda x: (jax.debug.print("x={}", x), x * x)[1])(3.0)
    x=3.0
    """
    return _print_or_log(fmt, args, kwargs, ordered, partitioned, skip_format_check, False,
                         "debug_print")


def log(fmt: str | None = None, *args: Any, ordered: bool = False,
        partitioned: bool = False, skip_format_check: bool = False, **kwargs: Any) -> Any:
    """:func:`print`, through the ``funcgrad.debug`` logger at INFO level, the record naming
    the calling line (JAX's ``jax.debug.log``).

    >>> import logging, funcgrad as jax
    >>> logging.basicConfig(level=logging.INFO, format="%(message)s", force=True)
    >>> jax.debug.log("step {}", 3)
    """
    return _print_or_log(fmt, args, kwargs, ordered, partitioned, skip_format_check, True,
                         "debug_print")


def _print_or_log(fmt: str | None, args: tuple[Any, ...], kwargs: dict[str, Any],
                  ordered: bool, partitioned: bool, skip_format_check: bool, log: bool,
                  name: str) -> Any:
    def run(fmt: str, *c_args: Any, **c_kwargs: Any) -> None:
        printer = _printer(fmt, c_args, c_kwargs, skip_format_check, log)
        callback(printer, *c_args, ordered=ordered, partitioned=partitioned, **c_kwargs)

    if fmt is not None:
        run(fmt, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(f"{name} received unexpected arguments in the two-call form: "
                        f"args={args} kwargs={kwargs}")
    return run


__all__ = ["callback", "log", "print"]
