"""Recurrent layers, as PyTorch's: ``RNN`` (tanh or relu), ``LSTM`` (with ``proj_size``),
``GRU`` and the cells ``RNNCell``, ``LSTMCell``, ``GRUCell``.

Parameters carry PyTorch's names, shapes, order and initialisation
(``weight_ih_l0``, ``weight_hh_l0_reverse``, ``bias_ih_l1``, ``weight_hr_l0``...,
all drawn from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))), so a PyTorch state dict
loads. The layers take ``(L, N, H_in)`` (``batch_first``: ``(N, L, H_in)``), unbatched
``(L, H_in)`` or a ``PackedSequence``, and return ``(output, h_n)`` (``LSTM``:
``(output, (h_n, c_n))``). A whole multi-layer pass is one graph node whose backward is the
engine's reverse mode through the time steps.

>>> import funcgrad.torch as torch
>>> import funcgrad.torch.nn as nn
>>> lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=True)
>>> lstm
LSTM(3, 4, num_layers=2, bidirectional=True)
>>> [name for name, _ in lstm.named_parameters()][:5]
['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0', 'weight_ih_l0_reverse']
>>> out, (h, c) = lstm(torch.randn(5, 2, 3))
>>> out.shape, h.shape, c.shape
(torch.Size([5, 2, 8]), torch.Size([4, 2, 4]), torch.Size([4, 2, 4]))
"""

from __future__ import annotations

import functools
import math
import numbers
import warnings
from collections.abc import Callable
from typing import Any, cast

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad import nn as jnn
from funcgrad.torch import _dtypes as D
from funcgrad.torch._autocast import autocast_op
from funcgrad.torch._creation import empty, zeros
from funcgrad.torch._functions import stack
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn import init
from funcgrad.torch.nn._apply import data, keep_mask, on_device_of, op
from funcgrad.torch.nn.module import Module
from funcgrad.torch.nn.parameter import Parameter
from funcgrad.torch.nn.utils.rnn import PackedSequence
from funcgrad.transforms.jit import jit

