"""Utilities for ``nn`` models, as ``torch.nn.utils``: ``rnn`` (packed and padded
sequences), ``parametrize`` and ``parametrizations`` (computed weights: orthogonal, weight
and spectral normalization), ``prune`` (masks on parameters), the hook-based
``weight_norm`` and ``spectral_norm``, gradient clipping and parameter vectors.

>>> from funcgrad.torch.nn.utils import rnn
>>> rnn.PackedSequence._fields
('data', 'batch_sizes', 'sorted_indices', 'unsorted_indices')
"""

from funcgrad.torch.nn.utils import parametrizations, parametrize, prune, rnn
from funcgrad.torch.nn.utils.clip_grad import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from funcgrad.torch.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
from funcgrad.torch.nn.utils.fusion import (
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)
from funcgrad.torch.nn.utils.init import skip_init
from funcgrad.torch.nn.utils.spectral_norm import remove_spectral_norm, spectral_norm
from funcgrad.torch.nn.utils.weight_norm import remove_weight_norm, weight_norm
