"""Write ``cupy_api.txt``: the public names of the installed CuPy, from ``dir()`` (no GPU needed).

Run ``PYTHONPATH=tests/support python -m fakecupy.snapshot`` after changing the pinned CuPy. A name
marked ``=numpy`` is NumPy's own object re-exported by CuPy (dtypes, ``finfo``...), which the
emulator hands out unchanged.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os

import numpy

MODULES = ("cupy", "cupy.linalg", "cupy.fft", "cupy.random", "cupy.lib.stride_tricks",
           "cupy.cuda", "cupy.cuda.runtime", "cupyx", "cupyx.scipy.linalg",
           "cupyx.scipy.special")


def _public_names(modname: str) -> list[str]:
    """``dir()`` of the module; where importing it needs CUDA libraries this machine lacks
    (``cupyx.scipy.linalg`` loads cuBLAS), the names its ``__init__`` imports, read from the
    source."""
    try:
        return sorted(dir(importlib.import_module(modname)))
    except ImportError:
        spec = importlib.util.find_spec(modname)
        if spec is None or spec.origin is None:
            raise
        with open(spec.origin) as f:
            tree = ast.parse(f.read())
        return sorted(alias.asname or alias.name for node in tree.body
                      if isinstance(node, ast.ImportFrom) for alias in node.names)


PATH = os.path.join(os.path.dirname(__file__), "cupy_api.txt")


def snapshot_lines() -> list[str]:
    """One line per public name of each module in MODULES, as the installed CuPy has them."""
    cupy = importlib.import_module("cupy")
    lines = []
    for modname in MODULES:
        names = _public_names(modname)
        mod = cupy if modname == "cupy" else None
        for n in names:
            if n.startswith("_"):
                continue
            same = (mod is not None and hasattr(numpy, n)
                    and getattr(mod, n) is getattr(numpy, n))
            lines.append(f"{modname}.{n}{' =numpy' if same else ''}")
    return [f"# Public names of cupy {cupy.__version__}, from dir() of the installed wheel.",
            "# Regenerate: PYTHONPATH=tests/support python -m fakecupy.snapshot", *lines]


if __name__ == "__main__":
    with open(PATH, "w") as f:
        f.write("\n".join(snapshot_lines()) + "\n")
