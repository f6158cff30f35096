"""PyTorch's ``*_copy`` functions: each view operation (``diagonal``, ``permute``,
``split``...) as a function whose results are fresh, contiguous tensors, not views.

They come from one table (name, the view operation, PyTorch's backward node); each result
is ONE graph node, whose backward is the view's.

>>> import funcgrad.torch as torch
>>> x = torch.arange(6.0).reshape(2, 3)
>>> y = torch.transpose_copy(x, 0, 1); y[0, 0] = 9.0; x[0, 0]
tensor(0.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from funcgrad.torch._tensor import Tensor, apply_op

# (function name, the Tensor view it copies, PyTorch's backward node base name). The view
# is a Tensor method of that name unless the entry names a torch function.
_TABLE: tuple[tuple[str, str, str], ...] = (
    ("alias_copy", "view_as", "Alias"),
    ("diagonal_copy", "diagonal", "Diagonal"),
    ("expand_copy", "expand", "Expand"),
    ("permute_copy", "permute", "Permute"),
    ("select_copy", "select", "Select"),
    ("slice_copy", "_slice", "Slice"),
    ("split_copy", "split", "Split"),
    ("split_with_sizes_copy", "split_with_sizes", "SplitWithSizes"),
    ("squeeze_copy", "squeeze", "Squeeze"),
    ("t_copy", "t", "T"),
    ("transpose_copy", "transpose", "Transpose"),
    ("unbind_copy", "unbind", "Unbind"),
    ("unfold_copy", "unfold", "Unfold"),
    ("unsqueeze_copy", "unsqueeze", "Unsqueeze"),
    ("view_copy", "view", "View"),
    ("view_as_real_copy", "torch.view_as_real", "ViewAsReal"),
    ("view_as_complex_copy", "torch.view_as_complex", "ViewAsComplex"),
)


def _slice(x: Tensor, dim: int = 0, start: int | None = None, end: int | None = None,
           step: int = 1) -> Tensor:
    return x[(slice(None),) * (dim % max(x.ndim, 1)) + (slice(start, end, step),)]


def _view_fn(view: str) -> Callable[..., Any]:
    if view == "_slice":
        return _slice
    if view == "view_as":
        return lambda x: x.view_as(x)
    if view.startswith("torch."):
        from funcgrad.torch._tensor_math import FUNCTIONS  # noqa: PLC0415

        fn = FUNCTIONS[view[len("torch."):]]
        return lambda x, *a, **k: fn(x, *a, **k)
    return lambda x, *a, **k: getattr(x, view)(*a, **k)


def _copy(view: Tensor, op: str) -> Tensor:
    """A fresh contiguous copy of ``view``, recorded as one node named ``op``."""
    import numpy as np  # noqa: PLC0415

    import funcgrad.numpy as fnp  # noqa: PLC0415
    from funcgrad.core import Tracer  # noqa: PLC0415

    out = apply_op(op, lambda v: fnp.array(v), view)
    d, src = out._data, view._data
    if not isinstance(d, Tracer) and (d is src or (
            type(d) is np.ndarray and type(src) is np.ndarray and np.shares_memory(d, src))
            or (type(d) is np.ndarray and not d.flags.c_contiguous)):
        out._data = np.ascontiguousarray(d).copy()
    return out


def _make(name: str, view: str, node: str) -> Callable[..., Any]:
    fn = _view_fn(view)
    # "X:0_copy" is named XBackward0_copy, PyTorch's name for the copy's backward node.
    op = f"{node}:0_copy"

    def copy_fn(input: Any, *args: Any, out: Any = None, **kwargs: Any) -> Any:  # noqa: A002
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(input).__name__}")
        res = fn(input, *args, **kwargs)
        if isinstance(res, Tensor):
            return _copy(res, op)
        return tuple(_copy(r, op) for r in res)

    copy_fn.__name__ = copy_fn.__qualname__ = name
    what = view.removeprefix("torch.").lstrip("_")
    copy_fn.__doc__ = (f"``torch.{what}(input, ...)`` as a fresh contiguous tensor (no view), "
                       f"as PyTorch's ``torch.{name}``.")
    return copy_fn


def detach_copy(input: Tensor, *, out: Any = None) -> Tensor:  # noqa: A002
    """``input.detach()`` as a fresh tensor (no gradient, no shared memory).

    >>> import funcgrad.torch as torch
    >>> torch.detach_copy(torch.ones(2, requires_grad=True))
    tensor([1., 1.])
    """
    return input.detach().clone()


FUNCTIONS: dict[str, Callable[..., Any]] = {name: _make(name, view, node)
                                            for name, view, node in _TABLE}
FUNCTIONS["detach_copy"] = detach_copy

__all__ = ["FUNCTIONS", "detach_copy"]
