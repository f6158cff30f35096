"""``jax.nn.initializers``: functions ``init(key, shape, dtype=None)`` returning arrays.

Each builder (``uniform``, ``variance_scaling``, ``glorot_uniform``...) returns an
initializer; ``zeros`` and ``ones`` are initializers themselves. Samples come from
``funcgrad.random`` in the order and arithmetic JAX uses, so the uniform-based ones are
JAX's bit for bit and the normal-based ones agree to a few ulps. The default dtype is
float32 (float64 with x64 on).

``orthogonal`` and ``delta_orthogonal`` are not here yet: they need a QR decomposition.

>>> from funcgrad import random
>>> from funcgrad.nn import initializers
>>> init = initializers.glorot_uniform()
>>> init(random.key(42), (2, 3)).shape
(2, 3)
>>> initializers.zeros(random.key(0), (2,))
Array([0., 0.], dtype=float32)
"""

from __future__ import annotations

import math
import typing
from collections.abc import Sequence
from typing import Any, Literal, Protocol

import numpy as np

import funcgrad.numpy as jnp
from funcgrad import dtypes, random

Axes = int | Sequence[int]
Mode = Literal["fan_in", "fan_out", "fan_avg", "fan_geo_avg"]
Distribution = Literal["truncated_normal", "normal", "uniform"]

# Standard deviation of a standard normal truncated to (-2, 2), and of a complex standard
# normal whose modulus is truncated to 2 (JAX's constants).
_TRUNC_STD_REAL = 0.87962566103423978
_TRUNC_STD_COMPLEX = 0.95311164380491208


@typing.runtime_checkable
class Initializer(Protocol):
    """What every initializer is: called as ``init(key, shape, dtype=None)``.

    >>> from funcgrad import random
    >>> isinstance(zeros, Initializer), isinstance(uniform(), Initializer)
    (True, True)
    """

    def __call__(self, key: Any, shape: Sequence[int], dtype: Any = None,
                 out_sharding: Any = None) -> Any:
        raise NotImplementedError


def _dtype(dtype: Any) -> np.dtype[Any]:
    return dtypes.default_float() if dtype is None else dtypes.canonicalize_dtype(dtype)


def _no_sharding(out_sharding: Any) -> None:
    if out_sharding is not None:
        raise NotImplementedError("funcgrad's initializers take no out_sharding")


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(d) for d in shape)


def zeros(key: Any, shape: Sequence[int], dtype: Any = None, out_sharding: Any = None) -> Any:
    """An array of zeros; ``key`` is ignored.

    >>> from funcgrad import random
    >>> zeros(random.key(42), (2, 3))
    Array([[0., 0., 0.],
           [0., 0., 0.]], dtype=float32)
    """
    _no_sharding(out_sharding)
    return jnp.zeros(shape, _dtype(dtype))


def ones(key: Any, shape: Sequence[int], dtype: Any = None, out_sharding: Any = None) -> Any:
    """An array of ones; ``key`` is ignored.

    >>> from funcgrad import random
    >>> ones(random.key(42), (3,))
    Array([1., 1., 1.], dtype=float32)
    """
    _no_sharding(out_sharding)
    return jnp.ones(shape, _dtype(dtype))


def constant(value: Any, dtype: Any = None) -> Initializer:
    """An initializer filling arrays with ``value``; ``dtype`` is its default dtype.

    >>> from funcgrad import random
    >>> constant(-7)(random.key(42), (2,))
    Array([-7., -7.], dtype=float32)
    """
    default = dtype

    def init(key: Any, shape: Sequence[int], dtype: Any = default,
             out_sharding: Any = None) -> Any:
        _no_sharding(out_sharding)
        return jnp.full(shape, value, dtype=_dtype(dtype))

    return init


