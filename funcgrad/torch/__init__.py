"""funcgrad's PyTorch face: ``import funcgrad.torch as torch`` runs PyTorch programs.

Tensors, autograd (``requires_grad``, ``backward``, ``.grad``), ``nn``, ``optim`` and
``func`` behave as PyTorch 2.13's do, on the same primitives and derivative rules as
the JAX face (``import funcgrad as jax``).

>>> import funcgrad.torch as torch
>>> x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
>>> y = (x @ x.T).relu().mean()
>>> y
tensor(13., grad_fn=<MeanBackward0>)
>>> y.backward(); x.grad
tensor([[2., 3.],
        [2., 3.]])
"""

import builtins as _builtins
import sys as _sys

from funcgrad.torch import _dtypes
from funcgrad.torch._anomaly import (
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_anomaly_enabled,
)
from funcgrad.torch._creation import (
    arange,
    as_tensor,
    asarray,
    bernoulli,
    empty,
    empty_like,
    empty_strided,
    eye,
    from_dlpack,
    from_numpy,
    frombuffer,
    full,
    full_like,
    linspace,
    logspace,
    multinomial,
    normal,
    ones,
    ones_like,
    poisson,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    range,
    tensor,
    zeros,
    zeros_like,
)
from funcgrad.torch._device import (  # PyTorch's memory formats
    Size,
    channels_last,
    channels_last_3d,
    contiguous_format,
    device,
    memory_format,
    newaxis,
    preserve_format,
)
from funcgrad.torch._dtypes import (
    bfloat16,
    bool,
    complex64,
    complex128,
    dtype,
    float16,
    float32,
    float64,
    get_default_dtype,
    int8,
    int16,
    int32,
    int64,
    promote_types,
    set_default_dtype,
    uint8,
    uint16,
    uint32,
    uint64,
)
from funcgrad.torch._functions import (
    allclose,
    broadcast_to,
    cat,
    clamp,
    clip,
    concat,
    concatenate,
    einsum,
    equal,
    hstack,
    is_floating_point,
    is_tensor,
    masked_select,
    matmul,
    maximum,
    minimum,
    numel,
    stack,
    vstack,
    where,
)
from funcgrad.torch._grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from funcgrad.torch._random import (
    Generator,
    _default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)
from funcgrad.torch._repr import set_printoptions
from funcgrad.torch._tensor import Tensor

default_generator = _default_generator()

float = float32  # noqa: A001 - PyTorch's aliases
double = float64
half = float16
short = int16
int = int32  # noqa: A001
long = int64
cfloat = complex64
cdouble = complex128
pi = 3.141592653589793
e = 2.718281828459045
inf = _builtins.float("inf")
nan = _builtins.float("nan")


def result_type(tensor1: object, tensor2: object) -> dtype:
    """The dtype PyTorch's promotion gives an operation on the two operands."""
    from funcgrad.torch._tensor import result_dtype  # noqa: PLC0415

    return result_dtype(tensor1, tensor2)


# (_tensor_scatter_ops and _tensor_storage attach Tensor methods of their own on import,
# before the free functions are made from the methods.)
from funcgrad.torch import (  # noqa: E402
    _dynamo,
    _tensor_scatter_ops,
    _tensor_storage,
    accelerator,
    amp,
    autograd,
    backends,
    compiler,
    cpu,
    cuda,
    distributed,
    distributions,
    fft,
    func,
    futures,
    jit,
    linalg,
    multiprocessing,
    nn,
    optim,
    profiler,
    quasirandom,
    random,
    serialization,
    signal,
    sparse,
    special,
    testing,
    utils,
)
from funcgrad.torch._compile import compile  # noqa: E402, A004
from funcgrad.torch._functions import method_functions as _method_functions  # noqa: E402
from funcgrad.torch._pinned import METHODS as _PINNED_METHODS  # noqa: E402
from funcgrad.torch._spectral import istft, stft  # noqa: E402
from funcgrad.torch._tensor_linalg import FUNCTIONS as _LINALG_FUNCTIONS  # noqa: E402
from funcgrad.torch._tensor_math import FUNCTIONS as _MATH_FUNCTIONS  # noqa: E402
from funcgrad.torch._type_info import finfo, iinfo  # noqa: E402
from funcgrad.torch.amp import autocast  # noqa: E402
from funcgrad.torch.amp.autocast_mode import STATE_FUNCTIONS as _AUTOCAST_STATE  # noqa: E402
from funcgrad.torch.jit import run_forked as fork  # noqa: E402
from funcgrad.torch.jit import wait_for as wait  # noqa: E402
from funcgrad.torch.serialization import load, save  # noqa: E402

