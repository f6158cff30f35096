"""Random draws inside a step that ``torch.compile`` stages.

A compiled step must draw new numbers on every call, from the generator the eager step
draws from, in the same order. While a step is staged, every generator the PyTorch face
draws from (the global one, ``torch.Generator`` objects, each GPU's) is handed out as a
:class:`Recorder`: a call such as ``rng().random(shape)`` is written down as a
:class:`Draw` and answered with a new input of the program. Each call of the compiled
program first replays its draws on the real generators, where the eager step would draw
them (a GPU's generator draws on that GPU), and passes the numbers in: the compiled step
draws exactly what the eager step draws.

>>> import numpy as np
>>> gen = np.random.default_rng(0)
>>> seen = []
>>> with recording(seen.append):
...     rec = generator(lambda: gen)
...     _ = rec.random((2, 3))
>>> seen[0].method, seen[0].args, gen.random() == np.random.default_rng(0).random()
('random', ((2, 3),), True)
>>> seen[0].replay().shape
(2, 3)
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

# Generator methods that change or expose the generator's state instead of drawing: while
# a step is staged they would act once, at staging, not on every call.
_NOT_DRAWS = frozenset({"bit_generator", "get_state", "set_state", "seed", "spawn", "jumped",
                        "state"})


class Draw:
    """One draw asked of a generator: replayed on each call of the compiled program."""

    __slots__ = ("source", "method", "args", "kwargs", "device")

    def __init__(self, source: Callable[[], Any], method: str, args: tuple[Any, ...],
                 kwargs: dict[str, Any], device: int | None) -> None:
        self.source = source
        self.method = method
        self.args = args
        self.kwargs = kwargs
        self.device = device

    def replay(self) -> Any:
        """Draw the numbers now, from the generator as it is now."""
        return self._call(self.source())

    def trial(self) -> Any:
        """The same draw from a fresh generator of the same kind (its shape and dtype,
        without advancing the real generator)."""
        real = self.source()
        if isinstance(real, np.random.Generator):
            return self._call(np.random.default_rng(0))
        if self.device is None:
            return self._call(type(real)(0))
        import cupy  # noqa: PLC0415

        with cupy.cuda.Device(self.device):
            return self._call(type(real)(0))

    def _call(self, gen: Any) -> Any:
        if self.device is None:
            return getattr(gen, self.method)(*self.args, **self.kwargs)
        import cupy  # noqa: PLC0415

        with cupy.cuda.Device(self.device):
            return getattr(gen, self.method)(*self.args, **self.kwargs)


class Recorder:
    """Stands in for a generator while a step is staged: its draws are recorded."""

    __slots__ = ("_source", "_device", "_sink")

    def __init__(self, source: Callable[[], Any], device: int | None,
                 sink: Callable[[Draw], Any]) -> None:
        self._source = source
        self._device = device
        self._sink = sink

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name in _NOT_DRAWS or \
                not callable(getattr(self._source(), name, None)):
            raise Unstageable(f"the generator's '{name}' (its state) is used inside the "
                              "compiled step: it would be read once, when the step is staged")

        def draw(*args: Any, **kwargs: Any) -> Any:
            return self._sink(Draw(self._source, name, args, kwargs, self._device))

        return draw


class Unstageable(RuntimeError):
    """The step uses a generator in a way a compiled program cannot repeat."""


class _Recording(threading.local):
    sink: Callable[[Draw], Any] | None = None


_now = _Recording()


@contextmanager
def recording(sink: Callable[[Draw], Any]) -> Iterator[None]:
    """Record this thread's draws with ``sink`` (which returns what the draw stands for)."""
    before = _now.sink
    _now.sink = sink
    try:
        yield
    finally:
        _now.sink = before


def generator(source: Callable[[], Any], device: int | None = None) -> Any:
    """The generator ``source()`` returns, or its recorder while a step is staged."""
    sink = _now.sink
    return source() if sink is None else Recorder(source, device, sink)


def _staging() -> bool:
    sink = _now.sink
    # vmap's randomness handling records draws too, but a generator's state may change
    # inside vmap (as in PyTorch): only a staging recorder above it refuses.
    while sink is not None and getattr(sink, "passes_state", False):
        sink = getattr(sink, "outer", None)
    return sink is not None


def refuse_state_access(what: str) -> None:
    """Raise :class:`Unstageable` when ``what`` (reading or setting a generator's state)
    happens while a step is staged: it would happen once, not on every call."""
    if _staging():
        raise Unstageable(f"{what} inside a compiled step acts once, when the step is "
                          "staged, not on every call")


def refuse_value_dependent_draws(what: str) -> None:
    """Raise :class:`Unstageable` when a step being staged draws as many numbers as
    values it computes decide (RReLU's one per element <= 0): a program's draws are drawn
    before it runs."""
    if _staging():
        raise Unstageable(f"{what} draws as many numbers as its input's values decide; a "
                          "compiled step draws before it runs, so this part runs eagerly")


__all__ = ["Draw", "Recorder", "Unstageable", "generator", "recording",
           "refuse_state_access", "refuse_value_dependent_draws"]
