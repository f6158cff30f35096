"""The port suite: JAX programs (tests/support/port_programs.py: autodiff cookbook, custom
derivatives, pytrees, control flow, random numbers, a training loop, per-example gradients)
run with ``import funcgrad as jax`` in JAX's default 32-bit mode, against the results JAX
0.10.2 gave, stored in tests/data/jax_port_results.json (scripts/gen_jax_port_results.py).
No JAX needed: each result must have JAX's dtype and shape and close values (integers and
keys equal).
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

import numpy as np
import pytest
from port_programs import PROGRAMS, run

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import lax

STORED = json.loads((pathlib.Path(__file__).parent / "data" / "jax_port_results.json")
                    .read_text())["programs"]


@pytest.mark.x32
@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # exp(100): inf
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_program_gives_jax_s_results(program: Any) -> None:
    got = run(program, funcgrad, fnp, lax)
    want = STORED[program.__name__]
    assert sorted(got) == sorted(want)
    for name, w in want.items():
        g = got[name]
        assert (g["dtype"], g["shape"]) == (w["dtype"], w["shape"]), name
        gv = np.asarray(g["values"], w["dtype"])
        wv = np.asarray(w["values"], w["dtype"])
        if wv.dtype.kind in "iub":
            np.testing.assert_array_equal(gv, wv, err_msg=name)
        else:
            np.testing.assert_allclose(gv, wv, rtol=2e-5, atol=2e-6, err_msg=name)


def test_every_kind_of_program_is_there() -> None:
    assert set(STORED) == {p.__name__ for p in PROGRAMS}
    assert len(PROGRAMS) >= 7
