"""View tracking for ``torch.func.functionalize``: in-place writes through views of traced
Tensors reach their base.

Eagerly a view shares its base's NumPy memory, so writing through it changes the base.
Under a transform a Tensor holds a tracer, an immutable value: a view is then a new value
and an in-place op on it rebinds only the view. While a ``Tracker`` is active (inside a
functionalized function), each view op records where its elements sit in its root
tensor's flattened elements; an in-place op on a traced view scatters the new values into
the root (out of place, so derivative rules see an ordinary ``index_update``) and re-reads
every live view of that root from it, which is PyTorch's functionalization in miniature.

>>> from funcgrad.torch._functionalize import Tracker, active, tracking
>>> with tracking(Tracker()):
...     active() is not None
True
>>> active() is None
True
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from funcgrad.core import Tracer

# PyTorch's error for a write to an expanded (self-overlapping) tensor.
_OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to "
            "a single memory location. Please clone() the tensor before performing the "
            "operation.")


class _Local(threading.local):
    def __init__(self) -> None:
        self.stack: list[Tracker] = []


_local = _Local()


def active() -> Tracker | None:
    """The tracker of the innermost functionalized call on this thread, if any."""
    stack = _local.stack
    return stack[-1] if stack else None


@contextmanager
def tracking(tracker: Tracker) -> Iterator[Tracker]:
    """Track views with ``tracker`` inside the block (nested blocks stack)."""
    _local.stack.append(tracker)
    try:
        yield tracker
    finally:
        _local.stack.pop()


def _strided(pos: np.ndarray) -> tuple[int, ...]:
    """The element strides of a view whose root positions are ``pos`` (views compose
    strided layouts, so one step along each axis gives them)."""
    if pos.size == 0:
        return tuple(0 for _ in pos.shape)
    origin = pos[(0,) * pos.ndim] if pos.ndim else pos
    strides = []
    for k, n in enumerate(pos.shape):
        step = (0,) * k + (1,) + (0,) * (pos.ndim - k - 1)
        strides.append(int(pos[step]) - int(origin) if n > 1 else 0)
    return tuple(strides)


def _reshape_is_view(pos: np.ndarray, new_shape: tuple[int, ...]) -> bool:
    """Whether PyTorch's ``reshape`` of a tensor laid out as ``pos`` gives a view (the
    strides allow it) rather than a copy: NumPy's rule for setting a shape is the same."""
    strides = _strided(pos)
    item = np.dtype(np.int64).itemsize
    probe = np.lib.stride_tricks.as_strided(np.zeros(1, np.int64), pos.shape,
                                            tuple(s * item for s in strides))
    try:
        probe.view().shape = new_shape
    except (AttributeError, ValueError):
        return False
    return True


class Tracker:
    """The views made during one functionalized call, by the root tensor they alias."""

    def __init__(self) -> None:
        # id(view) -> (the view, weakly; its root; its positions in the root's elements)
        self._views: dict[int, tuple[weakref.ref[Any], Any, np.ndarray]] = {}
        # id(root) -> its live views, weakly
        self._by_root: dict[int, list[weakref.ref[Any]]] = {}

    def _forget(self, key: int) -> None:
        entry = self._views.pop(key, None)
        if entry is not None:
            views = self._by_root.get(id(entry[1]), [])
            views[:] = [r for r in views if r() is not None]

    def view(self, op: str, fn: Callable[[Any], Any], out: Any, base: Any) -> None:
        """``out = fn(base)`` was made by a view op named ``op`` (PyTorch's node name)."""
        if out is base or op == "Index":  # advanced indexing copies, as in PyTorch
            return
        traced = isinstance(out._data, Tracer) or isinstance(base._data, Tracer)
        if not traced and not out._is_view:
            return  # a concrete copy (NumPy said the memory is not shared)
        entry = self._views.get(id(base))
        if entry is not None and entry[0]() is base:
            root, pos = entry[1], entry[2]
        else:
            root, pos = base, np.arange(int(np.prod(base._data.shape)),
                                        dtype=np.int64).reshape(base._data.shape)
        if op == "View" and traced and not _reshape_is_view(pos, tuple(out._data.shape)):
            return
        from funcgrad.torch._graph import X64  # noqa: PLC0415

        with X64:
            out_pos = np.asarray(fn(pos))
        if out_pos.shape != tuple(out._data.shape):
            return
        key = id(out)

        def dropped(_ref: weakref.ref[Any]) -> None:
            self._forget(key)

        self._views[key] = (weakref.ref(out, dropped), root, out_pos.astype(np.int64))
        self._by_root.setdefault(id(root), []).append(weakref.ref(out))

    def mutated(self, t: Any) -> None:
        """``t`` was written in place: bring its root and the root's other views up to date."""
        if not isinstance(t._data, Tracer):
            return  # NumPy memory: the root and every view already see the write
        import funcgrad.numpy as fnp  # noqa: PLC0415
        from funcgrad.torch._graph import X64  # noqa: PLC0415

        written = t._data
        entry = self._views.get(id(t))
        root: Any
        with X64:
            if entry is not None and entry[0]() is t:
                root, pos = entry[1], entry[2]
                flat = pos.reshape(-1)
                if np.unique(flat).size != flat.size:
                    raise RuntimeError(_OVERLAP)
                shape = root._data.shape
                root._data = fnp.reshape(fnp.index_update(
                    fnp.ravel(root._data), flat,
                    fnp.astype(fnp.ravel(written), root._data.dtype)), shape)
                root._vc[0] += 1
            elif id(t) in self._by_root:
                root = t
            else:
                return
            for ref in self._by_root.get(id(root), []):
                v: Any = ref()
                ventry = self._views.get(id(v))
                if v is None or v is t or ventry is None or id(ventry[0]()) != id(v):
                    continue
                vpos = ventry[2]
                v._data = fnp.reshape(fnp.take(fnp.ravel(root._data), vpos.reshape(-1)),
                                      vpos.shape)
