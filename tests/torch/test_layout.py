"""Which results are contiguous, as in PyTorch: an operation's new tensors are (so ``view``
works on them), views of an operand (transpose, expand, slices, permute) are not."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import funcgrad.torch as ft

torch = pytest.importorskip("torch")

X = np.arange(24.0).reshape(2, 3, 4)

CASES: dict[str, Callable[[Any, Any], Any]] = {
    "pad_reflect": lambda L, x: L.nn.functional.pad(x, (2, 1), mode="reflect"),
    "pad_replicate": lambda L, x: L.nn.functional.pad(x, (2, 1, 1, 0), mode="replicate"),
    "pad_circular": lambda L, x: L.nn.functional.pad(x, (1, 1), mode="circular"),
    "pad_constant": lambda L, x: L.nn.functional.pad(x, (1, 1)),
    "index_select": lambda L, x: x.index_select(2, L.tensor([3, 0, 1])),
    "gather": lambda L, x: x.gather(1, L.zeros(2, 3, 4, dtype=L.int64)),
    "flip": lambda L, x: x.flip(1),
    "roll": lambda L, x: x.roll(1, 2),
    "sum_dim": lambda L, x: x.sum(1),
    "cumsum": lambda L, x: x.cumsum(0),
    "matmul": lambda L, x: x @ x.transpose(1, 2),
    "sort": lambda L, x: x.sort(1).values,
    "softmax": lambda L, x: x.softmax(0),
    "transpose_add": lambda L, x: x.transpose(0, 2) + 1,
    "transpose": lambda L, x: x.transpose(0, 2),
    "permute": lambda L, x: x.permute(2, 0, 1),
    "expand": lambda L, x: x[:, :1].expand(2, 3, 4),
    "slice": lambda L, x: x[:, :, 1:3],
    "contiguous": lambda L, x: x.permute(2, 0, 1).contiguous(),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("grad", [False, True])
def test_contiguity_matches_torch(name: str, grad: bool) -> None:
    def run(L: Any) -> tuple[bool, list[int]]:
        x = L.tensor(X, requires_grad=grad)
        y = CASES[name](L, x)
        return y.is_contiguous(), list(y.stride())

    assert run(ft) == run(torch)
    out = CASES[name](ft, ft.tensor(X, requires_grad=grad))
    if out.is_contiguous():
        assert tuple(out.view(-1).shape) == (out.numel(),)


def test_writes_through_diagonal_views_reach_the_base_as_in_torch() -> None:
    def run(L: Any) -> list[Any]:
        x = L.ones(3, 3)
        x.diagonal().fill_(0)
        x.diagonal(1).add_(5)
        b = L.ones(2, 3, 3)
        b.diagonal(dim1=1, dim2=2).mul_(3)
        w = L.ones(2, 2, requires_grad=True)
        with L.no_grad():
            w.diagonal().zero_()
        return [x.tolist(), b.tolist(), w.tolist(), x.diagonal().is_contiguous(),
                list(x.diagonal().stride())]

    assert run(ft) == run(torch)
