"""``torch._foreach_*``: PyTorch's operations on lists of tensors, each the per-tensor
operation applied to the list's tensors in turn (PyTorch fuses them; the values are the
per-tensor op's).

The out-of-place functions return a tuple of new tensors; the in-place ones (trailing
``_``) write into the tensors and return the list given. The other operand of a binary
function is a list of tensors, a scalar, a list of scalars or (``add``/``mul``/``div``) one
tensor; ``addcmul``/``addcdiv`` take a value, a list of scalars or a tensor of them.

>>> import funcgrad.torch as torch
>>> torch._foreach_add([torch.ones(2), torch.zeros(1)], 1)
(tensor([2., 2.]), tensor([1.]))
>>> xs = [torch.ones(2)]
>>> torch._foreach_mul_(xs, [3.0])[0]
tensor([3., 3.])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from funcgrad.torch._tensor import Tensor

# The per-tensor methods PyTorch has a _foreach_ version of (out of place and in place).
_UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1",
          "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal",
          "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc")
_BINARY = ("add", "sub", "mul", "div", "clamp_max", "clamp_min", "maximum", "minimum", "pow")
_TERNARY = ("addcmul", "addcdiv", "lerp")
# A scalar operand of maximum/minimum: PyTorch's foreach kernels clamp.
_SCALAR_METHOD = {"maximum": "clamp_min", "minimum": "clamp_max"}


def _check_list(tensors: Any, position: int = 0, name: str = "self") -> list[Any]:
    """A list argument of tensors, refused as PyTorch's argument parser does."""
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"argument '{name}' (position {position + 1}) must be tuple of "
                        f"Tensors, not {type(tensors).__name__}")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument {position}, but got "
                            f"{type(t).__name__}")
    if not tensors and position == 0:
        raise RuntimeError("Tensor list must have at least one tensor.")
    return list(tensors)


def _per_tensor(operand: Any, n: int) -> list[Any]:
    """The operand for each of ``n`` tensors: a list's entries, else the same one."""
    if isinstance(operand, (list, tuple)):
        if len(operand) != n:
            if operand and all(isinstance(o, Tensor) for o in operand):
                raise RuntimeError("Tensor lists must have the same number of tensors, got "
                                   f"{n} and {len(operand)}")
            raise RuntimeError("Tensor list must have same number of elements as scalar "
                               "list.")
        return list(operand)
    return [operand] * n


def _scalars(values: Any, n: int) -> list[Any]:
    """``addcmul``'s values: a number, a list of numbers or a 1-d tensor of them."""
    if isinstance(values, Tensor):
        values = values.tolist()
    return _per_tensor(values, n)


def _apply(name: str, inplace: bool, xs: list[Any], *operands: list[Any],
           **kwargs: Any) -> Any:
    method = name + "_" if inplace else name
    if name in _SCALAR_METHOD and not isinstance(operands[0][0], Tensor):
        method = _SCALAR_METHOD[name] + ("_" if inplace else "")
    if name in ("addcmul", "addcdiv"):  # the value: keyword-only
        outs = [getattr(x, method)(a, b, value=v) for x, a, b, v in zip(xs, *operands,
                                                                         strict=True)]
    elif inplace and not hasattr(Tensor, method):  # (maximum_...: no Tensor method)
        outs = [x.copy_(getattr(x, method[:-1])(*ops, **kwargs))
                for x, *ops in zip(xs, *operands, strict=True)]
    else:
        outs = [getattr(x, method)(*ops, **kwargs)
                for x, *ops in zip(xs, *operands, strict=True)]
    return None if inplace else tuple(outs)


def _unary(name: str, inplace: bool) -> Callable[..., Any]:
    def fn(self: Sequence[Tensor]) -> Any:
        out = _apply(name, inplace, _check_list(self))
        return self if inplace else out

    return _named(fn, name, inplace)


# PyTorch's overloads of the binary functions beyond (list, number | list of numbers |
# list of tensors): those with one tensor as the other operand; those with alpha=.
_WITH_TENSOR = frozenset({"add", "mul", "div"})
_WITH_ALPHA = frozenset({"add", "sub"})


def _check_overload(name: str, inplace: bool, other: Any, kwargs: dict[str, Any]) -> None:
    tensors = isinstance(other, (list, tuple)) and bool(other) and isinstance(other[0], Tensor)
    ok = not isinstance(other, Tensor) or name in _WITH_TENSOR
    if kwargs:
        ok = ok and set(kwargs) == {"alpha"} and name in _WITH_ALPHA and (
            tensors or isinstance(other, Tensor))
    if not ok:
        raise TypeError(f"_foreach_{name}{'_' if inplace else ''}() received an invalid "
                        "combination of arguments")
    if isinstance(other, Tensor) and other.ndim:
        raise RuntimeError(f"scalar tensor expected to be 0 dim but it has {other.ndim} "
                           f"dimensions and {other.numel()} elements.")


