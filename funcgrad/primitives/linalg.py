"""``dot_general``: contraction with batch dimensions, the one matrix product primitive.

``dimension_numbers = ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))``;
the result's axes are the batch axes, then lhs's free axes, then rhs's free axes.

>>> import numpy as np
>>> from funcgrad.primitives.linalg import dot_general
>>> dot_general(np.ones((2, 3)), np.ones((3, 4)), (((1,), (0,)), ((), ()))).shape
(2, 4)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.config import config
from funcgrad.core import Primitive, get_aval
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.ir import ShapedArray
from funcgrad.primitives import elementwise as E
from funcgrad.primitives import structural as S
from funcgrad.primitives.precision import algorithm_types, check_dot_precision
from funcgrad.primitives.rules import add_tangents, move_to_front, wanted

DimNums = tuple[tuple[tuple[int, ...], tuple[int, ...]], tuple[tuple[int, ...], tuple[int, ...]]]


def _canon(dimension_numbers: Any) -> DimNums:
    (lc, rc), (lb, rb) = dimension_numbers
    return ((tuple(map(int, lc)), tuple(map(int, rc))), (tuple(map(int, lb)), tuple(map(int, rb))))


def dot_general(lhs: Any, rhs: Any, dimension_numbers: Any, precision: Any = None,
                preferred_element_type: Any = None, *, out_sharding: Any = None) -> Any:
    """``jax.lax.dot_general``. ``precision`` is checked as JAX checks it (the product is
    computed at the operands' precision); ``preferred_element_type`` is the result's dtype,
    accumulated in the wider of it and the operands' dtype."""
    del out_sharding  # one device: nothing to place
    if precision is not None:
        check_dot_precision(precision)
    dims = _canon(dimension_numbers)
    ld, rd = get_aval(lhs).dtype, get_aval(rhs).dtype
    if precision is not None:
        # A DotAlgorithmPreset rounds the operands to the types it takes and accumulates
        # in its own type, as JAX converts them.
        out_dt = dtypes.canonicalize_dtype(dtypes.promote_types(ld, rd) if
                                           preferred_element_type is None else
                                           preferred_element_type)
        types = algorithm_types(precision, dtypes.canonicalize_dtype(ld),
                                dtypes.canonicalize_dtype(rd), out_dt)
        if types is not None:
            lt, rt, acc = types
            lhs = E.convert_element_type(E.convert_element_type(lhs, lt), acc)
            rhs = E.convert_element_type(E.convert_element_type(rhs, rt), acc)
            out = dot_general_p.bind(lhs, rhs, dimension_numbers=dims)
            return out if acc == out_dt else E.convert_element_type(out, out_dt)
    if preferred_element_type is None and ld == rd:
        return dot_general_p.bind(lhs, rhs, dimension_numbers=dims)
    # Mixed operand dtypes meet at their promoted type (as JAX's dot_general takes them).
    common = dtypes.promote_types(ld, rd)
    want = common if preferred_element_type is None else \
        dtypes.canonicalize_dtype(preferred_element_type)
    acc = dtypes.canonicalize_dtype(dtypes.promote_types(common, want))
    lhs, rhs = E.convert_element_type(lhs, acc), E.convert_element_type(rhs, acc)
    out = dot_general_p.bind(lhs, rhs, dimension_numbers=dims)
    return out if acc == want else E.convert_element_type(out, want)


def _free(ndim: int, contract: Sequence[int], batch: Sequence[int]) -> tuple[int, ...]:
    return tuple(i for i in range(ndim) if i not in contract and i not in batch)


def _dot_abstract(lhs: ShapedArray, rhs: ShapedArray, *, dimension_numbers: DimNums
                  ) -> ShapedArray:
    (lc, rc), (lb, rb) = dimension_numbers
    if lhs.dtype != rhs.dtype:
        raise DTypeError(f"operands have different dtypes {lhs.dtype} and {rhs.dtype}")
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise ShapeError(f"dimension_numbers {dimension_numbers} pair unequal axis counts")
    for axes, x, side in ((lc + lb, lhs, "lhs"), (rc + rb, rhs, "rhs")):
        if len(set(axes)) != len(axes) or any(not 0 <= a < x.ndim for a in axes):
            raise ShapeError(f"{side} axes {axes} are not distinct axes of rank {x.ndim}")
    for a, b in zip(lc, rc):
        if lhs.shape[a] != rhs.shape[b]:
            raise ShapeError(
                f"contracting lhs axis {a} (size {lhs.shape[a]}) with rhs axis {b} "
                f"(size {rhs.shape[b]}): sizes differ"
            )
    for a, b in zip(lb, rb):
        if lhs.shape[a] != rhs.shape[b]:
            raise ShapeError(f"batch axes lhs {a} and rhs {b} have different sizes")
    shape = ([lhs.shape[a] for a in lb] + [lhs.shape[a] for a in _free(lhs.ndim, lc, lb)]
             + [rhs.shape[a] for a in _free(rhs.ndim, rc, rb)])
    return ShapedArray(shape, lhs.dtype, lhs.weak_type and rhs.weak_type)


def _matrix_product(xp: Any, lhs: Any, rhs: Any, lc: int, rc: int) -> Any:
    """A product of two matrices (one contracted axis each, no batch axes): the operands
    as views, no reshapes."""
    a = lhs if lc == 1 else lhs.T
    c = rhs if rc == 0 else rhs.T
    if xp is np and a.shape[0] <= 64 < c.shape[1] and c.T.flags.c_contiguous and \
            a.flags.c_contiguous:
        # A few rows times a transposed C-ordered matrix (a Linear layer's x @ W.T):
        # OpenBLAS's sgemm is ~1.25x slower on that "NT" form than on W @ x.T, whose
        # transpose is the product. Copied to C order (a few us): left in Fortran order, it
        # would slow every operation after it (the next layer's product by ~1.3x).
        return xp.ascontiguousarray(xp.matmul(c.T, a.T).T)
    return xp.matmul(a, c)


def matrix_operand_layout(eqn: Any, var: Any) -> Callable[[Any], Any] | None:
    """For a loop-invariant ``var`` that ``eqn`` (a 2-D ``dot_general``) takes as its right
    operand: the function that lays that matrix out as the product reads it fastest (the
    contracted axis leading, C order), to apply once before a loop instead of paying the
    slower transposed BLAS form (or a result in Fortran order, which every elementwise
    operation after it then reads across the grain) at every step. None for other uses.

    >>> import funcgrad as fg
    >>> j = fg.make_jaxpr(lambda h, w: h @ w)(np.ones((2, 3)), np.ones((3, 4))).jaxpr
    >>> lay = matrix_operand_layout(j.eqns[0], j.invars[1])
    >>> lay(np.ones((4, 3)).T).flags.c_contiguous
    True
    """
    if eqn.primitive is not dot_general_p or len(eqn.inputs) != 2 or \
            eqn.inputs[1] is not var or eqn.inputs[0] is var:
        return None
    (lc, rc), (lb, _) = eqn.params["dimension_numbers"]
    if eqn.inputs[0].aval.ndim != 2 or var.aval.ndim != 2 or len(lc) != 1 or lb:
        return None
    if rc[0] == 0:
        return np.ascontiguousarray
    return _contracted_rows_last


def _contracted_rows_last(w: Any) -> Any:
    return np.ascontiguousarray(w.T).T


# jax_default_matmul_precision values that allow TF32 for float32 products on a GPU (the
# PyTorch face sets them through set_float32_matmul_precision / allow_tf32). Unset, products
# are exact float32 (docs/sharp_bits.md: JAX's GPU default is TF32).
_TF32 = frozenset({"default", "fastest", "high", "bfloat16", "tensorfloat32", "bfloat16_3x",
                   "tensorfloat32_3x"})
_COMPUTE_TYPE: list[Any] = [None]  # whether cuBLAS was last told to use TF32


def device_matmul_precision(xp: Any, dtype: Any) -> None:
    """Before a float32 product on a GPU: set CuPy's cuBLAS compute type (process-wide) to
    TF32 or to exact float32 as ``jax_default_matmul_precision`` asks."""
    if xp is np or dtype != np.float32:
        return
    want = config.read("jax_default_matmul_precision") in _TF32
    if _COMPUTE_TYPE[0] is not want:
        import importlib  # noqa: PLC0415

        routines = importlib.import_module("cupy._core._routines_linalg")
        routines.set_compute_type(np.float32, routines.COMPUTE_TYPE_TF32 if want
                                  else routines.COMPUTE_TYPE_DEFAULT)
        _COMPUTE_TYPE[0] = want


def _dot_impl(xp: Any, lhs: Any, rhs: Any, *, dimension_numbers: DimNums) -> Any:
    device_matmul_precision(xp, lhs.dtype)
    out = _dot_any(xp, lhs, rhs, dimension_numbers)
    # NumPy's matmul on ml_dtypes' bfloat16 accumulates and returns float32; XLA (and
    # PyTorch) round that float32 sum back to the operands' type.
    return out if out.dtype == lhs.dtype else out.astype(lhs.dtype)


def _dot_any(xp: Any, lhs: Any, rhs: Any, dimension_numbers: DimNums) -> Any:
    (lc, rc), (lb, rb) = dimension_numbers
    if lhs.ndim == 2 and rhs.ndim == 2 and len(lc) == 1 and not lb:
        return _matrix_product(xp, lhs, rhs, lc[0], rc[0])
    lf, rf = _free(lhs.ndim, lc, lb), _free(rhs.ndim, rc, rb)
    bshape = [lhs.shape[a] for a in lb]
    lfs, rfs = [lhs.shape[a] for a in lf], [rhs.shape[a] for a in rf]
    b, m, n = math.prod(bshape), math.prod(lfs), math.prod(rfs)
    k = math.prod([lhs.shape[a] for a in lc])
    a = xp.transpose(lhs, lb + lf + lc).reshape(b, m, k)
    c = xp.transpose(rhs, rb + rc + rf).reshape(b, k, n)
    if not lc:
        # Nothing to contract: an outer product per batch member, cheaper as a broadcast
        # multiply than as many tiny matrix products.
        return (a * c).reshape(bshape + lfs + rfs)
    if b == 1:
        return _matrix_product(xp, a[0], c[0], 1, 0).reshape(bshape + lfs + rfs)
    return xp.matmul(a, c).reshape(bshape + lfs + rfs)


dot_general_p = Primitive("dot_general", abstract_eval=_dot_abstract, impl=_dot_impl)
dot_general_p.loop_invariant_layout = matrix_operand_layout


def _transpose_operand(ct: Any, other: Any, x_ndim: int, x_contract: tuple[int, ...],
                       x_batch: tuple[int, ...], o_contract: tuple[int, ...],
                       o_batch: tuple[int, ...], x_is_lhs: bool) -> Any:
    """Cotangent of one operand of dot_general, given the other operand."""
    o_ndim = get_aval(other).ndim
    nb = len(x_batch)
    n_xf = len(_free(x_ndim, x_contract, x_batch))
    n_of = len(_free(o_ndim, o_contract, o_batch))
    if x_is_lhs:
        ct_other_free = tuple(range(nb + n_xf, nb + n_xf + n_of))
    else:
        ct_other_free = tuple(range(nb, nb + n_of))
    o_free = _free(o_ndim, o_contract, o_batch)
    x_free = list(_free(x_ndim, x_contract, x_batch))
    from_other = [x_contract[o_contract.index(a)] for a in sorted(o_contract)]
    # With ``other`` first, the product's axes are batch, x's contracted, x's free: where
    # that is x's own order (a weight's cotangent h^T @ ct), no transpose follows (the
    # transposed result would be added into a gradient through strided reads).
    swapped = list(x_batch) + from_other + x_free
    if swapped == list(range(x_ndim)):
        dims = ((o_free, ct_other_free), (o_batch, tuple(range(nb))))
        return dot_general(other, ct, dims)
    dims = ((ct_other_free, o_free), (tuple(range(nb)), o_batch))
    out = dot_general(ct, other, dims)
    # out's axes: batch, x's free axes, then other's contracted axes in increasing order.
    layout = list(x_batch) + x_free + from_other
    return S.transpose(out, tuple(int(i) for i in np.argsort(layout)))


def _dot_vjp(ct: Any, primals: Sequence[Any], ans: Any, *, dimension_numbers: DimNums
             ) -> list[Any]:
    (lc, rc), (lb, rb) = dimension_numbers
    lhs, rhs = primals
    # A Linear layer's input rarely needs a cotangent: its product is skipped (the
    # costliest part of a first layer's backward) and its weight is not kept for it.
    return [
        _transpose_operand(ct, rhs, get_aval(lhs).ndim, lc, lb, rc, rb, True)
        if wanted(0) else None,
        _transpose_operand(ct, lhs, get_aval(rhs).ndim, rc, rb, lc, lb, False)
        if wanted(1) else None,
    ]


def _dot_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, dimension_numbers: DimNums
             ) -> Any:
    lhs, rhs = primals
    tl, tr = tangents
    ans = dot_general_p.bind(lhs, rhs, dimension_numbers=dimension_numbers)
    out = None
    if tl is not None:
        out = dot_general_p.bind(tl, rhs, dimension_numbers=dimension_numbers)
    if tr is not None:
        out = add_tangents(out, dot_general_p.bind(lhs, tr, dimension_numbers=dimension_numbers))
    return ans, out


