"""Utilities for ``nn`` models, as ``torch.nn.utils``: ``rnn`` (packed and padded sequences).

>>> from funcgrad.torch.nn.utils import rnn
>>> rnn.PackedSequence._fields
('data', 'batch_sizes', 'sorted_indices', 'unsorted_indices')
"""

from funcgrad.torch.nn.utils import rnn
from funcgrad.torch.nn.utils.clip_grad import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    get_total_norm,
)
from funcgrad.torch.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
