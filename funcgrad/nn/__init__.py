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
import warnings
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
    # JAX's constants are NumPy scalars of x's dtype, so a weakly typed x (a Python float)
    # gives a strongly typed result; these keep that.
    if approximate:
        c = np.asarray(math.sqrt(2.0 / math.pi), x.dtype)
        return x * (0.5 * (1.0 + jnp.tanh(c * (x + 0.044715 * x ** 3))))
    # Phi(x) = erfc(-x / sqrt(2)) / 2 keeps its relative precision for negative x, where
    # 1 + erf(x / sqrt(2)) would cancel.
    return 0.5 * x * E.erfc(x * -np.asarray(math.sqrt(0.5), x.dtype))


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
    # JAX's clip form: its derivative at the kinks x = +-1 is the tie's 0.25, not 0; an
    # integer x meets the weak 1.0 first, so the result is weakly typed as JAX's.
    return 0.5 * jnp.clip(jnp.asarray(x) + 1.0, 0.0, 2.0)


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
    if where is not None:
        # As JAX: the left-out entries become 0 before the promotion (a bool input becomes
        # an integer one, so the default float), and the reductions skip them.
        a = jnp.where(where, a, 0)
    if b is None and not return_sign:
        return jnp.logsumexp(_where_fill(_inexact(a), where, -np.inf), axis, keepdims)
    if b is not None:
        # a and b promote together (int8 with float16 scales computes in float16), and a
        # zero scale drops its term even where a is inf or NaN.
        x, b = promote_inexact(a, b)
        x = jnp.where(b != 0, x, -np.inf)
    else:
        x = _inexact(a)
    # The shift is the real parts' max (complex numbers have no order), 0 where it is not
    # finite (an empty axis's max is the initial -inf).
    m = lax.stop_gradient(jnp.max(_where_fill(jnp.real(x), where, -np.inf), axis,
                                  keepdims=True, initial=-np.inf))
    m = jnp.where(jnp.isfinite(m), m, 0.0)
    s = jnp.sum(_where_fill(jnp.exp(x - m.astype(x.dtype)) * (1.0 if b is None else b),
                            where, 0.0), axis, keepdims=True)
    sign = jnp.sign(s)
    # With return_sign (or a real sum) the logarithm is of |s|: a real result beside a
    # complex sign; a negative real sum without return_sign has no logarithm: NaN.
    real_sum = not jnp.iscomplexobj(s)
    out = jnp.log(jnp.abs(s) if return_sign or real_sum else s) + m.astype(
        jnp.abs(s).dtype if return_sign or real_sum else s.dtype)
    if not return_sign and real_sum:
        out = jnp.where(sign < 0, np.nan, out)
    if not keepdims:
        out = jnp.squeeze(out, axis)
        sign = jnp.squeeze(sign, axis)
    return (out, sign) if return_sign else out


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
    # The max is not replaced where it is infinite (logsumexp's is): as in JAX, a +inf
    # makes its whole row NaN (inf - inf), and so does a row of -inf.
    m = lax.stop_gradient(jnp.max(_where_fill(x, where, -np.inf), axis, keepdims=True,
                                      initial=-np.inf))
    e = _where_fill(jnp.exp(_where_fill(x, where, -np.inf) - m), where, 0.0)
    # A row masked out entirely is zeros, as JAX gives (not 0 / 0).
    return _where_fill(e / jnp.sum(e, axis, keepdims=True), where, 0.0)


def log_softmax(x: Any, axis: Any = -1, where: Any = None) -> Any:
    """x - logsumexp(x) along ``axis``."""
    x = _inexact(x)
    # An infinite max stays (as in JAX): a +inf makes the row NaN, not [nan, -inf, ...].
    m = lax.stop_gradient(jnp.max(_where_fill(x, where, -np.inf), axis, keepdims=True,
                                      initial=-np.inf))
    shifted = _where_fill(x, where, -np.inf) - m
    lse = jnp.log(jnp.sum(_where_fill(jnp.exp(shifted), where, 0.0), axis, keepdims=True))
    return _where_fill(shifted - lse, where, -np.inf)


