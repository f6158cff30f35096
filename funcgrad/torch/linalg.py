"""``torch.linalg``: norms, products, factorizations, solves and inverses, as PyTorch 2.13's,
recorded on the graph through the engine's linear-algebra functions (their derivative
rules are the engine's), with PyTorch's node names and ``torch.return_types`` results.

>>> import funcgrad.torch as torch
>>> torch.linalg.vector_norm(torch.tensor([3.0, 4.0]))
tensor(5.)
>>> torch.linalg.matrix_norm(torch.eye(2))
tensor(1.4142)
>>> torch.linalg.slogdet(torch.tensor([[2.0, 0.0], [0.0, 3.0]])).logabsdet
tensor(1.7918)
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np

import funcgrad.numpy as jnp
from funcgrad import lax
from funcgrad.lax import linalg as lax_linalg
from funcgrad.numpy.linalg import _chain_order as numpy_chain_order
from funcgrad.primitives.elementwise import power_by_squaring
from funcgrad.scipy import linalg as scipy_linalg
from funcgrad.torch import _dtypes as D
from funcgrad.torch._autocast import autocast_namespace
from funcgrad.torch._functions import _need_tensor, matmul
from funcgrad.torch._grad_mode import is_grad_enabled, no_grad
from funcgrad.torch._return_types import named_result
from funcgrad.torch._tensor import _CPP, Tensor, apply_op, cpp_type_name, vector_norm_of

_INF = math.inf


class _LinAlgError(RuntimeError):
    """A matrix that a factorization or an inverse cannot handle (singular, not positive
    definite): PyTorch's ``torch.linalg.LinAlgError``, a ``RuntimeError``."""


_LinAlgError.__module__ = "torch._C"
LinAlgError = _LinAlgError

common_notes = {
    "experimental_warning": "This function is \"experimental\" and it may change in a "
                            "future PyTorch release.",
    "sync_note": "When inputs are on a CUDA device, this function synchronizes that device "
                 "with the CPU.",
    "sync_note_ex": "When the inputs are on a CUDA device, this function synchronizes only "
                    "when :attr:`check_errors`\\ ``= True``.",
    "sync_note_has_ex": "When inputs are on a CUDA device, this function synchronizes that "
                        "device with the CPU. For a version of this function that does not "
                        "synchronize, see :func:`{}`.",
}


# Functions whose refusal of an integer or bool input comes from another place in PyTorch
# than linalg's dtype check (a kernel, or the function it calls): the error and its text.
_NOT_FLOAT: dict[str, tuple[type[Exception], str]] = {
    "eigh": (NotImplementedError, "\"linalg_eigh_cpu\" not implemented for '{}'"),
    "eig": (RuntimeError, "Unknown Complex ScalarType for {}"),
    "lu_factor_ex": (NotImplementedError, "\"lu_cpu\" not implemented for '{}'"),
    "lu": (NotImplementedError, "\"lu_cpu\" not implemented for '{}'"),
    "matrix_rank": (RuntimeError, "This function doesn't handle types other than float and "
                                  "double"),
}
# ...or linalg's check under the name of the function they call.
_CHECKED_AS = {"svdvals": "svd", "cond": "svd", "norm": "vector_norm"}


def _tensor(name: str, x: Any) -> Tensor:
    x = _need_tensor(f"linalg.{name}", x)
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        refusal = _NOT_FLOAT.get(name)
        if refusal is not None:
            raise refusal[0](refusal[1].format(_CPP[x.dtype.name]))
        raise RuntimeError(f"linalg.{_CHECKED_AS.get(name, name)}: Expected a floating point "
                           f"or complex tensor as input. Got {_CPP[x.dtype.name]}")
    return x


def _float_ord(ord: Any) -> builtins.float:  # noqa: A002 - PyTorch's name
    return builtins.float(ord)


def vector_norm(x: Tensor, ord: Any = 2, dim: Any = None, keepdim: builtins.bool = False,
                *, dtype: Any = None) -> Tensor:
    """The ``ord``-norm of ``x`` as a vector (over ``dim``, or all of it).

    >>> import funcgrad.torch as torch
    >>> torch.linalg.vector_norm(torch.tensor([[1.0, -2.0], [2.0, 0.0]]), ord=1, dim=1)
    tensor([3., 2.])
    """
    x = _tensor("vector_norm", x)
    if dtype is not None:
        x = x.to(dtype)
    return vector_norm_of(x, _float_ord(ord), dim, keepdim)


def matrix_norm(a: Tensor, ord: Any = "fro", dim: Sequence[builtins.int] = (-2, -1),
                keepdim: builtins.bool = False, *, dtype: Any = None) -> Tensor:
    """A matrix norm over the two axes ``dim``: ``"fro"``, ``"nuc"``, ``1``, ``-1``, ``2``,
    ``-2``, ``inf``, ``-inf``.

    >>> import funcgrad.torch as torch
    >>> torch.linalg.matrix_norm(torch.tensor([[1.0, -2.0], [3.0, 4.0]]), ord=1)
    tensor(6.)
    """
    a = _tensor("matrix_norm", a)
    if a.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    if dtype is not None:
        a = a.to(dtype)
    r, c = (d % a.dim() for d in dim)
    if ord == "fro":
        return vector_norm(a, 2, (r, c), keepdim)
    if ord in (1, -1, _INF, -_INF):
        # 1: the largest column sum (over rows); inf: the largest row sum (over columns).
        over, then = (r, c) if ord in (1, -1) else (c, r)
        sums = cast(Any, a).abs().sum(dim=over, keepdim=keepdim)
        then = then if keepdim or then < over else then - 1
        return sums.amax(dim=then, keepdim=keepdim) if ord in (1, _INF) else \
            sums.amin(dim=then, keepdim=keepdim)
    if ord in (2, -2, "nuc"):
        _no_half("linalg.matrix_norm", a)
        # From the singular values: the largest (2), the smallest (-2), their sum ("nuc").
        sv = svdvals(cast(Any, a).movedim((r, c), (-2, -1)))
        out = sv.sum(-1) if ord == "nuc" else sv.amax(-1) if ord == 2 else sv.amin(-1)
        if keepdim:
            for d in sorted((r, c)):
                out = out.unsqueeze(d)
        return out
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def _with_matrix_norms(plain: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """``Tensor.norm`` taking ``p="nuc"`` (and other strings) as matrix norms, as PyTorch."""
    def norm(self: Tensor, p: Any = "fro", dim: Any = None,
             keepdim: builtins.bool = False) -> Tensor:
        dims = tuple(range(self.ndim)) if dim is None else (
            (dim,) if isinstance(dim, builtins.int) else tuple(dim))
        # "fro" over at most two axes is the 2-norm of the entries; over more, PyTorch
        # sends it to matrix_norm, which refuses it.
        if not isinstance(p, str) or (p == "fro" and (dim is None or len(dims) <= 2)):
            return plain(self, p, dim, keepdim)
        if p not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
        if self.ndim < 2:
            raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                               "dimensions.")
        if len(dims) != 2:
            raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got "
                               + " ".join(str(d) for d in dims))
        return matrix_norm(self, p, dims, keepdim)

    norm.__doc__ = plain.__doc__
    return norm


setattr(Tensor, "norm", _with_matrix_norms(getattr(Tensor, "norm")))  # noqa: B009, B010


