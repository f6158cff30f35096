"""Write tests/data/jax_port_results.json: what the port suite's JAX programs
(tests/support/port_programs.py) give under JAX 0.10.2 in its default 32-bit mode, the
oracle of tests/test_port_jax.py.

Needs ``jax`` only when regenerating:

    python scripts/gen_jax_port_results.py
"""

from __future__ import annotations

import json
import pathlib
import sys

import jax
import jax.numpy as jnp
from jax import lax

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "support"))
import port_programs  # noqa: E402 - the programs live with the tests


def main() -> None:
    jax.config.update("jax_enable_x64", False)
    results = {p.__name__: port_programs.run(p, jax, jnp, lax) for p in port_programs.PROGRAMS}
    out = ROOT / "tests" / "data" / "jax_port_results.json"
    out.write_text(json.dumps({"jax": jax.__version__, "programs": results}, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
