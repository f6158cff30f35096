"""``nn.AdaptiveLogSoftmaxWithLoss``: the adaptive softmax of Grave et al. (2016), as
PyTorch 2.13 builds it.

The classes are split by ``cutoffs`` into a shortlist, scored by ``head`` together with
one logit per tail cluster, and clusters scored by ``tail[i]`` (a ``Linear`` projection to
``in_features // div_value ** (i + 1)`` features, then a ``Linear`` to the cluster's
classes, neither with a bias). The submodules, parameter names and shapes, the
``state_dict`` keys, the ``_ASMoutput(output, loss)`` result, ``log_prob``, ``predict``
and the errors are PyTorch's.

>>> import funcgrad.torch as torch
>>> import funcgrad.torch.nn as nn
>>> _ = torch.manual_seed(0)  # (the sums below are 1 to float32 rounding, not always 1.0000)
>>> asm = nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[4, 7], div_value=2.0)
>>> list(asm.state_dict())
['head.weight', 'tail.0.0.weight', 'tail.0.1.weight', 'tail.1.0.weight', 'tail.1.1.weight']
>>> [tuple(v.shape) for v in asm.state_dict().values()]
[(6, 8), (4, 8), (3, 4), (2, 8), (3, 2)]
>>> out = asm(torch.ones(3, 8), torch.tensor([0, 5, 9]))
>>> out.output.shape, out.loss.shape
(torch.Size([3]), torch.Size([]))
>>> asm.log_prob(torch.ones(3, 8)).exp().sum(dim=1)
tensor([1.0000, 1.0000, 1.0000], grad_fn=<SumBackward1>)
"""

from __future__ import annotations

import itertools
from collections import namedtuple
from collections.abc import Sequence
from typing import Any

from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn import functional as F
from funcgrad.torch.nn.module import Module, ModuleList, Sequential
from funcgrad.torch.nn.modules import Linear

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])  # noqa: PYI024 - PyTorch's type


class AdaptiveLogSoftmaxWithLoss(Module):
    """Adaptive softmax: log-probabilities of the targets (``output``) and their mean
    negative (``loss``), computing each tail cluster only for the rows whose target
    lies in it.

    ``cutoffs`` must be unique, increasing integers in ``[1, n_classes - 1]``; labels
    should be sorted by frequency (0 the most frequent).

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn as nn
    >>> nn.AdaptiveLogSoftmaxWithLoss(16, 20, [5, 10], head_bias=True)
    AdaptiveLogSoftmaxWithLoss(
      (head): Linear(in_features=16, out_features=7, bias=True)
      (tail): ModuleList(
        (0): Sequential(
          (0): Linear(in_features=16, out_features=4, bias=False)
          (1): Linear(in_features=4, out_features=5, bias=False)
        )
        (1): Sequential(
          (0): Linear(in_features=16, out_features=1, bias=False)
          (1): Linear(in_features=1, out_features=10, bias=False)
        )
      )
    )
    """

    in_features: int
    n_classes: int
    cutoffs: list[int]
    div_value: float
    head_bias: bool
    head: Linear
    tail: ModuleList

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int],
                 div_value: float = 4.0, head_bias: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers "
                             "sorted in an increasing order, where each value is between 1 "
                             "and n_classes-1")
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(self.in_features, self.head_size, bias=self.head_bias,
                           **factory_kwargs)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(self.in_features // (self.div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(
                Linear(self.in_features, hsz, bias=False, **factory_kwargs),
                Linear(hsz, osz, bias=False, **factory_kwargs)))

    def reset_parameters(self) -> None:
        """Draw the parameters again, as ``__init__`` did."""
        self.head.reset_parameters()
        tail: Any = self.tail
        for i2h, h2o in tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_: Tensor, target_: Tensor) -> _ASMoutput:
        targ_dim = target_.dim()
        if targ_dim == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input_.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found "
                                   f"inputs with size {input_.size()}")
        elif targ_dim == 0:
            if input_.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found "
                                   f"inputs with size {input_.size()}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")

        is_batched = targ_dim > 0
        input: Any = input_ if is_batched else input_.unsqueeze(0)  # noqa: A001
        target: Any = target_ if is_batched else target_.unsqueeze(0)
        used_rows = 0
        batch_size = target.size(0)
        output: Any = input.new_zeros(batch_size)
        gather_inds: Any = target.new_zeros(batch_size)
        cutoff_values = [0, *self.cutoffs]
        for i in range(len(cutoff_values) - 1):
            low_idx, high_idx = cutoff_values[i], cutoff_values[i + 1]
            target_mask = (target >= low_idx) & (target < high_idx)
            # (k,) row numbers; PyTorch squeezes them to 0-d for a single row.
            row_indices = target_mask.nonzero().squeeze(1)
            if row_indices.numel() == 0:
                continue
            if i == 0:
                gather_inds.index_copy_(0, row_indices, target[target_mask])
            else:
                relative_target = target[target_mask] - low_idx
                input_subset = input.index_select(0, row_indices)
                cluster_output = self.tail[i - 1](input_subset)
                cluster_index = self.shortlist_size + i - 1
                gather_inds.index_fill_(0, row_indices, cluster_index)
                cluster_logprob = F.log_softmax(cluster_output, dim=1)
                local_logprob = cluster_logprob.gather(1, relative_target.unsqueeze(1))
                output.index_copy_(0, row_indices, local_logprob.squeeze(1))
            used_rows += row_indices.numel()
        if used_rows != batch_size:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{target.min().item()}, "
                               f"{target.max().item()}] were found. ")
        head_output = self.head(input)
        head_logprob = F.log_softmax(head_output, dim=1)
        output += head_logprob.gather(1, gather_inds.unsqueeze(1)).squeeze()
        loss = (-output).mean()
        if not is_batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input: Any, head_output: Any) -> Any:  # noqa: A002
        """The log-probabilities of all classes, given ``input`` and its head scores."""
        out = input.new_empty((head_output.size(0), self.n_classes))
        head_logprob = F.log_softmax(head_output, dim=1)
        out[:, :self.shortlist_size] = head_logprob[:, :self.shortlist_size]
        for i, (start_idx, stop_idx) in enumerate(itertools.pairwise(self.cutoffs)):
            cluster_output = self.tail[i](input)
            cluster_logprob = F.log_softmax(cluster_output, dim=1)
            output_logprob = cluster_logprob + head_logprob[:, self.shortlist_size + i
                                                            ].unsqueeze(1)
            out[:, start_idx:stop_idx] = output_logprob
        return out

    def log_prob(self, input: Tensor) -> Tensor:  # noqa: A002
        """Log-probabilities of all ``n_classes`` classes, ``(N, n_classes)``."""
        head_output = self.head(input)
        return self._get_full_log_prob(input, head_output)

    def predict(self, input: Tensor) -> Tensor:  # noqa: A002
        """The most probable class of each row (``log_prob(input).argmax(dim=1)``, the
        tail clusters computed only where the head's best is a cluster)."""
        head_output: Any = self.head(input)
        output: Any = head_output.argmax(dim=1)
        not_in_shortlist = output >= self.shortlist_size
        all_in_shortlist = not (not_in_shortlist.any())
        if all_in_shortlist:
            return output
        if not_in_shortlist.all():
            log_prob = self._get_full_log_prob(input, head_output)
            return log_prob.argmax(dim=1)
        log_prob = self._get_full_log_prob(input[not_in_shortlist],
                                           head_output[not_in_shortlist])
        output[not_in_shortlist] = log_prob.argmax(dim=1)
        return output
