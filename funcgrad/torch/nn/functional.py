"""Activations and losses as functions, as ``torch.nn.functional`` (``import ... as F``).

Each function is written with ``funcgrad.numpy`` operations; on Tensors it is
recorded as ONE graph node (named as PyTorch names it, e.g. ``NllLossBackward0``)
whose backward is the engine's reverse mode through those operations. The same
functions accept plain arrays and tracers and then return arrays, so they also
work inside ``torch.grad``, ``torch.vmap`` and ``torch.jit``.

>>> import funcgrad.torch as torch
>>> import funcgrad.torch.nn.functional as F
>>> logits = torch.tensor([[2.0, 0.5, -1.0]], requires_grad=True)
>>> loss = F.cross_entropy(logits, torch.tensor([0]))
>>> loss
tensor(0.2413, grad_fn=<NllLossBackward0>)
>>> loss.backward()
>>> logits.grad
tensor([[-0.2144,  0.1753,  0.0391]])
"""

from __future__ import annotations

import functools
import math
import warnings
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import nn
from funcgrad.core import Tracer
from funcgrad.primitives.elementwise import add_p, select_p
from funcgrad.primitives.indexing import gather as _gather
from funcgrad.primitives.linalg import dot_general_p
from funcgrad.torch import _dtypes as D
from funcgrad.torch import _half_math as half_math
from funcgrad.torch import _memory_layout as _layout
from funcgrad.torch._autocast import autocast_op
from funcgrad.torch._device import Size
from funcgrad.torch._grad_mode import is_inference_mode_enabled
from funcgrad.torch._tensor import (
    Tensor,
    apply_binary_prim,
    apply_op,
    apply_prim,
    softmax_input,
)
from funcgrad.torch.nn import _apply
from funcgrad.torch.nn import activation_functions as _activations
from funcgrad.torch.nn._kernel_dtypes import (
    check_kernel_dtype,
    check_pair_kernel_dtype,
    is_float_tensor,
    refuse_bool_subtraction,
)
from funcgrad.transforms.jit import jit

__all__ = [
    "binary_cross_entropy_with_logits", "cross_entropy", "dropout", "elu", "gelu", "l1_loss",
    "leaky_relu", "linear", "log_softmax", "mse_loss", "nll_loss", "one_hot", "relu", "sigmoid",
    "silu", "softmax", "softplus", "tanh",
]


# One Tensor operation per layer function, and the small helpers, shared with the layer
# modules (funcgrad.torch.nn._apply).
_op, _data, _shape, _floating = _apply.op, _apply.data, _apply.shape, _apply.floating
# PyTorch's CPU kernels compute half-precision activations in float32, rounded once.
_f32 = _apply.in_float32


# Those whose backward kernel reads the rounded result: the derivative is taken there.
_sigmoid = _apply.in_float32_at_result(nn.sigmoid, lambda y, dx: dx * ((1.0 - y) * y))
_tanh = _apply.in_float32_at_result(fnp.tanh, lambda y, dx: dx * (1.0 - y * y))


# ------------------------------------------------------------------ activations
# The activations are funcgrad.nn's: one relu, sigmoid, gelu, softmax for both faces.


def relu(input: Any, inplace: bool = False) -> Any:  # noqa: A002 - PyTorch's name
    """``max(x, 0)``; the derivative at 0 is 0.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.relu(torch.tensor([-1.0, 0.0, 2.0]))
    tensor([0., 0., 2.])
    """
    if isinstance(input, Tensor) and input.dtype is D.bool:
        raise RuntimeError("Boolean inputs not supported for relu")
    if inplace:
        if not isinstance(input, Tensor):
            raise TypeError("relu(inplace=True) needs a Tensor")
        return input._inplace("Relu", nn.relu, saves_result=True)
    if isinstance(input, Tensor):
        out = _relu_direct(input)
        if out is not None:
            return out
    return _op("Relu", nn.relu, input)


def _relu_direct(x: Tensor) -> Tensor | None:
    """funcgrad.nn.relu's one primitive, ``select(x <= 0, 0, x)``, recorded directly (no
    per-operation trace): the mask is the one value its backward keeps. None where the
    general path is needed (under a transformation, a device buffer, integers)."""
    d = x._data
    if type(d) is not np.ndarray or d.dtype.kind != "f":
        return None
    zeros = np.broadcast_to(np.zeros((), d.dtype), d.shape)
    return apply_prim("Relu", select_p, (d <= 0, zeros, x), shown=(x,))


def tanh(input: Any) -> Any:  # noqa: A002
    """The hyperbolic tangent."""
    return _op("Tanh", _tanh, _floating(input))


def sigmoid(input: Any) -> Any:  # noqa: A002
    """``1 / (1 + exp(-x))``, stable for large |x|.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.sigmoid(torch.tensor([-800.0, 0.0, 800.0]))
    tensor([0.0000, 0.5000, 1.0000])
    """
    return _op("Sigmoid", _sigmoid, _floating(input))


def gelu(input: Any, approximate: str = "none") -> Any:  # noqa: A002
    """``x * Phi(x)`` (exact, through erf: PyTorch's default) or its tanh approximation.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.gelu(torch.tensor([-1.0, 1.0]))
    tensor([-0.1587,  0.8413])
    """
    if approximate not in ("none", "tanh"):
        raise ValueError(
            f"approximate argument must be either none or tanh, got {approximate!r}")
    check_kernel_dtype("GeluKernelImpl", input)
    tanh_form = approximate == "tanh"
    return _op("Gelu", _f32(lambda x: nn.gelu(x, approximate=tanh_form)), _floating(input))


