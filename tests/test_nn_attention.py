"""``funcgrad.nn.dot_product_attention`` against JAX 0.10.2's XLA formula on drawn shapes:
grouped query heads, masks (a fully masked row averages ``value``), causal and local
windows, sequence lengths, bias, rank-3 inputs, the residual, gradients and errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp

pytestmark = pytest.mark.x32  # compared with JAX at its 32-bit default


def _case(L, nn, grad, rng_seed, b, t, s, kh, g, h, options):
    r = np.random.default_rng(rng_seed)
    q = L.asarray(r.standard_normal((b, t, kh * g, h)).astype(np.float32))
    k = L.asarray(r.standard_normal((b, s, kh, h)).astype(np.float32))
    v = L.asarray(r.standard_normal((b, s, kh, h)).astype(np.float32))
    kw = {}
    if "mask" in options:
        kw["mask"] = L.asarray(r.random((b, kh * g, t, s)) > 0.3)
    if "bias" in options:
        kw["bias"] = L.asarray(r.standard_normal((b, 1, t, s)).astype(np.float32))
    if "causal" in options:
        kw["is_causal"] = True
    if "window" in options:
        kw["local_window_size"] = (1, 0)
    if "kvlen" in options:
        kw["key_value_seq_lengths"] = L.asarray(r.integers(1, s + 1, b).astype(np.int32))
    if "qlen" in options:
        kw["query_seq_lengths"] = L.asarray(r.integers(1, t + 1, b).astype(np.int32))
    out = nn.dot_product_attention(q, k, v, **kw)
    dq = grad(lambda q_: (nn.dot_product_attention(q_, k, v, **kw) ** 2).sum())(q)
    return np.asarray(out), np.asarray(dq)


OPTIONS = ["mask", "bias", "causal", "window", "kvlen", "qlen"]


@given(st.integers(0, 2**16), st.integers(1, 2), st.integers(1, 4), st.integers(1, 4),
       st.integers(1, 2), st.integers(1, 2), st.sampled_from([2, 4]),
       st.sets(st.sampled_from(OPTIONS)))
@settings(deadline=None, max_examples=6)
def test_matches_jax(seed, b, t, s, kh, g, h, options):
    jax = pytest.importorskip("jax")
    ours = _case(fnp, fg.nn, fg.grad, seed, b, t, s, kh, g, h, options)
    theirs = _case(jax.numpy, jax.nn, jax.grad, seed, b, t, s, kh, g, h, options)
    for a, c in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, c, rtol=2e-4, atol=2e-5)


def test_rank3_residual_and_errors():
    jax = pytest.importorskip("jax")
    q = np.arange(24.0, dtype=np.float32).reshape(3, 2, 4) / 10
    kv = np.arange(32.0, dtype=np.float32).reshape(4, 2, 4) / 20
    for a, c in zip(fg.nn.dot_product_attention(q, kv, kv, return_residual=True),
                    jax.nn.dot_product_attention(q, kv, kv, return_residual=True),
                    strict=True):
        assert a.shape == c.shape
        np.testing.assert_allclose(np.asarray(a), np.asarray(c), rtol=1e-5)
    for bad in (dict(mask=np.zeros((1, 2, 3, 4))), dict(query=np.ones((1, 3, 3, 4)))):
        errors = []
        for nn in (fg.nn, jax.nn):
            args = dict(query=q[None], key=kv[None], value=kv[None]) | bad
            with pytest.raises(ValueError) as info:
                nn.dot_product_attention(args.pop("query"), args.pop("key"),
                                         args.pop("value"), **args)
            errors.append(str(info.value))
        assert errors[0] == errors[1]
