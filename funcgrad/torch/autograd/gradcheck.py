"""``torch.autograd.gradcheck`` / ``gradgradcheck``: backward's Jacobian against central
finite differences, as PyTorch checks them (``allclose(analytical, numerical, rtol,
atol)`` per output and input).

>>> import funcgrad.torch as torch
>>> x = torch.tensor([0.5, -1.0], dtype=torch.float64, requires_grad=True)
>>> torch.autograd.gradcheck(lambda t: (t.sin() * t).sum(), (x,))
True
>>> torch.autograd.gradgradcheck(lambda t: t ** 3, (x,))
True
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad.torch._tensor import Tensor

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """A gradient that does not match its finite-difference estimate."""


def _as_tuple(x: Any) -> tuple[Any, ...]:
    return x if isinstance(x, tuple) else (x,)


def _outputs(func: Callable[..., Any], inputs: Sequence[Any]) -> list[Tensor]:
    return [o for o in _as_tuple(func(*inputs)) if isinstance(o, Tensor)]


def _numerical(func: Callable[..., Any], inputs: Sequence[Any], which: list[int],
               outs: list[Tensor], eps: float) -> list[list[np.ndarray]]:
    """J[o][i] of shape (numel of input i, numel of output o), by central differences."""
    jac = [[np.zeros((inputs[i].numel(), o.numel()), np.float64) for i in which] for o in outs]
    for col, i in enumerate(which):
        t = inputs[i]
        for k in range(t.numel()):
            base = t._data.copy()
            values = []
            for step in (eps, -eps):
                data = base.copy()
                data.reshape(-1)[k] += step
                t._data[...] = data
                # Grad stays on: gradgradcheck's function takes a gradient itself.
                values.append([o.detach()._data.astype(np.float64).reshape(-1)
                               for o in _outputs(func, inputs)])
            t._data[...] = base
            for r in range(len(outs)):
                jac[r][col][k] = (values[0][r] - values[1][r]) / (2 * eps)
    return jac


def _analytical(outs: list[Tensor], inputs: Sequence[Any], which: list[int]
                ) -> list[list[np.ndarray]]:
    from funcgrad.torch._creation import zeros_like  # noqa: PLC0415
    from funcgrad.torch.autograd import grad  # noqa: PLC0415

    targets = [inputs[i] for i in which]
    jac = [[np.zeros((inputs[i].numel(), o.numel()), np.float64) for i in which] for o in outs]
    for r, o in enumerate(outs):
        if not o.requires_grad:
            continue
        for k in range(o.numel()):
            seed = zeros_like(o)
            seed._data.reshape(-1)[k] = 1
            gs = grad(o, targets, grad_outputs=seed, retain_graph=True, allow_unused=True)
            for col, g in enumerate(gs):
                if g is not None:
                    jac[r][col][:, k] = g.detach()._data.astype(np.float64).reshape(-1)
    return jac


def gradcheck(func: Callable[..., Any], inputs: Any, *, eps: float = 1e-6,
              atol: float = 1e-5, rtol: float = 1e-3, raise_exception: bool = True,
              nondet_tol: float = 0.0, check_undefined_grad: bool = True,
              check_grad_dtypes: bool = False, check_batched_grad: bool = False,
              check_batched_forward_grad: bool = False, check_forward_ad: bool = False,
              check_backward_ad: bool = True, fast_mode: bool = False,
              masked: bool | None = None) -> bool:
    """Whether ``func``'s backward agrees with finite differences at ``inputs`` (the
    tensors with ``requires_grad``); raises ``GradcheckError`` on a mismatch unless
    ``raise_exception=False``. Use float64 inputs (others draw PyTorch's warning)."""
    ins = _as_tuple(inputs) if not isinstance(inputs, list) else tuple(inputs)
    which = [i for i, t in enumerate(ins) if isinstance(t, Tensor) and t.requires_grad]
    if not which:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of the them have requires_grad=True.")
    for i in which:
        if ins[i].dtype.name not in ("float64", "complex128"):
            warnings.warn(f"Input #{i} requires gradient and is not a double precision "
                          "floating point or complex. This check will likely fail if all the "
                          "inputs are not of double precision floating point or complex. ",
                          UserWarning, stacklevel=2)
    outs = _outputs(func, ins)
    analytical = _analytical(outs, ins, which)
    numerical = _numerical(func, ins, which, outs, eps)
    for r in range(len(outs)):
        for col, i in enumerate(which):
            a, n = analytical[r][col], numerical[r][col]
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                if not raise_exception:
                    return False
                raise GradcheckError(
                    f"Jacobian mismatch for output {r} with respect to input {i},\n"
                    f"numerical:{Tensor._from_data(n)!r}\nanalytical:"
                    f"{Tensor._from_data(a)!r}\n")
    return True


def gradgradcheck(func: Callable[..., Any], inputs: Any, grad_outputs: Any = None, *,
                  eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True,
                  nondet_tol: float = 0.0, check_undefined_grad: bool = True,
                  check_grad_dtypes: bool = False, check_batched_grad: bool = False,
                  check_fwd_over_rev: bool = False, check_rev_over_rev: bool = True,
                  fast_mode: bool = False, masked: bool = False) -> bool:
    """``gradcheck`` of the vector-Jacobian product of ``func`` (second derivatives);
    ``grad_outputs`` default to random float64 tensors requiring grad."""
    from funcgrad.torch._random import rng  # noqa: PLC0415
    from funcgrad.torch.autograd import grad  # noqa: PLC0415

    ins = _as_tuple(inputs) if not isinstance(inputs, list) else tuple(inputs)
    outs = _outputs(func, ins)
    if grad_outputs is None:
        grad_outputs = tuple(
            Tensor(rng().standard_normal(tuple(o.shape)).astype(o.dtype.np),
                   requires_grad=True) for o in outs)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n_in = len(ins)
    which = [i for i, t in enumerate(ins) if isinstance(t, Tensor) and t.requires_grad]

    def vjp(*args: Any) -> tuple[Tensor, ...]:
        xs, gos = args[:n_in], args[n_in:]
        ys = _outputs(func, xs)
        gs = grad(ys, [xs[i] for i in which], grad_outputs=list(gos), create_graph=True,
                  allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(vjp, ins + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
