"""``funcgrad.experimental.checkify`` against ``jax.experimental.checkify`` (JAX 0.10.2):
the messages of ``err.get()``, the error types, and the outputs, on drawn inputs that fail
the checks and inputs that pass them, for every error set and through jit, vmap, grad,
cond, scan, while_loop and fori_loop."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.errors import JaxRuntimeError
from funcgrad.experimental import checkify as fck

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jck = pytest.importorskip("jax.experimental.checkify")

# At JAX's 32-bit default, as the oracle runs; NaNs made on purpose warn in NumPy.
pytestmark = [pytest.mark.x32, pytest.mark.filterwarnings("ignore::RuntimeWarning")]

SETTINGS = settings(max_examples=2, deadline=None, derandomize=True)
FEW = settings(max_examples=2, deadline=None, derandomize=True)
# Values on both sides of the checks below (and NaN, infinities); the derandomized draws
# start from the failing side, the explicit examples add passing ones.
VALUES = st.one_of(st.sampled_from([-3.0, -1.0, 0.0, 0.5, 2.0, 4.0, 12.0, np.nan, np.inf]),
                   st.floats(-4, 14, width=32))


Case = tuple[Callable[..., Any], Callable[[float], tuple[Any, ...]]]


def cases(jx: Any, np_: Any, ck: Any) -> dict[str, Case]:
    """The same programs written against either library: (function, its arguments)."""
    lax = jx.lax
    f32 = np_.float32

    def pos(x):
        ck.check(x > 0, "x={x} must be positive", x=x)
        return np_.sin(x) * 2

    def two(x):
        ck.check(x > -1, "first {}", x)
        ck.check(x > 1, "second {:.3f} {}", x, np_.arange(2))
        return x

    def nanf(x):
        return np_.log(x) + np_.sqrt(x)

    def condf(x):
        def t(v):
            ck.check(v < 10, "too big {}", v)
            return np_.sin(v)
        return lax.cond(x > 0, t, np_.log, x)

    def scanf(x):
        def body(c, a):
            ck.check(c < 5, "carry {} at {}", c, a)
            return c + a, np_.log(c)
        return lax.scan(body, x, np_.arange(4.0))

    def whilef(x):
        def body(c):
            ck.check(c < 7, "c={}", c)
            return c + 1.5
        return lax.while_loop(lambda c: c < 10, body, x)

    def forif(x):
        def body(i, c):
            ck.check(c < 7, "i={} c={}", i, c)
            return c + i
        return lax.fori_loop(0, 4, body, x)

    def gradf(x):
        def inner(v):
            ck.check(v > 0, "grad input {}", v)
            return np_.sin(v) ** 2
        return jx.grad(inner)(x)

    def idx(x: float) -> Any:
        return np_.int32(int(x)) if np.isfinite(x) else np_.int32(7)

    def batch(x: float) -> tuple[Any]:
        return (np_.array([1.0, x, x - 1.0, 2.0], dtype=np_.float32),)

    cf = ck.checkify
    one = lambda x: (f32(x),)  # noqa: E731
    return {
        "user": (cf(pos), one),
        "user_two": (cf(two), one),
        "nan": (cf(nanf, errors=ck.nan_checks), one),
        "float": (cf(nanf, errors=ck.float_checks), one),
        "all_minus_div": (cf(lambda v: pos(v) + nanf(v) / v,
                             errors=ck.all_checks - ck.div_checks), one),
        "all": (cf(lambda v: nanf(v) / v + pos(v), errors=ck.all_checks), one),
        "int_div": (cf(lambda a, b: a // b, errors=ck.div_checks),
                    lambda x: (np_.int32(7), idx(x))),
        "float_div": (cf(lambda a, b: a / b, errors=ck.div_checks),
                      lambda x: (f32(1.0), f32(x))),
        "gather": (cf(lambda a, i: a[i], errors=ck.index_checks),
                   lambda x: (np_.arange(3.0), idx(x))),
        "gather_2d": (cf(lambda a, i: a[1, i], errors=ck.index_checks),
                      lambda x: (np_.ones((3, 4)), idx(x))),
        "gather_array": (cf(lambda a, i: a[i], errors=ck.index_checks),
                         lambda x: (np_.ones((3, 2)),
                                    np_.array([0, int(x) if np.isfinite(x) else 9, 1]))),
        "dynamic_slice": (cf(lambda a, i: lax.dynamic_slice(a, (i,), (2,)),
                             errors=ck.index_checks), lambda x: (np_.arange(4.0), idx(x))),
        "dynamic_update_slice": (cf(lambda a, i: lax.dynamic_update_slice(a, np_.ones(2), (i,)),
                                    errors=ck.index_checks),
                                 lambda x: (np_.arange(4.0), idx(x))),
        "automatic": (cf(lambda a, i: np_.log(a[i]), errors=ck.automatic_checks),
                      lambda x: (np_.arange(-1.0, 2.0), idx(x))),
        "jit_of_checkify": (jx.jit(cf(pos)), one),
        "checkify_of_jit": (cf(jx.jit(pos)), one),
        "jit_nan": (jx.jit(cf(nanf, errors=ck.nan_checks)), one),
        "vmap_of_checkify": (jx.vmap(cf(pos)), batch),
        "checkify_of_vmap": (cf(jx.vmap(pos)), batch),
        "vmap_nan": (jx.vmap(cf(nanf, errors=ck.nan_checks)), batch),
        "grad": (cf(gradf), one),
        "cond": (cf(condf, errors=ck.all_checks), one),
        "scan": (cf(scanf, errors=ck.all_checks), one),
        "while_loop": (cf(whilef), one),
        "fori_loop": (cf(forif), one),
        "jit_scan": (jx.jit(cf(scanf, errors=ck.all_checks)), one),
        "vmap_cond": (jx.vmap(cf(condf, errors=ck.all_checks)), batch),
    }


FG = cases(fg, fnp, fck)
# The oracle compiled once per program (JAX's checkify gives the same eagerly and jitted).
JAX = {name: (jax.jit(fn), args) for name, (fn, args) in cases(jax, jnp, jck).items()}


def _leaves_close(a: Any, b: Any) -> None:
    la, lb = fg.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype and x.shape == y.shape
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("name", sorted(FG))
def test_matches_jax(name: str) -> None:
    @SETTINGS
    @given(x=VALUES)
    @example(x=2.0)  # values that pass most checks, beside the drawn ones
    @example(x=12.0)
    def one(x: float) -> None:
        fn, args = FG[name]
        err, out = fn(*args(x))
        jfn, jargs = JAX[name]
        jerr, jout = jfn(*jargs(x))
        assert err.get() == jerr.get()
        assert type(err.get_exception()).__name__ == type(jerr.get_exception()).__name__
        _leaves_close(out, jout)

    one()


def test_some_drawn_values_fail_and_some_pass() -> None:
    """The drawn values reach both sides of the checks."""
    fn, args = FG["all"]
    got = {fn(*args(x))[0].get() is None for x in (-1.0, 2.0)}
    assert got == {True, False}


# ------------------------------------------------------------------ errors and their types


def _raised(fn: Callable[[], Any]) -> BaseException:
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        return e
    raise AssertionError("nothing raised")


def _same_raise(fg_fn: Callable[[], Any], jax_fn: Callable[[], Any]) -> BaseException:
    e, je = _raised(fg_fn), _raised(jax_fn)
    assert type(e).__name__ == type(je).__name__
    assert isinstance(e, type(je).__mro__[1])  # JAX's base class (ValueError, TypeError)
    assert str(e) == str(je)
    return e


def _pos(ck: Any) -> Callable[[Any], Any]:
    def pos(x):
        ck.check(x > 0, "x={x} must be positive", x=x)
        return x * 2
    return pos


@settings(FEW, max_examples=1)
@given(x=st.floats(-5, -0.125, width=32))
def test_throw_eager_and_check_error(x: float) -> None:
    e = _same_raise(lambda: fck.checkify(_pos(fck))(fnp.float32(x))[0].throw(),
                    lambda: jck.checkify(_pos(jck))(jnp.float32(x))[0].throw())
    assert isinstance(e, JaxRuntimeError) and isinstance(e, ValueError)
    assert isinstance(e, fg.errors.JaxRuntimeError)
    _same_raise(lambda: _pos(fck)(fnp.float32(x)), lambda: _pos(jck)(jnp.float32(x)))
    _same_raise(lambda: fg.grad(_pos(fck))(fnp.float32(x)),
                lambda: jax.grad(_pos(jck))(jnp.float32(x)))
    _same_raise(lambda: fg.vmap(_pos(fck))(fnp.array([1.0, x])),
                lambda: jax.vmap(_pos(jck))(jnp.array([1.0, x])))
    _same_raise(lambda: fg.vmap(fck.checkify(_pos(fck)))(fnp.array([x, x - 1]))[0].throw(),
                lambda: jax.vmap(jck.checkify(_pos(jck)))(jnp.array([x, x - 1]))[0].throw())

    def inner_jit(ck: Any, jx: Any, x: Any) -> Any:
        err, out = jx.jit(ck.checkify(_pos(ck)))(x)
        ck.check_error(err)
        return out

    _same_raise(lambda: inner_jit(fck, fg, fnp.float32(x)),
                lambda: inner_jit(jck, jax, jnp.float32(x)))
    err = fck.checkify(lambda v: inner_jit(fck, fg, v))(fnp.float32(x))[0]
    jerr = jck.checkify(lambda v: inner_jit(jck, jax, v))(jnp.float32(x))[0]
    assert err.get() == jerr.get() and str(err) == str(jerr)


def test_passing_checks_do_nothing() -> None:
    assert fck.checkify(_pos(fck))(fnp.float32(1))[0].throw() is None
    assert fck.checkify(_pos(fck))(fnp.float32(1))[0].get_exception() is None
    assert str(fck.checkify(_pos(fck))(fnp.float32(1))[0]) == "Error(None)"
    assert float(_pos(fck)(fnp.float32(1))) == 2.0
    fck.debug_check(fnp.array(False), "never raised eagerly")


def test_staged_check_without_checkify() -> None:
    _same_raise(lambda: fg.jit(_pos(fck))(fnp.float32(1)),
                lambda: jax.jit(_pos(jck))(jnp.float32(1)))

    def dbg(ck: Any) -> Callable[[Any], Any]:
        def f(x):
            ck.debug_check(x > 0, "dbg {}", x)
            return x + 1
        return f

    assert float(fg.jit(dbg(fck))(fnp.float32(-1))) == 0.0
    assert fck.checkify(dbg(fck))(fnp.float32(-1))[0].get() == \
        jck.checkify(dbg(jck))(jnp.float32(-1))[0].get()


@pytest.mark.gpu
def test_staged_check_without_checkify_on_the_cupy_backend() -> None:
    # Every backend asks the check primitive how it compiles (its lowering): refused as on
    # the NumPy backend, and a debug check compiles to nothing.
    with pytest.raises(ValueError, match="not functionalized"):
        fg.jit(_pos(fck), backend="cupy")(fnp.float32(1))

    def dbg(x):
        fck.debug_check(x > 0, "dbg {}", x)
        return x + 1

    assert float(fg.jit(dbg, backend="cupy")(fnp.float32(-1))) == 0.0


def test_bad_arguments() -> None:
    _same_raise(lambda: fck.check(fnp.array([True, False]), "m"),
                lambda: jck.check(jnp.array([True, False]), "m"))
    _same_raise(lambda: fck.debug_check(fnp.float32(1), "m"),
                lambda: jck.debug_check(jnp.float32(1), "m"))
    _same_raise(lambda: fck.check(fnp.array(True), "m {}", 1.0),
                lambda: jck.check(jnp.array(True), "m {}", 1.0))
    _same_raise(lambda: fck.check_error(3), lambda: jck.check_error(3))


def test_error_sets_and_classes() -> None:
    for name in ("user_checks", "nan_checks", "div_checks", "index_checks", "float_checks",
                 "automatic_checks", "all_checks"):
        assert {c.__name__ for c in getattr(fck, name)} == \
            {c.__name__ for c in getattr(jck, name)}, name
    rest = fck.all_checks - fck.div_checks
    assert rest == {fck.NaNError, fck.OOBError, fck.FailedCheckError}
    assert fck.float_checks | fck.user_checks == {fck.NaNError, fck.DivisionByZeroError,
                                                  fck.FailedCheckError}
    err = fck.checkify(lambda x, i: x[i] / 0, errors=fck.all_checks)(fnp.ones(3), fnp.int32(5))[0]
    assert isinstance(err.get_exception(), fck.OOBError)
    # User checks are dropped where not enabled, as in JAX.
    assert fck.checkify(_pos(fck), errors=fck.nan_checks)(fnp.float32(-1))[0].get() is None


def test_batched_error_names_each_mapped_index() -> None:
    err, _ = fg.vmap(fck.checkify(_pos(fck)))(fnp.array([1.0, -1.0, -2.0]))
    exc = err.get_exception()
    assert isinstance(exc, fck.BatchedError)
    assert err.get() == ("at mapped index 1: x=-1.0 must be positive (`check` failed)\n"
                         "at mapped index 2: x=-2.0 must be positive (`check` failed)")


@pytest.mark.parametrize("op", ["set", "add"])
def test_scatter_index_out_of_bounds(op: str) -> None:
    """Scatters are checked; the index they report is the one the update reaches
    (docs/sharp_bits.md), so only the message's start is JAX's."""
    def f(ck: Any) -> Any:
        return ck.checkify(lambda x, i: getattr(x.at[i], op)(1.0), errors=ck.index_checks)

    msg = f(fck)(fnp.arange(3.0), fnp.int32(5))[0].get()
    jmsg = jck.checkify(lambda x, i: getattr(x.at[i], op)(1.0),
                        errors=jck.index_checks)(jnp.arange(3.0), jnp.int32(5))[0].get()
    head = "out-of-bounds indexing for array of shape (3,): index "
    assert msg.startswith(head) and jmsg.startswith(head)
    assert msg.endswith("is out of bounds for axis 0 with size 3. ")
    assert f(fck)(fnp.arange(3.0), fnp.int32(2))[0].get() is None


# ------------------------------------------------------------------------- derivatives


@FEW
@given(x=st.floats(0.125, 3, width=32))
def test_derivatives_pass_through_checks(x: float) -> None:
    def f(ck: Any, np_: Any) -> Callable[[Any], Any]:
        def g(v):
            ck.check(np_.asarray(v) > 0, "positive {}", np_.asarray(v))
            return np_.sin(v) * v
        return g

    grad = fg.grad(f(fck, fnp))(fnp.float32(x))
    np.testing.assert_allclose(grad, jax.grad(f(jck, jnp))(jnp.float32(x)), rtol=1e-5)
    _, tangent = fg.jvp(f(fck, fnp), (fnp.float32(x),), (fnp.float32(1),))
    np.testing.assert_allclose(tangent, grad, rtol=1e-6)
    fg.test_util.check_grads(f(fck, fnp), (np.float64(x),), order=2, modes=("fwd", "rev"))
    err, g2 = fck.checkify(fg.grad(f(fck, fnp)))(fnp.float32(x))
    assert err.get() is None
    np.testing.assert_allclose(g2, grad, rtol=1e-6)
