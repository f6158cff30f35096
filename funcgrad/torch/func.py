"""The bridge between modules and the functional transforms, as ``torch.func``.

``params_of(model)`` takes a module's parameters out as a dict of arrays (a
pytree); ``functional_call(model, params, args)`` runs the module with those
values in place of its own. With arrays (or tracers) in, the call returns
arrays, so it composes with ``torch.grad``, ``torch.vmap``, ``torch.jit`` and
``torch.make_jaxpr``; with Tensors in, it returns Tensors and ``backward`` works
through it.

>>> import numpy as np
>>> import funcgrad.torch as torch
>>> import funcgrad.torch.nn as nn
>>> from funcgrad.func import functional_call, params_of
>>> model = nn.Linear(3, 1)
>>> params = params_of(model)
>>> def loss(p, x):
...     return torch.numpy.sum(functional_call(model, p, (x,)) ** 2)
>>> grads = torch.grad(loss)(params, np.ones((4, 3), np.float32))
>>> sorted(grads), grads["weight"].shape
(['bias', 'weight'], (1, 3))
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

__all__ = ["buffers_of", "functional_call", "params_of"]


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
    >>> from funcgrad.func import params_of
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
    >>> from funcgrad.func import functional_call
    >>> lin = nn.Linear(2, 1)
    >>> functional_call(lin, {"weight": np.ones((1, 2)), "bias": np.zeros(1)}, np.ones((1, 2)))
    array([[2.]])
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
        return _map_leaves(lambda x: x._data if isinstance(x, Tensor) else x, out)
    finally:
        for owner, local, store, original in reversed(saved):
            owner.__dict__[store][local] = original
