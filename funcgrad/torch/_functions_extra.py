"""More top-level functions of ``torch``: the ``SyncBatchNorm`` building blocks
(``batch_norm_stats``...), raw forms of ``nn.functional`` operations (``embedding_bag``,
``grid_sampler_2d``, ``conv_tbc``, ``segment_reduce``...), ``while_loop``, the removed
``torch.eig``/``solve``... that only explain what replaces them, the process settings and
the ``sym_*`` helpers as they behave outside of tracing.

>>> import funcgrad.torch as torch
>>> torch.segment_reduce(torch.tensor([1.0, 2.0, 3.0]), "sum", lengths=torch.tensor([2, 1]))
tensor([3., 3.])
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from funcgrad.core import Tracer
from funcgrad.torch import _dtypes as D
from funcgrad.torch._grad_mode import no_grad
from funcgrad.torch._tensor import Tensor, apply_op
from funcgrad.torch._tensor_more_methods import _EIG, _LSTSQ, _SOLVE, _SYMEIG
from funcgrad.tree_util import tree_flatten, tree_unflatten

__all__ = [
    "batch_norm_backward_elemt", "batch_norm_backward_reduce", "batch_norm_elemt",
    "batch_norm_gather_stats", "batch_norm_gather_stats_with_counts", "batch_norm_stats",
    "batch_norm_update_stats", "conv_tbc", "eig", "embedding_bag", "embedding_renorm_",
    "empty_permuted", "grid_sampler_2d", "grid_sampler_3d", "init_num_threads", "lstsq",
    "matrix_rank", "max_pool1d_with_indices", "native_channel_shuffle", "norm_except_dim",
    "segment_reduce", "set_deterministic_debug_mode", "set_flush_denormal",
    "set_num_interop_threads", "solve", "sym_float", "sym_int", "sym_ite", "sym_max",
    "sym_min", "sym_not", "sym_sqrt", "sym_sum", "symeig", "while_loop",
]


def _wrap(arr: np.ndarray, like: Tensor) -> Tensor:
    """A host result as a Tensor on ``like``'s device (no gradient)."""
    from funcgrad.torch.nn._apply import on_device_of  # noqa: PLC0415

    return Tensor(on_device_of(np.ascontiguousarray(arr), like))


def _host(t: Tensor) -> np.ndarray:
    return t.detach()._host()


def _channels(x: np.ndarray) -> tuple[np.ndarray, tuple[builtins.int, ...]]:
    """``x`` with the channel axis (1) last and the others flattened before it, and the
    shape that puts a per-channel vector back against ``x``."""
    moved = np.moveaxis(x, 1, -1).reshape(-1, x.shape[1])
    return moved, (1, x.shape[1]) + (1,) * (x.ndim - 2)


def _acc(t: Tensor) -> D.dtype:
    # The CUDA kernels keep statistics of half and bfloat16 inputs in float32.
    return t.dtype if t.dtype in (D.float32, D.float64) else D.float32


# ------------------------------------------------------------ SyncBatchNorm blocks


def batch_norm_stats(input: Tensor, eps: builtins.float) -> tuple[Tensor, Tensor]:  # noqa: A002
    """Per-channel ``(mean, invstd)`` of ``input`` over every dimension but 1, with
    ``invstd = 1 / sqrt(biased var + eps)`` (0 where both are 0); no gradient.

    >>> import funcgrad.torch as torch
    >>> torch.batch_norm_stats(torch.tensor([[1.0], [3.0]]), 0.0)
    (tensor([2.]), tensor([1.]))
    """
    x, _ = _channels(_host(input).astype(np.float64))
    mean = x.mean(axis=0)
    var = ((x - mean) ** 2).mean(axis=0)
    with np.errstate(divide="ignore"):
        invstd = np.where((var == 0) & (eps == 0), 0.0, 1.0 / np.sqrt(var + eps))
    dt = _acc(input).np
    return _wrap(mean.astype(dt), input), _wrap(invstd.astype(dt), input)


def _update_running(running: Tensor | None, value: np.ndarray,
                    momentum: builtins.float) -> None:
    if running is None:
        return
    new = (1 - momentum) * _host(running).astype(np.float64) + momentum * value
    with no_grad():
        running.copy_(_wrap(new.astype(running.dtype.np), running))


def batch_norm_gather_stats_with_counts(
        input: Tensor, mean: Tensor, invstd: Tensor,  # noqa: A002
        running_mean: Tensor | None, running_var: Tensor | None, momentum: builtins.float,
        eps: builtins.float, counts: Tensor) -> tuple[Tensor, Tensor]:
    """The whole batch's ``(mean, invstd)`` from every process's ``mean`` and ``invstd``
    (rows) and element ``counts``; updates the running statistics in place (the variance
    unbiased) as ``SyncBatchNorm`` does.

    >>> import funcgrad.torch as torch
    >>> m, s = torch.batch_norm_gather_stats_with_counts(
    ...     torch.zeros(2, 1), torch.tensor([[0.0], [2.0]]), torch.tensor([[1.0], [1.0]]),
    ...     None, None, 0.1, 0.0, torch.tensor([1.0, 1.0]))
    >>> m, s
    (tensor([1.]), tensor([0.7071]))
    """
    means = _host(mean).astype(np.float64)
    invstds = _host(invstd).astype(np.float64)
    cnt = _host(counts).astype(np.float64).reshape(-1)
    avg = np.zeros(means.shape[1])
    var_n = np.zeros(means.shape[1])
    n = 0
    # The CUDA kernel's running combination, rank after rank (its count is an integer).
    for j in builtins.range(means.shape[0]):
        c = cnt[j]
        m = means[j]
        v = (1.0 / invstds[j]) ** 2
        v = (v - eps) * c
        factor = 1.0 / (n + c)
        var_n = var_n + v + (avg - m) ** 2 * n * c * factor
        avg = n * factor * avg + c * factor * m
        n = builtins.int(n + c)
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = 1.0 / np.sqrt(var_n / n + eps)
        unbiased = var_n / (n - 1)
    _update_running(running_mean, avg, momentum)
    _update_running(running_var, unbiased, momentum)
    return _wrap(avg.astype(mean.dtype.np), input), _wrap(inv.astype(invstd.dtype.np), input)


