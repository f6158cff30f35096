"""``funcgrad.image``: image resampling, as ``jax.image`` (``resize``,
``scale_and_translate``, ``ResizeMethod``).

>>> import funcgrad.numpy as jnp
>>> from funcgrad import image
>>> image.resize(jnp.ones((2, 2)), (3, 3), "bilinear").shape
(3, 3)
"""

from funcgrad.image._scale import ResizeMethod, resize, scale_and_translate

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]
