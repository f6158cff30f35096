"""The Tensor methods and ``torch.<name>`` functions that are linear algebra:
``inverse``, ``det``, ``logdet``, ``slogdet``, ``cholesky*``, ``triangular_solve``,
``svd`` (``V``, not ``Vh``), ``qr``, ``lu``/``lu_solve``/``lu_unpack``, ``pinverse``,
``matrix_power``, ``matrix_exp``, ``trace``, ``cross``, ``kron``, ``inner``, ``vdot``,
``tensordot``, ``vander``, ``diagonal``/``diag_embed``/``diagflat``, ``chain_matmul``.
Each records the graph through the engine (``torch.linalg`` and ``funcgrad.numpy``).

>>> import funcgrad.torch as torch
>>> torch.tensor([[2.0, 1.0], [0.0, 3.0]]).det()
tensor(6.)
>>> torch.svd(torch.tensor([[0.0, 2.0], [1.0, 0.0]])).S
tensor([2., 1.])
"""

from __future__ import annotations

import builtins
from typing import Any, cast

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.torch import _dtypes as D
from funcgrad.torch import linalg as L
from funcgrad.torch._autocast import autocast_namespace, autocast_op
from funcgrad.torch._functions import _need_tensor, matmul
from funcgrad.torch._grad_mode import is_grad_enabled
from funcgrad.torch._return_types import named_result
from funcgrad.torch._tensor import _CPP, Tensor, _view_op, apply_op, same_vector_dtypes

# ------------------------------------------------------------------ methods


def inverse(self: Tensor) -> Tensor:
    """The inverse of each square matrix (``torch.linalg.inv``)."""
    return L.inv(self)


def det(self: Tensor) -> Tensor:
    """The determinant (``torch.linalg.det``)."""
    return L.det(self)


def logdet(self: Tensor) -> Tensor:
    """``log(det)``: NaN for a negative determinant, -inf for a zero one; for a complex
    matrix ``log(sign) + logabsdet`` (PyTorch's, so a singular one gives -inf+nanj)."""
    if L._is_half(self):
        L._no_half("logdet", L._matrix("slogdet", self))
    s, la = L.slogdet(self)
    if self.dtype.is_complex:
        return cast(Tensor, s.log() + la)
    return cast(Tensor, apply_op("Where", lambda sg, v: fnp.where(
        sg < 0, fnp.nan, v), s, la))


def slogdet(self: Tensor) -> Any:
    """``torch.return_types.slogdet(sign, logabsdet)``."""
    s, la = L.slogdet(self)
    return named_result("slogdet", ("sign", "logabsdet"), (s, la))


def cholesky(self: Tensor, upper: builtins.bool = False) -> Tensor:
    """The Cholesky factor (deprecated in PyTorch for ``torch.linalg.cholesky``)."""
    a = L._matrix("cholesky", self)
    L._no_half_kernel("cholesky_cpu", a)
    L._raise_info("cholesky", L._infos(a, "potrf"), "potrf")
    low = apply_op("Cholesky", lambda x: fnp.linalg.cholesky(L._one_triangle(x, True)), a)
    return cast(Tensor, low.mH if upper else low)


def _cho_solve(b: Any, f: Any, upper: builtins.bool) -> Any:
    from funcgrad import lax  # noqa: PLC0415

    # LAPACK reads one triangle of the factor; PyTorch's derivative is that of
    # solve(F F^T, b) (or F^T F) with the whole of F, so the other triangle gets one too.
    tri = fnp.triu(f) if upper else fnp.tril(f)
    full = lax.stop_gradient(tri - f) + f
    full_h = fnp.conj(fnp.swapaxes(full, -1, -2)) if fnp.iscomplexobj(full) else \
        fnp.swapaxes(full, -1, -2)
    a = fnp.matmul(full_h, full) if upper else fnp.matmul(full, full_h)
    batch = np.broadcast_shapes(b.shape[:-2], a.shape[:-2])
    return fnp.linalg.solve(fnp.broadcast_to(a, (*batch, *a.shape[-2:])),
                            fnp.broadcast_to(b, (*batch, *b.shape[-2:])))


def _same_dtype(b: Tensor, a: Any) -> None:
    """The dtype check of ``cholesky_solve`` and ``triangular_solve`` (PyTorch's text)."""
    if isinstance(a, Tensor) and a.dtype is not b.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_CPP[b.dtype.name]} and A of type {_CPP[a.dtype.name]} "
                           "instead.")