Tensor.stft = stft  # type: ignore[attr-defined]
Tensor.istft = istft  # type: ignore[attr-defined]
# Sparse COO and CSR tensors (torch.sparse_coo_tensor, Tensor.to_sparse, ...).
from funcgrad.torch._sparse import (  # noqa: E402
    hspmm,
    smm,
    sparse_coo_tensor,
    sparse_csr_tensor,
)
from funcgrad.torch._sparse import sparse_mask as _sparse_mask  # noqa: E402
from funcgrad.torch._sparse import to_sparse as _to_sparse  # noqa: E402
from funcgrad.torch._sparse import to_sparse_csr as _to_sparse_csr  # noqa: E402

Tensor.to_sparse = Tensor.to_sparse_coo = _to_sparse  # type: ignore[attr-defined]
Tensor.sparse_mask = _sparse_mask  # type: ignore[attr-defined]
Tensor.to_sparse_csr = _to_sparse_csr  # type: ignore[attr-defined]
for _name, _method in _PINNED_METHODS.items():
    setattr(Tensor, _name, _method)
globals().update(_LINALG_FUNCTIONS)
globals().update(_AUTOCAST_STATE)
globals().update(_MATH_FUNCTIONS)

_method_functions(globals())

# Householder QR (geqrf/orgqr/ormqr) and more Tensor methods, attached on import; the
# storage classes and the two of those PyTorch also has as functions.
from funcgrad.torch._householder import geqrf, orgqr, ormqr  # noqa: E402
from funcgrad.torch._tensor_more_methods import FUNCTIONS as _MORE_METHOD_FUNCTIONS  # noqa: E402

globals().update(_MORE_METHOD_FUNCTIONS)

# The functions below are defined after the method functions: where a name is also a
# Tensor method (alias_copy...), the dedicated function wins.
from funcgrad.torch._copy_functions import FUNCTIONS as _COPY_FUNCTIONS  # noqa: E402
from funcgrad.torch._device import get_default_device, set_default_device  # noqa: E402
from funcgrad.torch._functions_extra import (  # noqa: E402
    batch_norm_backward_elemt,
    batch_norm_backward_reduce,
    batch_norm_elemt,
    batch_norm_gather_stats,
    batch_norm_gather_stats_with_counts,
    batch_norm_stats,
    batch_norm_update_stats,
    conv_tbc,
    eig,
    embedding_bag,
    embedding_renorm_,
    empty_permuted,
    grid_sampler_2d,
    grid_sampler_3d,
    init_num_threads,
    lstsq,
    matrix_rank,
    max_pool1d_with_indices,
    native_channel_shuffle,
    norm_except_dim,
    segment_reduce,
    set_deterministic_debug_mode,
    set_flush_denormal,
    set_num_interop_threads,
    solve,
    sym_float,
    sym_int,
    sym_ite,
    sym_max,
    sym_min,
    sym_not,
    sym_sqrt,
    sym_sum,
    symeig,
    while_loop,
)
from funcgrad.torch._higher_order import cond, vmap  # noqa: E402
from funcgrad.torch._lowrank import lobpcg, pca_lowrank, svd_lowrank  # noqa: E402
from funcgrad.torch._nn_functions import (  # noqa: E402
    _sample_dirichlet,
    _standard_gamma,
    alpha_dropout_,
    binomial,
    celu_,
    constant_pad_nd,
    convolution,
    dropout_,
    feature_alpha_dropout_,
    feature_dropout,
    feature_dropout_,
    frobenius_norm,
    gru_cell,
    histogramdd,
    lstm_cell,
    native_batch_norm,
    native_dropout,
    native_group_norm,
    native_layer_norm,
    nuclear_norm,
    rnn_relu_cell,
    rnn_tanh_cell,
    rrelu_,
    selu_,
    threshold_,
)
from funcgrad.torch._rnn_functions import gru, lstm, rnn_relu, rnn_tanh  # noqa: E402
from funcgrad.torch._tensor_storage import (  # noqa: E402
    _mkldnn,
    jagged,
    layout,
    sparse_bsc,
    sparse_bsr,
    sparse_coo,
    sparse_csc,
    sparse_csr,
    strided,
)
from funcgrad.torch._utility_functions import (  # noqa: E402
    fill,
    get_device_module,
    is_distributed,
    to_dlpack,
)

