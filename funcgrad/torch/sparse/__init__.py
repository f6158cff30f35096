"""``torch.sparse``: operations on sparse COO tensors (``funcgrad.torch._sparse``).

>>> import funcgrad.torch as torch
>>> s = torch.sparse_coo_tensor([[0, 1], [1, 0]], [2.0, 3.0], (2, 2))
>>> torch.sparse.sum(s)
tensor(5.)
"""

from __future__ import annotations

from typing import Any, cast

from funcgrad.torch._sparse import log_softmax, softmax
from funcgrad.torch._sparse import sparse_mm as mm
from funcgrad.torch._sparse import sparse_sum as sum  # noqa: A004 - PyTorch's name
from funcgrad.torch._tensor import Tensor

__all__ = ["addmm", "log_softmax", "mm", "softmax", "sum"]


def addmm(mat: Tensor, mat1: Any, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * mat + alpha * (mat1 @ mat2)`` with a sparse ``mat1`` (strided result).

    >>> import funcgrad.torch as torch
    >>> s = torch.sparse_coo_tensor([[0], [1]], [2.0], (2, 2))
    >>> torch.sparse.addmm(torch.ones(2, 2), s, torch.ones(2, 2))
    tensor([[3., 3.],
            [1., 1.]])
    """
    return cast(Tensor, mat1._addmm(mat, mat2, beta, alpha, "SparseAddmm"))
