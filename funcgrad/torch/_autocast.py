"""Autocast's casting rules: the dtype each PyTorch operation runs in inside a
``torch.autocast`` region, per device type, as PyTorch's op lists give it.

An operation takes part by being wrapped once, where it is defined, with
:func:`autocast_op` (or :func:`autocast_namespace` for a module's worth of functions).
Outside autocast regions the wrapper costs one global read. Inside one it casts the
operation's eligible tensor arguments (floating point, not float64, on the region's device
type) and runs the operation with autocast suspended, so the operations it is made of are
not cast again (PyTorch excludes its autocast dispatch key the same way).

>>> import funcgrad.torch as torch
>>> a = torch.ones(2, 2)
>>> with torch.autocast("cpu"):
...     (a @ a).dtype, (a @ a).sum().dtype
(torch.bfloat16, torch.bfloat16)
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Callable, Hashable, Iterable, MutableMapping
from typing import Any, TypeVar

from funcgrad.config import config
from funcgrad.torch import _dtypes as D

LOWER = "lower"          # cast to the region's dtype (float16/bfloat16)
FP32 = "fp32"            # cast to float32
FP32_OPT = "fp32_opt"    # float32 unless the call names a dtype (sum, softmax, cumsum...)
PROMOTE = "promote"      # the widest eligible type among the arguments
BANNED = "banned"        # refused inside a region

_BCE_BANNED = (
    "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
    "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
    "In this case, combine the two layers using "
    "torch.nn.functional.binary_cross_entropy_with_logits\n"
    "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
    "safe to autocast.")


def _table(**groups: str) -> dict[str, str]:
    return {name: policy for policy, names in groups.items() for name in names.split()}


# PyTorch 2.13's CUDA lists (aten/src/ATen/autocast_mode.h). ``cross_entropy`` is a
# composite there (log_softmax in float32, then nll_loss in float32), one operation here;
# so is ``multi_head_attention_forward`` (its projections and products in float16).
CUDA: dict[str, str] = _table(
    lower="conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d prelu "
          "addmm addmv addr matmul einsum mm mv linalg_vecdot linear addbmm baddbmm bmm "
          "chain_matmul linalg_multi_dot scaled_dot_product_attention lstm_cell gru_cell "
          "rnn_tanh_cell rnn_relu_cell multi_head_attention_forward",
    fp32="acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt sinh tan "
         "pow softplus layer_norm group_norm norm cosine_similarity poisson_nll_loss "
         "cosine_embedding_loss nll_loss hinge_embedding_loss kl_div l1_loss smooth_l1_loss "
         "huber_loss mse_loss margin_ranking_loss multilabel_margin_loss soft_margin_loss "
         "triplet_margin_loss multi_margin_loss binary_cross_entropy_with_logits dist pdist "
         "cdist renorm logsumexp interpolate cross_entropy",
    fp32_opt="prod softmax log_softmax cumprod cumsum linalg_vector_norm linalg_matrix_norm "
             "sum",
    promote="addcdiv addcmul atan2 bilinear cross linalg_cross dot vdot grid_sample "
            "tensordot scatter_add",
    banned="binary_cross_entropy",
)

# PyTorch 2.13's CPU lists (aten/src/ATen/autocast_mode.cpp), plus the composites that
# reach a listed product inside PyTorch (einsum, tensordot, inner, multi_dot, chain_matmul,
# vecdot, matrix_power and cov run on its bmm/mm; RNNCell and multi-head attention on
# linear). LSTMCell and GRUCell are composites there too, whose products alone run in
# bfloat16 (their gates then in the state's dtype): not cast here (docs/sharp_bits.md).
CPU: dict[str, str] = _table(
    lower="conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d prelu "
          "bmm mm baddbmm addmm addbmm linear matmul scaled_dot_product_attention einsum "
          "tensordot inner linalg_multi_dot chain_matmul linalg_vecdot linalg_matrix_power "
          "matrix_power cov rnn_tanh_cell rnn_relu_cell multi_head_attention_forward "
          "mkldnn_rnn_layer",
    fp32="prod quantile nanquantile cdist trace cholesky cholesky_inverse cholesky_solve "
         "inverse pinverse max_pool3d adaptive_avg_pool3d adaptive_max_pool3d avg_pool3d "
         "grid_sample mse_loss cosine_embedding_loss nll_loss hinge_embedding_loss "
         "poisson_nll_loss smooth_l1_loss cross_entropy l1_loss huber_loss "
         "margin_ranking_loss soft_margin_loss triplet_margin_loss multi_margin_loss ctc_loss "
         "kl_div multilabel_margin_loss multilabel_soft_margin_loss "
         "binary_cross_entropy_with_logits binary_cross_entropy polar "
         "fft_fft fft_ifft fft_fft2 fft_ifft2 fft_fftn fft_ifftn fft_rfft fft_irfft "
         "fft_rfft2 fft_irfft2 fft_rfftn fft_irfftn fft_hfft fft_ihfft "
         "linalg_cond linalg_matrix_rank linalg_solve linalg_cholesky linalg_svdvals "
         "linalg_eigvals linalg_eigvalsh linalg_inv linalg_householder_product "
         "linalg_tensorinv linalg_tensorsolve linalg_qr linalg_cholesky_ex linalg_svd "
         "linalg_eig linalg_eigh linalg_lstsq linalg_inv_ex qr svd triangular_solve",
)

POLICIES: dict[str, dict[str, str]] = {"cuda": CUDA, "cpu": CPU}
# The names some wrapped function carries (the completeness test compares the tables).
WRAPPED: set[str] = set()


class _State(threading.local):
    """PyTorch's autocast state is per thread."""

    def __init__(self) -> None:
        self.enabled = {"cpu": False, "cuda": False}
        self.dtype = {"cpu": D.bfloat16, "cuda": D.float16}
        self.nesting = 0
        self.cache_enabled = True
        self.inside = False  # within an autocast operation: its parts are not cast again
        self.cache: dict[int, tuple[Any, int, Any]] = {}


