"""Streams on the GPU path, proven on the CuPy emulator (tests/support/fakecupy).

(a) The emulator orders streams as a device does and reports the reads nothing orders
    after their write (``StreamRaceError``): the same program that gives right numbers on
    the host would read half-written memory on a GPU.
(b) funcgrad sends all its work to the current stream and shares nothing across streams
    unordered: a jitted step compiled on one stream runs on another; host scalars of eager
    code are uploaded once and never written.
(c) The PyTorch face's ``torch.cuda``: streams, events, ``wait_stream``, timing, device
    facts and memory figures; the same signatures as PyTorch's; clear errors without a GPU.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest
from gpu_values import host as _host
from gpu_values import need_device

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.errors import DeviceError


def _race() -> type[Exception]:
    from fakecupy._streams import StreamRaceError

    return StreamRaceError


# ============================================================ (a) the emulator's streams


def test_unordered_streams_race_and_events_order_them(fake_cupy: Any) -> None:
    cp = fake_cupy
    s1, s2 = cp.cuda.Stream(non_blocking=True), cp.cuda.Stream(non_blocking=True)
    assert s1.ptr not in (0, s2.ptr)
    with s1:
        assert cp.cuda.get_current_stream() == s1
        a = cp.arange(6.0) * 2
    assert cp.cuda.get_current_stream() == cp.cuda.Stream.null
    with s2, pytest.raises(_race(), match=r"written on <Stream .*wait_event"):
        a + 1
    s2.wait_event(s1.record())
    with s2:
        b = a + 1
    # b was written on s2: reading it on s1 needs ordering again.
    with s1, pytest.raises(_race()):
        b.sum()
    s2.synchronize()
    with s1:
        np.testing.assert_array_equal((b - 1).get(), np.arange(6.0) * 2)


def test_null_stream_and_blocking_streams_wait_for_each_other(fake_cupy: Any) -> None:
    cp = fake_cupy
    a = cp.arange(3.0)  # on the legacy default stream
    with cp.cuda.Stream():  # blocking: ordered with the default stream
        b = a * 2
    c = b + 1  # back on the default stream
    with cp.cuda.Stream(non_blocking=True), pytest.raises(_race()):
        c * 1
    cp.cuda.runtime.deviceSynchronize()
    with cp.cuda.Stream(non_blocking=True):
        np.testing.assert_array_equal((c * 1).get(), [1.0, 3.0, 5.0])


def test_copies_and_kernels_are_stream_work(fake_cupy: Any) -> None:
    cp = fake_cupy
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        x = cp.asarray(np.arange(4, dtype=np.float32))  # the upload is s's work
    with pytest.raises(_race()):
        x.get()  # a copy on the default stream
    np.testing.assert_array_equal(x.get(stream=s), np.arange(4))
    k = cp.RawKernel(r'''extern "C" __global__ void dbl(float* y, const float* x, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 2 * x[i]; }''', "dbl")
    y = cp.empty(4, np.float32)
    with s:
        k((1,), (4,), (y, x, np.int32(4)))  # a kernel's writes belong to its stream
    with pytest.raises(_race()):
        k((1,), (4,), (x, y, np.int32(4)))  # reading y on the default stream
    event = s.record()
    cp.cuda.Stream.null.wait_event(event)
    k((1,), (4,), (x, y, np.int32(4)))
    np.testing.assert_array_equal(x.get(), np.arange(4) * 4)


def test_events_time_and_pools_count_live_arrays(fake_cupy: Any) -> None:
    cp = fake_cupy
    pool = cp.get_default_memory_pool()
    before = pool.used_bytes()
    a = cp.empty((1024,), np.float64)
    assert pool.used_bytes() - before >= a.nbytes
    assert pool.total_bytes() >= pool.used_bytes()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    a.fill(1.0)
    end.record()
    end.synchronize()
    assert cp.cuda.get_elapsed_time(start, end) >= 0.0
    del a
    assert pool.used_bytes() == before
    free, total = cp.cuda.runtime.memGetInfo()
    assert 0 < free <= total


# ============================================== (b) funcgrad's work on the current stream


def test_jitted_step_compiled_on_one_stream_runs_on_another(fake_cupy: Any) -> None:
    cp = fake_cupy
    rng = np.random.default_rng(0)
    wh, xh = rng.standard_normal((4, 3)), rng.standard_normal((8, 4))
    shift = np.linspace(0.0, 1.0, 3)  # a host constant: the program keeps a device copy

    def loss(w: Any, x: Any) -> Any:
        return fnp.mean(fnp.tanh(x @ w + shift + 0.5) ** 2)

    step = fg.jit(lambda w, x: w - 0.1 * fg.grad(loss)(w, x), backend="cupy")
    first = step(wh, xh)  # compiled, constants uploaded, on the default stream
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        w, x = fg.device_put(wh, "cuda"), fg.device_put(xh, "cuda")
        import fakecupy

        with fakecupy.counting() as c:
            out = step(w, x)
            # eager work with Python scalars
            again = fg.grad(lambda v: fnp.sum(fnp.tanh(x @ v) * 2.0))(out) + 1.0
        assert c.null_stream_work == 0 and c.launches > 0
    s.synchronize()
    np.testing.assert_allclose(_host(out), _host(first), rtol=1e-6)
    assert np.all(np.isfinite(_host(again)))


def test_waiting_for_a_value_waits_for_the_stream_that_made_it(fake_cupy: Any) -> None:
    cp = fake_cupy
    torch = pytest.importorskip("funcgrad.torch")
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        y = fg.device_put(np.arange(4.0), "cuda") * 3.0
    with pytest.raises(_race()):
        _host(y)  # read on the default stream, nothing waited
    y.block_until_ready()  # JAX: wait for this value, whichever stream made it
    np.testing.assert_array_equal(_host(y), np.arange(4.0) * 3.0)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        t = torch.ones(3, device="cuda") * 2.0
    torch.cuda.synchronize()  # PyTorch: every stream of the device
    np.testing.assert_array_equal(t.cpu().numpy(), [2.0, 2.0, 2.0])


def test_eager_scalars_upload_once_and_stay_unchanged(fake_cupy: Any) -> None:
    import fakecupy

    torch = pytest.importorskip("funcgrad.torch")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.ReLU(),
                                torch.nn.Linear(8, 2)).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    x, t = torch.randn(5, 3).cuda(), torch.randn(5, 2).cuda()

    def step() -> Any:
        opt.zero_grad()
        loss = ((model(x) - t) ** 2).mean() * 0.5 + 1e-3
        loss.backward()
        opt.step()
        return loss

    step()
    with fakecupy.counting() as c:
        for _ in range(3):
            step()
    assert (c.h2d, c.d2h, c.syncs) == (0, 0, 0)
    # Results made from shared scalars are written in place; the scalars do not change.
    a = torch.full((3,), 2.0, device="cuda")
    a.add_(1.0)
    b = torch.tensor(2.0, device="cuda") * 1.0
    b.mul_(5.0)
    g = torch.tensor(3.0, device="cuda", requires_grad=True)
    g.backward()
    g.grad.add_(10.0)
    fx = fg.device_put(np.zeros(3), "cuda")
    np.testing.assert_array_equal(_host(torch.full((3,), 2.0, device="cuda")), [2.0] * 3)
    np.testing.assert_array_equal(_host(torch.ones(2, device="cuda") * 1.0), [1.0, 1.0])
    np.testing.assert_array_equal(_host(fx + 2.0), [2.0] * 3)
    np.testing.assert_array_equal(_host(fx + 5.0), [5.0] * 3)
    np.testing.assert_array_equal(_host(fx + 10.0), [10.0] * 3)
    h = torch.tensor(3.0, device="cuda", requires_grad=True)
    h.backward()
    assert _host(h.grad) == 1.0 and _host(g.grad) == 11.0 and _host(a).tolist() == [3.0] * 3


EAGER_LOSSES = {
    "scaled": lambda v: fnp.sum(fnp.tanh(v) * 2.0),
    "shifted_mean": lambda v: fnp.mean(v ** 2) + 1.0,
    "leaky": lambda v: fnp.sum(fnp.where(v > 0, v, 0.5 * v)),
    "max_times": lambda v: fnp.max(v) * 3.0,
    "nested": lambda v: fnp.sum(fg.grad(lambda u: fnp.sum(fnp.sin(u) * 0.5))(v) ** 2),
}


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(EAGER_LOSSES))
def test_gpu_eager_grad_with_python_scalars(name: str) -> None:
    """The seed is made on the output's device, so the backward pass's scalar arithmetic
    (a cotangent times 2.0) stays there too."""
    need_device()
    f = EAGER_LOSSES[name]
    xh = np.random.default_rng(3).standard_normal((4, 5))
    g = fg.grad(f)(fg.device_put(xh, "cuda"))
    assert g.device.platform == "cuda"
    np.testing.assert_allclose(_host(g), _host(fg.grad(f)(xh)), rtol=1e-12)


@pytest.mark.gpu
def test_gpu_assignments_with_host_scalars_and_cpu_tensors() -> None:
    need_device()
    torch = pytest.importorskip("funcgrad.torch")
    x = fg.device_put(np.zeros((3, 4)), "cuda")
    ref = np.zeros((3, 4))
    for upd, where in ((lambda a: a.at[1].set(5.0), (1,)), (lambda a: a.at[1, 2].add(2.0),
                                                           (1, 2))):
        got = upd(x)
        expected = ref.copy()
        expected[where] = 5.0 if len(where) == 1 else 2.0
        assert got.device.platform == "cuda"
        np.testing.assert_array_equal(_host(got), expected)
    c = torch.zeros(4, device="cuda")
    c[1] = 5
    c[2:] = torch.tensor([8.0, 9.0])  # a CPU tensor through basic indexing: copy_'s rule
    c[torch.tensor([0])] = torch.tensor(3.0)  # a CPU scalar tensor goes anywhere
    assert c.is_cuda
    np.testing.assert_array_equal(c.cpu().numpy(), [3.0, 5.0, 8.0, 9.0])


# ===================================================================== (c) torch.cuda


@pytest.mark.gpu
def test_gpu_torch_streams_events_and_memory() -> None:
    need_device()
    torch = pytest.importorskip("funcgrad.torch")
    cuda = torch.cuda
    default = cuda.current_stream()  # the emulator runs gpu tests on a stream of their own
    assert cuda.default_stream().cuda_stream == 0 and default.device.type == "cuda"
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3).cuda()
    x = torch.randn(8, 4, device="cuda")
    s = cuda.Stream()
    assert s != default and s.device.type == "cuda"
    assert repr(s).startswith("<torch.cuda.Stream device=cuda:0 cuda_stream=0x")
    # PyTorch's side-stream pattern: wait for the default stream, work, and wait back.
    s.wait_stream(cuda.current_stream())
    with cuda.stream(s):
        assert cuda.current_stream() == s
        loss = model(x).pow(2).mean()
        loss.backward()
    assert cuda.current_stream() == default
    default.wait_stream(s)
    host = torch.nn.Linear(4, 3)
    with torch.no_grad():
        host.weight.copy_(model.weight.cpu())
        host.bias.copy_(model.bias.cpu())
    host(x.cpu()).pow(2).mean().backward()
    np.testing.assert_allclose(model.weight.grad.cpu().numpy(), host.weight.grad.numpy(),
                               rtol=1e-5, atol=1e-6)
    start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    assert repr(start) == "<torch.cuda.Event uninitialized>" and start.query()
    start.record()
    y = x @ x.T
    end.record()
    end.synchronize()
    assert end.query() and start.elapsed_time(end) >= 0.0 and y.is_cuda
    untimed = cuda.Event()
    untimed.record()
    with pytest.raises(ValueError, match="enable_timing=True"):
        start.elapsed_time(untimed)
    cuda.synchronize()
    assert cuda.memory_allocated() > 0
    assert cuda.memory_reserved() >= cuda.memory_allocated()
    free, total = cuda.mem_get_info()
    assert 0 < free <= total
    cuda.empty_cache()
    major, minor = cuda.get_device_capability()
    props = cuda.get_device_properties(0)
    assert (props.major, props.minor) == (major, minor) and props.total_memory >= free
    assert cuda.get_device_name() == props.name and isinstance(props.name, str)
    assert cuda.is_bf16_supported() and props.multi_processor_count > 0
    with cuda.device(0):
        assert cuda.current_device() == 0


def test_torch_cuda_without_a_device_says_so(monkeypatch: Any) -> None:
    torch = pytest.importorskip("funcgrad.torch")
    from funcgrad.backends import cupy_backend

    monkeypatch.setattr(cupy_backend.CupyBackend, "available", lambda self: False)
    for call in (torch.cuda.current_stream, torch.cuda.Stream, torch.cuda.get_device_name,
                 torch.cuda.mem_get_info, lambda: torch.cuda.set_device(0)):
        with pytest.raises(DeviceError, match="cupy backend found no device"):
            call()
    assert torch.cuda.memory_allocated() == 0 and torch.cuda.memory_reserved() == 0
    assert torch.cuda.is_bf16_supported() is False and torch.cuda.device_count() == 0
    torch.cuda.empty_cache()
    torch.cuda.synchronize()
    with torch.cuda.stream(None):
        pass
    assert torch.cuda.Event().query()  # an unrecorded event needs no device


CUDA_NAMES = ("Stream", "Event", "StreamContext", "stream", "current_stream", "default_stream",
              "set_stream", "synchronize", "set_device", "device", "current_device",
              "device_count", "is_available", "get_device_name", "get_device_capability",
              "get_device_properties", "is_bf16_supported", "memory_allocated",
              "memory_reserved", "empty_cache", "mem_get_info", "manual_seed",
              "manual_seed_all")


@pytest.mark.parametrize("name", CUDA_NAMES)
def test_torch_cuda_signatures_match_pytorch(name: str) -> None:
    real = pytest.importorskip("torch")
    ours = pytest.importorskip("funcgrad.torch")

    def params(obj: Any) -> list[tuple[str, Any]]:
        if inspect.isclass(obj):
            # PyTorch's stream and event classes take their arguments in __new__.
            obj = vars(obj).get("__new__") or vars(obj).get("__init__") or obj.__init__
        sig = inspect.signature(obj)
        return [(p.name, p.default) for p in sig.parameters.values()
                if p.name not in ("self", "cls")
                and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]

    theirs = params(getattr(real.cuda, name))
    mine = params(getattr(ours.cuda, name))
    # The arguments PyTorch names, in its order and with its defaults (PyTorch's device
    # and stream defaults are None, as ours).
    assert mine[:len(theirs)] == theirs, (mine, theirs)


def test_stream_contexts_are_per_thread(fake_cupy: Any) -> None:
    import threading

    cp = fake_cupy
    s = cp.cuda.Stream(non_blocking=True)
    seen: list[Any] = []

    def other_thread() -> None:
        with s:
            seen.append(cp.cuda.get_current_stream())
        seen.append(cp.cuda.get_current_stream())

    with s:
        t = threading.Thread(target=other_thread)
        t.start()
        t.join()
        seen.append(cp.cuda.get_current_stream())
    assert seen == [s, cp.cuda.Stream.null, s]
    assert cp.cuda.get_current_stream() == cp.cuda.Stream.null


def test_device_path_keeps_host_results_and_ndarray_subclasses(fake_cupy: Any,
                                                               tmp_path: Any) -> None:
    """A custom_jvp body may return host data while its operands are on the device, and an
    ndarray subclass (a memmap) is host data, not a device buffer."""

    @fg.custom_jvp
    def const(x: Any, y: Any) -> Any:
        return fnp.ones(3)

    const.defjvp(lambda p, t: (const(*p), fnp.zeros(3)))
    np.testing.assert_array_equal(_host(const(fg.device_put(np.ones(3), "cuda"), 2.0)),
                                  np.ones(3))
    mm = np.memmap(tmp_path / "m.bin", dtype=np.float64, mode="w+", shape=(3,))
    mm[:] = 2.0
    np.testing.assert_array_equal(_host(fnp.asarray(mm) * 2.0), [4.0] * 3)


@pytest.mark.gpu
def test_gpu_torch_cuda_device_arguments() -> None:
    need_device()
    torch = pytest.importorskip("funcgrad.torch")
    cuda = torch.cuda
    for dev in ("cuda", "cuda:0", 0, torch.device("cuda", 0), None):
        cuda.synchronize(dev)
        assert isinstance(cuda.get_device_name(dev), str)
        assert cuda.current_stream(dev).device.type == "cuda"
    cuda.set_device("cuda:0")
    cuda.set_device(-1)  # PyTorch: no change
    cuda.set_stream(None)
    assert cuda.Stream(device=-1).device == torch.device("cuda", cuda.current_device())
