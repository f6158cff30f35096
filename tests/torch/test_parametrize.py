"""torch.nn.utils.parametrize, torch.nn.utils.parametrizations and the hook-based
weight_norm / spectral_norm against PyTorch 2.13, side by side: the same module with the
same weights in both libraries, the same parametrizations, then forward values, gradients
of the originals, state dicts, reprs, optimizer steps, removal, the power method's
buffers, and the error messages of bad use."""

from __future__ import annotations

import copy
import pickle
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft

torch = pytest.importorskip("torch", exc_type=ImportError)

LIBS = {"ft": ft, "torch": torch}


def npy(t: Any) -> np.ndarray:
    return np.asarray(t.detach().numpy())


def close(a: Any, b: Any, rtol: float = 1e-10, atol: float = 1e-12) -> None:
    a = npy(a) if hasattr(a, "detach") else np.asarray(a)
    b = npy(b) if hasattr(b, "detach") else np.asarray(b)
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def make_parametrizations(lib: Any) -> dict[str, type]:
    """The same user-written parametrizations, subclassing each library's Module."""
    nn = lib.nn

    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).mT

    class Scale(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.c = c

        def forward(self, X):
            return self.c * X

        def right_inverse(self, A):
            return A / self.c

    class Split(nn.Module):
        # right_inverse returns a tuple: the tensor lives in original0 and original1
        def forward(self, A, B):
            return A + 2 * B

        def right_inverse(self, X):
            return X / 3, X / 3

    class Exp(nn.Module):
        def forward(self, X):
            return X.exp()

    class Flatten(nn.Module):
        def forward(self, X):
            return X.reshape(-1)

    class BadInverse(nn.Module):
        def forward(self, X):
            return X

        def right_inverse(self, X):
            return X.reshape(-1)

    class NotTensor(nn.Module):
        def forward(self, X):
            return X

        def right_inverse(self, X):
            return 3

    class ToDouble(nn.Module):
        def forward(self, X):
            return X.double()

    class WithBuffer(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)
            self.register_buffer("scale", lib.ones(3))

        def forward(self, x):
            return self.lin(x) * self.scale

    return dict(Symmetric=Symmetric, Scale=Scale, Split=Split, Exp=Exp, Flatten=Flatten,
                BadInverse=BadInverse, NotTensor=NotTensor, ToDouble=ToDouble,
                WithBuffer=WithBuffer)


P = {name: make_parametrizations(lib) for name, lib in LIBS.items()}


def sync(fm: Any, tm: Any) -> None:
    """Copy every parameter and persistent buffer of ``tm`` into ``fm``."""
    fm.load_state_dict({k: ft.tensor(npy(v)) for k, v in tm.state_dict().items()})


def pair(build: Any, seed: int = 0) -> tuple[Any, Any]:
    """``build(lib)`` in both libraries, in float64, with torch's weights in both."""
    torch.manual_seed(seed)
    tm = build(torch).double()
    fm = build(ft).double()
    sync(fm, tm)
    return fm, tm


def same_state(fm: Any, tm: Any, rtol: float = 1e-10, atol: float = 1e-12) -> None:
    fs, ts = fm.state_dict(), tm.state_dict()
    assert list(fs) == list(ts)
    for k in ts:
        close(fs[k], ts[k], rtol, atol)


def same_grads(fm: Any, tm: Any, rtol: float = 1e-9, atol: float = 1e-11) -> None:
    fp, tp = list(fm.named_parameters()), list(tm.named_parameters())
    assert [n for n, _ in fp] == [n for n, _ in tp]
    for (name, a), (_, b) in zip(fp, tp):
        assert (a.grad is None) == (b.grad is None), name
        if b.grad is not None:
            close(a.grad, b.grad, rtol, atol)


def run_both(fm: Any, tm: Any, x: np.ndarray, rtol: float = 1e-10,
             atol: float = 1e-12) -> None:
    """Forward, compare, backward of a weighted sum, compare the gradients."""
    yf, yt = fm(ft.tensor(x)), tm(torch.tensor(x))
    close(yf, yt, rtol, atol)
    w = np.linspace(-1.0, 1.5, yt.numel()).reshape(tuple(yt.shape))
    (yf * ft.tensor(w)).sum().backward()
    (yt * torch.tensor(w)).sum().backward()
    same_grads(fm, tm)


def errors_match(call: Any, exc: type = Exception) -> str:
    """Run ``call(lib)`` for both libraries: the same exception type and message."""
    messages = []
    for lib in (ft, torch):
        with pytest.raises(exc) as info:
            call(lib)
        messages.append((type(info.value).__name__, str(info.value)))
    assert messages[0] == messages[1]
    return messages[0][1]


def rnd(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


# ---------------------------------------------------------------- parametrize


@settings(max_examples=8, deadline=None)
@given(n=st.integers(1, 4), batch=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_register_forward_grad_state_dict_repr(n: int, batch: int, seed: int) -> None:
    def build(lib):
        lin = lib.nn.Linear(n, n)
        return lin

    fm, tm = pair(build, seed)
    for m, lib in ((fm, "ft"), (tm, "torch")):
        out = LIBS[lib].nn.utils.parametrize.register_parametrization(
            m, "weight", P[lib]["Symmetric"]())
        assert out is m
    close(fm.weight, tm.weight)
    assert type(fm).__name__ == type(tm).__name__ == "ParametrizedLinear"
    assert repr(fm) == repr(tm)
    same_state(fm, tm)
    assert [n for n, _ in fm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert ft.nn.utils.parametrize.is_parametrized(fm)
    assert ft.nn.utils.parametrize.is_parametrized(fm, "weight")
    assert not ft.nn.utils.parametrize.is_parametrized(fm, "bias")
    assert ft.nn.utils.parametrize.type_before_parametrizations(fm) is ft.nn.Linear
    assert isinstance(fm, ft.nn.Linear)
    assert isinstance(fm.parametrizations.weight, ft.nn.utils.parametrize.ParametrizationList)
    run_both(fm, tm, rnd((batch, n), seed))


def test_class_swap_is_per_instance_and_reverts() -> None:
    plain = ft.nn.Linear(2, 2)
    lin = ft.nn.utils.parametrize.register_parametrization(
        ft.nn.Linear(2, 2), "weight", P["ft"]["Symmetric"]())
    assert type(plain) is ft.nn.Linear
    assert "weight" in plain._parameters and not hasattr(type(plain), "weight")
    ft.nn.utils.parametrize.remove_parametrizations(lin, "weight")
    assert type(lin) is ft.nn.Linear
    assert not hasattr(lin, "parametrizations")
    assert not ft.nn.utils.parametrize.is_parametrized(lin)


@settings(max_examples=6, deadline=None)
@given(n=st.integers(2, 4), c=st.sampled_from([0.5, 2.0, -3.0]), seed=st.integers(0, 999))
def test_right_inverse_stacking_and_assignment(n: int, c: float, seed: int) -> None:
    fm, tm = pair(lambda lib: lib.nn.Linear(n, n), seed)
    for m, lib in ((fm, "ft"), (tm, "torch")):
        reg = LIBS[lib].nn.utils.parametrize.register_parametrization
        reg(m, "weight", P[lib]["Scale"](c))
        reg(m, "weight", P[lib]["Symmetric"]())
        reg(m, "weight", P[lib]["Scale"](0.25))
    assert repr(fm) == repr(tm)
    same_state(fm, tm)
    close(fm.weight, tm.weight)
    # assignment runs the right_inverses, last first (Symmetric has none: an error)
    msg = errors_match(lambda lib: setattr(fm if lib is ft else tm, "weight",
                                           lib.tensor(rnd((n, n), seed + 1))),
                       RuntimeError)
    assert msg == "parametrization Symmetric does not implement right_inverse."
    run_both(fm, tm, rnd((2, n), seed))


def test_assignment_through_right_inverse() -> None:
    fm, tm = pair(lambda lib: lib.nn.Linear(3, 3))
    for m, lib in ((fm, "ft"), (tm, "torch")):
        LIBS[lib].nn.utils.parametrize.register_parametrization(m, "weight",
                                                                P[lib]["Scale"](4.0))
    x = rnd((3, 3), 5)
    original_f = fm.parametrizations.weight.original
    fm.weight = ft.tensor(x)
    tm.weight = torch.tensor(x)
    assert fm.parametrizations.weight.original is original_f  # the same Parameter object
    same_state(fm, tm)
    close(fm.weight, x)
    run_both(fm, tm, rnd((2, 3), 6))


@settings(max_examples=5, deadline=None)
@given(n=st.integers(1, 4), seed=st.integers(0, 999))
def test_tuple_right_inverse(n: int, seed: int) -> None:
    fm, tm = pair(lambda lib: lib.nn.Linear(n, n + 1), seed)
    for m, lib in ((fm, "ft"), (tm, "torch")):
        LIBS[lib].nn.utils.parametrize.register_parametrization(m, "weight",
                                                                P[lib]["Split"]())
    same_state(fm, tm)
    assert list(fm.state_dict()) == ["bias", "parametrizations.weight.original0",
                                     "parametrizations.weight.original1"]
    assert not hasattr(fm.parametrizations.weight, "original")
    assert isinstance(fm.parametrizations.weight.original1, ft.nn.Parameter)
    run_both(fm, tm, rnd((2, n), seed))
    x = rnd((n + 1, n), seed + 1)
    fm.weight = ft.tensor(x)
    tm.weight = torch.tensor(x)
    same_state(fm, tm)
    errors_match(lambda lib: LIBS["ft" if lib is ft else "torch"].nn.utils.parametrize
                 .remove_parametrizations(fm if lib is ft else tm, "weight",
                                          leave_parametrized=False), ValueError)
    for m, lib in ((fm, ft), (tm, torch)):
        lib.nn.utils.parametrize.remove_parametrizations(m, "weight")
    assert isinstance(fm.weight, ft.nn.Parameter)
    same_state(fm, tm)
    assert repr(fm) == repr(tm)


def test_parametrized_buffer() -> None:
    fm, tm = pair(lambda lib: P["ft" if lib is ft else "torch"]["WithBuffer"]())
    for m, lib in ((fm, "ft"), (tm, "torch")):
        LIBS[lib].nn.utils.parametrize.register_parametrization(m, "scale", P[lib]["Exp"]())
    assert list(fm.state_dict()) == list(tm.state_dict())
    assert "parametrizations.scale.original" in dict(fm.named_buffers())
    assert repr(fm) == repr(tm)
    run_both(fm, tm, rnd((2, 3), 1))
    for m, lib in ((fm, ft), (tm, torch)):
        lib.nn.utils.parametrize.remove_parametrizations(m, "scale", leave_parametrized=False)
    same_state(fm, tm)
    assert type(fm).__name__ == "WithBuffer"


@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations_both_ways(leave: bool) -> None:
    fm, tm = pair(lambda lib: lib.nn.Linear(3, 3), 3)
    for m, lib in ((fm, "ft"), (tm, "torch")):
        reg = LIBS[lib].nn.utils.parametrize.register_parametrization
        reg(m, "weight", P[lib]["Symmetric"]())
        reg(m, "bias", P[lib]["Scale"](2.0))
    assert repr(fm) == repr(tm)
    before = fm.parametrizations.weight.original
    for m, lib in ((fm, ft), (tm, torch)):
        lib.nn.utils.parametrize.remove_parametrizations(m, "weight", leave_parametrized=leave)
    # the original Parameter object stays the module's weight
    assert fm.weight is before
    assert type(fm).__name__ == type(tm).__name__ == "ParametrizedLinear"
    assert repr(fm) == repr(tm)
    same_state(fm, tm)
    for m, lib in ((fm, ft), (tm, torch)):
        lib.nn.utils.parametrize.remove_parametrizations(m, "bias", leave_parametrized=leave)
    assert type(fm) is ft.nn.Linear
    assert repr(fm) == repr(tm)
    same_state(fm, tm)
    run_both(fm, tm, rnd((2, 3), 4))


def test_optimizer_steps_match() -> None:
    fm, tm = pair(lambda lib: lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.Tanh(),
                                                lib.nn.Linear(3, 2)), 7)
    for m, lib in ((fm, "ft"), (tm, "torch")):
        reg = LIBS[lib].nn.utils.parametrize.register_parametrization
        reg(m[0], "weight", P[lib]["Symmetric"]())
        reg(m[2], "weight", P[lib]["Scale"](0.5))
    assert repr(fm) == repr(tm)
    of = ft.optim.SGD(fm.parameters(), lr=0.1, momentum=0.9)
    ot = torch.optim.SGD(tm.parameters(), lr=0.1, momentum=0.9)
    for step in range(3):
        x = rnd((4, 3), step)
        for m, o, lib in ((fm, of, ft), (tm, ot, torch)):
            o.zero_grad()
            (m(lib.tensor(x)) ** 2).mean().backward()
            o.step()
        same_state(fm, tm, 1e-9, 1e-11)
    close(fm[0].weight, tm[0].weight, 1e-9, 1e-11)


def test_cached() -> None:
    parametrize = ft.nn.utils.parametrize
    lin = parametrize.register_parametrization(ft.nn.Linear(3, 3), "weight",
                                               P["ft"]["Symmetric"]())
    assert lin.weight is not lin.weight
    with parametrize.cached():
        w = lin.weight
        assert lin.weight is w
        with parametrize.cached():
            assert lin.weight is w
        assert lin.weight is w
    assert lin.weight is not w
    # gradients flow through a cached value to the original
    with parametrize.cached():
        (lin.weight.sum() + lin.weight.sum()).backward()
    close(lin.parametrizations.weight.original.grad,
          2 * (np.triu(np.ones((3, 3))) + np.triu(np.ones((3, 3)), 1)))


def test_load_state_dict_and_deepcopy() -> None:
    fm, tm = pair(lambda lib: lib.nn.Linear(3, 2), 2)
    for m, lib in ((fm, "ft"), (tm, "torch")):
        LIBS[lib].nn.utils.parametrize.register_parametrization(m, "weight",
                                                                P[lib]["Scale"](3.0))
    with torch.no_grad():
        tm.parametrizations.weight.original.mul_(-2.0)
    sync(fm, tm)
    same_state(fm, tm)
    close(fm.weight, tm.weight)
    clone = copy.deepcopy(fm)
    assert type(clone) is not ft.nn.Linear and type(clone).__name__ == "ParametrizedLinear"
    close(clone.weight, fm.weight)
    assert clone.parametrizations.weight.original is not fm.parametrizations.weight.original
    for m in (fm, tm):
        with pytest.raises(RuntimeError, match="Serialization of parametrized modules"):
            pickle.dumps(m)


def test_transfer_parametrizations_and_params() -> None:
    fm, tm = pair(lambda lib: lib.nn.Linear(3, 3), 9)
    for m, lib in ((fm, "ft"), (tm, "torch")):
        reg = LIBS[lib].nn.utils.parametrize.register_parametrization
        reg(m, "weight", P[lib]["Scale"](2.0))
        reg(m, "weight", P[lib]["Symmetric"]())
    fd, td = pair(lambda lib: lib.nn.Linear(3, 3), 10)
    for src, dst, lib in ((fm, fd, ft), (tm, td, torch)):
        out = lib.nn.utils.parametrize.transfer_parametrizations_and_params(src, dst)
        assert out is dst
    assert fd.parametrizations.weight.original is fm.parametrizations.weight.original
    assert repr(fd) == repr(td)
    same_state(fd, td)
    close(fd.weight, td.weight)


def test_transfer_tuple_originals_to_module_without_the_tensor() -> None:
    class Bare:
        @staticmethod
        def build(lib):
            m = lib.nn.Module()
            m.weight = lib.nn.Parameter(lib.ones(2, 2, dtype=lib.float64))
            return m

    fm, tm = pair(Bare.build)
    for m, lib in ((fm, "ft"), (tm, "torch")):
        LIBS[lib].nn.utils.parametrize.register_parametrization(m, "weight",
                                                                P[lib]["Split"]())
    fd, td = ft.nn.Module(), torch.nn.Module()
    ft.nn.utils.parametrize.transfer_parametrizations_and_params(fm, fd, "weight")
    torch.nn.utils.parametrize.transfer_parametrizations_and_params(tm, td, "weight")
    assert fd.parametrizations.weight.original1 is fm.parametrizations.weight.original1
    same_state(fd, td)
    assert repr(fd) == repr(td)


# ------------------------------------------------------------------- errors


def test_error_messages() -> None:
    def lin(lib):
        torch.manual_seed(0)
        return lib.nn.Linear(2, 2)

    def reg(lib, m, name, p, **kw):
        return lib.nn.utils.parametrize.register_parametrization(m, name, p, **kw)

    def key(lib):
        return "ft" if lib is ft else "torch"

    msg = errors_match(lambda lib: reg(lib, lin(lib), "nope", P[key(lib)]["Symmetric"]()),
                       ValueError)
    assert msg.startswith("Module 'Linear(in_features=2, out_features=2, bias=True)' does not")
    errors_match(lambda lib: reg(lib, lin(lib), "weight", P[key(lib)]["Flatten"]()),
                 ValueError)
    errors_match(lambda lib: reg(lib, lin(lib), "weight", P[key(lib)]["ToDouble"]()),
                 ValueError)
    errors_match(lambda lib: reg(lib, lin(lib), "weight", P[key(lib)]["NotTensor"]()),
                 ValueError)
    # one tensor from right_inverse: its shape changes, so the parametrized tensor's does
    errors_match(lambda lib: reg(lib, lin(lib), "weight", P[key(lib)]["BadInverse"]()),
                 ValueError)

    def stacked_bad_inverse(lib):
        m = reg(lib, lin(lib), "weight", P[key(lib)]["Symmetric"]())
        reg(lib, m, "weight", P[key(lib)]["BadInverse"]())

    msg = errors_match(stacked_bad_inverse, ValueError)
    assert "right_inverse must have the same shape" in msg

    def stacked_flatten(lib):
        m = reg(lib, lin(lib), "weight", P[key(lib)]["Symmetric"]())
        reg(lib, m, "weight", P[key(lib)]["Flatten"]())

    errors_match(stacked_flatten, ValueError)
    errors_match(lambda lib: lib.nn.utils.parametrize.remove_parametrizations(lin(lib),
                                                                              "weight"),
                 ValueError)
    errors_match(lambda lib: lib.nn.utils.parametrize.ParametrizationList(
        [], lib.ones(2)), ValueError)

    def reassign_parameter(lib):
        m = reg(lib, lin(lib), "weight", P[key(lib)]["Symmetric"]())
        m.weight = lib.nn.Parameter(lib.ones(2, 2))

    errors_match(reassign_parameter, KeyError)

    def assign_bad_dtype(lib):
        m = reg(lib, lin(lib), "weight", P[key(lib)]["Scale"](2.0))
        m.weight = lib.ones(2, 2, dtype=lib.float64)

    errors_match(assign_bad_dtype, ValueError)

    # unsafe skips the shape check
    for lib in (ft, torch):
        m = reg(lib, lin(lib), "weight", P[key(lib)]["Flatten"](), unsafe=True)
        assert tuple(m.weight.shape) == (4,)
        assert m.parametrizations.weight.unsafe


# ------------------------------------------------------------ parametrizations


@settings(max_examples=8, deadline=None)
@given(shape=st.sampled_from([(3, 2), (2, 4), (1, 3), (2, 2, 3)]),
       dim=st.sampled_from([0, 1, None, -1]), seed=st.integers(0, 999))
def test_weight_norm_parametrization(shape: tuple[int, ...], dim: Any, seed: int) -> None:
    class Holder:
        @staticmethod
        def build(lib):
            m = lib.nn.Module()
            m.weight = lib.nn.Parameter(lib.tensor(rnd(shape, seed)))
            return m

    fm, tm = pair(Holder.build, seed)
    for m, lib in ((fm, ft), (tm, torch)):
        lib.nn.utils.parametrizations.weight_norm(m, dim=dim)
    same_state(fm, tm)
    assert repr(fm) == repr(tm)
    close(fm.weight, tm.weight)
    w = rnd(shape, seed + 1)
    (fm.weight * ft.tensor(w)).sum().backward()
    (tm.weight * torch.tensor(w)).sum().backward()
    same_grads(fm, tm)


def test_weight_norm_parametrization_conv_and_optimizer() -> None:
    fm, tm = pair(lambda lib: lib.nn.Conv2d(2, 3, 2), 4)
    for m, lib in ((fm, ft), (tm, torch)):
        lib.nn.utils.parametrizations.weight_norm(m)
    of = ft.optim.Adam(fm.parameters(), lr=0.05)
    ot = torch.optim.Adam(tm.parameters(), lr=0.05)
    x = rnd((2, 2, 4, 4), 1)
    for m, o, lib in ((fm, of, ft), (tm, ot, torch)):
        o.zero_grad()
        m(lib.tensor(x)).square().sum().backward()
    same_grads(fm, tm)
    of.step()
    ot.step()
    same_state(fm, tm, 1e-9, 1e-11)
    for m, lib in ((fm, ft), (tm, torch)):
        lib.nn.utils.parametrize.remove_parametrizations(m, "weight")
    same_state(fm, tm, 1e-9, 1e-11)
    assert repr(fm) == repr(tm)


@settings(max_examples=8, deadline=None)
@given(shape=st.sampled_from([(3, 3), (2, 4), (4, 2), (3, 2, 2), (5,)]),
       n_iter=st.integers(1, 3), dim=st.sampled_from([0, 1]), seed=st.integers(0, 999))
def test_spectral_norm_parametrization(shape: tuple[int, ...], n_iter: int, dim: int,
                                       seed: int) -> None:
    class Holder:
        @staticmethod
        def build(lib):
            m = lib.nn.Module()
            m.weight = lib.nn.Parameter(lib.tensor(rnd(shape, seed)))
            return m

    if dim >= len(shape):
        dim = 0
    fm, tm = pair(Holder.build, seed)
    for m, lib in ((fm, ft), (tm, torch)):
        lib.nn.utils.parametrizations.spectral_norm(m, n_power_iterations=n_iter, dim=dim)
    assert list(fm.state_dict()) == list(tm.state_dict())
    assert repr(fm) == repr(tm)
    # u and v are random at registration: start funcgrad from torch's
    sync(fm, tm)
    same_state(fm, tm)
    for step in range(3):
        close(fm.weight, tm.weight, 1e-9, 1e-11)
        same_state(fm, tm, 1e-9, 1e-11)
        w = rnd(shape, step)
        (fm.weight * ft.tensor(w)).sum().backward()
        (tm.weight * torch.tensor(w)).sum().backward()
        same_grads(fm, tm, 1e-8, 1e-10)
    # evaluation mode leaves u and v alone
    fm.eval()
    tm.eval()
    before = {k: npy(v) for k, v in fm.state_dict().items()}
    close(fm.weight, tm.weight, 1e-9, 1e-11)
    for k, v in fm.state_dict().items():
        close(v, before[k], 0, 0)


def test_spectral_norm_parametrization_in_place_buffers_and_conv_transpose() -> None:
    fm, tm = pair(lambda lib: lib.nn.ConvTranspose2d(3, 2, 2), 5)
    for m, lib in ((fm, ft), (tm, torch)):
        lib.nn.utils.parametrizations.spectral_norm(m)
    sync(fm, tm)
    sn = fm.parametrizations.weight[0]
    assert sn.dim == tm.parametrizations.weight[0].dim == 1
    u_obj = sn._u
    x = rnd((1, 3, 3, 3), 2)
    for _ in range(3):
        run_both(fm, tm, x, 1e-9, 1e-11)
        same_state(fm, tm, 1e-9, 1e-11)
    assert sn._u is u_obj  # updated in place, as PyTorch's out=
    assert repr(fm) == repr(tm)


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 3, 3), (2, 2, 3)])
@pytest.mark.parametrize("orth_map", [None, "matrix_exp", "cayley", "householder"])
def test_orthogonal(shape: tuple[int, ...], orth_map: str | None) -> None:
    class Holder:
        @staticmethod
        def build(lib):
            m = lib.nn.Module()
            m.weight = lib.nn.Parameter(lib.tensor(rnd(shape, 11)))
            return m

    fm, tm = pair(Holder.build)
    for m, lib in ((fm, ft), (tm, torch)):
        lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map=orth_map)
    assert list(fm.state_dict()) == list(tm.state_dict())
    assert repr(fm) == repr(tm)
    if shape[-1] == shape[-2]:
        # the base is the orthogonalised weight: deterministic
        same_state(fm, tm, 1e-9, 1e-11)
    sync(fm, tm)  # a rectangular base is completed with random columns
    close(fm.weight, tm.weight, 1e-9, 1e-11)
    q = fm.weight.detach()
    small = q.mT @ q if shape[-2] >= shape[-1] else q @ q.mT
    close(small, np.broadcast_to(np.eye(min(shape[-2:])), small.shape), 1e-9, 1e-9)
    # a step away from the identity exercises the map's derivative away from zero
    with ft.no_grad():
        fm.parametrizations.weight.original.add_(ft.tensor(rnd(shape, 12) * 0.1))
    with torch.no_grad():
        tm.parametrizations.weight.original.add_(torch.tensor(rnd(shape, 12) * 0.1))
    close(fm.weight, tm.weight, 1e-9, 1e-11)
    w = rnd(shape, 13)
    (fm.weight * ft.tensor(w)).sum().backward()
    (tm.weight * torch.tensor(w)).sum().backward()
    same_grads(fm, tm, 1e-8, 1e-10)
    # assigning an orthogonal matrix goes through right_inverse: the weight becomes it
    target = torch.linalg.qr(torch.tensor(rnd(shape[:-2] + (max(shape[-2:]),) * 2, 14)))[0]
    target = target[..., : shape[-2], : shape[-1]]
    fm.weight = ft.tensor(npy(target))
    tm.weight = target
    close(fm.weight, target, 1e-9, 1e-9)
    for m, lib in ((fm, ft), (tm, torch)):
        lib.nn.utils.parametrize.remove_parametrizations(m, "weight")
    assert repr(fm) == repr(tm)


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4)])
def test_orthogonal_householder_without_trivialization(shape: tuple[int, ...]) -> None:
    fm, tm = pair(lambda lib: lib.nn.Linear(shape[1], shape[0]), 8)
    for m, lib in ((fm, ft), (tm, torch)):
        lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map="householder",
                                                  use_trivialization=False)
    same_state(fm, tm, 1e-9, 1e-11)
    assert "parametrizations.weight.0.base" not in fm.state_dict()
    run_both(fm, tm, rnd((2, shape[1]), 3), 1e-9, 1e-11)
    errors_match(lambda lib: lib.nn.utils.parametrizations.orthogonal(
        lib.nn.Linear(3, 3), orthogonal_map="cayley", use_trivialization=False).__setattr__(
        "weight", lib.eye(3)), NotImplementedError)


