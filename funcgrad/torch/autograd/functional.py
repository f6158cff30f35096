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


_OUTPUTS = "outputs of the user-provided function"


def _as_tuple(x: Any, arg: str, fn: str) -> tuple[bool, tuple[Any, ...]]:
    """``_tup`` with PyTorch's type check of each element (its words and order)."""
    is_tuple, xs = _tup(x)
    for i, el in enumerate(xs):
        if not isinstance(el, Tensor):
            where = f"value at index {i}" if is_tuple else f"given {arg}"
            raise TypeError(f"The {arg} given to {fn} must be either a Tensor or a tuple of "
                            f"Tensors but the {where} has type {type(el)}.")
    return is_tuple, xs


def _vs(v: Any, other: tuple[Tensor, ...], other_tuple: bool, fn: str,
        none_message: str) -> tuple[Any, ...]:
    """``v`` as a tuple, checked against ``other`` as PyTorch's ``_validate_v`` checks it
    (``v=None`` only for one single-element ``other``: ones then)."""
    from funcgrad.torch._creation import ones_like  # noqa: PLC0415

    if v is None:
        if len(other) != 1 or other[0].numel() != 1:
            raise RuntimeError(none_message)
        return (ones_like(other[0]),)
    vs = _as_tuple(v, "v", fn)[1]
    if len(vs) != len(other):
        if other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but "
                               f"got {len(vs)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(vs, other)):
        if a.shape != b.shape:
            where = f"Entry {i} in " if other_tuple else ""
            raise RuntimeError(f"{where}v has invalid size: should be {b.shape} but got "
                               f"{a.shape}.")
    return vs


_NONE_IN = ("The vector v can only be None if the input to the user-provided function is a "
            "single Tensor with a single element.")


def _single(out: Any, fn: str) -> Tensor:
    """The one single-element Tensor a hessian/vhp/hvp function must return."""
    is_tuple, _ = _as_tuple(out, _OUTPUTS, fn)
    if is_tuple or not isinstance(out, Tensor):
        raise RuntimeError(f"The function given to {fn} should return a single Tensor")
    if out.numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn} should contain "
                           "a single element")
    return out


def _real_output(out: Tensor) -> None:
    """PyTorch differentiates each Jacobian row, and the output of hessian/vhp/hvp, with no
    gradient given: a complex output is refused as ``backward()`` of a complex scalar is."""
    if out.requires_grad and out.dtype.is_complex:
        raise RuntimeError("grad can be implicitly created only for real scalar outputs but "
                           f"got {out.dtype}")


def _prep(inputs: tuple[Any, ...], create_graph: bool) -> tuple[Tensor, ...]:
    # Fresh leaves (or, with create_graph, views that keep the caller's graph).
    out = []
    for t in inputs:
        out.append(t.view_as(t) if create_graph and t.requires_grad
                   else t.detach().requires_grad_(True))
    return tuple(out)


def _grads(outputs: tuple[Tensor, ...], inputs: tuple[Tensor, ...], v: tuple[Any, ...],
           create_graph: bool) -> tuple[Tensor, ...]:
    from funcgrad.torch._creation import zeros_like  # noqa: PLC0415

    got = _raw_grads(outputs, inputs, v, create_graph)
    return tuple(zeros_like(i) if g is None else g for g, i in zip(got, inputs))


def _raw_grads(outputs: tuple[Tensor, ...], inputs: tuple[Tensor, ...], v: tuple[Any, ...],
               create_graph: bool) -> tuple[Tensor | None, ...]:
    """``_grads`` with None for each input the outputs do not reach (strict mode's test)."""
    from funcgrad.torch.autograd import grad  # noqa: PLC0415

    pairs = [(o, g) for o, g in zip(outputs, v) if o.requires_grad]
    if not pairs:
        return tuple(None for _ in inputs)
    return tuple(grad([o for o, _ in pairs], list(inputs), grad_outputs=[g for _, g in pairs],
                      retain_graph=True, create_graph=create_graph, allow_unused=True))