def silu(input: Any, inplace: bool = False) -> Any:  # noqa: A002
    """``x * sigmoid(x)``."""
    check_kernel_dtype("silu_cpu", input)
    if inplace:
        return _activations._written_as("Silu", _f32(nn.silu), input)
    return _op("Silu", _f32(nn.silu), _floating(input))


@autocast_op("softplus")
def softplus(input: Any, beta: float = 1.0, threshold: float = 20.0) -> Any:  # noqa: A002
    """``log(1 + exp(beta x)) / beta``, linear above ``threshold``."""
    check_kernel_dtype("softplus_cpu", input)
    def impl(x: Any) -> Any:
        bx = x * beta
        return fnp.where(bx > threshold, x, nn.softplus(bx) / beta)

    return _op("Softplus", _f32(impl), _floating(input))


def leaky_relu(input: Any, negative_slope: float = 0.01,  # noqa: A002
               inplace: bool = False) -> Any:
    # The slope side at 0, as PyTorch's backward (x > 0 ? 1 : slope); JAX's leaky_relu
    # takes the identity side there.
    check_kernel_dtype("leaky_relu_cpu", input)
    if inplace:
        return _activations._written("leaky_relu_", input, negative_slope)
    return _op("LeakyRelu", lambda x: fnp.where(x > 0, x, negative_slope * x),
               _floating(input))


def elu(input: Any, alpha: float = 1.0, inplace: bool = False) -> Any:  # noqa: A002
    check_kernel_dtype("elu_cpu", input)
    if inplace:
        return _activations._written("elu_", input, alpha)
    return _op("Elu", _f32(lambda x: _activations._elu(x, alpha, from_input=True)),
               _floating(input))


def _softmax_dim(name: str, ndim: int) -> int:
    from funcgrad.torch._tensor import warn_at_caller  # noqa: PLC0415

    warn_at_caller(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                   "to include dim=X as an argument.")
    return 0 if ndim in (0, 1, 3) else 1


def _log_softmax(x: Any, dim: int) -> Any:
    return half_math.log_softmax(dim)(x)


@autocast_op("softmax")
@_layout.result_format("row_major")
def softmax(input: Any, dim: int | None = None, _stacklevel: int = 3,  # noqa: A002
            dtype: Any = None) -> Any:
    """``exp(x) / sum(exp(x))`` along ``dim``.

    >>> import numpy as np
    >>> import funcgrad.torch.nn.functional as F
    >>> F.softmax(np.log(np.array([[1.0, 3.0]])), dim=1)
    tensor([[0.2500, 0.7500]], dtype=torch.float64)
    """
    if dim is None:
        dim = _softmax_dim("softmax", len(_shape(input)))
    if isinstance(input, Tensor) and softmax_input("softmax", input, dim, dtype):
        return input.clone()

    if dtype is None:
        return _op("Softmax", half_math.softmax(dim), _floating(input))
    # With a dtype the input is cast first and the kernel runs in that dtype.
    return _op("Softmax", lambda x: nn.softmax(fnp.astype(x, _np_dtype(dtype)), axis=dim),
               _floating(input))


@autocast_op("log_softmax")
@_layout.result_format("row_major")
def log_softmax(input: Any, dim: int | None = None, _stacklevel: int = 3,  # noqa: A002
                dtype: Any = None) -> Any:
    """``x - logsumexp(x)`` along ``dim``."""
    if dim is None:
        dim = _softmax_dim("log_softmax", len(_shape(input)))
    if isinstance(input, Tensor) and softmax_input("log_softmax", input, dim, dtype):
        return input.clone()

    if dtype is None:
        return _op("LogSoftmax", half_math.log_softmax(dim), _floating(input))
    return _op("LogSoftmax",
               lambda x: nn.log_softmax(fnp.astype(x, _np_dtype(dtype)), axis=dim),
               _floating(input))


def _np_dtype(d: Any) -> Any:
    from funcgrad.torch._dtypes import to_numpy  # noqa: PLC0415

    return to_numpy(d)


_on_device_of = _apply.on_device_of


