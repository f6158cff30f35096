"""Find the user's source line for error messages.

>>> from funcgrad.source_info import user_frame
>>> isinstance(user_frame(), str)
True
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import sys
from typing import Any

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(_PKG_DIR)
# Frames inside these folders belong to funcgrad, not to the user.
_INTERNAL = tuple(
    os.path.join(_ROOT, name) + os.sep for name in ("funcgrad", "transforms", "backends")
)


# Standard-library helpers our own frames run through are not the user's code either.
_STDLIB_HELPERS = {os.path.abspath(m.__file__ or "") for m in (contextlib, functools)}


@functools.lru_cache(maxsize=4096)
def _is_internal(filename: str) -> bool:
    path = os.path.abspath(filename)
    return (path.startswith(_INTERNAL) or path.startswith(_PKG_DIR + os.sep)
            or path in _STDLIB_HELPERS)


def user_frame_info() -> tuple[str, int, str] | None:
    """``(file, line, function)`` of the innermost non-funcgrad frame, if any."""
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if not _is_internal(code.co_filename):
            return code.co_filename, frame.f_lineno, code.co_name
        frame = frame.f_back  # type: ignore[assignment]
    return None


def user_frame() -> str:
    """Return ``"file:line (function)"`` of the innermost non-funcgrad frame."""
    found = user_frame_info()
    return "<unknown location>" if found is None else f"{found[0]}:{found[1]} ({found[2]})"


def user_stacklevel() -> int:
    """The ``stacklevel`` for ``warnings.warn`` called by the caller of this function that
    points at the innermost non-funcgrad frame (what the user wrote)."""
    frame = sys._getframe(2)  # the caller of the function that warns: stacklevel 2
    level = 2
    while frame is not None and _is_internal(frame.f_code.co_filename):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level


def user_source_line() -> str:
    """The text of the innermost non-funcgrad source line (empty when unavailable)."""
    import linecache  # noqa: PLC0415 - only on the error path

    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if not _is_internal(code.co_filename):
            return linecache.getline(code.co_filename, frame.f_lineno).strip()
        frame = frame.f_back  # type: ignore[assignment]
    return ""


def fun_sourceinfo(fun: Any) -> str:
    """``name at file:line`` of a function, as JAX's messages name one (a scan branch, the
    function a ``vjp`` differentiated).

    >>> def f(x): return x
    >>> fun_sourceinfo(f).startswith("f at ")
    True
    """
    while isinstance(fun, functools.partial):
        fun = fun.func
    fun = inspect.unwrap(fun)
    try:
        return f"{fun.__name__} at {fun.__code__.co_filename}:{fun.__code__.co_firstlineno}"
    except AttributeError:
        return "<unknown>"


def arg_names(fun: Any, args: Any, kwargs: Any, static_argnums: Any = (),
              static_argnames: Any = ()) -> list[str]:
    """The names JAX gives the array leaves of ``fun(*args, **kwargs)`` in its tracer
    errors (``x``, ``d['a']``, ``args[1]``): the parameter, then the key path inside it;
    keyword arguments after the positional ones, sorted by keyword. Static arguments
    have none.

    >>> arg_names(lambda x, d: x, (1.0, {"a": 2.0, "b": 3.0}), {})
    ['x', "d['a']", "d['b']"]
    """
    from funcgrad.tree_util import keystr, tree_flatten_with_path  # noqa: PLC0415

    static = object()
    nums = {i % len(args) if args else i for i in (
        (static_argnums,) if isinstance(static_argnums, int) else static_argnums)
        if -len(args) <= i < len(args)}
    names = {static_argnames} if isinstance(static_argnames, str) else set(static_argnames)
    args_ = [static if i in nums else x for i, x in enumerate(args)]
    kwargs_ = {k: static if k in names else x for k, x in kwargs.items()}
    ordered: list[tuple[str, Any]] | None = None
    try:
        sig = inspect.signature(fun)
        bound = sig.bind(*args_, **kwargs_)
    except (TypeError, ValueError):
        pass
    else:
        var_kw = next((n for n, p in sig.parameters.items() if p.kind is p.VAR_KEYWORD), None)
        ordered = [(n, x) for n, x in bound.arguments.items() if n not in kwargs and n != var_kw]
        ordered += [(n if n in bound.arguments else f"{var_kw}['{n}']", x)
                    for n, x in sorted(kwargs_.items())]
    if ordered is None:
        ordered = [("args", args_)] + sorted(
            (f"kwargs['{n}']", x) for n, x in kwargs_.items() if x is not static)
    return [name + keystr(path) for name, x in ordered
            for path, leaf in tree_flatten_with_path(x)[0] if leaf is not static]


def source_position(code: Any, lasti: int) -> str:
    """``file:line:column (function)`` of an instruction, as JAX's source summaries write
    a line (the column counts from 0)."""
    line, col = code.co_firstlineno, 0
    try:
        for k, pos in enumerate(code.co_positions()):
            if k == lasti // 2:
                line, col = pos[0] or line, pos[2] or 0
                break
    except AttributeError:  # Python < 3.11 has no column positions
        pass
    return f"{code.co_filename}:{line}:{col} ({code.co_name})"


def user_code_position() -> tuple[Any, int] | None:
    """``(code, instruction offset)`` of the innermost non-funcgrad frame: a cheap record
    of where a value was made, written out by :func:`source_position` when needed."""
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if not _is_internal(code.co_filename):
            return code, frame.f_lasti
        frame = frame.f_back  # type: ignore[assignment]
    return None