def batch_norm_gather_stats(input: Tensor, mean: Tensor, invstd: Tensor,  # noqa: A002
                            running_mean: Tensor | None, running_var: Tensor | None,
                            momentum: builtins.float, eps: builtins.float,
                            count: builtins.int) -> tuple[Tensor, Tensor]:
    """``batch_norm_gather_stats_with_counts`` with the same ``count`` for every row.

    >>> import funcgrad.torch as torch
    >>> torch.batch_norm_gather_stats(torch.zeros(2, 1), torch.tensor([[0.0], [2.0]]),
    ...                               torch.tensor([[1.0], [1.0]]), None, None, 0.1, 0.0, 3)
    (tensor([1.]), tensor([0.7071]))
    """
    dt = running_mean.dtype if running_mean is not None else input.dtype
    counts = _wrap(np.full(mean.shape[0], count, dt.np), input)
    return batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean,
                                               running_var, momentum, eps, counts)


def _per_channel(v: Tensor | None, shape: tuple[builtins.int, ...]) -> Any:
    return 1.0 if v is None else _host(v).astype(np.float64).reshape(shape)


def batch_norm_elemt(input: Tensor, weight: Tensor | None, bias: Tensor | None,  # noqa: A002
                     mean: Tensor, invstd: Tensor, eps: builtins.float) -> Tensor:
    """``(input - mean) * invstd * weight + bias`` per channel (``eps`` is not used).

    >>> import funcgrad.torch as torch
    >>> torch.batch_norm_elemt(torch.tensor([[1.0], [3.0]]), None, None, torch.tensor([2.0]),
    ...                        torch.tensor([1.0]), 0.0)
    tensor([[-1.],
            [ 1.]])
    """
    x = _host(input).astype(np.float64)
    _, shape = _channels(x)
    out = (x - _per_channel(mean, shape)) * _per_channel(invstd, shape) * \
        _per_channel(weight, shape)
    if bias is not None:
        out = out + _per_channel(bias, shape)
    return _wrap(out.astype(input.dtype.np), input)


def batch_norm_backward_reduce(grad_out: Tensor, input: Tensor, mean: Tensor,  # noqa: A002
                               invstd: Tensor, weight: Tensor | None,
                               input_g: builtins.bool, weight_g: builtins.bool,
                               bias_g: builtins.bool) -> tuple[Any, Any, Any, Any]:
    """``(sum_dy, sum_dy_xmu, grad_weight, grad_bias)`` per channel; each of the first two
    only with ``input_g``, the others with ``weight_g`` and ``bias_g`` (None otherwise).

    >>> import funcgrad.torch as torch
    >>> x = torch.tensor([[1.0], [3.0]])
    >>> torch.batch_norm_backward_reduce(x, x, torch.tensor([2.0]), torch.tensor([1.0]),
    ...                                  None, True, True, True)
    (tensor([4.]), tensor([2.]), tensor([2.]), tensor([4.]))
    """
    x = _host(input).astype(np.float64)
    dy, shape = _channels(_host(grad_out).astype(np.float64))
    xmu, _ = _channels(x - _per_channel(mean, shape))
    sum_dy = dy.sum(axis=0)
    sum_dy_xmu = (dy * xmu).sum(axis=0)
    sdt = mean.dtype.np
    wdt = weight.dtype.np if weight is not None else sdt
    inv = _host(invstd).astype(np.float64)
    return (_wrap(sum_dy.astype(sdt), input) if input_g else None,
            _wrap(sum_dy_xmu.astype(sdt), input) if input_g else None,
            _wrap((sum_dy_xmu * inv).astype(wdt), input) if weight_g else None,
            _wrap(sum_dy.astype(wdt), input) if bias_g else None)


def batch_norm_backward_elemt(grad_out: Tensor, input: Tensor, mean: Tensor,  # noqa: A002
                              invstd: Tensor, weight: Tensor | None, sum_dy: Tensor,
                              sum_dy_xmu: Tensor, count: Tensor) -> Tensor:
    """The input's gradient of batch normalization over the whole batch (``count``: every
    process's element count), from ``batch_norm_backward_reduce``'s sums.

    >>> import funcgrad.torch as torch
    >>> x = torch.tensor([[1.0], [3.0]])
    >>> torch.batch_norm_backward_elemt(x, x, torch.tensor([2.0]), torch.tensor([1.0]), None,
    ...                                 torch.tensor([4.0]), torch.tensor([2.0]),
    ...                                 torch.tensor([2], dtype=torch.int32))
    tensor([[0.],
            [0.]])
    """
    x = _host(input).astype(np.float64)
    dy = _host(grad_out).astype(np.float64)
    _, shape = _channels(x)
    total = _host(count).astype(np.float64).sum()
    inv = _per_channel(invstd, shape)
    mean_dy = _per_channel(sum_dy, shape) / total
    mean_dy_xmu = _per_channel(sum_dy_xmu, shape) / total
    out = (dy - mean_dy - (x - _per_channel(mean, shape)) * inv * inv * mean_dy_xmu) * \
        inv * _per_channel(weight, shape)
    return _wrap(out.astype(grad_out.dtype.np), input)


