"""The GPU path, proven without a GPU: the CuPy emulator (tests/support/fakecupy) and the
whole GPU surface of funcgrad run under it.

(a) The emulator keeps CuPy's rules (``fake_cupy`` fixture): a distinct array type, NumPy
    arrays refused, no implicit host conversion, 0-d reductions, garbage in ``empty``, only
    the pinned CuPy's names, raw kernels compiled by NVRTC with CuPy's options and run with
    their real grid and block, launches and arguments checked, transfers counted.
(b) ``gpu``-marked tests of funcgrad on "cuda" arrays: they run on the emulator where CuPy
    finds no device (tests/conftest.py) and on the real device in scripts/gpu_check.sh.
    NumPy (and PyTorch for the torch face) computed on the host are the references.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from gpu_values import host as _host
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.devices import get_backend

HAVE_TOOLS = importlib.util.find_spec("cupy_backends") is not None


def _cupy() -> Any:
    if not get_backend("cupy").available():
        pytest.skip("no CUDA device and no emulator (CuPy's wheel and g++ are needed)")
    import cupy

    return cupy


def _on_cuda(x: Any) -> bool:
    return bool(x.device.platform == "cuda")


# ======================================================================= (a) the emulator


def test_ndarray_is_a_distinct_device_type(fake_cupy: Any) -> None:
    cp = fake_cupy
    x = cp.asarray(np.arange(6.0).reshape(2, 3))
    assert type(x) is cp.ndarray and not isinstance(x, np.ndarray)
    assert type(x).__module__ == "cupy"
    assert x.device.id == 0 and x.shape == (2, 3) and x.dtype == np.float64
    np.testing.assert_array_equal(x.get(), np.arange(6.0).reshape(2, 3))


@pytest.mark.parametrize("host", [np.ones(3), np.asarray(2.0)], ids=["1-d", "0-d"])
def test_numpy_arrays_are_refused_as_cupy_refuses_them(fake_cupy: Any, host: Any) -> None:
    cp = fake_cupy
    x = cp.ones(3)
    msg = "Unsupported type <class 'numpy.ndarray'>"
    with pytest.raises(TypeError, match=msg):
        cp.add(x, host)
    with pytest.raises(TypeError, match=msg):
        x * host
    with pytest.raises(TypeError, match=msg):
        cp.where(x > 0, host, x)
    with pytest.raises(TypeError, match=msg):
        np.add(host, x)  # NumPy hands the call to CuPy, which refuses it
    # Python and NumPy scalars are accepted, as CuPy accepts them.
    np.testing.assert_array_equal(cp.add(x, 2.0).get(), [3.0, 3.0, 3.0])
    np.testing.assert_array_equal((x * np.float32(2)).get(), [2.0, 2.0, 2.0])


def test_no_implicit_device_to_host_conversion(fake_cupy: Any) -> None:
    cp = fake_cupy
    x = cp.arange(4)
    with pytest.raises(TypeError, match="Implicit conversion to a NumPy array"):
        np.asarray(x)
    with fake_cupy_counting() as c:
        host = cp.asnumpy(x)
    np.testing.assert_array_equal(host, np.arange(4))
    assert c.d2h == 1 and c.h2d == 0


def fake_cupy_counting() -> Any:
    import fakecupy

    return fakecupy.counting()


def test_reductions_give_0d_device_arrays(fake_cupy: Any) -> None:
    cp = fake_cupy
    x = cp.asarray(np.arange(5.0))
    for r in (x.sum(), cp.max(x), cp.mean(x), x.argmax(), cp.all(x >= 0)):
        assert type(r) is cp.ndarray and r.shape == ()
    assert float(x.sum()) == 10.0


def test_empty_is_garbage(fake_cupy: Any) -> None:
    cp = fake_cupy
    assert np.isnan(cp.empty((2, 3), np.float32).get()).all()
    np.testing.assert_array_equal(cp.empty(3, np.int32).get(), [-1, -1, -1])
    np.testing.assert_array_equal(cp.empty_like(cp.zeros(2, np.uint8)).get(), [255, 255])


def test_only_the_pinned_cupys_names(fake_cupy: Any) -> None:
    import fakecupy._api as api

    cp = fake_cupy
    assert "cupy.ndarray" in api.NAMES and "cupy.RawKernel" in api.NAMES
    for name in ("asarray", "add", "sum", "RawKernel", "asnumpy", "linalg", "fft", "cuda"):
        assert api.has("cupy", name)
        assert getattr(cp, name) is not None
    with pytest.raises(AttributeError, match="has no attribute 'not_a_cupy_name'"):
        cp.not_a_cupy_name  # noqa: B018
    # NumPy names CuPy does not have stay missing.
    for name in ("asmatrix", "fromregex", "insert", "geomspace", "errstate"):
        assert hasattr(np, name) and not api.has("cupy", name)
        with pytest.raises(AttributeError):
            getattr(cp, name)
    import fakecupy._module as module

    assert all(api.has("cupy", n) for n in module.__all__)


def test_snapshot_matches_the_installed_cupy() -> None:
    """The snapshot is the installed wheel's API (regenerate it after a CuPy upgrade)."""
    if not HAVE_TOOLS:
        pytest.skip("CuPy is not installed")
    import fakecupy

    if fakecupy.installed():
        pytest.skip("the emulator is installed as cupy")
    from fakecupy.snapshot import PATH

    with open(PATH) as f:
        stored = [line.rstrip("\n") for line in f]
    # In a fresh interpreter, as the file was written: dir() of a CuPy module also lists the
    # submodules that anything in this process happened to import (cupy.cuda.nccl, ...).
    support = os.path.dirname(os.path.dirname(PATH))
    code = "from fakecupy.snapshot import snapshot_lines; print('\\n'.join(snapshot_lines()))"
    fresh = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, env={**os.environ, "PYTHONPATH": support})
    assert stored == fresh.stdout.splitlines()


