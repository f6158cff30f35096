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
import functools
import pathlib
import re
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.errors import FuncgradError
from funcgrad.torch import _dtypes as D
from funcgrad.torch._autocast import autocast_op
from funcgrad.torch._grad_mode import is_grad_enabled
from funcgrad.torch._tensor import (
    Tensor,
    _check_broadcast,
    apply_op,
    matmul,
    maximum,
    minimum,
    where,
)


def _common(tensors: Sequence[Any]) -> D.dtype:
    out = None
    for t in tensors:
        d = t.dtype if isinstance(t, Tensor) else D.scalar_dtype(t)
        out = d if out is None else D.promote_types(out, d)
    assert out is not None
    return out


# The name PyTorch's ``out=`` errors give an alias (``torch.divide`` is ``div``).
_OUT_NAMES = {"divide": "div", "true_divide": "div", "multiply": "mul", "subtract": "sub",
              "absolute": "abs", "negative": "neg", "clip": "clamp", "greater": "gt",
              "greater_equal": "ge", "less": "lt", "less_equal": "le", "not_equal": "ne",
              "arccos": "acos", "arcsin": "asin", "arctan": "atan", "arccosh": "acosh",
              "arcsinh": "asinh", "arctanh": "atanh", "arctan2": "atan2", "fix": "trunc",
              "concat": "cat", "concatenate": "cat"}
_RESIZED = ("An output with one or more elements was resized since it had shape {}, which "
            "does not match the required output shape {}. This behavior is deprecated, and in "
            "a future PyTorch release outputs will not be resized unless they have zero "
            "elements. You can explicitly reuse an out tensor t by resizing it, inplace, to "
            "zero elements with t.resize_(0). (Triggered internally at "
            "/__w/pytorch/pytorch/aten/src/ATen/native/Resize.cpp:30.)")


def _needs_grad(x: Any) -> builtins.bool:
    if isinstance(x, Tensor):
        return x.requires_grad
    if isinstance(x, (list, tuple)):
        return builtins.any(_needs_grad(v) for v in x)
    if isinstance(x, dict):
        return builtins.any(_needs_grad(v) for v in x.values())
    return False


def write_out(name: str, out: Any, result: Any, args: Any, stacklevel: builtins.int = 3
              ) -> Any:
    """``result`` written into ``out`` as PyTorch's ``out=`` overloads write it: refused
    while grad is recorded for an argument, the dtype checked (a float result into an
    integer ``out`` is an error), ``out`` resized to fit (with PyTorch's warning unless it
    was empty); ``out`` itself is returned (a tuple ``out`` for a tuple result).

    >>> import funcgrad.torch as torch
    >>> o = torch.empty(2)
    >>> torch.add(torch.ones(2), 1, out=o) is o, o
    (True, tensor([2., 2.]))
    """
    import warnings  # noqa: PLC0415

    from funcgrad.torch._grad_mode import no_grad  # noqa: PLC0415
    from funcgrad.torch._tensor import check_result_cast  # noqa: PLC0415

    name = _OUT_NAMES.get(name, name)
    if is_grad_enabled() and (_needs_grad(args) or _needs_grad(out)):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support "
                           "automatic differentiation, but one of the arguments requires grad.")
    pairs = list(zip(out, result)) if isinstance(result, tuple) else [(out, result)]
    for o, r in pairs:
        check_result_cast(r.dtype, o.dtype)
        if tuple(o.shape) != tuple(r.shape):
            if o.numel():
                warnings.warn(_RESIZED.format(list(o.shape), list(r.shape)), UserWarning,
                              stacklevel=stacklevel)
            o.resize_(tuple(r.shape))
        with no_grad():
            o.copy_(r)
    if not isinstance(result, tuple):
        return out
    if type(result) is tuple:
        return tuple(out)
    # a return type: ``torch.return_types.max`` gives ``max_out`` (values, indices)
    fields = getattr(result, "_fields", None) or ("values", "indices")
    from funcgrad.torch._return_types import named_result  # noqa: PLC0415

    return named_result(f"{type(result).__name__}_out", fields, out)


