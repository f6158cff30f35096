"""``torch.autograd.grad(..., is_grads_batched=True)``: a batch of seeds gives a batch of
gradients (before, the flag was accepted and ignored, so a batch of seeds was rejected as a
shape mismatch or summed). Values are checked against Jacobians computed row by row here, and
against torch 2.13 where it is installed."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft


def _run(lib, xs, seeds, fn, **kw):
    x = lib.tensor(xs, dtype=lib.float64, requires_grad=True)
    y = fn(lib, x)
    v = lib.tensor(seeds, dtype=lib.float64)
    (g,) = lib.autograd.grad(y, x, v, is_grads_batched=True, **kw)
    return x, g


FNS = {
    "square": lambda lib, x: x ** 2,
    "matmul": lambda lib, x: x @ x.T,
    "softmax": lambda lib, x: lib.softmax(x, dim=-1),
    "cumsum_sin": lambda lib, x: lib.sin(x).cumsum(0),
}


@settings(max_examples=15, deadline=None)
@given(st.sampled_from(sorted(FNS)), st.integers(1, 3), st.integers(1, 3), st.integers(1, 4),
       st.integers(0, 2 ** 31 - 1))
def test_each_batch_row_is_a_vjp(name, rows, cols, batch, seed):
    rng = np.random.default_rng(seed)
    xs = rng.uniform(-2, 2, (rows, cols))
    fn = FNS[name]
    out_shape = tuple(fn(ft, ft.tensor(xs)).shape)
    seeds = rng.uniform(-2, 2, (batch, *out_shape))
    _, g = _run(ft, xs, seeds, fn)
    assert tuple(g.shape) == (batch, rows, cols)
    for b in range(batch):
        x = ft.tensor(xs, dtype=ft.float64, requires_grad=True)
        (row,) = ft.autograd.grad(fn(ft, x), x, ft.tensor(seeds[b]))
        np.testing.assert_allclose(g[b].numpy(), row.numpy(), rtol=1e-12, atol=1e-12)


def test_identity_seeds_give_the_jacobian_and_a_graph():
    x = ft.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (j,) = ft.autograd.grad(x ** 3, x, ft.eye(3), is_grads_batched=True, create_graph=True)
    np.testing.assert_array_equal(j.detach().numpy(), np.diag([3.0, 12.0, 27.0]))
    (h,) = ft.autograd.grad(j.sum(), x)
    np.testing.assert_array_equal(h.numpy(), [6.0, 12.0, 18.0])


def _outcome(lib, case):
    try:
        return repr(case(lib))
    except Exception as e:  # noqa: BLE001 - the error itself is compared
        return f"{type(e).__name__}: {e}"


def _several_outputs(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    return lib.autograd.grad([x ** 2, x * 3], x, [lib.eye(3), 2 * lib.eye(3)],
                             is_grads_batched=True)


def _unused(lib, **kw):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = lib.tensor(1.0, requires_grad=True)
    return lib.autograd.grad(x * 2, [x, w], lib.eye(3), is_grads_batched=True, **kw)


def _bad_seed(shape):
    def case(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        return lib.autograd.grad(x ** 2, x, lib.ones(*shape), is_grads_batched=True)
    return case


def _sizes_differ(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    return lib.autograd.grad([x * 2, x * 3], x, [lib.ones(2, 3), lib.ones(3, 3)],
                             is_grads_batched=True)


def _no_seed(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    return lib.autograd.grad(x.sum(), x, None, is_grads_batched=True)


CASES = {
    "several_outputs": _several_outputs,
    "unused_allowed": lambda lib: _unused(lib, allow_unused=True),
    "unused_materialized": lambda lib: _unused(lib, allow_unused=True, materialize_grads=True),
    "unused_refused": _unused,
    "seed_too_short": _bad_seed((3, 2)),
    "seed_wrong_tail": _bad_seed((4, 3, 2)),
    "seed_no_batch": _bad_seed((5,)),
    "sizes_differ": _sizes_differ,
    "no_seed": _no_seed,
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_torch(case):
    torch = pytest.importorskip("torch")
    assert _outcome(ft, CASES[case]) == _outcome(torch, CASES[case])


def test_known_values_without_torch():
    gx, gw = _unused(ft, allow_unused=True, materialize_grads=True)
    np.testing.assert_array_equal(gx.numpy(), 2 * np.eye(3))
    assert tuple(gw.shape) == ()
    with pytest.raises(RuntimeError, match="is_grads_batched=True"):
        _bad_seed((3, 2))(ft)
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        _sizes_differ(ft)


def test_unbatched_shape_mismatch_names_the_output():
    x = ft.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"grad_output\[1\] has a shape of torch.Size\(\[2\]\) "
                       r"and output\[1\]"):
        ft.autograd.grad([x * 2, x * 3], x, [ft.ones(3), ft.ones(2)])