# ---------------------------------------------------------------- raw kernels

COOPERATIVE = r"""
extern "C" __global__ void rotate_sum(const double* x, double* out, long long n) {
  __shared__ double s[256];
  unsigned int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  unsigned int nt = blockDim.x * blockDim.y * blockDim.z;
  long long i = blockIdx.x * (long long)nt + t;
  s[t] = i < n ? x[i] : 0.0;
  __syncthreads();
  // each thread reads its neighbour's value: wrong unless all threads of the block ran
  double v = s[(t + 1) % nt];
  __syncthreads();
  s[t] = v;
  __syncthreads();
  for (unsigned int k = nt / 2; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
  if (i < n) out[gridDim.x + i] = v;
}
"""


@pytest.mark.parametrize("block", [(256,), (16, 16), (8, 4, 8)])
def test_raw_kernel_runs_with_real_blocks_and_barriers(fake_cupy: Any, block: Any) -> None:
    cp = fake_cupy
    n = 700
    x = np.random.default_rng(0).standard_normal(n)
    grid = -(-n // 256)
    out = cp.empty(grid + n, np.float64)
    k = cp.RawKernel(COOPERATIVE, "rotate_sum")
    with fake_cupy_counting() as c:
        k((grid,), block, (cp.asarray(x), out, np.int64(n)))
    got = out.get()
    padded = np.concatenate([x, np.zeros(grid * 256 - n)]).reshape(grid, 256)
    np.testing.assert_allclose(got[:grid], padded.sum(axis=1), rtol=1e-12)
    np.testing.assert_array_equal(got[grid:], np.roll(padded, -1, axis=1).reshape(-1)[:n])
    assert (c.launches, c.h2d, c.d2h, c.syncs) == (1, 1, 0, 0)


def test_raw_kernel_compiles_cubin_with_cupys_options(fake_cupy: Any) -> None:
    import fakecupy._kernels as K

    opts = K.cupy_nvrtc_options(("--std=c++14",))
    for flag in ("-ftz=true", "-arch=sm_90", "--device-as-default-execution-space",
                 "--std=c++14"):
        assert flag in opts
    assert any(o.startswith("-I") and o.endswith("cupy/_core/include") for o in opts)
    k = fake_cupy.RawKernel(COOPERATIVE, "rotate_sum", options=("--std=c++14",))
    k.compile()
    assert k.cubin is not None and k.cubin[:4] == b"\x7fELF"


def test_raw_kernel_reports_a_barrier_not_all_threads_reach(fake_cupy: Any) -> None:
    from funcgrad.errors import BackendError

    src = r"""extern "C" __global__ void bad(float* x) {
      if (threadIdx.x >= 2) return;
      __syncthreads();
      x[threadIdx.x] = 1.0f; }"""
    with pytest.raises(BackendError, match="__syncthreads"):
        fake_cupy.RawKernel(src, "bad")((1,), (4,), (fake_cupy.zeros(4, np.float32),))


SCALE = r"""extern "C" __global__ void scale(const float* x, float* y, int n, float a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i]; }"""


def test_raw_kernel_checks_arguments_against_the_signature(fake_cupy: Any) -> None:
    cp = fake_cupy
    k = cp.RawKernel(SCALE, "scale")
    x, y = cp.ones(5, np.float32), cp.empty(5, np.float32)
    k((1,), (8,), (x, y, np.int32(5), np.float32(3.0)))
    np.testing.assert_array_equal(y.get(), [3.0] * 5)
    with pytest.raises(TypeError, match="int n.*Python int|int n.*int64"):
        k((1,), (8,), (x, y, 5, np.float32(3.0)))  # CuPy passes a Python int as long long
    with pytest.raises(TypeError, match="float a"):
        k((1,), (8,), (x, y, np.int32(5), 3.0))  # and a Python float as double
    with pytest.raises(TypeError, match="points to float but the array is float64"):
        k((1,), (8,), (cp.ones(5), y, np.int32(5), np.float32(1)))
    with pytest.raises(TypeError, match="takes 4 arguments"):
        k((1,), (8,), (x, y, np.int32(5)))
    with pytest.raises(TypeError, match="Unsupported type"):
        k((1,), (8,), (np.ones(5, np.float32), y, np.int32(5), np.float32(1)))


def test_raw_kernel_launch_limits_and_out_of_bounds_writes(fake_cupy: Any) -> None:
    cp = fake_cupy
    k = cp.RawKernel(SCALE, "scale")
    x, y = cp.ones(5, np.float32), cp.empty(5, np.float32)
    args = (x, y, np.int32(5), np.float32(1))
    with pytest.raises(cp.cuda.driver.CUDADriverError, match="INVALID_VALUE"):
        k((1,), (2048,), args)
    with pytest.raises(cp.cuda.driver.CUDADriverError, match="INVALID_VALUE"):
        k((1,), (32, 32, 2), args)
    with pytest.raises(cp.cuda.driver.CUDADriverError, match="INVALID_VALUE"):
        k((0,), (32,), args)
    with pytest.raises(RuntimeError, match="wrote outside an array"):
        k((1,), (8,), (x, y, np.int32(8), np.float32(1)))  # n says 8: three writes too many


# ------------------------------------------------ counters: no host round trips


@pytest.mark.slow
def test_jitted_training_step_moves_nothing_between_host_and_device(fake_cupy: Any) -> None:
    rng = np.random.default_rng(0)
    w = fg.device_put(rng.standard_normal((4, 3)), "cuda")
    b = fg.device_put(np.zeros(3), "cuda")
    x = fg.device_put(rng.standard_normal((8, 4)), "cuda")
    y = fg.device_put(rng.standard_normal((8, 3)), "cuda")

    def loss(params: Any, x: Any, y: Any) -> Any:
        w, b = params
        return fnp.mean((fnp.tanh(x @ w + b) - y) ** 2)

    @fg.jit
    def step(params: Any, x: Any, y: Any) -> Any:
        g = fg.grad(loss)(params, x, y)
        return [p - 0.1 * gp for p, gp in zip(params, g)]

    params = step([w, b], x, y)  # compile
    with fake_cupy_counting() as c:
        for _ in range(3):
            params = step(params, x, y)
    assert (c.h2d, c.d2h, c.syncs) == (0, 0, 0)
    assert c.launches > 0 and c.compiles == 0
    assert all(_on_cuda(p) for p in params)
    # the same steps on the host
    hp = [_host(w), _host(b)]
    for _ in range(4):
        hp = step(hp, _host(x), _host(y))
    for p, q in zip(params, hp):
        np.testing.assert_allclose(_host(p), _host(q), rtol=1e-10, atol=1e-12)


def test_eager_indexing_with_device_indices_copies_nothing_to_the_host(fake_cupy: Any) -> None:
    x = fg.device_put(np.arange(20.0).reshape(4, 5), "cuda")
    i = fg.device_put(np.array([3, -1, 0]), "cuda")
    with fake_cupy_counting() as c:
        outs = [x[i], x[:, i], fnp.take(x, i, axis=1),
                fnp.take_along_axis(x[:3], fnp.reshape(i, (3, 1)), axis=1),
                fg.grad(lambda a: fnp.sum(a[i] ** 2))(x),
                x.at[i].set(-1.0), x.at[i, 1].add(10.0),
                x.at[i].get(mode="fill", fill_value=-2.0)]
    assert (c.d2h, c.syncs) == (0, 0)
    xh = np.arange(20.0).reshape(4, 5)
    ih = np.array([3, -1, 0])
    np.testing.assert_array_equal(_host(outs[0]), xh[ih])
    np.testing.assert_array_equal(_host(outs[1]), xh[:, ih])
    np.testing.assert_array_equal(_host(outs[2]), np.take(xh, ih, axis=1))
    np.testing.assert_array_equal(_host(outs[3]),
                                  np.take_along_axis(xh[:3], ih.reshape(3, 1), axis=1))
    expected = np.zeros_like(xh)
    np.add.at(expected, ih, 2 * xh[ih])
    np.testing.assert_array_equal(_host(outs[4]), expected)
    expected = xh.copy()
    expected[ih] = -1.0
    np.testing.assert_array_equal(_host(outs[5]), expected)
    expected = xh.copy()
    np.add.at(expected, (ih, 1), 10.0)
    np.testing.assert_array_equal(_host(outs[6]), expected)
    np.testing.assert_array_equal(_host(outs[7]), xh[ih])


# ===================================================================== (b) GPU surface


@pytest.mark.gpu
def test_gpu_jit_forward_and_grad() -> None:
    _cupy()
    rng = np.random.default_rng(1)
    xh = rng.standard_normal((33, 17))
    x = fg.device_put(xh, "cuda")
    f = lambda a: fnp.sum(fnp.sin(a) * a + fnp.exp(-a * a), axis=1)
    got = fg.jit(f)(x)
    assert _on_cuda(got)
    np.testing.assert_allclose(_host(got), f(xh), rtol=1e-12)
    g = lambda a: fnp.sum(fnp.tanh(a) ** 2)
    for fn in (fg.grad(g), fg.grad(fg.jit(g)), fg.jit(fg.grad(g))):
        r = fn(x)
        assert _on_cuda(r)
        np.testing.assert_allclose(_host(r), 2 * np.tanh(xh) / np.cosh(xh) ** 2, rtol=1e-10)


EAGER = {
    "mul_scalar": lambda a: fnp.multiply(a, 2.0),
    "rsub_scalar": lambda a: 1.5 - a,
    "mean": lambda a: fnp.mean(a),
    "clip": lambda a: fnp.clip(a, -0.5, 0.5),
    "maximum": lambda a: fnp.maximum(a, 0.0),
    "where": lambda a: fnp.where(a > 0, a, 0.1 * a),
    "pad": lambda a: fnp.pad(a, 1, constant_values=2.0),
    "power": lambda a: a ** 3 + 2 ** a,
    "var_axis": lambda a: fnp.var(a, axis=0),
    "cumsum": lambda a: fnp.cumsum(a, axis=1),
    "zeros_like": lambda a: fnp.zeros_like(a) + a,
    "full_like": lambda a: fnp.full_like(a, 3.0) * a,
    "copy": lambda a: fnp.copy(a),
    "matmul": lambda a: a @ a.T,
    "softmax": lambda a: fg.nn.softmax(a, axis=-1),
    "relu": lambda a: fg.nn.relu(a),
    "floordiv": lambda a: fnp.floor_divide(a, 0.3),
    "isfinite": lambda a: fnp.isfinite(a / (a > 0)),
}


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(EAGER))
def test_gpu_eager_numpy_ops_with_python_scalars(name: str) -> None:
    _cupy()
    xh = np.random.default_rng(2).standard_normal((4, 5))
    f = EAGER[name]
    got = f(fg.device_put(xh, "cuda"))
    assert _on_cuda(got)
    np.testing.assert_allclose(_host(got), _host(f(xh)), rtol=1e-12, atol=1e-14)


