"""grad_fn node names (and next_functions) of composite ops, and the old module backward
hook, against PyTorch 2.13."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

rt = pytest.importorskip("torch")

import funcgrad.torch as ft  # noqa: E402


def _graph(g, depth=3):
    """The node names of a grad_fn down ``depth`` levels (with output indices)."""
    if g is None:
        return None
    if depth == 0:
        return type(g).__name__
    return (type(g).__name__, g.name(),
            tuple(None if f is None else (_graph(f, depth - 1), i) for f, i in g.next_functions))


def _both(fn, *arrays, grad=True):
    """``fn`` on PyTorch and on funcgrad, with the same inputs requiring grad."""
    outs = []
    for lib in (rt, ft):
        ts = [lib.tensor(a, requires_grad=grad) if isinstance(a, np.ndarray) and a.dtype.kind == "f"
              else (lib.tensor(a) if isinstance(a, np.ndarray) else a) for a in arrays]
        outs.append((fn(lib, *ts), ts))
    return outs


def _grads(fn, *arrays):
    """The values and input gradients of ``sum(outputs)`` on both libraries."""
    res = []
    for (y, ts) in _both(fn, *arrays):
        ys = y if isinstance(y, (tuple, list)) else (y,)
        total = sum(t.sum() for t in ys)
        total.backward()
        res.append(([t.detach().numpy() for t in ys], [t.grad.numpy() for t in ts
                                                      if t.grad is not None]))
    return res


def _assert_same_graph(fn, *arrays, depth=3):
    (yt, _), (yf, _) = _both(fn, *arrays)
    yts = yt if isinstance(yt, (tuple, list)) else (yt,)
    yfs = yf if isinstance(yf, (tuple, list)) else (yf,)
    assert [_graph(t.grad_fn, depth) for t in yfs] == [_graph(t.grad_fn, depth) for t in yts]
    assert [t.output_nr for t in yfs] == [t.output_nr for t in yts]


def _assert_same_values(fn, *arrays):
    (vt, gt), (vf, gf) = _grads(fn, *arrays)
    assert len(vt) == len(vf) and len(gt) == len(gf)
    for a, b in zip(vt + gt, vf + gf, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-9)


_floats = st.floats(-3, 3, allow_nan=False, width=32)


def _arr(shape):
    return st.lists(_floats, min_size=int(np.prod(shape)), max_size=int(np.prod(shape))).map(
        lambda v: np.asarray(v, np.float64).reshape(shape))


_shapes = st.tuples(st.integers(1, 3), st.integers(2, 4))


@settings(max_examples=15, deadline=None)
@given(_shapes.flatmap(lambda s: st.tuples(_arr(s), st.sampled_from([None, 0, 1]),
                                           st.booleans(), st.sampled_from([0, 1]))))
def test_std_var_mean_one_node(args):
    x, dim, keepdim, correction = args
    n = x.size if dim is None else x.shape[dim]
    if n - correction <= 0:
        correction = 0  # no degrees of freedom: funcgrad's spread has no graph (known gap)
    for name in ("std_mean", "var_mean"):
        def f(lib, t, name=name):
            return getattr(lib, name)(t, dim=dim, keepdim=keepdim, correction=correction)
        _assert_same_graph(f, x)
        if name == "var_mean" or np.ptp(x) > 0:
            _assert_same_values(f, x)


def test_std_mean_errors_and_warning():
    for lib in (rt, ft):
        with pytest.raises(RuntimeError, match="^std_mean only support floating point and "
                                               "complex dtypes$"):
            lib.std_mean(lib.tensor([1, 2]))
        with pytest.warns(UserWarning, match=r"^var_mean\(\): degrees of freedom is <= 0"):
            lib.var_mean(lib.tensor([1.0]))


@settings(max_examples=15, deadline=None)
@given(_shapes.flatmap(lambda s: st.tuples(_arr(s), st.sampled_from([None, 0, 1, -1]),
                                           st.booleans())))
def test_aminmax_one_node(args):
    x, dim, keepdim = args
    x = np.round(x)  # ties: both share the gradient evenly
    if dim is None and keepdim:
        keepdim = False

    def f(lib, t):
        return tuple(lib.aminmax(t, dim=dim, keepdim=keepdim))

    _assert_same_graph(f, x)
    _assert_same_values(f, x)


@settings(max_examples=10, deadline=None)
@given(_shapes.flatmap(lambda s: st.tuples(_arr(s), _arr(s), _arr(s))))
def test_lerp_tensor_weight_and_div_modes(args):
    a, b, w = args
    _assert_same_graph(lambda lib, x, y, z: lib.lerp(x, y, z), a, b, w)
    _assert_same_graph(lambda lib, x, y: lib.lerp(x, y, 0.25), a, b)
    _assert_same_graph(lambda lib, x, y: x.lerp(y, lib.tensor(0.5)), a, b)
    _assert_same_values(lambda lib, x, y, z: lib.lerp(x, y, z), a, b, w)
    b = np.where(np.abs(b) < 0.5, 1.5, b)
    for mode in ("floor", "trunc"):
        _assert_same_graph(lambda lib, x, y, m=mode: lib.div(x, y, rounding_mode=m), a, b)
        _assert_same_graph(lambda lib, x, m=mode: x.div(2.0, rounding_mode=m), a)
        _assert_same_values(lambda lib, x, y, m=mode: lib.div(x, y, rounding_mode=m), a, b)


@settings(max_examples=10, deadline=None)
@given(st.integers(1, 4).flatmap(lambda n: st.tuples(_arr((n,)), _arr((n,)))))
def test_outer_inner_dist_diag(args):
    v, w = args
    _assert_same_graph(lambda lib, x, y: lib.outer(x, y), v, w)
    _assert_same_graph(lambda lib, x, y: x.ger(y), v, w)
    (it, _), (inf, _) = _both(lambda lib, x, y: lib.inner(x, y), v, w)
    assert type(inf.grad_fn).__name__ == type(it.grad_fn).__name__ == "ViewBackward0"
    _assert_same_graph(lambda lib, x: lib.diag(x, 1), v)
    _assert_same_graph(lambda lib, x, y: lib.outer(x, y).diag(), v, w)
    for p in (2, 1, 3, float("inf")):
        _assert_same_graph(lambda lib, x, y, p=p: lib.dist(x, y, p), v, w)
    for f in (lambda lib, x, y: lib.outer(x, y), lambda lib, x, y: lib.inner(x, y),
              lambda lib, x, y: lib.dist(x, y), lambda lib, x, y: lib.dist(x, y, 3),
              lambda lib, x, y: lib.outer(x, y).diag(-1), lambda lib, x, y: lib.diag(x)):
        _assert_same_values(f, v, w)


def test_outer_dist_diag_errors():
    for lib in (rt, ft):
        with pytest.raises(RuntimeError, match="^outer: Expected 1-D argument self, but got "
                                               "2-D$"):
            lib.outer(lib.ones(2, 2), lib.ones(2))
        with pytest.raises(RuntimeError, match=r"^diag\(\): Supports 1D or 2D tensors. Got "
                                               "3D$"):
            lib.diag(lib.ones(1, 2, 2))
        with pytest.raises(RuntimeError, match=r"^norm\(\): input dtype should be either "
                                               "floating point or complex. Got Long instead.$"):
            lib.dist(lib.tensor([1, 2]), lib.tensor([1, 2]))


@settings(max_examples=10, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=3, max_size=6), st.booleans(), st.booleans())
def test_multi_dot_order_and_view(sizes, first_vec, last_vec):
    rs = np.random.RandomState(sum(sizes))
    mats = [rs.randn(sizes[i], sizes[i + 1]) for i in range(len(sizes) - 1)]
    if first_vec:
        mats[0] = mats[0][0]
    if last_vec:
        mats[-1] = mats[-1][:, 0]

    def f(lib, *ts):
        return lib.linalg.multi_dot(list(ts))

    _assert_same_graph(f, *mats, depth=6)
    _assert_same_values(f, *mats)


def test_multi_dot_errors():
    for lib in (rt, ft):
        with pytest.raises(RuntimeError, match=r"^multi_dot\(\): the first tensor must be 1D "
                                               "or 2D but got 3D$"):
            lib.linalg.multi_dot([lib.ones(1, 2, 2), lib.ones(2, 2)])
        with pytest.raises(RuntimeError, match=r"^multi_dot\(\): tensor 1 must be 2D but got "
                                               "3D$"):
            lib.linalg.multi_dot([lib.ones(2, 2), lib.ones(2, 2, 2), lib.ones(2, 2)])
        with pytest.raises(RuntimeError, match=r"^multi_dot\(\): tensors 0 and 1 with shapes "
                                               r"\[2, 3\] and \[2, 3\] cannot be multiplied$"):
            lib.linalg.multi_dot([lib.ones(2, 3), lib.ones(2, 3)])
        with pytest.raises(RuntimeError, match="^multi_dot.*tensor 0 is float and tensor 1 "
                                               "long int$"):
            lib.linalg.multi_dot([lib.ones(2, 2), lib.ones(2, 2, dtype=lib.int64)])


@settings(max_examples=15, deadline=None)
@given(st.sampled_from([((2, 3), (2, 3), 1), ((2, 3), (3,), 1), ((2, 1, 3), (4, 3), 0),
                        ((3,), (3,), 0), ((2, 3), (2, 3), 0)]),
       st.integers(0, 2 ** 16), st.booleans())
def test_cosine_similarity_composition(case, seed, tiny):
    s1, s2, dim = case
    rs = np.random.RandomState(seed)
    x1, x2 = rs.randn(*s1), rs.randn(*s2)
    if tiny:
        x1 = x1 * 1e-10  # norms under eps: PyTorch clamps them, the gradient is the norm's

    def f(lib, a, b):
        return lib.nn.functional.cosine_similarity(a, b, dim)

    _assert_same_graph(f, x1, x2, depth=3)
    (vt, gt), (vf, gf) = _grads(f, x1, x2)
    for a, b in zip(vt + gt, vf + gf, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-12 * max(1.0, np.abs(a).max()))


def test_cosine_similarity_dtypes():
    for lib in (rt, ft):
        F = lib.nn.functional
        with pytest.raises(RuntimeError, match="^expected common dtype to be floating point, "
                                               "yet common dtype is Long$"):
            F.cosine_similarity(lib.ones(2, 3, dtype=lib.int64), lib.ones(2, 3, dtype=lib.int64))
        assert str(F.cosine_similarity(lib.ones(2, 3), lib.ones(2, 3, dtype=lib.float64)).dtype
                   ) == "torch.float64"


@settings(max_examples=15, deadline=None)
@given(st.sampled_from([(3,), (2, 3), ()]), st.sampled_from([None, 0, -1]),
       st.integers(0, 3), st.booleans(), st.integers(0, 2 ** 16))
def test_repeat_interleave_composition(shape, dim, reps, as_tensor, seed):
    if shape == () and dim is not None:
        dim = None
    rs = np.random.RandomState(seed)
    x = np.asarray(rs.randn(*shape))
    n = int(np.prod(shape)) if dim is None else shape[dim]
    if as_tensor:
        counts = rs.randint(0, 3, n).astype(np.int64)

        def f(lib, t):
            return lib.repeat_interleave(t, lib.tensor(counts), dim=dim)
    else:
        def f(lib, t):
            return t.repeat_interleave(reps, dim=dim)

    _assert_same_graph(f, x, depth=5)
    _assert_same_values(f, x)


def test_repeat_interleave_errors():
    for lib in (rt, ft):
        v = lib.ones(3)
        with pytest.raises(RuntimeError, match="^Repeats must be non-negative$"):
            lib.repeat_interleave(v, -1)
        with pytest.raises(RuntimeError, match=r"^repeats must have the same size as input "
                                               r"along dim, but got repeats.size\(0\) = 2 and "
                                               r"input.size\(0\) = 3$"):
            lib.repeat_interleave(v, lib.tensor([1, 2]))
        with pytest.raises(RuntimeError, match="^repeats can not be negative$"):
            lib.repeat_interleave(v, lib.tensor([1, -1, 1]))


@settings(max_examples=10, deadline=None)
@given(st.integers(1, 4), st.integers(0, 5), st.booleans(), st.integers(0, 2 ** 16))
def test_combinations_composition(n, r, with_replacement, seed):
    x = np.random.RandomState(seed).randn(n)

    def f(lib, t):
        return lib.combinations(t, r, with_replacement)

    (yt, _), (yf, _) = _both(f, x)
    assert tuple(yf.shape) == tuple(yt.shape)
    assert _graph(yf.grad_fn, 4) == _graph(yt.grad_fn, 4)
    if yt.numel():
        _assert_same_values(f, x)


def test_flatten_of_one_dim_is_the_tensor():
    for lib in (rt, ft):
        v = lib.ones(3, requires_grad=True)
        assert v.flatten() is v
        m = lib.ones(2, 3)
        assert m.flatten(1, -1) is m
        with pytest.raises(RuntimeError, match="start_dim cannot come after end_dim"):
            m.flatten(1, 0)
        with pytest.raises(IndexError, match="Dimension out of range"):
            v.flatten(0, -2)


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_rnn_output_nodes(mode, batch_first):
    x = np.random.RandomState(0).randn(2, 5, 3)
    res = []
    for lib in (rt, ft):
        lib.manual_seed(0)
        m = getattr(lib.nn, mode)(3, 4, batch_first=batch_first)
        out, h = m(lib.tensor(x, dtype=lib.float32, requires_grad=True))
        hs = h if isinstance(h, tuple) else (h,)
        res.append([type(out.grad_fn).__name__] + [_graph(t.grad_fn, 1) for t in hs]
                   + [t.output_nr for t in (out, *hs)])
        if mode == "LSTM" and not batch_first:
            res[-1].append(_graph(out.grad_fn, 2))
    if mode != "LSTM":
        res = [[r[0]] for r in res]  # PyTorch's CPU GRU/RNN record each step's ops
    assert res[1] == res[0]


def _hook_run(lib, make, inputs, replace=False):
    lib.manual_seed(0)
    m = make(lib)
    with lib.no_grad():
        for p in m.parameters():
            p.copy_(lib.linspace(-1, 1, p.numel()).reshape(p.shape))
    seen = []

    def hook(mod, gi, go):
        seen.append((type(mod).__name__, len(gi), [None if g is None else tuple(g.shape)
                                                   for g in go]))

    m.register_backward_hook(hook)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        y = m(*[lib.tensor(a, dtype=lib.float32, requires_grad=True) * 1 for a in inputs])
    t = y if isinstance(y, lib.Tensor) else y[0]
    t.sum().backward()
    return [(x.category.__name__, str(x.message)) for x in w], seen


@pytest.mark.parametrize("make", [
    lambda lib: lib.nn.Linear(3, 2),
    lambda lib: lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.Tanh()),
    lambda lib: lib.nn.Conv1d(4, 2, 2),
    lambda lib: lib.nn.ReLU(),
    lambda lib: lib.nn.Tanh(),
])
def test_register_backward_hook_warnings_and_grad_output(make):
    x = np.linspace(-1, 1, 12).reshape(3, 4)[:, :3] if make(rt).__class__.__name__ in (
        "Linear", "Sequential") else np.linspace(-1, 1, 12).reshape(1, 4, 3)
    wt, st_ = _hook_run(rt, make, [x])
    wf, sf = _hook_run(ft, make, [x])
    assert wf == wt
    assert [(n, go) for n, _, go in sf] == [(n, go) for n, _, go in st_]


def test_register_backward_hook_tuple_output_warning():
    class Two:
        @staticmethod
        def make(lib):
            class M(lib.nn.Module):
                def forward(self, x):
                    return x * 2, x + 1
            return M()

    wt, st_ = _hook_run(rt, Two.make, [np.ones(2)])
    wf, sf = _hook_run(ft, Two.make, [np.ones(2)])
    assert wf == wt and sf == st_
    assert "generated by different autograd Nodes" in wt[0][1]


def test_backward_hook_kinds_do_not_mix():
    for lib in (rt, ft):
        m = lib.nn.Linear(2, 2)
        m.register_full_backward_hook(lambda *a: None)
        with pytest.raises(RuntimeError, match="^Cannot use both regular backward hooks and "
                                               "full backward hooks on a single Module"):
            m.register_backward_hook(lambda *a: None)
        m = lib.nn.Linear(2, 2)
        assert m._is_full_backward_hook is None
        m.register_backward_hook(lambda *a: None)
        with pytest.raises(RuntimeError, match="^Cannot use both"):
            m.register_full_backward_hook(lambda *a: None)
        assert m._is_full_backward_hook is False
