"""PyTorch's argument and output checks of the ``torch.func`` transforms, with its error
types and texts (``torch/_functorch/eager_transforms.py`` and ``vmap.py``).

The engine's transforms underneath have their own checks, in JAX's words; these run first,
so a PyTorch program sees what PyTorch raises. Arrays (NumPy, funcgrad) are accepted
where PyTorch wants Tensors: the face takes them as an extension.

>>> _slice_argnums((1, 2), -1)
(2,)
>>> _slice_argnums((1, 2), (0, 0))
Traceback (most recent call last):
  ...
RuntimeError: argnums elements must be unique, got (0, 0)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from funcgrad.torch._tensor import Tensor

VJP = "vjp(f, *primals)"
JVP = "jvp(f, primals, tangents)"
GRAD = "grad_and_value(f)(*args)"


def _arraylike(x: Any) -> bool:
    return hasattr(x, "shape") and hasattr(x, "dtype")


def leaves(tree: Any) -> list[Any]:
    """PyTorch's pytree leaves (tuples, lists and dicts are nodes; None is a leaf here,
    which only matters to the messages below)."""
    if isinstance(tree, (tuple, list)):
        return [leaf for x in tree for leaf in leaves(x)]
    if isinstance(tree, dict):
        return [leaf for x in tree.values() for leaf in leaves(x)]
    return [tree]


def treespec(tree: Any, indent: int = 0) -> str:
    """The text of PyTorch's ``TreeSpec`` repr for tuples, lists and dicts."""
    if isinstance(tree, (tuple, list, dict)):
        kind = "dict" if isinstance(tree, dict) else type(tree).__name__
        context = list(tree.keys()) if isinstance(tree, dict) else None
        kids = list(tree.values()) if isinstance(tree, dict) else list(tree)
        body = ""
        if kids:
            indent += 2
            body = treespec(kids[0], indent) + ("," if len(kids) > 1 else "")
            body += ",".join("\n" + " " * indent + treespec(k, indent) for k in kids[1:])
        return f"TreeSpec({kind}, {context}, [{body}])"
    return "*"


def _argnum(argnum: Any, n: int) -> int:
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if 0 <= argnum < n:
        return argnum
    if -n <= argnum < 0:
        return argnum + n
    raise RuntimeError(f"Got argnum={argnum}, but only {n} positional inputs")


def _slice_argnums(args: tuple[Any, ...], argnums: Any) -> tuple[Any, ...]:
    """The arguments ``argnums`` names, with PyTorch's errors for a bad ``argnums``."""
    if not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if isinstance(argnums, int):
        return (args[_argnum(argnums, len(args))],)
    wrapped = tuple(_argnum(a, len(args)) for a in argnums)
    if not wrapped:
        raise RuntimeError("argnums must be non-empty")
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"argnums elements must be unique, got {wrapped}")
    return tuple(args[i] for i in wrapped)


def check_reverse_inputs(args: tuple[Any, ...], argnums: Any) -> None:
    """grad/vjp/jacrev: the differentiated inputs must be floating (or complex) Tensors."""
    chosen = args if argnums is None else _slice_argnums(args, argnums)
    for x in leaves(chosen):
        if isinstance(x, Tensor):
            if not (x.dtype.is_floating_point or x.dtype.is_complex):
                raise RuntimeError("only Tensors of floating point dtype can require gradients")
        elif not _arraylike(x):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")


def check_forward_inputs(args: tuple[Any, ...], argnums: Any, jacobian: bool) -> None:
    """jvp/jacfwd: the primals must be floating (or complex) Tensors. jacfwd meets a
    non-Tensor when it counts elements (PyTorch's AttributeError), jvp names it."""
    chosen = args if argnums is None else _slice_argnums(args, argnums)
    flat = leaves(chosen)
    if not jacobian and not flat:
        raise RuntimeError(f"{JVP}: Expected primals to contain at least one Tensor.")
    for x in flat:
        if isinstance(x, Tensor):
            if not (x.dtype.is_floating_point or x.dtype.is_complex):
                raise ValueError("Expected primal to be floating point or complex, but got: "
                                 f"{x.dtype}")
        elif not _arraylike(x):
            if jacobian:
                raise AttributeError(f"'{type(x).__name__}' object has no attribute 'numel'")
            raise RuntimeError(f"{JVP}: Expected primals to only contain Tensors, got "
                               f"{type(x)}")


def check_real(api: str, tree: Any, is_input: bool) -> None:
    """jacrev/jacfwd refuse complex inputs and outputs."""
    for i, x in enumerate(leaves(tree)):
        if isinstance(x, Tensor) and x.dtype.is_complex:
            which = "inputs" if is_input else "outputs"
            raise RuntimeError(f"{api}: Expected all {which} to be real but received complex "
                               f"tensor at flattened input idx: {i}")


def checked_output(func: Callable[..., Any], api: str, has_aux: bool,
                   jacobian: str | None = None) -> Callable[..., Any]:
    """``func``, raising PyTorch's errors for a bad ``(output, aux)`` pair and for outputs
    that are not (floating) Tensors."""

    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> Any:
        out = func(*args, **kwargs)
        value = out
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError(f"{api}: output of function f should be a tuple: "
                                   "(output, aux) if has_aux is True")
            value = out[0]
        if api == GRAD:
            if not isinstance(value, Tensor) and not _arraylike(value):
                raise RuntimeError(f"{GRAD}: Expected f(*args) to return a Tensor, got "
                                   f"{type(value)}")
            return out
        flat = leaves(value)
        if not flat or flat == [None]:
            raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output "
                               f"(got output = {flat})")
        for o in flat:
            if not isinstance(o, Tensor) and not _arraylike(o):
                raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got "
                                   f"unsupported type {type(o)}")
        if api == VJP:
            for o in flat:
                if isinstance(o, Tensor) and not (o.dtype.is_floating_point or
                                                  o.dtype.is_complex):
                    raise RuntimeError("vjp(f, ...): All outputs of f must be floating-point or "
                                       f"complex Tensors, got Tensor with dtype {o.dtype}")
        if jacobian is not None:
            check_real(jacobian, flat, is_input=False)
        return out

    return run