STATE = _State()
# The Tensor class, registered by funcgrad.torch._tensor (which imports this module).
TENSOR: list[type] = []
# Regions open in any thread (a fast check before the thread-local state is read).
_open = 0


def set_enabled(device_type: str, enabled: bool) -> None:
    global _open  # noqa: PLW0603 - read on every wrapped call: a plain global is cheapest
    was = STATE.enabled[device_type]
    STATE.enabled[device_type] = bool(enabled)
    _open += bool(enabled) - was
    config.open_regions += bool(enabled) - was


def autocast_key() -> Hashable:
    """The autocast state a trace bakes in (its casts): part of the compiled programs' keys
    (``torch.compile``'s guard, ``jit``'s trace context)."""
    if not _open:
        return None
    s = STATE
    return (s.enabled["cpu"], s.enabled["cuda"], s.dtype["cpu"].name, s.dtype["cuda"].name)


config.trace_key_hooks.append(autocast_key)


def device_type_of(t: Any) -> str:
    return "cuda" if type(t._data).__module__.startswith("cupy") else "cpu"


def _eligible(t: Any, device_type: str) -> bool:
    dt = t.dtype
    return dt.is_floating_point and dt is not D.float64 and device_type_of(t) == device_type


def _cast(t: Any, to: D.dtype, device_type: str) -> Any:
    if not _eligible(t, device_type) or t.dtype is to:
        return t
    # PyTorch caches the lower-precision copy of a float32 leaf that requires grad (a
    # weight) for the region; here only while grad is on, so a copy made under no_grad
    # (no graph) is never reused where a gradient must flow through it, and only eagerly:
    # a copy made while torch.compile or a transformation traces is a traced value, and
    # one made eagerly would be a stale constant inside a trace.
    from funcgrad.core import EvalTrace, current_trace  # noqa: PLC0415
    from funcgrad.torch._grad_mode import is_grad_enabled  # noqa: PLC0415

    cache = STATE.cache
    if STATE.cache_enabled and to is STATE.dtype[device_type] and t.dtype is D.float32 \
            and t.requires_grad and t.grad_fn is None and is_grad_enabled() and \
            type(current_trace()) is EvalTrace:
        hit = cache.get(id(t))
        if hit is not None and hit[0]() is t and hit[1] == t._vc[0]:
            return hit[2]
        out = t.to(to)
        cache[id(t)] = (weakref.ref(t), t._vc[0], out)
        return out
    return t.to(to)