# Indexing a device array: the index (a NumPy array, a list, a mask, or a device array)
# is committed to the array's device, as JAX does; the result stays there.
IDX = np.array([2, 0, -1, 2])
INDEXING: dict[str, Any] = {
    "host_ints": lambda a, d: a[IDX],
    "device_ints": lambda a, d: a[d(IDX)],
    "list": lambda a, d: a[([1, 3],)],  # (a bare list is a TypeError in JAX)
    "mask": lambda a, d: a[np.array([True, False, True, True])],
    "two_axes": lambda a, d: a[d(IDX), :2][:, np.array([1, 0])],
    "take": lambda a, d: fnp.take(a, d(IDX), axis=1),
    "take_along": lambda a, d: fnp.take_along_axis(a, d(np.array([[0], [4], [1], [2]])), 1),
    "at_set": lambda a, d: a.at[d(IDX)].set(0.5),
    "at_add_rows": lambda a, d: a.at[IDX, 1].add(1.0),
    "at_multiply": lambda a, d: a.at[d(np.array([1, 3]))].multiply(2.0),
    "at_max": lambda a, d: a.at[IDX].max(0.25),
    "at_get_fill": lambda a, d: a.at[d(np.array([0, 9]))].get(mode="fill", fill_value=-1.0),
}


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(INDEXING))
def test_gpu_eager_indexing_with_host_and_device_indices(name: str) -> None:
    _cupy()
    xh = np.random.default_rng(5).standard_normal((4, 5))
    f = INDEXING[name]
    got = f(fg.device_put(xh, "cuda"), lambda i: fg.device_put(i, "cuda"))
    assert _on_cuda(got)
    np.testing.assert_array_equal(_host(got), _host(f(fnp.asarray(xh), lambda i: i)))
    # Reverse mode through the same indexing, on the device.
    g = fg.grad(lambda a: fnp.sum(f(a, lambda i: fg.device_put(i, "cuda")) ** 2))(
        fg.device_put(xh, "cuda"))
    assert _on_cuda(g)
    np.testing.assert_allclose(_host(g), _host(fg.grad(
        lambda a: fnp.sum(f(a, lambda i: i) ** 2))(fnp.asarray(xh))), rtol=1e-12)


