"""``torch.save`` / ``torch.load`` in PyTorch's zip format, safe to load by default.

A file is a zip archive (entries stored, not compressed) holding ``archive/data.pkl``
(a protocol-2 pickle in which each tensor is ``torch._utils._rebuild_tensor_v2``
applied to a persistent storage id ``('storage', torch.FloatStorage, key, location,
numel)``) with its storage offset and strides, the raw bytes of each storage in
``archive/data/<key>``, and ``archive/version`` / ``archive/byteorder``: files written here
load in PyTorch and PyTorch's files load here. No PyTorch is needed: the pickle names
PyTorch's globals and the loader maps them to funcgrad's.

A storage is the whole memory a tensor's array lives in (the owner at the end of its
``.base`` chain), written once however many saved tensors view it; loading makes each
storage one array and each tensor a strided view of it, so tensors that shared memory when
saved (views, tied weights) share it when loaded, as in PyTorch.

``load`` runs with ``weights_only=True`` unless told otherwise: its unpickler resolves
only an allow-list of globals (tensor rebuilders, storage types, dtypes,
``collections.OrderedDict``...) and raises ``pickle.UnpicklingError`` for any other,
so nothing named by the file is ever called.

>>> import io
>>> import funcgrad.torch as torch
>>> buf = io.BytesIO()
>>> torch.save({"w": torch.tensor([1.0, 2.0]), "step": 3}, buf)
>>> _ = buf.seek(0)
>>> torch.load(buf)
{'w': tensor([1., 2.]), 'step': 3}
"""

from __future__ import annotations

import _compat_pickle
import collections
import io
import os
import pickle
import sys
import zipfile
from collections.abc import Callable
from typing import IO, Any, cast

import numpy as np

from funcgrad.torch import _dtypes as D
from funcgrad.torch._device import Size, array_module, device
from funcgrad.torch._tensor import Tensor
from funcgrad.torch._tensor_storage import _address, _memory_order, _root, _window

__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "load", "safe_globals",
           "save"]

DEFAULT_PROTOCOL = 2

# PyTorch's legacy typed-storage class of each dtype (what its pickles name).
_STORAGE_OF = {
    "float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage",
    "bfloat16": "BFloat16Storage", "int64": "LongStorage", "int32": "IntStorage",
    "int16": "ShortStorage", "int8": "CharStorage", "uint8": "ByteStorage",
    "bool": "BoolStorage", "complex64": "ComplexFloatStorage",
    "complex128": "ComplexDoubleStorage",
}
_DTYPE_OF_STORAGE = {v: k for k, v in _STORAGE_OF.items()}


