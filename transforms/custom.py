"""User-defined derivative rules and rematerialisation: ``custom_jvp``, ``custom_vjp``,
``checkpoint`` (``stop_gradient`` is funcgrad.lax.stop_gradient, a primitive).

Each is a call-like primitive whose params carry the Python functions, so every
trace (eager, staging, jvp, vjp) handles it through the one rule table.

>>> import numpy as np
>>> import funcgrad as fg
>>> @fg.custom_jvp
... def f(x):
...     return fg.numpy.sin(x)
>>> @f.defjvp
... def f_jvp(primals, tangents):
...     (x,), (t,) = primals, tangents
...     return f(x), 2.0 * t
>>> fg.grad(f)(np.array(0.3))
Array(2., dtype=float32)
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.array import wrap
from funcgrad.conversion import asarray
from funcgrad.core import Primitive, Tracer, get_aval
from funcgrad.errors import NonDifferentiableError, TreeStructureError
from funcgrad.ir import ClosedJaxpr, Jaxpr, Literal, ShapedArray
from funcgrad.primitives.rules import all_batched, batch_size, wanted, zeros_like_aval
from funcgrad.staging import StagingTracer, trace_flat
from funcgrad.transforms._util import fix_unwanted, offering_mask, spread, take_mask
from funcgrad.transforms.jvp import jvp_flat
from funcgrad.transforms.vjp import vjp_flat
from funcgrad.transforms.vmap import vmap_flat
from funcgrad.tree_util import tree_flatten, tree_unflatten


def _call_abstract(*avals: ShapedArray, fun: Callable[..., Any], **_: Any) -> list[ShapedArray]:
    closed, _outs = trace_flat(fun, avals)
    return closed.out_avals


def _call_prim(name: str) -> Primitive:
    prim = Primitive(name, abstract_eval=_call_abstract,
                     impl=lambda xp, *args, fun, **_: list(fun(*args)),
                     multiple_results=True)
    prim.call_like = True
    prim.inline_param = "fun"
    return prim


def _user_zeros(p: Any) -> Any:
    """Zeros like ``p`` as a rule written by the user sees them: an Array (JAX's rules get
    ``ArrayImpl`` zeros, with ``.at`` and the other methods), never a bare NumPy array."""
    return _zeros_of(get_aval(p))


def _zeros_of(aval: ShapedArray) -> Any:
    z = zeros_like_aval(aval)
    return wrap(z, get_aval(z)) if isinstance(z, np.ndarray) else z


def _instantiate(ts: Sequence[Any], ps: Sequence[Any]) -> list[Any]:
    return [_user_zeros(p) if t is None else t for p, t in zip(ps, ts)]


class _Flat:
    """A pytree function seen as ``flat args -> flat outs``, remembering the out tree.

    ``static`` holds the non-differentiable arguments by position; ``args``
    rebuilds the full argument list in the caller's order.
    """

    def __init__(self, fun: Callable[..., Any], static: dict[int, Any], in_tree: Any,
                 traced: tuple[tuple[int, ...], Any] | None = None) -> None:
        self.fun, self.static, self.in_tree = fun, static, in_tree
        self.out_tree: Any = None
        # A checkpoint's saving policy (None: recompute everything).
        self.policy: Callable[..., bool] | None = None
        # Non-differentiable arguments holding tracers: their positions and tree; their
        # leaves are the last operands of the call (see ``split``).
        self.traced = traced

    def split(self, flat: Sequence[Any]) -> tuple[list[Any], dict[int, Any]]:
        """The operands of the call as the differentiable ones and all the static ones."""
        if self.traced is None:
            return list(flat), self.static
        pos, tree = self.traced
        k = tree.num_leaves
        extra = tree_unflatten(tree, list(flat[len(flat) - k:]))
        return list(flat[:len(flat) - k]), {**self.static, **dict(zip(pos, extra))}

    def args(self, flat: Sequence[Any]) -> tuple[Any, ...]:
        flat, static = self.split(flat)
        dyn = iter(tree_unflatten(self.in_tree, flat))
        n = len(static) + _count(self.in_tree)
        return tuple(static[i] if i in static else next(dyn) for i in range(n))

    def __call__(self, *flat: Any) -> list[Any]:
        leaves, self.out_tree = tree_flatten(self.fun(*self.args(flat)))
        return leaves

    def __repr__(self) -> str:
        return getattr(self.fun, "__name__", "fun")


def _count(in_tree: Any) -> int:
    """Number of dynamic positional arguments in a flattened argument tuple's tree."""
    return len(in_tree.children)


class _Rule:
    """A rule closure with a stable printed name (jaxpr params print it)."""

    def __init__(self, fn: Callable[..., Any], name: str) -> None:
        self.fn, self.name = fn, name
        # A bwd rule that takes SymbolicZero cotangents (``defvjp(symbolic_zeros=True)``).
        self.symbolic_zeros = False

    def __call__(self, *args: Any, **kw: Any) -> Any:
        return self.fn(*args, **kw)

    def __repr__(self) -> str:
        return self.name


def _weak_scalars(flat_tree: tuple[list[Any], Any]) -> tuple[list[Any], Any]:
    """Python numbers as weakly typed Arrays, as JAX passes them to the function: ``f(2.0)``
    then computes ``x * 2`` in a weak float32, whose dtype later operands decide."""
    flat, tree = flat_tree
    return [_weak(x) if dtypes.python_scalar(x) else x for x in flat], tree


def _weak(x: Any) -> Any:
    aval = get_aval(x)  # the weak type a Python number has
    return wrap(np.asarray(x, aval.dtype), aval)


def _split_static(args: tuple[Any, ...], nondiff: tuple[int, ...]
                  ) -> tuple[dict[int, Any], tuple[Any, ...]]:
    n = len(args)
    pos = {i % n for i in nondiff if -n <= i < n}
    static = {i: args[i] for i in sorted(pos)}
    dyn = tuple(a for i, a in enumerate(args) if i not in pos)
    return static, dyn


