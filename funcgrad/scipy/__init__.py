"""``jax.scipy``: SciPy's functions over funcgrad arrays (``linalg``).

>>> import funcgrad.scipy
>>> hasattr(funcgrad.scipy, "linalg")
True
"""

from funcgrad.scipy import linalg, special, stats

__all__ = ["linalg", "special", "stats"]
