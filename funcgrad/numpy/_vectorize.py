"""``vectorize`` (NumPy's generalized-ufunc signatures, through vmap, as JAX), and
``ufunc``/``frompyfunc``: a scalar function made into a ufunc with ``reduce``,
``accumulate``, ``outer`` and ``at``, unrolled over the static length of the axis.

>>> import funcgrad.numpy as fnp
>>> fnp.vectorize(lambda a, b: a @ b, signature="(n),(n)->()")(
...     fnp.ones((2, 3)), fnp.arange(3.0)).tolist()
[3.0, 3.0]
"""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Callable, Collection
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.core import get_aval
from funcgrad.errors import ShapeError
from funcgrad.numpy._core import canonical_axis
from funcgrad.transforms.vmap import vmap

_DIMS = r"\w+"
_CORE = rf"(?:{_DIMS}(?:,{_DIMS})*)?"
_ARGS = rf"\({_CORE}\)(?:,\({_CORE}\))*"
_SIGNATURE = re.compile(rf"^{_ARGS}->{_ARGS}$")


def _parse_signature(signature: str) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    sig = signature.replace(" ", "")
    if not _SIGNATURE.match(sig):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    ins, outs = sig.split("->")

    def parse(part: str) -> list[tuple[str, ...]]:
        return [tuple(d for d in arg.split(",") if d)
                for arg in re.findall(r"\(([^)]*)\)", part)]

    return parse(ins), parse(outs)


def vectorize(pyfunc: Callable[..., Any], *, excluded: Collection[int | str] = frozenset(),
              signature: str | None = None) -> Callable[..., Any]:
    """``pyfunc`` mapped over the leading (loop) axes of its array arguments, broadcast
    together; ``signature`` names the core axes each argument keeps (``"(n,m),(m)->(n)"``).

    >>> import funcgrad.numpy as fnp
    >>> fnp.vectorize(lambda x: x * 2)(fnp.arange(3)).tolist()
    [0, 2, 4]
    """
    in_core, _ = _parse_signature(signature) if signature is not None else (None, None)

    @functools.wraps(pyfunc)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        static_kw = {k: v for k, v in kwargs.items() if k in excluded}
        mapped_kw = [k for k in kwargs if k not in excluded]
        pos = [i for i in range(len(args)) if i not in excluded]
        arrays = [fnp.asarray(args[i]) for i in pos] + [fnp.asarray(kwargs[k])
                                                          for k in mapped_kw]
        cores = in_core if in_core is not None else [()] * len(arrays)
        # JAX's words (jax/_src/numpy/vectorize.py), this context included.
        context = (f"on vectorized function with excluded={excluded!r} and "
                   f"signature={signature!r}")
        if len(cores) != len(arrays):
            raise TypeError(f"wrong number of positional arguments: expected {len(cores)}, "
                            f"got {len(arrays)} {context}")
        sizes: dict[str, int] = {}
        loop_shapes = []
        for a, core in zip(arrays, cores):
            shape = get_aval(a).shape
            if len(shape) < len(core):
                raise ValueError(f"input with shape {shape} does not have enough dimensions "
                                 f"for all core dimensions {core} {context}")
            for name, size in zip(core, shape[len(shape) - len(core):]):
                if sizes.setdefault(name, size) != size:
                    raise ValueError(f"inconsistent size for core dimension {name!r}: "
                                     f"{size} vs {sizes[name]} {context}")
            loop_shapes.append(shape[:len(shape) - len(core)])
        try:
            loop = tuple(int(d) for d in np.broadcast_shapes(*loop_shapes))
        except ValueError:  # (JAX's error, that of lax.broadcast_shapes)
            raise ShapeError("Incompatible shapes for broadcasting: "
                             f"shapes={list(loop_shapes)}") from None
        arrays = [fnp.broadcast_to(a, (*loop, *get_aval(a).shape[len(ls):]))
                  for a, ls in zip(arrays, loop_shapes)]

        def call(*xs: Any) -> Any:
            full = list(args)
            for i, x in zip(pos, xs):
                full[i] = x
            kw = {**static_kw, **dict(zip(mapped_kw, xs[len(pos):]))}
            return pyfunc(*full, **kw)

        fn = call
        for _ in loop:
            fn = vmap(fn)
        return fn(*arrays)

    return wrapped


