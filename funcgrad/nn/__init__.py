"""``jax.nn``: activations, softmax and friends, with JAX's signatures and defaults.

These are also the implementations the PyTorch face calls (``torch.relu``,
``F.softmax``, ``nn.GELU``...): one softmax, one sigmoid, one relu for both faces. Each
computes in the dtype of its (inexact) input.

>>> import funcgrad.numpy as jnp
>>> from funcgrad import nn
>>> nn.relu(jnp.array([-1.0, 2.0]))
Array([0., 2.], dtype=float32)
>>> nn.softmax(jnp.array([0.0, 0.0]))
Array([0.5, 0.5], dtype=float32)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad import dtypes, lax
from funcgrad.config import config
from funcgrad.numpy._core import promote_inexact
from funcgrad.primitives import elementwise as E


def _inexact(x: Any) -> Any:
    return promote_inexact(x)[0]


def _weak_inexact(x: Any) -> Any:
    """``x`` as a float: an integer array becomes a weakly typed float, as it does in JAX's
    formulas where it first meets a Python float (``jnp.where(x > 0, x, 0.5)``)."""
    x = jnp.asarray(x)
    if dtypes.is_inexact(x.dtype):
        return x
    return E.convert_element_type(x, dtypes.canonicalize(np.float64), weak_type=True)


def _float_only(name: str, x: Any) -> Any:
    """``x``, which ``lax.logistic`` takes only as a float (JAX's TypeError otherwise)."""
    x = jnp.asarray(x)
    if not dtypes.is_inexact(x.dtype):
        raise TypeError(f"{name} does not accept dtype {np.dtype(x.dtype).name}. Accepted "
                        "dtypes are subtypes of floating, complexfloating.")
    return x


def relu(x: Any) -> Any:
    """max(x, 0); its derivative at 0 is 0 (as in JAX and PyTorch), NaN stays NaN. Only
    the mask ``x <= 0`` is kept for the derivative.

    >>> import funcgrad.numpy as jnp
    >>> relu(jnp.array([-0.5, 0.5]))
    Array([0. , 0.5], dtype=float32)
    """
    x = jnp.asarray(x)
    # A broadcast zero (as JAX's full_like): compiled programs keep it a scalar, and the
    # select against it is one mask and one AND.
    return jnp.where(x <= 0, lax.full_like(x, 0), x)


def relu6(x: Any) -> Any:
    """min(max(x, 0), 6); its derivative at 0 and 6 is 0 (JAX's rule selects the tangent,
    so a NaN tangent there gives 0, not NaN).

    >>> import funcgrad.numpy as jnp
    >>> relu6(jnp.array([-1.0, 3.0, 7.0])).tolist()
    [0.0, 3.0, 6.0]
    """
    x = _weak_inexact(x)  # JAX's minimum(maximum(x, 0), 6.): a float for integers too
    return jnp.where(x <= 0, jnp.zeros_like(x), jnp.where(x >= 6, jnp.full_like(x, 6), x))


def sigmoid(x: Any) -> Any:
    """1 / (1 + exp(-x)), precise in both tails (the ``logistic`` primitive)."""
    return E.logistic_p.bind(_float_only("logistic", x))


def log_sigmoid(x: Any) -> Any:
    """log(sigmoid(x)) = -softplus(-x)."""
    return -softplus(-_inexact(x))


def softplus(x: Any) -> Any:
    """log(1 + exp(x)), without overflow."""
    return jnp.logaddexp(_inexact(x), 0)


def soft_sign(x: Any) -> Any:
    """x / (|x| + 1)."""
    x = _inexact(x)
    return x / (jnp.abs(x) + 1)


def silu(x: Any) -> Any:
    """x * sigmoid(x) (also called swish)."""
    x = _float_only("logistic", x)
    return x * sigmoid(x)


swish = silu


def gelu(x: Any, approximate: bool = True) -> Any:
    """The Gaussian error linear unit; ``approximate=True`` (JAX's default) is the tanh form,
    ``False`` the exact one with erf.

    >>> import funcgrad.numpy as jnp
    >>> round(float(gelu(jnp.array(1.0), approximate=False)), 6)
    0.841345
    """
    x = _inexact(x)
    if approximate:
        c = math.sqrt(2.0 / math.pi)
        return 0.5 * x * (1.0 + jnp.tanh(c * (x + 0.044715 * x * x * x)))
    # Phi(x) = erfc(-x / sqrt(2)) / 2 keeps its relative precision for negative x, where
    # 1 + erf(x / sqrt(2)) would cancel.
    return 0.5 * x * E.erfc(x * -math.sqrt(0.5))


def elu(x: Any, alpha: float = 1.0) -> Any:
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""
    x = _weak_inexact(x)
    safe = jnp.where(x > 0, 0.0, x)
    return jnp.where(x > 0, x, alpha * jnp.expm1(safe))


def celu(x: Any, alpha: float = 1.0) -> Any:
    """max(x, 0) + min(0, alpha * (exp(x / alpha) - 1))."""
    x = _weak_inexact(x)
    return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(x: Any) -> Any:
    """scale * elu(x, alpha) with the self-normalising constants."""
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


def leaky_relu(x: Any, negative_slope: float = 1e-2) -> Any:
    """x for x >= 0, negative_slope * x otherwise."""
    x = _weak_inexact(x)
    return jnp.where(x >= 0, x, negative_slope * x)


def hard_tanh(x: Any) -> Any:
    """clip(x, -1, 1)."""
    x = jnp.asarray(x)  # integers stay integers, as in JAX
    return jnp.where(x > 1, 1, jnp.where(x < -1, -1, x))


def hard_sigmoid(x: Any) -> Any:
    """relu6(x + 3) / 6."""
    return relu6(_weak_inexact(x) + 3.0) / 6.0


def hard_silu(x: Any) -> Any:
    """x * hard_sigmoid(x)."""
    x = _weak_inexact(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def mish(x: Any) -> Any:
    """x * tanh(softplus(x))."""
    x = _inexact(x)
    return x * jnp.tanh(softplus(x))


def squareplus(x: Any, b: float = 4) -> Any:
    """(x + sqrt(x^2 + b)) / 2."""
    x = _inexact(x)
    return (x + jnp.sqrt(x * x + b)) / 2


def sparse_plus(x: Any) -> Any:
    """0 for x <= -1, (x + 1)^2 / 4 for |x| < 1, x for x >= 1."""
    x = _weak_inexact(x)
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def sparse_sigmoid(x: Any) -> Any:
    """0 for x <= -1, (x + 1) / 2 for |x| < 1, 1 for x >= 1."""
    x = _inexact(x)
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, 1.0, (x + 1.0) / 2))


