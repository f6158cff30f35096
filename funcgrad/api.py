"""Small top-level helpers of the JAX face: shapes without computing, host transfer, waits.

>>> import funcgrad as jax
>>> import funcgrad.numpy as jnp
>>> jax.eval_shape(lambda x: x @ x.T, jax.ShapeDtypeStruct((3, 2), jnp.float32))
ShapeDtypeStruct(shape=(3, 3), dtype=float32)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.array import ArrayImpl
from funcgrad.core import Tracer, get_aval
from funcgrad.ir import ShapedArray, ShapeDtypeStruct
from funcgrad.tree_util import tree_flatten, tree_map, tree_unflatten


def eval_shape(fun: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """The shapes and dtypes ``fun(*args)`` would return, found by tracing (nothing runs).

    Arguments may be arrays or ``ShapeDtypeStruct``s.
    """
    from funcgrad.staging import aval_in_use, trace_flat  # noqa: PLC0415

    # Structs of an extended dtype (typed keys) stand for the arrays that hold their data.
    args, kwargs = tree_map(lambda x: x.dtype.from_struct(x) if isinstance(
        x, ShapeDtypeStruct) and isinstance(x.dtype, dtypes.ExtendedDType) else x,
        (args, kwargs))
    leaves, in_tree = tree_flatten((args, kwargs))
    avals = [ShapedArray(x.shape, x.dtype, x.weak_type) if isinstance(x, ShapeDtypeStruct)
             else aval_in_use(get_aval(x)) for x in leaves]
    box: list[Any] = []

    def flat(*xs: Any) -> list[Any]:
        a, k = tree_unflatten(in_tree, xs)
        out_leaves, out_tree = tree_flatten(fun(*a, **k))
        box.append(out_tree)
        return out_leaves

    closed, _ = trace_flat(flat, avals)
    outs = [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type) for a in closed.out_avals]
    return tree_unflatten(box[0], outs)


def pure_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                  sharding: Any = None, vmap_method: str | None = None, **kwargs: Any) -> Any:
    """Call the host function ``callback(*args, **kwargs)`` at run time, also under ``jit``.

    ``result_shape_dtypes`` is a pytree of ``ShapeDtypeStruct`` (anything with ``shape`` and
    ``dtype``) that the callback's results must match (dtypes are converted, a wrong shape
    is an error). The callback receives concrete Arrays and may use NumPy. It is assumed
    pure: unused results may be dropped. It cannot be differentiated (wrap it in
    ``custom_jvp``). Under ``vmap``, ``vmap_method`` says how: ``"sequential"`` calls it per
    element, ``"expand_dims"`` once with unbatched arguments given a leading axis of size 1,
    ``"broadcast_all"`` once with every argument broadcast to the batch; None refuses.

    >>> import numpy as np
    >>> import funcgrad as jax
    >>> import funcgrad.numpy as jnp
    >>> def host_sin(x):
    ...     return np.sin(np.asarray(x))
    >>> f = jax.jit(lambda x: jax.pure_callback(host_sin, jax.ShapeDtypeStruct(x.shape,
    ...                                                                      x.dtype), x))
    >>> f(jnp.zeros(2))
    Array([0., 0.], dtype=float32)
    >>> jax.vmap(lambda x: jax.pure_callback(host_sin, jax.ShapeDtypeStruct((), x.dtype), x,
    ...                                      vmap_method="sequential"))(jnp.zeros(2))
    Array([0., 0.], dtype=float32)
    """
    from funcgrad.primitives.callbacks import VMAP_METHODS, pure_callback_p  # noqa: PLC0415

    del sharding
    if vmap_method not in VMAP_METHODS:
        raise ValueError(f"vmap_method must be on of the allowed methods {list(VMAP_METHODS)}, "
                         f"but got: {vmap_method}")
    flat, leaves, result_avals, out_tree = _callback_call(callback, result_shape_dtypes,
                                                          args, kwargs)
    outs = pure_callback_p.bind(*leaves, callback=flat, result_avals=result_avals,
                                vmap_method=vmap_method)
    return tree_unflatten(out_tree, list(outs))


def _callback_call(callback: Callable[..., Any], result_shape_dtypes: Any,
                   args: tuple[Any, ...], kwargs: dict[str, Any]
                   ) -> tuple[Any, list[Any], tuple[ShapedArray, ...], Any]:
    """The flat callback, its operands, the declared result types and their structure."""
    from funcgrad import dtypes  # noqa: PLC0415
    from funcgrad.conversion import asarray  # noqa: PLC0415
    from funcgrad.primitives.callbacks import flat_callback  # noqa: PLC0415

    out_leaves, out_tree = tree_flatten(result_shape_dtypes)
    result_avals = tuple(ShapedArray(tuple(s.shape), dtypes.canonicalize_dtype(np.dtype(s.dtype)))
                         for s in out_leaves)
    args, kwargs = tree_map(asarray, (args, kwargs))
    flat, leaves = flat_callback(callback, args, kwargs, out_tree)
    return flat, leaves, result_avals, out_tree


def io_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                sharding: Any = None, ordered: bool = False, **kwargs: Any) -> Any:
    """Call the host function ``callback(*args, **kwargs)`` for its side effects (logging,
    writing files, reading a sensor), also under ``jit``, where it is never dropped even if
    its results are unused. ``result_shape_dtypes`` declares what it returns (None:
    nothing). It cannot be differentiated; under ``vmap`` it is called once per element,
    and ``ordered=True`` refuses ``vmap``.

    >>> import funcgrad as jax
    >>> seen = []
    >>> f = jax.jit(lambda x: jax.experimental.io_callback(seen.append, None, x) or x + 1)
    >>> f(1.0), len(seen)
    (Array(2., dtype=float32, weak_type=True), 1)
    """
    from funcgrad.primitives.callbacks import io_callback_p  # noqa: PLC0415

    del sharding
    flat, leaves, result_avals, out_tree = _callback_call(callback, result_shape_dtypes,
                                                          args, kwargs)
    outs = io_callback_p.bind(*leaves, callback=flat, result_avals=result_avals,
                              ordered=bool(ordered))
    return tree_unflatten(out_tree, list(outs))


def block_until_ready(x: Any) -> Any:
    """Wait until every array in the pytree ``x`` is computed; return ``x``."""
    for leaf in tree_flatten(x)[0]:
        if isinstance(leaf, ArrayImpl):
            leaf.block_until_ready()
    return x


def device_get(x: Any) -> Any:
    """The arrays of the pytree ``x`` as NumPy arrays on the host (other leaves unchanged)."""
    return tree_map(lambda a: np.asarray(a) if isinstance(a, ArrayImpl) else a, x)


def typeof(x: Any) -> ShapedArray:
    """The abstract value (shape, dtype, weak type) of ``x``."""
    return get_aval(x)


def device_count() -> int:
    """How many devices the default backend has here."""
    from funcgrad.devices import devices  # noqa: PLC0415

    return len(devices(default_backend()))


def local_device_count() -> int:
    return device_count()


def default_backend() -> str:
    """``"gpu"`` when CuPy finds a CUDA device, else ``"cpu"``."""
    from funcgrad.devices import get_backend  # noqa: PLC0415

    return "gpu" if get_backend("cupy").available() else "cpu"


def process_count() -> int:
    """How many processes take part (one, unless ``funcgrad.distributed.initialize()``
    joined a multi-process run).

    >>> import funcgrad as jax
    >>> jax.process_count()
    1
    """
    from funcgrad import processes  # noqa: PLC0415

    return processes.process_count()


def process_index() -> int:
    """This process's index in a multi-process run (0 in one process).

    >>> import funcgrad as jax
    >>> jax.process_index()
    0
    """
    from funcgrad import processes  # noqa: PLC0415

    return processes.process_index()


def local_devices(process_index: int | None = None, backend: str | None = None) -> list[Any]:
    """The devices of this process (all of them: funcgrad runs one process per host).

    >>> import funcgrad as jax
    >>> jax.local_devices()[0].platform
    'cpu'
    """
    from funcgrad.devices import devices  # noqa: PLC0415

    return list(devices(backend)) if backend is not None else list(devices())


def process_indices() -> list[int]:
    """The indices of all processes: ``[0]`` in one process.

    >>> import funcgrad as jax
    >>> jax.process_indices()
    [0]
    """
    return list(range(process_count()))


host_count, host_id = process_count, process_index


def host_ids() -> list[int]:
    """``process_indices()`` under its old name."""
    return process_indices()


def named_call(fun: Callable[..., Any], *, name: str | None = None) -> Callable[..., Any]:
    """``fun`` with a name for compiled programs (JAX names the XLA computation; funcgrad's
    jaxprs and generated code are unaffected): calling it is calling ``fun``.

    >>> import funcgrad as jax
    >>> jax.named_call(lambda x: x + 1, name="inc")(1)
    2
    """
    import functools  # noqa: PLC0415

    @functools.wraps(fun)
    def named(*args: Any, **kwargs: Any) -> Any:
        return fun(*args, **kwargs)

    if name is not None:
        named.__name__ = name
    return named


class named_scope:  # noqa: N801 - JAX's name
    """A name for the operations made in this scope (XLA metadata in JAX; nothing to
    change in funcgrad's programs).

    >>> import funcgrad as jax
    >>> with jax.named_scope("layer1"):
    ...     pass
    """

    def __init__(self, name: str) -> None:
        if not isinstance(name, str):
            raise TypeError("named_scope name argument must be a string.")
        self.name = name

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def linear_transpose(fun: Callable[..., Any], *primals: Any,
                     reduce_axes: Any = ()) -> Callable[..., Any]:
    """The transpose of the linear function ``fun`` at the shapes of ``primals``:
    ``f_t(ct)`` returns the input cotangents (a tuple), as ``jax.linear_transpose``.

    >>> import funcgrad as jax
    >>> import funcgrad.numpy as jnp
    >>> f_t = jax.linear_transpose(lambda x: 3.0 * x, jnp.ones(2))
    >>> f_t(jnp.array([1.0, 2.0]))
    (Array([3., 6.], dtype=float32),)
    """
    from funcgrad.transforms.linear_transpose import transpose_linear  # noqa: PLC0415

    return transpose_linear(fun, primals)


def clear_caches() -> None:
    """Forget every compiled program (jit caches, compiled executables)."""
    from funcgrad.transforms import jit as _jit  # noqa: PLC0415

    _jit.clear_caches()


def device_put(x: Any, device: Any = None) -> Any:
    """The arrays of the pytree ``x`` as Arrays on ``device`` (``"cpu"``, ``"cuda"``,
    ``"cuda:1"``; the default device when None), copied.

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> fg.device_put({"w": np.ones(1)}, "cpu")["w"]
    Array([1.], dtype=float32)
    """
    from funcgrad.array import commit  # noqa: PLC0415
    from funcgrad.conversion import asarray, from_buffer  # noqa: PLC0415
    from funcgrad.devices import put_buffer  # noqa: PLC0415
    from funcgrad.sharding import Sharding  # noqa: PLC0415

    if isinstance(device, Sharding):  # one device: a sharding places all on its device
        device = device._device()

    def put(a: Any) -> Any:
        if isinstance(a, Tracer):
            # A traced value moves through the primitive: differentiable, and the
            # identity inside a compiled program (one program, one device).
            from funcgrad.primitives.transfer import device_put as traced_put  # noqa: PLC0415

            return a if device is None else traced_put(a, device)
        arr = asarray(a)
        if type(arr) is not ArrayImpl:
            from funcgrad.numpy._creation import array  # noqa: PLC0415

            arr = array(arr)
        if device is None:
            return arr
        out = from_buffer(put_buffer(arr._value, device), arr.aval.weak_type)
        commit(out)  # placed by name: committed, as JAX's
        return out

    return tree_map(put, x)