def batch_norm_update_stats(input: Tensor, running_mean: Tensor | None,  # noqa: A002
                            running_var: Tensor | None, momentum: builtins.float
                            ) -> tuple[Tensor, Tensor]:
    """Per-channel ``(mean, biased var)`` of ``input``; the running statistics move toward
    the mean and the unbiased variance by ``momentum``.

    >>> import funcgrad.torch as torch
    >>> torch.batch_norm_update_stats(torch.tensor([[1.0], [3.0]]), None, None, 0.1)
    (tensor([2.]), tensor([1.]))
    """
    if input.dim() < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[-{builtins.max(input.dim(), 1)}, "
                         f"{builtins.max(input.dim(), 1) - 1}], but got 1)")
    if not input.is_floating_point():
        from funcgrad.torch.nn.grid_sample import _scalar_name  # noqa: PLC0415

        raise NotImplementedError(f"\"batch_norm_update_stats_cpu\" not implemented for "
                                  f"'{_scalar_name(input)}'")
    if input.numel() == 0:
        raise RuntimeError(f"input tensor must have at least one element, but got "
                           f"input_sizes = {list(input.shape)}")
    x, _ = _channels(_host(input).astype(np.float64))
    n = x.shape[0]
    mean = x.mean(axis=0)
    var_sum = ((x - mean) ** 2).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        unbiased = var_sum / (n - 1)
    _update_running(running_mean, mean, momentum)
    _update_running(running_var, unbiased, momentum)
    dt = (running_mean.dtype if running_mean is not None else input.dtype).np
    return _wrap(mean.astype(dt), input), _wrap((var_sum / n).astype(dt), input)


# --------------------------------------------------- raw nn.functional operations


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = (),  # noqa: A002
                            padding: Any = 0, dilation: Any = 1,
                            ceil_mode: builtins.bool = False) -> tuple[Tensor, Tensor]:
    """``(values, indices)`` of 1-D max pooling (``stride`` defaults to ``kernel_size``).

    >>> import funcgrad.torch as torch
    >>> torch.max_pool1d_with_indices(torch.tensor([[1.0, 3.0, 2.0, 0.0]]), 2)
    (tensor([[3., 2.]]), tensor([[1, 2]]))
    """
    from funcgrad.torch.nn.pooling import max_pool1d  # noqa: PLC0415

    if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0):
        stride = None
    return cast(tuple[Tensor, Tensor], max_pool1d(input, kernel_size, stride, padding,
                                                  dilation, ceil_mode, True))


