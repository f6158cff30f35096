"""Suite-wide fixtures.

Most of the suite checks derivatives in float64 against finite differences, so every test
runs with 64-bit mode on, unless it is marked ``x32``: those check the JAX face's default
32-bit behaviour (dtypes, printing, promotion) as JAX users meet it, with the global
setting untouched by any context.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import json
import os
import pathlib
import sys
from typing import Any

import pytest

# The CuPy emulator (tests/support/fakecupy): gpu-marked tests run on it where CuPy finds no
# device. Only tests/support goes on sys.path (the repository root would make its
# transforms/ and backends/ folders importable as top-level modules).
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "support"))
from fakecupy.plugin import (  # noqa: E402, F401 - fixtures and the option, for the suite
    _gpu_tests_on_emulator,
    fake_cupy,
    pytest_addoption,
)
from hypothesis import settings as _hypothesis_settings

from funcgrad.config import config, enable_x64

# Hypothesis: developers' runs draw fresh examples each time (that is how the fuzz and
# property tests keep finding things); CI (FUNCGRAD_HYPOTHESIS_PROFILE=ci, set by .ci/run)
# derandomizes, so a submission is judged on the examples its author's CI run checked.
_hypothesis_settings.register_profile("ci", derandomize=True, print_blob=True)
_hypothesis_settings.register_profile("dev", print_blob=True)
_PROFILE = os.environ.get("FUNCGRAD_HYPOTHESIS_PROFILE", "dev")
_hypothesis_settings.load_profile(_PROFILE)


# Seconds each test file took in a CI run (tests/data/test_file_seconds.json, refreshed by
# hand from a --junitxml report): the longest files are handed to the workers first.
_FILE_SECONDS: dict[str, float] = json.loads(
    (pathlib.Path(__file__).parent / "data" / "test_file_seconds.json").read_text())


def _longest_files_first(items: list[Any]) -> None:
    """Order the tests by their file's measured time, longest first (files not measured
    last, in collection order): with ``--dist loadfile --no-loadscope-reorder`` a long
    file no longer starts last and leaves one worker running alone at the end."""
    root = pathlib.Path(__file__).parent.parent

    def seconds(item: Any) -> float:
        try:
            rel = pathlib.Path(str(item.path)).relative_to(root).as_posix()
        except ValueError:
            return 0.0
        return _FILE_SECONDS.get(rel, 0.0)

    items.sort(key=lambda item: -seconds(item))


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    """Longest test files first (see :func:`_longest_files_first`). In the CI profile each
    property test draws a quarter of its examples (at least 4). CI's draws are derandomized, the
    same on every run: a regression gate over a fixed sample, kept within its time budget
    (the oracles' compilations are most of it). Developers' runs draw all the examples,
    fresh each time; they are what explores."""
    _longest_files_first(items)
    if _PROFILE != "ci":
        return
    seen: set[int] = set()
    for item in items:
        fn = getattr(item, "obj", None)
        if id(fn) in seen or not hasattr(fn, "hypothesis"):
            continue
        seen.add(id(fn))
        own = fn._hypothesis_internal_use_settings
        if own.max_examples > 4:
            fn._hypothesis_internal_use_settings = _hypothesis_settings(
                own, max_examples=max(4, (own.max_examples + 3) // 4))


def _libc_malloc_trim() -> Any:
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


_malloc_trim = _libc_malloc_trim()


@pytest.fixture(autouse=True)
def _x64_mode(request: pytest.FixtureRequest):
    if request.node.get_closest_marker("x32") is not None:
        config.update("jax_enable_x64", False)
        # The x32 tests compare with JAX at its 32-bit default, whatever an earlier test
        # (in this worker process) left JAX's own flag at.
        real_jax = sys.modules.get("jax")
        jax_x64 = real_jax.config.jax_enable_x64 if real_jax is not None else None
        if real_jax is not None:
            real_jax.config.update("jax_enable_x64", False)
        try:
            yield
        finally:
            config.update("jax_enable_x64", False)
            if real_jax is not None:
                real_jax.config.update("jax_enable_x64", jax_x64)
        return
    with enable_x64(True):
        yield


@pytest.fixture(autouse=True, scope="module")
def _drop_oracle_caches():
    """After each test module, the oracles' compiled programs are dropped: real JAX keeps
    every XLA executable it compiled (a few MB each, thousands per module), which grew a
    test worker to 5-6 GB over the suite. funcgrad's own caches stay: they are under test."""
    yield
    real_jax = sys.modules.get("jax")
    clear = getattr(real_jax, "clear_caches", None)
    # Every module: clearing only above 2 GiB measured slower (419 s against 354 s on the 14
    # heaviest files), as each gc.collect() then walks a much larger heap.
    if clear is not None:
        clear()
    dynamo = sys.modules.get("torch._dynamo")
    reset = getattr(dynamo, "reset", None)
    if reset is not None:
        reset()
    gc.collect()
    if _malloc_trim is not None:  # freed native memory back to the system
        _malloc_trim(0)


@pytest.fixture
def jax_x64(request: pytest.FixtureRequest):
    """Real JAX in 64-bit mode beside funcgrad's (the suite's default), restored after, for
    tests that compare with JAX in float64: ``pytestmark = pytest.mark.usefixtures(
    "jax_x64")``. The x32-marked tests keep the 32-bit mode ``_x64_mode`` gives both."""
    real_jax = sys.modules.get("jax")
    if real_jax is None or not hasattr(real_jax, "config") or \
            request.node.get_closest_marker("x32") is not None:
        yield
        return
    saved = real_jax.config.jax_enable_x64
    real_jax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        real_jax.config.update("jax_enable_x64", saved)


def pytest_sessionfinish(session: Any) -> None:
    """Under pytest-xdist, a worker hands its documentation-example counts to the
    controller, which prints the summary."""
    counts = session.config.__dict__.get("_funcgrad_doc_blocks")
    out = getattr(session.config, "workeroutput", None)
    if counts and out is not None:
        out["funcgrad_doc_blocks"] = dict(counts)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    counts = getattr(node, "workeroutput", {}).get("funcgrad_doc_blocks")
    if counts:
        node.config.__dict__.setdefault("_funcgrad_doc_blocks", {}).update(counts)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: Any) -> None:
    """The documentation site's examples that ran (tests/test_docs_examples.py)."""
    counts = config.__dict__.get("_funcgrad_doc_blocks")
    if counts:
        terminalreporter.write_line(
            f"documentation examples: {sum(counts.values())} code blocks ran on "
            f"{len(counts)} pages")
