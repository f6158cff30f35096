"""Automatic batching: ``vmap``.

A batch tracer carries a value of the parent trace and the axis along which it
is batched. Every primitive has a batch rule that returns one vectorised
operation (a batched ``dot_general`` is one ``dot_general`` with a batch
dimension), so ``vmap(f)`` runs no Python loop over the batch.

>>> import numpy as np
>>> import funcgrad as fg
>>> fg.vmap(lambda v: v @ v)(np.arange(6.0).reshape(3, 2))
Array([ 1., 13., 41.], dtype=float32)
"""

from __future__ import annotations

import functools
import inspect
import operator
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes, processes
from funcgrad.core import (
    Primitive,
    Trace,
    Tracer,
    get_aval,
    jax_type_text,
    new_trace,
    set_current_trace,
)
from funcgrad.errors import ShapeError, TreeStructureError
from funcgrad.ir import ShapedArray
from funcgrad.primitives.rules import move_to_front, with_batch
from funcgrad.primitives.structural import transpose
from funcgrad.source_info import source_position, user_code_position, user_frame
from funcgrad.transforms._util import as_leaf_array
from funcgrad.tree_util import (
    PyTreeDef,
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_unflatten,
)


class BatchTracer(Tracer):
    __slots__ = ("val", "bdim", "_made_at")

    def __init__(self, trace: BatchTrace, val: Any, bdim: int) -> None:
        self._trace = trace
        self.val = val
        self.bdim = bdim
        # Where the user's code made it (JAX's BatchTracer.source_info), for its errors.
        self._made_at = user_code_position()

    def _origin_msg(self) -> str:
        if self._made_at is None:
            return ""
        return (f"\nThis BatchTracer with object id {id(self)} was created on line:"
                f"\n  {source_position(*self._made_at)}")

    @property
    def aval(self) -> ShapedArray:
        aval = get_aval(self.val)
        shape = aval.shape[:self.bdim] + aval.shape[self.bdim + 1:]
        return ShapedArray(shape, aval.dtype, aval.weak_type)

    def __repr__(self) -> str:
        return (f"VmapTracer(aval={jax_type_text(self.aval)}, "
                f"batched={jax_type_text(get_aval(self.val))})")


# The axis names of the batch rules running now (innermost last): vmap_flat called by a rule
# without an axis name of its own maps the rule's axis.
_RULE_AXIS: list[Any] = []
_INHERIT = object()


class BatchTrace(Trace):
    label = "vmap trace"

    def __init__(self, axis_size: int, axis_name: Any = None) -> None:
        self.axis_size = axis_size
        # The name collectives use for this mapped axis (vmap(..., axis_name=...)).
        self.axis_name = axis_name

    def lift(self, x: Any) -> tuple[Any, int | None]:
        if isinstance(x, BatchTracer) and x._trace is self:
            return x.val, x.bdim
        return x, None

    def _collective(self, prim: Primitive, rule: Any, vals: Sequence[Any],
                    dims: Sequence[Any], params: dict[str, Any], names: tuple[Any, ...]) -> Any:
        return _collective_here(self, prim, rule, vals, dims, params, names)

    def process_primitive(self, prim: Primitive, args: Sequence[Any],
                          params: dict[str, Any]) -> Any:
        vals, dims = [], []
        for a in args:
            v, d = self.lift(a)
            vals.append(v)
            dims.append(d)
        rule = getattr(prim, "axis_rule", None)
        if rule is not None and self.axis_name is not None:
            names = params["axis_name"]
            names = names if isinstance(names, tuple) else (names,)
            if self.axis_name in names:
                return self._collective(prim, rule, vals, dims, params, names)
        with set_current_trace(self.parent):  # type: ignore[arg-type]
            if all(d is None for d in dims):
                return prim.bind(*vals, **params)
            if prim.batch is None:
                from funcgrad.errors import FuncgradError  # noqa: PLC0415

                raise FuncgradError(f"primitive {prim.name} has no batching rule, so it cannot "
                                    f"be vmapped (at {user_frame()})")
            # A rule that batches a sub-program (jit, cond, loops) maps the same named axis.
            _RULE_AXIS.append(self.axis_name)
            try:
                out, out_dim = prim.batch(vals, dims, **params)
            finally:
                _RULE_AXIS.pop()
        if prim.multiple_results:
            out_dims = out_dim if isinstance(out_dim, (list, tuple)) else [out_dim] * len(out)
            return [o if d is None else BatchTracer(self, o, d) for o, d in zip(out, out_dims)]
        return out if out_dim is None else BatchTracer(self, out, out_dim)


