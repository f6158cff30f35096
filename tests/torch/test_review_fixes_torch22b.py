"""PyTorch-face fixes from running the ``torch.func`` and "extending PyTorch" tutorials side
by side with torch 2.13: transformed functions keep the function's name (``vmap(grad(f))``'s
errors name ``f``); ``vjp``'s ``vjp_fn`` checks its cotangents as PyTorch does and keeps
dicts in the user's key order (the neural-tangent-kernel recipe); ``autograd.Function``'s
``vmap`` staticmethod is called under ``vmap`` (NumPy-backed Functions), ``jvp`` with
``save_for_forward`` under ``forward_ad`` and ``torch.func.jvp``, forward's defaults and
keyword arguments as inputs, and PyTorch's errors for dirty inputs not returned, gradients of
non-tensor inputs, a missing ``backward``/``forward`` and instantiation."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft
from tests.support.finite_differences import central_grad
from tests.torch._outcomes import outcome, same_outcome, shown

torch = pytest.importorskip("torch")


def _both(program: Any) -> None:
    """``program(lib)`` gives the same shown results (or error) with both libraries."""
    same_outcome(program)


# ------------------------------------------------------------------ names of transforms


def _named_f(lib: Any) -> Any:
    def f(p: Any, x: Any) -> Any:
        """Doc of f."""
        return (p["a"] * x).sum()

    out = []
    for name in ["grad", "grad_and_value", "vmap", "jacrev", "jacfwd", "hessian"]:
        h = getattr(lib.func, name)(f)
        out.append((name, h.__name__, h.__doc__, h.__wrapped__ is f))
    g = lib.func.grad(f)
    out.append(outcome(lambda: lib.func.vmap(g, in_dims=(0,))({"a": lib.ones(3)},
                                                              lib.ones(3))))
    return out


def test_transforms_keep_the_functions_name_and_errors_name_it():
    _both(_named_f)


# ------------------------------------------------------------------ vjp_fn's cotangents


def _two(x: Any) -> Any:
    return x.sin(), {"b": x.cos()}


_COTANGENTS = {
    "dtype": lambda lib: lib.ones(2, dtype=lib.float64),
    "int": lambda lib: lib.ones(2, dtype=lib.long),
    "complex": lambda lib: lib.ones(2, dtype=lib.complex64),
    "shape": lambda lib: lib.ones(3),
    "float": lambda lib: 1.0,
    "none": lambda lib: None,
    "structure": lambda lib: (lib.ones(2), lib.ones(2)),
}


@pytest.mark.parametrize("kind", sorted(_COTANGENTS))
def test_vjp_fn_checks_its_cotangents_as_torch(kind):
    def run(lib: Any) -> Any:
        out, fn = lib.func.vjp(lib.sin, lib.ones(2))
        return fn(_COTANGENTS[kind](lib))

    _both(run)


@pytest.mark.parametrize("ct", [
    lambda lib: (lib.ones(2), {"c": lib.ones(2)}),
    lambda lib: [lib.ones(2), {"b": lib.ones(2)}],
    lambda lib: (lib.ones(2), {"b": lib.ones(1, 2)}),  # PyTorch's list.index quirk
    lambda lib: (lib.ones(2), {"b": lib.full((2,), 2.0)}),
])
def test_vjp_fn_checks_nested_cotangents(ct):
    def run(lib: Any) -> Any:
        return lib.func.vjp(_two, lib.ones(2))[1](ct(lib))

    _both(run)


def test_vjp_fn_takes_retain_graph_and_implicit_scalar_cotangent():
    def run(lib: Any) -> Any:
        x = lib.tensor([0.5, 1.0])
        a = lib.func.vjp(lib.sin, x)[1](lib.ones(2), retain_graph=False)
        b = lib.func.vjp(lambda v: v.sum(), x)[1](None)
        c = outcome(lambda: lib.func.vjp(lambda v: v.sum(), x)[1](lib.ones(1)))
        return a, b, c

    _both(run)


def _ntk(lib: Any) -> Any:
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2)).double()
    params = {k: v.detach() for k, v in net.named_parameters()}
    x1 = lib.linspace(-1, 1, 6, dtype=lib.float64).reshape(2, 3)
    x2 = lib.linspace(0, 2, 9, dtype=lib.float64).reshape(3, 3)

    def f(p: Any, x: Any) -> Any:
        return lib.func.functional_call(net, p, (x.unsqueeze(0),)).squeeze(0)

    def get_ntk(a: Any, b: Any) -> Any:
        out, vjp_fn = lib.func.vjp(lambda p: f(p, a), params)

        def ntk_slice(vec: Any) -> Any:
            vjps = vjp_fn(vec)
            return lib.func.jvp(lambda p: f(p, b), (params,), vjps)[1]

        return lib.func.vmap(ntk_slice)(lib.eye(out.numel(), dtype=out.dtype))

    by_products = lib.func.vmap(lib.func.vmap(get_ntk, (None, 0)), (0, None))(x1, x2)
    jac1 = lib.func.vmap(lib.func.jacrev(f), (None, 0))(params, x1)
    jac2 = lib.func.vmap(lib.func.jacrev(f), (None, 0))(params, x2)
    by_jacobians = sum(lib.einsum("Naf,Mbf->NMab", j1.flatten(2), j2.flatten(2))
                       for j1, j2 in zip(jac1.values(), jac2.values()))
    grads = lib.func.vjp(lambda p: f(p, x1[0]), params)[1](lib.ones(2))[0]
    return by_products, by_jacobians, list(grads), list(jac1)


def test_ntk_by_vector_products_keeps_the_parameters_dict_order():
    mine, want = _ntk(ft), _ntk(torch)
    for a, b in zip(mine[:2], want[:2]):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(mine[0].numpy(), mine[1].numpy(), rtol=1e-10, atol=1e-12)
    assert mine[2:] == want[2:]


# ------------------------------------------------------------------ Function.vmap staticmethod


def _numpy_functions(lib: Any) -> tuple[Any, Any]:
    """The tutorial's NumPy sort/take Functions, with their vmap staticmethods."""

    class NumpySort(lib.autograd.Function):
        @staticmethod
        def forward(x: Any, dim: int) -> Any:
            a = x.detach().numpy()
            ind = np.argsort(a, axis=dim)
            ind_inv = np.argsort(ind, axis=dim)
            return (lib.tensor(np.take_along_axis(a, ind, axis=dim)), lib.tensor(ind),
                    lib.tensor(ind_inv))

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            _, dim = inputs
            _, ind, ind_inv = output
            ctx.mark_non_differentiable(ind, ind_inv)
            ctx.save_for_backward(ind, ind_inv)
            ctx.dim = dim

        @staticmethod
        def backward(ctx: Any, g: Any, _0: Any, _1: Any) -> Any:
            ind, ind_inv = ctx.saved_tensors
            return NumpyTake.apply(g, ind_inv, ind, ctx.dim), None

        @staticmethod
        def vmap(info: Any, in_dims: Any, x: Any, dim: int) -> Any:
            x = x.movedim(in_dims[0], 0)
            dim = dim if dim >= 0 else dim + x.dim() - 1
            return NumpySort.apply(x, dim + 1), (0, 0, 0)

    class NumpyTake(lib.autograd.Function):
        @staticmethod
        def forward(x: Any, ind: Any, ind_inv: Any, dim: int) -> Any:
            return lib.tensor(np.take_along_axis(x.detach().numpy(), ind.numpy(), dim))

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            _, ind, ind_inv, dim = inputs
            ctx.save_for_backward(ind, ind_inv)
            ctx.dim = dim

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            ind, ind_inv = ctx.saved_tensors
            return NumpyTake.apply(g, ind_inv, ind, ctx.dim), None, None, None

        @staticmethod
        def vmap(info: Any, in_dims: Any, x: Any, ind: Any, ind_inv: Any, dim: int) -> Any:
            def front(t: Any, d: Any) -> Any:
                return t.expand(info.batch_size, *t.shape) if d is None else t.movedim(d, 0)

            logical = x.dim() if in_dims[0] is None else x.dim() - 1
            dim = dim if dim >= 0 else dim + logical
            return NumpyTake.apply(front(x, in_dims[0]), front(ind, in_dims[1]),
                                   front(ind_inv, in_dims[2]), dim + 1), 0

    return NumpySort, NumpyTake


