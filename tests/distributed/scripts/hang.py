"""Run under mpiexec with FUNCGRAD_COLLECTIVE_TIMEOUT=2: rank 1 never joins the
collective rank 0 waits in, so rank 0 names it and aborts the run."""

import time

import funcgrad as jax
import funcgrad.numpy as jnp

jax.distributed.initialize()
if jax.process_index() == 1:
    time.sleep(120)  # alive, but not taking part
else:
    jax.pmap(lambda v: jax.lax.psum(v, "i"), axis_name="i")(jnp.ones((1, 2)))
print("unreachable")