def _strict_outputs(outs: tuple[Tensor, ...], strict: bool) -> None:
    """Strict mode's refusal of an output that does not depend on the inputs at all."""
    if not strict:
        return
    for i, o in enumerate(outs):
        if not o.requires_grad:
            raise RuntimeError(
                f"Output {i} of the user-provided function does not require gradients. The "
                "outputs must be computed in a differentiable manner from the input when "
                "running in strict mode.")


def _strict_reached(grads: tuple[Tensor | None, ...], message: str) -> None:
    """Strict mode's refusal of a gradient the outputs do not reach (``message`` names the
    position with ``{}``)."""
    for i, g in enumerate(grads):
        if g is None:
            raise RuntimeError(message.format(i))


def _detach(ts: tuple[Any, ...], create_graph: bool) -> tuple[Any, ...]:
    return ts if create_graph else tuple(t.detach() if isinstance(t, Tensor) else t for t in ts)


def _out(is_tuple: bool, ts: tuple[Any, ...]) -> Any:
    return ts if is_tuple else ts[0]


def vjp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), v^T J)``; ``v`` may be omitted for a single-element output."""

    in_tuple, ins = _as_tuple(inputs, "inputs", "vjp")
    with enable_grad():
        xs = _prep(ins, create_graph)
        out_tuple, outs = _as_tuple(func(*xs), _OUTPUTS, "vjp")
        vs = _vs(v, outs, out_tuple, "vjp", "The vector v can only be None if the "
                 "user-provided function returns a single Tensor with a single element.")
        if strict:
            _strict_outputs(outs, strict)
            _strict_reached(_raw_grads(outs, xs, vs, create_graph),
                            "The output of the user-provided function is independent of "
                            "input {}. This is not allowed in strict mode.")
        res = _grads(outs, xs, vs, create_graph)
    return _out(out_tuple, _detach(outs, create_graph)), _out(in_tuple,
                                                              _detach(res, create_graph))


def jvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), J v)``, by differentiating a vjp with respect to its cotangent."""
    from funcgrad.torch._creation import zeros_like  # noqa: PLC0415

    in_tuple, ins = _as_tuple(inputs, "inputs", "jvp")
    with enable_grad():
        xs = _prep(ins, create_graph)
        vs = _vs(v, xs, in_tuple, "jvp", "The vector v can only be None if the input to the "
                 "user-provided function is a single Tensor with a single element.")
        out_tuple, outs = _as_tuple(func(*xs), _OUTPUTS, "jvp")
        dummies = tuple(zeros_like(o).requires_grad_(True) for o in outs)
        _strict_outputs(outs, strict)
        g = _grads(outs, xs, dummies, create_graph=True)
        if strict:
            raw = _raw_grads(outs, xs, dummies, True)
            _strict_reached(raw, "The output of the user-provided function is independent of "
                                 "input {}. This is not allowed in strict mode.")
            for i, gi in enumerate(g):
                if not gi.requires_grad:
                    raise RuntimeError(f"The gradient with respect to input {i} is independent "
                                       "of the inputs of the user-provided function. This is "
                                       "not allowed in strict mode.")
            _strict_reached(_raw_grads(g, dummies, vs, create_graph),
                            "The gradient with respect to the input is independent of entry "
                            "{} in the grad_outputs when using the double backward trick to "
                            "compute forward mode gradients. This is not allowed in strict "
                            "mode.")
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

    # PyTorch's refusals of the forward-mode strategy's unsupported combinations (its
    # forward-mode values are the reverse-mode ones, computed below).
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`create_graph=False` or `strategy="reverse-mode"`.')
        if strict:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`strict=False` or `strategy="reverse-mode"`.')
        _as_tuple(inputs, "inputs", "jacobian")
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse "
                                      "Hessian isonly implemented for `vectorize=True`.")
    in_tuple, ins = _as_tuple(inputs, "inputs", "jacobian")
    with enable_grad():
        xs = _prep(ins, create_graph)
        out_tuple, outs = _as_tuple(func(*xs), _OUTPUTS, "jacobian")
        _strict_outputs(outs, strict)
        if vectorize and strict:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are "
                "not supported together. Please either set `strict=False` or "
                "`vectorize=False`.")
        rows: list[tuple[Any, ...]] = []
        for oi, o in enumerate(outs):
            per_in: list[list[Tensor]] = [[] for _ in xs]
            flat = o.reshape(-1)
            if flat.numel():
                _real_output(o)
            for k in range(flat.numel()):
                seed = zeros_like(flat)
                seed[k] = 1.0
                raw = _raw_grads((flat,), xs, (seed,), create_graph)
                for i, g in enumerate(raw):
                    if g is None and strict:
                        raise RuntimeError(
                            f"Output {oi} of the user-provided function is independent of "
                            f"input {i}. This is not allowed in strict mode.")
                    if strict and create_graph and g is not None and not g.requires_grad:
                        # PyTorch numbers the output here, though it speaks of an input.
                        raise RuntimeError(
                            "The jacobian of the user-provided function is independent of "
                            f"input {oi}. This is not allowed in strict mode when "
                            "create_graph=True.")
                    per_in[i].append(zeros_like(xs[i]) if g is None else g)
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
    in_tuple, ins = _as_tuple(inputs, "inputs", "hessian")

    def gradient(*xs: Tensor) -> Any:
        raw_out = func(*xs)
        _strict_outputs(_as_tuple(raw_out, _OUTPUTS, "hessian")[1], strict)
        out = _single(raw_out, "hessian")
        _real_output(out)
        gs = _grads((out,), xs, (out.new_ones(()).reshape(out.shape),), create_graph=True)
        for i, g in enumerate(gs):
            if strict and not g.requires_grad:
                raise RuntimeError(
                    "While computing the hessian, found that the jacobian of the user-provided "
                    f"function with respect to input {i} is independent of the input. This is "
                    "not allowed in strict mode. You should ensure that your function is twice "
                    "differentiable and that the jacobian depends on the inputs (this would be "
                    "violated by a linear function for example).")
        return _out(in_tuple, gs)

    return jacobian(gradient, inputs, create_graph=create_graph, strict=strict,
                    vectorize=vectorize)