def cholesky_solve(self: Tensor, input2: Tensor, upper: builtins.bool = False) -> Tensor:
    """The solution of ``A @ X = self`` given ``A``'s Cholesky factor ``input2``."""
    _same_dtype(self, input2)
    L._no_half_kernel("cholesky_solve_cpu", input2, skip_empty=False)
    return cast(Tensor, apply_op("CholeskySolve", lambda b, f: _cho_solve(b, f, upper),
                                 self, input2))


def cholesky_inverse(self: Tensor, upper: builtins.bool = False) -> Tensor:
    """The inverse of ``A`` given its Cholesky factor."""
    L._no_half_kernel("cholesky_inverse_out_cpu", self, skip_empty=False)
    return cast(Tensor, apply_op("CholeskyInverse", lambda f: _cho_solve(
        fnp.broadcast_to(fnp.eye(f.shape[-1], dtype=f.dtype), f.shape), f, upper), self))


def triangular_solve(self: Tensor, A: Tensor, upper: builtins.bool = True,  # noqa: N803
                     transpose: builtins.bool = False, unitriangular: builtins.bool = False
                     ) -> Any:
    """``(solution, cloned_coefficient)`` of ``A @ X = self`` for triangular ``A``."""
    from funcgrad.lax import linalg as lax_linalg  # noqa: PLC0415

    _same_dtype(self, A)
    L._no_half_kernel("triangular_solve_cpu", A, skip_empty=False)

    def run(b: Any, a: Any) -> Any:
        batch = np.broadcast_shapes(b.shape[:-2], a.shape[:-2])
        b = fnp.broadcast_to(b, (*batch, *b.shape[-2:]))
        a = fnp.broadcast_to(a, (*batch, *a.shape[-2:]))
        x = lax_linalg.triangular_solve(a, b, left_side=True, lower=not upper,
                                        transpose_a=transpose, unit_diagonal=unitriangular)
        return x, a + 0

    x, c = apply_op("TriangularSolve", run, self, A)
    return named_result("triangular_solve", ("solution", "cloned_coefficient"), (x, c))


def svd(self: Tensor, some: builtins.bool = True, compute_uv: builtins.bool = True) -> Any:
    """``(U, S, V)`` with ``self = U @ diag(S) @ V.mT`` (zero U and V without
    ``compute_uv``)."""
    if not compute_uv:
        s = L.svdvals(self)
        m, n = self.shape[-2:]
        z = np.zeros
        dt = self._data.dtype
        u = Tensor._from_data(z((*self.shape[:-2], m, m), dt))
        v = Tensor._from_data(z((*self.shape[:-2], n, n), dt))
        return named_result("svd", ("U", "S", "V"), (u, s, v))
    u, s, vh = L.svd(self, full_matrices=not some)
    v = vh.mH if vh.dtype.is_complex else vh.transpose(-2, -1)
    return named_result("svd", ("U", "S", "V"), (u, s, v))


def qr(self: Tensor, some: builtins.bool = True) -> Any:
    """``(Q, R)``: reduced with ``some=True``, complete otherwise."""
    q, r = L.qr(self, "reduced" if some else "complete")
    return named_result("qr", ("Q", "R"), (q, r))


def lu(self: Tensor, pivot: builtins.bool = True, get_infos: builtins.bool = False) -> Any:
    """``(LU, pivots)`` (and ``infos`` with ``get_infos``), as ``torch.linalg.lu_factor_ex``."""
    res = L.lu_factor_ex(self, pivot=pivot, check_errors=not get_infos)
    return (res.LU, res.pivots, res.info) if get_infos else (res.LU, res.pivots)


def lu_solve(self: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:  # noqa: N803
    """The solution of ``A @ X = self`` from ``A``'s LU factorization."""
    return L.lu_solve(LU_data, LU_pivots, self)


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: builtins.bool = True,  # noqa: N803
              unpack_pivots: builtins.bool = True) -> Any:
    """``(P, L, U)`` from ``lu_factor``'s compact form.

    >>> import funcgrad.torch as torch
    >>> torch.lu_unpack(*torch.linalg.lu_factor(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))).P
    tensor([[0., 1.],
            [1., 0.]])
    """
    m = LU_data.shape[-2]
    perm = L._permutation(LU_pivots, m)
    low, up = apply_op("LuUnpack", lambda x: L._unpack(x, perm)[1:], LU_data)
    p = Tensor._from_data(L._unpack(np.zeros(LU_data.shape, LU_data._data.dtype), perm)[0])
    empty = Tensor._from_data(np.zeros((0,), LU_data._data.dtype))
    return named_result("lu_unpack", ("P", "L", "U"), (
        p if unpack_pivots else empty, low if unpack_data else empty,
        up if unpack_data else empty))


