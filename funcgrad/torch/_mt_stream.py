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
import struct
from typing import Any, cast

import numpy as np

from funcgrad.primitives.fused_multiply_add import fma32 as _fma32
from funcgrad.primitives.fused_multiply_add import fma64

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

    # -- gamma, Dirichlet, Poisson, binomial (Distributions.h/.cpp, one element at a time)
    def torch_standard_gamma(self, alpha: Any, dtype: Any) -> np.ndarray:
        """``torch._standard_gamma``: per element in memory order, Marsaglia-Tsang
        (``sample_gamma``, double uniforms and cached double normals, ``alpha`` boosted by 1
        below 1 in the dtype), clamped below to the dtype's smallest normal.

        >>> MTStream(0).torch_standard_gamma(np.array([0.5, 2.0]), np.float64).tolist()
        [0.0007893582063475732, 0.6315406048880828]
        """
        dt = np.dtype(dtype)
        a = np.asarray(alpha).astype(dt)
        f32 = dt != _F64
        with _Tap(self, 8 * a.size) as tap:
            draws = [_gamma_one(x, f32, tap) for x in a.ravel().tolist()]
        out = np.asarray(draws, _F64).astype(dt).reshape(a.shape)
        return np.maximum(out, np.finfo(dt).tiny)

    def torch_dirichlet(self, alpha: Any, dtype: Any) -> tuple[np.ndarray, np.ndarray]:
        """``torch._sample_dirichlet``: gamma draws in double (clamped to double's smallest
        normal), summed over the last dimension as ATen's cascade sum does, divided, cast
        and clamped into ``[tiny, nextafter(1, 0)]``. Also returns the gamma draws."""
        dt = np.dtype(dtype)
        a = np.asarray(alpha).astype(dt)
        with _Tap(self, 8 * a.size) as tap:
            draws = [_gamma_one(x, False, tap) for x in a.ravel().tolist()]
        g = np.maximum(np.asarray(draws, _F64), np.finfo(_F64).tiny).reshape(a.shape)
        total = _aten_row_sums(g.reshape(-1, a.shape[-1])).reshape(a.shape[:-1] + (1,)) \
            if a.ndim else g
        y = (g / total).astype(dt)
        y = np.minimum(np.maximum(y, np.finfo(dt).tiny), np.nextafter(dt.type(1), dt.type(0)))
        return y, g

    def torch_poisson(self, rates: Any, dtype: Any) -> np.ndarray:
        """``torch.poisson``: per element in memory order, the product of double uniforms
        below rate 10, Hoermann's transformed rejection (PTRS) from 10 on."""
        lam = np.asarray(rates).astype(_F64)
        with _Tap(self, 4 * lam.size) as tap:
            draws = [_poisson_one(x, tap) for x in lam.ravel().tolist()]
        return np.asarray(draws, _F64).astype(np.dtype(dtype)).reshape(lam.shape)

    def torch_binomial(self, count: Any, prob: Any, dtype: Any) -> np.ndarray:
        """``torch.binomial``: per element in memory order, inversion (sums of geometric
        draws) below ``count * p`` of 10, BTRS from 10 on, with ``p`` the smaller of
        ``prob`` and ``1 - prob``; in the dtype where ATen computes in it."""
        dt = np.dtype(dtype)
        n, p = np.broadcast_arrays(np.asarray(count).astype(dt), np.asarray(prob).astype(dt))
        f32 = dt != _F64
        with _Tap(self, 4 * n.size) as tap:
            draws = [_binomial_one(c, q, f32, tap)
                     for c, q in zip(n.ravel().tolist(), p.ravel().tolist(), strict=True)]
        return np.asarray(draws, _F64).astype(dt).reshape(n.shape)

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


# ----------------------------------------------------------------- rejection samplers
# ATen's gamma, Poisson and binomial kernels (Distributions.h, Distributions.cpp) run one
# element after another, each drawing as many double uniforms and normals as its rejection
# loop needs. :class:`_Tap` serves those from words drawn ahead in blocks and, on exit,
# leaves the twister just past the words used. The kernels are compiled without FMA
# contraction, so plain Python double arithmetic (and the C library's log, pow, lgamma)
# gives their numbers; ``_f32`` rounds where ATen computes in float.

