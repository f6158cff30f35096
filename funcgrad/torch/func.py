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

import contextlib
import weakref
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from funcgrad.core import Tracer
from funcgrad.torch import _func_checks as C
from funcgrad.torch._dict_order import record_orders, reorder
from funcgrad.torch._dtypes import to_torch
from funcgrad.torch._dual import check_tangent
from funcgrad.torch._engine_values import map_leaves as _map_leaves
from funcgrad.torch._engine_values import tensors as _tensors
from funcgrad.torch._engine_values import values as _values
from funcgrad.torch._grad_mode import no_grad
from funcgrad.torch._tensor import CLOSURE_SINKS, Tensor
from funcgrad.torch.autograd.function import VMAP_RANDOMNESS
from funcgrad.torch.nn.module import Module
from funcgrad.tree_util import tree_flatten, tree_unflatten

__all__ = ["buffers_of", "functional_call", "grad", "grad_and_value", "hessian", "jacfwd",
           "jacrev", "jvp", "params_of", "vjp", "vmap"]


def _is_array(x: Any) -> bool:
    return isinstance(x, (np.ndarray, Tracer)) or type(x).__module__.startswith("cupy")


def _has_tensor(tree: Any) -> bool:
    leaves, _ = tree_flatten(tree, is_leaf=lambda x: isinstance(x, Tensor))
    return any(isinstance(x, Tensor) for x in leaves)


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


def _owner(module: Module, name: str) -> tuple[Module, str, str | None]:
    """(module owning ``name``, its local name, "_parameters" or "_buffers", or None for
    a plain attribute: PyTorch sets an unknown name as one for the call, and a missing
    submodule is its AttributeError)."""
    path, _, local = name.rpartition(".")
    owner = module.get_submodule(path)
    for store in ("_parameters", "_buffers"):
        if local in owner.__dict__[store]:
            return owner, local, store
    current = owner.__dict__.get(local, _ABSENT)
    if current is not _ABSENT and current is not None and not isinstance(current, Tensor):
        raise TypeError(f"attribute `{local}`: {current} is not an instance of torch.Tensor")
    return owner, local, None


_ABSENT = object()


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
    repeated: list[str] = []
    for d in dicts:
        for k, v in d.items():
            if k in values and k not in repeated:
                repeated.append(k)
            values[k] = v
    if repeated:
        raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                         "functional call is ambiguous")
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
            if len(given) > 1 and len({id(values[n]) for n in given}) != 1:
                # Different values for names of one shared tensor: PyTorch refuses to guess.
                raise ValueError(f"functional_call got multiple values for keys "
                                 f"{sorted(group)}, which are tied. Consider using "
                                 "tie_weights=False")
            for n in group:
                if n not in values and given:
                    values[n] = values[given[0]]
    if strict:
        valid = set(_names(module))
        msgs = []
        unexpected = sorted(set(values) - valid)
        missing = sorted(valid - set(values))
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(
                module._get_name(), "\n\t".join(msgs)))

    array_mode = not _has_tensor((values, args, kwargs))
    slots = [(*_owner(module, name), value) for name, value in values.items()]
    saved = [(owner, local, store, (owner.__dict__[store] if store else owner.__dict__).get(
        local, _ABSENT)) for owner, local, store, _ in slots]
    try:
        for owner, local, store, value in slots:
            (owner.__dict__[store] if store else owner.__dict__)[local] = \
                value if isinstance(value, Tensor) else Tensor(
                    value if _is_array(value) else np.asarray(value))
        if not array_mode:
            return module(*args, **kwargs)
        wrap = lambda x: Tensor(x) if _is_array(x) else x
        with no_grad():
            out = module(*_map_leaves(wrap, args), **_map_leaves(wrap, kwargs))
        return _map_leaves(lambda x: _values(x) if isinstance(x, Tensor) else x, out)
    finally:
        for owner, local, store, original in reversed(saved):
            where = owner.__dict__[store] if store else owner.__dict__
            if original is _ABSENT:
                del where[local]
            else:
                where[local] = original


# ------------------------------------------------------------- the transforms


def _torch_grads(tree: Any) -> Any:
    """The engine's gradients (or cotangents) in a tree as PyTorch's, and back: complex
    leaves conjugated (see ``_graph.torch_ct``), others as they are."""
    from funcgrad.array import Array  # noqa: PLC0415
    from funcgrad.torch._graph import torch_ct  # noqa: PLC0415

    return _map_leaves(lambda x: torch_ct(x) if isinstance(x, (Array, Tracer)) else x, tree)


