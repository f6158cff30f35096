"""PyTorch's printing of tensors: number formats, line wrapping at 80 columns, summaries.

>>> import numpy as np
>>> format_tensor_data(np.array([1.0, 2000.0], np.float32), 7)
'[1.0000e+00, 2.0000e+03]'
>>> format_tensor_data(np.array([0.5, -2.0]), 7)
'[ 0.5000, -2.0000]'
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

LINEWIDTH = 80
THRESHOLD = 1000
EDGEITEMS = 3


def _summarized(arr: np.ndarray, summarize: bool) -> np.ndarray:
    """The values that are shown (edges only when summarising): they set the format."""
    if not summarize or arr.ndim == 0:
        return arr.reshape(-1)
    parts = []
    n = arr.shape[0]
    idx = list(range(n)) if n <= 2 * EDGEITEMS else \
        list(range(EDGEITEMS)) + list(range(n - EDGEITEMS, n))
    for i in idx:
        parts.append(_summarized(arr[i], summarize))
    return np.concatenate(parts) if parts else arr.reshape(-1)


def _formatter(values: np.ndarray) -> tuple[Callable[[Any], str], int]:
    """A value formatter and the column width, chosen as PyTorch chooses them."""
    if values.dtype.kind == "b":
        return (lambda v: "True" if v else "False"), max((len(str(bool(v))) for v in values),
                                                         default=0)
    if values.dtype.kind in "iu":
        width = max((len(str(int(v))) for v in values), default=0)
        return (lambda v: str(int(v))), width
    finite = values[np.isfinite(values) & (values != 0)].astype(np.float64)
    if finite.size == 0:
        def fmt_int(v: float) -> str:
            return f"{v:.0f}." if math.isfinite(v) else _special(v)
        # Only zeros and non-finite values: no padding, as in PyTorch.
        return fmt_int, 0
    amax, amin = float(np.max(np.abs(finite))), float(np.min(np.abs(finite)))
    int_mode = bool(np.all(finite == np.ceil(finite)))
    sci = (amax / amin > 1000.0 or amax > 1.0e8) if int_mode else \
        (amax / amin > 1000.0 or amax > 1.0e8 or amin < 1.0e-4)

    def fmt(v: float) -> str:
        if not math.isfinite(v):
            return _special(v)
        if sci:
            return f"{v:.4e}"
        if int_mode:
            return f"{v:.0f}."
        return f"{v:.4f}"

    width = max(len(fmt(v)) for v in finite.tolist())
    return fmt, width


def _special(v: float) -> str:
    return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")


def format_tensor_data(arr: np.ndarray, indent: int) -> str:
    """The bracketed body of a tensor's repr, starting at column ``indent``."""
    summarize = arr.size > THRESHOLD
    shown = _summarized(arr, summarize)
    if arr.dtype.kind == "c":
        # Real and imaginary parts have a format each; the element is their concatenation.
        fr, wr = _formatter(shown.real.copy())
        fi, wi = _formatter(shown.imag.copy())
        width = wr + wi + 1

        def cell(v: Any) -> str:
            re_s = fr(v.real)
            im_s = (" " * (wi - len(fi(v.imag))) + fi(v.imag) + "j").lstrip()
            return " " * (wr - len(re_s)) + re_s + ("" if im_s[0] in "+-" else "+") + im_s
    else:
        fmt, width = _formatter(shown)

        def cell(v: Any) -> str:
            s = fmt(v)
            return " " * (width - len(s)) + s

    def rec(a: np.ndarray, ind: int) -> str:
        if a.ndim == 0:
            return cell(a.item())
        n = a.shape[0]
        cut = summarize and n > 2 * EDGEITEMS
        if a.ndim == 1:
            vals = a.tolist()
            data = ([cell(v) for v in vals[:EDGEITEMS]] + [" ..."] +
                    [cell(v) for v in vals[-EDGEITEMS:]]) if cut else [cell(v) for v in vals]
            per_line = max(1, (LINEWIDTH - ind) // (width + 2))
            lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
            return "[" + ("," + "\n" + " " * (ind + 1)).join(lines) + "]"
        rows = [rec(a[i], ind + 1) for i in (list(range(EDGEITEMS)) if cut else range(n))]
        if cut:
            rows += ["..."] + [rec(a[i], ind + 1) for i in range(n - EDGEITEMS, n)]
        sep = "," + "\n" * (a.ndim - 1) + " " * (ind + 1)
        return "[" + sep.join(rows) + "]"

    return rec(arr, indent)
