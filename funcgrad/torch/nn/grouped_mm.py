"""``nn.functional.grouped_mm``: PyTorch 2.13's grouped matrix product (the jagged
per-expert GEMMs of mixture-of-experts layers), as its CPU fallback computes it.

Both operands are 2-D or 3-D float32, bfloat16 or float16 matrices in one dtype. Two 3-D
operands are a batched product; a 2-D operand is cut into groups along its jagged axis by
the int32 ``offs`` (``offs[i]`` ends group ``i``, which starts where group ``i - 1``
ended). PyTorch's checks come first, in its order and with its messages: the dtypes,
the ranks, the contraction size, the layout (each operand row- or column-major with a
16-byte aligned leading stride), ``offs``, ``bias`` (not supported), ``out_dtype`` (only
``mat_a``'s). The result is one graph node, ``GroupedMmBackward0``.

Rows (or columns) past ``offs[-1]`` are left unwritten by PyTorch (whatever the fresh
buffer held); here they are zeros, and their gradient is zero.

>>> import funcgrad.torch as torch
>>> import funcgrad.torch.nn.functional as F
>>> a = torch.arange(16.0).reshape(4, 4)
>>> b = torch.stack([torch.eye(4), 2 * torch.eye(4)])
>>> F.grouped_mm(a, b, offs=torch.tensor([1, 4], dtype=torch.int32))
tensor([[ 0.,  1.,  2.,  3.],
        [ 8., 10., 12., 14.],
        [16., 18., 20., 22.],
        [24., 26., 28., 30.]])
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.torch._tensor import _CPP, cpp_type_name
from funcgrad.torch.nn._apply import op

__all__ = ["grouped_mm"]

_FLOAT_NAMES = ("float32", "bfloat16", "float16")


def _layout_strides(m: Any) -> tuple[int, ...]:
    """PyTorch's strides of ``m`` (an empty tensor's are the row-major ones, as PyTorch
    makes them; NumPy gives an empty buffer zero strides)."""
    if m.numel() == 0:
        st, step = [], 1
        for s in reversed(tuple(m.shape)):
            st.append(step)
            step *= max(s, 1)
        return tuple(reversed(st))
    return tuple(int(s) for s in m.stride())


def _check_layout(m: Any) -> None:
    """The grouped GEMM kernels' layout rule: row- or column-major matrices whose leading
    stride is a multiple of 16 bytes."""
    shape = tuple(m.shape)
    st = _layout_strides(m)
    align = 16 // m.element_size()
    if st[-2] == 1 and st[-1] >= max(1, shape[-2]):
        lead = st[-1]
    elif st[-1] == 1 and st[-2] >= max(1, shape[-1]):
        lead = st[-2]
    else:
        raise RuntimeError(f"Invalid strides/sizes, got {list(st)} for strides and "
                           f"{list(shape)} for sizes")
    if lead % align:
        raise RuntimeError("strides should be multiple of 16 bytes")


def _span(start: int, end: int, size: int) -> tuple[int, int]:
    """``tensor.slice(dim, start, end)``'s bounds: negative ends wrap, both clamp."""
    s, e, _ = slice(start, end).indices(size)
    return s, max(s, e)


def _runs(ends: list[int], size: int) -> list[tuple[int, int, int]]:
    """Which group's product lands on each index of the jagged axis (the groups are
    written in order, so a later group's slice overwrites an earlier one's), as runs
    ``(start, stop, group)``; group -1 where none writes."""
    owner = np.full(size, -1, dtype=np.int64)
    start = 0
    for g, end in enumerate(ends):
        s, e = _span(start, end, size)
        owner[s:e] = g
        start = end
    runs: list[tuple[int, int, int]] = []
    if size:
        cuts = np.flatnonzero(np.diff(owner)) + 1
        bounds = [0, *cuts.tolist(), size]
        runs = [(s, e, int(owner[s])) for s, e in zip(bounds[:-1], bounds[1:])]
    return runs


def _tied(out: Any, a: Any, b: Any) -> Any:
    """``out`` (built with no group's product: all zeros) made to depend on both operands,
    so that it has PyTorch's ``GroupedMmBackward0`` node (its gradients are zero)."""
    zero = fnp.sum(a[:0]) + fnp.sum(b[:0])
    return out + fnp.astype(zero, out.dtype)