def norm(a: Tensor, ord: Any = None, dim: Any = None, keepdim: builtins.bool = False, *,
         dtype: Any = None) -> Tensor:
    """``vector_norm`` or ``matrix_norm``, as PyTorch chooses: a matrix norm when ``ord``
    is a string or ``dim`` names two axes; the 2-norm of the flattened input by default.

    >>> import funcgrad.torch as torch
    >>> torch.linalg.norm(torch.tensor([[3.0, 0.0], [0.0, 4.0]]))
    tensor(5.)
    """
    a = _tensor("norm", a)
    two_axes = isinstance(dim, (tuple, list)) and len(dim) == 2
    if isinstance(ord, str) or (ord is not None and dim is None and a.dim() == 2) or two_axes:
        return matrix_norm(a, "fro" if ord is None else ord, tuple(dim) if two_axes
                           else (-2, -1), keepdim, dtype=dtype)
    return vector_norm(a, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def vecdot(x: Tensor, y: Tensor, *, dim: builtins.int = -1) -> Tensor:
    """The dot product of ``x`` and ``y`` along ``dim`` (the first conjugated).

    >>> import funcgrad.torch as torch
    >>> torch.linalg.vecdot(torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0]))
    tensor(11.)
    """
    if x.dtype.is_complex:
        return apply_op("Vdot", lambda a, b: jnp.sum(jnp.conj(a) * b, axis=dim), x, y)
    return apply_op("Vdot", lambda a, b: jnp.sum(a * b, axis=dim), x, y)


def multi_dot(tensors: Sequence[Tensor]) -> Tensor:
    """The product of a chain of matrices (the first and last may be vectors).

    >>> import funcgrad.torch as torch
    >>> torch.linalg.multi_dot([torch.eye(2), torch.tensor([[1.0], [2.0]])])
    tensor([[1.],
            [2.]])
    """
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    # PyTorch's composition: end vectors as a row and a column (unsqueeze), a chain of mm
    # in the cheapest order, and a view to the result's shape (ViewBackward0 on top).
    mats = list(tensors)
    out_shape: list[builtins.int] = []
    for i, where in ((0, "first"), (n - 1, "last")):
        t = tensors[i]
        if t.dim() == 1:
            mats[i] = t.unsqueeze(0 if i == 0 else -1)
        elif t.dim() == 2:
            out_shape.append(t.shape[0 if i == 0 else 1])
        else:
            raise RuntimeError(f"multi_dot(): the {where} tensor must be 1D or 2D but got "
                               f"{t.dim()}D")
    for i in range(1, n - 1):
        if tensors[i].dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got "
                               f"{tensors[i].dim()}D")
    for i in range(1, n):
        if mats[i].dtype != mats[0].dtype:
            raise RuntimeError("multi_dot(): all tensors must have be the same dtype but "
                               f"tensor 0 is {cpp_type_name(mats[0].dtype)} and tensor {i} "
                               f"{cpp_type_name(mats[i].dtype)}")
        if mats[i - 1].shape[-1] != mats[i].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i - 1} and {i} with shapes "
                               f"{list(tensors[i - 1].shape)} and {list(tensors[i].shape)} "
                               "cannot be multiplied")
    dims = [m.shape[0] for m in mats] + [mats[-1].shape[1]]
    split = _chain_order(dims)

    def chain(i: builtins.int, j: builtins.int) -> Tensor:
        if i == j:
            return mats[i]
        k = split[i][j]
        return chain(i, k).mm(chain(k + 1, j))

    return chain(0, n - 1).view(out_shape)


def _chain_order(p: list[builtins.int]) -> list[list[builtins.int]]:
    """PyTorch's multiplication order of a matrix chain (matrix ``i`` is ``p[i] x p[i+1]``):
    ``s[i][j]``, where the product of ``i..j`` splits. Three matrices compare the two
    costs directly, as PyTorch does (ties multiply the first two first)."""
    n = len(p) - 1
    s = [[0] * n for _ in range(n)]
    if n == 3:
        a, b, c, d = p
        s[0][2] = 0 if a * c * (b + d) > b * d * (a + c) else 1
        s[1][2], s[0][1] = 1, 0
        return s
    # (Longer chains: the classic dynamic program, the JAX face's, which breaks ties as
    # PyTorch's does.)
    return numpy_chain_order(p)


def cross(x: Tensor, y: Tensor, *, dim: builtins.int = -1) -> Tensor:
    """The cross product of 3-vectors along ``dim``.

    >>> import funcgrad.torch as torch
    >>> torch.linalg.cross(torch.tensor([1.0, 0.0, 0.0]), torch.tensor([0.0, 1.0, 0.0]))
    tensor([0., 0., 1.])
    """
    if x.shape[dim] != 3 or y.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{x.shape[dim]} and {y.shape[dim]}")
    d = dim % max(x.dim(), y.dim())

    def run(a: Any, b: Any) -> Any:
        def part(t: Any, i: builtins.int) -> Any:
            return jnp.take(t, i, axis=d)

        return jnp.stack([part(a, 1) * part(b, 2) - part(a, 2) * part(b, 1),
                          part(a, 2) * part(b, 0) - part(a, 0) * part(b, 2),
                          part(a, 0) * part(b, 1) - part(a, 1) * part(b, 0)], axis=d)

    return cast(Tensor, apply_op("LinalgCross", run, x, y))



# ------------------------------------------------------------------ helpers


def _no_out(name: str, out: Any) -> None:
    if out is not None:
        raise RuntimeError(f"linalg.{name}: out= is not supported by funcgrad; assign the "
                           "result instead")


def _matrix(name: str, a: Any, square: builtins.bool = True) -> Tensor:
    a = _tensor(name, a)
    if a.dim() < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 "
                           "dimensions.")
    if square and a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"linalg.{name}: A must be batches of square matrices, but they "
                           f"are {a.shape[-2]} by {a.shape[-1]} matrices")
    return a


def _is_half(a: Any) -> builtins.bool:
    return isinstance(a, Tensor) and a.dtype in (D.float16, D.bfloat16)


def _no_half_kernel(kernel: str, a: Tensor, *, skip_empty: builtins.bool = True) -> None:
    """PyTorch's error for a half-precision input to a LAPACK-backed CPU kernel (LAPACK has
    no float16/bfloat16 routines). Kernels that PyTorch skips for empty inputs (LU,
    Cholesky, SVD, eigh, LDL) raise only for non-empty ones."""
    if _is_half(a) and not (skip_empty and a.numel() == 0):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_CPP[a.dtype.name]}\'')


def _no_half(prefix: str, a: Tensor) -> None:
    """PyTorch's up-front refusal of half precision (``linalg.inv``, ``slogdet``, ...)."""
    if _is_half(a):
        raise RuntimeError(f"{prefix}: Low precision dtypes not supported. Got "
                           f"{_CPP[a.dtype.name]}")


def _float_or_double(a: Tensor) -> None:
    """``lstsq`` and ``matrix_rank``'s dtype check (LAPACK's real types only)."""
    if _is_half(a):
        raise RuntimeError("This function doesn't handle types other than float and double")


def _host_matrices(a: Tensor) -> np.ndarray | None:
    """The concrete values as a stack of matrices (None inside a transform)."""
    from funcgrad.core import Tracer  # noqa: PLC0415

    if isinstance(a._data, Tracer):
        return None
    d = np.asarray(a._data) if type(a._data).__module__.startswith(("numpy", "funcgrad")) \
        else np.asarray(a._host())
    return d.reshape((math.prod(d.shape[:-2]), *d.shape[-2:]))


def _lapack(mats: np.ndarray, routine: str) -> Any:
    """SciPy's LAPACK ``routine`` for the matrices' dtype (``spotrf`` for float32...)."""
    from scipy.linalg import lapack  # noqa: PLC0415

    return getattr(lapack, {"float32": "s", "float64": "d", "complex64": "c",
                            "complex128": "z"}.get(mats.dtype.name, "d") + routine)


