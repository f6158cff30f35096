"""The ``meta`` device of the PyTorch face, compared with torch 2.13: tensors with a shape,
a dtype and no data (creation, ``to``, ``with torch.device("meta")``), operations whose
results come from the primitives' shape rules (drawn shapes over elementwise, broadcasting,
matmul, reductions, reshapes, indexing, conv2d and cat), backward giving meta gradients,
PyTorch's reprs and errors for data access, the module helpers (``to("meta")``,
``to_empty``, ``load_state_dict(assign=True)``, ``skip_init``) and the model-ensembling
recipe of PyTorch's tutorials, end to end."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft

torch = pytest.importorskip("torch")


def _both(expr: str) -> tuple[object, object]:
    """``expr`` evaluated with funcgrad's face and with torch as ``torch``."""
    return eval(expr, {"torch": ft}), eval(expr, {"torch": torch})  # noqa: S307


def _outcome(fn: object) -> tuple[str, str]:
    try:
        return "ok", repr(fn())  # type: ignore[operator]
    except Exception as e:  # noqa: BLE001 - the outcome compared is the error itself
        return type(e).__name__, str(e)


REPRS = [
    "torch.empty(3, 4, device='meta')",
    "torch.empty(3, device='meta', dtype=torch.int64)",
    "torch.empty(3, device='meta', dtype=torch.float64)",
    "torch.empty(2, 3, device='meta', dtype=torch.float16)",
    "torch.empty((), device='meta')",
    "torch.empty(0, device='meta')",
    "torch.empty(3, device='meta', requires_grad=True)",
    "torch.empty(3, device='meta', requires_grad=True) * 2",
    "torch.zeros(2, 3, device='meta')",
    "torch.ones(2, device='meta', dtype=torch.bool)",
    "torch.full((2,), 7, device='meta')",
    "torch.rand(2, 5, device='meta')",
    "torch.randn(4, device='meta', dtype=torch.float64)",
    "torch.arange(5, device='meta')",
    "torch.tensor([1.0, 2.0], device='meta')",
    "torch.tensor([[1, 2]], device='meta')",
    "torch.zeros_like(torch.empty(2, 3, device='meta'))",
    "torch.ones_like(torch.ones(2), device='meta')",
    "torch.empty_like(torch.empty(2, device='meta'), dtype=torch.int32)",
    "torch.randn_like(torch.empty(2, device='meta'))",
    "torch.ones(2).to('meta')",
    "torch.ones(2).to(device='meta')",
    "torch.ones(2, dtype=torch.float64).to('meta', torch.float16)",
    "torch.empty(2, 3, device='meta').to(torch.int32)",
    "torch.empty(3, 4, device='meta').sum()",
    "torch.nn.Parameter(torch.empty(4, 3, device='meta'))",
    "list(torch.empty(3, 2, device='meta'))",
    "copy.deepcopy(torch.empty(3, device='meta', requires_grad=True))",
]


@pytest.mark.parametrize("expr", REPRS)
def test_reprs_as_torch(expr: str) -> None:
    ours, theirs = _both(expr.replace("copy.", "__import__('copy')."))
    assert repr(ours) == repr(theirs)
    if not isinstance(ours, list):
        assert str(ours) == str(theirs)


def test_device_flags_and_context_manager() -> None:
    for mod in (ft, torch):
        t = mod.empty(3, 4, device="meta")
        assert t.is_meta and not mod.ones(1).is_meta
        assert t.device == mod.device("meta") and t.device.type == "meta"
        assert t.shape == (3, 4) and t.numel() == 12 and t.stride() == (4, 1)
        with mod.device("meta"):
            m = mod.nn.Linear(3, 4)
            made = mod.zeros(2)
        assert m.weight.is_meta and m.bias.is_meta and made.is_meta
        assert not mod.zeros(2).is_meta  # the default device is restored
        assert repr(m.weight) == ("Parameter containing:\ntensor(..., device='meta', "
                                  "size=(4, 3), requires_grad=True)")


def test_meta_factories_draw_nothing() -> None:
    # PyTorch's meta factories and initializers leave the generator where it was.
    ft.manual_seed(0)
    ft.randn(1000, device="meta")
    ft.nn.init.kaiming_uniform_(ft.empty(5, 5, device="meta"))
    with ft.device("meta"):
        ft.nn.Linear(30, 40)
    ours = ft.rand(3).numpy()
    torch.manual_seed(0)
    np.testing.assert_array_equal(ours, torch.rand(3).numpy())


