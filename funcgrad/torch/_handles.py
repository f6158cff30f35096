"""PyTorch's ``RemovableHandle``, which every ``register_*_hook`` returns (module, tensor
and graph-node hooks alike).

>>> import funcgrad.torch as torch
>>> t = torch.ones(2, requires_grad=True)
>>> h = t.register_hook(lambda g: g * 2)
>>> type(h).__name__
'RemovableHandle'
>>> h.remove()
"""

from __future__ import annotations

import itertools
from typing import Any


class RemovableHandle:
    """``remove()`` unregisters the hook: one kept in a dict under this handle's ``id`` (a
    module's hooks), or one kept in a list (a tensor's or a graph node's)."""

    _ids = itertools.count()

    def __init__(self, hooks: dict[int, Any] | list[Any], hook: Any = None) -> None:
        self.hooks = hooks
        self.hook = hook
        self.id = next(RemovableHandle._ids)

    def remove(self) -> None:
        if isinstance(self.hooks, dict):
            self.hooks.pop(self.id, None)
        elif self.hook in self.hooks:
            self.hooks.remove(self.hook)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


RemovableHandle.__module__ = "funcgrad.torch.utils.hooks"  # where PyTorch's users find it
