"""``jax.version``: the version string.

>>> from funcgrad import version
>>> isinstance(version.__version__, str)
True
"""

__version__ = "0.2.0"
_version = __version__

__all__ = ["__version__"]
