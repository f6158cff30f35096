"""Special functions whose values come from SciPy at run time: ``sici``, ``fresnel`` and
``owens_t``, with JAX's derivative rules.

The values are a host callback (``pure_callback`` into ``scipy.special``), so they also run
under ``jit`` and ``vmap``; the derivatives are closed forms written with funcgrad
operations (``custom_jvp``), so every order of ``grad``/``jvp`` works. On a GPU the values
are computed on the host (the callback's copy there and back): JAX evaluates its series
on the device.

>>> from funcgrad.scipy.special import fresnel, sici
>>> [round(float(v), 6) for v in sici(1.0)]
[0.946083, 0.337404]
>>> [round(float(v), 6) for v in fresnel(1.0)]
[0.438259, 0.779893]
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad import lax
from funcgrad.errors import DTypeError
from funcgrad.ir import ShapeDtypeStruct
from funcgrad.numpy._core import promote_inexact
from funcgrad.transforms.custom import custom_jvp


def _args(name: str, *xs: Any) -> list[Any]:
    out = promote_inexact(*xs)
    if out[0].dtype.kind == "c":
        raise DTypeError(f"{name} does not support complex inputs (JAX's neither)")
    if len(out) > 1:
        out = list(jnp.broadcast_arrays(*out))
    return out


def _host_values(name: str, n_out: int, *xs: Any) -> Any:
    """``scipy.special.<name>(*xs)`` at run time, in the operands' dtype and shape (real
    parts: SciPy's real loops already give JAX's real values)."""
    from funcgrad.api import pure_callback  # noqa: PLC0415 - the face's callback machinery

    dt, shape = xs[0].dtype, xs[0].shape

    def callback(*args: Any) -> Any:
        import scipy.special  # noqa: PLC0415 - loaded on first use

        with np.errstate(all="ignore"):
            out = getattr(scipy.special, name)(*[np.asarray(a) for a in args])
        outs = out if n_out > 1 else (out,)
        res = tuple(np.asarray(np.real(o), dt) for o in outs)
        return res if n_out > 1 else res[0]

    spec = ShapeDtypeStruct(shape, dt)
    return pure_callback(callback, (spec,) * n_out if n_out > 1 else spec, *xs,
                         vmap_method="broadcast_all")


@custom_jvp
def _sici(x: Any) -> Any:
    si, ci = _host_values("sici", 2, x)
    return si, ci


@_sici.defjvp
def _sici_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (t,) = primals, tangents
    # d Si = sin(x) / x (1 at 0, through sinc), d Ci = cos(x) / x (inf at 0, as JAX)
    return _sici(x), (jnp.sinc(x / math.pi) * t, jnp.cos(x) / x * t)


def sici(x: Any) -> tuple[Any, Any]:
    """The sine and cosine integrals ``(Si(x), Ci(x))`` (for x < 0, Ci's real part, as JAX).

    >>> [round(float(v), 4) for v in sici(2.0)]
    [1.6054, 0.423]
    """
    (x,) = _args("sici", x)
    si, ci = _sici(x)
    return si, ci


@custom_jvp
def _fresnel(x: Any) -> Any:
    s, c = _host_values("fresnel", 2, x)
    return s, c


@_fresnel.defjvp
def _fresnel_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (t,) = primals, tangents
    arg = (math.pi / 2) * x * x
    return _fresnel(x), (jnp.sin(arg) * t, jnp.cos(arg) * t)


def fresnel(x: Any) -> tuple[Any, Any]:
    """The Fresnel integrals ``(S(x), C(x))`` of ``sin`` and ``cos`` of ``pi t**2 / 2``.

    >>> [round(float(v), 4) for v in fresnel(0.5)]
    [0.0647, 0.4923]
    """
    (x,) = _args("fresnel", x)
    s, c = _fresnel(x)
    return s, c


@custom_jvp
def _owens_t(h: Any, a: Any) -> Any:
    return _host_values("owens_t", 1, h, a)


@_owens_t.defjvp
def _owens_t_jvp(primals: Any, tangents: Any) -> Any:
    (h, a), (th, ta) = primals, tangents
    out = _owens_t(h, a)
    # T(h, a) = 1/(2 pi) int_0^a exp(-h^2 (1 + x^2) / 2) / (1 + x^2) dx
    dh = -jnp.exp(-0.5 * h * h) * lax.erf(a * h / math.sqrt(2.0)) / (
        2.0 * math.sqrt(2.0 * math.pi))
    one_a2 = 1.0 + a * a
    da = jnp.exp(-0.5 * h * h * one_a2) / (2.0 * math.pi * one_a2)
    return out, dh * th + da * ta


def owens_t(h: Any, a: Any) -> Any:
    """Owen's T function ``T(h, a)``, the bivariate normal probability of a wedge.

    >>> round(float(owens_t(0.0, 1.0)), 6)
    0.125
    """
    h, a = _args("owens_t", h, a)
    return _owens_t(h, a)


__all__ = ["fresnel", "owens_t", "sici"]
