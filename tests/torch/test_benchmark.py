"""``torch.utils.benchmark`` and ``torch.accelerator`` against real torch: the statistics
and printed form of ``Measurement``s built from drawn times, ``Compare``'s tables with
every option, the ``Fuzzer``'s draws for a seed, and ``Timer``'s runs and errors."""

from __future__ import annotations

import random
import re
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft
import funcgrad.torch.utils.benchmark as fb


def _tb() -> Any:
    pytest.importorskip("torch")
    import torch.utils.benchmark as tb  # noqa: PLC0415

    return tb


def _body(m: Any) -> str:
    """A measurement's printed form after its first line (the object's address)."""
    return repr(m).split("\n", 1)[1]


_times = st.lists(st.floats(1e-8, 5.0, allow_nan=False), min_size=1, max_size=12)
_text = st.sampled_from([None, "add", "x + y", "mm (f32)"])
_spec_kw = st.fixed_dictionaries({
    "stmt": st.sampled_from(["x + 1", "torch.mm(a, b)", "y = x * 2\ny.sum()"]),
    "setup": st.sampled_from(["pass", "x = torch.ones(4)", "a = 1\nb = 2"]),
    "label": _text, "sub_label": _text, "description": _text,
    "num_threads": st.sampled_from([1, 4])})


@settings(max_examples=80, deadline=None)
@given(kw=_spec_kw, number=st.integers(1, 1000), times=_times)
def test_measurement_statistics_and_printed_form_match_pytorch(
        kw: dict[str, Any], number: int, times: list[float]) -> None:
    tb = _tb()
    ours = fb.Measurement(number, times, fb.TaskSpec(**kw))
    theirs = tb.Measurement(number, times, tb.TaskSpec(**kw))
    for name in ("median", "mean", "iqr"):
        assert getattr(ours, name) == pytest.approx(getattr(theirs, name), rel=1e-12, abs=0)
    assert ours.times == theirs.times
    assert ours.significant_figures == theirs.significant_figures
    assert ours.has_warnings == theirs.has_warnings
    assert ours.meets_confidence(0.3) == theirs.meets_confidence(0.3)
    assert (ours.title, ours.as_row_name, ours.env, ours.stmt, ours.num_threads) == \
        (theirs.title, theirs.as_row_name, theirs.env, theirs.stmt, theirs.num_threads)
    assert _body(ours) == _body(theirs)
    assert re.match(r"<funcgrad\.torch\.utils\.benchmark\.utils\.common\.Measurement "
                    r"object at 0x[0-9a-f]+>$", repr(ours).split("\n", 1)[0])


@settings(max_examples=200, deadline=None)
@given(x=st.floats(1e-10, 1e4, allow_nan=False), n=st.integers(1, 4))
def test_units_and_significant_figures_match_pytorch(x: float, n: int) -> None:
    tb = _tb()
    assert fb.select_unit(x) == tb.select_unit(x)
    assert fb.trim_sigfig(x, n) == tb.trim_sigfig(x, n)
    unit = tb.select_unit(x)[0]
    assert fb.unit_to_english(unit) == tb.unit_to_english(unit)


def _pair(tb: Any, rows: list[tuple[dict[str, Any], int, list[float]]]) -> tuple[Any, Any]:
    ours = [fb.Measurement(n, t, fb.TaskSpec(**kw)) for kw, n, t in rows]
    theirs = [tb.Measurement(n, t, tb.TaskSpec(**kw)) for kw, n, t in rows]
    return fb.Compare(ours), tb.Compare(theirs)


_cell = st.tuples(
    st.fixed_dictionaries({
        "stmt": st.sampled_from(["x + 1", "x * 2", "torch.mm(a, b)"]),
        "setup": st.just("pass"),
        "label": st.sampled_from(["add", "mul"]),
        "sub_label": st.sampled_from([None, "float", "int"]),
        "description": st.sampled_from(["n=1", "n=64", "n=4096"]),
        "env": st.sampled_from(["A", "BB"]),
        "num_threads": st.sampled_from([1, 2, 8])}),
    st.integers(1, 100), _times)


@settings(max_examples=80, deadline=None)
@given(rows=st.lists(_cell, min_size=1, max_size=10), trim=st.booleans(),
       highlight=st.booleans(), colour=st.sampled_from([None, "rows", "columns"]))
