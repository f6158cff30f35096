"""Gradients of complex tensors on the PyTorch face follow PyTorch's convention (the
conjugate of the engine's, JAX's): ``.grad``, ``autograd.grad``, seeds, hooks, custom
``Function.backward``, double backward, ``torch.func`` and ``autograd.functional``, and the
optimizers stepping complex parameters. Each program runs on real torch and on funcgrad.torch
with the same drawn values; the expected numbers are torch's. Also: ``torch.func.grad`` of an
integer output (zeros), ``torch.func.jvp`` with a tangent of another floating dtype, and the
dtype of ``grad_outputs``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

import funcgrad  # noqa: E402
import funcgrad.torch as ft  # noqa: E402

_C = 0.3 - 0.7j  # a complex constant with both parts nonzero

# Complex numbers away from 0 (abs and angle are not differentiable there).
_parts = st.floats(-2.0, 2.0, allow_nan=False, allow_infinity=False)
_z = st.tuples(_parts, _parts).map(lambda p: complex(*p)).filter(lambda z: abs(z) > 0.1)
_vec = st.lists(_z, min_size=3, max_size=3)
_mat = st.lists(_z, min_size=4, max_size=4)


def _np(x):
    if isinstance(x, (tuple, list)):
        return [_np(v) for v in x]
    if x is None:
        return None
    return np.asarray(x.detach().resolve_conj().cpu().numpy() if hasattr(x, "detach") else x)


def _same(mine, theirs, rtol=1e-9, atol=1e-10):
    """funcgrad's results equal torch's (nested lists of tensors), dtypes included."""
    if isinstance(theirs, (tuple, list)):
        assert isinstance(mine, (tuple, list)) and len(mine) == len(theirs), (mine, theirs)
        for a, b in zip(mine, theirs):
            _same(a, b, rtol, atol)
        return
    if theirs is None:
        assert mine is None
        return
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(_np(mine), _np(theirs), rtol=rtol, atol=atol)


def _both(program, *values):
    """``program(module, *values)`` on funcgrad.torch and on torch, compared."""
    _same(program(ft, *values), program(torch, *values))


def _leaf(m, vals, dtype="complex128"):
    return m.tensor(vals, dtype=getattr(m, dtype), requires_grad=True)


# ------------------------------------------------------------ .grad through many ops

def _ops(m, x, c):
    return {
        "abs": x.abs().sum(),
        "abs2_real": (x.abs() ** 2 + x.real * 3).sum(),
        "imag": (x.imag * x.real).sum(),
        "angle": x.angle().sum(),
        "mul_const": (x * c).real.sum() + (x * c).imag.sum(),
        "conj": (x.conj() * c).sum().real,
        "exp": (x * c).exp().abs().sum(),
        "sum_real": (x * x).sum().real,
        "view_as_real": (m.view_as_real(x) ** 3).sum(),
    }


@pytest.mark.parametrize("op", list(_ops(torch, torch.ones(1, dtype=torch.complex128,
                                                            requires_grad=True),
                                         torch.tensor(_C)).keys()))
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@settings(max_examples=15, deadline=None)
@given(vals=_vec)
def test_backward_grad_matches_torch(op, dtype, vals):
    def program(m, vals):
        x = _leaf(m, vals, dtype)
        _ops(m, x, m.tensor(_C, dtype=getattr(m, dtype)))[op].backward()
        return x.grad

    tol = dict(rtol=1e-4, atol=1e-5) if dtype == "complex64" else {}
    _same(program(ft, vals), program(torch, vals), **tol)


@settings(max_examples=20, deadline=None)
@given(a=_mat, b=_mat)
def test_matmul_of_complex_matrices(a, b):
    def program(m, a, b):
        A = m.tensor(a, dtype=m.complex128).reshape(2, 2).requires_grad_(True)
        B = m.tensor(b, dtype=m.complex128).reshape(2, 2).requires_grad_(True)
        (A @ B).abs().sum().backward()
        return A.grad, B.grad

    _both(program, a, b)


@settings(max_examples=20, deadline=None)
@given(vals=st.lists(_parts, min_size=4, max_size=4))
def test_view_as_complex_of_a_real_leaf(vals):
    def program(m, vals):
        x = m.tensor(vals, dtype=m.float64).reshape(2, 2).requires_grad_(True)
        (m.view_as_complex(x) * _C).abs().sum().backward()
        return x.grad

    _both(program, vals)


def test_real_repro_from_the_report():
    x = ft.tensor([1 + 1j, 2 - 0.5j], requires_grad=True)
    (x.abs() ** 2 + x.real * 3).sum().backward()
    t = torch.tensor([1 + 1j, 2 - 0.5j], requires_grad=True)
    (t.abs() ** 2 + t.real * 3).sum().backward()
    _same(x.grad, t.grad, rtol=1e-6, atol=1e-6)


# ------------------------------------------------------------ seeds, hooks, graph

@settings(max_examples=20, deadline=None)
@given(vals=_vec, seed=_vec)
def test_seeds_retain_grad_and_autograd_grad(vals, seed):
    def program(m, vals, seed):
        s = m.tensor(seed, dtype=m.complex128)
        x = _leaf(m, vals)
        y = (x * _C).exp()
        y.retain_grad()
        (g,) = m.autograd.grad(y, x, grad_outputs=s, retain_graph=True)
        y.backward(s)
        x2 = _leaf(m, vals)
        (x2 * _C).sum().backward(gradient=s[0])
        x3 = _leaf(m, vals)
        (x3 * x3).backward(s, inputs=[x3])
        return g, x.grad, y.grad, x2.grad, x3.grad

    _both(program, vals, seed)


@settings(max_examples=20, deadline=None)
@given(vals=_vec)
def test_tensor_hooks_see_and_return_torch_gradients(vals):
    def program(m, vals):
        seen = []
        x = _leaf(m, vals)
        x.register_hook(lambda g: (seen.append(g.clone()), g * (2 - 1j))[1])
        y = x * _C
        y.register_hook(lambda g: (seen.append(g.clone()), g * (1 + 1j))[1])
        (y.angle().sum() + y.abs().sum()).backward()
        return x.grad, seen

    _both(program, vals)


@settings(max_examples=20, deadline=None)
@given(vals=_vec)
def test_node_hooks_and_module_backward_hooks(vals):
    def program(m, vals):
        seen = []
        x = _leaf(m, vals)
        y = x * _C
        y.grad_fn.register_prehook(lambda go: (seen.append(go[0].clone()), (go[0] * 1j,))[1])
        y.grad_fn.register_hook(lambda gi, go: seen.append(gi[0].clone()))
        mod = m.nn.Identity()
        mod.register_full_backward_pre_hook(
            lambda _, go: (seen.append(go[0].clone()), (go[0] * (1 - 1j),))[1])
        mod.register_full_backward_hook(lambda _, gi, go: seen.append(gi[0].clone()))
        (mod(y).abs() ** 2).sum().backward()
        return x.grad, seen

    _both(program, vals)


@settings(max_examples=20, deadline=None)
@given(vals=_vec)
def test_custom_function_backward_in_torch_convention(vals):
    def program(m, vals):
        seen = []

        class Scale(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * _C

            @staticmethod
            def backward(ctx, g):
                seen.append(g.clone())
                return g * (1 + 2j)

        x = _leaf(m, vals)
        (Scale.apply(x).abs() ** 2).sum().backward()
        return x.grad, seen

    _both(program, vals)


@settings(max_examples=20, deadline=None)
@given(vals=_vec, w=_vec)
def test_double_backward(vals, w):
    def program(m, vals, w):
        x = _leaf(m, vals)
        (g,) = m.autograd.grad((x * x * _C).abs().sum(), x, create_graph=True)
        (h,) = m.autograd.grad((g * m.tensor(w, dtype=m.complex128)).real.sum(), x)
        return g.detach(), h

    _both(program, vals, w)


# ------------------------------------------------------------ torch.func, functional

@settings(max_examples=20, deadline=None)
@given(vals=_vec, ct=_vec)
def test_func_transforms(vals, ct):
    def program(m, vals, ct):
        x = m.tensor(vals, dtype=m.complex128)
        v = m.tensor(ct, dtype=m.complex128)

        def loss(a):
            return (a.abs() ** 2 + a.real * 3 + (a * _C).imag).sum()

        g = m.func.grad(loss)(x)
        gv = m.func.grad_and_value(loss)(x)
        ga, aux = m.func.grad(lambda a: (loss(a), a * 2), has_aux=True)(x)
        _, vjp_fn = m.func.vjp(lambda a: (a * _C).exp(), x)
        jv = m.func.jvp(lambda a: (a * _C).exp(), (x,), (v,))
        jv_abs = m.func.jvp(lambda a: a.abs(), (x,), (v,))
        gg = m.func.grad(lambda a: m.func.grad(loss)(a).abs().sum())(x)
        return g, gv, ga, aux, vjp_fn(v), jv, jv_abs, gg

    _both(program, vals, ct)


def test_func_jacrev_of_complex_intermediates():
    def program(m):
        x = m.tensor([1.0, 2.0], dtype=m.float64)
        return m.func.jacrev(lambda a: m.view_as_real((a * _C).exp()))(x)

    _both(program)


@settings(max_examples=15, deadline=None)
@given(vals=_vec, v=_vec)
def test_autograd_functional(vals, v):
    def program(m, vals, v):
        F = m.autograd.functional
        x = m.tensor(vals, dtype=m.complex128)
        vv = m.tensor(v, dtype=m.complex128)

        def f(a):
            return (a * _C).exp()

        def s(a):
            return (a.abs() ** 2 * a.real).sum()

        return (F.vjp(f, x, vv)[1], F.jvp(f, x, vv)[1], F.hvp(s, x, vv)[1],
                F.vhp(s, x, vv)[1], F.jacobian(lambda a: a.abs(), x))

    _both(program, vals, v)


def test_complex_outputs_refused_where_torch_wants_a_real_seed():
    x = [1 + 1j, 2j]

    def cases(m):
        F = m.autograd.functional
        t = m.tensor(x, dtype=m.complex128)
        leaf = _leaf(m, x)
        return [lambda: (leaf * 2).sum().backward(),
                lambda: m.func.grad(lambda a: (a * 2).sum())(t),
                lambda: F.jacobian(lambda a: a * _C, t),
                lambda: F.hessian(lambda a: (a * a).sum(), t)]

    for mine, theirs in zip(cases(ft), cases(torch), strict=True):
        with pytest.raises(RuntimeError) as a:
            mine()
        with pytest.raises(RuntimeError) as b:
            theirs()
        assert str(a.value) == str(b.value)


# ------------------------------------------------------------ optimizers

@pytest.mark.parametrize("name,kw", [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.1}),
    ("Adam", {"lr": 0.1, "amsgrad": True, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.1, "maximize": True}),
    ("AdamW", {"lr": 0.1}),
])
@settings(max_examples=10, deadline=None)
@given(vals=_mat)
def test_optimizers_step_complex_parameters(name, kw, vals):
    def program(m, vals):
        p = m.nn.Parameter(m.tensor(vals, dtype=m.complex128).reshape(2, 2))
        opt = getattr(m.optim, name)([p], **kw)
        for _ in range(3):
            opt.zero_grad()
            ((p * _C).abs() ** 2 + p.imag * p.real).sum().backward()
            opt.step()
        return p.detach(), opt.state[p].get("exp_avg_sq")

    _both(program, vals)


def test_adam_state_of_a_transposed_complex_parameter():
    def program(m):
        p = m.nn.Parameter(m.tensor([[1 + 1j, 2j], [0.5, -1 - 1j]],
                                    dtype=m.complex128).t())
        opt = m.optim.Adam([p], lr=0.1)
        for _ in range(2):
            opt.zero_grad()
            (p.abs() ** 2 * m.tensor([1.0, 2.0], dtype=m.float64)).sum().backward()
            opt.step()
        return p.detach(), opt.state[p]["exp_avg"], opt.state[p]["exp_avg_sq"]

    _both(program)


# ------------------------------------------------------------ integer outputs, dtypes

def test_func_grad_of_integer_or_bool_output_is_zeros():
    def program(m):
        x = m.tensor([1.0, 2.0])
        xd = m.tensor([1.0, 2.0], dtype=m.float64)
        return [m.func.grad(lambda a: (a * 3).long().sum())(x),
                m.func.grad(lambda a: (a * 3).sum().long())(xd),
                m.func.grad(lambda a: (a > 1).sum() > 0)(x),
                list(m.func.grad_and_value(lambda a: (a * 3).long().sum())(x)),
                list(m.func.grad(lambda a: ((a * 3).long().sum(), a * 2), has_aux=True)(x)),
                list(m.func.grad(lambda a, b: (a * b).long().sum(), argnums=(0, 1))(x, x))]

    _both(program)


@settings(max_examples=20, deadline=None)
@given(vals=st.lists(_parts, min_size=3, max_size=3),
       tan=st.lists(_parts, min_size=3, max_size=3))
def test_func_jvp_with_a_wider_tangent(vals, tan):
    def program(m, vals, tan):
        x = m.tensor(vals)
        t = m.tensor(tan, dtype=m.float64)
        return [list(m.func.jvp(lambda a: a * 2, (x,), (t,))),
                list(m.func.jvp(lambda a: a.sum(), (x,), (t,))),
                list(m.func.jvp(m.sin, (x,), (t.half(),))),
                list(m.func.jvp(m.sin, (x.double(),), (t.float(),))),
                list(m.func.jvp(lambda a, b: a * b, (x, x), (t, t.float())))]

    # (the tangent is carried in the primal's float32, then widened: float32's precision)
    _same(program(ft, vals, tan), program(torch, vals, tan), rtol=1e-6, atol=1e-6)


def test_func_jvp_refuses_an_integer_tangent_with_torch_error():
    def run(m):
        return m.func.jvp(lambda a: a * 2, (m.tensor([1.0]),), (m.tensor([1]),))

    with pytest.raises(ValueError) as a:
        run(ft)
    with pytest.raises(ValueError) as b:
        run(torch)
    assert str(a.value) == str(b.value)


def test_jax_face_jvp_still_refuses_mismatched_tangent_dtype():
    with pytest.raises(Exception, match="dtypes must be equal"):
        funcgrad.jvp(lambda a: a * 2, (np.ones(2, np.float32),), (np.ones(2, np.float64),))


@settings(max_examples=20, deadline=None)
@given(vals=st.lists(_parts, min_size=2, max_size=2))
def test_grad_outputs_of_another_real_dtype_are_cast(vals):
    def program(m, vals):
        x = m.tensor(vals, requires_grad=True)
        F = m.autograd.functional
        return [m.autograd.grad(x * 2, x, m.ones(2, dtype=m.float64))[0],
                m.autograd.grad(x * 2, x, m.ones(2, dtype=m.float16))[0],
                F.jvp(m.sin, x.detach(), m.tensor(vals, dtype=m.float64))[1]]

    _same(program(ft, vals), program(torch, vals), rtol=1e-6, atol=1e-6)


def test_grad_outputs_complex_vs_real_mismatch_refused():
    def run(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        return m.autograd.grad(x * 2, x, m.ones(2, dtype=m.complex64))

    with pytest.raises(RuntimeError) as a:
        run(ft)
    with pytest.raises(RuntimeError) as b:
        run(torch)
    assert str(a.value) == str(b.value)
