"""Losses as functions, as PyTorch's (re-exported by ``nn.functional``):
``binary_cross_entropy``, ``smooth_l1_loss``, ``huber_loss``, ``kl_div``,
``poisson_nll_loss``, ``gaussian_nll_loss``, ``cosine_embedding_loss``,
``margin_ranking_loss``, ``triplet_margin_loss``, ``multilabel_soft_margin_loss``,
``multi_margin_loss``, ``soft_margin_loss``, ``hinge_embedding_loss``, and the distances
``pairwise_distance`` and ``cosine_similarity``. (``mse_loss``, ``l1_loss``, ``nll_loss``,
``cross_entropy`` and ``binary_cross_entropy_with_logits`` are in ``functional.py``.)

>>> import funcgrad.torch as torch
>>> import funcgrad.torch.nn.functional as F
>>> F.smooth_l1_loss(torch.tensor([0.5, 3.0]), torch.zeros(2))
tensor(1.3125)
"""

from __future__ import annotations

import functools
import math
import warnings
from typing import Any, cast

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import nn as jnn
from funcgrad.lax import stop_gradient
from funcgrad.torch import _dtypes as D
from funcgrad.torch import _half_math as half_math
from funcgrad.torch._autocast import autocast_op
from funcgrad.torch._dtypes import cpp_name
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn import _apply
from funcgrad.torch.nn._apply import data, floating, in_float32, op, shape
from funcgrad.torch.nn._kernel_dtypes import (
    check_kernel_dtype,
    check_pair_kernel_dtype,
    is_float_tensor,
    refuse_bool_subtraction,
)
from funcgrad.transforms.custom import custom_jvp

__all__ = [
    "binary_cross_entropy", "cosine_embedding_loss", "cosine_similarity", "gaussian_nll_loss",
    "hinge_embedding_loss", "huber_loss", "kl_div", "margin_ranking_loss",
    "multi_margin_loss", "multilabel_soft_margin_loss", "pairwise_distance",
    "poisson_nll_loss", "smooth_l1_loss", "soft_margin_loss", "triplet_margin_loss",
]

_NAMES = {"mean": "Mean", "sum": "Sum"}


def _name(red: str, elementwise: str) -> str:
    return _NAMES.get(red, elementwise)


def _floating_first(*tensors: Any) -> tuple[Any, ...]:
    """The operands of a loss whose PyTorch arithmetic turns integers into the default
    float dtype (an integer tensor with a float number, a square root): where none is
    floating, the first is promoted (the engine would give float64 to an integer tensor
    with a Python float)."""
    if any(is_float_tensor(t) for t in tensors if isinstance(t, Tensor)):
        return tensors
    return (floating(tensors[0]), *tensors[1:])


# The C++ type names PyTorch's in-place clamp of an integer tensor shows in its error.
_C_TYPES = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
            "uint8": "unsigned char", "bool": "bool"}


def _check_float_output(input: Any, target: Any) -> None:  # noqa: A002
    """PyTorch's loss kernels that write into an output of the input's dtype: an integer
    or bool input refuses the floating result."""
    if isinstance(input, Tensor) and not is_float_tensor(input):
        if input.dtype == D.bool:
            raise RuntimeError("Negation, the `-` operator, on a bool tensor is not "
                               "supported. If you are trying to invert a mask, use the `~` or "
                               "`logical_not()` operator instead.")
        other = target.dtype if isinstance(target, Tensor) else input.dtype
        dt = D.promote_types(input.dtype, other)
        result = dt if dt.is_floating_point or dt.is_complex else D.get_default_dtype()
        raise RuntimeError(f"result type {cpp_name(result)} can't be cast to the desired "
                           f"output type {cpp_name(input.dtype)}")


