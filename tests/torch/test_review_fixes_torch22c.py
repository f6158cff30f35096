"""PyTorch-face fixes from a side-by-side review of printing and of the errors common
mistakes raise, each compared with torch 2.13: the argument checks of ``cat``/``stack``
and their ``hstack``/``vstack``/``dstack``/``column_stack``/``row_stack`` kin (a tensor or
generator for the list, non-tensor elements, 0-d tensors, empty lists, a non-int ``dim``),
``mm``/``mv``/``matmul`` (which operand is no matrix, batch dimensions that do not
broadcast, no Bool kernels), ``reshape`` of an empty tensor with ``-1``, ``bool()`` of an
empty tensor, ``__index__`` of several elements, ``numpy()`` of bfloat16, in-place
``clamp_`` past the tensor's dtype, NaN clamp bounds, writes of numbers that do not fit the
dtype (``x[i] = v``, ``index_fill_``, ``fill_``, ``full``), complex values written into
real tensors, add's and sub's ``alpha`` checks, ``select`` bounds, repeated reduction dims,
``std``/``var`` of integers, ``torch.tensor`` of objects with no dtype, ``cross_entropy``
with an integer target shaped as the input, the optimizer's type name of a non-tensor
parameter and ``torch.save`` into a missing folder. Printing (tensors of every dtype and
shape, print options, modules, optimizers, ``finfo``/``iinfo``, ``format``) is pinned
against PyTorch too."""

from __future__ import annotations

import math
import warnings
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import funcgrad.torch as ft
from tests.support.torch_oracle import outcome

torch = pytest.importorskip("torch")


def _shown(v: Any) -> Any:
    if isinstance(v, (ft.Tensor, torch.Tensor)):
        return repr(v)
    if isinstance(v, (tuple, list)):
        return type(v)(_shown(e) for e in v)
    return v