def _sorting(lib: Any) -> Any:
    sort, _ = _numpy_functions(lib)

    def numpy_sort(x: Any) -> Any:
        return sort.apply(x, -1)[0]

    x = lib.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
    w = lib.arange(3.0)
    out = [numpy_sort(x), lib.func.grad(lambda v: (numpy_sort(v) * w).sum())(x),
           lib.vmap(numpy_sort)(x), lib.vmap(numpy_sort, in_dims=1)(x),
           lib.vmap(lib.func.grad(lambda v: (numpy_sort(v) * w).sum()))(x),
           lib.vmap(lib.vmap(numpy_sort))(x.reshape(2, 1, 3))]
    r = sort.apply(x.clone().requires_grad_(), 1)
    out.append((r[0].requires_grad, r[1].requires_grad, r[1].dtype == lib.int64))
    return out


def test_vmap_calls_a_functions_vmap_staticmethod():
    _both(_sorting)


def _vmap_rules(lib: Any) -> Any:
    seen: list[Any] = []

    class Probe(lib.autograd.Function):
        @staticmethod
        def forward(x: Any, y: Any) -> Any:
            return x * y

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            pass

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g, g

        @staticmethod
        def vmap(info: Any, in_dims: Any, x: Any, y: Any) -> Any:
            seen.append((info.batch_size, info.randomness, in_dims, tuple(x.shape),
                         tuple(y.shape)))
            return x.movedim(in_dims[0], 0) * y.unsqueeze(0), 0

    def with_rule(**body: Any) -> Any:
        return type("R", (lib.autograd.Function,), {
            "forward": staticmethod(lambda x: x * 2),
            "setup_context": staticmethod(lambda ctx, inputs, output: None),
            "backward": staticmethod(lambda ctx, g: g * 2), **body})

    x = lib.tensor([0.5, 1.0])
    out = [lib.vmap(Probe.apply, in_dims=(1, None), randomness="same")(
        lib.ones(2, 3), lib.ones(2)), seen]
    both = with_rule(generate_vmap_rule=True, vmap=staticmethod(lambda info, d, v: (v, 0)))
    out.append(outcome(lambda: lib.vmap(both.apply)(x)))
    bad = with_rule(vmap=staticmethod(lambda info, d, v: v * 2))
    out.append(outcome(lambda: lib.vmap(bad.apply)(x)))
    out.append(outcome(lambda: lib.vmap(with_rule().apply)(x)))
    return out


