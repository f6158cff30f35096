"""pytest wiring: ``--fake-cupy`` and the ``fake_cupy`` fixture.

``--fake-cupy=auto`` (the default) runs the ``gpu``-marked tests under the emulator, each on
a non-blocking stream of its own, when the real CuPy finds no device; ``always`` does so
even where one exists, ``never`` leaves them to skip. Tests that need the emulator itself
(its counters, its checks) ask for the ``fake_cupy`` fixture.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import pytest

import fakecupy


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--fake-cupy", choices=("auto", "always", "never"), default="auto",
                     help="run gpu-marked tests on the CuPy emulator (tests/support/fakecupy)"
                          ": auto = when CuPy finds no CUDA device")


@functools.cache
def real_gpu() -> bool:
    """Whether the real CuPy is importable and sees a CUDA device."""
    try:
        import cupy  # noqa: PLC0415

        return int(cupy.cuda.runtime.getDeviceCount()) > 0
    except Exception:  # noqa: BLE001 - no CuPy, no driver or no device all mean "no"
        return False


@pytest.fixture
def fake_cupy() -> Iterator[Any]:
    """The emulator installed as ``cupy`` for one test (skips where it cannot run)."""
    if not fakecupy.available():
        pytest.skip("the CuPy emulator needs CuPy's wheel (NVRTC) and g++")
    if fakecupy.installed():
        fakecupy.STATS.reset()
        yield fakecupy.install()
        return
    cp = fakecupy.install()
    try:
        yield cp
    finally:
        fakecupy.uninstall()


@pytest.fixture(autouse=True)
def _gpu_tests_on_emulator(request: pytest.FixtureRequest) -> Iterator[None]:
    if request.node.get_closest_marker("gpu") is None or "fake_cupy" in request.fixturenames:
        yield
        return
    mode = request.config.getoption("--fake-cupy")
    if mode == "never" or (mode == "auto" and real_gpu()) or not fakecupy.available():
        yield
        return
    cp = fakecupy.install()
    try:
        # On a stream of their own, unordered with the default one: work funcgrad sent
        # elsewhere, or data it shared across streams unsafely, is reported as a race.
        with cp.cuda.Stream(non_blocking=True):
            yield
    finally:
        fakecupy.uninstall()
