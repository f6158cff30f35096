"""``torch.return_types``: the named tuples PyTorch's functions return
(``torch.return_types.linalg_slogdet(sign=..., logabsdet=...)``).

>>> from funcgrad.torch._return_types import named_result
>>> r = named_result("pair", ("a", "b"), (1, 2))
>>> r.b, type(r).__module__
(2, 'torch.return_types')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from funcgrad.tree_util import register_pytree_node

_TYPES: dict[str, type] = {}


def as_pytree(cls: type) -> type:
    """Register a return-type tuple class as a pytree node, so transforms and
    ``torch.compile`` see (and rebuild) the tensors inside it."""
    register_pytree_node(cls, lambda t: (list(t), None), lambda _, children: cls(tuple(children)))
    return cls


class _Named(tuple):
    """A tuple whose fields have names, printed as PyTorch prints its return types."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()

    def __getattr__(self, name: str) -> Any:
        try:
            return self[type(self)._fields.index(name)]
        except ValueError:
            raise AttributeError(name) from None

    def __repr__(self) -> str:
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
        return f"torch.return_types.{type(self).__name__}(\n{body})"


def named_result(name: str, fields: Sequence[str], values: Sequence[Any]) -> Any:
    """``values`` as the ``torch.return_types.<name>`` tuple with ``fields``."""
    cls = _TYPES.get(name)
    if cls is None:
        cls = _TYPES[name] = as_pytree(type(name, (_Named,), {
            "__slots__": (), "_fields": tuple(fields), "__module__": "torch.return_types"}))
    return cls(tuple(values))
