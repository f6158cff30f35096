"""``torch.special``: PyTorch's special functions on the face's Tensor operations (the
engine's ``funcgrad.scipy.special``), with PyTorch's promotion (integer inputs enter in the
default float dtype), errors and ``grad_fn`` names. The Bessel, Airy and orthogonal
polynomial functions have no derivative in PyTorch: they are computed on the host and record
no graph.

>>> import funcgrad.torch as torch
>>> torch.special.expit(torch.tensor([0.0]))
tensor([0.5000])
>>> torch.special.xlogy(torch.tensor([0.0, 2.0]), 1.0)
tensor([0., 0.])
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any, cast

import numpy as np
import scipy.special as _sp

import funcgrad.numpy as fnp
from funcgrad.scipy import special as _fsp
from funcgrad.torch import _dtypes as D
from funcgrad.torch._functions import _need_tensor
from funcgrad.torch._tensor import (
    _TYPE_NAMES,
    Tensor,
    _float_input,
    apply_op,
    binary,
    result_dtype,
)
from funcgrad.torch._tensor_math import _xlog1py, _xlogy
from funcgrad.transforms.custom import custom_jvp

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma",
    "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc",
    "gammaincc", "gammaln", "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1",
    "i1e", "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr",
    "log_softmax", "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1",
    "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma",
    "psi", "round", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "sinc", "softmax",
    "spherical_bessel_j0", "xlog1py", "xlogy", "zeta",
]


def _out(result: Tensor, out: Any) -> Tensor:
    """``result`` written into ``out`` as PyTorch's ``out=`` writes it (resized to fit,
    refused while grad is recorded: the error names the operation, ``erf()``)."""
    if out is None:
        return result
    import re  # noqa: PLC0415

    from funcgrad.torch._functions import write_out  # noqa: PLC0415

    node = result.grad_fn
    op = "" if node is None else re.sub(r"Backward\d*$", "", type(node).__name__)
    name = re.sub(r"(?<!^)(?=[A-Z])", "_", op).lower() or "special"
    return cast(Tensor, write_out(name, out, result, (result,), stacklevel=4))


def _doc(fn: Callable[..., Any], name: str, what: str, call: str = "torch.tensor([0.5])"
         ) -> None:
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``torch.special.{name}``: {what}.\n\n"
                  f"    >>> import funcgrad.torch as torch\n"
                  f"    >>> torch.special.{name}({call}).shape\n    torch.Size([1])\n")


def _method(name: str, method: str, what: str) -> Callable[..., Tensor]:
    """A function that is the Tensor method ``method`` (its promotion, node and errors)."""
    def fn(input: Any, *, out: Any = None) -> Tensor:  # noqa: A002 - PyTorch's name
        t = _float_input(_need_tensor(f"special_{name}", input))
        return _out(cast(Tensor, getattr(t, method)()), out)

    _doc(fn, name, what)
    return fn


def _engine(name: str, op: str, engine: Callable[[Any], Any], what: str
            ) -> Callable[..., Tensor]:
    """A unary function recorded as ``op`` (``grad_fn`` ``<op>Backward0``)."""
    def fn(input: Any, *, out: Any = None) -> Tensor:  # noqa: A002
        t = _float_input(_need_tensor(f"special_{name}", input))
        return _out(cast(Tensor, apply_op(op, engine, t)), out)

    _doc(fn, name, what)
    return fn


erf = _method("erf", "erf", "the error function")
erfc = _method("erfc", "erfc", "the complementary error function ``1 - erf(x)``")
erfinv = _method("erfinv", "erfinv", "the inverse error function")
expit = _method("expit", "sigmoid", "the logistic sigmoid ``1 / (1 + exp(-x))``")
exp2 = _method("exp2", "exp2", "``2 ** x``")
expm1 = _method("expm1", "expm1", "``exp(x) - 1``, accurate near 0")
log1p = _method("log1p", "log1p", "``log(1 + x)``, accurate near 0")
gammaln = _method("gammaln", "lgamma", "the log of the absolute value of the gamma function")
digamma = _method("digamma", "digamma", "the logarithmic derivative of the gamma function")
psi = _method("psi", "digamma", "digamma, the logarithmic derivative of gamma")
i0 = _method("i0", "i0", "the modified Bessel function of the first kind, order 0")
sinc = _method("sinc", "sinc", "the normalized sinc ``sin(pi x) / (pi x)``")

entr = _engine("entr", "SpecialEntr", _fsp.entr, "the entropy term ``-x log x``")
erfcx = _engine("erfcx", "SpecialErfcx", _fsp.erfcx,
                "the scaled complementary error function ``exp(x**2) erfc(x)``")
i0e = _engine("i0e", "SpecialI0E", _fsp.i0e, "``exp(-|x|) i0(x)``")
@custom_jvp
def _i1(x: Any) -> Any:
    return fnp.exp(fnp.abs(x)) * _fsp.i1e(x)


def _i1_jvp(primals: Any, tangents: Any) -> Any:
    # PyTorch's i1_backward: i0(x) - i1(x) / x, and 0.5 where |x| <= eps (0 / 0 there).
    (x,), (tx,) = primals, tangents
    out = _i1(x)
    eps = np.finfo(x.dtype).eps
    big = fnp.abs(x) > eps
    safe = fnp.where(big, x, fnp.full_like(x, eps))
    return out, tx * fnp.where(big, fnp.i0(safe) - out / safe, fnp.full_like(x, 0.5))


_i1.defjvp(_i1_jvp)


i1 = _engine("i1", "SpecialI1", _i1,
             "the modified Bessel function of the first kind, order 1")
i1e = _engine("i1e", "SpecialI1E", _fsp.i1e, "``exp(-|x|) i1(x)``")
# PyTorch's ndtr is composite, ``(1 + erf(x / sqrt 2)) * 0.5``: its last node is a Mul.
ndtr = _engine("ndtr", "Mul:1", _fsp.ndtr, "the standard normal CDF")
ndtri = _engine("ndtri", "SpecialNdtri", _fsp.ndtri, "the inverse of the standard normal CDF")
log_ndtr = _engine("log_ndtr", "SpecialLogNdtr", _fsp.log_ndtr,
                   "the log of the standard normal CDF")


def logit(input: Any, eps: Any = None, *, out: Any = None) -> Tensor:  # noqa: A002
    """``log(p / (1 - p))``, ``p`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given.

    >>> import funcgrad.torch as torch
    >>> torch.special.logit(torch.tensor([0.5]))
    tensor([0.])
    """
    return _out(cast(Any, _need_tensor("special_logit", input)).logit(eps), out)


def polygamma(n: builtins.int, input: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """The ``n``-th derivative of digamma.

    >>> import funcgrad.torch as torch
    >>> torch.special.polygamma(1, torch.tensor([1.0]))
    tensor([1.6449])
    """
    return _out(cast(Any, _need_tensor("special_polygamma", input)).polygamma(n), out)


def multigammaln(input: Any, p: builtins.int, *, out: Any = None) -> Tensor:  # noqa: A002
    """The log of the multivariate gamma function of dimension ``p``.

    >>> import funcgrad.torch as torch
    >>> torch.special.multigammaln(torch.tensor([2.0]), 1)
    tensor([0.])
    """
    return _out(cast(Any, _need_tensor("special_multigammaln", input)).mvlgamma(p), out)


def round(input: Any, *, decimals: builtins.int = 0, out: Any = None) -> Tensor:  # noqa: A001, A002
    """Rounding half to even, to ``decimals`` decimal places.

    >>> import funcgrad.torch as torch
    >>> torch.special.round(torch.tensor([1.5, 2.5]))
    tensor([2., 2.])
    """
    t = _need_tensor("special_round", input)
    if not (t.dtype.is_floating_point or t.dtype.is_complex):
        kernel = "round_vml_cpu" if decimals == 0 else "round_cpu"
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_TYPE_NAMES.get(t.dtype.name, t.dtype.name)}'")
    return _out(cast(Any, t).round(decimals=decimals), out)


def softmax(input: Any, dim: builtins.int, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """``exp(x) / sum(exp(x))`` along ``dim`` (in ``dtype`` when given).

    >>> import funcgrad.torch as torch
    >>> torch.special.softmax(torch.tensor([0.0, 0.0]), 0)
    tensor([0.5000, 0.5000])
    """
    t = _need_tensor("special_softmax", input)
    return cast(Tensor, cast(Any, t).softmax(dim, dtype=dtype))


def log_softmax(input: Any, dim: builtins.int, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """``x - logsumexp(x)`` along ``dim`` (in ``dtype`` when given).

    >>> import funcgrad.torch as torch
    >>> torch.special.log_softmax(torch.tensor([0.0, 0.0]), 0)
    tensor([-0.6931, -0.6931])
    """
    t = _need_tensor("special_log_softmax", input)
    return cast(Tensor, cast(Any, t).log_softmax(dim, dtype=dtype))


def logsumexp(input: Any, dim: Any, keepdim: builtins.bool = False, *,  # noqa: A002
              out: Any = None) -> Tensor:
    """``log(sum(exp(x)))`` along ``dim``, computed stably.

    >>> import funcgrad.torch as torch
    >>> torch.special.logsumexp(torch.tensor([0.0, 0.0]), 0)
    tensor(0.6931)
    """
    t = _need_tensor("special_logsumexp", input)
    return _out(cast(Any, t).logsumexp(dim, keepdim), out)


# ------------------------------------------------------------------ binary functions


def _numbers_error(name: str, a: Any, b: Any) -> TypeError:
    return TypeError(
        f"special_{name}() received an invalid combination of arguments - got "
        f"({type(a).__name__}, {type(b).__name__}), but expected one of:\n"
        f" * (Tensor input, Tensor other, *, Tensor out = None)\n"
        f" * (Number self, Tensor other, *, Tensor out = None)\n"
        f" * (Tensor input, Number other, *, Tensor out = None)\n")


def _binary_fn(name: str, op: str, f: Callable[[Any, Any], Any], what: str
               ) -> Callable[..., Tensor]:
    """A binary function: ``op`` for two tensors, ``op``1 for a number first and ``op``2
    for a number second, as PyTorch's overloads name their nodes."""
    def fn(input: Any, other: Any, *, out: Any = None) -> Tensor:  # noqa: A002
        ta, tb = isinstance(input, Tensor), isinstance(other, Tensor)
        if not (ta or tb):
            raise _numbers_error(name, input, other)
        node = op if ta and tb else (f"{op}:1" if tb else f"{op}:2")
        return _out(binary(node, f, input, other, true_div=True, shown=False), out)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``torch.special.{name}``: {what}.\n\n"
                  f"    >>> import funcgrad.torch as torch\n"
                  f"    >>> torch.special.{name}(torch.tensor([2.0]), 1.0).shape\n"
                  f"    torch.Size([1])\n")
    return fn


xlogy = _binary_fn("xlogy", "Xlogy", _xlogy, "``x * log(y)``, 0 where ``x == 0``")
xlog1py = _binary_fn("xlog1py", "SpecialXlog1Py", _xlog1py,
                     "``x * log1p(y)``, 0 where ``x == 0``")
zeta = _binary_fn("zeta", "SpecialZeta", lambda x, q: _fsp.zeta(x, q),
                  "the Hurwitz zeta function ``sum_k (k + q) ** -x``")


def _two_tensors(name: str, input: Any, other: Any) -> tuple[Tensor, Tensor]:
    a = _need_tensor(f"special_{name}", input)
    if not isinstance(other, Tensor):
        raise TypeError(f"special_{name}(): argument 'other' (position 2) must be Tensor, "
                        f"not {type(other).__name__}")
    return a, other


def gammainc(input: Any, other: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """The regularized lower incomplete gamma function ``P(input, other)``.

    >>> import funcgrad.torch as torch
    >>> torch.special.gammainc(torch.tensor([1.0]), torch.tensor([0.0]))
    tensor([0.])
    """
    a, x = _two_tensors("gammainc", input, other)
    return _out(cast(Any, a).igamma(x), out)


def gammaincc(input: Any, other: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """The regularized upper incomplete gamma function ``Q(input, other)``.

    >>> import funcgrad.torch as torch
    >>> torch.special.gammaincc(torch.tensor([1.0]), torch.tensor([0.0]))
    tensor([1.])
    """
    a, x = _two_tensors("gammaincc", input, other)
    return _out(cast(Any, a).igammac(x), out)


# ------------------------------------------- functions PyTorch does not differentiate


def _host(name: str, engine: Callable[[Any], Any], what: str) -> Callable[..., Tensor]:
    def fn(input: Any, *, out: Any = None) -> Tensor:  # noqa: A002
        t = _float_input(_need_tensor(f"special_{name}", input))
        v = np.asarray(t._host())
        with np.errstate(all="ignore"):
            r = np.asarray(engine(v.astype(np.float64))).astype(v.dtype)
        return _out(Tensor._from_data(r), out)

    _doc(fn, name, what)
    return fn


def _spherical_j0(x: Any) -> Any:
    return np.where(x == 0, 1.0, np.sin(x) / np.where(x == 0, 1.0, x))


airy_ai = _host("airy_ai", lambda x: _sp.airy(x)[0], "the Airy function Ai")
bessel_j0 = _host("bessel_j0", _sp.j0, "the Bessel function of the first kind, order 0")
bessel_j1 = _host("bessel_j1", _sp.j1, "the Bessel function of the first kind, order 1")
bessel_y0 = _host("bessel_y0", _sp.y0, "the Bessel function of the second kind, order 0")
bessel_y1 = _host("bessel_y1", _sp.y1, "the Bessel function of the second kind, order 1")
modified_bessel_i0 = _host("modified_bessel_i0", _sp.i0,
                           "the modified Bessel function of the first kind, order 0")
modified_bessel_i1 = _host("modified_bessel_i1", _sp.i1,
                           "the modified Bessel function of the first kind, order 1")
modified_bessel_k0 = _host("modified_bessel_k0", _sp.k0,
                           "the modified Bessel function of the second kind, order 0")
modified_bessel_k1 = _host("modified_bessel_k1", _sp.k1,
                           "the modified Bessel function of the second kind, order 1")
scaled_modified_bessel_k0 = _host("scaled_modified_bessel_k0", _sp.k0e, "``exp(x) k0(x)``")
scaled_modified_bessel_k1 = _host("scaled_modified_bessel_k1", _sp.k1e, "``exp(x) k1(x)``")
spherical_bessel_j0 = _host("spherical_bessel_j0", _spherical_j0,
                            "the spherical Bessel function of the first kind, order 0")


# (P_0, P_1, step): P_{k+1} = step(k, x, P_k, P_{k-1}).
_Step = Callable[[Any, Any, Any, Any], Any]
_FAMILIES: dict[str, tuple[Callable[[Any], Any], _Step]] = {
    "chebyshev_polynomial_t": (lambda x: x, lambda k, x, p, q: 2 * x * p - q),
    "chebyshev_polynomial_u": (lambda x: 2 * x, lambda k, x, p, q: 2 * x * p - q),
    "chebyshev_polynomial_v": (lambda x: 2 * x - 1, lambda k, x, p, q: 2 * x * p - q),
    "chebyshev_polynomial_w": (lambda x: 2 * x + 1, lambda k, x, p, q: 2 * x * p - q),
    "hermite_polynomial_h": (lambda x: 2 * x, lambda k, x, p, q: 2 * x * p - 2 * k * q),
    "hermite_polynomial_he": (lambda x: x, lambda k, x, p, q: x * p - k * q),
    "laguerre_polynomial_l": (lambda x: 1 - x,
                              lambda k, x, p, q: ((2 * k + 1 - x) * p - k * q) / (k + 1)),
    "legendre_polynomial_p": (lambda x: x,
                              lambda k, x, p, q: ((2 * k + 1) * x * p - k * q) / (k + 1)),
}


def _polynomial(x: Any, n: Any, first: Callable[[Any], Any], step: _Step) -> Any:
    n = np.trunc(n).astype(np.int64)
    x, n = np.broadcast_arrays(x, n)
    out = np.where(n == 0, 1.0, 0.0)
    prev, cur = np.ones_like(x), first(x)
    out = np.where(n == 1, cur, out)
    for k in builtins.range(1, builtins.int(n.max(initial=0))):
        prev, cur = cur, step(k, x, cur, prev)
        out = np.where(n == k + 1, cur, out)
    return out


def _poly_fn(name: str, shifted: builtins.bool) -> Callable[..., Tensor]:
    base = name.removeprefix("shifted_")
    first, step = _FAMILIES[base]

    def fn(input: Any, n: Any, *, out: Any = None) -> Tensor:  # noqa: A002
        if not (isinstance(input, Tensor) or isinstance(n, Tensor)):
            raise _numbers_error(name, input, n)
        dt = result_dtype(input, n)
        if not dt.is_floating_point:
            dt = D.get_default_dtype()
        xv = np.asarray(input._host() if isinstance(input, Tensor) else input, np.float64)
        nv = np.asarray(n._host() if isinstance(n, Tensor) else n, np.float64)
        if shifted:
            xv = 2 * xv - 1
        with np.errstate(all="ignore"):
            r = _polynomial(xv, nv, first, step)
        return _out(Tensor._from_data(np.asarray(r).astype(dt.np)), out)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``torch.special.{name}``: the polynomial of degree ``n`` at ``input`` "
                  f"(no graph, as in PyTorch).\n\n"
                  f"    >>> import funcgrad.torch as torch\n"
                  f"    >>> torch.special.{name}(torch.tensor([0.5]), 0)\n"
                  f"    tensor([1.])\n")
    return fn


chebyshev_polynomial_t = _poly_fn("chebyshev_polynomial_t", False)
chebyshev_polynomial_u = _poly_fn("chebyshev_polynomial_u", False)
chebyshev_polynomial_v = _poly_fn("chebyshev_polynomial_v", False)
chebyshev_polynomial_w = _poly_fn("chebyshev_polynomial_w", False)
hermite_polynomial_h = _poly_fn("hermite_polynomial_h", False)
hermite_polynomial_he = _poly_fn("hermite_polynomial_he", False)
laguerre_polynomial_l = _poly_fn("laguerre_polynomial_l", False)
legendre_polynomial_p = _poly_fn("legendre_polynomial_p", False)
shifted_chebyshev_polynomial_t = _poly_fn("shifted_chebyshev_polynomial_t", True)
shifted_chebyshev_polynomial_u = _poly_fn("shifted_chebyshev_polynomial_u", True)
shifted_chebyshev_polynomial_v = _poly_fn("shifted_chebyshev_polynomial_v", True)
shifted_chebyshev_polynomial_w = _poly_fn("shifted_chebyshev_polynomial_w", True)