def test_vmap_staticmethod_info_in_dims_and_errors():
    _both(_vmap_rules)


def test_vmap_staticmethod_over_tensors_requiring_grad_is_refused():
    # PyTorch records the Function's backward on the outer graph; funcgrad refuses rather
    # than return a result that silently has no gradient (docs/sharp_bits.md).
    sort, _ = _numpy_functions(ft)
    x = ft.tensor([[3.0, 1.0, 2.0]], requires_grad=True)
    with pytest.raises(NotImplementedError, match="vmap staticmethod"):
        ft.vmap(lambda v: sort.apply(v, -1)[0])(x)


@settings(max_examples=10, deadline=None)
@given(st.permutations([-1.5, -0.2, 0.7, 2.1]), st.floats(-1, 1))
def test_vmapped_gradient_of_numpy_sort_matches_finite_differences(vals, shift):
    sort, _ = _numpy_functions(ft)
    w = np.array([0.5, -1.0, 2.0, 3.0])
    x = np.array(vals, dtype=np.float64).reshape(2, 2) + shift

    def loss(v: Any) -> Any:
        return (sort.apply(v, -1)[0] * ft.tensor(w[:2])).sum()

    got = ft.vmap(ft.func.grad(loss))(ft.tensor(x)).numpy()
    for i in range(2):
        want = central_grad(lambda r: float(np.sort(r) @ w[:2]), x[i])
        np.testing.assert_allclose(got[i], want, atol=1e-6)


# ------------------------------------------------------------------ jvp and save_for_forward