dot_general_p.jvp, dot_general_p.vjp = _dot_jvp, _dot_vjp
dot_general_p.vjp_reads = "x0,x1"
dot_general_p.vjp_reads_for = ("x1", "x0")


def _dot_batch(args: Sequence[Any], dims: Sequence[int | None], *, dimension_numbers: DimNums
               ) -> Any:
    (lc, rc), (lb, rb) = dimension_numbers
    lhs, rhs = (move_to_front(a, d) for a, d in zip(args, dims))
    ld, rd = dims
    up = lambda axes: tuple(a + 1 for a in axes)  # noqa: E731
    if ld is not None and rd is not None:
        # Both batched: the vmapped axis becomes the leading dot_general batch axis.
        dn = ((up(lc), up(rc)), ((0, *up(lb)), (0, *up(rb))))
        return dot_general(lhs, rhs, dn), 0
    if ld is not None:
        # Only lhs: its batch axis is lhs's first free axis.
        dn = ((up(lc), rc), (up(lb), rb))
        return dot_general(lhs, rhs, dn), len(lb)
    dn = ((lc, up(rc)), (lb, up(rb)))
    n_lhs_free = get_aval(lhs).ndim - len(lc) - len(lb)
    return dot_general(lhs, rhs, dn), len(lb) + n_lhs_free


dot_general_p.batch = _dot_batch


dot_general_p.describe(lax="dot_general", fusion=None, cuda=None, ufunc=None,
                       torch_method=None, torch_node="Mm", lax_fn=dot_general)

__all__ = ["dot_general", "dot_general_p"]
