"""Stochastic Weight Averaging and EMA, as ``torch.optim.swa_utils``.

``AveragedModel`` keeps a deep copy of a model whose parameters (and, with
``use_buffers``, buffers) are running averages of the model's: equal weights by
default (SWA), or any rule given as ``avg_fn`` (one tensor at a time, returns the new
average) or ``multi_avg_fn`` (lists of tensors, updated in place), such as the EMA of
``get_ema_multi_avg_fn``. ``SWALR`` anneals each group's learning rate to a fixed
``swa_lr``; ``update_bn`` recomputes BatchNorm statistics with one pass over data.

>>> import funcgrad.torch as torch
>>> from funcgrad.torch.optim.swa_utils import AveragedModel
>>> model = torch.nn.Linear(1, 1, bias=False)
>>> swa = AveragedModel(model)
>>> for w in (1.0, 2.0, 6.0):
...     with torch.no_grad():
...         _ = model.weight.fill_(w)
...     swa.update_parameters(model)
>>> swa.module.weight, swa.n_averaged
(Parameter containing:
tensor([[3.]], requires_grad=True), tensor(3))
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Iterable, Sequence
from copy import deepcopy
from typing import Any

from funcgrad.torch._creation import tensor as _tensor
from funcgrad.torch._dtypes import int64
from funcgrad.torch._grad_mode import no_grad
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn.module import Module
from funcgrad.torch.nn.normalization import _BatchNorm
from funcgrad.torch.optim.lr_scheduler import LRScheduler, _format_param
from funcgrad.torch.optim.optimizer import Optimizer

__all__ = ["SWALR", "AveragedModel", "get_ema_avg_fn", "get_ema_multi_avg_fn",
           "get_swa_avg_fn", "get_swa_multi_avg_fn", "update_bn"]

# Tensors, typed Any: their arithmetic and in-place methods are attached at import time.
PARAM_LIST = Sequence[Any]

# Where PyTorch averages with its foreach kernels by default (the lerp of
# get_swa_multi_avg_fn, whose weight is a float32 Tensor); elsewhere it uses get_swa_avg_fn.
_FOREACH_DEVICES = ("cuda",)


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable[[PARAM_LIST, PARAM_LIST, Any],
                                                             None]:
    """The in-place EMA over lists of tensors: ``ema = decay * ema + (1 - decay) * model``.

    >>> import funcgrad.torch as torch
    >>> ema = [torch.tensor([0.0])]
    >>> get_ema_multi_avg_fn(0.75)(ema, [torch.tensor([4.0])], 1); ema
    [tensor([1.])]
    """
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param_list: PARAM_LIST, current_param_list: PARAM_LIST, _: Any
                   ) -> None:
        if ema_param_list[0].is_floating_point() or ema_param_list[0].is_complex():
            for p_ema, p_model in zip(ema_param_list, current_param_list):
                p_ema.lerp_(p_model, 1 - decay)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable[[PARAM_LIST, PARAM_LIST, Any], None]:
    """The in-place running mean over lists of tensors: ``avg += (model - avg) / (n + 1)``.

    >>> import funcgrad.torch as torch
    >>> avg = [torch.tensor([1.0])]
    >>> get_swa_multi_avg_fn()(avg, [torch.tensor([4.0])], 2); avg
    [tensor([2.])]
    """

    @no_grad()
    def swa_update(averaged_param_list: PARAM_LIST, current_param_list: PARAM_LIST,
                   num_averaged: Any) -> None:
        if averaged_param_list[0].is_floating_point() or averaged_param_list[0].is_complex():
            # With a Tensor count the weight is a Tensor (of the default dtype), as in
            # PyTorch: a float32 weight rounds 1 / (n + 1) for float64 averages too.
            weight = 1 / (num_averaged + 1)
            for p_avg, p_model in zip(averaged_param_list, current_param_list):
                p_avg.lerp_(p_model, weight)
            return
        diffs = [c - a for c, a in zip(current_param_list, averaged_param_list)]
        count = num_averaged + 1
        for p_avg, diff in zip(averaged_param_list, diffs):
            if isinstance(num_averaged, Tensor):
                p_avg.addcdiv_(diff, count)        # an integer average raises, as in PyTorch
            else:
                p_avg.add_(diff, alpha=1.0 / count)

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable[[Any, Any, Any], Any]:
    """The EMA of one tensor: returns ``decay * ema + (1 - decay) * model``.

    >>> import funcgrad.torch as torch
    >>> get_ema_avg_fn(0.5)(torch.tensor(2.0), torch.tensor(4.0), 1)
    tensor(3.)
    """
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param: Any, current_param: Any, num_averaged: Any) -> Any:
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable[[Any, Any, Any], Any]:
    """The running mean of one tensor: returns ``avg + (model - avg) / (n + 1)``.

    >>> import funcgrad.torch as torch
    >>> get_swa_avg_fn()(torch.tensor(1.0), torch.tensor(4.0), 2)
    tensor(2.)
    """

    @no_grad()
    def swa_update(averaged_param: Any, current_param: Any, num_averaged: Any) -> Any:
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


def _group_by_device_and_dtype(averaged: list[Tensor], current: list[Tensor]
                               ) -> dict[tuple[str, Any], tuple[list[Tensor], list[Tensor]]]:
    """Pairs grouped by the averaged tensor's device and dtype, in order of appearance."""
    groups: dict[tuple[str, Any], tuple[list[Tensor], list[Tensor]]] = {}
    for a, c in zip(averaged, current):
        avg_list, cur_list = groups.setdefault((str(a.device), a.dtype), ([], []))
        avg_list.append(a)
        cur_list.append(c)
    return groups


