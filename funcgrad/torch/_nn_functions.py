"""The neural-network operations PyTorch also has at the top level of ``torch``: the
in-place activations and dropouts (``torch.celu_``, ``torch.dropout_``...), the ``native_*``
normalizations that also return their statistics, ``convolution``, ``constant_pad_nd``,
the recurrent cells (``lstm_cell``...), the deprecated ``frobenius_norm``/``nuclear_norm``,
``binomial`` and ``histogramdd``. Each reuses ``torch.nn.functional``'s operation.

>>> import funcgrad.torch as torch
>>> x = torch.tensor([-1.0, 2.0])
>>> torch.threshold_(x, 0.0, 5.0) is x, x
(True, tensor([5., 2.]))
"""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from funcgrad.torch import _dtypes as D
from funcgrad.torch._gamma_draws import sample_dirichlet, standard_gamma
from funcgrad.torch._grad_mode import no_grad
from funcgrad.torch._tensor import Tensor, apply_op

__all__ = [
    "_sample_dirichlet", "_standard_gamma", "alpha_dropout_", "binomial", "celu_",
    "constant_pad_nd", "convolution", "dropout_",
    "feature_alpha_dropout_", "feature_dropout", "feature_dropout_", "frobenius_norm",
    "gru_cell", "histogramdd", "lstm_cell", "native_batch_norm", "native_dropout",
    "native_group_norm", "native_layer_norm", "nuclear_norm", "rnn_relu_cell",
    "rnn_tanh_cell", "rrelu_", "selu_", "threshold_",
]


def _F() -> Any:
    import funcgrad.torch.nn.functional as F  # noqa: PLC0415

    return F


# ------------------------------------------------------------ in-place activations


def celu_(input: Tensor, alpha: builtins.float = 1.0) -> Tensor:  # noqa: A002
    """``celu`` written into ``input``.

    >>> import funcgrad.torch as torch
    >>> torch.celu_(torch.tensor([-1.0, 1.0]))
    tensor([-0.6321,  1.0000])
    """
    return _F().celu_(input, alpha)


def selu_(input: Tensor) -> Tensor:  # noqa: A002
    """``selu`` written into ``input``.

    >>> import funcgrad.torch as torch
    >>> torch.selu_(torch.tensor([0.0, 1.0]))
    tensor([0.0000, 1.0507])
    """
    return _F().selu_(input)


def threshold_(input: Tensor, threshold: Any, value: Any) -> Tensor:  # noqa: A002
    """``input`` where it exceeds ``threshold``, else ``value``, written into ``input``.

    >>> import funcgrad.torch as torch
    >>> torch.threshold_(torch.tensor([0.5, 2.0]), 1.0, 0.0)
    tensor([0., 2.])
    """
    return _F().threshold_(input, threshold, value)


def rrelu_(input: Tensor, lower: builtins.float = 1.0 / 8,  # noqa: A002
           upper: builtins.float = 1.0 / 3, training: builtins.bool = False,
           generator: Any = None) -> Tensor:
    """``rrelu`` written into ``input`` (slope ``(lower + upper) / 2`` unless ``training``).

    >>> import funcgrad.torch as torch
    >>> torch.rrelu_(torch.tensor([-3.0, 1.0]), 0.25, 0.75)
    tensor([-1.5000,  1.0000])
    """
    return _F().rrelu_(input, lower, upper, training)


def dropout_(input: Tensor, p: builtins.float, train: builtins.bool) -> Tensor:  # noqa: A002
    """``dropout`` written into ``input``.

    >>> import funcgrad.torch as torch
    >>> torch.dropout_(torch.ones(2), 0.5, False)
    tensor([1., 1.])
    """
    return _F().dropout(input, p, train, inplace=True)


def alpha_dropout_(input: Tensor, p: builtins.float, train: builtins.bool) -> Tensor:  # noqa: A002
    """``alpha_dropout`` written into ``input``.

    >>> import funcgrad.torch as torch
    >>> torch.alpha_dropout_(torch.ones(2), 0.5, False)
    tensor([1., 1.])
    """
    return _F().alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout_(input: Tensor, p: builtins.float,  # noqa: A002
                           train: builtins.bool) -> Tensor:
    """``feature_alpha_dropout`` written into ``input``.

    >>> import funcgrad.torch as torch
    >>> torch.feature_alpha_dropout_(torch.ones(1, 2), 0.5, False)
    tensor([[1., 1.]])
    """
    return _F().feature_alpha_dropout(input, p, train, inplace=True)


