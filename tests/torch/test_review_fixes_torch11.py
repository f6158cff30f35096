"""PyTorch-face fixes from an eleventh side-by-side review, each compared with torch 2.13:
the signed zeros and derivatives of remainder and fmod; scalar bool indices (a 0-d mask);
the layouts of ``*_like``, ``to``, ``clone`` and ``Module.to`` under memory formats; the
logdet of a complex matrix (and complex add's ``alpha * b``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

import funcgrad.torch as ft  # noqa: E402
from tests.torch._half_ulps import ulp_error  # noqa: E402
from tests.torch._outcomes import outcome as _outcome  # noqa: E402
from tests.torch._outcomes import values as _np  # noqa: E402


def _same_bits(got, want):
    """Equal values with equal signs of zero (NaN equal to NaN)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape
    both_nan = np.isnan(got) & np.isnan(want)
    same = (got == want) & (np.signbit(got) == np.signbit(want))
    bad = ~(both_nan | same)
    assert not bad.any(), (got[bad], want[bad])


# ------------------------------------------------------------ 1. remainder and fmod

_SPECIAL = [0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 3.0, -3.0, math.inf, -math.inf, math.nan, 1e-30,
            -7.0, 0.1]
_FLOATS = st.one_of(st.sampled_from(_SPECIAL), st.floats(-50, 50, width=32),
                    st.integers(-6, 6).map(float))


@settings(max_examples=25, deadline=None)
@given(pairs=st.lists(st.tuples(_FLOATS, _FLOATS), min_size=1, max_size=12),
       dtype=st.sampled_from(["float32", "float64", "float16", "bfloat16"]),
       op=st.sampled_from(["remainder", "fmod", "mod_op", "rmod_op", "inplace"]))
def test_remainder_fmod_signed_zeros(pairs, dtype, op):
    a = [p[0] for p in pairs]
    b = [p[1] for p in pairs]

    def run(lib):
        x, y = lib.tensor(a, dtype=getattr(lib, dtype)), lib.tensor(b, dtype=getattr(lib, dtype))
        if op == "mod_op":
            out = x % y[0].item()
        elif op == "rmod_op":
            out = a[0] % y
        elif op == "inplace":
            out = x.clone()
            out %= y
        else:
            out = getattr(lib, op)(x, y)
        return str(out.dtype), _np(out.float())

    got, want = run(ft), run(torch)
    assert got[0] == want[0]
    _same_bits(got[1], want[1])


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 30),
       dtype=st.sampled_from(["float32", "float64"]), op=st.sampled_from(["remainder", "fmod"]),
       multiples=st.booleans())
def test_remainder_fmod_gradients(seed, n, dtype, op, multiples):
    rng = np.random.default_rng(seed)
    b = rng.standard_normal(n)
    # Exact multiples (and near ones) are where a rounded a / b lands on the wrong integer.
    a = b * (rng.integers(-5, 5, n) + (rng.choice([0.0, 1e-7], n) if multiples else
                                          rng.random(n)))

    def run(lib):
        x = lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True)
        y = lib.tensor(b, dtype=getattr(lib, dtype), requires_grad=True)
        out = getattr(lib, op)(x, y)
        out.backward(lib.ones_like(out))
        return _np(out), _np(x.grad), _np(y.grad), out.grad_fn.name()

    got, want = run(ft), run(torch)
    for g, w in zip(got[:3], want[:3]):
        _same_bits(g, w)
    assert got[3] == want[3]


@pytest.mark.parametrize("src", [
    "t.remainder(t.tensor([5, -5]), t.tensor([0, 1]))", "t.fmod(t.tensor([5, -5]), 0)",
    "t.remainder(t.tensor([1 + 1j]), 2)", "t.fmod(t.tensor([True]), t.tensor([True]))",
    "t.floor_divide(t.tensor([1 + 1j]), t.tensor([2.]))",
    "t.div(t.tensor([True]), t.tensor([False]), rounding_mode='trunc')",
    "t.remainder(t.tensor([True]), 2)", "t.fmod(t.tensor([7, -7], dtype=t.int8), -3)",
    "t.remainder(t.tensor([7, -7], dtype=t.int16), t.tensor([-3, 3], dtype=t.int16))",
    "t.remainder(2.5, t.tensor([1., -2.]))",
    "(2.0 % t.tensor([1., 2.], requires_grad=True)).grad_fn.next_functions[0][0] is None",
    "(2.0 % t.tensor([1., 2.], requires_grad=True)).sum().backward()",
    "repr(2.0 % t.tensor([1., 2.], requires_grad=True))",
    "(2.0 % t.tensor([1., 2.], requires_grad=True)).grad_fn.name()",
    "(t.tensor([3.], requires_grad=True) % 2).grad_fn.name()",
])
def test_remainder_errors_and_nodes(src):
    def run(lib):
        kind, val = _outcome(lambda: eval(src, {"t": lib}))  # noqa: S307
        return kind, str(val)

    assert run(ft) == run(torch)


