"""Differential fuzzing against real JAX: small random programs, the same under both libraries.

The generator lives in tests/support/fuzz_programs.py (shared with ``scripts/fuzz.py``, which
runs thousands of programs): straight-line programs over 1-3 broadcastable inputs of rank
0-3, float64 or float32, drawn from ~230 op kinds (elementwise math with kinks and guarded
domains, Python scalars on either side, reductions with axes/keepdims, shape ops, indexing
of every kind, ``.at`` updates with repeated indices and modes, the matmul/einsum family,
control flow, nested ``jit``, ``custom_jvp``/``custom_vjp``), optionally under a wrapper
(``cond``, ``switch``, ``fori_loop``, ``while_loop``, ``scan``, ``jit``, ``checkpoint``,
custom rules).

Each program is checked for funcgrad == JAX under eval, ``jit``, ``vmap``, ``grad``, ``jvp``,
``vjp``, ``jacfwd``, ``jacrev``, ``hessian``, ``linearize`` and compositions (``jit(grad)``,
``grad(jit)``, ``vmap(grad)``, ``jvp(grad)``): dtypes exactly, values at the dtype's
tolerance; and for funcgrad's own consistency (``jacfwd == jacrev``, ``jit == eager``,
``vmap ==`` a Python loop), JAX-free.
"""

from __future__ import annotations

import numpy as np
import pytest
from fuzz_programs import (
    OPS,
    WRAPPERS,
    JaxRefused,
    Prog,
    build,
    check,
    compare,
    hypothesis_programs,
    inputs,
    nan_where_std_spread_is_zero,
    skip_reason,
    transforms_for,
)
from hypothesis import HealthCheck, given, settings

import funcgrad
import funcgrad.numpy as fnp

_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large]
# JAX's side costs one XLA compilation per program (~1.5 s under every transform);
# scripts/fuzz.py runs thousands of programs. funcgrad alone is cheaper.
FUZZ = settings(max_examples=15, deadline=None, suppress_health_check=_HEALTH)
FUZZ_SELF = settings(max_examples=25, deadline=None, suppress_health_check=_HEALTH)


def _assert_same(got: object, want: object, dtype: str, what: str) -> None:
    why = compare(got, want, dtype)
    assert why is None, f"{what}: {why}"


@FUZZ_SELF
@given(hypothesis_programs())
def test_self_consistent(prog: Prog) -> None:
    """funcgrad alone: jit == eager, vmap == a Python loop, jacfwd == jacrev."""
    f = build(funcgrad, prog)
    args = [fnp.asarray(a) for a in inputs(prog)]
    batched = [fnp.asarray(b) for b in inputs(prog, batch=2)]
    argnums = tuple(range(len(args)))
    _assert_same(funcgrad.jit(f)(*args), f(*args), prog.dtype, f"jit vs eager of {prog}")
    loop = fnp.stack([f(*[b[k] for b in batched]) for k in range(2)])
    _assert_same(funcgrad.vmap(f)(*batched), loop, prog.dtype, f"vmap vs loop of {prog}")
    names = transforms_for(prog)
    if "jacfwd" in names and "jacrev" in names:
        fwd = funcgrad.jacfwd(f, argnums=argnums)(*args)
        rev = funcgrad.jacrev(f, argnums=argnums)(*args)
        if not _nan_forward_at_zero_spread(prog, fwd, rev):
            _assert_same(fwd, rev, prog.dtype, f"jacfwd vs jacrev of {prog}")


def _nan_forward_at_zero_spread(prog: Prog, fwd: object, rev: object) -> bool:
    """std's derivative where all elements are equal is 0/0: a forward tangent, even a zero
    one (an input std does not read), meets it and gives NaN where reverse mode gives 0 for
    the inputs that do not reach it. JAX's jacfwd and jacrev differ the same way
    (``jacfwd(lambda a, b: jnp.std(b))`` gives [nan, nan], ``jacrev`` [0, nan])."""
    leaves = funcgrad.tree_util.tree_leaves
    return nan_where_std_spread_is_zero(prog, zip(leaves(fwd), leaves(rev)))


@FUZZ
@given(hypothesis_programs())
def test_matches_jax(prog: Prog) -> None:
    """funcgrad == JAX, program by program, under every transform."""
    pytest.importorskip("jax")
    try:
        found = check(prog)
    except JaxRefused:  # not a valid JAX program (a generator gap)
        return
    bad = [b for b in found if skip_reason(prog, b) is None]
    assert not bad, f"{prog}: " + "; ".join(f"{b['transform']}: {b['error']}" for b in bad)


# ------------------------------------------------------------------ fixed programs


def test_build_under_every_wrapper() -> None:
    """A fixed program under each wrapper (a smoke test of ``build``, JAX-free)."""
    ops = (("sin",), ("maximum", 0), ("sum", 0, True))
    for wrapper in [w for w in WRAPPERS if w is not None] + [None]:
        prog = Prog(((3,),), ops, wrapper, 0)
        y = build(funcgrad, prog)(fnp.asarray(inputs(prog)[0]))
        assert np.shape(y) == (1,), wrapper


def test_op_table_size() -> None:
    """The tables cover the issue's breadth (about 200 op kinds)."""
    assert len(OPS) >= 200


def test_program_json_round_trip() -> None:
    prog = Prog(((2, 3),), (("slice", 1, None, None, -1), ("at_add", "add", "array", (0, 0),
                                                          "clip", False)), "scan", 7, "float32")
    assert Prog.from_json(prog.to_json()) == prog
