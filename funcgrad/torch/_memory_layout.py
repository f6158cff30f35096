"""Memory layouts as PyTorch picks them for a new tensor made from another (``clone``,
``to``, ``empty_like``...): the strides a ``memory_format`` asks for, the layout
``preserve_format`` keeps, and host buffers laid out with given strides.

>>> format_strides((2, 3, 4, 5), channels_last)
(60, 1, 15, 3)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad.torch._device import (
    channels_last,
    channels_last_3d,
    channels_last_order,
    contiguous_format,
    memory_format,
    preserve_format,
)

Shape = tuple[int, ...]


def row_major(shape: Shape) -> Shape:
    """The strides of a contiguous tensor (a size-0 axis counts as 1, as PyTorch's do)."""
    out = [1] * len(shape)
    for k in range(len(shape) - 2, -1, -1):
        out[k] = out[k + 1] * max(shape[k + 1], 1)
    return tuple(out)


def is_dense(shape: Shape, strides: Shape) -> bool:
    """Whether the elements fill their memory exactly once: the strides are a contiguous
    layout's for some order of the axes (length-1 axes' strides do not matter).

    >>> is_dense((2, 3), (1, 2)), is_dense((2, 3), (6, 2))
    (True, False)
    """
    expected = 1
    for k in sorted((k for k in range(len(shape)) if shape[k] != 1), key=lambda k: strides[k]):
        if strides[k] != expected:
            return False
        expected *= shape[k]
    return True


def format_strides(shape: Shape, fmt: Any) -> Shape | None:
    """The strides PyTorch gives a new tensor of ``shape`` in layout ``fmt`` (None:
    row-major), with PyTorch's error for a channels-last format of the wrong rank."""
    order = channels_last_order(fmt, len(shape))
    if order is None:
        return None
    out = [0] * len(shape)
    step = 1
    for k in reversed(order):
        out[k] = step
        step *= max(shape[k], 1)
    return tuple(out)


def suggested_format(shape: Shape, strides: Shape) -> memory_format:
    """The layout PyTorch reads off a tensor's strides (``suggest_memory_format``):
    channels-last where, going from the channels through the spatial axes (innermost
    first) to the batch, each stride is at least the extent of the ones before it."""
    if len(shape) not in (4, 5):
        return contiguous_format
    walk = (1, *range(len(shape) - 1, 1, -1), 0)
    extent = 0
    for k in walk:
        if strides[k] == 0 or strides[k] < extent:
            return contiguous_format
        if k == 0 and extent == strides[1]:
            # Channels and batch tied (every spatial axis of length 1): read as row-major.
            return contiguous_format
        extent = strides[k] * max(shape[k], 1) if shape[k] > 1 else strides[k]
    return channels_last if len(shape) == 4 else channels_last_3d


def kept_strides(shape: Shape, strides: Shape, fmt: Any) -> Shape | None:
    """The strides of a new tensor made from one of ``shape`` and ``strides`` with
    ``memory_format=fmt`` (None: row-major). ``preserve_format`` (or no format) keeps the
    strides of a dense tensor, and otherwise packs the axes densely in the order of their
    strides.

    >>> kept_strides((2, 3), (1, 2), preserve_format)
    (1, 2)
    """
    if fmt is None or fmt is preserve_format:
        if 0 in shape:
            return None
        out = tuple(strides) if is_dense(shape, strides) else _packed(shape, strides)
        return None if out == row_major(shape) else out
    return format_strides(shape, fmt)


def _packed(shape: Shape, strides: Shape) -> Shape:
    """Dense strides with the axes in the memory order ``strides`` gives them. Axes are
    ranked innermost first by an insertion sort from the last axis: a smaller stride is
    inner, a tie goes inner to the longer axis, and a stride 0 (broadcast) ranks against
    nothing, so it keeps its place among the axes it is compared with."""
    def outer(a: int, b: int) -> int:  # 1: a belongs outside b, -1: inside, 0: no order
        if strides[a] == 0 or strides[b] == 0:
            return 0
        if strides[a] != strides[b]:
            return 1 if strides[a] > strides[b] else -1
        return 1 if shape[a] > shape[b] else 0

    order = list(range(len(shape) - 1, -1, -1))  # innermost first
    for i in range(1, len(order)):
        at = i
        for j in range(i - 1, -1, -1):
            rank = outer(order[j], order[at])
            if rank > 0:
                order[j], order[at] = order[at], order[j]
                at = j
            elif rank < 0:
                break
    out = [0] * len(shape)
    step = 1
    for k in order:
        out[k] = step
        step *= max(shape[k], 1)
    return tuple(out)


def storage_axes(shape: Shape, strides: Shape) -> Shape:
    """The axes from outermost to innermost in memory (ties, length-1 axes, in order)."""
    return tuple(sorted(range(len(shape)), key=lambda k: (-strides[k], k)))


def laid_out(values: np.ndarray, strides: Shape | None) -> np.ndarray:
    """A copy of ``values`` in fresh memory with ``strides`` (in elements; None:
    row-major), which must describe a dense layout.

    >>> laid_out(np.zeros((2, 3)), (1, 2)).strides
    (8, 16)
    """
    if strides is None:
        # (A fresh array: NumPy calls a buffer with odd strides on its length-1 axes
        # contiguous and would keep it.)
        out = np.empty(values.shape, values.dtype)
        out[...] = values
        return out
    item = values.dtype.itemsize
    out = np.lib.stride_tricks.as_strided(np.empty(values.size, values.dtype), values.shape,
                                          tuple(s * item for s in strides), writeable=True)
    out[...] = values
    return out


def drawn_in_layout(draw: Callable[[Shape], np.ndarray], shape: Shape,
                    strides: Shape | None) -> np.ndarray:
    """Random values for a tensor of ``shape`` with ``strides``: ``draw`` fills memory in
    order (PyTorch's generators write the storage front to back), so they are drawn in the
    shape memory holds and put back in place.

    >>> drawn_in_layout(lambda s: np.arange(6.0).reshape(s), (2, 3), (1, 2)).tolist()
    [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]
    """
    if strides is None:
        return draw(shape)
    axes = storage_axes(shape, strides)
    values = draw(tuple(shape[k] for k in axes)).transpose(np.argsort(axes))
    return laid_out(values, strides)


def _buffer_strides(buf: np.ndarray) -> Shape:
    return tuple(int(s) // buf.itemsize for s in buf.strides)


def host_format(t: Any) -> memory_format:
    """The layout PyTorch reads off a tensor's strides (row-major for anything that is not
    a host tensor: an array, a staged value, a device buffer)."""
    buf = getattr(t, "_data", None)
    if type(buf) is not np.ndarray or buf.ndim not in (4, 5) or buf.flags.c_contiguous:
        return contiguous_format
    return suggested_format(buf.shape, _buffer_strides(buf))


def in_format(t: Any, fmt: Any) -> Any:
    """``t``, a tensor just made by an operation, with its host buffer laid out in ``fmt``
    (``contiguous_format`` or a channels-last one), as PyTorch's kernel lays out its
    result: convolutions and pools follow their input's format, softmax and the norms
    write row-major. Anything else (an array, a staged value) is returned as it is."""
    buf = getattr(t, "_data", None)
    if type(buf) is not np.ndarray or (fmt is contiguous_format and buf.flags.c_contiguous):
        return t
    strides = format_strides(buf.shape, fmt) if buf.ndim in (4, 5) else None
    if _buffer_strides(buf) != (strides or row_major(buf.shape)):
        t._data = laid_out(buf, strides)
    return t


def conv_format(*tensors: Any) -> memory_format:
    """The layout of a convolution's result: channels-last where the input or the weight
    is (PyTorch's CPU rule)."""
    for t in tensors:
        fmt = host_format(t)
        if fmt is not contiguous_format:
            return fmt
    return contiguous_format


def result_format(rule: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Lay out what the decorated operation returns (each tensor of a tuple too) as
    PyTorch's kernel does: ``"row_major"`` (softmax, the norms), or ``"input"``, the
    format of its first argument (pools, resampling, padding)."""
    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def laid(input: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: A002
            out = fn(input, *args, **kwargs)
            fmt = contiguous_format if rule == "row_major" else host_format(input)
            if isinstance(out, tuple):
                for o in out:
                    in_format(o, fmt)
                return out
            return in_format(out, fmt)

        return laid

    return wrap