_TWO_POW_M53 = 2.0 ** -53
_THIRD_F32 = float(_F32(1.0) / _F32(3.0))  # 1.0f / 3.0f, promoted to double
_C0331_F32 = float(_F32(0.0331))  # 0.0331f


_PACK_F32 = struct.Struct("<f")


def _f32(x: float) -> float:
    """``x`` rounded to float32 (to nearest, as a C cast)."""
    try:
        return cast(float, _PACK_F32.unpack(_PACK_F32.pack(x))[0])
    except OverflowError:
        return math.copysign(math.inf, x)


def _c_function(name: str, ctype: Any) -> Any:
    try:
        import ctypes  # noqa: PLC0415
        import ctypes.util  # noqa: PLC0415

        fn = getattr(ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6"), name)
    except (OSError, AttributeError, TypeError):
        return None
    fn.restype, fn.argtypes = ctype, [ctype]
    return fn


def _libm_functions() -> tuple[Any, Any]:
    """The C library's ``lgamma`` (CPython's math.lgamma is its own) and ``log1pf``."""
    import ctypes  # noqa: PLC0415

    lgamma = _c_function("lgamma", ctypes.c_double) or math.lgamma
    log1pf = _c_function("log1pf", ctypes.c_float)
    return lgamma, (log1pf if log1pf is not None else lambda x: _f32(math.log1p(x)))


_LGAMMA, _LOG1PF = _libm_functions()


def _floor(x: float) -> float:
    return float(math.floor(x)) if math.isfinite(x) else x


def _ceil(x: float) -> float:
    return float(math.ceil(x)) if math.isfinite(x) else x


def _log(x: float) -> float:
    return math.log(x) if x > 0 else (-math.inf if x == 0 else math.nan)


class _Tap:
    """Double uniforms and PyTorch's cached double normals for a per-element kernel,
    from twister words drawn ahead in blocks; on exit the twister stands just past the
    words used (and the normal cache as the kernels left it)."""

    def __init__(self, stream: MTStream, expect: int) -> None:
        self._stream = stream
        self._expect = max(int(expect), 64)

    def __enter__(self) -> _Tap:
        mt = self._stream._mt
        self._start = mt.get_state()
        self._words: list[int] = []
        self._pos = 0
        self._used = 0  # words used from earlier blocks
        self._drawn = 0
        self.normal_cache = self._stream._normal
        self._refill(self._expect)
        return self

    def _refill(self, n: int) -> None:
        n = max(n, 1024)
        self._used += self._pos
        self._words = self._words[self._pos:] + \
            self._stream._mt.randint(0, 2 ** 32, size=n, dtype=np.uint32).tolist()
        self._drawn += n
        self._pos = 0

    def uniform(self) -> float:
        """``uniform_real_distribution<double>(0, 1)``: 53 bits of a 64-bit word."""
        i = self._pos
        if i + 2 > len(self._words):
            self._refill(max(self._drawn, 1024))
            i = 0
        w = self._words
        self._pos = i + 2
        return ((w[i] & 0x1FFFFF) * 4294967296 + w[i + 1]) * _TWO_POW_M53

    def normal(self) -> float:
        """``normal_distribution<double>(0, 1)``: the cached sample if there is one; else
        Box-Muller on two uniforms, the sine sample cached."""
        z = self.normal_cache
        if z is not None:
            self.normal_cache = None
            return z
        u1 = self.uniform()
        u2 = self.uniform()
        r = math.sqrt(-2.0 * math.log1p(-u2))
        theta = (2.0 * math.pi) * u1
        self.normal_cache = r * math.sin(theta)
        return r * math.cos(theta)

    def __exit__(self, *exc: Any) -> None:
        used = self._used + self._pos
        mt = self._stream._mt
        if exc[0] is not None:
            mt.set_state(self._start)
            return
        if used != self._drawn:  # back to the start, then forward past the words used
            mt.set_state(self._start)
            while used > 0:
                step = min(used, 1 << 24)
                mt.randint(0, 2 ** 32, size=step, dtype=np.uint32)
                used -= step
        self._stream._normal = self.normal_cache


def _gamma_one(alpha: float, f32: bool, tap: _Tap) -> float:
    """ATen's ``sample_gamma`` for one ``alpha`` (a float32 value where ``f32``): the
    boost below 1 and ``d`` in the scalar type, the rest in double; unrounded."""
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        scale = math.pow(1.0 - tap.uniform(), _f32(1.0 / alpha) if f32 else 1.0 / alpha)
        alpha = _f32(alpha + 1.0) if f32 else alpha + 1.0
    d = _f32(alpha - _THIRD_F32) if f32 else alpha - _THIRD_F32
    if not d > 0:
        return math.nan  # ATen loops for ever here
    c = 1.0 / math.sqrt(9.0 * d)
    uniform, normal = tap.uniform, tap.normal
    while True:
        x = normal()
        y = 1.0 + c * x
        while y <= 0:
            x = normal()
            y = 1.0 + c * x
        v = y * y * y
        u = 1.0 - uniform()
        xx = x * x
        if u < 1.0 - _C0331_F32 * xx * xx:
            return scale * d * v
        if math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


def _poisson_one(lam: float, tap: _Tap) -> float:
    """ATen's ``sample_poisson`` for one rate."""
    if not lam >= 0:
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    uniform = tap.uniform
    if lam >= 10:
        slam = math.sqrt(lam)
        loglam = math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        log_invalpha = math.log(1.1239 + 1.1328 / (b - 3.4))
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            u = uniform() - 0.5
            v = uniform()
            us = 0.5 - abs(u)
            if us == 0:  # ATen: k = floor(-inf), rejected
                continue
            k = _floor((2 * a / us + b) * u + lam + 0.43)
            if us >= 0.07 and v <= vr:
                return float(k)
            if k < 0 or (us < 0.013 and v > us):
                continue
            if (_log(v) + log_invalpha - math.log(a / (us * us) + b)) <= \
                    (-lam + k * loglam - _LGAMMA(k + 1.0)):
                return float(k)
    if lam == 0:
        return 0.0
    enlam = math.exp(-lam)
    x = 0
    prod = 1.0
    while True:
        prod *= uniform()
        if prod > enlam:
            x += 1
        else:
            return float(x)


_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287)


