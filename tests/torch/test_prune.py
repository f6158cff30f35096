"""``torch.nn.utils.prune`` side by side with torch 2.13: the masks (L1's ties in topk's
order, the random methods' draws from the default generator), the reparametrization
(``<name>_orig`` parameter, ``<name>_mask`` buffer, the pruned tensor recomputed before each
forward), repeated pruning in a container, ``remove``, ``global_unstructured``,
importance scores, the errors for bad amounts and dims, a training step, and no cyclic
garbage per forward."""

from __future__ import annotations

import copy
import functools
import re

import numpy as np
import pytest
from gc_checks import cyclic_garbage as _cyclic_garbage
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft
import funcgrad.torch.nn.utils.prune as fprune
from tests.torch._outcomes import outcome
from tests.torch._outcomes import values as _np

torch = pytest.importorskip("torch")
pytest.importorskip("torch.nn.utils.prune")


def _prune(lib):
    return lib.nn.utils.prune


def _msg(e: BaseException) -> str:
    """The message with object addresses and the package path made comparable."""
    text = re.sub(r" at 0x[0-9a-f]+", "", str(e))
    return text.replace("funcgrad.torch.", "torch.")


def _outcome(fn):
    return outcome(fn, _msg)


def _state(module):
    """What a program sees of a (pruned) module: parameter and buffer names in order, the
    state dict's keys and values, and the pruned attributes."""
    out = {
        "params": [n for n, _ in module.named_parameters()],
        "buffers": [n for n, _ in module.named_buffers()],
        "state": {k: _np(v) for k, v in module.state_dict().items()},
    }
    for name in ("weight", "bias"):
        if name in vars(module):  # the pruned tensor: a plain attribute
            out["attr_" + name] = _np(vars(module)[name])
    return out


def _assert_same_state(got, want):
    assert got["params"] == want["params"]
    assert got["buffers"] == want["buffers"]
    assert list(got["state"]) == list(want["state"])
    for k in want["state"]:
        np.testing.assert_allclose(got["state"][k], want["state"][k], rtol=1e-6, atol=1e-7)
    assert sorted(k for k in got if k.startswith("attr_")) == \
        sorted(k for k in want if k.startswith("attr_"))
    for k in want:
        if k.startswith("attr_"):
            np.testing.assert_allclose(got[k], want[k], rtol=1e-6, atol=1e-7)


def _conv(lib, seed, out_c, in_c, k, values=None):
    lib.manual_seed(seed)
    conv = lib.nn.Conv2d(in_c, out_c, k)
    if values is not None:
        with lib.no_grad():
            conv.weight.copy_(lib.tensor(values, dtype=lib.float32).reshape(conv.weight.shape))
    return conv


# ------------------------------------------------------------------ single prunings

_AMOUNT = st.one_of(st.integers(0, 12), st.floats(0.0, 1.0, allow_nan=False))


def _single(lib, seed, shape, values, method, amount, extra):
    conv = _conv(lib, seed, *shape, values=values)
    p = _prune(lib)
    lib.manual_seed(seed + 1)
    kind, val = _outcome(lambda: {
        "l1": lambda: p.l1_unstructured(conv, "weight", amount),
        "random": lambda: p.random_unstructured(conv, "weight", amount),
        "ln": lambda: p.ln_structured(conv, "weight", amount, extra[0], extra[1]),
        "random_s": lambda: p.random_structured(conv, "weight", amount, extra[1]),
        "identity": lambda: p.identity(conv, "bias"),
    }[method]())
    if kind != "ok":
        return kind, val, _state(conv)
    x = lib.linspace(-1.0, 1.0, 2 * shape[1] * 16).reshape(2, shape[1], 4, 4)
    return kind, _np(conv(x)), _state(conv)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1),
       shape=st.tuples(st.integers(1, 4), st.integers(1, 2), st.integers(1, 2)),
       ties=st.booleans(), data=st.data(),
       method=st.sampled_from(["l1", "random", "ln", "random_s", "identity"]),
       amount=_AMOUNT,
       n=st.sampled_from([1, 2, 3, 0, 0.5, -1, float("inf"), float("-inf"), "fro", "nuc"]),
       dim=st.integers(-4, 3))