def embedding_bag(weight: Tensor, indices: Tensor, offsets: Tensor,
                  scale_grad_by_freq: builtins.bool = False, mode: builtins.int = 0,
                  sparse: builtins.bool = False, per_sample_weights: Tensor | None = None,
                  include_last_offset: builtins.bool = False,
                  padding_idx: builtins.int | None = None
                  ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """PyTorch's raw ``embedding_bag``: ``(output, offset2bag, bag_size, max_indices)``
    with ``mode`` 0 (sum), 1 (mean) or 2 (max). The bag starting at the last offset runs to
    the end of ``indices`` (also with ``include_last_offset``).

    >>> import funcgrad.torch as torch
    >>> w = torch.tensor([[1.0, 1.0], [2.0, 4.0], [3.0, 0.0]])
    >>> out, _, size, _ = torch.embedding_bag(w, torch.tensor([0, 1, 2]), torch.tensor([0, 2]),
    ...                                       False, 1)
    >>> out, size
    (tensor([[1.5000, 2.5000],
            [3.0000, 0.0000]]), tensor([2, 1]))
    """
    import funcgrad.numpy as fnp  # noqa: PLC0415
    from funcgrad.torch.nn._apply import op  # noqa: PLC0415
    from funcgrad.torch.nn.sparse import (  # noqa: PLC0415
        _freq_scaled,
        _host_indices,
        _padding_index,
    )

    if mode not in (0, 1, 2):
        raise RuntimeError(f"mode has to be one of sum, mean or max, but got {mode}")
    num = weight.shape[0]
    flat = _host_indices(indices, num).reshape(-1)
    pad = _padding_index(padding_idx, num)
    off = _host(offsets).astype(np.int64).reshape(-1)
    starts = off[:-1] if include_last_offset else off
    n_bags = builtins.int(starts.size)
    bag = np.clip(np.searchsorted(starts, np.arange(flat.size), side="right") - 1, 0, None)
    member = bag[None, :] == np.arange(n_bags)[:, None]
    if pad is not None:
        member &= (flat != pad)[None, :]
    counts = member.sum(axis=1).astype(np.int64)
    longest = builtins.max(builtins.int(counts.max()) if n_bags else 0, 1)
    slots = np.zeros((n_bags, longest), np.int64)
    valid = np.zeros((n_bags, longest), bool)
    for b in builtins.range(n_bags):
        pos = np.nonzero(member[b])[0]
        slots[b, :pos.size], valid[b, :pos.size] = pos, True
    psw = per_sample_weights

    def impl(w: Any, sw: Any) -> Any:
        rows = fnp.take(w, fnp.asarray(flat), axis=0)
        if scale_grad_by_freq and mode != 2:
            rows = _freq_scaled(rows, flat, w)
        if sw is not None:
            rows = rows * fnp.reshape(fnp.astype(sw, rows.dtype), (-1, 1))
        if mode == 2:
            picked = fnp.take(rows, fnp.asarray(slots), axis=0)
            mask = fnp.expand_dims(fnp.asarray(valid), -1)
            best = fnp.max(fnp.where(mask, picked, -fnp.inf), axis=1)
            return fnp.where(fnp.any(mask, axis=1), best, 0.0)
        summed = fnp.matmul(fnp.asarray(member.astype(np.float64)).astype(rows.dtype), rows)
        if mode == 1:
            return summed / fnp.asarray(np.maximum(counts, 1)[:, None]).astype(rows.dtype)
        return summed

    out = op("EmbeddingBag", impl, weight, psw)
    # PyTorch's fast sum kernel (all but float64) leaves offset2bag empty.
    plain_sum = mode == 0 and pad is None and weight.dtype is not D.float64
    offset2bag = np.zeros(0, np.int64) if plain_sum else bag.astype(np.int64)
    bag_size = np.zeros(n_bags, np.int64) if mode == 0 else counts
    if mode == 2:
        # The first largest member of each bag (strictly larger values replace it).
        w = _host(weight)
        vals = np.where(valid[:, :, None], w[flat[slots]], -np.inf)
        first = np.argmax(vals, axis=1)
        max_idx = np.where(np.asarray(valid.any(axis=1))[:, None],
                           np.take_along_axis(flat[slots], first, axis=1), 0)
    else:
        max_idx = bag_size.copy()
    return (out, _wrap(offset2bag, weight), _wrap(bag_size, weight),
            _wrap(max_idx.astype(np.int64), weight))


def embedding_renorm_(input: Tensor, indices: Tensor, max_norm: builtins.float,  # noqa: A002
                      norm_type: builtins.float) -> Tensor:
    """Scale in place the rows of ``input`` named in ``indices`` whose ``norm_type``-norm
    exceeds ``max_norm`` down to ``max_norm``; returns ``input``.

    >>> import funcgrad.torch as torch
    >>> w = torch.tensor([[3.0, 4.0], [0.3, 0.4]])
    >>> torch.embedding_renorm_(w, torch.tensor([0, 1]), 1.0, 2.0)
    tensor([[0.6000, 0.8000],
            [0.3000, 0.4000]])
    """
    from funcgrad.torch.nn.sparse import _host_indices, _renorm_rows  # noqa: PLC0415

    _renorm_rows(input, _host_indices(indices, input.shape[0]).reshape(-1), max_norm,
                 norm_type)
    return input


def _grid_sampler(nd: builtins.int, input: Tensor, grid: Tensor,  # noqa: A002
                  interpolation_mode: builtins.int, padding_mode: builtins.int,
                  align_corners: builtins.bool) -> Tensor:
    from funcgrad.torch.nn.grid_sample import grid_sampler  # noqa: PLC0415

    if input.dim() != grid.dim() or input.dim() not in (4, 5):
        # The dimension checks of every grid sampler, which follow the input's.
        return grid_sampler(input, grid, interpolation_mode, padding_mode,
                            align_corners)
    if input.dim() != nd:
        raise RuntimeError(f"grid_sampler(): expected {nd}D input and grid with same number "
                           f"of dimensions, but got input with sizes {list(input.shape)} "
                           f"and grid with sizes {list(grid.shape)}")
    if interpolation_mode not in (0, 1, 2) or padding_mode not in (0, 1, 2):
        # PyTorch reads past its enum here (an uninitialised result); refuse instead.
        raise RuntimeError(f"grid_sampler(): unknown interpolation mode "
                           f"{interpolation_mode} or padding mode {padding_mode}")
    return grid_sampler(input, grid, interpolation_mode, padding_mode,
                        align_corners)


def grid_sampler_2d(input: Tensor, grid: Tensor, interpolation_mode: builtins.int,  # noqa: A002
                    padding_mode: builtins.int, align_corners: builtins.bool) -> Tensor:
    """``grid_sample`` of a 4-D input with integer modes (interpolation 0 bilinear,
    1 nearest, 2 bicubic; padding 0 zeros, 1 border, 2 reflection).

    >>> import funcgrad.torch as torch
    >>> torch.grid_sampler_2d(torch.ones(1, 1, 2, 2), torch.zeros(1, 1, 1, 2), 0, 0, False)
    tensor([[[[1.]]]])
    """
    return _grid_sampler(4, input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input: Tensor, grid: Tensor, interpolation_mode: builtins.int,  # noqa: A002
                    padding_mode: builtins.int, align_corners: builtins.bool) -> Tensor:
    """``grid_sample`` of a 5-D input with integer modes (as ``grid_sampler_2d``; no
    bicubic).

    >>> import funcgrad.torch as torch
    >>> torch.grid_sampler_3d(torch.ones(1, 1, 2, 2, 2), torch.zeros(1, 1, 1, 1, 3), 1, 0,
    ...                       True)
    tensor([[[[[1.]]]]])
    """
    return _grid_sampler(5, input, grid, interpolation_mode, padding_mode, align_corners)


def norm_except_dim(v: Tensor, pow: builtins.int = 2, dim: builtins.int = 0) -> Tensor:  # noqa: A002
    """The ``pow``-norm of ``v`` over every dimension but ``dim`` (kept, the others size
    1); ``dim=-1``: the norm of all of ``v``. Weight normalization's ``||v||``.

    >>> import funcgrad.torch as torch
    >>> torch.norm_except_dim(torch.tensor([[3.0, 4.0], [0.0, 1.0]]))
    tensor([[5.],
            [1.]])
    """
    if not isinstance(pow, builtins.int) or isinstance(pow, builtins.bool):
        raise TypeError(f"norm_except_dim(): argument 'pow' (position 2) must be int, not "
                        f"{type(pow).__name__}")
    if dim == -1:
        return v.norm(pow)
    nd = v.dim()
    if not -nd <= dim < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, "
                         f"{nd - 1}], but got {dim})")
    dim = dim % nd
    if dim == 0:
        shape = [v.shape[0]] + [1] * (nd - 1)
        return v.contiguous().view(v.shape[0], -1).norm(pow, 1).view(shape)
    if dim == nd - 1:
        shape = [1] * (nd - 1) + [v.shape[-1]]
        return v.contiguous().view(-1, v.shape[-1]).norm(pow, 0).view(shape)
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def native_channel_shuffle(input: Tensor, groups: builtins.int) -> Tensor:  # noqa: A002
    """Interleave the channels (dim 1) of ``groups`` groups.

    >>> import funcgrad.torch as torch
    >>> torch.native_channel_shuffle(torch.arange(4.0).reshape(1, 4, 1), 2).flatten()
    tensor([0., 2., 1., 3.])
    """
    from funcgrad.torch.nn.activation import channel_shuffle  # noqa: PLC0415

    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value "
                           f"of groups:{groups}")
    if input.shape[1] % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got "
                           f"{input.shape[1]} channels and {groups} groups.")
    return cast(Tensor, channel_shuffle(input, groups))


