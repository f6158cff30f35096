"""``torch.nn.utils.skip_init``: a module made without running its initialization.

>>> import funcgrad.torch as torch
>>> skip_init(torch.nn.Linear, 3, 4).weight.shape
torch.Size([4, 3])
"""

from __future__ import annotations

import inspect
from typing import Any

from funcgrad.torch.nn.module import Module


def skip_init(module_cls: Any, *args: Any, **kwargs: Any) -> Any:
    """``module_cls(*args, **kwargs)`` with uninitialized parameters and buffers: made on
    the ``meta`` device (nothing drawn), then given memory on ``device`` (the CPU by
    default) by ``to_empty``.

    >>> import funcgrad.torch as torch
    >>> skip_init(torch.nn.Linear, 3, 4, device="meta").weight.is_meta
    True
    """
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    kwargs["device"] = "meta"
    return module_cls(*args, **kwargs).to_empty(device=final_device)