__all__ = ["GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNBase", "RNNCell", "RNNCellBase"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _input_projection(mode: str, seq: Any, w: list[Any], scale: Any = None) -> Any:
    """The input's contribution to the gates at every step, as one matrix product over the
    whole sequence (PyTorch's kernels do the same); the hidden bias joins it where it is
    simply added (every mode but GRU, whose candidate gate scales it by ``r``). ``scale``
    (per gate row, powers of two: exact) multiplies the weights and biases, not the
    sequence-long result: no pass over it, and nothing of its size kept for backward."""
    w_ih, _, b_ih, b_hh, _ = w
    biases = [b_ih] + ([b_hh] if mode != "GRU" else [])
    if scale is not None:
        w_ih = w_ih * scale[:, None]
        biases = [None if b is None else b * scale for b in biases]
    gi = fnp.matmul(seq, fnp.transpose(w_ih))
    for b in biases:
        if b is not None:
            gi = gi + b
    return gi


def _lstm_scale(z: Any) -> Any:
    """Per gate row of the weight ``z`` (4 x hidden rows, PyTorch's order i, f, g, o): 1/2
    for the sigmoid gates i, f, o, 1 for g, as ``sigmoid(x) = (1 + tanh(x / 2)) / 2``: all
    four activations are then ONE ``tanh`` of the scaled gates, a few whole-row operations
    per time step instead of three sigmoids (each a dozen NumPy passes), in the forward
    pass and its reverse. The absolute error stays within an ulp of 1, as PyTorch's own
    ``1 / (1 + exp(-x))``."""
    hid = z.shape[0] // 4
    half = fnp.full((hid,), 0.5, dtype=z.dtype)
    return fnp.concatenate([half, half, half + half, half])


def _step(mode: str, gi: Any, h: Any, c: Any, w_hh_t: Any, b_hh: Any, w_hr_t: Any,
          scaled: bool = False) -> tuple[Any, Any]:
    """One time step of one layer and direction: the new ``(h, c)`` (``c`` for LSTM only),
    from the step's input projection ``gi`` and the transposed hidden weights (``scaled``:
    LSTM's ``gi`` and ``w_hh_t`` come multiplied by :func:`_lstm_scale` already, once per
    sequence, so the step needs no per-column constant)."""
    gh = fnp.matmul(h, w_hh_t)
    if mode == "GRU":
        if b_hh is not None:
            gh = gh + b_hh
        ir, iz, in_ = fnp.split(gi, 3, axis=-1)
        hr, hz, hn = fnp.split(gh, 3, axis=-1)
        r = jnn.sigmoid(ir + hr)
        z = jnn.sigmoid(iz + hz)
        n = fnp.tanh(in_ + r * hn)
        return (1 - z) * n + z * h, None
    if mode == "LSTM":
        z = gi + gh
        ti, tf, g, to = fnp.split(fnp.tanh(z if scaled else z * _lstm_scale(w_hh_t.T)), 4,
                                  axis=-1)
        c_new = (0.5 * tf + 0.5) * c + (0.5 * ti + 0.5) * g
        h_new = (0.5 * to + 0.5) * fnp.tanh(c_new)
        if w_hr_t is not None:
            h_new = fnp.matmul(h_new, w_hr_t)
        return h_new, c_new
    pre = gi + gh
    return (fnp.tanh(pre) if mode == "RNN_TANH" else fnp.maximum(pre, 0)), None


def _recurrence(mode: str, seq: Any, w: list[Any], h: Any, c: Any,
                alive: Any) -> tuple[Any, Any, Any]:
    """The steps of one layer and direction over ``seq`` as a ``scan`` (``alive``: which
    steps of which sequence are inside its length, or None): the outputs, the last
    ``h`` and ``c``. One compiled program with the input projection, so its bias and
    gate scaling are one fused pass, and its backward one program too."""
    _, w_hh, _, b_hh, w_hr = w
    scaled = mode == "LSTM"
    scale = _lstm_scale(w_hh) if scaled else None
    gis = _input_projection(mode, seq, w, scale)
    w_hh_t = fnp.transpose(w_hh if scale is None else w_hh * scale[:, None])
    w_hr_t = None if w_hr is None else fnp.transpose(w_hr)

    ys, h, c = _scan_steps(lambda gi, h, c: _step(mode, gi, h, c, w_hh_t, b_hh, w_hr_t,
                                                  scaled), (h, c), gis, alive)
    return ys, h, c


def _scan_steps(step: Callable[[Any, Any, Any], tuple[Any, Any]], carry: tuple[Any, Any],
                gis: Any, alive: Any) -> tuple[Any, Any, Any]:
    """The recurrence over time: ``step(gate inputs, h, c)`` each step; where ``alive`` (a
    packed sequence's mask) is False a row keeps its state and outputs zeros."""

    def body(carry: tuple[Any, Any], xs: tuple[Any, Any]) -> tuple[tuple[Any, Any], Any]:
        h, c = carry
        gi, live = xs
        h_new, c_new = step(gi, h, c)
        if live is None:
            return (h_new, c_new), h_new
        h = fnp.where(live, h_new, h)
        if c is not None:
            c = fnp.where(live, c_new, c)
        return (h, c), fnp.where(live, h_new, 0.0)

    (h, c), ys = lax.scan(body, carry, (gis, alive))
    return ys, h, c


def _rd(v: Any, lo: Any) -> Any:
    """``v`` rounded to the low dtype ``lo``, kept in float32 (one PyTorch low-precision
    operation's result)."""
    return fnp.astype(fnp.astype(v, lo), fnp.float32)


def _rd_st(v: Any, lo: Any) -> Any:
    """``v`` rounded to ``lo`` forwards, its gradient unrounded (oneDNN's bfloat16 LSTM
    stores its states rounded but differentiates in float32)."""
    return v + lax.stop_gradient(_rd(v, lo) - v)


def _low_linear(v: Any, w: Any, b: Any, lo: Any) -> Any:
    """PyTorch's low-precision ``linear`` on the CPU: products of the rounded operands
    summed in float32, the bias added, one rounding."""
    out = fnp.matmul(_rd(v, lo), fnp.transpose(_rd(w, lo)))
    return _rd(out if b is None else out + _rd(b, lo), lo)


def _low_step(mode: str, gi: Any, h: Any, c: Any, w: list[Any], lo: Any
              ) -> tuple[Any, Any]:
    """One step of PyTorch's CPU cells (aten/src/ATen/native/RNN.cpp) inside an autocast
    region: ``gi`` the input's gates (already rounded), the products in ``lo``, the
    element-wise operations in the dtype PyTorch's promotion gives them (``h`` and ``c``
    float32: the state stays float32 where PyTorch mixes it with a low gate)."""
    _, w_hh, _, b_hh, w_hr = w
    gh = _low_linear(h, w_hh, b_hh, lo)
    if mode == "GRU":
        ir, iz, in_ = fnp.split(gi, 3, axis=-1)
        hr, hz, hn = fnp.split(gh, 3, axis=-1)
        r = _rd(jnn.sigmoid(_rd(hr + ir, lo)), lo)
        z = _rd(jnn.sigmoid(_rd(hz + iz, lo)), lo)
        n = _rd(fnp.tanh(_rd(in_ + _rd(hn * r, lo), lo)), lo)
        return (h - n) * z + n, None
    pre = _rd(gh + gi, lo)
    if mode == "LSTM":
        i, f, g, o = fnp.split(pre, 4, axis=-1)
        i, f, o = (_rd(jnn.sigmoid(t), lo) for t in (i, f, o))
        c_new = f * c + _rd(i * _rd(fnp.tanh(g), lo), lo)
        h_new = o * fnp.tanh(c_new)
        if w_hr is not None:
            h_new = _rd(fnp.matmul(_rd(h_new, lo), fnp.transpose(_rd(w_hr, lo))), lo)
        return h_new, c_new
    return (_rd(fnp.tanh(pre), lo) if mode == "RNN_TANH" else fnp.maximum(pre, 0)), None


def _onednn_step(gi: Any, h: Any, c: Any, w_hh_t: Any, lo: Any) -> tuple[Any, Any]:
    """One step of oneDNN's low-precision LSTM (PyTorch's ``mkldnn_rnn_layer``): the gates
    in float32 (the products accumulated, the summed bias added), the new cell state
    stored rounded to ``lo`` and ``h = o * tanh(c)`` from the unrounded one, rounded."""
    i, f, g, o = fnp.split(gi + fnp.matmul(h, w_hh_t), 4, axis=-1)
    c_new = jnn.sigmoid(f) * c + jnn.sigmoid(i) * fnp.tanh(g)
    return _rd_st(jnn.sigmoid(o) * fnp.tanh(c_new), lo), _rd_st(c_new, lo)


def _low_recurrence(mode: str, lo_name: str, seq: Any, w: list[Any], h: Any, c: Any,
                    alive: Any) -> tuple[Any, Any, Any]:
    """``_recurrence`` inside a CPU autocast region (``lo_name``: its dtype). ``ONEDNN``
    is the LSTM of ``mkldnn_rnn_layer``: its operands come in ``lo`` already."""
    lo = getattr(fnp, lo_name)
    # RNN's cells and LSTM's projection end in a low product; GRU's and LSTM's states
    # mix into the (float32) state: PyTorch's promotion gives them its dtype.
    out_dt = lo if mode in ("ONEDNN", "RNN_TANH", "RNN_RELU") or w[4] is not None \
        else h.dtype
    c_dt = None if c is None else (lo if mode == "ONEDNN" else c.dtype)
    f32 = fnp.float32
    if mode == "ONEDNN":
        w_ih, w_hh, b_ih, b_hh, _ = w
        bias = None if b_ih is None else fnp.astype(b_ih + b_hh, f32)
        gis = fnp.matmul(fnp.astype(seq, f32), fnp.transpose(fnp.astype(w_ih, f32)))
        if bias is not None:
            gis = gis + bias
        w_hh_t = fnp.transpose(fnp.astype(w_hh, f32))
        h, c = fnp.astype(h, f32), fnp.astype(c, f32)
    else:
        gis = _low_linear(seq, w[0], w[2], lo)
        h = fnp.astype(h, f32)
        c = None if c is None else fnp.astype(c, f32)

    def step(gi: Any, h: Any, c: Any) -> tuple[Any, Any]:
        if mode == "ONEDNN":
            return _onednn_step(gi, h, c, w_hh_t, lo)
        return _low_step(mode, gi, h, c, w, lo)

    ys, h, c = _scan_steps(step, (h, c), gis, alive)
    # The values that end in a low dtype are rounded already: their casts are exact.
    return (fnp.astype(ys, out_dt), fnp.astype(h, out_dt),
            None if c is None else fnp.astype(c, c_dt))


_LOW_RECURRENCE = {(m, lo): jit(functools.partial(_low_recurrence, m, lo))
                   for m in (*_GATES, "ONEDNN") for lo in ("bfloat16", "float16")}


# One compiled program per mode and signature: the recurrence runs as generated code (its
# backward too), one graph node per layer and direction instead of a few per step.
_RECURRENCE = {m: jit(functools.partial(_recurrence, m)) for m in _GATES}


def _cell_step(mode: str, x: Any, h: Any, c: Any, w: list[Any]) -> tuple[Any, Any]:
    """One step of a cell (``RNNCell``, ``LSTMCell``, ``GRUCell``) on input ``x``."""
    _, w_hh, _, b_hh, w_hr = w
    return _step(mode, _input_projection(mode, x, w), h, c, fnp.transpose(w_hh), b_hh,
                 None if w_hr is None else fnp.transpose(w_hr))


def _reversal(lengths: np.ndarray, steps: int) -> np.ndarray:
    """``rev[t, n]``: the step read at ``t`` when sequence ``n`` runs backwards within its
    own length (steps past the end stay where they are). Applying it twice is identity."""
    t = np.arange(steps)[:, None]
    return np.where(t < lengths[None, :], lengths[None, :] - 1 - t, t)


def _run_layers(mode: str, x: Any, h0: Any, c0: Any, weights: list[list[Any]],
                num_layers: int, dirs: int, lengths: np.ndarray | None,
                masks: list[Any], low: str | None = None) -> tuple[Any, Any, Any]:
    """The multi-layer, maybe bidirectional, maybe variable-length recurrence over
    ``x`` of shape ``(L, N, H_in)``; returns ``(output, h_n, c_n)``. ``low``: the dtype
    name of the CPU autocast region it runs in (``mode`` ``ONEDNN``: oneDNN's LSTM)."""
    recurrence = _RECURRENCE[mode] if low is None else _LOW_RECURRENCE[(mode, low)]
    steps = x.shape[0]
    alive = None if lengths is None else fnp.asarray(
        on_device_of(np.arange(steps)[:, None, None] < lengths[None, :, None], x))
    rev = None if lengths is None else fnp.asarray(
        on_device_of(_reversal(lengths, steps)[:, :, None], x))

    def backwards(seq: Any) -> Any:
        if rev is None:
            return fnp.flip(seq, axis=0)
        return fnp.take_along_axis(seq, fnp.broadcast_to(rev, seq.shape[:2] + (1,)), axis=0)

    layer_in = x
    h_out: list[Any] = []
    c_out: list[Any] = []
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            seq = layer_in if d == 0 else backwards(layer_in)
            h = h0[k]
            c = None if c0 is None else c0[k]
            y, h, c = recurrence(seq, weights[k], h, c, alive)
            outs.append(y if d == 0 else backwards(y))
            h_out.append(h)
            c_out.append(c)
        layer_in = outs[0] if dirs == 1 else fnp.concatenate(outs, axis=-1)
        if layer < num_layers - 1 and masks[layer] is not None:
            layer_in = fnp.astype(layer_in * masks[layer], layer_in.dtype)
    return layer_in, fnp.stack(h_out), (None if c0 is None else fnp.stack(c_out))


def _autocast_low(x: Any, cell: bool = False) -> str | None:
    """The dtype name of the CPU autocast region ``x`` meets, where PyTorch's recurrent
    kernels run their products in it (aten's composite cells call ``linear``). ``cell``:
    asked from within the cell's own autocast wrapper."""
    from funcgrad.torch import _autocast as A  # noqa: PLC0415

    if not A._open or (A.STATE.inside and not cell) or not A.STATE.enabled["cpu"] or \
            not A._eligible(x, "cpu"):
        return None
    return str(A.STATE.dtype["cpu"].name)


def _flat(weights: list[list[Any]]) -> list[Any]:
    return [t for w in weights for t in w]


def _cpu_has_fp16() -> bool:
    """Whether oneDNN runs float16 RNNs on this CPU (AVX512-FP16, as its dispatcher asks)."""
    import importlib  # noqa: PLC0415

    try:
        umath = importlib.import_module("numpy._core._multiarray_umath")
    except ImportError:  # NumPy < 2
        umath = importlib.import_module("numpy.core._multiarray_umath")
    return bool(umath.__cpu_features__.get("AVX512FP16"))


_ONEDNN_NO_PD = ("could not create a primitive descriptor for the LSTM forward propagation "
                 "primitive. Run workload with environment variable ONEDNN_VERBOSE=all to get "
                 "additional diagnostic information.")


@autocast_op("mkldnn_rnn_layer")
def _onednn_lstm(x: Any, h0: Any, c0: Any, flat: list[Any], layers: Any) -> Any:
    """PyTorch's CPU LSTM for float32 and bfloat16 (oneDNN's ``mkldnn_rnn_layer``): in a
    CPU autocast region its operands arrive cast to the region's dtype (autocast lists
    the operator), and a low-precision LSTM runs oneDNN's arithmetic (``ONEDNN``).
    ``layers(x, h0, c0, weights, mode, low)`` runs the layers."""
    low = None
    if x.dtype in (D.bfloat16, D.float16) and x.device.type == "cpu":
        if x.dtype is D.float16 and not _cpu_has_fp16():
            raise RuntimeError(_ONEDNN_NO_PD)
        low = x.dtype.name
    weights = [flat[k:k + 5] for k in range(0, len(flat), 5)]
    return layers(x, h0, c0, weights, "LSTM" if low is None else "ONEDNN", low)


class RNNBase(Module):
    """What ``RNN``, ``LSTM`` and ``GRU`` share: parameters, checks and the forward pass."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        if (not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1
                or isinstance(dropout, bool)):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        if not isinstance(hidden_size, int) or isinstance(hidden_size, bool):
            raise TypeError(f"hidden_size should be of type int, got: "
                            f"{type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError(f"Unrecognized RNN mode: {mode}")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        gate_size = _GATES[mode] * hidden_size
        dirs = 2 if bidirectional else 1
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            for d in range(dirs):
                layer_input = input_size if layer == 0 else real_hidden * dirs
                suffix = "_reverse" if d == 1 else ""
                shapes: list[tuple[str, tuple[int, ...]]] = [
                    ("weight_ih", (gate_size, layer_input)),
                    ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                names = []
                for base, shp in shapes:
                    name = f"{base}_l{layer}{suffix}"
                    setattr(self, name, Parameter(empty(shp, dtype=dtype, device=device)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def all_weights(self) -> list[list[Parameter]]:
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    @property
    def _flat_weights(self) -> list[Parameter]:
        return [getattr(self, n) for n in self._flat_weights_names]

    def flatten_parameters(self) -> None:
        """A no-op (PyTorch packs cuDNN weights here; funcgrad has nothing to pack)."""

    def _layer_weights(self) -> list[list[Any]]:
        out = []
        for names in self._all_weights:
            params = {n.split("_l")[0]: getattr(self, n) for n in names}
            out.append([params["weight_ih"], params["weight_hh"], params.get("bias_ih"),
                        params.get("bias_hh"), params.get("weight_hr")])
        return out

    def _dropout_masks(self, like: Any, batch: int, steps: int,
                       lengths: np.ndarray | None = None) -> list[Any]:
        """The inter-layer dropout masks, (steps, batch, width) each. For packed input on
        the CPU, PyTorch draws them over the packed rows (time-major, sorted batch), so
        they are drawn so and spread over the padded layout (padding rows read row 0:
        their outputs are zeroed anyway)."""
        dirs = 2 if self.bidirectional else 1
        width = (self.proj_size or self.hidden_size) * dirs
        rows, n_packed = None, 0
        if lengths is not None and type(data(like)) is np.ndarray:
            n_packed = int(lengths.sum())
            # Counting the live (step, sequence) cells row by row numbers them in packed
            # order.
            live = np.arange(steps)[:, None] < lengths[None, :]
            rows = np.where(live, np.cumsum(live.ravel()).reshape(live.shape) - 1, 0)
        masks: list[Any] = []
        for _ in range(self.num_layers - 1):
            if not self.training or self.dropout == 0.0:
                masks.append(None)
                continue
            p = self.dropout
            dt, mshape = data(like).dtype, (steps, batch, width)
            if p >= 1.0:
                masks.append(on_device_of(np.zeros(mshape, dt), like))
                continue
            if rows is not None:
                keep = keep_mask((n_packed, width), p, data(like))[rows]
            else:
                # PyTorch draws over each layer's (contiguous) output, whatever the
                # input's layout: the buffer, not the tensor, says only the device.
                keep = keep_mask(mshape, p, data(like))
            masks.append((keep * (1.0 / (1.0 - p))).astype(dt))
        return masks

    def _check_hidden(self, hx: Any, expected: tuple[int, ...], what: str) -> None:
        if tuple(hx.shape) != expected:
            raise RuntimeError(f"Expected {what} size {expected}, got {list(hx.shape)}")

    def forward(self, input: Any, hx: Any = None) -> Any:  # noqa: A002
        packed = isinstance(input, PackedSequence)
        lengths = None
        unbatched = False
        sorted_idx = unsorted_idx = None
        if packed:
            from funcgrad.torch.nn.utils.rnn import pad_packed_sequence  # noqa: PLC0415

            # Work in the packed (sorted) batch order; the caller's hx is in original order.
            sorted_idx, unsorted_idx = input.sorted_indices, input.unsorted_indices
            sorted_seq = input._replace(sorted_indices=None, unsorted_indices=None)
            x, lens = pad_packed_sequence(sorted_seq)
            lengths = lens._host().astype(np.int64)
        else:
            if input.dim() not in (2, 3):
                # (PyTorch's LSTM and GRU say "1D instead", its RNN "1D tensor instead")
                kind = " tensor" if self.mode.startswith("RNN") else ""
                raise ValueError(f"{self._get_name()}: Expected input to be 2D or 3D, got "
                                 f"{input.dim()}D{kind} instead")
            unbatched = input.dim() == 2
            x = input.unsqueeze(1) if unbatched else (
                input.transpose(0, 1) if self.batch_first else input)
        if x.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {x.shape[-1]}")
        steps, batch = int(x.shape[0]), int(x.shape[1])
        if self.proj_size and not packed and not _WARNED_PROJ and x.device.type == "cpu" and \
                x.dtype.name in ("float32", "bfloat16"):
            # (once per process, as PyTorch's TORCH_WARN_ONCE; its packed-input kernel has no
            # oneDNN path, so a PackedSequence never warns)
            _WARNED_PROJ.append(True)
            warnings.warn("LSTM with projections is not supported with oneDNN. Using default "
                          "implementation. (Triggered internally at /__w/pytorch/pytorch/aten/"
                          "src/ATen/native/RNN.cpp:1512.)", UserWarning, stacklevel=1)
            # (stacklevel 1: PyTorch's C++ warning names its module's line calling _VF.lstm)
        dirs = 2 if self.bidirectional else 1
        out_size = self.proj_size or self.hidden_size
        h_shape = (self.num_layers * dirs, batch, out_size)
        c_shape = (self.num_layers * dirs, batch, self.hidden_size)
        lstm = self.mode == "LSTM"
        h0, c0 = (hx if hx is not None else (None, None)) if lstm else (hx, None)
        if hx is not None and unbatched:
            h0 = None if h0 is None else h0.unsqueeze(1)
            if c0 is not None:
                c0 = c0.unsqueeze(1)
        if h0 is None:
            h0 = zeros(h_shape, dtype=x.dtype, device=x.device)
        if lstm and c0 is None:
            c0 = zeros(c_shape, dtype=x.dtype, device=x.device)
        if hx is not None and sorted_idx is not None:
            h0 = cast(Any, h0).index_select(1, sorted_idx)
            if c0 is not None:
                c0 = cast(Any, c0).index_select(1, sorted_idx)
        # (PyTorch's LSTM names the pair's members hidden[0] and hidden[1])
        self._check_hidden(h0, h_shape, "hidden[0]" if lstm else "hidden")
        if lstm:
            self._check_hidden(c0, c_shape, "hidden[1]")
        masks = self._dropout_masks(x, batch, steps, lengths)

        def impl(xv: Any, h0v: Any, c0v: Any, weights: list[list[Any]], mode: str,
                 low: str | None) -> Any:
            return _run_layers(mode, xv, h0v, c0v, weights, self.num_layers, dirs,
                               lengths, masks, low)

        # PyTorch's layer node lists the input, the weights, then the initial states.
        if lstm:
            # Each layer's last states are outputs of its node, stacked after it
            # (h_n: StackBackward0 over MkldnnRnnLayerBackward0's output 1).
            def layers(xt: Any, h0t: Any, c0t: Any, wt: list[list[Any]], mode: str,
                       low: str | None) -> Any:
                def split(xv: Any, wv: Any, h0v: Any, c0v: Any) -> Any:
                    o, h, c = impl(xv, h0v, c0v, wv, mode, low)
                    return o, list(h), list(c)

                o, hs, cs = op("MkldnnRnnLayer", split, xt, wt, h0t, c0t)
                return o, stack(hs), stack(cs)

            # oneDNN runs a padded LSTM only: a packed one runs ATen's cells (in an
            # autocast region their products are low, the states stay float32).
            if self.proj_size or packed or x.dtype not in (D.float32, D.bfloat16):
                out, h_n, c_n = layers(x, h0, c0, self._layer_weights(), "LSTM",
                                       _autocast_low(x))
            else:
                out, h_n, c_n = _onednn_lstm(x, h0, c0, _flat(self._layer_weights()),
                                             layers)
        else:
            low = _autocast_low(x)
            out, h_n, c_n = op("Stack", lambda xv, wv, h0v, c0v: impl(
                xv, h0v, c0v, wv, self.mode, low), x, self._layer_weights(), h0, c0)
        if self.bidirectional and not packed:
            # PyTorch's last layer joins its two directions: CatBackward0.
            from funcgrad.torch._functions import cat  # noqa: PLC0415

            out = cat(out.chunk(2, -1), -1)
        if unsorted_idx is not None:
            h_n = cast(Any, h_n).index_select(1, unsorted_idx)
            if c_n is not None:
                c_n = cast(Any, c_n).index_select(1, unsorted_idx)
        if packed:
            from funcgrad.torch.nn.utils.rnn import pack_padded_sequence  # noqa: PLC0415

            assert lengths is not None
            out_data = pack_padded_sequence(out, lengths).data
            result: Any = PackedSequence(out_data, input.batch_sizes, sorted_idx, unsorted_idx)
        elif unbatched:
            result = out.squeeze(1)
            h_n = h_n.squeeze(1)
            if c_n is not None:
                c_n = c_n.squeeze(1)
        elif self.batch_first:
            # PyTorch's GRU and RNN transpose their output in place (TransposeBackward1).
            result = out.transpose(0, 1) if lstm else out.transpose_(0, 1)
        else:
            result = out
        return (result, (h_n, c_n)) if lstm else (result, h_n)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


# PyTorch's CPU kernel for float32/bfloat16 LSTMs (oneDNN) has no projections: it says so once.
_WARNED_PROJ: list[bool] = []


def _no_projections(kwargs: dict[str, Any]) -> None:
    """PyTorch's refusal of ``proj_size`` by ``RNN`` and ``GRU`` (and of another unknown
    keyword, as its ``RNNBase.__init__``)."""
    if "proj_size" in kwargs:
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
    for k in kwargs:
        raise TypeError(f"RNNBase.__init__() got an unexpected keyword argument '{k}'")


class RNN(RNNBase):
    """An Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or relu).

    >>> import funcgrad.torch.nn as nn
    >>> nn.RNN(4, 8, nonlinearity="relu", batch_first=True)
    RNN(4, 8, batch_first=True)
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False, device: Any = None,
                 dtype: Any = None, **kwargs: Any) -> None:
        _no_projections(kwargs)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size,
                         hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         0, device, dtype)


