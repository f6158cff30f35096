"""The ``Optimizer`` base class: parameter groups, per-parameter state, state dicts.

Follows ``torch.optim.Optimizer``: ``param_groups`` is a list of dicts (each
with its ``"params"`` and its own copy of every option), ``state`` maps a
parameter Tensor to its optimizer state, and ``state_dict()`` refers to
parameters by integer ids (their position over all groups), so a state dict
can be loaded into an optimizer built on other (equal-shaped) parameters.

>>> import funcgrad.torch as torch
>>> from funcgrad.torch import optim
>>> w = torch.tensor([1.0, 2.0], requires_grad=True)
>>> b = torch.tensor([0.5], requires_grad=True)
>>> opt = optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.5}], lr=0.1)
>>> [g["lr"] for g in opt.param_groups]
[0.1, 0.5]
>>> opt.state_dict()["param_groups"][1]["params"]
[1]
"""

from __future__ import annotations

import copy
import functools
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable, Sequence
from itertools import chain
from typing import Any

from funcgrad.core import Tracer
from funcgrad.torch import _grad_mode
from funcgrad.torch._device import array_module as _xp
from funcgrad.torch._grad_mode import enable_grad, no_grad
from funcgrad.torch._tensor import _INFERENCE_INPLACE, Tensor
from funcgrad.torch.nn.module import RemovableHandle

__all__ = ["Optimizer", "required"]


class _RequiredParameter:
    """Marks an option that every parameter group has to give (no default)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required: Any = _RequiredParameter()


def _scalar(x: Any) -> Any:
    """A hyperparameter as a Python number (a one-element Tensor gives its value)."""
    if isinstance(x, Tensor):
        return x.item()
    return x


def _writable(t: Tensor) -> Any:
    """``t._data``, made safe to update in place (a read-only array is replaced by a copy)."""
    data = t._data
    if not _in_place_ok(data):
        data = t._data = _xp(data).array(data, copy=True)
    return data


def _grad_data(p: Tensor) -> Any:
    """``p.grad``'s array, C-contiguous where ``p``'s is (the elementwise updates then run
    at full speed: a gradient left F-ordered by a matmul's backward is copied once here,
    instead of slowing down every elementwise operation of the update)."""
    g = p.grad._data  # type: ignore[union-attr]
    gflags, pflags = getattr(g, "flags", None), getattr(p._data, "flags", None)
    if gflags is not None and pflags is not None and pflags.c_contiguous \
            and not gflags.c_contiguous:
        g = _xp(g).ascontiguousarray(g)
    return g


def _refuse_sparse(group: dict[str, Any], message: str) -> None:
    for p in group["params"]:
        if p._grad is not None and p._grad.is_sparse:
            raise RuntimeError(message)


def _bump(t: Tensor) -> None:
    """Record that ``t`` was modified in place (what Tensor in-place operations do)."""
    t._vc[0] += 1


def _in_place_ok(data: Any) -> bool:
    """Whether ``data`` is an array that can be written in place (CuPy arrays always can;
    their ``flags`` have no ``writeable``)."""
    flags = getattr(data, "flags", None)
    return flags is not None and bool(getattr(flags, "writeable", True))


def _write(p: Tensor, new: Any) -> None:
    """Write the array ``new`` into parameter ``p`` in place (bumps ``p``'s version).

    Goes through ``Tensor.copy_`` (under ``no_grad``), so the parameter keeps its
    identity and dtype, and its version counter moves as with any in-place Tensor
    operation (a read-only array is replaced, as ``copy_`` does).
    """
    with no_grad():
        p.copy_(Tensor._from_data(new))


def _sub_(p: Tensor, update: Any) -> None:
    """``p -= update`` in place, as a Tensor in-place operation under ``no_grad`` would do
    it: same memory, version bumped; a read-only parameter array goes through ``copy_``."""
    data = p._data
    if _in_place_ok(data):
        data -= update
        _bump(p)
    else:
        _write(p, data - update)


def _scale_(p: Tensor, factor: float) -> None:
    """``p *= factor`` in place (see ``_sub_``)."""
    data = p._data
    if _in_place_ok(data):
        data *= factor
        _bump(p)
    else:
        _write(p, data * factor)


def _state_tensor(arr: Any) -> Tensor:
    return Tensor._from_data(arr)


def _check_differentiable(differentiable: bool) -> None:
    # foreach/fused/capturable choose among PyTorch's kernels (funcgrad has one): accepted.
    # differentiable=True would promise gradients through step(), which funcgrad does not
    # record: refused rather than silently ignored.
    if differentiable:
        raise ValueError("differentiable=True is not supported: funcgrad's optimizers do not "
                         "record step() for autograd (see docs/sharp_bits.md)")


def _check_fused(p: Tensor) -> None:
    """PyTorch's refusal of ``fused=True`` for a parameter that is not floating point (a
    complex one: the fused kernels have no real-view path)."""
    if not p.dtype.is_floating_point:
        devices = ["mps", "cuda", "xpu", "hpu", "cpu", "mtia", "privateuseone"]
        raise RuntimeError("`fused=True` requires all the params to be floating point Tensors "
                           f"of supported devices: {devices} but {p.dtype} and "
                           f"{p.device.type}")


# Hooks every optimizer's step runs (torch.optim.optimizer.register_optimizer_step_*_hook).
_global_optimizer_pre_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
_global_optimizer_post_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()


def register_optimizer_step_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(optimizer, args, kwargs)`` runs before every optimizer's ``step`` (it may
    return new ``(args, kwargs)``)."""
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(optimizer, args, kwargs)`` runs after every optimizer's ``step``."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


