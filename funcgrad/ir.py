"""The typed IR: abstract values, variables, equations and jaxprs, and their printer.

>>> import numpy as np
>>> from funcgrad.ir import ShapedArray
>>> ShapedArray((2, 3), np.dtype("float32")).str_short()
'f32[2,3]'
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Union

import numpy as np

from funcgrad import dtypes
from funcgrad.var_names import Namer


class HasShape:
    """``ndim`` and ``size`` of anything with a ``shape`` tuple (avals, shape structs, keys)."""

    __slots__ = ()
    shape: tuple[int, ...]

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)


class ShapedArray(HasShape):
    """What tracing knows of an array: its shape, dtype and weak-typedness."""

    __slots__ = ("shape", "dtype", "weak_type", "_hash")
    _hash: int

    def __init__(self, shape: Sequence[int], dtype: Any, weak_type: bool = False) -> None:
        self.shape: tuple[int, ...] = tuple(int(d) for d in shape)
        self.dtype: np.dtype[Any] = np.dtype(dtype)
        self.weak_type = bool(weak_type)

    @classmethod
    def make(cls, shape: tuple[int, ...], dtype: np.dtype[Any], weak_type: bool = False
             ) -> ShapedArray:
        """Construct from an already canonical shape tuple and dtype (the hot path)."""
        aval = cls.__new__(cls)
        aval.shape, aval.dtype, aval.weak_type = shape, dtype, weak_type
        return aval

    def update(self, shape: Sequence[int] | None = None, dtype: Any = None,
               weak_type: bool | None = None) -> ShapedArray:
        return ShapedArray(
            self.shape if shape is None else shape,
            self.dtype if dtype is None else dtype,
            self.weak_type if weak_type is None else weak_type,
        )

    def strip_weak(self) -> ShapedArray:
        return self if not self.weak_type else ShapedArray(self.shape, self.dtype)

    def str_short(self) -> str:
        return f"{dtypes.short_name(self.dtype)}[{','.join(map(str, self.shape))}]"

    def __eq__(self, other: object) -> bool:
        return self is other or (
            isinstance(other, ShapedArray)
            and self.shape == other.shape
            and self.dtype == other.dtype
            and self.weak_type == other.weak_type
        )

    def __hash__(self) -> int:
        # Avals key the shape-rule and compilation caches, looked up at every eager op: the
        # hash is computed once (an aval is never changed after it is made).
        try:
            return self._hash
        except AttributeError:
            h = self._hash = hash((self.shape, self.dtype, self.weak_type))
            return h

    def __str__(self) -> str:
        """JAX's form: ``float32[2,3]``, ``~float32[]`` when weakly typed."""
        return f"{'~' if self.weak_type else ''}{self.dtype.name}[{','.join(map(str, self.shape))}]"

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.dtype.name}[{','.join(map(str, self.shape))}]{weak})"


class Var:
    """A variable of a jaxpr; identity is the variable (names come at print time)."""

    __slots__ = ("aval", "count")
    _counter = 0

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval
        Var._counter += 1
        self.count = Var._counter

    def __repr__(self) -> str:
        return f"Var#{self.count}:{self.aval.str_short()}"


class Literal:
    """A scalar constant written inline in a jaxpr."""

    __slots__ = ("val", "aval", "arg")

    def __init__(self, val: Any, aval: ShapedArray, arg: Any = None) -> None:
        self.val = val
        self.aval = aval
        # What evaluating the jaxpr binds for it (a weakly typed Array for a weak literal),
        # made once here rather than at every read.
        self.arg = val if arg is None else arg

    def __repr__(self) -> str:
        return f"Literal({self.val!r})"

    def pretty(self) -> str:
        v = self.val.item() if hasattr(self.val, "item") else self.val
        return f"{v!r}:{self.aval.str_short()}"


Atom = Union[Var, Literal]  # noqa: UP007 - a runtime alias on Python 3.10


class Params(Mapping[str, Any]):
    """An immutable, hashable parameter mapping of an equation."""

    __slots__ = ("_items", "_dict", "_hash")

    def __init__(self, items: Mapping[str, Any] | None = None) -> None:
        d = dict(items or {})
        self._dict = d
        self._items = tuple(sorted(d.items()))
        self._hash: int | None = None

    def __getitem__(self, key: str) -> Any:
        return self._dict[key]

    def __iter__(self) -> Iterator[str]:
        return iter(k for k, _ in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(self._items)
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Params):
            return self._items == other._items
        return isinstance(other, Mapping) and dict(other) == self._dict

    def __repr__(self) -> str:
        return f"Params({self._dict!r})"