# ------------------------------------------------------------------ custom_jvp

custom_jvp_call_p = _call_prim("custom_jvp_call")


class SymbolicZero:
    """The tangent (or cotangent) of a value not involved in differentiation, as a rule
    defined with ``symbolic_zeros=True`` is given it: it has the zero's ``aval``, ``shape``
    and ``dtype`` but no values, so the rule can skip its work.

    >>> import funcgrad.numpy as jnp
    >>> z = SymbolicZero.from_primal_value(jnp.ones(3))
    >>> z, z.shape, z.dtype
    (SymbolicZero, (3,), dtype('float32'))
    """

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval

    def __repr__(self) -> str:
        return self.__class__.__name__

    def __getattr__(self, name: str) -> Any:
        # The aval's properties (shape, dtype, ndim, size) show through, as in JAX.
        if name == "aval":
            raise AttributeError(name)
        try:
            return getattr(self.aval, name)
        except AttributeError:
            raise AttributeError(f"{self.__class__.__name__} has no attribute {name}") from None

    @staticmethod
    def from_primal_value(val: Any) -> SymbolicZero:
        """The symbolic zero tangent of ``val``."""
        return SymbolicZero(_tangent_aval(get_aval(val)))


@dataclasses.dataclass(slots=True)
class CustomVJPPrimal:
    """One leaf of a custom_vjp fwd rule's arguments under ``symbolic_zeros=True``: the
    primal ``value`` and whether it is ``perturbed`` (differentiated).

    >>> CustomVJPPrimal(1.0, False).perturbed
    False
    """

    value: Any
    perturbed: bool


def custom_vjp_primal_tree_values(tree: Any) -> Any:
    """``tree`` with each :class:`CustomVJPPrimal` leaf replaced by its value.

    >>> custom_vjp_primal_tree_values((CustomVJPPrimal(2.0, True),))
    (2.0,)
    """
    from funcgrad.tree_util import tree_map  # noqa: PLC0415

    def value(leaf: Any) -> Any:
        if type(leaf) is not CustomVJPPrimal:
            raise TypeError(f"unexpected leaf type {type(leaf)}")
        return leaf.value

    return tree_map(value, tree)


def _tangent_aval(aval: ShapedArray) -> ShapedArray:
    """The type of a tangent of a value of type ``aval``: float0 for integers and bools."""
    if dtypes.is_inexact(aval.dtype):
        return aval.strip_weak()
    return ShapedArray(aval.shape, dtypes.FLOAT0)


def zero_from_primal(val: Any, symbolic_zeros: bool = False) -> Any:
    """The zero tangent of each leaf of ``val``: a :class:`SymbolicZero` with
    ``symbolic_zeros=True``, else zeros (float0 zeros for integer leaves).

    >>> import funcgrad.numpy as jnp
    >>> zero_from_primal(jnp.ones(2))
    Array([0., 0.], dtype=float32)
    """
    from funcgrad.tree_util import tree_map  # noqa: PLC0415

    def zero(x: Any) -> Any:
        t_aval = _tangent_aval(get_aval(x))
        if symbolic_zeros:
            return SymbolicZero(t_aval)
        if t_aval.dtype == dtypes.FLOAT0:
            return dtypes.float0_zeros(t_aval.shape)
        return _zeros_of(t_aval)

    return tree_map(zero, val)


def _symbolic(ts: Sequence[Any], ps: Sequence[Any]) -> list[Any]:
    return [SymbolicZero.from_primal_value(p) if t is None else t for p, t in zip(ps, ts)]


def _check_no_symbolic(ts: Sequence[Any]) -> None:
    for t in ts:
        if isinstance(t, (SymbolicZero, CustomVJPPrimal)):
            raise TypeError(f"Argument '{t!r}' of type '{type(t)}' is not a valid JAX type")


def _custom_jvp_rule(primals: Sequence[Any], tangents: Sequence[Any], *,
                     fun: Callable[..., Any], jvp: Callable[..., Any]) -> Any:
    # The rule gets None for a zero tangent: it gives the user zeros or a SymbolicZero.
    return jvp(list(primals), list(tangents))


def _custom_jvp_vjp(cts: Sequence[Any], primals: Sequence[Any], outs: Sequence[Any], *,
                    fun: Callable[..., Any], jvp: Callable[..., Any]) -> list[Any]:
    # The tangent map t -> jvp(primals, t)[1] is linear; its reverse-mode derivative is
    # its transpose, which is the vjp.
    # Tangents of operands not differentiated stay constant zeros (symbolic zeros).
    mask = [wanted(i) for i in range(len(primals))]

    def tangent_map(*ts: Any) -> list[Any]:
        p_out, t_out = jvp(list(primals), list(ts))
        return _instantiate(t_out, p_out)

    # Recorded at zero tangents; the operands not differentiated get None (symbolic zeros).
    f, _ = fix_unwanted(tangent_map, [None] * len(mask), mask)
    diff = [_user_zeros(p) for p, m in zip(primals, mask) if m]
    with at_zero_tangents():
        _, _, backward = vjp_flat(f, diff)
    return spread(backward(list(cts)), mask)


class _ZeroTangents(threading.local):
    def __init__(self) -> None:
        self.depth = 0


_zero_tangents = _ZeroTangents()


def transposing_tangents() -> bool:
    """Whether a custom_jvp rule now runs to have its tangent map transposed (reverse mode):
    its tangent must then come from differentiable linear operations.

    >>> transposing_tangents()
    False
    """
    return _zero_tangents.depth > 0


