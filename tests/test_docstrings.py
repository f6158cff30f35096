"""Every docstring example in the package runs and prints what it says."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import funcgrad
import funcgrad.backends
import funcgrad.transforms


def _modules() -> list[str]:
    names = ["funcgrad"]
    for pkg in (funcgrad, funcgrad.transforms, funcgrad.backends):
        for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
            names.append(info.name)
    return sorted(set(names))


# Modules that need an optional package (an extra) to import, and that package.
_NEEDS = {"funcgrad.torch.utils.tensorboard": "tensorboard"}


# The examples show what a user sees by default: JAX's 32-bit mode.
@pytest.mark.x32
@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name: str) -> None:
    for prefix, package in _NEEDS.items():
        if name == prefix or name.startswith(prefix + "."):
            pytest.importorskip(package)
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
