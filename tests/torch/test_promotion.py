"""Type promotion of the PyTorch face against PyTorch's own table.

``tests/data/torch_promotion.json`` was written by ``scripts/gen_torch_promotion_table.py``
from PyTorch 2.13 (its version is recorded in the file): ``torch.promote_types`` for every
pair of dtypes (or the first line of its error), and ``torch.result_type`` for pairs of
operands (1-D tensors, 0-d tensors and Python numbers of each kind) under both default
dtypes. Where torch is installed (the ``compat`` extra) the table is also checked live, so
a stale table cannot pass for PyTorch's behaviour.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

import pytest

import funcgrad.torch as ft

TABLE = json.loads((pathlib.Path(__file__).parents[1] / "data" / "torch_promotion.json")
                   .read_text())
SCALARS = {"py_bool": True, "py_int": 2, "py_float": 2.5, "py_complex": 1j}
DEFAULTS = ("float32", "float64")
# PyTorch gives complex32 (ComplexHalf) for float16 with a complex 0-d tensor or number;
# funcgrad has no complex32 (neither has NumPy) and gives complex64 (docs/sharp_bits.md).
NO_COMPLEX32 = {"torch.complex32": "torch.complex64"}


def _operand(lib: Any, name: str) -> Any:
    if name in SCALARS:
        return SCALARS[name]
    kind, dt = name.split(":")
    return lib.ones((() if kind == "0d" else (2,)), dtype=getattr(lib, dt))


def _answer(fn: Any, *args: Any) -> str:
    try:
        return str(fn(*args))
    except RuntimeError as e:
        return "error: " + str(e).splitlines()[0]


def test_table_is_from_pytorch_2_13() -> None:
    assert TABLE["torch_version"].startswith("2.13")


def test_promote_types_matches_the_table() -> None:
    wrong = {}
    for key, want in TABLE["promote_types"].items():
        a, b = key.split(",")
        got = _answer(ft.promote_types, getattr(ft, a), getattr(ft, b))
        if got != want:
            wrong[key] = (got, want)
    assert not wrong, f"{len(wrong)} of {len(TABLE['promote_types'])} differ: {wrong}"


@pytest.mark.parametrize("default", DEFAULTS)
def test_result_type_matches_the_table(default: str) -> None:
    table = TABLE[f"result_type/{default}"]
    wrong = {}
    prev = ft.get_default_dtype()
    ft.set_default_dtype(getattr(ft, default))
    try:
        for key, want in table.items():
            a, b = key.split(",")
            got = _answer(ft.result_type, _operand(ft, a), _operand(ft, b))
            if got != NO_COMPLEX32.get(want, want):
                wrong[key] = (got, want)
    finally:
        ft.set_default_dtype(prev)
    assert not wrong, f"{len(wrong)} of {len(table)} differ: {wrong}"


@pytest.mark.parametrize("default", DEFAULTS)
def test_addition_has_the_result_type(default: str) -> None:
    """``a + b`` on real operands has the dtype result_type names (or PyTorch's error)."""
    table = TABLE[f"result_type/{default}"]
    prev = ft.get_default_dtype()
    ft.set_default_dtype(getattr(ft, default))
    wrong = {}
    try:
        for key, want in table.items():
            a, b = key.split(",")
            if want.startswith("error") or "bool" in key:
                continue  # bool + bool is logical or in PyTorch; errors checked above
            x, y = _operand(ft, a), _operand(ft, b)
            got = str((x + y).dtype)
            if got != NO_COMPLEX32.get(want, want):
                wrong[key] = (got, want)
    finally:
        ft.set_default_dtype(prev)
    assert not wrong, f"{len(wrong)} differ: {wrong}"


def test_table_still_matches_live_pytorch() -> None:
    torch = pytest.importorskip("torch", exc_type=ImportError)
    if not torch.__version__.startswith("2.13"):
        pytest.skip(f"the table is from PyTorch 2.13, this is {torch.__version__}")
    for key, want in TABLE["promote_types"].items():
        a, b = key.split(",")
        assert _answer(torch.promote_types, getattr(torch, a), getattr(torch, b)) == want, key
    prev = torch.get_default_dtype()
    try:
        for default in DEFAULTS:
            torch.set_default_dtype(getattr(torch, default))
            for key, want in TABLE[f"result_type/{default}"].items():
                a, b = key.split(",")
                got = _answer(torch.result_type, _operand(torch, a), _operand(torch, b))
                assert got == want, (default, key)
    finally:
        torch.set_default_dtype(prev)
