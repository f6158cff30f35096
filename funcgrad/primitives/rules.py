"""Helpers that build primitives and their transform rules from small pieces.

Rule signatures (single-result primitives; multiple-result ones use lists):

- ``jvp(primals, tangents, **params) -> (primal_out, tangent_out)``; a tangent of
  ``None`` is a symbolic zero, in and out.
- ``vjp(ct, primals, out, **params) -> list`` of input cotangents, ``None`` for zero.
  It is only called with a non-zero ``ct``.
- ``batch(args, dims, **params) -> (out, out_dim)``; a dim of ``None`` means
  "not batched".

Rules are written with funcgrad operations, so they are themselves traceable.

>>> from funcgrad.primitives.rules import add_tangents
>>> add_tangents(None, None) is None
True
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.array import ArrayImpl, wrap
from funcgrad.config import CHECK_VALUES
from funcgrad.core import UNSET, EvalTrace, Primitive, Tracer, _ctx, get_aval
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.ir import ShapedArray

Rule = Callable[..., Any]


class _DefinedLater:
    """Operations the rules call that are defined by modules importing this one
    (funcgrad.primitives.elementwise sets ``mul`` and ``add`` as it loads): the rules read
    them here rather than import them at every call (an import statement inside a rule
    costs about as much as the eager arithmetic it is for)."""

    mul: Callable[[Any, Any], Any]
    add: Callable[[Any, Any], Any]


later = _DefinedLater()


class _Wanted(threading.local):
    def __init__(self) -> None:
        self.mask: tuple[bool, ...] | None = None


_wanted = _Wanted()


def wanted(i: int) -> bool:
    """Whether the reverse engine needs the cotangent of operand ``i`` of the rule it is
    running (a hint: a rule may skip work for the others, or compute it anyway)."""
    mask = _wanted.mask
    return mask is None or i >= len(mask) or mask[i]


class wanting:  # noqa: N801 - used like a function: ``with wanting(mask):``
    """Set the :func:`wanted` mask while one vjp rule runs."""

    __slots__ = ("mask", "prev")

    def __init__(self, mask: tuple[bool, ...]) -> None:
        self.mask = mask

    def __enter__(self) -> None:
        self.prev = _wanted.mask
        _wanted.mask = self.mask

    def __exit__(self, *exc: object) -> None:
        _wanted.mask = self.prev


def full(shape: Sequence[int], value: Any, dtype: Any) -> Any:
    """An array of ``shape`` filled with ``value`` (a broadcast of one scalar)."""
    scalar = np.asarray(value, dtype=dtype)
    if not len(shape):
        return scalar
    from funcgrad.primitives.structural import broadcast_in_dim  # noqa: PLC0415

    return broadcast_in_dim(scalar, tuple(shape), ())


def place_like(const: np.ndarray, x: Any) -> Any:
    """A host constant of a rule on the device of ``x``'s value, where that is known and on a
    GPU (eager evaluation, under jvp/vjp/vmap of eager values); else the host array, which
    tracing for ``jit`` bakes into the program (uploaded once, at compile time). The result
    is fresh memory of its own (it may become a result that the PyTorch face writes into).

    >>> place_like(np.eye(2), np.zeros((2, 2))).tolist()  # a host value: stays on the host
    [[1.0, 0.0], [0.0, 1.0]]
    """
    return place_on(const, gpu_of(x))


def gpu_of(x: Any) -> int | None:
    """The GPU holding ``x``'s value (looking through transform tracers), or None."""
    v = x
    while isinstance(v, Tracer):
        # the value behind transform tracers: a jvp/vjp primal, a vmap batch value
        nxt = getattr(v, "primal", None)
        if nxt is None:
            nxt = getattr(v, "val", None)
        if nxt is None:
            return None
        v = nxt
    buf = getattr(v, "_value", v)
    if isinstance(buf, np.ndarray) or not type(buf).__module__.startswith("cupy"):
        return None
    return int(buf.device.id)


def place_on(const: np.ndarray, gpu: int | None) -> Any:
    """``const`` on GPU ``gpu`` (fresh device memory), or itself for None."""
    if gpu is None:
        return const
    with _cupy().cuda.Device(gpu):
        if const.size and not any(const.strides):
            # A constant fill (a seed, ones, zeros) is made by a fill, not uploaded.
            # (a Python number: CuPy takes it for any dtype, bfloat16 included)
            return _cupy().full(const.shape, const.reshape(-1)[0].item(), const.dtype)
        return _cupy().asarray(const)


def _cupy() -> Any:
    import cupy  # noqa: PLC0415 - only where device values exist

    return cupy


