"""PyTorch's printing of tensors: number formats, line wrapping, summaries, and the print
options that steer them (``torch.set_printoptions``).

>>> import numpy as np
>>> format_tensor_data(np.array([1.0, 2000.0], np.float32), 7)
'[1.0000e+00, 2.0000e+03]'
>>> format_tensor_data(np.array([0.5, -2.0]), 7)
'[ 0.5000, -2.0000]'
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np


@dataclasses.dataclass
class PrinterOptions:
    """The options ``set_printoptions`` sets (PyTorch's ``torch._tensor_str.PRINT_OPTS``)."""

    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = PrinterOptions()

_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80),
             "full": (4, math.inf, 3, 80)}


def set_printoptions(precision: int | None = None, threshold: float | None = None,
                     edgeitems: int | None = None, linewidth: int | None = None,
                     profile: str | None = None, sci_mode: bool | None = None) -> None:
    """Set how tensors print: digits after the point, the element count above which a
    tensor is summarised, the items kept at each edge of a summary, the line width, a
    ``profile`` (``"default"``, ``"short"``, ``"full"``) and scientific notation (None:
    chosen per tensor). As in PyTorch, each call resets ``sci_mode``.

    >>> import funcgrad.torch as torch
    >>> torch.set_printoptions(precision=2)
    >>> torch.tensor([1.12345])
    tensor([1.12])
    >>> torch.set_printoptions(profile="default")
    >>> torch.tensor([1.12345])
    tensor([1.1235])
    """
    if profile is not None and profile in _PROFILES:
        (PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems,
         PRINT_OPTS.linewidth) = _PROFILES[profile]
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """The current print options, as keyword arguments for ``set_printoptions``.

    >>> get_printoptions()["precision"]
    4
    """
    return dataclasses.asdict(PRINT_OPTS)


def _summarized(arr: np.ndarray, summarize: bool) -> np.ndarray:
    """The values that are shown (edges only when summarising): they set the format."""
    if not summarize or arr.ndim == 0:
        return arr.reshape(-1)
    edge = PRINT_OPTS.edgeitems
    n = arr.shape[0]
    if arr.ndim == 1:
        # PyTorch's slices: with no edge items, ``arr[-0:]`` is the whole vector.
        return np.concatenate([arr[:edge], arr[-edge:]]) if n > 2 * edge else arr
    if not edge:
        return arr.reshape(-1)[:0]
    idx = list(range(n)) if n <= 2 * edge else list(range(edge)) + list(range(n - edge, n))
    return np.concatenate([_summarized(arr[i], summarize) for i in idx])


def _formatter(values: np.ndarray) -> tuple[Callable[[Any], str], int]:
    """A value formatter and the column width, chosen as PyTorch chooses them."""
    if values.dtype.kind == "b":
        return (lambda v: "True" if v else "False"), max((len(str(bool(v))) for v in values),
                                                         default=1)
    if values.dtype.kind in "iu":
        width = max((len(str(int(v))) for v in values), default=1)
        return (lambda v: str(int(v))), width
    finite = values[np.isfinite(values) & (values != 0)].astype(np.float64)
    prec = PRINT_OPTS.precision
    if finite.size == 0:
        def fmt_int(v: float) -> str:
            return f"{v:.0f}." if math.isfinite(v) else _special(v)
        # Only zeros and non-finite values: no padding, as in PyTorch.
        return fmt_int, 1
    amax, amin = float(np.max(np.abs(finite))), float(np.min(np.abs(finite)))
    int_mode = bool(np.all(finite == np.ceil(finite)))
    if PRINT_OPTS.sci_mode is not None:
        sci = bool(PRINT_OPTS.sci_mode)
    else:
        sci = amax / amin > 1000.0 or amax > 1.0e8 or amin < 1.0e-4

    def fmt(v: float) -> str:
        if sci:
            return f"{v:.{prec}e}"
        if int_mode:
            return f"{v:.0f}." if math.isfinite(v) else _special(v)
        return f"{v:.{prec}f}"

    width = max(1, *(len(fmt(v)) for v in finite.tolist()))
    return fmt, width


def _special(v: float) -> str:
    return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")


def format_tensor_data(arr: np.ndarray, indent: int) -> str:
    """The bracketed body of a tensor's repr, starting at column ``indent``."""
    summarize = arr.size > PRINT_OPTS.threshold
    edge = PRINT_OPTS.edgeitems
    linewidth = PRINT_OPTS.linewidth
    shown = _summarized(arr, summarize)
    if arr.dtype.kind == "c":
        # Real and imaginary parts have a format each; the element is their concatenation.
        fr, wr = _formatter(shown.real.copy())
        fi, wi = _formatter(shown.imag.copy())
        width = wr + wi + 1

        def pad(f: Callable[[Any], str], w: int, v: Any) -> str:
            s = f(v)
            return " " * (w - len(s)) + s

        def cell(v: Any) -> str:
            re_s = pad(fr, wr, v.real)
            im_s = (pad(fi, wi, v.imag) + "j").lstrip()
            return re_s + ("" if im_s[0] in "+-" else "+") + im_s
    else:
        fmt, width = _formatter(shown)

        def cell(v: Any) -> str:
            s = fmt(v)
            return " " * (width - len(s)) + s

    def rec(a: np.ndarray, ind: int) -> str:
        if a.ndim == 0:
            return cell(a.item())
        n = a.shape[0]
        cut = summarize and n > 2 * edge
        if a.ndim == 1:
            vals = a.tolist()
            if summarize and not edge:
                data = ["..."]
            elif cut:
                data = [cell(v) for v in vals[:edge]] + [" ..."] + \
                    [cell(v) for v in vals[-edge:]]
            else:
                data = [cell(v) for v in vals]
            per_line = max(1, (linewidth - ind) // (width + 2))
            lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
            return "[" + ("," + "\n" + " " * (ind + 1)).join(lines) + "]"
        rows = [rec(a[i], ind + 1) for i in (list(range(edge)) if cut else range(n))]
        if cut:
            rows += ["..."] + [rec(a[i], ind + 1) for i in range(n - edge, n)]
        sep = "," + "\n" * (a.ndim - 1) + " " * (ind + 1)
        return "[" + sep.join(rows) + "]"

    return rec(arr, indent)