def feature_dropout(input: Tensor, p: builtins.float, train: builtins.bool) -> Tensor:  # noqa: A002
    """Dropout of whole channels (axis 1) of ``input``, the rest scaled by ``1 / (1 - p)``.

    >>> import funcgrad.torch as torch
    >>> torch.feature_dropout(torch.ones(1, 2, 2), 0.5, False)
    tensor([[[1., 1.],
             [1., 1.]]])
    """
    from funcgrad.torch.nn.dropout import _feature  # noqa: PLC0415

    return _feature(input, p, train, False, False)


def feature_dropout_(input: Tensor, p: builtins.float, train: builtins.bool) -> Tensor:  # noqa: A002
    """``feature_dropout`` written into ``input``.

    >>> import funcgrad.torch as torch
    >>> torch.feature_dropout_(torch.ones(1, 2), 0.5, False)
    tensor([[1., 1.]])
    """
    from funcgrad.torch.nn.dropout import _feature  # noqa: PLC0415

    return _feature(input, p, train, True, False)


def native_dropout(input: Tensor, p: builtins.float,  # noqa: A002
                   train: builtins.bool | None) -> tuple[Tensor, Tensor]:
    """``(output, mask)``: dropout's result and the boolean mask of kept elements (all
    kept when ``train`` is False).

    >>> import funcgrad.torch as torch
    >>> torch.native_dropout(torch.ones(2), 0.5, False)
    (tensor([1., 1.]), tensor([True, True]))
    """
    from funcgrad.torch.nn._apply import keep_mask, on_device_of  # noqa: PLC0415

    shape = tuple(input.shape)
    if train is False:
        keep = np.ones(shape, bool)
        return input.clone(), Tensor._from_data(on_device_of(keep, input))
    keep = np.asarray(keep_mask(shape, p, input)) if p < 1 else np.zeros(shape, bool)
    scale = keep * (0.0 if p >= 1 else 1.0 / (1.0 - p))
    s = on_device_of(scale.astype(input.dtype.np), input)
    out = apply_op("NativeDropout", lambda x: x * s, input)
    return out, Tensor._from_data(on_device_of(keep, input))


# ------------------------------------------------------------------ layers


def constant_pad_nd(input: Tensor, pad: Sequence[builtins.int],  # noqa: A002
                    value: Any = 0) -> Tensor:
    """``input`` padded with ``value`` (``pad`` as ``F.pad``'s, last dimension first).

    >>> import funcgrad.torch as torch
    >>> torch.constant_pad_nd(torch.ones(2), [1, 2], 0.5)
    tensor([0.5000, 1.0000, 1.0000, 0.5000, 0.5000])
    """
    return _F().pad(input, list(pad), "constant", value)


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None,  # noqa: A002
                stride: Sequence[builtins.int], padding: Sequence[builtins.int],
                dilation: Sequence[builtins.int], transposed: builtins.bool,
                output_padding: Sequence[builtins.int], groups: builtins.int) -> Tensor:
    """The N-d convolution (or, when ``transposed``, transposed convolution) that
    ``weight``'s rank selects, as ``F.conv{N}d`` / ``F.conv_transpose{N}d``.

    >>> import funcgrad.torch as torch
    >>> torch.convolution(torch.ones(1, 1, 3), torch.ones(1, 1, 2), None, [1], [0], [1],
    ...                   False, [0], 1)
    tensor([[[2., 2.]]])
    """
    F = _F()
    n = weight.ndim - 2
    if transposed:
        fn = getattr(F, f"conv_transpose{n}d")
        return fn(input, weight, bias, tuple(stride), tuple(padding),
                  tuple(output_padding), groups, tuple(dilation))
    fn = getattr(F, f"conv{n}d")
    return fn(input, weight, bias, tuple(stride), tuple(padding),
              tuple(dilation), groups)


def _stats(x: Tensor, dims: tuple[builtins.int, ...], eps: builtins.float
           ) -> tuple[Tensor, Tensor]:
    """Mean and ``1 / sqrt(biased var + eps)`` over ``dims`` (kept), not differentiable."""
    with no_grad():
        xs: Any = x.double() if x.dtype is D.float64 else x.float()
        mean = xs.mean(dims, keepdim=True)
        var = ((xs - mean) ** 2).mean(dims, keepdim=True)
        rstd = (var + eps).rsqrt()
    dt = x.dtype if x.dtype in (D.float32, D.float64) else D.float32
    return mean.to(dt), rstd.to(dt)


