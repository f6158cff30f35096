"""Attention as functions, as PyTorch's ``scaled_dot_product_attention`` and
``multi_head_attention_forward`` (re-exported by ``nn.functional``; the modules
``MultiheadAttention`` and ``Transformer*`` are in ``transformer.py``).

Both follow PyTorch's reference ("math") formulation: ``softmax(q k^T * scale + bias) v``
with boolean masks meaning *take part* for ``scaled_dot_product_attention`` and *masked
out* for ``multi_head_attention_forward`` (PyTorch's two conventions).

>>> import funcgrad.torch as torch
>>> import funcgrad.torch.nn.functional as F
>>> q = torch.tensor([[[1.0, 0.0], [0.0, 1.0]]])
>>> F.scaled_dot_product_attention(q, q, torch.tensor([[[1.0], [3.0]]]), is_causal=True)
tensor([[[1.0000],
         [2.3395]]])
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import nn as jnn
from funcgrad.torch._autocast import autocast_op
from funcgrad.torch._device import Size
from funcgrad.torch._dtypes import bool as torch_bool
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn._apply import (
    cuda_index,
    data,
    half_dtype,
    in_float32,
    in_float32_at_result,
    keep_mask,
    on_device_of,
    op,
    shape,
)
from funcgrad.torch.nn.attention import check_enabled
from funcgrad.torch.nn.attention.bias import CausalBias, CausalVariant

__all__ = ["multi_head_attention_forward", "scaled_dot_product_attention"]


def _dropout_scale(mask_shape: tuple[int, ...], p: float, like: Any) -> Any:
    dt = data(like).dtype
    if p >= 1.0:
        return on_device_of(np.zeros(mask_shape, dt), like)
    # Drawn over the (contiguous) attention weights: the query's buffer says the device.
    return (keep_mask(mask_shape, p, data(like)) * (1.0 / (1.0 - p))).astype(dt)


def _as_bias(mask: Any, dtype: Any, masked_is_true: bool) -> Any:
    """A boolean mask as an additive bias (-inf where attention is not allowed)."""
    if np.dtype(mask.dtype) == np.bool_:
        blocked = mask if masked_is_true else fnp.logical_not(mask)
        return fnp.astype(fnp.where(blocked, -fnp.inf, 0.0), dtype)
    return fnp.astype(mask, dtype)


def _blocked_rows(scores: Any) -> tuple[Any, Any]:
    """PyTorch's safe softmax in attention: a row every key is masked from attends to
    nothing (zeros, and a zero gradient), not NaN. Its scores are replaced before the
    softmax, so that no NaN reaches the derivative either: (scores, blocked rows)."""
    blocked = fnp.all(scores == -fnp.inf, axis=-1, keepdims=True)
    return fnp.where(blocked, 0.0, scores), blocked


@autocast_op("scaled_dot_product_attention")
def scaled_dot_product_attention(query: Any, key: Any, value: Any, attn_mask: Any = None,
                                 dropout_p: float = 0.0, is_causal: bool = False,
                                 scale: float | None = None, enable_gqa: bool = False) -> Any:
    """``softmax(query @ key^T * scale + mask) @ value`` over the last two axes.

    ``attn_mask`` is boolean (True: may attend) or additive; ``is_causal`` masks the
    future; ``enable_gqa`` repeats key/value heads (axis -3) to the number of query heads.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> q = torch.ones(1, 2, 3, 4)
    >>> F.scaled_dot_product_attention(q, q, torch.arange(6.0).reshape(1, 2, 3, 1))[0, :, 0]
    tensor([[1.],
            [4.]])
    """
    if isinstance(attn_mask, CausalBias):
        if is_causal:
            raise ValueError("CausalBias should not be used with causal=True")
        square = attn_mask.seq_len_q == attn_mask.seq_len_kv
        if square or attn_mask.variant == CausalVariant.UPPER_LEFT:
            attn_mask, is_causal = None, True
        else:
            attn_mask = on_device_of(attn_mask._mask(), query)
    check_enabled(cuda_index(query) is not None)
    qs, ks = shape(query), shape(key)
    if is_causal and attn_mask is not None and len(qs) != 4:
        # (PyTorch's 4-d inputs go to its flash kernel, which applies both masks; others
        # to the math path, which refuses)
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                           "set when is_causal=True")
    if qs[-1] != ks[-1]:
        raise RuntimeError(f"Expected query and key to have the same embedding size, got "
                           f"{qs[-1]} and {ks[-1]}")
    length, source = qs[-2], ks[-2]
    groups = 1
    if enable_gqa and len(qs) >= 3 and qs[-3] != ks[-3]:
        if qs[-3] % ks[-3]:
            raise RuntimeError(f"Number of heads in key and value must divide the number of "
                               f"heads in query: got {ks[-3]} and {qs[-3]}")
        groups = qs[-3] // ks[-3]
    factor = 1.0 / math.sqrt(qs[-1]) if scale is None else scale
    causal = on_device_of(np.tril(np.ones((length, source), bool)), query) if is_causal \
        else None
    drop = None
    if dropout_p > 0.0:
        key_batch = ks[:-3] + (ks[-3] * groups,) if groups > 1 else ks[:-2]
        scores_shape = np.broadcast_shapes(qs[:-2], key_batch) + (length, source)
        drop = _dropout_scale(tuple(scores_shape), dropout_p, query)

    def impl(q: Any, k: Any, v: Any, m: Any) -> Any:
        if groups > 1:
            k = fnp.repeat(k, groups, axis=-3)
            v = fnp.repeat(v, groups, axis=-3)
        scores = fnp.matmul(q, fnp.swapaxes(k, -1, -2)) * factor
        if causal is not None:
            scores = scores + _as_bias(fnp.asarray(causal), scores.dtype, False)
        if m is not None:
            scores = scores + _as_bias(m, scores.dtype, False)
        scores, blocked = _blocked_rows(scores)
        weights = fnp.where(blocked, 0.0, jnn.softmax(scores, axis=-1))
        if drop is not None:
            weights = weights * drop
        return fnp.matmul(weights, v)

    # PyTorch's CPU attention (flash and math alike) computes half inputs in float32 and
    # rounds the output once; its backward too.
    # (PyTorch 2.13's CPU kernel is flash attention, for every mask and dropout)
    node = "ScaledDotProductFlashAttentionForCpu" if cuda_index(query) is None else "UnsafeView"
    return op(node, in_float32(impl), query, key, value, attn_mask)


def _check_mha_shapes(qs: tuple[int, ...], ks: tuple[int, ...], vs: tuple[int, ...],
                      key_padding_mask: Any, attn_mask: Any, heads: int) -> None:
    """PyTorch's checks of the ranks of the inputs and masks (``_mha_shape_check``)."""
    if len(qs) not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received "
                             f"{len(qs)}-D query tensor")
    kind = "batched (3-D)" if len(qs) == 3 else "unbatched (2-D)"
    if len(ks) != len(qs) or len(vs) != len(qs):
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be "
                             f"{len(qs)}-D but found {len(ks)}-D and {len(vs)}-D tensors "
                             "respectively")
    if key_padding_mask is not None and len(shape(key_padding_mask)) != len(qs) - 1:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or "
                             f"{len(qs) - 1}-D but found {len(shape(key_padding_mask))}-D "
                             "tensor instead")
    if attn_mask is not None:
        ms = shape(attn_mask)
        if len(ms) not in (2, 3):
            raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D "
                                 f"or 3-D but found {len(ms)}-D tensor instead")
        if len(qs) == 2 and len(ms) == 3 and ms != (heads, qs[0], ks[0]):
            raise AssertionError(f"Expected `attn_mask` shape to be {(heads, qs[0], ks[0])} "
                                 f"but got {Size(ms)}")


