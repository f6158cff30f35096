"""JAX's runtime helpers: ``effects_barrier``, ``copy_to_host_async``, ``fwd_and_bwd``,
``live_arrays``.

>>> import funcgrad as jax
>>> import funcgrad.numpy as jnp
>>> fwd, bwd = jax.fwd_and_bwd(lambda x, w: x @ w, argnums=(0, 1))
>>> y, res = fwd(jnp.ones((2, 2)), jnp.eye(2))
>>> bwd(res, jnp.ones((2, 2)))[1]
Array([[2., 2.],
       [2., 2.]], dtype=float32)
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

from funcgrad.tree_util import tree_leaves


def effects_barrier() -> None:
    """Wait until every side effect started so far (callbacks, GPU work) has completed.

    Host code and callbacks run in order as they are called; queued GPU work is waited for.

    >>> effects_barrier()
    """
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        try:
            cupy.cuda.runtime.deviceSynchronize()  # every stream's work
        except Exception:  # noqa: BLE001 - no CUDA device: nothing was queued
            pass


def live_arrays(platform: str | None = None) -> list[Any]:
    """The Arrays alive now on ``platform``'s devices (``"cpu"``, ``"gpu"``/``"cuda"``; the
    default backend's when None), found by walking the garbage collector's objects: a
    debugging aid for leaks, as JAX's.

    >>> import funcgrad.numpy as jnp
    >>> x = jnp.arange(3)
    >>> any(a is x for a in live_arrays())
    True
    """
    import gc  # noqa: PLC0415

    from funcgrad.array import ArrayImpl  # noqa: PLC0415

    if platform is None:
        from funcgrad.api import default_backend  # noqa: PLC0415

        platform = default_backend()
    want = "cuda" if platform.lower() in ("gpu", "cuda") else platform.lower()
    return [o for o in gc.get_objects() if type(o) is ArrayImpl and o.device.platform == want]


def copy_to_host_async(x: Any) -> Any:
    """Start copying every array leaf of ``x`` to the host; returns ``x``.

    >>> import funcgrad.numpy as jnp
    >>> copy_to_host_async({"a": jnp.ones(2)})["a"]
    Array([1., 1.], dtype=float32)
    """
    for leaf in tree_leaves(x):
        fn = getattr(leaf, "copy_to_host_async", None)
        if fn is not None:
            fn()
    return x


def fwd_and_bwd(fun: Callable[..., Any], argnums: int | Sequence[int],
                has_aux: bool = False, jitted: bool = True
                ) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """A forward ``fwd(*args) -> (out, residuals[, aux])`` and a backward
    ``bwd(residuals, cotangent)`` giving the cotangents of the ``argnums`` arguments (one
    array for an int ``argnums``), each compiled once with ``jitted``. The residuals are
    the primal arguments: ``bwd`` recomputes the forward pass it differentiates (as
    ``checkpoint`` does) rather than keeping its intermediates. (See the module example.)
    """
    from funcgrad.transforms.jit import jit  # noqa: PLC0415
    from funcgrad.transforms.vjp import vjp  # noqa: PLC0415

    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r}")
    single = isinstance(argnums, int)
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)

    def partial_fun(args: tuple[Any, ...]) -> tuple[Callable[..., Any], list[Any]]:
        n = len(args)
        for i in nums:
            if not -n <= i < n:
                raise TypeError(f"argnums {argnums} out of range for {n} positional "
                                "arguments")
        pos = [i % n for i in nums]

        def f(*dyn: Any) -> Any:
            full = list(args)
            for i, d in zip(pos, dyn):
                full[i] = d
            return fun(*full)

        return f, [args[i] for i in pos]

    def fwd(*args: Any) -> Any:
        f, dyn = partial_fun(args)
        if has_aux:
            out, aux = f(*dyn)
            return out, args, aux
        return f(*dyn), args

    def bwd(residuals: tuple[Any, ...], outgrad: Any) -> Any:
        f, dyn = partial_fun(tuple(residuals))
        _, f_vjp, *_ = vjp(f, *dyn, has_aux=has_aux)
        g = f_vjp(outgrad)
        return g[0] if single else g

    if jitted:
        return jit(fwd), jit(bwd)
    return fwd, bwd


__all__ = ["copy_to_host_async", "effects_barrier", "fwd_and_bwd"]
