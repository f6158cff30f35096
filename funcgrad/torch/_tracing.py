"""Whether a function made by ``torch.jit.trace`` is running (``torch.jit.is_tracing``).

Kept apart from ``torch.jit`` so that ``torch.nn`` code can ask without importing it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

_depth = [0]


def is_tracing() -> bool:
    """True while a traced function runs.

    >>> is_tracing()
    False
    """
    return _depth[0] > 0


@contextlib.contextmanager
def tracing() -> Iterator[None]:
    """Mark the code run inside as traced."""
    _depth[0] += 1
    try:
        yield
    finally:
        _depth[0] -= 1
