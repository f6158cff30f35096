"""JAX-face fixes compared with JAX 0.10.2 (sixteenth side-by-side review): ``vmap``'s error
for a batched output whose ``out_axes`` is ``None``, ``lax.scan`` over a 0-d array, the names
JAX removed (``jnp.fix``, ``lax.pvary``, ``device_put_replicated``), float0 arrays (their
repr, and through ``jit`` and ``vmap``), the ``jax.lax.linalg`` names funcgrad lacked, the
errors of indexing, ``tensordot``, ``linalg.solve``, ``cond``/``switch`` branches, ``grad``,
``jvp`` and ``vjp``, ``int()`` of a tracer, ``reshape`` by a traced size, the 64-bit dtype
warning, ``jit(f).eval_shape``, ``jnp.issubdtype`` of typed keys, ``.at[]`` updates whose
values do not broadcast and unknown modes, ``nn.one_hot`` of non-integers, and matrix norm
orders."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from jax_oracle import raised, same_message

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.config import enable_x64
from funcgrad.testing import check_grads

jax = pytest.importorskip("jax")
jnp = jax.numpy

pytestmark = pytest.mark.x32


_error, _same_error = raised, same_message


def _error_as_jax(f: Callable[[Any, Any], Any]) -> None:
    _same_error(lambda: f(fg, fnp), lambda: f(jax, jnp))


# ----------------------------------------------------------------- vmap out_axes=None

VMAP_NONE = {
    "leaf": lambda m, n: m.vmap(lambda x: x * 2, out_axes=None)(n.ones((2, 3))),
    "dict": lambda m, n: m.vmap(lambda x: {"a": x, "b": 1.0},
                                out_axes={"a": None, "b": None})(n.ones((2, 3))),
    "nested": lambda m, n: m.vmap(lambda x: (1.0, [x, x]),
                                  out_axes=(None, [0, None]))(n.ones((2, 3))),
    "prefix": lambda m, n: m.vmap(lambda x: (1.0, [x, x]), out_axes=None)(n.ones((2, 3))),
    "in_axis_1": lambda m, n: m.vmap(lambda x: x, in_axes=1, out_axes=None)(n.ones((2, 3))),
    "inner": lambda m, n: m.vmap(m.vmap(lambda x: x, out_axes=None))(n.ones((2, 3))),
    "jit": lambda m, n: m.jit(m.vmap(lambda x: x, out_axes=None))(n.ones((2, 3))),
    "named": lambda m, n: m.vmap(lambda x: x, out_axes=None, axis_name="i")(n.ones((2, 3))),
    "kwargs": lambda m, n: m.vmap(lambda x, y: x + y, out_axes=None)(n.ones(2), y=n.ones(2)),
}


@pytest.mark.parametrize("name", sorted(VMAP_NONE))
def test_vmap_batched_output_with_out_axes_none_as_jax(name: str) -> None:
    _error_as_jax(VMAP_NONE[name])


def test_vmap_unbatched_output_with_out_axes_none_still_works() -> None:
    out = fg.vmap(lambda x: (x, fnp.ones(2)), out_axes=(0, None))(fnp.arange(3.0))
    assert np.asarray(out[1]).tolist() == [1.0, 1.0]


def test_torch_vmap_keeps_torch_message() -> None:
    torch = pytest.importorskip("torch")
    import funcgrad.torch as ftorch

    def double(x: Any) -> Any:
        return x * 2

    _same_error(lambda: ftorch.func.vmap(double, out_dims=None)(ftorch.arange(3.0)),
                lambda: torch.func.vmap(double, out_dims=None)(torch.arange(3.0)))


# ----------------------------------------------------------------- scan over a 0-d array

SCAN_0D = {
    "array": lambda m, n: m.lax.scan(lambda c, x: (c + x, x), 0.0, n.float32(3.0)),
    "with_length": lambda m, n: m.lax.scan(lambda c, x: (c + x, x), 0.0, n.float32(3.0),
                                           length=3),
    "numpy": lambda m, n: m.lax.scan(lambda c, x: (c + x, x), 0.0, np.float32(3.0)),
    "mixed": lambda m, n: m.lax.scan(lambda c, x: (c, x), 0, [n.arange(3), n.float32(1.0)]),
    "jit": lambda m, n: m.jit(lambda x: m.lax.scan(lambda c, y: (c + y, y), 0.0, x))(
        n.float32(3.0)),
    "map": lambda m, n: m.lax.map(lambda x: x, n.float32(3.0)),
    "python_scalar": lambda m, n: m.lax.scan(lambda c, x: (c + x, x), 0.0, 3.0),
}


@pytest.mark.parametrize("name", sorted(SCAN_0D))
def test_scan_over_0d_as_jax(name: str) -> None:
    _error_as_jax(SCAN_0D[name])


# ----------------------------------------------------------------- removed names

REMOVED = {
    "jnp.fix": lambda m, n: n.fix,
    "lax.pvary": lambda m, n: m.lax.pvary,
    "device_put_replicated": lambda m, n: m.device_put_replicated,
    "device_put_sharded": lambda m, n: m.device_put_sharded,
}


@pytest.mark.parametrize("name", sorted(REMOVED))
def test_removed_names_as_jax(name: str) -> None:
    _error_as_jax(REMOVED[name])
    assert not hasattr(fnp, "fix")


def test_unknown_names_still_attribute_errors() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = fnp.nope  # type: ignore[attr-defined]
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = fg.nope  # type: ignore[attr-defined]


# ----------------------------------------------------------------- float0

FLOAT0 = {
    "grad_scalar": lambda m, n: m.grad(lambda x: 1.0, allow_int=True)(3),
    "grad_bool": lambda m, n: m.grad(lambda x: 1.0, allow_int=True)(True),
    "grad_2d": lambda m, n: m.grad(lambda x: 1.0, allow_int=True)(n.zeros((2, 3), int)),
    "grad_long": lambda m, n: m.grad(lambda x: 1.0, allow_int=True)(n.zeros(100, int)),
    "grad_empty": lambda m, n: m.grad(lambda x: 1.0, allow_int=True)(n.zeros(0, int)),
    "argnums": lambda m, n: m.grad(lambda x, y: x * 2.0, argnums=(0, 1), allow_int=True)(
        1.0, 3),
    "zeros": lambda m, n: n.zeros(3, m.dtypes.float0),
    "zeros_like": lambda m, n: n.zeros_like(n.arange(2), dtype=m.dtypes.float0),
    "jvp_int_output": lambda m, n: m.jvp(lambda x: (x * 2).astype(int), (1.0,), (1.0,))[1],
    "vjp_int_input": lambda m, n: m.vjp(lambda x, y: x * y, 2.0, 3)[1](1.0),
    "linearize": lambda m, n: m.linearize(lambda x: x.astype(int), 1.0)[1](1.0),
    "jit_grad": lambda m, n: m.jit(m.grad(lambda x: 1.0, allow_int=True))(3),
    "jit_mixed": lambda m, n: m.jit(lambda x: (m.grad(lambda a, b: a * 1.0, argnums=(0, 1),
                                                      allow_int=True)(x, 2), x + 1))(1.0),
    "vmap_grad": lambda m, n: m.vmap(m.grad(lambda x: 1.0, allow_int=True))(n.arange(2)),
    "vmap_out_axes": lambda m, n: m.vmap(m.grad(lambda x: 1.0, allow_int=True), out_axes=1)(
        n.zeros((2, 3), int)),
}


@pytest.mark.parametrize("name", sorted(FLOAT0))
def test_float0_values_print_as_jax(name: str) -> None:
    ours, theirs = FLOAT0[name](fg, fnp), FLOAT0[name](jax, jnp)
    assert repr(ours) == repr(theirs)
    assert str(ours) == str(theirs)


def test_float0_arrays_are_numpy_arrays_of_float0() -> None:
    g = fg.grad(lambda x: 1.0, allow_int=True)(fnp.arange(3))
    assert isinstance(g, np.ndarray) and g.dtype == fg.dtypes.float0 and g.shape == (3,)


# ----------------------------------------------------------------- jax.lax.linalg names


def test_lax_linalg_has_jax_names() -> None:
    missing = {n for n in dir(jax.lax.linalg) if not n.startswith("_")} - set(
        dir(fg.lax.linalg))
    # Primitives funcgrad composes from others, and decompositions it does not have.
    assert missing <= {"cholesky_update_p", "householder_product_p", "ormqr_p",
                       "symmetric_product_p", "tridiagonal_solve_p",
                       "lu_pivots_to_permutation_p", "qdwh", "tridiagonal", "tridiagonal_p"}


@pytest.mark.parametrize("name", ["EigImplementation", "EighImplementation", "SvdAlgorithm"])
def test_lax_linalg_enums_as_jax(name: str) -> None:
    ours, theirs = getattr(fg.lax.linalg, name), getattr(jax.lax.linalg, name)
    assert [(e.name, e.value) for e in ours] == [(e.name, e.value) for e in theirs]


_RNG = np.random.default_rng(7)
_A = _RNG.normal(size=(4, 3)).astype(np.float32)
_TAUS = _RNG.normal(size=3).astype(np.float32)
_C = _RNG.normal(size=(4, 4)).astype(np.float32)
_C = (_C + _C.T).astype(np.float32)
_R = np.triu(_RNG.normal(size=(3, 3))).astype(np.float32) + 2 * np.eye(3, dtype=np.float32)
_W = _RNG.normal(size=3).astype(np.float32)
_DL, _DU = _RNG.normal(size=4).astype(np.float32), _RNG.normal(size=4).astype(np.float32)
_D = (_RNG.normal(size=4) + 5).astype(np.float32)
_B = _RNG.normal(size=(4, 2)).astype(np.float32)

LAX_LINALG = {
    "symmetric_product": lambda L: L.symmetric_product(_A, _C, alpha=2.0, beta=0.5),
    "symmetric_product_sym": lambda L: L.symmetric_product(_A, _C, alpha=2.0, beta=0.5,
                                                           symmetrize_output=True),
    "householder_product": lambda L: L.householder_product(_A, _TAUS),
    "householder_product_k2": lambda L: L.householder_product(_A, _TAUS[:2]),
    "householder_product_batched": lambda L: L.householder_product(
        np.stack([_A, 2 * _A]), np.stack([_TAUS, _TAUS / 2])),
    "ormqr_left": lambda L: L.ormqr(_A, _TAUS, _C[:, :2]),
    "ormqr_left_t": lambda L: L.ormqr(_A, _TAUS, _C[:, :2], transpose=True),
    "ormqr_right": lambda L: L.ormqr(_A, _TAUS, _C[:2], left=False),
    "ormqr_right_t": lambda L: L.ormqr(_A, _TAUS, _C[:2], left=False, transpose=True),
    "cholesky_update": lambda L: L.cholesky_update(_R, _W),
    "tridiagonal_solve": lambda L: L.tridiagonal_solve(_DL, _D, _DU, _B),
    "tridiagonal_solve_batched": lambda L: L.tridiagonal_solve(
        np.stack([_DL, _DU]), np.stack([_D, _D + 1]), np.stack([_DU, _DL]), np.stack([_B, _B])),
}


@pytest.mark.parametrize("name", sorted(LAX_LINALG))
def test_lax_linalg_values_as_jax(name: str) -> None:
    ours = LAX_LINALG[name](fg.lax.linalg)
    theirs = LAX_LINALG[name](jax.lax.linalg)
    ours_l, theirs_l = fg.tree.leaves(ours), jax.tree.leaves(theirs)
    assert len(ours_l) == len(theirs_l)
    for o, t in zip(ours_l, theirs_l):
        assert o.shape == t.shape and o.dtype == t.dtype
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=2e-4, atol=2e-5)


def test_lax_linalg_eig_outputs_as_jax() -> None:
    x = np.array([[2.0, 1.0, 0.0], [0.5, 3.0, 1.0], [0.0, 0.2, 5.0]], np.float32)
    for left, right in [(True, True), (False, True), (True, False), (False, False)]:
        ours = fg.lax.linalg.eig(x, compute_left_eigenvectors=left,
                                 compute_right_eigenvectors=right)
        theirs = jax.lax.linalg.eig(x, compute_left_eigenvectors=left,
                                    compute_right_eigenvectors=right)
        assert [(o.shape, o.dtype) for o in ours] == [(t.shape, t.dtype) for t in theirs]
        # (LAPACK builds may list the eigenvalues in different orders.)
        np.testing.assert_allclose(np.sort_complex(np.asarray(ours[0])),
                                   np.sort_complex(np.asarray(theirs[0])), rtol=1e-5)


def test_lax_linalg_derivatives_as_jax() -> None:
    def tri(dl: Any, d: Any, du: Any, b: Any, m: Any) -> Any:
        return (m.lax.linalg.tridiagonal_solve(dl, d, du, b) ** 2).sum()

    ours = fg.grad(tri, argnums=(0, 1, 2, 3))(_DL, _D, _DU, _B, fg)
    theirs = jax.grad(tri, argnums=(0, 1, 2, 3))(_DL, _D, _DU, _B, jax)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=1e-4, atol=1e-5)

    def eigvals(x: Any, m: Any) -> Any:
        return m.lax.linalg.eig(x, compute_left_eigenvectors=False,
                                compute_right_eigenvectors=False)[0].real.sum()

    x = np.array([[2.0, 1.0], [0.5, 3.0]], np.float32)
    np.testing.assert_allclose(np.asarray(fg.grad(eigvals)(x, fg)),
                               np.asarray(jax.grad(eigvals)(x, jax)), rtol=1e-5, atol=1e-6)


def test_lax_linalg_derivatives_by_finite_differences() -> None:
    # JAX has no derivative rules for these; funcgrad's come from their compositions.
    with enable_x64():
        _check_lax_linalg_grads()


def _check_lax_linalg_grads() -> None:
    L = fg.lax.linalg
    a, taus = _A.astype(np.float64), _TAUS.astype(np.float64)
    c, r, w = _C.astype(np.float64), _R.astype(np.float64), _W.astype(np.float64)
    check_grads(lambda a, t: L.householder_product(a, t), (a, taus), order=2)
    check_grads(lambda a, t, c: L.ormqr(a, t, c, transpose=True), (a, taus, c[:, :2]),
                order=1)
    check_grads(lambda a, c: L.symmetric_product(a, c, alpha=2.0, beta=0.5,
                                                 symmetrize_output=True), (a, c), order=2)
    check_grads(lambda r, w: L.cholesky_update(r, w), (r, w), order=1)
    check_grads(lambda dl, d, du, b: L.tridiagonal_solve(dl, d, du, b),
                tuple(v.astype(np.float64) for v in (_DL, _D, _DU, _B)), order=2)


# ----------------------------------------------------------------- indexing errors


def test_item_assignment_error_as_jax() -> None:
    def assign(n: Any) -> None:
        x = n.arange(3.0)
        x[0] = 1.0

    _same_error(lambda: assign(fnp), lambda: assign(jnp))


@pytest.mark.parametrize("case", ["too_many", "traced_mask"])
def test_indexing_errors_start_as_jax(case: str) -> None:
    """JAX's message, then where in the user's code (funcgrad's located errors)."""
    def call(m: Any, n: Any) -> Any:
        x = n.arange(6.0).reshape(2, 3)
        if case == "too_many":
            return x[0, 0, 0]
        return m.jit(lambda mask: x[mask])(x > 1)

    e_ours, m_ours = _error(lambda: call(fg, fnp))
    e_theirs, m_theirs = _error(lambda: call(jax, jnp))
    first = m_theirs.split("\n")[0]
    assert m_ours.startswith(first) and m_ours.endswith(m_theirs[len(first):])
    assert type(e_ours).__name__ == type(e_theirs).__name__ or isinstance(e_ours, IndexError)
    assert isinstance(e_ours, IndexError) and isinstance(e_theirs, IndexError)


# ----------------------------------------------------------------- tensordot, solve

SHAPE_ERRORS = {
    "tensordot_lengths": lambda m, n: n.tensordot(n.ones((2, 3, 4)), n.ones((3, 3, 4)),
                                                  axes=([1], [1, 2])),
    "tensordot_tuple": lambda m, n: n.tensordot(n.ones((2, 3, 4)), n.ones((3, 3, 4)),
                                                axes=((1,), [0, 2])),
    "tensordot_int_and_tuple": lambda m, n: n.tensordot(n.ones((2, 3, 4)), n.ones((3, 3, 4)),
                                                        axes=(1, (0, 2))),
}
for _a, _b in [((3, 2), (3,)), ((3, 2), (3, 1)), ((2, 3), (2,)), ((2, 2, 2), (3, 2, 1)),
               ((3, 2), ()), ((4, 2, 2), (4, 2)), ((2, 2), (3,)), ((2, 2), (3, 1)),
               ((2, 2), ())]:
    SHAPE_ERRORS[f"solve_{_a}_{_b}"] = (
        lambda m, n, a=_a, b=_b: n.linalg.solve(n.ones(a), n.ones(b)))


@pytest.mark.parametrize("name", sorted(SHAPE_ERRORS))
def test_shape_errors_as_jax(name: str) -> None:
    _error_as_jax(SHAPE_ERRORS[name])


def test_solve_and_tensordot_still_work() -> None:
    a = np.array([[3.0, 1.0], [1.0, 2.0]], np.float32)
    assert fnp.linalg.solve(np.stack([a] * 4), fnp.ones(2)).shape == (4, 2)
    assert fnp.linalg.solve(np.stack([a] * 4), fnp.ones((4, 2, 1))).shape == (4, 2, 1)
    assert fnp.tensordot(fnp.ones((2, 3, 4)), fnp.ones((3, 3, 4)), axes=(1, 0)).shape == \
        (2, 4, 3, 4)


# ----------------------------------------------------------------- cond and switch

BRANCHES = {
    "switch_dtypes": lambda m, n: m.lax.switch(1, [lambda: 1.0, lambda: 2, lambda: n.ones(2)]),
    "switch_structure": lambda m, n: m.lax.switch(1, [lambda: 1.0, lambda: 2.0,
                                                      lambda: (1.0,)]),
    "lengths": lambda m, n: m.lax.cond(True, lambda: (1.0, 2.0), lambda: (1.0, 2.0, 3.0)),
    "dict_keys": lambda m, n: m.lax.cond(True, lambda: {"a": 1.0}, lambda: {"b": 1.0}),
    "two_types": lambda m, n: m.lax.cond(True, lambda: (1.0, n.ones(2)),
                                         lambda: (1, n.ones(3))),
    "dtype": lambda m, n: m.lax.cond(True, lambda: 1.0, lambda: 1),
    "dtype_and_shape": lambda m, n: m.lax.cond(True, lambda: n.ones(2, n.bfloat16),
                                               lambda: 1),
    "leaf_and_list": lambda m, n: m.lax.cond(True, lambda: 1.0, lambda: [1.0]),
    "children": lambda m, n: m.lax.cond(True, lambda: {"a": 1.0, "b": 2.0},
                                        lambda: {"a": 1.0}),
    "pred_float_vector": lambda m, n: m.lax.cond(n.ones(2), lambda: 1.0, lambda: 1.0),
    "pred_bool_vector": lambda m, n: m.lax.cond(n.ones(2) > 0, lambda: 1.0, lambda: 1.0),
    "nested": lambda m, n: m.lax.cond(True, lambda: [(1.0, 2.0)], lambda: [(1.0, 2.0, 3.0)]),
    "several": lambda m, n: m.lax.cond(True, lambda: [1.0, 2.0, {"a": 1}],
                                       lambda: [1.0, (2.0,), {"b": 1}]),
    "none": lambda m, n: m.lax.cond(True, lambda: 1, lambda: None),
    "operand": lambda m, n: m.lax.cond(True, lambda x: x, lambda x: x.astype(n.int32), 1.0),
}


@pytest.mark.parametrize("name", sorted(BRANCHES))
def test_branch_errors_as_jax(name: str) -> None:
    _error_as_jax(BRANCHES[name])


@pytest.mark.parametrize("pred", [True, False])
def test_branches_differing_in_weak_type_only_as_jax(pred: bool) -> None:
    def run(m: Any, n: Any) -> str:
        return repr(m.lax.cond(pred, lambda: 1.0, lambda: n.float32(1)))

    assert run(fg, fnp) == run(jax, jnp)


# ----------------------------------------------------------------- grad, jvp, vjp

AD_ERRORS = {
    "grad_vector": lambda m, n: m.grad(lambda x: x)(n.ones(2)),
    "grad_matrix": lambda m, n: m.grad(lambda x: n.ones((2, 3)) * x)(1.0),
    "jvp_shapes": lambda m, n: m.jvp(lambda x: x, (1.0,), (n.ones(2),)),
    "jvp_second": lambda m, n: m.jvp(lambda x, y: x, (1.0, n.ones(2)), (1.0, n.ones(3))),
    "vjp_longer": lambda m, n: m.vjp(lambda x: x * 2, n.ones(2))[1](n.ones(3)),
    "vjp_rank": lambda m, n: m.vjp(lambda x: x * 2, n.ones(2))[1](n.ones((2, 1))),
    "vjp_scalar": lambda m, n: m.vjp(lambda x: x * 2, n.ones(2))[1](n.float32(1.0)),
    "vjp_tuple": lambda m, n: m.vjp(lambda x: (x * 2, x), n.ones(2))[1](
        (n.ones(2), n.ones(3))),
}


@pytest.mark.parametrize("name", sorted(AD_ERRORS))
def test_autodiff_errors_as_jax(name: str) -> None:
    _error_as_jax(AD_ERRORS[name])


def test_grad_of_a_tuple_output_message() -> None:
    _, msg = _error(lambda: fg.grad(lambda x: (x, x))(1.0))
    assert msg.startswith("Gradient only defined for scalar-output functions. Output was (")


# ----------------------------------------------------------------- tracer misuse


def test_int_of_a_tracer_is_a_concretization_error_as_jax() -> None:
    e_ours, _ = _error(lambda: fg.jit(lambda x: int(x))(1.0))
    e_theirs, _ = _error(lambda: jax.jit(lambda x: int(x))(1.0))
    assert type(e_ours).__name__ == type(e_theirs).__name__ == "ConcretizationTypeError"
    e_ours, _ = _error(lambda: fg.jit(lambda i: [1, 2][i])(1))
    assert type(e_ours).__name__ == "TracerIntegerConversionError"


def test_leaked_tracer_is_a_type_error_as_jax() -> None:
    def leak(m: Any) -> Any:
        box: list[Any] = []
        m.jit(lambda x: box.append(x) or x)(1.0)
        return box[0] + 1

    e_ours, _ = _error(lambda: leak(fg))
    e_theirs, _ = _error(lambda: leak(jax))
    assert type(e_ours).__name__ == type(e_theirs).__name__ == "UnexpectedTracerError"
    assert isinstance(e_ours, TypeError) and isinstance(e_theirs, TypeError)


RESHAPES = {
    "method_size": (lambda n: (lambda s: n.ones(4).reshape(s)), "[{}]"),
    "method_tuple": (lambda n: (lambda s: n.ones(4).reshape((s,))), "({},)"),
    "method_two": (lambda n: (lambda s: n.ones(4).reshape(s, 1)), "({}, 1)"),
    "function_size": (lambda n: (lambda s: n.reshape(n.ones(4), s)), "[{}]"),
    "function_tuple": (lambda n: (lambda s: n.reshape(n.ones(4), (2, s))), "(2, {})"),
}


@pytest.mark.parametrize("name", sorted(RESHAPES))
def test_reshape_by_a_traced_size_as_jax(name: str) -> None:
    make, form = RESHAPES[name]
    e_ours, m_ours = _error(lambda: fg.jit(make(fnp))(4))
    e_theirs, m_theirs = _error(lambda: jax.jit(make(jnp))(4))
    assert type(e_ours) is type(e_theirs) is TypeError
    # Both name the tracer (JitTracer(~int32[])) and where its value came from.
    assert m_theirs.startswith("Shapes must be 1D sequences of concrete values of integer "
                               "type, got " + form.format("JitTracer(~int32[])") + ".\n")
    assert m_ours.split("\n")[:2] == m_theirs.split("\n")[:2]
    assert m_ours.split("\n")[2].split(" at ")[0] == m_theirs.split("\n")[2].split(" at ")[0]
    assert m_ours.split("for jit. ")[1] == m_theirs.split("for jit. ")[1]


def test_reshape_by_a_concrete_0d_array() -> None:
    assert fnp.ones(4).reshape(fnp.array(4)).shape == (4,)
    assert fnp.ones(4).reshape(fnp.array(2), 2).shape == (2, 2)


# ----------------------------------------------------------------- misc


def test_x64_truncation_warning_as_jax() -> None:
    def warned(n: Any) -> str:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            n.zeros(2, n.float64)
        return str(w[0].message)

    assert warned(fnp) == warned(jnp)


def test_jit_eval_shape_as_jax() -> None:
    def run(m: Any, n: Any) -> str:
        f = m.jit(lambda x, k: {"a": x * k, "b": n.ones(k)}, static_argnums=1)
        return repr((f.eval_shape(1.0, 3), f.eval_shape(m.ShapeDtypeStruct((2,), n.float32),
                                                         k=2)))

    assert run(fg, fnp) == run(jax, jnp)


def test_issubdtype_of_typed_keys_as_jax() -> None:
    def run(m: Any, n: Any) -> list[bool]:
        k = m.random.key(0)
        return [n.issubdtype(k.dtype, m.dtypes.prng_key), n.issubdtype(k.dtype, m.dtypes.extended),
                n.issubdtype(k.dtype, n.floating), n.issubdtype(n.float32, m.dtypes.prng_key),
                n.issubdtype(k.dtype, k.dtype), n.issubdtype(n.int8, n.integer)]

    assert run(fg, fnp) == run(jax, jnp)


# ----------------------------------------------------------------- .at updates, one_hot

AT_ERRORS = {
    "row_short": lambda m, n: n.arange(6.0).reshape(2, 3).at[0].set(n.ones(2)),
    "column_long": lambda m, n: n.arange(6.0).reshape(2, 3).at[:, 0].add(n.ones(3)),
    "more_dims": lambda m, n: n.arange(6.0).reshape(2, 3).at[0].set(n.ones((2, 3))),
    "rows": lambda m, n: n.arange(6.0).reshape(2, 3).at[n.array([0, 1])].multiply(
        n.ones((2, 2))),
    "element": lambda m, n: n.arange(6.0).reshape(2, 3).at[0, 0].set(n.ones(2)),
    "leading_one": lambda m, n: n.arange(6.0).reshape(2, 3).at[0].set(n.ones((1, 3))),
    "integer_values": lambda m, n: n.arange(6.0).reshape(2, 3).at[0].set(n.ones(2, int)),
    "gathered": lambda m, n: n.arange(6.0).reshape(2, 3).at[n.array([0, 1]), 0].set(
        n.ones((2, 1))),
    "mode_get": lambda m, n: n.arange(5.0).at[1].get(mode="bad"),
    "mode_set": lambda m, n: n.arange(5.0).at[1].set(2.0, mode="bad"),
    "mode_number": lambda m, n: n.arange(5.0).at[1].get(mode=3),
}


@pytest.mark.parametrize("name", sorted(AT_ERRORS))
def test_at_update_errors_as_jax(name: str) -> None:
    _error_as_jax(AT_ERRORS[name])


def test_at_updates_that_broadcast_still_work() -> None:
    x = fnp.zeros((2, 3))
    assert np.asarray(x.at[0].set(fnp.ones(1))).sum() == 3.0
    assert np.asarray(x.at[:, 1].add(2.0)).sum() == 4.0


def test_one_hot_of_floats_warns_as_jax() -> None:
    def run(nn: Any, n: Any) -> tuple[str, list[tuple[type, str]]]:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = repr(nn.one_hot(n.array([1.0, 0.0]), 3))
            nn.one_hot(n.array([1, 2], n.uint8), 3)
        return out, [(x.category, str(x.message)) for x in w]

    assert run(fg.nn, fnp) == run(jax.nn, jnp)


def test_one_hot_of_booleans_as_jax() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        _error_as_jax(lambda m, n: m.nn.one_hot(n.array([True]), 3))


@pytest.mark.parametrize("order", [3, "bad", 0.5])
def test_matrix_norm_order_errors_as_jax(order: Any) -> None:
    _error_as_jax(lambda m, n: n.linalg.norm(n.ones((2, 2)), ord=order))
    _error_as_jax(lambda m, n: n.linalg.matrix_norm(n.ones((2, 2)), ord=order))


FLOAT0_VMAP = {
    "in_axis_0": lambda m, n: m.vmap(lambda x: x)(n.zeros((2, 3), m.dtypes.float0)),
    "in_axis_1": lambda m, n: m.vmap(lambda x: x, in_axes=1)(n.zeros((2, 3), m.dtypes.float0)),
    "with_array": lambda m, n: m.vmap(lambda x, y: (x, y))(n.zeros((2, 3), m.dtypes.float0),
                                                           n.ones(2)),
    "jit": lambda m, n: m.jit(lambda x, y: (x, y * 2))(n.zeros(2, m.dtypes.float0), 1.0),
}


@pytest.mark.parametrize("name", sorted(FLOAT0_VMAP))
def test_float0_inputs_of_vmap_and_jit_as_jax(name: str) -> None:
    assert repr(FLOAT0_VMAP[name](fg, fnp)) == repr(FLOAT0_VMAP[name](jax, jnp))


def test_float0_vmap_size_error_as_jax() -> None:
    _error_as_jax(lambda m, n: m.vmap(lambda x, y: y)(n.zeros((2, 3), m.dtypes.float0),
                                                      n.ones(3)))


# ----------------------------------------------------------------- lax shape errors

_DN = ("NHWC", "HWIO", "NHWC")
LAX_ERRORS = {
    "select_n_shapes": lambda m, n: m.lax.select_n(n.array([0, 1]), n.zeros(2), n.ones(3),
                                                   n.ones(4)),
    "select_n_dtypes": lambda m, n: m.lax.select_n(n.array([0, 1]), n.zeros(2),
                                                   n.ones(2, n.int32)),
    "dynamic_slice_too_big": lambda m, n: m.lax.dynamic_slice(n.ones((3, 4)), (0, 0), (2, 5)),
    "dynamic_slice_negative": lambda m, n: m.lax.dynamic_slice(n.ones(3), (0,), (-1,)),
    "dynamic_slice_starts": lambda m, n: m.lax.dynamic_slice(n.ones((3, 4)), (0,), (2,)),
    "dynamic_slice_jit": lambda m, n: m.jit(lambda x: m.lax.dynamic_slice(x, (1,), (11,)))(
        n.ones(10)),
}
for _w, _g in [((3, 3, 2, 4), 1), ((3, 3, 2, 4), 2), ((3, 3, 1, 4), 3), ((3, 3, 1, 5), 3)]:
    LAX_ERRORS[f"conv_{_w}_{_g}"] = (
        lambda m, n, w=_w, g=_g: m.lax.conv_general_dilated(
            n.ones((1, 5, 5, 3)), n.ones(w), (1, 1), "SAME", dimension_numbers=_DN,
            feature_group_count=g))


@pytest.mark.parametrize("name", sorted(LAX_ERRORS))
def test_lax_shape_errors_as_jax(name: str) -> None:
    _error_as_jax(LAX_ERRORS[name])
