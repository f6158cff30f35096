"""``nn.scaled_matmul``, ``nn.scaled_dot_general`` and ``nn.get_scaled_dot_general_config``
against JAX 0.10.2.

JAX runs the block-scaled product only as a cuDNN kernel and raises on the CPU, so the
oracle is JAX's own code path (shape normalisation, quantization, custom_vjp, transposes)
with that one kernel replaced by the formula JAX documents for it
(``einsum('BMK,BNK->BMN', a * repeat(a_scales), b * repeat(b_scales))`` in float32).
JAX's quantization runs on the CPU and is compared bit for bit.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import nn
from funcgrad.nn import _scaled_matmul as sm
from funcgrad.testing import check_grads, jax_x64_mode

# The fixture only patches JAX (the same for every example).
FEW = settings(max_examples=6, deadline=None,
               suppress_health_check=[HealthCheck.function_scoped_fixture])
x32 = pytest.mark.x32


@pytest.fixture
def jax_ref() -> Iterator[Any]:
    """Real JAX in 32-bit mode, its missing CPU kernel replaced by the documented formula."""
    jax = pytest.importorskip("jax")
    from jax._src.cudnn import scaled_matmul_stablehlo as S  # noqa: PLC0415

    jnp = jax.numpy

    def formula(lhs: Any, rhs: Any, ls: Any, rs: Any, preferred_element_type: Any = np.float32
                ) -> Any:
        a = lhs.astype(np.float32) * jnp.repeat(ls.astype(np.float32),
                                                lhs.shape[-1] // ls.shape[-1], axis=-1)
        b = rhs.astype(np.float32) * jnp.repeat(rs.astype(np.float32),
                                                rhs.shape[-1] // rs.shape[-1], axis=-1)
        return jnp.einsum("BMK,BNK->BMN", a, b,
                          preferred_element_type=np.float32).astype(preferred_element_type)

    saved = S.scaled_matmul_wrapper
    S.scaled_matmul_wrapper = formula
    try:
        with jax_x64_mode(jax, False):
            yield jax
    finally:
        S.scaled_matmul_wrapper = saved


def _values(seed: int, shape: tuple[int, ...], spread: float = 3.0) -> np.ndarray:
    """Normal values over several binades, no zeros (JAX's CPU quantization of an all-zero
    block divides by a flushed subnormal: see docs/sharp_bits.md)."""
    rng = np.random.default_rng(seed)
    mag = np.exp(rng.uniform(-spread, spread, shape))
    return (np.where(rng.random(shape) < 0.5, -1, 1) * mag).astype(np.float32)


def _close(got: Any, want: Any, rtol: float = 2e-5) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype,
                                                                 got.shape, want.shape)
    scale = float(np.max(np.abs(want.astype(np.float64)), initial=1.0))
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                               rtol=rtol, atol=rtol * scale)


# ------------------------------------------------------------------------ scaled_matmul


@x32
@FEW
@given(seed=st.integers(0, 2 ** 31), b=st.integers(1, 2), m=st.integers(1, 3),
       n=st.integers(1, 3), ks=st.integers(1, 3), block=st.integers(1, 4),
       out=st.sampled_from(["float32", "bfloat16", "float16"]))
def test_scaled_matmul_is_the_documented_formula(jax_ref: Any, seed: int, b: int, m: int,
                                                 n: int, ks: int, block: int,
                                                 out: str) -> None:
    jnp = jax_ref.numpy
    k = ks * block
    a, c = _values(seed, (b, m, k), 1.0), _values(seed + 1, (b, n, k), 1.0)
    sa, sc = _values(seed + 2, (b, m, ks), 1.0), _values(seed + 3, (b, n, ks), 1.0)
    dt = np.dtype(getattr(ml_dtypes, out, None) or out)
    want = jnp.einsum("BMK,BNK->BMN", a * np.repeat(sa, block, -1), c * np.repeat(sc, block, -1),
                      preferred_element_type=np.float32).astype(dt)
    got = nn.scaled_matmul(fnp.asarray(a), fnp.asarray(c), fnp.asarray(sa), fnp.asarray(sc),
                           preferred_element_type=dt)
    _close(got, want, 2e-5 if out == "float32" else 1e-2)


@x32
def test_scaled_matmul_takes_narrow_float_arrays(jax_ref: Any) -> None:
    jnp = jax_ref.numpy
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 4, 64)).astype(ml_dtypes.float8_e4m3fn)
    c = rng.standard_normal((2, 3, 64)).astype(ml_dtypes.float4_e2m1fn)
    sa = rng.integers(120, 135, (2, 4, 2)).astype(np.uint8).view(ml_dtypes.float8_e8m0fnu)
    sc = rng.integers(120, 135, (2, 3, 2)).astype(np.uint8).view(ml_dtypes.float8_e8m0fnu)
    jw = jax_ref.numpy.asarray
    want = jnp.einsum("BMK,BNK->BMN",
                      jw(a).astype(np.float32) * jnp.repeat(jw(sa).astype(np.float32), 32, -1),
                      jw(c).astype(np.float32) * jnp.repeat(jw(sc).astype(np.float32), 32, -1))
    _close(nn.scaled_matmul(a, c, sa, sc), want)


@x32
def test_scaled_matmul_shape_errors_as_jax(jax_ref: Any) -> None:
    bad = [((2, 3), (1, 2, 3), (1, 2, 1), (1, 2, 1)),           # not 3-d
           ((1, 2, 3), (1, 2, 4), (1, 2, 1), (1, 2, 1)),        # K differs
           ((1, 2, 4), (2, 2, 4), (1, 2, 1), (2, 2, 1)),        # batch differs
           ((1, 2, 4), (1, 2, 4), (1, 2, 1), (1, 2, 2)),        # scales' K differ
           ((1, 2, 4), (1, 3, 4), (1, 2, 1), (1, 2, 1))]        # scales' N differs
    for shapes in bad:
        for lib in (jax_ref.nn, nn):
            args = [np.ones(s, np.float32) for s in shapes]
            if lib is jax_ref.nn:
                args = [jax_ref.numpy.asarray(x) for x in args]
            with pytest.raises(ValueError, match="scaled_matmul requires"):
                lib.scaled_matmul(*args)
    with pytest.raises(ValueError, match="multiple"):
        nn.scaled_matmul(np.ones((1, 2, 4)), np.ones((1, 2, 4)), np.ones((1, 2, 3)),
                         np.ones((1, 2, 3)))


@FEW
@given(seed=st.integers(0, 2 ** 31), ks=st.integers(1, 2), block=st.integers(1, 3))
def test_scaled_matmul_derivatives_numerically(seed: int, ks: int, block: int) -> None:
    # JAX has no derivative for scaled_matmul; funcgrad's is the formula's (float64 here).
    k = ks * block
    args = [_values(seed + i, s, 0.5).astype(np.float64)
            for i, s in enumerate([(1, 2, k), (1, 3, k), (1, 2, ks), (1, 3, ks)])]
    check_grads(lambda *xs: nn.scaled_matmul(*xs, preferred_element_type=np.float64),
                args, order=2, modes=("fwd", "rev"))


# --------------------------------------------------------------- configs and quantization


@x32
def test_configs_are_jax_s(jax_ref: Any) -> None:
    for mode in ("mxfp8", "nvfp4"):
        want, got = jax_ref.nn.get_scaled_dot_general_config(mode), \
            nn.get_scaled_dot_general_config(mode)
        for field in ("mode", "block_size", "data_type", "scale_type", "infer_only"):
            assert getattr(got, field) == getattr(want, field), field
        if want.global_scale is None:
            assert got.global_scale is None
        else:
            _close(got.global_scale, want.global_scale)
    with pytest.raises(ValueError, match="Unsupported mode"):
        nn.get_scaled_dot_general_config("int8")  # type: ignore[arg-type]


@x32
@FEW
@given(seed=st.integers(0, 2 ** 31), mode=st.sampled_from(["mxfp8", "nvfp4"]),
       rows=st.integers(1, 3), blocks=st.integers(1, 3), spread=st.floats(0.0, 12.0),
       gs=st.floats(0.05, 4.0))
def test_quantization_is_jax_s_bit_for_bit(jax_ref: Any, seed: int, mode: str, rows: int,
                                           blocks: int, spread: float, gs: float) -> None:
    from jax._src.cudnn import scaled_matmul_stablehlo as S  # noqa: PLC0415

    bs = 32 if mode == "mxfp8" else 16
    x = _values(seed, (2, rows, blocks * bs), spread)
    g = np.array([gs], np.float32)
    jc = jax_ref.nn.get_scaled_dot_general_config(
        mode, *([jax_ref.numpy.asarray(g)] if mode == "nvfp4" else []))
    fc = nn.get_scaled_dot_general_config(mode, *([fnp.asarray(g)] if mode == "nvfp4" else []))
    jq, js = S.quantize(jax_ref.numpy.asarray(x), jc)
    fq, fs = sm._quantize(fnp.asarray(x), fc)
    np.testing.assert_array_equal(np.asarray(fq), np.asarray(jq).astype(np.float32))
    np.testing.assert_array_equal(np.asarray(fs), np.asarray(js).astype(np.float32))


# ------------------------------------------------------------------- scaled_dot_general

# (lhs shape, rhs shape, dimension numbers, M and N multiples of 32 for the derivative)
CASES = [
    ((2, 32, 64), (2, 32, 64), (((2,), (2,)), ((0,), (0,)))),
    ((32, 64), (64, 32), (((1,), (0,)), ((), ()))),
    ((64, 2, 32), (2, 64, 32), (((0,), (1,)), ((1,), (0,)))),
    ((32, 2, 32), (32, 2, 32), (((1, 2), (1, 2)), ((), ()))),
]


@x32
@settings(FEW, max_examples=4, phases=(Phase.explicit, Phase.reuse, Phase.generate))
@given(seed=st.integers(0, 2 ** 31), case=st.sampled_from(CASES),
       mode=st.sampled_from(["mxfp8", "nvfp4"]), gs=st.floats(0.25, 2.0),
       out=st.sampled_from(["float32", "bfloat16"]))
def test_scaled_dot_general_and_its_derivative_match_jax(jax_ref: Any, seed: int, case: Any,
                                                        mode: str, gs: float,
                                                        out: str) -> None:
    ls, rs, dn = case
    x, y = _values(seed, ls), _values(seed + 1, rs)
    dt = np.dtype(ml_dtypes.bfloat16) if out == "bfloat16" else np.dtype(np.float32)
    g = np.array([gs], np.float32)

    def run(lib: Any, mod: Any) -> Any:
        extra = [mod.asarray(g)] if mode == "nvfp4" else []
        cfgs = [lib.nn.get_scaled_dot_general_config(mode, *extra)] * 3

        def loss(a: Any, b: Any) -> Any:
            out = lib.nn.scaled_dot_general(a, b, dn, preferred_element_type=dt, configs=cfgs)
            w = mod.cos(mod.arange(out.size, dtype=np.float32).reshape(out.shape)) + 1.5
            return (out.astype(np.float32) * w).sum(), out

        return lib.value_and_grad(loss, argnums=(0, 1), has_aux=True)(x, y)

    (jv, jout), jgrads = run(jax_ref, jax_ref.numpy)
    (fv, fout), fgrads = run(fg, fnp)
    tol = 2e-5 if out == "float32" else 1e-2
    _close(fout, jout, tol)
    # The loss sums thousands of float32 terms: its rounding scales with their magnitudes.
    mass = 2.5 * float(np.abs(np.asarray(jout, np.float64)).sum())
    np.testing.assert_allclose(float(fv), float(jv), rtol=0, atol=tol * mass)
    for a, b in zip(fgrads, jgrads, strict=True):
        # JAX passes the bwd rule's bfloat16 through to a float32 input's gradient;
        # funcgrad's gradient has the input's dtype (docs/sharp_bits.md).
        assert a.dtype == np.float32
        _close(a, np.asarray(b).astype(np.float32), tol)


@x32
def test_scaled_dot_general_under_jit_and_vmap() -> None:
    cfgs = [nn.get_scaled_dot_general_config("mxfp8")] * 3
    x, y = _values(0, (3, 32, 64)), _values(1, (3, 32, 64))
    dn = (((1,), (1,)), ((), ()))
    f = lambda a, b: nn.scaled_dot_general(a, b, dn, configs=cfgs)
    loop = np.stack([np.asarray(f(a, b)) for a, b in zip(x, y)])
    np.testing.assert_array_equal(np.asarray(fg.vmap(f)(x, y)), loop)
    np.testing.assert_array_equal(np.asarray(fg.jit(f)(x[0], y[0])), loop[0])
    ga = fg.jit(fg.grad(lambda a, b: f(a, b).sum()))(x[0], y[0])
    np.testing.assert_array_equal(np.asarray(ga),
                                  np.asarray(fg.grad(lambda a, b: f(a, b).sum())(x[0], y[0])))


@x32
def test_scaled_dot_general_without_configs_is_dot_general(jax_ref: Any) -> None:
    x, y = _values(0, (2, 3, 4)), _values(1, (2, 4, 5))
    dn = (((2,), (1,)), ((0,), (0,)))
    for dt in (np.float32, ml_dtypes.bfloat16, np.float16):
        _close(nn.scaled_dot_general(x, y, dn, preferred_element_type=dt),
               jax_ref.nn.scaled_dot_general(x, y, dn, preferred_element_type=dt),
               2e-5 if dt == np.float32 else 1e-2)


@x32
def test_scaled_dot_general_errors() -> None:
    cfgs = [nn.get_scaled_dot_general_config("mxfp8")] * 3
    x = np.ones((32, 64), np.float32)
    dn = (((1,), (1,)), ((), ()))
    with pytest.raises(TypeError, match="preferred_element_type"):
        nn.scaled_dot_general(x, x, dn, preferred_element_type=np.float64, configs=cfgs)
    with pytest.raises(ValueError, match="block size 32"):
        nn.scaled_dot_general(x[:, :48], x[:, :48], dn, configs=cfgs)
    with pytest.raises(ValueError, match="three configs"):
        nn.scaled_dot_general(x, x, dn, configs=cfgs[:2])
    with pytest.warns(DeprecationWarning):
        nn.scaled_dot_general(x, x, dn, configs=cfgs, implementation="cudnn")


@x32
def test_an_all_zero_block_quantizes_to_zero() -> None:
    # JAX on the CPU gives NaN here (its 2**-127 scale is flushed to zero); the formula's
    # value is 0 (docs/sharp_bits.md).
    x = np.zeros((32, 64), np.float32)
    x[:, 32:] = _values(0, (32, 32))
    y = _values(1, (32, 64))
    cfgs = [nn.get_scaled_dot_general_config("mxfp8")] * 3
    dn = (((1,), (1,)), ((), ()))
    out = nn.scaled_dot_general(x, y, dn, configs=cfgs)
    half = nn.scaled_dot_general(x[:, 32:], y[:, 32:], dn, configs=cfgs)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(half))
