"""Neural-network building blocks, as ``torch.nn``: ``Module``, ``Parameter``, layers,
activations, losses, ``functional`` and ``init``.

>>> import funcgrad.torch as torch
>>> import funcgrad.torch.nn as nn
>>> _ = torch.manual_seed(0)
>>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
>>> loss = nn.CrossEntropyLoss()(model(torch.randn(5, 4)), torch.tensor([0, 1, 2, 1, 0]))
>>> loss.backward()
>>> [tuple(p.grad.shape) for p in model.parameters()]
[(8, 4), (8,), (3, 8), (3,)]
"""

from funcgrad.torch.nn import functional, init
from funcgrad.torch.nn.conv import (
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
)
from funcgrad.torch.nn.dropout import (
    AlphaDropout,
    Dropout1d,
    Dropout2d,
    Dropout3d,
    FeatureAlphaDropout,
)
from funcgrad.torch.nn.loss import (
    BCELoss,
    CosineEmbeddingLoss,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    HuberLoss,
    KLDivLoss,
    MarginRankingLoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    PoissonNLLLoss,
    SmoothL1Loss,
    SoftMarginLoss,
    TripletMarginLoss,
)
from funcgrad.torch.nn.module import Module, ModuleList, RemovableHandle, Sequential
from funcgrad.torch.nn.modules import (
    GELU,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    Dropout,
    Flatten,
    Identity,
    L1Loss,
    Linear,
    LogSoftmax,
    MSELoss,
    NLLLoss,
    ReLU,
    Sigmoid,
    Softmax,
    Tanh,
)
from funcgrad.torch.nn.normalization import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    GroupNorm,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    LayerNorm,
    LocalResponseNorm,
    RMSNorm,
)
from funcgrad.torch.nn.parameter import Parameter
from funcgrad.torch.nn.pooling import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveAvgPool3d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AdaptiveMaxPool3d,
    AvgPool1d,
    AvgPool2d,
    AvgPool3d,
    MaxPool1d,
    MaxPool2d,
    MaxPool3d,
)
from funcgrad.torch.nn.rnn import (
    GRU,
    LSTM,
    RNN,
    GRUCell,
    LSTMCell,
    RNNBase,
    RNNCell,
    RNNCellBase,
)
from funcgrad.torch.nn.sparse import Embedding, EmbeddingBag
from funcgrad.torch.nn.transformer import (
    MultiheadAttention,
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

# isort: split
from funcgrad.torch.nn import parallel  # noqa: E402, I001 - after Module (it subclasses it)
from funcgrad.torch.nn import attention, common_types, grad, utils  # noqa: E402
from funcgrad.torch.nn.parallel import DataParallel  # noqa: E402
from funcgrad.torch.nn.parameter import Buffer  # noqa: E402
from funcgrad.torch.nn.sync_batchnorm import SyncBatchNorm  # noqa: E402

__all__ = [
    "GELU", "BCEWithLogitsLoss", "CrossEntropyLoss", "Dropout", "Flatten", "Identity",
    "L1Loss", "Linear", "LogSoftmax", "MSELoss", "Module", "ModuleList", "NLLLoss", "Parameter",
    "ReLU", "RemovableHandle", "Sequential", "Sigmoid", "Softmax", "Tanh", "functional", "init",
    "attention", "grad", "parallel",
]
__all__ += ["Buffer", "DataParallel", "SyncBatchNorm"]
__all__ += [  # the normalization, sparse, dropout and recurrent layers
    "AlphaDropout", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "Dropout1d", "Dropout2d",
    "Dropout3d", "Embedding", "EmbeddingBag", "FeatureAlphaDropout", "GRU", "GRUCell",
    "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LSTM", "LSTMCell",
    "LayerNorm", "LocalResponseNorm", "RMSNorm", "RNN", "RNNBase", "RNNCell", "RNNCellBase",
    "utils",
]
__all__ += [  # convolution and pooling layers
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "Conv1d",
    "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "MaxPool1d",
    "MaxPool2d", "MaxPool3d",
]
__all__ += [  # attention and the losses of loss.py
    "BCELoss", "CosineEmbeddingLoss", "GaussianNLLLoss", "HingeEmbeddingLoss", "HuberLoss",
    "KLDivLoss", "MarginRankingLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss",
    "MultiheadAttention", "PoissonNLLLoss", "SmoothL1Loss", "SoftMarginLoss", "Transformer",
    "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
    "TransformerEncoderLayer", "TripletMarginLoss",
]
# isort: split
from funcgrad.torch.nn.activation import *  # noqa: E402, F403
from funcgrad.torch.nn.activation import __all__ as _activation_names  # noqa: E402

__all__ += [n for n in _activation_names if not n.islower()]  # the modules

# isort: split
from funcgrad.torch.nn.bilinear import Bilinear  # noqa: E402
from funcgrad.torch.nn.containers import (  # noqa: E402
    Container,
    ModuleDict,
    ParameterDict,
    ParameterList,
)
from funcgrad.torch.nn.ctc import CTCLoss  # noqa: E402
from funcgrad.torch.nn.fold import Fold, Unfold  # noqa: E402
from funcgrad.torch.nn.fractional_pooling import (  # noqa: E402
    FractionalMaxPool2d,
    FractionalMaxPool3d,
)
from funcgrad.torch.nn.lp_pooling import LPPool1d, LPPool2d, LPPool3d  # noqa: E402
from funcgrad.torch.nn.margin_losses import (  # noqa: E402
    MultiLabelMarginLoss,
    NLLLoss2d,
    TripletMarginWithDistanceLoss,
)
from funcgrad.torch.nn.unpooling import MaxUnpool1d, MaxUnpool2d, MaxUnpool3d  # noqa: E402
from funcgrad.torch.nn.upsampling import (  # noqa: E402
    Upsample,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
)

__all__ += [  # containers, resizing, sliding blocks, more pooling and losses
    "Bilinear", "CTCLoss", "Container", "Fold", "FractionalMaxPool2d", "FractionalMaxPool3d",
    "LPPool1d", "LPPool2d", "LPPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
    "ModuleDict", "MultiLabelMarginLoss", "NLLLoss2d", "ParameterDict", "ParameterList",
    "TripletMarginWithDistanceLoss", "Unfold", "Upsample", "UpsamplingBilinear2d",
    "UpsamplingNearest2d",
]
from funcgrad.torch.nn.lazy import (  # noqa: E402
    LazyBatchNorm1d,
    LazyBatchNorm2d,
    LazyBatchNorm3d,
    LazyConv1d,
    LazyConv2d,
    LazyConv3d,
    LazyConvTranspose1d,
    LazyConvTranspose2d,
    LazyConvTranspose3d,
    LazyInstanceNorm1d,
    LazyInstanceNorm2d,
    LazyInstanceNorm3d,
    LazyLinear,
    UninitializedBuffer,
    UninitializedParameter,
)

__all__ += [  # lazy modules
    "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyConv1d", "LazyConv2d",
    "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
    "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d", "LazyLinear",
    "UninitializedBuffer", "UninitializedParameter",
]

# The adaptive softmax, the legacy cross-map LRN and the linear cross entropy.
from funcgrad.torch.nn.adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: E402
from funcgrad.torch.nn.cross_map_lrn import CrossMapLRN2d  # noqa: E402
from funcgrad.torch.nn.linear_cross_entropy import (  # noqa: E402
    LinearCrossEntropyLoss,
    LinearCrossEntropyOptions,
)

__all__ += ["AdaptiveLogSoftmaxWithLoss", "CrossMapLRN2d", "LinearCrossEntropyLoss",
            "LinearCrossEntropyOptions"]

# PyTorch's torch.nn.modules.module, where the global hooks' functions live: this face
# keeps Module in funcgrad.torch.nn.module and the module classes in nn.modules (a file).
import sys as _sys  # noqa: E402
from typing import cast  # noqa: E402

from funcgrad.torch.nn import module as _module_file  # noqa: E402
from funcgrad.torch.nn import modules as _modules_file  # noqa: E402

_modules_file.module = _module_file  # type: ignore[attr-defined]
_sys.modules.setdefault(__name__ + ".modules.module", _module_file)


def _find_class(name: str) -> type:
    # The public classes first, then the private bases (_BatchNorm...) in the face's files.
    if name in globals():
        return cast(type, globals()[name])
    for mod_name, mod in list(_sys.modules.items()):
        if mod_name.startswith(__name__ + ".") and isinstance(vars(mod).get(name), type):
            return cast(type, vars(mod)[name])
    raise ImportError(f"funcgrad.torch.nn has no class {name} for torch.nn.modules")


from funcgrad.torch.nn import _module_paths  # noqa: E402

_module_paths.install(_modules_file, _find_class)