def _torch_grad(jax_transform: Any) -> Any:
    """The engine's ``grad`` or ``value_and_grad`` with PyTorch's meaning: gradients of
    complex inputs conjugated, a complex output refused with PyTorch's error, and an
    integer or boolean output (whose derivative PyTorch takes as zero) giving zeros."""

    def transform(fun: Any, argnums: Any = 0, has_aux: bool = False) -> Any:
        def split(*args: Any, **kwargs: Any) -> Any:
            out = fun(*args, **kwargs)
            value = out[0] if has_aux else out
            dtype = getattr(value, "dtype", None)
            loss = value
            if dtype is not None:
                kind = np.dtype(dtype).kind
                if kind == "c":
                    raise RuntimeError("grad can be implicitly created only for real scalar "
                                       f"outputs but got {to_torch(dtype)}")
                if kind in "biu":
                    # A constant in its place: the engine's gradient of a constant is zeros
                    # of each input (the engine refuses integer outputs), and the value
                    # itself comes back through aux.
                    loss = np.zeros((), np.float32)
            return loss, out

        inner = jax_transform(split, argnums, has_aux=True)

        def run(*args: Any, **kwargs: Any) -> Any:
            if jax_transform.__name__ == "value_and_grad":
                (_, out), g = inner(*args, **kwargs)
                g = _torch_grads(g)
                return ((out[0], out[1]), g) if has_aux else (out, g)
            g, out = inner(*args, **kwargs)
            g = _torch_grads(g)
            return (g, out[1]) if has_aux else g

        return run

    transform.__name__ = jax_transform.__name__
    return transform


def _over_values(func: Any, kind: str = "grad", reverse: bool = False) -> Any:
    """``func`` of Tensors as a function of engine values (Tensors hold the tracers), run
    as a transform level of ``kind`` ("grad" or "vmap"); ``reverse`` (grad, vjp, jacrev):
    with grad mode on, and a no_grad inside respected (``_grad_mode.REVERSE_DEPTH``)."""
    import contextlib  # noqa: PLC0415
    import functools  # noqa: PLC0415

    from funcgrad.torch._grad_mode import (  # noqa: PLC0415
        EPOCH,
        FUNCTORCH_DEPTH,
        FUNCTORCH_LEVELS,
        REVERSE_DEPTH,
        enable_grad,
    )

    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> Any:
        FUNCTORCH_DEPTH[0] += 1
        REVERSE_DEPTH[0] += reverse
        EPOCH[0] += 1
        FUNCTORCH_LEVELS.append((kind, EPOCH[0]))
        try:
            with enable_grad() if reverse else contextlib.nullcontext():
                out = func(*_tensors(args), **_tensors(kwargs))
        finally:
            FUNCTORCH_DEPTH[0] -= 1
            REVERSE_DEPTH[0] -= reverse
            FUNCTORCH_LEVELS.pop()
        record_orders(out, run.orders)  # type: ignore[attr-defined]
        return _values(out)

    run.orders = {}  # type: ignore[attr-defined]
    return run


def _transform(jax_transform: Any, func: Any, *a: Any, reverse: bool = False,
               **kw: Any) -> Any:
    from funcgrad.torch._grad_mode import is_recording  # noqa: PLC0415
    from funcgrad.torch._graph import X64  # noqa: PLC0415
    from funcgrad.torch._tensor import apply_op  # noqa: PLC0415

    staged = _over_values(func, "vmap" if getattr(jax_transform, "__name__", "") == "vmap"
                          else "grad", reverse)
    inner = jax_transform(staged, *a, **kw)
    # The node of the outer autograd graph a transformed call records ("VmapBackward0").
    op = {"vmap": "Vmap", "grad": "Grad", "value_and_grad": "GradAndValue"}.get(
        getattr(jax_transform, "__name__", ""), "FuncTransform")

    def run(*args: Any, **kwargs: Any) -> Any:
        orders: dict[frozenset[Any], list[Any]] = {}
        record_orders((args, kwargs), orders)
        staged.orders = orders
        leaves, spec = tree_flatten((args, kwargs), is_leaf=lambda x: isinstance(x, Tensor))
        tpos = [i for i, x in enumerate(leaves) if isinstance(x, Tensor)]
        def recorded(closures: list[Tensor]) -> Any:
            # The transformed call is one operation of the outer graph (as PyTorch's
            # transforms compose with autograd), its derivative the engine's derivative of
            # the transformed program, with respect to the arguments and to the tensors
            # the function closes over (a module's parameters), which it sees as inputs.
            def impl(*vals: Any) -> Any:
                now = list(leaves)
                for i, v in zip(tpos, vals):
                    now[i] = v
                call_args, call_kwargs = tree_unflatten(spec, now)
                with _closures_as(closures, vals[len(tpos):]):
                    return inner(*_values(call_args), **_values(call_kwargs))

            return reorder(apply_op(op, impl, *(leaves[i] for i in tpos), *closures), orders)

        def plain() -> Any:
            # float64 Tensors stay float64 (the JAX face's x64 switch is not this face's)
            with X64:
                return reorder(_tensors(inner(*_values(args), **_values(kwargs))), orders)

        if not is_recording():
            return plain()
        # The tensors closed over last time are taken as inputs at once (a training loop
        # calls the same transform each step); a run that meets others runs again.
        guess = [t for t in (r() for r in last_closures) if t is not None and t._requires_grad]
        found: list[Tensor] = []
        CLOSURE_SINKS.append(found)
        try:
            first = recorded(guess) if guess or any(leaves[i]._requires_grad for i in tpos) \
                else plain()
        finally:
            CLOSURE_SINKS.pop()
        closures = list({id(t): t for t in (*guess, *found) if t._requires_grad}.values())
        last_closures[:] = [weakref.ref(t) for t in closures]
        return first if len(closures) == len(guess) else recorded(closures)

    last_closures: list[weakref.ref[Tensor]] = []

    return run


