"""``jax.scipy.spatial``: 3-D rotations (``transform``).

>>> import funcgrad.scipy.spatial
>>> funcgrad.scipy.spatial.transform.Rotation.__name__
'Rotation'
"""

from funcgrad.scipy.spatial import transform

__all__ = ["transform"]
