"""Differential fuzzing of the PyTorch face against real PyTorch 2.13.

The generator lives in tests/support/fuzz_torch_programs.py (shared with
``scripts/fuzz.py --face torch``): straight-line programs over 1-2 leaf tensors of small
shapes, 2-6 ops from Tensor methods and torch functions (elementwise math kept away from
kinks and poles, binary ops against an earlier value of the same shape shifted by
``0.7 * y + 0.13``, reductions over a drawn dim, softmax/log_softmax, shape ops, basic and
advanced indexing, ``gather``/``index_select``, ``matmul``, ``where``/``masked_fill``,
in-place updates of intermediate tensors, and the scatter/index/selection/split op kinds of
tests/support/fuzz_torch_index_ops.py), in float64 and float32.

Each program is checked for funcgrad.torch == torch: the output's values, dtype, shape and
``grad_fn`` name; the leaves' ``.grad`` (values and dtype) after ``backward`` of a weighted
sum; and the second derivative (``autograd.grad`` with ``create_graph=True``, then a weighted
sum of the first gradient differentiated again). Skips without torch.
"""

from __future__ import annotations

import pytest
from fuzz_torch_programs import (
    TorchProg,
    TorchRefused,
    check,
    hypothesis_programs,
    skip_reason,
)
from hypothesis import HealthCheck, given, settings

pytest.importorskip("torch")

FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@FUZZ
@given(prog=hypothesis_programs(dtypes=("float64", "float32")))
def test_matches_torch(prog: TorchProg) -> None:
    try:
        found = check(prog)
    except TorchRefused:  # not a valid PyTorch program (a generator gap)
        return
    bad = [b for b in found if skip_reason(prog, b) is None]
    assert not bad, f"{prog}: " + "; ".join(f"{b['check']}: {b['error']}" for b in bad)


def test_fixed_program_round_trip() -> None:
    prog = TorchProg((2, 3), 2, (("binary", "mul", 0, 1), ("reduce", "logsumexp", 2, -1)), 3)
    assert TorchProg.from_json(prog.to_json()) == prog
    assert not check(prog)
