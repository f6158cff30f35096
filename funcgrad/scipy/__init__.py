"""``jax.scipy``: SciPy's functions over funcgrad arrays (``linalg``, ``special``,
``stats``, ``signal``, ``fft``, ``ndimage``, ``integrate``).

>>> import funcgrad.scipy
>>> hasattr(funcgrad.scipy, "linalg"), hasattr(funcgrad.scipy, "signal")
(True, True)
"""

from funcgrad.scipy import (
    cluster,
    fft,
    integrate,
    interpolate,
    linalg,
    ndimage,
    optimize,
    signal,
    sparse,
    spatial,
    special,
    stats,
)

# JAX's __all__ leaves out optimize and spatial (they load only when imported by name);
# here they load eagerly, so attribute access works too.
__all__ = ["cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "signal",
           "sparse", "special", "stats"]
