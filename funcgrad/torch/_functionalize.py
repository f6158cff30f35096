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
OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to "
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
    """The views made while tracking, by the root tensor they alias. A view's positions in
    its root are computed only when a write needs them (most views are never written)."""

    def __init__(self) -> None:
        # id(view) -> its record (below)
        self._views: dict[int, _View] = {}
        # id(root) -> its live views, weakly
        self._by_root: dict[int, list[weakref.ref[Any]]] = {}

    def _forget(self, key: int) -> None:
        entry = self._views.pop(key, None)
        if entry is not None:
            views = self._by_root.get(id(entry.root), [])
            views[:] = [r for r in views if r() is not None]
            if not views:
                self._by_root.pop(id(entry.root), None)

    def has_views(self, t: Any) -> bool:
        """Whether ``t`` is the root of live views recorded here."""
        return id(t) in self._by_root

    def live_views(self, root: Any) -> list[tuple[Any, _View]]:
        """The live views of ``root`` recorded here, with their records."""
        out = []
        for ref in list(self._by_root.get(id(root), [])):
            v = ref()
            rec = self._views.get(id(v))
            if v is not None and rec is not None and rec.ref() is v:
                out.append((v, rec))
        return out

    def view(self, op: str, fn: Callable[[Any], Any], out: Any, base: Any) -> None:
        """``out = fn(base)`` was made by a view op named ``op`` (PyTorch's node name)."""
        if out is base or op == "Index":  # advanced indexing copies, as in PyTorch
            return
        traced = isinstance(out._data, Tracer) or isinstance(base._data, Tracer)
        if not traced and not out._view_flag:
            return  # a concrete copy (NumPy said the memory is not shared)
        parent = self._views.get(id(base))
        if parent is not None and parent.ref() is not base:
            parent = None
        root = base if parent is None else parent.root
        key = id(out)

        def dropped(_ref: weakref.ref[Any]) -> None:
            self._forget(key)

        self._views[key] = _View(weakref.ref(out, dropped), root, parent, op, fn,
                                 tuple(base._data.shape), tuple(out._data.shape), traced)
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
            pos = entry.positions() if entry is not None and entry.ref() is t else None
            if pos is not None and entry is not None:
                root = entry.root
                flat = pos.reshape(-1)
                if np.unique(flat).size != flat.size:
                    raise RuntimeError(OVERLAP)
                shape = root._data.shape
                root._data = fnp.reshape(fnp.index_update(
                    fnp.ravel(root._data), flat,
                    fnp.astype(fnp.ravel(written), root._data.dtype)), shape)
                root._vc[0] += 1
            elif self.has_views(t):
                root = t
            else:
                return
            values: Any = root._data
            for v, ventry in self.live_views(root):
                vpos = ventry.positions()
                if v is not t and vpos is not None:
                    v._data = fnp.reshape(fnp.take(fnp.ravel(values), vpos.reshape(-1)),
                                          vpos.shape)


class _View:
    """How a view was made from its base (itself a view, ``parent``, or the root)."""

    __slots__ = ("ref", "root", "parent", "op", "fn", "base_shape", "shape", "traced", "_pos",
                 "no_grad", "multi_output")

    def __init__(self, ref: weakref.ref[Any], root: Any, parent: _View | None, op: str,
                 fn: Callable[[Any], Any], base_shape: tuple[int, ...],
                 shape: tuple[int, ...], traced: bool) -> None:
        self.ref, self.root, self.parent, self.op, self.fn = ref, root, parent, op, fn
        self.base_shape, self.shape, self.traced = base_shape, shape, traced
        self._pos: np.ndarray | None | bool = False  # False: not computed yet
        # Made with grad mode off from a tensor that requires grad (PyTorch then refuses an
        # in-place operation on it with grad mode on).
        self.no_grad = False
        # Its output number when it is one of several views a function returned (split,
        # chunk, unbind): PyTorch refuses in-place writes into those while recording.
        self.multi_output: int | None = None

    def positions(self) -> np.ndarray | None:
        """Where the view's elements sit in its root's flattened elements; None where the
        op copied instead (a ``reshape`` the strides do not allow)."""
        if self._pos is False:
            self._pos = self._compute()
        return self._pos if isinstance(self._pos, np.ndarray) else None

    def _compute(self) -> np.ndarray | None:
        if self.parent is None:
            base = np.arange(int(np.prod(self.base_shape)), dtype=np.int64).reshape(
                self.base_shape)
        else:
            base = self.parent.positions()  # type: ignore[assignment]
            if base is None:
                return None
        if self.op == "View" and self.traced and not _reshape_is_view(base, self.shape):
            return None
        from funcgrad.torch._graph import X64  # noqa: PLC0415

        with X64:
            out = np.asarray(self.fn(base))
        return out.astype(np.int64) if out.shape == self.shape else None


_default = threading.local()

# Eager views of recorded tensors (NumPy views sharing their base's memory), kept so that an
# in-place operation on one can rewrite its base's graph (PyTorch's CopySlices).
EAGER = Tracker()


def eager_record(t: Any) -> _View | None:
    """How the eager view ``t`` was made from its root, if it was recorded in ``EAGER``."""
    rec = EAGER._views.get(id(t))
    return rec if rec is not None and rec.ref() is t else None


def default() -> Tracker:
    """This thread's tracker of views of traced Tensors outside ``functionalize``: under
    ``torch.func`` transforms and ``torch.compile`` a write through a view must reach its
    base, as eager NumPy memory does."""
    tracker: Tracker | None = getattr(_default, "tracker", None)
    if tracker is None:
        tracker = _default.tracker = Tracker()
    return tracker
