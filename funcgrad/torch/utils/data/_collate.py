"""``default_collate`` and ``default_convert``: how samples become batches, as PyTorch's.

Tensors are stacked; NumPy arrays and numbers become tensors (Python floats float64,
ints int64); strings and bytes stay a list; dicts, named tuples and sequences are
collated field by field (a tuple of fields comes back as a list, as in PyTorch).

>>> from funcgrad.torch.utils.data import default_collate
>>> default_collate([(1, "a"), (2, "b")])
[tensor([1, 2]), ('a', 'b')]
"""

from __future__ import annotations

import collections.abc
from typing import Any, cast

import numpy as np

from funcgrad.torch._tensor import Tensor

__all__ = ["default_collate", "default_convert"]

_ERR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
        "found {}")


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(x, "_fields")


def _rebuild_mapping(elem: Any, items: dict[Any, Any]) -> Any:
    try:
        return type(elem)(items)
    except TypeError:
        # A mapping type whose constructor takes something else.
        return items


def default_collate(batch: Any) -> Any:
    """Merge a list of samples into a batch (see the module docstring).

    >>> import funcgrad.torch as torch
    >>> default_collate([{"x": torch.ones(2), "y": 1.5}, {"x": torch.zeros(2), "y": 2.0}])
    {'x': tensor([[1., 1.],
            [0., 0.]]), 'y': tensor([1.5000, 2.0000], dtype=torch.float64)}
    """
    from funcgrad.torch._creation import as_tensor, tensor  # noqa: PLC0415
    from funcgrad.torch._dtypes import float64  # noqa: PLC0415
    from funcgrad.torch._functions import stack  # noqa: PLC0415

    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(batch, 0)
    if type(elem).__module__ == "numpy" and not isinstance(elem, (np.str_, np.bytes_)):
        arr = np.asarray(elem)
        if arr.dtype.kind in "UOSV":
            raise TypeError(_ERR.format(arr.dtype))
        if isinstance(elem, np.ndarray) and elem.shape != ():
            return default_collate([as_tensor(np.asarray(b)) for b in batch])
        return as_tensor(np.asarray(batch))
    if isinstance(elem, float):
        return tensor(batch, dtype=float64)
    if isinstance(elem, int):
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, {k: default_collate([d[k] for d in batch]) for k in elem})
    if _is_namedtuple(elem):
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        size = len(next(it))
        if not all(len(e) == size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(s) for s in transposed]
        try:
            return cast(Any, type(elem))([default_collate(s) for s in transposed])
        except TypeError:
            return [default_collate(s) for s in transposed]
    raise TypeError(_ERR.format(type(elem)))


def default_convert(data: Any) -> Any:
    """Turn NumPy arrays (and NumPy scalars) inside ``data`` into tensors, keeping the
    structure (what ``DataLoader`` does when ``batch_size=None``).

    >>> import numpy as np
    >>> default_convert({"a": np.array([1, 2]), "b": "s"})
    {'a': tensor([1, 2]), 'b': 's'}
    """
    from funcgrad.torch._creation import as_tensor  # noqa: PLC0415

    if isinstance(data, Tensor):
        return data
    if type(data).__module__ == "numpy" and not isinstance(data, (np.str_, np.bytes_)):
        arr = np.asarray(data)
        if arr.dtype.kind in "UOSV":
            return data
        return as_tensor(arr)
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {k: default_convert(v) for k, v in data.items()})
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence):
        try:
            return cast(Any, type(data))([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data
