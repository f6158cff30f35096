"""torch.fft against PyTorch 2.13: values, dtypes, reprs, node names, gradients of real
inputs through complex spectra."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft

torch = pytest.importorskip("torch")

ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_D = ["fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"]


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 1000), st.integers(2, 6), st.sampled_from([None, "ortho", "forward"]))
def test_transforms_match_torch(seed: int, n: int, norm: str | None) -> None:
    x = np.random.default_rng(seed).standard_normal((3, n))
    for name in ONE_D + N_D:
        xf = ft.tensor(x, requires_grad=True)
        xt = torch.tensor(x, requires_grad=True)
        of = getattr(ft.fft, name)(xf, norm=norm)
        ot = getattr(torch.fft, name)(xt, norm=norm)
        np.testing.assert_allclose(of.detach().numpy(), ot.detach().resolve_conj().numpy(),
                                   atol=1e-10)
        assert str(of.dtype) == str(ot.dtype)
        assert type(of.grad_fn).__name__ == type(ot.grad_fn).__name__
        lf = of.abs().sum() if of.dtype.is_complex else of.sum()
        lt = ot.abs().sum() if ot.is_complex() else ot.sum()
        lf.backward()
        lt.backward()
        np.testing.assert_allclose(xf.grad.numpy(), xt.grad.numpy(), atol=1e-8)


def test_reprs_and_helpers() -> None:
    x = [1.0, 2.0, 0.0, -1.0]
    assert repr(ft.fft.fft(ft.tensor(x))) == repr(torch.fft.fft(torch.tensor(x)))
    assert repr(ft.fft.rfft(ft.tensor(x), n=6)) == repr(torch.fft.rfft(torch.tensor(x), n=6))
    for n in (4, 5):
        assert repr(ft.fft.fftfreq(n, 0.5)) == repr(torch.fft.fftfreq(n, 0.5))
        assert repr(ft.fft.rfftfreq(n)) == repr(torch.fft.rfftfreq(n))
    v = np.arange(6).reshape(2, 3)
    assert repr(ft.fft.fftshift(ft.tensor(v))) == repr(torch.fft.fftshift(torch.tensor(v)))
    assert repr(ft.fft.ifftshift(ft.tensor(v), dim=1)) == \
        repr(torch.fft.ifftshift(torch.tensor(v), dim=1))
    assert ft.fft.fft(ft.tensor([1, 2])).dtype is ft.complex64
    with pytest.raises(RuntimeError, match="normalization"):
        ft.fft.fft(ft.ones(2), norm="bad")