def dropout(input: Any, p: float = 0.5, training: bool = True,  # noqa: A002
            inplace: bool = False) -> Any:
    """Zero each element with probability ``p`` (funcgrad's global generator) and scale
    the rest by ``1 / (1 - p)``; the identity when not ``training``.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> _ = torch.manual_seed(0)
    >>> out = F.dropout(torch.ones(1000), p=0.25)
    >>> sorted(set(out.tolist()))
    [0.0, 1.3333333730697632]
    >>> F.dropout(torch.ones(3), p=0.25, training=False)
    tensor([1., 1., 1.])
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    shape = _shape(input)
    dt = input._data.dtype if isinstance(input, Tensor) else np.float32
    # A GPU tensor's mask is drawn on its device (nothing drawn on the host and uploaded).
    scale = _on_device_of(np.zeros(shape, dt), input) if p == 1.0 else \
        (_apply.keep_mask(shape, p, input) * (1.0 / (1.0 - p))).astype(dt)
    if inplace:
        if not isinstance(input, Tensor):
            raise TypeError("dropout(inplace=True) needs a Tensor")
        return input.mul_(Tensor(scale))
    return _op("Mul", lambda x: x * fnp.asarray(scale), input)


# ----------------------------------------------------------------------- linear


def _check_linear(x: Tensor, w: Tensor, bias: Any) -> None:
    """PyTorch's errors for a linear layer on mismatched dtypes or sizes."""
    from funcgrad.torch._tensor import _CPP, cpp_type_name  # noqa: PLC0415

    if x.dtype is not w.dtype:
        if bias is not None:
            raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                               f"{_CPP[x.dtype.name]} and {_CPP[w.dtype.name]}")
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{cpp_type_name(x.dtype)} != {cpp_type_name(w.dtype)}")
    if x.ndim >= 1 and w.ndim == 2 and x.shape[-1] != w.shape[1]:
        rows = math.prod(x.shape[:-1]) if x.ndim > 1 else 1
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{x.shape[-1]} "
                           f"and {w.shape[1]}x{w.shape[0]})")


@autocast_op("linear")
def linear(input: Any, weight: Any, bias: Any = None) -> Any:  # noqa: A002
    """``input @ weight.T + bias``.

    >>> import numpy as np
    >>> import funcgrad.torch.nn.functional as F
    >>> F.linear(np.ones((2, 3)), np.ones((4, 3)), np.arange(4.0))
    tensor([[3., 4., 5., 6.],
            [3., 4., 5., 6.]], dtype=torch.float64)
    """
    if isinstance(input, Tensor) and isinstance(weight, Tensor):
        _check_linear(input, weight, bias)
        if weight._inference and weight._requires_grad and not is_inference_mode_enabled():
            # PyTorch multiplies by ``weight.t()``: a view of an inference tensor made outside
            # inference mode does not require grad, so no gradient reaches such a weight.
            weight = weight.detach()
        if input.ndim > 2 and weight.ndim == 2 and bias is not None and \
                not input.is_contiguous():
            # PyTorch's linear of a strided batch is ``matmul`` and an in-place bias add
            # (grad_fn AddBackward0 over UnsafeViewBackward0).
            from funcgrad.torch._functions import matmul  # noqa: PLC0415

            return matmul(input, weight.t()).add_(bias)
        if input.ndim > 2 and weight.ndim == 2:
            # As PyTorch: the leading axes flattened into one matrix product, viewed back
            # (grad_fn ViewBackward0 over AddmmBackward0).
            flat = _linear_direct(input.reshape(-1, input.shape[-1]), weight, bias)
            if flat is not None:
                if bias is not None:
                    return flat.view(*input.shape[:-1], weight.shape[0])
                # without a bias PyTorch's matmul views its product back (_unsafe_view)
                shape = (*input.shape[:-1], weight.shape[0])
                return apply_op("UnsafeView", lambda a: fnp.reshape(a, shape), flat)
        if input.ndim == 1 and weight.ndim == 2:
            # PyTorch computes a vector's product as a one-row matrix: with a bias the
            # addmm is viewed back (ViewBackward0), without one mm's row is squeezed in
            # place (SqueezeBackward4).
            row = _linear_direct(input.reshape(1, -1), weight, bias)
            if row is not None:
                if bias is not None:
                    return row.view(weight.shape[0])
                return apply_op("Squeeze:4", lambda a: fnp.squeeze(a, 0), row)
        out = _linear_direct(input, weight, bias)
        if out is not None:
            return out
    if bias is None:
        return _op("Mm", lambda x, w: fnp.matmul(x, fnp.transpose(w)), input, weight)
    return _op("Addmm", lambda x, w, b: fnp.matmul(x, fnp.transpose(w)) + b, input, weight,
               bias)


def _linear_direct(x: Tensor, w: Tensor, b: Any) -> Tensor | None:
    """A 2-D ``linear`` as two primitives recorded directly: ``dot_general`` contracting the
    input's and the weight's last axes (no transpose), then the bias added with
    broadcasting; the result's node is PyTorch's ``AddmmBackward0`` (``MmBackward0``
    without a bias). None where the general path is needed."""
    if x.ndim != 2 or w.ndim != 2 or not x.dtype.is_floating_point or w._data.dtype != \
            x._data.dtype or (b is not None and (not isinstance(b, Tensor) or b.ndim != 1
                                                   or b._data.dtype != x._data.dtype)):
        return None
    shown = (x, w) if b is None else (b, x, w)
    if b is not None and x.dtype in (D.bfloat16, D.float16):
        # PyTorch's half-type addmm adds the bias to the float32 product: one rounding.
        return apply_op("Addmm", _half_addmm, b, x, w, shown=shown)
    y = apply_prim("Mm", dot_general_p, (x, w), shown=shown if b is None else None,
                   dimension_numbers=(((1,), (1,)), ((), ())))
    if y is None or b is None:
        return y
    return apply_binary_prim("Addmm", add_p, y, b, shown)


def _half_addmm(b: Any, x: Any, w: Any) -> Any:
    """``x @ w.T + b`` of half-type arrays computed in float32 and rounded once."""
    f32 = np.float32
    y = fnp.matmul(fnp.astype(x, f32), fnp.transpose(fnp.astype(w, f32))) + fnp.astype(b, f32)
    return fnp.astype(y, x.dtype)


