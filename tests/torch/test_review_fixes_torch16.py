"""PyTorch-face fixes from a sixteenth side-by-side review, each compared with torch 2.13:
``repeat_interleave`` without repeats (a method error, the function's positions),
``output_size`` checks, the window functions' overloads (``kaiser_window(n, beta=)``),
a short list holding tensors/slices read as a tuple index (with PyTorch's warning),
``.grad`` after ``backward(create_graph=True)`` (``CopyBackwards``), the double-backward
node names of celu/hardswish/logsigmoid/glu, custom Functions under torch.func transforms
(the setup_context and vmap-rule errors) and their node's repr, complex operands refused by
ordering operations, gather/scatter/index_put/batch_norm/nll_loss checks, Tensor.__format__
of a 1-element vector, WeightedRandomSampler's multinomial errors and the weights_only
unpickler's message."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

import funcgrad.torch as ft
import funcgrad.torch.nn.functional as FF

try:
    import torch
    import torch.nn.functional as TF
except ImportError:  # pragma: no cover - the oracle is optional
    torch = None
    TF = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch (the oracle) is not installed")


def _np(t):
    return np.asarray(t.detach().cpu().numpy() if hasattr(t, "detach") else t)


def _same(a, b):
    assert str(a.dtype) == str(b.dtype)
    assert tuple(a.shape) == tuple(b.shape)
    # (last-bit differences of float kernels are not what these tests are about)
    np.testing.assert_allclose(_np(a), _np(b), rtol=1e-6, atol=0)


def _outcome(f):
    """``("ok", value)`` or ``(exception type name, message)``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "ok", f()
        except Exception as e:  # noqa: BLE001 - the type and text are what is compared
            return type(e).__name__, str(e)


def _same_outcome(make):
    """``make(L)`` run with funcgrad.torch and with torch: the same error, or equal tensors."""
    ours, theirs = _outcome(lambda: make(ft)), _outcome(lambda: make(torch))
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] != "ok":
        assert ours[1] == theirs[1]
    elif hasattr(theirs[1], "shape"):
        _same(ours[1], theirs[1])
    else:
        assert ours[1] == theirs[1]


# ------------------------------------------------------------ 1. repeat_interleave

@needs_torch
@pytest.mark.parametrize("case", [
    lambda L: L.tensor([1, 2, 0, 3]).repeat_interleave(),
    lambda L: L.tensor([1.0, 2.0]).repeat_interleave(),
    lambda L: L.tensor([1, 2]).repeat_interleave(dim=0),
    lambda L: L.tensor([1, 2]).repeat_interleave(output_size=3),
    lambda L: L.repeat_interleave(L.tensor([1, 2, 0, 3])),
    lambda L: L.repeat_interleave(L.tensor([1, 2, 0, 3]), output_size=6),
    lambda L: L.repeat_interleave(L.tensor([1, 2, 0, 3]), output_size=5),
    lambda L: L.repeat_interleave(L.tensor([1, 2]), 2, output_size=5),
    lambda L: L.repeat_interleave(L.tensor([1, 2]), 2, output_size=4),
    lambda L: L.tensor([5, 6]).repeat_interleave(L.tensor([1, 2]), output_size=4),
    lambda L: L.repeat_interleave(L.tensor([1, 2]), dim=0),
    lambda L: L.repeat_interleave([1, 2]),
    lambda L: L.repeat_interleave(L.tensor([[1, 2]])),
    lambda L: L.repeat_interleave(L.tensor([1, -2])),
])
def test_repeat_interleave_overloads_as_torch(case):
    _same_outcome(case)


# ------------------------------------------------------------ 2. window overloads

