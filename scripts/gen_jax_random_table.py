"""Write tests/data/jax_random_table.json: what ``jax.random`` gives for keys x samplers x
shapes x dtypes, the oracle of tests/test_random_table.py (run on NumPy and on CuPy).

Needs ``jax`` only when regenerating:

    python scripts/gen_jax_random_table.py

Each entry names a ``jax.random`` function, its arguments after the key (JSON values; a
``dtype`` keyword is a dtype name), the seed of ``random.PRNGKey`` and the 64-bit mode, and
records the result's dtype, shape and values, and whether funcgrad must match it bit for bit
(``exact``) or to a few ulps (samplers that apply log, erf_inv... to the exact bits:
docs/sharp_bits.md).
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

import jax
import numpy as np

SEEDS = [0, 42, 2 ** 31 - 1]
SHAPES = [[], [5], [2, 3]]

# (function, positional arguments after the key, keyword arguments, exact)
EXACT_PER_SHAPE = [
    ("bits", [], {"dtype": "uint32"}),
    ("bits", [], {"dtype": "uint8"}),
    ("uniform", [], {"minval": -2.0, "maxval": 3.0}),
    ("randint", [], {"minval": -5, "maxval": 100}),
    ("bernoulli", [0.3], {}),
    ("rademacher", [], {}),
    ("poisson", [3.5], {}),
]
CLOSE_PER_SHAPE = [
    ("normal", [], {}),
    ("exponential", [], {}),
    ("gumbel", [], {}),
    ("laplace", [], {}),
    ("logistic", [], {}),
    ("cauchy", [], {}),
    ("truncated_normal", [-1.0, 1.5], {}),
    ("gamma", [2.5], {}),
    ("beta", [2.0, 3.0], {}),
]
WHOLE = [
    ("split", [3], {}, True),
    ("fold_in", [7], {}, True),
    ("permutation", [10], {}, True),
    ("choice", [10], {"shape": [4], "replace": False}, True),
    ("categorical", [[0.1, -1.0, 2.0, 0.5]], {"shape": [6]}, True),
]
X64 = [
    ("uniform", [], {"shape": [4], "dtype": "float64"}, True),
    ("bits", [], {"shape": [4], "dtype": "uint64"}, True),
    ("normal", [], {"shape": [4], "dtype": "float64"}, False),
]


def call(random: Any, name: str, seed: int, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """``random.<name>(PRNGKey(seed), *args, **kwargs)`` (list arguments as float32
    arrays): the test reads the table the same way."""
    kw = {k: (np.dtype(v) if k == "dtype" else tuple(v) if k == "shape" else v)
          for k, v in kwargs.items()}
    pos = [np.asarray(a, np.float32) if isinstance(a, list) else a for a in args]
    return getattr(random, name)(random.PRNGKey(seed), *pos, **kw)


def entry(name: str, seed: int, args: list[Any], kwargs: dict[str, Any], exact: bool,
          x64: bool) -> dict[str, Any]:
    jax.config.update("jax_enable_x64", x64)
    out = np.asarray(call(jax.random, name, seed, args, kwargs))
    return {"fn": name, "seed": seed, "args": args, "kwargs": kwargs, "x64": x64,
            "exact": exact, "dtype": str(out.dtype), "shape": list(out.shape),
            "values": out.ravel().tolist()}


def main() -> None:
    entries = []
    for seed in SEEDS:
        for shape in SHAPES:
            for exact, table in ((True, EXACT_PER_SHAPE), (False, CLOSE_PER_SHAPE)):
                for name, args, kwargs in table:
                    entries.append(entry(name, seed, args, {**kwargs, "shape": shape}, exact,
                                         False))
        for name, args, kwargs, exact in WHOLE:
            entries.append(entry(name, seed, args, kwargs, exact, False))
        for name, args, kwargs, exact in X64:
            entries.append(entry(name, seed, args, kwargs, exact, True))
    out = pathlib.Path(__file__).resolve().parents[1] / "tests" / "data" / "jax_random_table.json"
    # One entry a line: a regenerated table diffs by entry.
    lines = ",\n".join(json.dumps(e) for e in entries)
    out.write_text(f'{{"jax": "{jax.__version__}", "entries": [\n{lines}\n]}}\n')
    print(f"wrote {out} ({len(entries)} entries)")


if __name__ == "__main__":
    main()
