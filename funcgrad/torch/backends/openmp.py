"""``torch.backends.openmp``: funcgrad's CPU kernels are NumPy's (and numba's), not OpenMP's."""

__all__ = ["is_available"]


def is_available() -> bool:
    return False