def _stirling_tail(k: float) -> float:
    if k < 10:
        return _STIRLING_TAIL[max(int(k), 0)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _binomial_inversion(count: float, prob: float, f32: bool, tap: _Tap) -> float:
    if math.isnan(count):
        return math.nan  # ATen loops for ever here
    logprob = _LOG1PF(-prob) if f32 else math.log1p(-prob)  # log1p of the scalar type
    geom_sum = 0.0
    num_geom = 0.0
    while True:
        geom = _ceil(_log(tap.uniform()) / logprob) if logprob else math.inf
        geom_sum += geom
        if geom_sum > count:
            return num_geom
        num_geom += 1


def _btrs(count: float, prob: float, f32: bool, tap: _Tap) -> float:
    """ATen's ``btrs``: the float32 version rounds what ATen computes in float."""
    r32 = _f32 if f32 else float
    np_ = r32(count * prob)
    stddev = r32(math.sqrt(r32(np_ * r32(1 - prob))))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = np_ + 0.5
    v_r = 0.92 - 4.2 / b
    r = r32(prob / r32(1 - prob))
    alpha = (2.83 + 5.1 / b) * stddev
    m = _floor(r32(r32(count + 1) * prob))
    uniform = tap.uniform
    while True:
        u = uniform() - 0.5
        v = uniform()
        us = 0.5 - abs(u)
        if us == 0:
            continue
        k = r32(_floor((2 * a / us + b) * u + c))
        if k < 0 or k > count:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = _log(v * alpha / (a / (us * us) + b))
        n_k1 = r32(r32(count - k) + 1)
        upper = ((m + 0.5) * math.log((m + 1) / (r * (count - m + 1)))
                 + r32(count + 1) * math.log((count - m + 1) / n_k1)
                 + (k + 0.5) * math.log(r * n_k1 / r32(k + 1))
                 + _stirling_tail(m) + _stirling_tail(count - m)
                 - _stirling_tail(k) - _stirling_tail(r32(count - k)))
        if v <= upper:
            return k


def _binomial_one(count: float, prob: float, f32: bool, tap: _Tap) -> float:
    """ATen's ``sample_binomial`` for one (count, prob) of the scalar type."""
    r32 = _f32 if f32 else float
    if count <= 0.0 or prob <= 0.0:
        return 0.0
    if prob >= 1.0:
        return count
    if prob <= 0.5:
        if r32(count * prob) >= 10.0:
            return _btrs(count, prob, f32, tap)
        return _binomial_inversion(count, prob, f32, tap)
    if prob > 0.5:
        q = r32(1.0 - prob)
        drawn = _btrs(count, q, f32, tap) if r32(count * q) >= 10.0 else \
            _binomial_inversion(count, q, f32, tap)
        return r32(count - drawn)
    return math.nan


def _cascade(x: np.ndarray) -> np.ndarray:
    """ATen's ``multi_row_sum`` over axis 1 of ``x`` (rows, size, lanes...): four levels
    of accumulators, each level folded into the next every ``2**level_power`` rows."""
    size = x.shape[1]
    power = max(4, (size - 1).bit_length() // 4 if size > 2 else 0)
    step = 1 << power
    mask = step - 1
    acc = [np.zeros(x.shape[:1] + x.shape[2:], _F64) for _ in range(4)]
    i = 0
    while i + step <= size:
        for _ in range(step):
            acc[0] = acc[0] + x[:, i]
            i += 1
        for j in range(1, 4):
            acc[j] = acc[j] + acc[j - 1]
            acc[j - 1] = np.zeros_like(acc[j - 1])
            if i & (mask << (j * power)):
                break
    while i < size:
        acc[0] = acc[0] + x[:, i]
        i += 1
    for j in range(1, 4):
        acc[0] = acc[0] + acc[j]
    return acc[0]


def _row_sum(x: np.ndarray) -> np.ndarray:
    """ATen's ``row_sum`` over axis 1 (ILP of 4: four interleaved cascades, the tail into
    the first, then the four added in order)."""
    size = x.shape[1]
    ilp = size // 4
    head = x[:, :ilp * 4].reshape((x.shape[0], ilp, 4) + x.shape[2:])
    part = _cascade(head)
    first = part[:, 0]
    for i in range(ilp * 4, size):
        first = first + x[:, i]
    for k in range(1, 4):
        first = first + part[:, k]
    return first


# Doubles per vector in ATen's sum kernel: 4 (its AVX2 kernel, also picked on AVX-512).
_VEC_DOUBLES = 4


def _aten_row_sums(g: np.ndarray) -> np.ndarray:
    """``Tensor.sum(-1)`` of contiguous double rows, in ATen's order (``cascade_sum``):
    rows shorter than a vector by the scalar ``row_sum``; longer ones lane-wise by
    vectors, then the scalar tail, then the lanes in order."""
    w = _VEC_DOUBLES
    rows, size = g.shape
    if size < w:
        return _row_sum(g)
    nvec = size // w
    lanes = _row_sum(g[:, :nvec * w].reshape(rows, nvec, w))
    total = np.zeros(rows, _F64)
    for i in range(nvec * w, size):
        total = total + g[:, i]
    for k in range(w):
        total = total + lanes[:, k]
    return total


def _log0(x: float) -> float:
    return math.log(x) if x > 0 else -math.inf


__all__ = ["DEFAULT_SEED", "MTStream", "STATE_BYTES", "fma32", "fma64"]
