"""torch.linalg (all 43 names) and the linear-algebra Tensor methods against PyTorch 2.13:
values, return types and reprs, grad_fn names, gradients, errors; engine derivatives with
check_grads."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad.torch as ft

torch = pytest.importorskip("torch")

REF = [ln.strip() for ln in open("/work/main/tests/data/reference/torch_linalg_names.txt")
       if ln.strip() and not ln.startswith("#")]


def _spd(seed: int, n: int, batch: tuple[int, ...] = ()) -> np.ndarray:
    r = np.random.default_rng(seed).standard_normal((*batch, n, n))
    return r @ np.swapaxes(r, -1, -2) + n * np.eye(n)


def _both(a: np.ndarray, grad: bool = True) -> tuple[Any, Any]:
    return (ft.tensor(a, requires_grad=grad), torch.tensor(a, requires_grad=grad))


def _flat(out: Any) -> list[Any]:
    return list(out) if isinstance(out, tuple) else [out]


def _compare(fn_f: Any, fn_t: Any, a: np.ndarray, *, grad: bool = True, atol: float = 1e-7,
             repr_check: bool = True) -> None:
    xf, xt = _both(a, grad)
    of, ot = fn_f(xf), fn_t(xt)
    assert type(of).__name__ == type(ot).__name__
    for f, t in zip(_flat(of), _flat(ot)):
        np.testing.assert_allclose(f.detach().numpy(), t.detach().numpy(), atol=atol)
        assert f.dtype.name == str(t.dtype).split(".")[1]
        assert (f.grad_fn is None) == (t.grad_fn is None)
        if t.grad_fn is not None:
            assert type(f.grad_fn).__name__ == type(t.grad_fn).__name__
    if repr_check:
        assert repr(of) == repr(ot)
    if grad:
        lf = sum((o * (k + 1)).sum() for k, o in enumerate(_flat(of))
                 if o.dtype.is_floating_point and o.requires_grad)
        lt = sum((o * (k + 1)).sum() for k, o in enumerate(_flat(ot))
                 if o.dtype.is_floating_point and o.requires_grad)
        lf.backward()
        lt.backward()
        np.testing.assert_allclose(xf.grad.numpy(), xt.grad.numpy(), atol=1e-6, rtol=1e-6)


def test_all_names() -> None:
    assert sorted(set(REF) - set(dir(ft.linalg))) == []


SEEDS = st.integers(0, 10_000)
SIZES = st.integers(1, 4)


@settings(max_examples=5, deadline=None)
@given(SEEDS, SIZES)
def test_spd_factorizations(seed: int, n: int) -> None:
    a = _spd(seed, n)
    for name in ("cholesky", "inv", "det", "slogdet", "inv_ex", "cholesky_ex", "matrix_exp",
                 "eigvalsh", "svdvals", "pinv"):
        _compare(getattr(ft.linalg, name), getattr(torch.linalg, name), a,
                 repr_check=name != "matrix_exp")
    _compare(lambda x: ft.linalg.cholesky(x, upper=True),
             lambda x: torch.linalg.cholesky(x, upper=True), a)
    _compare(lambda x: ft.linalg.eigh(x).eigenvalues, lambda x: torch.linalg.eigh(x).eigenvalues,
             a)


@settings(max_examples=5, deadline=None)
@given(SEEDS, SIZES, st.integers(1, 3))
def test_solves(seed: int, n: int, k: int) -> None:
    rng = np.random.default_rng(seed)
    a = _spd(seed, n)
    b = rng.standard_normal((n, k))
    for ff, tf in [
        (lambda x: ft.linalg.solve(x, ft.tensor(b)), lambda x: torch.linalg.solve(
            x, torch.tensor(b))),
        (lambda x: ft.linalg.solve(x, ft.tensor(b[:, 0])), lambda x: torch.linalg.solve(
            x, torch.tensor(b[:, 0]))),
        (lambda x: ft.linalg.solve(x, ft.tensor(b.T), left=False),
         lambda x: torch.linalg.solve(x, torch.tensor(b.T), left=False)),
        (lambda x: ft.linalg.solve_triangular(x, ft.tensor(b), upper=True),
         lambda x: torch.linalg.solve_triangular(x, torch.tensor(b), upper=True)),
        (lambda x: ft.linalg.solve_triangular(x, ft.tensor(b.T), upper=False, left=False),
         lambda x: torch.linalg.solve_triangular(x, torch.tensor(b.T), upper=False, left=False)),
        (lambda x: ft.linalg.lu_solve(*ft.linalg.lu_factor(x), ft.tensor(b)),
         lambda x: torch.linalg.lu_solve(*torch.linalg.lu_factor(x), torch.tensor(b))),
        (lambda x: ft.linalg.lu_solve(*ft.linalg.lu_factor(x), ft.tensor(b), adjoint=True),
         lambda x: torch.linalg.lu_solve(*torch.linalg.lu_factor(x), torch.tensor(b),
                                         adjoint=True)),
        (lambda x: ft.cholesky_solve(ft.tensor(b), x.tril()),
         lambda x: torch.cholesky_solve(torch.tensor(b), x.tril())),
        (lambda x: ft.linalg.lstsq(x, ft.tensor(b)).solution,
         lambda x: torch.linalg.lstsq(x, torch.tensor(b)).solution),
    ]:
        _compare(ff, tf, a, repr_check=False, atol=1e-6)


@settings(max_examples=5, deadline=None)
@given(SEEDS, st.integers(1, 4), st.integers(1, 4))
def test_rectangular(seed: int, m: int, n: int) -> None:
    a = np.random.default_rng(seed).standard_normal((m, n))
    for name in ("lu_factor", "lu", "matrix_rank"):
        _compare(getattr(ft.linalg, name), getattr(torch.linalg, name), a, grad=False)
    _compare(lambda x: ft.linalg.qr(x).R.abs(), lambda x: torch.linalg.qr(x).R.abs(), a,
             repr_check=False)
    _compare(ft.linalg.svdvals, torch.linalg.svdvals, a, repr_check=False)


def test_reprs_and_names() -> None:
    a = _spd(0, 3)
    b = np.arange(6.0).reshape(3, 2)
    for ff, tf in [
        (lambda x: ft.linalg.lstsq(x, ft.tensor(b)), lambda x: torch.linalg.lstsq(
            x, torch.tensor(b))),
        (lambda x: ft.linalg.lstsq(x, ft.tensor(b), driver="gelsd"),
         lambda x: torch.linalg.lstsq(x, torch.tensor(b), driver="gelsd")),
        (lambda x: ft.linalg.lu_factor_ex(x), lambda x: torch.linalg.lu_factor_ex(x)),
        (lambda x: ft.linalg.householder_product(x, x[0, :2]),
         lambda x: torch.linalg.householder_product(x, x[0, :2])),
        (lambda x: ft.linalg.vander(x[0]), lambda x: torch.linalg.vander(x[0])),
        (lambda x: ft.linalg.cond(x), lambda x: torch.linalg.cond(x)),
        (lambda x: ft.linalg.matrix_power(x, 3), lambda x: torch.linalg.matrix_power(x, 3)),
        (lambda x: ft.linalg.matrix_power(x, -2), lambda x: torch.linalg.matrix_power(x, -2)),
        (lambda x: x.logdet(), lambda x: x.logdet()),
        (lambda x: x.slogdet(), lambda x: x.slogdet()),
        (lambda x: ft.svd(x).S, lambda x: torch.svd(x).S),
        (lambda x: x.inverse(), lambda x: x.inverse()),
        (lambda x: x.trace(), lambda x: x.trace()),
        (lambda x: ft.cholesky_inverse(ft.linalg.cholesky(x)),
         lambda x: torch.cholesky_inverse(torch.linalg.cholesky(x))),
        (lambda x: ft.linalg.cross(x, x * 2 + 1), lambda x: torch.linalg.cross(x, x * 2 + 1)),
        (lambda x: ft.linalg.diagonal(x), lambda x: torch.linalg.diagonal(x)),
        (lambda x: ft.lu_unpack(*ft.linalg.lu_factor(x)),
         lambda x: torch.lu_unpack(*torch.linalg.lu_factor(x))),
    ]:
        _compare(ff, tf, a, atol=1e-6)
    _compare(lambda x: ft.linalg.qr(x, mode="r"), lambda x: torch.linalg.qr(x, mode="r"), a,
             grad=False)
    _compare(lambda x: ft.linalg.eig(x), lambda x: torch.linalg.eig(x), a, grad=False)
    _compare(lambda x: ft.linalg.ldl_factor(x), lambda x: torch.linalg.ldl_factor(x), a,
             grad=False)
    ld, piv = torch.linalg.ldl_factor(torch.tensor(a))
    lf, pf = ft.linalg.ldl_factor(ft.tensor(a))
    np.testing.assert_allclose(ft.linalg.ldl_solve(lf, pf, ft.tensor(b)).numpy(),
                               torch.linalg.ldl_solve(ld, piv, torch.tensor(b)).numpy())
    np.testing.assert_allclose(
        ft.linalg.tensorsolve(ft.tensor(a), ft.tensor(a[0])).numpy(),
        torch.linalg.tensorsolve(torch.tensor(a), torch.tensor(a[0])).numpy(), atol=1e-12)
    x = np.random.default_rng(1).standard_normal((4, 2, 2))
    np.testing.assert_allclose(ft.linalg.tensorinv(ft.tensor(x), ind=1).numpy(),
                               torch.linalg.tensorinv(torch.tensor(x), ind=1).numpy(), atol=1e-10)


def test_errors() -> None:
    bad = np.array([[1.0, 2.0], [2.0, 1.0]])
    sing = np.array([[1.0, 2.0], [2.0, 4.0]])
    for fn, arg in [("cholesky", bad), ("inv", sing)]:
        with pytest.raises(torch.linalg.LinAlgError) as et:
            getattr(torch.linalg, fn)(torch.tensor(arg))
        with pytest.raises(ft.linalg.LinAlgError) as ef:
            getattr(ft.linalg, fn)(ft.tensor(arg))
        assert str(ef.value) == str(et.value)
        assert isinstance(ef.value, RuntimeError)
    np.testing.assert_array_equal(ft.linalg.cholesky_ex(ft.tensor(bad)).info.numpy(),
                                  torch.linalg.cholesky_ex(torch.tensor(bad)).info.numpy())
    with pytest.raises(RuntimeError, match="out="):
        ft.linalg.inv(ft.eye(2), out=ft.eye(2))
    with pytest.raises(RuntimeError, match="at least 2"):
        ft.linalg.det(ft.ones(3))
    with pytest.raises(RuntimeError, match="derivative"):
        ft.linalg.eig(ft.eye(2, requires_grad=True))


@pytest.mark.parametrize("name", ["det", "inv", "cholesky", "slogdet", "eigvalsh",
                                  "matrix_exp", "pinv", "solve"])
def test_check_grads_order_2(name: str) -> None:
    import funcgrad.numpy as fnp
    from funcgrad.testing import check_grads
    from funcgrad.torch._tensor import Tensor

    a = _spd(3, 3) / 6  # small entries: finite differences of expm stay accurate

    def f(x: Any) -> Any:
        # cholesky and eigh read one triangle but take PyTorch's symmetric gradient: that
        # is the derivative along symmetric perturbations, so perturb symmetrically.
        t = Tensor._from_data((x + fnp.swapaxes(x, 0, 1)) / 2)
        out = getattr(ft.linalg, name)(*((t, t[:, 0]) if name == "solve" else (t,)))
        out = out[1] if isinstance(out, tuple) else out
        return fnp.sum(fnp.sin(out._data))

    check_grads(f, (a,), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("ord", [2, -2, "nuc"])
@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 2), st.integers(2, 4), st.integers(2, 4)),
                  elements=st.floats(-3, 3)),
       st.sampled_from([(-2, -1), (0, 2), (2, 1)]), st.booleans())
@settings(deadline=None, max_examples=25)
def test_singular_value_matrix_norms_match_torch(ord, a, dim, keepdim):
    sv = np.linalg.svd(np.moveaxis(a, dim, (-2, -1)), compute_uv=False)
    # the gradients exist where the singular values used are distinct and nonzero
    assume(np.all(np.abs(np.diff(sv, axis=-1)) > 1e-3) and np.all(sv > 1e-3))
    got, want = [], []
    for L, out in ((ft, got), (torch, want)):
        x = L.tensor(a, requires_grad=True)
        n = L.linalg.matrix_norm(x, ord=ord, dim=dim, keepdim=keepdim)
        (g,) = L.autograd.grad(n.sum(), x)
        out += [n.detach().numpy(), g.numpy(), type(n.grad_fn).__name__]
    np.testing.assert_allclose(got[0], want[0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-7, atol=1e-9)
    if not keepdim:  # PyTorch's keepdim path ends in a permute of its own
        assert got[2] == want[2]
