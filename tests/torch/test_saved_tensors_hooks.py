"""``torch.autograd.graph``: saved-tensor hooks (``saved_tensors_hooks``, ``save_on_cpu``,
``disable_saved_tensors_hooks``), ``register_multi_grad_hook``, ``queue_callback``, gradient
edges and ``Node``; against real torch where it is installed.

What a node saves follows funcgrad's derivative rules (docs/sharp_bits.md): the tests
compare what the hooks see only for operations whose saved tensors are PyTorch's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft
from funcgrad.torch.autograd import graph as G

# Operations whose node saves the same tensors as PyTorch's (by shape, in any order).
_SAME_SAVED: dict[str, Callable[[Any, Any], Any]] = {
    "mul": lambda L, x: x * (x + 1),
    "mul_number": lambda L, x: x * 2.0,
    "add": lambda L, x: x + 1,
    "pow": lambda L, x: x ** 2,
    "rdiv": lambda L, x: 3 / x,
    "exp": lambda L, x: x.exp(),
    "sin": lambda L, x: x.sin(),
    "sigmoid": lambda L, x: x.sigmoid(),
    "matmul": lambda L, x: x @ x,
    "mse": lambda L, x: L.nn.functional.mse_loss(x, L.zeros(3)),
}


def _x(L: Any) -> Any:
    return L.tensor([0.5, -1.5, 2.0], dtype=L.float64, requires_grad=True)


def _saved_shapes(L: Any, f: Callable[[Any, Any], Any]) -> list[tuple[int, ...]]:
    seen: list[tuple[int, ...]] = []

    def pack(t: Any) -> Any:
        seen.append(tuple(t.shape))
        return t

    x = _x(L)
    with L.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        f(L, x)
    return sorted(seen)


@pytest.mark.parametrize("name", sorted(_SAME_SAVED))
def test_pack_hook_sees_what_pytorch_saves(name: str) -> None:
    torch = pytest.importorskip("torch")
    f = _SAME_SAVED[name]
    assert _saved_shapes(ft, f) == _saved_shapes(torch, f)


_PACKED_CHANGED: dict[str, Callable[[Any, Any], Any]] = {
    "pow": lambda L, x: x.pow(2),
    "mul": lambda L, x: x * (x + 1),
    "exp": lambda L, x: x.exp(),
    "matmul": lambda L, x: x @ x,
    "tanh_chain": lambda L, x: (x.tanh() * x).sin(),
}


@pytest.mark.parametrize("name", sorted(_PACKED_CHANGED))
def test_backward_reads_what_unpack_gives(name: str) -> None:
    # The hook doubles what is saved: backward computes with the doubled values, as in
    # PyTorch. Expected values: real torch, or the rule by hand for pow (2 * (2x)).
    f = _PACKED_CHANGED[name]

    def grad(L: Any) -> np.ndarray:
        x = _x(L)
        with L.autograd.graph.saved_tensors_hooks(lambda t: t * 2, lambda t: t):
            y = f(L, x)
        y.sum().backward()
        return np.asarray(x.grad.numpy())

    got = grad(ft)
    if name == "pow":
        np.testing.assert_array_equal(got, 4 * np.array([0.5, -1.5, 2.0]))
    torch = pytest.importorskip("torch")
    np.testing.assert_allclose(got, grad(torch), rtol=1e-13)


def test_docs_example_packs_the_users_tensors_and_unpacks_each_once() -> None:
    log: list[tuple[str, Any]] = []
    a = ft.ones(5, requires_grad=True)
    b = ft.ones(5, requires_grad=True) * 2
    with G.saved_tensors_hooks(lambda t: (log.append(("pack", t)), t)[1],
                               lambda t: (log.append(("unpack", t)), t)[1]):
        y = a * b
    packed = [t for k, t in log if k == "pack"]
    assert len(packed) == 2 and any(t is a for t in packed) and any(t is b for t in packed)
    y.sum().backward()
    assert [k for k, _ in log].count("unpack") == 2
    assert a.grad.tolist() == [2.0] * 5


def test_pack_hook_runs_without_grad_mode() -> None:
    modes: list[bool] = []
    x = _x(ft)
    with G.saved_tensors_hooks(lambda t: (modes.append(ft.is_grad_enabled()), t)[1],
                               lambda t: t):
        x.exp()
    assert modes == [False] and ft.is_grad_enabled()


def test_unpack_must_give_a_tensor() -> None:
    x = _x(ft)
    with G.saved_tensors_hooks(lambda t: 1, lambda o: "no"):
        y = x.exp()
    with pytest.raises(TypeError, match="^Output of saved tensor unpack_hook expected to be a "
                                        "Tensor but got result of type str$"):
        y.sum().backward()


def test_a_retained_graph_unpacks_at_every_backward() -> None:
    count = [0]

    def unpack(t: Any) -> Any:
        count[0] += 1
        return t

    x = _x(ft)
    with G.saved_tensors_hooks(lambda t: t, unpack):
        y = x.exp()
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    assert count == [2]
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([0.5, -1.5, 2.0]), rtol=1e-15)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.sum().backward()


def test_no_version_check_on_packed_tensors_as_in_pytorch() -> None:
    x = _x(ft)
    with G.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        z = (x * 1).exp()
    z.add_(1)
    z.sum().backward()  # PyTorch reads the clone: no in-place error
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.5, -1.5, 2.0]), rtol=1e-15)
    y = (x * 1).exp()
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_disable_saved_tensors_hooks() -> None:
    with G.disable_saved_tensors_hooks("m1"):
        (_x(ft) * 2).sum().backward()  # recording still works
        with pytest.raises(RuntimeError, match="^m1$"):
            with G.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    with pytest.raises(RuntimeError, match="^m2$"):
        with G.saved_tensors_hooks(lambda t: t, lambda t: t):
            with G.disable_saved_tensors_hooks("m2"):
                pass
    with G.saved_tensors_hooks(lambda t: t, lambda t: t):  # nothing left behind
        pass


def test_custom_function_saved_tensors_go_through_the_hooks() -> None:
    class Cube(ft.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (x,) = ctx.saved_tensors
            return 3 * x ** 2 * g

    packed: list[Any] = []
    x = _x(ft)
    with G.saved_tensors_hooks(lambda t: (packed.append(t), t.tolist())[1],
                               lambda v: ft.tensor(v, dtype=ft.float64)):
        y = Cube.apply(x)
    assert len(packed) == 1 and packed[0] is x
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 3 * np.array([0.5, -1.5, 2.0]) ** 2)


def _mlp_grads(L: Any, hooks: Any, seed_values: list[np.ndarray]) -> list[np.ndarray]:
    w1, b1, w2, xin = (L.tensor(v, dtype=L.float64) for v in seed_values)
    for p in (w1, b1, w2):
        p.requires_grad_()
    with hooks():
        h = L.tanh(xin @ w1 + b1)
        out = (L.nn.functional.softplus(h @ w2) * h.sum(1, keepdim=True)).mean()
    out.backward()
    return [np.asarray(p.grad.numpy()) for p in (w1, b1, w2)]


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 5), d=st.integers(1, 4), k=st.integers(1, 4),
       seed=st.integers(0, 2 ** 31 - 1))
def test_hooks_that_keep_the_values_keep_the_gradients(n: int, d: int, k: int,
                                                       seed: int) -> None:
    rng = np.random.default_rng(seed)
    vals = [rng.normal(size=(d, k)), rng.normal(size=(k,)), rng.normal(size=(k, 1)),
            rng.normal(size=(n, d))]
    plain = _mlp_grads(ft, lambda: G.disable_saved_tensors_hooks("unused"), vals)
    roundtrip = _mlp_grads(ft, lambda: G.saved_tensors_hooks(
        lambda t: t.detach().numpy().copy(), lambda a: ft.from_numpy(a)), vals)
    on_cpu = _mlp_grads(ft, G.save_on_cpu, vals)
    for a, b, c in zip(plain, roundtrip, on_cpu):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
    torch = pytest.importorskip("torch")
    for a, b in zip(plain, _mlp_grads(torch, torch.autograd.graph.save_on_cpu, vals)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.gpu
def test_save_on_cpu_keeps_device_tensors_in_host_memory() -> None:
    from gpu_values import host, need_device

    need_device()
    devices: list[str] = []
    inner = G.save_on_cpu()
    pack, unpack = inner.pack_hook, inner.unpack_hook

    def spy(t: Any) -> Any:
        kept = pack(t)
        devices.append(kept[1].device.type)
        return kept

    x = ft.tensor([0.5, -1.5, 2.0], device="cuda", requires_grad=True)
    with G.saved_tensors_hooks(spy, unpack):
        y = (x.exp() * x).sum()
    y.backward()
    assert devices and set(devices) == {"cpu"}
    assert x.grad.device.type == "cuda"
    v = np.array([0.5, -1.5, 2.0], np.float32)
    np.testing.assert_allclose(host(x.grad), np.exp(v) * (1 + v), rtol=1e-6)


def test_multi_grad_hook_all_and_any() -> None:
    a = ft.ones(2, requires_grad=True)
    b = ft.ones(2, requires_grad=True)
    log: list[Any] = []
    h = G.register_multi_grad_hook(
        (a, b), lambda gs: log.append([None if g is None else g.tolist() for g in gs]))
    (a * 2).sum().backward()
    (a * 2 + b * 3).sum().backward()
    assert log == [[[2.0, 2.0], None], [[2.0, 2.0], [3.0, 3.0]]]
    h.remove()
    (a * 2).sum().backward()
    assert len(log) == 2
    first: list[Any] = []
    G.register_multi_grad_hook((a, b), lambda g: first.append(g.tolist()), mode="any")
    (a * 2 + b * 3).sum().backward()
    assert len(first) == 1 and first[0] in ([2.0, 2.0], [3.0, 3.0])
    with pytest.raises(AssertionError, match="Expected gradient function to be set"):
        G.register_multi_grad_hook((a, ft.ones(2)), lambda gs: None)
    with pytest.raises(ValueError, match="Expects mode to be one of"):
        G.register_multi_grad_hook((a,), lambda gs: None, mode="some")


def test_queue_callback_runs_after_the_gradients_are_written() -> None:
    engine = ft.autograd.Variable._execution_engine
    with pytest.raises(RuntimeError, match="^Final callbacks can only be installed during "
                                           "backward pass.$"):
        engine.queue_callback(lambda: None)
    a = ft.ones(2, requires_grad=True)
    seen: list[Any] = []

    def hook(g: Any) -> Any:
        engine.queue_callback(lambda: seen.append(a.grad.tolist()))
        return g

    a.register_hook(hook)
    (a * 2).sum().backward()
    assert seen == [[2.0, 2.0]]


def test_gradient_edges_nodes_and_versions() -> None:
    a = ft.ones(2, requires_grad=True)
    y = a * 2
    e = G.get_gradient_edge(y)
    assert e.node is y.grad_fn and e.output_nr == 0 and e.ownership_token is None
    leaf = G.get_gradient_edge(a).node
    assert isinstance(y.grad_fn, G.Node) and isinstance(leaf, G.Node)
    assert type(leaf).__name__ == "AccumulateGrad" and leaf.variable is a
    assert not isinstance(a, G.Node)
    assert y.grad_fn.metadata == {} and y.grad_fn.metadata is y.grad_fn.metadata
    with pytest.raises(RuntimeError, match="does not require gradients"):
        G.get_gradient_edge(ft.ones(1))
    t = ft.ones(2)
    G.increment_version(t)
    assert t._version == 1
