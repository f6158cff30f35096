"""PyTorch's CPU random stream: MT19937 and the kernels that turn its words into samples.

PyTorch's CPU generator is a 32-bit Mersenne Twister seeded with ``init_genrand(seed)``,
which is NumPy's legacy ``RandomState(seed & 0xFFFFFFFF)``. :class:`MTStream` keeps such a
state plus PyTorch's cached Box-Muller sample, and draws with PyTorch's algorithms
(``uniform_``, ``normal_``, ``random_``, ``randperm``, ``exponential_``...), so that
``torch.manual_seed(s)`` followed by the same calls gives PyTorch's numbers. The
``torch_*`` methods each state what PyTorch's CPU kernel does; the NumPy-named methods
(``random``, ``normal``, ``integers``, ``permutation``, ``poisson``...) serve the places
that only need reproducible draws from the same stream.

>>> s = MTStream(0)
>>> s.torch_uniform((3,), np.float32).tolist()
[0.49625658988952637, 0.7682217955589294, 0.08847743272781372]
"""

from __future__ import annotations

import math
from typing import Any, cast

import numpy as np

from funcgrad.primitives.xla_cpu_math import fma32 as _fma32

# PyTorch's default CPU seed (``torch.Generator().initial_seed()``).
DEFAULT_SEED = 67280421310721

# randperm draws 32-bit words below this size and 64-bit ones above (PyTorch's randperm_cpu).
_RANDPERM_32_BIT_LIMIT = (2 ** 32 - 1) // 20

# random_(from, to) draws a 64-bit word from this range on (to keep the modulo skew small).
_WIDE_RANGE = 2 ** 28

# The modulus of random_() without bounds, per dtype (PyTorch's uniform_int): the integer
# types' max + 1, the float types' 2**digits + 1.
_RANDOM_MOD = {"bool": 2, "uint8": 2 ** 8, "int8": 2 ** 7, "int16": 2 ** 15, "int32": 2 ** 31,
               "int64": 2 ** 63, "float16": 2 ** 11 + 1, "bfloat16": 2 ** 8 + 1,
               "float32": 2 ** 24 + 1, "float64": 2 ** 53 + 1}

# The size of PyTorch's CPUGeneratorImplState, and where its fields lie in it.
STATE_BYTES = 5056
_F32 = np.float32
_F64 = np.float64


def _shape(shape: Any) -> tuple[int, ...]:
    if shape is None:
        return ()
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(d) for d in shape)


# ----------------------------------------------------------------- exact float arithmetic
# PyTorch's kernels are compiled with FMA contraction: ``x * (to - from) + from`` and
# ``n * std + mean`` round once. NumPy has no fused multiply-add, so these rebuild it.

def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    t = 134217729.0 * a  # Veltkamp: 2**27 + 1 splits a double into two 26-bit halves
    hi = t - (t - a)
    return hi, a - hi


def _round_odd(s: np.ndarray, err: np.ndarray) -> np.ndarray:
    """``s`` (the rounded sum) nudged one ulp toward ``err`` when inexact and even: the
    sticky bit that lets a second rounding land where one rounding would."""
    bits = s.view(np.int64)
    fix = (err != 0) & ((bits & 1) == 0) & np.isfinite(s) & (s != 0)
    step = np.where((err > 0) == (s > 0), 1, -1)
    return np.where(fix, bits + step, bits).view(_F64)


def fma64(a: Any, b: Any, c: Any) -> np.ndarray:
    """``a * b + c`` in float64 with one rounding (rare 1-ulp misses under cancellation).

    >>> float(fma64(np.float64(0.1), 10.0, -1.0))
    5.551115123125783e-17
    """
    a, b, c = (np.asarray(v, _F64) for v in (a, b, c))
    a, b, c = np.broadcast_arrays(a, b, c)
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl  # p + e == a * b exactly
    s, t = _two_sum(p, c)
    u, v = _two_sum(t, e)
    out = s + _round_odd(u, v)
    return np.where(np.isfinite(p), out, p + c)


def fma32(a: Any, b: Any, c: Any) -> np.ndarray:
    """``a * b + c`` in float32 with one rounding (the engine's, on NumPy arrays).

    >>> float(fma32(np.float32(0.1), np.float32(10), np.float32(-1)))
    1.4901161193847656e-08
    """
    return cast(np.ndarray, _fma32(np, a, b, c))