@autocast_op("binary_cross_entropy")
def binary_cross_entropy(input: Any, target: Any, weight: Any = None,  # noqa: A002
                         size_average: Any = None, reduce: Any = None,
                         reduction: str = "mean") -> Any:
    """``-w (t log x + (1 - t) log(1 - x))`` for probabilities ``x`` (logs clamped at -100,
    as PyTorch).

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.binary_cross_entropy(torch.tensor([0.5, 1.0]), torch.tensor([1.0, 1.0]))
    tensor(0.3466)
    """
    red = _apply.reduction(size_average, reduce, reduction)
    if shape(target) != shape(input):
        raise ValueError(f"Using a target size ({_size(target)}) that is different to the "
                         f"input size ({_size(input)}) is deprecated. Please ensure they have "
                         "the same size.")
    if isinstance(input, Tensor) and isinstance(target, Tensor) and \
            target.dtype != input.dtype:
        raise RuntimeError(f"Found dtype {cpp_name(target.dtype)} but expected "
                           f"{cpp_name(input.dtype)}")
    check_kernel_dtype("binary_cross_entropy", input)
    _probabilities(input, target)

    half = half_math.half_dtype(data(input)) if isinstance(input, Tensor) else None

    def impl(x: Any, t: Any, w: Any) -> Any:
        if half is None:
            loss = _bce_terms(x, t)
            return _apply.reduce(loss if w is None else loss * w, red)
        # PyTorch's half backward kernel divides by the count last (mean): the terms'
        # derivative does, and the sum carries it (the value stays the mean).
        count = x.size if red == "mean" and w is None else 1
        loss = _bce_half_terms(half, count)(x, t)
        loss = loss if w is None else loss * w
        if count == 1:
            return _apply.reduce(loss, red)
        total = fnp.sum(loss)
        return stop_gradient(fnp.mean(loss)) + (total - stop_gradient(total))

    # Half inputs come in as float32 (the result rounded once to the half type).
    return op("BinaryCrossEntropy", in_float32(impl), input, target, weight)


@functools.cache
def _bce_half_terms(half: Any, count: int) -> Any:
    """:func:`_bce_terms` on float32 copies of ``half`` values, as PyTorch's half kernels
    compute them: the loss and the input's gradient ``g * (x - t) / max((1 - x) x, 1e-12)``
    (then ``/ count`` for a mean) each rounded to ``half`` after every operation
    (c10::Half arithmetic)."""
    r = functools.partial(half_math.round_trip, half=half)

    @custom_jvp
    def terms(x: Any, t: Any) -> Any:
        return _bce_half_steps(x, t, half)

    @terms.defjvp
    def terms_jvp(primals: Any, tangents: Any) -> Any:
        (x, t), (dx, dt) = primals, tangents
        num = r(x - t)
        den = fnp.maximum(r(r(1 - x) * x), 1e-12)
        # Linear in dx, with the roundings placed so that its transpose is the backward
        # kernel's order: the cotangent times (x - t), rounded, then divided, rounded.
        gx_dx = r(r(dx / count) / den) * num if count != 1 else r(dx / den) * num
        return terms(x, t), gx_dx + -fnp.log(x / (1 - x)) * dt

    return terms


def _bce_half_steps(x: Any, t: Any, half: Any) -> Any:
    """PyTorch's half ``binary_cross_entropy`` kernel on float32 copies of half values:
    ``(t - 1) * max(log1p(-x), -100) - t * max(log(x), -100)``, each operation rounded to
    ``half`` (c10::Half arithmetic), as float32."""
    r = functools.partial(half_math.round_trip, half=half)

    low = r(fnp.maximum(r(fnp.log1p(-x)), -100.0))
    lx = r(fnp.maximum(r(fnp.log(x)), -100.0))
    return r(r(r(t - 1) * low) - r(t * lx))


@custom_jvp
def _bce_terms(x: Any, t: Any) -> Any:
    return -(t * fnp.maximum(fnp.log(x), -100.0)
             + (1 - t) * fnp.maximum(fnp.log1p(-x), -100.0))


@_bce_terms.defjvp
def _bce_terms_jvp(primals: Any, tangents: Any) -> Any:
    # PyTorch's backward formulas, not the derivative of the logs: the input's
    # (x - t) / max((1 - x) x, 1e-12) is exactly 0 where x == t (the logs' derivatives
    # leave a rounding there), the target's is -logit(x).
    (x, t), (dx, dt) = primals, tangents
    gx = (x - t) / fnp.maximum((1 - x) * x, 1e-12)
    gt = -fnp.log(x / (1 - x))
    return _bce_terms(x, t), gx * dx + gt * dt


