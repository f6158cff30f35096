"""``torch.autocast``: regions where operations run in float16/bfloat16 or float32 by
PyTorch's per-operation lists (funcgrad.torch._autocast holds the lists).

>>> import funcgrad.torch as torch
>>> w = torch.ones(3, 3, requires_grad=True)
>>> with torch.autocast("cpu", dtype=torch.bfloat16):
...     y = w @ w
>>> y.dtype, y.float().sum().item()
(torch.bfloat16, 27.0)
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

from funcgrad.torch import _autocast as A
from funcgrad.torch import _dtypes as D
from funcgrad.torch._device import cuda_available
from funcgrad.torch._device import device as _device

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]

_SUPPORTED = ("cpu", "cuda")
F = TypeVar("F", bound=Callable[..., Any])


def _device_type(device_type: Any) -> str:
    kind = _device(device_type).type
    if kind not in _SUPPORTED:
        raise RuntimeError(f"User specified an unsupported autocast device_type '{kind}'")
    return kind


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast runs on ``device_type`` (``"cpu"`` and ``"cuda"`` here).

    >>> is_autocast_available("cuda")
    True
    """
    return _device(device_type).type in _SUPPORTED


class autocast:  # noqa: N801 - PyTorch's name
    """A region (``with``) or a function (decorator) whose operations autocast.

    >>> import funcgrad.torch as torch
    >>> with torch.autocast("cpu"):
    ...     torch.get_autocast_dtype("cpu"), torch.is_autocast_enabled("cpu")
    (torch.bfloat16, True)
    """

    def __init__(self, device_type: str, dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = _device_type(device_type)
        self.fast_dtype = A.STATE.dtype[self.device] if dtype is None else D.to_torch(dtype)
        self._cache_enabled = A.STATE.cache_enabled if cache_enabled is None else \
            bool(cache_enabled)
        if enabled:
            if self.device == "cuda":
                # (bfloat16 is supported, natively or emulated, wherever CUDA is: PyTorch's
                # is_bf16_supported() default)
                if not cuda_available():
                    warnings.warn("CUDA is not available or torch_xla is imported. Disabling "
                                  "autocast.", stacklevel=2)
                    enabled = False
            elif self.fast_dtype not in (D.bfloat16, D.float16):
                warnings.warn("In CPU autocast, but the target dtype is not supported. "
                              "Disabling autocast.\nCPU Autocast only supports dtypes of "
                              "torch.bfloat16, torch.float16 currently.", stacklevel=2)
                enabled = False
        self._enabled = bool(enabled)

    def __enter__(self) -> autocast:
        s = A.STATE
        self.prev_cache_enabled = s.cache_enabled
        self.prev = s.enabled[self.device]
        self.prev_fastdtype = s.dtype[self.device]
        A.set_enabled(self.device, self._enabled)
        s.dtype[self.device] = self.fast_dtype
        s.nesting += 1
        s.cache_enabled = self._cache_enabled
        return self

    def __exit__(self, *exc: object) -> None:
        s = A.STATE
        s.nesting -= 1
        if s.nesting == 0:
            s.cache.clear()
        A.set_enabled(self.device, self.prev)
        s.dtype[self.device] = self.prev_fastdtype
        s.cache_enabled = self.prev_cache_enabled

    def __call__(self, func: F) -> F:
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. Did "
                "you mean to use autocast as a context manager? For example:\n"
                "    with torch.autocast(device_type=...):\n"
                "        output = model(input)")

        @functools.wraps(func)
        def decorated(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return decorated  # type: ignore[return-value]


def _cast(value: Any, device_type: str, dtype: D.dtype) -> Any:
    """Floating tensors of ``device_type`` (not float64) in ``value``, cast to ``dtype``."""
    from funcgrad.torch._tensor import Tensor  # noqa: PLC0415

    if isinstance(value, Tensor):
        return value.to(dtype) if A._eligible(value, device_type) else value
    if isinstance(value, dict):
        return {k: _cast(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    return value


def custom_fwd(fwd: Any = None, *, device_type: str, cast_inputs: Any = None) -> Any:
    """Decorate an ``autograd.Function``'s ``forward``: with ``cast_inputs``, inside an
    autocast region its floating inputs are cast to that dtype and it runs with autocast
    off; without, it runs in the current state (``custom_bwd`` then replays that state)."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    kind = _device_type(device_type)

    @functools.wraps(fwd)
    def decorate_fwd(*args: Any, **kwargs: Any) -> Any:
        args[0]._dtype = A.STATE.dtype[kind]
        if cast_inputs is None:
            args[0]._fwd_used_autocast = A.STATE.enabled[kind]
            return fwd(*args, **kwargs)
        args[0]._fwd_used_autocast = False
        if A.STATE.enabled[kind]:
            with autocast(device_type=kind, enabled=False):
                to = D.to_torch(cast_inputs)
                return fwd(*_cast(args, kind, to), **_cast(kwargs, kind, to))
        return fwd(*args, **kwargs)

    return decorate_fwd


def custom_bwd(bwd: Any = None, *, device_type: str) -> Any:
    """Decorate an ``autograd.Function``'s ``backward``: it runs in the autocast state its
    ``forward`` ran in."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    kind = _device_type(device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args: Any, **kwargs: Any) -> Any:
        with autocast(device_type=kind, enabled=args[0]._fwd_used_autocast,
                      dtype=args[0]._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd


# ------------------------------------------------- torch.* state functions


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether autocast is on for ``device_type`` (CUDA without an argument)."""
    return A.STATE.enabled[_device_type(device_type)]


def set_autocast_enabled(*args: Any) -> None:
    """``set_autocast_enabled(device_type, enabled)`` (or ``(enabled)`` for CUDA)."""
    device_type, enabled = ("cuda", args[0]) if len(args) == 1 else args
    A.set_enabled(_device_type(device_type), bool(enabled))


def get_autocast_dtype(device_type: str) -> D.dtype:
    """The dtype autocast lowers to on ``device_type``."""
    return A.STATE.dtype[_device_type(device_type)]


def set_autocast_dtype(device_type: str, dtype: Any) -> None:
    A.STATE.dtype[_device_type(device_type)] = D.to_torch(dtype)


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.",
                  DeprecationWarning, stacklevel=3)


def is_autocast_cpu_enabled() -> bool:
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return A.STATE.enabled["cpu"]


def set_autocast_cpu_enabled(enabled: bool) -> None:
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    A.set_enabled("cpu", bool(enabled))


def get_autocast_cpu_dtype() -> D.dtype:
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return A.STATE.dtype["cpu"]


def get_autocast_gpu_dtype() -> D.dtype:
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return A.STATE.dtype["cuda"]


def set_autocast_cpu_dtype(dtype: Any) -> None:
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    A.STATE.dtype["cpu"] = D.to_torch(dtype)


def set_autocast_gpu_dtype(dtype: Any) -> None:
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    A.STATE.dtype["cuda"] = D.to_torch(dtype)


def autocast_increment_nesting() -> int:
    A.STATE.nesting += 1
    return A.STATE.nesting


def autocast_decrement_nesting() -> int:
    A.STATE.nesting -= 1
    return A.STATE.nesting


def clear_autocast_cache() -> None:
    """Drop the region's cached lower-precision copies of weights."""
    A.STATE.cache.clear()


def is_autocast_cache_enabled() -> bool:
    return A.STATE.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    A.STATE.cache_enabled = bool(enabled)


STATE_FUNCTIONS = {f.__name__: f for f in (
    is_autocast_enabled, set_autocast_enabled, get_autocast_dtype, set_autocast_dtype,
    is_autocast_cpu_enabled, set_autocast_cpu_enabled, get_autocast_cpu_dtype,
    get_autocast_gpu_dtype, set_autocast_cpu_dtype, set_autocast_gpu_dtype,
    autocast_increment_nesting, autocast_decrement_nesting, clear_autocast_cache,
    is_autocast_cache_enabled, set_autocast_cache_enabled)}