def _infos(a: Tensor, routine: str) -> np.ndarray:
    """LAPACK's ``info`` for each matrix: the 1-based order of the first failing leading
    minor (``potrf``) or zero pivot (``getrf``); 0 when the factorization succeeds."""
    mats = _host_matrices(a)
    batch = tuple(a.shape[:-2])
    if mats is None:
        return np.zeros(batch, np.int32)
    fn = _lapack(mats, routine)
    out = np.zeros(len(mats), np.int32)
    for k, m in enumerate(mats):
        if m.size == 0 or not np.all(np.isfinite(m)):
            continue
        info = fn(m, lower=1)[-1] if routine == "potrf" else fn(m)[-1]
        out[k] = max(int(info), 0)
    return out.reshape(batch)


def _raise_info(name: str, infos: np.ndarray, what: str) -> None:
    bad = np.flatnonzero(infos.reshape(-1))
    if not len(bad):
        return
    k = int(bad[0])
    info = int(infos.reshape(-1)[k])
    where = f"(Batch element {k}): " if infos.ndim else ""
    if what == "potrf":
        raise _LinAlgError(f"linalg.{name}: {where}The factorization could not be completed "
                           "because the input is not positive-definite (the leading minor "
                           f"of order {info} is not positive-definite).")
    if name == "solve":  # (PyTorch's linalg.solve words it its own way)
        raise _LinAlgError(f"torch.linalg.solve: {where}The solver failed because the input "
                           "matrix is singular.")
    if name == "lu_factor":  # a RuntimeError, naming U's 1-based zero entry
        raise RuntimeError(
            f"torch.linalg.lu_factor: {where}U[{info},{info}] is zero and using it on lu_solve "
            "would result in a division by zero. If you still want to perform the "
            "factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, "
            "pivot)")
    raise _LinAlgError(f"linalg.{name}: {where}The diagonal element {info} is zero, the "
                       f"{'inversion' if name == 'inv' else 'solve'} could not be completed "
                       "because the input matrix is singular.")


def _info_tensor(infos: np.ndarray) -> Tensor:
    return Tensor._from_data(np.asarray(infos, np.int32))


def _one_triangle(a: Any, lower: builtins.bool) -> Any:
    """The symmetric (complex: Hermitian) matrix that one triangle of ``a`` describes
    (LAPACK reads only that one), with the derivative of symmetrizing ``a``: PyTorch's
    gradients of cholesky and eigh are symmetric (Hermitian) matrices."""
    tri = jnp.tril(a) if lower else jnp.triu(a)
    strict = jnp.tril(a, -1) if lower else jnp.triu(a, 1)
    full = tri + _mH(strict)
    sym = (a + _mH(a)) / 2
    return lax.stop_gradient(full - sym) + sym


def _mT(x: Any) -> Any:  # noqa: N802 - PyTorch's name for the matrix transpose
    return jnp.swapaxes(x, -1, -2)


def _mH(x: Any) -> Any:  # noqa: N802 - PyTorch's name for the conjugate transpose
    return jnp.conj(_mT(x)) if jnp.iscomplexobj(x) else _mT(x)


def _plain(t: Tensor) -> Tensor:
    """An output that carries no gradient (pivots, infos, ranks)."""
    t.grad_fn = None
    t._requires_grad = False
    return t


def _needs_grad(*ts: Any) -> builtins.bool:
    return is_grad_enabled() and builtins.any(
        isinstance(t, Tensor) and t.requires_grad for t in ts)


def _forward_only(name: str, *ts: Any) -> None:
    if _needs_grad(*ts):
        raise RuntimeError(f"the derivative for '{name}' is not implemented by funcgrad; call "
                           "it on a detached tensor (or under torch.no_grad())")


# ------------------------------------------------------------ factorizations


def cholesky(A: Tensor, *, upper: builtins.bool = False, out: Any = None) -> Tensor:  # noqa: N803
    """The Cholesky factor ``L`` (``A = L @ L.mH``; ``U = L.mH`` with ``upper=True``).

    >>> import funcgrad.torch as torch
    >>> torch.linalg.cholesky(torch.tensor([[4.0, 2.0], [2.0, 2.0]]))
    tensor([[2., 0.],
            [1., 1.]])
    """
    return cast(Tensor, cholesky_ex(A, upper=upper, check_errors=True, out=out).L)


def cholesky_ex(A: Tensor, *, upper: builtins.bool = False,  # noqa: N803
                check_errors: builtins.bool = False, out: Any = None) -> Any:
    """``(L, info)``: the Cholesky factor and LAPACK's ``info`` (0 when ``A`` is positive
    definite).

    >>> import funcgrad.torch as torch
    >>> torch.linalg.cholesky_ex(torch.eye(2)).info
    tensor(0, dtype=torch.int32)
    """
    _no_out("cholesky_ex", out)
    a = _matrix("cholesky" if check_errors else "cholesky_ex", A)
    _no_half_kernel("cholesky_cpu", a)
    infos = _infos(a, "potrf")
    if check_errors:
        _raise_info("cholesky", infos, "potrf")
    partial = _partial_factors(a, infos)

    def run(x: Any) -> Any:
        low = jnp.linalg.cholesky(_one_triangle(x, True))
        if partial is not None:
            # Where the factorization failed, LAPACK's work so far, as PyTorch returns it.
            low = jnp.where(partial[1], partial[0], low)
        return _mH(low) if upper else low

    factor = apply_op("LinalgCholeskyEx", run, a)
    return named_result("linalg_cholesky_ex", ("L", "info"), (factor, _info_tensor(infos)))


def _shape_text(b: Tensor) -> str:
    # (a vector right-hand side is a column to PyTorch's message)
    return f"{b.shape[-1]}x1" if b.dim() == 1 else "x".join(str(d) for d in b.shape[-2:])