def _size(x: Any) -> str:
    return f"torch.Size({list(shape(x))})"


def _probabilities(input: Any, target: Any) -> None:  # noqa: A002
    """PyTorch's kernel check of ``binary_cross_entropy``: element by element, the input
    and then the target must lie in [0, 1] (NaN fails). Traced values are not checked."""
    from funcgrad.core import Tracer  # noqa: PLC0415

    vals = []
    for v in (input, target):
        d = v._data if isinstance(v, Tensor) else v
        if isinstance(d, Tracer):
            return
        vals.append(np.asarray(v.detach()._host() if isinstance(v, Tensor) else v,
                               np.float64).reshape(-1))
    with np.errstate(invalid="ignore"):
        bad = [~((a >= 0) & (a <= 1)) for a in vals]
    either = bad[0] | bad[1]
    if either.any():
        what = "input" if bad[0][int(np.argmax(either))] else "target"
        raise RuntimeError(f"all elements of {what} should be between 0 and 1")


@autocast_op("smooth_l1_loss")
def smooth_l1_loss(input: Any, target: Any, size_average: Any = None,  # noqa: A002
                   reduce: Any = None, reduction: str = "mean", beta: float = 1.0) -> Any:
    """``0.5 d**2 / beta`` where ``|d| < beta``, ``|d| - beta / 2`` elsewhere."""
    red = _apply.reduction(size_average, reduce, reduction)
    _apply.check_target_size(input, target)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    check_pair_kernel_dtype("smooth_l1_cpu", input, target)

    def impl(x: Any, t: Any) -> Any:
        d = fnp.abs(x - t)
        if beta == 0.0:
            return _apply.reduce(d, red)
        return _apply.reduce(fnp.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta), red)

    return op("SmoothL1Loss", impl, input, target)


@autocast_op("huber_loss")
def huber_loss(input: Any, target: Any, reduction: str = "mean",  # noqa: A002
               delta: float = 1.0, weight: Any = None) -> Any:
    """``0.5 d**2`` where ``|d| < delta``, ``delta (|d| - delta / 2)`` elsewhere (times
    ``weight``)."""
    red = _apply.reduction(None, None, reduction)
    _apply.check_target_size(input, target)
    if weight is not None and shape(weight) != shape(input):
        raise ValueError("Weights and input must have the same size.")
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if isinstance(input, Tensor) and isinstance(target, Tensor) and \
            not is_float_tensor(input):
        # PyTorch's kernel writes into a tensor of the input's dtype: a floating result
        # (or any but bool, for a bool input) cannot be cast there.
        result = D.promote_types(input.dtype, target.dtype)
        if result.is_floating_point or (input.dtype.name == "bool" and result.name != "bool"):
            raise RuntimeError(f"result type {cpp_name(result)} can't be cast to the desired "
                               f"output type {cpp_name(input.dtype)}")
    check_pair_kernel_dtype("huber_cpu", input, target)

    def impl(x: Any, t: Any, w: Any) -> Any:
        d = fnp.abs(x - t)
        loss = fnp.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
        return _apply.reduce(loss if w is None else loss * w, red)

    return op("HuberLoss", impl, input, target, weight)


@custom_jvp
def _xlogx(t: Any) -> Any:
    """PyTorch's ``xlogy(t, t)``: 0 where t is 0, NaN for a negative (or NaN) t."""
    zero = t == 0
    return fnp.where(zero, 0.0, t * fnp.log(fnp.where(zero, 1.0, t)))


def _xlogx_jvp(primals: Any, tangents: Any) -> Any:
    # xlogy's two derivatives added: xlogy(t != 0, t) + t / t (NaN at 0, as PyTorch's).
    (t,), (dt,) = primals, tangents
    zero = t == 0
    return _xlogx(t), dt * (fnp.where(zero, 0.0, fnp.log(fnp.where(zero, 1.0, t))) + t / t)


_xlogx.defjvp(_xlogx_jvp)


