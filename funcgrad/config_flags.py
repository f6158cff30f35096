"""More of JAX's config switches as context managers, each acting where JAX's does.

- ``no_tracing``: staging a function (``jit`` on a cache miss, ``make_jaxpr``, control
  flow) raises ``RuntimeError``; ``no_execution``: running a compiled program or an eager
  operation raises ``RuntimeError``.
- ``legacy_prng_key`` (``'allow'``/``'warn'``/``'error'``): what a raw ``uint32`` key
  given to a ``random`` function does; ``enable_custom_prng``: ``PRNGKey``/``split``/
  ``fold_in`` of raw keys give typed keys; ``default_prng_impl``: the implementation of
  new keys (``'threefry2x32'``, the one funcgrad has); ``debug_key_reuse``: a typed key
  used twice by a sampler or ``split`` raises ``KeyReuseError`` (eager code).
- ``softmax_custom_jvp``: ``nn.softmax`` with JAX's custom derivative rule;
  ``allow_f16_reductions=False``: ``lax`` sums of float16/bfloat16 raise ``ValueError``.
- ``make_user_context``: a context whose value is part of jit's cache key.
- ``remove_size_one_mesh_axis_from_type``: ``shard_map`` no longer counts values as
  varying over mesh axes of size 1 (every axis here), so an ``out_specs`` that leaves such
  an axis out needs no ``psum``.

>>> import funcgrad as jax
>>> f = jax.jit(lambda x: x + 1)
>>> with jax.no_tracing():
...     f(1.0)
Traceback (most recent call last):
...
RuntimeError: re-tracing function <lambda> for `jit`, but 'no_tracing' is set
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from funcgrad.api_extras import _config_context
from funcgrad.config import config

PRNG_IMPLS = ("threefry2x32", "threefry4x32", "rbg", "unsafe_rbg", "philox2x32",
              "philox4x32")
LEGACY_KEY_STATES = ("allow", "warn", "error")

_DEFAULTS = {"jax_legacy_prng_key": "allow", "jax_default_prng_impl": "threefry2x32",
             "jax_allow_f16_reductions": True, "jax_no_tracing": False,
             "jax_no_execution": False, "jax_enable_custom_prng": False,
             "jax_softmax_custom_jvp": False, "jax_debug_key_reuse": False,
             "jax_remove_size_one_mesh_axis_from_type": False}


def _bool(name: str) -> Callable[[Any], Any]:
    def check(value: Any) -> bool:
        return bool(_DEFAULTS[name]) if value is None else bool(value)

    return check


def _legacy(value: Any) -> str:
    if value is None:
        return "allow"
    v = getattr(value, "value", value)
    if v not in LEGACY_KEY_STATES:
        raise ValueError(f"{value!r} is not a valid LegacyPrngKeyState (one of "
                         f"{LEGACY_KEY_STATES})")
    return str(v)


def _prng_impl(value: Any) -> str:
    if value is None:
        return "threefry2x32"
    if value not in PRNG_IMPLS:
        raise ValueError(f"new enum value must be in {list(PRNG_IMPLS)}, got {value} of type "
                         f"{type(value)}.")
    if value != "threefry2x32":
        raise ValueError(f"funcgrad implements the threefry2x32 PRNG only; {value!r} is not "
                         "available (its keys and bits would differ from JAX's)")
    return str(value)


def _f16(value: Any) -> bool:
    from funcgrad import core  # noqa: PLC0415

    # reduce_sum's shape rule reads the option: its per-signature cache must forget.
    core._AVALS_SEEN.clear()
    return True if value is None else bool(value)


config._HOOKS.update({
    "jax_no_tracing": _bool("jax_no_tracing"),
    "jax_no_execution": _bool("jax_no_execution"),
    "jax_enable_custom_prng": _bool("jax_enable_custom_prng"),
    "jax_softmax_custom_jvp": _bool("jax_softmax_custom_jvp"),
    "jax_debug_key_reuse": _bool("jax_debug_key_reuse"),
    "jax_remove_size_one_mesh_axis_from_type": _bool("jax_remove_size_one_mesh_axis_from_type"),
    "jax_legacy_prng_key": _legacy,
    "jax_default_prng_impl": _prng_impl,
    "jax_allow_f16_reductions": _f16,
})
for _k, _v in _DEFAULTS.items():
    config._values.setdefault(_k, _v)

no_tracing = _config_context("jax_no_tracing")
no_execution = _config_context("jax_no_execution")
enable_custom_prng = _config_context("jax_enable_custom_prng")
softmax_custom_jvp = _config_context("jax_softmax_custom_jvp")
debug_key_reuse = _config_context("jax_debug_key_reuse")
allow_f16_reductions = _config_context("jax_allow_f16_reductions")
legacy_prng_key = _config_context("jax_legacy_prng_key")
default_prng_impl = _config_context("jax_default_prng_impl")
remove_size_one_mesh_axis_from_type = _config_context("jax_remove_size_one_mesh_axis_from_type")


class UserContext:
    """A value that ``jit`` keys its cache on: set it with ``with ctx(value):`` (or
    ``ctx.set_global(value)``), and a jitted function re-traces for a new value.

    >>> import funcgrad as jax
    >>> ctx = jax.make_user_context(default_value=0)
    >>> with ctx(1):
    ...     ctx.value
    1
    """

    def __init__(self, default_value: Any = None) -> None:
        self._index = len(config.user_contexts)
        self._global = default_value
        config.user_contexts.append(default_value)
        self._stack: list[Any] = []

    @property
    def value(self) -> Any:
        return config.user_contexts[self._index]

    def get_global(self) -> Any:
        return self._global

    def set_global(self, value: Any) -> None:
        self._global = value
        if not self._stack:
            self._set(value)

    def _set(self, value: Any) -> None:
        hash(value)  # part of a cache key: must be hashable, as in JAX
        config.user_contexts[self._index] = value
        config.changed()

    @contextlib.contextmanager
    def __call__(self, new_val: Any) -> Iterator[None]:
        old = self.value
        self._set(new_val)
        self._stack.append(new_val)
        try:
            yield
        finally:
            self._stack.pop()
            self._set(old)


def make_user_context(default_value: Any = None) -> UserContext:
    """A new :class:`UserContext` (JAX's ``jax.make_user_context``).

    >>> import funcgrad as jax
    >>> traces = []
    >>> f = jax.jit(lambda x: traces.append(1) or x * 2)
    >>> ctx = jax.make_user_context()
    >>> _ = f(1.0)
    >>> with ctx(1):
    ...     _ = f(1.0)
    >>> len(traces)
    2
    """
    return UserContext(default_value)


__all__ = ["UserContext", "allow_f16_reductions", "debug_key_reuse", "default_prng_impl",
           "enable_custom_prng", "legacy_prng_key", "make_user_context", "no_execution",
           "no_tracing", "remove_size_one_mesh_axis_from_type", "softmax_custom_jvp"]