def _partial_factors(a: Tensor, infos: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """For matrices that are not positive definite: LAPACK potrf's lower triangle as it
    stopped (the columns before the failing minor factored, the rest the input's), and
    the mask of those matrices; None when every factorization succeeded."""
    mats = _host_matrices(a)
    if mats is None or not infos.any():
        return None
    fn = _lapack(mats, "potrf")
    out = np.zeros_like(mats)
    failed = infos.reshape(-1) > 0
    for k in np.flatnonzero(failed):
        out[k] = np.tril(fn(mats[k], lower=1, clean=0)[0])
    shape = tuple(a.shape)
    return out.reshape(shape), np.broadcast_to(failed.reshape(*shape[:-2], 1, 1), shape)


def qr(A: Tensor, mode: str = "reduced", *, out: Any = None) -> Any:  # noqa: N803
    """``(Q, R)`` with ``A = Q @ R``: ``mode`` "reduced", "complete" or "r" (Q empty).

    >>> import funcgrad.torch as torch
    >>> torch.linalg.qr(torch.tensor([[3.0], [4.0]])).R
    tensor([[-5.]])
    """
    _no_out("qr", out)
    a = _matrix("qr", A, square=False)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    _no_half_kernel("geqrf_cpu", a, skip_empty=False)

    def run(x: Any) -> tuple[Any, Any]:
        q, r = jnp.linalg.qr(x, "complete" if mode == "complete" else "reduced")
        # mode="r": PyTorch's Q is an empty tensor, an output of the same node.
        return (jnp.reshape(q[..., :0, :0], (0,)) if mode == "r" else q), r

    q, r = apply_op("LinalgQr", run, a)
    return named_result("linalg_qr", ("Q", "R"), (q, r))


def svd(A: Tensor, full_matrices: builtins.bool = True, *, driver: Any = None,  # noqa: N803
        out: Any = None) -> Any:
    """``(U, S, Vh)`` with ``A = U @ diag(S) @ Vh``, singular values descending.

    >>> import funcgrad.torch as torch
    >>> torch.linalg.svd(torch.tensor([[0.0, 2.0], [1.0, 0.0]])).S
    tensor([2., 1.])
    """
    _no_out("svd", out)
    a = _matrix("svd", A, square=False)
    if driver is not None and driver not in ("gesvd", "gesvdj", "gesvda"):
        raise RuntimeError(f"torch.linalg.svd: unknown driver '{driver}'")
    _no_half_kernel("linalg_svd_cpu", a)
    u, s, vh = apply_op("LinalgSvd", lambda x: tuple(jnp.linalg.svd(x, full_matrices)), a)
    return named_result("linalg_svd", ("U", "S", "Vh"), (u, s, vh))


def svdvals(A: Tensor, *, driver: Any = None, out: Any = None) -> Tensor:  # noqa: N803
    """The singular values, descending.

    >>> import funcgrad.torch as torch
    >>> torch.linalg.svdvals(torch.tensor([[0.0, 2.0], [1.0, 0.0]]))
    tensor([2., 1.])
    """
    _no_out("svdvals", out)
    a = _matrix("svdvals", A, square=False)
    _no_half_kernel("linalg_svd_cpu", a)
    return cast(Tensor, apply_op("LinalgSvd", lambda x: jnp.linalg.svd(x, compute_uv=False),
                                 a))


def eigh(A: Tensor, UPLO: str = "L", *, out: Any = None) -> Any:  # noqa: N803
    """``(eigenvalues, eigenvectors)`` of symmetric matrices (the ``UPLO`` triangle is read),
    eigenvalues ascending.

    >>> import funcgrad.torch as torch
    >>> torch.linalg.eigh(torch.tensor([[2.0, 1.0], [1.0, 2.0]])).eigenvalues
    tensor([1., 3.])
    """
    _no_out("eigh", out)
    a = _matrix("eigh", A)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    _no_half_kernel("linalg_eigh_cpu", a)
    w, v = apply_op("LinalgEigh", lambda x: tuple(jnp.linalg.eigh(
        _one_triangle(x, UPLO == "L"))), a)
    return named_result("linalg_eigh", ("eigenvalues", "eigenvectors"), (w, v))


def eigvalsh(A: Tensor, UPLO: str = "L", *, out: Any = None) -> Tensor:  # noqa: N803
    """The eigenvalues of symmetric matrices, ascending.

    >>> import funcgrad.torch as torch
    >>> torch.linalg.eigvalsh(torch.tensor([[2.0, 0.0], [0.0, 1.0]]))
    tensor([1., 2.])
    """
    return cast(Tensor, eigh(A, UPLO, out=out).eigenvalues)


def eig(A: Tensor, *, out: Any = None) -> Any:  # noqa: N803
    """``(eigenvalues, eigenvectors)`` of general square matrices, both complex (LAPACK's
    ``geev``: unit-norm vectors). Forward only: funcgrad has no derivative for it.

    >>> import funcgrad.torch as torch
    >>> torch.linalg.eig(torch.tensor([[2.0, 0.0], [0.0, 3.0]])).eigenvalues
    tensor([2.+0.j, 3.+0.j])
    """
    _no_out("eig", out)
    a = _matrix("eig", A)
    _no_half_kernel("linalg_eig_out_cpu", a, skip_empty=False)
    _forward_only("linalg_eig", a)
    w, v = np.linalg.eig(np.asarray(a._host()))
    dt = (D.complex128 if a.dtype in (D.float64, D.complex128) else D.complex64).np
    return named_result("linalg_eig", ("eigenvalues", "eigenvectors"), (
        Tensor._from_data(np.asarray(w, dt)), Tensor._from_data(np.asarray(v, dt))))


def eigvals(A: Tensor, *, out: Any = None) -> Tensor:  # noqa: N803
    """The (complex) eigenvalues of general square matrices; forward only.

    >>> import funcgrad.torch as torch
    >>> torch.linalg.eigvals(torch.tensor([[0.0, 1.0], [-1.0, 0.0]]))
    tensor([0.+1.j, 0.-1.j])
    """
    return cast(Tensor, eig(A, out=out).eigenvalues)


# --------------------------------------------------------- inverses and solves


def inv(A: Tensor, *, out: Any = None) -> Tensor:  # noqa: N803
    """The inverse of each square matrix.

    >>> import funcgrad.torch as torch
    >>> torch.linalg.inv(torch.tensor([[2.0, 0.0], [0.0, 4.0]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.2500]])
    """
    return cast(Tensor, inv_ex(A, check_errors=True, out=out).inverse)


def inv_ex(A: Tensor, *, check_errors: builtins.bool = False, out: Any = None) -> Any:  # noqa: N803
    """``(inverse, info)``; ``info`` > 0 names the zero pivot of a singular matrix.

    >>> import funcgrad.torch as torch
    >>> torch.linalg.inv_ex(torch.eye(2)).info
    tensor(0, dtype=torch.int32)
    """
    _no_out("inv_ex", out)
    a = _matrix("inv" if check_errors else "inv_ex", A)
    _no_half("linalg.inv", a)
    infos = _infos(a, "getrf")
    if check_errors:
        _raise_info("inv", infos, "getrf")
    res = apply_op("LinalgInvEx", jnp.linalg.inv, a)
    return named_result("linalg_inv_ex", ("inverse", "info"), (res, _info_tensor(infos)))


def _is_vector_rhs(a: Tensor, b: Tensor) -> builtins.bool:
    return b.dim() == 1 or (b.dim() == a.dim() - 1 and tuple(b.shape) == tuple(a.shape[:-1]))


def _solve_values(x: Any, y: Any, left: builtins.bool, vector: builtins.bool) -> Any:
    if not left:
        x, y = _mT(x), _mT(y)
    if vector:
        out = jnp.linalg.solve(x, y[..., None])[..., 0]
    else:
        batch = np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
        out = jnp.linalg.solve(jnp.broadcast_to(x, (*batch, *x.shape[-2:])),
                               jnp.broadcast_to(y, (*batch, *y.shape[-2:])))
    return out if left else _mT(out)


def solve(A: Tensor, B: Tensor, *, left: builtins.bool = True, out: Any = None) -> Tensor:  # noqa: N803
    """The solution ``X`` of ``A @ X = B`` (``X @ A = B`` with ``left=False``); ``B`` is a
    (batch of) vector(s) when its shape is ``A``'s without the last axis.

    >>> import funcgrad.torch as torch
    >>> torch.linalg.solve(torch.tensor([[1.0, 1.0], [0.0, 2.0]]), torch.tensor([3.0, 2.0]))
    tensor([2., 1.])
    """
    return cast(Tensor, solve_ex(A, B, left=left, check_errors=True, out=out).result)


def solve_ex(A: Tensor, B: Tensor, *, left: builtins.bool = True,  # noqa: N803
             check_errors: builtins.bool = False, out: Any = None) -> Any:
    """``(result, info)`` of ``solve``.

    >>> import funcgrad.torch as torch
    >>> torch.linalg.solve_ex(torch.eye(2), torch.ones(2)).result
    tensor([1., 1.])
    """
    _no_out("solve_ex", out)
    a = _matrix("solve", A)
    b = _tensor("solve", B)
    if a.dtype is not b.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found "
                           f"A of type {_CPP[a.dtype.name]} and B of type {_CPP[b.dtype.name]} "
                           "instead")
    vector = left and _is_vector_rhs(a, b)
    rows = b.shape[-1] if vector or not left else b.shape[-2]
    if rows != a.shape[-1]:
        raise RuntimeError("linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({a.shape[-2]}x{a.shape[-1]} and "
                           f"{_shape_text(b)})")
    _no_half_kernel("lu_cpu", a)
    infos = _infos(a, "getrf")
    if check_errors:
        _raise_info("solve", infos, "getrf")
    res = apply_op("LinalgSolveEx", lambda x, y: _solve_values(x, y, left, vector), a, b)
    return named_result("linalg_solve_ex", ("result", "info"), (res, _info_tensor(infos)))