@pytest.mark.gpu
def test_gpu_torch_indexing_with_cuda_and_cpu_index_tensors() -> None:
    _cupy()
    from funcgrad import torch

    xh = np.random.default_rng(6).standard_normal((3, 4))
    ops = {
        "cuda_index": lambda t, dev: t[torch.tensor([2, 0, -1]).to(dev)],
        "cpu_index": lambda t, dev: t[torch.tensor([2, 0])],
        "mask": lambda t, dev: t[t > 0.1],
        "index_select": lambda t, dev: t.index_select(1, torch.tensor([3, 0]).to(dev)),
        "gather": lambda t, dev: t.gather(1, torch.tensor([[0], [1], [3]]).to(dev)),
    }
    for name, op in ops.items():
        x = torch.tensor(xh).cuda().requires_grad_()
        y = op(x, "cuda")
        assert y.device.type == "cuda", name
        (y * y).sum().backward()
        xr = torch.tensor(xh, requires_grad=True)
        yr = op(xr, "cpu")
        (yr * yr).sum().backward()
        np.testing.assert_array_equal(y.detach().cpu().numpy(), yr.detach().numpy(),
                                      err_msg=name)
        np.testing.assert_allclose(x.grad.cpu().numpy(), xr.grad.numpy(), rtol=1e-12,
                                   err_msg=name)