def log1mexp(x: Any) -> Any:
    """log(1 - exp(-x)) for x > 0, accurate for small and large x."""
    x = _inexact(x)
    return jnp.where(x > math.log(2.0), jnp.log1p(-jnp.exp(-x)), jnp.log(-jnp.expm1(-x)))


def tanh(x: Any) -> Any:
    """The hyperbolic tangent."""
    return jnp.tanh(x)


def identity(x: Any) -> Any:
    """x itself."""
    return jnp.asarray(x)


def glu(x: Any, axis: int = -1) -> Any:
    """The gated linear unit: the first half of ``axis`` times sigmoid of the second."""
    a, b = jnp.split(x, 2, axis=axis)
    return a * sigmoid(b)


def _where_fill(x: Any, where: Any, fill: float) -> Any:
    return x if where is None else jnp.where(where, x, fill)


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False,
              return_sign: bool = False, where: Any = None) -> Any:
    """log(sum(b * exp(a))) over ``axis``, without overflow."""
    if b is not None or return_sign:
        x = _inexact(a)
        m = lax.stop_gradient(jnp.max(_where_fill(x, where, -np.inf), axis, keepdims=True))
        m = jnp.where(jnp.isfinite(m), m, 0.0)
        s = jnp.sum(_where_fill(jnp.exp(x - m) * (1.0 if b is None else b), where, 0.0),
                    axis, keepdims=True)
        sign = jnp.sign(s)
        # Without return_sign a negative sum has no logarithm: NaN, as JAX gives.
        out = jnp.log(jnp.abs(s) if return_sign else s) + m
        if not keepdims:
            out = jnp.squeeze(out, axis)
            sign = jnp.squeeze(sign, axis)
        return (out, sign) if return_sign else out
    return jnp.logsumexp(_where_fill(_inexact(a), where, -np.inf), axis, keepdims)


def logmeanexp(a: Any, axis: Any = None, keepdims: bool = False, where: Any = None) -> Any:
    """log(mean(exp(a))) over ``axis``."""
    x = _inexact(a)
    n = jnp.sum(jnp.ones_like(x) if where is None else jnp.asarray(where), axis,
                keepdims=keepdims)
    return logsumexp(x, axis, keepdims=keepdims, where=where) - jnp.log(n.astype(x.dtype))


