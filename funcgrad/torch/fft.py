"""``torch.fft``: discrete Fourier transforms with PyTorch's signatures (``n=``/``s=``,
``dim=``, ``norm=``) on the engine's FFT (``funcgrad.numpy.fft``). Real inputs are
promoted to the default float dtype first and give complex64 (complex128 for float64).

>>> import funcgrad.torch as torch
>>> torch.fft.fft(torch.tensor([1.0, 0.0, 0.0, 0.0]))
tensor([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
>>> torch.fft.rfftfreq(4)
tensor([0.0000, 0.2500, 0.5000])
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.numpy import fft as _fft
from funcgrad.torch import _dtypes as D
from funcgrad.torch._autocast import autocast_namespace
from funcgrad.torch._functions import _need_tensor
from funcgrad.torch._tensor import Tensor, apply_op

_NORMS = (None, "backward", "ortho", "forward")


def _input(name: str, x: Any, complex_ok: builtins.bool = True) -> Tensor:
    t = _need_tensor(f"fft_{name}", x)
    if not (t.dtype.is_floating_point or t.dtype.is_complex):
        t = t.to(D.get_default_dtype())
    if t.dtype in (D.float16, D.bfloat16):
        t = t.to(D.float32)
    if t.dtype.is_complex and not complex_ok:
        raise RuntimeError(f"{name} expects a real input tensor, but got "
                           f"{t.dtype.name.capitalize()}")
    return t


def _norm(norm: Any) -> Any:
    if norm not in _NORMS:
        raise RuntimeError(f"Invalid normalization mode: \"{norm}\"")
    return norm


# PyTorch's last node for a real input where it is not FftR2C: the inverse transforms of
# real inputs are conjugated forward ones, and the n-dimensional complex transforms
# promote a real input to complex first.
_REAL_INPUT_NODES = {"ifft": "Conj", "ihfft": "Conj", "fft2": "FftC2C", "ifft2": "FftC2C",
                     "fftn": "FftC2C", "ifftn": "FftC2C"}


def _node(t: Tensor, out_complex: builtins.bool, name: str) -> str:
    if not t.dtype.is_complex:
        return _REAL_INPUT_NODES.get(name, "FftR2C" if out_complex else "FftC2R")
    return "FftC2C" if out_complex else "FftC2R"


def _one_dim(name: str, engine: Callable[..., Any], real_in: builtins.bool,
             complex_out: builtins.bool) -> Callable[..., Tensor]:
    def fn(input: Tensor, n: builtins.int | None = None, dim: builtins.int = -1,  # noqa: A002
           norm: str | None = None, *, out: Any = None) -> Tensor:
        t = _input(name, input, complex_ok=not real_in)
        if out is not None:
            raise RuntimeError(f"fft.{name}: out= is not supported by funcgrad")
        nm = _norm(norm)
        if n is not None and n < 1:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")
        op = _node(t, complex_out, name)
        return cast(Tensor, apply_op(op, lambda v: engine(v, n, dim, nm), t))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``torch.fft.{name}``: ``numpy.fft.{name}`` along ``dim``.\n\n"
                  f"    >>> import funcgrad.torch as torch\n"
                  f"    >>> torch.fft.{name}(torch.ones(4)).shape[0] > 0\n    True\n")
    return fn


def _n_dims(name: str, engine: Callable[..., Any], real_in: builtins.bool,
            complex_out: builtins.bool, default_dim: Any) -> Callable[..., Tensor]:
    def fn(input: Tensor, s: Sequence[builtins.int] | None = None,  # noqa: A002
           dim: Any = default_dim, norm: str | None = None, *, out: Any = None) -> Tensor:
        t = _input(name, input, complex_ok=not real_in)
        if out is not None:
            raise RuntimeError(f"fft.{name}: out= is not supported by funcgrad")
        nm = _norm(norm)
        axes = dim
        if axes is None:
            axes = tuple(range(-len(s), 0)) if s is not None else tuple(range(t.dim()))
        axes = (axes,) if isinstance(axes, builtins.int) else tuple(axes)
        return cast(Tensor, apply_op(_node(t, complex_out, name), lambda v: engine(
            v, None if s is None else tuple(s), axes, nm), t))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``torch.fft.{name}``: ``numpy.fft.{name}`` over ``dim``.\n\n"
                  f"    >>> import funcgrad.torch as torch\n"
                  f"    >>> torch.fft.{name}(torch.ones(2, 2)).dim()\n    2\n")
    return fn


fft = _one_dim("fft", _fft.fft, False, True)
ifft = _one_dim("ifft", _fft.ifft, False, True)
rfft = _one_dim("rfft", _fft.rfft, True, True)
irfft = _one_dim("irfft", _fft.irfft, False, False)
hfft = _one_dim("hfft", _fft.hfft, False, False)
ihfft = _one_dim("ihfft", _fft.ihfft, True, True)
fft2 = _n_dims("fft2", _fft.fftn, False, True, (-2, -1))
ifft2 = _n_dims("ifft2", _fft.ifftn, False, True, (-2, -1))
rfft2 = _n_dims("rfft2", _fft.rfftn, True, True, (-2, -1))
irfft2 = _n_dims("irfft2", _fft.irfftn, False, False, (-2, -1))
fftn = _n_dims("fftn", _fft.fftn, False, True, None)
ifftn = _n_dims("ifftn", _fft.ifftn, False, True, None)
rfftn = _n_dims("rfftn", _fft.rfftn, True, True, None)
irfftn = _n_dims("irfftn", _fft.irfftn, False, False, None)


def _freq(n: builtins.int, d: builtins.float, dtype: Any, requires_grad: builtins.bool,
          values: Callable[[builtins.int, builtins.float], np.ndarray]) -> Tensor:
    dt = D.get_default_dtype() if dtype is None else D.to_torch(dtype)
    return Tensor(values(n, d).astype(dt.np), requires_grad=requires_grad)


def fftfreq(n: builtins.int, d: builtins.float = 1.0, *, dtype: Any = None,
            device: Any = None, layout: Any = None, requires_grad: builtins.bool = False,
            out: Any = None) -> Tensor:
    """The sample frequencies of an ``n``-point FFT with sample spacing ``d``.

    >>> import funcgrad.torch as torch
    >>> torch.fft.fftfreq(4)
    tensor([ 0.0000,  0.2500, -0.5000, -0.2500])
    """
    return _freq(n, d, dtype, requires_grad, np.fft.fftfreq)


def rfftfreq(n: builtins.int, d: builtins.float = 1.0, *, dtype: Any = None,
             device: Any = None, layout: Any = None, requires_grad: builtins.bool = False,
             out: Any = None) -> Tensor:
    """The non-negative sample frequencies of an ``n``-point real FFT.

    >>> import funcgrad.torch as torch
    >>> torch.fft.rfftfreq(5)
    tensor([0.0000, 0.2000, 0.4000])
    """
    return _freq(n, d, dtype, requires_grad, np.fft.rfftfreq)


def fftshift(input: Tensor, dim: Any = None) -> Tensor:  # noqa: A002
    """The zero frequency moved to the centre.

    >>> import funcgrad.torch as torch
    >>> torch.fft.fftshift(torch.tensor([0, 1, 2, -2, -1]))
    tensor([-2, -1,  0,  1,  2])
    """
    t = _need_tensor("fft_fftshift", input)
    axes = tuple(range(t.dim())) if dim is None else dim
    return cast(Tensor, apply_op("Roll", lambda v: fnp.fft.fftshift(v, axes), t))


def ifftshift(input: Tensor, dim: Any = None) -> Tensor:  # noqa: A002
    """The inverse of ``fftshift``.

    >>> import funcgrad.torch as torch
    >>> torch.fft.ifftshift(torch.tensor([-2, -1, 0, 1, 2]))
    tensor([ 0,  1,  2, -2, -1])
    """
    t = _need_tensor("fft_ifftshift", input)
    axes = tuple(range(t.dim())) if dim is None else dim
    return cast(Tensor, apply_op("Roll", lambda v: fnp.fft.ifftshift(v, axes), t))


__all__ = ["fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifft2", "ifftn",
           "ifftshift", "ihfft", "irfft", "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq",
           "rfftn"]

# Autocast: these functions under PyTorch's operator names (``fft_<name>``).
autocast_namespace(globals(), prefix="fft_", names=__all__)