# ------------------------------------------------------------ 2. scalar bool indices

_T, _F = "t.tensor(True)", "t.tensor(False)"
_INDICES = [f"({_T},)", f"({_F},)", "(True,)", "(False,)", f"(..., {_T})", f"(None, {_T})",
            f"({_T}, None)", f"(slice(None), {_T})", f"({_T}, t.tensor([0, 1]))",
            f"({_T}, slice(None), {_T})", f"(0, {_T})", f"({_T}, 0)", f"({_T}, ...)",
            "(x > 2,)", "(x > 100,)"]


@settings(max_examples=30, deadline=None)
@given(shape=st.sampled_from([(), (2,), (2, 3), (2, 1, 3)]), idx=st.sampled_from(_INDICES),
       value=st.sampled_from(["5.0", "t.tensor([7.0])", "t.tensor(8.0)", "t.tensor([1., 2.])"]))
def test_scalar_bool_index(shape, idx, value):
    def run(lib):
        def body():
            x = lib.arange(1.0, 1 + int(np.prod(shape))).reshape(shape).requires_grad_()
            env = {"t": lib, "x": x.detach()}
            index = eval(idx, env)  # noqa: S307
            u = x * 2
            r = u[index]
            r.pow(2).sum().backward()
            g, x.grad = _np(x.grad), None
            u = x * 2
            u[index] = eval(value, env)  # noqa: S307
            u.pow(3).sum().backward()
            return (tuple(r.shape), _np(r).tolist(), r.grad_fn.name(), g.tolist(),
                    _np(u).tolist(), u.grad_fn.name(), _np(x.grad).tolist())

        return _outcome(body)

    assert run(ft) == run(torch)


@pytest.mark.parametrize("src", [
    "x0.index_put_((t.tensor(True),), t.tensor(4.0))",
    "x1.index_put_((t.tensor(True),), t.tensor(4.0))",
    "x1.index_put_((t.tensor(False),), t.tensor(4.0))",
    "x1.index_put((t.tensor([0]), t.tensor([0])), t.tensor(4.0))",
    "x0.index_put_((t.tensor(0),), t.tensor(4.0))",
    "x2.index_put_((t.tensor(True), t.tensor([1])), t.tensor(4.0))",
    "x0[t.tensor(True)] += 1",
    "x0.masked_fill(t.tensor(True), 2.0)",
])
def test_scalar_bool_index_put(src):
    def run(lib):
        env = {"t": lib, "x0": lib.tensor(1.0), "x1": lib.tensor([1.0, 2.0]),
               "x2": lib.arange(6.0).reshape(2, 3)}

        def body():
            out = eval(src, env) if "+=" not in src else exec(src, env)  # noqa: S102, S307
            return str(out), str(env["x0"]), str(env["x1"]), str(env["x2"])

        return _outcome(body)

    assert run(ft) == run(torch)


# -------------------------------------------------------------- 3. memory formats

_FMTS = ["None", "preserve_format", "contiguous_format", "channels_last", "channels_last_3d"]


def _view(lib, seed):
    """A tensor with drawn strides: permuted, maybe channels-last, sliced or expanded."""
    rng = np.random.default_rng(seed)
    nd = int(rng.integers(1, 6))
    shape = tuple(int(s) for s in rng.integers(1, 4, nd))
    x = lib.arange(float(np.prod(shape))).reshape(shape)
    if nd in (4, 5) and rng.random() < 0.4:
        x = x.contiguous(memory_format=lib.channels_last if nd == 4 else lib.channels_last_3d)
    x = x.permute(*rng.permutation(nd).tolist())
    if rng.random() < 0.4:
        d = int(rng.integers(0, nd))
        x = x.narrow(d, 0, 1) if rng.random() < 0.3 else \
            x[(slice(None),) * d + (slice(None, None, 2),)]
    if rng.random() < 0.2:
        d = int(rng.integers(0, nd))
        if x.shape[d] == 1:
            x = x.expand(*[3 if k == d else -1 for k in range(nd)])
    return x