ERRORS = [
    "torch.empty(3, 4, device='meta').item()",
    "torch.empty((), device='meta').item()",
    "float(torch.empty(1, device='meta'))",
    "bool(torch.empty((), device='meta'))",
    "torch.empty(3, device='meta').tolist()",
    "torch.empty(3, device='meta').numpy()",
    "torch.empty(3, device='meta').to('cpu')",
    "torch.empty(3, device='meta').cpu()",
    "torch.empty(3, 4, device='meta') + torch.ones(3, 4)",
    "torch.ones(3, 4) + torch.empty(3, 4, device='meta')",
    "torch.cat([torch.empty(3, 4, device='meta'), torch.ones(3, 4)])",
    "torch.empty(3, 4, device='meta') + torch.tensor(1.0)",
    "torch.ones(3, 4).copy_(torch.empty(3, 4, device='meta'))",
    "torch.empty(3, 4, device='meta').copy_(torch.ones(3, 4))",
    "(lambda a: a[a > 0])(torch.empty(3, device='meta'))",
    "torch.nn.Linear(2, 2).to('meta').to('cpu')",
    "torch.empty(2, 3, device='meta').view(5)",
    "torch.ones(3) + torch.empty((), device='meta')",
    "torch.ones(2, requires_grad=True).to('meta').sum().backward()",
    "torch.empty(3, device='meta').data_ptr()",
    "torch.empty(3, device='meta').type()",
    "torch.empty(3, device='meta').get_device()",
    "2.0 / torch.empty((), device='meta')",
    "torch.tensor(2.0) * torch.empty(3, device='meta')",
    "torch.ones(2, requires_grad=True).to('meta')",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_as_torch(expr: str) -> None:
    ours = _outcome(lambda: eval(expr, {"torch": ft}))  # noqa: S307
    theirs = _outcome(lambda: eval(expr, {"torch": torch}))  # noqa: S307
    assert ours == theirs


@pytest.mark.parametrize("expr", [
    "torch.empty(3, device='meta') @ torch.empty(4, device='meta')",
    "torch.empty(2, 3, device='meta') @ torch.empty(4, 5, device='meta')",
    "torch.empty(2, 3, device='meta') + torch.empty(4, 5, device='meta')",
    "torch.cat([torch.empty(2, 3, device='meta'), torch.empty(2, 4, device='meta')])",
])
def test_shape_errors_are_runtime_errors(expr: str) -> None:
    # PyTorch's meta kernels word these differently from its CPU kernels, whose words
    # funcgrad gives (docs/sharp_bits.md): the exception type is the same.
    ours = _outcome(lambda: eval(expr, {"torch": ft}))  # noqa: S307
    theirs = _outcome(lambda: eval(expr, {"torch": torch}))  # noqa: S307
    assert ours[0] == theirs[0] == "RuntimeError"


# Operations over drawn shapes: (name, arity, function of the module and the operands).
def _conv(mod: object, x: object, w: object) -> object:
    return mod.nn.functional.conv2d(x, w, padding=1, stride=2)  # type: ignore[attr-defined]


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=2, max_size=4),
       st.lists(st.booleans(), min_size=4, max_size=4),
       st.integers(0, 3), st.sampled_from(["float32", "float64", "int64"]))
def test_shape_inference_as_torch(shape: list[int], ones: list[bool], axis: int,
                                  dtype: str) -> None:
    # A second operand broadcast against the first (some of its dims set to 1).
    other = [1 if o else n for n, o in zip(shape, ones)]
    axis %= len(shape)
    flt = dtype != "int64"
    cases = [
        lambda m, a, b: a + b,
        lambda m, a, b: a * 2.5,
        lambda m, a, b: (a > b).logical_not(),
        lambda m, a, b: m.where(a > 0, a, b),
        lambda m, a, b: a.sum(axis, keepdim=True),
        lambda m, a, b: a.amax(dim=axis),
        lambda m, a, b: a.argmax(axis),
        lambda m, a, b: a.cumsum(axis),
        lambda m, a, b: a.reshape(-1, shape[-1]),
        lambda m, a, b: a.permute(*reversed(range(a.ndim))),
        lambda m, a, b: a.transpose(0, -1).flatten(),
        lambda m, a, b: a[..., 0],
        lambda m, a, b: a[:, None, :1],
        lambda m, a, b: a[m.zeros(2, dtype=m.int64, device="meta")],
        lambda m, a, b: m.cat([a, a], axis),
        lambda m, a, b: m.stack([a, b.expand_as(a)], 0),
        lambda m, a, b: a @ a.transpose(-1, -2),
        lambda m, a, b: a.sort(axis)[1],
    ]
    if flt:
        cases += [
            lambda m, a, b: (a.exp() - b).tanh(),
            lambda m, a, b: a.mean((0, -1)),
            lambda m, a, b: a.var(axis, unbiased=False),
            lambda m, a, b: a.softmax(axis),
            lambda m, a, b: m.nn.functional.layer_norm(a, a.shape[-1:]),
        ]
    for mod in (ft, torch):
        dt = getattr(mod, dtype)
        a = mod.empty(*shape, device="meta", dtype=dt)
        b = mod.empty(*other, device="meta", dtype=dt)
        results = [f(mod, a, b) for f in cases]
        if mod is ft:
            ours = results
        else:
            theirs = results
    for k, (o, t) in enumerate(zip(ours, theirs)):
        assert (tuple(o.shape), str(o.dtype), o.is_meta) == (tuple(t.shape), str(t.dtype),
                                                             True), k