class _Global:
    """A reference to a PyTorch global by name; the pickler writes it as ``GLOBAL``."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def __call__(self, *args: Any) -> Any:
        # Callable only so that the pickler accepts it as a reduce function.
        raise TypeError(f"{self.module}.{self.name} names a PyTorch global; it is written to "
                        "files, not called")


_REBUILD_V2 = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_V3 = _Global("torch._utils", "_rebuild_tensor_v3")
_REBUILD_PARAMETER = _Global("torch._utils", "_rebuild_parameter")
_ORDERED_DICT = _Global("collections", "OrderedDict")


class _StorageRef:
    """One storage of the file being written (pickled as its persistent id): its bytes,
    the dtype its tensors read it as, and its device."""

    __slots__ = ("key", "data", "dtype", "location", "owner")

    def __init__(self, key: str, data: np.ndarray, dtype: D.dtype, location: str,
                 owner: Any = None) -> None:
        self.key, self.data, self.dtype, self.location = key, data, dtype, location
        # The array whose memory this is (kept alive so that its id names it while the
        # pickle is written).
        self.owner = owner

    def numel(self) -> int:
        """Its length in elements of its dtype (PyTorch's typed-storage size)."""
        return int(self.data.nbytes // self.dtype.np.itemsize)


# The pure-Python pickler: its dispatch table can take the GLOBAL-writing entries below.
_PyPickler: Any = pickle._Pickler


class _TorchPickler(_PyPickler):
    """The pure-Python pickler, writing Tensors, dtypes and devices as PyTorch does."""

    dispatch = dict(_PyPickler.dispatch)

    def __init__(self, file: IO[bytes], protocol: int) -> None:
        super().__init__(file, protocol)
        self.storages: list[_StorageRef] = []
        # Each storage once, by the array that owns its memory (a tensor's storage root),
        # or by the tensor for one saved as a copy of its own.
        self._by_root: dict[int, _StorageRef] = {}
        self._by_tensor: dict[int, _StorageRef] = {}

    def persistent_id(self, obj: Any) -> Any:
        if type(obj) is _StorageRef:
            name = _STORAGE_OF.get(obj.dtype.name)
            if name is None:
                return ("storage", _cached_global("torch.storage", "UntypedStorage"), obj.key,
                        obj.location, obj.data.nbytes)
            return ("storage", _cached_global("torch", name), obj.key, obj.location,
                    obj.numel())
        return None

    def save_global_ref(self, obj: _Global, name: Any = None) -> None:
        memo = self.memo
        if id(obj) in memo:
            self.write(self.get(memo[id(obj)][0]))
            return
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())
        self.memoize(obj)

    dispatch[_Global] = save_global_ref

    def save_dtype(self, obj: D.dtype) -> None:
        self.save_global_ref(_cached_global("torch", obj.name))

    dispatch[D.dtype] = save_dtype

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        if isinstance(obj, device):
            return (_cached_global("torch", "device"), (str(obj),))
        if isinstance(obj, Size):
            return (_cached_global("torch", "Size"), (tuple(obj),))
        return NotImplemented

    def _reduce_tensor(self, t: Tensor) -> Any:
        placed = self._shared_storage(t)
        if placed is None:
            placed = self._own_storage(t), 0, _contiguous_strides(tuple(t.shape))
        ref, offset, stride = placed
        shape = tuple(int(s) for s in t.shape)
        hooks = (_ORDERED_DICT, ())
        if ref.dtype.name in _STORAGE_OF:
            rebuilt: Any = (_REBUILD_V2, (ref, offset, shape, stride, t.requires_grad,
                                          _Reduced(hooks)))
        else:
            rebuilt = (_REBUILD_V3, (ref, offset, shape, stride, t.requires_grad,
                                     _Reduced(hooks), _cached_global("torch", ref.dtype.name)))
        if _is_parameter(t):
            inner = _Reduced(rebuilt)
            return (_REBUILD_PARAMETER, (inner, t.requires_grad, _Reduced(hooks)))
        return rebuilt

    def _add(self, data: np.ndarray, dtype: D.dtype, t: Tensor, owner: Any) -> _StorageRef:
        loc = "cpu" if t.device.type == "cpu" else str(t.device)
        ref = _StorageRef(str(len(self.storages)), data, dtype, loc, owner)
        self.storages.append(ref)
        return ref

    def _own_storage(self, t: Tensor) -> _StorageRef:
        """A storage holding a contiguous copy of ``t`` alone (a tensor being traced, or
        one whose memory is not one dense block)."""
        ref = self._by_tensor.get(id(t))
        if ref is None:
            host = np.ascontiguousarray(t._host())
            ref = self._by_tensor[id(t)] = self._add(
                host.reshape(-1).view(np.uint8), D.from_numpy(host.dtype), t, t)
        return ref

    def _shared_storage(self, t: Tensor) -> tuple[_StorageRef, int, tuple[int, ...]] | None:
        """``t``'s storage (the whole memory its buffer lives in, written once however
        many tensors view it), its offset and strides in it; None where its memory is not
        an array's dense block."""
        d = t._data
        if not (type(d) is np.ndarray or type(d).__module__.split(".")[0] == "cupy"):
            return None
        root = _root(d)
        mem = root if root.flags.c_contiguous else _memory_order(root)
        item = d.itemsize
        if not mem.flags.c_contiguous or any(s < 0 or s % item for s in d.strides):
            return None
        gap = _address(d) - _address(root)
        if gap < 0 or gap % item:
            return None
        offset, stride = gap // item, tuple(int(s) for s in cast(Any, t).stride())
        ref = self._by_root.get(id(root))
        if ref is None:
            data = mem.reshape(-1).view(array_module(mem).uint8)
            ref = self._by_root[id(root)] = self._add(
                data if type(data) is np.ndarray else data.get(), t.dtype, t, root)
        elif ref.dtype != t.dtype:
            raise RuntimeError("Cannot save multiple tensors or storages that view the same "
                               "data as different types")
        if 0 not in d.shape and offset + sum((n - 1) * s for n, s in zip(d.shape, stride)) \
                >= ref.numel():
            return None
        return ref, offset, stride


class _Reduced:
    """A value pickled as ``func(*args)`` (a nested reduce in a tensor's recipe)."""

    __slots__ = ("reduce",)

    def __init__(self, reduce: tuple[Any, tuple[Any, ...]]) -> None:
        self.reduce = reduce

    def __reduce__(self) -> Any:
        return self.reduce


_GLOBALS: dict[tuple[str, str], _Global] = {}


def _cached_global(module: str, name: str) -> _Global:
    g = _GLOBALS.get((module, name))
    if g is None:
        g = _GLOBALS[(module, name)] = _Global(module, name)
    return g


def _is_parameter(t: Tensor) -> bool:
    from funcgrad.torch.nn.parameter import Parameter  # noqa: PLC0415

    return isinstance(t, Parameter)


def _contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def _open_for(f: Any, mode: str) -> tuple[Any, bool]:
    if isinstance(f, (str, os.PathLike)):
        return open(f, mode), True  # noqa: SIM115 - closed by the caller
    return f, False


def save(obj: object, f: Any, pickle_module: Any = pickle,
         pickle_protocol: int = DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization: bool = True,
         _disable_byteorder_record: bool = False) -> None:
    """Write ``obj`` (tensors, state dicts, containers of them and Python values) to
    ``f`` (a path or a binary file-like object) in PyTorch's zip format.

    >>> import io, funcgrad.torch as torch
    >>> buf = io.BytesIO(); torch.save(torch.arange(3), buf)
    >>> buf.getvalue()[:2]
    b'PK'
    """
    if not _use_new_zipfile_serialization:
        raise RuntimeError("funcgrad writes only PyTorch's zip format "
                           "(_use_new_zipfile_serialization=True)")
    if isinstance(f, (str, os.PathLike)):
        stem = os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
        parent = os.path.dirname(os.fspath(f))
        if parent and not os.path.isdir(parent):
            # PyTorch's zip writer checks the folder before it opens the file.
            raise RuntimeError(f"Parent directory {parent} does not exist.")
    else:
        stem = "archive"
    data = io.BytesIO()
    pickler = _TorchPickler(data, pickle_protocol)
    pickler.dump(obj)
    stream, owned = _open_for(f, "wb")
    try:
        with zipfile.ZipFile(stream, "w", zipfile.ZIP_STORED) as z:
            z.writestr(f"{stem}/data.pkl", data.getvalue())
            z.writestr(f"{stem}/.format_version", "1")
            z.writestr(f"{stem}/.storage_alignment", "64")
            if not _disable_byteorder_record:
                z.writestr(f"{stem}/byteorder", sys.byteorder)
            for ref in pickler.storages:
                z.writestr(f"{stem}/data/{ref.key}", ref.data.tobytes())
            z.writestr(f"{stem}/version", "3\n")
    finally:
        if owned:
            stream.close()


# ---------------------------------------------------------------------- loading


class _StorageType:
    """What a storage-type global (``torch.FloatStorage``...) resolves to when loading."""

    __slots__ = ("dtype",)

    def __init__(self, dtype: D.dtype | None) -> None:
        self.dtype = dtype


class _Storage:
    """A loaded storage: its memory (a flat array of its dtype, or of bytes for an untyped
    one; the tensors rebuilt on it are views of it, so they share it as PyTorch's do) and
    the device it goes to."""

    __slots__ = ("array", "location")

    def __init__(self, array: np.ndarray, location: str | None) -> None:
        self.array, self.location = array, location


def _rebuild_tensor(storage: _Storage, storage_offset: int, size: Any, stride: Any,
                    requires_grad: bool = False, backward_hooks: Any = None,
                    metadata: Any = None, dtype: D.dtype | None = None) -> Tensor:
    arr = storage.array
    if dtype is not None and arr.dtype != dtype.np:
        item = dtype.np.itemsize
        arr = arr[: arr.nbytes // item * item].view(dtype.np)
    shape = tuple(int(s) for s in size)
    strides = tuple(int(s) for s in stride)
    offset = int(storage_offset)
    need = 0 if 0 in shape else offset + 1 + sum((n - 1) * s for n, s in zip(shape, strides))
    if len(strides) != len(shape) or offset < 0 or need > arr.size or any(
            s < 0 for s in strides):
        raise RuntimeError(f"the tensor of size {list(shape)} and stride {list(strides)} at "
                           f"offset {offset} does not fit in its storage of {arr.size} "
                           "elements")
    t = Tensor._from_data(_window(arr, shape, strides, min(offset, arr.size)))
    if requires_grad:
        t.requires_grad_(True)
    return _placed(t, storage.location)


def _rebuild_tensor_v3(storage: _Storage, storage_offset: int, size: Any, stride: Any,
                       requires_grad: bool, backward_hooks: Any, dtype: D.dtype,
                       metadata: Any = None) -> Tensor:
    return _rebuild_tensor(storage, storage_offset, size, stride, requires_grad,
                           backward_hooks, metadata, dtype)


def _rebuild_parameter(data: Tensor, requires_grad: bool, backward_hooks: Any,
                       state: Any = None) -> Tensor:
    from funcgrad.torch.nn.parameter import Parameter  # noqa: PLC0415

    return Parameter(data, requires_grad)


def _placed(t: Tensor, target: str | None) -> Tensor:
    if target is None or target == "cpu":
        return t
    return t.to(target)


class _LoadState:
    """The ``map_location`` of the load in progress."""

    def __init__(self) -> None:
        self.map_location: Any = None

    def map(self, location: str) -> str | None:
        ml = self.map_location
        if ml is None:
            return location
        if isinstance(ml, dict):
            return str(ml.get(location, location))
        if callable(ml):
            # PyTorch calls it with (storage, location) and uses a storage it returns;
            # a device string is what funcgrad can act on.
            out = ml(None, location)
            return out if isinstance(out, str) else location
        return str(ml)


_load_state = _LoadState()


def _storage_global(name: str) -> Callable[[], Any]:
    def make() -> _StorageType:
        return _StorageType(None if name == "UntypedStorage" else
                            D.to_torch(_DTYPE_OF_STORAGE[name]))
    return make


def _torch_globals() -> dict[tuple[str, str], Any]:
    """The PyTorch globals a weights file may name, each mapped to funcgrad's own."""
    from funcgrad.torch.nn.parameter import Parameter  # noqa: PLC0415

    out: dict[tuple[str, str], Any] = {
        ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
        ("torch._utils", "_rebuild_tensor_v3"): _rebuild_tensor_v3,
        ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
        ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
        ("torch.nn.parameter", "Parameter"): Parameter,
        ("torch", "device"): device,
        ("torch", "Size"): Size,
        ("collections", "OrderedDict"): collections.OrderedDict,
        ("collections", "Counter"): collections.Counter,
        ("builtins", "set"): set,
        ("builtins", "frozenset"): frozenset,
        ("builtins", "complex"): complex,
        ("builtins", "bytearray"): bytearray,
        ("_codecs", "encode"): _codecs_encode,
    }
    for name, dtype_name in _DTYPE_OF_STORAGE.items():
        out[("torch", name)] = _StorageType(D.to_torch(dtype_name))
    out[("torch", "UntypedStorage")] = _StorageType(None)
    out[("torch.storage", "UntypedStorage")] = _StorageType(None)
    for d in D.ALL:
        out[("torch", d.name)] = d
    return out


def _codecs_encode(text: str, encoding: str = "utf-8") -> bytes:
    # Protocol 2 writes bytes as _codecs.encode(str, "latin1").
    return text.encode(encoding)


_safe_globals: list[Any] = []


def add_safe_globals(safe_globals: list[Any]) -> None:
    """Allow ``load(..., weights_only=True)`` to resolve these extra globals (classes or
    functions; each is matched by its module and qualified name).

    >>> import funcgrad.torch as torch
    >>> torch.serialization.add_safe_globals([complex]); torch.serialization.clear_safe_globals()
    """
    _safe_globals.extend(safe_globals)


def get_safe_globals() -> list[Any]:
    """The globals added with ``add_safe_globals``."""
    return list(_safe_globals)


def clear_safe_globals() -> None:
    """Forget the globals added with ``add_safe_globals``."""
    _safe_globals.clear()


class safe_globals:  # noqa: N801 - PyTorch's name
    """Within the block, ``load(..., weights_only=True)`` also resolves these globals.

    >>> import funcgrad.torch as torch
    >>> with torch.serialization.safe_globals([torch.nn.Linear]):
    ...     torch.serialization.get_safe_globals()
    [<class 'funcgrad.torch.nn.modules.Linear'>]
    """

    def __init__(self, safe_globals: list[Any]) -> None:
        self.safe_globals = safe_globals

    def __enter__(self) -> None:
        self._before = list(_safe_globals)
        _safe_globals.extend(self.safe_globals)

    def __exit__(self, *exc: object) -> None:
        _safe_globals[:] = self._before


def _module_paths() -> Any:
    from funcgrad.torch.nn import _module_paths  # noqa: PLC0415 - nn imports this module

    return _module_paths


def _user_safe(module: str, name: str) -> Any:
    for g in _safe_globals:
        obj, path = (g if isinstance(g, tuple) else (g, None))
        full = f"{module}.{name}"
        if path == full or path is None and full in (
                _module_paths().torch_path(obj),
                f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', '')}"):
            return obj
    return None


def _face_class(module: str, name: str) -> type | None:
    """This face's module class that a file names, by funcgrad's path or by PyTorch's
    (``torch.nn.modules.container.Sequential``: the alias submodules), or None."""
    if module.startswith("torch.nn.modules."):
        module = "funcgrad." + module
    elif not module.startswith("funcgrad.torch.nn."):
        return None
    found = getattr(sys.modules.get(module), name, None)
    return found if isinstance(found, type) else None


_WEIGHTS_ONLY_HINT = (
    "Weights only load failed. This file can still be loaded, to do so you have two options, "
    "\x1b[1mdo those steps only if you trust the source of the checkpoint\x1b[0m. \n\t(1) "
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in "
    "`torch.load` from `False` to `True`. Re-running `torch.load` with `weights_only` set to "
    "`False` will likely succeed, but it can result in arbitrary code execution. Do it only "
    "if you got the file from a trusted source.\n\t(2) Alternatively, to load with "
    "`weights_only=True` please check the recommended steps in the following error message."
    "\n\tWeightsUnpickler error: "
)


class _Unpickler(pickle.Unpickler):
    def __init__(self, file: IO[bytes], storages: Callable[[tuple[Any, ...]], Any],
                 weights_only: bool) -> None:
        super().__init__(file, encoding="utf-8")
        self._storages = storages
        self._weights_only = weights_only
        self._table = _torch_globals()

    def find_class(self, module: str, name: str) -> Any:
        # Protocol 2 files name Python 2's modules (__builtin__.set): map them back.
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        found = self._table.get((module, name))
        if found is not None:
            return found
        user = _user_safe(module, name)
        if user is not None:
            return user
        if self._weights_only:
            # PyTorch names a builtin without its module, anything else by its full path.
            # (This face's module classes by the path PyTorch knows them by.)
            face = _face_class(module, name)
            path = name if module == "builtins" else \
                _module_paths().torch_path(face) if face is not None else f"{module}.{name}"
            raise pickle.UnpicklingError(
                _WEIGHTS_ONLY_HINT + f"Unsupported global: GLOBAL {path} was not an "
                "allowed global by default. Please use "
                f"`torch.serialization.add_safe_globals([{path}])` or the "
                f"`torch.serialization.safe_globals([{path}])` context manager to allowlist "
                "this global if you trust this class/function.\n\nCheck the documentation of "
                "torch.load to learn more about types accepted by default with weights_only "
                "https://pytorch.org/docs/stable/generated/torch.load.html.")
        face = _face_class(module, name)
        if face is not None:
            return face
        if module.split(".")[0] == "torch":
            raise pickle.UnpicklingError(
                f"the file names the PyTorch global {module}.{name}, which funcgrad cannot "
                "load")
        return super().find_class(module, name)

    def persistent_load(self, pid: Any) -> Any:
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise pickle.UnpicklingError(f"Unknown saved id type: {pid!r}")
        return self._storages(pid)


def _read_zip(z: zipfile.ZipFile, weights_only: bool) -> Any:
    names = z.namelist()
    pkl = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
    if not pkl:
        raise RuntimeError("PytorchStreamReader failed locating file data.pkl: file not found")
    prefix = pkl[0][: -len("data.pkl")]
    big = False
    if f"{prefix}byteorder" in names:
        big = z.read(f"{prefix}byteorder").decode().strip() == "big"
    loaded: dict[str, _Storage] = {}

    def storage(pid: tuple[Any, ...]) -> _Storage:
        _, kind, key, location, numel = pid
        got = loaded.get(key)
        if got is not None:
            return got
        raw = z.read(f"{prefix}data/{key}")
        if not isinstance(kind, _StorageType):
            raise pickle.UnpicklingError(f"unknown storage type {kind!r}")
        np_dt = np.dtype(np.uint8) if kind.dtype is None else kind.dtype.np
        if big:
            np_dt = np_dt.newbyteorder(">")
        if kind.dtype is not None:
            raw = raw[: int(numel) * np_dt.itemsize]
        arr = np.frombuffer(raw, np_dt).astype(np_dt.newbyteorder("="))
        # map_location is applied once per storage, as PyTorch does.
        got = loaded[key] = _Storage(arr, _load_state.map(str(location)))
        return got

    return _Unpickler(io.BytesIO(z.read(pkl[0])), storage, weights_only).load()


def load(f: Any, map_location: Any = None, pickle_module: Any = None, *,
         weights_only: bool | None = None, mmap: bool | None = None,
         **pickle_load_args: Any) -> Any:
    """Read an object written by ``torch.save`` (PyTorch's or funcgrad's) from a path or
    a binary file-like object.

    ``weights_only`` (default ``True``) allows only tensors, containers and Python
    values, and raises ``pickle.UnpicklingError`` for any other global the file names.
    ``map_location`` (a device, a string, a dict of locations or a function) says
    where the tensors go.

    >>> import io, funcgrad.torch as torch
    >>> buf = io.BytesIO(); torch.save([torch.ones(2), (1, "a")], buf); _ = buf.seek(0)
    >>> torch.load(buf, map_location="cpu")
    [tensor([1., 1.]), (1, 'a')]
    """
    if weights_only is None:
        weights_only = os.environ.get("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0") not in (
            "1", "y", "yes", "true")
    if isinstance(map_location, device):
        map_location = str(map_location)
    stream, owned = _open_for(f, "rb")
    prev = _load_state.map_location
    _load_state.map_location = map_location
    try:
        if not zipfile.is_zipfile(stream):
            raise RuntimeError(
                "funcgrad reads only PyTorch's zip format (what torch.save writes since "
                "PyTorch 1.6); re-save the file with a recent PyTorch")
        if hasattr(stream, "seek"):
            stream.seek(0)
        with zipfile.ZipFile(stream) as z:
            return _read_zip(z, weights_only)
    finally:
        _load_state.map_location = prev
        if owned:
            stream.close()
