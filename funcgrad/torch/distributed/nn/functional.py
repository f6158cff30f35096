"""``torch.distributed.nn.functional``: collectives that return new tensors and carry
gradients back across the ranks (the adjoint of each collective is another collective:
all-gather's is reduce-scatter, broadcast's is reduce, scatter's is gather).

A contrastive loss over the whole batch gathers every rank's embeddings with gradients:

>>> import funcgrad.torch.distributed.nn.functional as dnnf
>>> callable(dnnf.all_gather)
True
"""

from __future__ import annotations

import warnings
from typing import Any

from funcgrad.torch import distributed as dist
from funcgrad.torch._creation import empty, zeros_like
from funcgrad.torch._functions import stack
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.autograd.function import Function
from funcgrad.torch.distributed import ReduceOp

__all__ = ["all_gather", "all_reduce", "all_to_all", "all_to_all_single", "broadcast",
           "gather", "reduce", "reduce_scatter", "scatter"]

_WORLD = None  # torch.distributed.group.WORLD: the default group


def _deprecated(name: str, suggestion: str) -> None:
    # PyTorch 2.13 warns so for these five and points at the functional collectives.
    warnings.warn(f"torch.distributed.nn.functional.{name} is deprecated, use {suggestion} "
                  "instead.", FutureWarning, stacklevel=3)


class _Broadcast(Function):
    @staticmethod
    def forward(ctx: Any, src: int, group: Any, tensor: Tensor) -> Tensor:
        ctx.src, ctx.group, ctx.rank = src, group, dist.get_rank(group)
        out = tensor.clone()
        dist.broadcast(out, src, group=group)
        return out

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Any, ...]:
        # Every rank's output came from src: src's input gets the sum of all gradients.
        g = _Reduce.apply(ctx.src, ReduceOp.SUM, ctx.group, grad)
        if ctx.src != ctx.rank:
            g = zeros_like(g)
        return None, None, g


class _Reduce(Function):
    @staticmethod
    def forward(ctx: Any, dst: int, op: Any, group: Any, tensor: Tensor) -> Tensor:
        ctx.dst, ctx.group = dst, group
        out = tensor.clone()
        dist.reduce(out, dst, op=op, group=group)
        return out

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Any, ...]:
        return None, None, None, _Broadcast.apply(ctx.dst, ctx.group, grad)


class _Gather(Function):
    @staticmethod
    def forward(ctx: Any, dst: int, group: Any, tensor: Tensor) -> tuple[Tensor, ...]:
        ctx.dst, ctx.group = dst, group
        outs = [zeros_like(tensor) for _ in range(dist.get_world_size(group))]
        mine = dist.get_rank(group) == dst
        dist.gather(tensor.contiguous(), outs if mine else None, dst, group=group)
        return tuple(outs)

    @staticmethod
    def backward(ctx: Any, *grads: Tensor) -> tuple[Any, ...]:
        return None, None, _Scatter.apply(ctx.dst, ctx.group, *grads)


class _Scatter(Function):
    @staticmethod
    def forward(ctx: Any, src: int, group: Any, *tensors: Tensor) -> Tensor:
        ctx.src, ctx.group = src, group
        if any(t.size() != tensors[0].size() for t in tensors):
            raise AssertionError("scatter: the tensors must have one size")
        out = zeros_like(tensors[0])
        mine = dist.get_rank(group) == src
        dist.scatter(out, list(tensors) if mine else None, src, group=group)
        return out

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Any, ...]:
        return (None, None, *_Gather.apply(ctx.src, ctx.group, grad))


class _ReduceScatter(Function):
    @staticmethod
    def forward(ctx: Any, op: Any, group: Any, output: Tensor, *inputs: Tensor) -> Tensor:
        ctx.group = group
        out = output.contiguous()
        dist.reduce_scatter(out, [t.contiguous() for t in inputs], op=op, group=group)
        return out

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Any, ...]:
        return (None, None, None, *_AllGather.apply(ctx.group, grad))


class _AllGather(Function):
    @staticmethod
    def forward(ctx: Any, group: Any, tensor: Tensor) -> tuple[Tensor, ...]:
        ctx.group = group
        outs = [zeros_like(tensor) for _ in range(dist.get_world_size(group))]
        dist.all_gather(outs, tensor.contiguous(), group=group)
        return tuple(outs)

    @staticmethod
    def backward(ctx: Any, *grads: Tensor) -> tuple[Any, ...]:
        # Rank r's input appears as output r on every rank: its gradient is the sum over
        # the ranks of their gradient r, which an all-to-all brings to r.
        received = _AllToAll.apply(ctx.group, [zeros_like(g) for g in grads], *grads)
        return None, stack(list(received)).sum(0)


