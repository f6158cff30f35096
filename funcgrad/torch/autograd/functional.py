"""``torch.autograd.functional``: ``vjp``, ``jvp``, ``jacobian``, ``hessian``, ``vhp``,
``hvp`` over Tensor functions, built on ``autograd.grad`` as PyTorch builds them (``jvp``
and ``hvp`` by the double-backward trick).

>>> import funcgrad.torch as torch
>>> from funcgrad.torch.autograd.functional import jacobian, hessian
>>> x = torch.tensor([1.0, 2.0])
>>> jacobian(lambda t: t ** 2, x)
tensor([[2., 0.],
        [0., 4.]])
>>> hessian(lambda t: (t ** 3).sum(), x)
tensor([[ 6.,  0.],
        [ 0., 12.]])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from funcgrad.torch._grad_mode import enable_grad
from funcgrad.torch._tensor import Tensor

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]


def _tup(x: Any) -> tuple[bool, tuple[Any, ...]]:
    return (True, x) if isinstance(x, tuple) else (False, (x,))


def _prep(inputs: tuple[Any, ...], create_graph: bool) -> tuple[Tensor, ...]:
    # Fresh leaves (or, with create_graph, views that keep the caller's graph).
    out = []
    for t in inputs:
        if not isinstance(t, Tensor):
            raise TypeError("The inputs given to functional must be either a Tensor or a "
                            f"tuple of Tensors but the value at index 0 has type {type(t)}.")
        out.append(t.view_as(t) if create_graph and t.requires_grad
                   else t.detach().requires_grad_(True))
    return tuple(out)


def _grads(outputs: tuple[Tensor, ...], inputs: tuple[Tensor, ...], v: tuple[Any, ...],
           create_graph: bool) -> tuple[Tensor, ...]:
    from funcgrad.torch._creation import zeros_like  # noqa: PLC0415
    from funcgrad.torch.autograd import grad  # noqa: PLC0415

    pairs = [(o, g) for o, g in zip(outputs, v) if o.requires_grad]
    if not pairs:
        return tuple(zeros_like(i) for i in inputs)
    got = grad([o for o, _ in pairs], list(inputs), grad_outputs=[g for _, g in pairs],
               retain_graph=True, create_graph=create_graph, allow_unused=True)
    return tuple(zeros_like(i) if g is None else g for g, i in zip(got, inputs))


def _detach(ts: tuple[Any, ...], create_graph: bool) -> tuple[Any, ...]:
    return ts if create_graph else tuple(t.detach() if isinstance(t, Tensor) else t for t in ts)


def _out(is_tuple: bool, ts: tuple[Any, ...]) -> Any:
    return ts if is_tuple else ts[0]


def vjp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), v^T J)``; ``v`` may be omitted for a single-element output."""
    from funcgrad.torch._creation import ones_like  # noqa: PLC0415

    in_tuple, ins = _tup(inputs)
    with enable_grad():
        xs = _prep(ins, create_graph)
        out_tuple, outs = _tup(func(*xs))
        if v is None:
            if any(o.numel() != 1 for o in outs):
                raise RuntimeError("The vector v can only be None if the user-provided function "
                                   "returns a single Tensor with a single element.")
            vs = tuple(ones_like(o) for o in outs)
        else:
            vs = _tup(v)[1]
        res = _grads(outs, xs, vs, create_graph)
    return _out(out_tuple, _detach(outs, create_graph)), _out(in_tuple,
                                                              _detach(res, create_graph))


def jvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), J v)``, by differentiating a vjp with respect to its cotangent."""
    from funcgrad.torch._creation import ones_like, zeros_like  # noqa: PLC0415

    in_tuple, ins = _tup(inputs)
    with enable_grad():
        xs = _prep(ins, create_graph)
        out_tuple, outs = _tup(func(*xs))
        vs = _tup(v)[1] if v is not None else tuple(ones_like(x) for x in xs)
        dummies = tuple(zeros_like(o).requires_grad_(True) for o in outs)
        g = _grads(outs, xs, dummies, create_graph=True)
        res = _grads(g, dummies, vs, create_graph)
    return _out(out_tuple, _detach(outs, create_graph)), _out(out_tuple,
                                                              _detach(res, create_graph))


def jacobian(func: Callable[..., Any], inputs: Any, create_graph: bool = False,
             strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode") -> Any:
    """The Jacobian: for each output and input, a tensor of shape ``out.shape +
    in.shape`` (nested tuples when there are several)."""
    from funcgrad.torch._creation import zeros_like  # noqa: PLC0415
    from funcgrad.torch._functions import stack  # noqa: PLC0415

    in_tuple, ins = _tup(inputs)
    with enable_grad():
        xs = _prep(ins, create_graph)
        out_tuple, outs = _tup(func(*xs))
        rows: list[tuple[Any, ...]] = []
        for o in outs:
            per_in: list[list[Tensor]] = [[] for _ in xs]
            flat = o.reshape(-1)
            for k in range(flat.numel()):
                seed = zeros_like(flat)
                seed[k] = 1.0
                gs = _grads((flat,), xs, (seed,), create_graph)
                for i, g in enumerate(gs):
                    per_in[i].append(g)
            blocks = tuple(
                (stack(per_in[i]) if per_in[i] else zeros_like(x).reshape(0, *x.shape))
                .reshape(*o.shape, *x.shape) for i, x in enumerate(xs))
            rows.append(_detach(blocks, create_graph))
    if out_tuple:
        return tuple(_out(in_tuple, r) for r in rows)
    return _out(in_tuple, rows[0])


def hessian(func: Callable[..., Any], inputs: Any, create_graph: bool = False,
            strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a scalar function: the Jacobian of its gradient."""
    in_tuple, ins = _tup(inputs)

    def gradient(*xs: Tensor) -> Any:
        out = func(*xs)
        if not isinstance(out, Tensor) or out.numel() != 1:
            raise RuntimeError("The function given to hessian should return a single Tensor "
                               "with a single element")
        return _out(in_tuple, _grads((out,), xs, (out.new_ones(()).reshape(out.shape),),
                                     create_graph=True))

    return jacobian(gradient, inputs, create_graph=create_graph)


def vhp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), v^T H)`` for a scalar function."""
    in_tuple, ins = _tup(inputs)
    with enable_grad():
        xs = _prep(ins, create_graph)
        out = func(*xs)
        g = _grads((out,), xs, (out.new_ones(()).reshape(out.shape),), create_graph=True)
        res = _grads(g, xs, _tup(v)[1], create_graph)
    return _detach((out,), create_graph)[0], _out(in_tuple, _detach(res, create_graph))


def hvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), H v)`` for a scalar function (the double-backward trick)."""
    from funcgrad.torch._creation import zeros_like  # noqa: PLC0415

    in_tuple, ins = _tup(inputs)
    with enable_grad():
        xs = _prep(ins, create_graph)
        out = func(*xs)
        g = _grads((out,), xs, (out.new_ones(()).reshape(out.shape),), create_graph=True)
        dummies = tuple(zeros_like(x).requires_grad_(True) for x in xs)
        gv = _grads(g, xs, dummies, create_graph=True)
        res = _grads(gv, dummies, _tup(v)[1], create_graph)
    return _detach((out,), create_graph)[0], _out(in_tuple, _detach(res, create_graph))