def _same_input_strides(seed):
    # (A length-1 axis of an expanded view can hold another stride in funcgrad's buffer,
    # which the layout then follows: such draws are not about the formats.)
    assume(_view(ft, seed).stride() == _view(torch, seed).stride())


def _layout(t):
    lib = ft if isinstance(t, ft.Tensor) else torch
    return tuple(t.shape), t.stride(), t.is_contiguous(), str(t.dtype), [
        t.is_contiguous(memory_format=f) for f in (lib.channels_last, lib.channels_last_3d)
        if t.dim() == (4 if f is lib.channels_last else 5)]


def _fmt(lib, name):
    return None if name == "None" else getattr(lib, name)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), fmt=st.sampled_from(_FMTS),
       fn=st.sampled_from(["empty_like", "zeros_like", "ones_like", "full_like", "rand_like",
                           "randn_like", "randint_like"]))
def test_like_layouts(seed, fmt, fn):
    _same_input_strides(seed)

    def run(lib):
        x = _view(lib, seed)
        kw = {} if fmt == "None" else {"memory_format": _fmt(lib, fmt)}
        args = (x, 2.0) if fn == "full_like" else (x, 5) if fn == "randint_like" else (x,)
        lib.manual_seed(seed)

        def body():
            out = getattr(lib, fn)(*args, **kw)
            vals = _np(out).tolist() if fn != "empty_like" else None
            return _layout(out), vals

        return _outcome(body)

    got, want = run(ft), run(torch)
    assert got[0] == want[0]
    if got[0] == "ok":
        assert got[1][0] == want[1][0]
        np.testing.assert_allclose(np.asarray(got[1][1], float), np.asarray(want[1][1], float),
                                   rtol=1e-6)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), fmt=st.sampled_from(_FMTS),
       how=st.sampled_from(["to", "to64", "to_copy", "to_flags", "clone", "contiguous",
                            "float", "double", "cfloat"]))
def test_copy_layouts(seed, fmt, how):
    _same_input_strides(seed)

    def run(lib):
        x = _view(lib, seed).requires_grad_()
        f = _fmt(lib, fmt)
        kw = {} if fmt == "None" else {"memory_format": f}
        calls = {
            "to": lambda: x.to(**kw), "to64": lambda: x.to(lib.float64, **kw),
            "to_copy": lambda: x.to(copy=True, **kw),
            "to_flags": lambda: x.to(lib.float32, False, True, **kw),
            "clone": lambda: x.clone(**kw), "contiguous": lambda: x.contiguous(**kw),
            "float": lambda: x.float(**kw), "double": lambda: x.double(**kw),
            "cfloat": lambda: x.cfloat(**kw)}

        def body():
            out = calls[how]()
            return (_layout(out), out is x, _np(out).tolist(),
                    None if out.grad_fn is None else out.grad_fn.name())

        return _outcome(body)

    assert run(ft) == run(torch)


@pytest.mark.parametrize("kw", ["memory_format=t.channels_last",
                                "memory_format=t.channels_last_3d",
                                "dtype=t.float64, memory_format=t.channels_last",
                                "memory_format=t.contiguous_format"])
@pytest.mark.parametrize("conv3d", [False, True])
def test_module_to_layouts(kw, conv3d):
    def run(lib):
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Conv3d(2, 2, 1) if conv3d else lib.nn.Conv2d(3, 4, 3),
                              lib.nn.Linear(5, 2))
        m[0].weight.grad = lib.ones_like(m[0].weight)

        def body():
            out = eval(f"m.to({kw})", {"m": m, "t": lib})  # noqa: S307
            return (out is m, [(n, _layout(p), type(p).__name__, p.requires_grad)
                               for n, p in m.named_parameters()],
                    _layout(m[0].weight.grad))

        return _outcome(body)

    assert run(ft) == run(torch)


@pytest.mark.parametrize("src", ["m.to(t.channels_last)", "m.to('cpu', t.channels_last)"])
def test_module_to_positional_format(src):
    def run(lib):
        return _outcome(lambda: eval(src, {"m": lib.nn.Linear(2, 2), "t": lib}))  # noqa: S307

    assert run(ft) == run(torch)


# ------------------------------------------------------------- 4. complex logdet

@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 4), batch=st.sampled_from([(), (2,)]),
       dtype=st.sampled_from(["complex64", "complex128"]), singular=st.booleans())