@autocast_op("kl_div")
def kl_div(input: Any, target: Any, size_average: Any = None, reduce: Any = None,  # noqa: A002
           reduction: str = "mean", log_target: bool = False) -> Any:
    """``target * (log target - input)`` for log-probabilities ``input``
    (``log_target``: the target too is given as log-probabilities); ``'batchmean'``
    divides the sum by the batch size.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.kl_div(torch.tensor([[0.5, 0.5]]).log(), torch.tensor([[0.25, 0.75]]),
    ...          reduction="batchmean")
    tensor(0.1308)
    """
    if size_average is not None or reduce is not None:
        red = _apply.reduction(size_average, reduce, reduction)
    elif reduction == "mean":
        # PyTorch warns at kl_div's direct caller (stacklevel=2): the user's line, or
        # nn.KLDivLoss's forward, so a module's warnings share one registry slot. Level 3
        # here: this body, the autocast wrapper, then the caller.
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and "
                      "the support size.'batchmean' divides only by the batch size, and "
                      "aligns with the KL div math definition.'mean' will be changed to "
                      "behave the same as 'batchmean' in the next major release.",
                      UserWarning, stacklevel=3)
        red = "mean"
    elif reduction == "batchmean":
        red = "batchmean"
    else:
        red = _apply.reduction(None, None, reduction)
    batch = shape(input)[0] if shape(input) else 1
    if any(isinstance(v, Tensor) and not (v.is_floating_point() or v.is_complex())
           for v in (input, target)):
        raise RuntimeError("kl_div: Integral inputs not supported.")

    def impl(x: Any, t: Any) -> Any:
        if log_target:
            loss = fnp.exp(t) * (t - x)
        else:
            loss = _xlogx(t) - t * x
        if red == "batchmean":
            return fnp.sum(loss) / batch if len(shape(x)) else fnp.sum(loss)
        return _apply.reduce(loss, red)

    names = {"mean": "Mean", "sum": "Sum", "batchmean": "Div"}
    return op(names.get(red, "Sub"), impl, input, target)


@autocast_op("poisson_nll_loss")
def poisson_nll_loss(input: Any, target: Any, log_input: bool = True,  # noqa: A002
                     full: bool = False, size_average: Any = None, eps: float = 1e-8,
                     reduce: Any = None, reduction: str = "mean") -> Any:
    """Negative log likelihood of a Poisson target: ``exp(x) - t x`` (``log_input``) or
    ``x - t log(x + eps)``, plus Stirling's term for ``t > 1`` when ``full``."""
    red = _apply.reduction(size_average, reduce, reduction)
    input = floating(input)  # noqa: A001 - exp(x) or x + eps: the default float dtype

    def impl(x: Any, t: Any) -> Any:
        loss = fnp.exp(x) - t * x if log_input else x - t * fnp.log(x + eps)
        if full:
            safe = fnp.where(t > 1, t, 2.0)
            stirling = safe * fnp.log(safe) - safe + 0.5 * fnp.log(2 * math.pi * safe)
            loss = loss + fnp.where(t > 1, stirling, 0.0)
        return _apply.reduce(loss, red)

    return op(_name(red, "Sub"), impl, input, target)