_AT_INPLACE = """\
Because JAX arrays are immutable, jnp.ufunc.at() cannot operate inplace like
np.ufunc.at(). Instead, you can pass inplace=False and capture the result; e.g.
>>> arr = jnp.add.at(arr, ind, val, inplace=False)
"""


class ufunc:  # noqa: N801 - jax.numpy's name
    """A scalar function of ``nin`` arguments and ``nout`` results as a ufunc: broadcasting
    calls, and for binary functions ``reduce``, ``accumulate``, ``reduceat``, ``outer`` and
    ``at``. ``call``, ``reduce``, ``accumulate``, ``at`` and ``reduceat`` name faster
    implementations (``jnp.add.reduce`` is ``jnp.sum``); without them the function is
    folded with a loop, as in JAX.

    >>> import funcgrad.numpy as fnp
    >>> add = fnp.ufunc(lambda a, b: a + b, 2, 1, identity=0)
    >>> add.reduce(fnp.arange(4)).tolist(), add.accumulate(fnp.arange(4)).tolist()
    (6, [0, 1, 3, 6])
    """

    def __init__(self, func: Callable[..., Any], /, nin: int, nout: int, *,
                 name: str | None = None, nargs: int | None = None, identity: Any = None,
                 call: Callable[..., Any] | None = None,
                 reduce: Callable[..., Any] | None = None,
                 accumulate: Callable[..., Any] | None = None,
                 at: Callable[..., Any] | None = None,
                 reduceat: Callable[..., Any] | None = None) -> None:
        self.__doc__ = func.__doc__
        self.__name__ = name or getattr(func, "__name__", "ufunc")
        self._func = func
        self.nin, self.nout = operator.index(nin), operator.index(nout)
        self.nargs = operator.index(nargs or nin)
        self.identity = identity
        self._call = call or vectorize(func)
        self._reduce, self._accumulate, self._at, self._reduceat = \
            reduce, accumulate, at, reduceat
        self._hash = hash(self._key())  # (hashed once: ufuncs key dispatch tables)

    def _key(self) -> tuple[Any, ...]:
        # (As JAX: the faster implementations are details, not part of the identity.)
        return (self._func, self.__name__, self.identity, self.nin, self.nout, self.nargs)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ufunc) and self._key() == other._key()

    def __repr__(self) -> str:
        return f"<jnp.ufunc '{self.__name__}'>"

    def __call__(self, *args: Any, out: None = None, where: None = None) -> Any:
        if out is not None:
            raise NotImplementedError(f"out argument of {self}")
        if where is not None:
            raise NotImplementedError(f"where argument of {self}")
        return self._call(*args)

    def _binary(self, what: str) -> None:
        if self.nin != 2:
            raise ValueError(f"{what} only supported for binary ufuncs")
        if self.nout != 1:
            raise ValueError(f"{what} only supported for functions returning a single value")

    def _result_dtype(self, arr: Any) -> Any:
        one = fnp.ones((), get_aval(arr).dtype)
        return get_aval(fnp.asarray(self(one, one))).dtype

    def reduce(self, a: Any, axis: int | None = 0, dtype: Any = None, out: None = None,
               keepdims: bool = False, initial: Any = None, where: Any = None) -> Any:
        """Fold the function over ``axis`` (all axes when None), from the left.

        >>> import funcgrad.numpy as fnp
        >>> fnp.bitwise_or.reduce(fnp.array([1, 2, 4])).tolist()
        7
        """
        self._binary("reduce")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduce()")
        if where is not None:
            if self.identity is None and initial is None:
                raise ValueError(f"reduction operation {self.__name__!r} does not have an "
                                 "identity, so to use a where mask one has to specify "
                                 "'initial'.")
            if get_aval(fnp.asarray(where)).dtype != np.bool_:
                raise ValueError(f"where argument must have dtype=bool; got "
                                 f"dtype={get_aval(fnp.asarray(where)).dtype}")
        if isinstance(axis, tuple) and self._reduce is None:
            raise NotImplementedError("tuple of axes")
        fast = self._reduce or self._reduce_via_loop
        return fast(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial,
                    where=where)

    def _reduce_via_loop(self, a: Any, axis: int | None = 0, dtype: Any = None,
                         keepdims: bool = False, initial: Any = None,
                         where: Any = None) -> Any:
        arr = fnp.asarray(a)
        start = self.identity if initial is None else initial
        dtype = self._result_dtype(arr) if dtype is None else dtype
        nd = get_aval(arr).ndim
        mask = None if where is None else fnp.broadcast_to(where, get_aval(arr).shape)
        if axis is None:
            final = (1,) * nd if keepdims else ()
            arr = fnp.ravel(arr)
            mask = None if mask is None else fnp.ravel(mask)
        else:
            ax = canonical_axis(axis, nd)
            shape = get_aval(arr).shape
            final = (*shape[:ax], 1, *shape[ax + 1:]) if keepdims else \
                (*shape[:ax], *shape[ax + 1:])
            arr = fnp.moveaxis(arr, ax, 0)
            mask = None if mask is None else fnp.moveaxis(mask, ax, 0)
        n = get_aval(arr).shape[0]
        if n == 0:
            if start is None:
                raise ValueError(f"zero-size array to reduction operation {self.__name__} "
                                 "which has no identity")
            return fnp.full(final, start, dtype)
        rest = get_aval(arr).shape[1:]
        acc, first = (fnp.astype(arr[0], dtype), 1) if start is None else \
            (fnp.broadcast_to(fnp.astype(fnp.asarray(start), dtype), rest), 0)
        for i in range(first, n):
            step = self(acc, fnp.astype(arr[i], dtype))
            acc = step if mask is None else fnp.where(mask[i], step, acc)
        return fnp.reshape(acc, final) if keepdims else acc

    def accumulate(self, a: Any, axis: int = 0, dtype: Any = None, out: None = None) -> Any:
        """The running fold along ``axis``.

        >>> import funcgrad.numpy as fnp
        >>> fnp.maximum.accumulate(fnp.array([1, 3, 2, 5])).tolist()
        [1, 3, 3, 5]
        """
        self._binary("accumulate")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.accumulate()")
        fast = self._accumulate or self._accumulate_via_loop
        return fast(a, axis=axis, dtype=dtype)

    def _accumulate_via_loop(self, a: Any, axis: int = 0, dtype: Any = None) -> Any:
        arr = fnp.asarray(a)
        dtype = self._result_dtype(arr) if dtype is None else dtype
        if axis is None or isinstance(axis, tuple):
            raise ValueError("accumulate does not allow multiple axes")
        ax = canonical_axis(axis, get_aval(arr).ndim)
        if get_aval(arr).size == 0:
            return fnp.zeros(get_aval(arr).shape, dtype)
        x = fnp.moveaxis(arr, ax, 0)
        outs = [fnp.astype(x[0], dtype)]
        for i in range(1, get_aval(x).shape[0]):
            outs.append(self(outs[-1], fnp.astype(x[i], dtype)))
        return fnp.moveaxis(fnp.stack(outs), 0, ax)

    def reduceat(self, a: Any, indices: Any, axis: int = 0, dtype: Any = None,
                 out: None = None) -> Any:
        """Reductions of the segments that start at ``indices`` (NumPy's rule: a segment
        whose end is not after its start is the element at its start).

        >>> import funcgrad.numpy as fnp
        >>> fnp.add.reduceat(fnp.arange(1, 9), fnp.array([0, 2, 5])).tolist()
        [3, 12, 21]
        """
        self._binary("reduceat")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduceat()")
        fast = self._reduceat or self._reduceat_via_loop
        return fast(a, indices, axis=axis, dtype=dtype)

    def _reduceat_via_loop(self, a: Any, indices: Any, axis: int = 0,
                           dtype: Any = None) -> Any:
        arr = fnp.asarray(a)
        idx = fnp.asarray(indices)
        if get_aval(arr).ndim == 0:
            raise ValueError(f"reduceat: a must have 1 or more dimension, got "
                             f"a.shape={get_aval(arr).shape}")
        if get_aval(idx).ndim != 1:
            raise ValueError(f"reduceat: indices must be one-dimensional, got "
                             f"indices.shape={get_aval(idx).shape}")
        if axis is None or isinstance(axis, (tuple, list)):
            raise ValueError("reduceat requires a single integer axis.")
        dtype = get_aval(arr).dtype if dtype is None else dtype
        carried = fnp.result_type(self._result_dtype(arr), get_aval(arr).dtype)
        if carried != get_aval(arr).dtype:
            # (JAX's loop carries the input's dtype: a function that changes it is refused.)
            raise TypeError(f"reduceat: {self.__name__} of {get_aval(arr).dtype} gives "
                            f"{carried}; the reduction must keep the input's dtype: convert "
                            "the input first")
        ax = canonical_axis(axis, get_aval(arr).ndim)
        n = get_aval(arr).shape[ax]
        res = fnp.take(arr, idx, axis=ax)
        ends = fnp.append(idx, n)
        shape = [1] * get_aval(res).ndim
        shape[ax] = get_aval(idx).shape[0]
        start = fnp.reshape(ends[:-1], shape)
        stop = fnp.reshape(ends[1:], shape)
        for i in range(n):
            step = self(res, fnp.take(arr, fnp.asarray([i]), axis=ax))
            res = fnp.where((i > start) & (i < stop), step, res)
        return fnp.astype(res, dtype)

    def outer(self, A: Any, B: Any, /) -> Any:  # noqa: N803
        """The function on every pair of elements: shape ``A.shape + B.shape``.

        >>> import funcgrad.numpy as fnp
        >>> fnp.multiply.outer(fnp.array([1, 2]), fnp.array([3, 4])).tolist()
        [[3, 4], [6, 8]]
        """
        self._binary("outer")
        a, b = fnp.asarray(A), fnp.asarray(B)
        return self(fnp.reshape(a, (*get_aval(a).shape, *(1,) * get_aval(b).ndim)), b)

    def at(self, a: Any, indices: Any, b: Any = None, /, *, inplace: bool = True) -> Any:
        """``a`` with ``a[i] = f(a[i], b)`` applied for each index in turn (repeats
        compose); arrays are immutable, so ``inplace=False`` must be passed, as in JAX.

        >>> import funcgrad.numpy as fnp
        >>> fnp.add.at(fnp.zeros(3), fnp.array([0, 0, 2]), 1.0, inplace=False).tolist()
        [2.0, 0.0, 1.0]
        """
        if inplace:
            raise NotImplementedError(_AT_INPLACE)
        fast = self._at or self._at_via_loop
        return fast(a, indices) if b is None else fast(a, indices, b)

    def _at_via_loop(self, a: Any, indices: Any, *args: Any) -> Any:
        # JAX's rule: the indices broadcast together, and each index in turn (a repeat
        # composes with the earlier ones) gets f(a[i], b[i]), in f's result dtype.
        one = fnp.ones((), get_aval(fnp.asarray(a)).dtype)
        dtype = get_aval(fnp.asarray(self(one, *(fnp.ones((), get_aval(fnp.asarray(b)).dtype)
                                                  for b in args)))).dtype
        arr = fnp.astype(fnp.asarray(a), dtype)
        vals = [fnp.astype(fnp.asarray(b), dtype) for b in args]
        if type(indices) is list:
            raise TypeError("Using a non-tuple sequence for multidimensional indexing is not "
                            "allowed; use `arr[tuple(seq)]` instead of `arr[seq]`.")
        idx = indices if isinstance(indices, tuple) else (indices,)
        if not idx:
            return arr
        shapes = [np.shape(i) for i in idx if not isinstance(i, slice)]
        shape = np.broadcast_shapes(*shapes) if shapes else ()
        if not shape:
            return arr.at[idx].set(self(arr.at[idx].get(), *vals))
        n = int(np.prod(shape))
        if vals:
            rest = get_aval(vals[0]).shape[len(shape):]
            vals = [fnp.reshape(fnp.broadcast_to(vals[0], (*shape, *rest)), (n, *rest))]
        flat = [i if isinstance(i, slice) else fnp.ravel(fnp.broadcast_to(fnp.asarray(i), shape))
                for i in idx]
        for k in range(n):
            at = tuple(i if isinstance(i, slice) else i[k] for i in flat)
            arr = arr.at[at].set(self(arr.at[at].get(), *(v[k] for v in vals)))
        return arr


def frompyfunc(func: Callable[..., Any], /, nin: int, nout: int, *, identity: Any = None
               ) -> ufunc:
    """A :class:`ufunc` from a scalar function.

    >>> import funcgrad.numpy as fnp
    >>> mul = fnp.frompyfunc(lambda a, b: a * b, 2, 1, identity=1)
    >>> mul.outer(fnp.array([1, 2]), fnp.array([3, 4])).tolist()
    [[3, 4], [6, 8]]
    """
    return ufunc(func, nin, nout, identity=identity)


__all__ = ["frompyfunc", "ufunc", "vectorize"]
