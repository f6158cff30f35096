"""``funcgrad.custom_batching``: functions with a user-defined ``vmap`` rule, as
``jax.custom_batching``.

A ``custom_vmap`` function binds the call primitive ``custom_vmap_call``: eagerly and
under ``jit`` it runs the function's body; under ``vmap`` its batch rule calls the user's
rule ``rule(axis_size, in_batched, *args) -> (out, out_batched)``; under ``jvp`` it binds
itself again on (primals, tangents), with the body's jvp as body and the rule's jvp as rule
(JAX's construction), so ``vmap(jvp(f))`` and ``jvp(vmap(f))`` both use the rule. As in JAX,
reverse mode is not defined: wrap the function in ``custom_vjp`` for that.

>>> import funcgrad as jax
>>> import funcgrad.numpy as jnp
>>> @jax.custom_batching.custom_vmap
... def f(x, y):
...     return x + y
>>> @f.def_vmap
... def f_vmap_rule(axis_size, in_batched, xs, ys):
...     return xs * ys, True
>>> jax.vmap(f)(jnp.arange(3), jnp.arange(1, 4))
Array([0, 2, 6], dtype=int32)
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from funcgrad.core import Primitive, get_aval
from funcgrad.errors import NonDifferentiableError
from funcgrad.ir import NamedFn, ShapedArray
from funcgrad.primitives.rules import batch_size, instantiate, move_to_front, with_batch
from funcgrad.staging import trace_flat
from funcgrad.transforms.jvp import jvp_flat
from funcgrad.tree_util import tree_flatten, tree_map, tree_unflatten

__all__ = ["custom_vmap", "sequential_vmap"]


class CustomVmapReverseModeError(NonDifferentiableError, ValueError):
    """Reverse-mode differentiation reached a ``custom_vmap`` function (JAX raises a
    ValueError at linearization; this is that ValueError and funcgrad's
    NonDifferentiableError at once)."""


def _abstract(*avals: ShapedArray, fun: Callable[..., Any], rule: Any) -> list[ShapedArray]:
    return trace_flat(fun, avals)[0].out_avals


custom_vmap_call_p = Primitive("custom_vmap_call", abstract_eval=_abstract,
                               impl=lambda xp, *args, fun, rule: list(fun(*args)),
                               multiple_results=True)
custom_vmap_call_p.call_like = True
# Compiled programs run the body's equations: the rule matters only to vmap.
custom_vmap_call_p.inline_param = "fun"


class _Body:
    """The user's function as ``flat args -> flat outs``, remembering the output tree."""

    def __init__(self, fun: Callable[..., Any], in_tree: Any) -> None:
        self.fun, self.in_tree = fun, in_tree
        self.out_tree: Any = None

    def __call__(self, *flat: Any) -> list[Any]:
        leaves, self.out_tree = tree_flatten(self.fun(*tree_unflatten(self.in_tree, flat)))
        return leaves

    def __repr__(self) -> str:
        return getattr(self.fun, "__name__", "fun")


class _FlatRule:
    """The user's rule on flat lists: ``(axis_size, in_batched, args) -> (outs, batched)``,
    its output checked against its batching specification and the body's output tree."""

    def __init__(self, rule: Callable[..., Any], body: _Body) -> None:
        self.rule, self.body = rule, body

    def __call__(self, axis_size: int, in_batched: Sequence[bool], args: Sequence[Any]
                 ) -> tuple[list[Any], list[bool]]:
        tree = self.body.in_tree
        out, out_batched = self.rule(axis_size, list(tree_unflatten(tree, list(in_batched))),
                                     *tree_unflatten(tree, list(args)))
        outs, out_tree = tree_flatten(out)
        flags, flags_tree = tree_flatten(out_batched)
        name = getattr(self.rule, "__name__", "<unnamed rule>")
        if out_tree != flags_tree:
            raise ValueError(
                "structure of output value and output batching specification returned by "
                f"custom vmap rule ({name}) do not match.\nOutput values: {out_tree}\n"
                f"Batching spec: {flags_tree}")
        if self.body.out_tree is not None and out_tree != self.body.out_tree:
            raise ValueError(
                f"structure of output returned by custom vmap rule ({name}) does not match "
                "that of original custom-vmapped function.\n"
                f"Original output: {self.body.out_tree}\nRule output: {out_tree}")
        return outs, [bool(b) for b in flags]

    def __repr__(self) -> str:
        return getattr(self.rule, "__name__", "rule")


def _batch(args: Sequence[Any], dims: Sequence[int | None], *, fun: Callable[..., Any],
           rule: Callable[..., Any]) -> tuple[list[Any], list[int | None]]:
    size = batch_size(args, dims)
    outs, flags = rule(size, [d is not None for d in dims],
                       [move_to_front(a, d) for a, d in zip(args, dims)])
    return outs, [0 if b else None for b in flags]


