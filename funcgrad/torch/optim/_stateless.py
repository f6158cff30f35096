"""``swap_in_optimizer_params_and_state``: run an optimizer on other parameters and state.

A context manager (``torch.optim.swap_in_optimizer_params_and_state``): inside it the
optimizer's groups hold the given parameter Tensors and hyperparameters, and its
``state`` is the given ``state_dict()``-shaped state re-keyed by those Tensors, so that
``step()`` updates them (and, in place, the given state Tensors) instead of the live
ones. On exit the groups and the state are restored.

>>> import funcgrad.torch as torch
>>> w = torch.tensor([1.0], requires_grad=True)
>>> opt = torch.optim.SGD([w], lr=0.5, momentum=0.9)
>>> w.grad = torch.tensor([1.0]); _ = opt.step()
>>> other = torch.tensor([10.0], requires_grad=True)
>>> other.grad = torch.tensor([2.0])
>>> sd = {"state": {0: {"momentum_buffer": torch.tensor([0.0])}},
...       "param_groups": [dict(opt.state_dict()["param_groups"][0], lr=1.0)]}
>>> with swap_in_optimizer_params_and_state(opt, {"w": other}, sd):
...     _ = opt.step()
>>> other, w, sd["state"][0]["momentum_buffer"], opt.param_groups[0]["lr"]
(tensor([8.], requires_grad=True), tensor([0.5000], requires_grad=True), tensor([2.]), 0.5)
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Iterator
from typing import Any, NamedTuple

from funcgrad.torch._tensor import Tensor
from funcgrad.torch.optim.optimizer import Optimizer

__all__ = ["swap_in_optimizer_params_and_state"]

_NAME = "swap_in_optimizer_params_and_state"


class _GroupSwap(NamedTuple):
    live_group: dict[str, Any]      # optimizer.param_groups[i], changed in place
    swapin_group: dict[str, Any]    # the saved group: hyperparameters and packed ids
    swapin_params: list[Tensor]     # the Tensors standing for those ids, in their order


def _check_state(state: Any) -> dict[Any, Any]:
    if not isinstance(state, dict):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be a dict mapping "
                           "packed parameter ids to per-param state dicts, got "
                           f"{type(state).__name__}.")
    if any(isinstance(k, Tensor) for k in state):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style state keyed by "
                           "packed parameter ids.")
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(f"{_NAME} requires per-parameter optimizer state entries to be "
                           "dictionaries.")
    return state


def _check_groups(optimizer: Optimizer, groups: Any) -> list[dict[str, Any]]:
    if not isinstance(groups, list):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['param_groups'] to be a list "
                           f"of param-group dicts, got {type(groups).__name__}.")
    if len(optimizer.param_groups) != len(groups):
        raise RuntimeError("swapin_optim_state has a different number of parameter groups "
                           "than the live optimizer.")
    return groups


def _group_ids(idx: int, group: dict[str, Any], swapin_group: Any) -> list[int]:
    """The packed ids of a saved group, checked against its live group."""
    if not isinstance(swapin_group, dict):
        raise RuntimeError(f"{_NAME} requires each optimizer param group to be a dictionary.")
    ids = swapin_group.get("params")
    if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style "
                           "param_groups[*]['params'] entries keyed by packed parameter ids.")
    if len(group["params"]) != len(ids):
        raise RuntimeError(f"swapin_optim_state param group {idx} has a different number of "
                           "params than the live optimizer param group.")
    swapin_only = [k for k in swapin_group if k not in group]
    live_only = [k for k in group if k not in swapin_group]
    if swapin_only or live_only:
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style param group keys "
                           "to exactly match the live optimizer group keys for group "
                           f"{idx}. Keys only in swap-in: {swapin_only}. Keys only in live: "
                           f"{live_only}.")
    return ids


def _prepare(optimizer: Optimizer, swapin_parameters: dict[str, Tensor],
             swapin_optim_state: dict[str, Any]) -> tuple[dict[Any, Any], list[_GroupSwap]]:
    if not optimizer.state:
        raise RuntimeError(f"{_NAME} requires initialized optimizer state.")
    if not isinstance(swapin_optim_state, dict):
        raise RuntimeError(f"{_NAME} requires a DCP-style optimizer state_dict.")
    state = _check_state(swapin_optim_state.get("state"))
    groups = _check_groups(optimizer, swapin_optim_state.get("param_groups"))
    # The Tensors are matched to the packed ids by order, over all groups.
    flat = list(swapin_parameters.values())
    offset = 0
    seen: set[int] = set()
    swaps = []
    for idx, (group, swapin_group) in enumerate(zip(optimizer.param_groups, groups)):
        ids = _group_ids(idx, group, swapin_group)
        seen.update(ids)
        end = offset + len(ids)
        if end > len(flat):
            raise RuntimeError(f"{_NAME} requires the explicit parameter state to match "
                               "optimizer.param_groups ordering.")
        swaps.append(_GroupSwap(group, swapin_group, flat[offset:end]))
        offset = end
    extra = [k for k in state if k not in seen]
    if extra:
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be keyed only by "
                           "packed parameter ids from param_groups[*]['params']; got extra "
                           f"keys {extra!r}.")
    return state, swaps


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer: Optimizer,
                                       swapin_parameters: dict[str, Tensor],
                                       swapin_optim_state: dict[str, Any]) -> Iterator[None]:
    """Within the context, ``optimizer`` works on ``swapin_parameters`` (in the order of its
    groups' parameters) with the ``state_dict()``-shaped ``swapin_optim_state``; only
    in-place changes to that state's Tensors outlive the context."""
    state, swaps = _prepare(optimizer, swapin_parameters, swapin_optim_state)
    original_state = optimizer.state
    # Shallow copies: the restored groups keep their own "params" list objects.
    snapshots = [dict(g) for g in optimizer.param_groups]
    try:
        swapped: defaultdict[Tensor, Any] = defaultdict(dict)
        for swap in swaps:
            swap.live_group["params"] = swap.swapin_params
            for key, value in swap.swapin_group.items():
                if key != "params":
                    swap.live_group[key] = value
            for param, pid in zip(swap.swapin_params, swap.swapin_group["params"]):
                # A shallow copy: in-place Tensor updates reach the caller's state, new
                # entries stay inside the context.
                swapped[param] = dict(state.get(pid, {}))
        optimizer.state = swapped
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots):
            group.clear()
            group.update(snapshot)
        optimizer.state = original_state
