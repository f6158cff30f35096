"""JAX-face fixes compared with JAX 0.10.2 (twenty-second side-by-side review): the weak
types of ``scipy.special`` (comb, factorial, entr, rel_entr, kl_div weak; dawsn, erfcx,
exp1, expi, expn, spence strong) and comb's ``repetition`` at k = 0, ``lax.psum`` of an
unmapped Python number, ``linalg.norm``/``vector_norm`` (ord=0 in the input's inexact type,
integer p-norms, JAX's texts), ``gradient``'s promotion with its spacings and its texts,
the +0 of tril/triu in derivatives (``solve_triangular``), ``lax.reduce_window`` (JAX's
defaults, checks and texts, any computation, pytrees, non-identity and traced init
values) and ``dynamic_update_slice``'s texts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from jax_oracle import side_by_side

import funcgrad as fg
import funcgrad.numpy as fnp

jax = pytest.importorskip("jax")
jnp = jax.numpy

import jax.scipy.linalg  # noqa: E402
import jax.scipy.special  # noqa: E402

import funcgrad.scipy.linalg  # noqa: E402
import funcgrad.scipy.special  # noqa: E402

pytestmark = pytest.mark.x32


def _same(make: Callable[[Any, Any], Callable[[], Any]], x64: bool = False) -> None:
    ours, theirs = side_by_side(make, x64=x64)
    assert ours == theirs


def _sp(j: Any) -> Any:
    return j.scipy.special


def _t(a: Any) -> Any:
    """The dtype, weak type and shape (the values differ in the last float32 digits:
    funcgrad's lgamma is more accurate than XLA's)."""
    return a.dtype, a.weak_type, a.shape


def _x(n: Any) -> Any:
    return n.arange(12.0).reshape(3, 4)


def _rw(j: Any, n: Any, *args: Any, **kw: Any) -> Callable[[], Any]:
    return lambda: j.lax.reduce_window(*args, **kw)


CASES: dict[str, Callable[[Any, Any], Callable[[], Any]]] = {
    # 1. scipy.special weak types.
    "comb_ints": lambda j, n: lambda: _t(_sp(j).comb(5, 2)),
    "comb_floats": lambda j, n: lambda: _t(_sp(j).comb(5.0, 2.0)),
    "comb_negative": lambda j, n: lambda: _t(_sp(j).comb(2, 5)),
    "comb_repetition": lambda j, n: lambda: _t(_sp(j).comb(4, 2, repetition=True)),
    "comb_repetition_k0": lambda j, n: lambda: _sp(j).comb(0, 0, repetition=True),
    "comb_repetition_array": lambda j, n: lambda: _sp(j).comb(
        n.array([0.0, 3.0]), n.array([0.0, 2.0]), repetition=True).dtype,
    "factorial_int": lambda j, n: lambda: _t(_sp(j).factorial(3)),
    "entr_float": lambda j, n: lambda: _sp(j).entr(0.5),
    "rel_entr_floats": lambda j, n: lambda: _sp(j).rel_entr(1.5, 0.5),
    "kl_div_floats": lambda j, n: lambda: _sp(j).kl_div(1.5, 0.5),
    "rel_entr_edges": lambda j, n: lambda: _sp(j).rel_entr(n.array([0.0, -1.0, 1.0]),
                                                           n.array([1.0, 1.0, 0.0])),
    "dawsn_float": lambda j, n: lambda: _sp(j).dawsn(0.5).weak_type,
    "erfcx_float": lambda j, n: lambda: _sp(j).erfcx(0.5).weak_type,
    "exp1_float": lambda j, n: lambda: _sp(j).exp1(0.5).weak_type,
    "expi_float": lambda j, n: lambda: _sp(j).expi(0.5).weak_type,
    "expn_floats": lambda j, n: lambda: _sp(j).expn(2, 1.5).weak_type,
    "spence_float": lambda j, n: lambda: _sp(j).spence(0.5).weak_type,
    # 2. psum of an unmapped Python number.
    "psum_int": lambda j, n: lambda: j.vmap(lambda v: j.lax.psum(1, "i"), axis_name="i")(
        n.arange(3.0)),
    "psum_tuple": lambda j, n: lambda: j.vmap(lambda v: j.lax.psum((1, 2.0), "i"),
                                              axis_name="i")(n.arange(3.0)),
    "pmean_int": lambda j, n: lambda: j.vmap(lambda v: j.lax.pmean(1, "i"), axis_name="i")(
        n.arange(3.0)),
    "psum_half": lambda j, n: lambda: j.vmap(lambda v: v * j.lax.psum(1.0, "i"),
                                             axis_name="i")(n.arange(3, dtype=n.float16)),
    "psum_strong": lambda j, n: lambda: j.vmap(lambda v: j.lax.psum(n.float16(2), "i"),
                                               axis_name="i")(n.arange(3.0)),
    # 3. norms.
    "norm_ord0": lambda j, n: lambda: n.linalg.norm(n.array([1.0, 0.0, 2.0]), ord=0),
    "norm_ord0_int": lambda j, n: lambda: n.linalg.norm(n.array([1, 0, 2]), ord=0),
    "norm_ord0_half": lambda j, n: lambda: n.linalg.norm(n.array([1, 0, 2], n.float16), ord=0),
    "norm_ord0_complex": lambda j, n: lambda: n.linalg.norm(n.array([1j, 0, 2]), ord=0,
                                                            keepdims=True),
    "vector_norm_ord0_int": lambda j, n: lambda: n.linalg.vector_norm(n.array([1, 0]), ord=0),
    "vector_norm_ord3_int": lambda j, n: lambda: n.linalg.vector_norm(n.array([1, 0, -2]),
                                                                      ord=3),
    "vector_norm_bool": lambda j, n: lambda: n.linalg.vector_norm(n.array([True, False]),
                                                                  ord=-1),
    "norm_str_inf": lambda j, n: lambda: n.linalg.norm(n.array([1.0, 2.0]), ord="inf"),
    "norm_str_minus_inf": lambda j, n: lambda: n.linalg.norm(n.array([1.0, 2.0]), ord="-inf"),
    "norm_vector_fro": lambda j, n: lambda: n.linalg.norm(n.array([1.0, 2.0]), ord="fro"),
    "norm_matrix_f": lambda j, n: lambda: n.linalg.norm(n.ones((2, 2)), ord="f"),
    "norm_matrix_bad": lambda j, n: lambda: n.linalg.norm(n.ones((2, 2)), ord=3),
    "norm_rank3": lambda j, n: lambda: n.linalg.norm(n.ones((2, 2, 2)), ord=1),
    "norm_three_axes": lambda j, n: lambda: n.linalg.norm(n.ones((2, 2, 2)), axis=(0, 1, 2)),
    # 4. gradient.
    "gradient_edge_order": lambda j, n: lambda: n.gradient(n.arange(4.0), edge_order=1),
    "gradient_spacing_count": lambda j, n: lambda: n.gradient(n.ones((2, 3)), 1.0, 2.0, 3.0),
    "gradient_spacing_2d": lambda j, n: lambda: n.gradient(n.ones((2, 3)), n.ones((2, 2))),
    "gradient_spacing_length": lambda j, n: lambda: n.gradient(n.arange(4.0), n.arange(3.0)),
    "gradient_too_small": lambda j, n: lambda: n.gradient(n.arange(1.0)),
    # 5. +0 in the other triangle.
    "solve_triangular_grad": lambda j, n: lambda: j.grad(
        lambda a: j.scipy.linalg.solve_triangular(a, n.array([1.0, 2.0]), lower=True).sum())(
        n.array([[2.0, 0.0], [1.0, 3.0]])),
    "solve_triangular_grad_upper": lambda j, n: lambda: j.grad(
        lambda a: j.scipy.linalg.solve_triangular(a, n.array([1.0, 2.0])).sum())(
        n.array([[2.0, 1.0], [0.0, 3.0]])),
    # 6. reduce_window.
    "rw_defaults": lambda j, n: _rw(j, n, _x(n), 0.0, j.lax.add, (2, 2)),
    "rw_same_default_strides": lambda j, n: _rw(j, n, _x(n), 0.0, j.lax.add, (2, 2),
                                                padding=((0, 1), (1, 0))),
    "rw_mul": lambda j, n: _rw(j, n, n.arange(1.0, 5.0), 1.0, j.lax.mul, (2,)),
    "rw_mul_same": lambda j, n: _rw(j, n, n.arange(1.0, 5.0), 1.0, j.lax.mul, (2,), (1,),
                                    "SAME"),
    "rw_mul_int": lambda j, n: _rw(j, n, n.arange(1, 5), 1, j.lax.mul, (2,)),
    "rw_bitwise_or": lambda j, n: _rw(j, n, n.array([True, False, False]), False,
                                      j.lax.bitwise_or, (2,)),
    "rw_add_init": lambda j, n: _rw(j, n, n.ones(3), 1.0, j.lax.add, (2,), (1,), "SAME"),
    "rw_add_init_dilated": lambda j, n: _rw(j, n, _x(n), 1.0, j.lax.add, (2, 2), (1, 1), "SAME",
                                            base_dilation=(2, 1)),
    "rw_max_init": lambda j, n: _rw(j, n, _x(n), n.float32(5), j.lax.max, (2, 2)),
    "rw_min_same": lambda j, n: _rw(j, n, _x(n), 2.0, j.lax.min, (2, 2), (1, 1), "SAME"),
    "rw_pytree": lambda j, n: _rw(j, n, (_x(n), _x(n)), (0.0, 1.0),
                                  lambda a, b: (a[0] + b[0], a[1] * b[1]), (2, 2)),
    "rw_list": lambda j, n: _rw(j, n, [_x(n)], [0.0], lambda a, b: [a[0] + b[0]], (2, 2)),
    "rw_out_tree": lambda j, n: _rw(j, n, (_x(n), _x(n)), (0.0, 1.0),
                                    lambda a, b: (a[0] + b[0],), (2, 2)),
    "rw_in_tree": lambda j, n: _rw(j, n, (_x(n), _x(n)), 0.0, j.lax.add, (2, 2)),
    "rw_init_strong_dtype": lambda j, n: _rw(j, n, n.ones(3), n.int32(1), j.lax.add, (2,)),
    "rw_init_float_on_int": lambda j, n: _rw(j, n, n.arange(3), 1.0, j.lax.add, (2,)),
    "rw_init_shape": lambda j, n: _rw(j, n, _x(n), n.zeros(2), j.lax.add, (2, 2)),
    "rw_identity_int_init": lambda j, n: _rw(j, n, _x(n), 0, j.lax.add, (2, 2)),
    "rw_sum_bool": lambda j, n: _rw(j, n, n.array([True, False]), False, j.lax.add, (2,)),
    "rw_jit_init": lambda j, n: lambda: j.jit(
        lambda i: j.lax.reduce_window(_x(n), i, j.lax.add, (2, 2)))(1.0),
    "rw_jit_mul": lambda j, n: lambda: j.jit(
        lambda v: j.lax.reduce_window(v, 1.0, j.lax.mul, (2, 2)))(_x(n)),
    "rw_vmap_mul": lambda j, n: lambda: j.vmap(
        lambda v: j.lax.reduce_window(v, 1.0, j.lax.mul, (2,)))(_x(n)),
    "rw_jvp_mul": lambda j, n: lambda: j.jvp(
        lambda v: j.lax.reduce_window(v, 1.0, j.lax.mul, (2,)), (n.arange(1.0, 4.0),),
        (n.ones(3),)),
    "rw_rank": lambda j, n: _rw(j, n, _x(n), 0.0, j.lax.add, (2,), (1, 1)),
    "rw_strides_len": lambda j, n: _rw(j, n, _x(n), 0.0, j.lax.add, (2, 2), (1,)),
    "rw_zero_window": lambda j, n: _rw(j, n, _x(n), 0.0, j.lax.add, (0, 2), (1, 1)),
    "rw_negative_window": lambda j, n: _rw(j, n, _x(n), 0.0, j.lax.add, (-2, 2), (1, 1)),
    "rw_zero_stride": lambda j, n: _rw(j, n, _x(n), 0.0, j.lax.add, (2, 2), (0, 1)),
    "rw_zero_dilation": lambda j, n: _rw(j, n, _x(n), 0.0, j.lax.add, (2, 2), (1, 1), "VALID",
                                         window_dilation=(0, 1)),
    "rw_zero_base_dilation": lambda j, n: _rw(j, n, _x(n), 0.0, j.lax.add, (2, 2), (1, 1),
                                              "VALID", base_dilation=(0, 1)),
    "rw_dilation_len": lambda j, n: _rw(j, n, _x(n), 0.0, j.lax.add, (2, 2), (1, 1), "VALID",
                                        base_dilation=(1,)),
    "rw_padding_len": lambda j, n: _rw(j, n, _x(n), 0.0, j.lax.add, (2, 2), (1, 1),
                                       ((0, 0),)),
    "rw_max_mul_generic_same": lambda j, n: _rw(j, n, _x(n), -n.inf, j.lax.max, (2, 2),
                                                (2, 2), "SAME"),
    # 7. dynamic_update_slice.
    "dus_dtype": lambda j, n: lambda: j.lax.dynamic_update_slice(
        n.ones(2), n.ones(1, n.float16), (0,)),
    "dus_rank": lambda j, n: lambda: j.lax.dynamic_update_slice(n.ones(2), n.ones((1, 1)),
                                                                (0,)),
    "dus_size": lambda j, n: lambda: j.lax.dynamic_update_slice(n.ones(2), n.ones(3), (0,)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax(name: str) -> None:
    _same(CASES[name])


X64 = ["comb_ints", "comb_repetition", "factorial_int", "psum_int", "psum_half", "norm_ord0",
       "norm_ord0_half", "vector_norm_ord3_int", "gradient_spacing_count", "rw_mul", "rw_add_init",
       "rw_init_strong_dtype", "rw_pytree", "dawsn_float"]


@pytest.mark.parametrize("name", X64)
def test_matches_jax_x64(name: str) -> None:
    _same(CASES[name], x64=True)


def test_reduce_window_generic_gradient() -> None:
    """funcgrad differentiates a reduce_window of any computation (JAX's linearization
    refuses; sharp_bits): the gradient of a windowed product is its product rule."""
    x = fnp.arange(1.0, 5.0)
    g = fg.grad(lambda v: fg.lax.reduce_window(v, 1.0, fg.lax.mul, (2,)).sum())(x)
    # d/dx of x0x1 + x1x2 + x2x3
    assert g.tolist() == [2.0, 4.0, 6.0, 3.0]
    t = jax.jvp(lambda v: jax.lax.reduce_window(v, 1.0, jax.lax.mul, (2,)).sum(),
                (jnp.arange(1.0, 5.0),), (jnp.ones(4),))[1]
    assert float(t) == float(g.sum())


def test_reduce_window_python_number_init_takes_operand_dtype() -> None:
    """A Python number beside the operand takes its dtype where weak-type promotion keeps
    it (JAX refuses an int beside float data, or any int beside int32 data in x64 mode:
    sharp_bits); a strongly typed init of another dtype is refused as JAX refuses it."""
    out = fg.lax.reduce_window(fnp.ones(3), 1, fg.lax.add, (2,), (1,), "SAME")
    assert out.tolist() == [3.0, 3.0, 2.0] and out.dtype == fnp.float32
    with fg.enable_x64(True):
        x = fnp.arange(4, dtype=fnp.int32)
        low = fg.lax.reduce_window(x, int(fnp.iinfo(fnp.int32).min), fg.lax.max, (2,))
        assert low.tolist() == [1, 2, 3] and low.dtype == fnp.int32
    with pytest.raises(TypeError, match="inconsistent dtypes"):
        fg.lax.reduce_window(fnp.arange(3), 1.0, fg.lax.add, (2,))


def test_tril_of_nan_cotangent_is_zero() -> None:
    """The other triangle of a triangular solve's matrix gets +0 even where the full
    cotangent would be NaN (a selection, not a product with a 0/1 mask)."""
    a = fnp.array([[2.0, 0.0], [1.0, 3.0]])
    g = fg.grad(lambda m: fg.scipy.linalg.solve_triangular(
        m, fnp.array([1.0, 2.0]), lower=True).sum())(a)
    assert str(g[0, 1]) == "0.0"