def gaussian_nll_loss(input: Any, target: Any, var: Any, full: bool = False,  # noqa: A002
                      eps: float = 1e-6, reduction: str = "mean") -> Any:
    """``0.5 (log var + (x - t)**2 / var)`` (+ ``0.5 log 2 pi`` when ``full``); ``var`` is
    clamped at ``eps`` without cutting its gradient, as PyTorch does; it may be one axis
    short of the input, or broadcast along one axis."""
    ishape = shape(input)
    vshape = shape(var) if hasattr(var, "shape") else ishape
    unsqueeze = False
    if vshape != ishape:
        if ishape[:-1] == vshape:
            unsqueeze = True
        elif not (len(ishape) == len(vshape)
                  and sum(y for x, y in zip(ishape, vshape) if x != y) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    if hasattr(var, "shape"):
        vdata = data(var)
        if isinstance(vdata, np.ndarray) and np.any(vdata < 0):
            raise ValueError("var has negative entry/entries")
        if isinstance(var, Tensor) and not is_float_tensor(var):
            # PyTorch clamps a copy of var in place at eps.
            raise RuntimeError("result type Float can't be cast to the desired output type "
                               f"{_C_TYPES.get(var.dtype.name, cpp_name(var.dtype))}")

    def impl(x: Any, t: Any, v: Any) -> Any:
        if unsqueeze:
            v = fnp.expand_dims(v, -1)
        v = v + stop_gradient(fnp.maximum(v, eps) - v)
        loss = 0.5 * (fnp.log(v) + (x - t) ** 2 / v)
        if full:
            loss = loss + 0.5 * math.log(2 * math.pi)
        return _apply.reduce(loss, reduction)

    return op(_name(reduction, "Mul"), impl, input, target, var)


def pairwise_distance(x1: Any, x2: Any, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Any:
    """``||x1 - x2 + eps||_p`` along the last axis.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.pairwise_distance(torch.tensor([[3.0, 0.0]]), torch.tensor([[0.0, 4.0]]), eps=0.0)
    tensor([5.])
    """
    def impl(a: Any, b: Any) -> Any:
        return _pnorm(a - b + eps, p, keepdim)

    return op("Norm:1", impl, floating(x1), floating(x2))  # at::norm(x, p, dim): NormBackward1


def _pnorm(d: Any, p: float, keepdim: bool) -> Any:
    a = fnp.abs(d)
    if p == math.inf:
        return fnp.max(a, axis=-1, keepdims=keepdim)
    if p == 2:
        return fnp.sqrt(fnp.sum(a * a, axis=-1, keepdims=keepdim))
    if p == 1:
        return fnp.sum(a, axis=-1, keepdims=keepdim)
    if p == 0:
        # The count, recorded with a zero derivative (the sum of no entries ties it to d).
        return fnp.sum(fnp.astype(a != 0, a.dtype), axis=-1, keepdims=keepdim) + \
            fnp.sum(d[..., :0], axis=-1, keepdims=keepdim)
    return fnp.power(fnp.sum(fnp.power(a, p), axis=-1, keepdims=keepdim), 1.0 / p)


@autocast_op("cosine_similarity")
def cosine_similarity(x1: Any, x2: Any, dim: int = 1, eps: float = 1e-8) -> Any:
    """``sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps))`` along ``dim``.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.cosine_similarity(torch.tensor([[1.0, 0.0]]), torch.tensor([[1.0, 1.0]]))
    tensor([0.7071])
    """
    if not (isinstance(x1, Tensor) and isinstance(x2, Tensor)):
        # Engine values (the JAX face's transforms): the same formula in one operation.
        def impl(a: Any, b: Any) -> Any:
            a, b = fnp.broadcast_arrays(a, b)

            def scaled(v: Any) -> Any:
                norm = fnp.linalg.norm(v, axis=dim, keepdims=True)
                # clamped without grad, as PyTorch's in-place clamp under no_grad
                return v / (norm + stop_gradient(fnp.maximum(norm, eps) - norm))

            return fnp.sum(scaled(a) * scaled(b), axis=dim)

        return op("Sum:1", impl, floating(x1), floating(x2))
    from funcgrad.torch._grad_mode import no_grad  # noqa: PLC0415
    from funcgrad.torch._tensor import (  # noqa: PLC0415
        _CPP,
        _check_broadcast,
        result_dtype,
        vector_norm_of,
    )

    dt = result_dtype(x1, x2)
    if not dt.is_floating_point:
        raise RuntimeError("expected common dtype to be floating point, yet common dtype is "
                           f"{_CPP[dt.name]}")
    a, b = x1.to(dt), x2.to(dt)
    if tuple(a.shape) != tuple(b.shape):
        _check_broadcast(tuple(a.shape), tuple(b.shape))
        size = np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
        a, b = a.expand(size), b.expand(size)
    # PyTorch's composition: each input over its own norm, the norms clamped to eps in
    # place without grad (their backward is the unclamped norm's), then a sum of products
    # (SumBackward1 over MulBackward0 over two DivBackward0).
    na = vector_norm_of(a, 2.0, dim, True).clone()
    nb = vector_norm_of(b, 2.0, dim, True).clone()
    with no_grad():
        cast(Any, na).clamp_min_(eps)
        cast(Any, nb).clamp_min_(eps)
    return ((cast(Any, a) / na) * (cast(Any, b) / nb)).sum(dim)


@autocast_op("cosine_embedding_loss")
def cosine_embedding_loss(input1: Any, input2: Any, target: Any, margin: float = 0,
                          size_average: Any = None, reduce: Any = None,
                          reduction: str = "mean") -> Any:
    """``1 - cos(x1, x2)`` where ``y = 1``, ``max(0, cos(x1, x2) - margin)`` where
    ``y = -1``."""
    red = _apply.reduction(size_average, reduce, reduction)
    input1, input2 = _floating_first(input1, input2)

    def impl(a: Any, b: Any, y: Any) -> Any:
        prod = fnp.sum(a * b, axis=-1)
        mag = fnp.sqrt((fnp.sum(a * a, axis=-1) + 1e-12) * (fnp.sum(b * b, axis=-1) + 1e-12))
        cos = prod / mag
        loss = fnp.where(y == 1, 1 - cos, 0.0) + fnp.where(y == -1,
                                                           fnp.maximum(cos - margin, 0.0), 0.0)
        return _apply.reduce(loss, red)

    return op(_name(red, "Add"), impl, input1, input2, target)


@autocast_op("margin_ranking_loss")
def margin_ranking_loss(input1: Any, input2: Any, target: Any, margin: float = 0,
                        size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Any:
    """``max(0, -y (x1 - x2) + margin)``."""
    red = _apply.reduction(size_average, reduce, reduction)
    if not (len(shape(input1)) == len(shape(input2)) == len(shape(target))):
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same "
                           f"dimension but got sizes: input1: {_size(input1)}, input2: "
                           f"{_size(input2)}, target: {_size(target)} ")

    input1, input2, target = _floating_first(input1, input2, target)

    def impl(a: Any, b: Any, y: Any) -> Any:
        return _apply.reduce(fnp.maximum(-y * (a - b) + margin, 0.0), red)

    return op(_name(red, "ClampMin"), impl, input1, input2, target)


@autocast_op("triplet_margin_loss")
def triplet_margin_loss(anchor: Any, positive: Any, negative: Any, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False,
                        size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Any:
    """``max(d(a, p) - d(a, n) + margin, 0)`` with ``d`` the pairwise ``p``-distance
    (``swap``: the smaller of ``d(a, n)`` and ``d(p, n)``)."""
    red = _apply.reduction(size_average, reduce, reduction)
    dims = {len(shape(anchor)), len(shape(positive)), len(shape(negative))}
    if len(dims) != 1:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have "
                           f"the same number of dimensions, but got: anchor "
                           f"{len(shape(anchor))}D, positive {len(shape(positive))}D, and "
                           f"negative {len(shape(negative))}D inputs")

    if not any(is_float_tensor(t) for t in (anchor, positive, negative)
               if isinstance(t, Tensor)):
        anchor, positive, negative = floating(anchor), floating(positive), floating(negative)

    def impl(a: Any, pos: Any, neg: Any) -> Any:
        d_ap = _pnorm(a - pos + eps, p, False)
        d_an = _pnorm(a - neg + eps, p, False)
        if swap:
            d_an = fnp.minimum(d_an, _pnorm(pos - neg + eps, p, False))
        return _apply.reduce(fnp.maximum(margin + d_ap - d_an, 0.0), red)

    return op(_name(red, "ClampMin"), impl, anchor, positive, negative)


@autocast_op("multilabel_soft_margin_loss")
def multilabel_soft_margin_loss(input: Any, target: Any, weight: Any = None,  # noqa: A002
                                size_average: Any = None, reduce: Any = None,
                                reduction: str = "mean") -> Any:
    """The mean over classes of ``-(t log sigmoid(x) + (1 - t) log sigmoid(-x))``."""
    red = _apply.reduction(size_average, reduce, reduction)
    check_kernel_dtype("log_sigmoid_cpu", input)

    def impl(x: Any, t: Any, w: Any) -> Any:
        loss = -(t * jnn.log_sigmoid(x) + (1 - t) * jnn.log_sigmoid(-x))
        if w is not None:
            loss = loss * w
        return _apply.reduce(fnp.mean(loss, axis=-1), red)

    return op(_name(red, "Div"), impl, input, target, weight)


@autocast_op("multi_margin_loss")
def multi_margin_loss(input: Any, target: Any, p: int = 1, margin: float = 1.0,  # noqa: A002
                      weight: Any = None, size_average: Any = None, reduce: Any = None,
                      reduction: str = "mean") -> Any:
    """``sum_{i != y} max(0, margin - x[y] + x[i])**p / C`` (times ``weight[y]``)."""
    red = _apply.reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    shp = shape(input)
    classes = shp[-1] if shp else 1
    tdata = data(target)
    if isinstance(tdata, np.ndarray) and tdata.size and (tdata.min() < 0
                                                         or tdata.max() >= classes):
        raise IndexError(f"Target {int(tdata[(tdata < 0) | (tdata >= classes)][0])} is out "
                         "of bounds.")

    def impl(x: Any, y: Any, w: Any) -> Any:
        x2 = fnp.reshape(x, (-1, classes))
        y2 = fnp.reshape(y, (-1, 1))
        picked = fnp.take_along_axis(x2, y2, axis=1)
        terms = fnp.maximum(margin - picked + x2, 0.0)
        if p == 2:
            terms = terms * terms
        if w is not None:
            terms = terms * fnp.take(w, y2[:, 0])[:, None]
        is_target = fnp.arange(classes)[None, :] == y2
        loss = fnp.sum(fnp.where(is_target, 0.0, terms), axis=1) / classes
        loss = fnp.reshape(loss, shp[:-1])
        return _apply.reduce(loss, red)

    return op("MultiMarginLoss", impl, input, target, weight)


@autocast_op("soft_margin_loss")
def soft_margin_loss(input: Any, target: Any, size_average: Any = None,  # noqa: A002
                     reduce: Any = None, reduction: str = "mean") -> Any:
    """``log(1 + exp(-y x))``."""
    red = _apply.reduction(size_average, reduce, reduction)
    _check_float_output(input, target)

    def impl(x: Any, y: Any) -> Any:
        return _apply.reduce(jnn.softplus(-(x * y)), red)  # (y may be bool)

    return op("SoftMarginLoss", impl, input, target)


@autocast_op("hinge_embedding_loss")
def hinge_embedding_loss(input: Any, target: Any, margin: float = 1.0,  # noqa: A002
                         size_average: Any = None, reduce: Any = None,
                         reduction: str = "mean") -> Any:
    """``x`` where ``y = 1``, ``max(0, margin - x)`` where ``y = -1``."""
    red = _apply.reduction(size_average, reduce, reduction)
    integral = isinstance(input, Tensor) and not is_float_tensor(input)
    if integral:
        # PyTorch's losses stay in the input's integer dtype (summed in int64); bool has no
        # ``margin - x``, integers no mean.
        refuse_bool_subtraction(input, input)
        if red == "mean":
            raise RuntimeError("mean(): could not infer output dtype. Input dtype must be "
                               "either a floating point or complex dtype. Got: "
                               f"{cpp_name(input.dtype)}")

    def impl(x: Any, y: Any) -> Any:
        if integral:
            clamp = fnp.maximum(fnp.astype(margin - x, x.dtype), 0)
            loss = fnp.where(y != 1, clamp, 0) + fnp.where(y != -1, x, 0)
            loss = fnp.astype(loss, x.dtype)
            return fnp.sum(fnp.astype(loss, np.int64)) if red == "sum" else loss
        out_margin = fnp.where(y != 1, fnp.maximum(margin - x, 0.0), 0.0)
        out_self = fnp.where(y != -1, x, 0.0)
        return _apply.reduce(out_margin + out_self, red)

    return op(_name(red, "Add"), impl, input, target)