def with_out(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` taking PyTorch's keyword ``out=`` (:func:`write_out`)."""
    @functools.wraps(fn)
    def run(*args: Any, out: Any = None, **kwargs: Any) -> Any:
        res = fn(*args, **kwargs)
        return res if out is None else write_out(name, out, res, (args, kwargs))

    return run


def _tensor_list(name: str, tensors: Any, *, nonempty: builtins.bool = True) -> list[Tensor]:
    """PyTorch's parsing of a ``tensors`` argument: a list or tuple of Tensors (a non-empty
    one for the ``stack`` family)."""
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {_type_name(tensors)}")
    for k, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {k} in argument 0, but got "
                            f"{_type_name(t)}")
    if nonempty and not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return list(tensors)


def _int_arg(name: str, arg: str, value: Any) -> builtins.int:
    """PyTorch's parsing of an ``int`` argument (a bool or a float is refused)."""
    if isinstance(value, Tensor) and value.numel() == 1 and not (
            value.dtype.is_floating_point or value.dtype.is_complex):
        return builtins.int(value.item())
    if isinstance(value, (builtins.bool, np.bool_)) or not isinstance(
            value, (builtins.int, np.integer)):
        raise TypeError(f"{name}(): argument '{arg}' must be int, not {_type_name(value)}")
    return builtins.int(value)


def cat(tensors: Sequence[Any], dim: builtins.int = 0, *, out: Any = None) -> Tensor:
    """Concatenate along ``dim`` (dtypes promote as in PyTorch)."""
    tensors = _tensor_list("cat", tensors, nonempty=False)
    dim = _int_arg("cat", "dim", dim)
    if out is not None:
        return cast(Tensor, write_out("cat", out, cat(tensors, dim), tensors))
    if not builtins.len(tensors):
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for k, t in enumerate(tensors):
        if t.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {k}) cannot be "
                               "concatenated")
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
    tensors = _tensor_list("stack", tensors)
    dim = _int_arg("stack", "dim", dim)
    if out is not None:
        return cast(Tensor, write_out("stack", out, stack(tensors, dim), tensors))
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
    ts = [t.reshape(1) if t.ndim == 0 else t for t in _tensor_list("hstack", tensors)]
    return cat(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(tensors: Sequence[Any]) -> Tensor:
    return vstack_as("vstack", tensors)


def vstack_as(name: str, tensors: Sequence[Any]) -> Tensor:
    """``vstack`` under the name ``name`` (``row_stack``: its type errors name it, its empty
    list error names ``vstack``)."""
    ts = _tensor_list("vstack", _tensor_list(name, tensors, nonempty=False))
    return cat([t.reshape(1, -1) if t.ndim <= 1 else t for t in ts], 0)


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
    if t.__module__ == "builtins" or isinstance(x, Tensor):
        return t.__name__
    return f"{t.__module__.split('.')[0]}.{t.__name__}"


def clamp(input: Any, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """``input`` limited to ``[min, max]``."""
    return _need_tensor("clamp", input).clamp(min, max)


clip = clamp


def masked_select(input: Tensor, mask: Any) -> Tensor:  # noqa: A002
    """The elements of ``input`` where ``mask`` is true, as a 1-D tensor."""
    m = mask if isinstance(mask, Tensor) else Tensor(mask)
    _check_broadcast(tuple(m.shape), tuple(input.shape))
    shape = tuple(np.broadcast_shapes(tuple(input.shape), tuple(m.shape)))
    keep = np.broadcast_to(np.asarray(m._host(), bool), shape)
    empty = not keep.any()

    def run(x: Any) -> Any:
        xb = fnp.broadcast_to(x, shape)
        # funcgrad.numpy refuses even an empty index into an empty axis: slice instead.
        return fnp.reshape(xb, (-1,))[:0] if empty else xb[keep]

    # The mask is no operand of PyTorch's node: next_functions lists the input alone.
    return apply_op("MaskedSelect", run, input, shown=(input,))


def broadcast_to(input: Tensor, size: Any) -> Tensor:  # noqa: A002
    return input.expand(size)


def _einsum_node(equation: Any, n_ops: int) -> str:
    """The node PyTorch's einsum ends with (it has no node of its own): a contraction that
    sums a subscript ends in a view of the last product (one operand: a sum), one that sums
    nothing in a product (one operand: a permutation)."""
    if type(equation) is not str:
        return "Einsum"
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    letters = [c for c in lhs if c.isalpha()]
    if arrow:
        out = {c for c in rhs if c.isalpha()}
        summed = any(c not in out for c in letters) or ("..." in lhs and "..." not in rhs)
    else:
        summed = any(letters.count(c) > 1 for c in letters)
    if n_ops == 1:
        return "Sum:1" if summed else "Permute"
    return "View" if summed else "Mul"


@autocast_op("einsum")
def einsum(equation: str, *operands: Any) -> Tensor:
    if not isinstance(equation, str) and operands:
        # The sublist format, einsum(op0, sublist0, op1, sublist1, ..., [out]): the same
        # equation in letters (PyTorch's own rewriting keeps its label order: 0-25 are
        # A-Z, 26-51 are a-z).
        args = (equation, *operands)
        terms = [_sublist_term(sub) for sub in args[1::2]]
        equation = ",".join(terms) + ("->" + _sublist_term(args[-1])
                                      if len(args) % 2 else "")
        operands = tuple(args[0::2][:len(terms)])
    ops = list(operands[0]) if len(operands) == 1 and isinstance(operands[0], (list, tuple)) \
        else list(operands)
    if type(equation) is str and not _einsum_well_formed(equation):
        msg = _einsum_error(equation, [tuple(np.shape(o)) for o in ops])
        raise RuntimeError(f"einsum(): {msg or 'invalid equation ' + repr(equation)}")
    if len(ops) == 2 and type(equation) is str and builtins.all(
            isinstance(o, Tensor) for o in ops) and ops[0].dtype is not ops[1].dtype:
        _einsum_check_pair_dtypes(equation, ops[0], ops[1])
    try:
        if ops and isinstance(ops[0], Tensor) and D.category(ops[0].dtype) <= 1 \
                and type(equation) is str and _einsum_sums_alone(equation):
            # PyTorch first sums a subscript found in one operand only: sum() widens
            # integers (and bool) to int64.
            return apply_op(_einsum_node(equation, len(ops)), lambda xs: fnp.astype(
                fnp.einsum(equation, *xs), np.int64), ops)
        return apply_op(_einsum_node(equation, len(ops)),
                        lambda xs: fnp.einsum(equation, *xs), ops)
    except (ValueError, TypeError) as e:
        # Only a failing call pays for PyTorch's own checks (its error type and text).
        msg = _einsum_error(equation, [tuple(np.shape(o)) for o in ops]) \
            if ops and type(equation) is str else None
        if msg is not None:
            raise RuntimeError(f"einsum(): {msg}") from None
        if isinstance(e, FuncgradError):
            raise RuntimeError(str(e)) from None
        raise


def _einsum_check_pair_dtypes(equation: str, a: Tensor, b: Tensor) -> None:
    """PyTorch contracts two operands that share a summed subscript (of size above 1 in
    both) with a matrix product, which refuses operands of two dtypes; without such a
    subscript it multiplies them, with type promotion."""
    lhs, arrow, rhs = equation.replace(" ", "").partition("->")
    terms = lhs.split(",")
    if len(terms) != 2:
        return
    letters = "".join(terms).replace(".", "")
    out = set(rhs) if arrow else {c for c in letters if letters.count(c) == 1}

    def sizes(term: str, shape: tuple[builtins.int, ...]) -> dict[str, builtins.int]:
        head, ell, tail = term.partition("...")
        got = dict(zip(head, shape))
        if ell and tail:
            got.update(zip(tail, shape[-len(tail):]))
        elif not ell:
            got = dict(zip(term, shape))
        return got

    sa, sb = sizes(terms[0], tuple(a.shape)), sizes(terms[1], tuple(b.shape))
    if builtins.any(c not in out and sa[c] != 1 and sb[c] != 1 for c in sa if c in sb):
        raise RuntimeError(f"expected scalar type {D._CPP_NAMES[a.dtype.name]} but found "
                           f"{D._CPP_NAMES[b.dtype.name]}")


def _sublist_term(sublist: Any) -> str:
    def letter(n: Any) -> str:
        if n is Ellipsis:
            return "..."
        if 0 <= n < 26:
            return chr(ord("A") + n)
        if 26 <= n < 52:
            return chr(ord("a") + n - 26)
        raise ValueError("einsum(): subscript in subscript list is not within the valid "
                         "range [0, 52)")
    return "".join(letter(n) for n in sublist)


@functools.lru_cache(maxsize=256)
def _einsum_sums_alone(equation: str) -> builtins.bool:
    """Whether some subscript is summed out of an operand that alone holds it."""
    lhs, arrow, rhs = equation.replace(" ", "").replace("...", "").partition("->")
    terms = lhs.split(",")
    letters = "".join(terms)
    out = set(rhs) if arrow else {c for c in letters if letters.count(c) == 1}
    return builtins.any(
        c not in out and builtins.all(c not in u for u in terms[:i] + terms[i + 1:])
        for i, t in enumerate(terms) for c in t)


_EINSUM_TERM = re.compile(r"[a-zA-Z ]*(?:\.\.\.)?[a-zA-Z ]*")


@functools.lru_cache(maxsize=256)
def _einsum_well_formed(equation: str) -> builtins.bool:
    """Whether each term has only ASCII letters and at most one ellipsis (PyTorch refuses
    other equations that funcgrad.numpy's einsum would take)."""
    lhs, _, rhs = equation.partition("->")
    return builtins.all(_EINSUM_TERM.fullmatch(t) for t in [*lhs.split(","), rhs])


def _einsum_error(equation: str, shapes: list[tuple[builtins.int, ...]]) -> str | None:
    """What PyTorch's einsum says of an equation its operands do not fit (its checks in its
    order: the inputs' subscripts, the operand count, each operand's rank, the output's
    subscripts, then each operand's sizes); None where it finds nothing."""
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    labels: list[list[str]] = [[]]  # "..." stands for an ellipsis
    i = 0
    while i < len(lhs):
        c, op = lhs[i], len(labels) - 1
        if c == ".":
            if "..." in labels[op]:
                return f"found '.' for operand {op} for which an ellipsis was already found"
            if not lhs.startswith("...", i):
                return f"found '.' for operand {op} that is not part of any ellipsis"
            labels[op].append("...")
            i += 2
        elif c == ",":
            if len(labels) == len(shapes):
                return "fewer operands were provided than specified in the equation"
            labels.append([])
        elif c != " ":
            if not c.isascii() or not c.isalpha():
                return (f"invalid subscript given at index {i} in the equation string, "
                        "subscripts must be in [a-zA-Z]")
            labels[op].append(c)
        i += 1
    if len(labels) != len(shapes):
        return "more operands were provided than specified in the equation"
    ell_dims = 0
    for op, (subs, shape) in enumerate(zip(labels, shapes)):
        n = len(subs) - ("..." in subs)
        if "..." in subs:
            ell_dims = builtins.max(ell_dims, len(shape) - n)
            if n > len(shape):
                return (f"the number of subscripts in the equation ({n}) is more than the "
                        f"number of dimensions ({len(shape)}) for operand {op}")
        elif n != len(shape):
            return (f"the number of subscripts in the equation ({n}) does not match the "
                    f"number of dimensions ({len(shape)}) for operand {op} and no ellipsis "
                    "was given")
    if arrow >= 0:
        rhs, seen, ell = equation[arrow + 2:], set(), False
        used = {c for subs in labels for c in subs}
        i = 0
        while i < len(rhs):
            c = rhs[i]
            if c == ".":
                if ell:
                    return "found '.' for output but an ellipsis (...) was already found"
                if not rhs.startswith("...", i):
                    return "found '.' for output that is not part of any ellipsis (...)"
                ell, i = True, i + 2
            elif c != " ":
                if not c.isascii() or not c.isalpha():
                    return (f"invalid subscript given at index {len(lhs) + 2 + i} in the "
                            "equation string, subscripts must be in [a-zA-Z]")
                if c in seen:
                    return f"output subscript {c} appears more than once in the output"
                if c not in used:
                    return (f"output subscript {c} does not appear in the equation for any "
                            "input operand")
                seen.add(c)
            i += 1
    sizes: dict[Any, builtins.int] = {}  # a subscript's size, or an ellipsis axis's
    for op, (subs, shape) in enumerate(zip(labels, shapes)):
        first: dict[str, builtins.int] = {}
        j = 0
        for c in subs:
            if c == "...":
                covered = len(shape) - len(subs) + 1
                for k in range(covered):
                    key, s = ell_dims - covered + k, shape[j]
                    prev = sizes.get(key)
                    if prev is not None and prev not in (s, 1) and s != 1:
                        return (f"dimension {j} covered by ellipsis in operand {op}has size "
                                f"{s} which does not broadcast with previously seen ellipsis "
                                f"with size {prev} for the respective dimension")
                    if prev is None or prev == 1:
                        sizes[key] = s
                    j += 1
                continue
            s = shape[j]
            if c in first:
                if s != shape[first[c]]:
                    return (f"subscript {c} is repeated for operand {op} but the sizes don't "
                            f"match, {s} != {shape[first[c]]}")
            else:
                first[c] = j
                prev = sizes.get(c)
                if prev is not None and prev not in (s, 1) and s != 1:
                    return (f"subscript {c} has size {s} for operand {op} which does not "
                            f"broadcast with previously seen size {prev}")
                if prev is None or prev == 1:
                    sizes[c] = s
            j += 1
    return None


def allclose(a: Tensor, b: Tensor, rtol: builtins.float = 1e-5, atol: builtins.float = 1e-8,
             equal_nan: builtins.bool = False) -> builtins.bool:
    """Whether ``a`` and ``b`` (of one dtype) are elementwise close."""
    return cast(builtins.bool, cast(Any, a).allclose(b, rtol, atol, equal_nan))


def equal(a: Tensor, b: Tensor) -> builtins.bool:
    return a.shape == b.shape and builtins.bool(cast(Any, a == b).all())


# PyTorch's overloads with a Python number first and a Tensor second (Scalar_Tensor):
# the reflected operator of the Tensor computes them.
_SCALAR_FIRST = {"remainder": "__rmod__", "pow": "__rpow__", "sub": "__rsub__",
                 "add": "__radd__", "mul": "__rmul__", "div": "__rtruediv__",
                 "true_divide": "__rtruediv__", "floor_divide": "__rfloordiv__"}


def _method_function(name: str) -> Callable[..., Any]:
    def fn(input: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: A002 - PyTorch's name
        if "out" in kwargs:
            out = kwargs.pop("out")
            res = fn(input, *args, **kwargs)
            return res if out is None else write_out(name, out, res, (input, args, kwargs),
                                                      stacklevel=4)
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
