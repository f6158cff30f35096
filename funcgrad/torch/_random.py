"""The PyTorch face's random number generator (``torch.manual_seed``).

>>> from funcgrad.torch._random import manual_seed, rng
>>> _ = manual_seed(0); a = rng().random()
>>> _ = manual_seed(0); a == rng().random()
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.torch import _cuda_random, _draws

_os_seed = _cuda_random.fresh_seed


# The default generator and the seed it started from (``initial_seed``): a fresh seed from
# the operating system in each process, as PyTorch's CPU generator has.
_seed: list[int] = [_os_seed()]
_generator: list[np.random.Generator] = [np.random.default_rng(_seed[0])]


def rng() -> np.random.Generator:
    """The generator that ``randn``, ``rand``, ``randint``, the inits and dropout draw from
    (while ``torch.compile`` stages a step, its recorder: see :mod:`._draws`)."""
    return _draws.generator(_global)


def _global() -> np.random.Generator:
    # Looked up on each draw: manual_seed replaces the generator object.
    return _generator[0]


# Beyond this PyTorch's randperm draws 64-bit numbers; below it, 32-bit ones.
_RANDPERM_32_BIT_LIMIT = (2 ** 32 - 1) // 20


def mt_randperm(n: int, stream: np.random.RandomState) -> list[int]:
    """PyTorch's CPU ``randperm``: Fisher-Yates over 32-bit Mersenne Twister draws.

    PyTorch's generator is MT19937 seeded by ``init_genrand(seed)``, which is NumPy's
    legacy ``RandomState(seed)``: with that stream the permutation is PyTorch's exactly.

    >>> mt_randperm(5, np.random.RandomState(0))
    [4, 0, 1, 3, 2]
    """
    if n >= _RANDPERM_32_BIT_LIMIT:
        return [int(i) for i in stream.permutation(n)]
    draws = stream.randint(0, 2 ** 32, size=max(n - 1, 0), dtype=np.uint32)
    r = list(range(n))
    for i in range(n - 1):
        z = i + int(draws[i]) % (n - i)
        r[i], r[z] = r[z], r[i]
    return r


def mt_randint(low: int, high: int, size: tuple[int, ...], stream: np.random.RandomState
               ) -> np.ndarray:
    """PyTorch's CPU ``randint``: ``low + draw % (high - low)``, one 32-bit Mersenne
    Twister draw per entry (two, high word first, for a range of 2**28 or more: PyTorch
    widens there to keep the modulo bias small).

    >>> mt_randint(0, 10, (5,), np.random.RandomState(0)).tolist()
    [4, 9, 3, 0, 3]
    """
    span = high - low
    n = int(np.prod(size, dtype=np.int64))
    if span >= 2 ** 28:
        d = stream.randint(0, 2 ** 32, size=2 * n, dtype=np.uint32).astype(np.uint64)
        draws = (d[0::2] << np.uint64(32)) | d[1::2]
    else:
        draws = stream.randint(0, 2 ** 32, size=n, dtype=np.uint32).astype(np.uint64)
    return ((draws % np.uint64(span)).astype(np.int64) + low).reshape(size)


# The Tensor class, registered by funcgrad.torch._tensor (which imports this module).
TENSOR: list[Any] = []


class Generator:
    """The object ``manual_seed`` returns (PyTorch's ``torch.Generator``).

    Its ``randperm`` stream (used by ``randperm(generator=)``, ``random_split`` and the
    samplers) is PyTorch's Mersenne Twister, so the same seed gives PyTorch's order.
    """

    _np: np.random.Generator
    _np_mt: np.random.RandomState
    _cuda: Any  # the CuPy generator of a CUDA generator, made on first use

    def __init__(self, device: Any = "cpu") -> None:
        from funcgrad.torch._device import as_device  # noqa: PLC0415

        self.device = as_device(device)
        if self.device.type == "cuda":
            from funcgrad.torch._device import cuda_available  # noqa: PLC0415

            if not cuda_available():
                raise RuntimeError("Cannot get CUDA generator: no CUDA device is available "
                                   "(funcgrad's CUDA path needs CuPy and an NVIDIA GPU)")
            if self.device.index is None:
                import cupy  # noqa: PLC0415

                from funcgrad.torch._device import device as make  # noqa: PLC0415

                self.device = make("cuda", cupy.cuda.Device().id)
        # PyTorch's default seed; the streams are the samplers' and random_split's.
        self.manual_seed(67280421310721)

    @property
    def _rng(self) -> np.random.Generator:
        """The stream of its draws (recorded while ``torch.compile`` stages a step)."""
        return _draws.generator(lambda: self._np)

    @property
    def _mt(self) -> np.random.RandomState:
        """The Mersenne Twister stream of ``randperm`` and the samplers."""
        return _draws.generator(lambda: self._np_mt)

    def initial_seed(self) -> int:
        return self._seed

    def seed(self) -> int:
        """Reseed from the operating system; returns the new seed."""
        s = int(np.random.SeedSequence().entropy) % (2 ** 63)  # type: ignore[arg-type]
        self.manual_seed(s)
        return s

    def get_state(self) -> Any:
        """The generator's state as a uint8 tensor (for ``set_state``)."""
        import pickle  # noqa: PLC0415

        _draws.refuse_state_access("Generator.get_state()")
        blob = pickle.dumps((self._seed, self._np.bit_generator.state, self._np_mt.get_state()))
        return TENSOR[0]._from_data(np.frombuffer(blob, np.uint8).copy())

    def set_state(self, new_state: Any) -> Generator:
        import pickle  # noqa: PLC0415

        _draws.refuse_state_access("Generator.set_state()")
        seed, rng, mt = pickle.loads(np.asarray(new_state._host(), np.uint8).tobytes())
        self._seed = seed
        self._np.bit_generator.state = rng
        self._np_mt.set_state(mt)
        return self

    def __repr__(self) -> str:
        return f"<torch._C.Generator object at {id(self):#x}>"

    def device_state(self, index: int) -> Any:
        """The CuPy generator (cuRAND) drawing for this CUDA generator on device ``index``;
        a CPU generator given for a CUDA tensor is refused, as in PyTorch."""
        if self.device.type != "cuda":
            raise RuntimeError(f"Expected a 'cuda' device type for generator but found "
                               f"'{self.device.type}'")
        return _draws.generator(lambda: self._cuda_state(index), index)

    def _cuda_state(self, index: int) -> Any:
        if self._cuda is None:
            import cupy  # noqa: PLC0415

            with cupy.cuda.Device(index):
                self._cuda = cupy.random.RandomState(self._seed % 2 ** 64)
        return self._cuda

    def manual_seed(self, seed: int) -> Generator:
        # A generator made or seeded inside a compiled step would be seeded once, at
        # staging, where the eager step seeds it on every call.
        _draws.refuse_state_access("seeding a generator")
        self._cuda = None
        self._seed = seed
        self._np = np.random.default_rng(seed)
        self._np_mt = np.random.RandomState(seed & 0xFFFFFFFF)
        return self


def manual_seed(seed: int) -> Any:
    """Seed the generator of ``randn``, ``rand``, ``randint``, inits and dropout.

    >>> import funcgrad.torch as torch
    >>> _ = torch.manual_seed(0); a = torch.rand(2)
    >>> _ = torch.manual_seed(0); bool((torch.rand(2) == a).all())
    True
    """
    _draws.refuse_state_access("torch.manual_seed()")
    _seed[0] = int(seed)
    _generator[0] = np.random.default_rng(seed)
    _cuda_random.manual_seed(seed)  # every GPU's too, as PyTorch's manual_seed
    return Generator().manual_seed(seed)


def seed() -> int:
    """Seed the generator from the operating system; return the seed."""
    _draws.refuse_state_access("torch.seed()")
    s = _os_seed()
    _seed[0] = s
    _generator[0] = np.random.default_rng(s)
    _cuda_random.manual_seed(s)
    return s


def initial_seed() -> int:
    """The seed the default generator started from (``manual_seed``'s or ``seed``'s).

    >>> import funcgrad.torch as torch
    >>> state = torch.get_rng_state()
    >>> _ = torch.manual_seed(7); torch.initial_seed()
    7
    >>> torch.set_rng_state(state)
    """
    return _seed[0]


# PyTorch's CPU generator state is a uint8 tensor of 5056 bytes; funcgrad's holds the
# seed and the PCG64 state in the same size, so size checks read as PyTorch's.
_STATE_BYTES = 5056


def get_rng_state() -> Any:
    """The default generator's state, a uint8 tensor: ``set_rng_state`` of it replays the
    same draws.

    >>> import funcgrad.torch as torch
    >>> state = torch.get_rng_state(); a = torch.rand(2)
    >>> torch.set_rng_state(state); bool((torch.rand(2) == a).all())
    True
    """
    _draws.refuse_state_access("torch.get_rng_state()")
    st = _generator[0].bit_generator.state
    if st.get("bit_generator") != "PCG64":
        raise RuntimeError("get_rng_state: the default generator is not funcgrad's PCG64")
    words = [_seed[0], st["state"]["state"], st["state"]["inc"], st["has_uint32"],
             st["uinteger"]]
    blob = b"".join(int(w).to_bytes(16, "little") for w in words)
    out = np.zeros(_STATE_BYTES, np.uint8)
    out[:len(blob)] = np.frombuffer(blob, np.uint8)
    return TENSOR[0]._from_data(out)


def set_rng_state(new_state: Any) -> None:
    """Restore the default generator to a state ``get_rng_state`` returned.

    >>> import funcgrad.torch as torch
    >>> state = torch.get_rng_state(); a = torch.randn(3)
    >>> torch.set_rng_state(state); bool((torch.randn(3) == a).all())
    True
    """
    _draws.refuse_state_access("torch.set_rng_state()")
    if not isinstance(new_state, TENSOR[0]):
        raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
    if new_state.dtype.name != "uint8":
        raise TypeError("RNG state must be a torch.ByteTensor")
    data = np.asarray(new_state._host(), np.uint8).reshape(-1)
    if data.size != _STATE_BYTES:
        raise RuntimeError(f"Expected a CPUGeneratorImplState of size {_STATE_BYTES} but "
                           f"found the input RNG state size to be {data.size}")
    raw = data[:80].tobytes()
    seed_, state, inc, has32, uint = (int.from_bytes(raw[i:i + 16], "little")
                                      for i in range(0, 80, 16))
    gen = np.random.default_rng(0)
    gen.bit_generator.state = {"bit_generator": "PCG64", "state": {"state": state, "inc": inc},
                               "has_uint32": has32, "uinteger": uint}
    _seed[0] = seed_
    _generator[0] = gen
