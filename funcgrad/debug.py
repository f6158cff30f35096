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

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad.conversion import asarray
from funcgrad.primitives.callbacks import debug_callback_p, flat_callback
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


class _Printer:
    """The callback of one ``debug.print`` call (equal for equal format and options)."""

    __slots__ = ("fmt", "options")

    def __init__(self, fmt: str, options: tuple[tuple[str, Any], ...]) -> None:
        self.fmt, self.options = fmt, options

    def __eq__(self, other: object) -> bool:
        return type(other) is _Printer and (self.fmt, self.options) == (other.fmt,
                                                                         other.options)

    def __hash__(self) -> int:
        return hash((self.fmt, repr(self.options)))

    def __repr__(self) -> str:
        return f"print({self.fmt!r})"

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        # The Arrays themselves, as JAX formats them: ``{}`` of an Array is its str (the
        # NumPy text), an Array inside a tuple or list shows its repr, ``Array([...])``.
        with np.printoptions(**dict(self.options)):
            text = self.fmt.format(*args, **kwargs)
        sys.stdout.write(text + "\n")


def print(fmt: str, *args: Any, ordered: bool = False, **kwargs: Any) -> None:  # noqa: A001
    """Print ``fmt.format(*args, **kwargs)`` with the concrete values, at run time.

    NumPy's print options in effect at the call (while tracing, under ``jit``) are used.

    >>> import funcgrad as jax
    >>> import funcgrad.numpy as jnp
    >>> jax.debug.print("{x} and {y:.2f}", x=jnp.arange(2), y=jnp.float32(0.5))
    [0 1] and 0.50
    >>> _ = jax.grad(lambda x: (jax.debug.print("x={}", x), x * x)[1])(3.0)
    x=3.0
    """
    del ordered
    options = tuple(sorted(np.get_printoptions().items()))
    callback(_Printer(fmt, options), *args, **kwargs)


__all__ = ["callback", "print"]