def one_hot(tensor: Any, num_classes: int = -1) -> Any:
    """Class indices to int64 one-hot vectors (a new last axis of ``num_classes``).

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.one_hot(torch.tensor([0, 2]))
    tensor([[1, 0, 0],
            [0, 0, 1]])
    """
    data = _data(tensor)
    if np.dtype(data.dtype).kind not in "iu":
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if not isinstance(data, np.ndarray):
            raise ValueError("one_hot needs num_classes for a traced or device index array")
        num_classes = int(data.max()) + 1 if data.size else 0
    if isinstance(data, np.ndarray) and data.size and (data.min() < 0
                                                       or data.max() >= num_classes):
        raise RuntimeError("Class values must be smaller than num_classes." if data.min() >= 0
                           else "Class values must be non-negative.")
    classes = fnp.asarray(_on_device_of(np.arange(num_classes), tensor))
    return _op("OneHot", lambda t: fnp.astype(fnp.expand_dims(t, -1) == classes, np.int64),
               tensor)


# ------------------------------------------------------------------------ losses


def _reduction(size_average: Any, reduce: Any, reduction: str) -> str:
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = ("mean" if size_average else "sum") if reduce else "none"
        warnings.warn("size_average and reduce args will be deprecated, please use "
                      f"reduction='{reduction}' instead.", UserWarning, stacklevel=3)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss: Any, reduction: str) -> Any:
    if reduction == "mean":
        return fnp.mean(loss)
    if reduction == "sum":
        return fnp.sum(loss)
    return loss


@autocast_op("mse_loss")
def mse_loss(input: Any, target: Any, size_average: Any = None,  # noqa: A002
             reduce: Any = None, reduction: str = "mean") -> Any:
    """Mean (or sum, or elementwise) squared error.

    >>> import numpy as np
    >>> import funcgrad.torch.nn.functional as F
    >>> F.mse_loss(np.array([1.0, 2.0]), np.array([0.0, 0.0]))
    tensor(2.5000, dtype=torch.float64)
    """
    reduction = _reduction(size_average, reduce, reduction)
    _apply.check_target_size(input, target)
    check_pair_kernel_dtype("mse_cpu", input, target)

    def impl(x: Any, t: Any) -> Any:
        d = x - t
        return _reduce(d * d, reduction)

    return _op("MseLoss", impl, input, target)


@autocast_op("l1_loss")
def l1_loss(input: Any, target: Any, size_average: Any = None,  # noqa: A002
            reduce: Any = None, reduction: str = "mean") -> Any:
    """Mean (or sum, or elementwise) absolute error; the derivative at 0 is 0."""
    reduction = _reduction(size_average, reduce, reduction)
    _apply.check_target_size(input, target)
    refuse_bool_subtraction(input, target)
    names = {"mean": "Mean", "sum": "Sum", "none": "Abs"}
    if isinstance(input, Tensor) and isinstance(target, Tensor) and not (
            is_float_tensor(input) or is_float_tensor(target)):
        # Integers: PyTorch's (x - t).abs() in their promoted dtype, summed in int64; it has
        # no mean.
        dt = D.promote_types(input.dtype, target.dtype)
        if reduction == "mean":
            raise RuntimeError("mean(): could not infer output dtype. Input dtype must be "
                               "either a floating point or complex dtype. Got: "
                               f"{D.cpp_name(dt)}")

        def integral(x: Any, t: Any) -> Any:
            d = fnp.abs(fnp.astype(x, dt.np) - fnp.astype(t, dt.np))
            return d if reduction == "none" else fnp.sum(fnp.astype(d, np.int64))

        return _op(names[reduction], integral, input, target)
    return _op(names[reduction], lambda x, t: _reduce(fnp.abs(x - t), reduction), input,
               target)


def _check_index_target(shape: tuple[int, ...], tshape: tuple[int, ...], dtype: Any) -> None:
    if len(shape) > 1 and tshape and tshape[0] != shape[0]:
        raise ValueError(f"Expected input batch_size ({shape[0]}) to match target "
                         f"batch_size ({tshape[0]}).")
    if len(shape) == 2 and len(tshape) > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if len(shape) == 4:
        # PyTorch's nll_loss2d checks
        if len(tshape) != 3:
            raise RuntimeError("only batches of spatial targets supported (3D tensors) but got "
                               f"targets of dimension: {len(tshape)}")
        if tshape[1:] != shape[2:]:
            raise RuntimeError(f"size mismatch (got input: {list(shape)} , target: "
                               f"{list(tshape)}")
    elif len(shape) > 2 and tshape[1:] != shape[2:]:
        raise RuntimeError(f"Expected target size {[shape[0], *shape[2:]]}, got {list(tshape)}")
    _check_target_dtype(dtype)


def _check_target_dtype(dtype: Any) -> None:
    """Class indices are int64 or uint8 in PyTorch (an int32 target is an error there)."""
    if np.dtype(dtype).name not in ("int64", "uint8"):
        from funcgrad.torch._tensor import _CPP  # noqa: PLC0415

        name = _CPP.get(np.dtype(dtype).name, str(np.dtype(dtype)))
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {name}")


