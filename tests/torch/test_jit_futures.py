# ruff: noqa: UP006, UP007, UP045 - TorchScript code spells its types with typing's forms
"""``torch.jit`` and ``torch.futures``: model code written for TorchScript runs as Python.

Compared with PyTorch 2.13 where it is installed: what scripted/traced functions and modules
return, the futures' results, errors and chaining, ``jit.isinstance`` on drawn containers.
"""

from __future__ import annotations

import io
import typing

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import funcgrad.torch as ft

# TorchScript is deprecated in PyTorch 2.13; test_deprecation_warnings_as_torch checks them.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _torch():
    return pytest.importorskip("torch", exc_type=ImportError)


class Block(ft.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = ft.nn.Linear(3, 2)

    @ft.jit.ignore
    def debug(self) -> str:
        return "python only"

    @ft.jit.export
    def scaled(self, x):
        return self.lin(x) * 2

    def forward(self, x):
        if not ft.jit.is_scripting() and not ft.jit.is_tracing():
            self.seen = True
        return self.lin(x).relu()


def test_scripted_module_is_the_module_and_shares_parameters():
    m = Block()
    s = ft.jit.script(m)
    assert s.lin.weight is m.lin.weight
    x = ft.tensor(np.linspace(-1, 1, 6).reshape(2, 3).astype(np.float32))
    np.testing.assert_array_equal(s(x).detach().numpy(), m(x).detach().numpy())
    assert s.debug() == "python only" and m.seen
    s(x).sum().backward()
    assert m.lin.weight.grad is not None


def test_traced_function_sees_itself_traced_and_runs_python_each_call():
    seen = []

    def f(x):
        seen.append(ft.jit.is_tracing())
        return x.relu() if x.sum() > 0 else -x

    g = ft.jit.trace(f, ft.ones(2))
    assert seen == [True]
    out = g(ft.tensor([-1.0, -2.0]))
    assert out.tolist() == [1.0, 2.0] and seen == [True, True]
    assert not ft.jit.is_tracing()
    with pytest.raises(RuntimeError, match="example_kwarg_inputs or example_inputs"):
        ft.jit.trace(f)


@pytest.mark.parametrize("lib_name", ["funcgrad", "torch"])
def test_script_trace_fork_and_freeze_as_torch(lib_name):
    L = ft if lib_name == "funcgrad" else _torch()
    m = L.nn.Linear(2, 2)
    x = L.tensor([[1.0, -2.0]])
    traced = L.jit.trace(m, x)
    assert traced.weight is m.weight
    np.testing.assert_allclose(traced(x).detach().numpy(), m(x).detach().numpy())

    def double(t):
        return t * 2

    sf = L.jit.script(double)
    assert sf.name == "double" and sf(L.ones(1)).tolist() == [2.0]
    assert L.jit.wait(L.jit.fork(double, L.ones(2))).tolist() == [2.0, 2.0]
    assert L.futures.wait_all([L.jit.fork(double, L.ones(1))])[0].tolist() == [2.0]
    with pytest.raises(RuntimeError, match="only implemented for modules in eval mode"):
        L.jit.freeze(L.jit.script(m))
    assert L.jit.freeze(L.jit.script(m).eval()) is not None
    assert L.jit.is_scripting() is False and L.jit.is_tracing() is False
    assert L.jit.annotate(typing.List[int], []) == []
    assert L.jit.Final is typing.Final
    with pytest.raises(Exception, match=r"unrecognized fuser option \(name: bad\)"):
        with L.jit.fuser("bad"):
            pass
    old = L.jit.set_fusion_strategy([("STATIC", 3)])
    assert old == [("STATIC", 2), ("DYNAMIC", 10)]
    assert L.jit.set_fusion_strategy(old) == [("STATIC", 3)]


def test_jit_save_load_round_trip_keeps_weights():
    m = ft.nn.Sequential(ft.nn.Linear(3, 4), ft.nn.Tanh(), ft.nn.Linear(4, 1))
    buf = io.BytesIO()
    ft.jit.save(ft.jit.script(m), buf)
    buf.seek(0)
    back = ft.jit.load(buf)
    x = ft.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(back(x).detach().numpy(), m(x).detach().numpy())
    assert back[0].weight is not m[0].weight


def test_pytorch_torchscript_archive_is_refused_clearly():
    torch = _torch()
    buf = io.BytesIO()
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), buf)
    buf.seek(0)
    with pytest.raises(RuntimeError, match="TorchScript archive written by PyTorch"):
        ft.jit.load(buf)


@pytest.mark.parametrize("lib_name", ["funcgrad", "torch"])
def test_futures_complete_once_chain_and_carry_exceptions(lib_name):
    L = ft if lib_name == "funcgrad" else _torch()
    fut = L.futures.Future()
    assert not fut.done()
    chained = fut.then(lambda f: f.value() + 1)
    failing = fut.then(lambda f: 1 / 0)
    calls = []
    fut.add_done_callback(lambda f: calls.append(f.value()))
    fut.set_result(41)
    assert fut.done() and fut.wait() == 41 and chained.wait() == 42 and calls == [41]
    with pytest.raises(RuntimeError, match="error when running the callback: ZeroDivisionError"):
        failing.wait()
    with pytest.raises(RuntimeError, match="can only be marked completed once"):
        fut.set_result(0)
    bad = L.futures.Future()
    bad.set_exception(ValueError("boom"))
    with pytest.raises(ValueError, match="boom"):
        bad.wait()
    both = L.futures.collect_all([fut, chained])
    assert [f.wait() for f in both.wait()] == [41, 42]


@pytest.mark.filterwarnings("default::DeprecationWarning")
def test_deprecation_warnings_as_torch():
    torch = _torch()

    def messages(L):
        import warnings  # noqa: PLC0415

        m = L.nn.Linear(1, 1).eval()
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            L.jit.script(m)
            L.jit.trace(m, L.ones(1, 1))
            L.jit.wait(L.jit.fork(m, L.ones(1, 1)))
            L.jit.freeze(L.jit.script(m))
            buf = io.BytesIO()
            L.jit.save(L.jit.script(m), buf)
            buf.seek(0)
            L.jit.load(buf)
        # PyTorch repeats some while checking a trace; the order of distinct ones is the same.
        return list(dict.fromkeys(str(w.message) for w in got
                                  if w.category is DeprecationWarning))

    assert messages(ft) == messages(torch)


def test_value_of_an_incomplete_future_raises():
    with pytest.raises(RuntimeError):
        ft.futures.Future().value()


_types = st.sampled_from([int, str, float])
_values = st.one_of(st.integers(), st.text(max_size=3),
                    st.floats(allow_nan=False, allow_infinity=False))


@given(st.lists(_values, min_size=1, max_size=4), _types,
       st.dictionaries(st.text(max_size=2), _values, min_size=1, max_size=3),
       st.tuples(_values, _values), _types, _types)
def test_jit_isinstance_matches_torch_on_nonempty_containers(items, t, mapping, pair, a, b):
    torch = _torch()
    cases = [(items, typing.List[t]), (mapping, typing.Dict[str, t]),
             (pair, typing.Tuple[a, b]), (items[0], typing.Optional[t]),
             (None, typing.Optional[t]), (items[0], typing.Union[a, b]),
             (items[0], a | None)]
    for obj, target in cases:
        assert ft.jit.isinstance(obj, target) == torch.jit.isinstance(obj, target), (obj,
                                                                                      target)
