"""JAX's ``jax.stages``: the stages of a jitted call (see :mod:`funcgrad.transforms.stages`).

>>> import funcgrad as jax
>>> isinstance(jax.jit(lambda x: x), jax.stages.Wrapped)
True
"""

from funcgrad.transforms.jit import JitFunction as Wrapped
from funcgrad.transforms.stages import Compiled, Lowered, Traced

__all__ = ["Compiled", "Lowered", "Traced", "Wrapped"]
