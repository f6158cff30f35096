"""Resampling by separable kernels, as ``jax.image``: for each resized axis a weight
matrix ``(input_size, output_size)`` from the method's kernel, contracted with the image
(``dot_general`` through ``tensordot``). Built of ``funcgrad.numpy`` operations, so
``grad`` (with respect to the image, the scale and the translation), ``jit`` and ``vmap``
follow."""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad import dtypes
from funcgrad.errors import ConcretizationTypeError


def _lanczos(radius: float, x: Any) -> Any:
    y = radius * jnp.sin(np.pi * x) * jnp.sin(np.pi * x / radius)
    out = jnp.where(x > 1e-3, jnp.divide(y, jnp.where(x != 0, np.pi ** 2 * x ** 2, 1)), 1)
    return jnp.where(x > radius, 0.0, out)


def _keys_cubic(x: Any) -> Any:
    out = ((1.5 * x - 2.5) * x) * x + 1.0
    out = jnp.where(x >= 1.0, ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0, out)
    return jnp.where(x >= 2.0, 0.0, out)


def _opencv_cubic(x: Any) -> Any:
    a = -0.75
    out = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    out = jnp.where(x >= 1.0, ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a, out)
    return jnp.where(x >= 2.0, 0.0, out)


def _triangle(x: Any) -> Any:
    return jnp.maximum(0, 1 - jnp.abs(x))


class ResizeMethod(enum.Enum):
    """Image resize method (JAX's enum; strings name them too, see ``from_string``)."""

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> ResizeMethod:
        """The method a string names.

        >>> ResizeMethod.from_string("bilinear")
        <ResizeMethod.LINEAR: 1>
        """
        names = {"nearest": ResizeMethod.NEAREST, "linear": ResizeMethod.LINEAR,
                 "bilinear": ResizeMethod.LINEAR, "trilinear": ResizeMethod.LINEAR,
                 "triangle": ResizeMethod.LINEAR, "lanczos3": ResizeMethod.LANCZOS3,
                 "lanczos5": ResizeMethod.LANCZOS5, "cubic": ResizeMethod.CUBIC,
                 "bicubic": ResizeMethod.CUBIC, "tricubic": ResizeMethod.CUBIC,
                 "cubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
                 "bicubic-pytorch": ResizeMethod.CUBIC_PYTORCH, "area": ResizeMethod.AREA}
        if s not in names:
            raise ValueError(f'Unknown resize method "{s}"')
        return names[s]


_AREA: Callable[[Any], Any] = lambda x: x  # noqa: E731 - a marker: area weights are overlaps

_KERNELS: dict[ResizeMethod, tuple[int, Callable[[Any], Any]]] = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, lambda x: _lanczos(3.0, x)),
    ResizeMethod.LANCZOS5: (5, lambda x: _lanczos(5.0, x)),
    ResizeMethod.CUBIC: (2, _keys_cubic),
    ResizeMethod.CUBIC_PYTORCH: (2, _opencv_cubic),
    ResizeMethod.AREA: (1, _AREA),
}


def _normalize(weights: Any) -> Any:
    total = jnp.sum(weights, axis=0, keepdims=True)
    eps = 1000.0 * float(np.finfo(np.float32).eps)
    return jnp.where(jnp.abs(total) > eps,
                     jnp.divide(weights, jnp.where(total != 0, total, 1)), 0)


def _weight_matrix(input_size: int, output_size: int, scale: Any, translation: Any,
                   kernel: Callable[[Any], Any], antialias: bool, edge_padding: bool,
                   radius: int) -> Any:
    """The ``(input_size, output_size)`` matrix of one axis's resampling weights."""
    dtype = jnp.result_type(scale, translation)
    inv_scale = 1.0 / scale
    kernel_scale = jnp.maximum(inv_scale, 1.0) if antialias else 1.0
    sample_f = ((jnp.arange(output_size, dtype=dtype) + 0.5) * inv_scale
                - translation * inv_scale - 0.5)
    k = 0
    if edge_padding:
        k = radius
        if antialias:
            try:
                k = math.ceil(radius * max(1.0 / float(scale), 1.0))
            except ConcretizationTypeError as e:
                raise ConcretizationTypeError(
                    "Antialiasing with edge padding requires a static scale.") from e
    expanded = jnp.arange(-k, input_size + k, dtype=dtype)
    if kernel is _AREA:
        left_i = jnp.arange(output_size, dtype=dtype) * inv_scale - translation * inv_scale
        right_i = left_i + inv_scale
        left_j = jnp.arange(input_size, dtype=dtype)
        right_j = left_j + 1.0
        weights = jnp.maximum(0.0, jnp.minimum(right_i[None, :], right_j[:, None])
                              - jnp.maximum(left_i[None, :], left_j[:, None]))
    else:
        weights = kernel(jnp.abs(sample_f[None, :] - expanded[:, None]) / kernel_scale)
    if edge_padding:
        # Taps beyond the edges read the edge pixel: their weights add onto its row.
        rows = jnp.clip(expanded.astype(np.int32), 0, input_size - 1)
        mat = jnp.zeros((input_size, output_size), dtype=weights.dtype)
        cols = jnp.broadcast_to(jnp.arange(output_size)[None, :], weights.shape)
        return _normalize(mat.at[rows[:, None], cols].add(weights))
    weights = _normalize(weights)
    inside = jnp.logical_and(sample_f >= -0.5, sample_f <= input_size - 0.5)
    return jnp.where(inside[None, :], weights, 0)