class LSTM(RNNBase):
    """A long short-term memory layer; ``proj_size > 0`` projects ``h`` to that size."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, proj_size, device, dtype)


class GRU(RNNBase):
    """A gated recurrent unit layer (PyTorch's gate order: reset, update, new)."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, device: Any = None, dtype: Any = None,
                 **kwargs: Any) -> None:
        _no_projections(kwargs)
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, 0, device, dtype)


# -------------------------------------------------------------------------- cells


class RNNCellBase(Module):
    """What the cells share: ``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh``."""

    _mode = "RNN_TANH"

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size), dtype=dtype,
                                         device=device))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size), dtype=dtype,
                                         device=device))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, dtype=dtype,
                                           device=device))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, dtype=dtype,
                                           device=device))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        if nonlinearity != "tanh":
            s += f", nonlinearity={nonlinearity}"
        return s

    def _prepare(self, input: Any, hx: Any) -> tuple[Any, Any, bool]:  # noqa: A002
        if input.dim() not in (1, 2):
            raise ValueError(f"{self._get_name()}: Expected input to be 1D or 2D, got "
                             f"{input.dim()}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[-1]} "
                               f"expected {self.input_size}")
        unbatched = input.dim() == 1
        x = input.unsqueeze(0) if unbatched else input
        return x, hx, unbatched

    def _check_states(self, x: Any, *states: Any) -> None:
        """PyTorch's checks of the (batched) states against the input and hidden_size."""
        for k, h in enumerate(states):
            if h.shape[0] != x.shape[0]:
                raise RuntimeError(f"Input batch size {x.shape[0]} doesn't match hidden{k} "
                                   f"batch size {h.shape[0]}")
            if h.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{k} has inconsistent hidden_size: got "
                                   f"{h.shape[1]}, expected {self.hidden_size}")

    def _weights(self) -> list[Any]:
        return [self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh, None]

    def _zeros(self, x: Any) -> Tensor:
        return zeros((x.shape[0], self.hidden_size), dtype=x.dtype, device=x.device)


