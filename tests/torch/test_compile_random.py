"""Random numbers inside ``torch.compile``d steps: dropout in training mode,
``torch.rand``/``bernoulli`` and ``torch.Generator`` draws are staged as inputs of the
program and drawn on each call from the generators the eager step uses, in its order
(RReLU on the CPU, whose draw count its input's values decide, runs eagerly).
On the CPU the compiled step therefore gives the eager step's numbers bit for bit and
leaves the generators where the eager step leaves them; on a GPU the draws are made there
(no copy); what a program cannot repeat (seeding, reading a generator's state) breaks the
graph and runs eagerly."""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from gpu_values import host, need_device
from hypothesis import given, settings
from hypothesis import strategies as st

from funcgrad import torch
from funcgrad.torch import nn
from funcgrad.torch.nn import functional as F


def _models(p: float) -> dict[str, Callable[[], nn.Module]]:
    return {
        "dropout": lambda: nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Dropout(p),
                                         nn.Linear(12, 3)),
        "alpha_dropout_rrelu": lambda: nn.Sequential(nn.Linear(6, 12), nn.RReLU(),
                                                     nn.AlphaDropout(p), nn.Linear(12, 3)),
        "dropout2d": lambda: nn.Sequential(nn.Conv2d(1, 4, 3), nn.Dropout2d(p),
                                           nn.Flatten(), nn.Linear(4 * 2 * 2, 3)),
    }


def _inputs(name: str, batch: int) -> tuple[Any, Any]:
    x = torch.randn(batch, 1, 4, 4) if name == "dropout2d" else torch.randn(batch, 6)
    return x, torch.randint(0, 3, (batch,))


def _step(model: nn.Module, opt: Any, x: Any, y: Any) -> Callable[[], Any]:
    def step() -> Any:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


@settings(max_examples=6, deadline=None)
@given(p=st.sampled_from([0.1, 0.5, 0.9]), batch=st.integers(1, 9), seed=st.integers(0, 99))
@pytest.mark.parametrize("name", sorted(_models(0.5)))
def test_compiled_training_step_draws_the_eager_steps_numbers(name: str, p: float,
                                                             batch: int, seed: int) -> None:
    torch.manual_seed(seed)
    model = _models(p)[name]()
    twin = copy.deepcopy(model)
    x, y = _inputs(name, batch)
    run = torch.compile(_step(model, torch.optim.SGD(model.parameters(), lr=0.1,
                                                    momentum=0.9), x, y))
    eager = _step(twin, torch.optim.SGD(twin.parameters(), lr=0.1, momentum=0.9), x, y)
    state = torch.get_rng_state()
    compiled_losses = [run().item() for _ in range(4)]
    after_compiled = torch.rand(5)
    torch.set_rng_state(state)
    eager_losses = [eager().item() for _ in range(4)]
    assert compiled_losses == eager_losses
    for a, b in zip(model.parameters(), twin.parameters()):
        assert np.array_equal(a.detach().numpy(), b.detach().numpy())
    # The generator moved as far as the eager steps moved it.
    assert np.array_equal(after_compiled.numpy(), torch.rand(5).numpy())
    explained = run._compiled_call.explain() if hasattr(run, "_compiled_call") else \
        run.explain()
    if name == "alpha_dropout_rrelu":
        # RReLU draws one number per element <= 0 on the CPU, as PyTorch's kernel: a count
        # the step's own values decide, so the step runs eagerly (with the same numbers).
        assert explained.graph_break_count >= 1
        assert "RReLU draws as many numbers" in str(explained.break_reasons[0])
        return
    assert explained.graph_break_count == 0 and explained.graph_count >= 1
    # The programs take the draws as inputs: no sample is frozen into them as a constant.
    for g in explained.graphs:
        assert all(np.size(c) < 12 * batch for c in g.consts)


def test_compiled_forward_in_training_mode_differentiates_through_its_draws() -> None:
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(5, 8), nn.Dropout(0.4), nn.Linear(8, 2))
    twin = copy.deepcopy(model)
    run = torch.compile(model)
    x = torch.randn(7, 5, dtype=torch.float32)
    for _ in range(3):
        state = torch.get_rng_state()
        out = run(x)
        out.square().sum().backward()
        torch.set_rng_state(state)
        ref = twin(x)
        ref.square().sum().backward()
        assert np.array_equal(out.detach().numpy(), ref.detach().numpy())
        assert out.grad_fn is not None
    for a, b in zip(model.parameters(), twin.parameters()):
        assert np.array_equal(a.grad.numpy(), b.grad.numpy())
    assert run._compiled_call.explain().graph_break_count == 0


