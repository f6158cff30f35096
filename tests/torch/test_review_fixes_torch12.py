"""PyTorch-face fixes from a twelfth side-by-side review, each compared with torch 2.13:
full backward hooks attached after the forward hooks; the errors of index_select's index
dtype, ``~`` and bitwise_not on inexact tensors, an in-place write into an expanded view of
a leaf, renorm below two dimensions; broadcast_tensors passing through a tensor that
already has the broadcast shape."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

import funcgrad.torch as ft  # noqa: E402
from tests.torch._outcomes import outcome as _outcome  # noqa: E402
from tests.torch._outcomes import values as _np  # noqa: E402

# ------------------------------------------- 1. backward hooks after the forward hooks

def _hook_run(lib, n_fwd, kw, none_at, pre, out_kind):
    """A log of what the hooks see: grad_fn names, the gradients (as lists)."""
    lib.manual_seed(0)
    log = []
    lin = lib.nn.Linear(2, 2)
    with lib.no_grad():
        lin.weight.copy_(lib.tensor([[1.0, 2.0], [3.0, -1.0]]))
        lin.bias.zero_()
    for k in range(n_fwd):
        scale = float(k + 2)
        if k == none_at:
            def hook(m, *a):
                log.append(("fwd-none", type(a[-1].grad_fn).__name__,
                            type(a[0][0].grad_fn).__name__))
        elif k in kw:
            def hook(m, args, kwargs, o, scale=scale):
                return o * scale
        else:
            def hook(m, args, o, scale=scale):
                return o * scale
        lin.register_forward_hook(hook, with_kwargs=k in kw)
    if out_kind == "tuple":
        lin.register_forward_hook(lambda m, i, o: (o, o * 3))
    lin.register_full_backward_hook(
        lambda m, gi, go: log.append(("bwd", [None if g is None else _np(g).tolist()
                                              for g in go],
                                          [None if g is None else _np(g).tolist()
                                           for g in gi])))
    if pre:
        lin.register_full_backward_pre_hook(
            lambda m, go: log.append(("pre", [_np(g).tolist() for g in go])))
    x = lib.tensor([[1.0, -2.0]], requires_grad=True)
    out = lin(x)
    outs = out if isinstance(out, tuple) else (out,)
    log.append(("out", [type(o.grad_fn).__name__ for o in outs]))
    sum(((o * (i + 2)).sum() for i, o in enumerate(outs)), lib.tensor(0.0)).backward()
    log.append(("x.grad", _np(x.grad).tolist()))
    return log


@settings(max_examples=20, deadline=None)
@given(n_fwd=st.integers(0, 3), kw=st.sets(st.integers(0, 2)),
       none_at=st.sampled_from([-1, 0, 1, 2]), pre=st.booleans(),
       out_kind=st.sampled_from(["tensor", "tuple"]))
def test_full_backward_hook_sees_the_forward_hooks_result(n_fwd, kw, none_at, pre, out_kind):
    got = _hook_run(ft, n_fwd, kw, none_at, pre, out_kind)
    want = _hook_run(torch, n_fwd, kw, none_at, pre, out_kind)
    assert got == want


def test_full_backward_hook_after_forward_hook_example():
    def run(lib):
        seen = []
        lin = lib.nn.Linear(2, 2)
        lin.register_forward_hook(lambda m, i, o: o * 2)
        lin.register_full_backward_hook(lambda m, gi, go: seen.append(_np(go[0]).tolist()))
        out = lin(lib.ones(1, 2, requires_grad=True))
        out.sum().backward()
        return type(out.grad_fn).__name__, seen

    assert run(ft) == run(torch) == ("BackwardHookFunctionBackward", [[[1.0, 1.0]]])


def test_backward_hook_warns_on_a_list_result():
    def run(lib):
        m = lib.nn.Identity()
        m.register_forward_hook(lambda m, i, o: [o])
        m.register_full_backward_hook(lambda m, gi, go: None)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = m(lib.ones(2, requires_grad=True))
        return [str(x.message) for x in w], type(r).__name__, type(r[0].grad_fn).__name__

    assert run(ft) == run(torch)


@pytest.mark.parametrize("used", [(0,), (1,), (0, 1)])
def test_full_backward_hook_sees_none_for_an_unused_output(used):
    def run(lib):
        log = []

        class Two(lib.nn.Module):
            def forward(self, x, y):
                return x * 2, y * 3

        mod = Two()
        mod.register_full_backward_pre_hook(lambda m, go: log.append(
            ("pre", [None if g is None else _np(g).tolist() for g in go])))
        mod.register_full_backward_hook(lambda m, gi, go: log.append(
            ("bwd", [None if g is None else _np(g).tolist() for g in (*gi, *go)])))
        x, y = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
        out = mod(x, y)
        sum(out[i].sum() for i in used).backward()
        return log, [None if t.grad is None else _np(t.grad).tolist() for t in (x, y)]

    assert run(ft) == run(torch)


# ------------------------------------------------------------------------- 2. errors

_ERROR_CASES = {
    "index_select float": lambda L: L.ones(2).index_select(0, L.tensor([1.0])),
    "index_select bool": lambda L: L.index_select(L.ones(2), 0, L.tensor([True])),
    "index_select int16": lambda L: L.ones(2).index_select(
        0, L.tensor([1], dtype=L.int16)),
    "index_select int32": lambda L: _np(L.ones(2).index_select(
        0, L.tensor([1], dtype=L.int32))).tolist(),
    "index_select 2-d float": lambda L: L.ones(2).index_select(0, L.tensor([[1.0]])),
    "invert int": lambda L: _np(~L.tensor([1, 2])).tolist(),
    "invert bool": lambda L: _np(~L.tensor([True, False])).tolist(),
    "expanded leaf add_": lambda L: L.zeros(3, requires_grad=True).unsqueeze(0).expand(
        2, 3).add_(1),
    "expanded leaf mul_": lambda L: L.zeros(3, requires_grad=True).expand(2, 3).mul_(2),
    "expanded add_ no grad": lambda L: L.zeros(3).expand(2, 3).add_(1),
    "renorm 1-d": lambda L: L.ones(3).renorm(2, 0, 1),
    "renorm 0-d": lambda L: L.tensor(1.0).renorm(2, 0, 1),
    "renorm fn": lambda L: L.renorm(L.ones(3), 2, 0, 1),
    "renorm_": lambda L: L.ones(3).renorm_(2, 0, 1),
    "renorm bad dim": lambda L: L.ones(3).renorm(2, 5, 1),
    "renorm 2-d": lambda L: _np(L.ones(2, 3).renorm(2, 0, 1)).round(4).tolist(),
}


@pytest.mark.parametrize("case", sorted(_ERROR_CASES))
def test_errors_as_torch(case):
    assert _outcome(lambda: _ERROR_CASES[case](ft)) == _outcome(
        lambda: _ERROR_CASES[case](torch))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "complex64",
                                   "complex128"])
@pytest.mark.parametrize("how", ["invert", "method", "method_", "function"])
def test_bitwise_not_of_inexact_tensors(dtype, how):
    def run(lib):
        t = lib.ones(2, dtype=getattr(lib, dtype))
        if how == "invert":
            return ~t
        if how == "function":
            return lib.bitwise_not(t)
        return getattr(t, "bitwise_not" if how == "method" else "bitwise_not_")()

    assert _outcome(lambda: run(ft)) == _outcome(lambda: run(torch))


# --------------------------------------------------------------- 3. broadcast_tensors

_SHAPES = st.lists(st.integers(1, 3), min_size=0, max_size=3).map(tuple)


@settings(max_examples=30, deadline=None)
@given(shapes=st.lists(_SHAPES, min_size=1, max_size=3), grads=st.lists(st.booleans(),
                                                                          min_size=3,
                                                                          max_size=3))
def test_broadcast_tensors_passes_through_same_shape(shapes, grads):
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        return

    def run(lib):
        ins = [lib.ones(s, requires_grad=g) for s, g in zip(shapes, grads)]
        outs = lib.broadcast_tensors(*ins)
        return [(o is i, None if o.grad_fn is None else type(o.grad_fn).__name__,
                 tuple(o.shape), o.requires_grad) for o, i in zip(outs, ins)]

    assert run(ft) == run(torch)


def test_normal_mean_stays_the_leaf():
    def run(lib):
        loc = lib.ones(3, requires_grad=True)
        d = lib.distributions.Normal(loc, 1.0)
        return repr(d.mean), d.mean is loc, repr(d.stddev)

    assert run(ft) == run(torch)


# ------------------------------------------------------------------ 4. torch._foreach_*

_FOREACH = sorted(n for n in dir(torch) if n.startswith("_foreach_"))
_UNARY_FOREACH = [n for n in _FOREACH if n.rstrip("_")[len("_foreach_"):] in (
    "abs acos asin atan ceil cos cosh erf erfc exp expm1 floor frac lgamma log log10 log1p "
    "log2 neg reciprocal round rsqrt sigmoid sign sin sinh sqrt tan tanh trunc clone zero "
    "norm max powsum").split()]


def test_foreach_names_as_torch():
    assert sorted(n for n in dir(ft) if n.startswith("_foreach_")) == _FOREACH


def _lists(lib, shapes, seed, offset=0.0):
    rng = np.random.default_rng(seed)
    return [lib.tensor(rng.uniform(0.1, 2.0, s).astype(np.float32) + offset) for s in shapes]


def _compare(name, make_args, shapes, seed):
    """Run ``name`` with the same arguments in both libraries: the results and the first
    list's values afterwards (the in-place write) must agree."""
    out = {}
    for lib in (ft, torch):
        args, kwargs = make_args(lib)
        res = _outcome(lambda lib=lib, args=args, kwargs=kwargs: getattr(lib, name)(
            *args, **kwargs))
        kind, val = res
        if kind == "ok":
            same_list = val is args[0]
            val = None if val is None else [np.asarray(_np(v), np.float64) for v in val]
            res = (kind, same_list, val)
        first = args[0] if isinstance(args[0], list) else []
        out[lib.__name__] = res, [np.asarray(_np(t), np.float64) for t in first]
    (got, got_after), (want, want_after) = out["funcgrad.torch"], out["torch"]
    assert got[0] == want[0], (got, want)
    if got[0] == "ok":
        assert got[1] == want[1]
        assert (got[2] is None) == (want[2] is None)
        if got[2] is not None:
            assert len(got[2]) == len(want[2])
            for g, w in zip(got[2], want[2]):
                np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-6)
    elif got[0] != "TypeError":  # (argument parsing: its overload listing is not copied)
        assert got == want
    for g, w in zip(got_after, want_after):
        np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-6)


