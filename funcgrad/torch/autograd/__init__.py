"""``torch.autograd``: ``grad``, ``backward``, the grad modes and the graph's node types.

Every gradient goes through the one reverse engine (``funcgrad.transforms.reverse``);
see ``funcgrad.torch._graph`` for how PyTorch's graph is kept on it.

>>> import funcgrad.torch as torch
>>> x = torch.tensor([1.0, 2.0], requires_grad=True)
>>> (g,) = torch.autograd.grad((x * x).sum(), [x])
>>> g
tensor([2., 4.])
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator, Mapping
from typing import Any, overload

from funcgrad.torch._grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from funcgrad.torch._graph import AccumulateGrad, GradFn, run_backward
from funcgrad.torch._tensor import Tensor, root_grads
from funcgrad.torch.autograd.anomaly_mode import detect_anomaly, set_detect_anomaly
from funcgrad.torch.autograd.function import (
    Function,
    FunctionCtx,
    InplaceFunction,
    NestedIOFunction,
    once_differentiable,
)
from funcgrad.torch.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck

Node = GradFn


_given_inputs = [0]


@contextlib.contextmanager
def _inputs_given() -> Iterator[None]:
    """A backward pass that returns the gradients of given inputs (``grad``, or
    ``backward(inputs=...)``): a reentrant checkpoint cannot run inside one."""
    _given_inputs[0] += 1
    try:
        yield
    finally:
        _given_inputs[0] -= 1


def _is_checkpoint_valid() -> bool:
    """Whether the running backward pass lets a reentrant checkpoint run (PyTorch's
    ``torch.autograd._is_checkpoint_valid``)."""
    return _given_inputs[0] == 0


@overload
def grad(outputs: Any, inputs: dict[str, Any], grad_outputs: Any = None,
         retain_graph: bool | None = None, create_graph: bool = False, only_inputs: bool = True,
         allow_unused: bool | None = None, is_grads_batched: bool = False,
         materialize_grads: bool = False) -> dict[str, Any]: ...


@overload
def grad(outputs: Any, inputs: Any, grad_outputs: Any = None,
         retain_graph: bool | None = None, create_graph: bool = False, only_inputs: bool = True,
         allow_unused: bool | None = None, is_grads_batched: bool = False,
         materialize_grads: bool = False) -> tuple[Any, ...]: ...


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None, retain_graph: bool | None = None,
         create_graph: bool = False, only_inputs: bool = True, allow_unused: bool | None = None,
         is_grads_batched: bool = False, materialize_grads: bool = False
         ) -> tuple[Any, ...] | dict[str, Any]:
    """Gradients of ``outputs`` with respect to ``inputs`` (returned, not accumulated).

    As in PyTorch, ``inputs`` may be a dict (``dict(model.named_parameters())``), and then the
    gradients come back as a dict with its keys; ``only_inputs`` is deprecated and ignored.

    >>> import funcgrad.torch as torch
    >>> x = torch.tensor(3.0, requires_grad=True)
    >>> (dx,) = torch.autograd.grad(x ** 3, x, create_graph=True)
    >>> torch.autograd.grad(dx, x)
    (tensor(18.),)
    """
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    outs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    if isinstance(inputs, Tensor):
        ins = [inputs]
    elif type(inputs) is dict:
        ins = list(inputs.values())
    elif isinstance(inputs, Mapping):
        raise TypeError(f"`inputs` argument to `grad()` must be a dict, not "
                        f"{type(inputs).__name__}. Other Mapping types are not supported.")
    else:
        ins = list(inputs)
    if not ins:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). "
                      "To accumulate gradient for other parts of the graph, please use "
                      "torch.autograd.backward.", FutureWarning, stacklevel=2)
    found = _grads(outs, ins, grad_outputs, retain_graph, create_graph, allow_unused,
                   is_grads_batched, materialize_grads)
    if type(inputs) is dict:
        return dict(zip(inputs.keys(), found, strict=True))
    return found


def _grads(outs: list[Tensor], ins: list[Tensor], grad_outputs: Any,
           retain_graph: bool | None, create_graph: bool, allow_unused: bool | None,
           is_grads_batched: bool, materialize_grads: bool) -> tuple[Any, ...]:
    """``grad``'s gradients as a tuple, one per input tensor."""
    for t in ins:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    if is_grads_batched:
        return _batched_grad(outs, ins, grad_outputs, retain_graph, create_graph, allow_unused,
                             materialize_grads)
    gs = root_grads(outs, grad_outputs)
    retain = create_graph if retain_graph is None else retain_graph
    with _inputs_given():
        res = run_backward(outs, gs, retain, create_graph, inputs=ins)
    assert res is not None
    result: list[Any] = []
    for i, r in enumerate(res):
        if r is None:
            if materialize_grads:
                from funcgrad.torch._creation import zeros_like  # noqa: PLC0415

                result.append(zeros_like(ins[i], requires_grad=create_graph))
                continue
            if not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior."
                )
            result.append(None)
        else:
            result.append(r)
    return tuple(result)