def grouped_mm(mat_a: Any, mat_b: Any, *, offs: Any = None, bias: Any = None,
               out_dtype: Any = None) -> Any:
    """Grouped matrix product: ``bmm`` of two 3-D operands, or per-group products along
    the jagged axis ``offs`` cuts in a 2-D operand (PyTorch's ``F.grouped_mm``, with its
    CPU checks and errors).

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> a, b = torch.ones(2, 3, 4), torch.ones(2, 4, 4)
    >>> F.grouped_mm(a, b).shape
    torch.Size([2, 3, 4])
    >>> F.grouped_mm(torch.ones(2, 3), b)
    Traceback (most recent call last):
    ...
    RuntimeError: contraction dimension of mat_a and mat_b must match
    """
    for name, m in (("mat_a", mat_a), ("mat_b", mat_b)):
        if m.dtype.name not in _FLOAT_NAMES:
            raise RuntimeError(f"Expected {name} to be Float32, BFloat16 or Float16 matrix, "
                               f"got {_CPP.get(m.dtype.name, m.dtype.name)}")
    if mat_a.dim() not in (2, 3):
        raise RuntimeError("mat_a has to be 2 or 3d")
    if mat_b.dim() not in (2, 3):
        raise RuntimeError("mat_b has to be 2 or 3d")
    a_2d, b_2d = mat_a.dim() == 2, mat_b.dim() == 2
    if not (a_2d and b_2d) and mat_a.shape[-1] != mat_b.shape[-2]:
        raise RuntimeError("contraction dimension of mat_a and mat_b must match")
    _check_layout(mat_a)
    _check_layout(mat_b)
    if (offs is not None) != (a_2d or b_2d):
        raise RuntimeError("Have to provide offsets if there is a 2d matrix, or no offset if "
                           "both matrices are 3d")
    if offs is not None:
        if offs.dim() != 1:
            raise RuntimeError("offs has to be 1D")
        if offs.dtype.name != "int32":
            raise RuntimeError("Offsets have to be int32")
    if bias is not None:
        raise RuntimeError("Bias not supported yet")
    if out_dtype is not None and out_dtype != mat_a.dtype:
        raise RuntimeError("Grouped gemm output dtype must match `mat_a` dtype")
    ends = [int(v) for v in offs.tolist()] if offs is not None else []
    if a_2d and not b_2d and len(ends) != mat_b.shape[0]:
        raise RuntimeError("matrix batch sizes have to match")
    if b_2d and not a_2d and len(ends) != mat_a.shape[0]:
        raise RuntimeError("matrix batch sizes have to match")
    if not (a_2d or b_2d) and mat_a.shape[0] != mat_b.shape[0]:
        raise RuntimeError("batched dimension has to match")
    if mat_a.dtype != mat_b.dtype and (ends or not (a_2d or b_2d)):
        if not (a_2d or b_2d):
            raise RuntimeError(f"Expected out tensor to have dtype {cpp_type_name(mat_b.dtype)}, "
                               f"but got {cpp_type_name(mat_a.dtype)} instead")
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{cpp_type_name(mat_a.dtype)} != {cpp_type_name(mat_b.dtype)}")
    dtype = np.dtype(mat_a._data.dtype)
    if not (a_2d or b_2d):
        return op("GroupedMm", fnp.matmul, mat_a, mat_b)
    if a_2d and b_2d:
        # One product per group over its slice of the shared (jagged) inner axis.
        m, n = mat_a.shape[0], mat_b.shape[1]
        spans, start = [], 0
        for end in ends:
            sa, sb = _span(start, end, mat_a.shape[1]), _span(start, end, mat_b.shape[0])
            if sa[1] - sa[0] != sb[1] - sb[0]:
                raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({m}x"
                                   f"{sa[1] - sa[0]} and {sb[1] - sb[0]}x{n})")
            spans.append((sa, sb))
            start = end

        def impl_2d2d(a: Any, b: Any) -> Any:
            if not spans:
                return _tied(fnp.zeros((0, m, n), dtype), a, b)
            return fnp.stack([fnp.matmul(a[:, sa[0]:sa[1]], b[sb[0]:sb[1]])
                              for sa, sb in spans])

        return op("GroupedMm", impl_2d2d, mat_a, mat_b)
    if a_2d:
        # The rows of mat_a in groups, each times its matrix of mat_b.
        n = mat_b.shape[2]
        runs = _runs(ends, mat_a.shape[0])

        def impl_rows(a: Any, b: Any) -> Any:
            parts = [fnp.zeros((e - s, n), dtype) if g < 0 else fnp.matmul(a[s:e], b[g])
                     for s, e, g in runs]
            out = fnp.concatenate(parts, axis=0) if parts else fnp.zeros((0, n), dtype)
            return out if any(g >= 0 for _, _, g in runs) else _tied(out, a, b)

        return op("GroupedMm", impl_rows, mat_a, mat_b)
    # The columns of mat_b in groups, each after its matrix of mat_a.
    m = mat_a.shape[1]
    runs = _runs(ends, mat_b.shape[1])

    def impl_cols(a: Any, b: Any) -> Any:
        parts = [fnp.zeros((m, e - s), dtype) if g < 0 else fnp.matmul(a[g], b[:, s:e])
                 for s, e, g in runs]
        out = fnp.concatenate(parts, axis=1) if parts else fnp.zeros((m, 0), dtype)
        return out if any(g >= 0 for _, _, g in runs) else _tied(out, a, b)

    return op("GroupedMm", impl_cols, mat_a, mat_b)
