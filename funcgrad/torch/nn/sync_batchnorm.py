"""``nn.SyncBatchNorm``: batch normalization whose statistics cover the whole batch of a
data-parallel run, every process's shard together.

In training, with a process group of more than one process initialised
(``funcgrad.torch.distributed``), the per-channel mean and variance are gathered from
every rank and combined (as PyTorch's ``sync_batch_norm``: each rank's mean, inverse
standard deviation and count, all-gathered); backward all-reduces the two sums the input
gradient needs. The weight and bias gradients stay per rank, as in PyTorch (data-parallel
training averages them). Otherwise it is ``BatchNorm`` (``F.batch_norm``) exactly.

>>> import funcgrad.torch as torch
>>> bn = torch.nn.SyncBatchNorm(2)
>>> bn
SyncBatchNorm(2, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
>>> bn(torch.tensor([[1.0, 2.0], [3.0, 6.0]]))
tensor([[-1.0000, -1.0000],
        [ 1.0000,  1.0000]], grad_fn=<NativeBatchNormBackward0>)
"""

from __future__ import annotations

from typing import Any

from funcgrad.torch._creation import full, zeros
from funcgrad.torch._functions import cat
from funcgrad.torch._grad_mode import no_grad
from funcgrad.torch.autograd.function import Function
from funcgrad.torch.nn.module import Module
from funcgrad.torch.nn.normalization import _BatchNorm, batch_norm

__all__ = ["SyncBatchNorm"]


def _channel_view(v: Any, ndim: int) -> Any:
    return v.reshape((1, -1) + (1,) * (ndim - 2))


def _reduce_axes(ndim: int) -> list[int]:
    return [0] + list(range(2, ndim))


