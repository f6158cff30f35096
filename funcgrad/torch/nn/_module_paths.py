"""PyTorch's ``torch.nn.modules.<submodule>`` paths over this face's module classes.

Training code reaches layers through these paths (``isinstance(m,
nn.modules.batchnorm._BatchNorm)``, ``class MyLoss(nn.modules.loss._Loss)``,
``from torch.nn.modules.utils import _pair``), and PyTorch's files name a saved module's
class by them (``torch.nn.modules.container.Sequential``). This face keeps its classes in
files of its own layout; the submodules here are aliases, made by ``install``.

>>> import funcgrad.torch as torch
>>> torch.nn.modules.batchnorm._BatchNorm is type(torch.nn.BatchNorm1d(2)).__mro__[1]
True
>>> torch.nn.modules.utils._pair(3)
(3, 3)
"""

from __future__ import annotations

import collections.abc
import sys
import types
from itertools import repeat
from typing import Any

# Each submodule's classes, as PyTorch 2.13 defines them.
LAYOUT: dict[str, tuple[str, ...]] = {
    "activation": (
        "Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh",
        "SiLU", "Mish", "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink",
        "LeakyReLU", "LogSigmoid", "Softplus", "Softshrink", "MultiheadAttention", "PReLU",
        "Softsign", "Tanhshrink", "Softmin", "Softmax", "Softmax2d", "LogSoftmax"),
    "adaptive": ("_ASMoutput", "AdaptiveLogSoftmaxWithLoss"),
    "batchnorm": ("_NormBase", "_BatchNorm", "_LazyNormBase", "BatchNorm1d", "LazyBatchNorm1d",
                  "BatchNorm2d", "LazyBatchNorm2d", "BatchNorm3d", "LazyBatchNorm3d",
                  "SyncBatchNorm"),
    "channelshuffle": ("ChannelShuffle",),
    "container": ("Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList",
                  "ParameterDict"),
    "conv": ("_ConvNd", "Conv1d", "Conv2d", "Conv3d", "_ConvTransposeNd", "ConvTranspose1d",
             "ConvTranspose2d", "ConvTranspose3d", "_LazyConvXdMixin", "LazyConv1d",
             "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
             "LazyConvTranspose3d"),
    "distance": ("PairwiseDistance", "CosineSimilarity"),
    "dropout": ("_DropoutNd", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d",
                "AlphaDropout", "FeatureAlphaDropout"),
    "flatten": ("Flatten", "Unflatten"),
    "fold": ("Fold", "Unfold"),
    "instancenorm": ("_InstanceNorm", "InstanceNorm1d", "LazyInstanceNorm1d",
                     "InstanceNorm2d", "LazyInstanceNorm2d", "InstanceNorm3d",
                     "LazyInstanceNorm3d"),
    "lazy": ("LazyModuleMixin",),
    "linear": ("Identity", "Linear", "NonDynamicallyQuantizableLinear", "Bilinear",
               "LazyLinear"),
    "linear_cross_entropy_options": ("LinearCrossEntropyOptions",),
    "loss": ("_Loss", "_WeightedLoss", "L1Loss", "NLLLoss", "NLLLoss2d", "PoissonNLLLoss",
             "GaussianNLLLoss", "KLDivLoss", "MSELoss", "BCELoss", "BCEWithLogitsLoss",
             "HingeEmbeddingLoss", "MultiLabelMarginLoss", "SmoothL1Loss", "HuberLoss",
             "SoftMarginLoss", "CrossEntropyLoss", "LinearCrossEntropyLoss",
             "MultiLabelSoftMarginLoss", "CosineEmbeddingLoss", "MarginRankingLoss",
             "MultiMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss",
             "CTCLoss"),
    "module": ("_IncompatibleKeys", "Module"),
    "normalization": ("LocalResponseNorm", "CrossMapLRN2d", "LayerNorm", "GroupNorm",
                      "RMSNorm"),
    "padding": ("CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d",
                "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d",
                "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d",
                "ZeroPad1d", "ZeroPad2d", "ZeroPad3d"),
    "pixelshuffle": ("PixelShuffle", "PixelUnshuffle"),
    "pooling": ("_MaxPoolNd", "MaxPool1d", "MaxPool2d", "MaxPool3d", "_MaxUnpoolNd",
                "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "_AvgPoolNd", "AvgPool1d",
                "AvgPool2d", "AvgPool3d", "FractionalMaxPool2d", "FractionalMaxPool3d",
                "_LPPoolNd", "LPPool1d", "LPPool2d", "LPPool3d", "_AdaptiveMaxPoolNd",
                "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
                "_AdaptiveAvgPoolNd", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
                "AdaptiveAvgPool3d"),
    "rnn": ("RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"),
    "sparse": ("Embedding", "EmbeddingBag"),
    "transformer": ("Transformer", "TransformerEncoder", "TransformerDecoder",
                    "TransformerEncoderLayer", "TransformerDecoderLayer"),
    "upsampling": ("Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"),
}

