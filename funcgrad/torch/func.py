"""``torch.func``: the functional transforms over Tensors, and modules as functions.

``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian`` and
``vmap`` take functions of Tensors and Tensors in, and give Tensors back; underneath
they are the JAX face's transforms (one engine), run on the Tensors' data.
``functional_call(model, params, args)`` runs a module with other parameter values, so
a model's loss becomes a function of its parameters.

>>> import funcgrad.torch as torch
>>> from funcgrad.torch.func import functional_call, grad
>>> model = torch.nn.Linear(3, 1)
>>> params = dict(model.named_parameters())
>>> def loss(p, x):
...     return (functional_call(model, p, (x,)) ** 2).sum()
>>> grads = grad(loss)(params, torch.ones(4, 3))
>>> sorted(grads), grads["weight"].shape
(['bias', 'weight'], torch.Size([1, 3]))
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from funcgrad.core import Tracer
from funcgrad.torch._grad_mode import no_grad
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn.module import Module
from funcgrad.tree_util import tree_flatten, tree_unflatten

__all__ = ["buffers_of", "functional_call", "grad", "grad_and_value", "hessian", "jacfwd",
           "jacrev", "jvp", "params_of", "vjp", "vmap"]


def _is_array(x: Any) -> bool:
    return isinstance(x, (np.ndarray, Tracer)) or type(x).__module__.startswith("cupy")


def _has_tensor(tree: Any) -> bool:
    leaves, _ = tree_flatten(tree, is_leaf=lambda x: isinstance(x, Tensor))
    return any(isinstance(x, Tensor) for x in leaves)


def _map_leaves(fn: Any, tree: Any) -> Any:
    leaves, treedef = tree_flatten(tree, is_leaf=lambda x: isinstance(x, Tensor))
    return tree_unflatten(treedef, [fn(x) for x in leaves])


def params_of(module: Module) -> dict[str, Any]:
    """The module's parameters as ``{dotted name: array}`` (copies, cut from any graph).

    >>> import funcgrad.torch.nn as nn
    >>> from funcgrad.torch.func import params_of
    >>> {k: v.shape for k, v in params_of(nn.Linear(2, 3)).items()}
    {'weight': (3, 2), 'bias': (3,)}
    """
    return {name: p._data.copy() for name, p in module.named_parameters()}


def buffers_of(module: Module) -> dict[str, Any]:
    """The module's buffers as ``{dotted name: array}`` (copies)."""
    return {name: b._data.copy() for name, b in module.named_buffers()}


def _owner(module: Module, name: str) -> tuple[Module, str, str]:
    """(module owning ``name``, its local name, "_parameters" or "_buffers")."""
    path, _, local = name.rpartition(".")
    try:
        owner = module.get_submodule(path)
    except AttributeError:
        owner = None
    if owner is not None:
        for store in ("_parameters", "_buffers"):
            if local in owner.__dict__[store]:
                return owner, local, store
    raise ValueError(f"functional_call: {module._get_name()} has no parameter or buffer named "
                     f"'{name}'; its names are {sorted(_names(module))}")


def _names(module: Module) -> list[str]:
    return [n for n, _ in module.named_parameters(remove_duplicate=False)] + \
        [n for n, _ in module.named_buffers(remove_duplicate=False)]


