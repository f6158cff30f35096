"""The hooks every Module runs (``torch.nn.modules.module.register_module_forward_hook``
and its kin): one table per kind, keyed by the handle's id, consulted before each module's
own hooks as PyTorch does. The registration functions live in
:mod:`funcgrad.torch.nn.module`, beside ``RemovableHandle``."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

Hooks = OrderedDict[int, Callable[..., Any]]

FORWARD_PRE: Hooks = OrderedDict()
FORWARD: Hooks = OrderedDict()
# Ids of the forward hooks registered with_kwargs=True and always_call=True.
FORWARD_WITH_KWARGS: set[int] = set()
FORWARD_ALWAYS_CALLED: set[int] = set()
BACKWARD_PRE: Hooks = OrderedDict()
BACKWARD: Hooks = OrderedDict()
BUFFER_REGISTRATION: Hooks = OrderedDict()
MODULE_REGISTRATION: Hooks = OrderedDict()
PARAMETER_REGISTRATION: Hooks = OrderedDict()


def registered(hooks: Hooks, module: Any, name: str, value: Any) -> Any:
    """``value`` after each registration hook (a hook returning None keeps it)."""
    for hook in list(hooks.values()):
        out = hook(module, name, value)
        if out is not None:
            value = out
    return value
