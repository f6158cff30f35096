"""Write tests/data/torch_promotion.json: PyTorch 2.13's promotion, the oracle of the PyTorch
face. Needs ``torch==2.13.0`` (the ``compat`` extra) only when regenerating:

    python scripts/gen_torch_promotion_table.py

Records ``torch.promote_types`` for every pair of dtypes (or the error's text), and
``torch.result_type`` for pairs of operands drawn from: a 1-D tensor, a 0-d tensor and a
Python number of each kind, under both default dtypes (float32 and float64).
"""

from __future__ import annotations

import json
import pathlib

import torch

DTYPES = ["bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
          "float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
SCALARS = {"py_bool": True, "py_int": 2, "py_float": 2.5, "py_complex": 1j}


def operand(name: str) -> object:
    if name in SCALARS:
        return SCALARS[name]
    kind, dt = name.split(":")
    shape = () if kind == "0d" else (2,)
    return torch.ones(shape, dtype=getattr(torch, dt))


def main() -> None:
    out: dict[str, object] = {"torch_version": torch.__version__}
    promote = {}
    for a in DTYPES:
        for b in DTYPES:
            try:
                promote[f"{a},{b}"] = str(torch.promote_types(getattr(torch, a),
                                                              getattr(torch, b)))
            except RuntimeError as e:
                promote[f"{a},{b}"] = "error: " + str(e).splitlines()[0]
    out["promote_types"] = promote
    names = [f"{k}:{d}" for k in ("nd", "0d") for d in DTYPES if not d.startswith("uint") or
             d == "uint8"] + list(SCALARS)
    for default in ("float32", "float64"):
        torch.set_default_dtype(getattr(torch, default))
        result = {}
        for a in names:
            for b in names:
                if a in SCALARS and b in SCALARS:
                    continue
                try:
                    result[f"{a},{b}"] = str(torch.result_type(operand(a), operand(b)))
                except RuntimeError as e:
                    result[f"{a},{b}"] = "error: " + str(e).splitlines()[0]
        out[f"result_type/{default}"] = result
    torch.set_default_dtype(torch.float32)
    path = pathlib.Path(__file__).resolve().parents[1] / "tests" / "data" / "torch_promotion.json"
    path.write_text(json.dumps(out, sort_keys=True, separators=(",", ":")) + "\n")
    print(f"wrote {path} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
