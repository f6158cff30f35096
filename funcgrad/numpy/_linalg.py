"""Products and matrix helpers of funcgrad.numpy: matmul, dot, einsum, tensordot, trace...

>>> import funcgrad.numpy as fnp
>>> fnp.einsum("ij,jk->ik", fnp.ones((2, 3)), fnp.ones((3, 4))).shape
(2, 4)
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.core import get_aval
from funcgrad.errors import ShapeError
from funcgrad.numpy._core import (
    broadcast_shapes,
    broadcast_to_shape,
    canonical_axis,
    check_arraylike,
    promote_args,
)
from funcgrad.numpy._shape import _arr, moveaxis, ravel, reshape
from funcgrad.numpy._ufuncs import multiply, where
from funcgrad.primitives import elementwise as E
from funcgrad.primitives import linalg as L
from funcgrad.primitives import reductions as R
from funcgrad.primitives import structural as S
from funcgrad.primitives.precision import algorithm_types, check_dot_precision


def _pair(a: Any, b: Any) -> tuple[Any, Any]:
    a, b = promote_args(a, b)
    return _arr(a), _arr(b)


def _matmul(a: Any, b: Any) -> Any:
    """Matrix product with NumPy's rules (1-D promotion, broadcast batch axes).

    >>> import funcgrad.numpy as fnp
    >>> fnp.matmul(fnp.ones((5, 2, 3)), fnp.ones((3, 4))).shape
    (5, 2, 4)
    """
    a, b = _pair(a, b)
    sa, sb = get_aval(a).shape, get_aval(b).shape
    if not sa or not sb:
        raise ShapeError(f"matmul input operand {0 if not sa else 1} must have ndim at least 1, "
                         "but it has ndim 0")
    if sa[-1] != (sb[0] if len(sb) == 1 else sb[-2]):
        raise ShapeError("dot_general requires contracting dimensions to have the same "
                         f"shape, got ({sa[-1]},) and ({sb[0] if len(sb) == 1 else sb[-2]},).")
    if len(sb) <= 2:
        # No batch axes on b: one contraction, no broadcasting.
        return L.dot_general(a, b, (((len(sa) - 1,), (0,)), ((), ())))
    if len(sa) == 1:
        out = L.dot_general(a, b, (((0,), (len(sb) - 2,)), ((), ())))
        return out
    batch = broadcast_shapes(sa[:-2], sb[:-2])
    a = broadcast_to_shape(a, batch + sa[-2:])
    b = broadcast_to_shape(b, batch + sb[-2:])
    nb = len(batch)
    return L.dot_general(a, b, (((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb)))))


def _dot(a: Any, b: Any) -> Any:
    """NumPy's ``dot``: inner product, matrix product, or contraction of a's last axis
    with b's second-to-last.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.dot(fnp.ones(3), fnp.ones(3)))
    3.0
    """
    a, b = _pair(a, b)
    sa, sb = get_aval(a).shape, get_aval(b).shape
    if not sa or not sb:
        return multiply(a, b)
    kb = 0 if len(sb) == 1 else len(sb) - 2
    if sa[-1] != sb[kb]:
        raise ShapeError("dot_general requires contracting dimensions to have the same "
                         f"shape, got ({sa[-1]},) and ({sb[kb]},).")
    return L.dot_general(a, b, (((len(sa) - 1,), (kb,)), ((), ())))


def _vdot(a: Any, b: Any) -> Any:
    """Dot product of the flattened arrays, conjugating the first when it is complex.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.vdot(fnp.ones((2, 2)), fnp.ones((2, 2))))
    4.0
    """
    from funcgrad.numpy._ufuncs import conjugate  # noqa: PLC0415

    a, b = promote_args(a, b)
    return _dot(ravel(conjugate(a)), ravel(b))


def _inner(a: Any, b: Any) -> Any:
    """Contraction over the last axes of both.

    >>> import funcgrad.numpy as fnp
    >>> fnp.inner(fnp.ones((2, 3)), fnp.ones((4, 3))).shape
    (2, 4)
    """
    a, b = _pair(a, b)
    sa, sb = get_aval(a).shape, get_aval(b).shape
    if not sa or not sb:
        return multiply(a, b)
    return L.dot_general(a, b, (((len(sa) - 1,), (len(sb) - 1,)), ((), ())))


def outer(a: Any, b: Any) -> Any:
    """Outer product of the flattened arrays.

    >>> import funcgrad.numpy as fnp
    >>> fnp.outer(fnp.ones(2), fnp.ones(3)).shape
    (2, 3)
    """
    check_arraylike("outer", a, b)
    a, b = _pair(a, b)
    a, b = ravel(a), ravel(b)
    return L.dot_general(S.reshape(a, (get_aval(a).size, 1)), S.reshape(b, (1, get_aval(b).size)),
                         (((1,), (0,)), ((), ())))


def _tensordot(a: Any, b: Any, axes: Any = 2) -> Any:
    """Contract ``axes`` of a with ``axes`` of b (an int N means a's last N with b's first N).

    >>> import funcgrad.numpy as fnp
    >>> fnp.tensordot(fnp.ones((2, 3, 4)), fnp.ones((3, 4, 5))).shape
    (2, 5)
    """
    a, b = _pair(a, b)
    na, nb = get_aval(a).ndim, get_aval(b).ndim
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        ca, cb = tuple(range(na - n, na)), tuple(range(n))
    else:
        xa, xb = axes0 = axes
        if isinstance(xa, (int, np.integer)) != isinstance(xb, (int, np.integer)):
            raise TypeError("tensordot requires both axes lists to be either ints, tuples or "
                            f"lists, got {xa} and {xb}")
        xa = [xa] if isinstance(xa, (int, np.integer)) else list(xa)
        xb = [xb] if isinstance(xb, (int, np.integer)) else list(xb)
        if len(xa) != len(xb):
            raise TypeError("tensordot requires axes lists to have equal length, got "
                            f"{axes0[0]} and {axes0[1]}.")
        ca = tuple(canonical_axis(x, na) for x in xa)
        cb = tuple(canonical_axis(x, nb) for x in xb)
    return L.dot_general(a, b, ((ca, cb), ((), ())))


# ------------------------------------------------------------------ einsum


def _parse_einsum(subscripts: str, ranks: Sequence[int]) -> tuple[list[str], str]:
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        lhs, out = subscripts.split("->")
        explicit = True
    else:
        lhs, out, explicit = subscripts, "", False
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise ShapeError(f"Number of einsum subscripts, {len(terms)}, must be equal to the "
                         f"number of operands, {len(ranks)}.")
    used = set(c for c in subscripts if c.isalpha())
    free = [c for c in string.ascii_letters if c not in used]
    ell_rank = 0
    for t, r in zip(terms, ranks):
        if "..." in t:
            ell_rank = max(ell_rank, r - (len(t) - 3))
    ell = "".join(free[:ell_rank])
    new_terms = []
    for n, (t, r) in enumerate(zip(terms, ranks)):
        if "..." in t:
            k = r - (len(t) - 3)
            t = t.replace("...", ell[ell_rank - k:])
        if len(t) != r:  # (JAX's errors here are opt_einsum's)
            raise ShapeError(f"Einstein sum subscript {t!r} does not contain the correct "
                             f"number of indices for operand {n}.")
        new_terms.append(t)
    if explicit:
        out = out.replace("...", ell)
    else:
        counts: dict[str, int] = {}
        for t in new_terms:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    return new_terms, out


def _diagonal_letters(x: Any, term: str) -> tuple[Any, str]:
    """Take diagonals for letters repeated within one operand (``ii`` → ``i``)."""
    while len(set(term)) != len(term):
        c = next(ch for ch in term if term.count(ch) > 1)
        i = term.index(c)
        j = term.index(c, i + 1)
        x = diagonal(x, 0, i, j)
        term = "".join(ch for k, ch in enumerate(term) if k not in (i, j)) + c
    return x, term


def _einsum(subscripts: str, *operands: Any) -> Any:
    """Einstein summation, e.g. ``"bij,bjk->bik"``; ``...`` and repeated letters work.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.einsum("ii", fnp.eye(3)))
    3.0
    """
    ops = [_arr(o) for o in promote_args(*operands)]
    terms, out = _parse_einsum(subscripts, [get_aval(o).ndim for o in ops])
    sizes: dict[str, int] = {}
    for n, (o, t) in enumerate(zip(ops, terms)):
        for c, d in zip(t, get_aval(o).shape):
            if sizes.setdefault(c, d) != d and d != 1 and sizes[c] != 1:
                # (opt_einsum's words, the earlier size first)
                raise ShapeError(f"Size of label {c!r} for operand {n} ({sizes[c]}) does not "
                                 f"match previous terms ({d}).")
            sizes[c] = builtins_max(sizes[c], d)
    # Size-1 axes broadcast, as in NumPy.
    ops = [broadcast_to_shape(o, tuple(sizes[c] for c in t)) for o, t in zip(ops, terms)]
    pairs = [_diagonal_letters(o, t) for o, t in zip(ops, terms)]

    def needed(idx: int) -> set[str]:
        keep = set(out)
        for _, t in pairs[idx + 1:]:
            keep |= set(t)
        return keep

    def sum_unneeded(x: Any, t: str, keep: set[str]) -> tuple[Any, str]:
        axes = tuple(i for i, c in enumerate(t) if c not in keep)
        return R.reduce_sum(x, axes), "".join(c for c in t if c in keep)

    acc, acc_t = pairs[0]
    acc, acc_t = sum_unneeded(acc, acc_t, needed(0) | set().union(*[set(t) for _, t in pairs[1:]]))
    for k in range(1, len(pairs)):
        x, t = pairs[k]
        keep_after = needed(k)
        x, t = sum_unneeded(x, t, keep_after | set(acc_t))
        acc, acc_t = sum_unneeded(acc, acc_t, keep_after | set(t))
        common = [c for c in acc_t if c in t]
        batch = [c for c in common if c in keep_after]
        contract = [c for c in common if c not in keep_after]
        dims = ((tuple(acc_t.index(c) for c in contract), tuple(t.index(c) for c in contract)),
                (tuple(acc_t.index(c) for c in batch), tuple(t.index(c) for c in batch)))
        acc = L.dot_general(acc, x, dims)
        acc_t = "".join(batch) + "".join(c for c in acc_t if c not in common) + "".join(
            c for c in t if c not in common)
    acc, acc_t = sum_unneeded(acc, acc_t, set(out))
    missing = [c for c in out if c not in acc_t]
    if missing:
        raise ShapeError(f"Output character {missing[0]!r} did not appear in the input")
    return S.transpose(acc, tuple(acc_t.index(c) for c in out))


def builtins_max(a: int, b: int) -> int:
    return a if a >= b else b


# -------------------------------------------------------- matrix helpers


def _eye_mask(n: int, m: int, k: int) -> np.ndarray:
    return np.eye(n, m, k, dtype=bool)


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """The diagonal over ``axis1``/``axis2``, as a new last axis.

    >>> import funcgrad.numpy as fnp
    >>> fnp.diagonal(fnp.eye(3)).tolist()
    [1.0, 1.0, 1.0]
    """
    check_arraylike("diagonal", a)
    a = _arr(a)
    nd = get_aval(a).ndim
    i, j = canonical_axis(axis1, nd), canonical_axis(axis2, nd)
    if i == j:
        raise ShapeError("axis1 and axis2 cannot be the same")
    x = moveaxis(a, (i, j), (-2, -1))
    shp = get_aval(x).shape
    n, m = shp[-2], shp[-1]
    mask = np.broadcast_to(_eye_mask(n, m, offset), shp)
    masked = where(mask, x, np.zeros((), get_aval(x).dtype))
    # Each column (offset >= 0) or row (offset < 0) holds at most one diagonal entry.
    if offset >= 0:
        out = R.reduce_sum(masked, (len(shp) - 2,))
        return _take_last(out, offset, max(0, min(n, m - offset)))
    out = R.reduce_sum(masked, (len(shp) - 1,))
    return _take_last(out, -offset, max(0, min(m, n + offset)))


def _take_last(x: Any, start: int, length: int) -> Any:
    shp = get_aval(x).shape
    start = min(start, shp[-1]) if length else 0
    return S.slice_(x, [0] * (len(shp) - 1) + [start], list(shp[:-1]) + [start + length])


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None,
          out: Any = None) -> Any:
    """Sum of the diagonal.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.trace(fnp.eye(3)))
    3.0
    """
    check_arraylike("trace", a)
    from funcgrad.numpy._reductions import sum as _sum  # noqa: PLC0415

    d = diagonal(a, offset, axis1, axis2)
    return _sum(d, get_aval(d).ndim - 1, dtype, out)


def diag(v: Any, k: int = 0) -> Any:
    """A 1-D array's diagonal matrix, or a 2-D array's diagonal.

    >>> import funcgrad.numpy as fnp
    >>> fnp.diag(fnp.array([1.0, 2.0])).tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    """
    check_arraylike("diag", v)
    v = _arr(v)
    shp = get_aval(v).shape
    if len(shp) == 2:
        return diagonal(v, k)
    if len(shp) != 1:
        raise ShapeError(f"diag needs a 1-D or 2-D array, got shape {shp}")
    square = S.broadcast_in_dim(v, (shp[0], shp[0]), (1,))
    zeros = np.zeros((), get_aval(v).dtype)
    m = where(_eye_mask(shp[0], shp[0], 0), square, zeros)
    lo, hi = (0, k) if k >= 0 else (-k, 0)
    return S.pad(m, zeros, ((lo, hi, 0), (hi, lo, 0))) if k else m


def tril(m: Any, k: int = 0) -> Any:
    """Lower triangle (zeros above the k-th diagonal).

    >>> import funcgrad.numpy as fnp
    >>> fnp.tril(fnp.ones((2, 2))).tolist()
    [[1.0, 0.0], [1.0, 1.0]]
    """
    check_arraylike("tril", m)
    return _triangle(m, k, lower=True)


def _triangle(m: Any, k: int, lower: bool) -> Any:
    """``m`` with the elements off the triangle zeroed. The mask is compared from a row and
    a column index (lengths n and m) where ``m`` lives, not a host table of m's shape: that
    would be a constant of that size in a program, or a copy to the GPU on each call."""
    from funcgrad.primitives.rules import place_like  # noqa: PLC0415

    m = _arr(m)
    shp = get_aval(m).shape
    if len(shp) < 2:
        raise ValueError(f"Argument to jax.numpy.{'tril' if lower else 'triu'} must be at "
                         "least 2D")
    # Row i keeps columns j <= i + k (tril) or j >= i + k (triu).
    rows = place_like(np.arange(shp[-2]).reshape(-1, 1) + k, m)
    cols = place_like(np.arange(shp[-1]).reshape(1, -1), m)
    mask = broadcast_to_shape((E.ge if lower else E.le)(
        broadcast_to_shape(rows, shp[-2:]), broadcast_to_shape(cols, shp[-2:])), shp[-2:])
    return where(mask, m, np.zeros((), get_aval(m).dtype))


def triu(m: Any, k: int = 0) -> Any:
    """Upper triangle (zeros below the k-th diagonal).

    >>> import funcgrad.numpy as fnp
    >>> fnp.triu(fnp.ones((2, 2))).tolist()
    [[1.0, 1.0], [0.0, 1.0]]
    """
    check_arraylike("triu", m)
    return _triangle(m, k, lower=False)


def kron(a: Any, b: Any) -> Any:
    """Kronecker product (the array of lower rank gets leading axes of length 1).

    >>> import funcgrad.numpy as fnp
    >>> fnp.kron(fnp.eye(2), fnp.ones((2, 2))).shape
    (4, 4)
    """
    check_arraylike("kron", a, b)
    a, b = _pair(a, b)
    sa, sb = get_aval(a).shape, get_aval(b).shape
    if len(sa) != len(sb):
        nd = max(len(sa), len(sb))
        sa, sb = (1,) * (nd - len(sa)) + sa, (1,) * (nd - len(sb)) + sb
        a, b = S.reshape(a, sa), S.reshape(b, sb)
    nd = len(sa)
    shape = tuple(x for pair in zip(sa, sb) for x in pair)
    big_a = S.broadcast_in_dim(a, shape, tuple(range(0, 2 * nd, 2)))
    big_b = S.broadcast_in_dim(b, shape, tuple(range(1, 2 * nd, 2)))
    return reshape(multiply(big_a, big_b), tuple(x * y for x, y in zip(sa, sb)))


# JAX's keyword options of the products: ``precision`` is checked as JAX checks it (the
# backends compute at the operands' precision); ``preferred_element_type`` is the result's
# dtype, accumulated in the wider of it and the operands' promoted dtype.


def _with_options(ops: Sequence[Any], precision: Any, preferred_element_type: Any
                  ) -> tuple[list[Any], Any]:
    if precision is not None:
        check_dot_precision(precision)
    if preferred_element_type is None and precision is None:
        return list(ops), None
    ops = [_arr(o) for o in promote_args(*ops)]
    if not ops:
        return ops, None
    common = dtypes.canonicalize_dtype(get_aval(ops[0]).dtype)
    want = common if preferred_element_type is None else \
        dtypes.canonicalize_dtype(preferred_element_type)
    types = None if precision is None else algorithm_types(precision, common, common, want)
    if types is not None:
        # A DotAlgorithmPreset: operands rounded to its input type, accumulated in its own.
        return [E.convert_element_type(E.convert_element_type(o, types[0]), types[2])
                for o in ops], want
    acc = dtypes.canonicalize_dtype(dtypes.promote_types(common, want))
    return [E.convert_element_type(o, acc) for o in ops], want


def _as(out: Any, want: Any) -> Any:
    return out if want is None or get_aval(out).dtype == want else \
        E.convert_element_type(out, want)


def matmul(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None,
           out_sharding: Any = None) -> Any:
    """Matrix product with NumPy's rules (1-D promotion, broadcast batch axes).

    >>> import funcgrad.numpy as fnp
    >>> fnp.matmul(fnp.ones((5, 2, 3)), fnp.ones((3, 4)), precision="highest").shape
    (5, 2, 4)
    """
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        check_arraylike("matmul", a, b)
    (a, b), want = _with_options((a, b), precision, preferred_element_type)
    return _as(_matmul(a, b), want)


def dot(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None,
        out_sharding: Any = None) -> Any:
    """NumPy's ``dot``: inner product, matrix product, or contraction of a's last axis
    with b's second-to-last.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.dot(fnp.ones(3), fnp.ones(3), precision="highest"))
    3.0
    """
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        check_arraylike("dot", a, b)
    (a, b), want = _with_options((a, b), precision, preferred_element_type)
    return _as(_dot(a, b), want)


def vdot(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """Dot product of the flattened arrays, conjugating the first when it is complex.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.vdot(fnp.ones((2, 2)), fnp.ones((2, 2))))
    4.0
    """
    check_arraylike("vdot", a, b)
    (a, b), want = _with_options((a, b), precision, preferred_element_type)
    return _as(_vdot(a, b), want)


def inner(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """Contraction over the last axes of both.

    >>> import funcgrad.numpy as fnp
    >>> fnp.inner(fnp.ones((2, 3)), fnp.ones((4, 3))).shape
    (2, 4)
    """
    check_arraylike("inner", a, b)
    (a, b), want = _with_options((a, b), precision, preferred_element_type)
    return _as(_inner(a, b), want)


def tensordot(a: Any, b: Any, axes: Any = 2, *, precision: Any = None,
              preferred_element_type: Any = None, out_sharding: Any = None) -> Any:
    """Contract ``axes`` of a with ``axes`` of b (an int N means a's last N with b's first N).

    >>> import funcgrad.numpy as fnp
    >>> fnp.tensordot(fnp.ones((2, 3, 4)), fnp.ones((3, 4, 5))).shape
    (2, 5)
    """
    check_arraylike("tensordot", a, b)
    (a, b), want = _with_options((a, b), precision, preferred_element_type)
    return _as(_tensordot(a, b, axes), want)


def _interleaved(*args: Any) -> tuple[str, tuple[Any, ...]]:
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

    def spec(axes: Any) -> str:
        return "".join("..." if a is Ellipsis else letters[int(a)] for a in axes)

    pairs = list(args)
    out_axes = pairs.pop() if len(pairs) % 2 else None
    ops = tuple(pairs[0::2])
    text = ",".join(spec(ax) for ax in pairs[1::2])
    return (text if out_axes is None else f"{text}->{spec(out_axes)}"), ops


def einsum(subscripts: str, /, *operands: Any, out: Any = None, optimize: Any = "auto",
           precision: Any = None, preferred_element_type: Any = None,
           _dot_general: Any = None, out_sharding: Any = None) -> Any:
    """Einstein summation, e.g. ``"bij,bjk->bik"``; ``...`` and repeated letters work.
    ``optimize`` is accepted (funcgrad picks its own contraction order).

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.einsum("ii", fnp.eye(3), precision="highest"))
    3.0
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.einsum is not supported.")
    if isinstance(subscripts, str):
        check_arraylike("einsum", *operands)
    else:
        # The interleaved form einsum(a, [0, 1], b, [1, 2], [0, 2]): NumPy's letters.
        subscripts, operands = _interleaved(subscripts, *operands)
    ops, want = _with_options(operands, precision, preferred_element_type)
    return _as(_einsum(subscripts, *ops), want)