def empty_permuted(size: Sequence[builtins.int], physical_layout: Sequence[builtins.int], *,
                   dtype: Any = None, layout: Any = None, device: Any = None,
                   requires_grad: builtins.bool = False,
                   pin_memory: builtins.bool = False) -> Tensor:
    """A new tensor of shape ``size`` whose memory holds the dimensions in the order
    ``physical_layout`` (outermost first): ``empty(size[p]).permute(inverse of p)``.

    >>> import funcgrad.torch as torch
    >>> torch.empty_permuted((2, 3, 4), (0, 2, 1)).stride()
    (12, 1, 3)
    """
    from funcgrad.torch._creation import empty_strided  # noqa: PLC0415

    size, perm = [builtins.int(s) for s in size], [builtins.int(p) for p in physical_layout]
    if len(size) != len(perm):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {len(size)} is not equal to "
                           f"len(physical_layout) = {len(perm)}")
    seen: set[builtins.int] = set()
    for p in perm:
        if not 0 <= p < len(size):
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-len(size)}, {len(size) - 1}], but got {p})")
        if p in seen:
            raise RuntimeError("Duplicate dim not allowed")
        seen.add(p)
    stride = [0] * len(size)
    step = 1
    for p in reversed(perm):
        stride[p] = step
        step *= builtins.max(size[p], 1)
    return empty_strided(size, stride, dtype=dtype, layout=layout, device=device,
                         requires_grad=requires_grad, pin_memory=pin_memory)


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor,  # noqa: A002
             pad: builtins.int = 0) -> Tensor:
    """1-D convolution of a ``(time, batch, in_channels)`` sequence with a ``(kernel_width,
    in_channels, out_channels)`` filter, ``pad`` steps of zeros at both ends.

    >>> import funcgrad.torch as torch
    >>> torch.conv_tbc(torch.ones(3, 1, 1), torch.ones(2, 1, 1), torch.zeros(1)).flatten()
    tensor([2., 2.])
    """
    import funcgrad.numpy as fnp  # noqa: PLC0415
    from funcgrad.torch.nn._apply import op  # noqa: PLC0415

    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output "
                           "channels).")
    width = builtins.int(weight.shape[0])
    steps = builtins.max(builtins.int(input.shape[0]) + 2 * pad - width + 1, 0)

    def impl(x: Any, w: Any, b: Any) -> Any:
        xp = fnp.pad(x, ((pad, pad), (0, 0), (0, 0)))
        out = fnp.broadcast_to(b, (steps, x.shape[1], b.shape[0]))
        for k in builtins.range(width):
            out = out + fnp.matmul(xp[k:k + steps], w[k])
        return out

    return cast(Tensor, op("ConvTbc", impl, input, weight, bias))


# ----------------------------------------------------------------- segment_reduce


_SEGMENT_REDUCTIONS = {"sum": "sum", "mean": "mean", "max": "max", "amax": "max",
                       "min": "min", "amin": "min", "prod": "prod"}


