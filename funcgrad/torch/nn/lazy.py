"""Lazy modules, as PyTorch's: layers whose input size is read from their first input.

``LazyLinear``, ``LazyConv1d/2d/3d``, ``LazyConvTranspose1d/2d/3d``,
``LazyBatchNorm1d/2d/3d`` and ``LazyInstanceNorm1d/2d/3d`` hold
``UninitializedParameter`` / ``UninitializedBuffer`` placeholders until their first call;
a forward pre-hook then gives them their shapes, initializes them as the eager layer would,
and turns the module into that layer (``LazyLinear`` becomes ``Linear``).

>>> import funcgrad.torch as torch
>>> import funcgrad.torch.nn as nn
>>> layer = nn.LazyLinear(3)
>>> layer, layer.weight
(LazyLinear(in_features=0, out_features=3, bias=True), <UninitializedParameter>)
>>> layer(torch.ones(2, 5)).shape
torch.Size([2, 3])
>>> layer
Linear(in_features=5, out_features=3, bias=True)
"""

from __future__ import annotations

from typing import Any

from funcgrad.torch._creation import empty
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn.conv import (
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
)
from funcgrad.torch.nn.modules import Linear
from funcgrad.torch.nn.normalization import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
)
from funcgrad.torch.nn.parameter import Parameter

__all__ = [
    "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyConv1d", "LazyConv2d",
    "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
    "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d", "LazyLinear",
    "LazyModuleMixin", "UninitializedBuffer", "UninitializedParameter",
]

_UNINITIALIZED = ("Can't access the shape of an uninitialized parameter or buffer. This error "
                  "usually happens in `load_state_dict` when trying to load an uninitialized "
                  "parameter into an initialized one. Call `forward` to initialize the "
                  "parameters before accessing their attributes.")


class _Uninitialized:
    """What the two placeholders share: no shape yet, and ``materialize``."""

    __slots__ = ()
    cls_to_become: type = Tensor

    @property
    def shape(self) -> Any:
        raise RuntimeError(_UNINITIALIZED)

    def size(self, dim: Any = None) -> Any:
        raise RuntimeError(_UNINITIALIZED)

    def dim(self) -> int:
        raise RuntimeError(_UNINITIALIZED)

    def numel(self) -> int:
        raise RuntimeError(_UNINITIALIZED)

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Give the placeholder its shape (uninitialized memory, as ``torch.empty``) and
        turn it into a Parameter (or a Tensor, for a buffer)."""
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        data = empty(shape, dtype=dtype, device=device)._data
        object.__setattr__(self, "_data", data)
        self.__class__ = self.cls_to_become

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


class UninitializedParameter(_Uninitialized, Parameter):
    """A parameter whose shape is not known yet (see ``LazyModuleMixin``).

    >>> import funcgrad.torch.nn as nn
    >>> p = nn.UninitializedParameter()
    >>> p.materialize((2, 3))
    >>> type(p).__name__, tuple(p.shape)
    ('Parameter', (2, 3))
    """

    __slots__ = ()
    cls_to_become = Parameter

    def __init__(self, requires_grad: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        # A Tensor's slots leave no room for device and dtype: the lazy module keeps them
        # and passes them to materialize.
        Parameter.__init__(self, None, requires_grad)


class UninitializedBuffer(_Uninitialized, Tensor):
    """A buffer whose shape is not known yet (see ``LazyModuleMixin``)."""

    __slots__ = ()
    cls_to_become = Tensor

    def __init__(self, requires_grad: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        Tensor.__init__(self, empty(0)._data, requires_grad=requires_grad)


def _uninitialized(t: Any) -> bool:
    return isinstance(t, _Uninitialized)


class LazyModuleMixin:
    """Infers the uninitialized parameters from the first input, then becomes
    ``cls_to_become``."""

    cls_to_become: type | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(  # type: ignore[attr-defined]
            self._infer_parameters)

    def _materialize(self, t: Any, shape: tuple[int, ...]) -> None:
        t.materialize(shape, **self.__dict__.get("_factory_kwargs", {}))

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer still waits for its shape."""
        stores = (self._parameters, self._buffers)  # type: ignore[attr-defined]
        return any(_uninitialized(t) for store in stores for t in store.values())

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(f"initialize_parameters is not implemented for "
                                  f"{type(self).__name__}")

    def _infer_parameters(self, module: Any, args: Any) -> None:
        from funcgrad.torch._grad_mode import no_grad  # noqa: PLC0415

        with no_grad():
            self.initialize_parameters(*args)
        if self.has_uninitialized_params():
            raise RuntimeError(f"module {type(self).__name__} has not been fully initialized")
        self._initialize_hook.remove()
        self.__dict__.pop("_factory_kwargs", None)
        if self.cls_to_become is not None:
            self.__class__ = self.cls_to_become