@settings(max_examples=10, deadline=None)
@given(st.integers(1, 3), st.integers(1, 4), st.integers(5, 9), st.integers(5, 9),
       st.integers(1, 5))
def test_conv2d_and_linear_shapes_as_torch(n: int, c: int, h: int, w: int, k: int) -> None:
    shapes = []
    for mod in (ft, torch):
        x = mod.empty(n, c, h, w, device="meta")
        y = _conv(mod, x, mod.empty(k, c, 3, 3, device="meta"))
        z = mod.nn.functional.linear(y.flatten(1), mod.empty(7, y[0].numel(), device="meta"))
        p = mod.nn.functional.max_pool2d(x, 2)
        shapes.append([(tuple(r.shape), r.is_meta) for r in (y, z, p)])
    assert shapes[0] == shapes[1]


def test_backward_gives_meta_grads() -> None:
    grads = []
    for mod in (ft, torch):
        with mod.device("meta"):
            net = mod.nn.Sequential(mod.nn.Linear(3, 5), mod.nn.Tanh(), mod.nn.Linear(5, 2))
        x = mod.empty(4, 3, device="meta")
        loss = mod.nn.functional.cross_entropy(
            net(x), mod.zeros(4, dtype=mod.int64, device="meta"))
        assert repr(loss).startswith("tensor(..., device='meta', size=(), grad_fn=<")
        loss.backward()
        grads.append([repr(p.grad) for p in net.parameters()])
    assert grads[0] == grads[1]
    assert grads[0][0] == "tensor(..., device='meta', size=(5, 3))"


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # (torch.func's own)
@pytest.mark.parametrize("expr", [
    "torch.vmap(lambda x: x.sin().sum())(torch.empty(5, 3, device='meta'))",
    "torch.func.grad(lambda x: x.sin().sum())(torch.empty(5, 3, device='meta'))",
    "torch.func.jacrev(lambda x: x.sin())(torch.empty(3, device='meta'))",
    "(lambda t: torch.func.jvp(lambda x: x.exp(), (t,), (t,))[1])("
    "torch.empty(2, device='meta'))",
    "(lambda a: torch.autograd.grad((a * a).sum(), a))("
    "torch.empty(5, 3, device='meta', requires_grad=True))",
])
def test_transforms_on_meta_tensors_as_torch(expr: str) -> None:
    ours, theirs = _both(expr)
    assert repr(ours) == repr(theirs)