def zeros_like_aval(aval: ShapedArray) -> Any:
    return full(aval.shape, 0, aval.dtype)


def zeros_like(x: Any) -> Any:
    return zeros_like_aval(get_aval(x))


def instantiate(t: Any, aval: ShapedArray) -> Any:
    """Turn a symbolic zero into real zeros of ``aval``."""
    return zeros_like_aval(aval) if t is None else t


def add_tangents(a: Any, b: Any) -> Any:
    """Sum of two tangents/cotangents, either of which may be a symbolic zero."""
    if a is None:
        return b
    if b is None:
        return a
    if type(a) is ArrayImpl and type(b) is ArrayImpl and type(_ctx.trace) is EvalTrace \
            and not CHECK_VALUES:
        # Eagerly, two NumPy cotangents of one aval (fan-out, gradient accumulation): the
        # add primitive's impl itself, without the trace's dispatch.
        va, vb, aval = a._value, b._value, a._aval
        if type(va) is np.ndarray and type(vb) is np.ndarray and (
                aval is b._aval or aval == b._aval):
            out = np.add(va, vb)
            return wrap(out if type(out) is np.ndarray else np.asarray(out), aval)
    return later.add(a, b)


def differentiable(aval: ShapedArray) -> bool:
    return dtypes.is_inexact(aval.dtype)


# ----------------------------------------------------------- shape rules


def same_shape_dtype(name: str, *avals: ShapedArray) -> ShapedArray:
    """Equal shapes and dtypes; a rank-0 operand broadcasts against the others."""
    shapes = {a.shape for a in avals if a.shape != ()}
    if len(shapes) > 1:
        raise ShapeError(
            f"operands must have equal shapes, got {[x.shape for x in avals]}; "
            "funcgrad.numpy functions broadcast for you, lax primitives do not"
        )
    first = avals[0]
    for a in avals[1:]:
        if a.dtype != first.dtype:
            raise DTypeError(
                f"operands must have equal dtypes, got {[str(x.dtype) for x in avals]}; "
                "funcgrad.numpy functions promote for you, lax primitives do not"
            )
    shape = shapes.pop() if shapes else ()
    return ShapedArray(shape, first.dtype, all(a.weak_type for a in avals))


def unbroadcast(ct: Any, aval: ShapedArray) -> Any:
    """Sum a cotangent back down to a rank-0 operand that was broadcast."""
    if ct is None or aval.shape != ():
        return ct
    ct_shape = get_aval(ct).shape
    if ct_shape != ():
        from funcgrad.primitives.reductions import reduce_sum  # noqa: PLC0415

        return reduce_sum(ct, tuple(range(len(ct_shape))))
    return ct


def require_kind(name: str, aval: ShapedArray, kinds: str, what: str) -> None:
    if dtypes.kind(aval.dtype) not in kinds:
        article = "an" if what[:1] in "aeiou" else "a"
        raise DTypeError(f"{name} needs {article} {what} input, got {aval.dtype}")


# ------------------------------------------------------- elementwise makers

FLOAT = "fc"
NUMBER = "iufc"
INTEGRAL = "biu"


def _ufunc_of(np_name: Any) -> str | None:
    return np_name if isinstance(np_name, str) and isinstance(
        getattr(np, np_name, None), np.ufunc) else None


def _py_scalar_of(np_name: Any, py: Any, arity: int) -> Any:
    """The CPU fusion's scalar expression: ``py`` when given, else the primitive's NumPy
    ufunc on scalars (numba compiles those with NumPy's semantics and result dtype)."""
    if py is not UNSET:
        return py
    ufunc = _ufunc_of(np_name)
    return None if ufunc is None else f"np.{ufunc}({', '.join(f'{{{i}}}' for i in range(arity))})"