@needs_torch
@pytest.mark.parametrize("case", [
    lambda L: L.kaiser_window(5, beta=3.0),
    lambda L: L.kaiser_window(5, beta=3.0, dtype=L.float64),
    lambda L: L.kaiser_window(5, True, beta=3.0),
    lambda L: L.kaiser_window(5, periodic=False, beta=3.0),
    lambda L: L.kaiser_window(5, False, 3.0, dtype=L.float64),
    lambda L: L.kaiser_window(5, periodic=False),
    lambda L: L.kaiser_window(6),
    lambda L: L.hamming_window(5, alpha=0.5),
    lambda L: L.hamming_window(5, True, 0.5, beta=0.3),
    lambda L: L.hamming_window(5, False, 0.5, 0.3),
    lambda L: L.signal.windows.kaiser(5, beta=3.0),
    lambda L: L.signal.windows.kaiser(5, beta=3.0, sym=False),
])
def test_window_keywords_as_torch(case):
    ours, theirs = _outcome(lambda: case(ft)), _outcome(lambda: case(torch))
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "ok":
        np.testing.assert_allclose(_np(ours[1]), _np(theirs[1]), rtol=1e-6, atol=1e-7)
        assert str(ours[1].dtype) == str(theirs[1].dtype)
    else:
        assert ours[1] == theirs[1]


# ------------------------------------------------------------ 3. list of tensors as index

@needs_torch
@pytest.mark.parametrize("make_index", [
    lambda L: [L.tensor([0, 2]), L.tensor([1, 3])],
    lambda L: [L.tensor([0, 2])],
    lambda L: [L.tensor([0, 2]), 1],
    lambda L: [slice(None), 1],
    lambda L: [L.tensor(0), L.tensor(1)],
    lambda L: [[0, 2], [1, 3]],
    lambda L: [0, 2],
    lambda L: [None, 1],
    lambda L: [Ellipsis, 1],
])
def test_list_index_as_torch(make_index):
    def get(L):
        return L.arange(12.0).reshape(3, 4)[make_index(L)]

    def put(L):
        z = L.arange(12.0).reshape(3, 4)
        z[make_index(L)] = -1.0
        return z

    _same_outcome(get)
    _same_outcome(put)


@needs_torch
def test_list_index_warns_as_torch():
    for L in (ft, torch):
        x = L.arange(12.0).reshape(3, 4)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            x[[L.tensor([0, 2]), L.tensor([1, 3])]]
            x[[0, 2]]
        texts = [str(w.message) for w in seen]
        assert len(texts) == 1 and texts[0].startswith(
            "Using a non-tuple sequence for multidimensional indexing is deprecated")
        assert seen[0].filename == __file__


# ------------------------------------------------------------ 4. create_graph node names

@needs_torch
@pytest.mark.parametrize("fn", [lambda L, a: (a ** 3).sum(), lambda L, a: a.exp().sum(),
                                lambda L, a: (a * a).sum()])