@pytest.mark.gpu
def test_gpu_eager_int_ops_and_division_by_zero() -> None:
    _cupy()
    ah = np.array([7, -7, 5, 0, 3], np.int64)
    bh = np.array([2, 2, 0, 0, -2], np.int64)
    a, b = fg.device_put(ah, "cuda"), fg.device_put(bh, "cuda")
    with np.errstate(divide="ignore"):
        # ``//`` by zero is JAX's (XLA's all-ones quotient, floored: -2, or -1 for 0 // 0)
        # in kernels as on the host; ``%`` by zero is 0.
        for f, want in ((lambda u, v: u // v, [3, -4, -2, -1, -2]),
                        (lambda u, v: u % v, ah % bh), (lambda u, v: u * 3 - v, ah * 3 - bh)):
            np.testing.assert_array_equal(_host(fg.jit(f, backend="cupy")(a, b)), want)
            np.testing.assert_array_equal(_host(f(a, b)), want)
    np.testing.assert_array_equal(_host(fg.jit(fnp.isfinite, backend="cupy")(a)), [True] * 5)


@pytest.mark.gpu
def test_gpu_transforms() -> None:
    _cupy()
    xh = np.linspace(-1.0, 1.0, 4)
    x = fg.device_put(xh, "cuda")
    f = lambda a: fnp.sin(a) * a
    df = np.cos(xh) * xh + np.sin(xh)
    y, t = fg.jvp(f, (x,), (fnp.ones_like(x),))
    assert _on_cuda(y) and _on_cuda(t)
    np.testing.assert_allclose(_host(t), df, rtol=1e-12)
    out, pull = fg.vjp(f, x)
    np.testing.assert_allclose(_host(pull(fnp.ones_like(out))[0]), df, rtol=1e-12)
    np.testing.assert_allclose(_host(fg.vmap(fg.grad(lambda a: fnp.sum(f(a))))(
        fnp.stack([x, x]))), np.stack([df, df]), rtol=1e-12)
    for jac in (fg.jacfwd(f), fg.jacrev(f)):
        j = jac(x)
        assert _on_cuda(j)
        np.testing.assert_allclose(_host(j), np.diag(df), rtol=1e-12, atol=1e-15)
    h = fg.hessian(lambda a: fnp.sum(a ** 3))(x)
    np.testing.assert_allclose(_host(h), np.diag(6 * xh), rtol=1e-12, atol=1e-15)


CONTROL = {
    "cond": lambda a: fg.lax.cond(fnp.sum(a) > 0, lambda v: v + 1.0, lambda v: v * 2.0, a),
    "fori": lambda a: fg.lax.fori_loop(0, 3, lambda i, v: v * 1.5 + i, a),
    "while": lambda a: fg.lax.while_loop(lambda v: fnp.max(v) < 10.0,
                                         lambda v: v * 2.0 + 1.0, a),
    "scan": lambda a: fg.lax.scan(lambda c, r: (c + r, c * r), fnp.zeros_like(a[0]), a)[1],
    "switch": lambda a: fg.lax.switch(1, [lambda v: v, lambda v: fnp.cos(v)], a),
}


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(CONTROL))
def test_gpu_control_flow_in_jit(name: str) -> None:
    _cupy()
    xh = np.abs(np.random.default_rng(3).standard_normal((3, 4))) + 0.1
    f = CONTROL[name]
    got = fg.jit(f, backend="cupy")(fg.device_put(xh, "cuda"))
    assert _on_cuda(got)
    np.testing.assert_allclose(_host(got), _host(fg.jit(f)(xh)), rtol=1e-12)
    g = fg.grad(lambda a: fnp.sum(f(a)))
    if name != "while":  # reverse mode needs a static trip count
        np.testing.assert_allclose(_host(fg.jit(g, backend="cupy")(fg.device_put(xh, "cuda"))),
                                   _host(g(xh)), rtol=1e-10)


