"""``torch.backends.cudnn``: switches kept for programs that set them. funcgrad's GPU
convolutions are CuPy/cuBLAS products, not cuDNN, so ``is_available()`` is False and the
switches change nothing (its kernels are deterministic; there is no autotuner)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

__all__ = ["allow_tf32", "benchmark", "benchmark_limit", "deterministic", "enabled", "flags",
           "is_available", "version"]

enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    """False: funcgrad does not call cuDNN."""
    return False


def version() -> None:
    return None


@contextlib.contextmanager
def flags(enabled: bool = False, benchmark: bool = False, benchmark_limit: int = 10,
          deterministic: bool = False, allow_tf32: bool = True) -> Iterator[None]:
    """Set the switches inside the block."""
    g = globals()
    names = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")
    old = {n: g[n] for n in names}
    g.update(zip(names, (enabled, benchmark, benchmark_limit, deterministic, allow_tf32)))
    try:
        yield
    finally:
        g.update(old)
