"""Write tests/data/jax_promotion.json: JAX's type promotion, the oracle of the JAX face.

Needs ``jax`` (the ``compat`` extra) only when regenerating:

    python scripts/gen_jax_promotion_table.py

For every pair of operands (dtypes, weakly typed arrays of each dtype, and the Python
types bool/int/float/complex), in both 64-bit modes, it records what
``jax.numpy.promote_types`` and ``jax.dtypes.result_type(..., return_weak_type_flag=True)``
give, and the dtype and weak type of ``a + b`` on real arrays.
"""

from __future__ import annotations

import json
import pathlib
import warnings

import jax
import jax.numpy as jnp
import numpy as np
from jax._src import dtypes as jdt

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "bfloat16", "float16", "float32", "float64", "complex64", "complex128"]
PY = {"py_bool": bool, "py_int": int, "py_float": float, "py_complex": complex}


# Weakly typed arrays, as jnp.asarray makes them from Python scalars (default dtypes).
WEAK = {"int*": 1, "float*": 1.5, "complex*": 1j}


def operand(name: str) -> object:
    """A value for ``name``: a strong array of that dtype, a weak array ('float*'), or a
    Python type."""
    if name in PY:
        return PY[name]
    if name in WEAK:
        return jnp.asarray(WEAK[name])
    return jnp.ones((), jnp.dtype(name))


def main() -> None:
    out: dict[str, object] = {"jax_version": jax.__version__, "modes": {}}
    warnings.simplefilter("ignore")
    for x64 in (False, True):
        jax.config.update("jax_enable_x64", x64)
        promote = {}
        names = DTYPES + list(PY)
        for a in names:
            for b in names:
                promote[f"{a},{b}"] = str(jnp.promote_types(PY.get(a, a), PY.get(b, b)))
        result = {}
        arrays = DTYPES + list(WEAK) + list(PY)
        for a in arrays:
            for b in arrays:
                x, y = operand(a), operand(b)
                dt, weak = jdt.result_type(x, y, return_weak_type_flag=True)
                result[f"{a},{b}"] = [str(dt), bool(weak)]
        add = {}
        values = DTYPES + list(WEAK)
        scalars = {"py_int": 1, "py_float": 1.5, "py_complex": 1j, "py_bool": True}
        for a in values:
            for b in values + list(scalars):
                y = scalars.get(b, None)
                r = jnp.add(operand(a), operand(b) if y is None else y)
                add[f"{a},{b}"] = [str(r.dtype), bool(r.weak_type)]
        out["modes"]["x64" if x64 else "x32"] = {  # type: ignore[index]
            "promote_types": promote, "result_type": result, "add": add}
    path = pathlib.Path(__file__).resolve().parents[1] / "tests" / "data" / "jax_promotion.json"
    path.write_text(json.dumps(out, sort_keys=True, separators=(",", ":")) + "\n")
    print(f"wrote {path} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
