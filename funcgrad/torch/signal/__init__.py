"""``torch.signal``: window functions (``torch.signal.windows``)."""

from funcgrad.torch.signal import windows

__all__ = ["windows"]