def test_orthogonal_linear_training_stays_orthogonal() -> None:
    fm, tm = pair(lambda lib: lib.nn.Linear(4, 4), 6)
    for m, lib in ((fm, ft), (tm, torch)):
        lib.nn.utils.parametrizations.orthogonal(m)
    of = ft.optim.SGD(fm.parameters(), lr=0.2)
    ot = torch.optim.SGD(tm.parameters(), lr=0.2)
    for step in range(3):
        x = rnd((3, 4), step)
        for m, o, lib in ((fm, of, ft), (tm, ot, torch)):
            o.zero_grad()
            m(lib.tensor(x)).sum().backward()
            o.step()
    same_state(fm, tm, 1e-8, 1e-10)
    q = npy(fm.weight)
    close(q.T @ q, np.eye(4), 1e-9, 1e-9)


def test_parametrizations_errors() -> None:
    def lin(lib):
        torch.manual_seed(0)
        return lib.nn.Linear(2, 2)

    pz = lambda lib: lib.nn.utils.parametrizations  # noqa: E731
    errors_match(lambda lib: pz(lib).orthogonal(lin(lib), "nope"), ValueError)
    errors_match(lambda lib: pz(lib).orthogonal(lin(lib), "bias"), ValueError)
    errors_match(lambda lib: pz(lib).orthogonal(lin(lib), orthogonal_map="qr"), ValueError)
    errors_match(lambda lib: pz(lib).orthogonal(
        lin(lib), orthogonal_map="householder").__setattr__("weight", lib.eye(3)),
        ValueError)
    errors_match(lambda lib: pz(lib).spectral_norm(lin(lib), "nope"), ValueError)
    errors_match(lambda lib: pz(lib).spectral_norm(lin(lib), n_power_iterations=0),
                 ValueError)
    errors_match(lambda lib: pz(lib).spectral_norm(lin(lib), dim=2), IndexError)
    errors_match(lambda lib: pz(lib).weight_norm(lin(lib), "nope"), ValueError)