# A class's PyTorch path (module, name), for the files this face writes and its messages.
TORCH_PATHS: dict[type, tuple[str, str]] = {}


def _ntuple(n: int, name: str = "parse") -> Any:
    def parse(x: Any) -> tuple[Any, ...]:
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t: Any, n: int) -> tuple[Any, ...]:
    # F.pad's order: the last dimension first, each amount twice.
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size: Any, defaults: list[int]) -> Any:
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def consume_prefix_in_state_dict_if_present(state_dict: dict[str, Any], prefix: str) -> None:
    """Strip ``prefix`` from the keys of ``state_dict`` in place (a DDP model's
    ``"module."``), its ``_metadata`` included.

    >>> sd = {"module.w": 1}
    >>> consume_prefix_in_state_dict_if_present(sd, "module."); sd
    {'w': 1}
    """
    for key in list(state_dict):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    meta = getattr(state_dict, "_metadata", None)
    if meta is not None:
        for key in list(meta):
            # "" is the wrapper's own entry; "module" and "module.x" are the model's.
            if key and (key == prefix.replace(".", "") or key.startswith(prefix)):
                meta[key[len(prefix):]] = meta.pop(key)


_UTILS = ("_ntuple", "_single", "_pair", "_triple", "_quadruple", "_reverse_repeat_tuple",
          "_list_with_default", "consume_prefix_in_state_dict_if_present")


def install(modules_file: types.ModuleType, find: Any) -> None:
    """Make ``<modules_file>.<sub>`` for each of PyTorch's submodules, holding the classes
    ``find(name)`` gives, and record each class's PyTorch path."""
    base = modules_file.__name__
    for sub, names in LAYOUT.items():
        alias = sys.modules.get(f"{base}.{sub}")
        if alias is None:
            alias = types.ModuleType(f"{base}.{sub}", f"PyTorch's torch.nn.modules.{sub}.")
            sys.modules[alias.__name__] = alias
        for name in names:
            cls = find(name)
            setattr(alias, name, cls)
            TORCH_PATHS.setdefault(cls, (f"torch.nn.modules.{sub}", name))
            if not name.startswith("_") and not hasattr(modules_file, name):
                setattr(modules_file, name, cls)  # (torch.nn.modules.Conv2d too)
        setattr(modules_file, sub, alias)
    utils = types.ModuleType(f"{base}.utils", "PyTorch's torch.nn.modules.utils.")
    for name in _UTILS:
        setattr(utils, name, globals()[name])
    sys.modules[utils.__name__] = utils
    modules_file.utils = utils  # type: ignore[attr-defined]


def torch_path(obj: Any) -> str:
    """The dotted path PyTorch knows ``obj`` by: its own for this face's module classes,
    else its module and qualified name."""
    found = TORCH_PATHS.get(obj) if isinstance(obj, type) else None
    if found is not None:
        return ".".join(found)
    return f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', '')}"
