"""How the layer modules (normalization, sparse, dropout, losses, attention...) run one
function written with ``funcgrad.numpy`` as ONE Tensor operation, recorded as one graph
node with PyTorch's name.

This is the recording rule of ``functional.py``, kept in a module of its own so that the
layer modules need not import ``functional.py`` (which re-exports their functional forms:
importing it from them would make a cycle).

>>> import numpy as np
>>> import funcgrad.numpy as fnp
>>> import funcgrad.torch as torch
>>> x = torch.tensor([1.0, 2.0], requires_grad=True)
>>> op("Exp", fnp.exp, x).grad_fn
<ExpBackward0 object at 0x...>
>>> op("Exp", fnp.exp, np.zeros(1))
tensor([1.], dtype=torch.float64)
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Callable
from typing import Any, cast

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.errors import ShapeError
from funcgrad.source_info import user_stacklevel
from funcgrad.torch import _memory_layout as _layout
from funcgrad.torch._device import device_of_buffer
from funcgrad.torch._half_math import half_dtype, in_float32, in_float32_at_result, rounded_to
from funcgrad.torch._tensor import Tensor, apply_op, broadcast_shapes_as_torch

__all__ = ["data", "floating", "half_dtype", "in_float32", "in_float32_at_result", "keep_mask",
           "on_device_of", "op", "reduce", "reduction", "rounded_to", "shape", "uniform_noise"]


def op(name: str, impl: Callable[..., Any], *args: Any, saves_tensors: bool = True) -> Any:
    """``impl(*args)`` as one Tensor operation named ``name`` (``<name>Backward0``;
    ``saves_tensors=False`` for a node whose PyTorch counterpart saves no tensor, so that a
    second backward through it is allowed).

    NumPy arrays count as Tensors; funcgrad Arrays and tracers (inside the JAX face's
    transforms) stay engine values, and so does the result."""
    from funcgrad.array import Array  # noqa: PLC0415

    if not any(isinstance(a, Tensor) for a in args) and any(
            isinstance(a, Array) for a in args):
        from funcgrad.torch._graph import X64  # noqa: PLC0415

        with X64:
            return impl(*args)
    try:
        return apply_op(name, impl, *(Tensor(a) if isinstance(a, np.ndarray) else a
                                      for a in args), saves_tensors=saves_tensors)
    except ShapeError as e:
        err = broadcast_error(e)
        if err is None:
            raise
        raise err from None


# The engine's texts for operands that do not broadcast (JAX's wordings, which name the
# shapes as a list or one after the other).
_BROADCAST = re.compile(r"shapes (\[.*\]) cannot be broadcast together"
                        r"|shapes for broadcasting: shapes=(\[.*\])"
                        r"|got incompatible shapes for broadcasting: (\(.*\))\.?$")


def broadcast_error(e: Exception) -> RuntimeError | None:
    """PyTorch's error for operands that do not broadcast (``The size of tensor a (3) must
    match the size of tensor b (2) at non-singleton dimension 0``), from the engine's
    ShapeError naming their shapes; None for another error."""
    found = _BROADCAST.search(str(e))
    if found is None:
        return None
    text = next(g for g in found.groups() if g is not None)
    try:
        parsed = ast.literal_eval(text)
        shapes = [tuple(s) for s in (parsed if isinstance(parsed, list) else parsed)]
    except (ValueError, SyntaxError, TypeError):
        return None
    if len(shapes) < 2:
        return None
    from funcgrad.torch._tensor import _check_broadcast  # noqa: PLC0415

    try:
        _check_broadcast(shapes[0], shapes[1])
    except RuntimeError as err:
        return err
    return None


def data(x: Any) -> Any:
    """The buffer of a Tensor, anything else unchanged."""
    return x._data if isinstance(x, Tensor) else x


def shape(x: Any) -> tuple[int, ...]:
    """The shape of a Tensor, array or nested sequence."""
    return tuple(np.shape(x)) if not hasattr(x, "shape") else tuple(x.shape)


def floating(x: Any) -> Any:
    """An integer Tensor promoted to the default float dtype (as PyTorch's float-only ops)."""
    if isinstance(x, Tensor):
        from funcgrad.torch._tensor import _float_input  # noqa: PLC0415

        return _float_input(x)
    return x


def on_device_of(arr: np.ndarray, x: Any) -> Any:
    """A host array moved to the device of ``x`` (a mask drawn on the host, for example)."""
    buf = data(x)
    if isinstance(buf, np.ndarray) or not type(buf).__module__.startswith("cupy"):
        return arr
    from funcgrad.devices import device_of, put_buffer  # noqa: PLC0415

    return put_buffer(arr, device_of(buf))


def cuda_index(x: Any) -> int | None:
    """The CUDA device index of ``x``'s buffer, or None when it is on the host."""
    buf = data(x)
    if type(buf) is np.ndarray:
        return None
    # A value staged by torch.compile knows the device it stands for; other tracers (under
    # torch.func) are on the host as far as random draws go.
    dev = device_of_buffer(buf)
    return (dev.index or 0) if dev.type == "cuda" else None


def keep_mask(mask_shape: tuple[int, ...], p: float, like: Any) -> Any:
    """A dropout mask (True with probability ``1 - p``) where ``like`` lives: on a GPU,
    drawn there by that device's generator; on the host, by the global generator (as
    PyTorch's CUDA and CPU generators make them)."""
    index = cuda_index(like)
    if index is None:
        from funcgrad.torch._random import rng  # noqa: PLC0415

        # PyTorch's CPU dropout: ``bernoulli_(1 - p)`` on the noise tensor, made by
        # ``empty_like(input)``: in the input's layout, filled in memory order.
        strides = None
        if isinstance(like, Tensor) and type(like._data) is np.ndarray and \
                not like._data.flags.c_contiguous and tuple(like.shape) == mask_shape:
            strides = _layout.kept_strides(mask_shape, cast(Any, like).stride(), None)
        return _layout.drawn_in_layout(
            lambda s: rng().torch_bernoulli_scalar(s, np.bool_, 1.0 - p), mask_shape, strides)
    from funcgrad.torch import _cuda_random  # noqa: PLC0415

    return _cuda_random.keep_mask(mask_shape, p, index)


def uniform_noise(noise_shape: tuple[int, ...], low: float, high: float, like: Any) -> Any:
    """Float64 samples of U[low, high) where ``like`` lives (its GPU's generator there)."""
    index = cuda_index(like)
    if index is None:
        from funcgrad.torch._random import rng  # noqa: PLC0415

        return rng().uniform(low, high, noise_shape)
    from funcgrad.torch import _cuda_random  # noqa: PLC0415

    return _cuda_random.uniform(noise_shape, np.float64, index) * (high - low) + low


def rrelu_noise(input: Any, low: float, high: float) -> Any:  # noqa: A002
    """Float64 RReLU slopes for ``input``: on the host, PyTorch's CPU kernel's draws (one
    double uniform per element ``<= 0``, in row-major order; 1 elsewhere); on a GPU (or a
    traced input outside a compiled step), a uniform for every element."""
    buf = data(input)
    if type(buf) is not np.ndarray:
        if cuda_index(input) is None:
            from funcgrad.torch import _draws  # noqa: PLC0415

            # (torch.compile: the host's draws stay PyTorch's; the step breaks here.)
            _draws.refuse_value_dependent_draws("RReLU")
        return uniform_noise(shape(input), low, high, input)
    from funcgrad.torch._random import rng  # noqa: PLC0415

    if buf.dtype != np.float64:
        # The kernel's bounds are in its float32 arithmetic type.
        low, high = float(np.float32(low)), float(np.float32(high))
    drawn = np.ravel(buf) <= 0
    noise = np.ones(drawn.shape, np.float64)
    noise[drawn] = rng().uniform(low, high, (int(np.count_nonzero(drawn)),))
    return noise.reshape(buf.shape)


def reduction(size_average: Any, reduce: Any, reduction: str) -> str:  # noqa: A002
    """PyTorch's ``reduction`` from its deprecated ``size_average``/``reduce`` flags."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = ("mean" if size_average else "sum") if reduce else "none"
        warnings.warn("size_average and reduce args will be deprecated, please use "
                      f"reduction='{reduction}' instead.", UserWarning, stacklevel=3)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def reduce(loss: Any, reduction: str) -> Any:  # noqa: A001 - names the loss argument
    """The mean, the sum, or the elementwise losses unchanged (``'none'``)."""
    if reduction == "mean":
        return fnp.mean(loss)
    if reduction == "sum":
        return fnp.sum(loss)
    return loss


def check_target_size(input: Any, target: Any) -> None:  # noqa: A002
    """PyTorch's regression losses: a target of another size warns (the sizes shown as
    torch.Size), then must broadcast with the input (broadcast_tensors' error)."""
    si, st = tuple(shape(input)), tuple(shape(target))
    if si != st:
        warnings.warn(f"Using a target size (torch.Size({list(st)})) that is different to the "
                      f"input size (torch.Size({list(si)})). This will likely lead to incorrect "
                      "results due to broadcasting. Please ensure they have the same size.",
                      UserWarning, stacklevel=user_stacklevel())
        broadcast_shapes_as_torch(si, st)