def _binary(name: str, inplace: bool) -> Callable[..., Any]:
    def fn(self: Any, other: Any, **kwargs: Any) -> Any:
        if name == "pow" and not isinstance(self, (list, tuple)):
            # pow(Number self, list of Tensors exponent)
            return tuple(self ** e for e in _check_list(other, 1, "exponent"))
        xs = _check_list(self)
        if isinstance(other, Tensor) and other.ndim == 0 and name not in _WITH_TENSOR:
            other = other.item()  # PyTorch's parser takes a 0-d tensor for a number
        _check_overload(name, inplace, other, kwargs)
        out = _apply(name, inplace, xs, _per_tensor(other, len(xs)), **kwargs)
        return self if inplace else out

    return _named(fn, name, inplace)


def _ternary(name: str, inplace: bool) -> Callable[..., Any]:
    def fn(self: Any, tensors1: Any, last: Any, *rest: Any, **kwargs: Any) -> Any:
        xs = _check_list(self)
        n = len(xs)
        ops = [_per_tensor(_check_list(tensors1, 1, "tensor1"), n)]
        if name == "lerp":
            ops.append(_per_tensor(last, n))
        else:
            # addcmul(self, tensor1, tensor2, value=1 | scalars): the value keyword per tensor
            ops += [_per_tensor(_check_list(last, 2, "tensor2"), n),
                    _scalars(rest[0] if rest else kwargs.pop("value", kwargs.pop(
                        "scalars", 1)), n)]
        out = _apply(name, inplace, xs, *ops)
        return self if inplace else out

    return _named(fn, name, inplace)


def _named(fn: Callable[..., Any], name: str, inplace: bool) -> Callable[..., Any]:
    fn.__name__ = fn.__qualname__ = f"_foreach_{name}{'_' if inplace else ''}"
    fn.__doc__ = f"Apply :func:`torch.{name}` to each Tensor of the input list."
    return fn


def _foreach_zero_(self: Sequence[Tensor]) -> Sequence[Tensor]:
    """Zero each tensor of the list."""
    for x in _check_list(self):
        x.zero_()
    return self


def _foreach_copy_(self: Sequence[Tensor], src: Sequence[Tensor],
                   non_blocking: bool = False) -> Sequence[Tensor]:
    """Copy each tensor of ``src`` into the matching tensor of ``self``."""
    xs = _check_list(self)
    for x, s in zip(xs, _per_tensor(_check_list(src, 1, "src"), len(xs)), strict=True):
        x.copy_(s, non_blocking)
    return self


def _foreach_clone(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """A copy of each tensor of the list."""
    return tuple(x.clone() for x in _check_list(self))


def _foreach_norm(self: Sequence[Tensor], ord: Any = 2, dtype: Any = None  # noqa: A002
                  ) -> tuple[Tensor, ...]:
    """The vector norm of each tensor of the list."""
    from funcgrad.torch import linalg  # noqa: PLC0415 - funcgrad.torch imports this module

    return tuple(linalg.vector_norm(x, ord, dtype=dtype) for x in _check_list(self))


def _foreach_powsum(self: Sequence[Tensor], ord: Any = 2, dtype: Any = None  # noqa: A002
                    ) -> tuple[Tensor, ...]:
    """The sum of ``|x| ** ord`` of each tensor of the list."""
    outs = []
    for x in _check_list(self):
        x = x if dtype is None else x.to(dtype)
        outs.append((x.abs() ** ord).sum())
    return tuple(outs)


def _foreach_max(self: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """The largest entry of each tensor of the list."""
    return tuple(x.max() for x in _check_list(self))


def _foreach_mm(self: Sequence[Tensor], mat2: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """The matrix products of the lists' tensors, pairwise."""
    xs = _check_list(self)
    return tuple(x.mm(m) for x, m in zip(xs, _per_tensor(_check_list(mat2, 1, "mat2"), len(xs)),
                                         strict=True))


FUNCTIONS: dict[str, Callable[..., Any]] = {
    f.__name__: f for f in (_foreach_zero_, _foreach_copy_, _foreach_clone, _foreach_norm,
                            _foreach_powsum, _foreach_max, _foreach_mm)}
for _make, _names in ((_unary, _UNARY), (_binary, _BINARY), (_ternary, _TERNARY)):
    for _name in _names:
        for _inplace in (False, True):
            _f = _make(_name, _inplace)
            FUNCTIONS[_f.__name__] = _f