class at_zero_tangents:  # noqa: N801 - used like a function: ``with at_zero_tangents():``
    """While a linear map of tangents is recorded at zero tangents to be transposed (a
    custom_jvp rule's reverse mode, ``linear_transpose``), the deferred linear part of a
    custom_vjp function's jvp has the value it must have there: zero.

    >>> import funcgrad as fg
    >>> with at_zero_tangents():
    ...     pass
    """

    def __enter__(self) -> None:
        _zero_tangents.depth += 1

    def __exit__(self, *exc: object) -> None:
        _zero_tangents.depth -= 1


custom_jvp_call_p.jvp = _custom_jvp_rule
custom_jvp_call_p.vjp = _custom_jvp_vjp
custom_jvp_call_p.vjp_reads = "x"
# The call primitives have no lax function: custom_jvp, custom_vjp and checkpoint are their API.
custom_jvp_call_p.describe(lax=None, fusion=None, cuda=None, ufunc=None, torch_method=None)


def _batched(fun: Callable[..., Any], size: int) -> Callable[..., Any]:
    """``fun`` over arguments that all carry a leading batch axis of ``size``."""

    def run(*args: Any) -> Any:
        return vmap_flat(fun, args, [0] * len(args), size)[0]

    return run


def _split_halves(fun: Callable[..., Any], size: int) -> Callable[..., Any]:
    """Batch a rule ``(xs, ys) -> (outs, outs2)`` whose inputs all carry a batch axis."""

    def run(xs: Sequence[Any], ys: Sequence[Any]) -> tuple[list[Any], list[Any]]:
        # A None of ys (a zero tangent) stays None, outside the batch.
        n, given = len(xs), [y is not None for y in ys]

        def call(*a: Any) -> Any:
            return fun(list(a[:n]), spread(a[n:], given))

        leaves = _batched(call, size)(*xs, *(y for y in ys if y is not None))
        half = len(leaves) // 2
        return leaves[:half], leaves[half:]

    return run


def _custom_jvp_batch(args: Sequence[Any], dims: Sequence[Any], *, fun: Callable[..., Any],
                      jvp: Callable[..., Any]) -> Any:
    size = batch_size(args, dims)
    outs = custom_jvp_call_p.bind(*all_batched(args, dims), fun=_batched(fun, size),
                                  jvp=_split_halves(jvp, size))
    return outs, [0] * len(outs)


custom_jvp_call_p.batch = _custom_jvp_batch


class custom_jvp:  # noqa: N801 - JAX's name
    """A function with a user-defined forward-mode rule (reverse mode follows from it).

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> f = fg.custom_jvp(lambda x: x * 1.0)
    >>> f.defjvp(lambda p, t: (f(p[0]), 3.0 * t[0]))  # doctest: +ELLIPSIS
    <...>
    >>> fg.grad(f)(np.array(1.0))
    Array(3., dtype=float32)
    """

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp_rule: Callable[..., Any] | None = None
        self.symbolic_zeros = False

    def defjvp(self, jvp: Callable[..., Any], symbolic_zeros: bool = False
               ) -> Callable[..., Any]:
        """Register ``jvp(primals, tangents) -> (primal_out, tangent_out)``; with
        ``symbolic_zeros=True`` the tangent of an input not differentiated is a
        :class:`SymbolicZero`."""
        self.jvp_rule = jvp
        self.symbolic_zeros = symbolic_zeros
        return jvp

    def defjvps(self, *jvps: Callable[..., Any] | None) -> None:
        """One rule per positional argument, ``jvp_i(t_i, ans, *primals)``, summed (None:
        that argument contributes nothing), as JAX's ``defjvps``.

        >>> import funcgrad as fg
        >>> f = fg.custom_jvp(lambda x, y: x * y)
        >>> f.defjvps(lambda t, ans, x, y: 2.0 * t, None)
        >>> float(fg.grad(f)(1.0, 5.0))
        2.0
        """
        from funcgrad.tree_util import tree_map  # noqa: PLC0415

        def rule(primals: Any, tangents: Any) -> Any:
            ans = self(*primals)
            parts = [jvp(t, ans, *primals) for t, jvp in zip(tangents, jvps) if jvp is not None]
            if not parts:
                return ans, tree_map(lambda a: a * 0, ans)
            return ans, functools.reduce(lambda u, v: tree_map(lambda p, q: p + q, u, v), parts)

        self.defjvp(rule)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.jvp_rule is None:
            raise NoRuleError("No JVP defined for custom_jvp function "
                              f"{_fun_name(self.fun)} using defjvp.")
        args = _resolve_kwargs(self.fun, args, kwargs, "custom_jvp")
        static, dyn = _split_static(args, self.nondiff_argnums)
        flat, in_tree = _weak_scalars(tree_flatten(dyn))
        # As JAX: a traced non-differentiable argument is passed on with its gradient
        # stopped (here as an extra operand of the call, so no trace outlives it).
        traced = {i: v for i, v in static.items()
                  if any(isinstance(x, Tracer) for x in tree_flatten(v)[0])}
        extra: list[Any] = []
        if traced:
            from funcgrad.primitives.elementwise import stop_gradient_p  # noqa: PLC0415

            static = {i: v for i, v in static.items() if i not in traced}
            leaves, t_tree = tree_flatten(tuple(traced.values()))
            extra = [stop_gradient_p.bind(asarray(x)) for x in leaves]
        fun = _Flat(self.fun, static, in_tree,
                    (tuple(traced), t_tree) if traced else None)
        rule = self.jvp_rule
        zeros = _symbolic if self.symbolic_zeros else _instantiate

        def jvp(primals: list[Any], tangents: list[Any]) -> tuple[list[Any], list[Any]]:
            n_dyn = len(primals) - len(extra)
            primals, all_static = fun.split(primals)
            static = {i: all_static[i] for i in sorted(all_static)}
            tangents = zeros(list(tangents[:n_dyn]), primals)
            p_tree = tree_unflatten(in_tree, primals)
            t_tree = tree_unflatten(in_tree, tangents)
            # As in JAX, non-differentiable arguments lead the rule's arguments.
            pair = rule(*static.values(), tuple(p_tree), tuple(t_tree))
            names = f"Custom JVP rule {_fun_name(rule)} for function {_fun_name(self.fun)}"
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise TypeError(f"{names} must produce a pair (list or tuple of length two) "
                                f"representing primal and tangent outputs, but got {pair}.")
            out, t_out = pair
            outs, out_tree = tree_flatten(out)
            touts, t_out_tree = tree_flatten(t_out)
            if out_tree != t_out_tree:
                raise TreeStructureError(
                    f"{names} must produce primal and tangent outputs with equal container "
                    f"(pytree) structures, but got {out_tree} and {t_out_tree} respectively.")
            _check_no_symbolic(touts)
            # (an integer output's float0 tangent is its symbolic zero)
            touts = [None if getattr(t, "dtype", None) == dtypes.FLOAT0 else t for t in touts]
            _check_tangent_types(outs, touts)
            fun.out_tree = out_tree
            return outs, touts

        outs = custom_jvp_call_p.bind(*flat, *extra, fun=fun, jvp=_Rule(jvp, f"{fun!r}_jvp"))
        return tree_unflatten(fun.out_tree, outs)