def _check_targets(target: Any, n_classes: int, ignore_index: int) -> bool:
    """PyTorch's checks of class-index targets; whether some target (read on the host) is
    ``ignore_index`` (False when that is not known: device targets)."""
    data = _data(target)
    _check_target_dtype(data.dtype)
    if isinstance(data, np.ndarray) and data.size:
        bad = (data != ignore_index) & ((data < 0) | (data >= n_classes))
        if bad.any():
            raise IndexError(f"Target {int(data[bad].reshape(-1)[0])} is out of bounds.")
        return bool((data == ignore_index).any())
    return False


def _batched(x: Any, t: Any) -> tuple[Any, Any, bool]:
    """Unbatched input ``(C,)`` with a scalar (or ``(C,)`` probability) target -> batch of 1."""
    if len(_shape(x)) == 1:
        return fnp.expand_dims(x, 0), fnp.expand_dims(t, 0), True
    return x, t, False


def _class_weight(w: Any, ndim: int) -> Any:
    """The per-class weight shaped to broadcast along axis 1 of an ``ndim`` input."""
    return fnp.reshape(w, (1, -1) + (1,) * (ndim - 2))


def _nll(logp: Any, target: Any, weight: Any, ignore_index: int, reduction: str,
         checked: bool = False) -> Any:
    """``checked``: every target is known to be a class or ``ignore_index`` (read on the
    host by :func:`_check_targets`), so the pick needs no out-of-range handling."""
    logp, target, unbatched = _batched(logp, target)
    lp = fnp.moveaxis(logp, 1, -1)
    valid = target != ignore_index
    safe = fnp.where(valid, target, 0)
    picked = fnp.take_along_axis(lp, fnp.expand_dims(safe, -1), axis=-1,
                                 mode="clip" if checked else None)[..., 0]
    mask = fnp.astype(valid, lp.dtype)
    w = mask if weight is None else fnp.take(weight, safe) * mask
    losses = -picked * w
    if reduction == "none":
        return losses[0] if unbatched else losses
    half = half_math.half_dtype(losses)
    if half is not None and len(_shape(losses)) == 1:
        return _half_nll_reduced(losses, w, weight is None, reduction, half, valid)
    if reduction == "sum":
        return fnp.sum(losses)
    total = fnp.sum(w)
    # PyTorch's backward scales each kept entry by 1 / total: with every target ignored the
    # loss is NaN (0 / 0, x86's negative NaN) and the gradient zeros, not NaN; an empty batch
    # gives PyTorch's positive NaN.
    none = total == 0
    nan = np.nan if int(np.prod(_shape(target))) == 0 else -np.nan
    return fnp.sum(losses) / fnp.where(none, 1.0, total) + fnp.where(none, nan, 0.0)


def _half_nll_reduced(losses: Any, w: Any, unweighted: bool, reduction: str,
                      half: Any, valid: Any = None) -> Any:
    """A half batch's summed or averaged nll_loss as PyTorch's CPU kernel computes it: the
    losses (and the weights, for a weighted mean) summed in the half type by its cascade,
    the mean's divisor the count of kept targets in the half type. ``valid``: the targets
    not ignored, which the cascade skips when known on the host (traced: it visits all,
    which differs only where an ignored target's index is a multiple of 16)."""
    keep = None if valid is None or isinstance(valid, Tracer) else np.asarray(valid)
    total = half_math.cascade_sum(fnp.astype(losses, np.float32), half, keep)
    if reduction == "mean":
        kept = fnp.astype(w, np.float32)
        count = fnp.astype(fnp.astype(fnp.sum(kept), half), np.float32) if unweighted else \
            half_math.cascade_sum(kept, half, keep)
        # With every target ignored (or none): 0 / 0, a positive NaN in the half kernel.
        total = fnp.where(count == 0, np.nan, total / fnp.where(count == 0, 1.0, count))
    return fnp.astype(total, half)


def _check_class_weight(weight: Any, n_classes: int, prefix: str = "") -> None:
    if weight is None:
        return
    shape = _shape(weight)
    if int(np.prod(shape)) != n_classes:
        raise RuntimeError(f"{prefix}weight tensor should be defined either for all "
                           f"{n_classes} classes or no classes but got weight tensor of "
                           f"shape: {list(shape)}")


@autocast_op("nll_loss")
def nll_loss(input: Any, target: Any, weight: Any = None, size_average: Any = None,  # noqa: A002
             ignore_index: int = -100, reduce: Any = None, reduction: str = "mean") -> Any:
    """Negative log likelihood of class indices, given log-probabilities along axis 1.

    ``weight`` rescales each class; targets equal to ``ignore_index`` count for nothing
    (nor in the mean's denominator).

    >>> import numpy as np
    >>> import funcgrad.torch.nn.functional as F
    >>> F.nll_loss(np.log(np.array([[0.5, 0.5], [0.1, 0.9]])), np.array([0, 1]))
    tensor(0.3993, dtype=torch.float64)
    """
    reduction = _reduction(size_average, reduce, reduction)
    shape = _shape(input)
    _check_index_target(shape, _shape(target), _data(target).dtype)
    _check_class_weight(weight, shape[1] if len(shape) > 1 else shape[0])
    _check_targets(target, shape[1] if len(shape) > 1 else shape[0], ignore_index)
    check_kernel_dtype("nll_loss_out_frame" if len(shape) <= 2 else
                       "nll_loss2d_forward_out_frame", input)

    def impl(lp: Any, t: Any, w: Any) -> Any:
        return _nll(lp, t, w, ignore_index, reduction)

    return _op(_nll_node(len(shape), reduction), impl, input, target, weight)