def test_complex_logdet(seed, n, batch, dtype, singular):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((*batch, n, n)) + 1j * rng.standard_normal((*batch, n, n))
    if singular:
        a[..., 0, :] = 0
    g = rng.standard_normal(batch) + 1j * rng.standard_normal(batch)

    def run(lib, method):
        x = lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True)
        out = x.logdet() if method else lib.logdet(x)
        nodes = [out.grad_fn.name()] + [n[0].name() for n in out.grad_fn.next_functions]
        if not singular:
            out.backward(lib.tensor(g, dtype=out.dtype))
        return out, x.grad, nodes

    for method in (False, True):
        got, want = run(ft, method), run(torch, method)
        assert str(got[0].dtype) == str(want[0].dtype) and got[2] == want[2]
        tol = {"rtol": 2e-4, "atol": 2e-4} if dtype == "complex64" else {"rtol": 1e-9}
        np.testing.assert_allclose(_np(got[0]), _np(want[0]), **tol)
        if not singular:
            np.testing.assert_allclose(_np(got[1]), _np(want[1]), **tol)


_INF = "float('inf')"


@pytest.mark.parametrize("src", [
    f"t.tensor([1+1j]) + t.tensor([complex(-{_INF}, 0)])",
    f"t.tensor([1+1j]) - t.tensor([complex(0, {_INF})])",
    f"1 - t.tensor([complex(-{_INF}, 0)])", f"{_INF} + t.tensor([1+1j])",
    f"t.add(t.tensor([1+1j]), t.tensor([complex(-{_INF}, 0)]), alpha=2)",
    f"t.tensor([1., 2.]) + t.tensor([1j, {_INF}])",
    f"t.tensor([-{_INF}]) + t.tensor([1+1j])",
    f"t.tensor([1+1j]).add_(t.tensor([complex(-{_INF}, 0)]))",
    f"t.tensor([1+1j]).sub_(t.tensor([complex(0, {_INF})]), alpha=2)",
    "t.tensor([1., 2.]).add(t.tensor([1., 1.]), alpha=3)",
    "t.tensor([1, 2]).sub(t.tensor([3, 4]), alpha=2)",
])
def test_complex_add_alpha(src):
    def run(lib):
        kind, val = _outcome(lambda: eval(src, {"t": lib}))  # noqa: S307
        return kind, str(val)

    assert run(ft) == run(torch)


# ------------------------------------------- 5. half cross_entropy / nll_loss / log_softmax

_HALF = st.sampled_from(["float16", "bfloat16"])


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), dt=_HALF,
       n=st.one_of(st.integers(0, 40), st.sampled_from([255, 256, 257, 700])),
       c=st.integers(2, 12), fn=st.sampled_from(["cross_entropy", "nll_loss"]),
       reduction=st.sampled_from(["mean", "sum", "none"]), weighted=st.booleans(),
       ignore=st.booleans())
def test_half_class_index_losses_exact(seed, dt, n, c, fn, reduction, weighted, ignore):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-8, 8, (n, c))
    t = rng.integers(0, c, n)
    w = rng.uniform(0.1, 2, c)
    g = rng.uniform(-1, 1, n if reduction == "none" else ())
    ignore_index = int(rng.integers(0, c)) if ignore else -100

    def run(lib):
        xx = lib.tensor(x, dtype=getattr(lib, dt), requires_grad=True)
        kw = {"weight": lib.tensor(w, dtype=getattr(lib, dt))} if weighted else {}
        out = getattr(lib.nn.functional, fn)(xx, lib.tensor(t), reduction=reduction,
                                             ignore_index=ignore_index, **kw)
        out.backward(lib.tensor(g, dtype=out.dtype))
        return out, xx.grad

    (got, ggot), (want, gwant) = run(ft), run(torch)
    if fn == "nll_loss":
        # The losses as PyTorch's kernels round them: the sum in the half type by its
        # cascade.
        np.testing.assert_array_equal(_np(got.float()), _np(want.float()))
        np.testing.assert_array_equal(_np(ggot.float()), _np(gwant.float()))
    else:
        # cross_entropy goes through log_softmax, whose float32 exp and sum (SLEEF's in
        # PyTorch, NumPy's here) may differ in the last bit; where that sum lies near a
        # rounding boundary of the half type, log of it differs by a few half ulps (a
        # randomized run found 3: 0.2939 and 0.2947 around the exact 0.29437).
        assert ulp_error(got, want, dt) <= 4
        assert ulp_error(ggot, gwant, dt) <= 2


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), dt=_HALF, rows=st.integers(1, 6),
       cols=st.integers(1, 70))