def _check_tangent_types(primals: Sequence[Any], tangents: Sequence[Any]) -> None:
    """A rule's tangents must have their primals' shapes and tangent dtypes (the primal's
    own for a float; an integer output may also take an integer zero): JAX's TypeError."""
    def short(dt: Any, shape: tuple[int, ...]) -> str:
        name = "float0" if dt == dtypes.FLOAT0 else np.dtype(dt).name
        return f"{name}[{','.join(map(str, shape))}]"

    bad = []
    for primal, tangent in zip(primals, tangents):
        if tangent is None:
            continue
        pa, ta = get_aval(primal), get_aval(tangent)
        inexact = dtypes.is_inexact(pa.dtype)
        if ta.shape != pa.shape or (inexact and ta.dtype != pa.dtype) or \
                (not inexact and dtypes.is_inexact(ta.dtype)):
            expected = pa.dtype if inexact else dtypes.FLOAT0
            bad.append((short(pa.dtype, pa.shape), short(expected, pa.shape),
                        short(ta.dtype, ta.shape)))
    if not bad:
        return
    if len(primals) == 1:
        (p, want, got), = bad
        raise TypeError(
            "Custom JVP rule must produce primal and tangent outputs with corresponding shapes "
            f"and dtypes. Expected {want} (tangent type of {p}) but got {got}.")
    raise TypeError(
        "Custom JVP rule must produce primal and tangent outputs with corresponding shapes and "
        "dtypes, but got:\n" + "\n".join(
            f"  primal {p} with tangent {got}, expecting tangent {want}" for p, want, got in bad))


# ------------------------------------------------------------------ custom_vjp

custom_vjp_call_p = _call_prim("custom_vjp_call")


_NO_FORWARD = "can't apply forward-mode autodiff (jvp) to a custom_vjp function."  # (JAX's)


def _custom_vjp_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
                    fun: Callable[..., Any], fwd: Callable[..., Any],
                    bwd: Callable[..., Any]) -> Any:
    # As JAX's: the tangent is linear in the input tangents but known only through its
    # transpose (bwd), so it is deferred (custom_lin). Transposed (a custom_jvp rule that
    # calls jvp of a custom_vjp function, under reverse mode) it runs bwd; evaluated, it
    # raises (no forward mode).
    nonzero = tuple(t is not None for t in tangents)
    outs, res = fwd(*primals, perturbed=nonzero)
    out_float = tuple(dtypes.is_inexact(get_aval(o).dtype) for o in outs)

    def transpose(cts: Sequence[Any]) -> list[Any]:
        it = iter(cts)
        full = [next(it) if fl else None for fl in out_float]
        in_cts = bwd(res, _cotangent_zeros(full, outs, bwd))
        return [c for c, nz in zip(in_cts, nonzero) if nz]

    out_avals = [get_aval(o).strip_weak() for o, fl in zip(outs, out_float) if fl]

    def lin_fun(*ts: Any) -> Any:
        raise NonDifferentiableError(_NO_FORWARD)

    def lin_fwd(*ts: Any, perturbed: Any = None) -> tuple[list[Any], Any]:
        if not _zero_tangents.depth:
            raise NonDifferentiableError(_NO_FORWARD)
        # Recorded at zero tangents (at_zero_tangents): a linear map's value there is 0.
        return [zeros_like_aval(a) for a in out_avals], None

    # The deferred linear map is itself a custom_vjp function (JAX's custom_lin): its
    # reverse mode is the transpose, its forward refused.
    touts = custom_vjp_call_p.bind(*(t for t in tangents if t is not None),
                                   fun=_Rule(lin_fun, f"{fun!r}_lin"),
                                   fwd=_Rule(lin_fwd, f"{fun!r}_lin_fwd"),
                                   bwd=_Rule(lambda _, cts: transpose(cts), f"{fun!r}_lin_bwd"))
    it = iter(touts)
    return list(outs), [next(it) if fl else None for fl in out_float]


def _cotangent_zeros(cts: Sequence[Any], outs: Sequence[Any], bwd: Any) -> list[Any]:
    """The cotangents a bwd rule is given: zeros, or SymbolicZero for a rule defined with
    ``symbolic_zeros=True``, where the engine has None."""
    if getattr(bwd, "symbolic_zeros", False):
        return _symbolic(cts, outs)
    return _instantiate(cts, outs)


def _custom_vjp_fwd(primals: Sequence[Any], *, fun: Callable[..., Any],
                    fwd: Callable[..., Any], bwd: Callable[..., Any]) -> Any:
    outs, res = fwd(*primals, perturbed=take_mask(len(primals)))

    def backward(cts: Sequence[Any]) -> list[Any]:
        return bwd(res, _cotangent_zeros(cts, outs, bwd))

    return outs, backward


