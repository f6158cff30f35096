"""Block-scaled matrix products: ``jax.nn.scaled_matmul``, ``scaled_dot_general`` and
``get_scaled_dot_general_config``.

JAX runs these only as a cuDNN kernel (Blackwell GPUs) and raises on the CPU. Here they are
the operations' documented mathematics, written with funcgrad operations, so they run on
every backend: each element of an operand is multiplied by the scale of its block along the
contracting axis, and the products are summed in float32.

funcgrad's arrays have no float8/float4 dtypes, so the quantized operands are held exactly in
float32 (every float8/float4 value is a float32 value), and the rounding that JAX's
``astype(float8_e4m3fn)`` does is reproduced on the float32 grid (round half to even at the
narrow type's spacing). NumPy arrays of ml_dtypes' narrow types are accepted as inputs and
widened exactly.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np

import funcgrad.numpy as jnp
from funcgrad import dtypes, lax
from funcgrad.transforms.custom import custom_vjp

__all__ = ["BlockScaleConfig", "get_scaled_dot_general_config", "scaled_dot_general",
           "scaled_matmul"]


@dataclass(slots=True)
class BlockScaleConfig:
    """How one operand of ``scaled_dot_general`` is quantized (JAX's class of that name)."""

    mode: str
    block_size: int
    data_type: Any
    scale_type: Any
    global_scale: Any
    infer_only: bool


def _widen(x: Any) -> Any:
    """An operand as a funcgrad array; ml_dtypes' float8/float4 arrays widen exactly to
    float32 (funcgrad has no arrays of those types)."""
    dt = getattr(x, "dtype", None)
    if isinstance(x, np.ndarray | np.generic) and dt is not None and \
            np.dtype(dt).itemsize == 1 and np.dtype(dt).name.startswith("float"):
        return jnp.asarray(np.asarray(x).astype(np.float32))
    return jnp.asarray(x)


def _compute_dtype(preferred: Any) -> Any:
    # JAX fixes the compute type to float32; a float64 output (under x64) keeps float64.
    return dtypes.result_type(np.float32, preferred)


def scaled_matmul(lhs: Any, rhs: Any, lhs_scales: Any, rhs_scales: Any,
                  preferred_element_type: Any = np.float32) -> Any:
    """Block-scaled batched product ``einsum('BMK,BNK->BMN', lhs * s_l, rhs * s_r)``, where
    each scale covers ``K // K_s`` consecutive elements of the contracting axis.

    >>> import funcgrad.numpy as jnp
    >>> a = jnp.array([1.0, 2.0, 3.0]).reshape(1, 1, 3)
    >>> b = jnp.array([4.0, 5.0, 6.0]).reshape(1, 1, 3)
    >>> s = jnp.array([0.5]).reshape(1, 1, 1)
    >>> scaled_matmul(a, b, s, s)
    Array([[[8.]]], dtype=float32)
    """
    a, b, sa, sb = (_widen(t) for t in (lhs, rhs, lhs_scales, rhs_scales))
    if not all(t.ndim == 3 for t in (a, b, sa, sb)):
        raise ValueError("scaled_matmul requires all inputs to be 3-dimensional arrays")
    (ba, m, k), (bb, n, kb) = a.shape, b.shape
    if k != kb or ba != bb:
        raise ValueError(
            "scaled_matmul requires inputs a and b to have matching batch (B) and contract "
            f"(K) dimensions, but got shapes {a.shape} and {b.shape}")
    (bsa, msa, ksa), (bsb, nsb, ksb) = sa.shape, sb.shape
    if ksa != ksb or bsa != bsb:
        raise ValueError(
            "scaled_matmul requires scales to have matching batch (B) and contract (K) "
            f"dimensions, but got shapes {sa.shape} and {sb.shape}")
    if msa != m or nsb != n:
        raise ValueError(
            "scaled_matmul requires scales to match non-contract dimensions of inputs, but "
            f"got shapes a: {a.shape}, b: {b.shape}, a_scales: {sa.shape}, "
            f"b_scales: {sb.shape}")
    if bsa != ba or ksa == 0 or k % ksa:
        raise ValueError(
            "scaled_matmul requires the scales' batch to match the inputs' and K to be a "
            f"multiple of the scales' last dimension, but got a: {a.shape}, "
            f"a_scales: {sa.shape}")
    out_dtype = dtypes.canonicalize_dtype(preferred_element_type)
    ct = _compute_dtype(out_dtype)
    block = k // ksa
    da = a.astype(ct) * jnp.repeat(sa.astype(ct), block, axis=-1)
    db = b.astype(ct) * jnp.repeat(sb.astype(ct), block, axis=-1)
    out = lax.dot_general(da, db, (((2,), (2,)), ((0,), (0,))))
    return out.astype(out_dtype)


def get_scaled_dot_general_config(mode: str, global_scale: Any = None) -> BlockScaleConfig:
    """The quantization config of ``mode`` ('mxfp8' or 'nvfp4') for ``scaled_dot_general``.

    >>> get_scaled_dot_general_config("mxfp8").block_size
    32
    """
    if mode == "nvfp4":
        one = jnp.ones((1,), dtype=np.float32)
        return BlockScaleConfig(mode="nvfp4", block_size=16, data_type=ml_dtypes.float4_e2m1fn,
                                scale_type=ml_dtypes.float8_e4m3fn,
                                global_scale=one if global_scale is None else global_scale,
                                infer_only=False)
    if mode == "mxfp8":
        return BlockScaleConfig(mode="mxfp8", block_size=32, data_type=ml_dtypes.float8_e4m3fn,
                                scale_type=ml_dtypes.float8_e8m0fnu, global_scale=None,
                                infer_only=False)
    raise ValueError(f"Unsupported mode: {mode}")


# ------------------------------------------------------------------------ quantization


def _round_to(x: Any, narrow: Any) -> Any:
    """``x`` (within the finite range of ``narrow``) rounded half to even onto ``narrow``'s
    grid, kept in ``x``'s dtype: what ``astype(narrow)`` stores."""
    fi = ml_dtypes.finfo(narrow)
    _, e = jnp.frexp(x)
    # The spacing of the binade holding |x| (subnormals share the smallest normal one).
    step = jnp.maximum(e - 1, int(fi.minexp)) - int(fi.nmant)
    return jnp.ldexp(jnp.round(jnp.ldexp(x, -step)), step)


def _e8m0_round_up(x: Any) -> Any:
    """The float8_e8m0fnu exponent byte of ``x``, rounded up (JAX's cast_to_e8m0)."""
    bits = lax.bitcast_convert_type(x.astype(np.float32), np.uint32)
    exp = jnp.right_shift(bits, np.uint32(23))
    mant = jnp.bitwise_and(bits, np.uint32(0x7FFFFF))
    up = jnp.logical_and(jnp.logical_and(mant > 0, exp != 0xFE),
                         jnp.logical_not(jnp.logical_and(exp == 0, mant <= 0x400000)))
    return jnp.where(up, exp + 1, exp)


def _e8m0_value(exp: Any, dtype: Any, stored: bool = False) -> Any:
    val = lax.bitcast_convert_type(jnp.left_shift(exp.astype(np.uint32), np.uint32(23)),
                                   np.float32)
    tiny = 2.0 ** -15 if np.dtype(dtype) == np.float16 else 2.0 ** -127
    # Byte 0 is 2**-127 (JAX divides float16 by 2**-15 instead); the stored byte 255 is NaN,
    # while JAX's division uses the bit pattern's infinity.
    val = jnp.where(val == 0, np.float32(tiny), val)
    if stored:
        val = jnp.where(exp == 255, np.float32(np.nan), val)
    return val.astype(dtype)


def _quantize(x: Any, config: BlockScaleConfig) -> tuple[Any, Any]:
    """(values on the data type's grid, per-block scales), both held in wide floats."""
    shape = x.shape
    bs = config.block_size
    if shape[-1] < bs or shape[-1] % bs:
        raise ValueError(f"scaled_dot_general: the contracting size {shape[-1]} must be a "
                         f"multiple of the block size {bs} ({config.mode})")
    x = x.reshape(shape[:-1] + (shape[-1] // bs, bs))
    big = jnp.asarray(ml_dtypes.finfo(config.data_type).max.astype(np.float64)).astype(x.dtype)

    def block_scales(v: Any) -> Any:
        return jnp.max(jnp.abs(v), axis=-1, keepdims=True) / big

    if config.mode == "mxfp8":
        if config.global_scale is not None:
            raise ValueError("scaled_dot_general: mxfp8 takes no global_scale")
        exp = _e8m0_round_up(block_scales(x))
        scaled = x / _e8m0_value(exp, x.dtype)
        scales = _e8m0_value(exp, np.float32, stored=True)
    elif config.mode == "nvfp4":
        gs = jnp.asarray(config.global_scale)
        if gs.dtype != np.float32:
            raise TypeError("scaled_dot_general: an nvfp4 global_scale must be float32, got "
                            f"{gs.dtype}")
        scale_max = float(ml_dtypes.finfo(config.scale_type).max)
        x = x / gs
        scales = _round_to(jnp.clip(block_scales(x), 0, scale_max), config.scale_type)
        scales = scales.astype(np.float32)
        scaled = x / scales
    else:
        raise ValueError(f"Unrecognized mode: {config.mode}.")
    q = _round_to(jnp.clip(scaled, -big, big), config.data_type)
    return q.reshape(shape), scales.reshape(scales.shape[:-1])


# ------------------------------------------------------------------- shape bookkeeping


def _to_3d(x: Any, contract: tuple[int, ...], batch: tuple[int, ...]) -> Any:
    """``x`` transposed and reshaped to (batch, kept, contracting)."""
    dims = range(x.ndim)
    b = [d for d in dims if d in batch]
    c = [d for d in dims if d in contract]
    kept = [d for d in dims if d not in contract and d not in batch]
    size = (lambda ds: int(np.prod([x.shape[d] for d in ds], dtype=np.int64)))
    return jnp.transpose(x, b + kept + c).reshape(size(b), size(kept), size(c))


def _out_shape(ls: tuple[int, ...], rs: tuple[int, ...], ldn: Any, rdn: Any) -> tuple[int, ...]:
    (lc, lb), (rc, rb) = ldn, rdn
    return (tuple(d for i, d in enumerate(ls) if i in lb)
            + tuple(d for i, d in enumerate(ls) if i not in lc and i not in lb)
            + tuple(d for i, d in enumerate(rs) if i not in rc and i not in rb))


def _scaled_3d(lhs: Any, rhs: Any, lcfg: BlockScaleConfig, rcfg: BlockScaleConfig,
               out_dtype: Any) -> Any:
    lq, ls = _quantize(lhs, lcfg)
    rq, rs = _quantize(rhs, rcfg)
    return scaled_matmul(lq, rq, ls, rs, preferred_element_type=out_dtype)


def _forward(lhs: Any, rhs: Any, dn: Any, preferred: Any, configs: list[Any]) -> Any:
    (lc, rc), (lb, rb) = dn
    nv = configs[0].mode == "nvfp4"
    out = _scaled_3d(_to_3d(lhs, lc, lb), _to_3d(rhs, rc, rb), configs[0], configs[1],
                     np.float32 if nv else preferred)
    if nv:
        out = (out * (jnp.asarray(configs[0].global_scale)
                      * jnp.asarray(configs[1].global_scale))).astype(preferred)
    return out.reshape(_out_shape(lhs.shape, rhs.shape, (lc, lb), (rc, rb)))


def _transpose_lhs(g: Any, x_shape: tuple[int, ...], y: Any, dn: Any, preferred: Any,
                   configs: list[Any], swap: bool = False) -> Any:
    """The cotangent of the lhs (shape ``x_shape``) from the output's ``g``: ``g`` against
    ``y`` over the axes ``y`` kept, quantized as ``configs`` (gradient's, y's) say."""
    (xc, yc), (xb, yb) = dn
    x_kept = [d for d in range(len(x_shape)) if d not in xc and d not in xb]
    y_kept = [d for d in range(y.ndim) if d not in yc and d not in yb]
    nb, nxk, nyk = len(xb), len(x_kept), len(y_kept)
    g_batch = tuple(range(nb))
    if swap:
        g_y = tuple(range(nb, nb + nyk))
    else:
        g_y = tuple(range(nb + nxk, nb + nxk + nyk))
    xc_by_y = list(np.take(xc, np.argsort(yc))) if len(xc) else []
    out_axes = tuple(int(i) for i in np.argsort(list(xb) + x_kept + xc_by_y))
    y_dn, g_dn = (tuple(y_kept), tuple(yb)), (g_y, g_batch)
    y3, g3 = _to_3d(y, *y_dn), _to_3d(g, *g_dn)
    if configs[0].mode != "nvfp4":
        out = _scaled_3d(g3, y3, configs[0], configs[1], preferred)
    else:
        ct = dtypes.result_type(g3.dtype, y3.dtype, preferred)
        out = lax.dot_general(g3.astype(ct), y3.astype(ct),
                              (((2,), (2,)), ((0,), (0,)))).astype(preferred)
    out = out.reshape(_out_shape(g.shape, y.shape, g_dn, y_dn))
    return lax.transpose(out, out_axes)


def _backward(dn: Any, preferred: Any, configs: list[Any], lhs: Any, rhs: Any,
              g: Any) -> tuple[Any, Any]:
    (xc, yc), (xb, yb) = dn
    gl = _transpose_lhs(g, lhs.shape, rhs, dn, preferred, [configs[2], configs[1]])
    gr = _transpose_lhs(g, rhs.shape, lhs, ((yc, xc), (yb, xb)), preferred,
                        [configs[2], configs[0]], swap=True)
    if configs[2].mode == "nvfp4":
        # Straight-through estimator: inputs clipped by the forward quantization get no
        # gradient, as in JAX.
        big = float(ml_dtypes.finfo(configs[0].data_type).max)
        scale_max = float(ml_dtypes.finfo(configs[0].scale_type).max)
        gl = jnp.where(jnp.abs(lhs) <= jnp.asarray(configs[0].global_scale) * big * scale_max,
                       gl, 0)
        gr = jnp.where(jnp.abs(rhs) <= jnp.asarray(configs[1].global_scale) * big * scale_max,
                       gr, 0)
    return gl, gr


_OUT_TYPES = (np.dtype(np.float32), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float16))


def scaled_dot_general(lhs: Any, rhs: Any, dimension_numbers: Any,
                       preferred_element_type: Any = np.float32, configs: Any = None,
                       implementation: Any = None) -> Any:
    """``lax.dot_general`` with both operands quantized blockwise along the contracting axes
    as ``configs`` say (lhs, rhs, gradient); the derivative quantizes the gradient with the
    third config (straight-through for nvfp4), as JAX's. Without ``configs``, a plain
    ``dot_general``.

    >>> import funcgrad.numpy as jnp
    >>> cfg = [get_scaled_dot_general_config("mxfp8")] * 3
    >>> x = jnp.ones((2, 32))
    >>> scaled_dot_general(x, x, (((1,), (1,)), ((), ())), configs=cfg)
    Array([[32., 32.],
           [32., 32.]], dtype=float32)
    """
    if implementation is not None:
        warnings.warn("Backend selector, now ignored. The system chooses the backend "
                      "automatically.", DeprecationWarning, stacklevel=2)
    lhs, rhs = _widen(lhs), _widen(rhs)
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))
    if configs is None:
        out_dtype = dtypes.canonicalize_dtype(preferred_element_type)
        ct = dtypes.result_type(lhs.dtype, rhs.dtype, out_dtype)
        return lax.dot_general(lhs.astype(ct), rhs.astype(ct), dn).astype(out_dtype)
    if np.dtype(preferred_element_type) not in _OUT_TYPES:
        raise TypeError("scaled_dot_general supports preferred_element_type float32, "
                        f"bfloat16 or float16, but got {np.dtype(preferred_element_type)}")
    if len(configs) != 3:
        raise ValueError("scaled_dot_general takes three configs (lhs, rhs, gradient), got "
                         f"{len(configs)}")
    preferred = dtypes.canonicalize_dtype(preferred_element_type)
    # Without batch axes, a unit batch axis is appended to both operands and dropped after.
    squeeze = not lb or not rb
    if not lb:
        lhs, lb = jnp.expand_dims(lhs, lhs.ndim), (lhs.ndim,)
    if not rb:
        rhs, rb = jnp.expand_dims(rhs, rhs.ndim), (rhs.ndim,)
    dnb = ((dn[0][0], dn[0][1]), (tuple(lb), tuple(rb)))
    cfgs = list(configs)

    @custom_vjp
    def fn(a: Any, b: Any) -> Any:
        return _forward(a, b, dnb, preferred, cfgs)

    def fwd(a: Any, b: Any) -> tuple[Any, Any]:
        return _forward(a, b, dnb, preferred, cfgs), (a, b)

    def bwd(res: Any, g: Any) -> tuple[Any, Any]:
        return _backward(dnb, preferred, cfgs, res[0], res[1], g)

    fn.defvjp(fwd, bwd)
    out = fn(lhs, rhs)
    return jnp.squeeze(out, axis=0) if squeeze else out
