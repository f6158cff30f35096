"""``jax.scipy.sparse``: the iterative linear solvers of ``linalg``.

>>> import funcgrad.scipy.sparse
>>> funcgrad.scipy.sparse.linalg.cg.__name__
'cg'
"""

from funcgrad.scipy.sparse import linalg

__all__ = ["linalg"]
