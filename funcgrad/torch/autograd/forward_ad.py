"""``torch.autograd.forward_ad``: forward-mode derivatives of eager code with dual tensors.

Inside ``dual_level()``, ``make_dual(x, v)`` gives a tensor carrying the tangent ``v``;
every PyTorch-face operator applied to dual tensors gives results carrying their tangents
(the engine's jvp rules, the same ones ``torch.func.jvp`` and the JAX face use), and
``unpack_dual(y)`` returns ``(primal, tangent)``.

>>> import funcgrad.torch as torch
>>> import funcgrad.torch.autograd.forward_ad as fwAD
>>> x, v = torch.tensor([1.0, 2.0]), torch.tensor([1.0, 0.0])
>>> with fwAD.dual_level():
...     y = (fwAD.make_dual(x, v) ** 2).sum()
...     fwAD.unpack_dual(y).tangent
tensor(2.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from funcgrad.errors import NonDifferentiableError
from funcgrad.torch import _dual, _profiling
from funcgrad.torch._grad_mode import no_grad
from funcgrad.torch._graph import X64, buffer_of, value_of
from funcgrad.torch._tensor import Tensor
from funcgrad.transforms.jvp import jvp_flat
from funcgrad.tree_util import tree_flatten, tree_unflatten

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level",
           "make_dual", "unpack_dual"]

# Calls made while a dual operation computes its primal (or while this module works on
# tensors) pass through: their inputs' tangents are being handled already.
_busy = [0]


class UnpackedDualTensor(NamedTuple):
    """What :func:`unpack_dual` returns: the primal and its tangent (None if none)."""

    primal: Any
    tangent: Any


def enter_dual_level() -> int:
    """Open the forward-AD level (one at a time, as in PyTorch) and return it."""
    if _dual.state.level is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _dual.state.level = 0
    _profiling.state.forward = _forward
    _profiling.install()
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the level: every tangent made in it is dropped."""
    if _dual.state.level is None or (level is not None and level != _dual.state.level):
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    _dual.state.level = None
    _dual.clear()
    _profiling.state.forward = None
    _profiling.release()


class dual_level:  # noqa: N801 - PyTorch's name
    """``with dual_level():`` opens the forward-AD level for the block.

    >>> import funcgrad.torch as torch
    >>> with dual_level():
    ...     d = make_dual(torch.tensor(2.0), torch.tensor(3.0))
    ...     unpack_dual(d * d).tangent
    tensor(12.)
    """

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: object) -> None:
        exit_dual_level()


def _level(level: int | None) -> int:
    if _dual.state.level is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    return _dual.state.level if level is None else level


class _Plain:
    def __enter__(self) -> None:
        _busy[0] += 1

    def __exit__(self, *exc: object) -> None:
        _busy[0] -= 1


_plain = _Plain()


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of ``tensor`` carrying ``tangent`` (its forward derivative).

    >>> import funcgrad.torch as torch
    >>> with dual_level():
    ...     make_dual(torch.tensor([1.0]), torch.tensor([0.5]))
    tensor([1.], tangent=tensor([0.5000]))
    """
    _level(level)
    if not (tensor.dtype.is_floating_point or tensor.dtype.is_complex):
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype}")
    _dual.check_tangent(tensor, tangent)
    with _plain:
        dual = tensor.view_as(tensor)
        if tangent.dtype != tensor.dtype:
            tangent = tangent.to(tensor.dtype)
    _dual.set_tangent(dual, tangent)
    return dual


def unpack_dual(tensor: Any, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of a dual tensor: the primal is a view without the tangent;
    ``tangent`` is None for a tensor that carries none.

    >>> import funcgrad.torch as torch
    >>> unpack_dual(torch.ones(1)).tangent is None
    True
    """
    tangent = _dual.tangent_of(tensor)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    with _plain:
        primal = tensor.view_as(tensor)
    return UnpackedDualTensor(primal, tangent)


def _tensors_in(out: Any) -> list[Any]:
    """The leaves of an operator's result (tuples, lists and torch.return_types opened)."""
    if isinstance(out, (tuple, list)):
        return [leaf for item in out for leaf in _tensors_in(item)]
    return [out]


# Operators whose result carries no tangent whatever their inputs (PyTorch's too).
_NO_TANGENT = frozenset({"aten::detach", "aten::new_zeros", "aten::new_ones",
                         "aten::new_empty", "aten::new_full", "aten::new_tensor"})


def _forward(name: str, fn: Callable[..., Any], args: tuple[Any, ...],
             kwargs: dict[str, Any]) -> Any:
    """One operator call while the level is open: the call itself, then the tangents of
    its results by the engine's jvp of the same call on the dual inputs' values."""
    run = _profiling.run_timed
    if _busy[0]:
        return run(name, fn, args, kwargs)
    leaves, tree = tree_flatten((args, kwargs), is_leaf=lambda x: isinstance(x, Tensor))
    duals = [i for i, x in enumerate(leaves)
             if isinstance(x, Tensor) and _dual.tangent_of(x) is not None]
    if not duals:
        return run(name, fn, args, kwargs)
    if name in _NO_TANGENT or name == "aten::detach_":
        with _plain:
            out = run(name, fn, args, kwargs)
        if name == "aten::detach_":
            _dual.drop_tangent(args[0])
        return out
    # An operator that writes into an operand (``add_``, ``out=``, ``x[i] = v``) writes
    # into a copy of it while the tangents are computed.
    writes = (name.endswith("_") and not name.endswith("__")) or "out" in kwargs
    with _plain:
        tangents = [_dual.tangent_of(leaves[i]) for i in duals]
        primals = [value_of(leaves[i]._data) for i in duals]
        seeds = [value_of(t._data) for t in tangents]

    def on_values(*xs: Any) -> list[Any]:
        now = list(leaves)
        if writes:
            now = [Tensor._from_data(x._data.copy())
                   if isinstance(x, Tensor) and hasattr(x._data, "copy") else x for x in now]
        for i, x in zip(duals, xs):
            now[i] = Tensor._from_data(buffer_of(x))
        a, k = tree_unflatten(tree, now)
        out = fn(*a, **k)
        if out is None and name == "aten::index_put_":
            out = a[0]  # (x[i] = v returns nothing: the tangent is x's)
        return [x._data if isinstance(x, Tensor) else x for x in _tensors_in(out)]

    with _plain:
        try:
            with no_grad(), X64:
                _, out_tangents, _ = jvp_flat(on_values, primals, seeds)
        except NonDifferentiableError:
            raise RuntimeError(f"Trying to use forward AD with {name} that does not support "
                               "it because it has not been implemented yet.") from None
        out = run(name, fn, args, kwargs)
    results = _tensors_in(args[0] if out is None and name == "aten::index_put_" else out)
    if len(results) == len(out_tangents):
        for r, t in zip(results, out_tangents):
            if t is not None and isinstance(r, Tensor) and (
                    r.dtype.is_floating_point or r.dtype.is_complex):
                _dual.set_tangent(r, Tensor._from_data(buffer_of(t)))
    return out
