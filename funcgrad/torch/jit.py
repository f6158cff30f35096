"""``torch.jit``: TorchScript's Python API, running the Python code itself.

funcgrad has no TorchScript compiler. Model code written for PyTorch asks
``torch.jit.is_scripting()``, decorates methods with ``@torch.jit.ignore`` or
``@torch.jit.export``, and calls ``script``/``trace``/``fork``/``save``/``load``; all of that
runs here: a scripted or traced function is a :class:`ScriptFunction` that calls the Python
function, a scripted or traced module is the module itself (its parameters are the same
tensors, as in PyTorch), ``fork`` runs at once as in PyTorch's eager mode, and
``save``/``load`` keep a whole module in ``torch.save``'s format. For speed, use
``torch.compile``. TorchScript archives written by PyTorch hold TorchScript code, which
cannot run here: ``load`` says so.

>>> import funcgrad.torch as torch
>>> @torch.jit.script
... def double(x):
...     return x * 2
>>> double(torch.ones(2))
tensor([2., 2.])
>>> torch.jit.wait(torch.jit.fork(double, torch.ones(1)))
tensor([2.])
"""

from __future__ import annotations

import contextlib
import types
import typing
import warnings
import zipfile
from collections.abc import Callable, Iterator
from typing import Any, Final, TypeVar

from funcgrad.torch import _tracing, serialization
from funcgrad.torch.futures import Future
from funcgrad.torch.nn.module import Module

__all__ = ["Error", "Final", "Future", "ScriptFunction", "ScriptWarning", "TracerWarning",
           "annotate", "enable_onednn_fusion", "export", "fork", "freeze", "fuser", "ignore",
           "interface", "is_scripting", "is_tracing", "isinstance", "load",
           "onednn_fusion_enabled", "optimize_for_inference", "optimized_execution", "save",
           "script", "script_if_tracing", "script_method", "set_fusion_strategy",
           "strict_fusion", "trace", "trace_module", "unused", "wait"]

F = TypeVar("F", bound=Callable[..., Any])
_builtin_isinstance = isinstance


class Error(Exception):
    """An error raised by TorchScript code (PyTorch's ``torch.jit.Error``)."""


class TracerWarning(Warning):
    """A warning about a trace that may not generalize (PyTorch's ``TracerWarning``)."""


class ScriptWarning(Warning):
    """A warning from scripting (PyTorch's ``ScriptWarning``)."""


def _deprecated(name: str, instead: str = "use `torch.compile` instead") -> None:
    # PyTorch 2.13 deprecates TorchScript with these warnings; code that filters or
    # counts them behaves the same here.
    warnings.warn(f"`torch.jit.{name}` is deprecated. Please {instead}.", DeprecationWarning,
                  stacklevel=3)


_SWITCH = "switch to `torch.compile` or `torch.export`"


def is_scripting() -> bool:
    """False: code here always runs as Python, never as TorchScript.

    >>> is_scripting()
    False
    """
    return False


def is_tracing() -> bool:
    """True while a function made by :func:`trace` runs (its code sees itself traced).

    >>> is_tracing()
    False
    """
    return _tracing.is_tracing()


