"""Helpers of the tests that compare funcgrad with JAX in 64-bit mode: run a JAX function
with x64 on, and compare values, dtypes and shapes."""

from __future__ import annotations

from typing import Any

import numpy as np


def jax_x64(fn: Any, *args: Any, **kw: Any) -> Any:
    """``fn(*args, **kw)`` under JAX's 64-bit mode, its leaves as NumPy arrays."""
    import jax  # noqa: PLC0415

    with jax.enable_x64(True):
        return jax.tree_util.tree_map(np.asarray, fn(*args, **kw))


def same(got: Any, want: Any, exact: bool = False) -> None:
    """``got`` has ``want``'s dtype and shape, and its values (exactly, or to 1e-12)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if exact:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def same_error(f: Any, *args: Any) -> tuple[str, str]:
    """``f(jax, jax.numpy, *args)`` raises, and ``f(funcgrad, funcgrad.numpy, *args)``
    raises the same exception type; returns both messages (funcgrad's first)."""
    import jax  # noqa: PLC0415
    import pytest  # noqa: PLC0415

    import funcgrad  # noqa: PLC0415
    import funcgrad.numpy as fnp  # noqa: PLC0415

    with pytest.raises(Exception) as theirs:
        f(jax, jax.numpy, *args)
    with pytest.raises(type(theirs.value)) as ours:
        f(funcgrad, fnp, *args)
    return str(ours.value), str(theirs.value)


def raised(call: Any) -> tuple[BaseException, str]:
    """The error ``call()`` raises, and its message."""
    import pytest  # noqa: PLC0415

    with pytest.raises(Exception) as info:  # noqa: PT011 - the callers compare it
        call()
    return info.value, str(info.value)


def same_message(ours: Any, theirs: Any) -> None:
    """``ours()`` and ``theirs()`` raise with the same message, and ours is an instance of
    the builtin class under JAX's error (funcgrad's named errors derive from it)."""
    e_ours, m_ours = raised(ours)
    e_theirs, m_theirs = raised(theirs)
    assert m_ours == m_theirs
    base = next(c for c in type(e_theirs).__mro__ if c.__module__ == "builtins")
    assert isinstance(e_ours, base), (type(e_ours), base)


def outcome(call: Any) -> Any:
    """The result's ``repr``, or the error's message and which of JAX's built-in types it
    is (funcgrad's named errors derive from those JAX raises)."""
    try:
        out = call()
    except Exception as e:  # noqa: BLE001 - compared between the two libraries
        return ("raised", isinstance(e, ValueError), isinstance(e, TypeError),
                isinstance(e, NotImplementedError), str(e))
    return ("ok", repr(out))


def side_by_side(make: Any, result: Any = outcome, x64: bool = False) -> tuple[Any, Any]:
    """``result(make(funcgrad, funcgrad.numpy))`` and ``result(make(jax, jax.numpy))``,
    both in 64-bit mode when ``x64``."""
    import jax  # noqa: PLC0415

    import funcgrad  # noqa: PLC0415
    import funcgrad.numpy as fnp  # noqa: PLC0415

    if not x64:
        return result(make(funcgrad, fnp)), result(make(jax, jax.numpy))
    with funcgrad.enable_x64(True):
        jax.config.update("jax_enable_x64", True)
        try:
            return result(make(funcgrad, fnp)), result(make(jax, jax.numpy))
        finally:
            jax.config.update("jax_enable_x64", False)
