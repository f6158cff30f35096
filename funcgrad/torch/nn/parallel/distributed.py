"""``DistributedDataParallel``: one model replica per process, gradients averaged over
the ranks during backward.

At construction rank 0's parameters and buffers are broadcast, so every replica starts
equal. Each parameter gets a post-accumulate hook; parameters are grouped in buckets
(in reverse order of registration, about ``bucket_cap_mb`` each, as PyTorch does) and a
bucket's gradients are all-reduced and averaged, in one message, as soon as all of its
parameters have their gradients. ``no_sync()`` skips the reduction (gradients
accumulate locally) until the first backward after it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from funcgrad import processes
from funcgrad.torch._grad_mode import no_grad
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.distributed import _xp
from funcgrad.torch.nn.module import Module


def _walk_params(outputs: Any) -> set[int]:
    """The ids of the leaf tensors the graph of ``outputs`` reaches."""
    from funcgrad.tree_util import tree_leaves  # noqa: PLC0415

    seen: set[int] = set()
    found: set[int] = set()
    stack = [t.grad_fn for t in tree_leaves(outputs) if isinstance(t, Tensor)
             and t.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None:
            found.add(id(variable))
        for nxt, _ in getattr(node, "next_functions", ()):
            stack.append(nxt)
    return found


class DistributedDataParallel(Module):
    """Wrap ``module`` for data-parallel training over the ranks of the process group.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.distributed as dist
    >>> dist.init_process_group("gloo")          # one process: a world of one
    >>> ddp = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 1))
    >>> ddp(torch.ones(3, 2)).sum().backward()
    >>> ddp.module.weight.grad.shape
    torch.Size([1, 2])
    >>> dist.destroy_process_group()
    """

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None,
                 dim: int = 0, broadcast_buffers: bool = True, process_group: Any = None,
                 bucket_cap_mb: float | None = None, find_unused_parameters: bool = False,
                 check_reduction: bool = False, gradient_as_bucket_view: bool = False,
                 static_graph: bool = False, **_: Any) -> None:
        from funcgrad.torch import distributed as dist  # noqa: PLC0415

        super().__init__()
        if not dist.is_initialized():
            raise ValueError("Default process group has not been initialized, please make "
                             "sure to call init_process_group.")
        self.module = module
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self._params = [p for p in module.parameters() if p.requires_grad]
        self._buckets = self._make_buckets(25.0 if bucket_cap_mb is None else bucket_cap_mb)
        self._bucket_of = {id(p): b for b, bucket in enumerate(self._buckets) for p in bucket}
        self._ready: list[set[int]] = [set() for _ in self._buckets]
        self._unsynced: set[int] = set()
        self._pending = False
        self._sync_state(module)
        self._handles = [p.register_post_accumulate_grad_hook(self._on_grad)
                         for p in self._params]

    def _make_buckets(self, cap_mb: float) -> list[list[Tensor]]:
        cap = cap_mb * 1024 * 1024
        buckets: list[list[Tensor]] = [[]]
        size = 0.0
        for p in reversed(self._params):
            nbytes = float(p._data.nbytes)
            if buckets[-1] and size + nbytes > cap:
                buckets.append([])
                size = 0.0
            buckets[-1].append(p)
            size += nbytes
        return buckets if buckets[0] else []

    def _sync_state(self, module: Module) -> None:
        comm = processes.communicator()
        if comm is None or comm.size == 1:
            return
        with no_grad():
            for t in [*module.parameters(), *module.buffers()]:
                t.copy_(Tensor._from_data(comm.broadcast(t._data, 0)))

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if self._pending and self.require_backward_grad_sync:
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting "
                "a new one. This error indicates that your module has parameters that were "
                "not used in producing loss. You can enable unused parameter detection by "
                "passing the keyword argument `find_unused_parameters=True` to "
                "`torch.nn.parallel.DistributedDataParallel`.")
        if self.broadcast_buffers:
            comm = processes.communicator()
            if comm is not None and comm.size > 1:
                with no_grad():
                    for b in self.module.buffers():
                        b.copy_(Tensor._from_data(comm.broadcast(b._data, 0)))
        out = self.module(*inputs, **kwargs)
        self._ready = [set() for _ in self._buckets]
        if self.require_backward_grad_sync:
            self._pending = bool(self._buckets)
            if self.find_unused_parameters:
                used = _walk_params(out)
                for p in self._params:
                    if id(p) not in used:
                        self._mark(p)
        return out

    def _on_grad(self, p: Tensor) -> None:
        if not self.require_backward_grad_sync:
            self._unsynced.add(id(p))
            return
        self._mark(p)

    def _mark(self, p: Tensor) -> None:
        b = self._bucket_of[id(p)]
        self._ready[b].add(id(p))
        if len(self._ready[b]) == len(self._buckets[b]):
            self._reduce_bucket(self._buckets[b])
            if all(len(r) == len(bk) for r, bk in zip(self._ready, self._buckets)):
                self._pending = False
                self._unsynced.clear()

    def _reduce_bucket(self, bucket: list[Tensor]) -> None:
        comm = processes.communicator()
        if comm is None or comm.size == 1:
            return
        # The gradients' own array module: CUDA tensors stay on the device (NCCL reduces
        # them there), host ones go through MPI.
        xp = _xp(bucket[0]._data) if bucket else np
        # Parameters without a gradient (unused here) take part with zeros, as in PyTorch.
        grads = [xp.zeros(tuple(p.shape), p._data.dtype) if p.grad is None
                 else xp.asarray(p.grad._data) for p in bucket]
        flat = xp.concatenate([g.ravel() for g in grads]) if grads else xp.zeros(0)
        total = comm.allreduce(flat, "sum") / comm.size
        offset = 0
        for p, g in zip(bucket, grads):
            piece = total[offset:offset + g.size].reshape(g.shape).astype(g.dtype, copy=False)
            offset += g.size
            if p.grad is None and not bool(xp.any(piece)):
                continue
            p.grad = Tensor._from_data(xp.array(piece))

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Within the block, backward passes accumulate gradients without reducing them;
        the first backward after it reduces the accumulated sum."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old


__all__ = ["DistributedDataParallel"]