def test_factories_and_generators_draw_anew_on_every_call() -> None:
    w = torch.tensor([0.2, -0.4, 1.5], requires_grad=True)

    def sample(gen: Any) -> Any:
        noise = torch.rand(3, generator=gen) + torch.randn(2, 3, generator=gen).sum(0)
        coin = torch.bernoulli(torch.sigmoid(w.detach()))
        return w * noise + coin + torch.randint(0, 5, (3,), generator=gen)

    compiled = torch.compile(sample)
    g1, g2 = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    torch.manual_seed(11)
    got = [compiled(g1).detach().numpy() for _ in range(4)]
    torch.manual_seed(11)
    want = [sample(g2).detach().numpy() for _ in range(4)]
    for a, b in zip(got, want):
        assert np.array_equal(a, b)
    assert not np.array_equal(got[0], got[1])
    assert compiled.explain().graph_break_count == 0


@pytest.mark.parametrize("what", ["manual_seed", "get_rng_state", "generator"])
def test_seeding_or_reading_a_generator_in_a_step_breaks_the_graph(
        what: str, caplog: pytest.LogCaptureFixture) -> None:
    x = torch.ones(4)

    def body() -> Any:
        if what == "manual_seed":
            torch.manual_seed(5)
        elif what == "get_rng_state":
            torch.get_rng_state()
        else:
            torch.Generator().manual_seed(2)
        return F.dropout(x, 0.5)

    run = torch.compile(body)
    torch.manual_seed(0)
    with caplog.at_level(logging.INFO, logger="funcgrad.torch.compile"):
        got = [run().numpy() for _ in range(3)]
    torch.manual_seed(0)
    want = [body().numpy() for _ in range(3)]
    for a, b in zip(got, want):
        assert np.array_equal(a, b)
    reasons = run.explain().break_reasons
    assert len(reasons) == 1 and "staged" in reasons[0].reason
    assert any("acts once" in r.getMessage() for r in caplog.records)
    with pytest.raises(torch._dynamo.Unsupported, match="acts once"):
        torch.compile(body, fullgraph=True)()


@pytest.mark.gpu
def test_compiled_gpu_step_with_dropout_draws_on_the_device() -> None:
    need_device()
    import fakecupy  # noqa: PLC0415

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, 4))
    twin = copy.deepcopy(model).cuda()
    model = model.cuda()
    x, y = torch.randn(8, 16, device="cuda"), torch.randint(0, 4, (8,), device="cuda")
    run = torch.compile(_step(model, torch.optim.Adam(model.parameters()), x, y))
    eager = _step(twin, torch.optim.Adam(twin.parameters()), x, y)
    torch.cuda.manual_seed(4)
    got = [host(run()) for _ in range(3)]
    if fakecupy.installed():
        with fakecupy.counting() as c:
            last = run()
        assert (c.h2d, c.d2h, c.syncs) == (0, 0, 0), c
    else:
        last = run()
    got.append(host(last.detach()))
    torch.cuda.manual_seed(4)
    want = [host(eager().detach()) for _ in range(4)]
    # The same masks (the device's generator, in the eager order); the kernels may round
    # differently from the eager ones.
    np.testing.assert_allclose(got, want, rtol=1e-5)
    for a, b in zip(model.parameters(), twin.parameters()):
        np.testing.assert_allclose(host(a.detach()), host(b.detach()), rtol=1e-4, atol=1e-6)
    assert run.explain().graph_break_count == 0


@pytest.mark.gpu
def test_a_cuda_generator_draws_on_its_device_inside_a_compiled_function() -> None:
    need_device()
    g1, g2 = (torch.Generator(device="cuda").manual_seed(8) for _ in range(2))
    x = torch.ones(4, device="cuda")

    def noisy(gen: Any) -> Any:
        return x * torch.randn(4, device="cuda", generator=gen)

    compiled = torch.compile(noisy)
    got = [host(compiled(g1)) for _ in range(3)]
    want = [host(noisy(g2)) for _ in range(3)]
    np.testing.assert_array_equal(got, want)
    assert not np.array_equal(got[0], got[1])
    assert compiled.explain().graph_break_count == 0
    # A generator of the other kind is refused as PyTorch refuses it.
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator"):
        torch.rand(2, generator=g1)
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator"):
        torch.rand(2, device="cuda", generator=torch.Generator())
