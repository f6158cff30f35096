"""Collectives over a named axis: ``psum``, ``pmax``, ``pmin`` and ``axis_index``.

A collective names a mapped axis (``vmap(..., axis_name="i")``). The trace that maps that
axis carries it out with the primitive's ``axis_rule`` (a sum over the batch dimension, for
psum); every other trace applies it member by member. Outside any such map the name is
unbound, and the collective raises JAX's ``NameError``.

>>> import funcgrad as jax
>>> import funcgrad.numpy as jnp
>>> jax.vmap(lambda x: x / jax.lax.psum(x, "i"), axis_name="i")(jnp.array([1.0, 3.0]))
Array([0.25, 0.75], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from funcgrad.core import Primitive
from funcgrad.ir import ShapedArray
from funcgrad.primitives import elementwise as E
from funcgrad.primitives import reductions as R
from funcgrad.primitives import structural as S


def _unbound(prim: str) -> Callable[..., Any]:
    def impl(xp: Any, *args: Any, axis_name: Any, **_: Any) -> Any:
        raise NameError(f"unbound axis name: {axis_name}")

    impl.__name__ = f"_{prim}_impl"
    return impl


def _names(axis_name: Any) -> tuple[Any, ...]:
    return axis_name if isinstance(axis_name, tuple) else (axis_name,)


def _reduce_rule(reduce: Callable[[Any, tuple[int, ...]], Any], unbatched: Callable[
        [Any, int], Any]) -> Callable[..., Any]:
    """The rule of a reducing collective for the trace that maps its axis: reduce over the
    batch dimension (the result is the same for every member: unbatched)."""
    def rule(x: Any, bdim: int | None, size: int, **_: Any) -> tuple[Any, None]:
        if bdim is None:
            return unbatched(x, size), None
        return reduce(x, (bdim,)), None

    return rule


def _collective(name: str, rule: Callable[..., Any], linear: bool) -> Primitive:
    prim = Primitive(name, abstract_eval=lambda x, *, axis_name: x, impl=_unbound(name))
    prim.axis_rule = rule  # type: ignore[attr-defined]
    # Another axis's trace applies the collective to each member: the batch dim stays.
    prim.batch = lambda args, dims, *, axis_name: (prim.bind(args[0], axis_name=axis_name),
                                                   dims[0])
    if linear:
        prim.jvp = lambda primals, tangents, *, axis_name: (
            prim.bind(primals[0], axis_name=axis_name),
            None if tangents[0] is None else prim.bind(tangents[0], axis_name=axis_name))
        # psum's transpose is psum (JAX's definition): grad of a psum-ed loss sums cotangents.
        prim.vjp = lambda ct, primals, ans, *, axis_name: [prim.bind(ct, axis_name=axis_name)]
        prim.vjp_reads = ""
    else:
        def jvp(primals: Sequence[Any], tangents: Sequence[Any], *, axis_name: Any) -> Any:
            x, t = primals[0], tangents[0]
            ans = prim.bind(x, axis_name=axis_name)
            if t is None:
                return ans, None
            # The tangent of the members that reach the extreme, split evenly on ties.
            hit = E.convert_element_type(E.eq(x, ans), _dtype(x))
            count = psum_p.bind(hit, axis_name=axis_name)
            return ans, E.div(psum_p.bind(E.mul(t, hit), axis_name=axis_name), count)

        def vjp(ct: Any, primals: Sequence[Any], ans: Any, *, axis_name: Any) -> list[Any]:
            x = primals[0]
            hit = E.convert_element_type(E.eq(x, ans), _dtype(x))
            count = psum_p.bind(hit, axis_name=axis_name)
            return [E.div(E.mul(psum_p.bind(ct, axis_name=axis_name), hit), count)]

        prim.jvp, prim.vjp = jvp, vjp
        prim.vjp_reads = "x,y"
    prim.describe(lax=None, fusion=None, cuda=None, ufunc=None, torch_method=None)
    return prim


def _dtype(x: Any) -> Any:
    from funcgrad.core import get_aval  # noqa: PLC0415

    return get_aval(x).dtype


psum_p = _collective("psum", _reduce_rule(R.reduce_sum, lambda x, n: E.mul(x, n)), True)
pmax_p = _collective("pmax", _reduce_rule(R.reduce_max, lambda x, n: x), False)
pmin_p = _collective("pmin", _reduce_rule(R.reduce_min, lambda x, n: x), False)


def _axis_index_rule(x: Any, bdim: int | None, size: int, **_: Any) -> tuple[Any, int]:
    # Member k of the mapped axis sees k.
    return S.iota(_index_dtype(), (size,), 0), 0


def _index_dtype() -> Any:
    from funcgrad import dtypes  # noqa: PLC0415

    return dtypes.canonicalize_dtype("int32")


axis_index_p = Primitive("axis_index",
                         abstract_eval=lambda *, axis_name: ShapedArray((), _index_dtype()),
                         impl=_unbound("axis_index"))
axis_index_p.axis_rule = _axis_index_rule  # type: ignore[attr-defined]
axis_index_p.jvp = lambda primals, tangents, *, axis_name: (
    axis_index_p.bind(axis_name=axis_name), None)
axis_index_p.vjp = lambda ct, primals, ans, *, axis_name: []
axis_index_p.vjp_reads = ""
# Under another axis's map it is the same for every member: unbatched.
axis_index_p.batch = lambda args, dims, *, axis_name: (axis_index_p.bind(axis_name=axis_name),
                                                       None)
axis_index_p.zero_derivative = True
axis_index_p.describe(lax=None, fusion=None, cuda=None, ufunc=None, torch_method=None)

COLLECTIVES = (psum_p, pmax_p, pmin_p, axis_index_p)

__all__ = ["COLLECTIVES", "axis_index_p", "pmax_p", "pmin_p", "psum_p"]
