"""NumPy's floating-point warnings raised in funcgrad's own code are silenced on import.

``0/0``, ``log(0)`` or an overflowing ``exp`` make NumPy warn (``RuntimeWarning: divide by
zero encountered in log``); JAX and PyTorch return nan/inf without a word, and so does
funcgrad, eager or jitted. The filter matches warnings attributed to funcgrad's modules
(generated programs are named as one): the user's own NumPy calls still warn. pytest puts
back the warning filters after collecting a test module, dropping this one if funcgrad was
first imported there: a test suite that wants it calls ``install()`` (in a ``conftest.py``).

>>> import warnings
>>> import funcgrad.numpy as jnp
>>> with warnings.catch_warnings():
...     warnings.simplefilter("error", RuntimeWarning)
...     install()  # the filter goes in front of the "error" one
...     print(jnp.log(jnp.zeros(2)))
[-inf -inf]
"""

from __future__ import annotations

import warnings

_MESSAGE = r"(divide by zero|invalid value|overflow|underflow) encountered"
_MODULES = r"funcgrad(\.|$)"


def install() -> None:
    """Put the filter in front of the current warning filters."""
    warnings.filterwarnings("ignore", _MESSAGE, RuntimeWarning, _MODULES)


install()