def solve_triangular(A: Tensor, B: Tensor, *, upper: builtins.bool,  # noqa: N803
                     left: builtins.bool = True, unitriangular: builtins.bool = False,
                     out: Any = None) -> Tensor:
    """The solution of ``A @ X = B`` (``X @ A = B`` with ``left=False``) for triangular
    ``A`` (only its ``upper`` or lower triangle is read).

    >>> import funcgrad.torch as torch
    >>> A = torch.tensor([[2.0, 0.0], [1.0, 1.0]])
    >>> torch.linalg.solve_triangular(A, torch.tensor([[2.0], [3.0]]), upper=False)
    tensor([[1.],
            [2.]])
    """
    _no_out("solve_triangular", out)
    a = _matrix("solve_triangular", A)
    b = _tensor("solve_triangular", B)
    if b.dim() < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 "
                           "dimensions.")
    _no_half_kernel("triangular_solve_cpu", a, skip_empty=False)

    def run(x: Any, y: Any) -> Any:
        batch = np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
        x = jnp.broadcast_to(x, (*batch, *x.shape[-2:]))
        y = jnp.broadcast_to(y, (*batch, *y.shape[-2:]))
        return lax_linalg.triangular_solve(x, y, left_side=left, lower=not upper,
                                           unit_diagonal=unitriangular)

    return cast(Tensor, apply_op("LinalgSolveTriangular", run, a, b))


def lu_factor(A: Tensor, *, pivot: builtins.bool = True, out: Any = None) -> Any:  # noqa: N803
    """``(LU, pivots)``: LAPACK's compact LU factorization with partial pivoting
    (``pivots`` 1-based, int32).

    >>> import funcgrad.torch as torch
    >>> torch.linalg.lu_factor(torch.tensor([[1.0, 2.0], [3.0, 4.0]])).pivots
    tensor([2, 2], dtype=torch.int32)
    """
    res = lu_factor_ex(A, pivot=pivot, check_errors=True, out=out)
    return named_result("linalg_lu_factor", ("LU", "pivots"), (res.LU, res.pivots))


def lu_factor_ex(A: Tensor, *, pivot: builtins.bool = True,  # noqa: N803
                 check_errors: builtins.bool = False, out: Any = None) -> Any:
    """``(LU, pivots, info)`` of ``lu_factor``.

    >>> import funcgrad.torch as torch
    >>> torch.linalg.lu_factor_ex(torch.eye(2)).info
    tensor(0, dtype=torch.int32)
    """
    _no_out("lu_factor_ex", out)
    a = _matrix("lu_factor_ex", A, square=False)
    _no_half_kernel("lu_cpu", a)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the "
                           "CPU")
    infos = _infos(a, "getrf") if a.shape[-1] == a.shape[-2] else \
        np.zeros(tuple(a.shape[:-2]), np.int32)
    if check_errors:
        _raise_info("lu_factor", infos, "getrf")
    lu_, piv = apply_op("LinalgLuFactorEx", lambda x: tuple(lax_linalg.lu(x)[:2]), a)
    with no_grad():
        piv = _plain(piv + 1)
    return named_result("linalg_lu_factor_ex", ("LU", "pivots", "info"),
                        (lu_, piv, _info_tensor(infos)))


def _permutation(pivots: Tensor, m: builtins.int) -> np.ndarray:
    """The row permutation (0-based ``perm`` with ``A[perm] = L @ U``) of 1-based pivots."""
    piv = np.asarray(pivots._host(), np.int64) - 1
    perm = np.broadcast_to(np.arange(m), (*piv.shape[:-1], m)).copy()
    flat, fp = perm.reshape(-1, m), piv.reshape(-1, piv.shape[-1])
    for row, p in zip(flat, fp):
        for i, j in enumerate(p):
            row[i], row[j] = row[j], row[i]
    return flat.reshape(perm.shape)


def _unpack(lu_: Any, perm: np.ndarray) -> tuple[Any, Any, Any]:
    m, n = lu_.shape[-2:]
    k = builtins.min(m, n)
    low = jnp.tril(lu_[..., :, :k], -1) + jnp.eye(m, k, dtype=lu_.dtype)
    up = jnp.triu(lu_[..., :k, :])
    p = np.swapaxes(np.eye(m, dtype=lu_.dtype)[perm], -1, -2)
    return p, low, up


def lu(A: Tensor, *, pivot: builtins.bool = True, out: Any = None) -> Any:  # noqa: N803
    """``(P, L, U)`` with ``A = P @ L @ U``.

    >>> import funcgrad.torch as torch
    >>> torch.linalg.lu(torch.tensor([[1.0, 2.0], [3.0, 4.0]])).P
    tensor([[0., 1.],
            [1., 0.]])
    """
    _no_out("lu", out)
    a = _matrix("lu", A, square=False)
    _no_half_kernel("lu_cpu", a)
    if not pivot:
        raise RuntimeError("linalg.lu: LU without pivoting is not implemented on the CPU")
    with no_grad():
        piv = lu_factor_ex(a).pivots
    perm = _permutation(piv, a.shape[-2])
    low, up = apply_op("LinalgLu", lambda x: _unpack(lax_linalg.lu(x)[0], perm)[1:], a)
    p = Tensor._from_data(_unpack(np.zeros(a.shape, a._data.dtype), perm)[0])
    return named_result("linalg_lu", ("P", "L", "U"), (p, low, up))


def _lu_solve_values(lu_: Any, perm: np.ndarray, b: Any, left: builtins.bool,
                     adjoint: builtins.bool) -> Any:
    batch = np.broadcast_shapes(lu_.shape[:-2], b.shape[:-2])
    lu_ = jnp.broadcast_to(lu_, (*batch, *lu_.shape[-2:]))
    b = jnp.broadcast_to(b, (*batch, *b.shape[-2:]))
    perm = np.broadcast_to(perm, (*batch, perm.shape[-1]))
    cx = jnp.iscomplexobj(lu_)
    if not left:
        # X A = B is A^T X^T = B^T; X A^H = B is conj(A) X^T = B^T
        return _mT(_lu_op_solve(lu_, perm, _mT(b), not adjoint, adjoint and cx))
    return _lu_op_solve(lu_, perm, b, adjoint, adjoint and cx)


def _lu_op_solve(lu_: Any, perm: np.ndarray, b: Any, trans: builtins.bool,
                 conj: builtins.bool) -> Any:
    """``op(A)^-1 b`` from A's LU factors, ``op`` a transpose and/or a conjugation."""
    tri = lax_linalg.triangular_solve
    if not trans:
        pb = jnp.take_along_axis(b, perm[..., None], -2)
        y = tri(lu_, pb, left_side=True, lower=True, unit_diagonal=True, conjugate_a=conj)
        return tri(lu_, y, left_side=True, lower=False, conjugate_a=conj)
    y = tri(lu_, b, left_side=True, lower=False, transpose_a=True, conjugate_a=conj)
    z = tri(lu_, y, left_side=True, lower=True, unit_diagonal=True, transpose_a=True,
            conjugate_a=conj)
    return jnp.take_along_axis(z, np.argsort(perm, axis=-1)[..., None], -2)


