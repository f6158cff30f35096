"""glibc's malloc tuned for array programs: large blocks reused instead of returned to the
kernel and faulted in again.

NumPy allocates every array with ``malloc``. glibc serves blocks of 128 KiB and more with
fresh ``mmap`` pages (a 256 x 256 float64 array: 128 page faults, ~60 us, on every
allocation) until it has freed such a block, then raises that limit on its own, but
trims the top of its heap back to the kernel as soon as 2x the limit lies free there.
A jitted gradient of 256 x 256 matrices allocates and frees dozens of such arrays per
call and paid 1,760 page faults per call (7.9 ms, of which 4 ms were faults) where
JAX's and PyTorch's allocators keep their memory. :func:`tune` fixes both limits at
the values glibc itself reaches after freeing one 32 MiB block (mmap for blocks of
32 MiB and more, trim above 64 MiB free): freed memory up to that is kept for the next
allocation, as by those allocators.

It runs when funcgrad is imported (on this module's import), on Linux with glibc only.
``FUNCGRAD_MALLOC_TUNING=0`` in the environment leaves malloc alone (for example under
another allocator, or to keep the process's resident memory as small as possible).

>>> tune() in (True, False)
True
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import sys

MMAP_THRESHOLD = 32 << 20
"""Blocks from this size up are mmapped (glibc's own ceiling for its dynamic limit)."""

TRIM_THRESHOLD = 2 * MMAP_THRESHOLD
"""Free memory at the top of the heap beyond this goes back to the kernel."""

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # malloc.h


def switched_on() -> bool:
    """Whether the environment allows the tuning (``FUNCGRAD_MALLOC_TUNING`` not 0/off)."""
    value = os.environ.get("FUNCGRAD_MALLOC_TUNING", "1").strip().lower()
    return value not in ("0", "false", "no", "off")


@functools.cache
def tune() -> bool:
    """Set glibc's mmap and trim thresholds (once); whether they were set.

    >>> tune() in (True, False)
    True
    """
    if not sys.platform.startswith("linux") or not switched_on():
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
        # gnu_get_libc_version exists in glibc only: musl's mallopt is a no-op stub.
        libc.gnu_get_libc_version  # noqa: B018
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and \
        bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))


tune()
