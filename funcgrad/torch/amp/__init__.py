"""``torch.amp``: automatic mixed precision (``autocast`` regions and ``GradScaler``).

>>> import funcgrad.torch as torch
>>> torch.amp.GradScaler("cpu").get_scale()
65536.0
"""

from funcgrad.torch.amp.autocast_mode import (
    autocast,
    custom_bwd,
    custom_fwd,
    is_autocast_available,
)
from funcgrad.torch.amp.grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]
