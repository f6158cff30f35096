"""``Parameter``: a leaf Tensor that a ``Module`` registers as one of its parameters.

>>> import funcgrad.torch as torch
>>> from funcgrad.torch.nn import Parameter
>>> p = Parameter(torch.tensor([1.0, 2.0]))
>>> p
Parameter containing:
tensor([1., 2.], requires_grad=True)
>>> p.is_leaf, p.requires_grad
(True, True)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.core import MetaBuffer
from funcgrad.torch._tensor import Tensor


class Parameter(Tensor):
    """A Tensor that is a module parameter: a leaf, ``requires_grad=True`` by default.

    ``data`` may be a Tensor (its data is shared, detached from any graph), a NumPy
    array (shared) or anything ``funcgrad.tensor`` accepts. Operations on a
    Parameter give plain Tensors.
    """

    __slots__ = ()

    def __init__(self, data: Any = None, requires_grad: bool = True) -> None:
        version = None
        if data is None:
            arr: Any = np.empty((0,), np.float32)
        elif isinstance(data, Tensor):
            arr = data._data
            version = data._vc
        elif isinstance(data, (np.ndarray, MetaBuffer)) or \
                type(data).__module__.startswith("cupy"):
            arr = data
        else:
            from funcgrad.torch._creation import tensor  # noqa: PLC0415

            arr = tensor(data)._data
        super().__init__(arr, requires_grad=requires_grad)
        if version is not None:
            self._vc = version

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo: dict[int, Any]) -> Parameter:
        if id(self) in memo:
            return memo[id(self)]
        data = self._data.copy()
        out = Parameter(data, self.requires_grad)
        if self.grad is not None:
            out.grad = Tensor(self.grad._data.copy())
        memo[id(self)] = out
        return out

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (Parameter, (self._host().copy(), self.requires_grad))


class Buffer(Tensor):
    """A Tensor that a ``Module`` registers as a buffer when assigned as its attribute
    (``persistent=False``: left out of ``state_dict``). It shares ``data``'s memory and
    keeps its ``requires_grad``, cut from any graph.

    >>> import funcgrad.torch as torch
    >>> m = torch.nn.Module()
    >>> m.steps = torch.nn.Buffer(torch.zeros(1))
    >>> [name for name, _ in m.named_buffers()], list(m.state_dict())
    (['steps'], ['steps'])
    """

    __slots__ = ("persistent",)

    def __init__(self, data: Any = None, *, persistent: bool = True) -> None:
        if data is None:
            from funcgrad.torch._creation import empty  # noqa: PLC0415

            data = empty(0)
        elif not isinstance(data, Tensor):
            from funcgrad.torch._creation import tensor  # noqa: PLC0415

            data = tensor(data)
        super().__init__(data._data)
        self._vc = data._vc
        self._inference = data._inference
        self._requires_grad = data.requires_grad
        self.persistent = persistent

    def __deepcopy__(self, memo: dict[int, Any]) -> Buffer:
        if id(self) in memo:
            return memo[id(self)]
        out = Buffer(Tensor(self._data.copy()), persistent=self.persistent)
        out._requires_grad = self._requires_grad
        memo[id(self)] = out
        return out

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (_rebuild_buffer, (self._host().copy(), self.requires_grad, self.persistent))


def _rebuild_buffer(data: Any, requires_grad: bool, persistent: bool) -> Buffer:
    b = Buffer(Tensor(data), persistent=persistent)
    b._requires_grad = requires_grad
    return b