def test_compare_tables_match_pytorch(rows: list[Any], trim: bool, highlight: bool,
                                      colour: str | None) -> None:
    tb = _tb()
    ours, theirs = _pair(tb, rows)
    for c in (ours, theirs):
        if trim:
            c.trim_significant_figures()
        if highlight:
            c.highlight_warnings()
        if colour:
            c.colorize(rowwise=colour == "rows")
    assert str(ours) == str(theirs)


def test_compare_prints_and_extends(capsys: pytest.CaptureFixture[str]) -> None:
    tb = _tb()
    kw = {"stmt": "f(x)", "setup": "pass", "label": "f", "description": "d"}
    ours, theirs = _pair(tb, [(kw, 10, [1e-3, 2e-3])])
    ours.extend_results([fb.Measurement(5, [4e-4], fb.TaskSpec(**{**kw, "sub_label": "g"}))])
    theirs.extend_results([tb.Measurement(5, [4e-4], tb.TaskSpec(**{**kw, "sub_label": "g"}))])
    ours.print()
    mine = capsys.readouterr().out
    theirs.print()
    assert mine == capsys.readouterr().out
    with pytest.raises(ValueError, match=re.escape(
            "Expected an instance of `Measurement`, got <class 'int'> instead.")):
        ours.extend_results([3])


def test_compare_without_descriptions_renders_an_unnamed_column() -> None:
    """PyTorch raises TypeError (len(None)) here; the table is printed instead."""
    table = str(fb.Compare([fb.Measurement(1, [2e-6], fb.TaskSpec("x + 1", "pass"))]))
    lines = table.splitlines()
    assert lines[3] == "      x + 1  |  2.0"
    assert lines[2] == "1 threads: ".ljust(len(lines[1]), "-") and lines[1].endswith("  |     ")


def test_merge_pools_replicates_of_one_task() -> None:
    tb = _tb()
    kw = {"stmt": "s", "setup": "pass", "label": "L"}
    ours = fb.Measurement.merge([fb.Measurement(2, [1.0, 3.0], fb.TaskSpec(**kw)),
                                 fb.Measurement(4, [2.0], fb.TaskSpec(**kw)),
                                 fb.Measurement(1, [5.0], fb.TaskSpec(**{**kw, "env": "e"}))])
    theirs = tb.Measurement.merge([tb.Measurement(2, [1.0, 3.0], tb.TaskSpec(**kw)),
                                   tb.Measurement(4, [2.0], tb.TaskSpec(**kw)),
                                   tb.Measurement(1, [5.0], tb.TaskSpec(**{**kw, "env": "e"}))])
    assert [(m.number_per_run, m.raw_times, m.env) for m in ours] == \
        [(m.number_per_run, m.raw_times, m.env) for m in theirs]


def _fuzzers(mod: Any, dtype: Any, seed: int) -> Any:
    return mod.Fuzzer(
        parameters=[
            mod.FuzzedParameter("k", 1, 64, distribution="loguniform"),
            mod.FuzzedParameter("n", 2, 16, distribution="uniform"),
            mod.FuzzedParameter("scale", 0.5, 2.0, distribution="uniform", strict=True),
            mod.FuzzedParameter("d", 1, 3, distribution="uniform"),
            mod.FuzzedParameter("step", 1, 3, distribution="uniform"),
        ],
        tensors=[
            mod.FuzzedTensor("x", size=("k", "n", 3), steps=("step", 1, 2),
                             probability_contiguous=0.4, dim_parameter="d",
                             max_elements=512, dtype=dtype),
            mod.FuzzedTensor("y", size=("n", "k"), min_elements=4, dtype=dtype),
        ],
        constraints=[lambda params: params["k"] * params["n"] < 400],
        seed=seed)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 2), dtype=st.sampled_from(["float32", "float64", "int32",
                                                               "int64"]))
def test_fuzzer_draws_what_pytorch_draws(seed: int, dtype: str) -> None:
    tb = _tb()
    import torch  # noqa: PLC0415

    ours = list(_fuzzers(fb, getattr(ft, dtype), seed).take(4))
    theirs = list(_fuzzers(tb, getattr(torch, dtype), seed).take(4))
    for (ot, op, oparams), (tt, tp, tparams) in zip(ours, theirs, strict=True):
        assert oparams == tparams
        for name in ("x", "y"):
            assert ot[name].shape == tuple(tt[name].shape)
            assert ot[name].stride() == tt[name].stride()
            np.testing.assert_array_equal(ot[name].numpy(), tt[name].numpy())
            po, pt = op[name], tp[name]
            assert (po["numel"], tuple(po["order"]), po["steps"], po["is_contiguous"],
                    po["dtype"]) == (pt["numel"], tuple(pt["order"]), pt["steps"],
                                     pt["is_contiguous"], pt["dtype"])