def _same(case: Callable[[Any], Any]) -> None:
    """The case gives the same result (compared by repr) or the same error in both."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs, ours = outcome(lambda: case(torch)), outcome(lambda: case(ft))
    assert ours[0] == theirs[0], (ours, theirs)
    assert _shown(ours[1]) == _shown(theirs[1]), (ours, theirs)


# ---------------------------------------------------------------------- printing


_PRINTED = [
    lambda t: t.tensor(1.5), lambda t: t.tensor(3), lambda t: t.tensor(True),
    lambda t: t.tensor([], dtype=t.float32), lambda t: t.zeros(0, 3),
    lambda t: t.zeros(2, 0, dtype=t.int64),
    lambda t: t.tensor([1.5, 2.25], dtype=t.float16),
    lambda t: t.tensor([1.5, 2.25], dtype=t.bfloat16) * 2,
    lambda t: t.tensor([1.1234567, 2.0], dtype=t.float64),
    lambda t: t.tensor([1, -2], dtype=t.int8), lambda t: t.tensor([1, 200], dtype=t.uint8),
    lambda t: t.tensor([1 + 2j, 3 - 4j], dtype=t.complex64),
    lambda t: t.tensor([1.5 + 2j, math.inf - 4j], dtype=t.complex128),
    lambda t: t.tensor([math.inf, math.nan, -0.0, 1.5]), lambda t: t.tensor([-0.0, 0.0]),
    lambda t: t.tensor([1e-10, 1e10]), lambda t: t.tensor([1e-5, 1.0]),
    lambda t: t.tensor([100000.0, 2.0]), lambda t: t.tensor(123456789.0),
    lambda t: t.arange(2000.0), lambda t: t.arange(120.0).reshape(2, 3, 4, 5),
    lambda t: t.arange(5000.0).reshape(10, 10, 50), lambda t: t.arange(40.0).reshape(2, 20),
    lambda t: t.ones(3, requires_grad=True) * 2, lambda t: t.ones(3, requires_grad=True).sum(),
    lambda t: t.ones(3, dtype=t.float16, requires_grad=True) * 2,
    lambda t: t.ones(2, 3, device="meta", dtype=t.float64, requires_grad=True),
    lambda t: t.nn.Parameter(t.ones(2, dtype=t.float64)),
    lambda t: t.tensor(np.random.default_rng(0).standard_normal((3, 4, 5, 6))),
    lambda t: t.tensor(np.random.default_rng(1).standard_normal(1200) * 1e5),
    lambda t: t.Size([2, 3]), lambda t: t.finfo(t.bfloat16), lambda t: t.iinfo(t.uint8),
    lambda t: t.complex64,
]


@pytest.mark.parametrize("make", _PRINTED)
def test_tensor_repr_and_str_as_torch(make: Callable[[Any], Any]) -> None:
    a, b = make(torch), make(ft)
    assert repr(b) == repr(a)
    assert str(b) == str(a)


@pytest.mark.parametrize("opts", [
    {"precision": 2}, {"precision": 0}, {"threshold": 5, "edgeitems": 1},
    {"threshold": 5, "edgeitems": 0}, {"linewidth": 20}, {"sci_mode": True},
    {"sci_mode": False}, {"profile": "short"}, {"profile": "full"},
])
def test_print_options_as_torch(opts: dict[str, Any]) -> None:
    rng = np.random.default_rng(2)
    data = [rng.standard_normal((3, 12)), np.arange(60.0).reshape(3, 4, 5),
            np.array([1e-6, 1.0, 3.0]), np.array([1e-6 + 1j, 1.0])]
    try:
        for lib in (torch, ft):
            lib.set_printoptions(**opts)
        for d in data:
            assert repr(ft.tensor(d)) == repr(torch.tensor(d))
        assert repr(ft.arange(2000)) == repr(torch.arange(2000))
    finally:
        for lib in (torch, ft):
            lib.set_printoptions(profile="default")


def test_format_as_torch() -> None:
    for spec in (".3f", "e", "", ">10"):
        assert format(ft.tensor(3.14159), spec) == format(torch.tensor(3.14159), spec)
    assert f"{ft.tensor([3.14159, 2.0])}" == f"{torch.tensor([3.14159, 2.0])}"
    _same(lambda t: f"{t.tensor([3.14159, 2.0]):.3f}")


def _model(nn: Any) -> Any:
    class Inner(nn.Module):
        def extra_repr(self) -> str:
            return "a=1\nb=2"

    class M(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.seq = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(),
                                     nn.Sequential(nn.Linear(2, 2, bias=False)))
            self.ml = nn.ModuleList([nn.Linear(1, 1) for _ in range(3)] + [nn.Tanh()])
            self.md = nn.ModuleDict({"a": nn.Dropout(0.2), "b": nn.BatchNorm1d(4)})
            self.od = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 3)), ("act", nn.GELU())]))
            self.inner = Inner()
            self.lstm = nn.LSTM(3, 4, batch_first=True)
            self.pd = nn.ParameterDict({"w": nn.Parameter(torch.ones(2, 3)
                                                          if nn is torch.nn else ft.ones(2, 3))})

    return M()


def test_module_and_optimizer_reprs_as_torch() -> None:
    assert repr(_model(ft.nn)) == repr(_model(torch.nn))
    _same(lambda t: repr(t.optim.Adam([{"params": [t.nn.Parameter(t.ones(2))]},
                                       {"params": [t.nn.Parameter(t.ones(1))], "lr": 0.5}],
                                      lr=1e-2)))


# ---------------------------------------------------------------------- errors


def _inplace_leaf(t: Any) -> Any:
    x = t.ones(3, requires_grad=True)
    return x.add_(1)


def _backward_twice(t: Any) -> Any:
    x = t.ones(3, requires_grad=True)
    y = x.exp().sum()
    y.backward()
    y.backward()


def _step_non_leaf(t: Any) -> Any:
    return t.optim.SGD([t.ones(2, requires_grad=True) * 2], lr=0.1)


def _save_into_missing(t: Any) -> Any:
    return t.save(t.ones(2), "/nonexistent_folder_for_funcgrad_test/x.pt")


_ERRORS = [
    # shapes of products
    lambda t: t.ones(2, 3) @ t.ones(4, 5),
    lambda t: t.mm(t.ones(2, 3), t.ones(3)),
    lambda t: t.mm(t.ones(3), t.ones(3, 2)),
    lambda t: t.mm(t.ones(2, 3), 3),
    lambda t: t.ones(2, 3).mm(t.ones(3, 2, 2)),
    lambda t: t.mv(t.ones(2, 3), t.ones(3, 1)),
    lambda t: t.mv(t.ones(2, 2, 3), t.ones(3)),
    lambda t: t.ones(2, 3).mv(3),
    lambda t: t.mv(t.ones(2, 3), 3.5),
    lambda t: t.ones(2, 2).mm(3),
    lambda t: t.mm(3, t.ones(2, 2)),
    lambda t: t.bmm(t.ones(2, 2, 2), 1),
    lambda t: t.ones(2, 2, 3) @ t.ones(3, 3, 5),
    lambda t: t.ones(4, 2, 2, 3) @ t.ones(3, 1, 3, 5),
    lambda t: t.nn.Linear(4, 2)(t.ones(3, 5)),
    # no Bool products
    lambda t: t.ones(2, 2, dtype=t.bool) @ t.ones(2, 2, dtype=t.bool),
    lambda t: t.ones(2, dtype=t.bool) @ t.ones(2, dtype=t.bool),
    lambda t: t.ones(2, 2, 2, dtype=t.bool) @ t.ones(2, dtype=t.bool),
    lambda t: t.ones(2, dtype=t.bool) @ t.ones(2, 2, 2, dtype=t.bool),
    lambda t: t.bmm(t.ones(2, 2, 2, dtype=t.bool), t.ones(2, 2, 2, dtype=t.bool)),
    lambda t: t.dot(t.ones(2, dtype=t.bool), t.ones(2, dtype=t.bool)),
    # cat and stack
    lambda t: t.cat(t.ones(2, 3)),
    lambda t: t.cat(x for x in [t.ones(2)]),
    lambda t: t.cat(None),
    lambda t: t.cat([t.ones(2), 1]),
    lambda t: t.cat([t.ones(2), np.ones(2)]),
    lambda t: t.cat([t.ones(2), t.tensor(1.0)]),
    lambda t: t.cat([t.tensor(1.0), t.tensor(2.0)]),
    lambda t: t.cat([t.ones(0), t.tensor(1.0)]),
    lambda t: t.cat([t.ones(2), t.ones(2)], dim="a"),
    lambda t: t.cat([t.ones(2), t.ones(2)], dim=0.5),
    lambda t: t.cat([t.ones(2), t.ones(2)], dim=True),
    lambda t: t.cat([t.ones(2), t.ones(2)], dim=t.tensor(0)),
    lambda t: t.cat([t.ones(2, 3), t.ones(2, 4)]),
    lambda t: t.stack([]),
    lambda t: t.stack(t.ones(2, 3)),
    lambda t: t.stack([t.ones(2), 1]),
    lambda t: t.stack([t.ones(2, 3), t.ones(2, 4)]),
    lambda t: t.hstack([]),
    lambda t: t.hstack([t.ones(2), t.tensor(1.0)]),
    lambda t: t.hstack([t.tensor(1.0), t.tensor(1.0)]),
    lambda t: t.hstack(t.ones(2)),
    lambda t: t.vstack([]),
    lambda t: t.vstack([t.tensor(1.0), t.tensor(1.0)]),
    lambda t: t.vstack([t.ones(2), 1]),
    lambda t: t.vstack(x for x in [t.ones(2)]),
    lambda t: t.dstack([]),
    lambda t: t.dstack([t.ones(2), np.ones(2)]),
    lambda t: t.column_stack([]),
    lambda t: t.column_stack(t.ones(2)),
    lambda t: t.row_stack([]),
    lambda t: t.row_stack(t.ones(2)),
    lambda t: t.row_stack([t.ones(2), 1]),
    # shapes and scalars
    lambda t: t.ones(0, 4).reshape(0, -1),
    lambda t: t.ones(0).view(-1, 0),
    lambda t: t.ones(3, 4).reshape(0, -1),
    lambda t: t.ones(0, 4).reshape(2, -1).shape,
    lambda t: t.ones(3, 4).t().view(12),
    lambda t: bool(t.ones(0)),
    lambda t: bool(t.ones(2)),
    lambda t: t.ones(3).item(),
    lambda t: [1, 2, 3][t.ones(2, dtype=t.int64)],
    lambda t: [1, 2, 3][t.ones(0, dtype=t.int64)],
    lambda t: [1, 2, 3][t.tensor(1.0)],
    lambda t: t.ones(2, dtype=t.bfloat16).numpy(),
    lambda t: t.ones(2, dtype=t.bfloat16, requires_grad=True).numpy(),
    lambda t: np.asarray(t.ones(2, dtype=t.bfloat16)),
    lambda t: t.ones(3, requires_grad=True).numpy(),
    lambda t: t.ones(2, 3, 4).select(0, 2),
    lambda t: t.ones(2, 3, 4).select(-3, -3),
    lambda t: t.ones(2, 3, 4).select(3, 0),
    lambda t: t.select(t.ones(2, 3, 4), 1, 5),
    lambda t: t.tensor(1.0).select(0, 0),
    lambda t: t.ones(2, 3, 4).sum((1, 1)),
    lambda t: t.ones(2, 3, 4).mean([2, 2]),
    lambda t: t.ones(2, 3, 4).amax((0, 0)),
    lambda t: t.ones(3, dtype=t.int64).std(),
    lambda t: t.ones(3, dtype=t.bool).var(0),
    lambda t: t.std(t.ones(3, dtype=t.int64)),
    lambda t: t.tensor(None),
    lambda t: t.tensor([1, None]),
    lambda t: t.tensor(object()),
    lambda t: t.tensor({1, 2}),
    lambda t: t.tensor("a"),
    lambda t: t.tensor([[1], "a"]),
    # in-place writes and dtypes
    lambda t: t.ones(3, dtype=t.int64).clamp_(0.5),
    lambda t: t.ones(3, dtype=t.int64).clamp_(max=1.5),
    lambda t: t.ones(3, dtype=t.int64).clamp_(t.tensor(0.5)),
    lambda t: t.ones(3, dtype=t.int64).clamp_(min=t.tensor([0.5, 1.0, 2.0])),
    lambda t: t.ones(2, dtype=t.bool).clamp_(0, 1),
    lambda t: t.ones(2, dtype=t.int8).clamp_(300),
    lambda t: t.ones(3, dtype=t.int64).clamp_(0, 2),
    lambda t: t.ones(3, dtype=t.int64).add_(t.ones(3)),
    lambda t: t.ones(2, dtype=t.int64).add(t.ones(2, dtype=t.int64), alpha=0.5),
    lambda t: t.ones(2, dtype=t.int64).sub(1, alpha=0.5),
    lambda t: t.ones(2, dtype=t.int64).add_(t.ones(2, dtype=t.int64), alpha=0.5),
    lambda t: t.add(t.ones(2, dtype=t.int64), t.ones(2, dtype=t.int64), alpha=1.0),
    lambda t: t.ones(2).add(t.ones(2), alpha=1j),
    lambda t: t.ones(2).add(t.ones(2), alpha=True),
    lambda t: t.ones(2, dtype=t.bool).add(t.ones(2, dtype=t.bool), alpha=2),
    lambda t: t.ones(2, dtype=t.bool).add(t.ones(2, dtype=t.bool), alpha=True),
    lambda t: t.ones(2).add(t.ones(2), alpha=0.5),
    lambda t: t.ones(2, dtype=t.bool) - True,
    lambda t: True - t.ones(2, dtype=t.bool),
    lambda t: t.ones(2, dtype=t.bool).sub_(True),
    lambda t: t.ones(2, dtype=t.bool) - 1,
    lambda t: t.full((2,), math.nan, dtype=t.int64),
    lambda t: t.full((2,), math.inf, dtype=t.int32),
    lambda t: t.full((2,), 1 + 1j, dtype=t.float32),
    lambda t: t.full((2,), 1 + 1j, dtype=t.float64),
    lambda t: t.full((2,), 1j, dtype=t.bool),
    lambda t: t.full((2,), 1 + 0j, dtype=t.int64),
    lambda t: t.zeros(2).fill_(1 + 1j),
    lambda t: t.zeros(2, dtype=t.float16).fill_(1 + 1j),
    lambda t: t.zeros(2, dtype=t.uint8).fill_(-1.0),
    lambda t: t.zeros(2, dtype=t.uint8).fill_(-1),
    lambda t: t.zeros(2, dtype=t.int64).fill_(math.nan),
    lambda t: t.zeros(2, dtype=t.uint8).index_fill_(0, t.tensor([0]), -1.5),
    lambda t: t.zeros(2, dtype=t.int64).index_fill_(0, t.tensor([0]), math.nan),
    lambda t: t.zeros(2).index_fill_(0, t.tensor([0]), 1j),
    lambda t: t.zeros(2, dtype=t.uint8).index_fill_(0, t.tensor([0]), 7),
    lambda t: t.zeros(2).clamp(math.nan),
    lambda t: t.zeros(2).clamp(max=math.nan),
    lambda t: t.zeros(2).clamp_(0.0, math.nan),
    lambda t: t.arange(10.0)[[1.5, 2.7]],
    lambda t: t.arange(10.0)[[-1.5]],
    lambda t: t.arange(10.0)[[1, 2.5]],
    # layers, losses, optimizers, files
    lambda t: t.nn.LSTM(3, 4)(t.ones(3)),
    lambda t: t.nn.GRU(3, 4)(t.ones(1, 2, 3, 3)),
    lambda t: t.nn.RNN(3, 4)(t.ones(3)),
    lambda t: t.nn.functional.cross_entropy(t.ones(4, 5), t.zeros(4, 5, dtype=t.int64)),
    lambda t: t.nn.functional.cross_entropy(t.ones(4, 5), t.zeros(4, 5, dtype=t.bool)),
    lambda t: t.nn.functional.cross_entropy(t.ones(5), t.zeros(5, dtype=t.int64)),
    lambda t: t.nn.functional.cross_entropy(t.ones(4, 5), t.ones(4, 5) / 5, ignore_index=1),
    lambda t: t.nn.functional.cross_entropy(t.ones(4, 5), t.ones(4, 5) / 5, ignore_index=-1),
    lambda t: t.nn.CrossEntropyLoss()(t.ones(4, 5), t.rand(4)),
    lambda t: t.nn.CrossEntropyLoss()(t.ones(4, 5), t.tensor([0, 1, 5, 2])),
    lambda t: t.optim.SGD({"a": t.nn.Parameter(t.ones(2))}, lr=0.1),
    lambda t: t.optim.SGD([np.ones(2)], lr=0.1),
    _step_non_leaf, _inplace_leaf, _backward_twice, _save_into_missing,
    lambda t: t.load("/nonexistent_folder_for_funcgrad_test/x.pt"),
]


@pytest.mark.parametrize("case", _ERRORS)
def test_common_mistakes_as_torch(case: Callable[[Any], Any]) -> None:
    _same(case)


def _write_cases(t: Any) -> list[Callable[[], Any]]:
    def setitem(x: Any, idx: Any, v: Any) -> Any:
        x = x.clone()
        x[idx] = v
        return x

    i, z, u = t.zeros(3, dtype=t.int64), t.zeros(3), t.zeros(3, dtype=t.uint8)
    return [
        lambda: setitem(i, 0, -1.7), lambda: setitem(i, slice(1, None), t.tensor([2.9, -3.9])),
        lambda: setitem(i, t.tensor([1]), 2.9),
        lambda: setitem(i, t.tensor([True, False, True]), 2.9),
        lambda: setitem(i, 0, t.tensor(2.5, dtype=t.float64)),
        lambda: setitem(u, 0, -1), lambda: setitem(u, 0, 300), lambda: setitem(u, 0, -1.5),
        lambda: setitem(u, 0, 255.9), lambda: setitem(u, t.tensor([0]), 300),
        lambda: setitem(t.zeros(2, dtype=t.bool), 0, 2),
        lambda: setitem(t.zeros(3, dtype=t.int8), slice(None), t.tensor([1, 2, 300])),
        lambda: setitem(t.zeros(3, dtype=t.int32), 0, t.tensor(7)),
        lambda: setitem(i, 0, math.nan), lambda: setitem(z, 0, 1 + 2j),
        lambda: setitem(z, 0, 1 + 0j), lambda: setitem(z, 0, math.inf),
        lambda: setitem(z, t.tensor([1]), t.tensor([1 + 2j])),
        lambda: setitem(z, slice(1, None), t.tensor([1 + 2j, 3j])),
        lambda: z.clone().copy_(t.tensor([1 + 2j, 3j, 4], dtype=t.complex64)),
        lambda: z.clone().fill_(t.tensor(1 + 1j)),
        lambda: t.tensor([1 + 2j, 3j]).to(t.float32),
        lambda: i.clone().copy_(t.tensor([1.7, -1.7, 2.5])),
        lambda: setitem(t.zeros(2, dtype=t.float16), 0, 1e5),
        lambda: setitem(t.zeros(2, dtype=t.bfloat16), t.tensor([0]), 1e39),
        lambda: setitem(z, 0, 1e39), lambda: setitem(t.zeros(2, dtype=t.int8), 0, True),
        lambda: setitem(t.zeros(2, dtype=t.int8), t.tensor([True, False]), 200),
    ]


def test_writes_across_dtypes_as_torch() -> None:
    """Values and errors as PyTorch's; no JAX or NumPy warning leaks (PyTorch warns, once
    per process, that a complex tensor loses its imaginary part)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = [outcome(c) for c in _write_cases(torch)]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        ours = [outcome(c) for c in _write_cases(ft)]
    for a, b in zip(ours, theirs):
        assert a[0] == b[0], (a, b)
        assert _shown(a[1]) == _shown(b[1]), (a, b)
    assert not [w for w in seen if w.category is not UserWarning], [
        (w.category.__name__, str(w.message)) for w in seen]
    for w in seen:
        assert str(w.message).startswith("Casting complex values to real discards the "
                                         "imaginary part (Triggered internally at"), w.message


def test_nan_clamp_gradient_as_torch() -> None:
    """A NaN entry of a clamped tensor gets no gradient; a NaN bound makes every entry
    NaN."""
    def run(t: Any, **kw: float) -> tuple[str, str]:
        x = t.tensor([-1.0, 0.5, 2.0, math.nan], requires_grad=True)
        y = x.clamp(**kw)
        y.sum().backward()
        return repr(y.detach()), repr(x.grad)

    for kw in ({"min": 0.0, "max": 1.0}, {"min": math.nan}, {"max": math.nan},
               {"min": 0.0, "max": math.nan}, {"min": 0.0}, {"max": 1.0}):
        assert run(ft, **kw) == run(torch, **kw), kw
