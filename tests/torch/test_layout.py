"""Which results are contiguous, as in PyTorch: an operation's new tensors are (so ``view``
works on them), views of an operand (transpose, expand, slices, permute) are not."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import funcgrad.torch as ft
from tests.torch._outcomes import values

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


# Layouts of the results of operations on channels-last and transposed inputs: convolutions
# and pools keep the channels-last format, softmax, the norms and masked_fill write
# row-major (so ``view`` works on them as in PyTorch).
LAYOUT_CASES: dict[str, Callable[[Any, Any], Any]] = {
    "conv": lambda L, x: L.nn.functional.conv2d(x, L.ones(4, 3, 3, 3), L.ones(4), padding=1),
    "conv_weight_cl": lambda L, x: L.nn.functional.conv2d(
        x.contiguous(), L.ones(4, 3, 3, 3).to(memory_format=L.channels_last)),
    "conv_transpose": lambda L, x: L.nn.functional.conv_transpose2d(x, L.ones(3, 2, 3, 3)),
    "adaptive_avg": lambda L, x: L.nn.functional.adaptive_avg_pool2d(x, (2, 3)),
    "adaptive_avg_1": lambda L, x: L.nn.functional.adaptive_avg_pool2d(x, 1),
    "adaptive_max": lambda L, x: L.nn.functional.adaptive_max_pool2d(x, 2, True)[1],
    "interpolate": lambda L, x: L.nn.functional.interpolate(x, size=(6, 7), mode="bilinear"),
    "pad": lambda L, x: L.nn.functional.pad(x, (1, 1, 1, 1)),
    "group_norm": lambda L, x: L.nn.functional.group_norm(x, 3),
    "layer_norm": lambda L, x: L.nn.functional.layer_norm(x, (5,)),
    "instance_norm": lambda L, x: L.nn.functional.instance_norm(x),
    "softmax": lambda L, x: L.nn.functional.softmax(x, 1),
    "log_softmax": lambda L, x: L.nn.functional.log_softmax(x, -1),
    "masked_fill": lambda L, x: x.masked_fill(x > 0, 1.0),
    "relu": lambda L, x: L.relu(x),
    "batch_norm": lambda L, x: L.nn.functional.batch_norm(x, None, None, training=True),
}


@pytest.mark.parametrize("name", sorted(LAYOUT_CASES))
@pytest.mark.parametrize("layout", ["channels_last", "row_major"])
def test_result_layouts_of_channels_last_inputs_match_torch(name: str, layout: str) -> None:
    def run(L: Any) -> tuple[list[int], np.ndarray, np.ndarray]:
        x = L.tensor(np.linspace(-1, 1, 2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5),
                     requires_grad=True)
        if layout == "channels_last":
            x = x.to(memory_format=L.channels_last)
        y = LAYOUT_CASES[name](L, x)
        # The relaid result still carries its graph.
        loss = y.sin().sum() if y.is_floating_point() else x.sum()
        (gx,) = L.autograd.grad(loss, x)
        return list(y.stride()), values(y), values(gx)

    ours, theirs = run(ft), run(torch)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("view", ["transpose", "channels_last", "permute3", "slice"])
@pytest.mark.parametrize("seed", [0, 7])
def test_dropout_draws_its_mask_in_the_input_s_memory_order(view: str, seed: int) -> None:
    """PyTorch's CPU dropout fills ``empty_like(input)`` front to back: a transposed or
    channels-last input's mask is drawn in memory order (the same seed, the same zeros)."""
    def run(L: Any) -> tuple[list[float], list[int]]:
        x = L.ones(2, 3, 4, 5)
        x = {"transpose": lambda: x.transpose(1, 3),
             "channels_last": lambda: x.to(memory_format=L.channels_last),
             "permute3": lambda: x[0].permute(2, 0, 1),
             "slice": lambda: x[:, ::2]}[view]()
        L.manual_seed(seed)
        y = L.nn.functional.dropout(x, 0.4)
        return y.flatten().tolist(), list(y.stride())

    assert run(ft) == run(torch)