@pytest.mark.gpu
def test_gpu_random_bits_match_the_host() -> None:
    _cupy()
    key = fg.random.PRNGKey(42)
    # The bits, and what is made from them with exact arithmetic, are the host's bits.
    for f in (lambda k: fg.random.uniform(k, (7,)), lambda k: fg.random.randint(k, (6,), 0, 100),
              lambda k: fg.random.bits(fg.random.split(k)[1], (4,)),
              lambda k: fg.random.permutation(k, 9)):
        host = _host(fg.jit(f)(key))
        dev = fg.jit(f, backend="cupy")(fg.device_put(key, "cuda"))
        assert _on_cuda(dev)
        np.testing.assert_array_equal(_host(dev), host)
    # Through a transcendental function (erfinv) the device's libm may differ in the last bit.
    f = lambda k: fg.random.normal(k, (5, 3))
    np.testing.assert_allclose(_host(fg.jit(f, backend="cupy")(fg.device_put(key, "cuda"))),
                               _host(f(key)), rtol=1e-14)


@pytest.mark.gpu
def test_gpu_torch_face() -> None:
    _cupy()
    torch = pytest.importorskip("funcgrad.torch")
    t = torch.arange(6.0).reshape(2, 3)
    for moved in (t.cuda(), t.to("cuda"), torch.ones(2, 3, device="cuda") * t.cuda()):
        assert moved.device.type == "cuda" and moved.is_cuda
    np.testing.assert_array_equal(t.cuda().cpu().numpy(), t.numpy())
    # a Linear + SGD step on the device equals the same step on the host
    torch.manual_seed(0)
    host_model = torch.nn.Linear(3, 2)
    dev_model = torch.nn.Linear(3, 2).to("cuda")
    with torch.no_grad():
        dev_model.weight.copy_(host_model.weight.cuda())
        dev_model.bias.copy_(host_model.bias.cuda())
    x = torch.randn(5, 3)
    target = torch.randn(5, 2)
    for model, xx, tt in ((host_model, x, target), (dev_model, x.cuda(), target.cuda())):
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        opt.zero_grad()
        loss = ((model(xx) - tt) ** 2).mean()
        loss.backward()
        opt.step()
    assert dev_model.weight.device.type == "cuda" and dev_model.weight.grad.is_cuda
    np.testing.assert_allclose(dev_model.weight.detach().cpu().numpy(),
                               host_model.weight.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(dev_model.bias.detach().cpu().numpy(),
                               host_model.bias.detach().numpy(), rtol=1e-6)
    a = torch.ones(3, device="cuda", requires_grad=True)
    (a * a).sum().backward()
    assert a.grad.is_cuda
    np.testing.assert_array_equal(a.grad.cpu().numpy(), [2.0, 2.0, 2.0])


# ------------------------------------- every fusable primitive x dtype through NVRTC

KERNEL_DTYPES = ("bool", "uint8", "int32", "int64", "float16", "bfloat16", "float32",
                 "float64")
SPECIAL_ARGS: dict[str, Any] = {
    "convert_element_type": lambda lax, x: lax.convert_element_type(
        x, np.float32 if x.dtype != np.float32 else np.int32),
    "integer_pow": lambda lax, x: lax.integer_pow(x, 3),
    # lax.round's default (ties away from zero) composes floor & co.; round_p is to-even
    "round": lambda lax, x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
    "select": lambda lax, x: lax.select(x == x, x, x),  # noqa: PLR0124 - a mask of x's shape
}


def _fusable_kernels() -> tuple[list[Any], set[str]]:
    """One kernel per fusable primitive and dtype it accepts."""
    from funcgrad import lax
    from funcgrad.backends.cuda_codegen import Kernel
    from funcgrad.backends.cupy_backend import build_program
    from funcgrad.backends.fusion import FusedStep
    from funcgrad.core import PRIMITIVES

    kernels, names = [], set()
    for name, prim in sorted(PRIMITIVES.items()):
        if prim.fusion != "elementwise":
            continue
        fn = getattr(lax, prim.lax if isinstance(prim.lax, str) else name)
        for dt in KERNEL_DTYPES:
            x = np.ones((3, 2), fg.numpy.dtype(dt))
            for arity in (1, 2, 3):
                if name in SPECIAL_ARGS:
                    call = lambda *a, n=name: SPECIAL_ARGS[n](lax, *a)
                else:
                    call = lambda *a, f=fn, k=arity: f(*a[:k])
                try:
                    prog = build_program(fg.make_jaxpr(call)(*[x] * arity))
                except Exception:  # noqa: BLE001 - a dtype or arity the primitive rejects
                    continue
                if any(e.primitive is prim for st in prog.plan.steps
                       if isinstance(st, FusedStep) for e in st.eqns):
                    kernels.extend(k for k in prog.steps if isinstance(k, Kernel))
                    names.add(name)
                break
    return kernels, names


@pytest.mark.slow
def test_every_fusable_primitive_and_dtype_compiles_with_cupys_options() -> None:
    if not HAVE_TOOLS:
        pytest.skip("NVRTC (cupy_backends) is not installed")
    import fakecupy

    from funcgrad.backends.cuda_codegen import PREAMBLE, cupy_options, nvrtc_compile
    from funcgrad.core import PRIMITIVES

    if fakecupy.installed():
        pytest.skip("the real CuPy is hidden by the emulator")
    from funcgrad.backends.cuda_codegen import HALF_PREAMBLE, Layout

    kernels, names = _fusable_kernels()
    fusable = {n for n, p in PRIMITIVES.items() if p.fusion == "elementwise"}
    # stop_gradient is erased when tracing; every other one must reach a kernel
    assert fusable - names <= {"stop_gradient"}, sorted(fusable - names)
    assert len(kernels) > 2 * len(names)
    assert any(k.half for k in kernels)
    body = {}
    every_read: set[Any] = set()
    for i, k in enumerate(kernels):
        n = len(k.slots)
        # Every kernel contiguous in 32-bit index arithmetic; the other reads (strided,
        # first-element, by-value) and index widths once per signature of operand and
        # result dtypes: the indexing code differs by dtype and arity, not by primitive.
        # (All five layouts of all 315 kernels took NVRTC 40 s, a tenth of a CI run.)
        signature = (tuple(v.aval.dtype for v, _ in k.slots),
                     tuple(str(d) for _, d in k.results))
        layouts = [Layout("flat", ("c",) * n, "int")]
        if signature not in every_read:
            every_read.add(signature)
            layouts += [Layout("strided", ("s",) * n), Layout("flat", ("0",) * n),
                        Layout("flat", ("v",) * n), Layout("strided", ("s",) * n, "int")]
        for layout in layouts:
            src = k.source_for(layout, preamble=False).replace(
                f"void {k.kernel_name(layout)}(", f"void k{i}_{len(body)}(")
            body[src] = None
    source = PREAMBLE + HALF_PREAMBLE + "\n".join(body)
    cubin = nvrtc_compile(source, "all_fusable.cu", options=cupy_options())
    assert cubin[:4] == b"\x7fELF"


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int32",
                                   "uint8"])