class _SyncBatchNormFunction(Function):
    """PyTorch's ``sync_batch_norm`` (torch/nn/modules/_functions.py), step for step."""

    @staticmethod
    def forward(ctx: Any, input: Any, weight: Any, bias: Any,  # noqa: A002
                running_mean: Any, running_var: Any, eps: float, momentum: float,
                process_group: Any, world_size: int) -> Any:
        # (Tensors throughout: typed Any, as their operators are installed at import.)
        from funcgrad.torch import distributed as dist  # noqa: PLC0415

        x: Any = input.contiguous()
        channels = x.shape[1]
        axes = _reduce_axes(x.dim())
        if x.numel() > 0:
            mean = x.mean(dim=axes)
            var = ((x - _channel_view(mean, x.dim())) ** 2).mean(dim=axes)
            invstd = 1.0 / (var + eps).sqrt()
            count = full((1,), x.numel() // channels, dtype=mean.dtype)
            combined = cat([mean, invstd, count])
        else:
            combined = zeros(2 * channels + 1, dtype=x.dtype)
        gathered: Any = zeros(world_size, 2 * channels + 1, dtype=combined.dtype)
        dist.all_gather_into_tensor(gathered, combined, process_group)
        mean_all = gathered[:, :channels]
        invstd_all = gathered[:, channels:2 * channels]
        count_all = gathered[:, 2 * channels]
        # Ranks with an empty shard take no part.
        keep = count_all >= 1
        mean_all, invstd_all, count_all = mean_all[keep], invstd_all[keep], count_all[keep]
        # batch_norm_gather_stats_with_counts: the pooled mean and biased variance.
        counts = count_all.reshape(-1, 1)
        total = counts.sum()
        mean = (mean_all * counts).sum(dim=0) / total
        var_all = 1.0 / invstd_all ** 2 - eps
        var = (counts * (var_all + (mean_all - mean) ** 2)).sum(dim=0) / total
        invstd = 1.0 / (var + eps).sqrt()
        n = float(total.item())
        if running_mean is not None:
            running_mean.mul_(1.0 - momentum).add_(mean.to(running_mean.dtype),
                                                   alpha=momentum)
        if running_var is not None:
            unbiased = var * (n / (n - 1.0)) if n > 1 else var
            running_var.mul_(1.0 - momentum).add_(unbiased.to(running_var.dtype),
                                                  alpha=momentum)
        ctx.save_for_backward(x, weight, mean, invstd)
        ctx.total = n
        ctx.process_group = process_group
        out = (x - _channel_view(mean, x.dim())) * _channel_view(invstd, x.dim())
        if weight is not None:
            out = out * _channel_view(weight.to(out.dtype), x.dim())
        if bias is not None:
            out = out + _channel_view(bias.to(out.dtype), x.dim())
        return out

    @staticmethod
    def backward(ctx: Any, grad_output: Any) -> tuple[Any, ...]:
        from funcgrad.torch import distributed as dist  # noqa: PLC0415

        saved: Any = ctx.saved_tensors
        x, weight, mean, invstd = saved
        nd = x.dim()
        axes = _reduce_axes(nd)
        grad_input = grad_weight = grad_bias = None
        if x.numel() > 0:
            # batch_norm_backward_reduce: this rank's sums.
            xmu = x - _channel_view(mean, nd)
            sum_dy = grad_output.sum(dim=axes)
            sum_dy_xmu = (grad_output * xmu).sum(dim=axes)
            grad_weight = sum_dy_xmu * invstd
            grad_bias = sum_dy
            if ctx.needs_input_grad[0]:
                channels = sum_dy.shape[0]
                combined = cat([sum_dy, sum_dy_xmu])
                dist.all_reduce(combined, dist.ReduceOp.SUM, ctx.process_group)
                sum_dy, sum_dy_xmu = combined[:channels], combined[channels:]
                # batch_norm_backward_elemt over the whole batch's count.
                mean_dy = _channel_view(sum_dy / ctx.total, nd)
                mean_dy_xmu = _channel_view(sum_dy_xmu / ctx.total, nd)
                inv = _channel_view(invstd, nd)
                scale = inv if weight is None else inv * _channel_view(weight.to(x.dtype), nd)
                grad_input = (grad_output - mean_dy - xmu * inv ** 2 * mean_dy_xmu) * scale
        elif ctx.needs_input_grad[0]:
            # This rank still joins the all-reduce the others make.
            channels = x.shape[1]
            combined = zeros(2 * channels, dtype=x.dtype)
            dist.all_reduce(combined, dist.ReduceOp.SUM, ctx.process_group)
            grad_input = zeros(x.shape, dtype=x.dtype)
        if weight is None or not ctx.needs_input_grad[1]:
            grad_weight = None
        if weight is None or not ctx.needs_input_grad[2]:
            grad_bias = None
        return grad_input, grad_weight, grad_bias, None, None, None, None, None, None


# PyTorch's Function is named SyncBatchNorm: its node is SyncBatchNormBackward.
_SyncBatchNormFunction.__name__ = _SyncBatchNormFunction.__qualname__ = "SyncBatchNorm"


class SyncBatchNorm(_BatchNorm):
    """Batch normalization with statistics over every process of a data-parallel run.

    >>> import funcgrad.torch as torch
    >>> net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    >>> torch.nn.SyncBatchNorm.convert_sync_batchnorm(net)[1]
    SyncBatchNorm(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 process_group: Any = None, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input: Any) -> None:  # noqa: A002
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input: Any) -> None:  # noqa: A002
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input: Any) -> Any:  # noqa: A002
        from funcgrad.torch import distributed as dist  # noqa: PLC0415

        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        factor, bn_training, running_mean, running_var = self._step_statistics()
        need_sync = bn_training and self.training and dist.is_available() \
            and dist.is_initialized()
        world_size = 1
        if need_sync:
            group = self.process_group if self.process_group else dist.group.WORLD
            world_size = dist.get_world_size(group)
            need_sync = world_size > 1
        if not need_sync:
            return batch_norm(input, running_mean, running_var, self.weight, self.bias,
                              bn_training, factor, self.eps)
        return _SyncBatchNormFunction.apply(input, self.weight, self.bias, running_mean,
                                            running_var, self.eps, factor,
                                            self.process_group, world_size)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """Every ``BatchNorm*d`` inside ``module`` replaced by a ``SyncBatchNorm`` that
        shares its parameters and running statistics.

        >>> import funcgrad.torch as torch
        >>> bn = torch.nn.BatchNorm2d(3)
        >>> sbn = torch.nn.SyncBatchNorm.convert_sync_batchnorm(bn)
        >>> type(sbn).__name__, sbn.weight is bn.weight
        ('SyncBatchNorm', True)
        """
        out = module
        if isinstance(module, _BatchNorm):
            out = SyncBatchNorm(module.num_features, module.eps, module.momentum,
                                module.affine, module.track_running_stats, process_group)
            if module.affine:
                with no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
