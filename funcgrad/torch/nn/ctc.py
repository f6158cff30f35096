"""Connectionist temporal classification, as PyTorch's ``F.ctc_loss`` and ``CTCLoss``.

The loss is ``-log p(target | input)`` summed over every alignment, by the forward
(alpha) recursion of Graves et al. (2006) in log space over the target with blanks
interleaved, ``l' = (blank, l1, blank, l2, ..., blank)``. The recursion runs in engine
operations (one step per time frame, with a log-sum-exp that keeps impossible states at
``-inf`` without NaN gradients), so the gradient is the engine's reverse mode through it,
plus ``exp(log_probs)`` as in PyTorch's backward (see ``ctc_loss``).

>>> import funcgrad.torch as torch
>>> import funcgrad.torch.nn.functional as F
>>> lp = torch.full((2, 1, 2), 0.5).log()
>>> F.ctc_loss(lp, torch.tensor([[1]]), [2], [1], reduction="sum")  # 3 of 4 paths
tensor(0.2877)
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.torch._autocast import autocast_op
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn._apply import op
from funcgrad.torch.nn.modules import _Loss
from funcgrad.transforms.custom import custom_jvp

__all__ = ["CTCLoss", "ctc_loss"]


def _ints(v: Any) -> np.ndarray:
    if isinstance(v, Tensor):
        return np.asarray(v.detach().cpu().numpy()).astype(np.int64).reshape(-1)
    return np.asarray(v, dtype=np.int64).reshape(-1)


def _lse(*terms: Any) -> Any:
    """log(sum(exp(terms))) that is -inf (with zero gradients) when every term is -inf."""
    m = terms[0]
    for t in terms[1:]:
        m = fnp.maximum(m, t)
    m = lax.stop_gradient(fnp.where(fnp.isfinite(m), m, fnp.zeros_like(m)))
    total = sum(fnp.exp(t - m) for t in terms)
    positive = total > 0
    safe = fnp.where(positive, total, fnp.ones_like(total))
    return fnp.where(positive, m + fnp.log(safe), fnp.full_like(total, -np.inf))


@custom_jvp
def _nan_gradient(lp: Any, bad: Any) -> Any:
    """Zero for each sample, with a NaN derivative along the frames where ``bad`` is 1.

    PyTorch's backward of an infinite loss (an infeasible target, ``zero_infinity=False``)
    computes ``exp(lp) - exp(log_alpha + log_beta + nll - lp)`` with ``nll = inf`` and
    ``log_alpha + log_beta = -inf``: NaN on every running frame of that sample, whatever
    the incoming gradient (0 included)."""
    return fnp.zeros(lp.shape[1:2], dtype=fnp.result_type(lp))


def _nan_gradient_jvp(primals: Any, tangents: Any) -> Any:
    lp, bad = primals
    dlp = tangents[0]
    # Masked before the NaN factor (and that factor 0 elsewhere): the transpose must not
    # multiply the other frames' zero cotangents by NaN.
    factor = fnp.where(bad > 0, fnp.full_like(bad, np.nan), fnp.zeros_like(bad))
    nan = fnp.where(bad > 0, dlp, fnp.zeros_like(dlp)) * factor
    return _nan_gradient(lp, bad), fnp.sum(nan, axis=(0, 2))


_nan_gradient.defjvp(_nan_gradient_jvp)


def _shift(a: Any, k: int) -> Any:
    """``a`` moved ``k`` states to the right along the last axis, -inf coming in."""
    pad = fnp.full((*a.shape[:-1], k), -np.inf, dtype=fnp.result_type(a))
    return fnp.concatenate([pad, a[..., :-k]], axis=-1)


def _targets(targets: np.ndarray, target_lengths: np.ndarray, n: int) -> list[np.ndarray]:
    if targets.ndim == 2:
        return [targets[i, :target_lengths[i]] for i in range(n)]
    starts = np.concatenate([[0], np.cumsum(target_lengths)[:-1]])
    return [targets[s:s + k] for s, k in zip(starts, target_lengths)]


@autocast_op("ctc_loss")
def ctc_loss(log_probs: Any, targets: Any, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Any:
    """The CTC loss of ``log_probs`` (T, N, C) (or (T, C)) against ``targets``: padded
    (N, S) or concatenated (sum(target_lengths),).

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> lp = torch.zeros(3, 1, 2).log_softmax(2)
    >>> F.ctc_loss(lp, torch.tensor([[1, 1]]), [3], [2], reduction="none")
    tensor([2.0794])
    """
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    rank = len(log_probs.shape)
    if rank not in (2, 3):
        raise RuntimeError(f"ctc_loss expects log_probs to be 2-D (unbatched) or 3-D, but got "
                           f"{rank}-D input")
    batched = rank == 3
    t_max = int(log_probs.shape[0])
    n = int(log_probs.shape[1]) if batched else 1
    classes = int(log_probs.shape[-1])
    tgt = np.asarray(targets.detach().cpu().numpy() if isinstance(targets, Tensor)
                     else targets).astype(np.int64)
    if not batched:
        tgt = tgt.reshape(1, -1) if tgt.ndim == 1 else tgt
    in_len, tgt_len = _ints(input_lengths), _ints(target_lengths)
    if len(in_len) != n:
        raise RuntimeError(f"input_lengths must be of size batch_size, but got {len(in_len)} "
                           f"for batch size {n}")
    if len(tgt_len) != n:
        raise RuntimeError(f"target_lengths must be of size batch_size, but got "
                           f"{len(tgt_len)} for batch size {n}")
    if in_len.size and in_len.max() > t_max:
        raise RuntimeError(f"Expected input_lengths to have value at most {t_max}, but got "
                           f"value {int(in_len.max())} (while checking arguments for "
                           "ctc_loss_allocate_outputs)")
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    if tgt.ndim == 2 and tgt_len.size and tgt_len.max() > tgt.shape[1]:
        raise RuntimeError(f"Expected tensor to have size at least {int(tgt_len.max())} at "
                           f"dimension 1, but got size {tgt.shape[1]} for argument #2 "
                           "'targets' (while checking arguments for ctc_loss_allocate_outputs)")
    if tgt.ndim == 1 and tgt.shape[0] != int(tgt_len.sum()):
        raise RuntimeError(f"Expected tensor to have size {int(tgt_len.sum())} at dimension 0, "
                           f"but got size {tgt.shape[0]} for argument #2 'targets' (while "
                           "checking arguments for ctc_loss_allocate_outputs)")
    labels = _targets(tgt, tgt_len, n)
    s_max = int(tgt_len.max()) if n else 0
    states = 2 * s_max + 1
    ext = np.full((n, states), blank, np.int64)
    skip = np.zeros((n, states), bool)
    for i, lab in enumerate(labels):
        ext[i, 1:2 * len(lab):2] = lab
        # A label may follow the label two states back unless they repeat (blank between).
        for s in range(3, 2 * len(lab), 2):
            skip[i, s] = ext[i, s] != ext[i, s - 2]
    ends = np.stack([2 * tgt_len, np.maximum(2 * tgt_len - 1, 0)], axis=1)  # (N, 2)
    one_end = tgt_len == 0  # only the final blank can end an empty target
    first = np.zeros((n, states), bool)
    first[:, 0] = True
    if states > 1:
        first[:, 1] = tgt_len > 0
    running = np.arange(t_max)[:, None] < in_len[None, :]  # (T, N)

    def impl(lp: Any) -> Any:
        if not batched:
            lp = fnp.expand_dims(lp, 1)
        neg_inf = fnp.full((n, states), -np.inf, dtype=fnp.result_type(lp))
        picked = fnp.take_along_axis(lp, fnp.broadcast_to(ext[None], (t_max, n, states)),
                                     axis=2)  # (T, N, states)
        alpha = fnp.where(first & running[0][:, None], picked[0], neg_inf)
        for t in range(1, t_max):
            stay, step = alpha, _shift(alpha, 1)
            jump = fnp.where(skip, _shift(alpha, 2), neg_inf)
            new = _lse(stay, step, jump) + picked[t]
            alpha = fnp.where(running[t][:, None], new, alpha)
        last = fnp.take_along_axis(alpha, ends, axis=1)
        last = fnp.where(np.stack([np.ones(n, bool), ~one_end], axis=1), last,
                         fnp.full_like(last, -np.inf))
        loss = -_lse(last[:, 0], last[:, 1])
        # No frame at all: the empty target has probability 1, any other 0.
        loss = fnp.where(in_len == 0, fnp.where(tgt_len == 0, fnp.zeros_like(loss),
                                                fnp.full_like(loss, np.inf)), loss)
        # PyTorch's backward returns exp(log_probs) - posterior (the gradient for the
        # logits, assuming log_probs came from log_softmax), not the true -posterior: a
        # term worth exactly 0 whose gradient is exp(log_probs) on the running frames.
        e = fnp.exp(lp)
        extra = fnp.sum(fnp.where(running[:, :, None], e - lax.stop_gradient(e),
                                  fnp.zeros_like(e)), axis=(0, 2))
        loss = loss + extra
        if not zero_infinity:
            bad = lax.stop_gradient(fnp.astype(
                fnp.isinf(loss)[None, :, None] & running[:, :, None], fnp.result_type(lp)))
            loss = loss + _nan_gradient(lp, bad)
        return loss if batched else loss[0]

    # PyTorch's unbatched call is unsqueeze, the loss (then its zero_infinity where),
    # squeeze: the squeeze is the node seen.
    losses = op("CtcLoss" if batched else "Squeeze:1", impl, log_probs)
    if zero_infinity:
        losses = op("Where" if batched else "Squeeze:1",
                    lambda v: fnp.where(fnp.isinf(v), fnp.zeros_like(v), v), losses)
    if reduction == "none":
        return losses
    if reduction == "sum":
        return op("Sum", fnp.sum, losses)
    lengths = np.maximum(tgt_len, 1) if batched else np.maximum(tgt_len, 1)[0]
    # PyTorch's mean: each loss over its target length, then the mean over the batch.
    return op("Mean", lambda v: fnp.mean(v / fnp.asarray(lengths, dtype=fnp.result_type(v))),
              losses)


class CTCLoss(_Loss):
    """``ctc_loss`` as a layer.

    >>> import funcgrad.torch.nn as nn
    >>> nn.CTCLoss(blank=1, zero_infinity=True)
    CTCLoss()
    """

    def __init__(self, blank: int = 0, reduction: str = "mean",
                 zero_infinity: bool = False) -> None:
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs: Any, targets: Any, input_lengths: Any,
                target_lengths: Any) -> Any:
        return ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                        self.reduction, self.zero_infinity)
