"""One place to add a primitive: its definition carries everything its consumers need.

For every primitive in ``funcgrad.core.PRIMITIVES`` this checks that the definition says
(none left UNSET): its transform rules (jvp, vjp and what the vjp reads, batch), its
``funcgrad.lax`` function, its fusion class and CUDA expression, its NumPy ufunc fast path
and its PyTorch names; and that each of those is usable by its consumer. The other
columns (impl against a reference, abstract_eval against the impl, derivatives, vmap)
are the table tests: tests/core/test_primitives_table.py and tests/transforms/test_vmap.py,
whose own completeness checks fail when a primitive has no row. The grad column there runs
every vjp rule with the values it does not declare in ``vjp_reads`` replaced by
``Missing`` placeholders, so a wrong declaration fails it.
"""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
import funcgrad.torch as ft
from funcgrad import lax
from funcgrad.core import PRIMITIVES, UNSET, Missing, Primitive
from funcgrad.errors import FuncgradError, NonDifferentiableError
from funcgrad.ir import ShapedArray
from funcgrad.primitives.collectives import COLLECTIVE_NAMES

NAMES = sorted(PRIMITIVES)
ATTRIBUTES = ("lax", "fusion", "cuda", "ufunc", "torch_method", "torch_node", "vjp_reads")
CALL_LIKE_WITHOUT_LAX = {"custom_jvp_call", "custom_vjp_call", "checkpoint", "jit",
                         "custom_vmap_call",  # funcgrad.custom_batching.custom_vmap
                         "debug_callback", "pure_callback",  # and the host callbacks
                         "io_callback",  # funcgrad.experimental.io_callback
                         "check",  # funcgrad.experimental.checkify.check
                         "device_put",  # funcgrad.device_put (jax.device_put), not lax
                         # collectives: lax.psum & co. map over pytrees and name an axis
                         *COLLECTIVE_NAMES}


@pytest.mark.parametrize("name", NAMES)
def test_definition_says_everything(name: str) -> None:
    prim = PRIMITIVES[name]
    unset = [a for a in ATTRIBUTES if getattr(prim, a) is UNSET or getattr(prim, a) is None
             and a in ("torch_node", "vjp_reads")]
    assert not unset, f"primitive {name} does not say: {unset}"
    # iota takes no operands: no batch axis can reach it, so it needs no batching rule.
    for rule in ("jvp", "vjp") if name == "iota" else ("jvp", "vjp", "batch"):
        assert callable(getattr(prim, rule)), f"primitive {name} has no {rule} rule"


@pytest.mark.parametrize("name", NAMES)
def test_lax_function_is_the_definitions(name: str) -> None:
    prim = PRIMITIVES[name]
    if prim.lax is None:
        assert name in CALL_LIKE_WITHOUT_LAX, f"{name} has no funcgrad.lax function"
        return
    fn = getattr(lax, prim.lax)
    assert callable(fn)
    if prim.lax_fn is not None:
        assert fn is prim.lax_fn
    assert getattr(lax, f"{name}_p") is prim


@pytest.mark.parametrize("name", NAMES)
def test_backend_descriptions_are_usable(name: str) -> None:
    prim = PRIMITIVES[name]
    assert prim.fusion in ("elementwise", "reduction", "broadcast", None)
    if prim.fusion == "elementwise":
        assert isinstance(prim.cuda, str) or callable(prim.cuda), name
    elif prim.fusion == "reduction":
        assert set(prim.cuda) == {"combine", "identity"}, name
        assert prim.cuda["identity"] in ("zero", "lowest", "highest")
    else:
        assert prim.cuda is None, f"{name} has a CUDA expression but is not fusable"
    if prim.ufunc is not None:
        assert isinstance(getattr(np, prim.ufunc), np.ufunc), name
    # CPU fusion's scalar expression (None: not fused on the CPU): only for fusable ones.
    if prim.py_scalar is not None:
        assert prim.fusion in ("elementwise", "reduction"), name
        assert isinstance(prim.py_scalar, str) or callable(prim.py_scalar), name


@pytest.mark.parametrize("name", NAMES)
def test_pytorch_names(name: str) -> None:
    prim = PRIMITIVES[name]
    assert prim.torch_node and prim.torch_node[0].isupper(), name
    if prim.torch_method is not None:
        assert callable(getattr(ft.Tensor, prim.torch_method)), name


def test_a_primitive_without_rules_refuses_to_be_differentiated() -> None:
    bare = Primitive("test_bare_square", abstract_eval=lambda x: x, impl=lambda xp, x: x * x)
    try:
        x = np.array([1.0, 2.0])
        np.testing.assert_array_equal(bare.bind(x), x * x)
        with pytest.raises(NonDifferentiableError, match="test_bare_square"):
            fg.grad(lambda v: fnp.sum(bare.bind(v)))(x)
        with pytest.raises(NonDifferentiableError, match="test_bare_square"):
            fg.jvp(bare.bind, (x,), (x,))
        with pytest.raises(FuncgradError, match="test_bare_square"):
            fg.vmap(bare.bind)(np.ones((2, 2)))
        t = ft.tensor([1.0], requires_grad=True)
        with pytest.raises(NonDifferentiableError, match="test_bare_square"):
            ft._tensor.apply_op("Bare", bare.bind, t)
    finally:
        del PRIMITIVES["test_bare_square"]


def test_impl_and_abstract_eval_must_agree() -> None:
    """Eager evaluation does not cast: an impl giving another dtype than its shape rule
    is reported, not hidden."""
    liar = Primitive("test_liar", abstract_eval=lambda x: x,
                     impl=lambda xp, x: x.astype(np.float32))
    try:
        with pytest.raises(FuncgradError, match="test_liar.*float32.*f64"):
            liar.bind(np.ones(2))
    finally:
        del PRIMITIVES["test_liar"]


def test_a_rule_reading_an_undeclared_value_is_caught() -> None:
    """A vjp rule that computes with a value its ``vjp_reads`` left out meets a Missing
    placeholder, and that is an internal error naming the primitive."""
    sin = PRIMITIVES["sin"]
    ct = np.ones(2)
    with pytest.raises(FuncgradError, match="did not keep"):
        sin.vjp(ct, [Missing(ShapedArray((2,), np.float64))], Missing(
            ShapedArray((2,), np.float64)))
