"""``jax.scipy.cluster``: clustering helpers (``vq``).

>>> import funcgrad.scipy.cluster
>>> funcgrad.scipy.cluster.vq.vq.__name__
'vq'
"""

from funcgrad.scipy.cluster import vq

__all__ = ["vq"]
