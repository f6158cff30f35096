"""``torch.amp.GradScaler``: loss scaling for float16 training. The loss is multiplied by
a scale before ``backward`` so small gradients survive float16; ``step`` divides the
gradients by it and skips the step where any is inf/NaN; ``update`` halves the scale
after such a step and doubles it after ``growth_interval`` clean ones.

>>> import funcgrad.torch as torch
>>> w = torch.nn.Parameter(torch.ones(2))
>>> opt = torch.optim.SGD([w], lr=0.5)
>>> scaler = torch.amp.GradScaler("cpu", init_scale=8.0)
>>> scaler.scale((w * w).sum()).backward()
>>> w.grad
tensor([16., 16.])
>>> scaler.step(opt); scaler.update()
>>> w.detach(), scaler.get_scale()
(tensor([0., 0.]), 8.0)
"""

from __future__ import annotations

import enum
import math
import warnings
from collections import defaultdict
from collections.abc import Iterable
from typing import Any, cast

from funcgrad.torch import _dtypes as D

__all__ = ["GradScaler", "OptState"]


class OptState(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state() -> dict[str, Any]:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """Dynamic loss scaling (PyTorch's ``torch.amp.GradScaler``; ``device`` defaults to
    ``"cuda"``, and without CUDA the scaler disables itself with PyTorch's warning)."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled:
            from funcgrad.torch._device import cuda_available  # noqa: PLC0415

            if not cuda_available():
                warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not "
                              "available.  Disabling.", stacklevel=2)
                self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale: Any = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker: Any = None
            self._per_optimizer_states: dict[int, dict[str, Any]] = defaultdict(_fresh_state)

    # ---------------------------------------------------------------- scaling

    def _check_scale_growth_tracker(self, funcname: str) -> tuple[Any, Any]:
        fix = ("This may indicate your script did not use scaler.scale(loss or outputs) "
               "earlier in the iteration.")
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init(self, dev: Any) -> None:
        from funcgrad.torch._creation import full  # noqa: PLC0415

        self._scale = full((), self._init_scale, dtype=D.float32, device=dev)
        self._growth_tracker = full((), self._init_growth_tracker, dtype=D.int32, device=dev)

    def scale(self, outputs: Any) -> Any:
        """``outputs`` (a tensor, or an iterable of tensors) times the scale."""
        from funcgrad.torch._tensor import Tensor  # noqa: PLC0415

        if not self._enabled:
            return outputs

        def apply(val: Any) -> Any:
            if isinstance(val, Tensor):
                if self._scale is None:
                    self._lazy_init(val.device)
                return val * self._scale.to(device=val.device, non_blocking=True)
            if isinstance(val, Iterable):
                mapped = map(apply, val)
                return type(val)(mapped) if isinstance(val, (list, tuple)) else mapped
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply(outputs)

    def _unscale_grads_(self, optimizer: Any, inv_scale: Any, found_inf: Any,
                        allow_fp16: bool) -> dict[Any, Any]:
        from funcgrad.torch._grad_mode import no_grad  # noqa: PLC0415
        from funcgrad.torch._tensor import Tensor  # noqa: PLC0415

        per_device: dict[Any, Any] = {}
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if not isinstance(param, Tensor):
                        raise AssertionError("expected param to be torch.Tensor, got "
                                             f"{type(param).__name__}")
                    g = param.grad
                    if g is None:
                        continue
                    if not allow_fp16 and g.dtype is D.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    dev = g.device
                    if dev not in per_device:
                        per_device[dev] = (found_inf.to(dev), inv_scale.to(dev))
                    inf, inv = per_device[dev]
                    # The check is accumulated on the device: one host read, in step().
                    inf.add_((~cast(Any, g).isfinite()).any().to(D.float32))
                    g.mul_(inv)
        return {dev: pair[0] for dev, pair in per_device.items()}

    def unscale_(self, optimizer: Any) -> None:
        """Divide ``optimizer``'s gradients by the scale in place (once per step), e.g.
        before clipping them."""
        from funcgrad.torch._creation import full  # noqa: PLC0415

        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = full((), 0.0, dtype=D.float32, device=self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf,
                                                              False)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """Unscale (unless ``unscale_`` ran) and run ``optimizer.step`` unless a gradient
        is inf/NaN; returns what ``optimizer.step`` returned (None when skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale: Any = None) -> None:
        """Back the scale off after a skipped step, grow it after ``growth_interval``
        clean ones (or set it to ``new_scale``)."""
        if not self._enabled:
            return
        scale, tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor "
                          "or torch.FloatTensor with requires_grad=False.")
                if new_scale.device.type != self._device or new_scale.numel() != 1 or \
                        new_scale.requires_grad is True:
                    raise AssertionError(reason)
                scale.copy_(new_scale)
        else:
            found = [f.to(device=scale.device) for s in self._per_optimizer_states.values()
                     for f in s["found_inf_per_device"].values()]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            if sum(f.item() for f in found):
                scale.mul_(self._backoff_factor)
                tracker.fill_(0)
            else:
                successful = int(tracker.item()) + 1
                grown = scale.item() * self._growth_factor
                if successful == self._growth_interval and math.isfinite(grown):
                    scale.fill_(grown)
                    successful = 0
                elif successful == self._growth_interval:
                    successful = 0
                tracker.fill_(successful)
        self._per_optimizer_states = defaultdict(_fresh_state)

    # ---------------------------------------------------------------- state

    def get_scale(self) -> float:
        """The current scale as a Python float (1.0 when disabled)."""
        if self._enabled:
            return float(self._init_scale if self._scale is None else self._scale.item())
        return 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if self._enabled:
            return self._init_growth_tracker if self._growth_tracker is None else \
                int(self._growth_tracker.item())
        return 0

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict[str, Any]:
        """The scale and its settings (empty when disabled), for checkpoints."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the "
                                     "beginning of an iteration, or at the end after "
                                     "scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
            state["_per_optimizer_states"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if self._enabled:
            self._per_optimizer_states = defaultdict(_fresh_state)