class AveragedModel(Module):
    """A running average of a model's parameters (SWA by default; EMA with
    ``get_ema_multi_avg_fn``), as ``torch.optim.swa_utils.AveragedModel``.

    ``module`` is a deep copy of ``model`` (moved to ``device`` if given); calling the
    averaged model calls it. ``update_parameters(model)`` copies ``model``'s values on the
    first call and averages them in afterwards; ``n_averaged`` (a long buffer) counts the
    calls. Without ``use_buffers`` the buffers are copied from ``model`` at every call.
    """

    n_averaged: Any

    def __init__(self, model: Module, device: Any = None,
                 avg_fn: Callable[[Any, Any, Any], Any] | None = None,
                 multi_avg_fn: Callable[[PARAM_LIST, PARAM_LIST, Any], None] | None = None,
                 use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", _tensor(0, dtype=int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Call the averaged copy of the model."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Average ``model``'s current parameters (and buffers, with ``use_buffers``) in."""
        if self.use_buffers:
            self_values: Iterable[Tensor] = itertools.chain(self.module.parameters(),
                                                            self.module.buffers())
            model_values: Iterable[Tensor] = itertools.chain(model.parameters(),
                                                             model.buffers())
        else:
            self_values, model_values = self.parameters(), model.parameters()
        averaged: list[Tensor] = []
        current: list[Tensor] = []
        copy_param = bool(self.n_averaged == 0)
        for p_averaged, p_model in zip(self_values, model_values):
            p_model_ = p_model.detach().to(p_averaged.device)
            averaged.append(p_averaged.detach())
            current.append(p_model_)
            if copy_param:
                p_averaged.detach().copy_(p_model_)
        if self.n_averaged > 0:
            if self.multi_avg_fn is not None or self.avg_fn is None:
                for (device, _), (avgs, curs) in _group_by_device_and_dtype(
                        averaged, current).items():
                    n_averaged = self.n_averaged.to(device)
                    if self.multi_avg_fn is not None:
                        self.multi_avg_fn(avgs, curs, n_averaged)
                    elif device.split(":")[0] in _FOREACH_DEVICES:
                        get_swa_multi_avg_fn()(avgs, curs, n_averaged)
                    else:
                        swa = get_swa_avg_fn()
                        for p_averaged, p_model in zip(avgs, curs):
                            p_averaged.copy_(swa(p_averaged, p_model, n_averaged))
            else:
                for p_averaged, p_model in zip(averaged, current):
                    n_averaged = self.n_averaged.to(p_averaged.device)
                    p_averaged.detach().copy_(
                        self.avg_fn(p_averaged.detach(), p_model, n_averaged))
        if not self.use_buffers:
            # Buffers are not averaged: keep them in sync with the source model.
            for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                b_swa.detach().copy_(b_model.detach().to(b_swa.device))
        self.n_averaged += 1


@no_grad()
def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute the running mean and variance of ``model``'s BatchNorm layers with one pass
    over ``loader`` (each batch a Tensor, or a list/tuple whose first item is the input):
    the statistics are reset and then averaged over the batches with equal weights.

    >>> import funcgrad.torch as torch
    >>> bn = torch.nn.BatchNorm1d(1)
    >>> update_bn([torch.tensor([[0.0], [2.0]]), torch.tensor([[4.0], [6.0]])], bn)
    >>> bn.running_mean, bn.running_var, bn.momentum    # the means of the batches' statistics
    (tensor([3.]), tensor([2.]), 0.1)
    """
    momenta: dict[Module, Any] = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        if device is not None:
            batch = batch.to(device)
        model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's learning rate to ``swa_lr`` over ``anneal_epochs`` steps
    (``"cos"`` or ``"linear"``), then hold it, as ``torch.optim.swa_utils.SWALR``.

    >>> import funcgrad.torch as torch
    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = SWALR(opt, swa_lr=0.2, anneal_epochs=2, anneal_strategy="linear")
    >>> lrs = []
    >>> for _ in range(3):
    ...     opt.step(); sched.step(); lrs.append(round(sched.get_last_lr()[0], 6))
    >>> lrs                            # halfway, then swa_lr from the second step on
    [0.6, 0.2, 0.2]
    """

    def __init__(self, optimizer: Optimizer, swa_lr: Any, anneal_epochs: int = 10,
                 anneal_strategy: str = "cos", last_epoch: int = -1) -> None:
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr.clone() if isinstance(lr, Tensor) else lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: Any, swa_lr: Any, alpha: float) -> Any:
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list[Any]:
        """The learning rates of this step: each group's ``"lr"`` moved towards its
        ``"swa_lr"`` along the annealing curve (use ``get_last_lr()`` to read them)."""
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please "
                          "use `get_last_lr()`.", UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        # The previous step's lr is recovered from the group's current one, so another
        # scheduler may have changed it in between (the chainable form).
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, prev_lrs)]

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func: Callable[[float], float] = (
            self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal)

    def state_dict(self) -> dict[str, Any]:
        """Everything but the optimizer and the annealing function."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
