"""Module backward hooks (``register_full_backward_hook``, ``register_full_backward_pre_hook``).

As in PyTorch, a module with such hooks passes its tensor inputs and outputs through an
identity operation (``BackwardHookFunctionBackward``): the outputs' node sees the gradients
of the outputs (the pre-hooks may replace them), the inputs' node the gradients of the
inputs, where the hooks run with both and may replace the input gradients.
"""

from __future__ import annotations

import functools
import warnings
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from funcgrad.torch._grad_mode import is_grad_enabled
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.autograd.function import Function
from funcgrad.torch.nn import _global_hooks as G


class BackwardHookFunction(Function):
    """The identity whose backward hands the gradients to a callback."""

    @staticmethod
    def forward(ctx: Any, on_backward: Callable[[tuple[Any, ...]], Sequence[Any]],
                *tensors: Tensor) -> tuple[Tensor, ...]:
        ctx.on_backward = on_backward
        # the hooks see None for an output with no gradient (PyTorch's node pre-hook)
        ctx.set_materialize_grads(False)
        return tensors

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        return (None, *ctx.on_backward(grads))


_NO_INPUT_GRAD = ("Full backward hook is firing when gradients are computed with respect to "
                  "module outputs since no inputs require gradients. See https://docs.pytorch."
                  "org/docs/main/generated/torch.nn.Module.html#torch.nn.Module."
                  "register_full_backward_hook for more details.")


def _chain(hooks: Iterable[Callable[..., Any]], grads: tuple[Any, ...], what: str,
           name: str, call: Callable[[Any, tuple[Any, ...]], Any]) -> tuple[Any, ...]:
    """Run ``hooks`` in turn, each seeing the gradients the previous one returned."""
    for hook in list(hooks):
        res = call(hook, grads)
        if res is None:
            continue
        res = tuple(res) if isinstance(res, (tuple, list)) else (res,)
        if len(res) != len(grads):
            raise RuntimeError(f"{what} returned an invalid number of {name}, got {len(res)}, "
                               f"but expected {len(grads)}")
        grads = res
    return grads


class _Call:
    """One call of a hooked module: the gradients of its outputs, kept for the hooks."""

    def __init__(self, module: Any, n_args: int) -> None:
        self.module = module
        self.n_args = n_args
        self.grad_output: tuple[Any, ...] = ()

    def _run_hooks(self, grad_input: tuple[Any, ...]) -> tuple[Any, ...]:
        return _chain(_full_hooks(self.module), grad_input, "Backward hook",
                      "grad_input", lambda h, g: h(self.module, g, self.grad_output))

    def outputs_backward(self, grads: tuple[Any, ...]) -> Sequence[Any]:
        pre = [*G.BACKWARD_PRE.values(), *self.module._backward_pre_hooks.values()]
        grads = _chain(pre, grads, "Backward pre hook",
                       "grad_output", lambda h, g: h(self.module, g))
        self.grad_output = grads
        if self.inputs_hooked:
            return grads
        # No input requires grad: the hooks fire now, with no input gradients (PyTorch's).
        if _full_hooks(self.module):
            warnings.warn(_NO_INPUT_GRAD, stacklevel=2)
            res = self._run_hooks((None,) * self.n_args)
            if any(r is not None for r in res):
                raise RuntimeError("Backward hook for Modules where no input requires gradient "
                                   "should always return None or None for all gradients.")
        return grads

    inputs_hooked = False

    def inputs_backward(self, positions: list[int], grads: tuple[Any, ...]) -> list[Any]:
        grad_input: list[Any] = [None] * self.n_args
        for i, g in zip(positions, grads, strict=True):
            grad_input[i] = g
        new = self._run_hooks(tuple(grad_input))
        return [new[i] for i in positions]


def setup_input_hook(module: Any, args: tuple[Any, ...]) -> tuple[_Call, tuple[Any, ...]]:
    """Attach the module's backward hooks to the tensor inputs, before ``forward`` (as
    PyTorch's ``BackwardHook.setup_input_hook``): the call and the args to pass on."""
    call = _Call(module, len(args))
    if not is_grad_enabled():
        return call, args
    positions = [i for i, a in enumerate(args)
                 if isinstance(a, Tensor) and a.requires_grad]
    if positions and _full_hooks(module):
        call.inputs_hooked = True
        wrapped = BackwardHookFunction.apply(
            lambda grads: call.inputs_backward(positions, grads), *(args[i] for i in positions))
        new_args = list(args)
        for i, w in zip(positions, wrapped, strict=True):
            new_args[i] = w
        args = tuple(new_args)
    return call, args


