"""More of JAX's top level: ``ensure_compile_time_eval``, ``closure_convert``, ``float0``,
``checkpoint_policies``, and the config context managers (``debug_nans``, ``debug_infs``,
``default_matmul_precision``, ``numpy_rank_promotion``, ...).

>>> import funcgrad as jax
>>> import funcgrad.numpy as jnp
>>> @jax.jit
... def f(x):
...     with jax.ensure_compile_time_eval():
...         y = jnp.sin(3.0) > 0          # a concrete value inside jit
...     return x + 1 if y else x - 1
>>> f(1.0)
Array(2., dtype=float32, weak_type=True)
"""

from __future__ import annotations

import contextlib
import platform
import sys
import types
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from funcgrad.array import ArrayImpl
from funcgrad.config import config
from funcgrad.core import EvalTrace, Primitive, Tracer, set_current_trace
from funcgrad.errors import ConcretizationTypeError

# JAX's dtype of tangents and cotangents of integer and boolean values.
float0 = np.dtype([("float0", np.void, 0)])


class _CompileTimeEvalTrace(EvalTrace):
    label = "ensure_compile_time_eval"

    def process_primitive(self, prim: Primitive, args: Sequence[Any],
                          params: dict[str, Any]) -> Any:
        for a in args:
            if isinstance(a, Tracer):
                raise ConcretizationTypeError(
                    f"ensure_compile_time_eval: {prim.name} got a value that depends on the "
                    f"traced function's arguments ({a.aval.str_short()}), which has no value "
                    f"until the function runs; compute it outside the block")
        return super().process_primitive(prim, args, params)


@contextlib.contextmanager
def ensure_compile_time_eval() -> Iterator[None]:
    """Within the block, operations run right away on concrete values, even while a
    function is being traced by ``jit``/``scan``; a traced value raises
    ``ConcretizationTypeError``. (See the module example.)"""
    with set_current_trace(_CompileTimeEvalTrace()):
        yield


def closure_convert(fun: Callable[..., Any], *example_args: Any
                    ) -> tuple[Callable[..., Any], list[Any]]:
    """``fun`` with the traced values it closes over made explicit: gives
    ``(converted, consts)`` where ``converted(*args, *consts) == fun(*args)``.

    >>> import funcgrad as jax
    >>> f, consts = jax.closure_convert(lambda x: x * 2.0, 1.0)
    >>> f(3.0, *consts)
    Array(6., dtype=float32, weak_type=True)
    """
    from funcgrad.staging import eval_jaxpr, make_jaxpr  # noqa: PLC0415
    from funcgrad.tree_util import tree_flatten, tree_unflatten  # noqa: PLC0415

    closed, out_shape = make_jaxpr(fun, return_shape=True)(*example_args)
    _, in_tree = tree_flatten(example_args)
    _, out_tree = tree_flatten(out_shape)
    consts = [c for c in closed.consts if isinstance(c, (Tracer, ArrayImpl, np.ndarray))]
    fixed = [c for c in closed.consts]
    n_in = in_tree.num_leaves

    def converted(*args: Any) -> Any:
        flat, tree = tree_flatten(args[:len(args) - len(consts)])
        if tree != in_tree or len(flat) != n_in:
            raise TypeError(f"closure_convert: expected arguments shaped as {in_tree}, "
                            f"got {tree}")
        it = iter(args[len(args) - len(consts):])
        cs = [next(it) if isinstance(c, (Tracer, ArrayImpl, np.ndarray)) else c
              for c in fixed]
        return tree_unflatten(out_tree, eval_jaxpr(closed.jaxpr, *flat, consts=cs))

    return converted, consts


def _config_context(name: str) -> Callable[[Any], Any]:
    @contextlib.contextmanager
    def context(value: Any = True) -> Iterator[None]:
        old = config.read(name)
        config.update(name, value)
        try:
            yield
        finally:
            config.update(name, old)

    context.__name__ = name.removeprefix("jax_")
    context.__doc__ = (f"Set ``{name}`` inside the block (``funcgrad.config.update`` "
                       f"for the whole program).")
    return context


debug_nans = _config_context("jax_debug_nans")
debug_infs = _config_context("jax_debug_infs")
default_matmul_precision = _config_context("jax_default_matmul_precision")
numpy_rank_promotion = _config_context("jax_numpy_rank_promotion")
numpy_dtype_promotion = _config_context("jax_numpy_dtype_promotion")
log_compiles = _config_context("jax_log_compiles")
default_device = _config_context("jax_default_device")
threefry_partitionable = _config_context("jax_threefry_partitionable")


