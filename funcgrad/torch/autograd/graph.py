"""``torch.autograd.graph``: hooks on what the graph saves, gradient edges, multi-tensor
gradient hooks.

``saved_tensors_hooks(pack_hook, unpack_hook)`` sends every tensor a new graph node keeps
for its backward through ``pack_hook``; ``unpack_hook`` gives it back when backward runs
(``save_on_cpu`` keeps them in host memory).

>>> import funcgrad.torch as torch
>>> x = torch.tensor([1.0, 2.0], requires_grad=True)
>>> with torch.autograd.graph.saved_tensors_hooks(lambda t: t * 2, lambda t: t):
...     y = (x * x).sum()
>>> y.backward()
>>> x.grad
tensor([4., 8.])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from funcgrad.torch import _saved_hooks
from funcgrad.torch._graph import BACKWARD_RUNS, AccumulateGrad, GradFn, queue_callback
from funcgrad.torch._tensor import Tensor

__all__ = ["GradientEdge", "Node", "disable_saved_tensors_hooks", "get_gradient_edge",
           "increment_version", "register_multi_grad_hook", "save_on_cpu",
           "saved_tensors_hooks"]


class _NodeMeta(type):
    """Makes every graph node, ``AccumulateGrad`` included, an instance of ``Node``."""

    def __instancecheck__(cls, other: Any) -> bool:
        return isinstance(other, (GradFn, AccumulateGrad))

    def __subclasscheck__(cls, other: type) -> bool:
        return issubclass(other, (GradFn, AccumulateGrad))


class Node(metaclass=_NodeMeta):
    """The type of ``grad_fn`` and of the nodes in ``next_functions``
    (``isinstance(y.grad_fn, Node)``).

    >>> import funcgrad.torch as torch
    >>> isinstance((torch.ones(1, requires_grad=True) * 2).grad_fn, Node)
    True
    """


class GradientEdge(NamedTuple):
    """One input of a graph node: the node and which of its outputs."""

    node: Any
    output_nr: int
    ownership_token: Any = None


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The edge through which ``tensor``'s gradient flows.

    >>> import funcgrad.torch as torch
    >>> get_gradient_edge(torch.ones(1, requires_grad=True) * 2).output_nr
    0
    """
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that "
                           "does not require gradients")
    if tensor.grad_fn is None:
        return GradientEdge(tensor._edge(), 0)
    return GradientEdge(tensor.grad_fn, tensor._out_index)


def increment_version(tensor: Tensor | Sequence[Tensor]) -> None:
    """Count an in-place change made behind autograd's back (``tensor._version`` grows).

    >>> import funcgrad.torch as torch
    >>> t = torch.ones(2); increment_version(t); t._version
    1
    """
    for t in (tensor,) if isinstance(tensor, Tensor) else tensor:
        t._vc[0] += 1


class saved_tensors_hooks:  # noqa: N801 - PyTorch's name
    """Within this context, ``pack_hook(tensor)`` runs for every tensor a new graph node
    saves, and its result is kept instead; ``unpack_hook(kept)`` must give a Tensor back
    when backward needs it.

    >>> import funcgrad.torch as torch
    >>> x = torch.tensor([3.0], requires_grad=True)
    >>> with saved_tensors_hooks(lambda t: t.tolist(), lambda v: torch.tensor(v)):
    ...     y = x.exp()
    >>> torch.allclose(torch.autograd.grad(y, x)[0], y)
    True
    """

    def __init__(self, pack_hook: Callable[[Tensor], Any],
                 unpack_hook: Callable[[Any], Tensor]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        _saved_hooks.push((self.pack_hook, self.unpack_hook))

    def __exit__(self, *exc: object) -> None:
        _saved_hooks.pop()


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 - PyTorch's name
    """Saved tensors are kept in host memory and moved back to their device for backward.

    >>> import funcgrad.torch as torch
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> with save_on_cpu():
    ...     y = (x * x).sum()
    >>> torch.autograd.grad(y, x)[0]
    tensor([2., 4.])
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        # (Host memory is not pinned here: it changes how fast the copy back is, not what
        # it gives.)
        def pack(t: Tensor) -> tuple[Any, Tensor]:
            return t.device, t.cpu()

        def unpack(packed: tuple[Any, Tensor]) -> Tensor:
            device, host = packed
            return host.to(device, non_blocking=pin_memory)

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:  # noqa: N801 - PyTorch's name
    """Within this context, using ``saved_tensors_hooks`` raises ``RuntimeError(error_message)``
    (also on entering it while hooks are active).

    >>> with disable_saved_tensors_hooks("no hooks here"):
    ...     saved_tensors_hooks(lambda t: t, lambda t: t).__enter__()
    Traceback (most recent call last):
    RuntimeError: no hooks here
    """

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        if _saved_hooks.state.stack:
            raise RuntimeError(self.error_message)
        _saved_hooks.state.disabled.append(self.error_message)

    def __exit__(self, *exc: object) -> None:
        _saved_hooks.state.disabled.pop()


class _MultiHandle:
    def __init__(self, handles: list[Any]) -> None:
        self.handles = handles

    def remove(self) -> None:
        for h in self.handles:
            h.remove()


def register_multi_grad_hook(tensors: Sequence[Tensor], fn: Callable[[Any], Any], *,
                             mode: str = "all") -> _MultiHandle:
    """``mode="all"``: ``fn(grads)`` once per backward pass that computes a gradient of any of
    ``tensors``, with ``None`` for those it did not reach; ``mode="any"``: ``fn(grad)`` with
    the first of their gradients computed.

    >>> import funcgrad.torch as torch
    >>> a, b = torch.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
    >>> seen = []
    >>> h = register_multi_grad_hook((a, b), lambda gs: seen.append(gs[1]))
    >>> (a * 2).sum().backward()
    >>> seen
    [None]
    """
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    for t in tensors:
        if not t.requires_grad:
            raise AssertionError("Expected gradient function to be set")
    # The backward pass whose gradients are being collected, and what it gave so far.
    current: dict[str, Any] = {"run": -1, "grads": [None] * len(tensors)}

    def hook_for(i: int) -> Callable[[Tensor], None]:
        def hook(grad: Tensor) -> None:
            run = BACKWARD_RUNS[0]
            if current["run"] != run:
                current["run"] = run
                current["grads"] = [None] * len(tensors)
                if mode == "any":
                    fn(grad)
                else:
                    queue_callback(lambda: fn(tuple(current["grads"])))
            current["grads"][i] = grad

        return hook

    return _MultiHandle([t.register_hook(hook_for(i)) for i, t in enumerate(tensors)])
