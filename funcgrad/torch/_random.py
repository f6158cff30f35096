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
from funcgrad.torch._mt_stream import STATE_BYTES, MTStream

_os_seed = _cuda_random.fresh_seed


# The default generator's stream (PyTorch's MT19937, see :mod:`._mt_stream`), seeded from
# the operating system in each process, as PyTorch's CPU generator is. One object for the
# whole process: manual_seed reseeds it in place, so recorded draws find it again.
_generator: list[MTStream] = [MTStream(_os_seed())]


def rng() -> MTStream:
    """The stream that ``randn``, ``rand``, ``randint``, the inits and dropout draw from
    (while ``torch.compile`` stages a step, its recorder: see :mod:`._draws`)."""
    return _draws.generator(_global)


def _global() -> MTStream:
    return _generator[0]


# Beyond this PyTorch's randperm draws 64-bit numbers; below it, 32-bit ones.
_RANDPERM_32_BIT_LIMIT = (2 ** 32 - 1) // 20


def mt_randperm(n: int, stream: np.random.RandomState) -> list[int]:
    """PyTorch's CPU ``randperm``: Fisher-Yates over Mersenne Twister draws (32-bit words
    below ``(2**32 - 1) // 20`` elements, 64-bit ones, high word first, above).

    PyTorch's generator is MT19937 seeded by ``init_genrand(seed)``, which is NumPy's
    legacy ``RandomState(seed)``: with that stream the permutation is PyTorch's exactly.

    >>> mt_randperm(5, np.random.RandomState(0))
    [4, 0, 1, 3, 2]
    """
    m = max(n - 1, 0)
    if n >= _RANDPERM_32_BIT_LIMIT:
        d = stream.randint(0, 2 ** 32, size=2 * m, dtype=np.uint32).astype(np.uint64)
        draws = (d[0::2] << np.uint64(32)) | d[1::2]
    else:
        draws = stream.randint(0, 2 ** 32, size=m, dtype=np.uint32).astype(np.uint64)
    offsets = (draws % np.arange(n, 1, -1, dtype=np.uint64)).tolist()
    r = list(range(n))
    for i, off in enumerate(offsets):
        z = i + off
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

    A CPU generator is PyTorch's Mersenne Twister (:class:`._mt_stream.MTStream`): the
    same seed gives PyTorch's numbers for ``randn(generator=)``, ``randperm``, the
    samplers and ``random_split``.
    """

    _stream: MTStream
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
    def _rng(self) -> Any:
        """The stream of its draws (:class:`MTStream`; a recorder while ``torch.compile``
        stages a step)."""
        return _draws.generator(lambda: self._stream)

    @property
    def _mt(self) -> Any:
        """The same stream, for ``randperm`` and the samplers (its ``randint`` words are
        the twister's raw outputs)."""
        return self._rng

    @property
    def _seed(self) -> int:
        return self._stream.initial_seed

    def initial_seed(self) -> int:
        return self._seed

    def seed(self) -> int:
        """Reseed from the operating system; returns the new seed."""
        s = int(np.random.SeedSequence().entropy) % (2 ** 63)  # type: ignore[arg-type]
        self.manual_seed(s)
        return s

    def get_state(self) -> Any:
        """The generator's state as PyTorch's 5056-byte uint8 tensor (for ``set_state``)."""
        _draws.refuse_state_access("Generator.get_state()")
        return TENSOR[0]._from_data(self._stream.get_state())

    def set_state(self, new_state: Any) -> Generator:
        _draws.refuse_state_access("Generator.set_state()")
        self._stream.set_state(_state_bytes(new_state))
        return self

    def clone_state(self) -> Generator:
        """A new generator in this one's state: its draws are the ones this one would
        make next, and the two then go on apart."""
        _draws.refuse_state_access("Generator.clone_state()")
        twin = Generator.__new__(Generator)
        twin.device = self.device
        twin._stream = MTStream(self._seed)
        twin._stream.set_state(self._stream.get_state())
        twin._cuda = None
        if self._cuda is not None:
            import copy  # noqa: PLC0415

            twin._cuda = copy.deepcopy(self._cuda)
        return twin

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
        if type(seed) is bool or not isinstance(seed, int):
            if isinstance(seed, np.integer):
                raise TypeError("an integer is required")
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        seed = _seed_value(seed)
        self._cuda = None
        if not hasattr(self, "_stream"):
            self._stream = MTStream(seed)
        self._stream.seed(seed)
        return self


def _seed_value(seed: Any) -> int:
    """A seed as PyTorch reads it: any 64-bit integer, signed or not, a negative one taken
    modulo 2**64."""
    s = int(seed)
    if not -(1 << 63) <= s < (1 << 64):
        raise ValueError("Overflow when unpacking long long")
    return s % (1 << 64)


_DEFAULT: list[Generator] = []


def _default_generator() -> Generator:
    """``torch.default_generator``: the one ``torch.Generator`` whose stream is the default
    one (``torch.manual_seed`` returns it, as PyTorch does)."""
    if not _DEFAULT:
        gen = Generator.__new__(Generator)
        from funcgrad.torch._device import as_device  # noqa: PLC0415

        gen.device = as_device("cpu")
        gen._cuda = None
        gen._stream = _generator[0]
        _DEFAULT.append(gen)
    return _DEFAULT[0]


def _state_bytes(new_state: Any) -> np.ndarray:
    if not isinstance(new_state, TENSOR[0]):
        raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
    if new_state.dtype.name != "uint8":
        raise TypeError("RNG state must be a torch.ByteTensor")
    return np.asarray(new_state._host(), np.uint8).reshape(-1)


def manual_seed(seed: int) -> Any:
    """Seed the generator of ``randn``, ``rand``, ``randint``, inits and dropout: the
    draws that follow are PyTorch's for the same seed (see docs/sharp_bits.md).

    >>> import funcgrad.torch as torch
    >>> _ = torch.manual_seed(0); torch.rand(2)
    tensor([0.4963, 0.7682])
    """
    _draws.refuse_state_access("torch.manual_seed()")
    seed = _seed_value(seed)
    _generator[0].seed(seed)
    _cuda_random.manual_seed(seed)  # every GPU's too, as PyTorch's manual_seed
    return _default_generator()


def seed() -> int:
    """Seed the generator from the operating system; return the seed."""
    _draws.refuse_state_access("torch.seed()")
    s = _os_seed()
    _generator[0].seed(s)
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
    return _generator[0].initial_seed


# PyTorch's CPU generator state: a uint8 tensor of 5056 bytes (CPUGeneratorImplState).
_STATE_BYTES = STATE_BYTES


def get_rng_state() -> Any:
    """The default generator's state, a uint8 tensor laid out as PyTorch's (the seed, the
    twister's 624 words and position, the cached normal): ``set_rng_state`` of it replays
    the same draws.

    >>> import funcgrad.torch as torch
    >>> state = torch.get_rng_state(); a = torch.rand(2)
    >>> torch.set_rng_state(state); bool((torch.rand(2) == a).all())
    True
    """
    _draws.refuse_state_access("torch.get_rng_state()")
    return TENSOR[0]._from_data(_generator[0].get_state())


def set_rng_state(new_state: Any) -> None:
    """Restore the default generator to a state ``get_rng_state`` returned (funcgrad's or
    PyTorch's: the layout is the same).

    >>> import funcgrad.torch as torch
    >>> state = torch.get_rng_state(); a = torch.randn(3)
    >>> torch.set_rng_state(state); bool((torch.randn(3) == a).all())
    True
    """
    _draws.refuse_state_access("torch.set_rng_state()")
    _generator[0].set_state(_state_bytes(new_state))
