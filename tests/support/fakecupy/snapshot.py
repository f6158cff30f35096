"""Write ``cupy_api.txt``: the public names of the installed CuPy, from ``dir()`` (no GPU needed).

Run ``PYTHONPATH=tests/support python -m fakecupy.snapshot`` after changing the pinned CuPy. A name
marked ``=numpy`` is NumPy's own object re-exported by CuPy (dtypes, ``finfo``...), which the
emulator hands out unchanged.
"""

from __future__ import annotations

import importlib
import os

import numpy

MODULES = ("cupy", "cupy.linalg", "cupy.fft", "cupy.random", "cupy.cuda", "cupy.cuda.runtime",
           "cupyx", "cupyx.scipy.special")
PATH = os.path.join(os.path.dirname(__file__), "cupy_api.txt")


def snapshot_lines() -> list[str]:
    """One line per public name of each module in MODULES, as the installed CuPy has them."""
    cupy = importlib.import_module("cupy")
    lines = []
    for modname in MODULES:
        mod = importlib.import_module(modname)
        for n in sorted(dir(mod)):
            if n.startswith("_"):
                continue
            same = (modname == "cupy" and hasattr(numpy, n)
                    and getattr(mod, n) is getattr(numpy, n))
            lines.append(f"{modname}.{n}{' =numpy' if same else ''}")
    return [f"# Public names of cupy {cupy.__version__}, from dir() of the installed wheel.",
            "# Regenerate: PYTHONPATH=tests/support python -m fakecupy.snapshot", *lines]


if __name__ == "__main__":
    with open(PATH, "w") as f:
        f.write("\n".join(snapshot_lines()) + "\n")
