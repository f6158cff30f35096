"""The names printed jaxprs give their variables: ``a``, ``b``, ..., ``z``, ``aa``, ``ab``...

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
    """a, b, ..., z, aa, ab, ... without end."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    n = 1
    while True:
        for i in range(len(letters) ** n):
            name, k = "", i
            for _ in range(n):
                name = letters[k % 26] + name
                k //= 26
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