def softmax(x: Any, axis: Any = -1, where: Any = None) -> Any:
    """exp(x) / sum(exp(x)) along ``axis``. Only intermediates are kept for the derivative
    (never ``x`` itself): the max is a constant shift.

    >>> import funcgrad.numpy as jnp
    >>> softmax(jnp.array([1.0, 1.0, 1.0]))
    Array([0.33333334, 0.33333334, 0.33333334], dtype=float32)
    """
    x = _inexact(x)
    if config.read("jax_softmax_custom_jvp"):
        from funcgrad.nn._softmax_jvp import softmax_custom_jvp  # noqa: PLC0415

        return softmax_custom_jvp(x, axis, where)
    m = lax.stop_gradient(jnp.max(_where_fill(x, where, -np.inf), axis, keepdims=True))
    m = jnp.where(jnp.isfinite(m), m, 0.0)
    e = _where_fill(jnp.exp(x - m), where, 0.0)
    return e / jnp.sum(e, axis, keepdims=True)


def log_softmax(x: Any, axis: Any = -1, where: Any = None) -> Any:
    """x - logsumexp(x) along ``axis``."""
    x = _inexact(x)
    m = lax.stop_gradient(jnp.max(_where_fill(x, where, -np.inf), axis, keepdims=True))
    m = jnp.where(jnp.isfinite(m), m, 0.0)
    shifted = x - m
    lse = jnp.log(jnp.sum(_where_fill(jnp.exp(shifted), where, 0.0), axis, keepdims=True))
    return _where_fill(shifted - lse, where, -np.inf)


def standardize(x: Any, axis: Any = -1, mean: Any = None, variance: Any = None,
                epsilon: float = 1e-5, where: Any = None) -> Any:
    """(x - mean) / sqrt(variance + epsilon) along ``axis``."""
    x = _inexact(x)
    if mean is None:
        mean = jnp.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        variance = jnp.mean(jnp.square(x - mean), axis, keepdims=True, where=where)
    return (x - mean) * lax.rsqrt(variance + epsilon)


def one_hot(x: Any, num_classes: int, *, dtype: Any = None, axis: int = -1) -> Any:
    """``x``'s integers as one-hot vectors of length ``num_classes`` along ``axis``.

    >>> import funcgrad.numpy as jnp
    >>> one_hot(jnp.array([0, 2]), 3)
    Array([[1., 0., 0.],
           [0., 0., 1.]], dtype=float32)
    """
    from funcgrad import dtypes  # noqa: PLC0415

    x = jnp.asarray(x)
    dt = dtypes.default_float() if dtype is None else dtype
    classes = jnp.arange(num_classes)
    out = jnp.expand_dims(x, axis) == jnp.reshape(
        classes, (num_classes,) + (1,) * (-axis - 1 if axis < 0 else x.ndim - axis))
    return out.astype(dt)


def dot_product_attention(query: Any, key: Any, value: Any, bias: Any = None,
                          mask: Any = None, *, scale: float | None = None,
                          is_causal: bool = False, **_: Any) -> Any:
    """softmax(q k^T * scale + bias, masked) v over inputs shaped (B, T, N, H)."""
    q, k, v = (_inexact(t) for t in (query, key, value))
    h = q.shape[-1]
    s = 1.0 / math.sqrt(h) if scale is None else scale
    logits = jnp.einsum("btnh,bsnh->bnts", q, k) * s
    if bias is not None:
        logits = logits + bias
    if mask is not None:
        logits = jnp.where(mask, logits, -np.inf)
    if is_causal:
        t, sk = logits.shape[-2], logits.shape[-1]
        logits = jnp.where(jnp.tril(jnp.ones((t, sk), bool)), logits, -np.inf)
    return jnp.einsum("bnts,bsnh->btnh", softmax(logits, axis=-1), v)


from funcgrad.nn import initializers  # noqa: E402  (builds on funcgrad.random)
from funcgrad.nn._scaled_matmul import (  # noqa: E402
    get_scaled_dot_general_config,
    scaled_dot_general,
    scaled_matmul,
)

__all__ = [
    "celu", "dot_product_attention", "elu", "gelu", "get_scaled_dot_general_config", "glu",
    "hard_sigmoid", "hard_silu",
    "hard_swish", "hard_tanh", "identity", "initializers", "leaky_relu", "log1mexp",
    "log_sigmoid", "log_softmax", "logmeanexp", "logsumexp", "mish", "one_hot", "relu",
    "relu6", "scaled_dot_general", "scaled_matmul", "selu", "sigmoid", "silu", "soft_sign",
    "softmax", "softplus", "sparse_plus",
    "sparse_sigmoid", "squareplus", "standardize", "swish", "tanh",
]
