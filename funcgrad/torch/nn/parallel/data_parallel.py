"""``nn.DataParallel``: a module run on the batch of one process, on one device.

Without a CUDA device it is a thin wrapper, as PyTorch's is there: ``forward`` calls the
wrapped ``module`` (kept as ``.module``, so ``state_dict`` keys read ``module.<name>``).
With CUDA devices the module is moved to ``device_ids[0]``, the inputs are moved there
and the outputs to ``output_device``; the batch is not split across devices (funcgrad
computes the whole batch on the first device: the same numbers PyTorch's replicas give).

>>> import funcgrad.torch as torch
>>> dp = torch.nn.DataParallel(torch.nn.Linear(2, 1))
>>> list(dp.state_dict())
['module.weight', 'module.bias']
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from typing import Any

from funcgrad.torch._device import device as _device
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn.module import Module
from funcgrad.tree_util import tree_map

__all__ = ["DataParallel", "data_parallel"]


def _index(d: Any) -> int:
    if isinstance(d, int):
        return d
    dev = _device(d) if not isinstance(d, _device) else d
    if dev.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {dev}")
    return 0 if dev.index is None else dev.index


def _move(tree: Any, dev: Any) -> Any:
    return tree_map(lambda x: x.to(dev) if isinstance(x, Tensor) else x, tree,
                    is_leaf=lambda x: isinstance(x, Tensor))


def _cuda_devices() -> int:
    from funcgrad.torch import cuda  # noqa: PLC0415

    return cuda.device_count() if cuda.is_available() else 0


class DataParallel(Module):
    """Wrap ``module``; ``forward`` runs it (see the module docstring for devices).

    >>> import funcgrad.torch as torch
    >>> lin = torch.nn.Linear(2, 1)
    >>> dp = torch.nn.DataParallel(lin)
    >>> dp.module is lin, dp.device_ids
    (True, [])
    """

    def __init__(self, module: Module, device_ids: Sequence[Any] | None = None,
                 output_device: Any = None, dim: int = 0) -> None:
        super().__init__()
        n = _cuda_devices()
        if n == 0:
            # As PyTorch without an accelerator: a plain wrapper.
            self.module = module
            self.device_ids: list[int] = []
            return
        ids = list(range(n)) if device_ids is None else [_index(d) for d in device_ids]
        if not ids:
            raise RuntimeError("no available devices were found")
        self.dim = dim
        self.module = module
        self.device_ids = ids
        self.output_device = _index(ids[0] if output_device is None else output_device)
        self.src_device_obj = _device("cuda", ids[0])
        if len(ids) == 1:
            self.module.to(self.src_device_obj)

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        for t in chain(self.module.parameters(), self.module.buffers()):
            if t.device != self.src_device_obj:
                raise RuntimeError(
                    "module must have its parameters and buffers on device "
                    f"{self.src_device_obj} (device_ids[0]) but found one of them on "
                    f"device: {t.device}")
        out = self.module(*_move(inputs, self.src_device_obj),
                          **_move(kwargs, self.src_device_obj))
        return _move(out, _device("cuda", self.output_device))


def data_parallel(module: Module, inputs: Any, device_ids: Sequence[Any] | None = None,
                  output_device: Any = None, dim: int = 0,
                  module_kwargs: dict[str, Any] | None = None) -> Any:
    """``module(*inputs, **module_kwargs)`` as ``DataParallel`` runs it on CUDA devices.
    Without one it raises, as PyTorch's does.

    >>> import funcgrad.torch as torch
    >>> if torch.cuda.is_available():
    ...     torch.nn.parallel.data_parallel(torch.nn.Identity(), torch.ones(2)).shape
    ... else:
    ...     torch.Size([2])
    torch.Size([2])
    """
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    if _cuda_devices() == 0:
        raise RuntimeError("device type could not be determined")
    dp = DataParallel(module, device_ids, output_device, dim)
    return dp(*inputs, **(module_kwargs or {}))
