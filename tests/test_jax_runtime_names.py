"""JAX's top-level config switches, stages, monitoring, profiler and runtime helpers,
checked against JAX (installed) for values and errors."""

from __future__ import annotations

import gzip
import json
import pathlib
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp

jax = pytest.importorskip("jax")
jnp = jax.numpy
# Compared with JAX in its default 32-bit mode (tests that need 64 bits say so).
pytestmark = pytest.mark.x32

# (no subnormals: XLA flushes them to zero, NumPy keeps them)
floats = st.floats(-3.0, 3.0, allow_nan=False, width=64, allow_subnormal=False)


# ------------------------------------------------------------------ no_tracing / no_execution


def test_no_tracing_raises_on_a_cache_miss_only() -> None:
    f = fg.jit(lambda x: x * 3.0)
    jf = jax.jit(lambda x: x * 3.0)
    f(fnp.ones(3))
    jf(jnp.ones(3))
    with fg.no_tracing(), jax.no_tracing():
        np.testing.assert_array_equal(f(fnp.ones(3)), jf(jnp.ones(3)))
        with pytest.raises(RuntimeError, match="no_tracing"):
            jf(jnp.ones(4))
        with pytest.raises(RuntimeError, match="no_tracing"):
            f(fnp.ones(4))
        with pytest.raises(RuntimeError, match="no_tracing"):
            fg.make_jaxpr(lambda x: x * 2.0)(1.0)
    f(fnp.ones(4))  # the switch is off again


def test_no_execution_raises_on_compiled_and_eager_work() -> None:
    x = fnp.ones(3)
    with fg.no_execution():
        with pytest.raises(RuntimeError, match="no_execution"):
            fg.jit(lambda x: x * 2.0)(x)
        with pytest.raises(RuntimeError, match="no_execution"):
            _ = x + 1
        # Staging runs nothing (as in JAX).
        assert "mul" in str(fg.make_jaxpr(lambda x: x * 2.0)(x))
    with jax.no_execution(), pytest.raises(RuntimeError, match="no_execution"):
        jax.jit(lambda x: x * 2.0)(jnp.ones(3))
    np.testing.assert_array_equal(x + 1, np.full(3, 2.0))


# ------------------------------------------------------------------------------- PRNG keys


@pytest.mark.parametrize("mode", ["allow", "warn", "error"])
def test_legacy_prng_key_modes_as_jax(mode: str) -> None:
    def outcome(lib: object) -> tuple[str, object]:
        with warnings.catch_warnings(record=True) as w, lib.legacy_prng_key(mode):  # type: ignore[attr-defined]
            warnings.simplefilter("always")
            try:
                v = np.asarray(lib.random.normal(lib.random.PRNGKey(3), (2,)))  # type: ignore[attr-defined]
            except ValueError as e:
                return "error", str(e)
        msgs = [str(m.message) for m in w if "Legacy uint32" in str(m.message)]
        return ("warn", msgs[0]) if msgs else ("ok", v.tolist())

    ours, theirs = outcome(fg), outcome(jax)
    assert ours[0] == theirs[0]
    if ours[0] == "ok":
        np.testing.assert_array_equal(ours[1], theirs[1])
    else:
        assert ours[1] == theirs[1]
    # Typed keys are never legacy.
    with fg.legacy_prng_key(mode):
        fg.random.normal(fg.random.key(0))


def test_legacy_prng_key_rejects_unknown_values() -> None:
    with pytest.raises(ValueError), jax.legacy_prng_key("sometimes"):
        pass
    with pytest.raises(ValueError, match="LegacyPrngKeyState"), fg.legacy_prng_key("sometimes"):
        pass
    assert fg.config.jax_legacy_prng_key == "allow"


def test_default_prng_impl() -> None:
    with fg.default_prng_impl("threefry2x32"):
        np.testing.assert_array_equal(fg.random.key_data(fg.random.key(5)),
                                      jax.random.key_data(jax.random.key(5)))
    with pytest.raises(ValueError, match="enum"), jax.default_prng_impl("nope"):
        pass
    with pytest.raises(ValueError, match="enum"), fg.default_prng_impl("nope"):
        pass
    # JAX has rbg; funcgrad says clearly that it has threefry2x32 only.
    with pytest.raises(ValueError, match="threefry2x32 PRNG only"), fg.default_prng_impl("rbg"):
        pass
    assert fg.config.jax_default_prng_impl == "threefry2x32"


def test_enable_custom_prng_gives_typed_keys_from_raw_ones() -> None:
    raw = np.array([0, 7], np.uint32)
    with fg.enable_custom_prng(), jax.enable_custom_prng(), warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        k, jk = fg.random.PRNGKey(7), jax.random.PRNGKey(7)
        assert str(k.dtype) == "key<fry>" and str(jk.dtype) == "key<fry>"
        s, js = fg.random.split(raw), jax.random.split(raw)
        assert isinstance(s, fg.random.KeyArray)
        np.testing.assert_array_equal(fg.random.key_data(s), jax.random.key_data(js))
        with pytest.warns(FutureWarning, match="deprecated"):
            fg.random.normal(raw)
    assert not isinstance(fg.random.PRNGKey(7), fg.random.KeyArray)


