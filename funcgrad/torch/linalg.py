"""``torch.linalg``: the norms and products (the factorizations come with the engine's
linear-algebra primitives).

>>> import funcgrad.torch as torch
>>> torch.linalg.vector_norm(torch.tensor([3.0, 4.0]))
tensor(5.)
>>> torch.linalg.matrix_norm(torch.eye(2))
tensor(1.4142)
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from typing import Any, cast

import funcgrad.numpy as jnp
from funcgrad.torch._functions import _need_tensor, matmul
from funcgrad.torch._tensor import _CPP, Tensor, apply_op, vector_norm_of

_INF = math.inf


def _tensor(name: str, x: Any) -> Tensor:
    x = _need_tensor(f"linalg.{name}", x)
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError(f"linalg.{name}: Expected a floating point or complex tensor as "
                           f"input. Got {_CPP[x.dtype.name]}")
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
    """A matrix norm over the two axes ``dim``: ``"fro"``, ``1``, ``-1``, ``inf``, ``-inf``.

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
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


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
    if len(tensors) < 2:
        raise RuntimeError("multi_dot(): expected at least 2 tensors but got "
                           f"{len(tensors)}")
    out = tensors[0]
    for t in tensors[1:]:
        out = matmul(out, t)
    return out


def cross(x: Tensor, y: Tensor, *, dim: builtins.int = -1) -> Tensor:
    """The cross product of 3-vectors along ``dim``.

    >>> import funcgrad.torch as torch
    >>> torch.linalg.cross(torch.tensor([1.0, 0.0, 0.0]), torch.tensor([0.0, 1.0, 0.0]))
    tensor([0., 0., 1.])
    """
    if x.shape[dim] != 3 or y.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{x.shape[dim]} and {y.shape[dim]}")
    from funcgrad.torch._functions import stack  # noqa: PLC0415

    def part(t: Tensor, i: builtins.int) -> Any:
        return t.select(dim, i)

    d = dim % max(x.dim(), y.dim())
    return stack([part(x, 1) * part(y, 2) - part(x, 2) * part(y, 1),
                  part(x, 2) * part(y, 0) - part(x, 0) * part(y, 2),
                  part(x, 0) * part(y, 1) - part(x, 1) * part(y, 0)], dim=d)


__all__ = ["cross", "matmul", "matrix_norm", "multi_dot", "norm", "vecdot", "vector_norm"]
