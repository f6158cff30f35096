"""JAX-face prints compared with JAX 0.10.2: an effect's equation (no results) prints
without ``=``; ``jnp.bool_`` is the class JAX calls ``bool``."""

from __future__ import annotations

import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

jax = pytest.importorskip("jax")
jnp = jax.numpy


def _callback_line(m: object) -> str:
    def f(x: object) -> object:
        m.debug.callback(lambda v: None, x)  # type: ignore[attr-defined]
        return x

    text = str(m.make_jaxpr(f)(1.0))  # type: ignore[attr-defined]
    return next(ln.strip() for ln in text.splitlines() if "debug_callback" in ln)


def test_an_equation_without_results_prints_without_equals() -> None:
    ours, theirs = _callback_line(fg), _callback_line(jax)
    assert ours.startswith("debug_callback[") and theirs.startswith("debug_callback[")


def test_bool_scalar_type_name() -> None:
    assert fnp.bool_.__name__ == jnp.bool_.__name__ == "bool"
    assert repr(fnp.bool_).replace("funcgrad", "jax") == repr(jnp.bool_)