def test_single_pruning_matches(seed, shape, ties, data, method, amount, n, dim):
    size = shape[0] * shape[1] * shape[2] ** 2
    # Small integers: many equal magnitudes, so L1's choice among ties is checked too.
    values = data.draw(st.lists(st.integers(-3, 3), min_size=size, max_size=size)) \
        if ties else None
    got = _single(ft, seed, shape, values, method, amount, (n, dim))
    want = _single(torch, seed, shape, values, method, amount, (n, dim))
    assert got[0] == want[0], (got[:2], want[:2])
    if want[0] == "ok":
        np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-6)
    else:
        assert got[1] == want[1]
    _assert_same_state(got[2], want[2])


def test_reparametrization_as_torch():
    lin = ft.nn.Linear(4, 3)
    fprune.l1_unstructured(lin, "weight", amount=0.5)
    assert [n for n, _ in lin.named_parameters()] == ["bias", "weight_orig"]
    assert [n for n, _ in lin.named_buffers()] == ["weight_mask"]
    assert list(lin.state_dict()) == ["bias", "weight_orig", "weight_mask"]
    assert "weight" in vars(lin) and not isinstance(lin.weight, ft.nn.Parameter)
    assert lin.weight.grad_fn is not None and not lin.weight_mask.requires_grad
    assert fprune.is_pruned(ft.nn.Sequential(lin)) and not fprune.is_pruned(ft.nn.Linear(1, 1))
    # The hook recomputes the pruned tensor from the current weight_orig and mask.
    with ft.no_grad():
        lin.weight_orig.fill_(2.0)
    lin(ft.ones(1, 4))
    np.testing.assert_array_equal(_np(lin.weight), 2.0 * _np(lin.weight_mask))
    assert ft.nn.utils.prune is fprune
    # As in PyTorch, the pruned tensor is a graph node that deepcopy refuses, until a
    # forward under no_grad has made it a leaf; the state dict loads into another pruned
    # module.
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(lin)
    with ft.no_grad():
        lin(ft.ones(1, 4))
    twin = copy.deepcopy(lin)
    np.testing.assert_array_equal(_np(twin(ft.ones(1, 4))), _np(lin(ft.ones(1, 4))))
    other = fprune.identity(ft.nn.Linear(4, 3), "weight")
    other.load_state_dict(lin.state_dict())
    np.testing.assert_array_equal(_np(other(ft.ones(1, 4))), _np(lin(ft.ones(1, 4))))


# --------------------------------------------------- repeated pruning, importance, remove

_STEP = st.tuples(st.sampled_from(["l1", "random", "ln", "random_s", "custom", "identity",
                                   "l1_scores", "ln_scores"]),
                  _AMOUNT, st.sampled_from([1, 2, float("inf"), "fro"]), st.integers(-4, 3))


def _step(p, conv, method, amount, n, dim, scores, custom):
    if method == "l1":
        return p.l1_unstructured(conv, "weight", amount)
    if method == "random":
        return p.random_unstructured(conv, "weight", amount)
    if method == "ln":
        return p.ln_structured(conv, "weight", amount, n, dim)
    if method == "random_s":
        return p.random_structured(conv, "weight", amount, dim)
    if method == "custom":
        return p.custom_from_mask(conv, "weight", custom)
    if method == "identity":
        return p.identity(conv, "weight")
    if method == "l1_scores":
        return p.l1_unstructured(conv, "weight", amount, importance_scores=scores)
    return p.ln_structured(conv, "weight", amount, n, dim, importance_scores=scores)


