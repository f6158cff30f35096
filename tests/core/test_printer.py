"""Exact text of the jaxpr printer, the IR's value types, and eval_jaxpr round trips."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Params, ShapedArray, Var

F32_22 = np.ones((2, 2), np.float32)


def text(s: str) -> str:
    return textwrap.dedent(s).strip("\n")


def jaxpr_text(f, *args, **kwargs) -> str:
    return str(fg.make_jaxpr(f)(*args, **kwargs))


# ------------------------------------------------------------------ DESIGN.md seed


def test_design_md_seed_example_prints_exactly() -> None:
    def f(a, b):
        return fnp.sum(fnp.matmul(a + b, a.T))

    expected = text("""
        { lambda ; a:f32[2,2] b:f32[2,2]. let
            c:f32[2,2] = add a b
            d:f32[2,2] = transpose[permutation=(1, 0)] a
            e:f32[2,2] = dot_general[dimension_numbers=(((1,), (0,)), ((), ()))] c d
            f:f32[] = reduce_sum[axes=(0, 1)] e
          in (f,) }
    """)
    assert jaxpr_text(f, F32_22, F32_22) == expected


def test_design_md_seed_example_with_function_spellings() -> None:
    # fnp.transpose, the @ operator and fnp.add must stage the same program.
    def f(a, b):
        return fnp.sum(fnp.add(a, b) @ fnp.transpose(a))

    assert jaxpr_text(f, F32_22, F32_22) == jaxpr_text(
        lambda a, b: fnp.sum(fnp.matmul(a + b, a.T)), F32_22, F32_22)


def test_str_and_repr_of_closed_jaxpr_and_jaxpr_agree() -> None:
    cj = fg.make_jaxpr(lambda x: fnp.sin(x))(np.ones(3))
    assert str(cj) == repr(cj) == str(cj.jaxpr) == repr(cj.jaxpr)


# ------------------------------------------------------------------ literals


def test_weak_float_literal_takes_array_dtype() -> None:
    expected = text("""
        { lambda ; a:f32[3]. let
            b:f32[3] = sin a
            c:f32[3] = mul b 2.0:f32[]
          in (c,) }
    """)
    assert jaxpr_text(lambda x: fnp.sin(x) * 2.0, np.ones(3, np.float32)) == expected


def test_int_literal_on_int8() -> None:
    expected = text("""
        { lambda ; a:i8[3]. let
            b:i8[3] = add a 1:i8[]
          in (b,) }
    """)
    assert jaxpr_text(lambda x: x + 1, np.ones(3, np.int8)) == expected


def test_bool_literal() -> None:
    expected = text("""
        { lambda ; a:bool[2]. let
            b:bool[2] = and a True:bool[]
          in (b,) }
    """)
    assert jaxpr_text(lambda x: fnp.logical_and(x, True), np.ones(2, bool)) == expected


def test_zero_d_numpy_values_become_literals() -> None:
    expected = text("""
        { lambda ; a:f32[2]. let
            b:f32[2] = mul a 2.0:f32[]
          in (b,) }
    """)
    assert jaxpr_text(lambda x: x * np.float32(2), np.ones(2, np.float32)) == expected
    expected64 = text("""
        { lambda ; a:f64[2]. let
            b:f64[2] = mul a 2.0:f64[]
          in (b,) }
    """)
    assert jaxpr_text(lambda x: x * np.array(2.0), np.ones(2)) == expected64


def test_literal_output_and_no_inputs() -> None:
    expected = text("""
        { lambda ; . let
          in (1.0:f64[],) }
    """)
    assert jaxpr_text(lambda: 1.0) == expected


def test_literal_pretty_and_repr() -> None:
    lit = Literal(2.0, ShapedArray((), np.float32))
    assert lit.pretty() == "2.0:f32[]"
    assert Literal(np.asarray(3, np.int16), ShapedArray((), np.int16)).pretty() == "3:i16[]"
    assert "2.0" in repr(lit)


# ------------------------------------------------------------------ constvars


def test_closed_over_array_is_a_constvar_before_semicolon() -> None:
    c = np.arange(3.0)
    expected = text("""
        { lambda a:f64[3] ; b:f64[3]. let
            c:f64[3] = mul b a
            d:f64[3] = add c 1.0:f64[]
          in (d,) }
    """)
    cj = fg.make_jaxpr(lambda x: x * c + 1.0)(np.ones(3))
    assert str(cj) == expected
    # The constant is a copy taken at trace time: changing c later changes nothing.
    assert len(cj.consts) == 1 and cj.consts[0] is not c
    np.testing.assert_array_equal(cj.consts[0], c)
    c[0] = 100.0
    assert cj.consts[0][0] == 0.0
    assert len(cj.jaxpr.constvars) == 1


def test_same_constant_used_twice_is_one_constvar() -> None:
    c = np.arange(3.0)
    expected = text("""
        { lambda a:f64[3] ; b:f64[3]. let
            c:f64[3] = mul b a
            d:f64[3] = add c a
          in (d,) }
    """)
    assert jaxpr_text(lambda x: x * c + c, np.ones(3)) == expected


def test_constant_only_output() -> None:
    c = np.arange(2.0)
    expected = text("""
        { lambda a:f64[2] ; b:f64[]. let
          in (a,) }
    """)
    assert jaxpr_text(lambda x: c, 1.0) == expected


def test_closed_jaxpr_checks_const_count() -> None:
    cj = fg.make_jaxpr(lambda x: x * np.arange(3.0))(np.ones(3))
    with pytest.raises(ValueError, match="consts"):
        ClosedJaxpr(cj.jaxpr, ())


# ------------------------------------------------------------------ outputs, inputs


def test_multiple_outputs() -> None:
    expected = text("""
        { lambda ; a:f32[3]. let
            b:f32[3] = mul a 2.0:f32[]
            c:f32[3] = sin a
          in (b, c) }
    """)
    assert jaxpr_text(lambda x: (x * 2.0, fnp.sin(x)), np.ones(3, np.float32)) == expected


def test_no_outputs() -> None:
    expected = text("""
        { lambda ; a:f64[]. let
          in () }
    """)
    assert jaxpr_text(lambda x: (), 1.0) == expected


def test_input_passed_through_and_dict_outputs_in_sorted_key_order() -> None:
    expected = text("""
        { lambda ; a:f64[2]. let
            b:f64[2] = cos a
          in (b, a) }
    """)
    assert jaxpr_text(lambda x: {"z": x, "a": fnp.cos(x)}, np.ones(2)) == expected


def test_pytree_inputs_flatten_in_sorted_key_order() -> None:
    expected = text("""
        { lambda ; a:f64[2] b:i32[2]. let
            c:f64[2] = convert_element_type[new_dtype=float64 weak_type=False] b
            d:f64[2] = sub a c
          in (d,) }
    """)
    args = {"b": np.ones(2, np.int32), "a": np.zeros(2)}
    assert jaxpr_text(lambda d: d["a"] - d["b"], args) == expected


def test_kwargs_and_static_argnums() -> None:
    expected_kw = text("""
        { lambda ; a:f64[2] b:f64[2]. let
            c:f64[2] = mul a b
          in (c,) }
    """)
    assert jaxpr_text(lambda x, y=None: x * y, np.ones(2), y=np.ones(2)) == expected_kw
    expected_static = text("""
        { lambda ; a:f64[2]. let
            b:f64[2] = mul a 3.0:f64[]
          in (b,) }
    """)
    cj = fg.make_jaxpr(lambda x, n: x * float(n), static_argnums=1)(np.ones(2), 3)
    assert str(cj) == expected_static


def test_variable_names_go_past_z_and_stay_unique() -> None:
    def f(x):
        for _ in range(30):
            x = fnp.sin(x)
        return x

    lines = jaxpr_text(f, 1.0).splitlines()
    eqn_lines = [ln.strip() for ln in lines[1:-1]]
    assert len(eqn_lines) == 30
    outs = [ln.split(":", 1)[0] for ln in eqn_lines]
    assert outs[:3] == ["b", "c", "d"]
    assert len(set(outs)) == 30 and "a" not in outs
    for prev, ln in zip(["a", *outs], eqn_lines):
        assert ln.endswith(f"= sin {prev}")
    assert lines[-1] == f"  in ({outs[-1]},) }}"


# ------------------------------------------------------------------ grad programs


def test_grad_program_prints_as_one_flat_jaxpr() -> None:
    # d/dx (sin(x) * x) = x cos(x) + sin(x): the forward, then the backward in the same jaxpr.
    expected = text("""
        { lambda ; a:f64[]. let
            b:f64[] = sin a
            c:f64[] = mul b a
            d:f64[] = mul 1.0:f64[] a
            e:f64[] = mul 1.0:f64[] b
            f:f64[] = cos a
            g:f64[] = mul d f
            h:f64[] = add e g
          in (h,) }
    """)
    cj = fg.make_jaxpr(fg.grad(lambda x: fnp.sin(x) * x))(1.0)
    assert str(cj) == expected
    x = 0.7
    (val,) = fg.eval_jaxpr(cj, np.asarray(x))
    np.testing.assert_allclose(val, np.sin(x) + x * np.cos(x))


def test_grad_program_float32_keeps_dtype() -> None:
    cj = fg.make_jaxpr(fg.grad(lambda x: fnp.sin(x) * x))(np.float32(1.0))
    assert "f64" not in str(cj)
    assert str(cj).splitlines()[0] == "{ lambda ; a:f32[]. let"


def test_grad_of_vector_function_program() -> None:
    expected = text("""
        { lambda ; a:f64[3]. let
            b:f64[3] = sin a
            c:f64[3] = mul b a
            d:f64[] = reduce_sum[axes=(0,)] c
            e:f64[3] = broadcast_in_dim[broadcast_dimensions=() shape=(3,)] 1.0:f64[]
            f:f64[3] = mul e a
            g:f64[3] = mul e b
            h:f64[3] = cos a
            i:f64[3] = mul f h
            j:f64[3] = add g i
          in (j,) }
    """)
    assert jaxpr_text(fg.grad(lambda x: fnp.sum(fnp.sin(x) * x)), np.ones(3)) == expected


def test_jvp_program() -> None:
    expected = text("""
        { lambda ; a:f64[] b:f64[]. let
            c:f64[] = sin a
            d:f64[] = cos a
            e:f64[] = mul b d
          in (c, e) }
    """)
    assert jaxpr_text(lambda x, t: fg.jvp(fnp.sin, (x,), (t,)), 1.0, 1.0) == expected


def test_promotion_shows_convert_element_type_param_names() -> None:
    expected = text("""
        { lambda ; a:i32[3]. let
            b:f64[3] = convert_element_type[new_dtype=float64 weak_type=True] a
            c:f64[3] = mul b 2.0:f64[]
          in (c,) }
    """)
    assert jaxpr_text(lambda x: x * 2.0, np.ones(3, np.int32)) == expected


def test_where_program() -> None:
    expected = text("""
        { lambda ; a:f32[2]. let
            b:bool[2] = gt a 0.0:f32[]
            c:f32[2] = broadcast_in_dim[broadcast_dimensions=() shape=(2,)] 0.0:f32[]
            d:f32[2] = select b a c
          in (d,) }
    """)
    assert jaxpr_text(lambda x: fnp.where(x > 0, x, 0.0), np.ones(2, np.float32)) == expected


def test_custom_rule_calls_print_deterministically() -> None:
    def make():
        @fg.custom_jvp
        def f(x):
            return fnp.sin(x)

        f.defjvp(lambda p, t: (f(p[0]), t[0] * fnp.cos(p[0])))
        return f

    t1 = jaxpr_text(make(), 1.0)
    t2 = jaxpr_text(make(), 1.0)
    assert "object at 0x" not in t1
    assert t1 == t2


# ------------------------------------------------------------------ Params


def _all_eqns(j: Jaxpr):
    for e in j.eqns:
        yield e
        for v in e.params.values():
            if isinstance(v, ClosedJaxpr):
                yield from _all_eqns(v.jaxpr)
            elif isinstance(v, Jaxpr):
                yield from _all_eqns(v)


PARAM_PROGRAMS = {
    "sum": lambda x: fnp.sum(x, axis=1),
    "transpose": lambda x: fnp.transpose(x),
    "matmul": lambda x: x @ x.T,
    "pad": lambda x: fnp.pad(x, [(1, 0), (0, 2)]),
    "slice": lambda x: x[1:, ::2],
    "gather": lambda x: x[np.array([0, 2])],
    "concat": lambda x: fnp.concatenate([x, x], axis=1),
    "reshape": lambda x: fnp.reshape(x, (4, 3)),
    "cumsum": lambda x: fnp.cumsum(x, axis=0),
    "max": lambda x: fnp.max(x, axis=0, keepdims=True),
    "grad": fg.grad(lambda x: fnp.sum(fnp.tanh(x @ x.T))),
}


@pytest.mark.parametrize("name", sorted(PARAM_PROGRAMS))
def test_every_params_mapping_is_hashable_and_holds_no_mutables(name: str) -> None:
    cj = fg.make_jaxpr(PARAM_PROGRAMS[name])(np.arange(12.0).reshape(3, 4))
    assert cj.eqns
    for e in _all_eqns(cj.jaxpr):
        assert isinstance(e.params, Params)
        hash(e.params)
        for v in e.params.values():
            assert not isinstance(v, (list, dict, set, np.ndarray)), (e.primitive.name, v)


def test_params_are_immutable() -> None:
    cj = fg.make_jaxpr(lambda x: fnp.sum(x, axis=0))(np.ones((2, 2)))
    p = cj.eqns[0].params
    assert dict(p) == {"axes": (0,)}
    with pytest.raises((TypeError, AttributeError)):
        p["axes"] = (1,)  # type: ignore[index]
    with pytest.raises((TypeError, AttributeError)):
        del p["axes"]  # type: ignore[attr-defined]
    assert dict(p) == {"axes": (0,)}


def test_params_equality_and_hash() -> None:
    a = Params({"axes": (0, 1), "keepdims": False})
    b = Params({"keepdims": False, "axes": (0, 1)})
    assert a == b and hash(a) == hash(b)
    assert a == {"axes": (0, 1), "keepdims": False}
    assert a != Params({"axes": (0,), "keepdims": False})
    assert list(a) == ["axes", "keepdims"] and len(a) == 2 and a["axes"] == (0, 1)
    assert {a: 1}[b] == 1
    assert Params() == {} and len(Params()) == 0


def test_same_program_gives_equal_params() -> None:
    p1 = fg.make_jaxpr(lambda x: fnp.sum(x, axis=1))(np.ones((2, 3))).eqns[0].params
    p2 = fg.make_jaxpr(lambda x: fnp.sum(x, axis=1))(np.ones((5, 3))).eqns[0].params
    assert p1 == p2 and hash(p1) == hash(p2)


def test_ir_containers_are_tuples() -> None:
    cj = fg.make_jaxpr(lambda x, y: (x + y, x * y))(np.ones(2), np.ones(2))
    j = cj.jaxpr
    for field in (j.invars, j.outvars, j.eqns, j.constvars, cj.consts):
        assert isinstance(field, tuple)
    for e in j.eqns:
        assert isinstance(e, Eqn)
        assert isinstance(e.inputs, tuple) and isinstance(e.outputs, tuple)
        assert all(isinstance(v, Var) for v in e.outputs)
    assert cj.in_avals == [ShapedArray((2,), np.float64)] * 2
    assert cj.out_avals == [ShapedArray((2,), np.float64)] * 2


# ------------------------------------------------------------------ ShapedArray


@pytest.mark.parametrize(("dtype", "short"), [
    (np.bool_, "bool"), (np.int8, "i8"), (np.int16, "i16"), (np.int32, "i32"),
    (np.int64, "i64"), (np.uint8, "u8"), (np.uint16, "u16"), (np.uint32, "u32"),
    (np.uint64, "u64"), (np.float16, "f16"), (np.float32, "f32"), (np.float64, "f64"),
    (np.complex64, "c64"), (np.complex128, "c128"),
])
def test_shaped_array_str_short(dtype, short) -> None:
    assert ShapedArray((2, 3), dtype).str_short() == f"{short}[2,3]"
    assert ShapedArray((), dtype).str_short() == f"{short}[]"
    assert ShapedArray((0, 5), dtype).str_short() == f"{short}[0,5]"


def test_shaped_array_eq_hash() -> None:
    a = ShapedArray((2, 3), np.float32)
    assert a == ShapedArray([2, 3], "float32")
    assert hash(a) == hash(ShapedArray((2, 3), np.dtype("float32")))
    assert a != ShapedArray((3, 2), np.float32)
    assert a != ShapedArray((2, 3), np.float64)
    assert a != ShapedArray((2, 3), np.float32, weak_type=True)
    assert a != (2, 3)
    assert len({a, ShapedArray((2, 3), np.float32), ShapedArray((2, 3), np.float32, True)}) == 2
    assert a.ndim == 2 and a.size == 6 and a.shape == (2, 3)
    assert a.update(dtype=np.int8) == ShapedArray((2, 3), np.int8)
    w = ShapedArray((), np.float64, weak_type=True)
    assert w.strip_weak() == ShapedArray((), np.float64)
    assert "weak_type=True" in repr(w) and "weak_type" not in repr(a)


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(0, 5), max_size=4),
       dtype=st.sampled_from(["float32", "float64", "int32", "bool", "complex64"]),
       weak=st.booleans())
def test_shaped_array_hash_consistent_with_eq(shape, dtype, weak) -> None:
    a = ShapedArray(shape, dtype, weak)
    b = ShapedArray(tuple(shape), np.dtype(dtype), weak)
    assert a == b and hash(a) == hash(b)
    assert a.str_short().endswith("[" + ",".join(map(str, shape)) + "]")


def test_var_avals_in_printed_decls() -> None:
    cj = fg.make_jaxpr(lambda x: fnp.sum(x, axis=0) > 0)(np.ones((3, 2), np.float32))
    assert [v.aval for v in cj.jaxpr.invars] == [ShapedArray((3, 2), np.float32)]
    assert cj.out_avals == [ShapedArray((2,), np.bool_)]
    assert str(cj).splitlines()[-1] == "  in (c,) }"
    assert "c:bool[2] = gt b 0.0:f32[]" in str(cj)


# ------------------------------------------------------------------ eval_jaxpr round trips

ROUND_TRIP = {
    "seed": (lambda a, b: fnp.sum(fnp.matmul(a + b, a.T)), (F32_22, 2 * F32_22)),
    "consts": (lambda x: x * np.arange(3.0) + 1.0, (np.ones(3),)),
    "multi": (lambda x: (fnp.sin(x), x * 2.0, x), (np.linspace(0, 1, 4),)),
    "promote": (lambda x: x * 2.5, (np.arange(3, dtype=np.int32),)),
    "index": (lambda x: x[1:, np.array([0, 2])], (np.arange(12.0).reshape(3, 4),)),
    "reduce": (lambda x: (fnp.max(x, axis=1), fnp.mean(x), fnp.argmax(x, axis=0)),
               (np.array([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]]),)),
    "grad": (fg.grad(lambda x: fnp.sum(fnp.tanh(x) ** 2)), (np.array([0.1, -0.4, 2.0]),)),
    "lax": (lambda x, y: lax.dot_general(x, y, (((1,), (0,)), ((), ()))),
            (np.ones((2, 3)), np.ones((3, 4)))),
}


@pytest.mark.parametrize("name", sorted(ROUND_TRIP))
def test_eval_jaxpr_matches_direct_call(name: str) -> None:
    f, args = ROUND_TRIP[name]
    cj = fg.make_jaxpr(f)(*args)
    got = fg.eval_jaxpr(cj, *args)
    want = fg.tree_util.tree_leaves(f(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
        assert np.asarray(g).dtype == np.asarray(w).dtype


@pytest.mark.parametrize("name", sorted(ROUND_TRIP))
def test_restaging_eval_jaxpr_prints_the_same_text(name: str) -> None:
    f, args = ROUND_TRIP[name]
    cj = fg.make_jaxpr(f)(*args)
    again = fg.make_jaxpr(lambda *a: fg.eval_jaxpr(cj, *a))(*args)
    assert str(again) == str(cj)


def test_eval_jaxpr_composes_with_grad() -> None:
    f = lambda x: fnp.sum(fnp.sin(x) * x)  # noqa: E731
    x = np.array([0.3, 1.2, -0.5])
    cj = fg.make_jaxpr(f)(x)
    g = fg.grad(lambda x: fg.eval_jaxpr(cj, x)[0])(x)
    np.testing.assert_allclose(g, np.sin(x) + x * np.cos(x))


def test_eval_jaxpr_on_bare_jaxpr_with_consts_keyword() -> None:
    c = np.array([1.0, 2.0])
    cj = fg.make_jaxpr(lambda x: x * c)(np.ones(2))
    (out,) = fg.eval_jaxpr(cj.jaxpr, np.array([3.0, 4.0]), consts=cj.consts)
    np.testing.assert_array_equal(out, [3.0, 8.0])


def test_eval_jaxpr_wrong_argument_count() -> None:
    cj = fg.make_jaxpr(lambda x, y: x + y)(1.0, 2.0)
    with pytest.raises(TypeError, match="2 arguments, got 1"):
        fg.eval_jaxpr(cj, 1.0)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.floats(-3, 3, allow_nan=False), min_size=1, max_size=5))
def test_eval_jaxpr_round_trip_on_drawn_values(xs) -> None:
    x = np.array(xs)
    f = lambda x: fnp.exp(-x * x) * fnp.cos(3.0 * x) + fnp.sum(x)  # noqa: E731
    cj = fg.make_jaxpr(f)(np.zeros_like(x))
    np.testing.assert_allclose(fg.eval_jaxpr(cj, x)[0], f(x), rtol=1e-12)