def test_fuzzer_aliases_custom_distributions_and_errors() -> None:
    import numpy.random as npr  # noqa: PLC0415

    fuzzer = fb.Fuzzer(
        parameters=[fb.FuzzedParameter("m", 4, 9, distribution="uniform"),
                    fb.FuzzedParameter("n", distribution={1: 0.5, fb.ParameterAlias("m"): 0.5})],
        tensors=[fb.FuzzedTensor("x", size=("m",)), fb.FuzzedTensor("y", size=("n",))],
        seed=3)
    seen = set()
    for tensors, _, params in fuzzer.take(40):
        assert params["n"] in (1, params["m"])
        assert tensors["y"].shape == (params["n"],)
        seen.add(params["n"] == 1)
    assert seen == {True, False}
    assert fuzzer.rejection_rate == 0.0
    with pytest.raises(AssertionError, match="Distribution is not normalized"):
        fb.FuzzedParameter("p", distribution={1: 0.5, 2: 0.7})
    with pytest.raises(AssertionError, match="Unknown distribution: normal"):
        fb.FuzzedParameter("p", 1, 2, distribution="normal")
    with pytest.raises(ValueError, match="Duplicate names in parameters and tensors"):
        fb.Fuzzer([fb.FuzzedParameter("x", 1, 2, distribution="uniform")],
                  [fb.FuzzedTensor("x", size=(2,))])
    cyc = fb.Fuzzer([fb.FuzzedParameter("a", distribution={fb.ParameterAlias("b"): 1.0}),
                     fb.FuzzedParameter("b", distribution={fb.ParameterAlias("a"): 1.0})], [])
    with pytest.raises(ValueError, match="ParameterAlias cycle detected"):
        next(cyc.take(1))
    never = fb.Fuzzer([fb.FuzzedParameter("a", 1, 2, distribution="uniform")], [],
                      constraints=[lambda params: False])
    with pytest.raises(ValueError, match="Failed to generate a set of valid parameters."):
        next(never.take(1))
    assert never.rejection_rate == 1.0
    p = fb.FuzzedParameter("q", 2, 4, distribution="loguniform")
    assert all(2 <= p.sample(npr.RandomState(s)) <= 4 for s in range(20))


def test_timer_runs_the_statement_with_its_setup_and_globals() -> None:
    calls: list[int] = []
    t = fb.Timer("f(x)", setup="x = torch.arange(3.0)", globals={"f": calls.append},
                 label="f", num_threads=2)
    m = t.timeit(50)
    # A warm-up of max(50 // 100, 2) runs, then the 50 timed ones.
    assert len(calls) == 52 and m.number_per_run == 50 and len(m.raw_times) == 1
    assert [c.tolist() for c in calls[:1]] == [[0.0, 1.0, 2.0]]
    assert m.task_spec == fb.TaskSpec("f(x)", "x = torch.arange(3.0)", label="f",
                                      num_threads=2)
    before = ft.get_num_threads()
    fb.Timer("seen.append(torch.get_num_threads())", globals={"seen": calls},
             num_threads=1).timeit(3)
    assert calls[-1] == 1 and ft.get_num_threads() == before


