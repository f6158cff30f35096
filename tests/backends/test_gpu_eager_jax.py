"""Eager JAX-face work on a GPU copies no more than it must (``gpu``-marked: the CuPy
emulator's counters where no GPU is found): random draws from a key on the device make
their counters there, and a host table broadcast against a device operand (``one_hot``'s
classes) is uploaded once at its own size, not at the broadcast's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gpu_values import host, need_device

import funcgrad as jax
import funcgrad.numpy as jnp

pytestmark = pytest.mark.gpu

DRAWS = {
    "split": lambda k: jax.random.split(k, 3),
    "normal": lambda k: jax.random.normal(k, (64, 33)),
    "uniform": lambda k: jax.random.uniform(k, (1000,)),
    "bernoulli": lambda k: jax.random.bernoulli(k, 0.9, (16, 64)),
    "randint": lambda k: jax.random.randint(k, (50,), 0, 7),
}


def _counting() -> Any:
    import fakecupy  # noqa: PLC0415

    return fakecupy.counting() if fakecupy.installed() else None


@pytest.mark.parametrize("name", sorted(DRAWS))
def test_gpu_random_draws_from_a_device_key_upload_nothing(name: str) -> None:
    """And they equal the same draws from the same key on the host (bit for bit)."""
    need_device()
    key = jax.random.PRNGKey(42)
    gkey = jax.device_put(key, jax.devices("cuda")[0])
    DRAWS[name](gkey)
    ctx = _counting()
    if ctx is None:
        got = DRAWS[name](gkey)
    else:
        with ctx as c:
            got = DRAWS[name](gkey)
        assert (c.h2d, c.d2h, c.syncs) == (0, 0, 0), c
    np.testing.assert_array_equal(host(got), np.asarray(DRAWS[name](key)))


def test_gpu_broadcast_host_table_is_uploaded_at_its_own_size() -> None:
    need_device()
    labels = jax.device_put(jnp.arange(4096) % 1000, jax.devices("cuda")[0])
    want = np.eye(1000, dtype=np.float32)[np.arange(4096) % 1000]
    jax.nn.one_hot(labels, 1000)
    ctx = _counting()
    if ctx is None:
        np.testing.assert_array_equal(host(jax.nn.one_hot(labels, 1000)), want)
        return
    with ctx as c:
        out = jax.nn.one_hot(labels, 1000)
    # The 1000 classes, not the 4096 x 1000 table they broadcast to.
    assert c.h2d <= 1 and c.h2d_bytes <= 1000 * 8, c
    np.testing.assert_array_equal(host(out), want)


# name -> (creation on the GPU given the device, whether it copies nothing to the device)
CREATIONS = {
    "zeros": (lambda d, x: jnp.zeros((300, 7), device=d), True),
    "ones_int": (lambda d, x: jnp.ones(9, jnp.int32, device=d), True),
    "empty": (lambda d, x: jnp.empty((4, 4), device=d), True),
    "full_scalar": (lambda d, x: jnp.full((3, 5), 2.5, device=d), True),
    "full_row": (lambda d, x: jnp.full((2, 3), np.array([1.0, 2.0, 3.0]), device=d), False),
    "zeros_like": (lambda d, x: jnp.zeros_like(x), True),
    "ones_like_dtype": (lambda d, x: jnp.ones_like(x, jnp.int8), True),
    "full_like_scalar": (lambda d, x: jnp.full_like(x, -1.5), True),
    "full_like_row": (lambda d, x: jnp.full_like(x, np.array([4.0, 5.0, 6.0])), False),
}


@pytest.mark.parametrize("name", sorted(CREATIONS))
def test_gpu_constant_creations_are_made_on_the_device(name: str) -> None:
    """One value repeated is written on the device (no copy of the array); anything else is
    copied; the values, dtypes and weak types are the host's."""
    need_device()
    make, on_device = CREATIONS[name]
    dev = jax.devices("cuda")[0]
    x_host = jnp.arange(6.0).reshape(2, 3)
    x = jax.device_put(x_host, dev)
    make(dev, x)
    ctx = _counting()
    if ctx is None:
        got = make(dev, x)
    else:
        with ctx as c:
            got = make(dev, x)
        if on_device:
            assert c.h2d == 0, c
    want = make(None, x_host) if "like" in name else make(None, None)
    assert next(iter(got.devices())).platform == "cuda"
    assert got.dtype == want.dtype and got.weak_type == want.weak_type
    np.testing.assert_array_equal(host(got), np.asarray(want))
