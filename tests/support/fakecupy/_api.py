"""The names of the pinned CuPy (``cupy_api.txt``, a snapshot of the installed wheel)."""

from __future__ import annotations

import os

_PATH = os.path.join(os.path.dirname(__file__), "cupy_api.txt")


def _read() -> tuple[frozenset[str], frozenset[str]]:
    names, numpy_same = set(), set()
    with open(_PATH) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, _, mark = line.partition(" ")
            names.add(name)
            if mark == "=numpy":
                numpy_same.add(name)
    return frozenset(names), frozenset(numpy_same)


NAMES, NUMPY_SAME = _read()


def has(module: str, name: str) -> bool:
    """Whether the pinned CuPy's ``module`` has the public ``name``."""
    return f"{module}.{name}" in NAMES