def segment_reduce(data: Tensor, reduce: str, *, lengths: Tensor | None = None,
                   indices: Tensor | None = None, offsets: Tensor | None = None,
                   axis: builtins.int = 0, unsafe: builtins.bool = False,
                   initial: Any = None) -> Tensor:
    """Reduce (``sum``, ``mean``, ``max``, ``min``, ``prod``) consecutive segments of
    ``data`` along ``axis``, given their ``lengths`` or start ``offsets``; ``initial``
    joins every segment (an empty one gives it, or the reduction's identity; ``mean``
    of nothing is nan). Differentiable in ``data``.

    >>> import funcgrad.torch as torch
    >>> torch.segment_reduce(torch.tensor([1.0, 5.0, 2.0]), "max",
    ...                      offsets=torch.tensor([0, 2, 3]))
    tensor([5., 2.])
    """
    import funcgrad.numpy as fnp  # noqa: PLC0415
    from funcgrad.torch.nn._apply import op  # noqa: PLC0415
    from funcgrad.torch.nn.grid_sample import _scalar_name  # noqa: PLC0415

    if reduce not in _SEGMENT_REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, "
                           f"got {reduce}")
    red = _SEGMENT_REDUCTIONS[reduce]
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    axis = axis % builtins.max(data.dim(), 1)
    given = lengths if lengths is not None else offsets
    assert given is not None
    kind = "lengths" if lengths is not None else "offsets"
    if given.dim() - 1 != axis:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of "
                           f"{kind} but got {axis}.")
    if given.is_floating_point() or not data.is_floating_point():
        bad = given if given.is_floating_point() else data
        raise NotImplementedError(f"\"_segment_reduce_{kind}_cpu_kernel1\" not implemented "
                                  f"for '{_scalar_name(bad)}'")
    size = builtins.int(data.shape[axis])
    g = _host(given).astype(np.int64)
    if lengths is not None:
        if not unsafe:
            if (g < 0).any():
                raise RuntimeError("lengths contains negative value!")
            if (g.sum(axis=-1) != size).any():
                raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis "
                                   "to sum to data.size(lengths.dim()-1) when !unsafe.")
        ends = np.cumsum(g, axis=-1)
        starts = ends - g
    else:
        starts, ends = g[..., :-1], g[..., 1:]
    pos = np.arange(size)
    # member[..., s, n]: element n (along axis) is in segment s, per leading index.
    member = (pos >= starts[..., None]) & (pos < ends[..., None])
    counts = member.sum(axis=-1)
    trailing = data.dim() - axis - 1
    mask = member.reshape(member.shape + (1,) * trailing)
    cnt = counts.reshape(counts.shape + (1,) * trailing).astype(np.float64)
    identity = {"sum": 0.0, "mean": 0.0, "prod": 1.0, "max": -np.inf, "min": np.inf}[red]

    def impl(x: Any) -> Any:
        xs = fnp.expand_dims(x, axis)
        vals = fnp.where(fnp.asarray(mask), xs, fnp.asarray(identity, dtype=x.dtype))
        if red in ("sum", "mean"):
            out = fnp.sum(vals, axis=axis + 1)
        elif red == "prod":
            out = fnp.prod(vals, axis=axis + 1)
        else:
            # The identity joins every segment, so an empty one (even of empty data) gives
            # it, as in PyTorch, and the result still depends on the data.
            pad_shape = list(vals.shape)
            pad_shape[axis + 1] = 1
            pad = fnp.full(tuple(pad_shape), identity, dtype=x.dtype)
            out = getattr(fnp, red)(fnp.concatenate([vals, pad], axis=axis + 1),
                                    axis=axis + 1)
        if initial is not None:
            init = fnp.asarray(initial, dtype=x.dtype)
            out = {"sum": lambda: out + init, "mean": lambda: out + init,
                   "prod": lambda: out * init, "max": lambda: fnp.maximum(out, init),
                   "min": lambda: fnp.minimum(out, init)}[red]()
        if red == "mean":
            c = fnp.asarray(cnt).astype(x.dtype)
            empty = fnp.asarray(cnt == 0)
            mean = out / fnp.where(empty, fnp.ones_like(c), c)
            fill = fnp.asarray(np.nan if initial is None else initial, dtype=x.dtype)
            out = fnp.where(empty, fill, mean)
        return out

    return cast(Tensor, op("SegmentReduce", impl, data))


# --------------------------------------------------------------------- while_loop