def uniform(scale: Any = 1e-2, dtype: Any = None) -> Initializer:
    """An initializer of uniform samples in ``[0, scale)``.

    >>> from funcgrad import random
    >>> uniform(10.0)(random.PRNGKey(0), (3,))
    Array([9.47667  , 9.785799 , 3.3229148], dtype=float32)
    """
    default = dtype

    def init(key: Any, shape: Sequence[int], dtype: Any = default,
             out_sharding: Any = None) -> Any:
        _no_sharding(out_sharding)
        dt = _dtype(dtype)
        return random.uniform(key, shape, dt) * jnp.array(scale, dt)

    return init


def normal(stddev: Any = 1e-2, dtype: Any = None) -> Initializer:
    """An initializer of normal samples with mean 0 and standard deviation ``stddev``.

    >>> from funcgrad import random
    >>> normal(5.0)(random.key(42), (2, 3)).shape
    (2, 3)
    """
    default = dtype

    def init(key: Any, shape: Sequence[int], dtype: Any = default,
             out_sharding: Any = None) -> Any:
        _no_sharding(out_sharding)
        dt = _dtype(dtype)
        return random.normal(key, shape, dt) * jnp.array(stddev, dt)

    return init


def truncated_normal(stddev: Any = 1e-2, dtype: Any = None, lower: Any = -2.0,
                     upper: Any = 2.0) -> Initializer:
    """An initializer of standard normal samples truncated to ``(lower, upper)``, then
    times ``stddev`` (no correction of the standard deviation for the truncation).

    >>> from funcgrad import random
    >>> x = truncated_normal(5.0)(random.key(42), (100,))
    >>> bool((abs(x) < 10.0).all())
    True
    """
    default = dtype

    def init(key: Any, shape: Sequence[int], dtype: Any = default,
             out_sharding: Any = None) -> Any:
        _no_sharding(out_sharding)
        dt = _dtype(dtype)
        return random.truncated_normal(key, lower, upper, shape, dt) * jnp.array(stddev, dt)

    return init


def _size(shape: tuple[int, ...], axes: Axes) -> int:
    if isinstance(axes, int):
        return shape[axes]
    return math.prod(shape[i] for i in axes)


def _compute_fans(shape: Sequence[int], in_axis: Axes = -2, out_axis: Axes = -1,
                  batch_axis: Axes = ()) -> tuple[float, float]:
    """``(fan_in, fan_out)`` of a dense or convolution kernel: the input (output) size
    times the receptive field, the product of the axes that are neither input, output nor
    batch.

    >>> _compute_fans((3, 3, 16, 32))
    (144.0, 288.0)
    """
    shape = tuple(shape)
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(
            f"Can't compute input and output sizes of a {len(shape)}-dimensional weights "
            "tensor with default in_axis. Must be at least 2D or specify in_axis explicitly.")
    in_size, out_size = _size(shape, in_axis), _size(shape, out_axis)
    receptive = math.prod(shape) / in_size / out_size / _size(shape, batch_axis)
    return in_size * receptive, out_size * receptive


def _real_dtype(dt: np.dtype[Any]) -> np.dtype[Any]:
    return np.dtype(np.array(0, dt).real.dtype)


def _complex_uniform(key: Any, shape: tuple[int, ...], dt: np.dtype[Any]) -> Any:
    """Uniform samples on a disk of the complex plane, mean 0 and variance 1."""
    key_r, key_theta = random.split(key)
    real = _real_dtype(dt)
    r = jnp.sqrt(2 * random.uniform(key_r, shape, real)).astype(dt)
    theta = 2 * np.pi * random.uniform(key_theta, shape, real).astype(dt)
    return r * jnp.exp(1j * theta)


def _complex_truncated_normal(key: Any, upper: Any, shape: tuple[int, ...],
                              dt: np.dtype[Any]) -> Any:
    """Centred complex normal samples (variance 1 before truncation), modulus below
    ``upper``."""
    key_r, key_theta = random.split(key)
    real = _real_dtype(dt)
    t = ((1 - jnp.exp(jnp.array(-(upper ** 2), dt)))
         * random.uniform(key_r, shape, real).astype(dt))
    r = jnp.sqrt(-jnp.log(1 - t))
    theta = 2 * np.pi * random.uniform(key_theta, shape, real).astype(dt)
    return r * jnp.exp(1j * theta)


