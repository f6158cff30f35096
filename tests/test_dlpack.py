"""DLPack between the faces and other libraries: ``from_dlpack`` shares memory, no copy
(as JAX and PyTorch document it); exports of the JAX face are read-only."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad.numpy as jnp
import funcgrad.torch as ft


def test_jax_face_imports_without_a_copy() -> None:
    a = np.arange(4, dtype=np.float32)
    x = jnp.from_dlpack(a)
    assert np.shares_memory(np.asarray(x), a)
    assert x.dtype == np.float32 and x.shape == (4,)


@pytest.mark.x32
def test_jax_face_converts_a_non_canonical_dtype() -> None:
    # float64 with 64-bit mode off becomes float32, as jnp.asarray does: a copy.
    a = np.arange(3.0)
    x = jnp.from_dlpack(a)
    assert x.dtype == np.float32
    assert not np.shares_memory(np.asarray(x), a)


def test_copy_true_copies() -> None:
    a = np.arange(3, dtype=np.float32)
    x = jnp.from_dlpack(a, copy=True)
    a[0] = 7.0
    assert float(x[0]) == 0.0


def test_tensor_to_array_and_back_share_memory() -> None:
    t = ft.arange(3.0)
    x = jnp.from_dlpack(t)
    assert np.shares_memory(np.asarray(x), t.numpy())
    back = ft.from_dlpack(x)
    assert np.shares_memory(back.numpy(), t.numpy())


def test_tensor_that_requires_grad_is_not_exported() -> None:
    with pytest.raises(RuntimeError, match="Can't export tensors that require gradient, use "
                                           r"tensor.detach\(\)"):
        jnp.from_dlpack(ft.ones(2, requires_grad=True))


def test_exported_array_is_read_only() -> None:
    x = jnp.arange(3.0)
    d = np.from_dlpack(x)
    assert not d.flags.writeable
    with pytest.raises(ValueError):
        d[0] = 1.0


def test_real_torch_round_trip() -> None:
    torch = pytest.importorskip("torch", exc_type=ImportError)
    t = torch.arange(3, dtype=torch.float32)
    x = jnp.from_dlpack(t)
    assert np.shares_memory(np.asarray(x), t.numpy())
    back = torch.from_dlpack(jnp.arange(3.0))
    assert back.tolist() == [0.0, 1.0, 2.0]