def _mismatch_warning(mask: Any, name: str, other: Any, other_name: str) -> None:
    if mask is not None and other is not None and mask.dtype != other.dtype:
        warnings.warn(f"Support for mismatched {name} and {other_name} is deprecated. Use "
                      "same type for both instead.", UserWarning, stacklevel=3)


def canonical_mask(mask: Any, name: str, other: Any, other_name: str, target: Any,
                   check_other: bool = True) -> Any:
    """A mask as PyTorch's modules hand it on: a bool one becomes ``-inf`` where True in
    ``target``'s dtype; a mask of another dtype than ``other`` (the other mask) is deprecated,
    with a warning."""
    if mask is None:
        return None
    _check_mask_dtype(mask, name)
    if check_other:
        _mismatch_warning(mask, name, other, other_name)
    if mask.dtype is torch_bool:
        from funcgrad.torch._creation import zeros_like  # noqa: PLC0415

        return zeros_like(mask, dtype=target).masked_fill_(mask, float("-inf"))
    return mask


def _check_mask_dtype(mask: Any, name: str) -> None:
    if mask is None:
        return
    dt = mask.dtype if isinstance(mask, Tensor) else None
    if not (dt.is_floating_point or dt is torch_bool) if dt is not None else \
            np.dtype(mask.dtype).kind not in "bf":
        raise AssertionError(f"only bool and floating types of {name} are supported")