def functional_call(module: Module, parameter_and_buffer_dicts: Any, args: Any = None,
                    kwargs: dict[str, Any] | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """Run ``module(*args, **kwargs)`` with the parameters and buffers named in the dict(s)
    replaced by the given values, then put the module's own back.

    Values may be Tensors, NumPy arrays or funcgrad tracers. When no value and no
    argument is a Tensor, the array arguments are wrapped as (non-recording) Tensors
    for ``forward``, the Tensors in the result are unwrapped back to arrays, and the
    facade records no graph: the call is an ordinary function of arrays, which
    ``torch.grad``/``torch.vmap``/``torch.jit`` transform. Parameters left out keep their
    values; ``strict=True`` makes that an error. With ``tie_weights``, a value given for
    one name of a parameter shared under several names applies to all of them.

    >>> import numpy as np
    >>> import funcgrad.torch.nn as nn
    >>> from funcgrad.torch.func import functional_call
    >>> lin = nn.Linear(2, 1)
    >>> functional_call(lin, {"weight": np.ones((1, 2)), "bias": np.zeros(1)}, np.ones((1, 2)))
    Array([[2.]], dtype=float64)
    """
    dicts = parameter_and_buffer_dicts
    if isinstance(dicts, Mapping):
        dicts = (dicts,)
    values: dict[str, Any] = {}
    for d in dicts:
        for k, v in d.items():
            if k in values:
                raise ValueError(f"functional_call: '{k}' appeared in more than one dict")
            values[k] = v
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    kwargs = {} if kwargs is None else kwargs

    if tie_weights:
        ties: dict[int, list[str]] = {}
        for n, p in [*module.named_parameters(remove_duplicate=False),
                     *module.named_buffers(remove_duplicate=False)]:
            ties.setdefault(id(p), []).append(n)
        for group in ties.values():
            given = [n for n in group if n in values]
            for n in group:
                if n not in values and given:
                    values[n] = values[given[0]]
    if strict:
        missing = [n for n in _names(module) if n not in values]
        if missing:
            raise RuntimeError("functional_call got values for only some parameters and "
                               f"buffers; missing: {missing}")

    array_mode = not _has_tensor((values, args, kwargs))
    slots = [(*_owner(module, name), value) for name, value in values.items()]
    saved = [(owner, local, store, owner.__dict__[store][local])
             for owner, local, store, _ in slots]
    try:
        for owner, local, store, value in slots:
            owner.__dict__[store][local] = value if isinstance(value, Tensor) else Tensor(
                value if _is_array(value) else np.asarray(value))
        if not array_mode:
            return module(*args, **kwargs)
        wrap = lambda x: Tensor(x) if _is_array(x) else x
        with no_grad():
            out = module(*_map_leaves(wrap, args), **_map_leaves(wrap, kwargs))
        return _map_leaves(lambda x: _values(x) if isinstance(x, Tensor) else x, out)
    finally:
        for owner, local, store, original in reversed(saved):
            owner.__dict__[store][local] = original


# ------------------------------------------------------------- the transforms


def _values(tree: Any) -> Any:
    """Tensors (and NumPy arrays) as engine values: their data, no copy."""
    from funcgrad.torch._graph import value_of  # noqa: PLC0415

    def leaf(x: Any) -> Any:
        if isinstance(x, Tensor):
            return value_of(x._data) if not isinstance(x._data, Tracer) else x._data
        if isinstance(x, np.ndarray):
            return value_of(x)
        return x

    return _map_leaves(leaf, tree)


def _tensors(tree: Any) -> Any:
    """Engine values (Arrays, tracers) as Tensors."""
    from funcgrad.array import Array  # noqa: PLC0415
    from funcgrad.torch._graph import buffer_of  # noqa: PLC0415

    def leaf(x: Any) -> Any:
        return Tensor._from_data(buffer_of(x)) if isinstance(x, Array) else x

    return _map_leaves(leaf, tree)


def _over_values(func: Any) -> Any:
    """``func`` of Tensors as a function of engine values (Tensors hold the tracers)."""
    import functools  # noqa: PLC0415

    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> Any:
        out = func(*_tensors(args), **_tensors(kwargs))
        return _values(out)

    return run


def _transform(jax_transform: Any, func: Any, *a: Any, **kw: Any) -> Any:
    inner = jax_transform(_over_values(func), *a, **kw)

    def run(*args: Any, **kwargs: Any) -> Any:
        return _tensors(inner(*_values(args), **_values(kwargs)))

    return run


def grad(func: Any, argnums: Any = 0, has_aux: bool = False) -> Any:
    """The gradient of a function of Tensors returning a scalar Tensor (PyTorch's
    ``torch.func.grad``).

    >>> import funcgrad.torch as torch
    >>> torch.func.grad(lambda x: (x ** 3).sum())(torch.tensor([1.0, 2.0]))
    tensor([ 3., 12.])
    """
    from funcgrad.transforms.vjp import grad as _grad  # noqa: PLC0415

    return _transform(_grad, func, argnums, has_aux)


def grad_and_value(func: Any, argnums: Any = 0, has_aux: bool = False) -> Any:
    """``(gradient, value)`` of a scalar function of Tensors."""
    from funcgrad.transforms.vjp import value_and_grad  # noqa: PLC0415

    vg = _transform(value_and_grad, func, argnums, has_aux)

    def run(*args: Any, **kwargs: Any) -> Any:
        value, g = vg(*args, **kwargs)
        return g, value

    return run


def vjp(func: Any, *primals: Any, has_aux: bool = False) -> Any:
    """``(func(*primals), vjp_fn)``: ``vjp_fn(cotangent)`` gives one Tensor per primal."""
    from funcgrad.transforms.vjp import vjp as _vjp  # noqa: PLC0415

    out = _vjp(_over_values(func), *_values(primals), has_aux=has_aux)
    fn = out[1]

    def vjp_fn(ct: Any) -> Any:
        return _tensors(fn(_values(ct)))

    return (_tensors(out[0]), vjp_fn, *(_tensors(out[2:])))


def jvp(func: Any, primals: Any, tangents: Any, *, has_aux: bool = False) -> Any:
    """``(func(*primals), J @ tangents)`` for Tensors."""
    from funcgrad.transforms.jvp import jvp as _jvp  # noqa: PLC0415

    return _tensors(_jvp(_over_values(func), _values(tuple(primals)),
                         _values(tuple(tangents)), has_aux=has_aux))


def jacrev(func: Any, argnums: Any = 0, *, has_aux: bool = False) -> Any:
    """The Jacobian by reverse mode."""
    from funcgrad.transforms.jacobians import jacrev as _jacrev  # noqa: PLC0415

    return _transform(_jacrev, func, argnums, has_aux=has_aux)


def jacfwd(func: Any, argnums: Any = 0, has_aux: bool = False) -> Any:
    """The Jacobian by forward mode."""
    from funcgrad.transforms.jacobians import jacfwd as _jacfwd  # noqa: PLC0415

    return _transform(_jacfwd, func, argnums, has_aux=has_aux)


def hessian(func: Any, argnums: Any = 0) -> Any:
    """The Hessian (forward over reverse)."""
    from funcgrad.transforms.jacobians import hessian as _hessian  # noqa: PLC0415

    return _transform(_hessian, func, argnums)


def vmap(func: Any, in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Any:
    """``func`` mapped over a batch axis of its Tensor arguments (``in_dims``).

    >>> import funcgrad.torch as torch
    >>> torch.func.vmap(lambda x: x.sum())(torch.ones(3, 2))
    tensor([2., 2., 2.])
    """
    from funcgrad.transforms.vmap import vmap as _vmap  # noqa: PLC0415

    return _transform(_vmap, func, in_dims, out_dims)