def _custom_vjp_vjp(cts: Sequence[Any], primals: Sequence[Any], outs: Sequence[Any],
                    **params: Any) -> list[Any]:
    backward = _custom_vjp_fwd(primals, **params)[1]
    return list(backward(cts))


custom_vjp_call_p.jvp = _custom_vjp_jvp
custom_vjp_call_p.vjp = _custom_vjp_vjp
custom_vjp_call_p.vjp_reads = "x"
custom_vjp_call_p.describe(lax=None, fusion=None, cuda=None, ufunc=None, torch_method=None)
custom_vjp_call_p.vjp_fwd = _custom_vjp_fwd


def _custom_vjp_batch(args: Sequence[Any], dims: Sequence[Any], *, fun: Callable[..., Any],
                      fwd: Callable[..., Any], bwd: Callable[..., Any]) -> Any:
    size = batch_size(args, dims)

    def bfwd(*primals: Any, perturbed: Any = None) -> tuple[list[Any], Any]:
        leaves, tree = vmap_flat(lambda *a: fwd(*a, perturbed=perturbed), primals,
                                 [0] * len(primals), size)
        outs, res = tree_unflatten(tree, leaves)
        return list(outs), res

    def bbwd(res: Any, cts: list[Any]) -> list[Any]:
        res_leaves, res_tree = tree_flatten(res)
        n = len(res_leaves)
        # A symbolic zero is not batched: it stays outside, with one example's type.
        batched = [not isinstance(c, SymbolicZero) for c in cts]
        fixed = [None if b else SymbolicZero(c.aval.update(shape=c.shape[1:]))
                 for c, b in zip(cts, batched)]

        def call(*a: Any) -> Any:
            it = iter(a[n:])
            return bwd(tree_unflatten(res_tree, a[:n]),
                       [next(it) if b else z for b, z in zip(batched, fixed)])

        return _batched(call, size)(*res_leaves, *(c for c, b in zip(cts, batched) if b))

    bbwd_rule = _Rule(bbwd, f"{bwd!r}")
    bbwd_rule.symbolic_zeros = getattr(bwd, "symbolic_zeros", False)
    outs = custom_vjp_call_p.bind(*all_batched(args, dims), fun=_batched(fun, size),
                                  fwd=bfwd, bwd=bbwd_rule)
    return outs, [0] * len(outs)


custom_vjp_call_p.batch = _custom_vjp_batch


class custom_vjp:  # noqa: N801 - JAX's name
    """A function with a user-defined reverse-mode rule.

    ``fwd(*args) -> (out, residuals)``; ``bwd(residuals, ct) -> tuple`` with one
    cotangent per (differentiable) argument.

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> f = fg.custom_vjp(lambda x: x * 2.0)
    >>> f.defvjp(lambda x: (f(x), None), lambda res, g: (10.0 * g,))
    >>> fg.grad(f)(np.array(1.0))
    Array(10., dtype=float32)
    """

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None
        self.symbolic_zeros = False

    def __getattr__(self, name: str) -> Any:
        # As JAX's: the wrapped function's attributes show through (``def_vmap`` of a
        # custom_vmap inside, the composition JAX documents).
        fun = self.__dict__.get("fun")
        if fun is None:
            raise AttributeError(name)
        return getattr(fun, name)

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any],
               symbolic_zeros: bool = False, optimize_remat: bool = False) -> None:
        """Register the forward (with residuals) and backward functions. With
        ``symbolic_zeros=True`` each leaf of fwd's arguments is a :class:`CustomVJPPrimal`
        and bwd gets a :class:`SymbolicZero` for an output's zero cotangent
        (``optimize_remat`` is accepted: funcgrad always keeps fwd's residuals)."""
        self.fwd, self.bwd = fwd, bwd
        self.symbolic_zeros = symbolic_zeros

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.fwd is None or self.bwd is None:
            raise NoRuleError("No VJP defined for custom_vjp function "
                              f"{_fun_name(self.fun)} using defvjp.")
        args = _resolve_kwargs(self.fun, args, kwargs, "custom_vjp")
        static, dyn = _split_static(args, self.nondiff_argnums)
        if any(isinstance(x, Tracer) for v in static.values() for x in tree_flatten(v)[0]):
            from funcgrad.errors import UnexpectedTracerError  # noqa: PLC0415

            raise UnexpectedTracerError(
                "Found a JAX Tracer object passed as an argument to a custom_vjp function in a "
                "position indicated by nondiff_argnums as non-differentiable. Tracers cannot "
                "be passed as non-differentiable arguments to custom_vjp functions; instead, "
                "nondiff_argnums should only be used for arguments that can't be or contain "
                "JAX tracers, e.g. function-valued arguments. In particular, array-valued "
                "arguments should typically not be indicated as nondiff_argnums.\nSee "
                "https://docs.jax.dev/en/latest/errors.html#jax.errors.UnexpectedTracerError")
        flat, in_tree = _weak_scalars(tree_flatten(dyn))
        fun = _Flat(self.fun, static, in_tree)
        user_fwd, user_bwd = self.fwd, self.bwd
        in_avals = [get_aval(x) for x in flat]
        # The argument types, not the arguments: bwd lives on in staged programs' params,
        # and must not keep a finished trace's tracers alive.
        dyn_types = [([get_aval(x) for x in tree_flatten(a)[0]], tree_flatten(a)[1])
                     for a in dyn]
        n_dyn = len(dyn)

        symbolic = self.symbolic_zeros

        def fwd(*primals: Any, perturbed: Any = None) -> tuple[list[Any], Any]:
            if symbolic:
                mask = (True,) * len(primals) if perturbed is None else perturbed
                primals = tuple(CustomVJPPrimal(p, bool(m)) for p, m in zip(primals, mask))
            pair = user_fwd(*fun.args(primals))
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                fwd_name, name = _fun_name(user_fwd), _fun_name(self.fun)
                raise TypeError(
                    f"Custom VJP fwd rule {fwd_name} for function {name} must produce a pair "
                    "(list or tuple of length two) where the first element represents the "
                    f"primal output (equal to those of the custom_vjp-decorated function {name}) "
                    "and the second element represents residuals (i.e. values stored from the "
                    "forward pass for use on the backward pass), but instead of a pair the fwd "
                    f"rule {fwd_name} produced {pair}.")
            out, res = pair
            outs, fun.out_tree = tree_flatten(out)
            return outs, res

        def bwd(res: Any, cts: list[Any]) -> list[Any]:
            ct_tree = tree_unflatten(fun.out_tree, cts)
            in_cts = user_bwd(*static.values(), res, ct_tree)
            if isinstance(in_cts, list) and len(in_cts) == n_dyn:
                in_cts = tuple(in_cts)
            return _bwd_leaves(in_cts, dyn_types, in_avals)

        bwd_rule = _Rule(bwd, f"{fun!r}_bwd")
        bwd_rule.symbolic_zeros = symbolic
        outs = custom_vjp_call_p.bind(*flat, fun=fun, fwd=_Rule(fwd, f"{fun!r}_fwd"),
                                      bwd=bwd_rule)
        return tree_unflatten(fun.out_tree, outs)


