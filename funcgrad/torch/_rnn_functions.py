"""PyTorch's functional recurrent layers at the top level of ``torch``: ``lstm``, ``gru``,
``rnn_tanh`` and ``rnn_relu``, on a padded ``(L, N, H_in)`` input or packed data with its
``batch_sizes``, the weights given as one flat list (``nn.LSTM._flat_weights``' order).
They run ``nn.RNNBase``'s recurrence.

>>> import funcgrad.torch as torch
>>> w = [torch.zeros(4, 1), torch.zeros(4, 4)]
>>> out, h = torch.rnn_tanh(torch.ones(3, 1, 1), torch.zeros(1, 1, 4), w, False, 1, 0.0,
...                         False, False, False)
>>> out.shape, h.shape
(torch.Size([3, 1, 4]), torch.Size([1, 1, 4]))
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from funcgrad.torch import _dtypes as D
from funcgrad.torch._tensor import Tensor, _view_op

__all__ = ["gru", "lstm", "rnn_relu", "rnn_tanh"]


def _split_weights(params: Sequence[Tensor], has_biases: builtins.bool, groups: builtins.int,
                   lstm: builtins.bool) -> list[list[Any]]:
    """``params`` per layer and direction as ``[w_ih, w_hh, b_ih, b_hh, w_hr]``: 2 or 4
    tensors each, one more (``w_hr``) for an LSTM with projections."""
    params = list(params)
    stride = 4 if has_biases else 2
    if lstm and len(params) == groups * (stride + 1):
        stride += 1
    if len(params) % stride:
        if not lstm:
            raise RuntimeError("got an incorrect number of RNN parameters")
        raise RuntimeError(f"MatrixRef: ArrayRef size {len(params)} not divisible by stride "
                           f"{stride}")
    if len(params) // stride < groups:
        raise RuntimeError("Expected more weights in stacked_rnn")
    out = []
    for k in builtins.range(groups):
        w = params[k * stride:(k + 1) * stride]
        w_ih, w_hh = w[0], w[1]
        b_ih, b_hh = (w[2], w[3]) if has_biases else (None, None)
        w_hr = w[-1] if stride in (3, 5) else None
        out.append([w_ih, w_hh, b_ih, b_hh, w_hr])
    return out


def _run(mode: str, x: Any, h0: Any, c0: Any, params: Sequence[Tensor],
         has_biases: builtins.bool, num_layers: builtins.int, dropout: builtins.float,
         train: builtins.bool, bidirectional: builtins.bool,
         lengths: np.ndarray | None) -> tuple[Any, Any, Any]:
    """The recurrence over ``x`` of shape ``(L, N, H_in)``: ``(output, h_n, c_n)``."""
    from funcgrad.torch.nn._apply import data, keep_mask, on_device_of, op  # noqa: PLC0415
    from funcgrad.torch.nn.rnn import _autocast_low, _onednn_lstm, _run_layers  # noqa: PLC0415

    dirs = 2 if bidirectional else 1
    groups = num_layers * dirs
    weights = _split_weights(params, has_biases, groups, mode == "LSTM")
    w_ih = weights[0][0]
    if x.shape[-1] != w_ih.shape[1]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                           f"({x.shape[0] * x.shape[1]}x{x.shape[-1]} and "
                           f"{w_ih.shape[1]}x{w_ih.shape[0]})")
    if h0.shape[0] != groups or (c0 is not None and c0.shape[0] != groups):
        raise RuntimeError("Expected more hidden states in stacked_rnn")
    steps, batch = builtins.int(x.shape[0]), builtins.int(x.shape[1])
    masks: list[Any] = []
    width = builtins.int(h0.shape[-1]) * dirs
    for _ in builtins.range(num_layers - 1):
        if not train or dropout == 0.0:
            masks.append(None)
            continue
        dt, mshape = data(x).dtype, (steps, batch, width)
        masks.append(on_device_of(np.zeros(mshape, dt), x) if dropout >= 1.0 else
                     (keep_mask(mshape, dropout, data(x)) * (1.0 / (1.0 - dropout))).astype(dt))

    w_hr = weights[0][4]
    mkldnn = mode == "LSTM" and w_hr is None and x.dtype in (D.float32, D.bfloat16)

    def layers(xt: Any, h0t: Any, c0t: Any, wt: list[list[Any]], kind: str,
               low: str | None) -> tuple[Any, Any, Any]:
        # ``low``: the CPU autocast region's dtype, where PyTorch's cells run their
        # products (``kind`` ONEDNN: oneDNN's low-precision LSTM), as nn.RNNBase's.
        def impl(xv: Any, h0v: Any, c0v: Any, ws: list[list[Any]]) -> Any:
            return _run_layers(kind, xv, h0v, c0v, ws, num_layers, dirs, lengths, masks, low)

        out, h, c = op("MkldnnRnnLayer" if mkldnn else "Stack", impl, xt, h0t, c0t, wt)
        if mkldnn:
            # PyTorch's oneDNN LSTM stacks the layers' final states itself.
            from funcgrad.torch._functions import stack  # noqa: PLC0415

            h, c = stack(h.unbind(0)), stack(c.unbind(0))
        return out, h, c

    if mkldnn and lengths is None:
        # oneDNN's layer (``mkldnn_rnn_layer``, on autocast's lists) runs a padded LSTM.
        return cast(tuple[Any, Any, Any],
                    _onednn_lstm(x, h0, c0, [t for w in weights for t in w], layers))
    return layers(x, h0, c0, weights, mode, _autocast_low(x))


def _finish(out: Any, bidirectional: builtins.bool) -> Any:
    # PyTorch's last step joins the two directions (CatBackward0) or stacks the steps.
    if bidirectional:
        from funcgrad.torch._functions import cat  # noqa: PLC0415

        return cat(out.chunk(2, -1), -1)
    return out


def _packed(mode: str, data: Tensor, batch_sizes: Tensor, h0: Any, c0: Any,
            params: Sequence[Tensor], has_biases: builtins.bool, num_layers: builtins.int,
            dropout: builtins.float, train: builtins.bool, bidirectional: builtins.bool
            ) -> tuple[Any, Any, Any]:
    """The packed overload: ``data`` holds step after step, ``batch_sizes[t]`` rows each
    (sequences sorted by decreasing length)."""
    from funcgrad.torch._functions import cat  # noqa: PLC0415
    from funcgrad.torch.nn.utils.rnn import PackedSequence, pad_packed_sequence  # noqa: PLC0415

    sizes = batch_sizes.detach()._host().astype(np.int64)
    x, lens = pad_packed_sequence(PackedSequence(data, batch_sizes, None, None))
    lengths = lens._host().astype(np.int64)
    out, h, c = _run(mode, x, h0, c0, params, has_biases, num_layers, dropout, train,
                     bidirectional, lengths)
    rows = cat([out[t, :builtins.int(n)] for t, n in enumerate(sizes)])
    return rows, h, c


def _swap01(v: Any) -> Any:
    import funcgrad.numpy as fnp  # noqa: PLC0415

    return fnp.swapaxes(v, 0, 1)


def _is_packed_call(args: Sequence[Any]) -> builtins.bool:
    # The packed overload has the weights fourth; the padded one has ``has_biases`` there.
    return len(args) > 3 and isinstance(args[3], (list, tuple))


_PADDED = ("input", "hx", "params", "has_biases", "num_layers", "dropout", "train",
           "bidirectional", "batch_first")
_PACKED = ("data", "batch_sizes", "hx", "params", "has_biases", "num_layers", "dropout",
           "train", "bidirectional")


def _bind(name: str, args: Sequence[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    names = _PACKED if _is_packed_call(args) or "batch_sizes" in kwargs else _PADDED
    if len(args) > len(names):
        raise TypeError(f"{name}() takes {len(names)} positional arguments but {len(args)} "
                        "were given")
    bound = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names or k in bound:
            raise TypeError(f"{name}() got an unexpected keyword argument '{k}'")
        bound[k] = v
    missing = [n for n in names if n not in bound]
    if missing:
        raise TypeError(f"{name}() missing required argument '{missing[0]}'")
    return bound


def _call(mode: str, name: str, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
    b = _bind(name, args, kwargs)
    lstm = mode == "LSTM"
    hx = b["hx"]
    if lstm:
        if not isinstance(hx, (list, tuple)) or len(hx) != 2:
            raise RuntimeError("lstm expects two hidden states")
        h0, c0 = hx
    else:
        h0, c0 = hx, None
    rest = (b["params"], b["has_biases"], b["num_layers"], b["dropout"], b["train"],
            b["bidirectional"])
    if "batch_sizes" in b:
        out, h, c = _packed(mode, b["data"], b["batch_sizes"], h0, c0, *rest)
    else:
        x = b["input"]
        if b["batch_first"]:
            x = x.transpose(0, 1)
        if x.dim() != 3:
            if x.dim() != 2 or h0.dim() not in (2, 3):
                nd = builtins.max(x.dim(), 1)
                raise IndexError(f"Dimension out of range (expected to be in range of "
                                 f"[{-nd}, {nd - 1}], but got 2)")
            # One sequence: each step's input vector meets every row of the hidden state.
            flat = h0.dim() == 2
            rows = 1 if flat else builtins.int(h0.shape[1])
            x = x.unsqueeze(1).expand(x.shape[0], rows, x.shape[1])
            if flat:
                h0 = h0.unsqueeze(1)
                c0 = None if c0 is None else c0.unsqueeze(1)
            out, h, c = _run(mode, x, h0, c0, *rest, None)
            out = _finish(out, b["bidirectional"])
            if flat:
                out, h = out.squeeze(1), h.squeeze(1)
                c = None if c is None else c.squeeze(1)
            return (out, h, c) if lstm else (out, h)
        out, h, c = _run(mode, x, h0, c0, *rest, None)
        out = _finish(out, b["bidirectional"])
        if b["batch_first"]:
            # PyTorch turns the LSTM's output with ``transpose``, the others' in place.
            out = out.transpose(0, 1) if lstm else _view_op(
                "Transpose:1", lambda v: _swap01(v), out)
    return (out, h, c) if lstm else (out, h)


def lstm(*args: Any, **kwargs: Any) -> tuple[Tensor, Tensor, Tensor]:
    """``(output, h_n, c_n)`` of a multi-layer LSTM: ``lstm(input, (h0, c0), params,
    has_biases, num_layers, dropout, train, bidirectional, batch_first)``, or packed:
    ``lstm(data, batch_sizes, (h0, c0), params, has_biases, num_layers, dropout, train,
    bidirectional)``.

    >>> import funcgrad.torch as torch
    >>> w = [torch.zeros(4, 1), torch.zeros(4, 1)]
    >>> out, h, c = torch.lstm(torch.ones(2, 1, 1), (torch.zeros(1, 1, 1), torch.ones(1, 1, 1)),
    ...                        w, False, 1, 0.0, False, False, False)
    >>> c.flatten()
    tensor([0.2500])
    """
    return _call("LSTM", "lstm", args, kwargs)


def gru(*args: Any, **kwargs: Any) -> tuple[Tensor, Tensor]:
    """``(output, h_n)`` of a multi-layer GRU: ``gru(input, hx, params, has_biases,
    num_layers, dropout, train, bidirectional, batch_first)``, or packed: ``gru(data,
    batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional)``.

    >>> import funcgrad.torch as torch
    >>> w = [torch.zeros(3, 1), torch.zeros(3, 1)]
    >>> out, h = torch.gru(torch.ones(2, 1, 1), torch.ones(1, 1, 1), w, False, 1, 0.0, False,
    ...                    False, False)
    >>> h.flatten()
    tensor([0.2500])
    """
    return _call("GRU", "gru", args, kwargs)


def rnn_tanh(*args: Any, **kwargs: Any) -> tuple[Tensor, Tensor]:
    """``(output, h_n)`` of a multi-layer Elman RNN with ``tanh``, arguments as ``gru``.

    >>> import funcgrad.torch as torch
    >>> out, h = torch.rnn_tanh(torch.ones(2, 1, 1), torch.zeros(1, 1, 1),
    ...                         [torch.ones(1, 1), torch.zeros(1, 1)], False, 1, 0.0, False,
    ...                         False, False)
    >>> h.flatten()
    tensor([0.7616])
    """
    return _call("RNN_TANH", "rnn_tanh", args, kwargs)


def rnn_relu(*args: Any, **kwargs: Any) -> tuple[Tensor, Tensor]:
    """``(output, h_n)`` of a multi-layer Elman RNN with ReLU, arguments as ``gru``.

    >>> import funcgrad.torch as torch
    >>> out, h = torch.rnn_relu(torch.ones(2, 1, 1), torch.zeros(1, 1, 1),
    ...                         [torch.ones(1, 1), torch.ones(1, 1)], False, 1, 0.0, False,
    ...                         False, False)
    >>> h.flatten()
    tensor([2.])
    """
    return _call("RNN_RELU", "rnn_relu", args, kwargs)
