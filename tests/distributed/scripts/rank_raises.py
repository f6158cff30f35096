"""Run under mpiexec: rank 1 raises while the others wait in a collective."""

import funcgrad as jax
import funcgrad.numpy as jnp

jax.distributed.initialize()
if jax.process_index() == 1:
    raise ValueError("rank 1 fails on purpose")
jax.pmap(lambda v: jax.lax.psum(v, "i"), axis_name="i")(jnp.ones((1, 2)))
print("unreachable")