REUSE_SCRIPT = [("normal", "normal"), ("split", "split"), ("fold_in", "fold_in"),
                ("key_data", "normal"), ("fold_in", "normal"), ("normal", "key_data"),
                ("uniform", "bits")]


@pytest.mark.parametrize("first,second", REUSE_SCRIPT)
def test_debug_key_reuse_in_eager_code_as_jax(first: str, second: str) -> None:
    def use(lib: object, name: str, k: object) -> None:
        r = lib.random  # type: ignore[attr-defined]
        {"normal": lambda: r.normal(k), "split": lambda: r.split(k),
         "fold_in": lambda: r.fold_in(k, 1), "key_data": lambda: r.key_data(k),
         "uniform": lambda: r.uniform(k), "bits": lambda: r.bits(k)}[name]()

    def second_raises(lib: object, err: type) -> bool:
        with lib.debug_key_reuse(True):  # type: ignore[attr-defined]
            k = lib.random.key(0)  # type: ignore[attr-defined]
            use(lib, first, k)
            try:
                use(lib, second, k)
            except err:
                return True
            return False

    assert second_raises(fg, fg.errors.KeyReuseError) == second_raises(
        jax, jax.errors.KeyReuseError)


def test_debug_key_reuse_off_by_default() -> None:
    k = fg.random.key(0)
    fg.random.normal(k)
    fg.random.normal(k)


@pytest.mark.parametrize("name", ["normal", "uniform", "gamma", "beta", "dirichlet", "t",
                                  "poisson", "permutation", "choice", "orthogonal",
                                  "multivariate_normal", "categorical", "truncated_normal"])
def test_debug_key_reuse_no_false_alarm_inside_samplers(name: str) -> None:
    args = {"gamma": (2.0,), "beta": (2.0, 3.0), "dirichlet": (fnp.ones(3),), "t": (3.0,),
            "poisson": (3.0,), "permutation": (5,), "choice": (5,), "orthogonal": (3,),
            "multivariate_normal": (fnp.zeros(2), fnp.eye(2)),
            "categorical": (fnp.zeros(3),), "truncated_normal": (-1.0, 1.0)}.get(name, ())
    with fg.debug_key_reuse(True):
        k = fg.random.key(1)
        getattr(fg.random, name)(k, *args)
        with pytest.raises(fg.errors.KeyReuseError):
            getattr(fg.random, name)(k, *args)


# --------------------------------------------------------------------------- nn and lax


def test_allow_f16_reductions_as_jax() -> None:
    x16 = np.ones(3, np.float16)
    with jax.allow_f16_reductions(False), pytest.raises(ValueError, match="f16_reductions"):
        jax.lax.reduce_sum_p.bind(jnp.asarray(x16), axes=(0,), out_sharding=None)
    with fg.allow_f16_reductions(False):
        with pytest.raises(ValueError, match="jax_allow_f16_reductions=False"):
            fg.lax.reduce_sum(fnp.asarray(x16), (0,))
        # Summing over a size-1 axis is allowed (as in JAX), and float32 always.
        fg.lax.reduce_sum(fnp.ones((1, 3), fnp.float16), (0,))
        fg.lax.reduce_sum(fnp.ones(3), (0,))
    assert float(fg.lax.reduce_sum(fnp.asarray(x16), (0,))) == 3.0


