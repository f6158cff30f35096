"""Helpers of the tests that compare funcgrad.torch with PyTorch: what a call gives, and
the same error from both."""

from __future__ import annotations

from typing import Any


def outcome(fn: Any) -> tuple[str, Any]:
    """("ok", result) or (exception type name, message)."""
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - compared with the oracle's
        return type(e).__name__, str(e)


def same_error(mine: Any, theirs: Any) -> None:
    """Both calls raise: the same exception type name and the same message."""
    a, b = outcome(mine), outcome(theirs)
    assert a[0] == b[0] != "ok", (a, b)
    assert a[1] == b[1]