def native_layer_norm(input: Tensor, normalized_shape: Sequence[builtins.int],  # noqa: A002
                      weight: Tensor | None, bias: Tensor | None,
                      eps: builtins.float) -> tuple[Tensor, Tensor, Tensor]:
    """``(layer_norm(input), mean, rstd)``; the statistics keep the normalized dimensions
    as size 1.

    >>> import funcgrad.torch as torch
    >>> out, mean, rstd = torch.native_layer_norm(torch.tensor([[1.0, 3.0]]), [2], None,
    ...                                           None, 0.0)
    >>> out, mean, rstd
    (tensor([[-1.,  1.]]), tensor([[2.]]), tensor([[1.]]))
    """
    out = _F().layer_norm(input, list(normalized_shape), weight, bias, eps)
    k = len(normalized_shape)
    mean, rstd = _stats(input, tuple(builtins.range(input.ndim - k, input.ndim)), eps)
    return out, mean, rstd


def native_batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,  # noqa: A002
                      running_mean: Tensor | None, running_var: Tensor | None,
                      training: builtins.bool, momentum: builtins.float,
                      eps: builtins.float) -> tuple[Tensor, Tensor, Tensor]:
    """``(batch_norm(input), save_mean, save_invstd)``: the batch's per-channel mean and
    ``1 / sqrt(var + eps)`` when ``training`` (which also updates the running statistics),
    empty tensors otherwise.

    >>> import funcgrad.torch as torch
    >>> out, m, r = torch.native_batch_norm(torch.tensor([[1.0], [3.0]]), None, None,
    ...                                     None, None, True, 0.1, 0.0)
    >>> out, m, r
    (tensor([[-1.],
            [ 1.]]), tensor([2.]), tensor([1.]))
    """
    dims = (0, *builtins.range(2, input.ndim))
    if training:
        mean, rstd = _stats(input, dims, eps)
        mean, rstd = mean.reshape(-1), rstd.reshape(-1)
    else:
        mean = rstd = Tensor._from_data(np.zeros(0, input.dtype.np)).to(input.device)
    out = _F().batch_norm(input, running_mean, running_var, weight, bias, training,
                          momentum, eps)
    return out, mean, rstd


def native_group_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,  # noqa: A002
                      N: builtins.int, C: builtins.int, HxW: builtins.int,  # noqa: N803
                      group: builtins.int, eps: builtins.float
                      ) -> tuple[Tensor, Tensor, Tensor]:
    """``(group_norm(input), mean, rstd)`` with statistics of shape ``(N, group)``.

    >>> import funcgrad.torch as torch
    >>> out, m, r = torch.native_group_norm(torch.tensor([[1.0, 3.0]]), None, None, 1, 2,
    ...                                     1, 1, 0.0)
    >>> m, r
    (tensor([[2.]]), tensor([[1.]]))
    """
    out = _F().group_norm(input, group, weight, bias, eps)
    mean, rstd = _stats(input.reshape(N, group, -1), (2,), eps)
    return out, mean.reshape(N, group), rstd.reshape(N, group)


# ------------------------------------------------------------------ recurrent cells


def _gates(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,  # noqa: A002
           b_ih: Tensor | None, b_hh: Tensor | None) -> tuple[Any, Any]:
    F = _F()
    return F.linear(input, w_ih, b_ih), F.linear(hx, w_hh, b_hh)


def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,  # noqa: A002
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """One step of an Elman RNN: ``tanh(input @ w_ih.T + b_ih + hx @ w_hh.T + b_hh)``.

    >>> import funcgrad.torch as torch
    >>> torch.rnn_tanh_cell(torch.zeros(1, 2), torch.zeros(1, 1), torch.ones(1, 2),
    ...                     torch.ones(1, 1))
    tensor([[0.]])
    """
    gi, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return (gi + gh).tanh()


def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,  # noqa: A002
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """One step of an Elman RNN with ReLU.

    >>> import funcgrad.torch as torch
    >>> torch.rnn_relu_cell(torch.ones(1, 2), torch.zeros(1, 1), -torch.ones(1, 2),
    ...                     torch.ones(1, 1))
    tensor([[0.]])
    """
    gi, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return (gi + gh).relu()