def unary(name: str, np_name: str | Callable[..., Any], deriv: Rule | None = None, *,
          kinds: str = FLOAT, result_dtype: Any = None, zero_derivative: bool = False,
          reads: str = "x", cuda: Any = None, torch: str | None = None,
          lax: str | None = None, py: Any = UNSET) -> Primitive:
    """An elementwise unary primitive.

    ``deriv(x, ans, **params)`` is its derivative as an expression; the jvp is
    ``t * deriv`` and the vjp ``ct * deriv``. With ``zero_derivative`` the
    output is piecewise constant (floor, sign, comparisons). ``reads`` says which of
    ``x`` (the operand) and ``y`` (the result) ``deriv`` reads: "x", "y" or "x,y".
    ``cuda`` is its CUDA expression (fusable when given), ``torch`` its Tensor method,
    ``lax`` its funcgrad.lax name (``name`` by default), ``py`` its CPU fusion expression
    (``Primitive.py_scalar``; by default the NumPy ufunc ``np_name`` when it is one).
    """
    fn = np_name if callable(np_name) else None

    def impl(xp: Any, x: Any, **params: Any) -> Any:
        if fn is not None:
            return fn(xp, x, **params)
        return getattr(xp, np_name)(x)  # type: ignore[arg-type]

    kind_text = {"fc": "floating point", "iufc": "numeric", "biu": "integer or boolean",
                 "b": "boolean", "f": "real floating point"}.get(kinds, kinds)

    def abstract_eval(x: ShapedArray, **params: Any) -> ShapedArray:
        require_kind(name, x, kinds, kind_text)
        if result_dtype is not None:
            # (A comparison of weakly typed values is weakly typed, as JAX's.)
            return ShapedArray(x.shape, result_dtype, x.weak_type)
        return x

    prim = Primitive(name, abstract_eval=abstract_eval, impl=impl)

    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
        mul = later.mul
        (x,), (t,) = primals, tangents
        ans = prim.bind(x, **params)
        if t is None or zero_derivative or deriv is None:
            return ans, None
        return ans, mul(t, deriv(x, ans, **params))

    def vjp(ct: Any, primals: Sequence[Any], ans: Any, **params: Any) -> list[Any]:
        mul = later.mul
        if zero_derivative or deriv is None:
            return [None]
        return [mul(ct, deriv(primals[0], ans, **params))]

    def batch(args: Sequence[Any], dims: Sequence[Any], **params: Any) -> Any:
        return prim.bind(args[0], **params), dims[0]

    prim.jvp, prim.vjp, prim.batch = jvp, vjp, batch
    prim.vjp_reads = "" if zero_derivative or deriv is None else reads
    prim.zero_derivative = bool(zero_derivative)
    prim.operand_kinds = kinds  # type: ignore[attr-defined]
    prim.arity = 1  # type: ignore[attr-defined]
    prim.describe(lax=lax or name, fusion="elementwise" if cuda else None, cuda=cuda,
                  ufunc=_ufunc_of(np_name), torch_method=torch,
                  py_scalar=_py_scalar_of(np_name, py, 1) if cuda else None)

    def lax_fn(x: Any, **params: Any) -> Any:
        return prim.bind(x, **params)

    lax_fn.__name__ = lax_fn.__qualname__ = lax or name
    # Its public home (the API reference and help() show it there).
    lax_fn.__module__ = "funcgrad.lax"
    lax_fn.__doc__ = f"The ``{name}`` primitive, elementwise (no broadcasting or promotion)."
    prim.lax_fn = lax_fn
    return prim