# ----------------------------------------------------------------- avx_mathfun in float32
# On x86 with AVX2 PyTorch's float32 normal_ (16+ contiguous elements) runs Box-Muller with
# avx_mathfun's Cephes-style log and sincos; GCC fuses its multiply-adds. These reproduce
# that arithmetic (constants from Cephes' logf/sinf/cosf) bit for bit.

_LOG_P = (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1,
          1.4249322787E-1, -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1,
          3.3333331174E-1)


def _log_f32(x: np.ndarray) -> np.ndarray:
    """Cephes' float32 log for x in (0, 1]: x = m * 2**e, m in [sqrt(1/2), sqrt(2)), then a
    degree-9 polynomial in m - 1 and e * ln 2 split in two parts."""
    bits = np.maximum(x, np.float32(np.finfo(_F32).tiny)).view(np.int32)
    e = ((bits >> 23) - 0x7F).astype(_F32) + _F32(1)
    m = ((bits & ~0x7F800000) | 0x3F000000).view(_F32)  # mantissa scaled into [0.5, 1)
    small = m < _F32(0.707106781186547524)
    e = e - np.where(small, _F32(1), _F32(0))
    m = (m - _F32(1)) + np.where(small, m, _F32(0))
    z = m * m
    y = np.full_like(m, _F32(_LOG_P[0]))
    for p in _LOG_P[1:]:
        y = fma32(y, m, _F32(p))
    y = fma32(y * m, z, e * _F32(-2.12194440e-4))
    y = y - z * _F32(0.5)
    return fma32(e, _F32(0.693359375), m + y)


