"""``jax.scipy.integrate``: the composite trapezoidal rule.

>>> import funcgrad.numpy as fnp
>>> from funcgrad.scipy import integrate
>>> float(integrate.trapezoid(fnp.array([1.0, 2.0, 3.0])))
4.0
"""

from __future__ import annotations

from funcgrad.numpy._numeric import trapezoid

__all__ = ["trapezoid"]
