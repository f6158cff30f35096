"""Experimental switches, as in ``jax.experimental``: ``enable_x64`` and ``disable_x64``.

>>> import funcgrad
>>> with funcgrad.experimental.enable_x64():
...     funcgrad.numpy.ones(1).dtype
dtype('float64')
"""

from funcgrad.config import disable_x64, enable_x64

__all__ = ["disable_x64", "enable_x64"]
