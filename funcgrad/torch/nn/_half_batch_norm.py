"""PyTorch's CPU batch-norm kernel for a float16/bfloat16 input, bit for bit.

ATen's kernel (``aten/src/ATen/native/cpu/batch_norm_kernel.cpp`` and
``Normalization.cpp``) accumulates in float32 in a fixed order, stores the mean and the
sum of squares in the parameters' dtype (the half type, unless a parameter or running
statistic is float32: the "mixed" case), derives ``invstd`` from them, and computes the
output as ``x * alpha + beta`` with ``alpha = invstd * weight`` and
``beta = bias - mean * alpha`` (fused multiply-adds), rounded once. Its summation order
depends on the layout: an input with one element per channel and sample (``(N, C)``,
``(N, C, 1)``...) takes the channels-last path, split into ``get_num_threads()`` chunks of
the batch; any other contiguous input is summed in float lanes of the CPU's vector width.

Everything here works on concrete NumPy values (float32 arrays holding the half values)
and returns float32 arrays; :mod:`funcgrad.torch.nn.normalization` calls it for the
values and keeps its own formula for the derivatives and inside traced transforms.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_F32 = np.float32
_F64 = np.float64


# float32 lanes of ATen's ``Vectorized<float>`` in this kernel (two per half vector):
# measured against PyTorch 2.13's CPU wheel, which sums in 8 lanes even on an AVX-512
# machine, with no fused multiply-add.
LANES = 8


def _seq(a: np.ndarray) -> np.ndarray:
    """The float32 sum along the last axis, added one element after another from 0."""
    if a.shape[-1] == 0:
        return np.zeros(a.shape[:-1], _F32)
    return np.add.accumulate(a.astype(_F32), axis=-1, dtype=_F32)[..., -1]


def _squares(d: np.ndarray) -> np.ndarray:
    """``acc += d * d`` along the last axis in float32, from 0, each product rounded."""
    return _seq((d * d).astype(_F32))


def _as(v: Any, dtype: Any) -> np.ndarray:
    """``v`` rounded to ``dtype`` (None: float32, unrounded) and read back as float32."""
    v = np.asarray(v, _F32)
    return v if dtype is None else v.astype(dtype).astype(_F32)


def _contiguous_stats(x3: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and sum of squared deviations of an ``(N, C, L)`` input, ``L > 1``, in the
    contiguous kernel's order: per sample, blocks of two float vectors summed lane by
    lane, the rest one by one; the lanes reduced in order at the end."""
    n, c, length = x3.shape
    step = 2 * LANES
    k = length // step * step
    vec = x3[:, :, :k].reshape(n, c, k // step, 2, LANES).transpose(1, 4, 0, 2, 3)
    vec = vec.reshape(c, LANES, -1)
    tail = x3[:, :, k:].transpose(1, 0, 2).reshape(c, -1)
    total = (_seq(tail) + _seq(_seq(vec))).astype(_F32)
    mean = (total / _F32(n * length)).astype(_F32)
    dvec = (vec - mean[:, None, None]).astype(_F32)
    dtail = (tail - mean[:, None]).astype(_F32)
    var_sum = (_squares(dtail) + _seq(_squares(dvec))).astype(_F32)
    return mean, var_sum


def _channels_last_stats(x2: np.ndarray, param: Any, threads: int
                         ) -> tuple[np.ndarray, np.ndarray]:
    """Mean (rounded to ``param``) and sum of squared deviations of an ``(N, C)`` input in
    the channels-last kernel's order: with more samples than threads, one partial sum per
    thread's chunk of the batch; otherwise one by one, the deviations of a half input
    rounded to the half type (ATen's half arithmetic)."""
    n = x2.shape[0]
    if n > threads:
        chunk = -(-n // threads)
        parts = [x2[i:i + chunk].T for i in range(0, n, chunk)]
        total = _seq(np.stack([_seq(p) for p in parts], axis=-1))
        mean = _as(total / _F32(n), param)
        var_sum = _seq(np.stack([_squares((p - mean[:, None]).astype(_F32))
                                 for p in parts], axis=-1))
        return mean, var_sum
    mean = _as(_seq(x2.T) / _F32(n), param)
    return mean, _squares((x2.T - mean[:, None]).astype(_F32))


def batch_stats(x: np.ndarray, param: Any, threads: int) -> tuple[np.ndarray, np.ndarray]:
    """``(mean, var_sum)`` per channel (axis 1) of a float32 array holding half values, as
    ATen stores them: in ``param`` (the half dtype, or None for float32)."""
    n, c = x.shape[:2]
    length = x.size // (n * c) if n * c else 0
    if length == 1:
        mean, var_sum = _channels_last_stats(x.reshape(n, c), param, threads)
    else:
        mean, var_sum = _contiguous_stats(x.reshape(n, c, length))
        mean = _as(mean, param)
    return mean, _as(var_sum, param)


def _quotient(v: np.ndarray, count: int, param: Any) -> np.ndarray:
    """``v / count`` as ATen's ``param_t / int64_t``: in the half type for a half ``v``."""
    if param is None:
        return (v / _F32(count)).astype(_F32)
    return _as(v / _as(count, param), param)


def invstd(var_sum: np.ndarray, count: int, param: Any, eps: float) -> np.ndarray:
    """``1 / sqrt(var_sum / count + eps)``, the quotient in ``param`` (or float32) and the
    rest in double (ATen adds the double ``eps``), stored in ``param`` or float32."""
    var = _quotient(var_sum, count, param).astype(_F64)
    with np.errstate(divide="ignore"):
        out = 1.0 / np.sqrt(var + eps)
    if eps == 0:
        out = np.where(var == 0, 0.0, out)
    return _as(out.astype(_F32), param)


def running_update(running: np.ndarray, stat: np.ndarray, momentum: float, param: Any,
                   stat_in_param: bool) -> np.ndarray:
    """``momentum * stat + (1 - momentum) * running`` as ATen's update: the momentum cast
    to ``param``, and for a half ``param`` each product of two half values (and their sum)
    rounded to it (``stat_in_param``: the mean; the unbiased variance is float32)."""
    if param is None:
        mom = _F32(momentum)
        return ((mom * stat).astype(_F32) + ((_F32(1) - mom) * running).astype(_F32)
                ).astype(_F32)
    mom = _as(momentum, param)
    first = (mom * stat).astype(_F32)
    if stat_in_param:
        first = _as(first, param)
    total = (first + _as(_as(1 - mom, param) * running, param)).astype(_F32)
    return _as(total, param)


def unbiased(var_sum: np.ndarray, count: int, param: Any) -> np.ndarray:
    """The unbiased variance ATen feeds the running variance: ``var_sum / (count - 1)``."""
    return _quotient(var_sum, count - 1, param)


def normalize(x: np.ndarray, mean: np.ndarray, inv: np.ndarray, weight: Any, bias: Any
              ) -> np.ndarray:
    """``x * alpha + beta`` per channel (axis 1), fused, in float32 (not yet rounded)."""
    alpha = inv if weight is None else (inv * np.asarray(weight, _F32)).astype(_F32)
    b = np.zeros_like(mean) if bias is None else np.asarray(bias, _F32)
    beta = (b.astype(_F64) - mean.astype(_F64) * alpha.astype(_F64)).astype(_F32)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    out = x.astype(_F64) * alpha.reshape(shape).astype(_F64) + beta.reshape(shape)
    return out.astype(_F32)


def forward(x: np.ndarray, running_mean: Any, running_var: Any, weight: Any, bias: Any,
            use_stats: bool, per_instance: bool, eps: float, mixed: bool, threads: int
            ) -> np.ndarray:
    """The kernel's output for a half ``x`` (NumPy, its own dtype): normalized by the
    batch's statistics (``use_stats``; per sample and channel when ``per_instance``, as
    PyTorch's instance norm runs batch norm on an ``(1, N * C, ...)`` view) or by the
    running ones, then ``weight``/``bias``. ``mixed``: a parameter or running statistic is
    float32, so the statistics stay in float32."""
    half = x.dtype
    shape = x.shape
    xf = x.astype(_F32)
    w = None if weight is None else np.asarray(weight, _F32)
    b = None if bias is None else np.asarray(bias, _F32)
    if per_instance:
        xf = xf.reshape((1, shape[0] * shape[1]) + shape[2:])
        w = None if w is None else np.tile(w, shape[0])
        b = None if b is None else np.tile(b, shape[0])
    if use_stats:
        param, store = stats_dtypes(half, mixed)
        mean, var_sum = batch_stats(xf, param, threads)
        inv = _as(invstd(var_sum, xf.size // xf.shape[1], param, eps), store)
        mean = _as(mean, store)
    else:
        mean = np.asarray(running_mean, _F32)
        inv = (_F32(1) / np.sqrt(np.asarray(running_var, _F32) + _F32(eps))).astype(_F32)
        if per_instance:
            mean, inv = np.tile(mean, shape[0]), np.tile(inv, shape[0])
    return normalize(xf, mean, inv, w, b).reshape(shape).astype(half)


def stats_dtypes(half: Any, mixed: bool) -> tuple[Any, Any]:
    """The dtype the kernel accumulates its stored statistics in (None: float32) and the
    dtype it stores them in: bfloat16 both, float16 float32 then float16, float32 both
    when ``mixed``."""
    if mixed:
        return None, None
    return (None if np.dtype(half) == np.float16 else half), half


def update_running(x: np.ndarray, running_mean: Any, running_var: Any, momentum: float,
                   mixed: bool, threads: int) -> tuple[Any, Any]:
    """The kernel's new running statistics (float32 arrays of the running dtype's values;
    None for one not given) after a training step on the half ``x``."""
    param, store = stats_dtypes(x.dtype, mixed)
    xf = x.astype(_F32)
    mean, var_sum = batch_stats(xf, param, threads)
    count = xf.size // xf.shape[1]
    new_mean = new_var = None
    if running_mean is not None:
        new_mean = _as(running_update(np.asarray(running_mean, _F32), mean, momentum, param,
                                      True), store)
    if running_var is not None:
        new_var = _as(running_update(np.asarray(running_var, _F32),
                                     unbiased(var_sum, count, param), momentum, param, False),
                      store)
    return new_mean, new_var
