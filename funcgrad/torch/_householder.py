"""LAPACK's Householder representation of a QR factorization: ``geqrf`` (the reflectors
and their scales, computed by LAPACK itself), ``orgqr`` (the explicit ``Q``, PyTorch's
``linalg.householder_product``) and ``ormqr`` (``Q`` or ``Q^H`` applied to a matrix
without forming it), as Tensor methods and ``torch`` functions.

``geqrf`` stores ``R`` on and above the diagonal and the essential parts of the
reflector vectors ``v_i`` below it (``v_i[i] = 1`` implicitly); ``Q = H_1 H_2 ... H_k``
with ``H_i = I - tau_i v_i v_i^H``. For a matrix with nonzero columns this (a, tau) pair
is the one LAPACK's ``xGEQRF`` convention defines, so it is computed by SciPy's LAPACK
(through ``funcgrad.pure_callback``, which also runs under ``jit`` and ``vmap``).
``geqrf`` has no derivative in PyTorch, and none here; ``orgqr`` and ``ormqr`` are
written with funcgrad's operations, so their gradients (and higher ones) come from the
engine's rules.

>>> import funcgrad.torch as torch
>>> a, tau = torch.geqrf(torch.tensor([[3.0, 1.0], [4.0, 2.0]]))
>>> a
tensor([[-5.0000, -2.2000],
        [ 0.5000,  0.4000]])
>>> torch.allclose(torch.orgqr(a, tau) @ a.triu(), torch.tensor([[3.0, 1.0], [4.0, 2.0]]))
True
"""

from __future__ import annotations

import builtins
import math
from typing import Any, cast

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.api import pure_callback
from funcgrad.ir import ShapeDtypeStruct
from funcgrad.torch._grad_mode import is_grad_enabled, no_grad
from funcgrad.torch._return_types import named_result
from funcgrad.torch._tensor import _CPP, Tensor, apply_op
from funcgrad.transforms.custom import custom_vjp

_LAPACK_KINDS = ("float32", "float64", "complex64", "complex128")


def _need(name: str, x: Any) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    return x


def _kernel_dtype(kernel: str, *ts: Tensor) -> None:
    """PyTorch's CPU kernels run in single/double precision (real or complex) only."""
    for t in ts:
        if t.dtype.name not in _LAPACK_KINDS:
            raise NotImplementedError(f'"{kernel}_cpu" not implemented for '
                                      f"'{_CPP[t.dtype.name]}'")


def _write_out(name: str, out: Any, result: Tensor, args: tuple[Any, ...]) -> Tensor:
    """``result`` written into ``out`` (resized to fit), as PyTorch's ``out=`` does."""
    if is_grad_enabled() and builtins.any(isinstance(a, Tensor) and a.requires_grad
                                          for a in (*args, out)):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support "
                           "automatic differentiation, but one of the arguments requires grad.")
    with no_grad():
        if tuple(out.shape) != tuple(result.shape):
            out.resize_(tuple(result.shape))
        out.copy_(result)
    return cast(Tensor, out)


# ------------------------------------------------------------------ geqrf


def _geqrf_host(a: Any) -> tuple[np.ndarray, np.ndarray]:
    from scipy.linalg import lapack  # noqa: PLC0415 - only needed when geqrf runs

    a = np.asarray(a)
    m, n = a.shape[-2:]
    k = builtins.min(m, n)
    flat = a.reshape((math.prod(a.shape[:-2]), m, n))
    rs = np.array(flat, copy=True)
    taus = np.zeros((flat.shape[0], k), a.dtype)
    if m and n:
        fn = lapack.get_lapack_funcs("geqrf", dtype=a.dtype)
        for i, mat in enumerate(flat):
            r, tau, _, _ = fn(mat)
            rs[i], taus[i] = r, tau[:k]
    return rs.reshape(a.shape), taus.reshape((*a.shape[:-2], k))


@custom_vjp
def _geqrf(x: Any) -> Any:
    k = builtins.min(x.shape[-2:])
    shapes = (ShapeDtypeStruct(x.shape, x.dtype), ShapeDtypeStruct((*x.shape[:-2], k), x.dtype))
    return pure_callback(_geqrf_host, shapes, x, vmap_method="sequential")


def _geqrf_fwd(x: Any) -> tuple[Any, None]:
    return _geqrf(x), None


def _geqrf_bwd(res: None, g: Any) -> Any:
    raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


_geqrf.defvjp(_geqrf_fwd, _geqrf_bwd)


def geqrf(input: Tensor, *, out: Any = None) -> Any:  # noqa: A002 - PyTorch's name
    """``(a, tau)``: LAPACK's ``geqrf`` QR factorization of the matrices of ``input``
    (``R`` on and above the diagonal of ``a``, Householder vectors below it). Not
    differentiable, as in PyTorch.

    >>> import funcgrad.torch as torch
    >>> torch.geqrf(torch.tensor([[0.0, 2.0], [1.0, 1.0]])).tau
    tensor([1., 0.])
    """
    x = _need("geqrf", input)
    if x.dim() < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    _kernel_dtype("geqrf", x)
    a, tau = apply_op("Geqrf", _geqrf, x)
    if out is not None:
        a = _write_out("geqrf", out[0], a, (x,))
        tau = _write_out("geqrf", out[1], tau, (x,))
    return named_result("geqrf", ("a", "tau"), (a, tau))


# ------------------------------------------------------------------ reflectors


def _reflectors(x: Any, k: builtins.int) -> Any:
    """The ``k`` Householder vectors stored in ``x`` as the columns of a matrix."""
    m = x.shape[-2]
    return fnp.tril(x[..., :, :k], -1) + fnp.eye(m, k, dtype=x.dtype)


