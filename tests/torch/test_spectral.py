"""``torch.stft`` / ``torch.istft`` against PyTorch 2.13 on drawn signals and settings:
values, gradients, round trips and argument errors."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft

torch = pytest.importorskip("torch")


@st.composite
def stft_case(draw: Any) -> dict[str, Any]:
    n_fft = draw(st.sampled_from([4, 6, 8, 16]))
    win = draw(st.integers(2, n_fft))
    hop = draw(st.integers(1, win))
    batch = draw(st.sampled_from([(), (2,)]))
    length = draw(st.integers(n_fft // 2 + 2, 40))
    seed = draw(st.integers(0, 2 ** 16))
    return dict(n_fft=n_fft, win=win, hop=hop, batch=batch, length=length, seed=seed,
                window=draw(st.sampled_from(["hann", "ones", "none"])),
                center=draw(st.booleans()), normalized=draw(st.booleans()),
                onesided=draw(st.sampled_from([None, True, False])),
                pad_mode=draw(st.sampled_from(["reflect", "constant", "replicate"])))


def _args(L: Any, c: dict[str, Any], dtype: Any) -> tuple[Any, dict[str, Any]]:
    x = np.random.default_rng(c["seed"]).standard_normal((*c["batch"], c["length"]))
    window = {"hann": lambda: L.hann_window(c["win"], dtype=dtype),
              "ones": lambda: L.ones(c["win"], dtype=dtype), "none": lambda: None}[c["window"]]()
    kw = dict(n_fft=c["n_fft"], hop_length=c["hop"], win_length=c["win"], window=window,
              center=c["center"], normalized=c["normalized"], onesided=c["onesided"],
              return_complex=True)
    if c["center"]:
        kw["pad_mode"] = c["pad_mode"]
    return L.tensor(x, dtype=dtype, requires_grad=True), kw


def _run(L: Any, c: dict[str, Any]) -> Any:
    x, kw = _args(L, c, L.float64)
    if not c["center"] and c["length"] < c["n_fft"]:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = L.stft(x, **kw)
    (s.abs() ** 2 * L.arange(s.shape[-1], dtype=L.float64)).sum().backward()
    return s.detach(), x.grad


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(stft_case())
def test_stft_values_and_gradients_match_torch(c: dict[str, Any]) -> None:
    ours, theirs = _run(ft, c), _run(torch, c)
    if theirs is None:
        return
    assert tuple(ours[0].shape) == tuple(theirs[0].shape)
    assert str(ours[0].dtype) == str(theirs[0].dtype)
    np.testing.assert_allclose(ours[0].numpy(), theirs[0].numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(ours[1].numpy(), theirs[1].numpy(), rtol=1e-9, atol=1e-9)


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(stft_case(), st.booleans())
def test_istft_inverts_as_torch_does(c: dict[str, Any], give_length: bool) -> None:
    if c["window"] != "hann" or c["onesided"] is False:
        c = {**c, "window": "hann", "onesided": None}
    c = {**c, "win": c["n_fft"], "hop": max(1, c["n_fft"] // 4), "center": True}
    results = []
    for L in (ft, torch):
        x, kw = _args(L, c, L.float64)
        kw.pop("pad_mode", None)
        s = L.stft(x, **kw)
        kw.pop("return_complex")
        y = L.istft(s, length=c["length"] if give_length else None, **kw)
        results.append(y.detach().numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-9, atol=1e-9)


BAD: dict[str, Any] = {
    "no_return_complex": lambda L: L.stft(L.arange(10.0), 4, window=L.ones(4)),
    "three_d": lambda L: L.stft(L.ones(2, 2, 8), 4, return_complex=True),
    "window_size": lambda L: L.stft(L.arange(10.0), 4, window=L.ones(3),
                                    return_complex=True),
    "hop_zero": lambda L: L.stft(L.arange(10.0), 4, hop_length=0, window=L.ones(4),
                                 return_complex=True),
    "win_too_long": lambda L: L.stft(L.arange(10.0), 4, win_length=5, return_complex=True),
    "istft_real": lambda L: L.istft(L.ones(3, 4), 4),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_argument_errors_match_torch(name: str) -> None:
    def outcome(L: Any) -> tuple[type, str]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                BAD[name](L)
            except RuntimeError as e:
                return type(e), str(e).split("\n")[0]
        return type(None), ""

    assert outcome(ft) == outcome(torch)


@pytest.mark.gpu
def test_gpu_stft_istft_and_windows_stay_on_the_device() -> None:
    from gpu_values import host, need_device  # noqa: PLC0415

    need_device()
    rng = np.random.default_rng(0)
    data = rng.standard_normal((2, 32)).astype(np.float32)
    for name in ("hann_window", "hamming_window", "blackman_window", "bartlett_window",
                 "kaiser_window"):
        w = getattr(ft, name)(8, device="cuda")
        assert w.device.type == "cuda"
        np.testing.assert_array_equal(host(w), getattr(ft, name)(8).numpy())
    x = ft.tensor(data, device="cuda", requires_grad=True)
    w = ft.hann_window(8, device="cuda")
    s = ft.stft(x, 8, hop_length=2, window=w, return_complex=True)
    (s.abs() ** 2).sum().backward()
    assert s.device.type == "cuda" and x.grad.device.type == "cuda"
    ref_x = torch.tensor(data, requires_grad=True)
    ref = torch.stft(ref_x, 8, hop_length=2, window=torch.hann_window(8), return_complex=True)
    (ref.abs() ** 2).sum().backward()
    np.testing.assert_allclose(host(s), ref.detach().numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(host(x.grad), ref_x.grad.numpy(), rtol=1e-4, atol=1e-3)
    y = ft.istft(s.detach(), 8, hop_length=2, window=w, length=32)
    np.testing.assert_allclose(host(y), data, rtol=1e-5, atol=1e-5)
    assert ft.poisson(ft.ones(3, device="cuda")).device.type == "cuda"
