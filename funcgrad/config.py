"""Global switches, spelled as JAX spells them: ``funcgrad.config.update(name, value)``.

The one that changes numbers is ``jax_enable_x64`` (also accepted as ``"enable_x64"``):
off by default, so the JAX face computes in 32 bits (float32, int32) as JAX does and
64-bit inputs are truncated at its boundaries; on, 64-bit dtypes are kept and Python
numbers default to float64/int64. The environment variables ``JAX_ENABLE_X64`` and
``FUNCGRAD_ENABLE_X64`` set the initial value. The PyTorch face ignores the switch.

>>> import funcgrad
>>> funcgrad.config.jax_enable_x64
False
>>> with funcgrad.experimental.enable_x64():
...     funcgrad.config.jax_enable_x64
True
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_TRUE = {"1", "true", "yes", "on"}


def _env_flag(*names: str) -> bool:
    return any(os.environ.get(n, "").strip().lower() in _TRUE for n in names)


# What eager evaluation checks every result for (jax_debug_nans / jax_debug_infs): kept in
# a list the engine reads without a function call.
CHECK_VALUES: list[str] = []
# jax_check_tracer_leaks: non-empty while on (funcgrad/leak_check.py runs as a trace ends).
CHECK_LEAKS: list[bool] = []


class _Local(threading.local):
    def __init__(self) -> None:
        # Context-manager overrides (enable_x64(), disable_jit()) are per thread, as in JAX.
        self.x64: list[bool] = []
        self.no_jit: list[bool] = []
        # Non-empty inside PyTorch-face operations, which divide truly: PyTorch's numbers,
        # not XLA's reciprocal products (funcgrad.primitives.elementwise.broadcast_divisor).
        self.true_division: list[bool] = []


class Config:
    """The settings object behind ``funcgrad.config``.

    >>> from funcgrad.config import config
    >>> config.update("jax_enable_x64", False)
    >>> config.x64_enabled
    False
    """

    _ALIASES = {"enable_x64": "jax_enable_x64", "x64_enabled": "jax_enable_x64"}
    # Options JAX has that change nothing here; accepted so ported programs run.
    _ACCEPTED = {"jax_platform_name", "jax_platforms", "jax_default_matmul_precision",
                 "jax_numpy_rank_promotion", "jax_disable_jit", "jax_debug_nans",
                 "jax_debug_infs", "jax_traceback_filtering", "jax_log_compiles",
                 "jax_default_device", "jax_threefry_partitionable",
                 "jax_numpy_dtype_promotion", "jax_compilation_cache_dir",
                 # funcgrad/config_flags.py: validated there (_HOOKS), read where they act
                 "jax_no_tracing", "jax_no_execution", "jax_legacy_prng_key",
                 "jax_default_prng_impl", "jax_enable_custom_prng", "jax_softmax_custom_jvp",
                 "jax_debug_key_reuse", "jax_allow_f16_reductions",
                 "jax_remove_size_one_mesh_axis_from_type", "jax_check_tracer_leaks"}
    # Options that change what a staged program is (JAX's include_in_jit_key): jit keys its
    # cache on them (trace_context) and calls on_change hooks when they change.
    _JIT_KEYED = ("jax_softmax_custom_jvp", "jax_allow_f16_reductions")
    # name -> function that validates (and normalises) a new value.
    _HOOKS: dict[str, Any] = {}

    # funcgrad's own options (None until set): CPU fusion with numba, on by default when
    # numba is installed (FUNCGRAD_CPU_FUSION=0 turns it off), and the smallest cluster
    # (elements) worth a compiled kernel. They apply to programs compiled afterwards.
    _OWN = {"funcgrad_cpu_fusion", "funcgrad_cpu_fusion_min_size",
            "funcgrad_check_rules"}  # funcgrad/check_rules.py: rules checked as they run
    # funcgrad_check_rules as a plain attribute: the transforms test it per primitive.
    check_rules = False

    def __init__(self) -> None:
        self._x64 = _env_flag("JAX_ENABLE_X64", "FUNCGRAD_ENABLE_X64")
        self._local = _Local()
        self._values: dict[str, Any] = {}
        # The current values of make_user_context contexts, and who to tell on a change.
        self.user_contexts: list[Any] = []
        self.on_change: list[Any] = []
        # State of a face that a staged program bakes in (the PyTorch face's autocast
        # regions): functions giving a hashable key, part of trace_context. That state may be
        # per thread, so while ``open_regions`` is nonzero jit's argument-type fast path (not
        # keyed on it) is bypassed.
        self.trace_key_hooks: list[Any] = []
        self.open_regions = 0
        # Bumped on every change: caches keyed on dtype rules include it.
        self.generation = 0

    @property
    def x64_enabled(self) -> bool:
        stack = self._local.x64
        return stack[-1] if stack else self._x64

    @property
    def jax_enable_x64(self) -> bool:
        return self.x64_enabled

    @property
    def jit_disabled(self) -> bool:
        """``jax_disable_jit`` (or a ``disable_jit()`` scope): jit runs functions eagerly."""
        stack = self._local.no_jit
        return stack[-1] if stack else bool(self._values.get("jax_disable_jit"))

    @contextmanager
    def _no_jit_scope(self, on: bool) -> Iterator[None]:
        self._local.no_jit.append(on)
        try:
            yield
        finally:
            self._local.no_jit.pop()

    def update(self, name: str, value: Any) -> None:
        """Set option ``name`` (JAX's names) to ``value``."""
        key = self._ALIASES.get(name, name)
        if key == "jax_enable_x64":
            self._x64 = bool(value)
            self.generation += 1
            return
        if key in self._ACCEPTED or key in self._OWN:
            hook = self._HOOKS.get(key)
            if hook is not None:
                value = hook(value)
            self._values[key] = value
            if key in self._JIT_KEYED or key == "jax_no_execution":
                self.changed()
            if key == "funcgrad_check_rules":
                self.check_rules = bool(value)  # read at every transformed primitive
            if key == "jax_check_tracer_leaks":
                CHECK_LEAKS[:] = [True] if value else []
            if key in ("jax_debug_nans", "jax_debug_infs", "jax_no_execution"):
                checks = {"nan": bool(self._values.get("jax_debug_nans")),
                          "inf": bool(self._values.get("jax_debug_infs")),
                          "noexec": bool(self._values.get("jax_no_execution"))}
                CHECK_VALUES[:] = [k for k, on in checks.items() if on]
            return
        raise AttributeError(
            f"unknown config option {name!r}; funcgrad knows 'jax_enable_x64' and accepts "
            f"{sorted(self._ACCEPTED | self._OWN)}"
        )

    def trace_context(self) -> tuple[Any, ...]:
        """The option values a staged program depends on (part of jit's cache key)."""
        return (*(self._values.get(k) for k in self._JIT_KEYED), *self.user_contexts,
                *(hook() for hook in self.trace_key_hooks))

    def changed(self) -> None:
        """Tell the caches keyed on ``trace_context`` that it changed."""
        for hook in self.on_change:
            hook()

    def read(self, name: str) -> Any:
        key = self._ALIASES.get(name, name)
        if key == "jax_enable_x64":
            return self.x64_enabled
        return self._values.get(key)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("jax_") and name in self._ACCEPTED:
            return self._values.get(name)
        raise AttributeError(f"funcgrad.config has no option {name!r}")

    @contextmanager
    def _x64_scope(self, on: bool) -> Iterator[None]:
        self._local.x64.append(on)
        self.generation += 1
        try:
            yield
        finally:
            self._local.x64.pop()
            self.generation += 1


config = Config()


def x64_enabled() -> bool:
    """Whether 64-bit dtypes are on for the JAX face (see ``jax_enable_x64``)."""
    return config.x64_enabled


@contextmanager
def enable_x64(new_val: bool = True) -> Iterator[None]:
    """Turn 64-bit mode on (or off) inside a ``with`` block, for this thread.

    >>> import funcgrad.numpy as jnp
    >>> with enable_x64():
    ...     jnp.zeros(2).dtype
    dtype('float64')
    """
    with config._x64_scope(bool(new_val)):
        yield


@contextmanager
def disable_x64() -> Iterator[None]:
    """Turn 64-bit mode off inside a ``with`` block, for this thread."""
    with config._x64_scope(False):
        yield


def disable_jit(disable: bool = True) -> Any:
    """Within this scope ``jit`` runs its function eagerly, op by op (for debugging: Python
    prints and control flow on values work), as ``jax.disable_jit``.

    >>> import funcgrad as jax
    >>> with jax.disable_jit():
    ...     jax.jit(lambda x: float(x) * 2)(3.0)
    6.0
    """
    return config._no_jit_scope(bool(disable))
