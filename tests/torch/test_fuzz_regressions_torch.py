"""Regressions found by the torch-face fuzzer (tests/support/fuzz_torch_programs.py), each
checked against PyTorch 2.13 itself: values, ``grad_fn`` names, ``.grad`` of every input
and second derivatives, on hypothesis-drawn float64 inputs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad.numpy as fnp
import funcgrad.torch as ft

torch = pytest.importorskip("torch")

FLOATS = st.floats(-3.0, 3.0, allow_nan=False, width=64)
SETTINGS = settings(max_examples=25, deadline=None)


def _arrays(n: int = 4) -> Any:
    # Small integers and halves make ties (x == bound, lo == hi, x == 0) common.
    return hnp.arrays(np.float64, (n,), elements=st.one_of(
        FLOATS, st.sampled_from([-1.0, -0.5, -0.0, 0.0, 0.5, 1.0])))


def _both(fn: Any, *arrays: np.ndarray, grads: bool = True) -> list[dict[str, Any]]:
    """``fn(t, *leaves)`` on both libraries: output, node name, and each leaf's .grad."""
    results = []
    for t in (torch, ft):
        leaves = [t.tensor(a, dtype=t.float64, requires_grad=True) for a in arrays]
        out = fn(t, *leaves)
        res = {"out": out.detach().numpy().copy(), "node": type(out.grad_fn).__name__}
        if grads:
            w = t.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)),
                         dtype=t.float64)
            (out * w).sum().backward()
            res["grads"] = [None if x.grad is None else x.grad.numpy().copy() for x in leaves]
        results.append(res)
    return results


def _same(theirs: dict[str, Any], ours: dict[str, Any]) -> None:
    assert ours["node"] == theirs["node"]
    np.testing.assert_array_equal(ours["out"], theirs["out"])
    np.testing.assert_array_equal(np.signbit(ours["out"]), np.signbit(theirs["out"]))
    for g, h in zip(ours.get("grads", []), theirs.get("grads", [])):
        assert (g is None) == (h is None)
        if g is not None:
            np.testing.assert_allclose(g, h, rtol=1e-12, atol=0)


# --------------------------------------------------------------- clamp, Tensor bounds