def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: builtins.bool = True,  # noqa: N803
             adjoint: builtins.bool = False, out: Any = None) -> Tensor:
    """The solution of ``A @ X = B`` from ``lu_factor(A)`` (``X @ A = B`` with
    ``left=False``; ``A.mH`` in place of ``A`` with ``adjoint=True``).

    >>> import funcgrad.torch as torch
    >>> LU, piv = torch.linalg.lu_factor(torch.tensor([[1.0, 1.0], [0.0, 2.0]]))
    >>> torch.linalg.lu_solve(LU, piv, torch.tensor([[3.0], [2.0]]))
    tensor([[2.],
            [1.]])
    """
    _no_out("lu_solve", out)
    lu_ = _matrix("lu_solve", LU)
    b = _tensor("lu_solve", B)
    if lu_.dtype is not b.dtype:
        raise RuntimeError("linalg.lu_solve: Expected LU and B to have the same dtype, but "
                           f"found LU of type {_CPP[lu_.dtype.name]} and B of type "
                           f"{_CPP[b.dtype.name]} instead")
    _no_half_kernel("linalg.lu_solve_cpu", lu_)
    perm = _permutation(pivots, lu_.shape[-1])
    return cast(Tensor, apply_op("LinalgLuSolve", lambda x, y: _lu_solve_values(
        x, perm, y, left, adjoint), lu_, b))


def det(A: Tensor, *, out: Any = None) -> Tensor:  # noqa: N803
    """The determinant.

    >>> import funcgrad.torch as torch
    >>> torch.linalg.det(torch.tensor([[2.0, 1.0], [0.0, 3.0]]))
    tensor(6.)
    """
    _no_out("det", out)
    a = _matrix("det", A)
    _no_half_kernel("lu_cpu", a)
    return cast(Tensor, apply_op("LinalgDet", jnp.linalg.det, a))


def slogdet(A: Tensor, *, out: Any = None) -> Any:  # noqa: N803
    """``(sign, logabsdet)`` of the determinant.

    >>> import funcgrad.torch as torch
    >>> torch.linalg.slogdet(torch.tensor([[0.0, 2.0], [3.0, 0.0]])).sign
    tensor(-1.)
    """
    _no_out("slogdet", out)
    a = _matrix("slogdet", A)
    _no_half("linalg.slogdet", a)
    s, la = apply_op("LinalgSlogdet", lambda x: tuple(jnp.linalg.slogdet(x)), a)
    return named_result("linalg_slogdet", ("sign", "logabsdet"), (s, la))


def _tolerance_value(v: Any, dt: Any) -> np.ndarray:
    return np.asarray(v.detach()._host() if isinstance(v, Tensor) else v, dt)


def _relative_tolerance(a: Tensor, atol: Any, rtol: Any) -> Any:
    """PyTorch's ``max(atol, rtol * s_max)`` cutoff, as a tolerance relative to ``s_max``."""
    dt = np.finfo(a._data.dtype).dtype  # (a complex matrix's singular values are real)
    eps = builtins.float(np.finfo(dt).eps)
    if rtol is None:
        rtol = eps * builtins.max(a.shape[-2:]) if atol is None or (
            not isinstance(atol, Tensor) and atol <= 0) else 0.0
    rt = _tolerance_value(rtol, dt)
    if atol is None or a.numel() == 0:
        return rt
    with no_grad():
        smax = np.asarray(svdvals(a.detach())._host())[..., 0]
    at = _tolerance_value(atol, dt)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(smax > 0, at / np.where(smax > 0, smax, 1), 0)
    return np.maximum(rt, rel).astype(dt)


def pinv(A: Tensor, *, atol: Any = None, rtol: Any = None,  # noqa: N803
         hermitian: builtins.bool = False, out: Any = None) -> Tensor:
    """The Moore-Penrose pseudo-inverse; singular values below ``max(atol, rtol * s_max)``
    count as zero (``rtol`` defaults to ``eps * max(m, n)`` when neither is given).

    >>> import funcgrad.torch as torch
    >>> torch.linalg.pinv(torch.tensor([[2.0, 0.0], [0.0, 0.0]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.0000]])
    """
    _no_out("pinv", out)
    if isinstance(A, Tensor) and (A.dim() < 2 or A.dtype not in (
            D.float32, D.float64, D.complex64, D.complex128)):
        raise RuntimeError(f"linalg.pinv({_CPP[A.dtype.name]}{{{list(A.shape)}}}): expected a "
                           "tensor with 2 or more dimensions of float, double, cfloat or "
                           "cdouble types")
    a = _matrix("pinv", A, square=False)
    rt = _relative_tolerance(a, atol, rtol)
    return cast(Tensor, apply_op("LinalgPinv", lambda x: jnp.linalg.pinv(
        x, rt, hermitian=hermitian), a))


def matrix_rank(A: Tensor, tol: Any = None, hermitian: builtins.bool = False, *,  # noqa: N803
                atol: Any = None, rtol: Any = None, out: Any = None) -> Tensor:
    """The number of singular values above ``max(atol, rtol * s_max)`` (int64).

    >>> import funcgrad.torch as torch
    >>> torch.linalg.matrix_rank(torch.tensor([[1.0, 2.0], [2.0, 4.0]]))
    tensor(1)
    """
    _no_out("matrix_rank", out)
    if isinstance(A, Tensor) and A.dim() >= 2:
        _float_or_double(A)  # before the square check, as PyTorch
    a = _matrix("matrix_rank", A, square=hermitian)
    if tol is not None:
        atol, rtol = tol, 0.0
    with no_grad():
        s = cast(Any, eigvalsh(a)).abs() if hermitian else svdvals(a)
        sv = np.asarray(s._host())
    dt = sv.dtype
    eps = builtins.float(np.finfo(dt).eps)
    if rtol is None:
        rtol = eps * builtins.max(a.shape[-2:]) if atol is None or (
            not isinstance(atol, Tensor) and atol <= 0) else 0.0
    rv = _tolerance_value(rtol, dt)
    av = _tolerance_value(0.0 if atol is None else atol, dt)
    smax = sv.max(axis=-1) if sv.shape[-1] else np.zeros(sv.shape[:-1], dt)
    cutoff = np.maximum(av, rv * smax)
    return Tensor._from_data(np.asarray((sv > cutoff[..., None]).sum(-1), np.int64))


