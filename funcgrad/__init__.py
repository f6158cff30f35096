"""funcgrad, the JAX face: composable transformations over immutable arrays.

``import funcgrad as jax`` (with ``funcgrad.numpy as jnp``) runs JAX programs; the
PyTorch face is :mod:`funcgrad.torch`.

>>> import funcgrad as jax
>>> import funcgrad.numpy as jnp
>>> jax.grad(lambda x: jnp.sum(x ** 2))(jnp.array([1.0, 2.0]))
Array([2., 4.], dtype=float32)
"""

from typing import Any as _Any

from funcgrad import (
    ad_checkpoint,
    allocator,  # noqa: F401 - tunes glibc's malloc on import (funcgrad/allocator.py)
    custom_batching,
    custom_derivatives,
    debug,
    distributed,
    dlpack,
    dtypes,
    errors,
    experimental,
    float_warnings,  # noqa: F401 - silences NumPy's nan/inf warnings in funcgrad's code
    image,
    ir,
    lax,
    nn,  # noqa: E402  (nn builds on the transforms)
    numpy,
    ops,
    random,
    scipy,
    test_util,
    testing,
    tree,
    tree_util,
    typing,
    version,
)
from funcgrad.api import (
    ShapeDtypeStruct,
    block_until_ready,
    clear_caches,
    default_backend,
    device_count,
    device_get,
    device_put,
    eval_shape,
    host_count,
    host_id,
    host_ids,
    linear_transpose,
    local_device_count,
    local_devices,
    named_call,
    named_scope,
    process_count,
    process_index,
    process_indices,
    pure_callback,
    typeof,
)
from funcgrad.api_extras import (
    check_tracer_leaks,
    checking_leaks,
    checkpoint_policies,
    closure_convert,
    debug_infs,
    debug_nans,
    default_device,
    default_matmul_precision,
    enable_checks,
    ensure_compile_time_eval,
    explain_cache_misses,
    float0,
    log_compiles,
    numpy_dtype_promotion,
    numpy_rank_promotion,
    print_environment_info,
    threefry_partitionable,
    transfer_guard,
    transfer_guard_device_to_device,
    transfer_guard_device_to_host,
    transfer_guard_host_to_device,
)
from funcgrad.array import Array
from funcgrad.config import config, disable_jit, enable_x64
from funcgrad.devices import Device, devices
from funcgrad.distributed import pmap
from funcgrad.ir import ClosedJaxpr, Jaxpr
from funcgrad.staging import eval_jaxpr, make_jaxpr

# Control flow registers its primitives (cond, while, scan) with the rest.
from funcgrad.transforms import control_flow as _control_flow  # noqa: F401
from funcgrad.transforms.custom import (
    checkpoint,
    custom_gradient,
    custom_jvp,
    custom_vjp,
    remat,
)
from funcgrad.transforms.jacobians import hessian, jacfwd, jacrev
from funcgrad.transforms.jit import jit
from funcgrad.transforms.jvp import jvp, linearize
from funcgrad.transforms.vjp import grad, value_and_grad, vjp
from funcgrad.transforms.vmap import jax_vmap as vmap

# Config switches, runtime helpers, stages, monitoring, profiling, one-device sharding.
# isort: off
from funcgrad import _dtypes_api, monitoring, profiler, sharding, stages
from funcgrad.api_runtime import copy_to_host_async, effects_barrier, fwd_and_bwd, live_arrays
from funcgrad.config_flags import (
    allow_f16_reductions,
    debug_key_reuse,
    default_prng_impl,
    enable_custom_prng,
    legacy_prng_key,
    make_user_context,
    no_execution,
    no_tracing,
    remove_size_one_mesh_axis_from_type,
    softmax_custom_jvp,
)
from funcgrad.shard_map import shard_map, smap
from funcgrad.sharded_arrays import (
    make_array_from_callback,
    make_array_from_process_local_data,
    make_array_from_single_device_arrays,
    reshard,
)
from funcgrad.sharding import NamedSharding, P, Shard, make_mesh, set_mesh
# isort: on

for _name in _dtypes_api.__all__:  # jax.dtypes' public names on the engine's dtype module
    setattr(dtypes, _name, getattr(_dtypes_api, _name))
jacobian = jacrev
__version__ = version.__version__

__all__ = [
    "ad_checkpoint", "custom_batching", "custom_derivatives", "dlpack", "ops", "typing", "version",
    "check_tracer_leaks", "checking_leaks", "checkpoint_policies", "closure_convert",
    "debug_infs", "debug_nans", "default_device", "default_matmul_precision", "enable_checks",
    "ensure_compile_time_eval", "explain_cache_misses", "float0", "log_compiles",
    "numpy_dtype_promotion", "numpy_rank_promotion", "print_environment_info",
    "threefry_partitionable", "transfer_guard", "transfer_guard_device_to_device",
    "transfer_guard_device_to_host", "transfer_guard_host_to_device",
    "Array", "ClosedJaxpr", "Device", "Jaxpr", "ShapeDtypeStruct", "block_until_ready",
    "checkpoint", "clear_caches", "config", "custom_gradient", "custom_jvp", "custom_vjp", "debug",
    "default_backend", "device_count", "device_get", "device_put", "devices", "disable_jit",
    "distributed", "pmap",
    "dtypes", "enable_x64", "errors", "eval_jaxpr", "eval_shape", "experimental", "grad",
    "image",
    "hessian", "host_count", "host_id", "host_ids", "jacfwd", "jacobian", "jacrev", "jit", "jvp",
    "lax", "linear_transpose", "linearize", "local_device_count", "local_devices", "make_jaxpr",
    "named_call", "named_scope", "nn", "numpy", "process_count", "process_index",
    "process_indices", "pure_callback", "random", "remat", "scipy", "test_util", "testing", "tree",
    "tree_util", "typeof", "value_and_grad", "vjp", "vmap",
    "monitoring", "profiler", "sharding", "stages", "copy_to_host_async", "effects_barrier",
    "fwd_and_bwd", "live_arrays", "allow_f16_reductions", "debug_key_reuse", "default_prng_impl",
    "enable_custom_prng", "legacy_prng_key", "make_user_context", "no_execution", "no_tracing",
    "remove_size_one_mesh_axis_from_type", "softmax_custom_jvp", "shard_map", "smap",
    "NamedSharding", "P", "Shard", "make_array_from_callback",
    "make_array_from_process_local_data", "make_array_from_single_device_arrays", "make_mesh",
    "reshard", "set_mesh",
]


def __getattr__(name: str) -> _Any:
    # Names JAX 0.10.2 has deprecated away, with the message its module gives for them.
    if name in ("device_put_replicated", "device_put_sharded"):
        raise AttributeError(
            f"jax.{name} is deprecated; use jax.device_put instead. See "
            "https://docs.jax.dev/en/latest/migrate_pmap.html#drop-in-replacements for a "
            "drop-in replacement.")
    raise AttributeError(f"module 'funcgrad' has no attribute {name!r}")