def _batched_grad(outs: list[Tensor], ins: list[Tensor], grad_outputs: Any,
                  retain_graph: bool | None, create_graph: bool, allow_unused: bool | None,
                  materialize_grads: bool) -> tuple[Any, ...]:
    """``grad(..., is_grads_batched=True)``: the first axis of every ``grad_outputs`` entry
    is a batch of seeds, and each input's gradient gets that batch axis in front.

    PyTorch vmaps its backward; here one backward runs per seed on the retained graph, which
    gives the same values (and, with ``create_graph``, a graph through ``stack``)."""
    from funcgrad.torch._creation import zeros_like  # noqa: PLC0415
    from funcgrad.torch._functions import stack  # noqa: PLC0415

    seeds = ([grad_outputs] if isinstance(grad_outputs, Tensor) or grad_outputs is None
             else list(grad_outputs))
    seeds += [None] * (len(outs) - len(seeds))
    for i, (o, g) in enumerate(zip(outs, seeds)):
        if g is None:
            if o.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            raise ValueError("vmap(vjp, in_dims=0, ...)(<inputs>): Got in_dim=0 for some input, "
                             "but that input is a Tensor of dimensionality 0 so expected in_dim "
                             "to satisfy 0 <= in_dim < 0.")
        if not isinstance(g, Tensor) or g.dim() == 0 or tuple(g.shape[1:]) != tuple(o.shape):
            shape = g.shape[2:] if isinstance(g, Tensor) else ()
            # PyTorch's message shows the seed's shape past its first two axes.
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each grad_output "
                "as the batch dimension. The sizes of the remaining dimensions are expected to "
                "match the shape of corresponding output, but a mismatch was detected: "
                f"grad_output[{i}] has a shape of {shape} and output[{i}] has a shape of "
                f"{o.shape}. If you only want some tensors in `grad_output` to be considered "
                "batched, consider using vmap.")
    given: list[Tensor] = [g for g in seeds if isinstance(g, Tensor)]
    sizes = [int(g.shape[0]) for g in given]
    if len(set(sizes)) > 1:
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    if sizes[0] == 0:
        raise IndexError("index 0 is out of bounds for dimension 0 with size 0")
    retain = create_graph if retain_graph is None else retain_graph
    per_seed = [_grads(outs, ins, [g[b] for g in given],
                       True if b < sizes[0] - 1 else retain, create_graph, True, False, False)
                for b in range(sizes[0])]
    result: list[Any] = []
    for i, t in enumerate(ins):
        found = [r[i] for r in per_seed]
        if all(r is None for r in found):
            if materialize_grads:
                # PyTorch materializes an unused input's gradient without the batch axis.
                result.append(zeros_like(t, requires_grad=create_graph))
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior.")
            else:
                result.append(None)
            continue
        result.append(stack([zeros_like(t) if r is None else r for r in found]))
    return tuple(result)


def backward(tensors: Any, grad_tensors: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs: Any = None) -> None:
    """Accumulate the gradients of ``tensors`` into the leaves' ``.grad``.

    >>> import funcgrad.torch as torch
    >>> x = torch.tensor([1.0], requires_grad=True)
    >>> torch.autograd.backward([x * 3])
    >>> x.grad
    tensor([3.])
    """
    from funcgrad.torch._grad_mode import check_backward_outside_transforms  # noqa: PLC0415

    check_backward_outside_transforms()
    outs = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    gs = root_grads(outs, grad_tensors)
    retain = create_graph if retain_graph is None else retain_graph
    if inputs is not None:
        ins = [inputs] if isinstance(inputs, Tensor) else list(inputs)
        with _inputs_given():
            res = run_backward(outs, gs, retain, create_graph, inputs=ins)
        assert res is not None
        for t, g in zip(ins, res):
            if g is not None:
                t.grad = g if t.grad is None else t.grad + g
        return
    run_backward(outs, gs, retain, create_graph)


__all__ = ["AccumulateGrad", "Node", "backward", "detect_anomaly", "enable_grad", "grad",
           "inference_mode", "is_grad_enabled", "no_grad", "set_detect_anomaly",
           "set_grad_enabled"]
from funcgrad.torch.autograd import anomaly_mode, function, functional  # noqa: E402 - after grad

__all__ += ["Function", "FunctionCtx", "GradcheckError", "InplaceFunction", "NestedIOFunction",
            "anomaly_mode", "function", "functional", "gradcheck", "gradgradcheck",
            "once_differentiable"]
from funcgrad.torch.autograd import (  # noqa: E402
    forward_ad,
    grad_mode,
    graph,
    profiler,
    profiler_util,
)
from funcgrad.torch.autograd.grad_mode import set_multithreading_enabled  # noqa: E402
from funcgrad.torch.autograd.variable import Variable  # noqa: E402


def variable(*args: Any, **kwargs: Any) -> Any:
    """Removed from PyTorch long ago; calling it raises PyTorch's error.

    >>> import funcgrad.torch as torch
    >>> torch.autograd.variable(1.0)
    Traceback (most recent call last):
    RuntimeError: torch.autograd.variable(...) is deprecated, use torch.tensor(...) instead
    """
    raise RuntimeError("torch.autograd.variable(...) is deprecated, use torch.tensor(...) "
                       "instead")


# As in PyTorch, which keeps ``variable.Variable`` for code generated against the module
# name the function shadows.
variable.Variable = Variable  # type: ignore[attr-defined]

__all__ += ["Variable", "forward_ad", "grad_mode", "graph", "profiler", "profiler_util",
            "set_multithreading_enabled", "variable"]
