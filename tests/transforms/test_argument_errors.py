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
