"""``torch.utils.checkpoint``: trade compute for memory by recomputing a segment in backward.

``checkpoint(fn, *args, use_reentrant=True)`` runs ``fn`` without recording its graph (its
activations are not kept) and records one ``CheckpointFunctionBackward`` node; backward runs
``fn`` again with grad on and backpropagates through it. The random draws of the first run
(dropout masks, on the CPU or a GPU) are replayed exactly in the recomputation, as
``preserve_rng_state=True`` does in PyTorch. ``use_reentrant=False`` runs ``fn`` with its
graph recorded (the same ``grad_fn`` as PyTorch's) but, as PyTorch, keeps none of the
tensors its nodes save: the first backward read of one runs ``fn`` again (random draws
replayed) and reads the recomputed ones. Both recompute in the autocast state the forward
ran in, as PyTorch's.

>>> import funcgrad.torch as torch
>>> from funcgrad.torch.utils.checkpoint import checkpoint
>>> lin = torch.nn.Linear(3, 2)
>>> x = torch.ones(4, 3, requires_grad=True)
>>> y = checkpoint(lin, x, use_reentrant=True)
>>> y.grad_fn.name()
'CheckpointFunctionBackward'
>>> y.sum().backward()
>>> lin.weight.grad.tolist()
[[4.0, 4.0, 4.0], [4.0, 4.0, 4.0]]
"""

from __future__ import annotations

import contextlib
import enum
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from funcgrad.torch import _draws
from funcgrad.torch._grad_mode import enable_grad, no_grad
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.amp.autocast_mode import (
    autocast,
    get_autocast_dtype,
    is_autocast_cache_enabled,
    is_autocast_enabled,
)
from funcgrad.torch.autograd import _is_checkpoint_valid
from funcgrad.torch.autograd import backward as _backward
from funcgrad.torch.autograd.function import Function

__all__ = ["CheckpointError", "CheckpointFunction", "CheckpointPolicy", "check_backward_validity",
           "checkpoint", "checkpoint_sequential", "detach_variable", "noop_context_fn",
           "set_checkpoint_debug_enabled", "set_checkpoint_early_stop"]


class CheckpointError(RuntimeError):
    """A checkpointed segment recomputed differently (PyTorch's ``CheckpointError``)."""


class CheckpointPolicy(enum.Enum):
    """What selective checkpointing does with an operation's output."""

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3


def noop_context_fn() -> tuple[contextlib.nullcontext[None], contextlib.nullcontext[None]]:
    """The default ``context_fn``: no context around the forward or the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """The tensors of ``inputs`` detached, each keeping its ``requires_grad``.

    >>> import funcgrad.torch as torch
    >>> (d,) = detach_variable((torch.ones(1, requires_grad=True) * 2,))
    >>> d.is_leaf, d.requires_grad
    (True, True)
    """
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for inp in inputs:
        if not isinstance(inp, Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


def check_backward_validity(inputs: Iterable[Any]) -> None:
    """Warn when no tensor input requires grad (the checkpoint then has no gradients)."""
    if not any(isinstance(inp, Tensor) and inp.requires_grad for inp in inputs):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=3)


class _Replayed:
    """The random draws of a segment's first run, handed back in order when it reruns."""

    def __init__(self) -> None:
        self.values: list[Any] = []

    @contextlib.contextmanager
    def first_run(self) -> Iterator[None]:
        outer = _draws._now.sink  # a torch.compile staging around us keeps its own record

        def keep(draw: _draws.Draw) -> Any:
            value = outer(draw) if outer is not None else draw.replay()
            self.values.append(value)
            return value

        with _draws.recording(keep):
            yield

    @contextlib.contextmanager
    def rerun(self) -> Iterator[None]:
        it = iter(self.values)

        def again(draw: _draws.Draw) -> Any:
            value = next(it, None)
            if value is None:
                raise CheckpointError("torch.utils.checkpoint: the recomputation drew more "
                                      "random numbers than the original forward")
            return value

        with _draws.recording(again):
            yield


def _autocast_state() -> list[dict[str, Any]]:
    """The autocast regions (CUDA's and the CPU's) the segment's forward runs in, which its
    recomputation runs in again (PyTorch's ``_get_autocast_kwargs``)."""
    return [{"device_type": kind, "enabled": is_autocast_enabled(kind),
             "dtype": get_autocast_dtype(kind), "cache_enabled": is_autocast_cache_enabled()}
            for kind in ("cuda", "cpu")]


@contextlib.contextmanager
def _in_autocast(state: list[dict[str, Any]]) -> Iterator[None]:
    with contextlib.ExitStack() as regions:
        for kwargs in state:
            regions.enter_context(autocast(**kwargs))
        yield


class CheckpointFunction(Function):
    """The reentrant checkpoint: the forward without a graph, recomputed in backward."""

    @staticmethod
    def forward(ctx: Any, run_function: Callable[..., Any], preserve_rng_state: bool,
                *args: Any) -> Any:
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.replayed = _Replayed() if preserve_rng_state else None
        ctx.autocast_state = _autocast_state()
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*(a for a in args if isinstance(a, Tensor)))
        with no_grad(), (ctx.replayed.first_run() if ctx.replayed is not None
                         else contextlib.nullcontext()):
            return run_function(*args)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        if not _is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() "
                "or passing an `inputs` parameter to .backward(). To resolve this error, you "
                "can either set use_reentrant=False, or call .backward() without passing the "
                "`inputs` argument.")
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors, strict=True):
            inputs[i] = t
        detached = detach_variable(tuple(inputs))
        with enable_grad(), _in_autocast(ctx.autocast_state), (
                ctx.replayed.rerun() if ctx.replayed is not None else contextlib.nullcontext()):
            outputs = ctx.run_function(*detached)
        outs = (outputs,) if isinstance(outputs, Tensor) else tuple(outputs)
        pairs = [(o, g) for o, g in zip(outs, grads, strict=False)
                 if isinstance(o, Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is "
                               "not necessary")
        _backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None, *(inp.grad if isinstance(inp, Tensor) else None
                              for inp in detached))