def test_every_reduction_layout_compiles_with_cupys_options(dtype: str) -> None:
    if not HAVE_TOOLS:
        pytest.skip("NVRTC (cupy_backends) is not installed")
    import fakecupy

    from funcgrad.backends.cuda_codegen import Layout, cupy_options, finish_source, nvrtc_compile
    from funcgrad.backends.cupy_backend import build_program

    if fakecupy.installed():
        pytest.skip("the real CuPy is hidden by the emulator")
    x = np.ones((4, 6), fg.numpy.dtype(dtype))
    texts = []
    for kind in ("sum", "max", "min"):
        prog = build_program(fg.make_jaxpr(
            lambda a, k=kind: getattr(fnp, k)(a * a, axis=1))(x))
        (k,) = [s for s in prog.steps if not hasattr(s, "eqn")]
        for layout in (Layout("row", ("s",), "int"), Layout("row", ("v",), "long long", True),
                       Layout("col", ("s",), "int", True), Layout("col", ("0",)),
                       Layout("nd", ("s",), "int"), Layout("nd", ("s",))):
            texts.append(k.source_for(layout).replace(f"void {k.kernel_name(layout)}(",
                                                      f"void {kind}{len(texts)}("))
        for idx in ("int", "long long"):
            name, text = finish_source(k, idx)
            texts.append(text.replace(f"void {name}(", f"void {kind}{len(texts)}("))
    for i, text in enumerate(texts):
        assert nvrtc_compile(text, f"r{i}.cu", options=cupy_options())[:4] == b"\x7fELF"


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_gpu_half_precision_runs_in_kernels(dtype: str) -> None:
    """float16 and bfloat16 chains and reductions are fused kernels that compute in float
    and round every result to the half type, as NumPy (ml_dtypes) does."""
    _cupy()
    dt = fg.numpy.dtype(dtype)
    xh = np.linspace(-2.0, 2.0, 9).astype(dt)
    f = lambda a: fnp.sin(a) * 2.0 + a
    jf = fg.jit(f, backend="cupy")
    short = {"float16": "'f16[", "bfloat16": "'bf16["}[dtype]
    assert any(short in str(k["inputs"]) for k in jf.lower(xh).kernels())
    got = jf(fg.device_put(xh, "cuda"))
    assert _on_cuda(got) and got.dtype == dt
    ref = (np.sin(xh) * np.asarray(2.0, dt) + xh)
    np.testing.assert_array_equal(_host(got).astype(np.float64), ref.astype(np.float64))
    big = np.random.default_rng(0).standard_normal((3, 5000)).astype(dt)
    s = fg.jit(lambda a: fnp.sum(a * a, axis=1), backend="cupy")(fg.device_put(big, "cuda"))
    assert s.dtype == dt
    np.testing.assert_allclose(_host(s).astype(np.float64),
                               (big.astype(np.float64) ** 2).sum(1), rtol=1e-2)