def _scale_and_translate(x: Any, shape: tuple[int, ...], spatial_dims: Sequence[int],
                         scale: Sequence[Any], translation: Sequence[Any],
                         method: ResizeMethod, antialias: bool, precision: Any) -> Any:
    del precision  # the CPU backends compute at full precision: HIGHEST, always
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    edge_padding = method == ResizeMethod.CUBIC_PYTORCH and not antialias
    for i, d in enumerate(spatial_dims):
        d = d + x.ndim if d < 0 else d
        w = _weight_matrix(x.shape[d], shape[d], scale[i], translation[i], kernel,
                           antialias, edge_padding, radius).astype(x.dtype)
        x = jnp.moveaxis(jnp.tensordot(x, w, axes=([d], [0])), -1, d)
    return x


def _inexact(x: Any) -> Any:
    x = jnp.asarray(x)
    return x if dtypes.is_inexact(x.dtype) else x.astype(jnp.result_type(float))


def _method(method: str | ResizeMethod) -> ResizeMethod:
    if isinstance(method, str):
        return ResizeMethod.from_string(method)
    if not isinstance(method, ResizeMethod):
        raise TypeError(f"method must be a string or a ResizeMethod, got {method!r}")
    return method


def _check_shape(shape: Any, image: Any) -> tuple[int, ...]:
    shape = tuple(int(s) for s in shape)
    if len(shape) != image.ndim:
        raise ValueError("shape must have length equal to the number of dimensions of x; "
                         f" {shape} vs {image.shape}")
    return shape


def scale_and_translate(image: Any, shape: Sequence[int], spatial_dims: Sequence[int],
                        scale: Any, translation: Any, method: str | ResizeMethod,
                        antialias: bool = True, precision: Any = None) -> Any:
    """Resample ``image`` to ``shape``: an input location ``x`` of axis ``spatial_dims[i]``
    goes to ``x * scale[i] + translation[i]`` (half-centred pixels; samples that fall
    outside the input are zero), as ``jax.image.scale_and_translate``. ``precision`` is
    accepted for JAX's signature (the CPU computes at full precision).

    >>> import funcgrad.numpy as jnp
    >>> from funcgrad import image
    >>> image.scale_and_translate(jnp.arange(4.0), (4,), (0,), jnp.array([1.0]),
    ...                           jnp.array([1.0]), "linear")
    Array([0., 0., 1., 2.], dtype=float32)
    """
    image = _inexact(image)
    shape = _check_shape(shape, image)
    m = _method(method)
    if m == ResizeMethod.NEAREST:
        raise ValueError("Nearest neighbor resampling is not currently supported for "
                         "scale_and_translate.")
    if len(spatial_dims) == 0:
        return image
    scale, translation = jnp.asarray(scale), jnp.asarray(translation)
    dt = jnp.result_type(scale, translation, float)
    scale, translation = scale.astype(dt), translation.astype(dt)
    return _scale_and_translate(image, shape, tuple(spatial_dims),
                                [scale[i] for i in range(len(spatial_dims))],
                                [translation[i] for i in range(len(spatial_dims))],
                                m, antialias, precision)


def _resize_nearest(x: Any, shape: tuple[int, ...]) -> Any:
    for d in range(x.ndim):
        m, n = x.shape[d], shape[d]
        if m == n:
            continue
        offsets = (np.arange(n, dtype=np.float32) + 0.5) * np.float32(m) / np.float32(n)
        index: list[Any] = [slice(None)] * x.ndim
        index[d] = np.floor(offsets.astype(np.float32)).astype(np.int32)
        x = x[tuple(index)]
    return x


def resize(image: Any, shape: Sequence[int], method: str | ResizeMethod,
           antialias: bool = True, precision: Any = None) -> Any:
    """``image`` resampled to ``shape`` (every axis whose size changes), as
    ``jax.image.resize``: ``"nearest"``, ``"linear"`` (``"bilinear"``, ``"trilinear"``),
    ``"cubic"`` (Keys; ``"bicubic"``, ``"tricubic"``), ``"cubic-pytorch"``, ``"lanczos3"``,
    ``"lanczos5"``, ``"area"``; ``antialias`` widens the kernel when downsampling.
    ``precision`` is accepted for JAX's signature.

    >>> import funcgrad.numpy as jnp
    >>> from funcgrad import image
    >>> image.resize(jnp.array([0.0, 1.0]), (4,), "linear")
    Array([0.  , 0.25, 0.75, 1.  ], dtype=float32)
    """
    m = _method(method)
    image = jnp.asarray(image)
    shape = _check_shape(shape, image)
    if m == ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    image = _inexact(image)
    dims = tuple(i for i in range(image.ndim) if image.shape[i] != shape[i])
    scale = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in dims]
    return _scale_and_translate(image, shape, dims, scale, [0.0] * len(dims), m, antialias,
                                precision)