def variance_scaling(scale: Any, mode: Mode, distribution: Distribution,
                     in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (),
                     dtype: Any = None) -> Initializer:
    """An initializer whose samples have mean 0 and variance ``scale / n``.

    ``n`` is, by ``mode``, the fan in, the fan out, their mean (``"fan_avg"``) or their
    geometric mean (``"fan_geo_avg"``), computed from the kernel's shape as
    ``_compute_fans`` does (``in_axis``, ``out_axis``, ``batch_axis``; the other axes are the
    receptive field). ``distribution`` is ``"truncated_normal"`` (truncated at two standard
    deviations, rescaled to keep the variance), ``"normal"`` or ``"uniform"`` (an interval,
    or a disk for complex dtypes). A bad ``mode`` or ``distribution`` raises ``ValueError``
    when the initializer is called, as in JAX.

    >>> from funcgrad import random
    >>> init = variance_scaling(2.0, "fan_in", "uniform")
    >>> init(random.PRNGKey(0), (2, 2))
    Array([[ 1.550764  ,  1.6578493 ],
           [-0.5809593 , -0.10853563]], dtype=float32)
    """
    default = dtype

    def init(key: Any, shape: Sequence[int], dtype: Any = default,
             out_sharding: Any = None) -> Any:
        _no_sharding(out_sharding)
        shape_ = _shape(shape)
        dt = _dtype(dtype)
        fan_in, fan_out = _compute_fans(shape_, in_axis, out_axis, batch_axis)
        if mode == "fan_in":
            denominator = fan_in
        elif mode == "fan_out":
            denominator = fan_out
        elif mode == "fan_avg":
            denominator = (fan_in + fan_out) / 2
        elif mode == "fan_geo_avg":
            denominator = (fan_in * fan_out) ** 0.5
        else:
            raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
        variance = jnp.array(scale / denominator, dtype=dt)
        floating = dtypes.is_float(dt)
        if distribution == "truncated_normal":
            if floating:
                stddev = jnp.sqrt(variance) / jnp.array(_TRUNC_STD_REAL, dt)
                return random.truncated_normal(key, -2, 2, shape_, dt) * stddev
            stddev = jnp.sqrt(variance) / jnp.array(_TRUNC_STD_COMPLEX, dt)
            return _complex_truncated_normal(key, 2, shape_, dt) * stddev
        if distribution == "normal":
            return random.normal(key, shape_, dt) * jnp.sqrt(variance)
        if distribution == "uniform":
            if floating:
                return random.uniform(key, shape_, dt, -1) * jnp.sqrt(3 * variance)
            return _complex_uniform(key, shape_, dt) * jnp.sqrt(variance)
        raise ValueError(
            f"invalid distribution for variance scaling initializer: {distribution}")

    return init


def glorot_uniform(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (),
                   dtype: Any = None) -> Initializer:
    """Glorot (Xavier) uniform: ``variance_scaling(1.0, "fan_avg", "uniform")``.

    >>> from funcgrad import random
    >>> glorot_uniform()(random.PRNGKey(0), (2, 2))
    Array([[ 1.0965558 ,  1.1722765 ],
           [-0.4108003 , -0.07674628]], dtype=float32)
    """
    return variance_scaling(1.0, "fan_avg", "uniform", in_axis=in_axis, out_axis=out_axis,
                            batch_axis=batch_axis, dtype=dtype)


def glorot_normal(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (),
                  dtype: Any = None) -> Initializer:
    """Glorot (Xavier) normal: ``variance_scaling(1.0, "fan_avg", "truncated_normal")``.

    >>> from funcgrad import random
    >>> glorot_normal()(random.key(42), (3, 3, 16, 32)).shape
    (3, 3, 16, 32)
    """
    return variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis=in_axis,
                            out_axis=out_axis, batch_axis=batch_axis, dtype=dtype)