def _apply(v: Any, tau: Any, c: Any, left: builtins.bool, transpose: builtins.bool) -> Any:
    """``op(Q) @ c`` (``left``) or ``c @ op(Q)``, ``Q = H_1 ... H_k``, ``op`` the
    conjugate transpose when ``transpose``: one reflector at a time, in the order the
    product needs."""
    k = v.shape[-1]
    # H^H = I - conj(tau) v v^H, and reversing the order transposes the product.
    t = fnp.conj(tau) if transpose else tau
    order = range(k) if left == transpose else reversed(range(k))
    for i in order:
        vi = v[..., :, i:i + 1]
        ti = t[..., i, None, None]
        vh = fnp.conj(fnp.swapaxes(vi, -1, -2))
        if left:
            c = c - ti * fnp.matmul(vi, fnp.matmul(vh, c))
        else:
            c = c - ti * fnp.matmul(fnp.matmul(c, vi), vh)
    return c


def _dims_check(name: str, x: Tensor, tau: Tensor) -> None:
    if tau.dim() == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if x.dim() - tau.dim() != 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but "
                           f"got tau.ndim equal to {tau.dim()} and input.ndim is equal to "
                           f"{x.dim()}")
    if x.dim() > 2 and tuple(tau.shape[:-1]) != tuple(x.shape[:-2]):
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau.shape[:-1])}")


def orgqr(input: Tensor, tau: Tensor, *, out: Any = None) -> Tensor:  # noqa: A002
    """The first ``n`` columns of ``Q = H_1 ... H_k`` from ``geqrf``'s ``(a, tau)``
    (``torch.linalg.householder_product``), differentiable in both.

    >>> import funcgrad.torch as torch
    >>> torch.orgqr(torch.tensor([[1.0], [1.0]]), torch.tensor([1.0]))
    tensor([[ 0.],
            [-1.]])
    """
    name = "torch.linalg.householder_product"
    x, t = _need("orgqr", input), _need("orgqr", tau)
    if x.dim() < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    m, n = x.shape[-2:]
    if m < n:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if t.dim() and n < t.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    _dims_check(name, x, t)
    if t.dtype is not x.dtype:
        raise RuntimeError(f"{name}: tau dtype {_CPP[t.dtype.name]} does not match input "
                           f"dtype {_CPP[x.dtype.name]}")
    _kernel_dtype("orgqr", x)
    k = t.shape[-1]

    def run(a: Any, tt: Any) -> Any:
        eye = fnp.broadcast_to(fnp.eye(m, n, dtype=a.dtype), a.shape)
        return _apply(_reflectors(a, k), tt, eye, True, False)

    res = cast(Tensor, apply_op("LinalgHouseholderProduct", run, x, t))
    return res if out is None else _write_out("orgqr", out, res, (x, t))


def ormqr(input: Tensor, input2: Tensor, input3: Tensor, left: builtins.bool = True,  # noqa: A002
          transpose: builtins.bool = False, *, out: Any = None) -> Tensor:
    """``Q @ other`` (``left``) or ``other @ Q``, ``Q`` (its conjugate transpose with
    ``transpose=True``) given by ``geqrf``'s ``(input, tau)``, without forming ``Q``.
    Differentiable in all three tensors.

    >>> import funcgrad.torch as torch
    >>> a, tau = torch.geqrf(torch.tensor([[3.0, 1.0], [4.0, 2.0]]))
    >>> torch.ormqr(a, tau, torch.tensor([[3.0], [4.0]]), transpose=True)
    tensor([[-5.],
            [ 0.]])
    """
    name = "torch.ormqr"
    x, t, c = _need("ormqr", input), _need("ormqr", input2), _need("ormqr", input3)
    if x.dim() < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if c.dim() < 2:
        raise RuntimeError(f"{name}: other must have at least 2 dimensions.")
    side = -2 if left else -1
    if c.shape[side] != x.shape[-2]:
        raise RuntimeError(f"{name}: other.shape[{side}] must be equal to input.shape[-2]")
    if t.dim() == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if t.shape[-1] != builtins.min(c.shape[side], x.shape[-1]):
        raise RuntimeError(f"{name}: tau.shape[-1] must be equal to min(other.shape[{side}], "
                           "input.shape[-1])")
    _dims_check(name, x, t)
    if x.dim() != c.dim():
        raise RuntimeError(f"{name}: Expected other to have the same number of dimensions as "
                           f"input, but got other.ndim equal to {c.dim()} and input.ndim is "
                           f"equal to {x.dim()}")
    if x.dim() > 2 and tuple(c.shape[:-2]) != tuple(x.shape[:-2]):
        raise RuntimeError(f"{name}: Expected batch dimensions of other to be equal to "
                           f"input.shape[:-2], but got {list(c.shape[:-2])}")
    for what, other in (("tau", t), ("other", c)):
        if other.dtype is not x.dtype:
            raise RuntimeError(f"{name}: Expected input and {what} to have the same dtype, "
                               f"but input has dtype{_CPP[x.dtype.name]} and {what} has "
                               f"dtype {_CPP[other.dtype.name]}")
    _kernel_dtype("ormqr", x)
    k = t.shape[-1]
    res = cast(Tensor, apply_op(
        "Ormqr", lambda a, tt, cc: _apply(_reflectors(a, k), tt, cc, left, transpose), x, t, c))
    return res if out is None else _write_out("ormqr", out, res, (x, t, c))


FUNCTIONS: dict[str, Any] = {"geqrf": geqrf, "orgqr": orgqr, "ormqr": ormqr}
for _name, _fn in FUNCTIONS.items():
    setattr(Tensor, _name, _fn)

__all__ = ["FUNCTIONS", "geqrf", "orgqr", "ormqr"]