def lstsq(A: Tensor, B: Tensor, rcond: Any = None, *, driver: Any = None) -> Any:  # noqa: N803
    """``(solution, residuals, rank, singular_values)`` of ``min ||A @ X - B||``; which of
    the last three are filled depends on ``driver`` ("gelsy" by default: the rank;
    "gelsd"/"gelss": rank and singular values; residuals when ``A`` is tall and of full
    rank, with any driver but "gelsy").

    >>> import funcgrad.torch as torch
    >>> torch.linalg.lstsq(torch.tensor([[1.0], [1.0]]), torch.tensor([[1.0], [3.0]])).solution
    tensor([[2.]])
    """
    a = _matrix("lstsq", A, square=False)
    b = _tensor("lstsq", B)
    if a.dtype is not b.dtype:
        raise RuntimeError("torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {_CPP[a.dtype.name]} and other's "
                           f"dtype {_CPP[b.dtype.name]}")
    drv = "gelsy" if driver is None else driver
    if drv not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, "
                           "gelsy, gelsd, gelss)")
    vector = b.dim() == a.dim() - 1
    m, n = a.shape[-2:]
    rows = b.shape[-1] if vector else b.shape[-2]
    if rows != m:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2) "
                           f"(or other.size(-1) for a batch of vectors): {m} vs {rows}")
    _float_or_double(a)
    eps = builtins.float(np.finfo(a._data.dtype).eps)
    rc = eps * builtins.max(m, n) if rcond is None else builtins.float(rcond)

    def as_matrix(y: Any) -> Any:
        return y[..., None] if vector else y

    def solution(x: Any, y: Any) -> Any:
        yy = as_matrix(y)
        batch = np.broadcast_shapes(x.shape[:-2], yy.shape[:-2])
        x = jnp.broadcast_to(x, (*batch, m, n))
        yy = jnp.broadcast_to(yy, (*batch, m, yy.shape[-1]))
        sol = jnp.matmul(jnp.linalg.pinv(x, rc), yy)
        return sol[..., 0] if vector else sol

    def residual(x: Any, y: Any, s: Any) -> Any:
        r = jnp.sum(jnp.square(jnp.abs(jnp.matmul(x, as_matrix(s)) - as_matrix(y))),
                    axis=-2)
        return r[..., 0] if vector else r

    sol = apply_op("LinalgLstsq", solution, a, b)
    with no_grad():
        rank = matrix_rank(a, rtol=rc) if drv != "gels" else None
        sv = svdvals(a) if drv in ("gelsd", "gelss") else None
    full = rank is None or builtins.bool(cast(Any, rank == builtins.min(m, n)).all())
    empty = Tensor._from_data(np.zeros((0,), a._data.dtype))
    if m > n and drv != "gelsy" and full:
        residuals = apply_op("LinalgLstsq", residual, a, b, sol)
    elif sol.requires_grad:
        residuals = apply_op("LinalgLstsq", lambda s: jnp.reshape(s, (-1,))[:0], sol)
    else:
        residuals = empty
    rank_t = rank if rank is not None else Tensor._from_data(np.zeros((0,), np.int64))
    return named_result("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"),
                        (sol, residuals, rank_t, empty if sv is None else sv))


def cond(A: Tensor, p: Any = None, *, out: Any = None) -> Tensor:  # noqa: N803
    """The condition number in the ``p`` norm (``None``/2: largest over smallest singular
    value; -2: the reverse; "fro", "nuc", inf, -inf, 1, -1: ``norm(A) * norm(inv(A))``).

    >>> import funcgrad.torch as torch
    >>> torch.linalg.cond(torch.tensor([[2.0, 0.0], [0.0, 1.0]]))
    tensor(2.)
    """
    _no_out("cond", out)
    a = _matrix("cond", A, square=p not in (None, 2, -2))
    if p in (None, 2, -2):
        s = cast(Any, svdvals(a))
        hi, lo = s.narrow(-1, 0, 1), s.narrow(-1, s.shape[-1] - 1, 1)
        ratio = hi / lo if p != -2 else lo / hi
        return cast(Tensor, apply_op("Squeeze:1", lambda r: jnp.squeeze(r, -1), ratio))
    if p == "nuc":
        na = cast(Any, svdvals(a)).sum(-1)
        ni = cast(Any, svdvals(inv(a))).sum(-1)
    else:
        na, ni = matrix_norm(a, p), matrix_norm(inv(a), p)
    return cast(Tensor, na * ni)


def matrix_power(A: Tensor, n: builtins.int, *, out: Any = None) -> Tensor:  # noqa: N803
    """``A`` multiplied by itself ``n`` times (``n`` < 0: its inverse's power; 0: eye).

    >>> import funcgrad.torch as torch
    >>> torch.linalg.matrix_power(torch.tensor([[1.0, 1.0], [0.0, 1.0]]), 3)
    tensor([[1., 3.],
            [0., 1.]])
    """
    _no_out("matrix_power", out)
    a = _need_tensor("linalg.matrix_power", A)
    if a.dim() < 2 or a.shape[-1] != a.shape[-2]:
        raise RuntimeError("linalg.matrix_power: A must be batches of square matrices, but "
                           f"they are {a.shape[-2] if a.dim() > 1 else 1} by {a.shape[-1]} "
                           "matrices")
    if isinstance(n, builtins.bool) or not isinstance(n, (builtins.int, np.integer)):
        raise TypeError(f"matrix_power(): argument 'n' must be int, not {type(n).__name__}")
    if n == 0:
        return cast(Tensor, apply_op("CopyBackwards", lambda x: jnp.broadcast_to(
            jnp.eye(x.shape[-1], dtype=x.dtype), x.shape) + 0 * x, a))
    z = inv(a) if n < 0 else a
    return cast(Tensor, power_by_squaring(z, builtins.abs(builtins.int(n)), matmul))


def matrix_exp(A: Tensor) -> Tensor:  # noqa: N803
    """The matrix exponential.

    >>> import funcgrad.torch as torch
    >>> torch.linalg.matrix_exp(torch.zeros(2, 2))
    tensor([[1., 0.],
            [0., 1.]])
    """
    a = _matrix("matrix_exp", A)
    if _is_half(a):
        # PyTorch's CPU kernel returns garbage in half precision (exp of diag(0.5, 0.25) is
        # -21040 in float16); funcgrad computes in float32 and rounds (docs/sharp_bits.md).
        return cast(Tensor, apply_op("LinalgMatrixExp", lambda x: scipy_linalg.expm(
            x.astype(np.float32)).astype(x.dtype), a))
    return cast(Tensor, apply_op("LinalgMatrixExp", scipy_linalg.expm, a))


def diagonal(A: Tensor, *, offset: builtins.int = 0, dim1: builtins.int = -2,  # noqa: N803
             dim2: builtins.int = -1) -> Tensor:
    """The diagonals of a batch of matrices (``A.diagonal(offset, dim1, dim2)``).

    >>> import funcgrad.torch as torch
    >>> torch.linalg.diagonal(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([1., 4.])
    """
    return cast(Tensor, apply_op("Diagonal", lambda x: jnp.diagonal(x, offset, dim1, dim2),
                                 _need_tensor("linalg.diagonal", A), saves_tensors=False))


def vander(x: Tensor, *, N: builtins.int | None = None) -> Tensor:  # noqa: N803
    """The Vandermonde matrix of ``x``: columns ``x**0, x**1, ..., x**(N-1)``.

    >>> import funcgrad.torch as torch
    >>> torch.linalg.vander(torch.tensor([1, 2, 3]))
    tensor([[1, 1, 1],
            [1, 2, 4],
            [1, 3, 9]])
    """
    x = _need_tensor("linalg.vander", x)
    if _is_half(x):  # (torch.vander, built on the same product, takes half precision)
        raise RuntimeError("linalg.vander supports floating point, complex, and integer "
                           f"tensors, but got {_CPP[x.dtype.name]}")
    return _vander(x, N)


def _vander(x: Tensor, N: builtins.int | None) -> Tensor:  # noqa: N803
    if x.dim() < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension.")
    n = x.shape[-1] if N is None else N
    if n < 1:
        raise RuntimeError("N must be greater than 1.")

    def run(v: Any) -> Any:
        cols = [jnp.ones_like(v)]
        for _ in range(1, n):
            cols.append(cols[-1] * v)
        return jnp.stack(cols, -1)

    return cast(Tensor, apply_op("Cat", run, x))