class Eqn:
    """``outputs = primitive[params] inputs``."""

    __slots__ = ("primitive", "inputs", "params", "outputs", "source")

    def __init__(self, primitive: Any, inputs: Sequence[Atom], params: Mapping[str, Any],
                 outputs: Sequence[Var], source: str = "") -> None:
        self.primitive = primitive
        self.inputs: tuple[Atom, ...] = tuple(inputs)
        self.params = params if isinstance(params, Params) else Params(params)
        self.outputs: tuple[Var, ...] = tuple(outputs)
        self.source = source

    def __repr__(self) -> str:
        return f"Eqn({self.primitive.name}, {self.inputs}, {dict(self.params)}, {self.outputs})"


class Jaxpr:
    """A typed, first-order program: ``{ lambda constvars ; invars. let eqns in outvars }``."""

    __slots__ = ("constvars", "invars", "outvars", "eqns")

    def __init__(self, invars: Sequence[Var], outvars: Sequence[Atom], eqns: Sequence[Eqn],
                 constvars: Sequence[Var] = ()) -> None:
        self.constvars: tuple[Var, ...] = tuple(constvars)
        self.invars: tuple[Var, ...] = tuple(invars)
        self.outvars: tuple[Atom, ...] = tuple(outvars)
        self.eqns: tuple[Eqn, ...] = tuple(eqns)

    @property
    def in_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.invars]

    @property
    def out_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.outvars]

    def __str__(self) -> str:
        return pp_jaxpr(self)

    __repr__ = __str__