def _sequence(lib, seed, shape, steps, finish):
    conv = _conv(lib, seed, *shape)
    p = _prune(lib)
    lib.manual_seed(seed + 7)
    log = []
    for i, (method, amount, n, dim) in enumerate(steps):
        wshape = tuple(conv.weight.shape)
        scores = lib.linspace(-2.0, 3.0, int(np.prod(wshape))).reshape(wshape).flip(0)
        custom = (lib.arange(int(np.prod(wshape))).reshape(wshape) % (i + 2) != 0).float()
        kind, val = _outcome(functools.partial(_step, p, conv, method, amount, n, dim,
                                               scores, custom))
        hooks = [type(h).__name__ for h in conv._forward_pre_hooks.values()]
        inner = [[type(m).__name__ for m in h] for h in conv._forward_pre_hooks.values()
                 if type(h).__name__ == "PruningContainer"]
        log.append((kind, None if kind == "ok" else val, hooks, inner, _state(conv)))
        if kind != "ok":
            # A failed repeat leaves the module half pruned (no hook), as in PyTorch; what
            # a next pruning says of it is Module.register_parameter's business.
            break
    if finish == "remove":
        log.append(_outcome(lambda: _state(p.remove(conv, "weight"))))
    x = lib.linspace(-1.0, 1.0, 2 * shape[1] * 16).reshape(2, shape[1], 4, 4)
    log.append(_outcome(lambda: _np(conv(x))))
    return log


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**31 - 1),
       shape=st.tuples(st.integers(1, 4), st.integers(1, 3), st.integers(1, 2)),
       steps=st.lists(_STEP, min_size=1, max_size=4),
       finish=st.sampled_from(["remove", "keep"]))
def test_repeated_pruning_and_remove_match(seed, shape, steps, finish):
    got = _sequence(ft, seed, shape, steps, finish)
    want = _sequence(torch, seed, shape, steps, finish)
    assert len(got) == len(want)
    done = len(want) - (2 if finish == "remove" else 1)
    for g, w in zip(got[:done], want[:done]):
        assert g[:4] == w[:4]
        _assert_same_state(g[4], w[4])
    for g, w in zip(got[done:], want[done:]):
        assert g[0] == w[0]
        if w[0] != "ok":
            assert g[1] == w[1]
        elif isinstance(w[1], dict):
            _assert_same_state(g[1], w[1])
        else:
            np.testing.assert_allclose(g[1], w[1], rtol=1e-5, atol=1e-6)


def test_remove_keeps_the_parameter_object():
    lin = ft.nn.Linear(3, 2)
    orig = lin.weight
    fprune.random_unstructured(lin, "weight", 2)
    assert lin.weight_orig is orig
    fprune.remove(lin, "weight")
    assert lin.weight is orig and float((orig == 0).sum()) == 2
    assert [n for n, _ in lin.named_parameters()] == ["bias", "weight"]
    assert not fprune.is_pruned(lin)


def _small_tensors(lib):
    """Repeated pruning of a 0-d parameter and of a bias (1-d): the container indexes them
    with a 0-d boolean mask, and structured pruning of a pruned bias acts on a size-1
    leading dim."""
    lib.manual_seed(0)
    p = _prune(lib)
    m = lib.nn.Module()
    m.s = lib.nn.Parameter(lib.tensor(2.0))
    lin = lib.nn.Linear(2, 3)
    p.identity(lin, "bias")
    steps = [lambda: p.l1_unstructured(m, "s", 0), lambda: p.l1_unstructured(m, "s", 0.0),
             lambda: p.random_unstructured(m, "s", 1), lambda: p.identity(m, "s"),
             lambda: p.custom_from_mask(m, "s", lib.tensor(0.5)),
             lambda: p.ln_structured(m, "s", 0, 1, 0),
             lambda: p.l1_unstructured(lin, "bias", 1),
             lambda: p.random_structured(lin, "bias", 0.5, 0),
             lambda: p.ln_structured(lin, "bias", 0, 1, -1),
             lambda: p.ln_structured(lin, "bias", 1, 2, 0)]
    out = []
    for step in steps:
        kind, val = _outcome(step)
        out.append((kind, None if kind == "ok" else val, _state(m), _state(lin)))
    return out


def test_small_tensors_match():
    for g, w in zip(_small_tensors(ft), _small_tensors(torch), strict=True):
        assert g[:2] == w[:2]
        _assert_same_state(g[2], w[2])
        _assert_same_state(g[3], w[3])
        assert g[2]["state"]["s_mask"].shape == w[2]["state"]["s_mask"].shape