@contextlib.contextmanager
def _no_op_context(*args: Any, **kwargs: Any) -> Iterator[None]:
    yield


# JAX's guards and checks over XLA transfers: accepted, with nothing to guard (transfers
# are NumPy/CuPy calls the program makes itself).
transfer_guard = transfer_guard_host_to_device = transfer_guard_device_to_host = \
    transfer_guard_device_to_device = enable_checks = explain_cache_misses = _no_op_context
# The tracer-leak checker (funcgrad/leak_check.py).
checking_leaks = check_tracer_leaks = _config_context("jax_check_tracer_leaks")


def print_environment_info(return_string: bool = False) -> str | None:
    """Versions of funcgrad, Python, NumPy and the platform (as ``jax.print_environment_info``).

    >>> import funcgrad as jax
    >>> "numpy" in jax.print_environment_info(return_string=True)
    True
    """
    import funcgrad  # noqa: PLC0415

    text = (f"funcgrad:    {funcgrad.__version__}\n"
            f"numpy:       {np.__version__}\n"
            f"python:      {sys.version.split()[0]}\n"
            f"platform:    {platform.platform()}\n"
            f"devices:     {funcgrad.devices()}\n"
            f"processes:   {funcgrad.process_count()}\n")
    if return_string:
        return text
    print(text, end="")
    return None


# --------------------------------------------------------------- checkpoint policies


def _policy(name: str, saves: Callable[..., bool]) -> Callable[..., bool]:
    saves.__name__ = name
    return saves


def _named(prim: Any, params: dict[str, Any], names: tuple[str, ...] | None = None) -> bool:
    """Whether a policy is asked about a value named by ``checkpoint_name`` (in ``names``)."""
    return getattr(prim, "name", prim) == "name" and (names is None
                                                       or params.get("name") in names)


def _is_dot(prim: Any) -> bool:
    return getattr(prim, "name", prim) in ("dot_general", "conv_general_dilated")


checkpoint_policies = types.SimpleNamespace(
    everything_saveable=_policy("everything_saveable", lambda *a, **k: True),
    nothing_saveable=_policy("nothing_saveable", lambda *a, **k: False),
    dots_saveable=_policy("dots_saveable", lambda prim, *a, **k: _is_dot(prim)),
    dots_with_no_batch_dims_saveable=_policy(
        "dots_with_no_batch_dims_saveable",
        lambda prim, *a, **k: _is_dot(prim) and not k.get(
            "dimension_numbers", (((), ()), ((), ())))[1][0]),
    save_only_these_names=lambda *names: _policy(
        "save_only_these_names", lambda prim, *a, **k: _named(prim, k, names)),
    save_any_names_but_these=lambda *names: _policy(
        "save_any_names_but_these",
        lambda prim, *a, **k: _named(prim, k) and not _named(prim, k, names)),
    save_anything_except_these_names=lambda *names: _policy(
        "save_anything_except_these_names", lambda prim, *a, **k: not _named(prim, k, names)),
    save_from_both_policies=lambda p1, p2: _policy(
        "save_from_both_policies", lambda *a, **k: bool(p1(*a, **k) or p2(*a, **k))),
    offload_dot_with_no_batch_dims=lambda *a, **k: _policy(
        "offload_dot_with_no_batch_dims", lambda *a2, **k2: False),
    save_and_offload_only_these_names=lambda *a, **k: _policy(
        "save_and_offload_only_these_names", lambda *a2, **k2: False),
)
# JAX's older names are the same policies.
checkpoint_policies.checkpoint_dots = checkpoint_policies.dots_saveable
checkpoint_policies.checkpoint_dots_with_no_batch_dims = \
    checkpoint_policies.dots_with_no_batch_dims_saveable


__all__ = ["check_tracer_leaks", "checking_leaks", "checkpoint_policies", "closure_convert",
           "debug_infs", "debug_nans", "default_device", "default_matmul_precision",
           "enable_checks", "ensure_compile_time_eval", "explain_cache_misses", "float0",
           "log_compiles", "numpy_dtype_promotion", "numpy_rank_promotion",
           "print_environment_info", "threefry_partitionable", "transfer_guard",
           "transfer_guard_device_to_device", "transfer_guard_device_to_host",
           "transfer_guard_host_to_device"]