def _mha_math(q: Any, k: Any, v: Any, w_in: Any, b_in: Any, w_q: Any, w_k: Any, w_v: Any,
              bias_k: Any, bias_v: Any, w_out: Any, b_out: Any, mask: Any, pad: Any,
              static_k: Any, static_v: Any, heads: int, zero_attn: bool, drop: Any,
              need_weights: bool, average: bool, causal: Any = None) -> Any:
    """PyTorch's ``multi_head_attention_forward`` on ``(L, N, E)`` arrays."""
    length, batch, embed = q.shape
    head_dim = embed // heads
    if w_in is not None:
        w_q, w_k, w_v = w_in[:embed], w_in[embed:2 * embed], w_in[2 * embed:]
    b_q = b_k = b_v = None
    if b_in is not None:
        b_q, b_k, b_v = b_in[:embed], b_in[embed:2 * embed], b_in[2 * embed:]

    @in_float32
    def proj(x: Any, w: Any, b: Any) -> Any:
        # PyTorch's linear (addmm) adds the bias before its one rounding to a half type.
        y = fnp.matmul(x, fnp.transpose(w))
        return y if b is None else y + b

    q, k, v = proj(q, w_q, b_q), proj(k, w_k, b_k), proj(v, w_v, b_v)
    if bias_k is not None:
        k = fnp.concatenate([k, fnp.broadcast_to(bias_k, (1, batch, embed))])
        v = fnp.concatenate([v, fnp.broadcast_to(bias_v, (1, batch, embed))])
        mask = None if mask is None else fnp.pad(mask, [(0, 0)] * (mask.ndim - 1) + [(0, 1)])
        pad = None if pad is None else fnp.pad(pad, [(0, 0), (0, 1)])
    q = fnp.swapaxes(fnp.reshape(q, (length, batch * heads, head_dim)), 0, 1)
    k = static_k if static_k is not None else fnp.swapaxes(
        fnp.reshape(k, (k.shape[0], batch * heads, head_dim)), 0, 1)
    v = static_v if static_v is not None else fnp.swapaxes(
        fnp.reshape(v, (v.shape[0], batch * heads, head_dim)), 0, 1)
    if zero_attn:
        k = fnp.concatenate([k, fnp.zeros((batch * heads, 1, head_dim), k.dtype)], axis=1)
        v = fnp.concatenate([v, fnp.zeros((batch * heads, 1, head_dim), v.dtype)], axis=1)
        mask = None if mask is None else fnp.pad(mask, [(0, 0)] * (mask.ndim - 1) + [(0, 1)])
        pad = None if pad is None else fnp.pad(pad, [(0, 0), (0, 1)])
    source = k.shape[1]
    half = half_dtype(q)
    # Without the weights PyTorch calls scaled_dot_product_attention, which computes half
    # inputs in float32 and rounds its output once; with them it runs the steps in the
    # half type, its softmax in float32 rounded once.
    wide = half is not None and not need_weights
    if wide:
        q, k, v = (fnp.astype(a, np.float32) for a in (q, k, v))
    scores = fnp.matmul(q * math.sqrt(1.0 / head_dim), fnp.swapaxes(k, 1, 2))
    if mask is not None:
        scores = scores + (fnp.expand_dims(mask, 0) if mask.ndim == 2 else mask)
    if causal is not None:
        # (the whole source, bias and zero positions included, as PyTorch's causal path)
        scores = scores + causal
    if pad is not None:
        scores = fnp.reshape(fnp.reshape(scores, (batch, heads, length, source))
                             + fnp.reshape(pad, (batch, 1, 1, source)),
                             (batch * heads, length, source))
    blocked = None
    if not need_weights:  # (PyTorch's scaled_dot_product_attention: its safe softmax)
        scores, blocked = _blocked_rows(scores)
    weights = in_float32_at_result(
        lambda s: jnn.softmax(s, axis=-1),
        lambda y, ds: y * (ds - fnp.sum(y * ds, axis=-1, keepdims=True)))(scores)
    if blocked is not None:
        weights = fnp.where(blocked, 0.0, weights)
    dropped = weights if drop is None else weights * drop
    out = fnp.matmul(dropped, v)
    if wide:
        out = fnp.astype(out, half)
    out = fnp.reshape(fnp.swapaxes(out, 0, 1), (length * batch, embed))
    out = fnp.reshape(proj(out, w_out, b_out), (length, batch, embed))
    if not need_weights:
        return out
    # PyTorch returns the weights after the dropout (those that multiplied ``v``).
    weights = fnp.reshape(dropped, (batch, heads, length, source))
    return out, (fnp.mean(weights, axis=1) if average else weights)