def binary(name: str, np_name: str | Callable[..., Any], dx: Rule | None = None,
           dy: Rule | None = None, *, kinds: str = NUMBER, result_dtype: Any = None,
           zero_derivative: bool = False, transpose: Rule | None = None,
           reads: str = "x", cuda: Any = None, torch: str | None = None,
           lax: str | None = None, reads_for: tuple[str, str] | None = None,
           py: Any = UNSET) -> Primitive:
    """An elementwise binary primitive on equal dtypes and shapes (or a rank-0 side).

    ``dx(x, y, ans)`` and ``dy(x, y, ans)`` are the partial derivatives. A map
    linear in both operands (add, sub) gives ``transpose(ct) -> [ct_x, ct_y]``
    instead. ``reads`` lists what the partials read: "x0", "x1", "y0" (the result);
    ``cuda``, ``torch``, ``lax`` and ``py`` as for :func:`unary`.
    """
    fn = np_name if callable(np_name) else None

    def impl(xp: Any, x: Any, y: Any) -> Any:
        if fn is not None:
            return fn(xp, x, y)
        return getattr(xp, np_name)(x, y)  # type: ignore[arg-type]

    kind_text = {"iufc": "numeric", "fc": "floating point", "biu": "integer or boolean",
                 "f": "real floating point", "iuf": "real number"}.get(kinds, kinds)

    def abstract_eval(x: ShapedArray, y: ShapedArray) -> ShapedArray:
        out = same_shape_dtype(name, x, y)
        require_kind(name, x, kinds, kind_text)
        if result_dtype is not None:
            return ShapedArray(out.shape, result_dtype, out.weak_type)
        return out

    prim = Primitive(name, abstract_eval=abstract_eval, impl=impl)

    def jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> Any:
        mul = later.mul
        x, y = primals
        tx, ty = tangents
        ans = prim.bind(x, y)
        if zero_derivative or (tx is None and ty is None):
            return ans, None
        if transpose is not None:
            return ans, prim.bind(instantiate(tx, get_aval(x)), instantiate(ty, get_aval(y)))
        out = None
        if tx is not None and dx is not None:
            out = mul(tx, dx(x, y, ans))
        if ty is not None and dy is not None:
            out = add_tangents(out, mul(ty, dy(x, y, ans)))
        shape = get_aval(ans).shape
        if out is not None and get_aval(out).shape != shape:
            # The rank-0 operand's tangent alone: spread over the output's shape.
            from funcgrad.primitives.structural import broadcast_in_dim  # noqa: PLC0415

            out = broadcast_in_dim(out, shape, ())
        return ans, out

    def vjp(ct: Any, primals: Sequence[Any], ans: Any) -> list[Any]:
        mul = later.mul
        x, y = primals
        if zero_derivative:
            return [None, None]
        if transpose is not None:
            cts = transpose(ct)
        else:
            # Only the partials of operands that need a cotangent (x ** c: not log(x)).
            cts = [mul(ct, dx(x, y, ans)) if dx is not None and wanted(0) else None,
                   mul(ct, dy(x, y, ans)) if dy is not None and wanted(1) else None]
        return [unbroadcast(cts[0], get_aval(x)), unbroadcast(cts[1], get_aval(y))]

    prim.jvp, prim.vjp = jvp, vjp
    prim.batch = elementwise_batch(prim)
    prim.vjp_reads = "" if zero_derivative or transpose is not None else reads
    prim.zero_derivative = bool(zero_derivative)
    prim.vjp_reads_for = reads_for
    prim.operand_kinds = kinds  # type: ignore[attr-defined]
    prim.arity = 2  # type: ignore[attr-defined]
    prim.describe(lax=lax or name, fusion="elementwise" if cuda else None, cuda=cuda,
                  ufunc=_ufunc_of(np_name), torch_method=torch,
                  py_scalar=_py_scalar_of(np_name, py, 2) if cuda else None)

    def lax_fn(x: Any, y: Any) -> Any:
        return prim.bind(*_scalars_as_operand(x, y, lax or name))

    lax_fn.__name__ = lax_fn.__qualname__ = lax or name
    lax_fn.__module__ = "funcgrad.lax"
    lax_fn.__doc__ = (f"The ``{name}`` primitive, elementwise on equal shapes and dtypes (a "
                      "Python number is an operand of its default dtype, as in JAX).")
    prim.lax_fn = lax_fn
    return prim


# jax.lax's primitive names where its public function is named otherwise, and JAX's hint of
# the jax.numpy function that promotes (its errors name both).
_JAX_PRIMITIVE_NAME = {"bitwise_and": "and", "bitwise_or": "or", "bitwise_xor": "xor"}
_PROMOTING = {"add": "add", "atan2": "arctan2", "div": "divide", "eq": "equal",
              "max": "maximum", "min": "minimum", "mul": "multiply", "ne": "not_equal",
              "nextafter": "nextafter", "shift_left": "left_shift",
              "shift_right_logical": "right_shift", "shift_right_arithmetic": "right_shift",
              "sub": "subtract"}


def _scalars_as_operand(x: Any, y: Any, name: str | None = None) -> tuple[Any, Any]:
    """The operands of a public ``lax`` binary function as JAX takes them: a Python number
    is an array of its default dtype (weakly typed; no promotion toward the other operand),
    and with ``name`` the dtypes must then be equal (JAX's TypeError)."""
    x, y = (default_typed(v) if dtypes.python_scalar(v) else v for v in (x, y))
    if name is not None:
        dx, dy = get_aval(x).dtype, get_aval(y).dtype
        if dx != dy:
            prim = _JAX_PRIMITIVE_NAME.get(name, name)
            tip = (f" (Tip: jnp.{_PROMOTING[prim]} is a similar function that does automatic "
                   "type promotion on inputs)." if prim in _PROMOTING else "")
            raise DTypeError(f"lax.{prim} requires arguments to have the same dtypes, got "
                             f"{dx}, {dy}.{tip}")
    return x, y


def default_typed(value: Any) -> Any:
    aval = get_aval(value)  # a Python number's default dtype, weakly typed
    return wrap(np.asarray(value, aval.dtype), aval)


