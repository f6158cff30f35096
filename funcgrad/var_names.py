"""The names printed jaxprs give their variables: ``a``, ..., ``z``, ``ba``, ``bb``... (JAX's)

One namer for the text printer (``funcgrad.ir``) and the pictures
(``funcgrad.visualize``), so a picture's labels are the printed program's names.

>>> namer = Namer()
>>> [namer.bind(v) for v in ("x", "y", "x")]
['a', 'b', 'a']
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def var_names() -> Iterator[str]:
    """a, b, ..., z, ba, bb, ..., zz, baa, ... without end: JAX's names, the base-26
    numerals of 0, 1, 2, ... with ``a`` for the digit 0."""
    n = 0
    while True:
        name, k = "", n
        while not name or k:
            k, d = divmod(k, 26)
            name = chr(97 + d) + name
        yield name
        n += 1


class Namer:
    """Gives each variable its name in order of first use."""

    def __init__(self) -> None:
        self._names: dict[Any, str] = {}
        self._gen = var_names()

    def bind(self, v: Any) -> str:
        if v not in self._names:
            self._names[v] = next(self._gen)
        return self._names[v]

    def decl(self, v: Any) -> str:
        """``name:type``, as a binding prints (``a:f32[2,3]``)."""
        return f"{self.bind(v)}:{v.aval.str_short()}"


__all__ = ["Namer", "var_names"]
