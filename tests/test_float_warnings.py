"""0/0, log(0) and overflow give nan/inf without NumPy's RuntimeWarnings on both faces,
eager, jitted (CPU fusion too) and compiled, as in JAX and PyTorch; the user's own NumPy
calls still warn."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as jnp
from funcgrad import torch


def _jax_ops(x: Any) -> Any:
    return jnp.log(x) / x, jnp.exp(x * 1e4 + 1e3), jnp.sqrt(x - 1.0), x * jnp.inf


def _torch_ops(t: Any) -> Any:
    return t.log() / t, torch.rsqrt(t), (t * 1e4 + 1e3).exp(), t.sub(1).sqrt()


CASES: dict[str, Callable[[], Any]] = {
    "jax eager": lambda: _jax_ops(jnp.zeros(3)),
    "jax jit": lambda: fg.jit(_jax_ops)(jnp.zeros(3)),
    "jax jit fused": lambda: fg.jit(_jax_ops)(jnp.zeros(70_000)),
    "jax grad": lambda: fg.grad(lambda x: jnp.sum(jnp.log(x) * x))(jnp.zeros(3)),
    "torch eager": lambda: _torch_ops(torch.zeros(3)),
    "torch compile": lambda: torch.compile(_torch_ops)(torch.zeros(3)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_nan_and_inf_come_without_numpy_warnings(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        # The filter funcgrad installs on import, in front of this test's "error" filter.
        from funcgrad.float_warnings import install  # noqa: PLC0415

        install()
        out = CASES[name]()
    values = [v.numpy() if isinstance(v, torch.Tensor) else np.asarray(v)
              for v in fg.tree_util.tree_leaves(out)]
    assert any(not np.all(np.isfinite(v)) for v in values)


def test_the_users_own_numpy_calls_still_warn() -> None:
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        np.log(np.zeros(1))
