"""PyTorch-face fixes from an eighteenth side-by-side review, each compared with torch 2.13:
in-place writes into captured tensors inside ``torch.func`` transforms (refused, the
captured tensor kept; a train-mode BatchNorm under ``grad``/``vmap``), device equality
(``cpu`` is not ``cpu:0``), the TypeError for a Python number where an operation takes
Tensors only (``torch.maximum(t, 1.5)``), Bool ``pow`` and shifts, the deprecation warnings
of ``x.T`` and ``meshgrid``, and the global module hooks of ``torch.nn.modules.module``."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import funcgrad.torch as ft
from tests.torch._outcomes import outcome, same_outcome, shown

torch = pytest.importorskip("torch")


def _captured(t: Any, body: Any) -> Any:
    """``grad`` of ``x.sum()`` after ``body(c, x)`` writes into ``c``, a tensor made
    outside the function; then ``c`` itself (unchanged where the write is refused)."""
    c = t.zeros(3)
    out = outcome(lambda: t.func.grad(lambda x: (body(c, x), x.sum())[1])(t.ones(3)))
    return (out[0], shown(out[1])), repr(c)


CAPTURED = {
    "add_traced": lambda c, x: c.add_(x),
    "add_number": lambda c, x: c.add_(1),
    "add_alpha": lambda c, x: c.add_(x, alpha=2),
    "mul": lambda c, x: c.mul_(x),
    "copy": lambda c, x: c.copy_(x),
    "setitem": lambda c, x: c.__setitem__(0, x[0]),
    "setitem_advanced": lambda c, x: c.__setitem__(np.array([0, 2]), x[:2]),
    "zero": lambda c, x: c.zero_(),
    "fill": lambda c, x: c.fill_(2.0),
    "sin": lambda c, x: c.sin_(),
    "addcmul": lambda c, x: c.addcmul_(x, x),
    "clamp": lambda c, x: c.clamp_(0, 1),
    "through_view": lambda c, x: c.view(3).add_(x),
}


@pytest.mark.parametrize("name", sorted(CAPTURED))
def test_writing_a_captured_tensor_in_grad_is_refused_as_torch(name: str) -> None:
    body = CAPTURED[name]
    assert _captured(ft, body) == _captured(torch, body)


def test_tensors_made_inside_grad_are_written_freely() -> None:
    def f(t: Any) -> Any:
        def inner(x: Any) -> Any:
            buf = t.zeros(3)
            buf.add_(x)
            buf[0] = x[1] * 3
            return (buf * x).sum()
        return t.func.grad(inner)(t.tensor([1.0, 2.0, 3.0]))
    same_outcome(f)


@pytest.mark.parametrize("transform", ["grad", "vjp", "jvp", "jacrev"])
def test_train_batchnorm_under_a_grad_transform_raises_and_keeps_its_statistics(
        transform: str) -> None:
    def run(t: Any) -> Any:
        t.manual_seed(0)
        bn = t.nn.BatchNorm1d(3)
        x = t.tensor(np.arange(12.0, dtype=np.float32).reshape(4, 3))
        f = lambda v: bn(v).sum()  # noqa: E731
        call = {"grad": lambda: t.func.grad(f)(x),
                "vjp": lambda: t.func.vjp(f, x)[0],
                "jvp": lambda: t.func.jvp(f, (x,), (x,))[0],
                "jacrev": lambda: t.func.jacrev(f)(x)}[transform]
        return outcome(call), repr(bn.running_mean), repr(bn.num_batches_tracked)
    assert run(ft) == run(torch)


def test_batchnorm_in_eval_mode_under_grad_is_fine() -> None:
    def run(t: Any) -> Any:
        bn = t.nn.BatchNorm1d(3).eval()
        x = t.tensor(np.arange(12.0, dtype=np.float32).reshape(4, 3))
        g = t.func.grad(lambda v: (bn(v) ** 2).sum())(x)
        return np.round(g.detach().numpy(), 4).tolist(), repr(bn.running_mean)
    assert run(ft) == run(torch)


VMAPPED = {
    "add_traced": lambda c, x: c.add_(x),
    "mul_traced": lambda c, x: c.mul_(x),
    "copy_traced": lambda c, x: c.copy_(x),
    "setitem_traced": lambda c, x: c.__setitem__(0, x[0]),
    "add_number": lambda c, x: c.add_(1),
}


@pytest.mark.parametrize("name", sorted(VMAPPED))
def test_vmap_writes_into_unmapped_tensors_as_torch(name: str) -> None:
    def run(t: Any) -> Any:
        c = t.zeros(3)
        out = outcome(lambda: t.func.vmap(lambda x: (VMAPPED[name](c, x), x)[1])(
            t.ones(2, 3)))
        return (out[0], shown(out[1])), repr(c)
    assert run(ft) == run(torch)


def test_vmap_of_a_train_batchnorm_gives_torchs_error() -> None:
    def run(t: Any) -> Any:
        bn = t.nn.BatchNorm1d(3)
        x = t.ones(4, 3)
        return outcome(lambda: t.func.vmap(
            lambda v: bn(v.unsqueeze(0).expand(2, 3)).sum())(x)), repr(bn.running_mean)
    assert run(ft) == run(torch)


DEVICES = {
    "cpu_vs_cpu0": lambda t: t.device("cpu") == t.device("cpu:0"),
    "cpu_vs_cpu_index": lambda t: t.device("cpu") == t.device("cpu", 0),
    "tensor_vs_cpu0": lambda t: t.zeros(1).device == t.device("cpu:0"),
    "tensor_vs_cpu": lambda t: t.zeros(1).device == t.device("cpu"),
    "vs_string": lambda t: t.device("cpu") == "cpu",
    "cuda_vs_cuda0": lambda t: t.device("cuda") == t.device("cuda:0"),
    "hash": lambda t: hash(t.device("cpu")) == hash(t.device("cpu:0")),
    "dict": lambda t: {t.device("cpu"): 1}.get(t.device("cpu:0")),
    "same_cuda": lambda t: t.device("cuda:1") == t.device("cuda", 1),
    "to_cpu0_keeps": lambda t: _kept_by_to(t.zeros(1), "cpu:0"),
    "to_cpu_keeps": lambda t: _kept_by_to(t.zeros(1), "cpu"),
}


def _kept_by_to(x: Any, where: str) -> bool:
    return x.to(where) is x


@pytest.mark.parametrize("name", sorted(DEVICES))
def test_device_equality_as_torch(name: str) -> None:
    same_outcome(DEVICES[name])


_BINARY_TENSOR_ONLY = ["maximum", "minimum", "fmax", "fmin", "atan2", "arctan2", "hypot",
                       "nextafter", "logaddexp", "logaddexp2", "igamma", "igammac", "ldexp",
                       "heaviside", "gcd", "lcm", "dist", "isclose", "kron", "inner", "dot",
                       "outer", "matmul", "masked_select", "take", "polar", "complex", "cdist",
                       "cross"]


@pytest.mark.parametrize("how", ["function", "method", "number_first", "keyword"])
@pytest.mark.parametrize("name", _BINARY_TENSOR_ONLY)
def test_a_number_where_torch_takes_tensors_only(name: str, how: str) -> None:
    def call(t: Any) -> Any:
        x = t.tensor([1.0, 2.0])
        f = getattr(t, name, None)
        m = getattr(x, name, None)
        if how == "function":
            return type(f(x, 1.5)).__name__
        if how == "number_first":
            return type(f(1.5, x)).__name__
        if how == "keyword":
            if m is None:
                return "none"
            arg = {"heaviside": "values", "dot": "tensor", "outer": "vec2",
                   "masked_select": "mask", "take": "index"}.get(name, "other")
            return type(m(**{arg: 2.5})).__name__
        return "none" if m is None else type(m(1.5)).__name__
    ours, theirs = outcome(lambda: call(ft)), outcome(lambda: call(torch))
    if theirs[0] == "TypeError":
        assert ours == theirs
    else:  # (accepted there: the face accepts it too)
        assert ours[0] != "TypeError" or "must be Tensor" not in ours[1]


def test_numbers_first_where_torch_has_scalar_overloads() -> None:
    for name in ("true_divide", "floor_divide", "sub", "add", "mul", "div", "pow"):
        same_outcome(lambda t, n=name: getattr(t, n)(3.0, t.tensor([1.0, 2.0])))


BOOL = {
    "pow_tensor": lambda t, b: b ** b,
    "pow_fn": lambda t, b: t.pow(b, b),
    "pow_inplace": lambda t, b: b.clone().pow_(b),
    "pow_true": lambda t, b: b ** True,
    "pow_false": lambda t, b: b ** False,
    "pow_int": lambda t, b: b ** 2,
    "pow_float": lambda t, b: b ** 2.0,
    "int_pow_bool": lambda t, b: t.tensor([2, 3]) ** b,
    "lshift_tensor": lambda t, b: b << b,
    "rshift_tensor": lambda t, b: b >> b,
    "rshift_true": lambda t, b: b >> True,
    "lshift_int": lambda t, b: b << 1,
    "method_lshift": lambda t, b: b.bitwise_left_shift(b),
    "int_lshift_bool": lambda t, b: t.tensor([1, 2]) << b,
}


@pytest.mark.parametrize("name", sorted(BOOL))
def test_bool_pow_and_shifts_as_torch(name: str) -> None:
    same_outcome(lambda t: BOOL[name](t, t.tensor([True, False])))


def _first_warnings(t: Any, calls: list[Any]) -> list[list[str]]:
    """Each call's warnings: with a fresh once-only memory (as a new process)."""
    if t is ft:
        import funcgrad.torch._tensor as tensor_module

        tensor_module._WARNED_ONCE.clear()
    seen = []
    for call in calls:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            call(t)
        seen.append([str(x.message) for x in w])
    return seen


