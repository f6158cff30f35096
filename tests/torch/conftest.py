"""Shared fixtures for the Tensor facade tests (kept minimal and generic)."""

from __future__ import annotations

import pytest

import funcgrad.torch as ft


@pytest.fixture(autouse=True)
def _restore_grad_mode():
    """Every test starts with grad mode on, and a test that fails inside ``no_grad`` (or
    calls ``set_grad_enabled(False)``) cannot leak that mode into the next test."""
    prev = ft.is_grad_enabled()
    ft.set_grad_enabled(True)
    yield
    ft.set_grad_enabled(prev)
