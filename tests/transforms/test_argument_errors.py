"""Mistakes in how transforms are called get a clear error, never a wrong answer."""

from __future__ import annotations

import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.errors import ArgnumsError


def test_duplicate_argnums_are_refused() -> None:
    # JAX crashes inside its own code here; a silently wrong gradient would be worse.
    with pytest.raises(ArgnumsError, match=r"argnums=\(0, 0\) names argument 0 twice"):
        fg.grad(lambda x, y: x * y, argnums=(0, 0))(2.0, 3.0)
    with pytest.raises(ArgnumsError, match="twice"):
        fg.grad(lambda x, y: x * y, argnums=(1, -1))(2.0, 3.0)


def test_static_argnums_out_of_range_are_refused_as_in_jax() -> None:
    with pytest.raises(ValueError, match=r"Jitted function has static_argnums=\(3,\), but only "
                                         r"accepts 1 positional arguments\."):
        fg.jit(lambda x: x, static_argnums=(3,))(1.0)


def test_custom_jvp_tangent_of_the_wrong_shape_is_refused_as_in_jax() -> None:
    @fg.custom_jvp
    def f(x):  # type: ignore[no-untyped-def]
        return x * 2

    f.defjvp(lambda p, t: (f(p[0]), fnp.ones(3)))
    with pytest.raises(TypeError, match="Custom JVP rule must produce primal and tangent "
                                        "outputs with corresponding shapes and dtypes"):
        fg.jvp(f, (1.0,), (1.0,))


@pytest.mark.parametrize("name", ["cond", "fori_loop", "while_loop", "scan", "jit"])
def test_linearize_returns_concrete_primals_through_control_flow(name: str) -> None:
    from funcgrad import lax  # noqa: PLC0415
    from funcgrad.core import Tracer  # noqa: PLC0415

    fns = {
        "cond": lambda x: lax.cond(x > 0, fnp.sin, fnp.cos, x),
        "fori_loop": lambda x: lax.fori_loop(0, 3, lambda i, v: v * x, 1.0),
        "while_loop": lambda x: lax.while_loop(lambda c: c[0] < 3,
                                               lambda c: (c[0] + 1, c[1] * x), (0, 1.0))[1],
        "scan": lambda x: lax.scan(lambda c, _: (c * x, None), 1.0, None, length=3)[0],
        "jit": fg.jit(fnp.sin),
    }
    f = fns[name]
    y, f_jvp = fg.linearize(f, 0.7)
    assert not isinstance(y, Tracer)
    want, tangent = fg.jvp(f, (0.7,), (1.0,))
    assert float(y) == pytest.approx(float(want))
    assert float(f_jvp(1.0)) == pytest.approx(float(tangent))


def test_reverse_mode_skips_a_loop_whose_carry_has_zero_derivative() -> None:
    # JAX's symbolic zeros: stop_gradient (or round) before the loop leaves nothing to
    # differentiate through it, so the while_loop needs no reverse rule.
    from funcgrad import lax  # noqa: PLC0415

    def f(x):  # type: ignore[no-untyped-def]
        start = lax.stop_gradient(x)
        return lax.while_loop(lambda c: c < 3.0, lambda c: c + 1.0, start) + x

    assert float(fg.grad(f)(1.0)) == 1.0
    g = fg.grad(lambda x: lax.while_loop(lambda c: c < 3.0, lambda c: c + 1.0,
                                         fnp.round(x)) * x)(1.2)
    assert float(g) == 3.0


def test_mod_jvp_with_a_scalar_operand_has_the_output_shape() -> None:
    a, c = 1.5, fnp.full((2, 2), 0.7)
    _, t = fg.jvp(lambda u: fnp.mod(u, c), (a,), (1.0,))
    assert t.shape == (2, 2)
    assert float(fg.hessian(lambda u: fnp.sum(fnp.mod(u, c)))(a)) == 0.0