def setup_output_hook(call: _Call, out: Any) -> Any:
    """Attach the hooks to the module's result, after its forward hooks ran (as PyTorch):
    a tensor or a tuple's tensors; another result is passed on with PyTorch's warning."""
    if not isinstance(out, (Tensor, tuple)):
        warnings.warn("For backward hooks to be called, module output should be a Tensor or a "
                      f"tuple of Tensors but received {type(out)}", stacklevel=3)
        return out
    if not is_grad_enabled():
        return out
    result: Any = out
    single = isinstance(result, Tensor)
    outs = [result] if single else list(result)
    at = [i for i, o in enumerate(outs) if isinstance(o, Tensor) and o.requires_grad]
    if not at:
        return result
    wrapped = BackwardHookFunction.apply(call.outputs_backward, *(outs[i] for i in at))
    for i, w in zip(at, wrapped, strict=True):
        outs[i] = w
    if single:
        return outs[0]
    return tuple(outs) if type(result) is tuple else type(result)(*outs)


def _full_hooks(module: Any) -> list[Callable[..., Any]]:
    """The module's full backward hooks (none where its hooks are the old kind)."""
    if getattr(module, "_is_full_backward_hook", None) is False:
        return []
    return [*G.BACKWARD.values(), *module._backward_hooks.values()]


def attach_non_full(module: Any, args: tuple[Any, ...], result: Any) -> None:
    """``register_backward_hook``'s hooks, as PyTorch attaches them: on the node of the
    first tensor of the result, warning where that node misses some gradients."""
    var = result
    while not isinstance(var, Tensor):
        if isinstance(var, dict):
            var = next(v for v in var.values() if isinstance(v, Tensor))
        else:
            var = var[0]
    grad_fn = var.grad_fn
    if grad_fn is None:
        return
    ref = weakref.ref(module)
    for hook in list(module._backward_hooks.values()):
        grad_fn.register_hook(_wrapped(hook, ref))
    _maybe_warn(args, result, grad_fn)


def _wrapped(hook: Callable[..., Any], ref: Any) -> Callable[..., Any]:
    @functools.wraps(hook)
    def call(*args: Any) -> Any:
        module = ref()
        if module is None:
            raise RuntimeError("You are trying to call the hook of a dead Module!")
        return hook(module, *args)

    return call


_TAIL = "Please use register_full_backward_hook to get the documented behavior."


def _maybe_warn(inputs: Any, result: Any, grad_fn: Any) -> None:
    """PyTorch's FutureWarnings where the old hook's gradients are incomplete."""
    if isinstance(result, Tensor):
        result = (result,)
    elif not (isinstance(result, tuple) and all(isinstance(r, Tensor) for r in result)):
        warnings.warn("Using non-full backward hooks on a Module that does not return a single "
                      "Tensor or a tuple of Tensors is deprecated and will be removed in future "
                      "versions. This hook will be missing some of the grad_output. " + _TAIL,
                      FutureWarning, stacklevel=3)
        return
    if isinstance(inputs, Tensor):
        inputs = (inputs,)
    elif not (isinstance(inputs, tuple) and all(isinstance(i, Tensor) for i in inputs)):
        warnings.warn("Using non-full backward hooks on a Module that does not take as input a "
                      "single Tensor or a tuple of Tensors is deprecated and will be removed in "
                      "future versions. This hook will be missing some of the grad_input. "
                      + _TAIL, FutureWarning, stacklevel=3)
        return
    out_grad_fn = {r.grad_fn for r in result if r.grad_fn is not None}
    if not out_grad_fn or (len(out_grad_fn) == 1 and grad_fn not in out_grad_fn):
        warnings.warn("Using a non-full backward hook when outputs are nested in python data "
                      "structure is deprecated and will be removed in future versions. This "
                      "hook will be missing some grad_output.", FutureWarning, stacklevel=3)
    elif len(out_grad_fn) > 1:
        warnings.warn("Using a non-full backward hook when outputs are generated by different "
                      "autograd Nodes is deprecated and will be removed in future versions. "
                      "This hook will be missing some grad_output. " + _TAIL,
                      FutureWarning, stacklevel=3)
    else:
        inputs_grad_fn = {i.grad_fn for i in inputs if i.grad_fn is not None}
        if inputs_grad_fn != {n[0] for n in grad_fn.next_functions}:
            warnings.warn("Using a non-full backward hook when the forward contains multiple "
                          "autograd Nodes is deprecated and will be removed in future versions. "
                          "This hook will be missing some grad_input. " + _TAIL,
                          FutureWarning, stacklevel=3)