def test_transpose_and_meshgrid_deprecations_as_torch() -> None:
    calls = [lambda t: t.ones(2, 3).T, lambda t: t.ones(()).T, lambda t: t.ones(2, 3, 4).T,
             lambda t: t.ones(3).T,
             lambda t: t.meshgrid(t.ones(2), t.ones(3), indexing="ij"),
             lambda t: t.meshgrid(t.ones(2), t.ones(3)),
             lambda t: t.meshgrid(t.ones(2), t.ones(3))]
    ours = _first_warnings(ft, calls)
    # PyTorch warns once a process: the first warnings of this process are compared, where
    # this test is the first to ask (later ones see none, as the face's once-only memory
    # was cleared only here).
    theirs = _first_warnings(torch, calls)
    for mine, real in zip(ours, theirs):
        if real:
            assert mine == real
    assert [bool(m) for m in ours] == [False, True, True, False, False, True, False]


def _hooked_run(t: Any) -> list[Any]:
    mm = t.nn.modules.module
    seen: list[Any] = []
    handles = [
        mm.register_module_forward_pre_hook(
            lambda m, a: seen.append(("pre", type(m).__name__))),
        mm.register_module_forward_hook(
            lambda m, a, o: seen.append(("fwd", type(m).__name__, tuple(o.shape)))),
        mm.register_module_forward_hook(
            lambda m, a, k, o: seen.append(("fwd_kw", sorted(k))), with_kwargs=True),
        mm.register_module_full_backward_pre_hook(
            lambda m, go: seen.append(("bwd_pre", type(m).__name__))),
        mm.register_module_full_backward_hook(
            lambda m, gi, go: seen.append(("bwd", type(m).__name__, len(gi)))),
        mm.register_module_parameter_registration_hook(
            lambda m, n, p: seen.append(("param", n))),
        mm.register_module_buffer_registration_hook(
            lambda m, n, b: seen.append(("buffer", n))),
        mm.register_module_module_registration_hook(
            lambda m, n, s: seen.append(("module", n))),
    ]
    try:
        net = t.nn.Sequential(t.nn.Linear(2, 3), t.nn.ReLU())
        lin = net[0]
        lin.register_forward_hook(lambda m, a, o: seen.append(("own", type(m).__name__)))
        x = t.ones(4, 2, requires_grad=True)
        net(x).sum().backward()
        bn = t.nn.BatchNorm1d(2)
        del bn
    finally:
        for h in handles:
            h.remove()
    t.nn.Linear(2, 2)(t.ones(2))  # removed: nothing more is seen
    return seen