# ---------------------------------------------------------------- global_unstructured

def _global(lib, seed, sizes, pre, method, amount, with_scores):
    lib.manual_seed(seed)
    layers = [lib.nn.Linear(a, b) for a, b in sizes]
    p = _prune(lib)
    if pre:
        p.l1_unstructured(layers[0], "weight", 1)
    params = [(m, "weight") for m in layers] + [(layers[-1], "bias")]
    scores = {(layers[0], "weight"): layers[0].weight.detach().flip(1) * 3} \
        if with_scores else None
    cls = {"l1": p.L1Unstructured, "random": p.RandomUnstructured}[method]
    lib.manual_seed(seed + 3)
    kind, val = _outcome(lambda: p.global_unstructured(params, pruning_method=cls,
                                                       importance_scores=scores,
                                                       amount=amount))
    return kind, val, [_state(m) for m in layers]


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1),
       sizes=st.lists(st.tuples(st.integers(1, 4), st.integers(1, 3)), min_size=1,
                      max_size=3),
       pre=st.booleans(), method=st.sampled_from(["l1", "random"]),
       amount=st.one_of(st.integers(0, 30), st.floats(0.0, 1.0)), with_scores=st.booleans())
def test_global_unstructured_matches(seed, sizes, pre, method, amount, with_scores):
    got = _global(ft, seed, sizes, pre, method, amount, with_scores)
    want = _global(torch, seed, sizes, pre, method, amount, with_scores)
    assert got[:2] == want[:2]
    for g, w in zip(got[2], want[2]):
        _assert_same_state(g, w)


# ------------------------------------------------------------------------- errors

_ERROR_CASES = [
    "p.l1_unstructured(L(3, 2), 'weight', -1)",
    "p.l1_unstructured(L(3, 2), 'weight', 1.5)",
    "p.l1_unstructured(L(3, 2), 'weight', -0.1)",
    "p.l1_unstructured(L(3, 2), 'weight', 2.0)",
    "p.l1_unstructured(L(3, 2), 'weight', 'a')",
    "p.l1_unstructured(L(3, 2), 'weight', None)",
    "p.l1_unstructured(L(3, 2), 'weight', 3 + 0j)",
    "p.l1_unstructured(L(3, 2), 'weight', True)",
    "p.random_structured(L(3, 2), 'weight', True, 0)",
    "p.l1_unstructured(L(3, 2), 'weight', float('nan'))",
    "p.l1_unstructured(L(3, 2), 'weight', 7)",
    "p.l1_unstructured(L(3, 2), 'weight', np.int64(-1))",
    "p.l1_unstructured(L(3, 2), 'weight', np.bool_(True))",
    "p.l1_unstructured(L(3, 2), 'nope', 1)",
    "p.l1_unstructured(L(3, 2), 'nope', -1)",
    "p.l1_unstructured(L(3, 2), 'weight', 1, importance_scores=t.ones(3))",
    "p.ln_structured(L(3, 2), 'bias', 1, 2, 0)",
    "p.ln_structured(L(3, 2), 'weight', 1, 2, 2)",
    "p.ln_structured(L(3, 2), 'weight', 1, 2, -3)",
    "p.ln_structured(L(3, 2), 'weight', 3, 2, 0)",
    "p.ln_structured(L(3, 2), 'weight', 1, 'nuc', 0)",
    "p.ln_structured(L(3, 2), 'weight', 1, 'abc', 0)",
    "p.ln_structured(L(3, 2), 'weight', 0, 'abc', 0)",
    "p.random_structured(L(3, 2), 'weight', 1, 5)",
    "p.custom_from_mask(L(3, 2), 'weight', t.ones(3))",
    "p.remove(L(3, 2), 'weight')",
    "p.PruningContainer(3)",
    "p.PruningContainer(named(p.Identity()), named(p.Identity()))",
    "p.PruningContainer(named(p.Identity())).add_pruning_method(3)",
    "p.PruningContainer(named(p.Identity())).add_pruning_method(p.Identity())",
    "p.PruningContainer(named(p.Identity())).add_pruning_method(named(p.Identity(), 'v'))",
    "p.PruningContainer().compute_mask(t.ones(2), t.ones(2))",
    "p.BasePruningMethod()",
    "p.Identity().apply_mask(L(3, 2))",
    "p.L1Unstructured(1).prune(t.ones(3), importance_scores=t.ones(2))",
    "p.global_unstructured(3, p.L1Unstructured, amount=1)",
    "p.global_unstructured([], p.L1Unstructured, amount=1)",
    "p.global_unstructured(((m, 'weight') for m in [L(2, 2)]), p.L1Unstructured, amount=1)",
    "p.global_unstructured([(L(2, 2), 'weight')], p.L1Unstructured, importance_scores=[1],"
    " amount=1)",
    "p.global_unstructured([(L(2, 2), 'weight')], p.LnStructured, amount=1, n=2)",
    "p.global_unstructured([(L(2, 2), 'weight')], p.RandomUnstructured, amount=9)",
]