@autocast_op("multi_head_attention_forward")
def multi_head_attention_forward(
        query: Any, key: Any, value: Any, embed_dim_to_check: int, num_heads: int,
        in_proj_weight: Any, in_proj_bias: Any, bias_k: Any, bias_v: Any, add_zero_attn: bool,
        dropout_p: float, out_proj_weight: Any, out_proj_bias: Any, training: bool = True,
        key_padding_mask: Any = None, need_weights: bool = True, attn_mask: Any = None,
        use_separate_proj_weight: bool = False, q_proj_weight: Any = None,
        k_proj_weight: Any = None, v_proj_weight: Any = None, static_k: Any = None,
        static_v: Any = None, average_attn_weights: bool = True,
        is_causal: bool = False) -> tuple[Any, Any]:
    """Multi-head attention of ``(L, N, E)`` (or unbatched ``(L, E)``) inputs: PyTorch's
    function behind ``nn.MultiheadAttention``; returns ``(output, weights or None)``.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> x = torch.ones(2, 1, 4)
    >>> out, w = F.multi_head_attention_forward(x, x, x, 4, 2, torch.ones(12, 4), None,
    ...     None, None, False, 0.0, torch.eye(4), None)
    >>> out.shape, w
    (torch.Size([2, 1, 4]), tensor([[[0.5000, 0.5000],
             [0.5000, 0.5000]]]))
    """
    qs = shape(query)
    unbatched = len(qs) == 2
    _check_mha_shapes(qs, shape(key), shape(value), key_padding_mask, attn_mask, num_heads)
    _check_mask_dtype(key_padding_mask, "key_padding_mask")
    _mismatch_warning(key_padding_mask, "key_padding_mask", attn_mask, "attn_mask")
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    # PyTorch drops the mask here and attends causally instead (never checking the mask).
    causal_only = is_causal and key_padding_mask is None and not need_weights
    if causal_only:
        attn_mask = None
    _check_mask_dtype(attn_mask, "attn_mask")
    if qs[-1] != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {qs[-1]}")
    if embed_dim_to_check % num_heads:
        raise AssertionError(f"embed_dim {embed_dim_to_check} not divisible by num_heads "
                             f"{num_heads}")
    if unbatched:
        query, key, value = (t.unsqueeze(1) for t in (query, key, value))
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    length, batch = shape(query)[:2]
    if use_separate_proj_weight:
        if shape(key)[:2] != shape(value)[:2]:
            raise AssertionError(f"key's sequence and batch dims {Size(shape(key)[:2])} do "
                                 f"not match value's {Size(shape(value)[:2])}")
    elif shape(key) != shape(value):
        raise AssertionError(f"key shape {Size(shape(key))} does not match value shape "
                             f"{Size(shape(value))}")
    if attn_mask is not None:
        ms = shape(attn_mask)
        correct: tuple[int, ...] = (length, shape(key)[0])
        if len(ms) == 3:
            correct = (batch * num_heads,) + correct
        if ms != correct:
            raise RuntimeError(f"The shape of the {len(ms)}D attn_mask is {Size(ms)}, but "
                               f"should be {correct}.")
    source = (shape(static_k)[1] if static_k is not None else
              shape(key)[0] + (1 if bias_k is not None else 0)) + (1 if add_zero_attn else 0)
    if key_padding_mask is not None:
        ps = shape(key_padding_mask)
        padded = ps[1] + (bias_k is not None) + add_zero_attn
        if ps[0] != batch:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {batch}, but got "
                                 f"{ps[0]}")
        if padded != source:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {source}, but got "
                                 f"{padded}")
    drop = _dropout_scale((batch * num_heads, length, source), dropout_p, query) \
        if training and dropout_p > 0.0 else None
    causal = on_device_of(np.triu(np.ones((length, source), bool), 1), query) \
        if causal_only else None
    if not use_separate_proj_weight:
        q_proj_weight = k_proj_weight = v_proj_weight = None
    else:
        in_proj_weight = None

    def impl(q: Any, k: Any, v: Any, w_in: Any, b_in: Any, w_q: Any, w_k: Any, w_v: Any,
             bk: Any, bv: Any, w_out: Any, b_out: Any, mask: Any, pad: Any, sk: Any,
             sv: Any) -> Any:
        dt = q.dtype
        mask = None if mask is None else _as_bias(mask, dt, True)
        pad = None if pad is None else _as_bias(pad, dt, True)
        return _mha_math(q, k, v, w_in, b_in, w_q, w_k, w_v, bk, bv, w_out, b_out, mask, pad,
                         sk, sv, num_heads, add_zero_attn, drop, need_weights, False,
                         None if causal is None else _as_bias(fnp.asarray(causal), dt, True))

    result = op("View", impl, query, key, value, in_proj_weight, in_proj_bias, q_proj_weight,
                k_proj_weight, v_proj_weight, bias_k, bias_v, out_proj_weight, out_proj_bias,
                attn_mask, key_padding_mask, static_k, static_v)
    out, weights = result if need_weights else (result, None)
    if weights is not None and average_attn_weights:
        # A node of its own, as PyTorch's (MeanBackward1 over the per-head weights' view).
        weights = weights.mean(dim=1) if isinstance(weights, Tensor) else \
            fnp.mean(weights, axis=1)
    if unbatched:
        out = out.squeeze(1)
        if weights is not None:
            weights = weights.squeeze(0)
    return out, weights