_REENTRANT_HINT = (
    "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
    "exception. use_reentrant=False is recommended, but if you need to preserve the current "
    "default behavior, you can pass use_reentrant=True. Refer to docs for more details on "
    "the differences between the two variants.")


def checkpoint(function: Callable[..., Any], *args: Any, use_reentrant: bool | None = None,
               context_fn: Callable[[], Any] = noop_context_fn,
               determinism_check: str = "default", debug: bool = False,
               early_stop: bool = True, **kwargs: Any) -> Any:
    """``function(*args)``, its activations recomputed in backward instead of kept.

    >>> import funcgrad.torch as torch
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> checkpoint(torch.sin, x, use_reentrant=False).grad_fn.name()
    'SinBackward0'
    """
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed "
                      "explicitly. " + _REENTRANT_HINT, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    return _without_reentrant(function, preserve, context_fn, args, kwargs)


def _without_reentrant(function: Callable[..., Any], preserve: bool,
                       context_fn: Callable[[], Any], args: tuple[Any, ...],
                       kwargs: dict[str, Any]) -> Any:
    """PyTorch's non-reentrant checkpoint: ``function`` runs with its graph recorded while a
    pair of saved-tensor hooks keeps only the position of each saved tensor; unpacking one
    reruns ``function`` on detached inputs (its draws replayed, under the recompute
    context), its saved tensors taken in the same order, and hands back the recomputed
    tensor (each recomputed tensor is read once: a second backward recomputes again)."""
    from funcgrad.torch.autograd.graph import saved_tensors_hooks  # noqa: PLC0415

    forward_context, recompute_context = context_fn()
    replayed = _Replayed() if preserve else None
    autocast_state = _autocast_state()
    recomputed: dict[int, Tensor] = {}
    count = [0]

    def pack(_: Tensor) -> int:
        count[0] += 1
        return count[0] - 1

    def recompute() -> None:
        found: list[Tensor] = []

        def keep(t: Tensor) -> int:
            found.append(t)
            return len(found) - 1

        inputs = [a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a
                  for a in args]
        with enable_grad(), _in_autocast(autocast_state), recompute_context, \
                saved_tensors_hooks(keep, found.__getitem__), \
                (replayed.rerun() if replayed is not None else contextlib.nullcontext()):
            function(*inputs, **kwargs)
        if len(found) < count[0]:
            raise CheckpointError("torch.utils.checkpoint: A different number of tensors was "
                                  f"saved during the original forward and recomputation.\n"
                                  f"Number of tensors saved during forward: {count[0]}\n"
                                  f"Number of tensors saved during recomputation: "
                                  f"{len(found)}.")
        recomputed.update(enumerate(found))

    def unpack(k: int) -> Tensor:
        if k not in recomputed:
            recompute()
        return recomputed.pop(k)

    with forward_context, saved_tensors_hooks(pack, unpack), (
            replayed.first_run() if replayed is not None else contextlib.nullcontext()):
        return function(*args, **kwargs)


def checkpoint_sequential(functions: Any, segments: int, input: Any,  # noqa: A002
                          use_reentrant: bool | None = None, **kwargs: Any) -> Any:
    """Run ``functions`` (a Sequential or a list) in order, checkpointing all segments but
    the last of ``segments`` equal ones.

    >>> import funcgrad.torch as torch
    >>> net = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU(), torch.nn.Linear(2, 1))
    >>> checkpoint_sequential(net, 2, torch.ones(3, 2), use_reentrant=True).shape
    torch.Size([3, 1])
    """
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant "
                      "parameter should be passed explicitly. In version 2.9 we will raise an "
                      "exception if use_reentrant is not passed. use_reentrant=False is "
                      "recommended, but if you need to preserve the current default "
                      "behavior, you can pass use_reentrant=True. Refer to docs for more "
                      "details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    fns: Sequence[Any] = list(functions.children()) if hasattr(functions, "children") \
        else list(functions)

    def run(start: int, end: int) -> Callable[[Any], Any]:
        def forward(x: Any) -> Any:
            for j in range(start, end + 1):
                x = fns[j](x)
            return x

        return forward

    size = len(fns) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant,  # noqa: A001
                           preserve_rng_state=preserve)
    return run(end + 1, len(fns) - 1)(input)


_debug = [False]
_early_stop = [True]


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None) -> Iterator[None]:
    """Context manager for ``checkpoint(debug=...)``'s global default."""
    before, _debug[0] = _debug[0], bool(enabled)
    try:
        yield
    finally:
        _debug[0] = before


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool) -> Iterator[None]:
    """Context manager for non-reentrant checkpoint's early stop (its recomputation)."""
    before, _early_stop[0] = _early_stop[0], bool(enable)
    try:
        yield
    finally:
        _early_stop[0] = before
