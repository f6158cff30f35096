"""PyTorch-face fixes from a twenty-first side-by-side review, each compared with torch
2.13: non-reentrant checkpoint recomputes its forward in backward; ``unfold`` is a strided
view; ``view(dtype)``; integer inputs of the in-place activations, ``lp_pool`` and several
losses; in-place changes of a custom Function's aliased outputs (backward hooks);
parameters made under ``inference_mode``; ``weight_norm``'s fused node."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import funcgrad.torch as ft
from tests.torch._outcomes import outcome, same_outcome, shown

torch = pytest.importorskip("torch")


# ------------------------------------------------------------------ checkpoint


@pytest.mark.parametrize("reentrant", [False, True])
def test_checkpoint_recomputes_the_forward(reentrant):
    def run(lib: Any) -> tuple[int, list[float]]:
        calls = [0]

        def fn(x: Any) -> Any:
            calls[0] += 1
            return (x.sin() * 2).exp()

        x = lib.ones(3, requires_grad=True)
        y = lib.utils.checkpoint.checkpoint(fn, x, use_reentrant=reentrant)
        y.sum().backward()
        return calls[0], x.grad.tolist()

    ours, theirs = run(ft), run(torch)
    assert ours[0] == theirs[0] == 2
    assert ours[1] == pytest.approx(theirs[1])


def test_non_reentrant_checkpoint_with_dropout_replays_the_mask():
    def run(lib: Any) -> tuple[str, list[float]]:
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Linear(4, 4), lib.nn.Dropout(0.5), lib.nn.Tanh())
        x = lib.ones(2, 4, requires_grad=True)
        y = lib.utils.checkpoint.checkpoint(net, x, use_reentrant=False)
        y.sum().backward()
        # the gradient matches the graph of the first run (same mask)
        lib.manual_seed(0)
        net2 = lib.nn.Sequential(lib.nn.Linear(4, 4), lib.nn.Dropout(0.5), lib.nn.Tanh())
        x2 = lib.ones(2, 4, requires_grad=True)
        net2(x2).sum().backward()
        assert x.grad.flatten().tolist() == pytest.approx(x2.grad.flatten().tolist())
        return y.grad_fn.name(), y.detach().tolist()

    assert run(ft)[0] == run(torch)[0]


# ------------------------------------------------------------------ unfold


@pytest.mark.parametrize("args", [(1, 2, 1), (0, 2, 2), (1, 3, 2), (-1, 6, 1), (1, 2, 3)])
def test_unfold_is_a_strided_view(args):
    def run(lib: Any) -> Any:
        a = lib.arange(24.0).reshape(4, 6)
        u, w = a.unfold(*args), a[1:, 2:].t().unfold(*args)
        return (u.stride(), u.is_contiguous(), u.storage_offset(), repr(u),
                w.stride(), w.storage_offset(), repr(w))

    assert outcome(lambda: run(ft)) == outcome(lambda: run(torch))


def test_unfold_writes_and_grads():
    def run(lib: Any) -> Any:
        b = lib.arange(6.0)
        u = b.unfold(0, 2, 2)
        u.add_(1)
        c = lib.arange(6.0, requires_grad=True)
        w = c.unfold(0, 3, 1)
        (w * lib.arange(12.0).reshape(4, 3)).sum().backward()
        z = lib.tensor(5.0).unfold(0, 1, 1)
        return shown(b), u._base is b, shown(c.grad), shown(z), z.stride(), w.grad_fn.name()

    assert run(ft) == run(torch)


# ------------------------------------------------------------------ view(dtype)

VIEWS = [
    lambda L: L.tensor([1.0, -2.0, 0.5]).view(L.int32),
    lambda L: L.tensor([1.0, -2.0, 0.5]).view(L.int16),
    lambda L: L.tensor([1.0, -2.0, 0.5]).view(L.uint8),
    lambda L: L.arange(4.0).view(L.float64),
    lambda L: L.arange(3.0).view(L.float64),
    lambda L: L.arange(8, dtype=L.int8).view(L.float32),
    lambda L: L.ones(2, 2).view(L.float16),
    lambda L: L.ones(3, 2).t().view(L.float16),
    lambda L: L.tensor([0, 1, 2], dtype=L.uint8).view(L.bool),
    lambda L: L.ones(2, requires_grad=True).view(L.int32),
    lambda L: L.ones(2, requires_grad=True).view(L.float32).requires_grad,
    lambda L: L.tensor(1.0).view(L.float16),
    lambda L: L.ones(4).view(L.complex64),
    lambda L: L.arange(6.0)[1:5].view(L.float64),
    lambda L: L.ones(4, 3)[:, :2].view(L.float64),
    lambda L: L.ones(3, 4)[:, :2].view(L.float64).stride(),
    lambda L: L.ones(4).view(L.bfloat16),
]


@pytest.mark.parametrize("k", range(len(VIEWS)))
def test_view_dtype(k):
    same_outcome(VIEWS[k])


def test_view_dtype_shares_memory_and_version():
    def run(lib: Any) -> Any:
        z = lib.zeros(2)
        v = z.view(lib.int32)
        v.add_(1)
        return shown(z), z._version, v._version

    assert run(ft) == run(torch)


# ------------------------------------------------------------------ integer inputs

INTEGER_CALLS = [
    lambda L: L.nn.functional.elu_(L.tensor([-1, 2])),
    lambda L: L.nn.functional.selu_(L.tensor([-1, 2])),
    lambda L: L.nn.functional.celu_(L.tensor([True])),
    lambda L: L.nn.functional.leaky_relu_(L.tensor([-1, 2])),
    lambda L: L.nn.functional.rrelu_(L.tensor([-1, 2])),
    lambda L: L.nn.functional.lp_pool1d(L.arange(8).reshape(1, 1, 8), 2, 2),
    lambda L: L.nn.functional.lp_pool1d(L.arange(8).reshape(1, 1, 8), 1, 2),
    lambda L: L.nn.functional.lp_pool2d(L.arange(16).reshape(1, 1, 4, 4), 2, 2),
    lambda L: L.nn.functional.lp_pool1d(L.arange(8).reshape(1, 1, 8), 2.0, 2),
    lambda L: L.nn.functional.poisson_nll_loss(L.tensor([1, 2]), L.tensor([1, 2])),
    lambda L: L.nn.functional.poisson_nll_loss(L.tensor([1, 2]), L.tensor([1, 2]),
                                               log_input=False, full=True),
    lambda L: L.nn.functional.soft_margin_loss(L.tensor([1, -2]), L.tensor([1, -1])),
    lambda L: L.nn.functional.soft_margin_loss(L.tensor([1, -2], dtype=L.int32),
                                               L.tensor([1.0, -1], dtype=L.float64)),
    lambda L: L.nn.functional.soft_margin_loss(L.tensor([True, False]), L.tensor([1, -1])),
    lambda L: L.nn.functional.soft_margin_loss(L.tensor([1.0, -2]), L.tensor([True, False])),
    lambda L: L.nn.functional.hinge_embedding_loss(L.tensor([1, 2]), L.tensor([1, -1])),
    lambda L: L.nn.functional.hinge_embedding_loss(L.tensor([1, 2], dtype=L.int32),
                                                   L.tensor([1, -1]), margin=3,
                                                   reduction="none"),
    lambda L: L.nn.functional.hinge_embedding_loss(L.tensor([1, 2]), L.tensor([1, -1]),
                                                   reduction="sum"),
    lambda L: L.nn.functional.hinge_embedding_loss(L.tensor([True, False]),
                                                   L.tensor([1, -1])),
    lambda L: L.nn.functional.margin_ranking_loss(L.tensor([1, 2]), L.tensor([2, 1]),
                                                  L.tensor([1, -1])),
    lambda L: L.nn.functional.gaussian_nll_loss(L.tensor([1, 2]), L.tensor([1, 0]),
                                                L.tensor([1, 1])),
    lambda L: L.nn.functional.gaussian_nll_loss(L.ones(2), L.ones(2),
                                                L.ones(2, dtype=L.int16)),
    lambda L: L.nn.functional.cosine_embedding_loss(L.tensor([[1, 2]]), L.tensor([[1, 0]]),
                                                    L.tensor([1])),
    lambda L: L.nn.functional.multilabel_soft_margin_loss(L.tensor([[1, 2]]),
                                                          L.tensor([[1, 0]])),
    lambda L: L.nn.functional.triplet_margin_loss(L.tensor([[1, 2]]), L.tensor([[1, 0]]),
                                                  L.tensor([[0, 0]]), swap=True),
]


@pytest.mark.parametrize("k", range(len(INTEGER_CALLS)))
def test_integer_inputs(k):
    same_outcome(INTEGER_CALLS[k])


# ------------------------------------------------------------------ custom Function views


def _hooked_inplace(lib: Any, through_view: bool) -> Any:
    m = lib.nn.ReLU()
    m.register_full_backward_hook(lambda mod, gi, go: None)
    out = m(lib.ones(2, requires_grad=True))
    (out[0] if through_view else out).mul_(2)
    return out.grad_fn.name()


@pytest.mark.parametrize("through_view", [False, True])
def test_backward_hook_output_modified_in_place(through_view):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_outcome(lambda L: _hooked_inplace(L, through_view))


def _function_outputs(lib: Any, kind: str) -> Any:
    class Id(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x if kind == "as-is" else x.view_as(x)

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g

    x = lib.ones(2, requires_grad=True)
    if kind == "no_grad":
        with lib.no_grad():
            y = Id.apply(x * 1)
            y.add_(1)
        return y
    y = Id.apply(x * 1)
    y.add_(1)
    return y


@pytest.mark.parametrize("kind", ["as-is", "view", "no_grad"])
def test_custom_function_aliased_outputs(kind):
    same_outcome(lambda L: _function_outputs(L, kind))


# ------------------------------------------------------------------ inference_mode params


def _inference_params(lib: Any) -> Any:
    with lib.inference_mode():
        m = lib.nn.Linear(2, 2)
    w = m.weight.t()
    seen = (w.requires_grad, w.grad_fn is None, w.is_inference())
    loss = m(lib.ones(1, 2)).sum()
    loss.backward()
    grads = (m.weight.grad is None, shown(m.bias.grad))
    opt = lib.optim.SGD(m.parameters(), lr=0.1)
    return seen, grads, outcome(opt.step)


def test_parameters_made_in_inference_mode():
    assert _inference_params(ft) == _inference_params(torch)


# ------------------------------------------------------------------ weight_norm


@pytest.mark.parametrize("dim", [0, 1, 2, -1, None])
def test_weight_norm_nodes(dim):
    def run(lib: Any) -> Any:
        v = lib.randn(2, 3, 4, requires_grad=True)
        shape = [1, 1, 1] if dim in (-1, None) else [v.shape[k] if k == dim else 1
                                                       for k in range(3)]
        g = lib.randn(*shape, requires_grad=True)
        out = lib._weight_norm(v, g, -1 if dim is None else dim)
        return out.grad_fn.name(), [type(n[0]).__name__ for n in out.grad_fn.next_functions]

    if not hasattr(ft, "_weight_norm"):
        from funcgrad.torch.nn.utils.weight_norm import _weight_norm

        ft_run = run(type("L", (), {"randn": staticmethod(ft.randn),
                                    "_weight_norm": staticmethod(_weight_norm)}))
    else:
        ft_run = run(ft)
    assert ft_run == run(torch)


def test_weight_norm_module_prints_pytorchs_node():
    def run(lib: Any) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = lib.nn.utils.weight_norm(lib.nn.Linear(3, 2))
        m2 = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(3, 2))
        return (m.weight.grad_fn.name(), repr(m.weight).split("grad_fn=")[1],
                m2.weight.grad_fn.name())

    assert run(ft) == run(torch)