def while_loop(cond_fn: Any, body_fn: Any, carried_inputs: Any) -> Any:
    """``carried = body_fn(*carried)`` while ``cond_fn(*carried)`` holds, as ONE operation
    (``WhileLoopAutogradOpBackward``): the carry is a tuple of possibly nested
    dict/list/tuple of tensors and ints, which ``body_fn`` returns with the same shapes and
    dtypes. Gradients flow through every iteration run; under ``torch.compile`` and
    ``torch.func`` transforms it is ``lax.while_loop`` (forward-mode differentiable).

    >>> import funcgrad.torch as torch
    >>> torch.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2),
    ...                  (torch.tensor(0), torch.tensor([1.0])))
    (tensor(3), tensor([8.]))
    """
    from funcgrad import lax  # noqa: PLC0415
    from funcgrad import numpy as fnp  # noqa: PLC0415
    from funcgrad.torch._engine_values import tensors as _tensors  # noqa: PLC0415
    from funcgrad.torch._engine_values import values as _values  # noqa: PLC0415

    if not callable(cond_fn) or not callable(body_fn):
        raise RuntimeError("Expect cond_fn and body_fn to be callable.")
    leaves, tree = tree_flatten(carried_inputs, is_leaf=lambda x: isinstance(x, Tensor))
    if not isinstance(carried_inputs, (tuple, list)) or not builtins.all(
            isinstance(t, (Tensor, builtins.int)) and not isinstance(t, builtins.bool)
            for t in leaves):
        raise RuntimeError("Expect carried_inputs to be a tuple of possibly nested "
                           "dict/list/tuple that onlyconsists of tensor or int leaves, but "
                           f"got {carried_inputs}.")
    is_int = [not isinstance(t, Tensor) for t in leaves]
    tensors = [Tensor(np.asarray(t, np.int64)) if i else t for t, i in zip(leaves, is_int)]
    out_tree: list[Any] = []

    def carry_of(vals: Sequence[Any]) -> list[Any]:
        return [builtins.int(v) if i and not isinstance(v, Tracer) else t
                for v, t, i in zip(vals, _tensors(list(vals)), is_int)]

    def check(new: Any, old: Sequence[Any]) -> list[Any]:
        flat, ntree = tree_flatten(new, is_leaf=lambda x: isinstance(x, Tensor))
        if len(flat) != len(old):
            raise RuntimeError(f"body_fn should return the same number of elements as "
                               f"carried_inputs: got {len(flat)}, expected {len(old)}.")
        vals = []
        for k, (a, b) in enumerate(zip(flat, old)):
            av = fnp.asarray(_values(a) if isinstance(a, Tensor) else a,
                             dtype=None if isinstance(a, Tensor) else b.dtype)
            if tuple(av.shape) != tuple(b.shape) or av.dtype != b.dtype:
                raise RuntimeError(f"Expected body_fn_output and carried_inputs to have same "
                                   f"metadata but found: pair[{k}] differ in shape/dtype: "
                                   f"{tuple(av.shape)} {av.dtype} vs {tuple(b.shape)} "
                                   f"{b.dtype}")
            vals.append(av)
        if not out_tree:
            out_tree.append(ntree)
        return vals

    def predicate(vals: Sequence[Any]) -> Any:
        p = cond_fn(*tree_unflatten(tree, carry_of(vals)))
        pv = _values(p) if isinstance(p, Tensor) else fnp.asarray(p)
        if fnp.size(pv) != 1:
            raise RuntimeError(f"Expected cond_fn to return a scalar tensor or a bool but got "
                               f"shape {tuple(fnp.shape(pv))}.")
        return fnp.reshape(pv, ()) != 0

    def step(vals: Sequence[Any]) -> list[Any]:
        return check(body_fn(*tree_unflatten(tree, carry_of(vals))), vals)

    def result(vals: Sequence[Any]) -> Any:
        ts = [v if isinstance(v, Tensor) else _tensors(v) for v in vals]
        outs = [builtins.int(t.item()) if i else t for t, i in zip(ts, is_int)]
        return tree_unflatten(out_tree[0] if out_tree else tree, outs)

    values = [t._data for t in tensors]
    if builtins.any(isinstance(v, Tracer) for v in values):
        final = lax.while_loop(lambda c: predicate(list(c)), lambda c: tuple(step(list(c))),
                               tuple(_values(tensors)))
        return result(list(final))
    # Eager: count the iterations on the values, then run that many as one recorded
    # operation (a loop of fixed length, which reverse mode differentiates).
    from funcgrad.torch._graph import X64  # noqa: PLC0415

    with no_grad(), X64:
        probe = list(_values(tensors))
        trips = 0
        while builtins.bool(predicate(probe)):
            probe = step(probe)
            trips += 1

    def run(*vals: Any) -> Any:
        # A scan traces ``body_fn`` once, on abstract values, and reverse mode goes
        # through it; Python-level steps would not see the tape.
        final, _ = lax.scan(lambda c, _: (tuple(step(list(c))), None), tuple(vals), None,
                            length=trips)
        return tuple(final)

    outs = apply_op("WhileLoopAutogradOpBackward", run, *tensors)
    return result(list(outs))


# ------------------------------------------------ removed linear-algebra functions


def matrix_rank(input: Any, tol: Any = None, symmetric: builtins.bool = False, *,  # noqa: A002
                out: Any = None) -> Tensor:
    """Removed from PyTorch: raises, pointing to ``torch.linalg.matrix_rank``.

    >>> import funcgrad.torch as torch
    >>> try:
    ...     torch.matrix_rank(torch.eye(2))
    ... except RuntimeError as e:
    ...     print(str(e).splitlines()[0])
    This function was deprecated since version 1.9 and is now removed.
    """
    raise RuntimeError(
        "This function was deprecated since version 1.9 and is now removed.\n"
        "Please use the `torch.linalg.matrix_rank` function instead. "
        "The parameter 'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'.")


def solve(input: Any, A: Any, *, out: Any = None) -> tuple[Tensor, Tensor]:  # noqa: A002, N803
    """Removed from PyTorch: raises, pointing to ``torch.linalg.solve``.

    >>> import funcgrad.torch as torch
    >>> try:
    ...     torch.solve(torch.eye(2), torch.eye(2))
    ... except RuntimeError as e:
    ...     print(str(e).splitlines()[-1])
    X = torch.linalg.solve(A, B)
    """
    raise RuntimeError(_SOLVE)


def lstsq(input: Any, A: Any, *, out: Any = None) -> tuple[Tensor, Tensor]:  # noqa: A002, N803
    """Removed from PyTorch: raises, pointing to ``torch.linalg.lstsq``.

    >>> import funcgrad.torch as torch
    >>> try:
    ...     torch.lstsq(torch.eye(2), torch.eye(2))
    ... except RuntimeError as e:
    ...     print(str(e).splitlines()[-1])
    X = torch.linalg.lstsq(A, B).solution
    """
    raise RuntimeError(_LSTSQ)


def symeig(input: Any, eigenvectors: builtins.bool = False,  # noqa: A002
           upper: builtins.bool = True, *, out: Any = None) -> tuple[Tensor, Tensor]:
    """Removed from PyTorch: raises, pointing to ``torch.linalg.eigh``.

    >>> import funcgrad.torch as torch
    >>> try:
    ...     torch.symeig(torch.eye(2))
    ... except RuntimeError as e:
    ...     print(str(e).splitlines()[-1])
    L, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')
    """
    raise RuntimeError(_SYMEIG)


def eig(self: Any, eigenvectors: builtins.bool = False, *, e: Any = None,
        v: Any = None) -> tuple[Tensor, Tensor]:
    """Removed from PyTorch: raises, pointing to ``torch.linalg.eig``.

    >>> import funcgrad.torch as torch
    >>> try:
    ...     torch.eig(torch.eye(2))
    ... except RuntimeError as e:
    ...     print(str(e).splitlines()[-1])
    L_complex, V_complex = torch.linalg.eig(A)
    """
    raise RuntimeError(_EIG)


