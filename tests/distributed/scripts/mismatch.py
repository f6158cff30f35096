"""Run under mpiexec with FUNCGRAD_DISTRIBUTED_DEBUG=1: the ranks call psum on different
shapes, and every rank names the mismatch."""

import funcgrad as jax
import funcgrad.numpy as jnp

jax.distributed.initialize()
n = 2 + jax.process_index()  # rank 0: 2 elements, rank 1: 3
jax.pmap(lambda v: jax.lax.psum(v, "i"), axis_name="i")(jnp.ones((1, n)))
print("unreachable")
