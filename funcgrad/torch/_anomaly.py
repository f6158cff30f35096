"""Anomaly mode's state and checks (the public face is ``torch.autograd.detect_anomaly``).

While the mode is on, each graph node made by a Tensor operation keeps the Python stack
of the forward call that made it, so that an error in its backward can say where the
operation came from; with ``check_nan`` a node whose backward returns a NaN raises
PyTorch's error. Off, nothing is recorded: the graph code reads one flag per node.

>>> import funcgrad.torch as torch
>>> torch.is_anomaly_enabled()
False
"""

from __future__ import annotations

import os
import traceback
import warnings
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np


class _State:
    """Process-wide, as PyTorch's (its anomaly flag is not per thread)."""

    enabled = False
    check_nan = True
    # enabled and check_nan: what the graph reads once per node.
    nan_check = False


state = _State()

# The forward stack of each node made while the mode was on (weakly: a node's life is
# the graph's).
_stacks: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off (``torch.set_anomaly_enabled``).

    >>> import funcgrad.torch as torch
    >>> torch.set_anomaly_enabled(True); torch.is_anomaly_enabled()
    True
    >>> torch.set_anomaly_enabled(False)
    """
    state.enabled = bool(enabled)
    state.check_nan = bool(check_nan)
    state.nan_check = state.enabled and state.check_nan


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on."""
    return state.enabled


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection also checks backward results for NaN."""
    return state.check_nan


def record(node: Any) -> None:
    """Keep the forward stack of ``node`` (called only while the mode is on)."""
    # The last frames are this module's and the graph's, not the user's.
    frames = [f for f in traceback.extract_stack()[:-1]
              if not f.filename.startswith(_PACKAGE_DIR)]
    _stacks[node] = "".join(traceback.format_list(frames))


def check_nan(node: Any, name: str, in_cts: Sequence[Any]) -> None:
    """PyTorch's error for a backward that returned NaN in one of its outputs."""
    for i, ct in enumerate(in_cts):
        if ct is None:
            continue
        buf = getattr(ct, "primal", ct)  # a tracked value (create_graph): its value
        buf = getattr(buf, "_value", buf)
        if not hasattr(buf, "dtype"):
            continue
        xp = np if type(buf) is np.ndarray else _module_of(buf)
        if xp is None:
            continue
        if bool(xp.isnan(buf).any()):
            raise RuntimeError(f"Function '{name}' returned nan values in its {i}th output.")


def _module_of(buf: Any) -> Any:
    if type(buf).__module__.startswith("cupy"):
        import cupy  # noqa: PLC0415

        return cupy
    if isinstance(buf, np.generic):
        return np
    return None


def warn_failed(name: str, node: Any) -> None:
    """PyTorch's warning when the backward of ``node`` failed: where it was made."""
    stack = _stacks.get(node)
    if stack is None:
        msg = (f"Error detected in {name}. No forward pass information available. Enable "
               "detect anomaly during forward pass for more information.")
    else:
        msg = (f"Error detected in {name}. Traceback of forward call that caused the "
               f"error:\n{stack}")
    warnings.warn(msg, UserWarning, stacklevel=3)


# Frames inside funcgrad are left out of the forward stack: the user's lines are the news.
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

__all__ = ["check_nan", "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "record",
           "set_anomaly_enabled", "state", "warn_failed"]