def _forward_mode(lib: Any) -> Any:
    fw = lib.autograd.forward_ad

    class NumpyExp(lib.autograd.Function):
        @staticmethod
        def forward(x: Any) -> Any:
            return lib.tensor(np.exp(x.detach().numpy()))

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            ctx.save_for_forward(output)
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * ctx.saved_tensors[0]

        @staticmethod
        def jvp(ctx: Any, g: Any) -> Any:
            (r,) = ctx.saved_tensors
            return g * r * 10  # (not exp's derivative: shows that jvp is called)

    class OldExp(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any, y: Any, k: float) -> Any:
            ctx.result = lib.exp(x)
            ctx.save_for_forward(y)
            return ctx.result * y * k

        @staticmethod
        def jvp(ctx: Any, gx: Any, gy: Any, gk: Any) -> Any:
            return gx * ctx.result + gy * 100 + (0 if gk is None else 1)

    class NoJvp(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g

    class TwoOut(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 2, x * 3

        @staticmethod
        def jvp(ctx: Any, g: Any) -> Any:
            return g * 3

    p = lib.tensor([0.1, 0.5, 1.0], dtype=lib.float64)
    t = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)
    out: list[Any] = []
    with fw.dual_level():
        d = fw.make_dual(p, t)
        out.append(fw.unpack_dual(NumpyExp.apply(d)))
        out.append(fw.unpack_dual(OldExp.apply(d, lib.ones(3, dtype=lib.float64), 2.0)))
        out.append(outcome(lambda: NoJvp.apply(d)))
        out.append(outcome(lambda: TwoOut.apply(d)))
        y = OldExp.apply(p.clone().requires_grad_(), lib.ones(3, dtype=lib.float64), 2.0)
        out.append(outcome(lambda: y.sum().backward()))
    out.append(lib.func.jvp(NumpyExp.apply, (p,), (t,)))
    out.append(outcome(lambda: lib.func.jacfwd(NumpyExp.apply)(p)))
    out.append(outcome(lambda: lib.autograd.function.FunctionCtx().save_for_forward(3)))
    return out


def test_forward_mode_calls_the_functions_jvp():
    _both(_forward_mode)


@settings(max_examples=10, deadline=None)
@given(st.lists(st.floats(-2, 2), min_size=3, max_size=3),
       st.lists(st.floats(-2, 2), min_size=3, max_size=3))
def test_func_jvp_through_a_functions_jvp_matches_finite_differences(xs, ts):
    class NumpyTanh(ft.autograd.Function):
        @staticmethod
        def forward(x: Any) -> Any:
            return ft.tensor(np.tanh(x.detach().numpy()))

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            ctx.save_for_forward(output)

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            raise AssertionError("forward mode only")

        @staticmethod
        def jvp(ctx: Any, g: Any) -> Any:
            (y,) = ctx.saved_tensors
            return g * (1 - y * y)

    x, t = np.array(xs), np.array(ts)
    _, got = ft.func.jvp(NumpyTanh.apply, (ft.tensor(x),), (ft.tensor(t),))
    want = central_grad(lambda s: float(np.tanh(x + s[0] * t).sum()), np.zeros(1))[0]
    assert got.sum().item() == pytest.approx(want, abs=1e-6)


# ------------------------------------------------------------------ extending autograd


def _extending(lib: Any) -> Any:
    x = lib.tensor([1.0, 2.0], requires_grad=True)

    def fn(name: str, forward: Any, backward: Any = None, **more: Any) -> Any:
        body = {"forward": staticmethod(forward), **more}
        if backward is not None:
            body["backward"] = staticmethod(backward)
        return type(name, (lib.autograd.Function,), body)

    dirty = fn("Dirty", lambda ctx, v: (ctx.mark_dirty(v), v * 2)[1], lambda ctx, g: g)
    non_tensor = fn("NonTensorGrad", lambda ctx, v, k: v * k,
                    lambda ctx, g: (g * 2, lib.ones(1)))
    seen: list[Any] = []
    kw = fn("Kw", lambda ctx, v, k=2.0: (seen.append(ctx.needs_input_grad), v * k)[1],
            lambda ctx, g: (g * 2, None))
    defaults = fn("Defaults", lambda v, k=3.0: v * k, lambda ctx, g: g * ctx.k,
                  setup_context=staticmethod(
                      lambda ctx, inputs, output: (seen.append(len(inputs)),
                                                   setattr(ctx, "k", inputs[1]))))
    no_backward = fn("NoBackward", lambda ctx, v: v * 2)

    def grad_of(y: Any) -> Any:
        return lib.autograd.grad(y.sum(), x)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kw()
    return [outcome(lambda: dirty.apply(x.clone())),
            outcome(lambda: grad_of(non_tensor.apply(x, 2))),
            grad_of(kw.apply(v=x)), grad_of(kw.apply(x, k=3.0)),
            outcome(lambda: grad_of(defaults.apply(x))),
            outcome(lambda: grad_of(no_backward.apply(x))), no_backward.apply(x.detach()),
            outcome(lambda: lib.autograd.Function.apply(x)),
            seen, [(w.category.__name__, str(w.message).split(">")[1]) for w in caught]]


def test_extending_autograd_errors_and_inputs_as_torch():
    assert shown(_extending(ft)) == shown(_extending(torch))


# ------------------------------------------------------------------ tutorials' recipes


def _per_sample_and_ensemble(lib: Any) -> Any:
    """The per-sample-gradients and model-ensembling recipes (small sizes)."""
    F = lib.nn.functional
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Conv2d(1, 2, 3), lib.nn.ReLU(), lib.nn.Flatten(),
                              lib.nn.Linear(2 * 4 * 4, 3)).double()
    data = lib.linspace(-2, 2, 4 * 36, dtype=lib.float64).reshape(4, 1, 6, 6).sin()
    targets = lib.tensor([0, 2, 1, 2])
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p: Any, sample: Any, target: Any) -> Any:
        out = lib.func.functional_call(model, p, (sample.unsqueeze(0),))
        return F.cross_entropy(out, target.unsqueeze(0))

    per_sample = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, data, targets)
    models = [lib.nn.Linear(3, 2).double() for _ in range(3)]
    stacked, buffers = lib.func.stack_module_state(models)
    x = lib.linspace(0, 1, 12, dtype=lib.float64).reshape(4, 3)

    def fmodel(p: Any, b: Any, v: Any) -> Any:
        return lib.func.functional_call(models[0], (p, b), (v,))

    ensemble = lib.func.vmap(fmodel, in_dims=(0, 0, None))(stacked, buffers, x)
    return per_sample, ensemble, list(stacked)