def test_global_module_hooks_as_torch() -> None:
    assert _hooked_run(ft) == _hooked_run(torch)


def test_global_registration_hooks_replace_values() -> None:
    def run(t: Any) -> Any:
        mm = t.nn.modules.module
        handles = [
            mm.register_module_parameter_registration_hook(
                lambda m, n, p: t.nn.Parameter(p.detach() * 0 + 7) if n == "w" else None),
            mm.register_module_buffer_registration_hook(
                lambda m, n, b: b + 1 if b is not None else None),
            mm.register_module_module_registration_hook(
                lambda m, n, s: t.nn.Tanh() if n == "act" else None),
        ]
        try:
            m = t.nn.Module()
            m.w = t.nn.Parameter(t.zeros(2))
            m.register_parameter("v", t.nn.Parameter(t.zeros(1)))
            m.register_buffer("b", t.zeros(2))
            m.act = t.nn.ReLU()
            m.add_module("other", t.nn.ReLU())
        finally:
            for h in handles:
                h.remove()
        m.later = t.nn.ReLU()  # removed: kept as given
        return (m.w.tolist(), m.v.tolist(), m.b.tolist(), type(m.act).__name__,
                type(m.other).__name__, type(m.later).__name__)
    assert run(ft) == run(torch)


# ---------------------------------------------------------------- the nineteenth review

def _attention(t: Any, how: str) -> Any:
    F = t.nn.functional
    q = (t.arange(24.0).view(1, 1, 4, 6) / 10).requires_grad_()
    mask = t.tensor([[False] * 4, [True, False, False, False], [True] * 4,
                     [True, True, False, False]])
    if how == "bool_mask":
        out = F.scaled_dot_product_attention(q, q, q, attn_mask=mask)
    elif how == "float_mask":
        fm = t.zeros(4, 4)
        fm[0] = float("-inf")
        out = F.scaled_dot_product_attention(q, q, q, attn_mask=fm)
    elif how == "mask_and_causal_4d":
        out = F.scaled_dot_product_attention(q, q, q, attn_mask=mask.logical_not(),
                                             is_causal=True)
    else:  # a 3-d input takes PyTorch's math path, which refuses both
        q3 = q[0].detach()
        return outcome(lambda: F.scaled_dot_product_attention(q3, q3, q3, attn_mask=t.ones(4, 4),
                                                              is_causal=True))
    out.sum().backward()
    return out.detach().numpy(), q.grad.numpy(), type(out.grad_fn).__name__