def _scalar_output(func: Any, has_aux: bool) -> Any:
    """``func``, raising PyTorch's error when its output (its first, with ``has_aux``) is
    not a scalar Tensor."""
    import functools  # noqa: PLC0415

    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> Any:
        out = func(*args, **kwargs)
        value = out[0] if has_aux and isinstance(out, tuple) else out
        if isinstance(value, Tensor) and value.dim() != 0:
            raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a "
                               f"scalar Tensor, got tensor with {value.dim()} dims. Maybe you "
                               "wanted to use the vjp or jacrev APIs instead?")
        return out

    return run


@contextlib.contextmanager
def _closures_as(closures: list[Tensor], values: Sequence[Any]) -> Iterator[None]:
    """The closed-over tensors hold the transformed call's traced inputs while it runs (as
    functional_call swaps a module's parameters), then get their own data back."""
    kept = [(t._data, t._requires_grad) for t in closures]
    try:
        for t, v in zip(closures, values, strict=True):
            t._data, t._requires_grad = v, False
        yield
    finally:
        for t, (d, r) in zip(closures, kept, strict=True):
            t._data, t._requires_grad = d, r


def grad(func: Any, argnums: Any = 0, has_aux: bool = False) -> Any:
    """The gradient of a function of Tensors returning a scalar Tensor (PyTorch's
    ``torch.func.grad``).

    >>> import funcgrad.torch as torch
    >>> torch.func.grad(lambda x: (x ** 3).sum())(torch.tensor([1.0, 2.0]))
    tensor([ 3., 12.])
    """
    from funcgrad.transforms.vjp import grad as _grad  # noqa: PLC0415

    return _named(_checked_call(
        _transform(_torch_grad(_grad),
                   _scalar_output(C.checked_output(func, C.GRAD, has_aux), has_aux),
                   argnums, has_aux, reverse=True),
        lambda args: C.check_reverse_inputs(args, argnums)), func)


def _named(run: Any, func: Any) -> Any:
    """``run`` under ``func``'s name and docstring, ``__wrapped__`` pointing at it (the
    transforms' ``functools.wraps``, so ``vmap(grad(f))``'s errors name ``f``)."""
    import functools  # noqa: PLC0415

    return functools.update_wrapper(run, func, updated=())


def _checked_call(run: Any, check: Any) -> Any:
    """``run``, with PyTorch's checks of the positional arguments first."""
    import functools  # noqa: PLC0415

    @functools.wraps(run)
    def call(*args: Any, **kwargs: Any) -> Any:
        check(args)
        return run(*args, **kwargs)

    return call


def grad_and_value(func: Any, argnums: Any = 0, has_aux: bool = False) -> Any:
    """``(gradient, value)`` of a scalar function of Tensors."""
    from funcgrad.transforms.vjp import value_and_grad  # noqa: PLC0415

    vg = _transform(_torch_grad(value_and_grad),
                    _scalar_output(C.checked_output(func, C.GRAD, has_aux), has_aux),
                    argnums, has_aux, reverse=True)

    def run(*args: Any, **kwargs: Any) -> Any:
        C.check_reverse_inputs(args, argnums)
        value, g = vg(*args, **kwargs)
        return g, value

    return _named(run, func)