def lecun_uniform(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (),
                  dtype: Any = None) -> Initializer:
    """LeCun uniform: ``variance_scaling(1.0, "fan_in", "uniform")``.

    >>> from funcgrad import random
    >>> lecun_uniform()(random.key(42), (4, 5)).dtype
    dtype('float32')
    """
    return variance_scaling(1.0, "fan_in", "uniform", in_axis=in_axis, out_axis=out_axis,
                            batch_axis=batch_axis, dtype=dtype)


def lecun_normal(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (),
                 dtype: Any = None) -> Initializer:
    """LeCun normal: ``variance_scaling(1.0, "fan_in", "truncated_normal")``.

    >>> from funcgrad import random
    >>> lecun_normal()(random.key(42), (4, 5)).shape
    (4, 5)
    """
    return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis=in_axis,
                            out_axis=out_axis, batch_axis=batch_axis, dtype=dtype)


def he_uniform(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (),
               dtype: Any = None) -> Initializer:
    """He (Kaiming) uniform: ``variance_scaling(2.0, "fan_in", "uniform")``.

    >>> from funcgrad import random
    >>> he_uniform()(random.PRNGKey(0), (2, 2))
    Array([[ 1.550764  ,  1.6578493 ],
           [-0.5809593 , -0.10853563]], dtype=float32)
    """
    return variance_scaling(2.0, "fan_in", "uniform", in_axis=in_axis, out_axis=out_axis,
                            batch_axis=batch_axis, dtype=dtype)


def he_normal(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (),
              dtype: Any = None) -> Initializer:
    """He (Kaiming) normal: ``variance_scaling(2.0, "fan_in", "truncated_normal")``.

    >>> from funcgrad import random
    >>> he_normal()(random.key(42), (4, 5)).shape
    (4, 5)
    """
    return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis=in_axis,
                            out_axis=out_axis, batch_axis=batch_axis, dtype=dtype)


xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal


def orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """An initializer of (scaled) orthogonal matrices: orthonormal rows or columns, whichever
    side is smaller, along ``column_axis`` and the other axes flattened.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad import random
    >>> w = orthogonal()(random.key(0), (3, 3))
    >>> bool(fnp.allclose(w @ w.T, fnp.eye(3), atol=1e-5))
    True
    """
    default = dtype

    def init(key: Any, shape: Sequence[int], dtype: Any = default,
             out_sharding: Any = None) -> Any:
        _no_sharding(out_sharding)
        dt = _dtype(dtype)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if any(d == 0 for d in shape):
            return jnp.zeros(shape, dtype=dt)
        n_cols = shape[column_axis]
        n_rows = math.prod(shape) // n_cols
        q = random.orthogonal(key, n_rows, (), dt, n_cols)
        q = jnp.reshape(q, tuple(np.delete(np.asarray(shape), column_axis)) + (n_cols,))
        return jnp.array(scale, dt) * jnp.moveaxis(q, -1, column_axis)

    return init


def delta_orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None
                     ) -> Initializer:
    """An initializer of delta-orthogonal convolution kernels (3-D to 5-D): an orthogonal
    matrix at the kernel's centre, zeros elsewhere.

    >>> from funcgrad import random
    >>> delta_orthogonal()(random.key(0), (3, 2, 2))[0].tolist()
    [[0.0, 0.0], [0.0, 0.0]]
    """
    default = dtype

    def init(key: Any, shape: Sequence[int], dtype: Any = default,
             out_sharding: Any = None) -> Any:
        _no_sharding(out_sharding)
        dt = _dtype(dtype)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        matrix = orthogonal(scale=scale, column_axis=column_axis, dtype=dt)(key, shape[-2:])
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return jnp.zeros(shape, dtype=dt).at[centre].set(matrix)

    return init

__all__ = [
    "Initializer", "constant", "delta_orthogonal", "glorot_normal", "glorot_uniform",
    "he_normal", "he_uniform", "orthogonal",
    "kaiming_normal", "kaiming_uniform", "lecun_normal", "lecun_uniform", "normal", "ones",
    "truncated_normal", "uniform", "variance_scaling", "xavier_normal", "xavier_uniform",
    "zeros",
]