@pytest.mark.parametrize("how", ["bool_mask", "float_mask", "mask_and_causal_4d",
                                 "mask_and_causal_3d"])
def test_attention_rows_masked_everywhere_give_zeros_as_torch(how: str) -> None:
    ours, theirs = _attention(ft, how), _attention(torch, how)
    if how == "mask_and_causal_3d":
        assert ours == theirs
        return
    for a, b in zip(ours[:2], theirs[:2]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)  # (zeros exactly, no NaN)
    assert ours[2] == theirs[2]


@pytest.mark.parametrize("need_weights", [False, True])
def test_mha_with_a_fully_padded_sequence_as_torch(need_weights: bool) -> None:
    def run(t: Any) -> Any:
        t.manual_seed(0)
        mha = t.nn.MultiheadAttention(6, 2)
        x = t.tensor(np.random.default_rng(1).normal(size=(3, 2, 6)).astype(np.float32))
        kpm = t.tensor([[True, True, True], [False, False, True]])
        out = mha(x, x, x, key_padding_mask=kpm, need_weights=need_weights)[0]
        return np.round(out.detach().numpy(), 4).tolist()
    assert str(run(ft)) == str(run(torch))


SMALL = {
    "uint8_any": lambda t: t.tensor([0, 255], dtype=t.uint8).any(),
    "uint8_all_dim": lambda t: t.tensor([[0, 255]], dtype=t.uint8).all(1),
    "bool_any": lambda t: t.tensor([0.0, 1.0]).any(),
    "negative_step": lambda t: t.arange(4)[::-1],
    "negative_step_2d": lambda t: t.arange(8).view(2, 4)[:, ::-2],
    "zero_step": lambda t: t.arange(4)[::0],
    "setitem_negative_step": lambda t: t.arange(4.0).__setitem__(slice(None, None, -1), 1.0),
    "expand_leading_minus_one": lambda t: t.ones(3).expand(-1, 3),
    "expand_minus_one": lambda t: t.ones(3).expand(2, -1),
    "full_float_overflow": lambda t: t.full((2,), 1e40),
    "fill_float_overflow": lambda t: t.zeros(2).fill_(1e40),
    "full_half_overflow": lambda t: t.full((2,), 1e5, dtype=t.float16),
    "full_half_beyond_float": lambda t: t.full((1,), 1e300, dtype=t.float16),
    "full_half_int": lambda t: t.full((1,), 70000, dtype=t.float16),
    "full_int32_float": lambda t: t.full((2,), 1e10, dtype=t.int32),
    "full_int64_float": lambda t: t.full((1,), 1e10, dtype=t.int64),
    "full_uint8_negative": lambda t: t.full((1,), -1, dtype=t.uint8),
    "full_uint8_256": lambda t: t.full((1,), 256, dtype=t.uint8),
    "fill_int8": lambda t: t.zeros(2, dtype=t.int8).fill_(300),
    "fill_inf": lambda t: t.zeros(2).fill_(float("inf")),
    "contains_tensor": lambda t: t.ones(2) in t.ones(2, 2),
    "contains_number": lambda t: 3 in t.arange(4),
    "contains_string": lambda t: "a" in t.ones(2),
    "size_out_of_range": lambda t: t.ones(2, 3).size(2),
    "size_negative": lambda t: t.ones(2, 3).size(-3),
    "size_of_0d": lambda t: t.ones(()).size(0),
    "group_norm_groups": lambda t: t.nn.GroupNorm(4, 6),
    "add_inplace_shapes": lambda t: t.zeros(2, 3).add_(t.ones(4, 3)),
    "mul_inplace_shapes": lambda t: t.zeros(2, 3).mul_(t.ones(3, 1)),
    "sub_inplace_last_axis": lambda t: t.zeros(2, 3).sub_(t.ones(1, 4)),
    "copy_shapes": lambda t: t.zeros(2, 3).copy_(t.ones(4, 3)),
    "add_inplace_broadcasts": lambda t: t.zeros(2, 3).add_(t.ones(3)),
    "add_inplace_into_smaller": lambda t: t.zeros(3).add_(t.ones(2, 3)),
}


@pytest.mark.parametrize("name", sorted(SMALL))
def test_nineteenth_review_small_differences_as_torch(name: str) -> None:
    same_outcome(SMALL[name])