globals().update(_COPY_FUNCTIONS)

from funcgrad.torch._sparse import SparseCsrTensor as _SparseCsrTensor  # noqa: E402
from funcgrad.torch._sparse import SparseTensor as _SparseTensor  # noqa: E402

# (here, where both are known: _sparse may not import _tensor_storage, which imports nn)
_SparseTensor.layout = property(lambda self: sparse_coo)  # type: ignore[attr-defined]
_SparseCsrTensor.layout = property(lambda self: sparse_csr)  # type: ignore[attr-defined]

from funcgrad.torch._foreach import FUNCTIONS as _FOREACH_FUNCTIONS  # noqa: E402

globals().update(_FOREACH_FUNCTIONS)

from funcgrad.torch._legacy_tensor_types import TYPES as _LEGACY_TYPES  # noqa: E402
from funcgrad.torch._legacy_tensor_types import set_default_tensor_type  # noqa: E402
from funcgrad.torch._legacy_tensor_types import tensor_type as _tensor_type  # noqa: E402

globals().update(_LEGACY_TYPES)
Tensor.type = _tensor_type  # type: ignore[method-assign]  # legacy types' names too

__version__ = "2.13.0"

# PyTorch's keyword out= on the functions that are not a Tensor method's function (those
# take it in _functions.method_functions).
from funcgrad.torch._functions import with_out as _with_out  # noqa: E402

globals().update({_name: _with_out(_name, globals()[_name]) for _name in (
    "matmul", "where", "maximum", "minimum", "clamp", "clip", "hstack", "vstack", "dstack",
    "column_stack", "row_stack", "masked_select", "polygamma", "bucketize", "searchsorted",
    "isin", "complex", "polar", "tensordot", "chain_matmul")})

# PyTorch's refusals of complex operands in ordering operations (after with_out, which
# replaced maximum/minimum/clamp/clip here).
from funcgrad.torch import _complex_checks  # noqa: E402
from funcgrad.torch.nn import functional as _nn_functional  # noqa: E402

_complex_checks.install(Tensor, _sys.modules[__name__], _nn_functional)

# PyTorch's TypeError for a Python number where an operation takes Tensors only
# (torch.maximum(t, 1.5)); outermost, as PyTorch parses arguments before any kernel check.
from funcgrad.torch import _tensor_only_args  # noqa: E402

_tensor_only_args.install(Tensor, _sys.modules[__name__])

# The operators the profiler times while it records (torch.profiler) and forward AD carries
# tangents through: Tensor's methods, the functions of torch, torch.nn.functional,
# torch.linalg, torch.fft and torch.special.
from funcgrad.torch import _profiling  # noqa: E402
from funcgrad.torch._functions import _torch_function_names  # noqa: E402
from funcgrad.torch.nn import functional as _functional  # noqa: E402

_profiling.TIMED[:] = [
    (Tensor, _profiling.timed_names(dir(Tensor)), ""),
    (_sys.modules[__name__], _profiling.timed_names(sorted(_torch_function_names())), ""),
    (_functional, _profiling.timed_names(_functional.__all__), ""),
    (linalg, _profiling.timed_names(linalg.__all__), "linalg_"),
    (fft, _profiling.timed_names(fft.__all__), "fft_"),
    (special, _profiling.timed_names(special.__all__), "special_")]