def vjp(func: Any, *primals: Any, has_aux: bool = False) -> Any:
    """``(func(*primals), vjp_fn)``: ``vjp_fn(cotangent)`` gives one Tensor per primal.

    Under autograd, the outputs and ``vjp_fn``'s results are operations of the outer graph
    (as PyTorch's): gradients reach the primals and the tensors ``func`` closes over (a
    module's parameters) that require grad."""
    from funcgrad.torch._grad_mode import is_recording  # noqa: PLC0415
    from funcgrad.torch._graph import X64  # noqa: PLC0415
    from funcgrad.transforms.vjp import vjp as _vjp  # noqa: PLC0415

    C.check_reverse_inputs(primals, None)
    checked = C.checked_output(func, C.VJP, has_aux)
    found: list[Tensor] = []
    CLOSURE_SINKS.append(found)
    staged = _over_values(checked, reverse=True)
    record_orders(primals, staged.orders)
    try:
        with X64:
            out = _vjp(staged, *_values(primals), has_aux=has_aux)
    finally:
        CLOSURE_SINKS.pop()
    fn = out[1]
    # the engine's pytrees sort dict keys: outputs and gradients in the user's key orders
    outs = reorder(_tensors(out[0]), staged.orders)

    def vjp_fn(ct: Any, retain_graph: bool = True, create_graph: bool | None = None) -> Any:
        # PyTorch's cotangents in and gradients out (_graph.torch_ct)
        ct = C.cotangents(ct, outs)
        with X64:
            return reorder(_tensors(_torch_grads(fn(_torch_grads(_values(ct))))),
                           staged.orders)

    if not is_recording() or not (found or any(
            isinstance(t, Tensor) and t._requires_grad for t in C.leaves(primals))):
        return (outs, vjp_fn, *reorder(_tensors(out[2:]), staged.orders))

    # The outer graph: the outputs and vjp_fn's results recorded as transformed calls.
    def as_call(staged: Any) -> Any:
        def run(*prim: Any) -> Any:
            # traced (as the transform traces it), so the tensors func closes over are seen
            r = _vjp(staged, *prim, has_aux=has_aux)
            return (r[0], r[2]) if has_aux else r[0]
        return run

    def pulled(staged: Any) -> Any:
        def run(prim: Any, ct: Any) -> Any:
            return _torch_grads(_vjp(staged, *prim, has_aux=has_aux)[1](_torch_grads(ct)))
        return run

    with X64:
        value = _transform(as_call, checked, reverse=True)(*primals)

    def recorded_vjp_fn(ct: Any, retain_graph: bool = True,
                        create_graph: bool | None = None) -> Any:
        ct = C.cotangents(ct, value[0] if has_aux else value)
        with X64:
            return _transform(pulled, checked, reverse=True)(tuple(primals), ct)

    if has_aux:
        return value[0], recorded_vjp_fn, value[1]
    return value, recorded_vjp_fn


def jvp(func: Any, primals: Any, tangents: Any, *, has_aux: bool = False) -> Any:
    """``(func(*primals), J @ tangents)`` for Tensors."""
    from funcgrad.torch._graph import X64  # noqa: PLC0415
    from funcgrad.transforms.jvp import jvp_values as _jvp  # noqa: PLC0415

    if not isinstance(primals, tuple):
        raise RuntimeError(f"{C.JVP}: Expected primals to be a tuple. E.g. it should be valid "
                           "to call f(*primals).")
    if C.treespec(primals) != C.treespec(tangents):
        raise RuntimeError(
            f"{C.JVP}: Expected primals and tangents to have the same python structure. For "
            "example, if primals is a tuple of 3 tensors, tangents also must be. Got primals "
            f"with structure {C.treespec(primals)} and tangents with structure "
            f"{C.treespec(tangents)}")
    C.check_forward_inputs(primals, None, jacobian=False)
    for t in C.leaves(tangents):
        if not isinstance(t, Tensor) and not C._arraylike(t):
            raise RuntimeError(f"{C.JVP}: Expected tangents to only contain Tensors, got "
                               f"{type(t)}")
    for p, t in zip(C.leaves(primals), C.leaves(tangents)):
        check_tangent(p, t, dtype=isinstance(t, Tensor))
    tangents, wide = _tangents_as_primals(primals, tangents)

    # One operation of the outer autograd graph (as PyTorch's jvp composes with autograd):
    # gradients reach the primals, the tangents and the tensors func closes over.
    def pushed(staged: Any) -> Any:
        def run(prim: Any, tang: Any) -> Any:
            return _jvp(staged, prim, tang, has_aux=has_aux)
        return run

    with X64:
        out = _transform(pushed, C.checked_output(func, C.JVP, has_aux))(
            tuple(primals), tuple(tangents))
    if wide is None:
        return out
    return (out[0], _map_leaves(lambda t: _widened(t, wide), out[1]), *out[2:])


def _tangents_as_primals(primals: Any, tangents: Any) -> tuple[Any, Any]:
    """The tangents in their primals' dtypes, and the real dtype of the widest tangent so
    cast (None when none was).

    PyTorch accepts a tangent of another floating dtype than its primal (a float64 tangent
    of a float32 tensor) and carries it through each operation's formula in its own dtype;
    the engine's tangents have their primals' dtypes. The tangent is computed in the
    primal's dtype and the results widened to what PyTorch's promotion gives. A complex
    tangent of a real primal stays refused (PyTorch keeps or drops its imaginary part
    depending on each operation's formula)."""
    from funcgrad.torch._dtypes import promote_types  # noqa: PLC0415

    flat_p, _ = tree_flatten(primals, is_leaf=lambda x: isinstance(x, Tensor))
    flat_t, spec = tree_flatten(tangents, is_leaf=lambda x: isinstance(x, Tensor))
    wide = None
    out = []
    for p, t in zip(flat_p, flat_t, strict=True):
        if isinstance(p, Tensor) and isinstance(t, Tensor) and t.dtype != p.dtype \
                and (p.dtype.is_floating_point or p.dtype.is_complex) \
                and (t.dtype.is_floating_point or (t.dtype.is_complex and p.dtype.is_complex)):
            real = t.dtype.to_real() if t.dtype.is_complex else t.dtype
            wide = real if wide is None else promote_types(wide, real)
            t = t.to(p.dtype)
        out.append(t)
    return tree_unflatten(spec, out), wide


