"""``torch.backends.mkldnn``: oneDNN, which funcgrad does not call (``enabled`` is kept)."""

__all__ = ["enabled", "is_available"]

enabled = True


def is_available() -> bool:
    return False