def _collective_here(trace: BatchTrace, prim: Primitive, rule: Any, vals: Sequence[Any],
                     dims: Sequence[Any], params: dict[str, Any], names: tuple[Any, ...]
                     ) -> Any:
    """A collective over this trace's axis: the primitive's axis rule over the batch
    dimension, then the remaining axis names (if any) for the traces further out."""
    with set_current_trace(trace.parent):  # type: ignore[arg-type]
        x, d = (vals[0], dims[0]) if vals else (None, None)
        out, out_dim = rule(x, d, trace.axis_size, **params)
        rest = tuple(n for n in names if n != trace.axis_name)
        if rest and vals:
            out = prim.bind(out, **{**params, "axis_name": rest if len(rest) > 1 else rest[0]})
    return out if out_dim is None else BatchTracer(trace, out, out_dim)


def _broadcast_prefix(prefix: Any, tree: Any, what: str) -> list[Any]:
    """One axis spec per leaf of ``tree``, from a prefix tree of ints/None (any pytree
    node types, registered classes included, matched as JAX matches them)."""
    if prefix is None or isinstance(prefix, int):
        return [prefix] * len(tree_flatten(tree)[0])
    specs, prefix_def = tree_flatten(prefix, is_leaf=lambda x: x is None)
    try:
        subtrees = prefix_def.flatten_up_to(tree)
    except TreeStructureError:
        raise ShapeError(
            f"vmap {what} {prefix!r} does not match the structure of the values "
            f"{tree_flatten(tree)[1]}; give an int/None, or a tree with the same structure"
        ) from None
    out: list[Any] = []
    for spec, sub in zip(specs, subtrees):
        out.extend([spec] * len(tree_flatten(sub)[0]))
    return out


def _key_leaves(args: Any, n: int) -> list[bool]:
    """Which of the ``n`` leaves of ``args`` are the data of typed PRNG key arrays."""
    keys = sys.modules.get("funcgrad.random._keys")
    if keys is None:
        return [False] * n
    key_type = keys.KeyArray
    leaves = tree_flatten(args, is_leaf=lambda x: type(x) is key_type)[0]
    return [type(x) is key_type for x in leaves]


def _axis(spec: Any, ndim: int, what: str,
          shape: tuple[int, ...] | None = None) -> int | None:
    if spec is None:
        return None
    try:
        a = operator.index(spec)
    except TypeError:
        if what == "in_axes":
            raise ShapeError(
                "vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
                f"positional arguments passed to the function, but got {spec}.") from None
        raise ShapeError(f"vmap {what} entries must be int or None, got {spec!r}") from None
    if not -ndim <= a < ndim:
        if what == "out_axes":
            raise ShapeError(f"axis {a} is out of bounds for array of dimension {ndim}")
        raise ShapeError(
            f"vmap was requested to map its argument along axis {a}, which implies that its "
            f"rank should be at least {a + 1 if a >= 0 else -a}, but is only {ndim} (its "
            f"shape is {shape if shape is not None else ()})")
    return a % ndim


def _size_error(fun: Callable[..., Any], args: tuple[Any, ...], flat: Sequence[Any],
                dims: Sequence[int | None], axis_size: int | None) -> ShapeError:
    """JAX's error for mapped axes of several sizes, naming the arguments as JAX does."""
    kw_names: Sequence[str] = ()
    n_pos = len(args)
    if hasattr(fun, "_fg_vmap_kwargs"):  # keyword arguments moved to the end
        fun, n_pos, kw_names = fun._fg_vmap_kwargs
    try:
        params: list[str] | None = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        params = None
    names = []
    for path, _ in tree_flatten_with_path(args)[0]:
        i = path[0].idx
        if i >= n_pos:
            names.append(f"kwargs[{kw_names[i - n_pos]!r}]{keystr(path[1:])}")
        elif params is None or i >= len(params):
            names.append(f"args{keystr(path)}")
        else:
            names.append(f"argument {params[i]}{keystr(path[1:])}")
    sizes = [None if d is None else _shape(x)[d] for x, d in zip(flat, dims)]
    counts: dict[int, int] = {}
    for sz in sizes:
        if sz is not None:
            counts[sz] = counts.get(sz, 0) + 1
    lines = ["vmap got inconsistent sizes for array axes to be mapped:\n"]
    if axis_size is not None:
        lines.append(f"  * the `axis_size` argument was {axis_size};\n")
    ordered = sorted(counts.items(), key=lambda kv: -kv[1])  # stable: first seen first
    for k, (sz, ct) in enumerate(ordered):
        i = sizes.index(sz)
        x = flat[i]
        name = "float0" if _is_float0(x) else get_aval(x).dtype.name
        ex = (f"axis {dims[i]} of {names[i]} of type "
              f"{name}[{','.join(map(str, _shape(x)))}]")
        if ct == 1:
            lines.append(f"  * one axis had size {sz}: {ex};\n")
        else:
            lines.append(f"  * {'most' if k == 0 else 'some'} axes ({ct} of them) had size "
                         f"{sz}, e.g. {ex};\n")
    return ShapeError("".join(lines)[:-2])