class NoRuleError(NonDifferentiableError, AttributeError):
    """A custom_jvp/custom_vjp function called before its rule was defined (JAX raises an
    AttributeError)."""


def _signature(fun: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):
        return None


def _resolve_kwargs(fun: Any, args: tuple[Any, ...], kwargs: dict[str, Any], what: str
                    ) -> tuple[Any, ...]:
    """JAX's resolution of a custom_jvp/custom_vjp function's arguments to positional ones
    (defaults applied), with its errors."""
    sig = None if isinstance(fun, functools.partial) else _signature(fun)
    if sig is None:
        if kwargs:
            raise TypeError(f"The input arguments to the {what}-decorated function "
                            f"{_fun_name(fun)} could not be resolved to positional-only "
                            "arguments. Binding failed with the error:\ngot an unexpected "
                            f"keyword argument '{next(iter(kwargs))}'")
        return args
    try:
        ba = sig.bind(*args, **kwargs)
        ba.apply_defaults()
        passed = [k for k in ba.kwargs if k in kwargs]
        if passed:
            raise TypeError("The following keyword arguments could not be resolved to "
                            f"positions: {', '.join(passed)}")
    except TypeError as e:
        raise TypeError(f"The input arguments to the {what}-decorated function "
                        f"{_fun_name(fun)} could not be resolved to positional-only arguments. "
                        f"Binding failed with the error:\n{e}") from e
    return tuple(ba.args)


def _fun_name(f: Any) -> str:
    """A function's name as JAX's messages give it (a partial's function's name)."""
    while isinstance(f, functools.partial):
        f = f.func
    return str(getattr(f, "__name__", f))


def _bwd_leaves(in_cts: Any, dyn_types: list[tuple[list[ShapedArray], Any]],
                in_avals: list[ShapedArray]) -> list[Any]:
    """The flat cotangents of a custom_vjp bwd's output, checked as JAX checks them: a
    tuple with the arguments' structure, where None stands for zeros of any subtree
    (a whole argument or one leaf of it), each leaf shaped as its primal."""
    from funcgrad.tree_util import keystr, tree_flatten_with_path, tree_map  # noqa: PLC0415

    args_tree = tree_flatten(tuple(tree_unflatten(t, [0] * len(av)) for av, t in dyn_types))
    dummy = tree_unflatten(args_tree[1], [object()] * len(in_avals))
    flat: list[Any] = []

    def append(x: Any, d: Any) -> None:
        flat.extend([x] * len(tree_flatten(d)[0]))

    try:
        if not isinstance(in_cts, tuple):
            raise ValueError
        tree_map(append, in_cts, dummy, is_leaf=lambda x: x is None)
    except ValueError:
        # (a TypeError, as JAX's, and funcgrad's tree-structure error)
        raise TreeStructureError(
            "Custom VJP bwd rule must produce an output with the same container (pytree) "
            "structure as the args tuple of the primal function, and in particular must "
            "produce a tuple of length equal to the number of arguments to the primal "
            f"function, but got bwd output structure {tree_flatten(in_cts)[1]} for primal "
            f"input structure {args_tree[1]}.") from None
    paths = [kp for kp, _ in tree_flatten_with_path(dummy)[0]]
    out: list[Any] = []
    for kp, a, c in zip(paths, in_avals, flat):
        if c is None:
            out.append(zeros_like_aval(a))
            continue
        ca = get_aval(c)
        if ca.shape != a.shape:
            extra = ("the dtypes do not match, and the shapes do not match"
                     if ca.dtype != a.dtype else "the shapes do not match")
            raise ValueError(
                "Custom VJP bwd rule must produce an output with the same type as the args "
                f"tuple of the primal function, but at output{keystr(kp)} the bwd rule "
                f"produced an output of type {_str_short(ca)} corresponding to an input of "
                f"type {_str_short(a)}, so {extra}")
        out.append(c)
    return out


def _str_short(a: ShapedArray) -> str:
    return f"{a.dtype.name}[{','.join(str(d) for d in a.shape)}]"


# ------------------------------------------------------------------ checkpoint

checkpoint_p = _call_prim("checkpoint")


def _checkpoint_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
                    fun: Callable[..., Any]) -> Any:
    outs, touts, _ = jvp_flat(fun, primals, tangents)
    return outs, touts


