"""PyTorch's free functions: ``torch.cat``, ``torch.stack``, ``torch.where``, and
``torch.<name>(input, ...)`` for every Tensor method PyTorch also has as a function.

>>> import funcgrad.torch as torch
>>> torch.cat([torch.ones(2), torch.zeros(1)])
tensor([1., 1., 0.])
>>> torch.exp(torch.tensor([0.0]))
tensor([1.])
"""

from __future__ import annotations

import builtins
import pathlib
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.torch import _dtypes as D
from funcgrad.torch._autocast import autocast_op
from funcgrad.torch._grad_mode import is_grad_enabled
from funcgrad.torch._tensor import Tensor, apply_op, matmul, maximum, minimum, where


def _common(tensors: Sequence[Any]) -> D.dtype:
    out = None
    for t in tensors:
        d = t.dtype if isinstance(t, Tensor) else D.scalar_dtype(t)
        out = d if out is None else D.promote_types(out, d)
    assert out is not None
    return out


def cat(tensors: Sequence[Any], dim: builtins.int = 0, *, out: Any = None) -> Tensor:
    """Concatenate along ``dim`` (dtypes promote as in PyTorch)."""
    ts = [t for t in tensors if not (isinstance(t, Tensor) and t.shape == (0,))] or \
        list(tensors)
    if ts and builtins.all(isinstance(t, Tensor) for t in ts):
        first = ts[0].shape
        d = dim % max(len(first), 1)
        for k, t in enumerate(ts[1:], 1):
            if len(t.shape) != len(first):
                raise RuntimeError(f"Tensors must have same number of dimensions: got "
                                   f"{len(first)} and {len(t.shape)}")
            for ax, (p, q) in enumerate(zip(first, t.shape)):
                if ax != d and p != q:
                    raise RuntimeError(
                        f"Sizes of tensors must match except in dimension {d}. Expected size "
                        f"{p} but got size {q} for tensor number {k} in the list.")
    dt = _common(ts)
    return apply_op("Cat", lambda xs: fnp.concatenate([fnp.astype(x, dt.np) for x in xs],
                                                      dim), list(ts))


concat = concatenate = cat


def stack(tensors: Sequence[Any], dim: builtins.int = 0, *, out: Any = None) -> Tensor:
    """Stack along a new axis ``dim``."""
    for k, t in enumerate(tensors[1:], 1):
        if isinstance(t, Tensor) and isinstance(tensors[0], Tensor) and \
                t.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(tensors[0].shape)} at entry 0 and {list(t.shape)} at "
                               f"entry {k}")
    dt = _common(tensors)
    datas = [t._data for t in tensors if isinstance(t, Tensor)]
    if len(datas) == len(tensors) and datas and -datas[0].ndim - 1 <= dim <= datas[0].ndim \
            and builtins.all(type(d) is np.ndarray and d.dtype == dt.np for d in datas) and not (
            is_grad_enabled() and builtins.any(t._requires_grad for t in tensors)):
        # Nothing to record (a DataLoader's collation): the copy the engine's concatenate
        # makes, without a primitive per tensor.
        return Tensor._from_data(np.stack(datas, dim))
    return apply_op("Stack", lambda xs: fnp.stack([fnp.astype(x, dt.np) for x in xs], dim),
                    list(tensors))


def hstack(tensors: Sequence[Any]) -> Tensor:
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors: Sequence[Any]) -> Tensor:
    return cat([t.reshape(1, -1) if t.ndim == 1 else t for t in tensors], 0)


def is_tensor(obj: Any) -> builtins.bool:
    """Whether ``obj`` is a Tensor."""
    return isinstance(obj, Tensor)


def is_floating_point(t: Tensor) -> builtins.bool:
    return t.dtype.is_floating_point


def numel(t: Tensor) -> builtins.int:
    return t.numel()


def _need_tensor(name: str, input: Any) -> Tensor:  # noqa: A002 - PyTorch's name
    # PyTorch's free functions take Tensors only (a NumPy array is refused, not converted).
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{_type_name(input)}")
    return input


def _type_name(x: Any) -> str:
    t = type(x)
    if t.__module__ == "builtins":
        return t.__name__
    return f"{t.__module__.split('.')[0]}.{t.__name__}"


def clamp(input: Any, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """``input`` limited to ``[min, max]``."""
    return _need_tensor("clamp", input).clamp(min, max)


clip = clamp


def masked_select(input: Tensor, mask: Any) -> Tensor:  # noqa: A002
    """The elements of ``input`` where ``mask`` is true, as a 1-D tensor."""
    m = mask if isinstance(mask, Tensor) else Tensor(mask)
    shape = tuple(np.broadcast_shapes(tuple(input.shape), tuple(m.shape)))
    keep = np.broadcast_to(np.asarray(m._host(), bool), shape)
    return apply_op("MaskedSelect", lambda x: fnp.broadcast_to(x, shape)[keep], input)


def broadcast_to(input: Tensor, size: Any) -> Tensor:  # noqa: A002
    return input.expand(size)


@autocast_op("einsum")
def einsum(equation: str, *operands: Any) -> Tensor:
    ops = list(operands[0]) if len(operands) == 1 and isinstance(operands[0], (list, tuple)) \
        else list(operands)
    return apply_op("Einsum", lambda xs: fnp.einsum(equation, *xs), ops)


def allclose(a: Tensor, b: Tensor, rtol: builtins.float = 1e-5, atol: builtins.float = 1e-8,
             equal_nan: builtins.bool = False) -> builtins.bool:
    import numpy as np  # noqa: PLC0415

    return builtins.bool(np.allclose(a._host(), b._host(), rtol=rtol, atol=atol,
                                     equal_nan=equal_nan))


def equal(a: Tensor, b: Tensor) -> builtins.bool:
    return a.shape == b.shape and builtins.bool(cast(Any, a == b).all())


# PyTorch's overloads with a Python number first and a Tensor second (Scalar_Tensor):
# the reflected operator of the Tensor computes them.
_SCALAR_FIRST = {"remainder": "__rmod__", "pow": "__rpow__", "sub": "__rsub__",
                 "add": "__radd__", "mul": "__rmul__", "div": "__rtruediv__"}


def _method_function(name: str) -> Callable[..., Any]:
    def fn(input: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: A002 - PyTorch's name
        if name in _SCALAR_FIRST and isinstance(input, (builtins.int, builtins.float)) and \
                not isinstance(input, builtins.bool) and len(args) == 1 and not kwargs and \
                isinstance(args[0], Tensor):
            return getattr(args[0], _SCALAR_FIRST[name])(input)
        return getattr(_need_tensor(name, input), name)(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``torch.{name}(t, ...)`` is ``t.{name}(...)``, as in PyTorch."
    return fn


def _torch_function_names() -> set[str]:
    path = pathlib.Path(__file__).with_name("_function_names.txt")
    return {ln.strip() for ln in path.read_text().splitlines()
            if ln.strip() and not ln.startswith("#")}


def method_functions(namespace: dict[str, Any]) -> list[str]:
    """Define ``torch.<name>`` for each Tensor method that PyTorch has as a function."""
    made = []
    for name in sorted(_torch_function_names()):
        if name in namespace or name.startswith("_") or not hasattr(Tensor, name):
            continue
        namespace[name] = _method_function(name)
        made.append(name)
    return made


__all__ = ["allclose", "broadcast_to", "cat", "clamp", "clip", "concat", "concatenate",
           "einsum", "equal", "hstack", "is_floating_point", "is_tensor", "masked_select",
           "matmul", "maximum", "minimum", "numel", "stack", "vstack", "where"]
