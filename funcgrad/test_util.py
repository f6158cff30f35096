"""``jax.test_util``: derivatives checked against finite differences.

>>> import funcgrad as jax
>>> import funcgrad.numpy as jnp
>>> jax.config.update("jax_enable_x64", True)
>>> jax.test_util.check_grads(jnp.sin, (jnp.array([0.3, 1.2]),), order=2)
>>> jax.config.update("jax_enable_x64", False)
"""

from funcgrad.testing import check_grads, check_jvp, check_vjp

__all__ = ["check_grads", "check_jvp", "check_vjp"]