def test_per_sample_gradients_and_ensembles_as_torch():
    (mine, mine_ens, mine_keys), (want, want_ens, want_keys) = (
        _per_sample_and_ensemble(ft), _per_sample_and_ensemble(torch))
    assert list(mine) == list(want) and mine_keys == want_keys
    for k in want:
        assert mine[k].shape == want[k].shape and mine[k].dtype.is_floating_point
        np.testing.assert_allclose(mine[k].numpy(), want[k].numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(mine_ens.detach().numpy(), want_ens.detach().numpy(),
                               rtol=1e-12, atol=1e-14)
    assert mine_ens.requires_grad == want_ens.requires_grad


def _detached(tree: Any) -> Any:
    """Tensors' values in a tree (the recorded call's grad_fn names differ: sharp bits)."""
    if isinstance(tree, dict):
        return {k: _detached(v) for k, v in tree.items()}
    if isinstance(tree, (tuple, list)):
        return type(tree)(_detached(v) for v in tree)
    return repr(tree.detach())


def test_vjp_keeps_aux_dict_order_and_checks_recorded_cotangents():
    def run(lib: Any) -> Any:
        p = {"z": lib.ones(2, requires_grad=True), "a": lib.arange(2.0, requires_grad=True)}
        out, fn = lib.func.vjp(lambda d: {"y": d["z"] * d["a"], "b": d["a"].sum()}, p)
        ok = fn({"y": lib.ones(2), "b": lib.tensor(2.0)})
        bad = outcome(lambda: fn({"y": lib.ones(3), "b": lib.tensor(2.0)}))
        implicit = fn({"y": lib.ones(2), "b": None})
        _, f2, aux = lib.func.vjp(lambda d: (d["z"].sum(), {"q": d["a"], "c": d["z"]}),
                                  {"z": lib.ones(2), "a": lib.zeros(2)}, has_aux=True)
        return list(out), [list(g) for g in ok], _detached(ok), bad, _detached(implicit), \
            list(aux), _detached(f2(lib.tensor(1.0)))

    _both(run)


def _numpy_exp_transforms(lib: Any) -> Any:
    class NumpyExp(lib.autograd.Function):
        @staticmethod
        def forward(x: Any) -> Any:
            return lib.tensor(np.exp(x.detach().numpy()))

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            ctx.save_for_backward(output)
            ctx.save_for_forward(output)

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * ctx.saved_tensors[0]

        @staticmethod
        def jvp(ctx: Any, t: Any) -> Any:
            return t * ctx.saved_tensors[0]

        @staticmethod
        def vmap(info: Any, in_dims: Any, x: Any) -> Any:
            return NumpyExp.apply(x), in_dims[0]

    x = lib.tensor([[0.1, 0.2], [0.3, 0.4]], dtype=lib.float64)
    f = NumpyExp.apply
    return [lib.vmap(f, in_dims=1)(x), lib.vmap(f, out_dims=1)(x), lib.func.jacrev(f)(x[0]),
            lib.func.jacfwd(f)(x[0]), lib.func.hessian(lambda a: f(a).sum())(x[0]),
            lib.vmap(lambda a: lib.func.jvp(f, (a,), (lib.ones(2, dtype=lib.float64),)))(x),
            lib.vmap(lib.vmap(f))(x)]


def test_numpy_function_under_composed_transforms():
    _both(_numpy_exp_transforms)