def _nll_node(ndim: int, reduction: str) -> str:
    """PyTorch's node for ``nll_loss`` of an input of ``ndim`` dims: ``nll_loss2d`` from 3
    dims (other than 4 the input is reshaped to 4 dims, an unreduced loss viewed back)."""
    if ndim <= 2:
        return "NllLoss"
    return "View" if ndim != 4 and reduction == "none" else "NllLoss2D"


def _ce_by_index(ignore_index: int, reduction: str, eps: float, n_classes: int,
                 checked: bool, x: Any, t: Any, w: Any) -> Any:
    """Cross entropy of logits against class indices (cross_entropy's common case)."""
    logp = _log_softmax(x, 1 if len(_shape(x)) > 1 else 0)
    nll = _nll(logp, t, w, ignore_index, reduction, checked)
    if eps == 0.0:
        return nll
    logp, t, unbatched = _batched(logp, t)
    valid = t != ignore_index
    lw = logp if w is None else logp * _class_weight(w, len(_shape(logp)))
    smooth = fnp.where(valid, -fnp.sum(lw, axis=1), 0.0)
    if reduction == "none":
        ret = smooth[0] if unbatched else smooth
    elif reduction == "sum":
        ret = fnp.sum(smooth)
    elif w is None:
        ret = fnp.sum(smooth) / fnp.sum(fnp.astype(valid, logp.dtype))
    else:
        tw = fnp.take(w, fnp.where(valid, t, 0)) * fnp.astype(valid, logp.dtype)
        ret = fnp.sum(smooth) / fnp.sum(tw)
    half = half_math.half_dtype(logp)
    if half is not None:
        # PyTorch's half kernels multiply by a number in float32 and round each product.
        f32 = np.float32
        return fnp.astype(fnp.astype(nll, f32) * f32(1 - eps), half) + \
            fnp.astype(fnp.astype(ret, f32) * f32(eps / n_classes), half)
    return (1 - eps) * nll + ret * (eps / n_classes)



def _ce_plain(reduction: str, x: Any, t: Any) -> Any:
    """Cross entropy of ``(N, C)`` logits against targets known to be classes (checked on
    the host, none ignored), without weights or smoothing: each row's log-probability
    picked by one gather from the flattened rows, nothing masked (the same values as
    :func:`_ce_by_index`, in half the operations)."""
    logp = _log_softmax(x, 1)
    n, c = _shape(logp)
    rows = np.arange(n, dtype=np.int64) * c
    pos = fnp.astype(t, np.int64) + rows
    picked = _gather(fnp.reshape(logp, (n * c,)), fnp.expand_dims(pos, 1), "clip")
    losses = -picked
    if reduction == "none":
        return losses
    half = half_math.half_dtype(losses)
    if half is not None:
        return _half_nll_reduced(losses, fnp.ones_like(losses), True, reduction, half)
    # Negated before the sum, as the masked program does: an empty or all-zero batch sums
    # to +0.0 as in PyTorch, not -0.0.
    total = fnp.sum(losses)
    if reduction == "sum":
        return total
    return total / n if n else total + np.nan  # an empty batch: PyTorch's positive NaN


@functools.cache
def _ce_plain_jit(reduction: str) -> Any:
    return jit(functools.partial(_ce_plain, reduction))


@functools.cache
def _ce_by_index_jit(ignore_index: int, reduction: str, eps: float, n_classes: int,
                     checked: bool) -> Any:
    return jit(functools.partial(_ce_by_index, ignore_index, reduction, eps, n_classes,
                                 checked))