def test_blocked_and_adaptive_autorange_pick_block_sizes() -> None:
    # A clock that only the statement moves: every run takes exactly 1 us, reading the
    # clock costs nothing (the 1 ns floor).
    clock = [0.0]
    t = fb.Timer("clock[0] += 1e-6", globals={"clock": clock}, timer=lambda: clock[0])
    m = t.blocked_autorange(min_run_time=0.05)
    # The first power of ten whose block is 1e4 times the overhead and at least
    # min_run_time / 1000 long: 100 runs (100 us); then blocks until 0.05 s have passed.
    assert m.number_per_run == 100
    assert 499 <= len(m.raw_times) <= 501
    np.testing.assert_allclose(m.times, 1e-6, rtol=1e-6)
    log: list[tuple[int, float]] = []
    m = t.adaptive_autorange(min_run_time=0.01, max_run_time=0.5,
                             callback=lambda n, s: log.append((n, s)))
    # Equal times are confident after four blocks; min_run_time still asks for 0.01 s.
    assert m.number_per_run == 100 and 99 <= len(m.raw_times) <= 101
    assert len(log) == len(m.raw_times) and log[0][0] == 100
    m = fb.Timer("clock[0] += 1e-6 * (1 + 99 * rng.random() ** 4)",
                 globals={"clock": clock, "rng": random.Random(0)}, timer=lambda: clock[0])\
        .adaptive_autorange(threshold=0.001, min_run_time=0.001, max_run_time=0.02)
    # Runs of 1 to 100 us drawn at random: blocks of ten spread far more than 0.1%, so
    # max_run_time ends it.
    assert 0.02 <= sum(m.raw_times) <= 0.03


def test_timer_errors_match_pytorch() -> None:
    tb = _tb()
    cases: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((lambda: 0,), {}), (("x",), {"language": "fortran"}),
        (("x",), {"global_setup": "#include <x>"})]
    for args, kw in cases:
        with pytest.raises(ValueError) as want:
            tb.Timer(*args, **kw)
        with pytest.raises(ValueError) as got:
            fb.Timer(*args, **kw)
        assert str(got.value) == str(want.value)
    for method in ("repeat", "autorange"):
        with pytest.raises(NotImplementedError, match=re.escape("See `Timer.blocked_autorange.`")):
            getattr(fb.Timer(), method)()
    with pytest.raises(ValueError, match="libtorch"):
        fb.Timer("x", language="cpp")
    with pytest.raises(OSError, match="Valgrind"):
        fb.Timer().collect_callgrind()


def test_accelerator_without_a_device_matches_pytorch() -> None:
    torch = pytest.importorskip("torch")
    if ft.cuda.is_available():
        pytest.skip("a device is present")
    assert ft.accelerator.is_available() is torch.accelerator.is_available() is False
    assert ft.accelerator.current_accelerator() is None
    assert ft.accelerator.current_accelerator(True) is torch.accelerator.current_accelerator(True)
    assert ft.accelerator.device_count() == torch.accelerator.device_count() == 0
    for name, args in [("synchronize", ()), ("current_device_index", ()),
                       ("empty_cache", ()),
                       ("memory_allocated", ()), ("set_device_index", (0,))]:
        with pytest.raises(RuntimeError) as want:
            getattr(torch.accelerator, name)(*args)
        with pytest.raises(RuntimeError) as got:
            getattr(ft.accelerator, name)(*args)
        assert str(got.value) == str(want.value)


@pytest.mark.gpu
def test_timer_waits_for_the_device_and_the_accelerator_names_it() -> None:
    from gpu_values import need_device

    need_device()
    assert ft.accelerator.current_accelerator() == ft.device("cuda")
    assert ft.accelerator.device_count() >= 1
    assert ft.accelerator.current_device_index() == ft.cuda.current_device()
    x = ft.ones(1024, device="cuda")
    m = fb.Timer("(x * 2).sum()", globals={"x": x}).timeit(5)
    assert m.times[0] > 0
    try:
        import fakecupy  # noqa: PLC0415
    except ImportError:
        return
    if fakecupy.installed():
        with fakecupy.counting() as c:
            fb.timer()
        assert c.syncs >= 1


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "rand", "randn"])
def test_factories_take_size_by_keyword_as_pytorch(name: str) -> None:
    """``torch.rand(size=...)`` (the Fuzzer's default constructor calls it so)."""
    torch = pytest.importorskip("torch")
    ft.manual_seed(5)
    torch.manual_seed(5)
    ours = getattr(ft, name)(size=(2, 3), dtype=ft.float64)
    theirs = getattr(torch, name)(size=(2, 3), dtype=torch.float64)
    assert ours.shape == tuple(theirs.shape)
    if name != "empty":
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    with pytest.raises(TypeError) as want:
        getattr(torch, name)(2, size=(3,))
    with pytest.raises(TypeError) as got:
        getattr(ft, name)(2, size=(3,))
    if name in ("zeros", "ones", "empty"):  # rand's text lists its overloads
        assert str(got.value) == str(want.value)
