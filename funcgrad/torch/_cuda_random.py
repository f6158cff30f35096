"""The PyTorch face's CUDA generators: one per device, drawing on the device.

Random tensors and dropout masks of CUDA tensors are drawn there by CuPy's cuRAND
generator (``cupy.random.RandomState``), as PyTorch draws them with its CUDA generators:
nothing is drawn on the host and uploaded. ``torch.manual_seed`` seeds every device,
``torch.cuda.manual_seed`` the current one, ``manual_seed_all`` all of them; the default
seed is PyTorch's. The distributions are PyTorch's, the bits are cuRAND's (PyTorch draws
with Philox in its own kernels).

>>> from funcgrad.torch import _cuda_random
>>> _cuda_random.DEFAULT_SEED  # PyTorch's default seed, until a seed is set
67280421310721
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from funcgrad.torch import _draws

DEFAULT_SEED = 67280421310721
# Seeds set for devices (a device without one uses DEFAULT_SEED or the last seed given to
# all devices), and the generators made from them.
_seeds: dict[int, int] = {}
_all_seed = [DEFAULT_SEED]
_states: dict[int, Any] = {}


def initial_seed(index: int) -> int:
    """The seed device ``index``'s generator was last seeded with."""
    return _seeds.get(index, _all_seed[0])


def fresh_seed() -> int:
    """A seed from the operating system's entropy (``torch.seed``'s kind)."""
    return int(np.random.SeedSequence().entropy) % 2 ** 63  # type: ignore[arg-type]


def manual_seed(seed: int, index: int | None = None) -> None:
    """Seed device ``index``'s generator, or every device's (``index=None``)."""
    _draws.refuse_state_access("seeding a CUDA generator")
    seed = int(seed) % 2 ** 64
    if index is None:
        _all_seed[0] = seed
        _seeds.clear()
        _states.clear()
    else:
        _seeds[index] = seed
        _states.pop(index, None)


def state(index: int) -> Any:
    """Device ``index``'s generator (a CuPy ``RandomState``), made on first use (its
    recorder while ``torch.compile`` stages a step: see :mod:`._draws`)."""
    return _draws.generator(lambda: _state(index), index)


def _state(index: int) -> Any:
    st = _states.get(index)
    if st is None:
        import cupy  # noqa: PLC0415

        with cupy.cuda.Device(index):
            st = cupy.random.RandomState(initial_seed(index))
        _states[index] = st
    return st


def _draw_dtype(dtype: np.dtype[Any]) -> np.dtype[Any]:
    # cuRAND makes float32 and float64; half precision is drawn in float32 and rounded.
    return np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)


def uniform(shape: tuple[int, ...], dtype: Any, index: int, gen: Any = None) -> Any:
    """Samples of U[0, 1) of ``dtype`` on device ``index`` (``gen``: a RandomState of the
    caller's own, e.g. a ``torch.Generator``'s)."""
    import cupy  # noqa: PLC0415

    dt = np.dtype(dtype)
    with cupy.cuda.Device(index):
        u = (gen or state(index)).random_sample(shape, _draw_dtype(dt))
        if u.dtype != dt:
            # Rounding up to 1.0 in half precision would leave [0, 1): keep below one.
            u = cupy.minimum(u, float(np.nextafter(dt.type(1), dt.type(0)))).astype(dt)
        return u


def normal(shape: tuple[int, ...], dtype: Any, index: int, gen: Any = None) -> Any:
    """Standard normal samples of ``dtype`` on device ``index``."""
    import cupy  # noqa: PLC0415

    dt = np.dtype(dtype)
    with cupy.cuda.Device(index):
        z = (gen or state(index)).standard_normal(shape, _draw_dtype(dt))
        return z if z.dtype == dt else z.astype(dt)