def _tensors(args: Iterable[Any]) -> Iterable[Any]:
    Tensor = TENSOR[0]  # noqa: N806
    for a in args:
        if isinstance(a, Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from (x for x in a if isinstance(x, Tensor))


def _map(args: tuple[Any, ...], kwargs: dict[str, Any], f: Callable[[Any], Any]
         ) -> tuple[tuple[Any, ...], dict[str, Any]]:
    Tensor = TENSOR[0]  # noqa: N806

    def one(a: Any) -> Any:
        if isinstance(a, Tensor):
            return f(a)
        if isinstance(a, (list, tuple)) and any(isinstance(x, Tensor) for x in a):
            return type(a)(f(x) if isinstance(x, Tensor) else x for x in a)
        return a

    return tuple(one(a) for a in args), {k: one(v) for k, v in kwargs.items()}


def _promoted(tensors: Iterable[Any], device_type: str) -> D.dtype:
    out = STATE.dtype[device_type]
    for t in tensors:
        if _eligible(t, device_type) and t.dtype is D.float32:
            return D.float32
    return out


def cast_arguments(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
                   ) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
    """The arguments ``name`` runs on in the current region; None where it is not cast."""
    tensors = list(_tensors((*args, *kwargs.values())))
    if not tensors:
        return None
    device_type = "cuda" if any(device_type_of(t) == "cuda" for t in tensors) else "cpu"
    if not STATE.enabled[device_type]:
        return None
    policy = POLICIES[device_type].get(name)
    if policy is None:
        return None
    if policy == BANNED:
        raise RuntimeError(_BCE_BANNED)
    if policy == FP32_OPT:
        first = tensors[0]
        if kwargs.get("dtype") is not None or not _eligible(first, device_type):
            return None
        return _map(args, kwargs, lambda t: _cast(t, D.float32, device_type) if t is first
                    else t)
    to = {LOWER: STATE.dtype[device_type], FP32: D.float32}.get(policy) or \
        _promoted(tensors, device_type)
    return _map(args, kwargs, lambda t: _cast(t, to, device_type))


F = TypeVar("F", bound=Callable[..., Any])


def autocast_op(name: str) -> Callable[[F], F]:
    """Wrap an operation so that autocast regions cast its arguments per ``name``'s policy
    (PyTorch's operator name)."""
    if not any(name in table for table in POLICIES.values()):
        raise KeyError(f"{name!r} is in no autocast list")

    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        def op(*args: Any, **kwargs: Any) -> Any:
            if not _open:
                return fn(*args, **kwargs)
            state = STATE
            if state.inside or not (state.enabled["cpu"] or state.enabled["cuda"]):
                return fn(*args, **kwargs)
            cast = cast_arguments(name, args, kwargs)
            if cast is not None:
                args, kwargs = cast
            state.inside = True
            try:
                return fn(*args, **kwargs)
            finally:
                state.inside = False

        op.__autocast_op__ = name  # type: ignore[attr-defined]
        WRAPPED.add(name)
        return op  # type: ignore[return-value]

    return wrap


def autocast_namespace(namespace: MutableMapping[str, Any], prefix: str = "",
                       names: Iterable[str] | None = None) -> None:
    """Wrap each function of ``namespace`` whose ``prefix + name`` is in a list."""
    listed = set(CUDA) | set(CPU)
    for n in list(namespace if names is None else names):
        if prefix + n in listed and callable(namespace[n]) and \
                not hasattr(namespace[n], "__autocast_op__"):
            namespace[n] = autocast_op(prefix + n)(namespace[n])
