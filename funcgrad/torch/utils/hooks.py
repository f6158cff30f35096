"""``torch.utils.hooks``: ``RemovableHandle``, what the ``register_*_hook`` methods return.

>>> import funcgrad.torch as torch
>>> h = torch.nn.Linear(1, 1).register_forward_hook(lambda *a: None)
>>> isinstance(h, torch.utils.hooks.RemovableHandle)
True
"""

from funcgrad.torch._handles import RemovableHandle

__all__ = ["RemovableHandle"]
