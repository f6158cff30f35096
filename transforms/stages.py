"""The stages of a jitted call, as JAX names them: ``jit(f).trace(*args)`` gives a
:class:`Traced` (its jaxpr and output shapes), ``.lower()`` a :class:`Lowered` (the staged
program and its generated code), ``.compile()`` a :class:`Compiled` that runs on
arguments of the traced signature.

>>> import funcgrad as jax
>>> import funcgrad.numpy as jnp
>>> traced = jax.jit(lambda x: x * 2).trace(jnp.ones(2))
>>> traced.out_info
ShapeDtypeStruct(shape=(2,), dtype=float32)
>>> traced.lower().compile()(jnp.ones(2))
Array([2., 2.], dtype=float32)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.array import ArrayImpl, wrap
from funcgrad.conversion import asarray
from funcgrad.core import as_buffer, get_aval
from funcgrad.ir import ClosedJaxpr, ShapeDtypeStruct
from funcgrad.tree_util import PyTreeDef, tree_flatten


class Traced:
    """A jitted function staged for one signature: ``jaxpr``, ``out_info``, ``lower()``."""

    # (jit.py makes these; this module does not import it, so that the two form no cycle)
    def __init__(self, fun: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self._fun, self._args, self._kwargs = fun, args, kwargs
        closed, out_tree, _, backend = fun._staged(args, kwargs, abstract_ok=True)
        self.jaxpr: ClosedJaxpr = closed
        self._out_tree = out_tree
        self._backend = backend
        self.fun_name = getattr(fun.fun, "__name__", repr(fun.fun))
        _, self._in_tree, _, _ = fun._split(args, kwargs)
        self._donate = fun._donated_leaves(args, kwargs) if fun.donate_argnums or \
            fun.donate_argnames else ()

    @property
    def out_info(self) -> Any:
        """The outputs' shapes and dtypes (``ShapeDtypeStruct`` pytree)."""
        structs = [ShapeDtypeStruct(a.shape, a.dtype) for a in self.jaxpr.out_avals]
        return self._out_tree.unflatten(structs)

    @property
    def in_avals(self) -> Any:
        return list(self.jaxpr.in_avals)

    def lower(self) -> Lowered:
        return Lowered(self._fun.lower_program(*self._args, **self._kwargs), self._in_tree)


class Lowered:
    """The staged program of a :class:`Traced` (jit's ``Lowered``: ``jaxpr``,
    ``as_text()``, ``to_dot()``...); ``compile()`` gives a :class:`Compiled`."""

    def __init__(self, base: Any, in_tree: PyTreeDef) -> None:
        self._base = base
        self.in_tree = in_tree

    def __getattr__(self, name: str) -> Any:
        return getattr(self._base, name)

    def compile(self) -> Compiled:
        return Compiled(self, self._base.compile())


class Compiled:
    """A compiled program, called with arguments of the signature it was traced for
    (static arguments left out); other shapes or structures are a TypeError, as in JAX."""

    def __init__(self, lowered: Lowered, exe: Any) -> None:
        self._lowered = lowered
        self._exe = exe
        self.in_tree = lowered.in_tree

    @property
    def out_tree(self) -> Any:
        return self._lowered.out_tree.tree

    def as_text(self) -> str:
        return str(getattr(self._exe, "source", ""))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        leaves, tree = tree_flatten((list(args), kwargs))
        if tree != self.in_tree:
            raise TypeError(f"function compiled for {self.in_tree}, called with {tree}")
        avals = self._lowered.jaxpr.in_avals
        got = [get_aval(x) for x in leaves]
        bad = [(w, g) for w, g in zip(avals, got)
               if (w.shape, w.dtype) != (g.shape, g.dtype)]
        if bad:
            raise TypeError(
                "Argument types differ from the types for which this computation was "
                f"compiled: expected {bad[0][0].str_short()}, got {bad[0][1].str_short()}")
        bufs = [np.asarray(x, g.dtype) if dtypes.python_scalar(x) else as_buffer(asarray(x))
                for x, g in zip(leaves, got)]
        base = self._lowered._base
        donate = getattr(base, "donate", ())
        if donate:
            # As the jitted call: a donated buffer the program writes into is the Array's
            # alone (else copied first), and the donated Arrays it consumes are deleted.
            base.take_donations(leaves, bufs, self._exe)
        outs = self._exe(*bufs)
        del bufs
        if donate:
            for i in base.consumed():
                if type(leaves[i]) is ArrayImpl:
                    leaves[i].delete()
        return self._lowered.out_tree.unflatten(
            [o if type(o) is ArrayImpl else wrap(o, av)
             for o, av in zip(outs, self._lowered.jaxpr.out_avals)])


__all__ = ["Compiled", "Lowered", "Traced"]