def test_half_log_softmax_exact(seed, dt, rows, cols):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-8, 8, (rows, cols))
    g = rng.uniform(-1, 1, (rows, cols))

    def run(lib):
        xx = lib.tensor(x, dtype=getattr(lib, dt), requires_grad=True)
        out = lib.nn.functional.log_softmax(xx, 1)
        out.backward(lib.tensor(g, dtype=out.dtype))
        return out, xx.grad

    (out, grad), (want_out, want_grad) = run(ft), run(torch)
    np.testing.assert_array_equal(_np(out.float()), _np(want_out.float()))
    # The gradient's row sum runs in PyTorch's vector lanes (another order of float32
    # additions than a plain sum): on long rows an element can round the other way.
    assert ulp_error(grad, want_grad, dt) <= 1


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), dt=_HALF,
       how=st.sampled_from(["tensor", "list", "to", "method"]))
def test_double_to_half_rounds_through_float(seed, dt, how):
    x = np.random.default_rng(seed).uniform(-8, 8, 4000)

    def run(lib):
        d = getattr(lib, dt)
        make = {"tensor": lambda: lib.tensor(x, dtype=d),
                "list": lambda: lib.tensor(x.tolist(), dtype=d),
                "to": lambda: lib.tensor(x).to(d),
                "method": lambda: lib.tensor(x).half() if dt == "float16" else
                lib.tensor(x).bfloat16()}[how]
        return _np(make().float())

    np.testing.assert_array_equal(run(ft), run(torch))


# ------------------------------------------------- argument checks met by the pruning module

@settings(max_examples=20, deadline=None)
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=4),
       p=st.sampled_from(["fro", "nuc", "abc", 2, 1]),
       dim=st.one_of(st.none(), st.integers(0, 3),
                     st.lists(st.integers(0, 3), min_size=1, max_size=4, unique=True)))
def test_tensor_norm_orders_and_dims_as_torch(shape, p, dim):
    x = np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape)
    if isinstance(dim, list):
        dim = [d % len(shape) for d in dim]
        assume(len(set(dim)) == len(dim))
    elif dim is not None:
        dim = dim % len(shape)
    for call in (lambda lib, t: t.norm(p=p, dim=dim), lambda lib, t: lib.norm(t, p=p, dim=dim)):
        want = _outcome(lambda c=call: c(torch, torch.tensor(x)))
        got = _outcome(lambda c=call: c(ft, ft.tensor(x)))
        assert got[0] == want[0], (got, want)
        if want[0] == "ok":
            np.testing.assert_allclose(_np(got[1]), _np(want[1]), rtol=1e-12)
        else:
            assert got[1] == want[1]


@pytest.mark.parametrize("call", [
    "x.topk(True)", "x.topk(2.0)", "x.kthvalue(True)", "x.kthvalue(1.0)", "x.topk(2)",
    "lib.cat([])", "lib.cat(())", "lib.concat([])"])
def test_int_arguments_and_empty_cat_as_torch(call):
    def run(lib):
        x = lib.tensor([3.0, 1.0, 2.0])
        return eval(call, {"x": x, "lib": lib})  # noqa: S307 - the calls above, as text

    want, got = _outcome(lambda: run(torch)), _outcome(lambda: run(ft))
    assert got[0] == want[0]
    if want[0] == "ok":
        assert str(got[1]) == str(want[1])
    else:
        assert got[1] == want[1]


# ------------------------------------------- RNN inter-layer dropout over packed sequences

@settings(max_examples=10, deadline=None)
@given(lengths=st.lists(st.integers(1, 5), min_size=1, max_size=4),
       mode=st.sampled_from(["LSTM", "GRU", "RNN"]), bidirectional=st.booleans(),
       batch_first=st.booleans(), seed=st.integers(0, 2**31 - 1))
def test_rnn_dropout_on_packed_sequences_draws_as_torch(lengths, mode, bidirectional,
                                                        batch_first, seed):
    """PyTorch draws the inter-layer dropout masks of a packed batch over its packed rows:
    the same outputs, and the generator left where PyTorch's is."""
    x = np.random.default_rng(seed).normal(size=(len(lengths), max(lengths), 2))

    def run(lib):
        lib.manual_seed(seed)
        m = getattr(lib.nn, mode)(2, 3, num_layers=3, dropout=0.4, batch_first=True,
                                  bidirectional=bidirectional).double()
        xt = lib.tensor(x if batch_first else x.transpose(1, 0, 2))
        m.batch_first = batch_first
        packed = lib.nn.utils.rnn.pack_padded_sequence(
            xt, lib.tensor(lengths), batch_first=batch_first, enforce_sorted=False)
        out, _ = m(packed)
        return _np(out.data), float(lib.rand(1))

    (got, after), (want, want_after) = run(ft), run(torch)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    assert after == want_after
