"""Experimental switches and helpers, as in ``jax.experimental``: ``enable_x64``,
``disable_x64``, ``io_callback``, ``mesh_utils`` and ``checkify``.

>>> import funcgrad
>>> with funcgrad.experimental.enable_x64():
...     funcgrad.numpy.ones(1).dtype
dtype('float64')
"""

from funcgrad.api import io_callback
from funcgrad.config import disable_x64, enable_x64
from funcgrad.experimental import checkify, mesh_utils

__all__ = ["checkify", "disable_x64", "enable_x64", "io_callback", "mesh_utils"]
