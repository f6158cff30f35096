"""``jit``'s static arguments passed either way (argnums and argnames inferred from the
signature, static values keyed with their type), ``keep_unused`` with donation (also
through ``lower().compile()``), weak types of zero derivatives and of the
``scipy.stats`` distributions on Python scalars, and Bernoulli/uniform edge values,
compared with JAX 0.10.2."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad as fg
import funcgrad.numpy as fnp
import funcgrad.scipy.stats as fstats

jax = pytest.importorskip("jax")
jnp = jax.numpy
jstats = pytest.importorskip("jax.scipy.stats")

pytestmark = pytest.mark.usefixtures("jax_x64")


def _floats(lo, hi):
    # Normal numbers only: XLA flushes subnormals to zero.
    return st.floats(lo, hi, allow_subnormal=False)


def _like(ours, theirs, rtol=1e-6):
    """Same dtype, weak type and (close) values."""
    assert ours.dtype == theirs.dtype, (ours.dtype, theirs.dtype)
    assert ours.weak_type == theirs.weak_type, (repr(ours), repr(theirs))
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=rtol, atol=1e-12,
                               equal_nan=True)


def _error(call):
    try:
        call()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e).split("\n")[0].split(" An error")[0]
    return None


# ------------------------------------------------------------------ static arguments


@settings(max_examples=10, deadline=None)
@given(x=hnp.arrays(np.float64, hnp.array_shapes(max_dims=2, max_side=3),
                    elements=_floats(-4, 4)),
       n=st.integers(-3, 3))
def test_static_argnums_passed_by_keyword_stay_static_as_jax(x, n):
    def f(x, n):
        return x * n if n > 0 else x - n  # Python control flow on n

    for lib, xs in ((fg, fnp.asarray(x)), (jax, jnp.asarray(x))):
        by_num = lib.jit(f, static_argnums=1)
        by_name = lib.jit(f, static_argnames="n")
        want = f(xs, n)
        for got in (by_num(xs, n), by_num(xs, n=n), by_name(xs, n), by_name(xs, n=n)):
            np.testing.assert_allclose(np.asarray(got), np.asarray(want))
    _like(fg.jit(f, static_argnums=1)(fnp.asarray(x), n=n),
          jax.jit(f, static_argnums=1)(jnp.asarray(x), n=n))


def test_static_argument_values_of_other_types_retrace_as_jax():
    for lib in (fg, jax):
        x = lib.numpy.ones(2, dtype=lib.numpy.int32)
        jf = lib.jit(lambda x, n: x * n, static_argnums=1)
        jg = lib.jit(lambda x, n: x * n, static_argnames="n")
        assert jf(x, 3).dtype == lib.numpy.int32
        assert jf(x, 3.0).dtype == np.float64  # 3 and 3.0 are different static values
        assert jf(x, n=3).dtype == lib.numpy.int32
        assert jf(x, n=3.0).dtype == np.float64
        assert jg(x, 3).dtype == lib.numpy.int32
        assert jg(x, 3.0).dtype == np.float64
    calls = []

    def f(x, n):
        calls.append(n)
        return x * n

    jf = fg.jit(f, static_argnums=1)
    jf(fnp.ones(2), n=3)
    jf(fnp.ones(2), n=3)
    assert len(calls) == 1
    jf(fnp.ones(2), n=4)
    assert len(calls) == 2


@pytest.mark.parametrize("how", ["argnums", "argnames"])
@pytest.mark.parametrize("pass_by", ["position", "keyword"])
def test_unhashable_or_traced_static_argument_errors_as_jax(how, pass_by):
    kw = {"static_argnums": 1} if how == "argnums" else {"static_argnames": "n"}

    def call(lib, n):
        jf = lib.jit(lambda x, n: x * 2, **kw)
        x = lib.numpy.ones(2)
        return jf(x, n) if pass_by == "position" else jf(x, n=n)

    for bad in ([1], {"a": 1}):
        ours = _error(lambda bad=bad: call(fg, bad))
        theirs = _error(lambda bad=bad: call(jax, bad))
        assert ours == theirs and ours is not None and ours[0] == "ValueError", (ours, theirs)
    ours = _error(lambda: call(fg, fnp.ones(2)))
    theirs = _error(lambda: call(jax, jnp.ones(2)))
    assert ours is not None and theirs is not None and ours[0] == theirs[0] == "ValueError"
    assert "Non-hashable static arguments" in ours[1]

    # A traced value given for a static argument, by keyword too.
    def outer(lib):
        inner = lib.jit(lambda x, n: x * n, **kw)
        return lib.jit(lambda x, n: inner(x, n=n) if pass_by == "keyword" else inner(x, n))(
            lib.numpy.ones(2), 2.0)

    ours, theirs = _error(lambda: outer(fg)), _error(lambda: outer(jax))
    assert ours is not None and theirs is not None and ours[0] == theirs[0] == "ValueError"
    assert "Non-hashable static arguments" in ours[1]


@pytest.mark.parametrize("make", [
    lambda lib: lib.jit(lambda x: x, static_argnums=3),
    lambda lib: lib.jit(lambda x: x, static_argnums=-2),
    lambda lib: lib.jit(eval("lambda x, n, /: x * n"), static_argnames="n"),
    lambda lib: lib.jit(lambda x, n: x * n, static_argnums=1, donate_argnames="n"),
    lambda lib: lib.jit(lambda x, n: x * n, static_argnames="n", donate_argnums=1),
    lambda lib: lib.jit(lambda x, n: x * n, static_argnums=1, donate_argnums=1),
    lambda lib: lib.jit(lambda x, n: x * n, static_argnums=1, static_argnames="m"),
    lambda lib: lib.jit(lambda *a: a[0] * a[1], static_argnums=-3)(lib.numpy.ones(2), 2),
])
def test_static_argument_declaration_errors_as_jax(make):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = _error(lambda: make(fg)), _error(lambda: make(jax))
    assert ours == theirs and ours is not None, (ours, theirs)


@pytest.mark.parametrize("call", [
    # an index past the arguments given is ignored (the argument has its default)
    lambda lib, x: lib.jit(lambda x, n=2: x * n, static_argnums=1)(x),
    lambda lib, x: lib.jit(lambda *a: a[0], static_argnums=5)(x),
    # both given: nothing inferred, so n by keyword is a traced argument
    lambda lib, x: lib.jit(lambda x, n: x * n, static_argnums=1, static_argnames=())(x, n=2.0),
    # a string static by keyword
    lambda lib, x: lib.jit(lambda x, mode: x if mode == "a" else -x, static_argnums=1)(
        x, mode="b"),
    # keyword-only names and bound methods
    lambda lib, x: lib.jit(lambda x, *, k: x * k, static_argnames="k")(x, k=3),
    lambda lib, x: lib.jit(lambda s, x, n: x * n, static_argnums=(0, 2))("s", x, n=3),
])
def test_static_argument_calls_as_jax(call):
    _like(call(fg, fnp.arange(3.0)), call(jax, jnp.arange(3.0)))


# ------------------------------------------------------------------ keep_unused


@pytest.mark.parametrize("keep_unused", [False, True, 1, None])
def test_keep_unused_with_donation_as_jax(keep_unused):
    def run(lib):
        x = lib.numpy.ones(2)
        same, other = lib.numpy.ones(2), lib.numpy.ones(5)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            f = lib.jit(lambda x, y: x * 2, keep_unused=keep_unused, donate_argnums=1)
            out1 = f(x, same)
            out2 = f(x, other)
        msgs = [str(m.message).split("\n")[0] for m in w
                if "donated" in str(m.message)]
        return (np.asarray(out1).tolist(), np.asarray(out2).tolist(), same.is_deleted(),
                other.is_deleted(), x.is_deleted(), msgs)

    assert run(fg) == run(jax)


@pytest.mark.parametrize("keep_unused", [False, True])
def test_donation_through_lower_compile_as_jax(keep_unused):
    def run(lib):
        x, used, unused = lib.numpy.ones(2), lib.numpy.ones(2), lib.numpy.ones(2)
        f = lib.jit(lambda x, y, z: x * 2 + y, keep_unused=keep_unused, donate_argnums=(1, 2))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = f.lower(x, used, unused).compile()(x, used, unused)
        return (np.asarray(out).tolist(), x.is_deleted(), used.is_deleted(),
                unused.is_deleted())

    assert run(fg) == run(jax)


# ------------------------------------------------------------------ weak types


_FUNS = {
    "identity": lambda m: (lambda x: x),
    "constant": lambda m: (lambda x: 2.0),
    "strong_linear": lambda m: (lambda x: m.numpy.float64(2.0) * x),
    "cubic": lambda m: (lambda x: x ** 3 * 2.0),
    "sin_x": lambda m: (lambda x: m.numpy.sin(x) * x),
}


@settings(max_examples=10, deadline=None)
@given(x=_floats(-3, 3), name=st.sampled_from(sorted(_FUNS)),
       how=st.sampled_from(["grad", "jacfwd", "jacrev", "hessian"]))
def test_derivatives_of_python_scalars_keep_jax_weak_types(x, name, how):
    if how == "grad" and name == "constant":
        x = float(x)
    ours = getattr(fg, how)(_FUNS[name](fg))(x)
    theirs = getattr(jax, how)(_FUNS[name](jax))(x)
    _like(ours, theirs, rtol=1e-5)


def test_jvp_of_a_constant_output_is_a_weak_array_as_jax():
    ours = fg.jvp(lambda x: 2.0, (1.0,), (1.0,))[1]
    theirs = jax.jvp(lambda x: 2.0, (1.0,), (1.0,))[1]
    assert type(ours).__name__ == "ArrayImpl"
    _like(ours, theirs)


_DISTS = [  # (distribution, function, number of arguments, argument range)
    ("norm", "logpdf", 3, (0.5, 3.0)), ("norm", "pdf", 3, (0.5, 3.0)),
    ("cauchy", "logpdf", 3, (0.5, 3.0)), ("cauchy", "cdf", 3, (0.5, 3.0)),
    ("cauchy", "sf", 3, (0.5, 3.0)), ("cauchy", "logcdf", 3, (0.5, 3.0)),
    ("expon", "logpdf", 3, (0.5, 3.0)), ("expon", "cdf", 3, (0.5, 3.0)),
    ("expon", "logsf", 3, (0.5, 3.0)),
    ("gamma", "logpdf", 2, (0.5, 3.0)), ("gamma", "cdf", 2, (0.5, 3.0)),
    ("chi2", "logpdf", 2, (0.5, 3.0)), ("chi2", "sf", 2, (0.5, 3.0)),
    ("t", "logpdf", 2, (0.5, 3.0)), ("t", "pdf", 2, (0.5, 3.0)),
    ("beta", "logpdf", 3, (0.1, 0.9)), ("beta", "pdf", 3, (0.1, 0.9)),
    ("laplace", "cdf", 3, (0.5, 3.0)),
    ("uniform", "logpdf", 3, (0.1, 0.9)), ("uniform", "pdf", 3, (0.1, 0.9)),
    ("uniform", "cdf", 3, (0.1, 0.9)), ("uniform", "ppf", 3, (0.1, 0.9)),
    ("poisson", "logpmf", 2, (0.5, 6.0)), ("poisson", "pmf", 2, (0.5, 6.0)),
    ("poisson", "cdf", 2, (0.5, 6.0)),
    ("bernoulli", "logpmf", 2, (0.1, 0.9)), ("bernoulli", "pmf", 2, (0.1, 0.9)),
    ("bernoulli", "cdf", 2, (0.1, 0.9)), ("bernoulli", "ppf", 2, (0.1, 0.9)),
]


@settings(max_examples=15, deadline=None)
@given(case=st.sampled_from(_DISTS), data=st.data(), integer_first=st.booleans())
def test_stats_of_python_scalars_are_weakly_typed_as_jax(case, data, integer_first):
    dist, fn, nargs, (lo, hi) = case
    args = [data.draw(_floats(lo, hi)) for _ in range(nargs)]
    if integer_first:
        args[0] = data.draw(st.integers(0, 4))
    ours = getattr(getattr(fstats, dist), fn)(*args)
    theirs = getattr(getattr(jstats, dist), fn)(*args)
    _like(ours, theirs, rtol=2e-5)
    # An array argument keeps its strong type.
    args[-1] = np.float64(args[-1])
    _like(getattr(getattr(fstats, dist), fn)(*args), getattr(getattr(jstats, dist), fn)(*args),
          rtol=2e-5)


_NAN = float("nan")


@pytest.mark.parametrize("args", [(0.3, 0.4), (0.3, 1.5), (_NAN, 0.3), (0.5, _NAN), (1, 0.2),
                                  (0, 0.2), (2, 0.2), (-1, 0.2), (0.7, -0.5)])
def test_bernoulli_edge_values_as_jax(args):
    for fn in ("logpmf", "pmf", "cdf", "ppf"):
        _like(getattr(fstats.bernoulli, fn)(*args), getattr(jstats.bernoulli, fn)(*args),
              rtol=1e-6)


@pytest.mark.parametrize("args", [(0.3,), (_NAN,), (2.0,), (-1.0,), (0.5, 1.0, -1.0),
                                  (np.float64(0.3),), (0.5, 0.0, _NAN)])
def test_uniform_cdf_edge_values_as_jax(args):
    _like(fstats.uniform.cdf(*args), jstats.uniform.cdf(*args))