def _checkpoint_fwd(primals: Sequence[Any], *, fun: Callable[..., Any]) -> Any:
    mask = take_mask(len(primals))
    policy = getattr(fun, "policy", None)
    if policy is not None:
        return _policy_fwd(primals, fun, policy, mask)
    # Run forward without recording; the backward pass records it again (rematerialises).
    outs = fun(*primals)

    def backward(cts: Sequence[Any]) -> list[Any]:
        # Operands not differentiated are symbolic zeros: constants of the recomputation.
        f, diff = fix_unwanted(fun, _recompute_from(primals), mask)
        _, _, bwd = vjp_flat(f, diff)
        return spread(bwd(list(cts)), mask)

    return outs, backward


def _recompute_from(primals: Sequence[Any]) -> list[Any]:
    """``primals`` through an identity ``jit`` call, when staged (``jit(grad(...))``): the
    backward recomputes from these new variables. Recomputed from the originals, the
    compiler would merge the recomputed equations with the forward's equal ones (common
    subexpressions), keeping the forward's intermediates alive until the backward: no
    memory saved (JAX's ``prevent_cse``). A call is never merged, and costs no copy."""
    if not any(isinstance(x, StagingTracer) for x in primals):
        return list(primals)
    from funcgrad.transforms.jit import jit_p  # noqa: PLC0415 - jit imports this module

    avals = tuple(get_aval(x) for x in primals)
    identity = _IDENTITIES.get(avals)
    if identity is None:
        identity = _IDENTITIES[avals] = trace_flat(lambda *xs: list(xs), avals)[0]
    return list(jit_p.bind(*primals, jaxpr=identity, name="checkpoint_inputs",
                           backend="auto"))


_IDENTITIES: dict[tuple[ShapedArray, ...], Any] = {}


# Per checkpoint being traced (innermost last): the jaxpr variables named by
# ``checkpoint_name`` and their names.
_naming: list[dict[Any, str]] = []


def name_value(x: Any, name: str) -> Any:
    """``checkpoint_name``: ``x`` itself; inside a checkpoint with a names policy, the
    policy may save it for the backward pass."""
    if _naming and isinstance(x, StagingTracer):
        _naming[-1][x._var] = name
    return x


class _NamePrimitive:
    """What a policy is asked about a named value (JAX's ``name`` primitive)."""

    name = "name"


_NAME = _NamePrimitive()


def _policy_fwd(primals: Sequence[Any], fun: Callable[..., Any], policy: Callable[..., bool],
                mask: Sequence[bool]) -> Any:
    """The forward of a checkpoint with a saving policy: its equations run one by one and
    the results the policy saves (``policy(primitive, *avals, **params)``, or for a value
    named by ``checkpoint_name``, ``policy(name, aval, name=...)``) are kept; the backward
    recomputes the rest from the inputs and the saved values."""
    _naming.append({})
    try:
        closed = trace_flat(fun, [get_aval(x) for x in primals])[0]
    finally:
        names = _naming.pop()
    jaxpr = closed.jaxpr
    keep: dict[int, list[int]] = {}
    for k, eqn in enumerate(jaxpr.eqns):
        avals = [a.aval for a in eqn.inputs]
        if policy(eqn.primitive, *avals, **eqn.params):
            keep[k] = list(range(len(eqn.outputs)))
        else:
            named = [j for j, v in enumerate(eqn.outputs)
                     if v in names and policy(_NAME, v.aval, name=names[v])]
            if named:
                keep[k] = named
    saved: dict[int, list[Any]] = {}

    def save(k: int, vals: list[Any]) -> list[Any]:
        if k in keep:
            saved[k] = [vals[j] for j in keep[k]]
        return vals

    outs = _run_jaxpr(closed, primals, save)

    def backward(cts: Sequence[Any]) -> list[Any]:
        # The saved values pass the barrier too: what is computed from them again must
        # not merge with the forward's equal equations either.
        order = sorted(saved)
        flat = _recompute_from([*primals, *(s for k in order for s in saved[k])])
        it = iter(flat[len(primals):])
        fresh = {k: [next(it) for _ in saved[k]] for k in order}

        def substituted(k: int, vals: list[Any]) -> list[Any]:
            if k not in fresh:
                return vals
            vals = list(vals)
            for j, s in zip(keep[k], fresh[k]):
                vals[j] = _use_saved(vals[j], s)
            return vals

        f, diff = fix_unwanted(lambda *xs: _run_jaxpr(closed, xs, substituted),
                               flat[:len(primals)], mask)
        _, _, bwd = vjp_flat(f, diff)
        return spread(bwd(list(cts)), mask)

    return outs, backward


def _run_jaxpr(closed: Any, args: Sequence[Any],
               after: Callable[[int, list[Any]], list[Any]]) -> list[Any]:
    """Evaluate ``closed`` under the current trace; ``after(k, outs)`` sees (and may
    replace) the results of equation ``k``."""
    from funcgrad.core import bind  # noqa: PLC0415

    jaxpr = closed.jaxpr
    env: dict[Any, Any] = dict(zip(jaxpr.constvars, closed.consts))
    env.update(zip(jaxpr.invars, args))

    def read(a: Any) -> Any:
        return a.arg if isinstance(a, Literal) else env[a]

    for k, eqn in enumerate(jaxpr.eqns):
        out = bind(eqn.primitive, *[read(a) for a in eqn.inputs], **eqn.params)
        outs = after(k, list(out) if eqn.primitive.multiple_results else [out])
        env.update(zip(eqn.outputs, outs))
    return [read(a) for a in jaxpr.outvars]


def _use_saved(recomputed: Any, saved: Any) -> Any:
    """``saved`` as the value, the derivative flowing on to ``recomputed``'s inputs: in a
    compiled backward nothing reads the recomputed value, so it is dropped as dead code."""
    return _saved_substitute(recomputed, saved)


@custom_vjp
def _saved_substitute(recomputed: Any, saved: Any) -> Any:
    return saved


_saved_substitute.defvjp(lambda recomputed, saved: (saved, None),
                         lambda _, ct: (ct, None))