def standardize(x: Any, axis: Any = -1, mean: Any = None, variance: Any = None,
                epsilon: float = 1e-5, where: Any = None, *, algorithm: str = "fast") -> Any:
    """(x - mean) / sqrt(variance + epsilon) along ``axis``; the variance is JAX's
    ``algorithm``: ``"fast"`` (the default) ``mean(x**2) - mean**2`` clipped at 0,
    ``"stable"`` the two-pass ``mean((x - mean)**2)``."""
    x = _inexact(x)
    if mean is None:
        mean = jnp.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = jnp.mean(jnp.square(x - mean), axis, keepdims=True, where=where)
        elif algorithm == "fast":
            # JAX's default: one pass; its cancellation can go negative, hence the clip.
            variance = jnp.clip(jnp.mean(jnp.square(x), axis, keepdims=True, where=where)
                                - jnp.square(mean), 0)
        else:
            raise ValueError(
                f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
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
    if not jnp.issubdtype(x.dtype, jnp.integer):
        # JAX deprecated non-integer inputs (2024-12), with this warning.
        warnings.warn(f"jax.nn.one_hot input should be integer-typed; got dtype={x.dtype}",
                      DeprecationWarning, stacklevel=1)
    if x.dtype == np.bool_:  # JAX compares with an iota of the input's dtype
        raise TypeError("iota does not accept dtype bool. Accepted dtypes are subtypes of "
                        "integer, floating, complexfloating.")
    dt = dtypes.default_float() if dtype is None else dtype
    classes = jnp.arange(num_classes)
    out = jnp.expand_dims(x, axis) == jnp.reshape(
        classes, (num_classes,) + (1,) * (-axis - 1 if axis < 0 else x.ndim - axis))
    return out.astype(dt)


def dot_product_attention(query: Any, key: Any, value: Any, bias: Any = None,
                          mask: Any = None, *, scale: float | None = None,
                          is_causal: bool = False, query_seq_lengths: Any = None,
                          key_value_seq_lengths: Any = None,
                          local_window_size: int | tuple[int, int] | None = None,
                          implementation: str | None = None,
                          return_residual: bool = False) -> Any:
    """softmax(q k^T * scale + bias, masked) v over inputs shaped (B, T, N, H) (or (T, N, H)),
    as JAX's XLA formula: grouped query heads (N a multiple of the key heads), masks from
    ``mask``, ``is_causal``, ``local_window_size`` and the sequence lengths (masked logits
    are a large negative number, so a fully masked row averages ``value``), the softmax in
    float32, padded query rows zero; ``return_residual`` adds the logsumexp (B, T, N).

    >>> import funcgrad.numpy as jnp
    >>> x = jnp.ones((1, 2, 1, 4))
    >>> dot_product_attention(x, x, x).shape
    (1, 2, 1, 4)
    """
    if implementation == "cudnn":
        # As JAX without cuDNN: funcgrad's GPU path compiles its own kernels, not cuDNN's.
        raise RuntimeError("cuDNN is not detected.")
    if implementation not in (None, "xla"):
        raise ValueError(f"Unsupported implementation option: {implementation}: funcgrad "
                         "computes the 'xla' formula")
    out_shape = jnp.asarray(query).shape
    q, k, v = (_ensure_4d(jnp.asarray(t)) for t in (query, key, value))
    bias = None if bias is None else _ensure_4d(jnp.asarray(bias))
    mask = None if mask is None else _ensure_4d(jnp.asarray(mask))
    qlen = None if query_seq_lengths is None else jnp.asarray(query_seq_lengths)
    kvlen = None if key_value_seq_lengths is None else jnp.asarray(key_value_seq_lengths)
    window = (local_window_size, local_window_size) if isinstance(local_window_size, int) \
        else local_window_size
    b, sk, kh, h = k.shape
    _check_attention(v, (b, sk, kh, h), k.dtype, "value")
    _check_attention(q, (b, -1, -1, h), k.dtype, "query")
    _check_attention(mask, (-1,) * 4, np.dtype(bool), "mask")
    _check_attention(bias, (-1,) * 4, None, "bias")
    _check_attention(qlen, (b,), np.dtype("int32"), "query_seq_lengths")
    _check_attention(kvlen, (b,), np.dtype("int32"), "key_value_seq_lengths")
    n, t = q.shape[2], q.shape[1]
    if n % kh:
        raise ValueError(f"The number of query heads must be a multiple of key/value heads, "
                         f"but got {n} vs {kh}")
    g = n // kh
    logits_dtype = jnp.promote_types(q.dtype, np.float32)
    qg = jnp.reshape(q, (b, t, kh, g, h))
    logits = jnp.einsum("btkgh,bskh->bkgts", qg, k, preferred_element_type=logits_dtype)
    logits = logits * jnp.asarray(1.0 / math.sqrt(h) if scale is None else scale,
                                  logits.dtype)

    def grouped(x: Any) -> Any:
        xb, xn, xt, xs = x.shape
        if xn == 1:
            return jnp.reshape(x, (xb, 1, 1, xt, xs))
        return jnp.reshape(x, (xb, kh, g, xt, xs))

    if bias is not None:
        logits = (logits + grouped(bias)).astype(logits.dtype)
    keep = None if mask is None else grouped(mask)
    rows, cols = jnp.arange(t)[:, None], jnp.arange(sk)[None, :]
    for extra in (
            (rows >= cols) if is_causal else None,
            ((rows <= cols + window[0]) & (rows >= cols - window[1])) if window else None,
            None if qlen is None else (jnp.arange(t)[None, :, None] < qlen[:, None, None]
                                       )[:, None, None],
            None if kvlen is None else (jnp.arange(sk)[None, None, :] < kvlen[:, None, None]
                                        )[:, None, None]):
        if extra is not None:
            keep = extra if keep is None else keep & extra
    if keep is not None:
        big = -0.7 * min(float(jnp.finfo(logits.dtype).max), float(np.finfo(np.float32).max))
        logits = jnp.where(keep, logits, jnp.asarray(big, logits.dtype))
    logits = logits.astype(np.float32)  # the softmax in float32, as JAX's
    probs = softmax(logits, axis=-1).astype(k.dtype)
    encoded = jnp.einsum("bkgts,bskh->btkgh", probs, v)
    if qlen is not None:
        encoded = encoded * (jnp.arange(t)[None, :] < qlen[:, None])[
            :, :, None, None, None].astype(encoded.dtype)
    encoded = jnp.reshape(encoded, out_shape)
    if not return_residual:
        return encoded
    lse = logsumexp(logits, axis=-1).astype(k.dtype)  # (b, kh, g, t)
    lse = jnp.reshape(jnp.moveaxis(lse, 3, 1), out_shape[:-1])
    return encoded, lax.stop_gradient(lse)


def _ensure_4d(x: Any) -> Any:
    return x if x.ndim >= 4 else jnp.expand_dims(x, tuple(range(4 - x.ndim)))


def _check_attention(x: Any, shape: tuple[int, ...], dtype: Any, name: str) -> None:
    if x is None:
        return
    if x.ndim != len(shape):
        raise ValueError(f"{name} ndim should be {len(shape)}, but got {x.ndim}")
    if dtype is not None and x.dtype != dtype:
        raise ValueError(f"{name} dtype should be {dtype}, but got {x.dtype}")
    if any(w not in (-1, got) for w, got in zip(shape, x.shape, strict=True)):
        raise ValueError(f"{name} shape should be {list(shape)}: but got {x.shape}")


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
