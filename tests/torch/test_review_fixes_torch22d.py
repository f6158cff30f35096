"""no_grad and detach inside torch.func transforms, side by side with PyTorch 2.13: reverse
transforms (grad, grad_and_value, vjp, jacrev) respect a no_grad of the function's own and
ignore one around the call; forward mode (jvp, jacfwd) ignores no_grad; detach cuts the
value for every transform. Before, both were ignored: silently wrong gradients."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft

torch = pytest.importorskip("torch")


def _programs(L: Any) -> dict[str, Any]:
    F = L.func

    def inner_no_grad(v: Any) -> Any:
        with L.no_grad():
            c = (v ** 2).sum()
        return (v * 2).sum() + c * v.sum()

    def detached(v: Any) -> Any:
        return (v.detach() * v).sum() + v.detach().sum() * v.sin().sum()

    def no_grad_product(v: Any) -> Any:
        with L.no_grad():
            w = v * 3
        return (w * v).sum()

    def mode_inside(v: Any) -> Any:
        return v.sum() * float(L.is_grad_enabled())

    def outer_no_grad(fn: Any) -> Any:
        def run(v: Any) -> Any:
            with L.no_grad():
                return fn(v)
        return run

    ones = lambda x: L.ones_like(x)  # noqa: E731
    return {
        "grad": lambda x: F.grad(inner_no_grad)(x),
        "grad_outer_no_grad": outer_no_grad(lambda x: F.grad(inner_no_grad)(x)),
        "grad_and_value": lambda x: F.grad_and_value(no_grad_product)(x),
        "vjp": lambda x: F.vjp(inner_no_grad, x)[1](L.tensor(1.0, dtype=x.dtype)),
        "jacrev": lambda x: F.jacrev(inner_no_grad)(x),
        "jvp_ignores_no_grad": lambda x: F.jvp(inner_no_grad, (x,), (ones(x),)),
        "jacfwd_ignores_no_grad": lambda x: F.jacfwd(inner_no_grad)(x),
        "vmap_of_grad": lambda x: F.vmap(F.grad(inner_no_grad))(L.stack([x, 2 * x])),
        "grad_of_detach": lambda x: F.grad(detached)(x),
        "jvp_of_detach": lambda x: F.jvp(detached, (x,), (ones(x),)),
        "jacfwd_of_detach": lambda x: F.jacfwd(detached)(x),
        "hessian_of_detach": lambda x: F.hessian(detached)(x),
        "grad_mode_inside_under_outer_no_grad": outer_no_grad(lambda x: F.grad(mode_inside)(x)),
    }


@pytest.mark.parametrize("name", sorted(_programs(ft)))
@settings(max_examples=5, deadline=None)
@given(values=st.lists(st.floats(-2, 2), min_size=1, max_size=4))
def test_no_grad_and_detach_inside_transforms_as_torch(values: list[float], name: str
                                                        ) -> None:
    ours = _programs(ft)[name](ft.tensor(values, dtype=ft.float64))
    theirs = _programs(torch)[name](torch.tensor(values, dtype=torch.float64))
    flat_ours = ours if isinstance(ours, tuple) else (ours,)
    flat_theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    for a, b in zip(flat_ours, flat_theirs, strict=True):
        a = a[0] if isinstance(a, tuple) else a
        b = b[0] if isinstance(b, tuple) else b
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)


def test_a_no_grad_block_inside_grad_gives_the_gradient_of_the_rest() -> None:
    # Independent of the oracle: d/dv [2 sum(v) + c sum(v)] with c constant is 2 + c.
    v = ft.tensor([0.5, -1.5, 2.0], dtype=ft.float64)
    c = float((v ** 2).sum())

    def f(u: Any) -> Any:
        with ft.no_grad():
            k = (u ** 2).sum()
        return (u * 2).sum() + k * u.sum()

    np.testing.assert_allclose(ft.func.grad(f)(v).numpy(), np.full(3, 2 + c))


# --------------------------------------- half precision by a scalar, as PyTorch's CPU kernels


def _half_programs(L: Any) -> dict[str, Any]:
    def inplace(name: str) -> Any:
        def run(x: Any, s: float) -> Any:
            y = x.clone()
            getattr(y, name)(s)
            return y
        return run

    return {
        "mul": lambda x, s: x * s, "rmul": lambda x, s: s * x, "div": lambda x, s: x / s,
        "rdiv": lambda x, s: s / x, "mul_0d": lambda x, s: x * L.tensor(s),
        "div_0d_float64": lambda x, s: x / L.tensor(s, dtype=L.float64),
        "mul_": inplace("mul_"), "div_": inplace("div_"), "torch.mul": lambda x, s: L.mul(x, s),
        "addcmul": lambda x, s: L.addcmul(x, x, x.flip(0), value=s),
        "addcdiv": lambda x, s: L.addcdiv(x, x.flip(0), x.abs() + 1, value=s),
        "lerp": lambda x, s: L.lerp(x, x.flip(0), s),
        "lerp_tensor_weight": lambda x, s: L.lerp(x, x.flip(0), L.full_like(x, s)),
        "grad_of_mul": lambda x, s: L.autograd.grad((x.requires_grad_() * s).sum(), x)[0],
    }


@pytest.mark.parametrize("name", sorted(_half_programs(ft)))
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@settings(max_examples=6, deadline=None)
@given(values=st.lists(st.floats(-100, 100, width=32), min_size=1, max_size=80),
       s=st.floats(-4, 4).filter(lambda v: abs(v) > 1e-3))
def test_half_precision_by_a_scalar_is_computed_in_float32_as_torch(
        name: str, dtype: str, values: list[float], s: float) -> None:
    ours = _half_programs(ft)[name](ft.tensor(values).to(getattr(ft, dtype)), s)
    theirs = _half_programs(torch)[name](torch.tensor(values).to(getattr(torch, dtype)), s)
    assert str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_array_equal(ours.detach().float().numpy(),
                                  theirs.detach().float().numpy())


def test_bfloat16_times_a_number_rounds_once() -> None:
    # Independent of the oracle: 2.25 * 3.3 = 7.425 is nearer 7.4375 than 7.40625 in
    # bfloat16; rounding 3.3 to bfloat16 first (3.296875) would give 7.40625.
    x = ft.tensor([2.25], dtype=ft.bfloat16)
    assert float((x * 3.3)[0]) == 7.4375
    assert float((ft.tensor([2.25], dtype=ft.bfloat16).mul_(3.3))[0]) == 7.4375
