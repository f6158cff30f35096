"""Suite-wide fixtures.

Most of the suite checks derivatives in float64 against finite differences, so every test
runs with 64-bit mode on, unless it is marked ``x32``: those check the JAX face's default
32-bit behaviour (dtypes, printing, promotion) as JAX users meet it, with the global
setting untouched by any context.
"""

from __future__ import annotations

import pytest

from funcgrad.config import config, enable_x64


@pytest.fixture(autouse=True)
def _x64_mode(request: pytest.FixtureRequest):
    if request.node.get_closest_marker("x32") is not None:
        config.update("jax_enable_x64", False)
        try:
            yield
        finally:
            config.update("jax_enable_x64", False)
        return
    with enable_x64(True):
        yield
