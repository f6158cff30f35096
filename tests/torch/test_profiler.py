"""``torch.profiler`` and ``torch.autograd.profiler``: what is recorded, the schedule, the
tables and traces; against real torch where it is installed.

funcgrad records the operators a program calls (Tensor methods, ``torch`` and
``torch.nn.functional`` functions), backward nodes and ``record_function`` blocks, not the
ATen operators PyTorch runs inside them (docs/sharp_bits.md): the comparisons check that
what funcgrad shows, PyTorch shows too, with the same counts and shapes."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft
from funcgrad.torch import _profiling
from funcgrad.torch.profiler import (
    ProfilerAction,
    ProfilerActivity,
    profile,
    record_function,
    schedule,
    tensorboard_trace_handler,
)


def _program(L: Any) -> None:
    L.manual_seed(0)
    model = L.nn.Sequential(L.nn.Linear(8, 16), L.nn.ReLU(), L.nn.Linear(16, 2))
    x = L.randn(4, 8)
    with L.profiler.record_function("model_inference"):
        y = model(x)
    (y * 2).exp().sum().backward()


def _counts(L: Any, **kw: Any) -> dict[str, Any]:
    with L.profiler.profile(activities=[L.profiler.ProfilerActivity.CPU], **kw) as prof:
        _program(L)
    return {e.key: e.count for e in prof.key_averages()}


def test_what_is_recorded_pytorch_records_too_with_its_counts() -> None:
    ours = _counts(ft)
    # (Backward nodes follow funcgrad's graph: Linear's bias gradient, for one, passes an
    # ExpandBackward0 where PyTorch's has none; the nodes named here are PyTorch's too.)
    for key in ("model_inference", "aten::linear", "aten::relu", "aten::mul", "aten::exp",
                "aten::sum", "autograd::engine::evaluate_function: ExpBackward0",
                "ExpBackward0", "torch::autograd::AccumulateGrad"):
        assert key in ours, key
    assert ours["aten::linear"] == 2 and ours["model_inference"] == 1
    torch = pytest.importorskip("torch")
    theirs = _counts(torch)
    for key, n in ours.items():
        if key.startswith("aten::"):
            assert key in theirs, key
        # (PyTorch's backward nodes run ATen operators too: mul, sum... counted with the
        # forward's; these four run only forward.)
        if key in ("model_inference", "aten::linear", "aten::relu", "aten::exp"):
            assert theirs[key] == n, key


def test_input_shapes_as_pytorch_records_them() -> None:
    def shapes(L: Any) -> dict[str, Any]:
        x = L.ones(2, 3)
        with L.profiler.profile(record_shapes=True) as prof:
            y = (x * 2).exp()
            L.matmul(y, L.ones(3, 4))
        return {e.key: e.input_shapes for e in prof.key_averages(group_by_input_shape=True)}

    ours = shapes(ft)
    assert ours["aten::mul"] == [[2, 3], []] and ours["aten::matmul"] == [[2, 3], [3, 4]]
    torch = pytest.importorskip("torch")
    theirs = shapes(torch)
    for key in ("aten::mul", "aten::exp", "aten::matmul"):
        assert ours[key] == theirs[key], key


def test_ranges_nest_and_times_add_up() -> None:
    with profile() as prof:
        with record_function("outer"):
            with record_function("inner"):
                ft.ones(3, requires_grad=True).exp()
    events = {e.name: e for e in prof.events()}
    outer, inner, exp = events["outer"], events["inner"], events["aten::exp"]
    assert exp.cpu_parent is inner and inner.cpu_parent is outer and outer.cpu_parent is None
    assert [c.name for c in outer.cpu_children] == ["inner"]
    assert outer.cpu_time_total >= inner.cpu_time_total >= exp.cpu_time_total > 0
    assert outer.self_cpu_time_total == pytest.approx(
        outer.cpu_time_total - inner.cpu_time_total)
    total = prof.key_averages().self_cpu_time_total
    assert total == pytest.approx(sum(e.self_cpu_time_total for e in prof.events()))
    assert prof.key_averages().total_average().key == "Total"


def test_operators_are_wrapped_only_while_profiling() -> None:
    original = ft.Tensor.__dict__["exp"]
    with profile():
        assert ft.Tensor.__dict__["exp"] is not original
        with pytest.raises(ValueError):
            with profile():
                raise ValueError("inside a nested profile")
        assert ft.Tensor.__dict__["exp"] is not original
    assert ft.Tensor.__dict__["exp"] is original
    assert not _profiling._wrapped and _profiling.state.recorder is None


def _table_lines(L: Any) -> list[str]:
    with L.profiler.profile() as prof:
        for name in ("first block", "second", "first block"):
            with L.profiler.record_function(name):
                pass
    return prof.key_averages().table(sort_by="count", row_limit=5).splitlines()


def test_table_layout_is_pytorchs() -> None:
    lines = _table_lines(ft)
    assert len(lines) == 7 and lines[-1].startswith("Self CPU time total: ")
    assert lines[0] == lines[2] == lines[-2] and set(lines[0]) == {"-", " "}
    rows = [re.split(r"\s{2,}", ln.strip()) for ln in lines[3:5]]
    assert [(r[0], r[-1]) for r in rows] == [("first block", "2"), ("second", "1")]
    torch = pytest.importorskip("torch")
    theirs = _table_lines(torch)
    assert lines[:3] == theirs[:3]
    assert [r.split("  ")[0] for r in lines[:-1]] == [r.split("  ")[0] for r in theirs[:-1]]
    # The percentages of Self CPU time add up to 100 in both.
    shares = [float(re.split(r"\s{2,}", ln.strip())[1][:-1]) for ln in lines[3:5]]
    assert sum(shares) == pytest.approx(100, abs=0.02)


@settings(max_examples=40, deadline=None)
@given(wait=st.integers(0, 3), warmup=st.integers(1, 3), active=st.integers(1, 3),
       repeat=st.integers(0, 3), skip_first=st.integers(0, 3),
       skip_first_wait=st.integers(0, 1))
def test_schedule_matches_pytorch(wait: int, warmup: int, active: int, repeat: int,
                                  skip_first: int, skip_first_wait: int) -> None:
    torch = pytest.importorskip("torch")
    kw = dict(wait=wait, warmup=warmup, active=active, repeat=repeat, skip_first=skip_first,
              skip_first_wait=skip_first_wait)
    ours, theirs = schedule(**kw), torch.profiler.schedule(**kw)
    assert [ours(i).name for i in range(30)] == [theirs(i).name for i in range(30)]


def _cycles(L: Any, steps: int, **kw: Any) -> list[list[str]]:
    seen: list[list[str]] = []
    x = L.ones(2, requires_grad=True)
    with L.profiler.profile(schedule=L.profiler.schedule(**kw),
                            on_trace_ready=lambda p: seen.append(
                                sorted({e.key for e in p.key_averages()}))) as p:
        for _ in range(steps):
            (x * 2).sum()
            p.step()
    assert p.step_num == steps
    return seen


@pytest.mark.parametrize("kw,steps", [
    (dict(wait=1, warmup=1, active=2, repeat=1), 6),
    (dict(wait=0, warmup=1, active=1), 5),
    (dict(wait=1, warmup=1, active=2, skip_first=1), 3),
])
def test_scheduled_cycles_reach_on_trace_ready(kw: dict[str, int], steps: int) -> None:
    ours = _cycles(ft, steps, **kw)
    # (A cycle cut short by the end of the block holds only its step's range.)
    assert ours and all(c in (["ProfilerStep*", "aten::mul", "aten::sum"], ["ProfilerStep*"])
                        for c in ours)
    torch = pytest.importorskip("torch")
    theirs = _cycles(torch, steps, **kw)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert set(a) <= set(b)


def test_schedule_errors_and_actions() -> None:
    with pytest.raises(AssertionError, match="Invalid profiler schedule arguments"):
        schedule(wait=0, warmup=0, active=0)
    with pytest.warns(UserWarning, match="won't be using warmup"):
        s = schedule(wait=0, warmup=0, active=2)
    assert s(1) is ProfilerAction.RECORD_AND_SAVE
    assert ProfilerActivity.CPU in ft.profiler.supported_activities()


def test_chrome_trace_and_tensorboard_handler(tmp_path: Any) -> None:
    with profile(record_shapes=True) as prof:
        with record_function("step"):
            ft.ones(3, requires_grad=True).exp().sum()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    names = [e["name"] for e in trace["traceEvents"]]
    assert names == ["step", "aten::ones", "aten::exp", "aten::sum"]
    assert all(e["ph"] == "X" and e["dur"] >= 0 for e in trace["traceEvents"])
    handler = tensorboard_trace_handler(str(tmp_path / "tb"), worker_name="w0", use_gzip=True)
    with profile(schedule=schedule(wait=0, warmup=1, active=1), on_trace_ready=handler) as p:
        for _ in range(2):
            ft.ones(2, requires_grad=True).exp()
            p.step()
    (made,) = list((tmp_path / "tb").iterdir())
    assert made.name.startswith("w0.") and made.name.endswith(".pt.trace.json.gz")


def test_profile_memory_counts_the_bytes_of_results() -> None:
    x = ft.ones(1000, requires_grad=True)
    with ft.autograd.profiler.profile(profile_memory=True) as prof:
        x.exp()
    (e,) = [e for e in prof.key_averages() if e.key == "aten::exp"]
    assert e.cpu_memory_usage == 4000
    assert "3.91 KB" in prof.key_averages().table()


def test_legacy_profiler_and_record_function_as_a_decorator() -> None:
    @record_function("double")
    def double(t: Any) -> Any:
        return t * 2

    with ft.autograd.profiler.profile() as prof:
        double(ft.ones(2))
    assert [e.key for e in prof.key_averages()] == ["aten::ones", "double", "aten::mul"]
    assert "double" in str(prof)
    with pytest.raises(RuntimeError, match="Profiler didn't finish running"):
        ft.autograd.profiler.profile(enabled=False).function_events  # noqa: B018