checkpoint_p.jvp = _checkpoint_jvp
checkpoint_p.vjp_fwd = _checkpoint_fwd
checkpoint_p.vjp_reads = "x"
checkpoint_p.describe(lax=None, fusion=None, cuda=None, ufunc=None, torch_method=None)
checkpoint_p.vjp = lambda cts, primals, outs, fun: _checkpoint_vjp(cts, primals, fun)


def _checkpoint_vjp(cts: Sequence[Any], primals: Sequence[Any], fun: Callable[..., Any]
                    ) -> list[Any]:
    mask = tuple(wanted(i) for i in range(len(primals)))
    with offering_mask(mask):
        backward = _checkpoint_fwd(primals, fun=fun)[1]
    return list(backward(cts))


def _checkpoint_batch(args: Sequence[Any], dims: Sequence[Any], *, fun: Callable[..., Any]
                      ) -> Any:
    size = batch_size(args, dims)
    outs = checkpoint_p.bind(*all_batched(args, dims), fun=_batched(fun, size))
    return outs, [0] * len(outs)


checkpoint_p.batch = _checkpoint_batch


def checkpoint(fun: Callable[..., Any] | None = None, *, prevent_cse: bool = True,
               policy: Callable[..., bool] | None = None,
               static_argnums: int | tuple[int, ...] = ()) -> Any:
    """``fun`` whose intermediate values are recomputed in the backward pass, not stored.

    ``static_argnums`` arguments are Python values passed through; ``policy``
    (``funcgrad.checkpoint_policies``) says which intermediate values are saved for the
    backward pass instead: ``policy(primitive, *avals, **params)`` per operation, and
    ``policy(name, aval, name=...)`` for values named with
    ``funcgrad.ad_checkpoint.checkpoint_name`` (``everything_saveable`` saves everything,
    None or ``nothing_saveable`` saves nothing). The backward pass recomputes the rest;
    a compiled backward (``jit(grad(...))``) runs only what it needs of that
    recomputation. Usable as ``@checkpoint`` or ``checkpoint(policy=...)(f)``.

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> fg.grad(fg.checkpoint(lambda x: fg.numpy.sin(x)))(np.array(0.0))
    Array(1., dtype=float32)
    """
    if fun is None:
        return lambda f: checkpoint(f, prevent_cse=prevent_cse, policy=policy,
                                    static_argnums=static_argnums)
    if policy is not None and getattr(policy, "__name__", "") == "everything_saveable":
        return fun
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    @functools.wraps(fun)
    def wrapped(*args: Any) -> Any:
        n = len(args)
        fixed = {i % n: args[i % n] for i in static if -n <= i < n}
        dynamic = tuple(a for i, a in enumerate(args) if i not in fixed)

        def with_static(*dyn: Any) -> Any:
            it = iter(dyn)
            return fun(*[fixed[i] if i in fixed else next(it) for i in range(n)])

        flat, in_tree = tree_flatten(dynamic)
        f = _Flat(with_static, {}, in_tree)
        # Traced first, as JAX does: what ``fun`` closes over (a tracer of an enclosing
        # grad, jit or vmap included) becomes an explicit input of the checkpoint, so the
        # enclosing transformation sees it (closure conversion).
        _naming.append({})
        try:
            closed = trace_flat(f, [get_aval(x) for x in flat])[0]
        finally:
            names = _naming.pop()
        g = _Converted(closed, names, getattr(fun, "__name__", "fun"))
        if policy is not None and getattr(policy, "__name__", "") != "nothing_saveable":
            g.policy = policy
        outs = checkpoint_p.bind(*closed.consts, *flat, fun=g)
        return tree_unflatten(f.out_tree, outs)

    return wrapped


class _Converted:
    """A checkpointed function as its traced jaxpr, whose constants (closed-over values)
    come first among its inputs; values named by ``checkpoint_name`` are named again as
    it runs, so a names policy still sees them."""

    def __init__(self, closed: Any, names: dict[Any, str], name: str) -> None:
        j = closed.jaxpr
        self.opened = ClosedJaxpr(Jaxpr([*j.constvars, *j.invars], j.outvars, j.eqns), ())
        self.names = names
        self.name = name
        self.policy: Callable[..., bool] | None = None

    def __call__(self, *args: Any) -> list[Any]:
        names, eqns = self.names, self.opened.jaxpr.eqns
        if not names:
            return _run_jaxpr(self.opened, args, lambda k, outs: outs)
        return _run_jaxpr(self.opened, args, lambda k, outs: [
            name_value(o, names[v]) if v in names else o for o, v in zip(outs, eqns[k].outputs)])

    def __repr__(self) -> str:
        return self.name


remat = checkpoint


def custom_gradient(fun: Callable[..., Any]) -> Callable[..., Any]:
    """``fun(*args) -> (value, vjp)`` as a function whose gradient is ``vjp``: its reverse
    mode calls ``vjp(ct)`` for the cotangents of the positional arguments (a tuple), as
    ``jax.custom_gradient``.

    >>> import funcgrad as jax
    >>> @jax.custom_gradient
    ... def clipped(x):
    ...     return x * 2.0, lambda g: (g * 0.5,)
    >>> jax.grad(clipped)(3.0)
    Array(0.5, dtype=float32, weak_type=True)
    """
    @functools.wraps(fun)
    def primal(*args: Any) -> Any:
        return fun(*args)[0]

    f = custom_vjp(primal)

    def fwd(*args: Any) -> tuple[Any, Any]:
        value, vjp_fn = fun(*args)
        return value, _Opaque(vjp_fn)

    def bwd(res: Any, ct: Any) -> tuple[Any, ...]:
        cts = res.fn(ct)
        return tuple(cts) if isinstance(cts, (tuple, list)) else (cts,)

    f.defvjp(fwd, bwd)
    return f


class _Opaque:
    """A residual that is no array (custom_gradient's vjp function): a pytree leaf that is
    carried, not staged."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