def vmap(fun: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0,
         axis_name: Any = None, axis_size: int | None = None,
         spmd_axis_name: Any = None) -> Callable[..., Any]:
    """Vectorise ``fun`` over a batch axis of its arguments.

    ``in_axes`` and ``out_axes`` are ints, ``None`` (not batched / broadcast),
    or trees matching the arguments / outputs. ``axis_size`` is needed only
    when no argument is batched. ``axis_name`` names the mapped axis for the collectives
    (``lax.psum``, ``pmean``, ``pmax``, ``pmin``, ``axis_index``).

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> fg.vmap(lambda a, b: a * b, in_axes=(0, None))(np.arange(3.0), 2.0)
    Array([0., 2., 4.], dtype=float32)
    """

    @functools.wraps(fun)
    def batched(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            # As in JAX, keyword arguments are mapped over their leading axis.
            names = sorted(kwargs)
            n_pos = len(args)

            def with_kwargs(*all_args: Any) -> Any:
                return fun(*all_args[:n_pos], **dict(zip(names, all_args[n_pos:])))

            with_kwargs._fg_vmap_kwargs = (fun, n_pos, names)  # type: ignore[attr-defined]

            axes_all = (tuple(in_axes) if isinstance(in_axes, (tuple, list))
                        else (in_axes,) * n_pos) + (0,) * len(names)
            return vmap(with_kwargs, axes_all, out_axes, axis_name, axis_size)(
                *args, *(kwargs[k] for k in names))
        if isinstance(in_axes, (tuple, list)):
            if len(in_axes) != len(args):
                raise ShapeError(
                    "vmap in_axes must be an int, None, or a tuple of entries corresponding to "
                    "the positional arguments passed to the function, but got "
                    f"len(in_axes)={len(in_axes)}, len(args)={len(args)}")
            axes = [ax for spec, a in zip(in_axes, args)
                    for ax in _broadcast_prefix(spec, a, "in_axes")]
        else:
            axes = _broadcast_prefix(in_axes, args, "in_axes")
        flat, in_tree = tree_flatten(args)
        # As JAX, unmapped leaves pass through as they are (functions, strings, NumPy
        # arrays); mapped ones become arrays. A key array's axes are its key axes.
        keyed = _key_leaves(args, len(flat))
        flat = [x if s is None or _is_float0(x) else as_leaf_array(x)
                for s, x in zip(axes, flat)]
        dims = [None if s is None else
                _axis(s, len(_shape(x)) - (1 if k else 0), "in_axes",
                      _shape(x)[:len(_shape(x)) - (1 if k else 0)])
                for s, x, k in zip(axes, flat, keyed)]
        sizes = {_shape(x)[d] for x, d in zip(flat, dims) if d is not None}
        if len(sizes) > 1 or (sizes and axis_size is not None and axis_size not in sizes):
            raise _size_error(fun, args, flat, dims, axis_size)
        if sizes:
            size = sizes.pop()
        elif axis_size is not None:
            size = axis_size
        elif not flat:
            raise ShapeError("vmap wrapped function must be passed at least one argument "
                             "containing an array or axis_size must be specified, got empty "
                             f"*args={args} and **kwargs={{}}")
        else:
            raise ShapeError("vmap must have at least one non-None value in in_axes or "
                             "axis_size must be specified")
        out, out_tree = vmap_flat(lambda *xs: fun(*tree_unflatten(in_tree, xs)), flat, dims,
                                  size, out_axes, axis_name)
        return tree_unflatten(out_tree, out)

    return batched


def vmap_flat(fun: Callable[..., Any], flat: Sequence[Any], dims: Sequence[int | None],
              size: int, out_axes: Any = 0, axis_name: Any = _INHERIT
              ) -> tuple[list[Any], PyTreeDef]:
    """Batch ``fun(*flat) -> pytree`` with per-argument batch axes; outputs at ``out_axes``.
    Without ``axis_name``, a batch rule's sub-program maps the axis of the rule's trace."""
    if axis_name is _INHERIT:
        axis_name = _RULE_AXIS[-1] if _RULE_AXIS else None
    trace = BatchTrace(size, axis_name)
    with new_trace(trace), processes.bind_axis(axis_name, size):
        # float0 zeros (tangents of integers) carry only a shape: each element gets its own.
        ins = [x if d is None else dtypes.float0_zeros(np.shape(x)[:d] + np.shape(x)[d + 1:])
               if _is_float0(x) else BatchTracer(trace, x, d) for x, d in zip(flat, dims)]
        out = fun(*ins)
        leaves, out_tree = tree_flatten(out)
        lifted = [(x, None) if _is_float0(x) else trace.lift(x) for x in leaves]
    out_specs = _broadcast_prefix(out_axes, tree_unflatten(out_tree, [0] * len(leaves)),
                                  "out_axes")
    results = []
    for i, ((v, d), spec) in enumerate(zip(lifted, out_specs)):
        if _is_float0(v):
            # float0 zeros (the gradient of an integer input) carry only a shape.
            shape = list(np.shape(v))
            at = _axis(spec, len(shape) + 1, "out_axes")
            if at is not None:
                shape.insert(at, size)
            results.append(dtypes.float0_zeros(tuple(shape)))
            continue
        if spec is None:
            if d is not None:
                raise _mapped_output_error(out_tree, i, d, axis_name)
            results.append(v)
            continue
        v = with_batch(as_leaf_array(v), d, size) if d is None else v
        nd = get_aval(v).ndim
        target = _axis(spec, nd, "out_axes")
        results.append(_move_axis(v, 0 if d is None else d, target))
    return results, out_tree


class MappedOutputError(ShapeError):
    """An output batched where ``out_axes`` says ``None``. The message is the engine's own
    (funcgrad.torch.func matches it to give PyTorch's error); ``jax_message`` is JAX's,
    which the JAX face's ``vmap`` raises."""

    jax_message: str


def _mapped_output_error(out_tree: PyTreeDef, i: int, d: int,
                         axis_name: Any) -> MappedOutputError:
    e = MappedOutputError("vmap out_axes=None for an output that depends on the mapped "
                          "axis; give it an int out axis")
    if axis_name is not None:
        e.jax_message = (f"vmap has mapped output (axis_name={axis_name}) but out_axes is "
                         "None")
    else:
        paths = [p for p, _ in tree_flatten_with_path(
            tree_unflatten(out_tree, [0] * out_tree.num_leaves))[0]]
        e.jax_message = (f"at vmap out_axes{keystr(paths[i])}, got axis spec None but "
                         f"output was batched on axis {d}")
    return e


def jax_vmap(fun: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0,
             axis_name: Any = None, axis_size: int | None = None,
             spmd_axis_name: Any = None) -> Callable[..., Any]:
    """The JAX face's ``vmap``: :func:`vmap` with JAX's message for an output batched
    where ``out_axes`` says ``None``.

    >>> import numpy as np
    >>> jax_vmap(lambda a: a + 1)(np.arange(2.0))
    Array([1., 2.], dtype=float32)
    """
    batched = vmap(fun, in_axes, out_axes, axis_name, axis_size, spmd_axis_name)

    @functools.wraps(batched)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return batched(*args, **kwargs)
        except MappedOutputError as e:
            raise ShapeError(e.jax_message) from None

    return run


def _is_float0(x: Any) -> bool:
    return isinstance(x, np.ndarray) and x.dtype == dtypes.FLOAT0


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(np.shape(x)) if _is_float0(x) else get_aval(x).shape


def _move_axis(x: Any, src: int, dst: int | None) -> Any:
    if dst is None or src == dst:
        return x
    x = move_to_front(x, src)
    nd = get_aval(x).ndim
    order = list(range(1, nd))
    order.insert(dst, 0)
    return transpose(x, order)


jax_vmap.__name__ = jax_vmap.__qualname__ = "vmap"