class _AllToAll(Function):
    @staticmethod
    def forward(ctx: Any, group: Any, outputs: list[Tensor],
                *inputs: Tensor) -> tuple[Tensor, ...]:
        ctx.group = group
        ctx.input_sizes = [t.size() for t in inputs]
        outs = [o.clone() for o in outputs]
        dist.all_to_all(outs, [t.contiguous() for t in inputs], group=group)
        return tuple(outs)

    @staticmethod
    def backward(ctx: Any, *grads: Tensor) -> tuple[Any, ...]:
        back = [empty(s, dtype=grads[0].dtype) for s in ctx.input_sizes]
        return (None, None, *_AllToAll.apply(ctx.group, back, *grads))


class _AllToAllSingle(Function):
    @staticmethod
    def forward(ctx: Any, group: Any, output: Tensor, output_split_sizes: Any,
                input_split_sizes: Any, tensor: Tensor) -> Tensor:
        ctx.group, ctx.input_size = group, tensor.size()
        ctx.output_split_sizes, ctx.input_split_sizes = input_split_sizes, output_split_sizes
        out = output.clone()
        dist.all_to_all_single(out, tensor.contiguous(), output_split_sizes,
                               input_split_sizes, group=group)
        return out

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Any, ...]:
        back = grad.new_zeros(ctx.input_size)
        return (None, None, None, None,
                _AllToAllSingle.apply(ctx.group, back, ctx.output_split_sizes,
                                      ctx.input_split_sizes, grad.contiguous()))


class _AllReduce(Function):
    @staticmethod
    def forward(ctx: Any, op: Any, group: Any, tensor: Tensor) -> Tensor:
        ctx.group, ctx.op = group, op
        out = tensor.clone()
        dist.all_reduce(out, op=op, group=group)
        return out

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Any, ...]:
        # The gradient of a sum over ranks is the sum over ranks of the gradients.
        return None, None, _AllReduce.apply(ReduceOp.SUM, ctx.group, grad)


def broadcast(tensor: Tensor, src: int, group: Any = _WORLD) -> Tensor:
    """Rank ``src``'s tensor on every rank; the gradient goes back to ``src``."""
    _deprecated("broadcast", "torch.distributed._functional_collectives.broadcast")
    return _Broadcast.apply(src, group, tensor)


def gather(tensor: Tensor, dst: int = 0, group: Any = _WORLD) -> tuple[Tensor, ...]:
    """Every rank's tensor, on rank ``dst`` (zeros on the others)."""
    return _Gather.apply(dst, group, tensor)


def scatter(tensors: list[Tensor], src: int = 0, group: Any = _WORLD) -> Tensor:
    """Element ``rank`` of rank ``src``'s ``tensors`` (receivers pass tensors of the size
    they receive)."""
    return _Scatter.apply(src, group, *tensors)


def reduce(tensor: Tensor, dst: int, op: Any = ReduceOp.SUM, group: Any = _WORLD) -> Tensor:
    """The reduction over the ranks, on rank ``dst`` (the others keep their input)."""
    return _Reduce.apply(dst, op, group, tensor)


def reduce_scatter(output: Tensor, input_list: list[Tensor], op: Any = ReduceOp.SUM,
                   group: Any = _WORLD) -> Tensor:
    """Reduce ``input_list[r]`` over the ranks into rank ``r``'s result."""
    _deprecated("reduce_scatter",
                "torch.distributed._functional_collectives.reduce_scatter_single")
    return _ReduceScatter.apply(op, group, output, *input_list)


def all_gather(tensor: Tensor, group: Any = _WORLD) -> tuple[Tensor, ...]:
    """Every rank's tensor, on every rank, with gradients back to each owner."""
    _deprecated("all_gather", "torch.distributed._functional_collectives.all_gather_single")
    return _AllGather.apply(group, tensor)


def all_to_all(output_tensor_list: list[Tensor], input_tensor_list: list[Tensor],
               group: Any = _WORLD) -> tuple[Tensor, ...]:
    """Element ``j`` of rank ``i``'s inputs becomes element ``i`` of rank ``j``'s outputs."""
    return _AllToAll.apply(group, output_tensor_list,
                           *input_tensor_list)


def all_to_all_single(output: Tensor, input: Tensor,  # noqa: A002 - PyTorch's name
                      output_split_sizes: Any = None, input_split_sizes: Any = None,
                      group: Any = _WORLD) -> Tensor:
    """Block ``j`` (dim 0) of rank ``i``'s input becomes block ``i`` of rank ``j``'s."""
    _deprecated("all_to_all_single",
                "torch.distributed._functional_collectives.all_to_all_single")
    return _AllToAllSingle.apply(group, output,
                                 output_split_sizes, input_split_sizes, input)


def all_reduce(tensor: Tensor, op: Any = ReduceOp.SUM, group: Any = _WORLD) -> Tensor:
    """The reduction over the ranks, on every rank; its gradient is summed back."""
    _deprecated("all_reduce", "torch.distributed._functional_collectives.all_reduce")
    return _AllReduce.apply(op, group, tensor)