class RNNCell(RNNCellBase):
    """One step of an Elman RNN.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn as nn
    >>> cell = nn.RNNCell(3, 5)
    >>> cell(torch.randn(2, 3)).shape
    torch.Size([2, 5])
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        if nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity

    def forward(self, input: Any, hx: Any = None) -> Any:  # noqa: A002
        x, hx, unbatched = self._prepare(input, hx)
        h = self._zeros(x) if hx is None else (hx.unsqueeze(0) if unbatched else hx)
        self._check_states(x, h)
        cell = _rnn_tanh_cell if self.nonlinearity == "tanh" else _rnn_relu_cell
        out = cell(x, h, self._weights())
        return out.squeeze(0) if unbatched else out


class LSTMCell(RNNCellBase):
    """One LSTM step: ``(h, c) -> (h', c')``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input: Any, hx: Any = None) -> Any:  # noqa: A002
        x, hx, unbatched = self._prepare(input, hx)
        if hx is None:
            h, c = self._zeros(x), self._zeros(x)
        else:
            h, c = (hx[0].unsqueeze(0), hx[1].unsqueeze(0)) if unbatched else hx
        self._check_states(x, h, c)
        h1, c1 = _lstm_cell(x, h, c, self._weights())
        return (h1.squeeze(0), c1.squeeze(0)) if unbatched else (h1, c1)