def integers(low: int, high: int, shape: tuple[int, ...], dtype: Any, index: int,
             gen: Any = None) -> Any:
    """Integers uniform in ``[low, high)`` of ``dtype`` on device ``index``, without a host
    read (CuPy's ``randint`` rejects samples and counts them on the host)."""
    import cupy  # noqa: PLC0415

    if high <= low:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                           f"from={low} >= to={high}")
    span = high - low
    if span > 2 ** 53:
        raise RuntimeError(f"randint on a CUDA device draws ranges up to 2**53 wide; "
                           f"[{low}, {high}) is wider (draw it on the CPU and move it)")
    with cupy.cuda.Device(index):
        u = (gen or state(index)).random_sample(shape, np.float64)
        k = cupy.minimum(cupy.floor(u * span), span - 1)
        return (k + low).astype(np.dtype(dtype))


def keep_mask(shape: tuple[int, ...], p: float, index: int) -> Any:
    """Booleans that are True with probability ``1 - p`` (a dropout mask) on the device."""
    return uniform(shape, np.float32, index) >= float(p)


def _values(x: Any) -> Any:
    """A Tensor argument's buffer (a CUDA tensor's stays on its device); others as given."""
    return getattr(x, "_data", x)


def sample(kind: str, shape: tuple[int, ...], dtype: Any, index: int, gen: Any,
           *args: Any, **kwargs: Any) -> Any:
    """The values of the in-place fill ``Tensor.<kind>_(*args, **kwargs)`` for a tensor of
    ``shape`` and ``dtype`` on device ``index``, drawn there (PyTorch's parameters and
    defaults for each distribution).

    >>> sample("nope", (2,), "f4", 0, None)
    Traceback (most recent call last):
    ...
    ValueError: no device sampler for 'nope'
    """
    if kind not in _SAMPLERS:
        raise ValueError(f"no device sampler for {kind!r}")
    import cupy  # noqa: PLC0415

    dt = np.dtype(dtype)
    work = _draw_dtype(dt)
    with cupy.cuda.Device(index):
        out = _SAMPLERS[kind](cupy, lambda: uniform(shape, work, index, gen),
                              lambda: normal(shape, work, index, gen), shape, index, gen,
                              *args, **kwargs)
        return out.astype(dt)


def _uniform(cp: Any, u: Any, z: Any, shape: Any, index: int, gen: Any,
             a: float = 0.0, b: float = 1.0) -> Any:
    return u() * (b - a) + a


def _normal(cp: Any, u: Any, z: Any, shape: Any, index: int, gen: Any,
            mean: float = 0.0, std: float = 1.0) -> Any:
    return z() * std + mean


def _exponential(cp: Any, u: Any, z: Any, shape: Any, index: int, gen: Any,
                 lambd: float = 1.0) -> Any:
    return -cp.log1p(-u()) / lambd


def _geometric(cp: Any, u: Any, z: Any, shape: Any, index: int, gen: Any, p: float) -> Any:
    # The number of trials up to the first success: ceil(log(1 - U) / log(1 - p)), >= 1.
    return cp.maximum(cp.ceil(cp.log1p(-u()) / math.log1p(-p)), 1)


def _log_normal(cp: Any, u: Any, z: Any, shape: Any, index: int, gen: Any,
                mean: float = 1.0, std: float = 2.0) -> Any:
    return cp.exp(z() * std + mean)


def _cauchy(cp: Any, u: Any, z: Any, shape: Any, index: int, gen: Any,
            median: float = 0.0, sigma: float = 1.0) -> Any:
    return cp.tan((u() - 0.5) * math.pi) * sigma + median


def _random(cp: Any, u: Any, z: Any, shape: Any, index: int, gen: Any,
            low: Any = None, high: Any = None) -> Any:
    if high is None:
        low, high = (0, 2 ** 24) if low is None else (0, low)
    return integers(int(low), int(high), shape, np.int64, index, gen)


def _bernoulli(cp: Any, u: Any, z: Any, shape: Any, index: int, gen: Any,
               p: Any = 0.5) -> Any:
    return u() < _values(p)


_SAMPLERS: dict[str, Any] = {
    "uniform": _uniform, "normal": _normal, "exponential": _exponential,
    "geometric": _geometric, "log_normal": _log_normal, "cauchy": _cauchy,
    "random": _random, "bernoulli": _bernoulli,
}