def lstm_cell(input: Tensor, hx: Sequence[Tensor], w_ih: Tensor, w_hh: Tensor,  # noqa: A002
              b_ih: Tensor | None = None, b_hh: Tensor | None = None
              ) -> tuple[Tensor, Tensor]:
    """One LSTM step: ``(h', c')`` from ``hx = (h, c)``; gates in PyTorch's order
    (input, forget, cell, output).

    >>> import funcgrad.torch as torch
    >>> h, c = torch.lstm_cell(torch.zeros(1, 1), (torch.zeros(1, 1), torch.ones(1, 1)),
    ...                        torch.zeros(4, 1), torch.zeros(4, 1))
    >>> c
    tensor([[0.5000]])
    """
    if len(hx) != 2:
        raise RuntimeError(f"lstm_cell: Expected hx to have 2 elements, but got {len(hx)}")
    h, c = hx
    gi, gh = _gates(input, h, w_ih, w_hh, b_ih, b_hh)
    i, f, g, o = (gi + gh).chunk(4, 1)
    c = cast(Any, c)
    cy = f.sigmoid() * c + i.sigmoid() * g.tanh()
    hy = o.sigmoid() * cy.tanh()
    return hy, cy


def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,  # noqa: A002
             b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """One GRU step: ``(hx - n) * z + n`` with PyTorch's reset, update and new gates.

    >>> import funcgrad.torch as torch
    >>> torch.gru_cell(torch.zeros(1, 1), torch.ones(1, 1), torch.zeros(3, 1),
    ...                torch.zeros(3, 1))
    tensor([[0.5000]])
    """
    gi, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    i_r, i_z, i_n = gi.chunk(3, 1)
    h_r, h_z, h_n = gh.chunk(3, 1)
    r = (i_r + h_r).sigmoid()
    z = (i_z + h_z).sigmoid()
    n = (i_n + h_n * r).tanh()
    return cast(Tensor, (cast(Any, hx) - n) * z + n)


# ---------------------------------------------------------- norms and sampling


FROBENIUS_DEPRECATED = (
    "at::frobenius_norm is deprecated and it is just left for JIT compatibility. It will be "
    "removed in a future PyTorch release. Please use `linalg.vector_norm(A, 2., dim, "
    "keepdim)` instead")
NUCLEAR_DEPRECATED = (
    "at::nuclear_norm is deprecated and it is just left for JIT compatibility. It will be "
    "removed in a future PyTorch release. Please use `linalg.matrix_norm(A, 'nuc', dim, "
    "keepdim)` instead")
_warned: set[str] = set()


def _warn_once(message: str) -> None:
    # PyTorch's TORCH_WARN_ONCE: the first call in the process warns, later ones do not.
    if message not in _warned:
        _warned.add(message)
        warnings.warn(message, UserWarning, stacklevel=3)


def frobenius_norm(input: Tensor, dim: Sequence[builtins.int],  # noqa: A002
                   keepdim: builtins.bool = False) -> Tensor:
    """Deprecated: ``linalg.vector_norm(input, 2, dim, keepdim)``.

    >>> import warnings, funcgrad.torch as torch
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     torch.frobenius_norm(torch.tensor([[3.0, 4.0]]), [0, 1])
    tensor(5.)
    """
    _warn_once(FROBENIUS_DEPRECATED)
    dims = tuple(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions "
                           "instead.")
    from funcgrad.torch import linalg  # noqa: PLC0415

    return linalg.vector_norm(input, 2, dims or None, keepdim)


def nuclear_norm(input: Tensor, dim: Any = None, keepdim: builtins.bool = False  # noqa: A002
                 ) -> Tensor:
    """Deprecated: ``linalg.matrix_norm(input, "nuc", dim, keepdim)`` (``dim`` defaults to
    the last two dimensions; ``nuclear_norm(input, keepdim)`` is accepted too).

    >>> import warnings, funcgrad.torch as torch
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     torch.nuclear_norm(torch.tensor([[3.0, 0.0], [0.0, 4.0]]))
    tensor(7.)
    """
    _warn_once(NUCLEAR_DEPRECATED)
    if isinstance(dim, builtins.bool):
        dim, keepdim = None, dim
    from funcgrad.torch import linalg  # noqa: PLC0415

    dims = (-2, -1) if dim is None else tuple(dim)
    if len(dims) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{' '.join(str(d) for d in dims)}")
    a, b = (d % input.ndim for d in dims)
    # The sum of the singular values of the matrices over (a, b).
    moved: Any = cast(Any, input).movedim((a, b), (-2, -1))
    out: Any = linalg.svdvals(moved).sum(-1)
    if keepdim:
        out = out.unsqueeze(min(a, b)).unsqueeze(max(a, b))
    return cast(Tensor, out)