class ScriptFunction:
    """A scripted or traced function: calling it calls the Python function.

    >>> f = ScriptFunction(lambda x: x + 1, "inc")
    >>> f.name, f(1)
    ('inc', 2)
    """

    def __init__(self, fn: Callable[..., Any], name: str, *, traced: bool = False) -> None:
        self._fn, self.name, self._traced = fn, name, traced
        self.__wrapped__ = fn
        self.__doc__ = fn.__doc__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not self._traced:
            return self._fn(*args, **kwargs)
        with _tracing.tracing():
            return self._fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<torch.jit.ScriptFunction object at {id(self):#x}>"


def script(obj: Any, optimize: Any = None, _frames_up: int = 0, _rcb: Any = None,
           example_inputs: Any = None) -> Any:
    """``obj`` ready to run: a module or class as it is, a function as a ScriptFunction.

    >>> import funcgrad.torch as torch
    >>> m = torch.nn.Linear(2, 1)
    >>> torch.jit.script(m).weight is m.weight
    True
    """
    _deprecated("script", _SWITCH)
    if optimize is not None:
        warnings.warn("`optimize` is deprecated and has no effect. Use "
                      "`with torch.jit.optimized_execution()` instead", FutureWarning,
                      stacklevel=2)
    if _builtin_isinstance(obj, (Module, ScriptFunction, type)):
        return obj
    if not callable(obj):
        raise RuntimeError(f"torch.jit.script got {type(obj).__name__!r}: it takes a "
                           "function, a class or an nn.Module")
    return ScriptFunction(obj, getattr(obj, "__name__", type(obj).__name__))


def _run_example(fn: Callable[..., Any], example_inputs: Any,
                 example_kwarg_inputs: Any) -> None:
    args = example_inputs if _builtin_isinstance(example_inputs, tuple) else (
        () if example_inputs is None else (example_inputs,))
    with _tracing.tracing():
        fn(*args, **(example_kwarg_inputs or {}))


def trace(func: Any, example_inputs: Any = None, optimize: Any = None,
          check_trace: bool = True, check_inputs: Any = None, check_tolerance: float = 1e-5,
          strict: bool = True, _force_outplace: bool = False,
          _module_class: Any = None, _compilation_unit: Any = None,
          example_kwarg_inputs: Any = None, _store_inputs: bool = True) -> Any:
    """Run ``func`` once on the example inputs, then hand it back to call on any input.

    PyTorch records the operations of that one run and replays them, so data-dependent
    branches are frozen; here every call runs the Python code (``is_tracing()`` is True
    inside it).

    >>> import funcgrad.torch as torch
    >>> f = torch.jit.trace(lambda x: x.relu(), torch.ones(2))
    >>> f(torch.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """
    _deprecated("trace", _SWITCH)
    if example_inputs is None and example_kwarg_inputs is None:
        raise RuntimeError("example_kwarg_inputs or example_inputs must be provided")
    if _builtin_isinstance(func, Module):
        _deprecated("trace_method", _SWITCH)  # PyTorch traces a module's forward with it
        _run_example(func, example_inputs, example_kwarg_inputs)
        return func
    _run_example(func, example_inputs, example_kwarg_inputs)
    return ScriptFunction(func, getattr(func, "__name__", type(func).__name__), traced=True)


def trace_module(mod: Module, inputs: dict[str, Any], **kwargs: Any) -> Module:
    """Run each named method of ``mod`` once on its example inputs; hand ``mod`` back.

    >>> import funcgrad.torch as torch
    >>> m = torch.nn.Linear(2, 1)
    >>> torch.jit.trace_module(m, {"forward": torch.ones(1, 2)}) is m
    True
    """
    _deprecated("trace_method", _SWITCH)
    for name, example in inputs.items():
        _run_example(getattr(mod, name), example, None)
    return mod


def _unchanged(fn: F) -> F:
    return fn


def ignore(drop: Any = False, **kwargs: Any) -> Any:
    """Leave a function to Python (as every function is here): ``@torch.jit.ignore``.

    >>> ignore(len)([1, 2])
    2
    """
    if callable(drop):
        return drop
    return _unchanged


unused = _unchanged
export = _unchanged
script_method = _unchanged
interface = _unchanged
script_if_tracing = _unchanged


def annotate(the_type: Any, the_value: Any) -> Any:
    """``the_value`` (TorchScript reads the type; Python needs nothing).

    >>> annotate(list, [])
    []
    """
    return the_value


def isinstance(obj: Any, target_type: Any) -> bool:  # noqa: A001 - torch.jit's name
    """``isinstance`` that understands ``List[int]``, ``Dict[str, Tensor]``, ``Optional``...

    >>> import typing
    >>> isinstance([1, 2], typing.List[int]), isinstance([1, "a"], typing.List[int])
    (True, False)
    """
    origin = typing.get_origin(target_type)
    if origin is None:
        return target_type is Any or _builtin_isinstance(obj, target_type)
    args = typing.get_args(target_type)
    if origin is typing.Union or origin is types.UnionType:
        return any(isinstance(obj, a) for a in args)
    if origin in (list, typing.List):  # noqa: UP006 - the typing alias users write
        return _builtin_isinstance(obj, list) and all(isinstance(v, args[0]) for v in obj)
    if origin is dict:
        return _builtin_isinstance(obj, dict) and all(
            isinstance(k, args[0]) and isinstance(v, args[1]) for k, v in obj.items())
    if origin is tuple:
        return (_builtin_isinstance(obj, tuple) and len(obj) == len(args)
                and all(isinstance(v, a) for v, a in zip(obj, args, strict=True)))
    return _builtin_isinstance(obj, origin)


def fork(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Future[Any]:
    """Run ``func(*args, **kwargs)`` (at once, as PyTorch's eager mode) into a Future.

    >>> fork(abs, -3).wait()
    3
    """
    _deprecated("fork")
    return run_forked(func, *args, **kwargs)


def wait(future: Future[Any]) -> Any:
    """The result of a Future made by :func:`fork`.

    >>> wait(fork(len, "ab"))
    2
    """
    _deprecated("wait")
    return future.wait()


def run_forked(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Future[Any]:
    """``torch.fork``: :func:`fork` without TorchScript's deprecation warning."""
    fut: Future[Any] = Future()
    fut.set_result(func(*args, **kwargs))
    return fut


def wait_for(future: Future[Any]) -> Any:
    """``torch.wait``: :func:`wait` without TorchScript's deprecation warning."""
    return future.wait()


def freeze(mod: Module, preserved_attrs: Any = None, optimize_numerics: bool = True) -> Module:
    """``mod`` for inference (PyTorch inlines its parameters); it must be in eval mode.

    >>> import funcgrad.torch as torch
    >>> m = torch.nn.Linear(2, 1).eval()
    >>> torch.jit.freeze(m) is m
    True
    """
    _deprecated("freeze")
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. "
                           "Please call .eval() on your module before freezing.")
    return mod


def optimize_for_inference(mod: Module, other_methods: Any = None) -> Module:
    """``mod`` in eval mode, frozen.

    >>> import funcgrad.torch as torch
    >>> torch.jit.optimize_for_inference(torch.nn.Dropout()).training
    False
    """
    _deprecated("optimize_for_inference")
    return freeze(mod.eval())


def save(m: Any, f: Any, _extra_files: Any = None) -> None:
    """Write a scripted module (or function) to ``f``; :func:`load` reads it back.

    >>> import io, funcgrad.torch as torch
    >>> buf = io.BytesIO()
    >>> torch.jit.save(torch.jit.script(torch.nn.ReLU()), buf)
    >>> _ = buf.seek(0)
    >>> torch.jit.load(buf)
    ReLU()
    """
    _deprecated("save", "switch to `torch.export`")
    serialization.save(m, f)


def load(f: Any, map_location: Any = None, _extra_files: Any = None,
         _restore_shapes: bool = False) -> Any:
    """Read back what :func:`save` wrote (whole module, parameters included)."""
    _deprecated("load", "switch to `torch.export`")
    if zipfile.is_zipfile(f) if not hasattr(f, "seek") else _is_zip(f):
        with zipfile.ZipFile(f) as z:
            names = z.namelist()
        if hasattr(f, "seek"):
            f.seek(0)
        if any("/code/" in n or n.endswith("/constants.pkl") for n in names):
            raise RuntimeError(
                "this file is a TorchScript archive written by PyTorch: it holds TorchScript "
                "code, which funcgrad cannot run. In PyTorch, save the model's state_dict "
                "with torch.save(model.state_dict(), path), then build the model here and "
                "load_state_dict(torch.load(path))")
    return serialization.load(f, map_location=map_location, weights_only=False)


def _is_zip(f: Any) -> bool:
    pos = f.tell()
    try:
        return zipfile.is_zipfile(f)
    finally:
        f.seek(pos)


@contextlib.contextmanager
def optimized_execution(should_optimize: bool) -> Iterator[None]:
    """A context for TorchScript's graph optimizer; nothing to switch here."""
    yield


_FUSERS = ("fuser0", "fuser1", "fuser2", "fuser3", "none")


@contextlib.contextmanager
def fuser(name: str) -> Iterator[None]:
    """Pick TorchScript's fuser (``"fuser0"``...``"none"``); fusion here is funcgrad's.

    >>> with fuser("fuser1"):
    ...     pass
    """
    if name not in _FUSERS:
        raise Exception(f"unrecognized fuser option (name: {name})")  # noqa: TRY002 - torch's
    yield


_fusion_strategy: list[list[tuple[str, int]]] = [[("STATIC", 2), ("DYNAMIC", 10)]]
_onednn = [False]


def set_fusion_strategy(strategy: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Set TorchScript's fusion strategy; return the previous one.

    >>> old = set_fusion_strategy([("STATIC", 3)]); new = set_fusion_strategy(old)
    >>> old, new
    ([('STATIC', 2), ('DYNAMIC', 10)], [('STATIC', 3)])
    """
    _deprecated("set_fusion_strategy")
    previous, _fusion_strategy[0] = _fusion_strategy[0], list(strategy)
    return previous


def enable_onednn_fusion(enabled: bool) -> None:
    """Record whether oneDNN fusion is asked for (there is no oneDNN here)."""
    _onednn[0] = bool(enabled)


def onednn_fusion_enabled() -> bool:
    """Whether :func:`enable_onednn_fusion` asked for it (False by default).

    >>> onednn_fusion_enabled()
    False
    """
    return _onednn[0]


class strict_fusion:  # noqa: N801 - torch's name
    """TorchScript's check that a region fuses; outside TorchScript it only warns."""

    def __enter__(self) -> None:
        warnings.warn("Only works in script mode", stacklevel=2)

    def __exit__(self, *exc: object) -> None:
        return None