@pytest.mark.slow
def test_the_gpu_benchmark_script_runs_on_the_emulator(tmp_path: Any) -> None:
    """benchmarks/bench_gpu.py (what scripts/gpu_check.sh runs on a lent GPU) goes through
    every row and writes its report; on the emulator its times mean nothing."""
    if not HAVE_TOOLS:
        pytest.skip("NVRTC (cupy_backends) is not installed")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = tmp_path / "gpu.json"
    res = subprocess.run([sys.executable, os.path.join(root, "benchmarks", "bench_gpu.py"),
                          "--emulate", "--repeat", "1", "--json", str(out)],
                         capture_output=True, text=True, timeout=600, cwd=root, check=False)
    assert res.returncode == 0, res.stderr[-3000:]
    import json

    report = json.loads(out.read_text())
    assert report["emulated"] is True
    assert {r["kind"] for r in report["reductions"]} == {"full", "row", "column"}
    assert report["chain"][0]["kernels"] == 1 and report["chain"][0]["modelled_speedup"] > 5
    assert len(report["goals"]) == 5
    assert report["steps"]["mlp_step_s"] > 0 and report["steps"]["cnn_step_s"] > 0


@pytest.mark.gpu
@settings(max_examples=10, deadline=None, derandomize=True, database=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(max_dims=2, max_side=6),
                  elements=st.floats(-1.0, 1.0)),
       hnp.arrays(np.int32, hnp.array_shapes(max_dims=2, max_side=6)))
def test_gpu_kernels_with_cuda_only_functions(v: np.ndarray, bits: np.ndarray) -> None:
    """erfinv, __popc and __clz in fused kernels (C++ has none of them: the host harness
    defines them as CUDA does) give the host's values."""
    _cupy()
    import scipy.special  # noqa: PLC0415

    with fg.enable_x64():
        for dtype, tol in ((np.float64, 1e-13), (np.float32, 2e-6)):
            x = v.astype(dtype)
            got = _host(fg.jit(lambda a: lax.erf_inv(a) * 2.0, backend="cupy")(
                fg.device_put(x, "cuda")))
            want = scipy.special.erfinv(x.astype(np.float64)) * 2.0
            np.testing.assert_allclose(got, want.astype(dtype), rtol=tol, atol=tol)
        f = lambda a: lax.population_count(a) * 100 + lax.clz(a)  # noqa: E731
        np.testing.assert_array_equal(
            _host(fg.jit(f, backend="cupy")(fg.device_put(bits, "cuda"))), _host(f(bits)))
