"""Helpers the side-by-side torch tests share: a call's outcome (its value, or its error's
type name and message) and a tensor's values as NumPy."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np


def values(t: Any) -> np.ndarray:
    """``t``'s values (a funcgrad or a torch tensor) as a NumPy array."""
    return np.asarray(t.detach().numpy())


def outcome(fn: Callable[[], Any], message: Callable[[BaseException], str] = str
            ) -> tuple[str, Any]:
    """``("ok", fn())``, or the error's type name and ``message(error)``; warnings are
    silenced (the tests that compare them record them themselves)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok", fn()
    except Exception as e:  # noqa: BLE001 - the error type and message are compared
        return type(e).__name__, message(e)