def householder_product(A: Tensor, tau: Tensor, *, out: Any = None) -> Tensor:  # noqa: N803
    """The first ``n`` columns of ``H_1 ... H_k`` with ``H_i = I - tau_i v_i v_i^H`` and
    ``v_i`` the ``i``-th column of ``A`` below the diagonal (1 on it): LAPACK's ``orgqr``
    (``torch.orgqr``: PyTorch's checks, complex inputs, ``out=``).

    >>> import funcgrad.torch as torch
    >>> torch.linalg.householder_product(torch.zeros(2, 2), torch.tensor([0.0, 0.0]))
    tensor([[1., 0.],
            [0., 1.]])
    """
    from funcgrad.torch._householder import orgqr  # noqa: PLC0415

    return orgqr(A, tau, out=out)


def _sytrf(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from scipy.linalg import lapack  # noqa: PLC0415

    fn = lapack.ssytrf if a.dtype == np.float32 else lapack.dsytrf
    lds, pivs, infos = [], [], []
    for mm in a.reshape((math.prod(a.shape[:-2]), *a.shape[-2:])):
        ld, piv, info = fn(mm, lower=1)
        lds.append(np.tril(ld))
        pivs.append(piv)
        infos.append(info)
    batch, n = a.shape[:-2], a.shape[-1]
    return (np.asarray(lds, a.dtype).reshape(a.shape),
            np.asarray(pivs, np.int32).reshape((*batch, n)),
            np.asarray(infos, np.int32).reshape(batch))


def ldl_factor_ex(A: Tensor, *, hermitian: builtins.bool = False,  # noqa: N803
                  check_errors: builtins.bool = False, out: Any = None) -> Any:
    """``(LD, pivots, info)``: LAPACK's Bunch-Kaufman LDL^T factorization of symmetric
    matrices (the lower triangle is read). Not differentiable, as in PyTorch.

    >>> import funcgrad.torch as torch
    >>> torch.linalg.ldl_factor_ex(torch.tensor([[4.0, 2.0], [2.0, 3.0]])).LD
    tensor([[4.0000, 0.0000],
            [0.5000, 2.0000]])
    """
    _no_out("ldl_factor_ex", out)
    a = _matrix("ldl_factor_ex", A)
    _no_half_kernel("ldl_factor_kernel_cpu", a)
    _forward_only("linalg_ldl_factor_ex", a)
    ld, piv, info = _sytrf(np.asarray(a._host()))
    if check_errors and np.any(info):
        raise _LinAlgError("torch.linalg.ldl_factor_ex: Unknown error code: "
                           f"{int(info.reshape(-1)[np.flatnonzero(info)[0]])}.")
    return named_result("linalg_ldl_factor_ex", ("LD", "pivots", "info"), (
        Tensor._from_data(ld), Tensor._from_data(piv), Tensor._from_data(info)))


def ldl_factor(A: Tensor, *, hermitian: builtins.bool = False, out: Any = None) -> Any:  # noqa: N803
    """``(LD, pivots)`` of ``ldl_factor_ex``.

    >>> import funcgrad.torch as torch
    >>> torch.linalg.ldl_factor(torch.eye(2)).pivots
    tensor([1, 2], dtype=torch.int32)
    """
    res = ldl_factor_ex(A, hermitian=hermitian, check_errors=True, out=out)
    return named_result("linalg_ldl_factor", ("LD", "pivots"), (res.LD, res.pivots))


def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *,  # noqa: N803
              hermitian: builtins.bool = False, out: Any = None) -> Tensor:
    """The solution of ``A @ X = B`` from ``ldl_factor(A)``; not differentiable, as in
    PyTorch.

    >>> import funcgrad.torch as torch
    >>> LD, piv = torch.linalg.ldl_factor(torch.tensor([[4.0, 2.0], [2.0, 3.0]]))
    >>> torch.linalg.ldl_solve(LD, piv, torch.tensor([[6.0], [5.0]]))
    tensor([[1.],
            [1.]])
    """
    from scipy.linalg import lapack  # noqa: PLC0415

    _no_out("ldl_solve", out)
    ld = _matrix("ldl_solve", LD)
    b = _tensor("ldl_solve", B)
    if ld.dtype is not b.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_CPP[b.dtype.name]} and A of type {_CPP[ld.dtype.name]} instead.")
    _forward_only("linalg_ldl_solve", ld, b)
    ldv, pv, bv = np.asarray(ld._host()), np.asarray(pivots._host()), np.asarray(b._host())
    batch = np.broadcast_shapes(ldv.shape[:-2], bv.shape[:-2])
    ldv = np.broadcast_to(ldv, (*batch, *ldv.shape[-2:])).reshape((-1, *ldv.shape[-2:]))
    pv = np.broadcast_to(pv, (*batch, pv.shape[-1])).reshape((-1, pv.shape[-1]))
    bb = np.broadcast_to(bv, (*batch, *bv.shape[-2:])).reshape((-1, *bv.shape[-2:]))
    fn = lapack.ssytrs if ldv.dtype == np.float32 else lapack.dsytrs
    xs = [fn(m, p, r, lower=1)[0] for m, p, r in zip(ldv, pv, bb)]
    return Tensor._from_data(np.asarray(xs, bv.dtype).reshape((*batch, *bv.shape[-2:])))


def tensorinv(A: Tensor, ind: builtins.int = 2, *, out: Any = None) -> Tensor:  # noqa: N803
    """The inverse of ``A`` as a linear map from its last axes to its first ``ind`` ones.

    >>> import funcgrad.torch as torch
    >>> torch.linalg.tensorinv(torch.eye(4).reshape(4, 2, 2), ind=1).shape
    torch.Size([2, 2, 4])
    """
    _no_out("tensorinv", out)
    a = _need_tensor("linalg.tensorinv", A)
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = tuple(a.shape[:ind]), tuple(a.shape[ind:])
    if math.prod(rows) != math.prod(cols):
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) "
                           f"== prod(self.shape[:ind]), but got {math.prod(cols)} != "
                           f"{math.prod(rows)}")
    m = cast(Any, a).reshape(math.prod(rows), -1)
    return cast(Tensor, cast(Any, inv(m)).reshape(*cols, *rows))


def tensorsolve(A: Tensor, B: Tensor, dims: Sequence[builtins.int] | None = None, *,  # noqa: N803
                out: Any = None) -> Tensor:
    """The ``X`` with ``tensordot(A, X, X.ndim) = B``.

    >>> import funcgrad.torch as torch
    >>> torch.linalg.tensorsolve(2 * torch.eye(4).reshape(4, 2, 2), torch.ones(4)).shape
    torch.Size([2, 2])
    """
    _no_out("tensorsolve", out)
    a = cast(Any, _need_tensor("linalg.tensorsolve", A))
    b = cast(Any, _need_tensor("linalg.tensorsolve", B))
    if dims is not None:
        nd = a.dim()
        moved = [d % nd for d in dims]
        rest = [d for d in range(nd) if d not in moved]
        a = a.permute(*rest, *moved)
    sol_shape = tuple(a.shape[b.dim():])
    m = a.reshape(b.numel(), -1)
    return cast(Tensor, cast(Any, solve(m, b.reshape(-1))).reshape(*sol_shape))


__all__ = [
    "LinAlgError", "cholesky", "cholesky_ex", "common_notes", "cond", "cross", "det",
    "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "householder_product", "inv", "inv_ex",
    "ldl_factor", "ldl_factor_ex", "ldl_solve", "lstsq", "lu", "lu_factor", "lu_factor_ex",
    "lu_solve", "matmul", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank",
    "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular",
    "svd", "svdvals", "tensorinv", "tensorsolve", "vander", "vecdot", "vector_norm",
]

# Autocast: these functions under PyTorch's operator names (``linalg_<name>``).
autocast_namespace(globals(), prefix="linalg_", names=__all__)