# ------------------------------------------------------- hook-based versions


@pytest.mark.parametrize("dim", [0, 1, None])
def test_old_weight_norm(dim: Any) -> None:
    fm, tm = pair(lambda lib: lib.nn.Linear(3, 2), 12)
    caught = {}
    for m, lib in ((fm, ft), (tm, torch)):
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            assert lib.nn.utils.weight_norm(m, dim=dim) is m
        caught[lib.__name__] = [(w.category, str(w.message)) for w in record
                                if issubclass(w.category, FutureWarning)]
    assert caught["funcgrad.torch"] == caught["torch"] != []
    assert caught["torch"][0][1] == ("`torch.nn.utils.weight_norm` is deprecated in favor of "
                                     "`torch.nn.utils.parametrizations.weight_norm`.")
    same_state(fm, tm)
    assert list(fm.state_dict()) == ["bias", "weight_g", "weight_v"]
    assert repr(fm) == repr(tm)
    close(fm.weight, tm.weight)
    run_both(fm, tm, rnd((4, 3), 1))
    of = ft.optim.SGD(fm.parameters(), lr=0.3)
    ot = torch.optim.SGD(tm.parameters(), lr=0.3)
    of.step()
    ot.step()
    # fresh gradients: accumulating into a 0-d .grad (dim=None) hits an engine bug
    of.zero_grad()
    ot.zero_grad()
    run_both(fm, tm, rnd((4, 3), 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        msg = errors_match(lambda lib: lib.nn.utils.weight_norm(fm if lib is ft else tm),
                           RuntimeError)
    assert msg == "Cannot register two weight_norm hooks on the same parameter weight"
    for m, lib in ((fm, ft), (tm, torch)):
        assert lib.nn.utils.remove_weight_norm(m) is m
    same_state(fm, tm, 1e-9, 1e-11)
    assert isinstance(fm.weight, ft.nn.Parameter)
    assert not fm._forward_pre_hooks
    errors_match(lambda lib: lib.nn.utils.remove_weight_norm(fm if lib is ft else tm),
                 ValueError)


@pytest.mark.parametrize("build", ["linear", "conv_transpose"])
def test_old_spectral_norm(build: str) -> None:
    def make(lib):
        if build == "linear":
            return lib.nn.Linear(4, 3)
        return lib.nn.ConvTranspose1d(3, 2, 2)

    fm, tm = pair(make, 13)
    for m, lib in ((fm, ft), (tm, torch)):
        assert lib.nn.utils.spectral_norm(m, n_power_iterations=2) is m
    assert list(fm.state_dict()) == list(tm.state_dict())
    assert list(fm.state_dict())[-3:] == ["weight_orig", "weight_u", "weight_v"]
    sync(fm, tm)  # u and v are random at registration
    x = rnd((2, 4) if build == "linear" else (1, 3, 4), 3)
    for _ in range(3):
        run_both(fm, tm, x, 1e-9, 1e-11)
        same_state(fm, tm, 1e-9, 1e-11)
        close(fm.weight, tm.weight, 1e-9, 1e-11)
    fm.eval()
    tm.eval()
    before = npy(fm.weight_u)
    run_both(fm, tm, x, 1e-9, 1e-11)
    close(fm.weight_u, before, 0, 0)
    assert repr(fm) == repr(tm)
    msg = errors_match(lambda lib: lib.nn.utils.spectral_norm(fm if lib is ft else tm),
                       RuntimeError)
    assert msg == "Cannot register two spectral_norm hooks on the same parameter weight"
    for m, lib in ((fm, ft), (tm, torch)):
        assert lib.nn.utils.remove_spectral_norm(m) is m
    same_state(fm, tm, 1e-9, 1e-11)
    assert [n for n, _ in fm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    errors_match(lambda lib: lib.nn.utils.remove_spectral_norm(fm if lib is ft else tm),
                 ValueError)
    errors_match(lambda lib: lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2),
                                                        n_power_iterations=0), ValueError)


def test_old_spectral_norm_load_hook_rebuilds_v() -> None:
    # A version-0 state dict: the normalized weight instead of weight_v.
    from funcgrad.torch.nn.utils.spectral_norm import (
        SpectralNorm,
        SpectralNormLoadStateDictPreHook,
        SpectralNormStateDictHook,
    )

    fn = SpectralNorm("weight")
    meta: dict[str, Any] = {}
    SpectralNormStateDictHook(fn)(None, {}, "", meta)
    assert meta == {"spectral_norm": {"weight.version": 1}}
    w = ft.tensor(rnd((3, 4), 1))
    u = ft.tensor(rnd((3,), 2))
    state = {"weight_orig": w, "weight": w / 2.0, "weight_u": u}
    SpectralNormLoadStateDictPreHook(fn)(state, "", {}, True, [], [], [])
    assert "weight" not in state
    close(ft.dot(u, ft.mv(w, state["weight_v"])), 2.0, 1e-9, 1e-9)
