"""``torch.nn.attention`` (``sdpa_kernel``, ``SDPBackend``, the causal biases) and
``torch.nn.grad`` (convolution gradients), each against PyTorch 2.13 on drawn inputs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft
import funcgrad.torch.nn.functional as fF
from funcgrad.torch.backends import cuda as fcuda
from funcgrad.torch.nn import attention as fatt
from funcgrad.torch.nn import grad as fgrad
from funcgrad.torch.nn.attention import bias as fbias

torch = pytest.importorskip("torch")
tF = torch.nn.functional
tatt = torch.nn.attention
from torch.nn.attention import bias as tbias  # noqa: E402

BACKENDS = ["ERROR", "MATH", "FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION",
            "OVERRIDEABLE"]


def test_backend_enum_prints_and_numbers_as_torch():
    for name in BACKENDS:
        ours, theirs = getattr(fatt.SDPBackend, name), getattr(tatt.SDPBackend, name)
        assert (repr(ours), str(ours), int(ours), ours.name) == \
            (repr(theirs), str(theirs), int(theirs), theirs.name)
    assert type(fatt.SDPBackend.MATH).__name__ == type(tatt.SDPBackend.MATH).__name__


def _attempt(sdpa, backend, kernel, q):
    try:
        with kernel(backend):
            return ("ok", np.asarray(sdpa(q, q, q).detach().numpy()))
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return (type(e).__name__, str(e))


@pytest.mark.parametrize("choice", [[n] for n in BACKENDS] + [
    ["EFFICIENT_ATTENTION", "MATH"], ["CUDNN_ATTENTION", "FLASH_ATTENTION"], []])
def test_sdpa_kernel_allows_what_torch_allows_on_the_cpu(choice):
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 8)).astype(np.float32)
    ours = _attempt(fF.scaled_dot_product_attention,
                    [getattr(fatt.SDPBackend, n) for n in choice], fatt.sdpa_kernel,
                    ft.tensor(x))
    theirs = _attempt(tF.scaled_dot_product_attention,
                      [getattr(tatt.SDPBackend, n) for n in choice], tatt.sdpa_kernel,
                      torch.tensor(x))
    assert ours[0] == theirs[0]
    if ours[0] == "ok":
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5, atol=1e-6)
    else:
        assert ours[1] == theirs[1]


def test_sdpa_kernel_sets_and_restores_the_switches():
    names = ["flash", "mem_efficient", "math", "cudnn"]

    def switches(mod):
        return [getattr(mod, f"{n}_sdp_enabled")() for n in names]

    with fatt.sdpa_kernel([fatt.SDPBackend.MATH, fatt.SDPBackend.CUDNN_ATTENTION]) as a, \
            tatt.sdpa_kernel([tatt.SDPBackend.MATH, tatt.SDPBackend.CUDNN_ATTENTION]) as b:
        assert switches(fcuda) == switches(torch.backends.cuda)
        assert a == b
    assert switches(fcuda) == switches(torch.backends.cuda) == [True] * 4
    with pytest.raises(AssertionError) as ours, fatt.sdpa_kernel("MATH"):
        pass
    with pytest.raises(AssertionError) as theirs, tatt.sdpa_kernel("MATH"):
        pass
    assert str(ours.value) == str(theirs.value)


@given(q=st.integers(1, 5), kv=st.integers(1, 6), seed=st.integers(0, 2**16),
       lower=st.booleans())
@settings(max_examples=20, deadline=None)
def test_causal_biases_mask_as_torch(q, kv, seed, lower):
    if lower and q > kv:
        return  # PyTorch warns: rows with no key give NaN (compared below with warnings)
    make_f = fbias.causal_lower_right if lower else fbias.causal_upper_left
    make_t = tbias.causal_lower_right if lower else tbias.causal_upper_left
    bf, bt = make_f(q, kv), make_t(q, kv)
    assert repr(bf) == repr(bt)
    np.testing.assert_array_equal(bf._materialize().numpy(), bt._materialize().numpy())
    rng = np.random.default_rng(seed)
    qx = rng.standard_normal((2, 2, q, 4))
    kx, vx = rng.standard_normal((2, 2, kv, 4)), rng.standard_normal((2, 2, kv, 3))
    qf, qt = ft.tensor(qx, requires_grad=True), torch.tensor(qx, requires_grad=True)
    of = fF.scaled_dot_product_attention(qf, ft.tensor(kx), ft.tensor(vx), attn_mask=bf)
    ot = tF.scaled_dot_product_attention(qt, torch.tensor(kx), torch.tensor(vx), attn_mask=bt)
    np.testing.assert_allclose(of.detach().numpy(), ot.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    of.sum().backward()
    ot.sum().backward()
    np.testing.assert_allclose(qf.grad.numpy(), qt.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_causal_bias_errors_and_warning_as_torch():
    q = ft.ones(1, 1, 2, 4)
    with pytest.raises(ValueError, match="CausalBias should not be used with causal=True"):
        fF.scaled_dot_product_attention(q, q, q, attn_mask=fbias.causal_upper_left(2, 2),
                                        is_causal=True)
    with pytest.raises(AssertionError) as ours:
        fbias.causal_upper_left(3)
    with pytest.raises(AssertionError) as theirs:
        tbias.causal_upper_left(3)
    assert str(ours.value) == str(theirs.value)
    with pytest.warns(UserWarning, match="Lower right causal bias will produce NaNs"):
        fbias.causal_lower_right(3, 2)


def _pair(value):
    return ft.tensor(value, requires_grad=True), torch.tensor(value, requires_grad=True)


@given(n=st.sampled_from([1, 2, 3]), stride=st.integers(1, 2), padding=st.integers(0, 1),
       dilation=st.integers(1, 2), groups=st.sampled_from([1, 2]), seed=st.integers(0, 2**16))
@settings(max_examples=25, deadline=None)
def test_conv_input_and_weight_gradients_as_torch(n, stride, padding, dilation, groups, seed):
    rng = np.random.default_rng(seed)
    size = (2, 2 * groups) + (5,) * n
    weight_size = (2 * groups, 2) + (2,) * n
    x, w = rng.standard_normal(size), rng.standard_normal(weight_size)
    out = getattr(tF, f"conv{n}d")(torch.tensor(x), torch.tensor(w), None, stride, padding,
                                   dilation, groups)
    go = rng.standard_normal(tuple(out.shape))
    args = (stride, padding, dilation, groups)
    # grad_output requires grad: the result is differentiable again, as in PyTorch.
    gf, gt = _pair(go)
    ours = getattr(fgrad, f"conv{n}d_input")(size, ft.tensor(w), gf, *args)
    theirs = getattr(torch.nn.grad, f"conv{n}d_input")(size, torch.tensor(w), gt, *args)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10,
                               atol=1e-10)
    (ours * ft.tensor(x)).sum().backward()
    (theirs * torch.tensor(x)).sum().backward()
    np.testing.assert_allclose(gf.grad.numpy(), gt.grad.numpy(), rtol=1e-10, atol=1e-10)
    ours = getattr(fgrad, f"conv{n}d_weight")(ft.tensor(x), weight_size, ft.tensor(go), *args)
    theirs = getattr(torch.nn.grad, f"conv{n}d_weight")(torch.tensor(x), weight_size,
                                                         torch.tensor(go), *args)
    assert not ours.requires_grad and not theirs.requires_grad
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-10)