def _jvp(primals: Sequence[Any], tangents: Sequence[Any], *, fun: Callable[..., Any],
         rule: Callable[..., Any]) -> tuple[list[Any], list[Any]]:
    n = len(primals)
    tangents = [instantiate(t, get_aval(p)) for p, t in zip(primals, tangents)]

    def jvp_body(*pts: Any) -> list[Any]:
        outs, touts, _ = jvp_flat(fun, pts[:n], pts[n:])
        return [*outs, *(instantiate(t, get_aval(o)) for o, t in zip(outs, touts))]

    def jvp_rule(size: int, in_batched: Sequence[bool], args: Sequence[Any]
                 ) -> tuple[list[Any], list[bool]]:
        # A primal batched where its tangent is not (or the reverse) is broadcast, so the
        # rule sees each argument batched when its primal or its tangent is (JAX instead
        # calls the rule on the mutually batched ones and vmaps over the rest).
        both = [a or b for a, b in zip(in_batched[:n], in_batched[n:])]
        ps = [with_batch(x, None, size) if (b and not own) else x
              for x, b, own in zip(args[:n], both, in_batched[:n])]
        ts = [with_batch(x, None, size) if (b and not own) else x
              for x, b, own in zip(args[n:], both, in_batched[n:])]
        flags: list[bool] = []

        def primal_rule(*xs: Any) -> list[Any]:
            outs, out_flags = rule(size, both, list(xs))
            flags.extend(out_flags)
            return outs

        outs, touts, _ = jvp_flat(primal_rule, ps, ts)
        touts = [instantiate(t, get_aval(o)) for o, t in zip(outs, touts)]
        return [*outs, *touts], flags * 2

    outs = custom_vmap_call_p.bind(*primals, *tangents, fun=NamedFn(jvp_body, f"jvp({fun!r})"),
                                   rule=NamedFn(jvp_rule, f"jvp({rule!r})"))
    m = len(outs) // 2
    return list(outs[:m]), list(outs[m:])


def _no_reverse(*_: Any, fun: Callable[..., Any], rule: Any) -> Any:
    raise CustomVmapReverseModeError(
        f"reverse-mode differentiation (grad, vjp, jacrev) of the custom_vmap function "
        f"{fun!r} is not defined, as in JAX: a custom_vmap rule gives no transpose. Wrap the "
        "function in custom_vjp (outside the custom_vmap) to give it a gradient, or use "
        "forward mode (jvp, jacfwd).")


custom_vmap_call_p.jvp = _jvp
custom_vmap_call_p.vjp_fwd = lambda primals, **params: _no_reverse(**params)
custom_vmap_call_p.vjp = lambda cts, primals, outs, **params: _no_reverse(**params)
custom_vmap_call_p.vjp_reads = "x"
custom_vmap_call_p.batch = _batch
# custom_vmap is its API: the call primitive has no lax function.
custom_vmap_call_p.describe(lax=None, fusion=None, cuda=None, ufunc=None, torch_method=None)


class custom_vmap:  # noqa: N801 - JAX's name
    """A function whose behaviour under ``vmap`` is the rule given with ``def_vmap``.

    >>> import funcgrad as jax
    >>> import funcgrad.numpy as jnp
    >>> f = jax.custom_batching.custom_vmap(lambda x: x + 1.0)
    >>> _ = f.def_vmap(lambda n, batched, xs: (xs * 10.0, True))
    >>> f(jnp.float32(1.0)), jax.vmap(f)(jnp.ones(2))
    (Array(2., dtype=float32), Array([10., 10.], dtype=float32))
    """

    def __init__(self, fun: Callable[..., Any]) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule: Callable[..., tuple[Any, Any]] | None = None

    def def_vmap(self, vmap_rule: Callable[..., tuple[Any, Any]]
                 ) -> Callable[..., tuple[Any, Any]]:
        """Register ``rule(axis_size, in_batched, *args) -> (out, out_batched)``: the
        arguments come with their batch axis first (where ``in_batched`` says so), and
        ``out_batched`` is a pytree of bools with the output's structure."""
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = getattr(self.fun, "__name__", repr(self.fun))
        if kwargs:
            import inspect  # noqa: PLC0415

            try:
                bound = inspect.signature(self.fun).bind(*args, **kwargs)
            except TypeError as e:
                raise TypeError(
                    "The input arguments to the custom_vmap-decorated function "
                    f"{name} could not be resolved to positional-only arguments. Binding "
                    f"failed with the error:\n{e}") from e
            args = bound.args + tuple(bound.kwargs.values())
        if self.vmap_rule is None:
            raise AttributeError(
                f"No batching rule defined for custom_vmap function {name} using def_vmap.")
        flat, in_tree = tree_flatten(args)
        body = _Body(self.fun, in_tree)
        # The body is traced first, as in JAX: its output tree is known (and the rule's
        # checked against it) even when a vmap calls only the rule.
        trace_flat(body, [get_aval(x) for x in flat])
        outs = custom_vmap_call_p.bind(*flat, fun=body, rule=_FlatRule(self.vmap_rule, body))
        return tree_unflatten(body.out_tree, outs)


def sequential_vmap(f: Callable[..., Any]) -> custom_vmap:
    """``f`` as a ``custom_vmap`` whose batching runs ``f`` once per batch member
    (``lax.map``), for functions that have no batched form.

    >>> import funcgrad as jax
    >>> import funcgrad.numpy as jnp
    >>> g = jax.custom_batching.sequential_vmap(lambda x: x + 1)
    >>> jax.vmap(g)(jnp.arange(3))
    Array([1, 2, 3], dtype=int32)
    """
    from funcgrad.transforms.control_flow import map_  # noqa: PLC0415

    fun = custom_vmap(f)

    def rule(axis_size: int, in_batched: list[Any], *args: Any) -> tuple[Any, Any]:
        def one(mapped: list[Any]) -> Any:
            merged = tree_map(lambda b, m, a: m if b else a, in_batched, mapped, list(args))
            return f(*merged)

        mapped = tree_map(lambda b, a: a if b else None, in_batched, list(args))
        out = map_(one, mapped)
        return out, tree_map(lambda _: True, out)

    fun.def_vmap(rule)
    return fun