def _name(func: Any) -> str:
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return getattr(func, "__name__", repr(func))


def _broadcast(prefix: Any, tree: Any) -> list[Any] | None:
    """``prefix`` broadcast over ``tree``'s leaves (None where the structures differ)."""
    if isinstance(prefix, (tuple, list, dict)):
        if type(prefix) is not type(tree) and not (
                isinstance(prefix, tuple) and isinstance(tree, tuple)):
            return None
        if isinstance(prefix, dict):
            if set(prefix) != set(tree):
                return None
            pairs = [(prefix[k], tree[k]) for k in tree]
        else:
            if len(prefix) != len(tree):
                return None
            pairs = list(zip(prefix, tree))
        out: list[Any] = []
        for p, t in pairs:
            sub = _broadcast(p, t)
            if sub is None:
                return None
            out += sub
        return out
    return [prefix] * len(leaves(tree))


def check_vmap(func: Any, in_dims: Any, out_dims: Any, args: tuple[Any, ...]) -> None:
    """PyTorch's checks of vmap's ``in_dims``/``out_dims`` against the arguments."""
    name = _name(func)
    for d in leaves(out_dims):
        if d is not None and not isinstance(d, int):
            raise ValueError(f"vmap({name}, ..., out_dims={out_dims}): `out_dims` must be an "
                             "int, None or a python collection of ints representing where in "
                             "the outputs the vmapped dimension should appear.")
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` "
                         "to be int or a (potentially nested) tuple matching the structure of "
                         f"inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add "
                         "inputs, or you are trying to vmap over a function with no inputs. "
                         "The latter is unsupported.")
    flat_args = leaves(args)
    flat_dims = _broadcast(in_dims, args)
    if flat_dims is None:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not "
                         "compatible with the structure of `inputs`. in_dims has structure "
                         f"{treespec(in_dims)} but inputs has structure {treespec(args)}.")
    sizes = []
    for arg, d in zip(flat_args, flat_dims):
        if d is not None and not isinstance(d, int):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} "
                             "for an input but in_dim must be either an integer dimension or "
                             "None.")
        if d is None:
            continue
        if not isinstance(arg, Tensor) and not _arraylike(arg):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} "
                             f"for an input but the input is of type {type(arg)}. We cannot "
                             "vmap over non-Tensor arguments, please use None as the "
                             "respective in_dim")
        nd = len(arg.shape)
        if d < -nd or d >= nd:
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} "
                             f"for some input, but that input is a Tensor of dimensionality "
                             f"{nd} so expected in_dim to satisfy -{nd} <= in_dim < {nd}.")
        sizes.append(int(arg.shape[d]))
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")


def pprint(tree: Any) -> str:
    """PyTorch's ``treespec_pprint`` of a tree's structure: ``(*, {'b': *})``."""
    if isinstance(tree, tuple):
        body = ", ".join(pprint(x) for x in tree)
        return f"({body},)" if len(tree) == 1 else f"({body})"
    if isinstance(tree, list):
        return "[" + ", ".join(pprint(x) for x in tree) + "]"
    if isinstance(tree, dict):
        return "{" + ", ".join(f"{k!r}: {pprint(v)}" for k, v in tree.items()) + "}"
    return "*"


def _same_structure(a: Any, b: Any) -> bool:
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(
            _same_structure(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(
            _same_structure(a[k], b[k]) for k in a)
    return not isinstance(b, (tuple, list, dict))


def cotangents(ct: Any, out: Any) -> Any:
    """``vjp_fn``'s cotangents checked against the outputs as PyTorch checks them (the
    structure first, then ``autograd.grad``'s checks of each ``grad_output``), None taken as
    ones for a one-element output and each Tensor cast to its output's dtype."""
    if not _same_structure(ct, out):
        raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree "
                           "structure of outputs to the function. cotangents: "
                           f"{pprint(ct)}, primal output: {pprint(out)}")
    grads, outs = leaves(ct), leaves(out)
    ready = []
    for g, o in zip(grads, outs):
        if g is None:
            if o.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            ready.append(o.new_ones(o.shape).detach())
            continue
        if not isinstance(g, Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got "
                            f"{type(g).__name__}")
        # PyTorch's messages find the index with list.index (so a Tensor's == can raise)
        if tuple(g.shape) != tuple(o.shape):
            raise RuntimeError(f"Mismatch in shape: grad_output[{grads.index(g)}] has a shape "
                               f"of {g.shape} and output[{outs.index(o)}] has a shape of "
                               f"{o.shape}.")
        if g.dtype.is_complex != o.dtype.is_complex:
            raise RuntimeError("For complex Tensors, both grad_output and output are required "
                               "to have the same dtype. Mismatch in dtype: grad_output["
                               f"{grads.index(g)}] has a dtype of {g.dtype} and output["
                               f"{outs.index(o)}] has a dtype of {o.dtype}.")
        ready.append(g if g.dtype == o.dtype else g.to(o.dtype))
    return _rebuilt(ct, iter(ready))


def _rebuilt(tree: Any, it: Any) -> Any:
    if isinstance(tree, (tuple, list)):
        return type(tree)(_rebuilt(x, it) for x in tree)
    if isinstance(tree, dict):
        return {k: _rebuilt(v, it) for k, v in tree.items()}
    return next(it)
