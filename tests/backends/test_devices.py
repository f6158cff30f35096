"""Devices, placement, and the straight-line Python compiler of the backends."""

from __future__ import annotations

import importlib.util
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import errors as E
from funcgrad.backends.compile_python import CompiledPython, compile_jaxpr
from funcgrad.devices import Backend, Device, get_backend


def cupy_has_device() -> bool:
    if importlib.util.find_spec("cupy") is None:
        return False
    try:
        import cupy

        return int(cupy.cuda.runtime.getDeviceCount()) > 0
    except Exception:  # noqa: BLE001 - no driver or no device
        return False


HAS_GPU = cupy_has_device()


def assign_lines(source: str) -> list[str]:
    return [ln.strip() for ln in source.splitlines()[1:] if " = " in ln]


# ------------------------------------------------------------------ devices


def test_devices_lists_cpu0_first() -> None:
    devs = fg.devices()
    assert devs[0] == Device("cpu", 0)
    assert str(devs[0]) == "cpu:0" and repr(devs[0]) == "CpuDevice(id=0)"
    assert fg.devices("cpu") == [Device("cpu", 0)]
    if not HAS_GPU:
        assert fg.devices() == [Device("cpu", 0)]
        assert fg.devices("cuda") == []


def test_device_value_semantics() -> None:
    assert Device("cpu", 0) == Device("cpu")
    assert Device("cuda", 1) != Device("cuda", 0)
    assert Device("cpu", 0) != "cpu:0"
    assert len({Device("cpu", 0), Device("cpu", 0), Device("cuda", 0)}) == 2


def test_device_put_pytree_to_cpu() -> None:
    tree = {"w": [1.0, np.ones(2, np.float32)], "b": (np.float64(2.0), np.arange(3)),
            "none": None}
    out = fg.device_put(tree, "cpu")
    assert fg.tree_util.tree_structure(out) == fg.tree_util.tree_structure(tree)
    for leaf, orig in zip(fg.tree_util.tree_leaves(out), fg.tree_util.tree_leaves(tree)):
        assert isinstance(leaf, fg.Array)
        np.testing.assert_array_equal(leaf, orig)
        assert leaf.device == Device("cpu", 0)
    assert out["w"][1].dtype == np.float32
    assert out["b"][1].dtype == tree["b"][1].dtype
    for spec in ("cpu:0", Device("cpu", 0)):
        np.testing.assert_array_equal(fg.device_put(np.ones(2), spec), np.ones(2))