@SETTINGS
@given(x=_arrays(), lo=_arrays(), hi=_arrays())
def test_clamp_with_tensor_bounds_that_require_grad_matches_torch(
        x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
    # Used to raise (the bounds were closed over and read as NumPy arrays).
    _same(*_both(lambda t, a, b, c: t.clamp(a, min=b, max=c), x, lo, hi))
    _same(*_both(lambda t, a, b, c: a.clip(b, c) * c, x, lo, hi))


@SETTINGS
@given(x=_arrays(), b=_arrays())
def test_clamp_min_max_with_a_tensor_bound_match_torch(x: np.ndarray, b: np.ndarray) -> None:
    _same(*_both(lambda t, a, c: a.clamp_min(c), x, b))
    _same(*_both(lambda t, a, c: t.clamp_max(a, c), x, b))
    _same(*_both(lambda t, a, c: t.clamp(a, max=c), x, b))


def test_clamp_tensor_bounds_nan_broadcast_and_node_names() -> None:
    nan = float("nan")
    x = np.array([nan, 1.0, 1.0, -3.0, 0.5, 2.0])
    lo = np.array([0.0, nan, 2.0, 0.0, 0.5, 1.0])
    hi = np.array([-1.0, 2.0, nan, 0.0, 0.5, 1.0])  # NaNs, hi < lo and lo == hi
    _same(*_both(lambda t, a, b, c: t.clamp(a, b, c), x, lo, hi))
    _same(*_both(lambda t, a, b: t.clamp(a.reshape(3, 2), min=b.reshape(3, 1, 2)),
                 np.array([-2.0, 0.5, 1.0, -0.2, 0.6, 3.0]), np.linspace(-1, 1, 6)))
    for t in (torch, ft):
        x1 = t.tensor([1.0, -2.0, 3.0], requires_grad=True)
        b = t.tensor(0.5, dtype=t.float64, requires_grad=True)
        assert type(x1.clamp_min(0.5).grad_fn).__name__ == "ClampMinBackward0"
        assert type(x1.clamp_max(0.5).grad_fn).__name__ == "ClampMaxBackward0"
        assert type((x1 * 1).clamp_(-1, 1).grad_fn).__name__ == "ClampBackward1"
        y = (x1 * 1).clamp_(b, b + 1)
        assert type(y.grad_fn).__name__ == "ClampBackward0"
        assert y.dtype == t.float32  # a 0-d bound does not promote
        y.sum().backward()
        np.testing.assert_array_equal(b.grad.numpy(), 2.0)
        assert b.grad.dtype == t.float64
        with pytest.raises(TypeError, match="clamp"):
            x1.clamp(0.5, b)


@SETTINGS
@given(x=_arrays(), lo=_arrays())
def test_clamp_tensor_bounds_second_order_matches_torch(x: np.ndarray, lo: np.ndarray) -> None:
    seconds = []
    for t in (torch, ft):
        a = t.tensor(x, dtype=t.float64, requires_grad=True)
        b = t.tensor(lo, dtype=t.float64, requires_grad=True)
        out = t.clamp(a * a, min=b, max=b.abs() + 1.0) * a
        ga, gb = t.autograd.grad(out.sum(), [a, b], create_graph=True)
        sa, sb = t.autograd.grad((ga * ga).sum() + (gb * gb * a).sum(), [a, b],
                                 allow_unused=True)
        seconds.append([None if s is None else s.detach().numpy() for s in (sa, sb)])
    for s, r in zip(seconds[1], seconds[0]):
        np.testing.assert_allclose(0.0 if s is None else s, r, rtol=1e-12, atol=1e-14)


def test_clamp_tensor_bounds_gradient_is_the_finite_difference() -> None:
    # Away from ties the derivative is the difference quotient (no oracle needed).
    rng = np.random.default_rng(0)
    x, lo, hi = rng.normal(size=(3, 7))
    hi = lo + np.abs(hi) + 0.1

    def f(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> float:
        return float((ft.clamp(ft.tensor(a), ft.tensor(b), ft.tensor(c)) ** 2).sum())

    leaves = [ft.tensor(v, requires_grad=True, dtype=ft.float64) for v in (x, lo, hi)]
    (ft.clamp(*leaves) ** 2).sum().backward()
    eps = 1e-6
    for k in range(3):
        fd = np.zeros(7)
        for i in range(7):
            args_p = [v.copy() for v in (x, lo, hi)]
            args_m = [v.copy() for v in (x, lo, hi)]
            args_p[k][i] += eps
            args_m[k][i] -= eps
            fd[i] = (f(*args_p) - f(*args_m)) / (2 * eps)
        np.testing.assert_allclose(leaves[k].grad.numpy(), fd, atol=1e-6)


# --------------------------------------------------------------- fmod / remainder nodes


@pytest.mark.parametrize("name", ["fmod", "remainder"])
def test_fmod_remainder_tensor_overloads_record_backward1(name: str) -> None:
    x = np.array([-2.5, -1.0, 0.25, 1.75, 3.0])
    y = np.array([1.5, -0.75, 2.0, 0.5, -1.25])
    _same(*_both(lambda t, a, b: getattr(t, name)(a, b), x, y))
    _same(*_both(lambda t, a, b: getattr(a, name)(b.sum()), x, y))  # a 0-d tensor
    _same(*_both(lambda t, a, b: getattr(a, name)(1.5) * b, x, y))
    if name == "remainder":
        _same(*_both(lambda t, a, b: a % b, x, y))
        _same(*_both(lambda t, a, b: a % 1.5, x, y))


def test_pow_inplace_with_a_tensor_exponent_records_backward1() -> None:
    for t in (torch, ft):
        x = t.tensor([1.5, 2.0], dtype=t.float64, requires_grad=True)
        e = t.tensor([2.0, 0.5], dtype=t.float64)
        assert type((x * 1).pow_(e).grad_fn).__name__ == "PowBackward1"
        assert type((x * 1).pow_(2).grad_fn).__name__ == "PowBackward0"


# --------------------------------------------------------------- copysign


@SETTINGS
@given(x=_arrays(), y=_arrays())
def test_copysign_matches_torch(x: np.ndarray, y: np.ndarray) -> None:
    # y.grad used to be None (PyTorch: zeros), x's derivative at 0 was +-1 (PyTorch: 0) and
    # copysign(x, -0.0) was |x| (PyTorch reads the sign bit).
    _same(*_both(lambda t, a, b: t.copysign(a, b), x, y))
    _same(*_both(lambda t, a, b: a.copysign(-0.0) * b, x, y))
    _same(*_both(lambda t, a, b: a.copysign(2) + b, x, y))


def test_copysign_second_order_agrees_away_from_zero() -> None:
    # Where x == 0 PyTorch's second derivative is NaN (docs/sharp_bits.md); elsewhere 0.
    x = np.array([-2.0, 0.5, 1.5, -0.25])
    y = np.array([1.0, -1.0, -0.0, 2.0])
    seconds = []
    for t in (torch, ft):
        a = t.tensor(x, dtype=t.float64, requires_grad=True)
        b = t.tensor(y, dtype=t.float64, requires_grad=True)
        g, = t.autograd.grad((t.copysign(a * a, b) * a).sum(), [a], create_graph=True)
        s, = t.autograd.grad((g * g).sum(), [a])
        seconds.append(s.numpy())
    np.testing.assert_allclose(seconds[1], seconds[0], rtol=1e-12)


def test_copysign_reads_the_sign_bit_on_the_numpy_face_too() -> None:
    jnp = pytest.importorskip("jax.numpy")
    x = np.array([2.0, -3.0, 0.0, 1.0])
    y = np.array([-0.0, 0.0, -0.0, -np.nan])
    np.testing.assert_array_equal(np.asarray(fnp.copysign(x, y)), np.asarray(jnp.copysign(x, y)))
    np.testing.assert_array_equal(np.signbit(fnp.copysign(x, y)), np.signbit(np.copysign(x, y)))


# --------------------------------------------------------------- selection and split nodes

# Ties only where PyTorch's choice is specified (median() shares the gradient; mode takes
# the last position); docs/sharp_bits.md: the index of kthvalue/median(dim) ties.
_X = np.array([[1.0, 5.0, -3.0, 2.0], [2.5, 2.25, 0.0, 1.5], [0.5, -1.0, 4.0, 3.0]])
_XT = np.array([[1.0, 5.0, -3.0, 2.0], [2.0, 2.0, 0.0, 2.0], [0.5, -1.0, 4.0, 4.0]])
_I = np.array([[0, 2, 1, 3], [1, 0, 0, 3], [3, 3, 2, 1]])

NODE_CASES: dict[str, Any] = {  # PyTorch's node for each (found by the extended fuzzer)
    "take_along_dim": lambda t, x: t.take_along_dim(x, t.tensor(_I), 1),
    "take_along_dim_flat": lambda t, x: t.take_along_dim(x, t.tensor([0, 5, 5])),
    "split": lambda t, x: t.split(x, 3, dim=1)[0],
    "split_sizes": lambda t, x: t.split(x, [1, 3], dim=1)[1],
    "chunk": lambda t, x: t.chunk(x, 2, dim=0)[1],
    "unbind": lambda t, x: t.unbind(x, 1)[2],
    "narrow_whole_axis": lambda t, x: x.narrow(1, 0, 4),
    "topk": lambda t, x: x.topk(2, 1).values,
    "topk_smallest": lambda t, x: t.topk(x, 2, 0, largest=False)[0],
    "kthvalue": lambda t, x: x.kthvalue(2, 1).values,
    "kthvalue_keepdim": lambda t, x: x.kthvalue(3, 1, keepdim=True).values,
    "median_dim": lambda t, x: x.median(1).values,
    "median": lambda t, x: x.median(),
    "nanmedian_dim": lambda t, x: x.nanmedian(0).values,
    "nanmedian": lambda t, x: x.nanmedian(),
    "mode": lambda t, x: x.mode(1).values,
    "cummax": lambda t, x: x.cummax(1).values,
    "cummin": lambda t, x: x.cummin(0).values,
    "masked_fill_tensor": lambda t, x: x.masked_fill(x > 1.0, x.sum()),
    "masked_fill_inplace_tensor": lambda t, x: (x * 1.0).masked_fill_(x > 1.0, x.mean()),
    "scatter_value": lambda t, x: x.scatter(1, t.tensor(_I[:, :2]), 2.0),
    "masked_select": lambda t, x: x.masked_select(x > 1.0),
    "tile_int": lambda t, x: x.tile(2),
}


def _set_advanced(t: Any, x: Any) -> Any:
    y = x * 1.0
    y[t.tensor([2, 0])] = x[:2].sin()
    return y


def _set_mask(t: Any, x: Any) -> Any:
    y = x * 1.0
    y[x > 1.0] = 0.5
    return y


NODE_CASES["setitem_advanced"] = _set_advanced
NODE_CASES["setitem_mask"] = _set_mask


@pytest.mark.parametrize("name", sorted(NODE_CASES))
def test_selection_and_split_ops_record_torch_nodes(name: str) -> None:
    _same(*_both(NODE_CASES[name], _X))


@pytest.mark.parametrize("name", ["median", "nanmedian", "mode", "cummax", "cummin"])
def test_tied_selections_match_torch(name: str) -> None:
    # median()/nanmedian() share the gradient among the tied entries (2.0 three times).
    _same(*_both(NODE_CASES[name], _XT))


def test_narrow_past_the_end_raises_as_torch() -> None:
    for t in (torch, ft):
        with pytest.raises(RuntimeError, match=r"start \(2\) \+ length \(3\) exceeds"):
            t.zeros(4).narrow(0, 2, 3)
