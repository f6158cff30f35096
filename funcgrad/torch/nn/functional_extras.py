"""The rest of ``torch.nn.functional``: the in-place activations (``relu_``, ``elu_``...),
``pdist``, ``gumbel_softmax``, ``conv_tbc``, ``native_channel_shuffle``, PyTorch's
``__torch_function__`` override helpers (``has_torch_function*``,
``handle_torch_function``), ``boolean_dispatch``, ``assert_int_or_pair`` and the typing
names ``torch.nn.functional`` re-exports.

>>> import funcgrad.torch as torch
>>> import funcgrad.torch.nn.functional as F
>>> x = torch.tensor([-1.0, 2.0])
>>> F.relu_(x) is x, x
(True, tensor([0., 2.]))
>>> F.pdist(torch.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]]))
tensor([5.0000, 1.0000, 4.2426])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import nn as jnn
from funcgrad.torch._autocast import autocast_op
from funcgrad.torch._random import rng
from funcgrad.torch._tensor import Tensor, minkowski
from funcgrad.torch.nn._apply import cuda_index, floating, op, rrelu_noise, shape, uniform_noise
from funcgrad.torch.nn._kernel_dtypes import check_kernel_dtype
from funcgrad.torch.nn.activation import channel_shuffle
from funcgrad.torch.nn.activation_functions import _SELU_ALPHA, _SELU_SCALE, _celu, _elu, _hardtanh

__all__ = [
    "GRID_SAMPLE_INTERPOLATION_MODES", "GRID_SAMPLE_PADDING_MODES", "TYPE_CHECKING",
    "BroadcastingList1", "BroadcastingList2", "BroadcastingList3", "Callable", "DType",
    "Optional", "assert_int_or_pair", "boolean_dispatch", "celu_", "conv_tbc", "elu_",
    "gumbel_softmax", "handle_torch_function", "hardtanh_", "has_torch_function",
    "has_torch_function_unary", "has_torch_function_variadic", "leaky_relu_",
    "native_channel_shuffle", "pdist", "relu_", "rrelu_", "selu_", "threshold_",
]

# ------------------------------------------------------------------ typing names

DType = int  # PyTorch's alias, kept for the signatures that name it
GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}


class _BroadcastingListCls:
    """TorchScript's ``BroadcastingList``: subscripted in annotations, meaning nothing at
    run time (PyTorch's returns None too)."""

    def __getitem__(self, types: Any) -> None:
        return None


BroadcastingList1 = _BroadcastingListCls()
BroadcastingList2 = BroadcastingList1
BroadcastingList3 = BroadcastingList1


def assert_int_or_pair(arg: Any, arg_name: str, message: str) -> None:
    """Assert that ``arg`` is an int or a pair (``message`` formatted with ``arg_name``).

    >>> from funcgrad.torch.nn.functional_extras import assert_int_or_pair
    >>> assert_int_or_pair((1, 2), "stride", "{} must be an int or a pair")
    """
    assert isinstance(arg, int) or len(arg) == 2, message.format(arg_name)  # noqa: S101


# ------------------------------------------------------ __torch_function__ overrides


def _overloaded(args: Any) -> list[Any]:
    """The arguments whose type overrides ``__torch_function__`` (subclasses first, as
    PyTorch orders them); funcgrad's own Tensor defines no override."""
    found: list[Any] = []
    types: list[type] = []
    for a in args:
        t = type(a)
        if t in types or not hasattr(t, "__torch_function__"):
            continue
        at = len(found)
        for i, other in enumerate(types):
            if issubclass(t, other):
                at = i
                break
        found.insert(at, a)
        types.insert(at, t)
    return found


def has_torch_function(relevant_args: Any) -> bool:
    """Whether any argument's type overrides ``__torch_function__``.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.has_torch_function((torch.ones(1), 2))
    False
    """
    return bool(_overloaded(relevant_args))


def has_torch_function_unary(arg: Any) -> bool:
    """``has_torch_function((arg,))``."""
    return has_torch_function((arg,))


def has_torch_function_variadic(*args: Any) -> bool:
    """``has_torch_function(args)``."""
    return has_torch_function(args)


def handle_torch_function(public_api: Callable[..., Any], relevant_args: Any, *args: Any,
                          **kwargs: Any) -> Any:
    """Call the ``__torch_function__`` overrides of ``relevant_args`` in PyTorch's order
    until one does not return ``NotImplemented``.

    >>> import funcgrad.torch.nn.functional as F
    >>> class Logged:
    ...     @classmethod
    ...     def __torch_function__(cls, func, types, args=(), kwargs=None):
    ...         return f"{func.__name__} on {len(args)} args"
    >>> F.handle_torch_function(F.relu, (Logged(),), Logged())
    'relu on 1 args'
    """
    overloaded = _overloaded(relevant_args)
    types = tuple(type(a) for a in overloaded)
    for a in overloaded:
        result = type(a).__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = f"{public_api.__module__}.{public_api.__name__}"
    raise TypeError(f"no implementation found for '{name}' on types that implement "
                    f"__torch_function__: {[type(a) for a in overloaded]}")


def boolean_dispatch(arg_name: str, arg_index: int, default: bool,
                     if_true: Callable[..., Any], if_false: Callable[..., Any],
                     module_name: str | None = None, func_name: str | None = None
                     ) -> Callable[..., Any]:
    """A function that calls ``if_true`` or ``if_false`` by the flag ``arg_name`` (keyword,
    or positional at ``arg_index``; ``default`` when absent), as PyTorch's
    ``max_pool2d`` chooses whether to return indices.

    >>> from funcgrad.torch.nn.functional_extras import boolean_dispatch
    >>> f = boolean_dispatch("twice", 1, False, lambda x, twice: 2 * x,
    ...                      lambda x, twice=False: x)
    >>> f(3), f(3, True), f(3, twice=True)
    (3, 6, 6)
    """
    def fn(*args: Any, **kwargs: Any) -> Any:
        flag = default
        if arg_name in kwargs:
            flag = kwargs[arg_name]
        elif arg_index < len(args):
            flag = args[arg_index]
        return if_true(*args, **kwargs) if flag else if_false(*args, **kwargs)

    if module_name is not None:
        fn.__module__ = module_name
    if func_name is not None:
        fn.__name__ = func_name
    fn.__doc__ = if_true.__doc__ or if_false.__doc__
    return fn


# ------------------------------------------------------------ in-place activations


def _inplace(name: str, fn: Callable[[Any], Any], input: Any,  # noqa: A002
             saves_result: bool = False, kernel: str | None = None) -> Any:
    """``fn`` written into ``input`` (``kernel``: PyTorch's CPU kernel, which has no
    version for integer and bool tensors)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{name.split(':', 1)[0].lower()}_(): argument 'input' (position 1) "
                        f"must be Tensor, not {type(input).__name__}")
    if kernel is not None:
        check_kernel_dtype(kernel, input)
    return input._inplace(name, fn, saves_result=saves_result)


def relu_(input: Any) -> Any:  # noqa: A002 - PyTorch's name
    """``relu`` written into ``input``."""
    return _inplace("Relu", jnn.relu, input, saves_result=True)


def elu_(input: Any, alpha: float = 1.0) -> Any:  # noqa: A002
    """``elu`` written into ``input``.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.elu_(torch.tensor([0.0, 1.0]))
    tensor([0., 1.])
    """
    return _inplace("Elu:1", lambda x: _elu(x, alpha), input, saves_result=True,
                    kernel="elu_cpu")


def selu_(input: Any) -> Any:  # noqa: A002
    """``selu`` written into ``input``."""
    return _inplace("Elu:1", lambda x: _elu(x, _SELU_ALPHA, _SELU_SCALE), input,
                    saves_result=True, kernel="elu_cpu")


def celu_(input: Any, alpha: float = 1.0) -> Any:  # noqa: A002
    """``celu`` written into ``input``."""
    return _inplace("Celu:1", lambda x: _celu(x, alpha), input, saves_result=True,
                    kernel="elu_cpu")


def hardtanh_(input: Any, min_val: float = -1.0, max_val: float = 1.0) -> Any:  # noqa: A002
    """``hardtanh`` written into ``input``."""
    return _inplace("Hardtanh", lambda x: _hardtanh(x, min_val, max_val), input)


def leaky_relu_(input: Any, negative_slope: float = 0.01) -> Any:  # noqa: A002
    """``leaky_relu`` written into ``input``."""
    # The slope side at 0, as PyTorch's backward (x > 0 ? 1 : slope).
    return _inplace("LeakyRelu:1", lambda x: fnp.where(x > 0, x, x * negative_slope), input,
                    saves_result=True, kernel="leaky_relu_cpu")


def threshold_(input: Any, threshold: float, value: float) -> Any:  # noqa: A002
    """``threshold`` written into ``input``."""
    return _inplace("Threshold:1",
                    lambda x: fnp.where(x > threshold, x, fnp.full_like(x, value)), input)


def rrelu_(input: Any, lower: float = 1.0 / 8, upper: float = 1.0 / 3,  # noqa: A002
           training: bool = False) -> Any:
    """``rrelu`` written into ``input``."""
    if not training:
        slope = (lower + upper) / 2
        return _inplace("RreluWithNoise:1", lambda x: fnp.where(x > 0, x, x * slope), input,
                        saves_result=True, kernel="leaky_relu_cpu")
    if isinstance(input, Tensor):
        check_kernel_dtype("rrelu_with_noise_out_cpu", input)
    noise = rrelu_noise(input, lower, upper)
    return _inplace("RreluWithNoise:1",
                    lambda x: fnp.where(x > 0, x, x * fnp.asarray(noise, dtype=x.dtype)), input,
                    saves_result=True)


# ------------------------------------------------------------------------- others


@autocast_op("pdist")
def pdist(input: Any, p: float = 2) -> Any:  # noqa: A002
    """The ``p``-norm distances between the rows of (N, M): the upper triangle of
    ``cdist(x, x)`` row by row, N (N - 1) / 2 values."""
    shp = shape(input)
    if len(shp) != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {len(shp)}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    rows, cols = np.triu_indices(shp[0], k=1)

    def impl(x: Any) -> Any:
        return minkowski(fnp.take(x, rows, axis=0) - fnp.take(x, cols, axis=0), p)

    return op("Pdist", impl, floating(input))


def gumbel_softmax(logits: Any, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Any:
    """A sample of the Gumbel-softmax distribution (``hard``: one-hot values with the soft
    sample's gradient, the straight-through estimator)."""
    if cuda_index(logits) is None:
        gumbels = -np.log(rng().exponential(size=tuple(shape(logits))))
    else:  # drawn on the GPU: -log(E), E = -log(1 - U) exponential
        u = uniform_noise(tuple(shape(logits)), 0.0, 1.0, logits)
        gumbels = -fnp.log(-fnp.log1p(-fnp.asarray(u)))

    def soft(x: Any) -> Any:
        return jnn.softmax((x + fnp.asarray(gumbels, dtype=x.dtype)) / tau, axis=dim)

    y_soft = op("Softmax", soft, floating(logits))
    if not hard:
        return y_soft

    def straight_through(y: Any) -> Any:
        index = fnp.argmax(y, axis=dim, keepdims=True)
        axis = dim % len(y.shape)
        pos = fnp.arange(y.shape[axis]).reshape([-1 if i == axis else 1
                                                 for i in range(len(y.shape))])
        y_hard = fnp.asarray(pos == index, dtype=y.dtype)
        from funcgrad import lax  # noqa: PLC0415

        return y_hard - lax.stop_gradient(y) + y

    return op("Add", straight_through, y_soft)


def native_channel_shuffle(input: Any, groups: int) -> Any:  # noqa: A002
    """``channel_shuffle`` (PyTorch's native kernel of it)."""
    return channel_shuffle(input, groups)


def conv_tbc(input: Any, weight: Any, bias: Any, pad: int = 0) -> Any:  # noqa: A002
    """1-d convolution of time-batch-channel input (T, B, C_in) with a (K, C_in, C_out)
    weight: (T + 2 pad - K + 1, B, C_out).

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.conv_tbc(torch.ones(3, 1, 1), torch.ones(2, 1, 1), torch.zeros(1), 1)[:, 0, 0]
    tensor([1., 2., 2., 1.])
    """
    si, sw = shape(input), shape(weight)
    if len(si) != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if len(sw) != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if shape(bias) != (sw[2],):
        raise RuntimeError("Bias must have 1 dim: out_channels")
    if si[2] != sw[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    k = sw[0]
    t_out = si[0] + 2 * pad - k + 1

    def impl(x: Any, w: Any, b: Any) -> Any:
        xp = fnp.pad(x, ((pad, pad), (0, 0), (0, 0)))
        out = b
        for j in range(k):
            out = out + fnp.matmul(xp[j:j + t_out], w[j])
        return out

    return op("ConvTbc", impl, input, weight, bias)