def test_device_put_default_is_cpu_and_results_compute() -> None:
    x = fg.device_put(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(fnp.sin(x), np.sin([1.0, 2.0]))
    assert str(x.device) == "cpu:0"


def test_get_backend_names() -> None:
    nb = get_backend("numpy")
    assert isinstance(nb, Backend)
    assert get_backend("cpu") is nb
    assert nb.xp is np and nb.available() and nb.devices() == [Device("cpu", 0)]
    assert nb.owns(np.ones(1)) and not nb.owns([1.0])
    assert get_backend("cuda") is get_backend("cupy") is get_backend("gpu")
    with pytest.raises(E.BackendError, match="unknown backend"):
        get_backend("tpu")


@pytest.mark.skipif(HAS_GPU, reason="CuPy with a CUDA device is installed here")
def test_cupy_backend_reports_unavailable_cleanly() -> None:
    cb = get_backend("cupy")
    assert cb.available() is False
    assert cb.devices() == []
    with pytest.raises(E.DeviceError, match="not available") as ei:
        fg.device_put(np.ones(2), "cuda")
    assert "cpu" in str(ei.value)
    with pytest.raises(E.DeviceError):
        fg.device_put({"a": np.ones(2)}, "cuda:0")
    if importlib.util.find_spec("cupy") is None:
        with pytest.raises(E.BackendError, match="CuPy"):
            cb.xp  # noqa: B018
        with pytest.raises(E.BackendError):
            cb.compile(fg.make_jaxpr(fnp.sin)(np.ones(2)))


@pytest.mark.gpu
def test_device_put_cuda_round_trip() -> None:
    if not get_backend("cupy").available():  # a device, or the emulator (tests/conftest.py)
        pytest.skip("needs CuPy and a CUDA device")
    import cupy

    x = fg.device_put({"a": np.arange(3.0)}, "cuda")["a"]
    assert isinstance(x._value, cupy.ndarray)
    assert x.device == Device("cuda", 0)
    back = fg.device_put(fnp.sin(x), "cpu")
    np.testing.assert_allclose(back, np.sin(np.arange(3.0)))
    # Host data meeting a device array goes to the device, as in JAX.
    y = fnp.add(x, np.ones(3)) * fnp.arange(3.0)
    assert y.device == Device("cuda", 0)
    np.testing.assert_allclose(fg.device_get(y), (np.arange(3.0) + 1) * np.arange(3.0))


# ------------------------------------------------------------------ compile_python

PROGRAMS = {
    "seed": (lambda a, b: fnp.sum(fnp.matmul(a + b, a.T)),
             (np.arange(4.0, dtype=np.float32).reshape(2, 2), np.ones((2, 2), np.float32))),
    "consts": (lambda x: x * np.arange(3.0) + 1.0, (np.ones(3),)),
    "multi_out": (lambda x: (fnp.sin(x), x, 2.0, x * 3.0), (np.linspace(0, 1, 4),)),
    "promote": (lambda x, y: x + y, (np.arange(3, dtype=np.uint8), np.arange(3, dtype=np.int8))),
    "reductions": (lambda x: (fnp.max(x, axis=1), fnp.argmin(x, axis=0), fnp.sum(x)),
                   (np.array([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]]),)),
    "indexing": (lambda x: x[1:, np.array([0, 2])] * x[0, 1], (np.arange(12.0).reshape(3, 4),)),
    "grad": (fg.grad(lambda x: fnp.sum(fnp.tanh(x) * fnp.sin(x))), (np.array([0.1, -0.4, 2.0]),)),
    "grad_pytree": (fg.grad(lambda p, x: fnp.sum((p["w"] @ x + p["b"]) ** 2)),
                    ({"w": np.eye(2) * 0.5, "b": np.array([0.1, 0.2])}, np.array([1.0, -1.0]))),
    "hessian": (fg.hessian(lambda x: fnp.sum(x ** 3) * x[0]), (np.array([1.0, 2.0]),)),
    "jvp": (lambda x, t: fg.jvp(fnp.exp, (x,), (t,)), (np.array([0.5, 1.0]), np.ones(2))),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_compiled_matches_eval(name: str) -> None:
    f, args = PROGRAMS[name]
    cj = fg.make_jaxpr(f)(*args)
    flat = fg.tree_util.tree_leaves(args)
    run = compile_jaxpr(cj, np)
    assert isinstance(run, CompiledPython)
    got = run(*flat)
    want = fg.eval_jaxpr(cj, *flat)
    assert len(got) == len(want) == len(cj.out_avals)
    for g, w, aval in zip(got, want, cj.out_avals):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12)
        assert np.shape(g) == aval.shape
        assert np.asarray(g).dtype == aval.dtype
    # and through the backend interface
    got2 = get_backend("numpy").compile(cj)(*flat)
    for g, w in zip(got2, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12)


def test_compiled_source_is_python_with_one_def() -> None:
    cj = fg.make_jaxpr(lambda x, y: fnp.sin(x) * y)(np.ones(2), np.ones(2))
    src = compile_jaxpr(cj, np).source
    assert src.startswith("def run(a0, a1):")
    assert src.splitlines()[-1].strip().startswith("return [")
    compile(src, "<check>", "exec")
    assert len(assign_lines(src)) == 2