def pinverse(self: Tensor, rcond: builtins.float = 1e-15) -> Tensor:
    """The pseudo-inverse with singular values below ``rcond * s_max`` dropped."""
    return L.pinv(self, rtol=rcond)


def matrix_power(self: Tensor, n: builtins.int) -> Tensor:
    return L.matrix_power(self, n)


def matrix_exp(self: Tensor) -> Tensor:
    return L.matrix_exp(self)


def trace(self: Tensor) -> Tensor:
    """The sum of the main diagonal of a matrix."""
    if self.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {self.dim()}")
    from funcgrad.torch._tensor import _sum_dtype  # noqa: PLC0415

    dt = _sum_dtype(self.dtype, None)
    return cast(Tensor, apply_op("Trace", lambda x: fnp.trace(fnp.astype(x, dt.np)), self,
                                 saves_tensors=False))


def cross(self: Tensor, other: Tensor, dim: builtins.int | None = None) -> Tensor:
    """The cross product along ``dim`` (the first axis of length 3 when not given)."""
    if dim is None:
        dim = next((i for i, d in enumerate(self.shape) if d == 3), -1)
    return L.cross(self, other, dim=dim)


def kron(self: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product."""
    return cast(Tensor, apply_op("UnsafeView", fnp.kron, self, other))


def inner(self: Tensor, other: Any) -> Tensor:
    """The sum of products over the last axes."""
    if self.dim() == 0 or getattr(other, "ndim", 0) == 0:
        return cast(Tensor, self * other)
    if isinstance(other, Tensor) and other.dtype is not self.dtype:
        raise RuntimeError("both inputs should have same dtype")
    # PyTorch's inner is a tensordot, whose last step is a view (ViewBackward0).
    return cast(Tensor, apply_op("View", fnp.inner, self, other))


def vdot(self: Tensor, other: Tensor) -> Tensor:
    """The dot product of two vectors, the first conjugated."""
    if self.dim() != 1 or other.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {self.dim()}D and {other.dim()}D "
                           "tensors")
    same_vector_dtypes(self, other)
    return cast(Tensor, apply_op("Vdot", fnp.vdot, self, other))


def diagonal(self: Tensor, offset: builtins.int = 0, dim1: builtins.int = 0,
             dim2: builtins.int = 1) -> Tensor:
    """The diagonal over axes ``dim1`` and ``dim2`` (moved to the end); a view, as in
    PyTorch, where nothing is recorded (``x.diagonal().add_(eps)`` changes ``x``)."""
    data = self._data
    if type(data) is np.ndarray and not (self._requires_grad and is_grad_enabled()):
        view = np.diagonal(data, offset, dim1, dim2)
        if data.flags.writeable:
            view.flags.writeable = True  # NumPy's diagonal views are read-only by default
        out = Tensor._from_data(view)
        out._vc, out._view_flag, out._inference = self._vc, True, self._inference
        out._view_base = self if self._view_base is None else self._view_base
        return out
    # Recorded, a view too (an in-place change of it writes into self: CopySlices).
    return _view_op("Diagonal", lambda x: fnp.diagonal(x, offset, dim1, dim2), self,
                    saves_tensors=False, copied=True)


def diag_embed(self: Tensor, offset: builtins.int = 0, dim1: builtins.int = -2,
               dim2: builtins.int = -1) -> Tensor:
    """Matrices with the last axis of ``self`` on their ``offset`` diagonal."""
    n = self.shape[-1] + builtins.abs(offset)
    nd = self.dim() + 1
    d1, d2 = dim1 % nd, dim2 % nd

    def run(x: Any) -> Any:
        eye = fnp.eye(n, k=offset, dtype=x.dtype)
        pad = [(0, 0)] * (x.ndim - 1) + [(builtins.max(-offset, 0), builtins.max(offset, 0))]
        full = fnp.pad(x, pad)[..., :, None] * eye if offset >= 0 else \
            fnp.pad(x, pad)[..., None, :] * eye
        # ``full`` is (..., n, n) with the diagonal from the last axis; move its two
        # matrix axes to dim1 and dim2.
        order = list(range(x.ndim - 1))
        perm: list[Any] = [None] * nd
        perm[d1], perm[d2] = x.ndim - 1, x.ndim
        rest = iter(order)
        perm = [p if p is not None else next(rest) for p in perm]
        return fnp.transpose(full, [builtins.int(i) for i in np.argsort(perm)])

    return cast(Tensor, apply_op("DiagEmbed", run, self, saves_tensors=False))


def diagflat(self: Tensor, offset: builtins.int = 0) -> Tensor:
    """The flattened input on the ``offset`` diagonal of a square matrix."""
    return cast(Tensor, apply_op("Diagflat", lambda x: fnp.diag(fnp.ravel(x), offset), self))


_METHODS = {
    "inverse": inverse, "det": det, "logdet": logdet, "slogdet": slogdet,
    "cholesky": cholesky, "cholesky_solve": cholesky_solve,
    "cholesky_inverse": cholesky_inverse, "triangular_solve": triangular_solve, "svd": svd,
    "qr": qr, "lu": lu, "lu_solve": lu_solve, "pinverse": pinverse,
    "matrix_power": matrix_power, "matrix_exp": matrix_exp, "trace": trace, "cross": cross,
    "kron": kron, "inner": inner, "vdot": vdot, "diagonal": diagonal,
    "diag_embed": diag_embed, "diagflat": diagflat,
}

autocast_namespace(_METHODS)
for _name, _fn in _METHODS.items():
    setattr(Tensor, _name, _fn)


# ------------------------------------------------------------ free functions


@autocast_op("tensordot")
def tensordot(a: Tensor, b: Tensor, dims: Any = 2, out: Any = None) -> Tensor:
    """The sum of products over ``dims`` axes (an int: the last of ``a``, the first of
    ``b``; or two lists of axes).

    >>> import funcgrad.torch as torch
    >>> torch.tensordot(torch.ones(2, 3), torch.ones(3, 4), dims=1).shape
    torch.Size([2, 4])
    """
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, builtins.int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > builtins.min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got "
                               f"dims={dims}")
        da, db = list(range(-dims, 0)), list(range(dims))
    else:
        da, db = ([d] if isinstance(d, builtins.int) else list(d) for d in dims)
        if isinstance(dims[0], builtins.int) and isinstance(dims[1], builtins.int) \
                and len(dims) == 2:
            raise TypeError("tensordot(): argument 'dims_self' (position 3) must be "
                            "tuple of ints, not int")
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    for t, ds in ((a, da), (b, db)):
        n = builtins.max(t.dim(), 1)
        for d in ds:
            if not -n <= d < n:
                raise IndexError(f"Dimension out of range (expected to be in range of "
                                 f"[{-n}, {n - 1}], but got {d})")
    for i, j in zip(da, db):
        s1, s2 = a.shape[i], b.shape[j]
        # PyTorch sums a contracted axis of size 1 facing a longer one (a broadcast).
        if s2 == 1 and s1 != 1:
            a = a.sum(i, keepdim=True)
        elif s1 == 1 and s2 != 1:
            b = b.sum(j, keepdim=True)
        elif s1 != s2:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{s1} in dim {i} and second has size {s2} in dim {j}")
    axes = (tuple(da), tuple(db))
    return cast(Tensor, apply_op("View", lambda x, y: fnp.tensordot(x, y, axes), a, b))


def vander(x: Tensor, N: builtins.int | None = None,  # noqa: N803
           increasing: builtins.bool = False) -> Tensor:
    """The Vandermonde matrix: powers decreasing along each row unless ``increasing``.

    >>> import funcgrad.torch as torch
    >>> torch.vander(torch.tensor([1, 2, 3]))
    tensor([[1, 1, 1],
            [4, 2, 1],
            [9, 3, 1]])
    """
    x = _need_tensor("vander", x)
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    if N is not None and N < 0:
        raise RuntimeError("N must be non-negative.")
    if D.category(x.dtype) <= 1:
        x = x.to(D.int64)  # PyTorch's powers come from cumprod: integers widen to int64
    if (x.shape[0] if N is None else N) == 0:
        # PyTorch returns a new empty matrix here, outside the graph.
        return Tensor._from_data(np.zeros((x.shape[0], 0), x.dtype.np)).to(x.device)
    v = L._vander(x, x.shape[0] if N is None else N)
    return v if increasing else v.flip(-1)


@autocast_op("chain_matmul")
def chain_matmul(*matrices: Tensor, out: Any = None) -> Tensor:
    """The product of a chain of matrices (deprecated for ``torch.linalg.multi_dot``).

    >>> import funcgrad.torch as torch
    >>> torch.chain_matmul(torch.eye(2), torch.ones(2, 1))
    tensor([[1.],
            [1.]])
    """
    if len(matrices) == 1:
        return matrices[0].clone()
    result = matrices[0]
    for m in matrices[1:]:
        result = matmul(result, m)
    return result


def _functions() -> dict[str, Any]:
    return {"lu_unpack": lu_unpack, "tensordot": tensordot, "vander": vander,
            "chain_matmul": chain_matmul, "svd": svd, "qr": qr, "lu": lu}


FUNCTIONS: dict[str, Any] = _functions()
__all__ = ["FUNCTIONS", "chain_matmul", "lu_unpack", "tensordot", "vander"]
