"""PyTorch's refusals of complex tensors in ordering operations (comparisons, max/min,
clamp, rounding...): NumPy orders complex numbers lexicographically, PyTorch's CPU kernels
are not compiled for them. Installed over the Tensor methods and torch functions by
:func:`install`.

>>> import funcgrad.torch as torch
>>> torch.tensor([1j]) < 0
Traceback (most recent call last):
...
NotImplementedError: "lt_cpu" not implemented for 'ComplexFloat'
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

_CPP = {"complex64": "ComplexFloat", "complex128": "ComplexDouble", "complex32": "ComplexHalf"}


def _complex_name(values: tuple[Any, ...]) -> str | None:
    """PyTorch's name of the complex dtype the operands promote to, or None."""
    from funcgrad.torch._tensor import Tensor  # noqa: PLC0415

    found = None
    wide = False
    for v in values:
        if isinstance(v, Tensor):
            name = v.dtype.name
            if name.startswith("complex"):
                found = name if found in (None, "complex32") else found
            wide = wide or name in ("float64", "complex128")
        elif isinstance(v, complex):
            found = found or "complex64"
    if found is None:
        return None
    return _CPP["complex128" if wide else found]


def _kernel(kernel: str) -> Callable[[str, tuple[Any, ...], dict[str, Any]], Exception]:
    return lambda name, args, kwargs: NotImplementedError(
        f'"{kernel}" not implemented for \'{name}\'')


def _fixed(error: type[Exception], text: str
           ) -> Callable[[str, tuple[Any, ...], dict[str, Any]], Exception]:
    return lambda name, args, kwargs: error(text)


def _reduce(kernel: str, which: str
            ) -> Callable[[str, tuple[Any, ...], dict[str, Any]], Exception]:
    def make(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Exception:
        from funcgrad.torch._tensor import Tensor  # noqa: PLC0415

        rest = args[1:]
        if rest and isinstance(rest[0], Tensor):
            return RuntimeError(f"{which}imum not implemented for complex tensors.")
        if rest or "dim" in kwargs:
            return RuntimeError(f"{which}(): does not support complex input")
        return NotImplementedError(f'"{kernel}" not implemented for \'{name}\'')

    return make


def _median(kernel: str) -> Callable[[str, tuple[Any, ...], dict[str, Any]], Exception]:
    def make(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Exception:
        dim = len(args) > 1 or "dim" in kwargs
        return NotImplementedError(
            f'"{"median_out" if dim else kernel}" not implemented for \'{name}\'')

    return make


def _round(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Exception:
    # PyTorch's round with decimals runs another kernel than plain round.
    kernel = "round_cpu" if len(args) > 1 or kwargs.get("decimals") is not None else \
        "round_vml_cpu"
    return NotImplementedError(f'"{kernel}" not implemented for \'{name}\'')


_CLAMP = _fixed(NotImplementedError, "clamp is not supported for complex types")
_RULES: dict[str, Callable[[str, tuple[Any, ...], dict[str, Any]], Exception]] = {
    **{n: _kernel(f"{k}_cpu") for k, names in (
        ("lt", ("lt", "less", "__lt__", "lt_", "less_")),
        ("gt", ("gt", "greater", "__gt__", "gt_", "greater_")),
        ("le", ("le", "less_equal", "__le__", "le_", "less_equal_")),
        ("ge", ("ge", "greater_equal", "__ge__", "ge_", "greater_equal_")))
       for n in names},
    "max": _reduce("max_all", "max"), "min": _reduce("min_all", "min"),
    "amax": _kernel("max_values_cpu"), "amin": _kernel("min_values_cpu"),
    "aminmax": _kernel("aminmax_cpu"), "frac": _kernel("frac_cpu"),
    "frac_": _kernel("frac_cpu"),
    "median": _median("median_cpu"), "nanmedian": _median("median_cpu"),
    "maximum": _fixed(RuntimeError, "maximum not implemented for complex tensors."),
    "minimum": _fixed(RuntimeError, "minimum not implemented for complex tensors."),
    "heaviside": _fixed(RuntimeError, "heaviside is not yet implemented for complex tensors."),
    "sign": _fixed(NotImplementedError, "Unlike NumPy, torch.sign is not intended to support "
                   "complex numbers. Please use torch.sgn instead."),
    **{n: _CLAMP for n in ("clamp", "clip", "clamp_", "clip_", "clamp_min", "clamp_max",
                           "clamp_min_", "clamp_max_", "relu", "relu_")},
    **{n: _fixed(NotImplementedError, f"{n.rstrip('_')} is not supported for complex inputs")
       for n in ("floor", "ceil", "trunc", "floor_", "ceil_", "trunc_")},
    "round": _round, "round_": _round,
}


def _guarded(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    rule = _RULES[name]

    from funcgrad.torch._tensor import Tensor  # noqa: PLC0415

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        # These wrap hot operations (relu, comparisons, clamp): a quick look at the
        # buffers' dtype kinds first, PyTorch's dtype names only for a complex operand.
        for v in (*args, *kwargs.values()) if kwargs else args:
            kind = getattr(getattr(v._data, "dtype", None), "kind", "") \
                if isinstance(v, Tensor) else ("c" if isinstance(v, complex) else "")
            if kind == "c":
                cplx = _complex_name((*args, *kwargs.values()))
                if cplx is not None:
                    raise rule(cplx, args, kwargs)
                break
        return fn(*args, **kwargs)

    run.__wrapped_complex_check__ = True  # type: ignore[attr-defined]
    return run


def install(tensor_cls: type, *namespaces: Any) -> None:
    """Guard the Tensor methods and each namespace's functions named in the table."""
    for name in _RULES:
        for owner in (tensor_cls, *namespaces):
            fn = getattr(owner, name, None)
            if fn is None or getattr(fn, "__wrapped_complex_check__", False) or \
                    not callable(fn):
                continue
            setattr(owner, name, _guarded(name, fn))


__all__ = ["install"]