_SHAPE_LISTS = st.lists(st.lists(st.integers(1, 3), max_size=2).map(tuple), min_size=1,
                        max_size=3)


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(_UNARY_FOREACH), shapes=_SHAPE_LISTS, seed=st.integers(0, 99))
def test_foreach_unary(name, shapes, seed):
    _compare(name, lambda lib: ([_lists(lib, shapes, seed)], {}), shapes, seed)


_BINARY_FOREACH = [n for n in _FOREACH if n.rstrip("_")[len("_foreach_"):] in (
    "add sub mul div clamp_max clamp_min maximum minimum pow copy").split()]


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(_BINARY_FOREACH), shapes=_SHAPE_LISTS, seed=st.integers(0, 99),
       kind=st.sampled_from(["list", "scalar", "scalars", "tensor", "alpha", "short"]))
def test_foreach_binary(name, shapes, seed, kind):
    def make(lib):
        xs = _lists(lib, shapes, seed)
        if kind in ("list", "alpha"):
            other = _lists(lib, shapes, seed + 1, -1.0)
        elif kind == "scalar":
            other = 1.5
        elif kind == "scalars":
            other = [0.5 + i for i in range(len(shapes))]
        elif kind == "short":
            other = [0.5] * (len(shapes) + 1)
        else:
            other = lib.tensor(1.25)
        return [xs, other], ({"alpha": 2} if kind == "alpha" else {})

    _compare(name, make, shapes, seed)


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from([n for n in _FOREACH if "addc" in n or "lerp" in n]),
       shapes=_SHAPE_LISTS, seed=st.integers(0, 99),
       kind=st.sampled_from(["default", "number", "scalars", "tensor"]))