class ClosedJaxpr:
    """A jaxpr with its constants bound."""

    __slots__ = ("jaxpr", "consts", "__weakref__")

    def __init__(self, jaxpr: Jaxpr, consts: Sequence[Any] = ()) -> None:
        if len(consts) != len(jaxpr.constvars):
            raise ValueError(
                f"ClosedJaxpr needs {len(jaxpr.constvars)} consts, got {len(consts)}"
            )
        self.jaxpr = jaxpr
        self.consts: tuple[Any, ...] = tuple(consts)

    @property
    def in_avals(self) -> list[ShapedArray]:
        return self.jaxpr.in_avals

    @property
    def out_avals(self) -> list[ShapedArray]:
        return self.jaxpr.out_avals

    @property
    def eqns(self) -> tuple[Eqn, ...]:
        return self.jaxpr.eqns

    def __str__(self) -> str:
        return pp_jaxpr(self.jaxpr)

    __repr__ = __str__

    def to_dot(self) -> str:
        """Graphviz DOT text of the program (see :mod:`funcgrad.visualize`)."""
        from funcgrad import visualize
        return visualize.to_dot(self)

    def render(self, path: str) -> str:
        """Draw the program to ``path`` (SVG, PNG, PDF by suffix); needs ``funcgrad[viz]``."""
        from funcgrad import visualize
        return visualize.render(self, path)

    def _repr_svg_(self) -> str | None:
        from funcgrad import visualize
        return visualize.svg(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        from funcgrad import visualize
        bundle = {"text/plain": str(self)}
        picture = visualize.svg(self)
        if picture is not None:
            bundle["image/svg+xml"] = picture
        return bundle

    # Identity hashing keeps ClosedJaxpr usable as a param: consts are arrays.
    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other


def _has_effects(value: Any) -> bool:
    """Whether a jaxpr (or a param holding jaxprs) runs an effectful primitive."""
    if isinstance(value, ClosedJaxpr):
        value = value.jaxpr
    if isinstance(value, Jaxpr):
        return any(has_effects(e) for e in value.eqns)
    if isinstance(value, (tuple, list)):
        return any(_has_effects(v) for v in value)
    return False


def has_effects(eqn: Eqn) -> bool:
    """Whether ``eqn`` has a side effect: its primitive is effectful (``debug_callback``), or
    it calls a jaxpr that has one (``jit``, control flow). Such equations are never dead."""
    if getattr(eqn.primitive, "effectful", False):
        return True
    return any(_has_effects(v) for v in eqn.params.values())


def use_counts(eqns: Sequence[Eqn], outvars: Sequence[Atom] = ()) -> dict[Var, int]:
    """How many times each variable is read by ``eqns`` and listed in ``outvars``.

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> j = fg.make_jaxpr(lambda x: x * x + 1.0)(np.ones(2)).jaxpr
    >>> sorted(use_counts(j.eqns, j.outvars).values())
    [1, 1, 2]
    """
    uses: dict[Var, int] = {}
    for e in eqns:
        for a in e.inputs:
            if isinstance(a, Var):
                uses[a] = uses.get(a, 0) + 1
    for a in outvars:
        if isinstance(a, Var):
            uses[a] = uses.get(a, 0) + 1
    return uses


def live_equations(jaxpr: Jaxpr) -> list[Eqn]:
    """The equations whose results reach the outputs, or that have side effects (see
    :func:`has_effects`), in order (dead code dropped)."""
    live = {v for v in jaxpr.outvars if isinstance(v, Var)}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        if any(o in live for o in eqn.outputs) or has_effects(eqn):
            kept.append(eqn)
            live.update(a for a in eqn.inputs if isinstance(a, Var))
    return kept[::-1]


# ---------------------------------------------------------------- printer

class _Namer(Namer):
    def atom(self, a: Atom) -> str:
        if isinstance(a, Literal):
            return a.pretty()
        return self._names.get(a) or self.bind(a)


def _pp_param(value: Any, namer: _Namer, indent: int) -> str:
    if isinstance(value, ClosedJaxpr):
        value = value.jaxpr
    if isinstance(value, Jaxpr):
        return _pp(value, namer, indent + 4)
    if isinstance(value, np.dtype):
        return str(value.name)
    if isinstance(value, enum.IntEnum):
        return str(int(value))  # as JAX prints enum params (fft_type=2)
    if isinstance(value, tuple) and value and all(isinstance(v, (Jaxpr, ClosedJaxpr))
                                                 for v in value):
        return "(" + " ".join(_pp_param(v, namer, indent) for v in value) + ")"
    return repr(value)


def _pp(jaxpr: Jaxpr, namer: _Namer, indent: int) -> str:
    pad = " " * indent
    consts = " ".join(namer.decl(v) for v in jaxpr.constvars)
    ins = " ".join(namer.decl(v) for v in jaxpr.invars)
    lines = [f"{{ lambda {consts}{' ' if consts else ''}; {ins}. let"]
    for eqn in jaxpr.eqns:
        params = ""
        if eqn.params:
            params = "[" + " ".join(
                f"{k}={_pp_param(v, namer, indent + 4)}" for k, v in eqn.params.items()
            ) + "]"
        args = " ".join(namer.atom(a) for a in eqn.inputs)
        # An equation without results (an effect) prints without ``=``, as in JAX.
        outs = "".join(namer.decl(v) + " " for v in eqn.outputs)
        eq = "= " if outs else ""
        lines.append(f"{pad}    {outs}{eq}{eqn.primitive.name}{params} {args}".rstrip())
    outs = ", ".join(namer.atom(a) for a in jaxpr.outvars)
    trailing = "," if len(jaxpr.outvars) == 1 else ""
    lines.append(f"{pad}  in ({outs}{trailing}) }}")
    return "\n".join(lines)


def pp_jaxpr(jaxpr: Jaxpr) -> str:
    """The JAX-like text of a jaxpr."""
    return _pp(jaxpr, _Namer(), 0)


class NamedFn:
    """A function carried as an equation parameter, printed by a stable name (a closure's
    repr would print its address).

    >>> NamedFn(abs, "magnitude")
    magnitude
    """

    def __init__(self, fn: Callable[..., Any], name: str) -> None:
        self.fn, self.name = fn, name

    def __call__(self, *args: Any) -> Any:
        return self.fn(*args)

    def __repr__(self) -> str:
        return self.name


class ShapeDtypeStruct(HasShape):
    """A shape and a dtype standing for an array (``eval_shape``'s inputs and outputs).

    >>> import numpy as np
    >>> ShapeDtypeStruct((2,), np.float32).ndim
    1
    """

    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape: Any, dtype: Any, weak_type: bool = False) -> None:
        self.shape = tuple(int(d) for d in shape)
        # (an extended dtype, typed keys', is kept as it is: it is no NumPy dtype)
        self.dtype = dtype if isinstance(dtype, dtypes.ExtendedDType) else \
            np.dtype(dtypes.to_dtype(dtype))
        self.weak_type = bool(weak_type)

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ShapeDtypeStruct) and (self.shape, self.dtype,
                                                        self.weak_type) == (
            other.shape, other.dtype, other.weak_type)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.weak_type))