@settings(max_examples=20, deadline=None)
@given(st.lists(floats, min_size=2, max_size=5), st.booleans())
def test_softmax_custom_jvp_rule_and_values(xs: list[float], masked: bool) -> None:
    x = np.array(xs)
    where = np.arange(len(xs)) % 2 == 0 if masked else None
    with fg.enable_x64(), fg.softmax_custom_jvp(True):
        assert "custom_jvp_call" in str(fg.make_jaxpr(fg.nn.softmax)(x))
        g = fg.grad(lambda v: fg.nn.softmax(v, where=where)[0] * 3.0)(x)
        t = fg.jvp(lambda v: fg.nn.softmax(v, where=where), (x,), (np.ones_like(x),))[1]
        fg.testing.check_grads(lambda v: fg.nn.softmax(v, where=where), (x,), order=1)
    with jax.enable_x64(True), jax.softmax_custom_jvp(True):
        jg = jax.grad(lambda v: jax.nn.softmax(v, where=where)[0] * 3.0)(x)
        jt = jax.jvp(lambda v: jax.nn.softmax(v, where=where), (x,), (np.ones_like(x),))[1]
    np.testing.assert_allclose(g, jg, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(t, jt, rtol=1e-10, atol=1e-12)
    assert "custom_jvp_call" not in str(fg.make_jaxpr(fg.nn.softmax)(x))


@pytest.mark.parametrize("custom", [False, True])
@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_softmax_where_with_rows_masked_out_entirely_as_jax(custom: bool, seed: int) -> None:
    r = np.random.default_rng(seed)
    x = r.normal(size=(4, 3))
    where = r.uniform(size=(4, 3)) < 0.5
    where[r.integers(0, 4)] = False
    w = r.normal(size=(4, 3))
    with fg.enable_x64(), fg.softmax_custom_jvp(custom):
        y = fg.nn.softmax(x, where=where)
        g = fg.grad(lambda v: (fg.nn.softmax(v, where=where) * w).sum())(x)
        t = fg.jvp(lambda v: fg.nn.softmax(v, where=where), (x,), (w,))[1]
    with jax.enable_x64(True), jax.softmax_custom_jvp(custom):
        jy = jax.nn.softmax(x, where=where)
        jg = jax.grad(lambda v: (jax.nn.softmax(v, where=where) * w).sum())(x)
        jt = jax.jvp(lambda v: jax.nn.softmax(v, where=where), (x,), (w,))[1]
    for ours, theirs in ((y, jy), (g, jg), (t, jt)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_make_user_context_retraces_per_value_as_jax() -> None:
    def count(lib: object) -> int:
        n = [0]

        def f(x: object) -> object:
            n[0] += 1
            return x * 2  # type: ignore[operator]

        jf = lib.jit(f)  # type: ignore[attr-defined]
        ctx = lib.make_user_context(default_value=None)  # type: ignore[attr-defined]
        jf(1.0)
        for v in (1, 2, 1):
            with ctx(v):
                assert ctx.value == v
                jf(1.0)
        jf(1.0)
        return n[0]

    assert count(fg) == count(jax) == 3


# --------------------------------------------------------------------- monitoring, profiler


def test_monitoring_listeners_and_compile_events() -> None:
    events: list[str] = []
    durations: list[tuple[str, float]] = []
    scalars: list[tuple[str, float]] = []

    def on_event(e: str, **kw: object) -> None:
        events.append(e)

    def on_duration(e: str, d: float, **kw: object) -> None:
        durations.append((e, d))

    fg.monitoring.register_event_listener(on_event)
    fg.monitoring.register_event_duration_secs_listener(on_duration)
    fg.monitoring.register_scalar_listener(lambda e, v, **kw: scalars.append((e, v)))
    try:
        fg.jit(lambda x: x * 5.0 + 1.0)(fnp.ones(7))
        fg.monitoring.record_event("/test/event", tag="a")
        fg.monitoring.record_scalar("/test/scalar", 2.5)
        names = {e for e, _ in durations}
        jax_events: list[str] = []
        jax.monitoring.register_event_duration_secs_listener(
            lambda e, d, **kw: jax_events.append(e))
        jax.jit(lambda x: x * 5.0 + 1.0)(jnp.ones(7))
        # The two compile events funcgrad emits are among JAX's own.
        assert names == {"/jax/core/compile/jaxpr_trace_duration",
                         "/jax/core/compile/backend_compile_duration"}
        assert names <= set(jax_events)
        assert all(d >= 0 for _, d in durations)
        assert events == ["/test/event"] and scalars == [("/test/scalar", 2.5)]
        fg.monitoring.unregister_event_listener(on_event)
        fg.monitoring.record_event("/test/again")
        assert events == ["/test/event"]
        with pytest.raises(AssertionError):
            fg.monitoring.unregister_event_listener(on_event)
    finally:
        fg.monitoring.clear_event_listeners()
        jax.monitoring.clear_event_listeners()


def test_profiler_writes_a_chrome_trace(tmp_path: pathlib.Path) -> None:
    @fg.profiler.annotate_function
    def step(x: object) -> object:
        return fg.jit(lambda v: v * 7.0)(x)

    fg.profiler.start_trace(tmp_path)
    with pytest.raises(RuntimeError, match="already been started"):
        fg.profiler.start_trace(tmp_path)
    with fg.profiler.StepTraceAnnotation("train", step_num=4):
        with fg.profiler.TraceAnnotation("load", batch=2):
            pass
        step(fnp.ones(3))
    fg.profiler.stop_trace()
    with pytest.raises(RuntimeError, match="No profile started"):
        fg.profiler.stop_trace()
    (path,) = tmp_path.glob("plugins/profile/*/*.trace.json.gz")
    events = [e for e in json.load(gzip.open(path))["traceEvents"] if e["ph"] == "X"]
    by_name = {e["name"]: e for e in events}
    assert {"train", "load", "test_profiler_writes_a_chrome_trace.<locals>.step",
            "/jax/core/compile/backend_compile_duration"} <= set(by_name)
    assert by_name["train"]["args"] == {"step_num": 4}
    outer, inner = by_name["train"], by_name["load"]
    assert outer["ts"] <= inner["ts"] and inner["ts"] + inner["dur"] <= outer["ts"] + \
        outer["dur"]
    # Outside a trace, annotations record nothing and cost nothing.
    with fg.profiler.TraceAnnotation("nothing"):
        pass


# ------------------------------------------------------------------- stages and helpers


def test_stages_trace_lower_compile() -> None:
    def f(x: object, y: object) -> object:
        return {"s": x * y, "t": x + 1.0}  # type: ignore[operator]

    traced = fg.jit(f).trace(fnp.ones(3), 2.0)
    jtraced = jax.jit(f).trace(jnp.ones(3), 2.0)
    assert isinstance(fg.jit(f), fg.stages.Wrapped)
    assert isinstance(traced, fg.stages.Traced)
    assert {k: (v.shape, v.dtype) for k, v in traced.out_info.items()} == \
        {k: (v.shape, v.dtype) for k, v in jtraced.out_info.items()}
    compiled = traced.lower().compile()
    assert isinstance(compiled, fg.stages.Compiled)
    x = np.arange(3.0, dtype=np.float32)
    out, jout = compiled(x, 4.0), jtraced.lower().compile()(x, 4.0)
    for k in ("s", "t"):
        np.testing.assert_array_equal(out[k], jout[k])
    with pytest.raises(TypeError):
        jtraced.lower().compile()(np.ones(4, np.float32), 4.0)
    with pytest.raises(TypeError, match="Argument types differ"):
        compiled(np.ones(4, np.float32), 4.0)
    with pytest.raises(TypeError):
        compiled(x)


def test_effects_barrier_and_copy_to_host_async() -> None:
    tree = {"a": fnp.ones(2), "b": [np.zeros(1), 3]}
    assert fg.copy_to_host_async(tree) is tree
    assert jax.copy_to_host_async(tree) is tree
    assert fg.effects_barrier() is None and jax.effects_barrier() is None


@settings(max_examples=15, deadline=None)
@given(st.lists(floats, min_size=6, max_size=6), st.lists(floats, min_size=4, max_size=4),
       st.sampled_from([0, 1, (0, 1), (1,)]), st.booleans())
def test_fwd_and_bwd_as_jax(xs: list[float], ws: list[float], argnums: object,
                            has_aux: bool) -> None:
    x = np.array(xs).reshape(3, 2)
    w = np.array(ws).reshape(2, 2)
    ct = np.linspace(-1.0, 1.0, 6).reshape(3, 2)

    def make(lib: object) -> object:
        def f(x: object, w: object) -> object:
            y = lib.numpy.tanh(x @ w)  # type: ignore[attr-defined, operator]
            return (y, y.sum()) if has_aux else y

        return f

    with fg.enable_x64():
        fwd, bwd = fg.fwd_and_bwd(make(fg), argnums, has_aux=has_aux)  # type: ignore[arg-type]
        res = fwd(x, w)
        ours = bwd(res[1], ct)
    with jax.enable_x64(True):
        jfwd, jbwd = jax.fwd_and_bwd(make(jax), argnums, has_aux=has_aux)
        jres = jfwd(x, w)
        theirs = jbwd(jres[1], ct)
    np.testing.assert_allclose(res[0], jres[0], rtol=1e-12, atol=1e-14)
    if has_aux:  # (a sum of tanh values: cancellation leaves a few ulps of its terms)
        np.testing.assert_allclose(res[2], jres[2], rtol=1e-12, atol=1e-14)
    for a, b in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_jax_dtypes_public_names_as_jax():
    """``jax.dtypes.issubdtype`` (bfloat16 a floating type, typed keys a ``prng_key``),
    ``float0``, ``itemsize_bits``, ``scalar_type_of``, ``finfo``."""
    jax = pytest.importorskip("jax")
    import funcgrad.numpy as fnp  # noqa: PLC0415

    for L, dt in ((fg, fnp), (jax, jax.numpy)):
        got = (L.dtypes.issubdtype(L.random.key(0).dtype, L.dtypes.prng_key),
               L.dtypes.issubdtype(dt.bfloat16, dt.floating),
               L.dtypes.issubdtype(dt.float32, L.dtypes.prng_key),
               L.dtypes.issubdtype(dt.int8, dt.signedinteger), str(L.dtypes.float0),
               L.dtypes.itemsize_bits(dt.bfloat16), L.dtypes.scalar_type_of(dt.ones(2)),
               float(L.dtypes.finfo(dt.bfloat16).eps), int(L.dtypes.iinfo(dt.int8).min))
        if L is fg:
            ours = got
    assert ours == got
