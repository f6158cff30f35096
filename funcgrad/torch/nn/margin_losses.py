"""The margin losses beyond ``loss_functions``, as PyTorch's: ``multilabel_margin_loss``,
``triplet_margin_with_distance_loss``, their modules, and the deprecated ``NLLLoss2d``.

>>> import funcgrad.torch as torch
>>> import funcgrad.torch.nn.functional as F
>>> F.multilabel_margin_loss(torch.tensor([[0.1, 0.2, 0.4, 0.8]]),
...                          torch.tensor([[3, 0, -1, 1]]))
tensor(0.8500)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import nn as jnn
from funcgrad.torch._autocast import autocast_op
from funcgrad.torch.nn import _apply
from funcgrad.torch.nn._apply import floating, op, shape
from funcgrad.torch.nn.activation import PairwiseDistance
from funcgrad.torch.nn.loss_functions import pairwise_distance
from funcgrad.torch.nn.modules import NLLLoss, _Loss

__all__ = ["MultiLabelMarginLoss", "NLLLoss2d", "TripletMarginWithDistanceLoss",
           "multilabel_margin_loss", "triplet_margin_with_distance_loss"]

_REDUCED = {"mean": "Mean", "sum": "Sum"}


@autocast_op("multilabel_margin_loss")
def multilabel_margin_loss(input: Any, target: Any, size_average: Any = None,  # noqa: A002
                           reduce: Any = None, reduction: str = "mean") -> Any:
    """``sum over targets j, non-targets i of max(0, 1 - (x[j] - x[i])) / C``; each row of
    ``target`` lists class indices up to its first -1."""
    red = _apply.reduction(size_average, reduce, reduction)
    shp = shape(input)
    if len(shp) > 2 or shape(target) != shp:
        raise RuntimeError(f"inconsistent target size: {list(shape(target))} for input of size: "
                           f"{list(shp)}")
    classes = shp[-1] if shp else 1
    tdata = _apply.data(target)
    if isinstance(tdata, np.ndarray) and tdata.size and (
            tdata.min() < -1 or tdata.max() >= classes):
        raise RuntimeError(f"multilabel_margin_loss: target is out of range "
                           f"(expected [-1, {classes - 1}])")

    def impl(x: Any, t: Any) -> Any:
        x2 = fnp.reshape(x, (-1, classes))
        t2 = fnp.reshape(t, (-1, classes))
        # A label counts while no -1 came before it; a repeated label counts again.
        listed = fnp.cumsum(fnp.asarray(t2 == -1, dtype=np.int64), axis=1) == 0
        hits = (t2[:, :, None] == fnp.arange(classes)[None, None, :]) & listed[:, :, None]
        count = fnp.sum(fnp.asarray(hits, dtype=fnp.result_type(x)), axis=1)  # (N, C)
        others = fnp.asarray(count == 0, dtype=fnp.result_type(x))
        hinge = jnn.relu(1.0 - x2[:, :, None] + x2[:, None, :])  # [n, j, i]
        loss = fnp.sum(count[:, :, None] * others[:, None, :] * hinge, axis=(1, 2)) / classes
        loss = fnp.reshape(loss, shp[:-1])
        return _apply.reduce(loss, red)

    return op("MultilabelMarginLoss", impl, floating(input), target)


def triplet_margin_with_distance_loss(anchor: Any, positive: Any, negative: Any, *,
                                      distance_function: Callable[[Any, Any], Any] | None = None,
                                      margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean") -> Any:
    """``max(d(a, p) - d(a, n) + margin, 0)`` for any distance ``d`` (by default the
    pairwise Euclidean distance).

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> a, p, n = torch.zeros(1, 2), torch.ones(1, 2), torch.zeros(1, 2)
    >>> l1 = lambda x, y: (x - y).abs().sum(1)
    >>> F.triplet_margin_with_distance_loss(a, p, n, distance_function=l1)
    tensor(3.)
    """
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    red = _apply.reduction(None, None, reduction)
    dims = [len(shape(v)) for v in (anchor, positive, negative)]
    if len(set(dims)) != 1:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have "
                           f"the same number of dimensions, but got: anchor {dims[0]}D, "
                           f"positive {dims[1]}D, and negative {dims[2]}D inputs")
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_swap = dist(positive, negative)
        d_neg = op("Minimum", fnp.minimum, d_neg, d_swap)
    loss = op("ClampMin", lambda dp, dn: fnp.maximum(margin + dp - dn, 0.0), d_pos, d_neg)
    if red == "none":
        return loss
    return op(_REDUCED[red], lambda v: _apply.reduce(v, red), loss)


class MultiLabelMarginLoss(_Loss):
    """``multilabel_margin_loss`` as a layer.

    >>> import funcgrad.torch.nn as nn
    >>> nn.MultiLabelMarginLoss()
    MultiLabelMarginLoss()
    """

    def forward(self, input: Any, target: Any) -> Any:  # noqa: A002 - PyTorch's name
        return multilabel_margin_loss(input, target, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """``triplet_margin_with_distance_loss`` as a layer (its distance a child module when
    it is one; by default ``PairwiseDistance()``).

    >>> import funcgrad.torch.nn as nn
    >>> nn.TripletMarginWithDistanceLoss()
    TripletMarginWithDistanceLoss(
      (distance_function): PairwiseDistance()
    )
    """

    def __init__(self, *, distance_function: Callable[[Any, Any], Any] | None = None,
                 margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> None:
        super().__init__(reduction=reduction)
        if margin <= 0:
            raise ValueError("TripletMarginWithDistanceLoss: expected margin to be greater "
                             f"than 0, got {margin} instead")
        self.distance_function = distance_function if distance_function is not None \
            else PairwiseDistance()
        self.margin = margin
        self.swap = swap

    def forward(self, anchor: Any, positive: Any, negative: Any) -> Any:
        return triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)


class NLLLoss2d(NLLLoss):
    """Deprecated: ``NLLLoss``, which takes (N, C, H, W) input itself."""
