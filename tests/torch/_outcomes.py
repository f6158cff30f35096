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


def shown(x: Any) -> Any:
    """What a side-by-side test compares of a result: a tensor's ``repr`` (detached, so that
    the ``grad_fn`` address is left out), containers element by element."""
    import torch  # noqa: PLC0415 - only the tests that have torch call this

    import funcgrad.torch as ft  # noqa: PLC0415

    if isinstance(x, (ft.Tensor, torch.Tensor)):
        return repr(x.detach()) if x.requires_grad else repr(x)
    if isinstance(x, (tuple, list)):
        return type(x)(shown(v) for v in x)
    return x


def same_outcome(call: Callable[[Any], Any]) -> None:
    """``call(funcgrad.torch)`` and ``call(torch)`` give the same shown result, or the same
    error type and message."""
    import torch  # noqa: PLC0415

    import funcgrad.torch as ft  # noqa: PLC0415

    assert outcome(lambda: shown(call(ft))) == outcome(lambda: shown(call(torch)))