def vhp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), v^T H)`` for a scalar function."""
    in_tuple, ins = _as_tuple(inputs, "inputs", "vhp")
    with enable_grad():
        xs = _prep(ins, create_graph)
        vs = _vs(v, xs, in_tuple, "vhp", _NONE_IN)
        out = _single(func(*xs), "vhp")
        _real_output(out)
        g = _grads((out,), xs, (out.new_ones(()).reshape(out.shape),), create_graph=True)
        res = _grads(g, xs, vs, create_graph)
    return _detach((out,), create_graph)[0], _out(in_tuple, _detach(res, create_graph))


def hvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), H v)`` for a scalar function (the double-backward trick)."""
    from funcgrad.torch._creation import zeros_like  # noqa: PLC0415

    in_tuple, ins = _as_tuple(inputs, "inputs", "hvp")
    with enable_grad():
        xs = _prep(ins, create_graph)
        vs = _vs(v, xs, in_tuple, "hvp", _NONE_IN)
        out = _single(func(*xs), "hvp")
        _real_output(out)
        g = _grads((out,), xs, (out.new_ones(()).reshape(out.shape),), create_graph=True)
        dummies = tuple(zeros_like(x).requires_grad_(True) for x in xs)
        gv = _grads(g, xs, dummies, create_graph=True)
        res = _grads(gv, dummies, vs, create_graph)
    return _detach((out,), create_graph)[0], _out(in_tuple, _detach(res, create_graph))