def _sincos_f32(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cephes' float32 sin and cos: reduce by multiples of pi/4 (in three parts), then one
    of two polynomials per octant, signs from the octant."""
    neg = np.signbit(x)
    x = np.abs(x)
    j = (x * _F32(1.27323954473516)).astype(np.int32)
    j = (j + 1) & ~1
    y = j.astype(_F32)
    sin_flip = neg ^ ((j & 4) != 0)
    cos_flip = (~(j - 2) & 4) != 0
    use_sin_poly = (j & 2) == 0
    for dp in (-0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8):
        x = fma32(y, _F32(dp), x)
    z = x * x
    c = fma32(fma32(np.full_like(x, _F32(2.443315711809948E-005)), z,
                    _F32(-1.388731625493765E-003)), z, _F32(4.166664568298827E-002))
    c = fma32(c * z, z, -(z * _F32(0.5))) + _F32(1)
    s = fma32(fma32(np.full_like(x, _F32(-1.9515295891E-4)), z, _F32(8.3321608736E-3)), z,
              _F32(-1.6666654611E-1))
    s = fma32(s * z, x, x)
    sin = np.where(use_sin_poly, s, c)
    cos = np.where(use_sin_poly, c, s)
    return np.where(sin_flip, -sin, sin), np.where(cos_flip, -cos, cos)


def _box_muller_f32(d: np.ndarray, mean: np.float32, std: np.float32) -> None:
    """PyTorch's AVX2 ``normal_fill_16`` on rows of 16 float32 uniforms, in place."""
    u1 = _F32(1) - d[:, :8]
    radius = np.sqrt(_F32(-2) * _log_f32(u1))
    sin, cos = _sincos_f32(_F32(2.0 * math.pi) * d[:, 8:])
    d[:, :8] = fma32(radius * cos, std, mean)
    d[:, 8:] = fma32(radius * sin, std, mean)


def _libm(fn: Any, x: np.ndarray) -> np.ndarray:
    # The math module calls the C library's log/sin/cos, as PyTorch's scalar kernels do;
    # NumPy's SIMD versions differ from them by an ulp now and then.
    return np.fromiter(map(fn, x.ravel().tolist()), _F64, x.size).reshape(x.shape)


def _box_muller_f64(d: np.ndarray, mean: float, std: float) -> None:
    """PyTorch's scalar ``normal_fill_16`` on rows of 16 float64 uniforms, in place."""
    radius = np.sqrt(-2 * _libm(math.log, 1 - d[:, :8]))
    theta = (2.0 * math.pi) * d[:, 8:]
    cos, sin = _libm(math.cos, theta), _libm(math.sin, theta)
    d[:, :8] = fma64(radius * cos, std, mean)
    d[:, 8:] = fma64(radius * sin, std, mean)


def _real_dtype(dt: np.dtype[Any]) -> np.dtype[Any]:
    return np.dtype(_F64 if dt == np.complex128 else _F32)


def _as_complex(pairs: np.ndarray, dt: np.dtype[Any]) -> np.ndarray:
    """A complex array from ``(..., 2)`` real and imaginary parts."""
    out = np.empty(pairs.shape[:-1], dt)
    out.real, out.imag = pairs[..., 0], pairs[..., 1]
    return out


def _is_double(dtype: Any) -> bool:
    return np.dtype(dtype) == _F64


class MTStream:
    """PyTorch's CPU generator: an MT19937 stream and its cached normal sample.

    >>> a = MTStream(7).torch_normal((20,), np.float64)
    >>> bool((MTStream(7).torch_normal((20,), np.float64) == a).all())
    True
    """

    def __init__(self, seed: int = DEFAULT_SEED) -> None:
        self.seed(seed)

    # -- state ------------------------------------------------------------------------
    def seed(self, seed: int) -> None:
        """Reseed (``manual_seed``): the twister from the low 32 bits, the cache cleared."""
        self.initial_seed = int(seed)
        self._mt = np.random.RandomState(int(seed) & 0xFFFFFFFF)
        self._normal: float | None = None  # the second Box-Muller sample, kept for the next

    def get_state(self) -> np.ndarray:
        """The state as PyTorch's 5056 bytes (``CPUGeneratorImplState``)."""
        state: Any = self._mt.get_state()
        key, pos = state[1], int(state[2])
        out = bytearray(STATE_BYTES)
        out[0:8] = (self.initial_seed % 2 ** 64).to_bytes(8, "little")
        out[8:12] = (625 - pos).to_bytes(4, "little")  # PyTorch counts down what is left
        out[12:16] = (1).to_bytes(4, "little")  # seeded
        # The index of the next word: 0 straight after seeding (PyTorch twists on the first
        # draw), where NumPy's twister stands at 624 too (the untwisted init_genrand key).
        s32 = self.initial_seed & 0xFFFFFFFF
        fresh = pos == 624 and int(key[0]) == s32 and \
            int(key[1]) == (1812433253 * (s32 ^ (s32 >> 30)) + 1) & 0xFFFFFFFF
        out[16:24] = (0 if fresh else int(pos)).to_bytes(8, "little")
        out[24:5016] = np.asarray(key, np.uint64).astype("<u8").tobytes()
        if self._normal is not None:
            out[5024:5032] = np.float64(self._normal).astype("<f8").tobytes()  # normal_y
            out[5040:5044] = (1).to_bytes(4, "little")
        return np.frombuffer(bytes(out), np.uint8).copy()

    def set_state(self, data: Any) -> None:
        """Restore a state :meth:`get_state` (or PyTorch's ``get_rng_state``) made."""
        raw = np.asarray(data, np.uint8).reshape(-1).tobytes()
        if len(raw) != STATE_BYTES:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {STATE_BYTES} but "
                               f"found the input RNG state size to be {len(raw)}")
        left = int.from_bytes(raw[8:12], "little", signed=True)
        if not 1 <= left <= 624:
            raise RuntimeError("The input RNG state is invalid: 'left' is out of range")
        key = np.frombuffer(raw[24:5016], "<u8").astype(np.uint32)
        self.initial_seed = int.from_bytes(raw[0:8], "little")
        self._mt = np.random.RandomState()
        self._mt.set_state(("MT19937", key, 625 - left, 0, 0.0))
        valid = int.from_bytes(raw[5040:5044], "little")
        self._normal = float(np.frombuffer(raw[5024:5032], "<f8")[0]) if valid else None

    # -- words ------------------------------------------------------------------------
    def _words32(self, n: int) -> np.ndarray:
        """``n`` outputs of the twister (PyTorch's ``random()``)."""
        return self._mt.randint(0, 2 ** 32, size=n, dtype=np.uint32)

    def _words64(self, n: int) -> np.ndarray:
        """``n`` of PyTorch's ``random64()``: two outputs, the first the high word."""
        w = self._words32(2 * n).astype(np.uint64)
        return (w[0::2] << np.uint64(32)) | w[1::2]

    def _unit(self, n: int, double: bool) -> np.ndarray:
        """``n`` uniforms in [0, 1) as PyTorch's ``uniform_real_distribution(0, 1)``: 53
        bits of a 64-bit word for double, 24 bits of a 32-bit word for float."""
        if double:
            return (self._words64(n) & np.uint64(2 ** 53 - 1)).astype(_F64) * 2.0 ** -53
        return (self._words32(n) & np.uint32(0xFFFFFF)).astype(_F32) * _F32(2.0 ** -24)

    # -- PyTorch's kernels -----------------------------------------------------------
    def torch_uniform(self, shape: Any, dtype: Any, low: float = 0.0, high: float = 1.0
                      ) -> np.ndarray:
        """``Tensor.uniform_(low, high)`` / ``rand``: one word per element in memory order,
        ``fma(x, to - from, from)`` in the dtype's compute type (float for float32, half
        and bfloat16; double for double); a value rounded up to ``to`` becomes ``from``.

        >>> MTStream(0).torch_uniform((2,), np.float64, -1.0, 1.0).tolist()
        [0.9401060036131061, 0.4156397287995759]
        """
        shape = _shape(shape)
        n = math.prod(shape)
        dt = np.dtype(dtype)
        if dt.kind == "c":  # PyTorch fills view_as_real(self): real, imaginary, real, ...
            pairs = self.torch_uniform(shape + (2,), _real_dtype(dt), low, high)
            return _as_complex(pairs, dt)
        if _is_double(dt):
            lo, hi = _F64(low), _F64(high)
            v = fma64(self._unit(n, True), hi - lo, lo)
        else:
            lo32, hi32 = _F32(low), _F32(high)
            v = fma32(self._unit(n, False), hi32 - lo32, lo32)
        v = np.asarray(v).astype(dt)
        v = np.where(v == np.asarray(high).astype(dt), np.asarray(low).astype(dt), v)
        return v.reshape(shape)

    def torch_normal(self, shape: Any, dtype: Any, mean: float = 0.0, std: float = 1.0,
                     contiguous: bool = True) -> np.ndarray:
        """``Tensor.normal_(mean, std)`` / ``randn``. Sixteen or more contiguous elements:
        all uniforms first, Box-Muller on blocks of 16 (pairs ``j``, ``j + 8``), the last
        16 redrawn when the size is no multiple of 16 (float32 with avx_mathfun's float
        log and sincos). Fewer, or strided: per element a double Box-Muller whose second
        sample is cached on the generator for the next such draw.

        >>> MTStream(0).torch_normal((3,), np.float32).tolist()
        [1.5409960746765137, -0.293428897857666, -2.1787893772125244]
        """
        shape = _shape(shape)
        n = math.prod(shape)
        dt = np.dtype(dtype)
        if dt.kind == "c":
            # PyTorch fills view_as_real(self) (twice the elements, real and imaginary parts
            # interleaved) with std / sqrt(2): each part carries half the variance.
            pairs = self.torch_normal(shape + (2,), _real_dtype(dt), mean,
                                      float(std) / math.sqrt(2), contiguous)
            return _as_complex(pairs, dt)
        if n < 16 or not contiguous:
            return self._normal_per_element(n, mean, std).astype(dt).reshape(shape)
        double = _is_double(dt)
        d = self._unit(n, double)
        m, s = (_F64(mean), _F64(std)) if double else (_F32(mean), _F32(std))
        fill = _box_muller_f64 if double else _box_muller_f32
        full = n // 16 * 16
        fill(d[:full].reshape(-1, 16), m, s)
        if n % 16:
            tail = self._unit(16, double).reshape(1, 16)
            fill(tail, m, s)
            d[n - 16:] = tail[0]
        return d.astype(dt).reshape(shape)

    def _normal_per_element(self, n: int, mean: float, std: float) -> np.ndarray:
        z = np.empty(n, _F64)
        start = 0
        if n and self._normal is not None:
            z[0], self._normal, start = self._normal, None, 1
        pairs = (n - start + 1) // 2
        if pairs:
            u = self._unit(2 * pairs, True).reshape(pairs, 2)
            r = np.sqrt(-2.0 * _libm(math.log1p, -u[:, 1]))
            theta = (2.0 * math.pi) * u[:, 0]
            both = np.stack([r * _libm(math.cos, theta), r * _libm(math.sin, theta)], 1)
            flat = both.reshape(-1)
            z[start:] = flat[:n - start]
            if (n - start) % 2:
                self._normal = float(flat[-1])
        return fma64(z, _F64(std), _F64(mean))

    def torch_random(self, shape: Any, dtype: Any, low: int | None = None,
                     high: int | None = None) -> np.ndarray:
        """``Tensor.random_()`` / ``random_(low, high)`` / ``randint``: a word per element,
        ``low + word % (high - low)`` (a 64-bit word from a range of 2**28 on); without
        bounds, ``word % (max + 1)`` for the dtype (64-bit words for int64 and double).
        ``low`` alone, with ``high`` None, is ``random_(from)``: up to the dtype's max.

        >>> MTStream(0).torch_random((5,), np.int64, 0, 10).tolist()
        [4, 9, 3, 0, 3]
        """
        shape = _shape(shape)
        n = math.prod(shape)
        dt = np.dtype(dtype)
        name = "bfloat16" if dt.name == "bfloat16" else dt.name
        if low is None and high is None:
            wide = name in ("int64", "float64")
            words = self._words64(n) if wide else self._words32(n).astype(np.uint64)
            mod = _RANDOM_MOD[name]
            vals = (words & np.uint64(1)) if name == "bool" else words % np.uint64(mod)
            return vals.astype(np.int64).astype(dt).reshape(shape)
        if high is None:  # random_(from): up to the dtype's max (2**digits for floats)
            high = _RANDOM_MOD[name]
        assert low is not None
        span = int(high) - int(low)
        words = self._words64(n) if span >= _WIDE_RANGE else \
            self._words32(n).astype(np.uint64)
        vals = (words % np.uint64(span)).astype(np.int64) + np.int64(low)
        return vals.astype(dt).reshape(shape)

    def torch_random_full(self, shape: Any, dtype: Any) -> np.ndarray:
        """``random_(-2**63, None)``: a whole 64-bit word per element, as int64."""
        shape = _shape(shape)
        return self._words64(math.prod(shape)).view(np.int64).astype(np.dtype(dtype)) \
            .reshape(shape)

    def torch_randperm(self, n: int) -> np.ndarray:
        """``randperm(n)``: Fisher-Yates, swapping ``i`` with ``i + word % (n - i)``.

        >>> MTStream(0).torch_randperm(5).tolist()
        [4, 0, 1, 3, 2]
        """
        n = int(n)
        if n <= 1:
            return np.arange(n, dtype=np.int64)
        words = self._words32(n - 1).astype(np.uint64) if n < _RANDPERM_32_BIT_LIMIT \
            else self._words64(n - 1)
        offsets = (words % np.arange(n, 1, -1, dtype=np.uint64)).tolist()
        r = list(range(n))
        for i, off in enumerate(offsets):
            z = i + off
            r[i], r[z] = r[z], r[i]
        return np.asarray(r, np.int64)

    def torch_exponential(self, shape: Any, dtype: Any, lambd: float = 1.0) -> np.ndarray:
        """``Tensor.exponential_(lambd)`` as PyTorch's build without MKL draws it:
        ``-1 / lambd * log1p(-u)``, a double uniform per element."""
        shape = _shape(shape)
        u = self._unit(math.prod(shape), True)
        return ((-1.0 / lambd) * _libm(math.log1p, -u)).astype(np.dtype(dtype)).reshape(shape)

    def torch_cauchy(self, shape: Any, dtype: Any, median: float = 0.0, sigma: float = 1.0
                     ) -> np.ndarray:
        """``Tensor.cauchy_``: ``median + sigma * tan(pi * (u - 0.5))``, a double uniform
        per element."""
        shape = _shape(shape)
        u = self._unit(math.prod(shape), True)
        t = _libm(math.tan, math.pi * (u - 0.5))
        return fma64(sigma, t, median).astype(np.dtype(dtype)).reshape(shape)

    def torch_geometric(self, shape: Any, dtype: Any, p: float) -> np.ndarray:
        """``Tensor.geometric_(p)``: ``ceil(log(u) / log(1 - p))``, a double uniform per
        element."""
        shape = _shape(shape)
        u = self._unit(math.prod(shape), True)
        with np.errstate(divide="ignore"):
            v = np.ceil(_libm(_log0, u) / math.log(1.0 - p))
        return v.astype(np.dtype(dtype)).reshape(shape)

    def torch_log_normal(self, shape: Any, dtype: Any, mean: float = 1.0, std: float = 2.0
                         ) -> np.ndarray:
        """``Tensor.log_normal_``: ``exp`` of the per-element double normal (which shares
        the normal cache)."""
        shape = _shape(shape)
        z = self._normal_per_element(math.prod(shape), mean, std)
        return _libm(math.exp, z).astype(np.dtype(dtype)).reshape(shape)

    def torch_bernoulli_scalar(self, shape: Any, dtype: Any, p: float) -> np.ndarray:
        """``Tensor.bernoulli_(p)`` for a number ``p`` (and so dropout's mask, drawn with
        ``1 - p``): a double uniform ``u < p`` per element."""
        shape = _shape(shape)
        u = self._unit(math.prod(shape), True)
        return (u < float(p)).astype(np.dtype(dtype)).reshape(shape)

    def torch_multinomial(self, probs: np.ndarray, num_samples: int, replacement: bool
                          ) -> np.ndarray:
        """``multinomial`` over the rows of ``probs`` (int64 indices). Without replacement
        (or one sample): ``topk(p / q)``, ``q`` exponential_(1) in the dtype of ``probs``.
        With replacement: per row, the cumulative weights (summed in double, kept in the
        dtype, the last set to 1), then per sample the first bucket reaching a double
        uniform."""
        p = np.asarray(probs)
        rows = p.reshape(-1, p.shape[-1])
        k = int(num_samples)
        if not replacement or k == 1:
            q = self.torch_exponential(rows.shape, p.dtype, 1.0)
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = rows / q
            out = np.argsort(-ratio, axis=-1, kind="stable")[:, :k]
        else:
            out = np.empty((rows.shape[0], k), np.int64)
            for i, row in enumerate(rows):
                cum = np.cumsum(row.astype(_F64)).astype(p.dtype)
                total = cum.astype(_F64)[-1]
                cum = (cum.astype(_F64) / total).astype(p.dtype)
                cum[-1] = 1
                out[i] = np.searchsorted(cum.astype(_F64), self._unit(k, True), side="left")
        return out.astype(np.int64).reshape(p.shape[:-1] + (k,))

    # -- NumPy-style draws from the same stream --------------------------------------
    def random(self, size: Any = None) -> Any:
        """Float64 uniforms in [0, 1) (PyTorch's double ``rand``)."""
        v = self._unit(math.prod(_shape(size)), True).reshape(_shape(size))
        return float(v) if size is None else v

    def uniform(self, low: float = 0.0, high: float = 1.0, size: Any = None) -> Any:
        """Float64 uniforms in [low, high) (PyTorch's double ``uniform_``)."""
        v = self.torch_uniform(size, _F64, low, high)
        return float(v) if size is None else v

    def standard_normal(self, size: Any = None) -> Any:
        """Float64 standard normals (PyTorch's double ``randn``)."""
        v = self.torch_normal(size, _F64)
        return float(v) if size is None else v

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:
        """Float64 normals: ``loc + scale * randn`` (broadcast, as NumPy's)."""
        shape = _shape(size) if size is not None else \
            np.broadcast(np.asarray(loc), np.asarray(scale)).shape
        if np.ndim(loc) == 0 and np.ndim(scale) == 0:
            v = self.torch_normal(shape, _F64, float(loc), float(scale))
        else:
            v = self.torch_normal(shape, _F64) * np.asarray(scale, _F64) + \
                np.asarray(loc, _F64)
        return float(v) if size is None and v.ndim == 0 else v

    def exponential(self, scale: float = 1.0, size: Any = None) -> Any:
        """Exponential samples of mean ``scale`` (PyTorch's double ``exponential_``)."""
        v = self.torch_exponential(size, _F64, 1.0 / scale)
        return float(v) if size is None else v

    def integers(self, low: int, high: int | None = None, size: Any = None,
                 dtype: Any = np.int64, endpoint: bool = False) -> Any:
        """Integers in [low, high) (PyTorch's ``randint``)."""
        if high is None:
            low, high = 0, low
        if endpoint:
            high += 1
        v = self.torch_random(size, dtype, int(low), int(high))
        return int(v) if size is None else v

    def permutation(self, x: Any) -> np.ndarray:
        """``randperm(n)`` for an int; the array shuffled along its first axis otherwise."""
        if isinstance(x, (int, np.integer)):
            return self.torch_randperm(int(x))
        arr = np.asarray(x)
        return arr[self.torch_randperm(len(arr))]

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None) -> Any:
        """NumPy's ``choice`` on the same stream (not PyTorch's multinomial algorithm)."""
        return self._mt.choice(a, size, replace, p)

    def __getattr__(self, name: str) -> Any:
        # Other NumPy draws (poisson, gamma, ...) come from the same twister through
        # NumPy's legacy algorithms: seeded coherently, though not PyTorch's numbers.
        if name.startswith("_") or name in ("tomaxint", "set_state", "get_state"):
            raise AttributeError(name)
        return getattr(self.__dict__["_mt"], name)


def _log0(x: float) -> float:
    return math.log(x) if x > 0 else -math.inf


__all__ = ["DEFAULT_SEED", "MTStream", "STATE_BYTES", "fma32", "fma64"]