@pytest.mark.parametrize("src", _ERROR_CASES)
def test_errors_match(src):
    def run(lib):
        def named(method, name="weight"):
            method._tensor_name = name
            return method

        lib.manual_seed(0)
        env = {"p": _prune(lib), "L": lib.nn.Linear, "t": lib, "np": np, "named": named}
        kind, val = _outcome(lambda: eval(src, env))  # noqa: S307
        return kind, (val if kind != "ok" else None)

    assert run(ft) == run(torch)


def test_failed_repeat_leaves_the_module_as_torch():
    def run(lib):
        lin = lib.nn.Linear(3, 2)
        p = _prune(lib)
        p.l1_unstructured(lin, "weight", 1)
        kind, val = _outcome(lambda: p.l1_unstructured(lin, "weight", 10))
        return kind, val, [n for n, _ in lin.named_parameters()], len(lin._forward_pre_hooks)

    assert run(ft) == run(torch)


# --------------------------------------------------------------------- training

def _train(lib, seed, amount):
    lib.manual_seed(seed)
    net = lib.nn.Sequential(lib.nn.Linear(4, 6), lib.nn.Tanh(), lib.nn.Linear(6, 2))
    p = _prune(lib)
    p.l1_unstructured(net[0], "weight", amount)
    p.ln_structured(net[2], "weight", 1, 2, 1)
    opt = lib.optim.SGD(net.parameters(), lr=0.1)
    x = lib.randn(5, 4)
    out = []
    for _ in range(2):
        opt.zero_grad()
        loss = net(x).pow(2).mean()
        loss.backward()
        out += [_np(net[0].weight_orig.grad), _np(net[2].weight_orig.grad), _np(loss)]
        opt.step()
    out.append(_np(net(x)))
    out.append(_np(net[0].weight))
    return out


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), amount=st.integers(0, 24))
def test_training_step_matches(seed, amount):
    got, want = _train(ft, seed, amount), _train(torch, seed, amount)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    # The gradient reaches weight_orig masked: zero where pruned.
    lin = fprune.l1_unstructured(ft.nn.Linear(4, 3), "weight", 5)
    lin(ft.ones(2, 4)).sum().backward()
    assert float((lin.weight_orig.grad * (1 - lin.weight_mask)).abs().sum()) == 0.0


def test_pruned_forward_makes_no_cyclic_garbage():
    ft.manual_seed(0)
    net = ft.nn.Sequential(ft.nn.Linear(4, 8), ft.nn.ReLU(), ft.nn.Linear(8, 3))
    fprune.l1_unstructured(net[0], "weight", 0.3)
    fprune.random_structured(net[0], "weight", 1, 0)
    fprune.global_unstructured([(net[0], "weight"), (net[2], "weight")],
                               fprune.L1Unstructured, amount=0.2)
    opt = ft.optim.SGD(net.parameters(), lr=0.1)
    x = ft.randn(5, 4)

    def step():
        opt.zero_grad()
        loss = net(x).pow(2).mean()
        loss.backward()
        opt.step()
        return loss

    assert _cyclic_garbage(step) == 0
