"""``nn.functional.linear_cross_entropy``, ``nn.LinearCrossEntropyLoss`` and
``nn.LinearCrossEntropyOptions`` (new in PyTorch 2.13): cross entropy of a linear
projection's logits, ``cross_entropy(linear(input, linear_weight, linear_bias), target)``.

``linear_weight`` is ``(C, in_features)``, or ``(C, d_1, ..., d_K, in_features)`` for a
K-dimensional loss: ``out_features = (d_1, ..., d_K)`` are extra logit axes, so the
logits are ``(N, C, d_1, ..., d_K)`` and the target ``(N, d_1, ..., d_K)`` (the module
stores that weight flat, as a ``Linear(in_features, C * prod(out_features))``).

With ``options=None`` (the default) this is PyTorch's reference path: ``F.linear``, a
reshape, ``F.cross_entropy`` (class indices or probabilities, ``weight``,
``ignore_index``, ``label_smoothing``). A :class:`LinearCrossEntropyOptions` asks for
PyTorch's chunked path instead, which takes int64 class indices, no label smoothing and
no ``out_features`` (anything else falls back to the reference path with PyTorch's
warning): it computes the loss and the gradients together in the forward pass (in
``acc_dtype``, float32 for half-precision inputs) and its graph node is PyTorch's custom
op (``GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_defaultBackward``;
a second backward raises unless ``allow_retain_graph``). The chunk size only bounds
PyTorch's memory; it changes no value here beyond rounding, but its errors (for a target
shorter than the batch, say) come at the chunk where PyTorch meets them.

>>> import funcgrad.torch as torch
>>> import funcgrad.torch.nn.functional as F
>>> x = torch.tensor([[1.0, 0.0], [0.0, 1.0]], requires_grad=True)
>>> w = torch.tensor([[2.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
>>> F.linear_cross_entropy(x, w, torch.tensor([0, 1]))
tensor(0.4076, grad_fn=<NllLossBackward0>)
>>> F.linear_cross_entropy(x, w, torch.tensor([0, 1]),
...                        options=torch.nn.LinearCrossEntropyOptions()).item()
0.4076...
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Any, Literal, NamedTuple

import numpy as np

from funcgrad.torch import _dtypes
from funcgrad.torch._grad_mode import no_grad
from funcgrad.torch._tensor import _CPP, Tensor, apply_op, cpp_type_name
from funcgrad.torch._tracing import is_tracing
from funcgrad.torch.autograd.function import Function
from funcgrad.torch.nn.modules import Linear, _WeightedLoss

__all__ = ["LinearCrossEntropyLoss", "LinearCrossEntropyOptions", "linear_cross_entropy"]


class _AutoDefault(NamedTuple):
    acc_policy: str
    chunking_method: str


# PyTorch's picks for the "auto" policy and chunking, by (device type, input dtype).
_AUTO_DEFAULTS: dict[tuple[str, Any], _AutoDefault] = {
    ("cuda", _dtypes.bfloat16): _AutoDefault("compact", "aspect_ratio:2"),
    ("cuda", _dtypes.float16): _AutoDefault("compact", "aspect_ratio:2"),
    ("cpu", _dtypes.bfloat16): _AutoDefault("accurate", "aspect_ratio"),
    ("cpu", _dtypes.float16): _AutoDefault("accurate", "aspect_ratio"),
}
_AUTO_FALLBACK = _AutoDefault("compact", "aspect_ratio:2")
_HALF = (_dtypes.float16, _dtypes.bfloat16)


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """Settings of the chunked ``linear_cross_entropy`` (PyTorch's fields, defaults,
    checks and repr); passing one (even ``LinearCrossEntropyOptions()``) selects that
    path.

    >>> import funcgrad.torch as torch
    >>> opts = torch.nn.LinearCrossEntropyOptions(batch_chunk_size=64, chunking_method=None)
    >>> opts.batch_chunk_size, opts.acc_policy, opts.allow_retain_graph
    (64, 'auto', False)
    >>> torch.nn.LinearCrossEntropyOptions(acc_policy="fast")
    Traceback (most recent call last):
    ...
    ValueError: invalid acc_policy: 'fast'
    """

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: Literal["accurate", "balanced", "compact", "auto"] = "auto"
    acc_dtype: Any = None

    def __post_init__(self) -> None:
        if self.acc_policy not in {"auto", "accurate", "balanced", "compact"}:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            if not sep:
                factor = "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        if not (self.batch_chunk_size is None or (isinstance(self.batch_chunk_size, int)
                                                  and self.batch_chunk_size > 0)):
            raise ValueError("batch_chunk_size must be positive int or None, got "
                             f"{self.batch_chunk_size!r}")
        supported = (_dtypes.float16, _dtypes.bfloat16, _dtypes.float32, _dtypes.float64)
        if self.acc_dtype is not None and self.acc_dtype not in supported:
            raise ValueError(
                "acc_dtype must be one of {None, torch.float16, torch.bfloat16, "
                f"torch.float32, torch.float64}}, got {self.acc_dtype!r}. Pass "
                "acc_dtype=None to let the op pick automatically.")

    @staticmethod
    def _ceil_div(a: int, b: int) -> int:
        return -(-a // b)

    @staticmethod
    def _resolve_auto_acc_dtype(dtype: Any, device: Any) -> Any:
        """float32 for half-precision inputs where mixed-precision products run (the
        CPU; CUDA from compute capability 7.0, 8.0 for bfloat16), else None."""
        if device is None or dtype not in _HALF:
            return None
        if device.type == "cuda":
            from funcgrad.torch import cuda  # noqa: PLC0415

            if not cuda.is_available():
                return None
            major, _ = cuda.get_device_capability(device)
            if major < (8 if dtype == _dtypes.bfloat16 else 7):
                return None
            return _dtypes.float32
        if device.type == "cpu":
            return _dtypes.float32
        return None

    def _compute_batch_chunk_size(self, num_batches: int, in_features: int,
                                  num_classes: int, method: str | None = None) -> int:
        """The chunk size an ``aspect_ratio[:N]`` method picks for these shapes."""
        method = str(method if method is not None else self.chunking_method)
        if not method.startswith("aspect_ratio"):
            raise AssertionError(f"unhandled chunking_method: {method!r}")
        factor = int(method.split(":", 1)[1]) if ":" in method else 1
        inc_factor = self._ceil_div(num_classes, in_features)
        target = self._ceil_div(num_batches, inc_factor)
        chunk_size = 1 << (target - 1).bit_length()
        return min(chunk_size // factor, num_batches)

    def _adjust(self, num_batches: int, in_features: int, num_classes: int, dtype: Any,
                device: Any = None) -> LinearCrossEntropyOptions:
        """These options with "auto" and None resolved for one call."""
        acc_policy: Any = self.acc_policy
        chunking_method = self.chunking_method
        if chunking_method == "auto" and self.batch_chunk_size is not None:
            chunking_method = None
        if acc_policy == "auto" or chunking_method == "auto":
            picks = _AUTO_DEFAULTS.get((device.type, dtype), _AUTO_FALLBACK) \
                if device is not None else _AUTO_FALLBACK
            if acc_policy == "auto":
                acc_policy = picks.acc_policy
            if chunking_method == "auto":
                chunking_method = picks.chunking_method
        batch_chunk_size = num_batches if self.batch_chunk_size is None else \
            min(self.batch_chunk_size, num_batches)
        if chunking_method is not None:
            batch_chunk_size = self._compute_batch_chunk_size(
                num_batches, in_features, num_classes, chunking_method)
            if self.batch_chunk_size is not None and self.batch_chunk_size != batch_chunk_size:
                raise ValueError(
                    f"batch_chunk_size (={self.batch_chunk_size}) and chunking_method "
                    f"('{chunking_method}') give different chunk sizes "
                    f"({self.batch_chunk_size} vs {batch_chunk_size}); pass only one.")
        if self.acc_dtype is None:
            auto = self._resolve_auto_acc_dtype(dtype, device) \
                if self.acc_policy == "auto" else None
            acc_dtype = auto if auto is not None else dtype
        else:
            acc_dtype = self.acc_dtype
        return dataclasses.replace(self, acc_policy=acc_policy,
                                   chunking_method=chunking_method,
                                   batch_chunk_size=max(1, batch_chunk_size),
                                   acc_dtype=acc_dtype)


# ------------------------------------------------------------------ the chunked path


def _host(t: Any) -> np.ndarray | None:
    data = t._data
    return data if isinstance(data, np.ndarray) else None


def _check_chunks(input: Any, linear_weight: Any, target: Any, weight: Any,  # noqa: A002
                  ignore_index: int, batch_chunk_size: int, use_acc: bool) -> None:
    """The errors PyTorch's chunk loop meets, chunk by chunk, in its order: a target
    shorter than the batch (at the chunk that reaches past it), a class weight indexed
    out of range (first chunk), operand dtypes that differ (first chunk's product), a
    class index out of range (in the first chunk that holds one)."""
    n, num_classes = input.shape[0], linear_weight.shape[0]
    if n == 0:
        return
    if target.dim() == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    t = _host(target)
    if t is not None and (ignore_index < 0 or ignore_index >= num_classes):
        t = np.where(t == ignore_index, 0, t)
    length = target.shape[0]
    for k, start in enumerate(range(0, n, batch_chunk_size)):
        size = min(batch_chunk_size, n - start)
        if start + size > length:
            raise RuntimeError(f"start ({start}) + length ({size}) exceeds dimension size "
                               f"({length}).")
        if k == 0 and weight is not None and t is not None and t.size and (
                t.min() < 0 or t.max() >= weight.shape[0]):
            raise IndexError("index out of range in self")
        if k == 0 and not use_acc and input.dtype != linear_weight.dtype:
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                               f"{cpp_type_name(input.dtype)} != "
                               f"{cpp_type_name(linear_weight.dtype)}")
        if t is not None:
            chunk = t[start:start + size].reshape(-1)
            bad = (chunk < 0) | (chunk >= num_classes)
            if bad.any():
                raise RuntimeError(f"index {int(chunk[bad][0])} is out of bounds for "
                                   f"dimension 1 with size {num_classes}")


def _chunked_math(input: Any, linear_weight: Any, target: Any, linear_bias: Any,  # noqa: A002
                  weight: Any, reduction: str, ignore_index: int, acc_dtype: Any,
                  grads: tuple[bool, bool, bool], grad_output: Any = None) -> tuple[Any, ...]:
    """The chunked op's loss and gradients, in ``acc_dtype``: per row ``n`` of the batch,
    ``c_n * (logsumexp(z_n) - z_n[t_n])`` with ``z = input @ linear_weight.T + bias`` and
    ``c_n`` the class weight of ``t_n`` (0 where ignored; over the sum of them all, the
    target's rows past the batch included, for "mean"; times the upstream gradient in
    the backward of "none"). Returns (loss, grad_input, grad_weight, grad_bias)."""
    n, num_classes = input.shape[0], linear_weight.shape[0]
    mask = target == ignore_index
    t = target.masked_fill(mask, 0) if ignore_index < 0 or ignore_index >= num_classes \
        else target
    if weight is None:
        cw = (~mask).to(acc_dtype)
    else:
        cw = weight.to(acc_dtype).index_select(0, t.reshape(-1)).reshape(t.shape)
        cw = cw.masked_fill(mask, 0)
    if reduction == "mean":
        d = cw.sum()
        cw = cw / (d if d.item() != 0 else d.new_tensor(float("nan")))
    if grad_output is not None:
        cw = cw * grad_output.to(acc_dtype)
    cw, t = cw[:n], t[:n]
    x = input.to(acc_dtype)
    lw = linear_weight.to(acc_dtype)
    z = x @ lw.t()
    if linear_bias is not None:
        z = z + linear_bias.to(acc_dtype)
    z = z - z.amax(dim=1, keepdim=True)
    picked = z.gather(1, t.unsqueeze(1)).squeeze(1)
    e = z.exp()
    denom = e.sum(dim=1)
    rows = cw * (denom.log() - picked)
    if reduction == "none" and grad_output is None:
        return rows, None, None, None
    loss = rows.sum()
    if reduction == "mean" and n == 0:
        loss = loss.new_tensor(float("nan"))
    if not any(grads):
        return loss, None, None, None
    g = e / denom.unsqueeze(1) * cw.unsqueeze(1)
    g = g.scatter_add(1, t.unsqueeze(1), -cw.unsqueeze(1))
    gi = g @ lw if grads[0] else None
    gw = g.t() @ x if grads[1] else None
    gb = g.sum(dim=0) if grads[2] else None
    return loss, gi, gw, gb


def _cast(g: Any, like: Any) -> Any:
    return None if g is None else g.to(like.dtype)


class GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_default(  # noqa: N801
        Function):
    """PyTorch's chunked op for "mean" and "sum" (its node keeps the name): the gradients
    are computed in the forward pass and scaled by the upstream gradient in backward."""

    @staticmethod
    def forward(ctx: Any, input: Any, linear_weight: Any, target: Any,  # noqa: A002
                linear_bias: Any, weight: Any, reduction: str, ignore_index: int,
                acc_dtype: Any, allow_retain_graph: bool) -> Any:
        needs = ctx.needs_input_grad
        flags = (needs[0], needs[1], linear_bias is not None and needs[3])
        loss, gi, gw, gb = _chunked_math(input, linear_weight, target, linear_bias, weight,
                                         reduction, ignore_index, acc_dtype, flags)
        ctx.allow_retain_graph = allow_retain_graph
        ctx.flags = flags
        ctx.grads = [_cast(gi, input), _cast(gw, linear_weight), _cast(gb, linear_bias)]
        return loss.to(input.dtype)

    @staticmethod
    def backward(ctx: Any, grad_output: Any) -> Any:
        out: list[Any] = [None] * 9
        for slot, pos in ((0, 0), (1, 1), (2, 3)):
            if not ctx.flags[slot]:
                continue
            g = ctx.grads[slot]
            if not ctx.allow_retain_graph:
                ctx.grads[slot] = None
                if g is None:
                    raise RuntimeError("linear_cross_entropy chunked backward called twice; "
                                       "retain_graph=True / double backward are not "
                                       "supported.")
            out[pos] = g * grad_output
        return tuple(out)


class GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_no_reduction_default(  # noqa: N801, E501
        Function):
    """PyTorch's chunked op for ``reduction="none"``: the per-row losses; backward
    computes the gradients again with the upstream gradient folded into the row
    weights."""

    @staticmethod
    def forward(ctx: Any, input: Any, linear_weight: Any, target: Any,  # noqa: A002
                linear_bias: Any, weight: Any, ignore_index: int, acc_dtype: Any) -> Any:
        rows = _chunked_math(input, linear_weight, target, linear_bias, weight, "none",
                             ignore_index, acc_dtype, (False, False, False))[0]
        ctx.save_for_backward(input.detach(), linear_weight.detach(), target,
                              None if linear_bias is None else linear_bias.detach(),
                              None if weight is None else weight.detach())
        ctx.ignore_index, ctx.acc_dtype = ignore_index, acc_dtype
        return rows.to(input.dtype)

    @staticmethod
    def backward(ctx: Any, grad_output: Any) -> Any:
        input, linear_weight, target, linear_bias, weight = ctx.saved_tensors  # noqa: A001
        needs = ctx.needs_input_grad
        flags = (needs[0], needs[1], linear_bias is not None and needs[3])
        out: list[Any] = [None] * 7
        if not any(flags):
            return tuple(out)
        with no_grad():
            _, gi, gw, gb = _chunked_math(input, linear_weight, target, linear_bias, weight,
                                          "none", ctx.ignore_index, ctx.acc_dtype, flags,
                                          grad_output)
        out[0], out[1], out[3] = _cast(gi, input), _cast(gw, linear_weight), \
            _cast(gb, linear_bias)
        return tuple(out)


_ChunkedScalar = GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_default
_ChunkedRows = \
    GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_no_reduction_default


def _chunked(input: Any, linear_weight: Any, target: Any, linear_bias: Any,  # noqa: A002
             weight: Any, reduction: str, ignore_index: int,
             options: LinearCrossEntropyOptions) -> Any:
    batched = input.dim() == 2
    if not batched:
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    num_batches, in_features = input.shape
    opts = options._adjust(num_batches=num_batches, in_features=in_features,
                           num_classes=linear_weight.shape[0], dtype=input.dtype,
                           device=input.device)
    dtype, acc_dtype = input.dtype, opts.acc_dtype
    if dtype != acc_dtype and not (dtype in _HALF and acc_dtype == _dtypes.float32):
        raise RuntimeError(f"linear_cross_entropy supports float32 acc_dtype with "
                           f"float16/bfloat16 inputs, but got {acc_dtype} acc_dtype and "
                           f"{dtype} inputs.")
    assert opts.batch_chunk_size is not None  # noqa: S101 - _adjust resolves it
    _check_chunks(input, linear_weight, target, weight, ignore_index, opts.batch_chunk_size,
                  dtype != acc_dtype)
    if reduction == "none":
        result = _ChunkedRows.apply(input, linear_weight, target, linear_bias, weight,
                                    ignore_index, acc_dtype)
    else:
        result = _ChunkedScalar.apply(input, linear_weight, target, linear_bias, weight,
                                      reduction, ignore_index, acc_dtype,
                                      opts.allow_retain_graph)
    if batched:
        return result
    if result.dim():
        return result.squeeze(0)
    # PyTorch's squeeze(0) of the 0-d loss: a no-op, recorded as SqueezeBackward1
    # (funcgrad's Tensor.squeeze(0) refuses a 0-d tensor).
    return apply_op("Squeeze:1", lambda v: v, result)


# ---------------------------------------------------------------- the public forms


def linear_cross_entropy(input: Any, linear_weight: Any, target: Any, *,  # noqa: A002
                         linear_bias: Any = None, weight: Any = None,
                         reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0,
                         options: LinearCrossEntropyOptions | None = None) -> Any:
    """Cross entropy of ``input @ linear_weight.T (+ linear_bias)`` against ``target``
    (PyTorch 2.13's ``F.linear_cross_entropy``; ``ignore_index=None`` means -100 for
    class indices and is the only choice for probabilities).

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> x = torch.tensor([[0.5, -1.0]])
    >>> w = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    >>> F.linear_cross_entropy(x, w, torch.tensor([2]), reduction="none")
    tensor([1.2780])
    >>> F.linear_cross_entropy(x, w.reshape(3, 1, 2), torch.tensor([[2]]))  # out_features=(1,)
    tensor(1.2780)
    """
    from funcgrad.torch.nn import functional as F  # noqa: PLC0415

    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError("expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    num_batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions "
                           f"(in_features), got {input.shape[-1]} and "
                           f"{linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not num_batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape "
                           f"{tuple(linear_weight.shape)} requires batched input, "
                           f"(N, {in_features}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    logits_shape = (*num_batches, num_classes, *out_features)
    probabilities = tuple(target.shape) == logits_shape
    if probabilities and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains "
                           "probabilities")
    ignore_index = ignore_index if ignore_index is not None else -100
    tracing = is_tracing()  # PyTorch takes the reference path under torch.jit.trace
    chunkable = (reduction in {"mean", "sum", "none"} and label_smoothing == 0.0
                 and target.dtype == _dtypes.int64 and not out_features and not tracing)
    if options is not None and not chunkable:
        bias_shape = tuple(linear_bias.shape) if linear_bias is not None else None
        warnings.warn(
            "linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
            "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, "
            f"out_features == (). Got reduction={reduction!r}, "
            f"label_smoothing={label_smoothing}, target.dtype={target.dtype}, "
            f"out_features={out_features}, tracing={tracing}, "
            f"linear_bias.shape={bias_shape}.", stacklevel=2)
    if options is not None and chunkable:
        return _chunked(input, linear_weight, target, linear_bias, weight, reduction,
                        ignore_index, options)

    if out_features:
        flat = math.prod(out_features, start=num_classes)
        linear_weight = linear_weight.reshape((flat, in_features))
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(flat)
    logits = F.linear(input, linear_weight, linear_bias).reshape(logits_shape)
    # PyTorch's cross_entropy refuses a smoothing above 1 only and treats one below 0 (or
    # NaN) as none; it takes class indices as int64 or uint8 only; these and its check of
    # the class weight's size come in its order.
    weight_error = None
    if weight is not None and (weight.dim() != 1 or weight.numel() != num_classes):
        weight_error = (f"weight tensor should be defined either for all {num_classes} "
                        f"classes or no classes but got weight tensor of shape: "
                        f"{list(weight.shape)}")
        if probabilities:
            raise RuntimeError(f"cross_entropy: {weight_error}")
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing:g}")
    batch_mismatch = bool(num_batches) and target.dim() > 0 and \
        target.shape[0] != num_batches[0]
    if not probabilities and not batch_mismatch:
        if not target.dtype.is_floating_point and target.dtype not in (_dtypes.int64,
                                                                       _dtypes.uint8):
            raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                               f"{_CPP.get(target.dtype.name, target.dtype.name)}")
        if weight_error is not None:
            raise RuntimeError(weight_error)
    return F.cross_entropy(logits, target, weight=weight, reduction=reduction,
                           ignore_index=ignore_index,
                           label_smoothing=label_smoothing if label_smoothing > 0 else 0.0)


class LinearCrossEntropyLoss(_WeightedLoss):
    """A ``Linear`` layer (``self.linear``, no bias by default) and cross entropy in one
    module: ``F.linear_cross_entropy(input, weight viewed as (C, *out_features,
    in_features), target, ...)``.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn as nn
    >>> loss = nn.LinearCrossEntropyLoss(5, 10, out_features=(4, 3), bias=True)
    >>> loss.linear
    Linear(in_features=5, out_features=120, bias=True)
    >>> loss(torch.ones(2, 5), torch.zeros(2, 4, 3, dtype=torch.long)).shape
    torch.Size([])
    """

    num_classes: int
    out_features: tuple[int, ...]
    reduction: str
    ignore_index: int | None
    label_smoothing: float
    options: LinearCrossEntropyOptions | None

    def __init__(self, in_features: int, num_classes: int, *,
                 out_features: tuple[int, ...] = (), bias: bool = False, device: Any = None,
                 dtype: Any = None, reduction: str = "mean", weight: Tensor | None = None,
                 ignore_index: int | None = None, label_smoothing: float = 0.0,
                 options: LinearCrossEntropyOptions | None = None) -> None:
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got "
                               f"{tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(f"expected label_smoothing to be in range [0, 1], got "
                               f"{label_smoothing}")
        super().__init__(weight=weight, size_average=None, reduce=None, reduction=reduction)
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        # Stored flat (Linear has 2-D weights), viewed as (C, *out_features, in) in forward.
        self.linear = Linear(in_features, math.prod(out_features, start=num_classes),
                             bias=bias, device=device, dtype=dtype)
        self.options = options

    def forward(self, input: Any, target: Any) -> Any:  # noqa: A002 - PyTorch's name
        linear_weight = self.linear.weight.reshape(
            (self.num_classes, *self.out_features, self.linear.in_features))
        linear_bias = self.linear.bias.reshape((self.num_classes, *self.out_features)) \
            if self.linear.bias is not None else None
        return linear_cross_entropy(input, linear_weight, target, linear_bias=linear_bias,
                                    weight=self.weight, reduction=self.reduction,
                                    ignore_index=self.ignore_index,
                                    label_smoothing=self.label_smoothing,
                                    options=self.options)

    def extra_repr(self) -> str:
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")