def _widened(t: Any, wide: Any) -> Any:
    from funcgrad.torch._dtypes import promote_types  # noqa: PLC0415

    if not isinstance(t, Tensor) or not (t.dtype.is_floating_point or t.dtype.is_complex):
        return t
    target = promote_types(t.dtype, wide)
    return t if target == t.dtype else t.to(target)


def jacrev(func: Any, argnums: Any = 0, *, has_aux: bool = False,
           chunk_size: int | None = None) -> Any:
    """The Jacobian by reverse mode. ``chunk_size`` bounds how many rows PyTorch computes
    at once (a memory setting): it is checked as PyTorch checks it, and the rows are computed
    together, with the same values."""
    from funcgrad.transforms.jacobians import jacrev as _jacrev  # noqa: PLC0415

    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    def check(args: tuple[Any, ...]) -> None:
        C.check_real("jacrev", args, is_input=True)
        C.check_reverse_inputs(args, argnums)

    return _named(_checked_call(_transform(
        _jacrev, C.checked_output(func, C.VJP, has_aux, "jacrev"), argnums, has_aux=has_aux,
        reverse=True),
        check), func)


def jacfwd(func: Any, argnums: Any = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Any:
    """The Jacobian by forward mode (a vmap of JVPs: ``randomness`` as ``vmap``'s).

    >>> import funcgrad.torch as torch
    >>> torch.func.jacfwd(lambda x: 2 * x)(torch.ones(2))
    tensor([[2., 0.],
            [0., 2.]])
    """
    from funcgrad.transforms.jacobians import jacfwd as _jacfwd  # noqa: PLC0415

    _check_randomness(randomness)

    def check(args: tuple[Any, ...]) -> None:
        C.check_real("jacfwd", args, is_input=True)
        C.check_forward_inputs(args, argnums, jacobian=True)

    return _named(_checked_call(_transform(
        _jacfwd, _with_randomness(C.checked_output(func, C.JVP, has_aux, "jacfwd"), randomness),
        argnums, has_aux=has_aux), check), func)


def hessian(func: Any, argnums: Any = 0) -> Any:
    """The Hessian (forward over reverse)."""
    from funcgrad.transforms.jacobians import hessian as _hessian  # noqa: PLC0415

    def check(args: tuple[Any, ...]) -> None:
        # PyTorch's hessian is jacfwd(jacrev(func)): jacfwd's checks come first.
        C.check_real("jacfwd", args, is_input=True)
        C.check_forward_inputs(args, argnums, jacobian=True)

    # (PyTorch's is jacfwd(jacrev(func)): its __wrapped__ is jacrev's function)
    return _named(_checked_call(_transform(
        _hessian, C.checked_output(func, C.VJP, False, "jacrev"), argnums), check),
        _named(lambda *a, **k: func(*a, **k), func))


_RANDOM_IN_ERROR_MODE = (
    "vmap: called random operation while in randomness error mode. Please either use the "
    "'same' or 'different' randomness flags on vmap or perform the randomness operation out "
    "of vmap")


def _check_randomness(randomness: str) -> None:
    if randomness not in ("error", "different", "same"):
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")


def _with_randomness(func: Any, randomness: str) -> Any:
    """``func`` with its random draws handled as PyTorch's vmap ``randomness``: "error"
    refuses them, "same" draws once for the whole batch (a plain draw, broadcast), and
    "different" draws once per batch element and stacks the draws along this vmap's axis."""
    import functools  # noqa: PLC0415

    if randomness == "same":
        @functools.wraps(func)
        def same(*args: Any, **kwargs: Any) -> Any:
            VMAP_RANDOMNESS.append(randomness)
            try:
                return func(*args, **kwargs)
            finally:
                VMAP_RANDOMNESS.pop()

        return same

    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> Any:
        from funcgrad.core import current_trace  # noqa: PLC0415
        from funcgrad.torch import _draws  # noqa: PLC0415

        here = current_trace()
        outer = _draws._now.sink

        def draw_each(draw: _draws.Draw) -> Any:
            if randomness == "error":
                raise RuntimeError(_RANDOM_IN_ERROR_MODE)
            return _draw_per_element(here, draw, outer)

        draw_each.passes_state = True  # type: ignore[attr-defined]
        draw_each.outer = outer  # type: ignore[attr-defined]
        VMAP_RANDOMNESS.append(randomness)
        try:
            with _draws.recording(draw_each):
                return func(*args, **kwargs)
        finally:
            VMAP_RANDOMNESS.pop()

    return run


def _draw_per_element(here: Any, draw: Any, outer: Any) -> Any:
    """One draw per element of the innermost vmap at or above ``here``, stacked as a value
    batched along that vmap's axis (each draw through the enclosing recorder, if any: an
    outer vmap's, or torch.compile's)."""
    import funcgrad.numpy as fnp  # noqa: PLC0415
    from funcgrad.core import set_current_trace  # noqa: PLC0415
    from funcgrad.transforms.vmap import BatchTrace, BatchTracer  # noqa: PLC0415

    trace = here
    while trace is not None and not isinstance(trace, BatchTrace):
        trace = trace.parent
    if trace is None:  # not mapped after all (jacfwd of a one-element input)
        return draw.replay() if outer is None else outer(draw)
    draws = [draw.replay() if outer is None else outer(draw) for _ in range(trace.axis_size)]
    assert trace.parent is not None  # a vmap always runs inside another trace
    with set_current_trace(trace.parent):
        stacked = fnp.stack([fnp.asarray(d) for d in draws])
    return BatchTracer(trace, stacked, 0)


def _only_tensors(func: Any, out_dims: Any) -> Any:
    """``func``, raising PyTorch's ValueError when a mapped output is not a Tensor."""
    import functools  # noqa: PLC0415

    name = getattr(func, "__name__", repr(func))

    def check(out: Any, dims: Any) -> None:
        if dims is None:
            return
        if isinstance(out, (tuple, list)) and isinstance(dims, (tuple, list)) and \
                len(out) == len(dims):
            for o, d in zip(out, dims):
                check(o, d)
            return
        for leaf in tree_flatten(out, is_leaf=lambda x: x is None or isinstance(x, Tensor))[0]:
            if not isinstance(leaf, Tensor):
                raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got "
                                 f"type {type(leaf)}. Did you mean to set out_dims= to None "
                                 "for output?")
            nd = leaf.dim() + 1  # the batched output has the mapped axis too
            if isinstance(dims, int) and not -nd <= dims < nd:
                # PyTorch moves the batch axis to out_dims: its dimension error
                raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, "
                                 f"{nd - 1}], but got {dims})")

    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> Any:
        out = func(*args, **kwargs)
        check(out, out_dims)
        return out

    return run


