"""Griffe extension: ``funcgrad.transforms`` and ``funcgrad.backends`` as members of ``funcgrad``.

The wheel installs ``transforms/`` and ``backends/`` as subpackages of ``funcgrad``
(setuptools ``package-dir``); griffe looks for submodules in ``funcgrad/`` only, so the
names ``funcgrad`` re-exports from them (``grad``, ``jit``, ``vmap``...) would not resolve.
This inspects them by import and hangs them under ``funcgrad``.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import griffe

MAPPED = ("transforms", "backends")


class MappedPackages(griffe.Extension):
    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any
                   ) -> None:
        if pkg.name != "funcgrad":
            return
        options = {"extensions": loader.extensions, "docstring_parser": loader.docstring_parser,
                   "docstring_options": loader.docstring_options,
                   "lines_collection": loader.lines_collection,
                   "modules_collection": loader.modules_collection}
        for name in MAPPED:
            full = f"funcgrad.{name}"
            sub = griffe.inspect(name, parent=pkg, **options)
            pkg.set_member(name, sub)
            for info in pkgutil.iter_modules(importlib.import_module(full).__path__):
                sub.set_member(info.name, griffe.inspect(info.name, parent=sub, **options))
