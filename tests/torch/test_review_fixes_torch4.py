"""PyTorch-face fixes from a fourth side-by-side review, each compared with torch 2.13:
empty tensors' dtype in repr, TransformerEncoder's nested-tensor warning, optimizer state
through save/load, load_state_dict of non-tensors, torch.func's argument
and output checks (argnums, in_dims, has_aux, jvp's primals), vmap's unmapped keyword
arguments, functional_call's tied keys, linear on a vector, lr_scheduler state and errors,
autograd.functional's checks, and reading batched values inside vmap."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from torch_oracle import outcome as _outcome
from torch_oracle import same_error as _same_error

torch = pytest.importorskip("torch")

import funcgrad.torch as ft  # noqa: E402


def _np(t):
    return np.asarray(t.detach().numpy())


def _close(a, b):
    if isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y)
        return
    assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(_np(a), _np(b), rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------ 1. repr of empty tensors

_DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "uint8", "int16", "int32",
           "int64", "bool", "complex64", "complex128"]


@settings(max_examples=40, deadline=None)
@given(dt=st.sampled_from(_DTYPES),
       shape=st.lists(st.integers(0, 3), min_size=1, max_size=3).filter(lambda s: 0 in s),
       rg=st.booleans())
def test_empty_tensor_repr_names_every_dtype_but_the_default(dt, shape, rg):
    reprs = []
    for lib in (ft, torch):
        t = lib.zeros(*shape, dtype=getattr(lib, dt))
        if rg and (t.is_floating_point() or t.is_complex()):
            t.requires_grad_(True)
        reprs.append(repr(t))
    assert reprs[0] == reprs[1]


# --------------------------------------------------- 2. TransformerEncoder's warning

_LAYERS = {
    "batch_first": dict(batch_first=False),
    "norm_first": dict(batch_first=True, norm_first=True),
    "odd_heads": dict(batch_first=True, nhead=1),
    "no_bias": dict(batch_first=True, bias=False),
    "activation": dict(batch_first=True, activation=lambda x: x),
    "gelu_module": dict(batch_first=True, activation="gelu"),
    "fast_path": dict(batch_first=True),
}


def _encoder(lib, kw, enable):
    kw = {"nhead": 2, **kw}
    layer = lib.nn.TransformerEncoderLayer(8, dim_feedforward=16, **kw)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        enc = lib.nn.TransformerEncoder(layer, 1, enable_nested_tensor=enable)
    return [str(w.message) for w in got], enc.use_nested_tensor, layer.activation_relu_or_gelu


@pytest.mark.parametrize("enable", [True, False])
@pytest.mark.parametrize("name", sorted(_LAYERS))
def test_transformer_encoder_nested_tensor_warning(name, enable):
    assert _encoder(ft, _LAYERS[name], enable) == _encoder(torch, _LAYERS[name], enable)


def test_transformer_default_warns_as_pytorch():
    out = []
    for lib in (ft, torch):
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            lib.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                               dim_feedforward=16)
        out.append([str(w.message) for w in got])
    assert out[0] == out[1] and len(out[0]) == 1


# ----------------------------------------- 3. optimizer state through save and load


def _train(lib, opt_name, kw, w0, steps, state=None):
    p = lib.nn.Parameter(lib.tensor(w0))
    opt = getattr(lib.optim, opt_name)([p], **kw)
    if state is not None:
        opt.load_state_dict(state)
    for k in range(steps):
        opt.zero_grad()
        ((p - k) ** 2).sum().backward()
        opt.step()
    return p, opt


@settings(max_examples=15, deadline=None)
@given(w0=st.lists(st.floats(-3, 3, width=32), min_size=1, max_size=4),
       which=st.sampled_from([("Adam", {"lr": 0.1}), ("SGD", {"lr": 0.1, "momentum": 0.9}),
                              ("RMSprop", {"lr": 0.01}), ("Adagrad", {"lr": 0.1})]))
def test_optimizer_state_saved_loaded_and_trained_on(w0, which):
    name, kw = which
    seen = []
    for lib in (ft, torch):
        _, opt = _train(lib, name, kw, w0, 2)
        buf = io.BytesIO()
        lib.save(opt.state_dict(), buf)
        buf.seek(0)
        p, opt2 = _train(lib, name, kw, w0, 3, state=lib.load(buf))
        sd = opt2.state_dict()
        seen.append((p.detach(), *(sd["state"][0][k] for k in sorted(sd["state"][0]))))
    assert len(seen[0]) == len(seen[1])
    for a, b in zip(*seen):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-5, atol=1e-6)


# ------------------------------------------------ 4. load_state_dict of a non-tensor


@pytest.mark.parametrize("value", [5, 2.5, None, "w"])
def test_load_state_dict_refuses_non_tensors(value):
    def load(lib):
        m = lib.nn.Sequential(lib.nn.Linear(3, 2))
        return lambda: m.load_state_dict({"0.weight": value, "0.bias": lib.zeros(2)})

    _same_error(load(ft), load(torch))


# ------------------------------------------------------ 5. torch.func's checks


def _func_cases(lib):
    F = lib.func
    x = lib.tensor([1.0, 2.0, 3.0])
    y = lib.tensor([0.5, -1.0])
    i = lib.tensor([1, 2])
    c = lib.tensor([1 + 1j])
    g = lambda a, b: a.sin() * b.sum()  # noqa: E731
    s = lambda a: (a ** 2).sum()  # noqa: E731
    return {
        "jacrev_argnum_range": lambda: F.jacrev(g, argnums=2)(x, y),
        "jacrev_argnum_float": lambda: F.jacrev(g, argnums=1.0)(x, y),
        "jacrev_argnums_empty": lambda: F.jacrev(g, argnums=())(x, y),
        "jacrev_argnums_dup": lambda: F.jacrev(g, argnums=(0, 0))(x, y),
        "jacrev_argnums_list": lambda: F.jacrev(g, argnums=[0])(x, y),
        "jacrev_int_input": lambda: F.jacrev(lambda a: a * 2)(i),
        "jacrev_float_input": lambda: F.jacrev(lambda a: a)(1.0),
        "jacrev_float_output": lambda: F.jacrev(lambda a: 3.0)(x),
        "jacrev_int_output": lambda: F.jacrev(lambda a: (a > 0).long())(x),
        "jacrev_aux_not_pair": lambda: F.jacrev(lambda a: a, has_aux=True)(x),
        "jacrev_complex_input": lambda: F.jacrev(lambda a: a.abs())(c),
        "jacrev_complex_output": lambda: F.jacrev(lambda a: a * 1j)(x),
        "jacrev_chunk_size_0": lambda: F.jacrev(lambda a: a, chunk_size=0)(x),
        "jacfwd_int_input": lambda: F.jacfwd(lambda a: a * 2)(i),
        "jacfwd_float_input": lambda: F.jacfwd(lambda a: a)(1.0),
        "jacfwd_float_output": lambda: F.jacfwd(lambda a: 3.0)(x),
        "jacfwd_aux_not_pair": lambda: F.jacfwd(lambda a: a, has_aux=True)(x),
        "jacfwd_complex_input": lambda: F.jacfwd(lambda a: a.abs())(c),
        "jacfwd_argnum_range": lambda: F.jacfwd(g, argnums=-3)(x, y),
        "hessian_int_input": lambda: F.hessian(s)(i),
        "hessian_argnum_range": lambda: F.hessian(s, argnums=3)(x),
        "hessian_argnums_dup": lambda: F.hessian(s, argnums=(0, 0))(x),
        "grad_float_input": lambda: F.grad(lambda a: a)(1.0),
        "grad_int_input": lambda: F.grad(s)(i),
        "grad_float_output": lambda: F.grad(lambda a: 3.0)(x),
        "grad_aux_not_pair": lambda: F.grad(s, has_aux=True)(x),
        "grad_vector_output": lambda: F.grad(lambda a: a * 2)(x),
        "grad_and_value_argnums": lambda: F.grad_and_value(s, argnums=(1,))(x),
        "vjp_int_input": lambda: F.vjp(lambda a: a, i),
        "vjp_float_input": lambda: F.vjp(lambda a: a, 1.0),
        "vjp_float_output": lambda: F.vjp(lambda a: 1.0, x),
        "vjp_aux_not_pair": lambda: F.vjp(lambda a: a, x, has_aux=True),
        "jvp_not_tuple": lambda: F.jvp(lambda a: a, x, x),
        "jvp_structure": lambda: F.jvp(lambda a: a, (x,), [x]),
        "jvp_empty": lambda: F.jvp(lambda: x, (), ()),
        "jvp_float_output": lambda: F.jvp(lambda a: 1.0, (x,), (x,)),
        "jvp_aux_not_pair": lambda: F.jvp(lambda a: a, (x,), (x,), has_aux=True),
        "jvp_int_primal": lambda: F.jvp(lambda a: a, (i,), (i,)),
        "jvp_float_primal": lambda: F.jvp(lambda a: a, (1.0,), (1.0,)),
        "jvp_shape": lambda: F.jvp(lambda a: a, (x,), (y,)),
        "vmap_list_in_dims": lambda: F.vmap(lambda a: a, in_dims=[0])(x),
        "vmap_none_in_dims": lambda: F.vmap(lambda a: a, in_dims=None)(x),
        "vmap_no_inputs": lambda: F.vmap(lambda: x)(),
        "vmap_str_in_dim": lambda: F.vmap(lambda a: a, in_dims=("a",))(x),
        "vmap_all_none": lambda: F.vmap(lambda a: a, in_dims=(None,))(x),
        "vmap_in_dim_range": lambda: F.vmap(lambda a: a, in_dims=2)(x),
        "vmap_in_dim_neg_range": lambda: F.vmap(lambda a: a, in_dims=-2)(x),
        "vmap_in_dims_short": lambda: F.vmap(lambda a, b: a + b, in_dims=(0,))(x, x),
        "vmap_in_dims_nested": lambda: F.vmap(lambda a, b: a, in_dims=(0, (0, 0)))(x, x),
        "vmap_in_dims_dict": lambda: F.vmap(lambda d: d["a"], in_dims=({"a": 0},))(
            {"a": x, "b": x}),
        "vmap_sizes": lambda: F.vmap(lambda a, b: a + b)(lib.ones(2, 3), lib.ones(3, 3)),
        "vmap_float_mapped": lambda: F.vmap(lambda a, b: a * b)(x, 2.0),
        "vmap_out_dims_type": lambda: F.vmap(lambda a: a, out_dims="x")(x),
        "vmap_chunk_size_0": lambda: F.vmap(lambda a: a, chunk_size=0)(x),
        "vmap_out_dims_range": lambda: F.vmap(lambda a: a, out_dims=3)(x),
        "vmap_out_dims_range_tuple": lambda: F.vmap(lambda a: (a, a * y), out_dims=(0, -3))(x),
        "vmap_item": lambda: F.vmap(lambda a: a.sum().item())(lib.ones(2, 3)),
        "vmap_float": lambda: F.vmap(lambda a: float(a.sum()))(lib.ones(2, 3)),
        "vmap_bool": lambda: F.vmap(lambda a: a if a.sum() > 0 else -a)(lib.ones(2, 3)),
        "vmap_tolist": lambda: F.vmap(lambda a: a.tolist())(lib.ones(2, 3)),
    }


@pytest.mark.parametrize("name", sorted(_func_cases(ft)))
def test_func_transforms_raise_pytorchs_errors(name):
    _same_error(_func_cases(ft)[name], _func_cases(torch)[name])


@settings(max_examples=15, deadline=None)
@given(xs=st.lists(st.floats(-2, 2, width=32), min_size=2, max_size=4),
       ys=st.lists(st.floats(-2, 2, width=32), min_size=1, max_size=3),
       chunk=st.sampled_from([None, 1, 2]))
def test_func_transforms_values(xs, ys, chunk):
    out = []
    for lib in (ft, torch):
        F = lib.func
        x, y = lib.tensor(xs), lib.tensor(ys)
        f = lambda a, b: a.sin() * (b ** 2).sum()  # noqa: E731
        out.append((
            F.jacrev(f, argnums=(0, 1), chunk_size=chunk)(x, y),
            F.jacrev(f, argnums=-1)(x, y),
            F.jacfwd(f, argnums=(0, 1))(x, y),
            F.hessian(lambda a, b: (a ** 3).sum() * b.sum(), argnums=(0, 1))(x, y),
            F.grad_and_value(lambda a, b: (a * b.sum()).sum(), argnums=(1,))(x, y),
            # keyword arguments are passed to each call unmapped
            F.vmap(lambda a, k: a * k, chunk_size=chunk)(x, k=x),
            F.vmap(lambda a, b, *, k: a + b * k, in_dims=(None, 0))(y, x, k=y[0]),
        ))
    _close(out[0], out[1])


def test_functional_call_tied_keys():
    def call(lib, values, **kw):
        class Tied(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = lib.nn.Linear(3, 3, bias=False)
                self.b = lib.nn.Linear(3, 3, bias=False)
                self.b.weight = self.a.weight

            def forward(self, x):
                return self.b(self.a(x))

        m = Tied()
        vals = {k: v(lib) for k, v in values.items()}
        return lambda: lib.func.functional_call(m, vals, (lib.ones(3),), **kw)

    two = {"a.weight": lambda L: L.eye(3) * 2, "b.weight": lambda L: L.eye(3)}
    _same_error(call(ft, two), call(torch, two))
    _close(call(ft, two, tie_weights=False)(), call(torch, two, tie_weights=False)())
    one = {"b.weight": lambda L: L.eye(3) * 2}
    _close(call(ft, one, strict=True)(), call(torch, one, strict=True)())


# ------------------------------------------------------------ 6. linear on a vector


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("rg_input", [True, False])
def test_linear_of_a_vector_records_pytorchs_node(bias, rg_input):
    names, vals = [], []
    for lib in (ft, torch):
        w = lib.linspace(-1, 1, 6).reshape(2, 3).requires_grad_(True)
        b = lib.tensor([0.5, -0.25], requires_grad=True) if bias else None
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=rg_input)
        y = lib.nn.functional.linear(x, w, b)
        y.sum().backward()
        names.append(type(y.grad_fn).__name__)
        vals.append((y, w.grad, *((b.grad,) if bias else ()), *((x.grad,) if rg_input else ())))
    assert names[0] == names[1]
    _close(vals[0], vals[1])


# ------------------------------------------------------------ 7. lr_scheduler


def test_cosine_warm_restarts_state_dict_and_resume_error():
    keys, lrs = [], []
    for lib in (ft, torch):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.zeros(1))], lr=0.1)
        s = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2)
        for _ in range(7):
            opt.step()
            s.step()
        keys.append(sorted(s.state_dict()))
        lrs.append(s.get_last_lr())
    assert keys[0] == keys[1] and lrs[0] == lrs[1]

    def resume(lib):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.zeros(1))], lr=0.1)
        return lambda: lib.optim.lr_scheduler.StepLR(opt, 3, last_epoch=4)

    _same_error(resume(ft), resume(torch))


_SCHEDULERS = {
    "LambdaLR": lambda S, o: S.LambdaLR(o, lambda e: 0.9 ** e),
    "MultiplicativeLR": lambda S, o: S.MultiplicativeLR(o, lambda e: 0.9),
    "StepLR": lambda S, o: S.StepLR(o, 2),
    "MultiStepLR": lambda S, o: S.MultiStepLR(o, [2, 4]),
    "ConstantLR": lambda S, o: S.ConstantLR(o, 0.5, 3),
    "LinearLR": lambda S, o: S.LinearLR(o, 0.2, total_iters=4),
    "ExponentialLR": lambda S, o: S.ExponentialLR(o, 0.9),
    "PolynomialLR": lambda S, o: S.PolynomialLR(o, 5),
    "CosineAnnealingLR": lambda S, o: S.CosineAnnealingLR(o, 4),
    "CyclicLR": lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=2),
    "CosineAnnealingWarmRestarts": lambda S, o: S.CosineAnnealingWarmRestarts(o, 3),
    "OneCycleLR": lambda S, o: S.OneCycleLR(o, 1.0, total_steps=12),
    "SequentialLR": lambda S, o: S.SequentialLR(
        o, [S.LinearLR(o, 0.1, total_iters=3), S.ExponentialLR(o, 0.9)], [3]),
    "ChainedScheduler": lambda S, o: S.ChainedScheduler([S.ConstantLR(o, 0.5, 3),
                                                         S.ExponentialLR(o, 0.9)]),
}


@pytest.mark.parametrize("name", sorted(_SCHEDULERS))
def test_scheduler_get_lr_outside_step(name):
    out = []
    for lib in (ft, torch):
        o = lib.optim.SGD([lib.nn.Parameter(lib.zeros(1))], lr=0.1, momentum=0.9)
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            s = _SCHEDULERS[name](lib.optim.lr_scheduler, o)
            for _ in range(5):
                o.step()
                s.step()
            stepping = [str(w.message) for w in got]
            del got[:]
            res = _outcome(s.get_lr)
            called = [str(w.message) for w in got]
        out.append((stepping, called, res, s.get_last_lr(), sorted(s.state_dict())))
    assert out[0] == out[1]


# ------------------------------------------------------- 8. autograd.functional


def _af_cases(lib):
    AF = lib.autograd.functional
    x = lib.tensor([1.0, 2.0, 3.0])
    one = lib.tensor([2.0])
    f = lambda a: a.exp() * a.sum()  # noqa: E731
    s = lambda a: (a ** 3).sum()  # noqa: E731
    return {
        "jacobian_list": lambda: AF.jacobian(f, [x]),
        "jacobian_float": lambda: AF.jacobian(f, 1.0),
        "jacobian_tuple_float": lambda: AF.jacobian(lambda a, b: a, (x, 1.0)),
        "jacobian_output_float": lambda: AF.jacobian(lambda a: 1.0, x),
        "jacobian_output_list": lambda: AF.jacobian(lambda a: [a], x),
        "jacobian_forward_novec": lambda: AF.jacobian(f, x, strategy="forward-mode"),
        "jacobian_forward_graph": lambda: AF.jacobian(f, x, create_graph=True,
                                                      strategy="forward-mode"),
        "jacobian_bad_strategy": lambda: AF.jacobian(f, x, strategy="sideways"),
        "hessian_vector_output": lambda: AF.hessian(f, x),
        "hessian_tuple_output": lambda: AF.hessian(lambda a: (a.sum(),), x),
        "vjp_v_size": lambda: AF.vjp(f, x, lib.ones(2)),
        "vjp_v_count": lambda: AF.vjp(f, x, (lib.ones(3), lib.ones(3))),
        "vjp_tuple_v_count": lambda: AF.vjp(lambda a: (a, a), x, (lib.ones(3),)),
        "vjp_tuple_v_size": lambda: AF.vjp(lambda a: (a, a), x, (lib.ones(3), lib.ones(1))),
        "vjp_v_none": lambda: AF.vjp(f, x),
        "jvp_v_none": lambda: AF.jvp(f, x),
        "jvp_v_float": lambda: AF.jvp(lambda a, b: a, (x, x), (x, 1.0)),
        "vhp_v_none": lambda: AF.vhp(s, x),
        "vhp_vector_output": lambda: AF.vhp(lambda a: a, x, lib.ones(3)),
        "hvp_v_size": lambda: AF.hvp(s, x, lib.ones(1)),
        "hvp_tuple_output": lambda: AF.hvp(lambda a: (a.sum(),), x, lib.ones(3)),
        "hvp_v_none_one": lambda: AF.hvp(s, one),
        "jvp_v_none_one": lambda: AF.jvp(lambda a: a * 2, one),
    }


@pytest.mark.parametrize("name", sorted(_af_cases(ft)))
def test_autograd_functional_checks(name):
    a, b = _outcome(_af_cases(ft)[name]), _outcome(_af_cases(torch)[name])
    assert a[0] == b[0], (a, b)
    if a[0] == "ok":
        _close(a[1], b[1])
    else:
        assert a[1] == b[1]


# ------------------------------------------------- 9. casts to the tensor's own dtype


@pytest.mark.parametrize("method", ["float", "double", "half", "bfloat16", "long", "int",
                                    "short", "byte", "char", "bool", "cfloat", "cdouble"])
@pytest.mark.parametrize("dt", ["float32", "float64", "int64", "uint8", "bool", "complex64"])
def test_cast_to_own_dtype_returns_the_tensor(method, dt):
    out = []
    for lib in (ft, torch):
        t = lib.ones(2, dtype=getattr(lib, dt))
        if t.is_floating_point() or t.is_complex():
            t = lib.nn.Parameter(t)
        r = getattr(t, method)()
        out.append((r is t, r is t or r.grad_fn is None or type(r.grad_fn).__name__,
                    t.type(t.dtype) is t, t.type_as(t) is t))
    assert out[0] == out[1]


# ------------------------------------------------------------ 10. einsum's last node


@st.composite
def _einsum_case(draw):
    n = draw(st.integers(1, 3))
    terms = [draw(st.text("abcd", max_size=3)) for _ in range(n)]
    letters = sorted(set("".join(terms)))
    eq = ",".join(terms)
    if draw(st.booleans()):
        eq += "->" + "".join(draw(st.permutations([c for c in letters
                                                   if draw(st.booleans())])))
    sizes = {c: draw(st.sampled_from([1, 2, 3])) for c in "abcd"}
    return eq, [tuple(sizes[c] for c in t) for t in terms]


@settings(max_examples=60, deadline=None)
@given(case=_einsum_case())
def test_einsum_ends_in_pytorchs_node(case):
    eq, shapes = case
    out = []
    for lib in (ft, torch):
        ops = [lib.linspace(-1, 1, int(np.prod(s))).reshape(s) for s in shapes]
        ops[0].requires_grad_(True)
        r = lib.einsum(eq, *ops)
        r.sum().backward()
        out.append((type(r.grad_fn).__name__, r.detach(), ops[0].grad))
    assert out[0][0] == out[1][0]
    _close(out[0][1:], out[1][1:])


# --------------------------------------------------- 11. state-dict hooks, lookups


def _hooked(lib, log):
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.l = lib.nn.Linear(2, 1)
            self.register_buffer("b", lib.zeros(1))
            self.register_buffer("nb", lib.ones(1), persistent=False)

    m = M()
    m.register_state_dict_pre_hook(lambda mod, prefix, kv: log.append(("pre", prefix, kv)))
    m.l.register_state_dict_post_hook(
        lambda mod, sd, prefix, md: log.append(("post", prefix, list(sd), dict(md))))

    def load_pre(mod, sd, prefix, md, strict, missing, unexpected, errors):
        log.append(("load_pre", prefix, sorted(sd), strict, list(missing)))
        sd.pop(prefix + "bias", None)  # the module reads the edited dict

    def load_post(mod, keys):
        log.append(("load_post", list(keys.missing_keys), list(keys.unexpected_keys)))
        keys.unexpected_keys.clear()  # forgiven before the strict check

    m.l.register_load_state_dict_pre_hook(load_pre)
    m.register_load_state_dict_post_hook(load_post)
    return m


def test_state_dict_hooks():
    out = []
    for lib in (ft, torch):
        log = []
        m = _hooked(lib, log)
        sd = m.state_dict()
        res = _outcome(lambda m=m, sd=sd, lib=lib: m.load_state_dict({**sd, "extra": lib.zeros(1)}))
        out.append((log, list(sd), res[0], str(res[1])))
    assert out[0] == out[1]


def _lookups(lib):
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.l = lib.nn.Linear(1, 1)
            self.register_buffer("b", None)
            self.register_buffer("nb", lib.ones(1), persistent=False)
            self.p = lib.nn.Parameter(lib.ones(1))
            self.x = 3

    m = M()
    return {f"{f}:{t}": (lambda f=f, t=t: type(getattr(m, f)(t)).__name__)
            for f in ("get_parameter", "get_buffer")
            for t in ("l.weight", "b", "x", "nb", "p", "l", "zz", "l.zz")}


@pytest.mark.parametrize("name", sorted(_lookups(ft)))
def test_get_parameter_and_buffer(name):
    assert _outcome(_lookups(ft)[name]) == _outcome(_lookups(torch)[name])


def test_load_state_dict_unexpected_keys_in_pytorchs_order():
    out = []
    for lib in (ft, torch):
        m = lib.nn.Sequential(lib.nn.Linear(1, 1))
        sd = {"0.weight": lib.ones(1, 1), "0.bias": lib.ones(1), "0.q": lib.ones(1),
              "zz": lib.ones(1), "1.w": lib.ones(1)}
        out.append((str(m.load_state_dict(sd, strict=False)),
                    _outcome(lambda m=m, sd=sd: m.load_state_dict(sd))[1]))
    assert out[0] == out[1]