class LazyLinear(LazyModuleMixin, Linear):
    """``Linear`` whose ``in_features`` is read from the first input's last axis."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(0, 0, False)
        self._factory_kwargs = {"device": device, "dtype": dtype}
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Any) -> None:  # noqa: A002 - PyTorch's name
        if self.has_uninitialized_params():
            self.in_features = int(input.shape[-1])
            self._materialize(self.weight, (self.out_features, self.in_features))
            if self.bias is not None:
                self._materialize(self.bias, (self.out_features,))
            self.reset_parameters()


class _LazyConvXdMixin(LazyModuleMixin):
    nd = 0
    transposed = False

    def _lazy_init(self, out_channels: int, bias: bool, device: Any, dtype: Any) -> None:
        self._factory_kwargs = {"device": device, "dtype": dtype}
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: Any, *args: Any) -> None:  # noqa: A002
        if not self.has_uninitialized_params():
            return
        rank = len(input.shape)
        if rank not in (self.nd + 1, self.nd + 2):
            raise RuntimeError(f"Expected {self.nd + 1}D (unbatched) or {self.nd + 2}D "
                               f"(batched) input to {type(self).__name__}, but got input of "
                               f"size: {list(input.shape)}")
        self.in_channels = int(input.shape[0 if rank == self.nd + 1 else 1])
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if self.transposed:
            shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
        else:
            shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
        self._materialize(self.weight, shape)
        if self.bias is not None:
            self._materialize(self.bias, (self.out_channels,))
        self.reset_parameters()

    # The attributes of the conv layer this mixes into.
    in_channels: int
    out_channels: int
    groups: int
    kernel_size: tuple[int, ...]
    weight: Any
    bias: Any


def _lazy_conv(base: type, nd: int) -> type:
    transposed = getattr(base, "transposed", False)

    def __init__(self: Any, out_channels: int, kernel_size: Any, stride: Any = 1,  # noqa: N807
                 padding: Any = 0, *rest: Any, **kwargs: Any) -> None:
        device, dtype = kwargs.pop("device", None), kwargs.pop("dtype", None)
        names: tuple[str, ...]
        if transposed:
            names = ("output_padding", "groups", "bias", "dilation", "padding_mode")
        else:
            names = ("dilation", "groups", "bias", "padding_mode")
        opts = dict(zip(names, rest))
        opts.update(kwargs)
        bias = opts.pop("bias", True)
        LazyModuleMixin.__init__(self, 0, 0, kernel_size, stride, padding, **opts, bias=False)
        self._lazy_init(out_channels, bias, device, dtype)

    name = "Lazy" + base.__name__
    doc = (f"``{base.__name__}`` whose ``in_channels`` is read from the first input "
           "(its channel axis).")
    return type(name, (_LazyConvXdMixin, base), {
        "__init__": __init__, "cls_to_become": base, "nd": nd, "transposed": transposed,
        "__doc__": doc, "__module__": __name__, "__qualname__": name})


LazyConv1d = _lazy_conv(Conv1d, 1)
LazyConv2d = _lazy_conv(Conv2d, 2)
LazyConv3d = _lazy_conv(Conv3d, 3)
LazyConvTranspose1d = _lazy_conv(ConvTranspose1d, 1)
LazyConvTranspose2d = _lazy_conv(ConvTranspose2d, 2)
LazyConvTranspose3d = _lazy_conv(ConvTranspose3d, 3)


class _LazyNormBase(LazyModuleMixin):
    affine: bool
    track_running_stats: bool
    num_features: int
    _dims: tuple[int, ...]

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(0, eps, momentum, False, False)
        self._factory_kwargs = {"device": device, "dtype": dtype}
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            from funcgrad.torch._creation import tensor  # noqa: PLC0415

            self.num_batches_tracked = tensor(0, dtype="int64", device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: Any) -> None:  # noqa: A002
        if not self.has_uninitialized_params():
            return
        rank = len(input.shape)
        # The channel axis: 0 for an unbatched instance-norm input, else 1.
        axis = 0 if self._unbatched_ok and rank == self._dims[0] else 1
        self.num_features = int(input.shape[axis])
        n = (self.num_features,)
        if self.affine:
            self._materialize(self.weight, n)
            self._materialize(self.bias, n)
        if self.track_running_stats:
            self._materialize(self.running_mean, n)
            self._materialize(self.running_var, n)
        self.reset_parameters()

    _unbatched_ok = False
    weight: Any
    bias: Any
    running_mean: Any
    running_var: Any


def _lazy_norm(base: type, unbatched_ok: bool) -> type:
    name = "Lazy" + base.__name__
    doc = (f"``{base.__name__}`` whose ``num_features`` is read from the first input "
           "(its channel axis).")
    return type(name, (_LazyNormBase, base), {
        "cls_to_become": base, "_unbatched_ok": unbatched_ok, "__doc__": doc,
        "__module__": __name__, "__qualname__": name})


LazyBatchNorm1d = _lazy_norm(BatchNorm1d, False)
LazyBatchNorm2d = _lazy_norm(BatchNorm2d, False)
LazyBatchNorm3d = _lazy_norm(BatchNorm3d, False)
LazyInstanceNorm1d = _lazy_norm(InstanceNorm1d, True)
LazyInstanceNorm2d = _lazy_norm(InstanceNorm2d, True)
LazyInstanceNorm3d = _lazy_norm(InstanceNorm3d, True)