def _hooked_step(func: Callable[..., Any]) -> Callable[..., Any]:
    """``step`` running the step hooks around it, as PyTorch's wrapper does (once: a step
    that calls its parent's step runs them at the outer call only)."""

    @functools.wraps(func)
    def step(*args: Any, **kwargs: Any) -> Any:
        self = args[0]
        if self.__dict__.get("_in_step", False):
            return func(*args, **kwargs)
        for pre_hook in chain(_global_optimizer_pre_hooks.values(),
                              self._hooks("_optimizer_step_pre_hooks").values()):
            result = pre_hook(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(f"{func} must return None or a tuple of (new_args, "
                                       f"new_kwargs), but got {result}.")
        self.__dict__["_in_step"] = True
        try:
            out = func(*args, **kwargs)
        finally:
            self.__dict__["_in_step"] = False
        for post_hook in chain(self._hooks("_optimizer_step_post_hooks").values(),
                               _global_optimizer_post_hooks.values()):
            post_hook(self, args, kwargs)
        return out

    step._step_hooked = True  # type: ignore[attr-defined]
    return step


class Optimizer:
    """Base class of the optimizers: keeps parameter groups and per-parameter state.

    ``params`` is an iterable of Tensors, or of dicts (parameter groups: a
    ``"params"`` entry plus options that override ``defaults`` for that group).
    Subclasses implement ``step``.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_step_hooked", False):
            cls.step = _hooked_step(step)  # type: ignore[method-assign]

    def _hooks(self, name: str) -> OrderedDict[int, Callable[..., Any]]:
        hooks = self.__dict__.get(name)
        if hooks is None:
            hooks = self.__dict__[name] = OrderedDict()
        return hooks

    def _add_hook(self, name: str, hook: Callable[..., Any], prepend: bool = False
                  ) -> RemovableHandle:
        hooks = self._hooks(name)
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_step_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` runs before ``step``; it may return new
        ``(args, kwargs)``.

        >>> import funcgrad.torch as torch
        >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
        >>> h = opt.register_step_post_hook(lambda o, a, k: print("stepped"))
        >>> opt.step()
        stepped
        """
        return self._add_hook("_optimizer_step_pre_hooks", hook)

    def register_step_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` runs after ``step``."""
        return self._add_hook("_optimizer_step_post_hooks", hook)

    def register_state_dict_pre_hook(self, hook: Callable[..., Any], prepend: bool = False
                                     ) -> RemovableHandle:
        """``hook(optimizer)`` runs before ``state_dict`` builds the dict."""
        return self._add_hook("_optimizer_state_dict_pre_hooks", hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable[..., Any], prepend: bool = False
                                      ) -> RemovableHandle:
        """``hook(optimizer, state_dict)`` runs on the dict ``state_dict`` built; a dict it
        returns is returned instead."""
        return self._add_hook("_optimizer_state_dict_post_hooks", hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any],
                                          prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer, state_dict)`` runs before ``load_state_dict`` reads the dict; a
        dict it returns is read instead."""
        return self._add_hook("_optimizer_load_state_dict_pre_hooks", hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any],
                                           prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer)`` runs after ``load_state_dict`` loaded the state."""
        return self._add_hook("_optimizer_load_state_dict_post_hooks", hook, prepend)

    def __init__(self, params: Any, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {params.type()}")
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    # ------------------------------------------------------------------ groups

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own options (missing ones from ``defaults``)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        params = [p[1] if isinstance(p, tuple) else p for p in params]
        param_group["params"] = params
        if names:
            if len(names) != len(params):
                raise ValueError("all optimizer params should be with/without names. Some param "
                                 "names are missing")
            param_group["param_names"] = names
        for p in params:
            if not isinstance(p, Tensor):
                # torch.typename: a builtin type goes without its module.
                mod, name = type(p).__module__, type(p).__qualname__
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                f"{name if mod in ('', 'builtins') else f'{mod}.{name}'}")
            if not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        ids = [id(p) for p in params]
        if len(ids) != len(set(ids)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen: set[int] = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if not seen.isdisjoint(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # -------------------------------------------------------------- gradients

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the parameters' gradients: to ``None`` (default), or to zeros in place."""
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    if set_to_none:
                        p.grad = None
                        continue
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    if g.is_sparse:
                        # (PyTorch's zero_ of a sparse gradient: no entries left)
                        g.zero_()
                        continue
                    # copy_ of zeros rather than zero_(): exact zeros even where the
                    # gradient holds inf or nan.
                    g.copy_(Tensor._from_data(_xp(g._data).zeros_like(g._data)))

    @_hooked_step
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient once; returns ``closure()`` (the
        loss re-evaluated with grad enabled) when a closure is given."""
        loss = self._eval_closure(closure)
        with no_grad():
            for group in self.param_groups:
                if self._sparse_refusal is not None:
                    _refuse_sparse(group, self._sparse_refusal.format(type(self).__name__))
                self._update_group(group)
        return loss

    # PyTorch's error for a sparse gradient (None: the optimizer takes them).
    _sparse_refusal: str | None = "{} does not support sparse gradients"

    def _update_group(self, group: dict[str, Any]) -> None:
        """The update rule of one parameter group (each optimizer's own)."""
        raise NotImplementedError(f"{type(self).__name__} must define _update_group")

    def _eval_closure(self, closure: Callable[[], Any] | None) -> Any:
        if closure is None:
            return None
        with enable_grad():
            return closure()

    # ---------------------------------------------------------- serialisation

    def state_dict(self) -> dict[str, Any]:
        """The optimizer's state: ``{"state": {id: {...}}, "param_groups": [...]}``.

        Parameters are replaced by integer ids (their order over all groups); the
        state entries are the live state Tensors, as in PyTorch (copy the dict to
        keep a snapshot).
        """
        for pre_hook in self._hooks("_optimizer_state_dict_pre_hooks").values():
            pre_hook(self)
        mapping: dict[int, int] = {}
        start = 0

        def pack(group: dict[str, Any]) -> dict[str, Any]:
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        groups = [pack(g) for g in self.param_groups]
        state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v
                 for k, v in self.state.items()}
        out = {"state": state, "param_groups": groups}
        for post_hook in self._hooks("_optimizer_state_dict_post_hooks").values():
            result = post_hook(self, out)
            if result is not None:
                out = result
        return out

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state dict made by ``state_dict`` (of an optimizer over like parameters).

        State Tensors go through ``Tensor.to`` (floating ones to their parameter's dtype,
        all to its device; ``step`` is kept as it is): one already right is shared with
        ``state_dict``, as in PyTorch. Each group takes the saved options.
        """
        state_dict = dict(state_dict)  # (a shallow copy, as PyTorch: the hooks may edit it)
        for pre_hook in self._hooks("_optimizer_load_state_dict_pre_hooks").values():
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        state: defaultdict[Any, dict[str, Any]] = defaultdict(dict)
        saved_group_of = {i: g for g in state_dict["param_groups"] for i in g["params"]}
        for k, v in state_dict["state"].items():
            if k in id_map:
                state[id_map[k]] = _cast(id_map[k], v, saved_group_of.get(k, {}))
            else:
                state[k] = v

        def update_group(group: dict[str, Any], new_group: dict[str, Any]) -> dict[str, Any]:
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        self.__setstate__({"state": state, "param_groups": [
            update_group(g, s) for g, s in zip(groups, saved_groups)]})
        for post_hook in self._hooks("_optimizer_load_state_dict_post_hooks").values():
            post_hook(self)

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def __repr__(self) -> str:
        out = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            out += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    out += f"    {key}: {group[key]}\n"
        return out + ")"


def _cast(param: Tensor, value: Any, group: dict[str, Any], key: Any = None) -> Any:
    """``value`` with its Tensors moved to ``param``'s device (and dtype, if floating
    point) by ``Tensor.to``: as in PyTorch, a Tensor that needs no change is the same
    object, so the loaded state shares it with the state dict; containers are new."""
    if isinstance(value, Tensor):
        if key == "step":
            # PyTorch leaves the step count alone, save for fused and capturable groups
            # whose step lives as a float32 on the parameter's device.
            if group.get("capturable") or group.get("fused"):
                from funcgrad.torch._dtypes import float32  # noqa: PLC0415

                return value.to(dtype=float32, device=param.device)
            return value
        with no_grad():
            # Only a floating parameter sets the dtype: the state of a complex one
            # (NAdam's mu_product, ASGD's eta...) keeps its own.
            if param.dtype.is_floating_point:
                return value.to(dtype=param.dtype, device=param.device)
            return value.to(device=param.device)
    if isinstance(value, dict):
        return {k: _cast(param, v, group, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(param, v, group) for v in value)
    return value


def _params_with_grad(group: dict[str, Any]) -> Iterable[Tensor]:
    # A meta parameter has no values to update (docs/sharp_bits.md: no state is made).
    for p in group["params"]:
        if p.grad is not None and not p.is_meta:
            if p._inference and not _grad_mode._mode.inference:
                # PyTorch's in-place update of a parameter made under inference_mode
                raise RuntimeError(_INFERENCE_INPLACE)
            yield p


def _real_params_with_grad(group: dict[str, Any], optimizer: str) -> list[Tensor]:
    """The group's parameters with gradients, all checked to be real before any is updated
    (PyTorch's order, for the optimizers that refuse complex parameters)."""
    params = list(_params_with_grad(group))
    if any(p.dtype.is_complex for p in params):
        raise RuntimeError(f"{optimizer} does not support complex parameters")
    return params


# ------------------------------------------------- helpers of the update rules


def _lerp_(buf: Tensor, end: Any, weight: float) -> Any:
    """``buf.lerp_(end, weight)`` with PyTorch's two-sided formula (exact at both ends);
    returns the updated array."""
    b = _lerp_arr(_writable(buf), end, weight)
    _bump(buf)
    return b


def _lerp_arr(b: Any, end: Any, weight: float) -> Any:
    """``_lerp_`` on a writable array ``b`` (updated in place and returned)."""
    diff = end - b
    if abs(weight) < 0.5:
        diff *= weight
        b += diff
    else:
        diff *= 1 - weight
        _xp(b).subtract(end, diff, out=b)
    return b


def _mul_addcmul_(buf: Tensor, decay: float, a: Any, b: Any, value: float) -> Any:
    """``buf.mul_(decay).addcmul_(a, b, value=value)``; returns the updated array."""
    d = _mul_addcmul_arr(_writable(buf), decay, a, b, value)
    _bump(buf)
    return d


def _mul_addcmul_arr(d: Any, decay: float, a: Any, b: Any, value: float) -> Any:
    """``_mul_addcmul_`` on a writable array ``d`` (updated in place and returned)."""
    d *= decay
    prod = a * value
    prod *= b
    d += prod
    return d


def _by_real_parts(rule: Callable[..., Any], arrays: Sequence[Any], *args: Any) -> Any:
    """``rule(*arrays, *args)``: an update rule run on a gradient ``arrays[0]`` and state
    arrays ``arrays[1:]`` (``None`` for absent ones; written in place by the rule), returning
    the step (an array, or a tuple of arrays) to subtract from the parameter.

    A complex gradient and state are taken as PyTorch takes them (``torch.view_as_real``):
    the real and imaginary parts are independent real numbers, so the rule runs once on the
    real parts and once on the imaginary parts (the state keeps its complex dtype), and the
    steps come back complex. Real dtypes call ``rule`` directly.
    """
    g = arrays[0]
    if g.dtype.kind != "c":
        return rule(*arrays, *args)
    if not any(isinstance(a, Tracer) for a in arrays):
        # NumPy / CuPy buffers: .real and .imag are views into the state's memory, whatever
        # its layout, so the rule's in-place writes land in the state.
        re = rule(*(None if a is None else a.real for a in arrays), *args)
        im = rule(*(None if a is None else a.imag for a in arrays), *args)

        def join(r: Any, i: Any) -> Any:
            out = _xp(g).empty_like(g)
            out.real[...] = r
            out.imag[...] = i
            return out
    else:
        # Staged by torch.compile: the parts are new values, written back afterwards.
        from funcgrad import lax  # noqa: PLC0415

        reals = [None if a is None else _xp(a).real(a) for a in arrays]
        imags = [None if a is None else _xp(a).imag(a) for a in arrays]
        re = rule(*reals, *args)
        im = rule(*imags, *args)
        for a, r, i in zip(arrays[1:], reals[1:], imags[1:]):
            if a is not None:
                a[...] = lax.complex(r, i)
        join = lax.complex
    if isinstance(re, tuple):
        return tuple(join(r, i) for r, i in zip(re, im))
    return join(re, im)


def _advance_step(state: dict[str, Any]) -> float:
    """Add one to the float32 ``state["step"]`` Tensor; returns the new count."""
    step_t = state["step"]
    s = _writable(step_t)
    s += 1
    _bump(step_t)
    return float(s)


def _new_step() -> Tensor:
    """A step counter as PyTorch keeps it: a float32 scalar Tensor (on the CPU)."""
    import numpy as np  # noqa: PLC0415

    return _state_tensor(np.zeros((), np.float32))


def _scalar_state(value: float) -> Tensor:
    """A scalar state Tensor in PyTorch's scalar dtype: float64 when that is the default
    dtype, else float32."""
    import numpy as np  # noqa: PLC0415

    from funcgrad.torch._dtypes import float64, get_default_dtype  # noqa: PLC0415

    dt = np.float64 if get_default_dtype() is float64 else np.float32
    return _state_tensor(np.asarray(value, dt))


def _signed_grad(p: Tensor, maximize: bool, weight_decay: float) -> Any:
    """``p``'s gradient, negated when maximizing, plus the L2 term ``weight_decay * p``."""
    g = _grad_data(p)
    if maximize:
        g = -g
    if weight_decay != 0:
        g = g + weight_decay * p._data
    return g
