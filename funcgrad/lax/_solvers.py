"""``lax.custom_linear_solve`` and ``lax.custom_root``: solvers with implicit derivatives,
as JAX's.

``custom_linear_solve(matvec, b, solve, transpose_solve)`` is the call primitive
``linear_solve``: its value is ``solve(matvec, b)``, its forward derivative solves again
(``x' = A^{-1}(b' - A'x)``), and its reverse derivative is one ``transpose_solve`` (the
transposed system), so the solver itself is never differentiated. The values ``matvec``
closes over (a matrix, say) are made explicit operands, so derivatives reach them too.
``custom_root(f, guess, solve, tangent_solve)`` differentiates the root ``x*(p)`` of
``f(x; p) = 0`` by the implicit function theorem: ``x*' = -(df/dx)^{-1} df/dp p'``.

>>> import numpy as np
>>> import funcgrad as jax
>>> from funcgrad import lax
>>> a = np.array([[2.0, 1.0], [1.0, 3.0]])
>>> solve = lambda mv, b: jax.numpy.linalg.solve(a, b)
>>> lax.custom_linear_solve(lambda x: a @ x, np.array([1.0, 2.0]), solve, symmetric=True)
Array([0.19999999, 0.6       ], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from funcgrad import dtypes
from funcgrad.core import Primitive, Tracer, get_aval
from funcgrad.errors import NonDifferentiableError, TreeStructureError
from funcgrad.ir import NamedFn, ShapedArray
from funcgrad.numpy import asarray
from funcgrad.primitives.elementwise import stop_gradient
from funcgrad.primitives.rules import add_tangents, all_batched, batch_size, instantiate
from funcgrad.staging import trace_flat
from funcgrad.transforms.custom import custom_jvp
from funcgrad.transforms.jvp import jvp_flat
from funcgrad.transforms.vjp import vjp_flat
from funcgrad.transforms.vmap import vmap_flat
from funcgrad.tree_util import tree_flatten, tree_map, tree_structure, tree_unflatten

__all__ = ["custom_linear_solve", "custom_root"]


def _hoist(fun: Callable[..., Any], example: Sequence[Any]
           ) -> tuple[Callable[..., list[Any]], list[Any]]:
    """``fun(*flat) -> flat`` as ``converted(consts, flat)`` with the inexact arrays it closes
    over (outer tracers included) made explicit ``consts``: what derivatives must reach."""
    closed = trace_flat(lambda *xs: tree_flatten(fun(*xs))[0],
                        [get_aval(x) for x in example])[0]
    keep = [isinstance(c, Tracer) or (hasattr(c, "dtype") and dtypes.is_inexact(c.dtype))
            for c in closed.consts]
    # NumPy constants as the arrays tracing saw (64-bit ones become 32-bit in 32-bit mode).
    consts = [c if isinstance(c, Tracer) else asarray(c)
              for c, k in zip(closed.consts, keep) if k]

    def converted(cs: Sequence[Any], xs: Sequence[Any]) -> list[Any]:
        from funcgrad.staging import eval_jaxpr  # noqa: PLC0415

        it = iter(cs)
        full = [next(it) if k else c for c, k in zip(closed.consts, keep)]
        return list(eval_jaxpr(closed.jaxpr, *xs, consts=full))

    return converted, consts


def _abstract(*avals: ShapedArray, fun: Callable[..., Any], **_: Any) -> list[ShapedArray]:
    return trace_flat(fun, avals)[0].out_avals


linear_solve_p = Primitive("linear_solve", abstract_eval=_abstract,
                           impl=lambda xp, *args, fun, **_: list(fun(*args)),
                           multiple_results=True)
linear_solve_p.call_like = True
# Compiled programs run the solver's equations: the rules matter only to transformations.
linear_solve_p.inline_param = "fun"


def _bind(consts: Sequence[Any], b: Sequence[Any], *, matvec: Any, solve: Any, tsolve: Any,
          n_aux: int) -> list[Any]:
    n = len(consts)
    fun = NamedFn(lambda *a: solve(list(a[:n]), list(a[n:])), f"{solve!r}")
    return list(linear_solve_p.bind(*consts, *b, fun=fun, matvec=matvec, solve=solve,
                                    tsolve=tsolve, n_consts=n, n_aux=n_aux))


def _jvp(primals: Sequence[Any], tangents: Sequence[Any], *, fun: Any, matvec: Any,
         solve: Any, tsolve: Any, n_consts: int, n_aux: int) -> Any:
    params = dict(matvec=matvec, solve=solve, tsolve=tsolve, n_aux=n_aux)
    consts, b = list(primals[:n_consts]), list(primals[n_consts:])
    outs = _bind(consts, b, **params)
    x = outs[:len(b)]
    rhs = [instantiate(t, get_aval(v)) for t, v in zip(tangents[n_consts:], b)]
    c_dot = tangents[:n_consts]
    if any(t is not None for t in c_dot):
        # b' - A'x: the matrix's own change, applied to the solution.
        _, ax_dot, _ = jvp_flat(lambda *cs: matvec(list(cs), x), consts, list(c_dot))
        rhs = [r if t is None else add_tangents(r, -t) for r, t in zip(rhs, ax_dot)]
    x_dot = _bind(consts, rhs, **{**params, "n_aux": 0})
    return outs, [*x_dot, *([None] * n_aux)]


def _vecmat(matvec: Any, consts: Sequence[Any], like: Sequence[Any]) -> Any:
    """The transpose of ``x -> matvec(consts, x)``: ``ct -> A^T ct``."""
    def vm(cs: Sequence[Any], ct: Sequence[Any]) -> list[Any]:
        zeros = [instantiate(None, get_aval(v)) for v in like]
        _, _, back = vjp_flat(lambda *xs: matvec(list(cs), list(xs)), zeros)
        return [instantiate(g, get_aval(v)) for g, v in zip(back(list(ct)), like)]

    return vm


def _vjp(cts: Sequence[Any], primals: Sequence[Any], outs: Sequence[Any], *, fun: Any,
         matvec: Any, solve: Any, tsolve: Any, n_consts: int, n_aux: int) -> list[Any]:
    if tsolve is None:
        raise NonDifferentiableError(
            "reverse-mode differentiation of custom_linear_solve needs the transposed "
            "system's solver: pass transpose_solve=..., or symmetric=True when the linear "
            "map is its own transpose")
    consts, b = list(primals[:n_consts]), list(primals[n_consts:])
    x = list(outs[:len(b)])
    ct = [instantiate(c, get_aval(v)) for c, v in zip(cts[:len(b)], x)]
    vecmat = NamedFn(_vecmat(matvec, consts, x), f"transpose({matvec!r})")
    # The transposed system is again a linear solve (its own transpose is this one).
    u = _bind(consts, ct, matvec=vecmat, solve=tsolve, tsolve=solve, n_aux=0)
    c_cts: list[Any] = [None] * n_consts
    if n_consts:
        _, _, back = vjp_flat(lambda *cs: matvec(list(cs), x), consts)
        c_cts = [None if g is None else -g for g in back(u)]
    return [*c_cts, *u]


def _batched(fn: Callable[..., Any], size: int) -> NamedFn:
    """A flat ``(consts, xs) -> list`` function over arguments all batched on axis 0."""
    def run(cs: Sequence[Any], xs: Sequence[Any]) -> list[Any]:
        n = len(cs)
        return vmap_flat(lambda *a: fn(list(a[:n]), list(a[n:])), [*cs, *xs],
                         [0] * (n + len(xs)), size)[0]

    return NamedFn(run, f"vmap({fn!r})")


def _batch(args: Sequence[Any], dims: Sequence[int | None], *, fun: Any, matvec: Any,
           solve: Any, tsolve: Any, n_consts: int, n_aux: int) -> Any:
    size = batch_size(args, dims)
    args = all_batched(args, dims)
    outs = _bind(args[:n_consts], args[n_consts:], matvec=_batched(matvec, size),
                 solve=_batched(solve, size),
                 tsolve=None if tsolve is None else _batched(tsolve, size), n_aux=n_aux)
    return outs, [0] * len(outs)


linear_solve_p.jvp = _jvp
linear_solve_p.vjp = _vjp
linear_solve_p.vjp_reads = "x,y"
linear_solve_p.batch = _batch


def custom_linear_solve(matvec: Callable[[Any], Any], b: Any,
                        solve: Callable[[Callable[[Any], Any], Any], Any],
                        transpose_solve: Callable[[Callable[[Any], Any], Any], Any] | None = None,
                        symmetric: bool = False, has_aux: bool = False) -> Any:
    """``solve(matvec, b)``, a solution ``x`` of ``matvec(x) = b``, differentiated
    implicitly (JAX's ``lax.custom_linear_solve``): derivatives never go through the
    solver; reverse mode calls ``transpose_solve(vecmat, ct)`` (or ``solve`` when
    ``symmetric``). With ``has_aux``, ``solve`` returns ``(x, aux)`` and so does this.

    >>> import numpy as np
    >>> import funcgrad as jax
    >>> from funcgrad import lax
    >>> f = lambda b: lax.custom_linear_solve(lambda x: 4.0 * x, b, lambda mv, r: r / 4.0,
    ...                                       symmetric=True)
    >>> jax.grad(lambda b: f(b).sum())(np.ones(2, np.float32))
    Array([0.25, 0.25], dtype=float32)
    """
    b_flat, b_tree = tree_flatten(tree_map(asarray, b))
    mv, consts = _hoist(lambda *xs: matvec(tree_unflatten(b_tree, xs)), b_flat)
    m = len(consts)
    mv_out = tree_structure(tree_unflatten(b_tree, b_flat))
    aux_tree: list[Any] = []

    def user_solve(user: Callable[..., Any], transposed: bool) -> Callable[..., list[Any]]:
        def run(cs: Sequence[Any], bs: Sequence[Any]) -> list[Any]:
            # transpose_solve (and solve when symmetric, in reverse mode) is handed the
            # transposed map, vecmat, as in JAX: an iterative solver calls it.
            vm = _vecmat(mv, cs, bs) if transposed else None

            def mvec(v: Any) -> Any:
                flat = tree_flatten(v)[0]
                return tree_unflatten(b_tree, vm(cs, flat) if vm is not None else mv(cs, flat))

            out = user(mvec, tree_unflatten(b_tree, list(bs)))
            aux = None
            if has_aux:
                out, aux = out
            leaves, tree = tree_flatten(out)
            if tree != mv_out:
                raise TreeStructureError(
                    f"custom_linear_solve: solve returned a solution of structure {tree} for a "
                    f"right-hand side of structure {mv_out}; they must match")
            aux_leaves, t = tree_flatten(aux)
            aux_tree[:] = [t]
            return [*leaves, *aux_leaves]

        return run

    # What the solvers close over (outer tracers included) becomes operands too: the
    # derivatives do not reach them (only the matrix's values matter), as in JAX.
    users = [solve, solve if symmetric else transpose_solve]
    def hoist(u: Callable[..., Any], transposed: bool
              ) -> tuple[Callable[..., list[Any]], list[Any]]:
        run = user_solve(u, transposed)
        return _hoist(lambda *a: run(a[:m], a[m:]), [*consts, *b_flat])

    hoisted = [None if u is None else hoist(u, k == 1) for k, u in enumerate(users)]
    extra = [c for h in hoisted if h is not None for c in h[1]]
    offsets = [m, m + (0 if hoisted[0] is None else len(hoisted[0][1]))]

    def flat_solver(k: int) -> NamedFn | None:
        h = hoisted[k]
        if h is None:
            return None
        conv, own = h
        lo, hi = offsets[k], offsets[k] + len(own)
        name = getattr(users[k], "__name__", "solve")
        return NamedFn(lambda cs, bs: conv(cs[lo:hi], [*cs[:m], *bs]), name)

    matvec_flat = NamedFn(lambda cs, xs: mv(cs[:m], xs), getattr(matvec, "__name__", "matvec"))
    solve_fn, tsolve_fn = flat_solver(0), flat_solver(1)
    assert solve_fn is not None
    all_consts = [*consts, *extra]
    probe = trace_flat(lambda *a: solve_fn(list(a[:len(all_consts)]),
                                           list(a[len(all_consts):])),
                       [get_aval(v) for v in [*all_consts, *b_flat]])[0]
    n_aux = len(probe.out_avals) - len(b_flat)
    outs = _bind(all_consts, b_flat, matvec=matvec_flat, solve=solve_fn, tsolve=tsolve_fn,
                 n_aux=n_aux)
    x = tree_unflatten(b_tree, outs[:len(b_flat)])
    if has_aux:
        return x, tree_unflatten(aux_tree[0], outs[len(b_flat):])
    return x


linear_solve_p.describe(lax="custom_linear_solve", lax_fn=custom_linear_solve, fusion=None,
                        cuda=None, ufunc=None, torch_method=None)


def custom_root(f: Callable[[Any], Any], initial_guess: Any,
                solve: Callable[[Callable[[Any], Any], Any], Any],
                tangent_solve: Callable[[Callable[[Any], Any], Any], Any],
                has_aux: bool = False) -> Any:
    """A root of ``f`` found by ``solve(f, initial_guess)``, differentiated implicitly
    (JAX's ``lax.custom_root``): the derivative with respect to the values ``f`` closes
    over is ``-(df/dx)^{-1} df/dp``, with ``tangent_solve(g, y)`` solving the linear
    system ``g(x) = y`` for ``g = df/dx``; the solver is never differentiated.

    >>> import funcgrad as jax
    >>> from funcgrad import lax
    >>> def sqrt(a):
    ...     newton = lambda f, x0: lax.fori_loop(0, 20, lambda i, x: x - f(x) / (2 * x), x0)
    ...     return lax.custom_root(lambda x: x * x - a, 1.0, newton, lambda g, y: y / g(1.0))
    >>> float(jax.grad(sqrt)(4.0))
    0.25
    """
    g_flat, g_tree = tree_flatten(tree_map(asarray, initial_guess))
    f_conv, consts = _hoist(lambda *xs: f(tree_unflatten(g_tree, xs)), g_flat)

    def f_of(cs: Sequence[Any]) -> Callable[[Any], Any]:
        return lambda x: tree_unflatten(g_tree, f_conv(cs, tree_flatten(x)[0]))

    m = len(consts)
    out_trees: list[Any] = []

    def run_solve(*a: Any) -> list[Any]:
        out = solve(f_of(a[:m]), tree_unflatten(g_tree, list(a[m:])))
        x, aux = out if has_aux else (out, None)
        if tree_structure(x) != g_tree:
            raise TreeStructureError(
                f"custom_root: solve returned a root of structure {tree_structure(x)} for an "
                f"initial guess of structure {g_tree}; they must match")
        leaves, tree = tree_flatten((x, aux))
        out_trees[:] = [tree]
        return leaves

    # What the solver closes over (outer tracers included) is passed in, not captured;
    # the derivative does not reach it (as in JAX).
    s_conv, s_consts = _hoist(run_solve, [*consts, *g_flat])

    @custom_jvp
    def root(cs: tuple[Any, ...], ss: tuple[Any, ...], guess: list[Any]) -> Any:
        leaves = s_conv(list(ss), [*cs, *guess])
        return tree_map(stop_gradient, tree_unflatten(out_trees[0], leaves))

    @root.defjvp
    def root_jvp(primals: Any, tangents: Any) -> Any:
        cs, ss, guess = primals
        cs_dot = tangents[0]
        x, aux = root(cs, ss, guess)
        x_flat = tree_flatten(x)[0]
        # df/dp p' at the root, then x' = -(df/dx)^{-1} of it.
        _, rhs, _ = jvp_flat(lambda *c: f_conv(list(c), x_flat), list(cs), list(cs_dot))
        rhs = [instantiate(r, get_aval(v)) for r, v in zip(rhs, x_flat)]

        def dfdx(v: Any) -> Any:
            _, t, _ = jvp_flat(lambda *u: f_conv(list(cs), list(u)), x_flat,
                               tree_flatten(v)[0])
            return tree_unflatten(g_tree, [instantiate(a, get_aval(w))
                                           for a, w in zip(t, x_flat)])

        sol = tangent_solve(dfdx, tree_unflatten(g_tree, rhs))
        x_dot = tree_map(lambda s: -s, sol)
        return (x, aux), (x_dot, tree_map(lambda a: a * 0, aux))

    x, aux = root(tuple(consts), tuple(s_consts), g_flat)
    return (x, aux) if has_aux else x