def _pair() -> tuple[object, object]:
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    ours = ft.nn.Sequential(ft.nn.Linear(3, 4), ft.nn.BatchNorm1d(4))
    ours.load_state_dict({k: ft.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


def test_gradient_clipping_and_optimizer_step_on_meta_parameters() -> None:
    norms = []
    for mod in (ft, torch):
        with mod.device("meta"):
            net = mod.nn.Linear(3, 2)
        net(mod.empty(4, 3, device="meta")).pow(2).mean().backward()
        norms.append(repr(mod.nn.utils.clip_grad_norm_(net.parameters(), 1.0)))
        opt = mod.optim.Adam(net.parameters())
        opt.step()  # (funcgrad skips meta parameters: docs/sharp_bits.md)
        opt.zero_grad()
        assert net.weight.is_meta and net.weight.grad is None
    assert norms[0] == norms[1] == "tensor(..., device='meta', size=())"


def test_load_state_dict_assign_onto_meta_module() -> None:
    for mod, src in zip((ft, torch), _pair()):
        sd = src.state_dict()
        with mod.device("meta"):
            m = mod.nn.Sequential(mod.nn.Linear(3, 4), mod.nn.BatchNorm1d(4))
        assert m[1].running_mean.is_meta and m[1].num_batches_tracked.is_meta
        assert str(m.load_state_dict(sd, assign=True)) == "<All keys matched successfully>"
        w = m[0].weight
        assert type(w).__name__ == "Parameter" and w.requires_grad and not w.is_meta
        assert mod.equal(w, sd["0.weight"])
        x = mod.ones(5, 3)
        np.testing.assert_allclose(m(x).detach().numpy(), src(x).detach().numpy())


def test_load_state_dict_onto_meta_warns_as_torch() -> None:
    texts = []
    for mod in (ft, torch):
        with mod.device("meta"):
            m = mod.nn.Linear(3, 4)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            m.load_state_dict(mod.nn.Linear(3, 4).state_dict())
        texts.append([str(w.message) for w in seen])
        assert m.weight.is_meta
    assert texts[0] == texts[1] and len(texts[0]) == 2


def test_to_empty_and_skip_init() -> None:
    for mod in (ft, torch):
        with mod.device("meta"):
            m = mod.nn.Linear(3, 4)
        assert m.to_empty(device="cpu") is m
        w = m.weight
        assert (w.device.type, tuple(w.shape), type(w).__name__, w.requires_grad) == (
            "cpu", (4, 3), "Parameter", True)
        m.reset_parameters()
        assert float(m.weight.detach().abs().max()) <= 3 ** -0.5
        outer = mod.nn.Sequential(mod.nn.Linear(2, 2)).to("meta")
        outer.to_empty(device="cpu", recurse=False)
        assert outer[0].weight.is_meta  # recurse=False leaves the children alone
        s = mod.nn.utils.skip_init(mod.nn.Linear, 3, 4)
        assert (s.weight.device.type, tuple(s.weight.shape)) == ("cpu", (4, 3))
        assert mod.nn.utils.skip_init(mod.nn.Linear, 3, 4, device="meta").weight.is_meta


def test_module_to_meta_makes_new_parameters() -> None:
    for mod in (ft, torch):
        m = mod.nn.Linear(3, 4)
        w = m.weight
        assert m.to("meta") is m
        assert m.weight is not w and not w.is_meta  # a new Parameter, as PyTorch's
        assert m.weight.is_meta and m.weight.requires_grad
        assert type(m.weight).__name__ == "Parameter"
        assert repr(copy.deepcopy(m).weight) == repr(m.weight)
        v = m.weight
        m.to("meta")
        assert m.weight is v  # no move: the same object


def test_ensembling_recipe_as_torch() -> None:
    """PyTorch's model-ensembling tutorial, unchanged but for the sizes, on the same
    weights as torch's models."""

    def recipe(mod: object, weights: list[dict[str, np.ndarray]] | None) -> tuple[
            np.ndarray, np.ndarray, list[dict[str, np.ndarray]]]:
        nn, F = mod.nn, mod.nn.functional  # type: ignore[attr-defined]

        class SimpleMLP(nn.Module):  # type: ignore[name-defined,misc]
            def __init__(self) -> None:
                super().__init__()
                self.fc1 = nn.Linear(784, 32)
                self.fc2 = nn.Linear(32, 32)
                self.fc3 = nn.Linear(32, 10)

            def forward(self, x: object) -> object:
                x = x.flatten(1)  # type: ignore[attr-defined]
                x = F.relu(self.fc1(x))
                x = F.relu(self.fc2(x))
                return self.fc3(x)

        mod.manual_seed(0)  # type: ignore[attr-defined]
        models = [SimpleMLP() for _ in range(4)]
        if weights is not None:
            for m, w in zip(models, weights):
                m.load_state_dict({k: mod.tensor(v) for k, v in w.items()})  # type: ignore
        minibatch = mod.tensor(np.linspace(-1, 1, 8 * 784, dtype=np.float32)  # type: ignore
                               .reshape(8, 1, 28, 28))
        predictions = [model(minibatch) for model in models]
        params, buffers = mod.func.stack_module_state(models)  # type: ignore[attr-defined]
        base_model = copy.deepcopy(models[0])
        base_model = base_model.to("meta")

        def fmodel(params: object, buffers: object, x: object) -> object:
            return mod.func.functional_call(base_model, (params, buffers), (x,))  # type: ignore

        vmapped = mod.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)  # type: ignore
        assert base_model.fc1.weight.is_meta
        state = [{k: v.detach().numpy() for k, v in m.state_dict().items()} for m in models]
        return (vmapped.detach().numpy(), mod.stack(predictions).detach().numpy(),  # type: ignore
                state)

    want, want_loop, weights = recipe(torch, None)
    got, got_loop, _ = recipe(ft, weights)
    assert got.shape == (4, 8, 10)
    np.testing.assert_allclose(got, got_loop, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(want, want_loop, rtol=1e-5, atol=1e-5)