@autocast_op("cross_entropy")
def cross_entropy(input: Any, target: Any, weight: Any = None,  # noqa: A002
                  size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Any:
    """Cross entropy of logits (classes along axis 1) against class indices or class
    probabilities, with optional class ``weight``, ``ignore_index`` (indices only) and
    ``label_smoothing``: PyTorch's ``cross_entropy``.

    >>> import numpy as np
    >>> import funcgrad.torch.nn.functional as F
    >>> logits = np.array([[2.0, 0.5, -1.0]])
    >>> F.cross_entropy(logits, np.array([0]))
    tensor(0.2413, dtype=torch.float64)
    >>> F.cross_entropy(logits, np.array([[1.0, 0.0, 0.0]]))  # the same, as probabilities
    tensor(0.2413, dtype=torch.float64)
    """
    reduction = _reduction(size_average, reduce, reduction)
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")
    shape = _shape(input)
    n_classes = shape[1] if len(shape) > 1 else shape[0]
    eps = max(float(label_smoothing), 0.0)  # PyTorch smooths only for a positive value
    # Its log_softmax over the classes comes first: a kernel of the floating types.
    check_kernel_dtype("log_softmax_lastdim_kernel_impl" if len(shape) <= 2 else
                       "log_softmax_kernel_impl", input)
    integral = np.dtype(_data(target).dtype).kind in "iu"
    if _shape(target) == shape:
        # PyTorch reads a target shaped as the input as class probabilities, first.
        if np.dtype(_data(target).dtype).kind not in "fc":
            raise RuntimeError("Expected floating point type for target with class "
                               f"probabilities, got {D.cpp_name(_data(target).dtype)}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
    if integral or _shape(target) != shape:
        # Class indices (a target not shaped as the input is read so): PyTorch's checks.
        _check_index_target(shape, _shape(target), _data(target).dtype)
    _check_class_weight(weight, n_classes, "" if integral else "cross_entropy: ")
    if integral:
        ignored = _check_targets(target, n_classes, ignore_index)
        host = isinstance(_data(target), np.ndarray)
        # One compiled program per setting and shape (its gradient too): a few dozen
        # recorded primitives per call become one.
        if host and not ignored and weight is None and eps == 0.0 and len(shape) == 2:
            return _op("NllLoss", _ce_plain_jit(reduction), input, target)
        if ignored and half_math.half_dtype(_data(input)) is not None:
            # The half kernel's sum skips ignored targets: the mask must be known, not
            # traced.
            by_index = functools.partial(_ce_by_index, ignore_index, reduction, eps,
                                         n_classes, host)
        else:
            by_index = _ce_by_index_jit(ignore_index, reduction, eps, n_classes, host)
        return _op(_nll_node(len(shape), reduction) if eps == 0.0 else "Add", by_index, input,
                   target, weight)

    def by_probs(x: Any, t: Any, w: Any) -> Any:
        x, t, unbatched = _batched(x, t)
        logp = _log_softmax(x, 1)
        if eps > 0.0:
            t = t * (1 - eps) + eps / n_classes
        prod = logp * t if w is None else logp * t * _class_weight(w, len(_shape(logp)))
        losses = -fnp.sum(prod, axis=1)
        if reduction == "none":
            return losses[0] if unbatched else losses
        return _reduce(losses, reduction)

    return _op({"mean": "Div:1", "sum": "Neg", "none": "Neg"}[reduction], by_probs, input, target,
               weight)


def _neg_log_sigmoid(x: Any) -> Any:
    # -log(sigmoid(x)) = log1p(exp(-|x|)) + max(-x, 0), written so that the derivative at
    # x = 0 is the true one (-1/2).
    pos = x >= 0
    return fnp.log1p(fnp.exp(fnp.where(pos, -x, x))) - fnp.where(pos, 0.0, x)


@autocast_op("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(input: Any, target: Any, weight: Any = None,  # noqa: A002
                                     size_average: Any = None, reduce: Any = None,
                                     reduction: str = "mean", pos_weight: Any = None) -> Any:
    """Binary cross entropy of logits (``sigmoid`` folded in, stable for any |x|);
    ``pos_weight`` weighs the positive term, ``weight`` each element.

    >>> import numpy as np
    >>> import funcgrad.torch.nn.functional as F
    >>> F.binary_cross_entropy_with_logits(np.array([1000.0, -1000.0]), np.array([1.0, 0.0]))
    tensor(0., dtype=torch.float64)
    """
    reduction = _reduction(size_average, reduce, reduction)
    if _shape(target) != _shape(input):
        raise ValueError(f"Target size ({Size(_shape(target))}) must be the same as input size "
                         f"({Size(_shape(input))})")
    # PyTorch's log_sigmoid(input) comes first: a kernel of the floating types.
    check_kernel_dtype("log_sigmoid_cpu", input)
    tk, xk = np.dtype(_data(target).dtype).kind, np.dtype(_data(input).dtype).kind
    if tk in "biu" and xk not in "biu":
        from funcgrad.torch._tensor import _CPP  # noqa: PLC0415

        if tk == "b":
            raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                               "supported. Use the `^` or `logical_xor()` operator instead.")
        # PyTorch's kernel writes into a tensor of the target's dtype.
        raise RuntimeError(f"result type {_CPP[np.dtype(_data(input).dtype).name]} can't be "
                           f"cast to the desired output type "
                           f"{_CPP[np.dtype(_data(target).dtype).name]}")

    def impl(x: Any, t: Any, w: Any, pw: Any) -> Any:
        nls = _neg_log_sigmoid(x)
        loss = (1 - t) * x + (nls if pw is None else (1 + (pw - 1) * t) * nls)
        if w is not None:
            loss = loss * w
        return _reduce(loss, reduction)

    return _op("BinaryCrossEntropyWithLogits", impl, input, target, weight, pos_weight)


# The functional forms of the normalization, sparse, dropout and attention layers and of
# most losses live in modules of their own.
from funcgrad.torch.nn.attention_functions import (  # noqa: E402
    multi_head_attention_forward,
    scaled_dot_product_attention,
)
from funcgrad.torch.nn.dropout import (  # noqa: E402
    alpha_dropout,
    dropout1d,
    dropout2d,
    dropout3d,
    feature_alpha_dropout,
)
from funcgrad.torch.nn.loss_functions import (  # noqa: E402
    binary_cross_entropy,
    cosine_embedding_loss,
    cosine_similarity,
    gaussian_nll_loss,
    hinge_embedding_loss,
    huber_loss,
    kl_div,
    margin_ranking_loss,
    multi_margin_loss,
    multilabel_soft_margin_loss,
    pairwise_distance,
    poisson_nll_loss,
    smooth_l1_loss,
    soft_margin_loss,
    triplet_margin_loss,
)
from funcgrad.torch.nn.normalization import (  # noqa: E402
    batch_norm,
    group_norm,
    instance_norm,
    layer_norm,
    local_response_norm,
    normalize,
    rms_norm,
)
from funcgrad.torch.nn.sparse import embedding, embedding_bag  # noqa: E402

__all__ += [
    "alpha_dropout", "batch_norm", "dropout1d", "dropout2d", "dropout3d", "embedding",
    "embedding_bag", "feature_alpha_dropout", "group_norm", "instance_norm", "layer_norm",
    "local_response_norm", "normalize", "rms_norm",
]

# Convolutions, padding and pooling live with their layers.
from funcgrad.torch.nn.conv import (  # noqa: E402
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    pad,
)
from funcgrad.torch.nn.pooling import (  # noqa: E402
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d,
    adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d,
    adaptive_max_pool3d_with_indices,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    max_pool1d,
    max_pool1d_with_indices,
    max_pool2d,
    max_pool2d_with_indices,
    max_pool3d,
    max_pool3d_with_indices,
)

__all__ += [
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d", "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d", "adaptive_max_pool3d_with_indices", "avg_pool1d", "avg_pool2d",
    "avg_pool3d", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "max_pool1d", "max_pool1d_with_indices", "max_pool2d",
    "max_pool2d_with_indices", "max_pool3d", "max_pool3d_with_indices", "pad",
]
__all__ += [
    "multi_head_attention_forward", "scaled_dot_product_attention",
    "binary_cross_entropy",
    "cosine_embedding_loss",
    "cosine_similarity",
    "gaussian_nll_loss",
    "hinge_embedding_loss",
    "huber_loss",
    "kl_div",
    "margin_ranking_loss",
    "multi_margin_loss",
    "multilabel_soft_margin_loss",
    "pairwise_distance",
    "poisson_nll_loss",
    "smooth_l1_loss",
    "soft_margin_loss",
    "triplet_margin_loss",
]

from funcgrad.torch.nn.activation import (  # noqa: E402
    channel_shuffle,
    pixel_shuffle,
    pixel_unshuffle,
)
from funcgrad.torch.nn.activation_functions import (  # noqa: E402
    celu,
    glu,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh,
    logsigmoid,
    mish,
    prelu,
    relu6,
    rrelu,
    selu,
    softmin,
    softshrink,
    softsign,
    tanhshrink,
    threshold,
)

__all__ += ["celu", "channel_shuffle", "glu", "hardshrink", "hardsigmoid", "hardswish",
            "hardtanh", "logsigmoid", "mish", "pixel_shuffle", "pixel_unshuffle", "prelu",
            "relu6", "rrelu", "selu", "softmin", "softshrink", "softsign", "tanhshrink",
            "threshold"]

# Resizing, sliding blocks, unpooling, the other poolings and losses, and the rest.
from funcgrad.torch.nn import grad  # noqa: E402, F401 - torch.nn.functional.grad is nn.grad
from funcgrad.torch.nn.bilinear import bilinear  # noqa: E402
from funcgrad.torch.nn.ctc import ctc_loss  # noqa: E402
from funcgrad.torch.nn.fold import fold, unfold  # noqa: E402
from funcgrad.torch.nn.fractional_pooling import (  # noqa: E402
    fractional_max_pool2d,
    fractional_max_pool2d_with_indices,
    fractional_max_pool3d,
    fractional_max_pool3d_with_indices,
)
from funcgrad.torch.nn.functional_extras import *  # noqa: E402, F403
from funcgrad.torch.nn.functional_extras import __all__ as _extras_names  # noqa: E402
from funcgrad.torch.nn.lp_pooling import lp_pool1d, lp_pool2d, lp_pool3d  # noqa: E402
from funcgrad.torch.nn.margin_losses import (  # noqa: E402
    multilabel_margin_loss,
    triplet_margin_with_distance_loss,
)
from funcgrad.torch.nn.unpooling import max_unpool1d, max_unpool2d, max_unpool3d  # noqa: E402
from funcgrad.torch.nn.upsampling import (  # noqa: E402
    interpolate,
    upsample,
    upsample_bilinear,
    upsample_nearest,
)

__all__ += [*_extras_names]  # noqa: PLE0604 - a list of strings
__all__ += ["bilinear", "ctc_loss", "fold", "fractional_max_pool2d",
            "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
            "fractional_max_pool3d_with_indices", "interpolate", "lp_pool1d", "lp_pool2d",
            "lp_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d",
            "multilabel_margin_loss", "triplet_margin_with_distance_loss", "unfold",
            "upsample", "upsample_bilinear", "upsample_nearest"]

# (grid_sampler and affine_grid_generator are torch-level names, found here by torch.*.)
from funcgrad.torch.nn.grid_sample import (  # noqa: E402, F401
    affine_grid,
    affine_grid_generator,
    grid_sample,
    grid_sampler,
)

__all__ += ["affine_grid", "grid_sample"]

from funcgrad.torch.nn.grouped_mm import grouped_mm  # noqa: E402
from funcgrad.torch.nn.linear_cross_entropy import linear_cross_entropy  # noqa: E402

__all__ += ["grouped_mm", "linear_cross_entropy"]