def test_grad_after_create_graph_is_copied_as_torch(fn):
    seen = []
    for L in (ft, torch):
        a = L.tensor([1.0, 2.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(L, a).backward(create_graph=True)
        g = a.grad
        first = (type(g.grad_fn).__name__, g.grad_fn.name(),
                 [None if n is None else type(n).__name__ for n, _ in g.grad_fn.next_functions],
                 g.requires_grad, g.is_leaf)
        # the copy is differentiable: the second derivative through .grad
        second, = L.autograd.grad(g.sum(), a)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(L, a).backward(create_graph=True)
        seen.append((first, type(a.grad.grad_fn).__name__, _np(second), _np(a.grad)))
    (f1, n1, s1, g1), (f2, n2, s2, g2) = seen
    assert f1 == f2 and n1 == n2
    np.testing.assert_allclose(s1, s2, rtol=1e-6)
    np.testing.assert_allclose(g1, g2, rtol=1e-6)


@needs_torch
def test_copy_node_names_as_torch():
    for L in (ft, torch):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = L.empty(2).copy_(x * 2)
        assert type(y.grad_fn).__name__ == "CopyBackwards"
        assert y.grad_fn.name() == "torch::autograd::CopyBackwards"
        assert repr(y).endswith("grad_fn=<CopyBackwards>)")
        m = L.linalg.matrix_power(L.eye(2, requires_grad=True), 0)
        assert type(m.grad_fn).__name__ == "CopyBackwards"


@needs_torch
@pytest.mark.parametrize("name", ["celu", "elu", "selu", "hardswish", "logsigmoid", "glu"])
def test_double_backward_node_names_as_torch(name):
    seen = []
    for L, F in ((ft, FF), (torch, TF)):
        b = L.tensor([-1.0, 2.0, 0.5, -0.3], requires_grad=True)
        y = F.glu(b, 0) if name == "glu" else getattr(F, name)(b)
        w = L.tensor([1.0, 2.0, 3.0, 4.0][: y.shape[0]])
        g, = L.autograd.grad((y * w).sum(), b, create_graph=True)
        g2, = L.autograd.grad((g * g).sum(), b)
        seen.append((g.grad_fn.name(), _np(g), _np(g2)))
    assert seen[0][0] == seen[1][0]
    np.testing.assert_allclose(seen[0][1], seen[1][1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(seen[0][2], seen[1][2], rtol=1e-4, atol=1e-5)


# ------------------------------------------------------------ 5. Functions under torch.func

def _functions(L):
    class NoVmap(L.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class Old(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return NoVmap, Old


@needs_torch
@pytest.mark.parametrize("case", [
    lambda L, nv, old: L.func.vmap(nv.apply)(L.ones(2, 3)),
    lambda L, nv, old: L.func.grad(lambda a: old.apply(a).sum())(L.ones(2)),
    lambda L, nv, old: L.func.vmap(old.apply)(L.ones(2, 3)),
    lambda L, nv, old: L.func.grad(lambda a: nv.apply(a).sum())(L.ones(2)),
    lambda L, nv, old: old.apply(L.ones(2)),
])
def test_function_under_func_transforms_as_torch(case):
    _same_outcome(lambda L: case(L, *_functions(L)))


def _custom_backward_functions(L):
    class Scaled(L.autograd.Function):
        # backward deliberately not the forward's derivative: it must be the one used
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 10

    class Two(L.autograd.Function):
        @staticmethod
        def forward(x, y):
            return x * y, x + y

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, ga, gb):
            x, y = ctx.saved_tensors
            return ga * y * 100 + gb, ga * x + gb

    return Scaled, Two


@needs_torch
@pytest.mark.parametrize("case", [
    lambda L, s, t: L.func.grad(lambda a: s.apply(a).sum())(L.ones(2)),
    lambda L, s, t: L.func.vjp(s.apply, L.ones(2))[1](L.ones(2))[0],
    lambda L, s, t: L.func.jacrev(s.apply)(L.ones(2)),
    lambda L, s, t: L.func.vmap(L.func.grad(lambda a: s.apply(a).sum()))(L.ones(3, 2)),
    lambda L, s, t: L.func.vmap(s.apply)(L.ones(3, 2)),
    lambda L, s, t: L.func.jvp(s.apply, (L.ones(2),), (L.ones(2),))[1],
    lambda L, s, t: L.func.jacfwd(s.apply)(L.ones(2)),
    lambda L, s, t: L.func.hessian(lambda a: s.apply(a).sum())(L.ones(2)),
    lambda L, s, t: L.stack(L.func.grad(lambda a, b: sum(o.sum() for o in t.apply(a, b)),
                                        argnums=(0, 1))(L.tensor([1.0, 2.0]),
                                                        L.tensor([3.0, 4.0]))),
    lambda L, s, t: L.func.grad(lambda a: t.apply(a, 3.0)[0].sum())(L.tensor([1.0, 2.0])),
    lambda L, s, t: t.apply(L.ones(2, requires_grad=True), 3.0),
])
def test_function_backward_under_func_as_torch(case):
    _same_outcome(lambda L: case(L, *_custom_backward_functions(L)))


@needs_torch
def test_function_vjp_called_twice_as_torch():
    for L in (ft, torch):
        s, _ = _custom_backward_functions(L)
        _, fn = L.func.vjp(s.apply, L.ones(2))
        assert _np(fn(L.ones(2))[0]).tolist() == _np(fn(L.ones(2))[0]).tolist() == [10.0, 10.0]


@needs_torch
def test_function_node_repr_as_torch():
    reprs = []
    for L in (ft, torch):
        _, old = _functions(L)
        y = old.apply(L.ones(2, requires_grad=True))
        reprs.append((repr(y.grad_fn).rsplit(" at ", 1)[0], repr(y)))
    assert reprs[0] == reprs[1]


# ------------------------------------------------------------ 6. complex ordering refusals

@needs_torch
@pytest.mark.parametrize("case", [
    lambda L, z: z < z * 2, lambda L, z: z > 0, lambda L, z: 1 <= z, lambda L, z: z.ge(z),
    lambda L, z: L.tensor([1.0], dtype=L.float64) < z, lambda L, z: L.tensor([1.0]) < 1j,
    lambda L, z: z.max(), lambda L, z: z.min(0), lambda L, z: z.max(z), lambda L, z: z.amax(),
    lambda L, z: z.amin(), lambda L, z: L.maximum(z, z), lambda L, z: L.minimum(z, z),
    lambda L, z: z.clamp(min=0), lambda L, z: z.clip(0, 1), lambda L, z: L.relu(z),
    lambda L, z: z.floor(), lambda L, z: z.ceil(), lambda L, z: z.trunc(),
    lambda L, z: z.round(), lambda L, z: z.round(decimals=1), lambda L, z: z.sign(),
    lambda L, z: z.sgn(), lambda L, z: z.median(), lambda L, z: z.median(0),
    lambda L, z: z.aminmax(), lambda L, z: L.heaviside(z, z), lambda L, z: z.frac(),
    lambda L, z: z == z * 1, lambda L, z: z.abs(),
])
def test_complex_ordering_as_torch(case):
    _same_outcome(lambda L: case(L, L.tensor([1 + 2j, -3 + 0.5j])))


@needs_torch
def test_complex_relu_functional_as_torch():
    _same_outcome(lambda L: (FF if L is ft else TF).relu(L.tensor([1j])))
    # real operands keep working
    _same_outcome(lambda L: L.tensor([1.0, 2.0]).clamp(0, 1.5))
    _same_outcome(lambda L: L.tensor([1.0, 2.0]) < 1.5)


# ------------------------------------------------------------ 7. indexing ops' checks

@needs_torch
@pytest.mark.parametrize("case", [
    lambda L: L.zeros(3).scatter(0, L.tensor([0]), L.tensor([1.0], dtype=L.float64)),
    lambda L: L.zeros(3).scatter_add(0, L.tensor([0]), L.tensor([1.0], dtype=L.float64)),
    lambda L: L.zeros(3).scatter_(0, L.tensor([0]), L.tensor([1], dtype=L.int64)),
    lambda L: L.zeros(3).scatter(0, L.tensor([0]), 1),
    lambda L: L.zeros(2, 2).gather(0, L.tensor([0])),
    lambda L: L.zeros(3).gather(0, L.tensor([[0]])),
    lambda L: L.tensor(1.0).gather(0, L.tensor([0])),
    lambda L: L.tensor(1.0).gather(0, L.tensor(0)),
    lambda L: L.tensor([1.0, 2.0]).gather(0, L.tensor(1)),
    lambda L: L.zeros(4).index_put_((L.tensor([0, 1]),), L.tensor([1.0, 2.0, 3.0])),
    lambda L: L.zeros(4, 2).index_put_((L.tensor([0, 1]),), L.ones(2, 1, 2)),
    lambda L: L.zeros(4).index_put_((L.tensor([True, False, True, False]),),
                                    L.tensor([1.0, 2.0, 3.0])),
    lambda L: L.zeros(4).index_put_((L.tensor([0, 0]),), L.tensor([1.0, 2.0]), accumulate=True),
    lambda L: L.zeros(4, 2).index_put_((L.tensor([0, 1]),), L.tensor([1.0, 2.0])),
])
def test_indexing_checks_as_torch(case):
    _same_outcome(case)


@needs_torch
def test_gather_of_a_0d_tensor_differentiates():
    x = ft.tensor(3.0, requires_grad=True)
    g, = ft.autograd.grad(x.gather(0, ft.tensor([0, 0])).sum(), x)
    assert float(g) == 2.0


# ------------------------------------------------------------ 8. batch_norm and nll_loss

@needs_torch
@pytest.mark.parametrize("case", [
    lambda L, F: L.nn.BatchNorm1d(4)(L.ones(2, 3)),
    lambda L, F: L.nn.BatchNorm1d(4, track_running_stats=False)(L.ones(2, 3)),
    lambda L, F: L.nn.BatchNorm1d(4).eval()(L.ones(2, 3)),
    lambda L, F: L.nn.BatchNorm2d(4)(L.ones(2, 3, 2, 2)),
    lambda L, F: F.batch_norm(L.ones(2, 3), None, None, None, L.ones(4), training=True),
    lambda L, F: F.batch_norm(L.ones(2, 3), L.zeros(3), L.ones(4)),
    lambda L, F: F.batch_norm(L.ones(1, 3), L.zeros(4), L.ones(4), training=True),
    lambda L, F: F.nll_loss(L.ones(2, 3, 4), L.zeros(2, 5, dtype=L.long)),
    lambda L, F: F.nll_loss(L.ones(2, 3, 4), L.zeros(2, 4, 1, dtype=L.long)),
    lambda L, F: F.nll_loss(L.ones(2, 3, 4, 4), L.zeros(2, 5, 4, dtype=L.long)),
    lambda L, F: F.nll_loss(L.ones(2, 3, 4, 4), L.zeros(2, 4, dtype=L.long)),
    lambda L, F: F.nll_loss(L.ones(2, 3, 4, 4, 2), L.zeros(2, 4, 4, 3, dtype=L.long)),
    lambda L, F: F.cross_entropy(L.ones(2, 3, 4), L.zeros(2, 5, dtype=L.long)),
    lambda L, F: F.nll_loss(L.ones(2, 3, 4), L.zeros(3, 4, dtype=L.long)),
    lambda L, F: F.cross_entropy(L.ones(2, 3, 4), L.zeros(2, 4, dtype=L.long)),
])
def test_norm_and_loss_shape_checks_as_torch(case):
    _same_outcome(lambda L: case(L, FF if L is ft else TF))


# ------------------------------------------------------------ 9. format, sampler, load

@needs_torch
@pytest.mark.parametrize("case", [
    lambda L: f"{L.tensor([2.5]):.3f}", lambda L: f"{L.tensor(2.5):.3f}",
    lambda L: format(L.tensor([2.5])), lambda L: f"{L.tensor([[1.0]]):}",
])
def test_format_as_torch(case):
    _same_outcome(case)


@needs_torch
@pytest.mark.parametrize("weights, n, replacement", [
    ([0.1, 0.9], 5, False), ([0.0, 0.9, 0.1], 3, False), ([0.0, 0.0], 1, True),
    ([-1.0, 2.0], 1, True), ([float("nan"), 1.0], 1, False), ([0.0, 0.0, 1.0], 2, False),
])
def test_weighted_sampler_errors_as_torch(weights, n, replacement):
    def make(L):
        L.manual_seed(0)
        return list(L.utils.data.WeightedRandomSampler(weights, n, replacement=replacement))

    _same_outcome(make)


class _NotAllowed:
    pass


@needs_torch
def test_weights_only_message_as_torch():
    import collections

    texts = []
    for L in (ft, torch):
        for obj in (_NotAllowed(), collections.deque([1])):
            buf = io.BytesIO()
            L.save(obj, buf)
            buf.seek(0)
            with pytest.raises(Exception) as info:
                L.load(buf)
            texts.append((type(info.value).__name__, str(info.value)))
    assert texts[:2] == texts[2:]


@needs_torch
@pytest.mark.parametrize("case", [
    lambda L: L.nn.LSTM(3, 4, proj_size=2, num_layers=2)(
        L.zeros(7, 5, 3), (L.zeros(2, 5, 2), L.zeros(2, 5, 3))),
    lambda L: L.nn.LSTM(3, 4, proj_size=2, num_layers=2)(
        L.zeros(7, 5, 3), (L.zeros(2, 5, 3), L.zeros(2, 5, 4))),
    lambda L: L.nn.LSTM(3, 4)(L.zeros(7, 5, 3), (L.zeros(1, 5, 3), L.zeros(1, 5, 3))),
    lambda L: L.nn.GRU(3, 4)(L.zeros(7, 5, 3), L.zeros(1, 5, 3)),
])
def test_rnn_hidden_size_messages_as_torch(case):
    _same_outcome(lambda L: case(L)[0].shape)


@needs_torch
@pytest.mark.parametrize("make_index", [
    lambda L: L.tensor([0.0]), lambda L: (L.tensor([0.0]), 0), lambda L: (0, L.tensor([0.5])),
    lambda L: [L.tensor([0.0])], lambda L: L.tensor(0.0), lambda L: L.tensor([1j]),
    lambda L: 0.5, lambda L: (slice(None), L.tensor([0], dtype=L.int16)),
    lambda L: (slice(None), L.tensor([1], dtype=L.int32)), lambda L: L.tensor([True, False, True]),
])
def test_index_dtypes_as_torch(make_index):
    def get(L):
        return L.ones(3, 2)[make_index(L)]

    def put(L):
        y = L.ones(3, 2)
        y[make_index(L)] = 0.0
        return y

    _same_outcome(get)
    _same_outcome(put)


@needs_torch
@pytest.mark.parametrize("case", [
    lambda L: L.nn.Module().add_module("a.b", L.nn.ReLU()),
    lambda L: L.nn.Module().register_buffer("a.b", L.ones(1)),
    lambda L: L.nn.Module().register_parameter("a.b", L.nn.Parameter(L.ones(1))),
])
def test_module_name_errors_as_torch(case):
    _same_outcome(case)


# ------------------------------------------------------------ 10. autograd.grad, functional

def _hooked_grads(L, create_graph):
    a = L.tensor([1.0, 2.0], requires_grad=True)
    b = L.tensor([3.0], requires_grad=True)
    calls = []
    a.register_hook(lambda g: calls.append("a") or g * 10)
    b.register_hook(lambda g: calls.append("b"))
    ga, gb = L.autograd.grad((a * a * b).sum(), [a, b], create_graph=create_graph)
    (a * 2).sum().backward()
    return [_np(ga), _np(gb), _np(a.grad), calls]


@needs_torch
@pytest.mark.parametrize("create_graph", [False, True])
def test_leaf_hooks_run_for_autograd_grad_as_torch(create_graph):
    ours, theirs = _hooked_grads(ft, create_graph), _hooked_grads(torch, create_graph)
    for o, t in zip(ours[:3], theirs[:3]):
        np.testing.assert_allclose(o, t)
    assert ours[3] == theirs[3]


@needs_torch
@pytest.mark.parametrize("case", [
    lambda L, AF, x, y: AF.vjp(lambda t: L.ones(2), x, L.ones(2), strict=True),
    lambda L, AF, x, y: AF.vjp(lambda a, b: a * 2, (x, y), L.ones(2), strict=True),
    lambda L, AF, x, y: AF.vjp(lambda a, b: a * b, (x, y), L.ones(2), strict=True)[1][1],
    lambda L, AF, x, y: AF.vjp(lambda a, b: a * 2, (x, y), L.ones(2))[1][1],
    lambda L, AF, x, y: AF.jvp(lambda t: L.ones(2), x, L.ones(2), strict=True),
    lambda L, AF, x, y: AF.jvp(lambda t: t * 2, x, L.ones(2), strict=True)[1],
    lambda L, AF, x, y: AF.jvp(lambda t: t ** 2, x, L.ones(2), strict=True)[1],
    lambda L, AF, x, y: AF.jvp(lambda a, b: a ** 2, (x, y), (L.ones(2), L.ones(1)),
                               strict=True),
])
def test_functional_strict_as_torch(case):
    import torch.autograd.functional as ta

    import funcgrad.torch.autograd.functional as fa

    _same_outcome(lambda L: case(L, fa if L is ft else ta, L.tensor([1.0, 2.0]),
                                 L.tensor([3.0])))


# ------------------------------------------------------------ 11. encoder's nested path

@needs_torch
@pytest.mark.parametrize("setup", ["train", "eval_grad", "eval_nograd", "not_left",
                                   "with_mask", "float_mask", "frozen", "no_nested"])
def test_encoder_padded_outputs_as_torch(setup):
    outs = []
    for L in (ft, torch):
        L.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            enc = L.nn.TransformerEncoder(
                L.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True), 2,
                norm=L.nn.LayerNorm(4), enable_nested_tensor=setup != "no_nested")
        src = L.randn(2, 3, 4)
        kpm = L.tensor([[False, False, True], [False, False, False]])
        kw = {"src_key_padding_mask": kpm}
        if setup == "not_left":
            kw = {"src_key_padding_mask": L.tensor([[True, False, False], [False] * 3])}
        elif setup == "with_mask":
            kw["mask"] = L.zeros(3, 3, dtype=L.bool)
        elif setup == "float_mask":
            kw = {"src_key_padding_mask": kpm.float() * -1e9}
        if setup != "train":
            enc.eval()
        if setup == "frozen":
            enc.requires_grad_(False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if setup in ("eval_nograd", "not_left", "with_mask", "float_mask", "no_nested"):
                with L.no_grad():
                    outs.append(_np(enc(src, **kw)))
            else:
                outs.append(_np(enc(src, **kw)))
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------ 12. creation

@needs_torch
@pytest.mark.parametrize("case", [
    lambda L: L.tensor([L.ones(2), L.ones(2)]),
    lambda L: L.tensor([L.ones(1), L.ones(())]),
    lambda L: L.tensor([[L.tensor(1.0)], [L.tensor(2.0)]]),
    lambda L: L.tensor([L.ones(1, 2)]),
    lambda L: L.tensor([L.tensor(1), L.tensor(2.5)]),
    lambda L: L.randn(2, dtype=L.int64),
    lambda L: L.rand(2, dtype=L.int32),
    lambda L: L.randn(2, dtype=L.bool),
    lambda L: L.empty(2, dtype=L.int64).normal_(),
    lambda L: L.empty(2, dtype=L.uint8).uniform_(),
    lambda L: L.randn(2, dtype=L.complex64).shape,
    lambda L: L.from_numpy(np.array(["a"])),
    lambda L: L.from_numpy(np.array([b"x"])),
    lambda L: L.from_numpy(np.array([1], np.uint16)),
    lambda L: L.set_default_dtype(L.int32),
])
def test_creation_as_torch(case):
    _same_outcome(case)


@needs_torch
@pytest.mark.parametrize("case", [lambda L: L.tensor(L.ones(2)),
                                  lambda L: L.ones(2).new_tensor(L.ones(2))])
def test_copy_construct_warning_as_torch(case):
    texts = []
    for L in (ft, torch):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            case(L)
        texts.append([(str(w.message), w.filename) for w in seen])
    assert texts[0] == texts[1] and len(texts[0]) == 1


# ------------------------------------------------------------ 13. dynamic shapes

@needs_torch
@pytest.mark.parametrize("case", [
    lambda L, x: L.func.vmap(lambda a: a[a > 0])(x),
    lambda L, x: L.func.vmap(lambda a: a.masked_select(a > 0))(x),
    lambda L, x: L.func.vmap(lambda a: a.nonzero())(x),
    lambda L, x: L.func.vmap(lambda a: L.nonzero(a, as_tuple=True))(x),
    lambda L, x: L.func.vmap(lambda a: a.unique())(x),
    lambda L, x: L.func.vmap(lambda a: a.masked_select(L.tensor([True, False, True])))(x),
    lambda L, x: L.func.vmap(lambda a, m: a[m], in_dims=(0, None))(
        x, L.tensor([True, False, True])),
    lambda L, x: L.func.vmap(lambda a: a.masked_fill(a > 0, 0))(x),
    lambda L, x: L.func.grad(lambda a: a[a > 0].sum())(x[0]),
    lambda L, x: L.func.grad(lambda a: a.unique().sum())(x[0]),
])
def test_value_dependent_shapes_under_func_as_torch(case):
    _same_outcome(lambda L: case(L, L.tensor([[1.0, -2.0, 3.0]])))


def _unique_backward(L, which):
    x = L.tensor([1.0, 2.0, 1.0], requires_grad=True)
    out = {"unique": lambda: x.unique(), "dim": lambda: L.unique(x, dim=0),
           "consecutive": lambda: L.unique_consecutive(x),
           "counts": lambda: L.unique(x, return_counts=True)[0]}[which]()
    name = out.grad_fn.name()
    out.sum().backward()
    return name


@needs_torch
@pytest.mark.parametrize("which", ["unique", "dim", "consecutive", "counts"])
def test_unique_is_not_differentiable_as_torch(which):
    _same_outcome(lambda L: _unique_backward(L, which))
    _same_outcome(lambda L: L.tensor([3, 1, 3]).unique())
