"""funcgrad.random against a stored table of JAX's results (tests/data/jax_random_table.json,
written by scripts/gen_jax_random_table.py with jax 0.10.2): keys x samplers x shapes x
dtypes, on NumPy (eager and jit) and on CuPy (jit; the ``gpu`` marker runs it on the CuPy
emulator where there is no device). No JAX needed.

Entries marked exact (keys, bits, uniform, randint, bernoulli, rademacher, poisson,
permutation, choice, categorical) must be equal bit for bit; the samplers that apply
log/erf_inv/pow to those bits agree to a few ulps (docs/sharp_bits.md).
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

import numpy as np
import pytest

import funcgrad as fg
from funcgrad import random
from funcgrad.config import enable_x64

TABLE = json.loads((pathlib.Path(__file__).parent / "data" / "jax_random_table.json")
                   .read_text())["entries"]


def _id(e: dict[str, Any]) -> str:
    shape = "x".join(map(str, e["kwargs"].get("shape", []))) or "whole"
    dt = e["kwargs"].get("dtype", "")
    return f"{e['fn']}-{shape}-{dt}-seed{e['seed']}{'-x64' if e['x64'] else ''}"


def _call(e: dict[str, Any], key: Any) -> Any:
    """What scripts/gen_jax_random_table.py called, on funcgrad."""
    kw = {k: (np.dtype(v) if k == "dtype" else tuple(v) if k == "shape" else v)
          for k, v in e["kwargs"].items()}
    pos = [np.asarray(a, np.float32) if isinstance(a, list) else a for a in e["args"]]
    return getattr(random, e["fn"])(key, *pos, **kw)


def _check(e: dict[str, Any], got: Any) -> None:
    got = np.asarray(got)
    assert str(got.dtype) == e["dtype"] and list(got.shape) == e["shape"], (got.dtype,
                                                                           got.shape)
    want = np.asarray(e["values"], dtype=e["dtype"]).reshape(e["shape"])
    if e["exact"]:
        np.testing.assert_array_equal(got, want)
    else:
        tol = 2e-6 if got.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("e", TABLE, ids=_id)
def test_numpy_eager_and_jit_match_jax(e: dict[str, Any]) -> None:
    with enable_x64(e["x64"]):
        key = random.PRNGKey(e["seed"])
        _check(e, _call(e, key))
        _check(e, fg.jit(lambda k: _call(e, k))(key))


def test_the_table_covers_the_samplers() -> None:
    assert len(TABLE) >= 150
    assert {e["fn"] for e in TABLE} >= {"split", "fold_in", "bits", "uniform", "normal",
                                        "randint", "bernoulli", "permutation", "choice",
                                        "gamma", "categorical"}
    assert any(e["x64"] for e in TABLE) and any(not e["x64"] for e in TABLE)


# One seed on the GPU path: the emulator compiles each kernel with NVRTC and g++.
GPU = [e for e in TABLE if e["seed"] == 42 and (e["x64"] or e["kwargs"].get("shape") in
                                                 (None, [2, 3]))]


@pytest.mark.gpu
@pytest.mark.parametrize("e", GPU, ids=_id)
def test_cupy_jit_matches_jax(e: dict[str, Any]) -> None:
    from funcgrad.devices import get_backend  # noqa: PLC0415

    if not get_backend("cupy").available():
        pytest.skip("no CUDA device and no emulator")
    with enable_x64(e["x64"]):
        key = fg.device_put(random.PRNGKey(e["seed"]), "cuda")
        out = fg.jit(lambda k: _call(e, k))(key)
        assert "cuda" in str(out.device)
        _check(e, out)


EAGER_GPU = [e for e in GPU if e["fn"] in ("uniform", "normal", "bernoulli", "exponential",
                                            "randint", "gamma")]


@pytest.mark.gpu
@pytest.mark.parametrize("e", EAGER_GPU, ids=_id)
def test_cupy_eager_matches_jax(e: dict[str, Any]) -> None:
    from funcgrad.devices import get_backend  # noqa: PLC0415

    if not get_backend("cupy").available():
        pytest.skip("no CUDA device and no emulator")
    with enable_x64(e["x64"]):
        out = _call(e, fg.device_put(random.PRNGKey(e["seed"]), "cuda"))
        assert "cuda" in str(out.device)
        _check(e, out)