def test_foreach_ternary(name, shapes, seed, kind):
    def make(lib):
        xs, t1, t2 = (_lists(lib, shapes, seed + k) for k in range(3))
        n = len(shapes)
        if "lerp" in name:
            weight = {"default": t2, "number": 0.25, "scalars": [0.1 * (i + 1)
                                                                 for i in range(n)],
                      "tensor": t2}[kind]
            return [xs, t1, weight], {}
        if kind == "default":
            return [xs, t1, t2], {}
        value = {"number": 0.5, "scalars": [0.5 + i for i in range(n)],
                 "tensor": lib.tensor([0.5 + i for i in range(n)])}[kind]
        return [xs, t1, t2, value], {}

    _compare(name, make, shapes, seed)


def test_foreach_misc_as_torch():
    for lib_args in (
        ("_foreach_pow", lambda L: ([2.0, _lists(L, [(2,), (3,)], 0)], {})),
        ("_foreach_norm", lambda L: ([_lists(L, [(2,), (3,)], 1, -1.0), 1], {})),
        ("_foreach_powsum", lambda L: ([_lists(L, [(2,), (3,)], 1, -1.0), 3], {})),
        ("_foreach_mm", lambda L: ([_lists(L, [(2, 3)], 2), _lists(L, [(3, 2)], 3)], {})),
        ("_foreach_add", lambda L: ([[], 1], {})),
        ("_foreach_mul", lambda L: ([_lists(L, [(2,)], 0), L.tensor([2.0, 3.0])], {})),
        ("_foreach_add_", lambda L: ([[L.tensor([1, 5])], 2.5], {})),
        ("_foreach_maximum", lambda L: ([[L.tensor([1, 5])], 2.5], {})),
        ("_foreach_pow", lambda L: ([[L.tensor([1, 5])], -1], {})),
        ("_foreach_copy_", lambda L: ([_lists(L, [(2,)], 0), [L.tensor([1, 5])]], {})),
        ("_foreach_norm", lambda L: ([_lists(L, [(2,)], 0, -1.0), 2], {"dtype": L.float64})),
        ("_foreach_add", lambda L: ([_lists(L, [(2,)], 0), _lists(L, [(2,), (2,)], 0)], {})),
    ):
        _compare(lib_args[0], lib_args[1], None, None)


def test_foreach_grad_flows():
    def run(lib):
        w = lib.ones(2, requires_grad=True)
        (out,) = lib._foreach_mul([w], [lib.tensor([2.0, 3.0])])
        out.sum().backward()
        return _np(w.grad).tolist()

    assert run(ft) == run(torch)