def vmap(func: Any, in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Any:
    """``func`` mapped over a batch axis of its Tensor arguments (``in_dims``). Random
    operations inside follow ``randomness``: "error" (PyTorch's default) refuses them,
    "same" shares one draw across the batch, "different" draws for each element.

    >>> import funcgrad.torch as torch
    >>> torch.func.vmap(lambda x: x.sum())(torch.ones(3, 2))
    tensor([2., 2., 2.])
    """
    from funcgrad.transforms.vmap import _broadcast_prefix  # noqa: PLC0415
    from funcgrad.transforms.vmap import vmap as _vmap  # noqa: PLC0415

    _check_randomness(randomness)
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    user_func = func
    func = _with_randomness(_only_tensors(func, out_dims), randomness)
    plain = _transform(_vmap, func, in_dims, out_dims)

    def run(*args: Any, **kwargs: Any) -> Any:
        from funcgrad.errors import ShapeError  # noqa: PLC0415

        try:
            return mapped(*args, **kwargs)
        except ShapeError as e:
            if not str(e).startswith("vmap out_axes=None for an output that depends"):
                raise
            name = getattr(user_func, "__name__", repr(user_func))
            raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor "
                             "when out_dim is None") from None

    def mapped(*args: Any, **kwargs: Any) -> Any:
        C.check_vmap(user_func, in_dims, out_dims, args)
        if kwargs:
            # PyTorch passes keyword arguments to each call as they are, unmapped.
            return _transform(_vmap, lambda *a: func(*a, **kwargs), in_dims, out_dims)(*args)
        leaves, _ = tree_flatten(args, is_leaf=lambda x: isinstance(x, Tensor))
        # Arguments whose in-place updates come back (those that require grad are outputs
        # of the recorded call's graph, and are not written in place).
        tpos = [i for i, x in enumerate(leaves) if isinstance(x, Tensor) and
                not x._requires_grad]
        if not tpos:
            return plain(*args)
        try:  # the in-dim of each argument leaf (the mapping's own errors come from plain)
            dims = [d for spec, a in zip(in_dims, args)
                    for d in _broadcast_prefix(spec, a, "in_dims")] \
                if isinstance(in_dims, (tuple, list)) else \
                _broadcast_prefix(in_dims, args, "in_dims")
        except Exception:  # noqa: BLE001 - a bad in_dims: the mapped call reports it
            return plain(*args)
        changed: list[int] = []

        def with_writes(*targs: Any) -> Any:
            # The arguments' in-place updates come back as outputs in their own layout, as
            # PyTorch's vmap writes them into the caller's tensors.
            inner_leaves = tree_flatten(targs, is_leaf=lambda x: isinstance(x, Tensor))[0]
            before = [inner_leaves[i]._data for i in tpos]
            out = func(*targs)
            changed[:] = [k for k, i in enumerate(tpos) if inner_leaves[i]._data is not before[k]]
            return out, [inner_leaves[i] for i in tpos]

        from funcgrad.errors import ShapeError  # noqa: PLC0415

        try:
            out, updated = _transform(_vmap, with_writes, in_dims,
                                      (out_dims, [dims[i] for i in tpos]))(*args)
        except ShapeError as e:
            unbatched = [tpos[k] for k in changed if dims[tpos[k]] is None]
            if not unbatched:
                raise
            # A per-example value written into an argument that is not mapped (PyTorch's
            # in-place shape error).
            t = leaves[unbatched[0]]
            size = next(x.shape[d] for x, d in zip(leaves, dims)
                        if isinstance(x, Tensor) and d is not None)
            raise RuntimeError(f"output with shape {list(t.shape)} doesn't match the "
                               f"broadcast shape {[size, *t.shape]}") from e
        # Written outside the graph: the recorded call marks every output as depending on
        # the closed-over parameters, but these updates (a BatchNorm's running statistics,
        # made under no_grad) do not require grad in PyTorch.
        with no_grad():
            for k in changed:
                leaves[tpos[k]].copy_(updated[k])
        return out

    return _named(run, user_func)