_SCALAR_NAMES = {"float64": "Double", "float32": "Float", "float16": "Half",
                 "bfloat16": "BFloat16", "int64": "Long", "int32": "Int", "int16": "Short",
                 "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def binomial(count: Tensor, prob: Tensor, generator: Any = None) -> Tensor:
    """Samples of Binomial(``count``, ``prob``), elementwise (float inputs; no gradient).

    >>> import funcgrad.torch as torch
    >>> torch.binomial(torch.tensor([4.0, 0.0]), torch.tensor([1.0, 0.5]))
    tensor([4., 0.])
    """
    if not count.dtype.is_floating_point:
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                         f"{_SCALAR_NAMES.get(count.dtype.name, count.dtype.name)}")
    from funcgrad.torch._random import rng  # noqa: PLC0415

    if not prob.dtype.is_floating_point:
        raise ValueError(f"binomial only supports floating-point dtypes for prob, got: "
                         f"{_SCALAR_NAMES.get(prob.dtype.name, prob.dtype.name)}")
    _float_or_double(count, "binomial_cpu")
    g = generator._rng if generator is not None else rng()
    # PyTorch's CPU kernel (sample_binomial: inversion or BTRS) on its stream, computed
    # in count's dtype, element by element.
    draws = g.torch_binomial(np.asarray(count._host()), np.asarray(prob._host()),
                             count.dtype.np)
    return Tensor._from_data(np.asarray(draws)).to(count.device)


def _float_or_double(t: Tensor, kernel: str) -> None:
    """ATen's dispatch over float and double only (``AT_DISPATCH_FLOATING_TYPES``)."""
    if t.dtype.name not in ("float32", "float64"):
        raise NotImplementedError(f'"{kernel}" not implemented for '
                           f"'{_SCALAR_NAMES.get(t.dtype.name, t.dtype.name)}'")


def _standard_gamma(input: Tensor, generator: Any = None) -> Tensor:  # noqa: A002
    """Gamma(``input``, 1) samples as PyTorch's CPU kernel draws them (float and double;
    differentiable in ``input``).

    >>> import funcgrad.torch as torch
    >>> _ = torch.manual_seed(0)
    >>> torch._standard_gamma(torch.tensor([0.5, 2.0], dtype=torch.float64))
    tensor([0.0008, 0.6315], dtype=torch.float64)
    """
    _float_or_double(input, "gamma_cpu")
    return cast(Tensor, standard_gamma(input, generator))


def _sample_dirichlet(input: Tensor, generator: Any = None) -> Tensor:  # noqa: A002
    """Dirichlet samples, one per row of ``input`` (the concentrations, last dimension the
    categories), as PyTorch's CPU kernel draws them.

    >>> import funcgrad.torch as torch
    >>> y = torch._sample_dirichlet(torch.ones(2, 3))
    >>> y.shape, torch.allclose(y.sum(-1), torch.ones(2))
    (torch.Size([2, 3]), True)
    """
    _float_or_double(input, "dirichlet")
    return cast(Tensor, sample_dirichlet(input, generator))


def histogramdd(input: Tensor, bins: Any, *, range: Sequence[builtins.float] | None = None,  # noqa: A002
                weight: Tensor | None = None, density: builtins.bool = False) -> Any:
    """The D-dimensional histogram of the points ``input[..., :D]``: ``(hist,
    bin_edges)`` with ``bins`` an int, one int per dimension, or the edges as tensors;
    ``range`` flat ``[min0, max0, min1, max1, ...]``.

    >>> import funcgrad.torch as torch
    >>> h = torch.histogramdd(torch.tensor([[0.0, 0.0], [1.0, 1.0]]), bins=2)
    >>> h.hist
    tensor([[1., 0.],
            [0., 1.]])
    """
    from funcgrad.torch._return_types import named_result  # noqa: PLC0415

    d = input.shape[-1]
    pts = np.asarray(input._host(), np.float64).reshape(-1, d)
    if isinstance(bins, (builtins.list, builtins.tuple)) and bins and isinstance(bins[0],
                                                                                 Tensor):
        np_bins: Any = [np.asarray(b._host(), np.float64) for b in bins]
    elif isinstance(bins, (builtins.list, builtins.tuple)):
        np_bins = [builtins.int(b) for b in bins]
    else:
        np_bins = builtins.int(bins)
    rng_pairs = None if range is None else [(builtins.float(range[2 * i]),
                                             builtins.float(range[2 * i + 1]))
                                            for i in builtins.range(d)]
    w = None if weight is None else np.asarray(weight._host(), np.float64).reshape(-1)
    hist, edges = np.histogramdd(pts, np_bins, range=rng_pairs, weights=w, density=density)
    dt = input.dtype.np
    return named_result("histogramdd", ("hist", "bin_edges"), (
        Tensor._from_data(hist.astype(dt)),
        builtins.tuple(Tensor._from_data(e.astype(dt)) for e in edges)))