def scalar_as(value: Any, dtype: Any, shape: Sequence[int] = ()) -> Any:
    """A Python number as an operand of ``dtype``; a complex number cannot become a real
    one (its imaginary part would be dropped), so that is a DTypeError."""
    if type(value) is complex and np.dtype(dtype).kind != "c":
        raise DTypeError(
            f"a Python complex number ({value!r}) cannot be an operand beside a {dtype} "
            "array: lax primitives need equal dtypes; use funcgrad.numpy functions (which "
            "promote to complex) or convert the array first"
        )
    return full(shape, value, dtype)


def linear(prim: Primitive, transpose: Rule, linear_args: Sequence[int] = (0,)) -> None:
    """Give ``prim`` the rules of a map that is linear in ``linear_args``.

    Its jvp applies ``prim`` to the tangents of those arguments (other
    arguments, like indices, keep their primal values); its vjp is
    ``transpose(ct, primals, out, **params)``.
    """

    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
        ans = prim.bind(*primals, **params)
        if all(tangents[i] is None for i in linear_args):
            return ans, None
        args = [
            instantiate(tangents[i], get_aval(p)) if i in linear_args else p
            for i, p in enumerate(primals)
        ]
        return ans, prim.bind(*args, **params)

    prim.jvp = jvp
    prim.vjp = transpose
    # A transpose reads only the arguments the map is not linear in (indices, masks).
    prim.vjp_reads = lambda n_in, n_out: ([i for i in range(n_in) if i not in linear_args], [])


# ------------------------------------------------------------ batching helpers
# A batch rule sees each argument with its batch axis (an int) or None when the
# argument is the same for every batch member; it returns (out, out_dim).


def move_to_front(x: Any, dim: int | None) -> Any:
    """Put the batch axis first (a no-op for unbatched values and dim 0)."""
    if dim is None or dim == 0:
        return x
    from funcgrad.primitives.structural import transpose  # noqa: PLC0415

    nd = get_aval(x).ndim
    perm = (dim, *(i for i in range(nd) if i != dim))
    return transpose(x, perm)


def batch_size(args: Sequence[Any], dims: Sequence[int | None]) -> int:
    for a, d in zip(args, dims):
        if d is not None:
            return get_aval(a).shape[d]
    raise ShapeError("internal: batch rule called with no batched argument")


def with_batch(x: Any, dim: int | None, size: int) -> Any:
    """``x`` with its batch axis first, broadcasting an unbatched value along it."""
    from funcgrad.primitives.structural import broadcast_in_dim  # noqa: PLC0415

    if dim is not None:
        return move_to_front(x, dim)
    shape = get_aval(x).shape
    return broadcast_in_dim(x, (size, *shape), tuple(range(1, len(shape) + 1)))


def all_batched(args: Sequence[Any], dims: Sequence[int | None]) -> list[Any]:
    size = batch_size(args, dims)
    return [with_batch(a, d, size) for a, d in zip(args, dims)]


def elementwise_batch(prim: Primitive, rank0_broadcasts: bool = True) -> Rule:
    """Batch rule of an elementwise primitive with equal-shaped (or rank-0) operands."""
    from funcgrad.primitives.structural import broadcast_in_dim  # noqa: PLC0415

    def rule(args: Sequence[Any], dims: Sequence[int | None], **params: Any) -> Any:
        size = batch_size(args, dims)
        logical = [tuple(s for i, s in enumerate(get_aval(a).shape) if i != d)
                   for a, d in zip(args, dims)]
        out_shape = next((s for s in logical if s != ()), ())
        if len(set(dims)) == 1 and all(s == out_shape for s in logical):
            return prim.bind(*args, **params), dims[0]
        fixed = []
        for a, d, s in zip(args, dims, logical):
            if d is None and s == () and rank0_broadcasts:
                fixed.append(a)
            elif d is None:
                fixed.append(broadcast_in_dim(a, (size, *out_shape),
                                              tuple(range(1 if s else len(out_shape) + 1,
                                                          len(out_shape) + 1))))
            elif s == () and out_shape != ():
                fixed.append(broadcast_in_dim(move_to_front(a, d), (size, *out_shape), (0,)))
            else:
                fixed.append(move_to_front(a, d))
        return prim.bind(*fixed, **params), 0

    return rule


def shifted_axes_batch(prim: Primitive, *names: str) -> Rule:
    """Batch rule of a one-operand primitive whose params name axes: shift them by one."""

    def rule(args: Sequence[Any], dims: Sequence[int | None], **params: Any) -> Any:
        x = move_to_front(args[0], dims[0])
        new = dict(params)
        for n in names:
            v = params[n]
            new[n] = v + 1 if isinstance(v, int) else tuple(a + 1 for a in v)
        return prim.bind(x, *args[1:], **new), 0

    return rule
