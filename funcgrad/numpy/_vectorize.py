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
import re
from collections.abc import Callable, Collection
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.core import get_aval
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
        if len(cores) != len(arrays):
            raise TypeError(f"wrong number of positional arguments: expected {len(cores)}, "
                            f"got {len(arrays)}")
        sizes: dict[str, int] = {}
        loop_shapes = []
        for a, core in zip(arrays, cores):
            shape = get_aval(a).shape
            if len(shape) < len(core):
                raise ValueError(f"input with shape {shape} does not have enough dimensions "
                                 f"for its core dimensions {core} in signature {signature}")
            for name, size in zip(core, shape[len(shape) - len(core):]):
                if sizes.setdefault(name, size) != size:
                    raise ValueError(f"inconsistent size for core dimension {name!r}: "
                                     f"{sizes[name]} vs {size}")
            loop_shapes.append(shape[:len(shape) - len(core)])
        loop = np.broadcast_shapes(*loop_shapes)
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


class ufunc:  # noqa: N801 - jax.numpy's name
    """A scalar function of ``nin`` arguments and ``nout`` results as a ufunc: broadcasting
    calls, and for binary functions ``reduce``, ``accumulate``, ``outer`` and ``at``.

    >>> import funcgrad.numpy as fnp
    >>> add = fnp.ufunc(lambda a, b: a + b, 2, 1, identity=0)
    >>> add.reduce(fnp.arange(4)).tolist(), add.accumulate(fnp.arange(4)).tolist()
    (6, [0, 1, 3, 6])
    """

    def __init__(self, func: Callable[..., Any], /, nin: int, nout: int, *,
                 identity: Any = None) -> None:
        self._func = func
        self.nin, self.nout, self.identity = int(nin), int(nout), identity
        self._vectorized = vectorize(func)

    @property
    def nargs(self) -> int:
        return self.nin

    def __repr__(self) -> str:
        return f"<jnp.ufunc '{getattr(self._func, '__name__', 'ufunc')}'>"

    def __call__(self, *args: Any) -> Any:
        if len(args) != self.nin:
            raise TypeError(f"{self!r} takes {self.nin} positional arguments, got {len(args)}")
        return self._vectorized(*args)

    def _binary(self, what: str) -> None:
        if self.nin != 2 or self.nout != 1:
            raise ValueError(f"{what} only supported for binary ufuncs with a single output, "
                             f"got nin={self.nin}, nout={self.nout}")

    def reduce(self, a: Any, axis: int | None = 0, dtype: Any = None, out: None = None,
               keepdims: bool = False, initial: Any = None, where: Any = None) -> Any:
        """Fold the function over ``axis`` (all axes when None), from the left."""
        self._binary("reduce")
        if out is not None or where is not None:
            raise ValueError("reduce: out= and where= are not supported (as in JAX)")
        arr = fnp.asarray(a) if dtype is None else fnp.astype(fnp.asarray(a), dtype)
        nd = get_aval(arr).ndim
        if axis is None:
            flat = fnp.ravel(arr)
            res = self._fold(flat, initial)
            return fnp.reshape(res, (1,) * nd) if keepdims else res
        ax = canonical_axis(axis, nd)
        res = self._fold(fnp.moveaxis(arr, ax, 0), initial)
        return fnp.expand_dims(res, ax) if keepdims else res

    def _fold(self, x: Any, initial: Any) -> Any:
        n = get_aval(x).shape[0]
        start = initial if initial is not None else self.identity
        if n == 0:
            if start is None:
                raise ValueError("zero-size array to reduction operation with no identity")
            return fnp.full(get_aval(x).shape[1:], start, get_aval(x).dtype)
        acc, first = (x[0], 1) if start is None else (fnp.full_like(x[0], start), 0)
        for i in range(first, n):
            acc = self(acc, x[i])
        return acc

    def accumulate(self, a: Any, axis: int = 0, dtype: Any = None, out: None = None) -> Any:
        """The running fold along ``axis``."""
        self._binary("accumulate")
        if out is not None:
            raise ValueError("accumulate: out= is not supported (as in JAX)")
        arr = fnp.asarray(a) if dtype is None else fnp.astype(fnp.asarray(a), dtype)
        ax = canonical_axis(axis, get_aval(arr).ndim)
        x = fnp.moveaxis(arr, ax, 0)
        if get_aval(x).shape[0] == 0:
            return arr
        outs = [x[0]]
        for i in range(1, get_aval(x).shape[0]):
            outs.append(self(outs[-1], x[i]))
        return fnp.moveaxis(fnp.stack(outs), 0, ax)

    def outer(self, A: Any, B: Any, /) -> Any:  # noqa: N803
        """The function on every pair of elements: shape ``A.shape + B.shape``."""
        self._binary("outer")
        a, b = fnp.asarray(A), fnp.asarray(B)
        return self(fnp.reshape(a, (*get_aval(a).shape, *(1,) * get_aval(b).ndim)), b)

    def at(self, a: Any, indices: Any, b: Any = None, /, *, inplace: bool = False) -> Any:
        """``a`` with ``a[i] = f(a[i], b)`` applied for each index in turn (repeats
        compose); funcgrad arrays are immutable, so ``inplace`` must be False."""
        if inplace:
            raise ValueError("jnp.ufunc.at: arrays are immutable; pass inplace=False and use "
                             "the returned array")
        arr = fnp.asarray(a)
        idx = fnp.asarray(indices)
        if self.nin == 2 and b is None:
            raise ValueError("at: a binary ufunc needs the operand b")
        flat_idx = fnp.ravel(idx)
        vals = None if b is None else fnp.ravel(fnp.broadcast_to(fnp.asarray(b),
                                                                 get_aval(idx).shape))
        for k in range(get_aval(flat_idx).shape[0]):
            i = flat_idx[k]
            new = self(arr[i]) if vals is None else self(arr[i], vals[k])
            arr = arr.at[i].set(new)
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