def test_dead_code_is_dropped() -> None:
    def f(x):
        big = fnp.broadcast_to(x, (400, 3))
        unused = fnp.exp(big @ big.T)  # noqa: F841 - expensive, dead
        return fnp.sin(x) * 2.0

    cj = fg.make_jaxpr(f)(np.ones(3))
    names = [e.primitive.name for e in cj.eqns]
    assert "dot_general" in names and "exp" in names  # staged ...
    run = compile_jaxpr(cj, np)
    lines = assign_lines(run.source)
    assert len(lines) == 2  # ... but only sin and mul survive
    np.testing.assert_allclose(run(np.ones(3))[0], 2.0 * np.sin(np.ones(3)))


def test_dead_code_in_grad_program_is_dropped() -> None:
    # the forward pass's own output (the loss) is dead in grad's program
    cj = fg.make_jaxpr(fg.grad(lambda x: fnp.sum(fnp.sin(x) * x)))(np.ones(3))
    live = compile_jaxpr(cj, np)
    assert len(assign_lines(live.source)) < len(cj.eqns)


def test_common_subexpressions_are_merged() -> None:
    cj = fg.make_jaxpr(lambda x: fnp.sin(x) + fnp.sin(x))(np.ones(3))
    assert [e.primitive.name for e in cj.eqns] == ["sin", "sin", "add"]
    run = compile_jaxpr(cj, np)
    lines = assign_lines(run.source)
    assert len(lines) == 2
    assert re.fullmatch(r"(v\d+) = \w+\((v\d+), \2(, out=\2)?\)", lines[1])
    np.testing.assert_allclose(run(np.ones(3))[0], 2 * np.sin(np.ones(3)))


def test_cse_in_grad_program() -> None:
    cj = fg.make_jaxpr(fg.grad(lambda x: fnp.sum(fnp.sin(x) * fnp.sin(x))))(np.ones(3))
    names = [e.primitive.name for e in cj.eqns]
    assert names.count("sin") == 2 and names.count("cos") == 2
    run = compile_jaxpr(cj, np)
    assert len(assign_lines(run.source)) <= len(cj.eqns) - 2
    x = np.array([0.3, 0.6, 0.9])
    np.testing.assert_allclose(run(x)[0], 2 * np.sin(x) * np.cos(x))


def test_cse_respects_params() -> None:
    cj = fg.make_jaxpr(lambda x: (fnp.sum(x, axis=0), fnp.sum(x, axis=1)))(np.ones((2, 3)))
    run = compile_jaxpr(cj, np)
    assert len(assign_lines(run.source)) == 2
    a, b = run(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(a, [3.0, 5.0, 7.0])
    np.testing.assert_array_equal(b, [3.0, 12.0])


def test_cse_merges_equations_with_equal_literals() -> None:
    cj = fg.make_jaxpr(lambda x: x * 2.0 + x * 2.0)(np.ones(3))
    assert len(assign_lines(compile_jaxpr(cj, np).source)) == 2


def test_outputs_are_arrays() -> None:
    cj = fg.make_jaxpr(lambda x: (fnp.sum(x), 1.0, x))(np.ones(3))
    outs = compile_jaxpr(cj, np)(np.arange(3.0))
    for o in outs:
        assert isinstance(o, np.ndarray)
    assert outs[0].shape == () and float(outs[1]) == 1.0


@settings(max_examples=15, deadline=None)
@given(st.lists(st.floats(-3, 3, allow_nan=False), min_size=2, max_size=6))
def test_compiled_matches_eval_on_drawn_values(xs) -> None:
    x = np.array(xs)
    f = fg.grad(lambda x: fnp.sum(fnp.exp(-x * x) * fnp.cos(3.0 * x)) + fnp.max(x))
    cj = fg.make_jaxpr(f)(np.zeros_like(x) + np.arange(len(xs)))  # distinct values
    run = compile_jaxpr(cj, np)
    np.testing.assert_allclose(run(x)[0], fg.eval_jaxpr(cj, x)[0], rtol=1e-12)