class GRUCell(RNNCellBase):
    """One GRU step."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Any, hx: Any = None) -> Any:  # noqa: A002
        x, hx, unbatched = self._prepare(input, hx)
        h = self._zeros(x) if hx is None else (hx.unsqueeze(0) if unbatched else hx)
        self._check_states(x, h)
        out = _gru_cell(x, h, self._weights())
        return out.squeeze(0) if unbatched else out


# The cells as PyTorch's operators (autocast casts their inputs and weights by name).


def _low_cell(mode: str, x: Any, h: Any, c: Any, w: list[Any], lo: str) -> tuple[Any, Any]:
    """A cell's step as PyTorch's CPU composite runs it with products in ``lo``."""
    dt = getattr(fnp, lo)
    h_new, c_new = _low_step(mode, _low_linear(x, w[0], w[2], dt), fnp.astype(h, fnp.float32),
                             None if c is None else fnp.astype(c, fnp.float32), w, dt)
    # RNNCell's state is its last low product; GRU's and LSTM's mix into the state.
    out_dt = dt if mode in ("RNN_TANH", "RNN_RELU") else fnp.result_type(h, dt)
    return fnp.astype(h_new, out_dt), None if c is None else fnp.astype(
        c_new, fnp.result_type(c, dt))


def _simple_cell(mode: str, xv: Any, hv: Any, wv: list[Any]) -> Any:
    # Low-precision operands (autocast casts them): PyTorch's composite, op by op.
    if xv.dtype.name in ("bfloat16", "float16"):
        return _low_cell(mode, xv, hv, None, wv, xv.dtype.name)[0]
    return _cell_step(mode, xv, hv, None, wv)[0]


@autocast_op("rnn_tanh_cell")
def _rnn_tanh_cell(x: Any, h: Any, w: list[Any]) -> Any:
    return op("Tanh", lambda xv, hv, wv: _simple_cell("RNN_TANH", xv, hv, wv), x, h, w)


@autocast_op("rnn_relu_cell")
def _rnn_relu_cell(x: Any, h: Any, w: list[Any]) -> Any:
    return op("Relu", lambda xv, hv, wv: _simple_cell("RNN_RELU", xv, hv, wv), x, h, w)


def _lstm_gates(x: Any, h: Any, c: Any, w: list[Any]) -> tuple[Any, Any]:
    """One LSTM cell step's new cell state and output gate (``_step``'s arithmetic)."""
    _, w_hh, _, _, _ = w
    z = _input_projection("LSTM", x, w) + fnp.matmul(h, fnp.transpose(w_hh))
    ti, tf, g, to = fnp.split(fnp.tanh(z * _lstm_scale(w_hh)), 4, axis=-1)
    return (0.5 * tf + 0.5) * c + (0.5 * ti + 0.5) * g, 0.5 * to + 0.5


@autocast_op("lstm_cell")
def _lstm_cell(x: Any, h: Any, c: Any, w: list[Any]) -> Any:
    # Two nodes, as PyTorch's cell: c' = f * c + i * g (AddBackward0), then
    # h' = o * tanh(c') (MulBackward0).
    low = _autocast_low(x, cell=True)
    if low is not None:
        # In a CPU autocast region PyTorch's composite runs its products in ``low``.
        # (h' a MulBackward0, c' an AddBackward0, as PyTorch's composite)
        return (op("Mul", lambda xv, hv, cv, wv: _low_cell("LSTM", xv, hv, cv, wv, low)[0],
                   x, h, c, w),
                op("Add", lambda xv, hv, cv, wv: _low_cell("LSTM", xv, hv, cv, wv, low)[1],
                   x, h, c, w))
    c_new, gate = op("Add", _lstm_gates, x, h, c, w)
    return op("Mul", lambda cv, ov: ov * fnp.tanh(cv), c_new, gate), c_new


@autocast_op("gru_cell")
def _gru_cell(x: Any, h: Any, w: list[Any]) -> Any:
    low = _autocast_low(x, cell=True)
    if low is not None:
        return op("Add", lambda xv, hv, wv: _low_cell("GRU", xv, hv, None, wv, low)[0], x,
                  h, w)
    return op("Add", lambda xv, hv, wv: _cell_step("GRU", xv, hv, None, wv)[0], x, h, w)