# ------------------------------------------------------------------ process settings


def set_flush_denormal(mode: builtins.bool) -> builtins.bool:
    """Ask the CPU to flush denormal floats to zero; returns whether that is supported:
    False here, as PyTorch answers on a CPU without the flag (funcgrad's NumPy kernels
    keep denormals, so claiming support would be untrue).

    >>> import funcgrad.torch as torch
    >>> torch.set_flush_denormal(True)
    False
    """
    if not isinstance(mode, builtins.bool):
        raise RuntimeError(f"flush_denormal expects a bool, but got {type(mode).__name__}")
    return False


def set_num_interop_threads(n: builtins.int) -> None:
    """Record the inter-op thread count (read back by ``get_num_interop_threads``).

    >>> import funcgrad.torch as torch
    >>> torch.set_num_interop_threads(torch.get_num_interop_threads())
    """
    from funcgrad.torch._tensor_math import _SETTINGS  # noqa: PLC0415

    if not isinstance(n, builtins.int) or isinstance(n, builtins.bool):
        raise TypeError(f"set_num_interop_threads expects an int, but got "
                        f"{type(n).__name__}")
    if n <= 0:
        raise RuntimeError("Expected positive number of threads")
    _SETTINGS["interop"] = n


def init_num_threads() -> None:
    """Set up the current thread's thread pools (nothing to do in funcgrad).

    >>> import funcgrad.torch as torch
    >>> torch.init_num_threads()
    """


def set_deterministic_debug_mode(debug_mode: builtins.int | str) -> None:
    """``use_deterministic_algorithms`` by level: "default"/0 off, "warn"/1 warn only,
    "error"/2 on.

    >>> import funcgrad.torch as torch
    >>> torch.set_deterministic_debug_mode("default"); torch.get_deterministic_debug_mode()
    0
    """
    from funcgrad.torch._tensor_math import use_deterministic_algorithms  # noqa: PLC0415

    if not isinstance(debug_mode, (builtins.int, str)):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if isinstance(debug_mode, str):
        levels = {"default": 0, "warn": 1, "error": 2}
        if debug_mode not in levels:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, "
                               f"`warn`, `error`, but got {debug_mode}")
        debug_mode = levels[debug_mode]
    if debug_mode == 0:
        use_deterministic_algorithms(False)
    elif debug_mode == 1:
        use_deterministic_algorithms(True, warn_only=True)
    elif debug_mode == 2:
        use_deterministic_algorithms(True)
    else:
        raise RuntimeError(
            f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")


# ---------------------------------------------------------------------- sym_* helpers


def _all_and_float_types() -> tuple[tuple[type, ...], tuple[type, ...]]:
    return ((np.integer, np.floating, builtins.int, builtins.float),
            (np.floating, builtins.float))


def sym_not(a: Any) -> Any:
    """``not a``.

    >>> import funcgrad.torch as torch
    >>> torch.sym_not(0)
    True
    """
    return not a


def sym_float(a: Any) -> builtins.float:
    """``float(a)``.

    >>> import funcgrad.torch as torch
    >>> torch.sym_float(3)
    3.0
    """
    return builtins.float(a)


def sym_int(a: Any) -> builtins.int:
    """``int(a)`` (truncating).

    >>> import funcgrad.torch as torch
    >>> torch.sym_int(-2.7)
    -2
    """
    return builtins.int(a)


def _sym_extreme(pick: Any, a: Any, b: Any) -> Any:
    all_types, float_types = _all_and_float_types()
    if not isinstance(a, all_types):
        raise AssertionError(f"expected {all_types}, got {type(a)}")
    if not isinstance(b, all_types):
        raise AssertionError(f"expected {all_types}, got {type(b)}")
    if isinstance(a, float_types) or isinstance(b, float_types):
        return builtins.float(pick(a, b))
    return pick(a, b)


def sym_max(a: Any, b: Any) -> Any:
    """``max(a, b)`` of two numbers, a float if either is one.

    >>> import funcgrad.torch as torch
    >>> torch.sym_max(2, 3.0), torch.sym_max(3, 2)
    (3.0, 3)
    """
    return _sym_extreme(builtins.max, a, b)


def sym_min(a: Any, b: Any) -> Any:
    """``min(a, b)`` of two numbers, a float if either is one.

    >>> import funcgrad.torch as torch
    >>> torch.sym_min(2, 3.5)
    2.0
    """
    return _sym_extreme(builtins.min, a, b)


def sym_sqrt(a: Any) -> builtins.float:
    """``math.sqrt(a)``.

    >>> import funcgrad.torch as torch
    >>> torch.sym_sqrt(4)
    2.0
    """
    return math.sqrt(a)


def sym_sum(*args: Any) -> Any:
    """The sum of the numbers (or tensors) given, as a list or one by one.

    >>> import funcgrad.torch as torch
    >>> torch.sym_sum([1, 2, 3]), torch.sym_sum(1.5, 2)
    (6, 3.5)
    """
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    return builtins.sum(args)


def sym_ite(b: Any, t: Any, f: Any) -> Any:
    """``t if b else f``, for a bool ``b`` and ``t``, ``f`` of one type.

    >>> import funcgrad.torch as torch
    >>> torch.sym_ite(False, 1, 2)
    2
    """
    if not isinstance(b, builtins.bool):
        raise AssertionError(f"expected SymBool or bool, got {type(b)}")
    if type(t) is not type(f):
        raise AssertionError(f"type mismatch: {type(t)} vs {type(f)}")
    return t if b else f
