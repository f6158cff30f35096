"""The PyTorch face's random number generator (``torch.manual_seed``).

>>> from funcgrad.torch._random import manual_seed, rng
>>> _ = manual_seed(0); a = rng().random()
>>> _ = manual_seed(0); a == rng().random()
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

_generator: list[np.random.Generator] = [np.random.default_rng()]


def rng() -> np.random.Generator:
    """The generator that ``randn``, ``rand``, ``randint``, the inits and dropout draw from."""
    return _generator[0]


class Generator:
    """The object ``manual_seed`` returns (PyTorch's ``torch.Generator``)."""

    def __init__(self, seed: int = 0) -> None:
        self._seed = seed

    def initial_seed(self) -> int:
        return self._seed

    def __repr__(self) -> str:
        return f"<torch._C.Generator object at {id(self):#x}>"

    def manual_seed(self, seed: int) -> Generator:
        manual_seed(seed)
        self._seed = seed
        return self


def manual_seed(seed: int) -> Any:
    """Seed the generator of ``randn``, ``rand``, ``randint``, inits and dropout.

    >>> import funcgrad.torch as torch
    >>> _ = torch.manual_seed(0); a = torch.rand(2)
    >>> _ = torch.manual_seed(0); bool((torch.rand(2) == a).all())
    True
    """
    _generator[0] = np.random.default_rng(seed)
    return Generator(seed)


def seed() -> int:
    """Seed the generator from the operating system; return the seed."""
    s = int(np.random.SeedSequence().entropy) % (2 ** 63)  # type: ignore[arg-type]
    _generator[0] = np.random.default_rng(s)
    return s