def linearize(func: Any, *primals: Any) -> tuple[Any, Any]:
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` is the Jacobian-vector product at
    ``primals``, its linear part staged once by the engine's ``linearize``.

    As in PyTorch, ``func`` runs twice: once as given (so the output is what ``func``
    returns eagerly) and once traced for the linear part. Tangents must have the primals'
    structure, shapes, devices and dtypes.

    >>> import funcgrad.torch as torch
    >>> out, jvp_fn = torch.func.linearize(torch.sin, torch.zeros(3))
    >>> jvp_fn(torch.ones(3))
    tensor([1., 1., 1.])
    """
    from funcgrad.torch._graph import X64  # noqa: PLC0415
    from funcgrad.transforms.jvp import linearize_values as _linearize  # noqa: PLC0415

    output = func(*primals)
    flat_primals, primals_spec = tree_flatten(primals, is_leaf=lambda x: isinstance(x, Tensor))
    metas = [(p.shape, p.device, p.dtype) for p in flat_primals]
    with X64:
        _, fn = _linearize(_over_values(func), *_values(primals))

    def jvp_fn(*tangents: Any) -> Any:
        flat, spec = tree_flatten(tangents, is_leaf=lambda x: isinstance(x, Tensor))
        if spec != primals_spec:
            raise RuntimeError(f"Expected the tangents {spec} to have the same argspec as the "
                               f"primals {primals_spec}")
        for idx, (t, (shape, device, dtype)) in enumerate(zip(flat, metas)):
            for what, have, want in (("shape", t.shape, shape), ("device", t.device, device),
                                     ("dtype", t.dtype, dtype)):
                if have != want:
                    raise RuntimeError(
                        f"tangent:{idx} with {what} {have} in flattened pytree doesn't match "
                        f"the {what} {want} of the corresponding primal.")
        with X64:
            return _tensors(fn(*_values(tangents)))

    return output, jvp_fn


_BAD_REMOVE = (
    "functionalize(f, remove='mutations'): received invalid argument for remove={}. Valid "
    "options are:\n"
    "     remove='mutations': all inplace and out= operators will be removed from the "
    "program, and replaced with their out-of-place equivalents.\n"
    "     remove='mutations_and_views': In addition to the above, all aliasing operators "
    "{{view}} will be replaced with their non-aliasing counterparts, {{view}}_copy.\n")


def functionalize(func: Any, *, remove: str = "mutations") -> Any:
    """``func`` with its in-place operations made functional: the same results, and correct
    under the other ``torch.func`` transforms even where ``func`` writes through views.

    funcgrad's traced programs are already functional, so what this adds is the aliasing
    PyTorch's functionalization keeps: inside the call, an in-place op on a view of a
    traced Tensor updates the view's base and the base's other views. Mutations of inputs
    reach the caller's Tensors; outputs are new Tensors (an input returned as is comes back
    as a copy). ``remove='mutations_and_views'`` also returns copies for outputs that would
    be views of inputs.

    >>> import funcgrad.torch as torch
    >>> def f(a):
    ...     b = a + 1
    ...     b.view(-1).mul_(2)  # writes into b
    ...     return b
    >>> torch.func.vmap(torch.func.functionalize(f))(torch.ones(2, 2))
    tensor([[4., 4.],
            [4., 4.]])
    """
    import functools  # noqa: PLC0415

    from funcgrad.torch._functionalize import Tracker, tracking  # noqa: PLC0415

    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(_BAD_REMOVE.format(remove))
    copy_views = remove == "mutations_and_views"

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        inputs = [x for x in tree_flatten((args, kwargs),
                                          is_leaf=lambda x: isinstance(x, Tensor))[0]
                  if isinstance(x, Tensor)]
        with tracking(Tracker()):
            out = func(*args, **kwargs)

        def fresh(x: Any) -> Any:
            if not isinstance(x, Tensor):
                return x
            if any(x is i for i in inputs) or (copy_views and any(
                    type(x._data) is np.ndarray and type(i._data) is np.ndarray
                    and np.shares_memory(x._data, i._data) for i in inputs)):
                return x.clone()
            return x

        return _map_leaves(fresh, out)

    return wrapped


def stack_module_state(models: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The parameters and buffers of same-class ``models`` stacked along a new first
    dimension, as two ``{name: Tensor}`` dicts (for ``functional_call`` under ``vmap``:
    model ensembling). Stacked parameters are new leaves that require grad.

    >>> import funcgrad.torch as torch
    >>> params, buffers = torch.func.stack_module_state([torch.nn.Linear(3, 2)] * 4)
    >>> params["weight"].shape, params["weight"].is_leaf, buffers
    (torch.Size([4, 2, 3]), True, {})
    """
    from funcgrad.torch._functions import stack  # noqa: PLC0415

    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(tensors: list[Any], name: str) -> Any:
        grads = [t.requires_grad for t in tensors]
        if any(grads) and not all(grads):
            raise RuntimeError(f"Expected {name} from each model to have the same "
                               ".requires_grad")
        result = stack(tensors)
        return result.detach().requires_grad_() if all(grads) else result

    all_params = [dict(m.named_parameters()) for m in models]
    all_buffers = [dict(m.named_buffers()) for m in models]
    return ({k: stacked([p[k] for p in all_params], k) for k in all_params[0]},
            {k: stacked([b[k] for b in all_buffers], k) for k in all_buffers[0]})


def replace_all_batch_norm_modules_(root: Module) -> Module:
    """Make every batch norm in ``root`` (``root`` included) stop tracking running
    statistics, in place: ``running_mean``, ``running_var`` and ``num_batches_tracked``
    become None and ``track_running_stats`` False, so they normalize by the batch's own
    statistics (what ``vmap`` over a model needs). Returns ``root``.

    >>> import funcgrad.torch as torch
    >>> bn = torch.func.replace_all_batch_norm_modules_(torch.nn.BatchNorm1d(3))
    >>> bn.running_mean, bn.track_running_stats
    (None, False)
    """
    from funcgrad.torch.nn.normalization import _BatchNorm  # noqa: PLC0415

    for m in (root, *root.modules()):
        if isinstance(m, _BatchNorm) and m.track_running_stats:
            m.running_mean = None
            m.running_var = None
            m.num_batches_tracked = None
            m.track_running_stats = False
    return root


def _unwrapped(value: Any) -> Any:
    """The value one transform level below ``value`` (None: not a transform's tracer)."""
    from funcgrad.core import PrimalTracer  # noqa: PLC0415
    from funcgrad.transforms.vmap import BatchTracer  # noqa: PLC0415

    if isinstance(value, BatchTracer):
        return value.val  # the batch dimension stays where it is, as in functorch
    if isinstance(value, PrimalTracer):
        return value.primal
    return None


def debug_unwrap(tensor: Any, *, recurse: bool = True) -> Any:
    """The Tensor underneath a Tensor traced by a ``torch.func`` transform (for debugging):
    under ``vmap`` it has the batch dimension, under ``grad``/``jvp`` it is the primal.
    ``recurse=False`` unwraps one transform level; an untraced Tensor comes back as is.

    >>> import funcgrad.torch as torch
    >>> torch.func.vmap(lambda x: torch.func.debug_unwrap(x).sum())(torch.ones(3, 2))
    tensor([6., 6., 6.])
    """
    from funcgrad.torch._graph import buffer_of  # noqa: PLC0415

    if not isinstance(tensor, Tensor):
        raise TypeError("is_functorch_wrapped_tensor(): incompatible function arguments. The "
                        "following argument types are supported:\n    1. (arg0: torch.Tensor) "
                        f"-> bool\n\nInvoked with: {tensor!r}")
    inner = _unwrapped(tensor._data)
    if inner is None:
        return tensor
    result = Tensor._from_data(buffer_of(inner))
    return debug_unwrap(result) if recurse else result


__all__ += ["debug_unwrap", "functionalize", "linearize", "replace_all_batch_norm_modules_",
            "stack_module_state"]

from funcgrad.torch._rearrange import rearrange  # noqa: E402 - after the transforms it sits with

__all__ += ["rearrange"]
