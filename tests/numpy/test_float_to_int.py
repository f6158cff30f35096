"""Float to integer conversion: the JAX face saturates as XLA does (out-of-range values clamp
to the integer range, NaN gives 0), eagerly, under ``jit`` and in fused CUDA kernels (run
under the CuPy emulator); the PyTorch face gives PyTorch's x86 CPU results. Python ints wrap
into narrower integer arrays as in JAX."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as jnp
import funcgrad.torch as ft
from funcgrad.devices import get_backend

# Drawn values overflow float16 on purpose (they become inf).
pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")

INTS = ["int8", "uint8", "int16", "uint16", "int32", "uint32"]
FLOATS = ["float16", "float32"]
_values = st.lists(st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=32),
    st.sampled_from([1e10, -1e10, 2147483520.0, 2147483648.0, -2147483648.0, 255.9, 256.0,
                     -0.5, -1.5, 65535.5, 127.9, -128.9])), min_size=1, max_size=12)


def _reference(values: list[float], src: str, dst: str) -> list[int]:
    info = np.iinfo(dst)
    out = []
    for v in np.asarray(values, dtype=src).astype(np.float64):
        if math.isnan(v):
            out.append(0)
        else:
            out.append(int(min(max(math.trunc(v) if math.isfinite(v) else v, info.min),
                               info.max)))
    return out


@given(_values, st.sampled_from(FLOATS), st.sampled_from(INTS))
@settings(deadline=None)
def test_jax_face_saturates_eager_and_jit(values, src, dst):
    x = jnp.asarray(np.asarray(values, dtype=src))
    want = _reference(values, src, dst)
    assert x.astype(dst).tolist() == want
    assert fg.jit(lambda v: (v * 1).astype(dst))(x).tolist() == want
    jax = pytest.importorskip("jax", exc_type=ImportError)
    assert np.asarray(jax.numpy.asarray(np.asarray(values, dtype=src)).astype(dst)).tolist() \
        == want


@pytest.mark.gpu
@given(_values, st.sampled_from(INTS))
@settings(deadline=None, max_examples=30)
def test_fused_cuda_kernel_saturates(values, dst):
    if not get_backend("cupy").available():
        pytest.skip("no CUDA device and no emulator (CuPy's wheel and g++ are needed)")
    x = fg.device_put(np.asarray(values, np.float32), "cuda")
    want = _reference(values, "float32", dst)
    assert fg.jit(lambda v: (v * 1).astype(dst))(x).tolist() == want
    assert x.astype(dst).tolist() == want


@pytest.mark.parametrize("dtype,other,want", [
    ("int8", 200, [-55, -54]), ("uint8", 300, [45, 46]), ("int8", -129, [-128, -127]),
    ("int16", 40000, [-25535, -25534]),
])
def test_python_ints_wrap_into_narrow_arrays(dtype, other, want):
    x = jnp.array([1, 2], dtype=dtype)
    assert (x + other).tolist() == want
    assert fg.jit(lambda v: v + other)(x).tolist() == want


@given(_values, st.sampled_from(["float32", "float64", "float16"]),
       st.sampled_from(["int8", "uint8", "int16", "int32", "int64"]))
@settings(deadline=None)
def test_torch_face_matches_pytorch_cpu(values, src, dst):
    torch = pytest.importorskip("torch", exc_type=ImportError)
    data = np.asarray(values, dtype=src)
    ours = ft.tensor(data).to(getattr(ft, dst)).tolist()
    assert ours == torch.tensor(data).to(getattr(torch, dst)).tolist()


@pytest.mark.parametrize("dst", INTS)
def test_large_fused_cpu_loops_saturate(dst):
    # 2**17 elements: the CPU fusion's loops (numba, where installed) compile the cluster
    values = [1e10, -1.5, 300.7, float("nan"), 2.7, -1e10, float("inf"), 65535.9]
    x = jnp.asarray(np.tile(np.asarray(values, np.float32), 2 ** 14))
    got = fg.jit(lambda v: (v * 1.0 + 0.0).astype(dst))(x)
    assert got[:8].tolist() == _reference(values, "float32", dst)
    assert np.array_equal(np.asarray(got), np.tile(np.asarray(got[:8]), 2 ** 14))
