"""``Module``, the base of every layer, and the containers ``Sequential`` and ``ModuleList``.

A module owns parameters, buffers and submodules, registered by assignment
(``self.fc = Linear(2, 3)``), and follows PyTorch's ``torch.nn.Module``: dotted
names, ``state_dict``/``load_state_dict``, ``train``/``eval``, hooks and the
same ``repr``.

>>> import funcgrad.torch.nn as nn
>>> model = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
>>> [name for name, _ in model.named_parameters()]
['0.weight', '0.bias']
>>> model
Sequential(
  (0): Linear(in_features=4, out_features=3, bias=True)
  (1): ReLU()
)
"""

from __future__ import annotations

import operator
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, NamedTuple, cast

import numpy as np

from funcgrad.torch import _dtypes as D
from funcgrad.torch._creation import empty_like
from funcgrad.torch._device import META_COPY_OUT, as_device, memory_format
from funcgrad.torch._dtypes import to_torch
from funcgrad.torch._grad_mode import no_grad
from funcgrad.torch._handles import RemovableHandle
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn import _global_hooks as G
from funcgrad.torch.nn.parameter import Buffer, Parameter


class _IncompatibleKeys(NamedTuple):
    """What ``load_state_dict`` returns: the keys it did not find and those it did not use."""

    missing_keys: list[str]
    unexpected_keys: list[str]

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (f"_IncompatibleKeys(missing_keys={self.missing_keys}, "
                f"unexpected_keys={self.unexpected_keys})")

    def __str__(self) -> str:
        return self.__repr__()


def _hooks_of(module: Any, name: str) -> dict[int, Callable[..., Any]]:
    """A module's state-dict hooks of one kind (none until one is registered)."""
    hooks: dict[int, Callable[..., Any]] = module.__dict__.get(name) or {}
    return hooks


def _addindent(text: str, spaces: int) -> str:
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return "\n".join([lines[0]] + [" " * spaces + line for line in lines[1:]])


def _forward_unimplemented(self: Any, *args: Any, **kwargs: Any) -> Any:
    raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                              '"forward" function')


def _shape_text(t: Any) -> str:
    return f"torch.Size({list(np.shape(t._data if isinstance(t, Tensor) else t))})"


class Module:
    """Base class of all layers; subclasses set attributes in ``__init__`` and define
    ``forward``.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn as nn
    >>> class Net(nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = nn.Linear(2, 1)
    ...         self.register_buffer("scale", torch.tensor(2.0))
    ...     def forward(self, x):
    ...         return self.fc(x) * self.scale
    >>> net = Net()
    >>> list(net.state_dict())
    ['scale', 'fc.weight', 'fc.bias']
    >>> net(torch.ones(5, 2)).shape
    torch.Size([5, 1])
    """

    training: bool
    # PyTorch's state-dict format version of the class (a state dict's ``_metadata`` records
    # it per module; version 2 of BatchNorm added ``num_batches_tracked``).
    _version: int = 1

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments; "
                            "Module.__init__ takes none")
        set_ = object.__setattr__
        set_(self, "training", True)
        set_(self, "_parameters", {})
        set_(self, "_buffers", {})
        set_(self, "_non_persistent_buffers_set", set())
        set_(self, "_modules", {})
        set_(self, "_forward_hooks", OrderedDict())
        set_(self, "_forward_pre_hooks", OrderedDict())
        set_(self, "_backward_hooks", OrderedDict())
        set_(self, "_backward_pre_hooks", OrderedDict())
        # True: _backward_hooks are full hooks; False: the old register_backward_hook's.
        set_(self, "_is_full_backward_hook", None)
        # the ids of forward hooks registered with_kwargs / always_call
        set_(self, "_hooks_with_kwargs", set())
        set_(self, "_hooks_always_called", set())

    # The dicts are set in __init__; these annotations are for type checkers.
    _parameters: dict[str, Parameter | None]
    _buffers: dict[str, Tensor | None]
    _non_persistent_buffers_set: set[str]
    _modules: dict[str, Module | None]
    _forward_hooks: OrderedDict[int, Callable[..., Any]]
    _forward_pre_hooks: OrderedDict[int, Callable[..., Any]]
    _backward_hooks: OrderedDict[int, Callable[..., Any]]
    _backward_pre_hooks: OrderedDict[int, Callable[..., Any]]
    _is_full_backward_hook: bool | None
    _hooks_with_kwargs: set[int]
    _hooks_always_called: set[int]

    def __setstate__(self, state: dict[str, Any]) -> None:
        # A module PyTorch pickled keeps its hooks' with_kwargs/always_call marks in dicts
        # keyed by the hook ids; this face keeps the ids in two sets.
        state = dict(state)
        marks = {k: state.pop(k, {}) for k in (
            "_forward_hooks_with_kwargs", "_forward_pre_hooks_with_kwargs",
            "_forward_hooks_always_called")}
        self.__dict__.update(state)
        self.__dict__.setdefault("_hooks_with_kwargs", set(marks["_forward_hooks_with_kwargs"])
                                 | set(marks["_forward_pre_hooks_with_kwargs"]))
        self.__dict__.setdefault("_hooks_always_called",
                                 set(marks["_forward_hooks_always_called"]))

    # Subclasses define forward with their own signature (as in PyTorch).
    forward: Callable[..., Any] = _forward_unimplemented

    # ------------------------------------------------------------ registration

    def _check_ready(self, what: str) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {what} before Module.__init__() call")

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or ``None``) under ``name``."""
        self._check_ready("parameter")
        _check_name(name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            # PyTorch names a tensor by its legacy type ('torch.FloatTensor').
            shown = param.type() if isinstance(param, Tensor) else type(param).__name__
            raise TypeError(f"cannot assign '{shown}' object to parameter "
                            f"'{name}' (torch.nn.Parameter or None required)")
        if param is not None and param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                             "parameters must be created explicitly.")
        self._parameters[name] = G.registered(G.PARAMETER_REGISTRATION, self, name, param)

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True
                        ) -> None:
        """Add a buffer: state that is not a parameter (saved in ``state_dict`` if
        ``persistent``)."""
        self._check_ready("buffer")
        _check_name(name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer "
                            f"'{name}' (torch.Tensor or None required)")
        self._buffers[name] = G.registered(G.BUFFER_REGISTRATION, self, name, tensor)
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a submodule (or ``None``) under ``name``."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        _check_name(name, "module")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = G.registered(G.MODULE_REGISTRATION, self, name, module)

    register_module = add_module

    def __setattr__(self, name: str, value: Any) -> None:
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            self._check_ready("parameters")
            self._forget(name, keep="_parameters")
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_type_name(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            self._check_ready("module")
            self._forget(name, keep="_modules")
            self._modules[name] = G.registered(G.MODULE_REGISTRATION, self, name, value)
        elif name in self.__dict__.get("_modules", {}):
            if value is not None:
                raise TypeError(f"cannot assign '{_type_name(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            self._modules[name] = G.registered(G.MODULE_REGISTRATION, self, name, value)
        elif isinstance(value, Buffer):
            # An nn.Buffer registers itself, with its own persistence.
            self._check_ready("buffer")
            self._forget(name, keep="_buffers")
            self.register_buffer(name, value, value.persistent)
        elif name in self.__dict__.get("_buffers", {}):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_type_name(value)}' as buffer '{name}' "
                                "(torch.Tensor or None expected)")
            self._buffers[name] = G.registered(G.BUFFER_REGISTRATION, self, name, value)
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name: str, keep: str) -> None:
        """Drop ``name`` from every store but ``keep`` (where it keeps its position)."""
        self.__dict__.pop(name, None)
        for d in ("_parameters", "_buffers", "_modules"):
            if d != keep:
                self.__dict__[d].pop(name, None)
        if keep != "_buffers":
            self._non_persistent_buffers_set.discard(name)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for store in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(store, {}):
                del self.__dict__[store][name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        keys = set(super().__dir__())
        for store in ("_parameters", "_buffers", "_modules"):
            keys.update(self.__dict__.get(store, {}))
        return sorted(keys)

    # --------------------------------------------------------------- traversal

    def named_modules(self, memo: set[int] | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """This module and every submodule, with dotted names (``""`` for this one)."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """The direct submodules, with their names."""
        seen: set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def _named_members(self, store: str, prefix: str, recurse: bool,
                       remove_duplicate: bool) -> Iterator[tuple[str, Any]]:
        seen: set[int] = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else iter([(prefix, self)])
        for mod_prefix, module in mods:
            for name, value in module.__dict__[store].items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield mod_prefix + ("." if mod_prefix else "") + name, value

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """Parameters with dotted names: each module's own, then its children's, in
        registration order. A parameter shared by several modules appears once."""
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def get_submodule(self, target: str) -> Module:
        """The submodule at dotted path ``target`` (``""`` is this module)."""
        mod = self
        if not target:
            return mod
        for item in target.split("."):
            if item not in mod._modules or mod._modules[item] is None:
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = mod._modules[item]  # type: ignore[assignment]
        return mod

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Put ``module`` at dotted path ``target`` (its parent must exist; with ``strict``
        the attribute too).

        >>> import funcgrad.torch as torch
        >>> seq = torch.nn.Sequential(torch.nn.Linear(1, 1))
        >>> seq.set_submodule("0", torch.nn.ReLU())
        >>> seq
        Sequential(
          (0): ReLU()
        )
        """
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        parent_path, _, name = target.rpartition(".")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent = self.get_submodule(parent_path)
        if strict and not hasattr(parent, name):
            raise AttributeError(f"{parent._get_name()} has no attribute `{name}`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError(f"`{name}` is not an nn.Module")
        setattr(parent, name, module)

    def get_parameter(self, target: str) -> Parameter:
        # PyTorch's checks and texts: an attribute of that name, then its kind.
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        buffer = getattr(mod, name)
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return cast(Tensor, buffer)

    # -------------------------------------------------------------- state dict

    def state_dict(self, *args: Any, destination: Any = None, prefix: str = "",
                   keep_vars: bool = False) -> OrderedDict[str, Tensor]:
        """Parameters and persistent buffers by dotted name (detached, sharing data)."""
        if args:  # PyTorch's deprecated positional form: (destination, prefix, keep_vars)
            destination = args[0]
            if len(args) > 1:
                prefix = args[1]
            if len(args) > 2:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            # PyTorch's per-module format versions, keyed by the module's dotted path
            # ("" the root): load_state_dict reads them (BatchNorm's num_batches_tracked).
            destination._metadata = OrderedDict()
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for pre_hook in _hooks_of(self, "_state_dict_pre_hooks").values():
            pre_hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        for hook in _hooks_of(self, "_state_dict_hooks").values():
            out = hook(self, destination, prefix, local_metadata)
            if not getattr(hook, "_from_public_api", False):
                # A hook of the private API may return a new dict (PyTorch's old rule).
                if out is not None:
                    destination = out
            elif out is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    def _save_to_state_dict(self, destination: Any, prefix: str, keep_vars: bool) -> None:
        """This module's own entries (PyTorch's method, which subclasses may override):
        parameters, persistent buffers and the extra state."""
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE] = self.get_extra_state()

    def get_extra_state(self) -> Any:
        """The extra state (any picklable object) ``state_dict`` saves for a module that
        overrides this method, as ``_extra_state``."""
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
            "bug-report.yml to report this bug.")

    def set_extra_state(self, state: Any) -> None:
        """Restore what :meth:`get_extra_state` returned (``load_state_dict`` calls it for a
        module that overrides it)."""
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
            "bug-report.yml to report this bug.")

    # ---------------------------------------------------------- state-dict hooks

    def _state_hooks(self, name: str) -> OrderedDict[int, Callable[..., Any]]:
        hooks = self.__dict__.get(name)
        if hooks is None:
            hooks = OrderedDict()
            object.__setattr__(self, name, hooks)
        return hooks

    def register_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(module, prefix, keep_vars)`` runs before ``state_dict`` saves this
        module's entries."""
        return self._register(self._state_hooks("_state_dict_pre_hooks"), hook, False)

    def register_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata)`` runs after ``state_dict``
        saved this module and its submodules; it edits ``state_dict`` in place and returns
        None."""
        hook._from_public_api = True  # type: ignore[attr-defined]
        return self._register(self._state_hooks("_state_dict_hooks"), hook, False)

    def _register_state_dict_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """PyTorch's private form of :meth:`register_state_dict_post_hook`: the hook may
        also return a new dict, which ``state_dict`` then goes on with."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook "
                               "that was previously registered via "
                               "register_state_dict_post_hook")
        return self._register(self._state_hooks("_state_dict_hooks"), hook, False)

    def _register_load_state_dict_pre_hook(self, hook: Callable[..., Any],
                                           with_module: bool = False) -> RemovableHandle:
        """PyTorch's private form of :meth:`register_load_state_dict_pre_hook`: without
        ``with_module`` the hook is not given the module."""
        def call(module: Any, *args: Any) -> Any:
            return hook(module, *args) if with_module else hook(*args)

        return self._register(self._state_hooks("_load_state_dict_pre_hooks"), call, False)

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` runs before this module reads its entries."""
        return self._register(self._state_hooks("_load_state_dict_pre_hooks"), hook, False)

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(module, incompatible_keys)`` runs after this module and its submodules are
        loaded; it may edit the missing and unexpected key lists in place, and returns
        None."""
        return self._register(self._state_hooks("_load_state_dict_post_hooks"), hook, False)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy parameters and buffers from ``state_dict`` (PyTorch's errors for missing,
        unexpected and mis-shaped entries).

        As PyTorch's, it walks the modules depth first: each module's load pre-hooks run
        before it reads its own entries (they may edit the dict it reads), and its load
        post-hooks run once its submodules are loaded (they may edit the keys reported)."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata  # type: ignore[attr-defined]

        def load(module: Module, local: dict[str, Any], prefix: str) -> None:
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local, prefix, local_metadata, True, missing,
                                         unexpected, errors)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local.items()
                                 if k.startswith(child_prefix)}, child_prefix)
            keys = _IncompatibleKeys(missing, unexpected)
            for hook in _hooks_of(module, "_load_state_dict_post_hooks").values():
                out = hook(module, keys)
                if out is not None:
                    raise RuntimeError("load_state_dict post hook should return None, but got "
                                       f"{out}")

        load(self, state_dict, "")
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                self._get_name(), "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    def _load_from_state_dict(self, local: dict[str, Any], prefix: str,
                              local_metadata: dict[str, Any], strict: bool, missing: list[str],
                              unexpected: list[str], errors: list[str]) -> None:
        """This module's own parameters and persistent buffers from ``local``, and the keys
        under ``prefix`` that nothing here takes (PyTorch's method, which subclasses may
        override: ``load_state_dict`` calls it on every module)."""
        assign = bool(local_metadata.get("assign_to_params_buffers", False))
        for hook in _hooks_of(self, "_load_state_dict_pre_hooks").values():
            hook(self, local, prefix, local_metadata, strict, missing, unexpected, errors)
        version = local_metadata.get("version")
        own: list[tuple[str, Tensor, bool]] = [
            (n, p, True) for n, p in self._parameters.items() if p is not None]
        own += [(n, b, False) for n, b in self._buffers.items()
                if b is not None and n not in self._non_persistent_buffers_set]
        for name, current, is_param in own:
            key = prefix + name
            if key not in local:
                if name == "num_batches_tracked" and self._version >= 2 and (
                        version is None or version < 2):
                    continue  # a checkpoint from before BatchNorm counted its batches
                missing.append(key)
                continue
            value = local[key]
            arr = value._data if isinstance(value, Tensor) else value
            if not isinstance(arr, (list, tuple)) and not (
                    hasattr(arr, "shape") and hasattr(arr, "dtype")):
                # A scalar, None or string is no tensor: PyTorch's error (arrays and
                # nested lists are accepted as an extension).
                errors.append(f'While copying the parameter named "{key}", expected '
                              "torch.Tensor or Tensor-like object from checkpoint but "
                              f"received {type(value)}")
                continue
            if not hasattr(arr, "shape") or not hasattr(arr, "dtype"):
                arr = np.asarray(arr)
            if tuple(arr.shape) != tuple(current.shape):
                errors.append(
                    f"size mismatch for {key}: copying a param with shape "
                    f"{_shape_text(arr)} from checkpoint, the shape in current model is "
                    f"{_shape_text(current)}.")
                continue
            if current.is_meta and not assign and not (
                    isinstance(value, Tensor) and value.is_meta):
                warnings.warn(
                    f"for {key}: copying from a non-meta parameter in the checkpoint to a meta "
                    "parameter in the current model, which is a no-op. (Did you mean to pass "
                    "`assign=True` to assign items in the state dictionary to their "
                    "corresponding key in the module instead of copying them in place?)",
                    UserWarning, stacklevel=3)
                continue
            if assign:
                new: Tensor = Parameter(Tensor(arr), current.requires_grad) if is_param \
                    else Tensor(arr)
                store = self._parameters if is_param else self._buffers
                store[name] = new  # type: ignore[assignment]
            else:
                with no_grad():
                    current.copy_(Tensor(arr))
        extra = prefix + _EXTRA_STATE
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra in local:
                self.set_extra_state(local[extra])
            else:
                missing.append(extra)
        elif extra in local:
            unexpected.append(extra)
        names = {n for n, _, _ in own}
        for key in local:
            if key.startswith(prefix) and key != extra:
                first, *rest = key[len(prefix):].split(".", 1)
                if (first not in self._modules) if rest else (first not in names):
                    unexpected.append(key)

    # ------------------------------------------------------------------- modes

    def train(self, mode: bool = True) -> Module:
        """Set training mode (Dropout drops) for this module and its submodules."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self) -> Module:
        """Evaluation mode: ``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the ``.grad`` of every parameter (to ``None`` by default)."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
                continue
            g = p.grad
            if g.grad_fn is not None:
                g.detach_()
            else:
                g.requires_grad_(False)
            with no_grad():
                g.zero_()

    # -------------------------------------------------------------------- calls

    def _register(self, hooks: OrderedDict[int, Callable[..., Any]], hook: Callable[..., Any],
                  prepend: bool) -> RemovableHandle:
        return _register_global(hooks, hook, prepend)

    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args)`` runs before ``forward``; it may return new args
        (``with_kwargs=True``: ``hook(module, args, kwargs)`` may return ``(args, kwargs)``)."""
        handle = self._register(self._forward_pre_hooks, hook, prepend)
        if with_kwargs:
            self._hooks_with_kwargs.add(handle.id)
        return handle

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                              with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """``hook(module, args, output)`` runs after ``forward``; it may return a new
        output (``with_kwargs=True``: ``hook(module, args, kwargs, output)``;
        ``always_call=True``: it runs even when ``forward`` raised)."""
        handle = self._register(self._forward_hooks, hook, prepend)
        if with_kwargs:
            self._hooks_with_kwargs.add(handle.id)
        if always_call:
            self._hooks_always_called.add(handle.id)
        return handle

    def register_full_backward_pre_hook(self, hook: Callable[..., Any], prepend: bool = False
                                        ) -> RemovableHandle:
        """``hook(module, grad_output)`` runs when the gradients of the module's outputs are
        known; it may return new ones."""
        return self._register(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook: Callable[..., Any], prepend: bool = False
                                    ) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` runs when the gradients of the module's
        positional inputs are computed; it may return new ``grad_input``.

        >>> import funcgrad.torch as torch
        >>> lin = torch.nn.Linear(2, 1)
        >>> seen = []
        >>> h = lin.register_full_backward_hook(lambda m, gi, go: seen.append(go[0].shape))
        >>> lin(torch.ones(3, 2, requires_grad=True)).sum().backward()
        >>> seen
        [torch.Size([3, 1])]
        """
        self._hook_kind(True)
        return self._register(self._backward_hooks, hook, prepend)

    def register_backward_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """The deprecated backward hook: ``hook(module, grad_input, grad_output)`` runs as a
        hook of the node of the module's (first) output, so it sees the gradients of that
        last operation's inputs, as PyTorch's.

        >>> import funcgrad.torch as torch
        >>> lin = torch.nn.Linear(2, 1)
        >>> seen = []
        >>> h = lin.register_backward_hook(lambda m, gi, go: seen.append(go[0].shape))
        >>> lin(torch.ones(3, 2)).sum().backward()
        >>> seen
        [torch.Size([3, 1])]
        """
        self._hook_kind(False)
        return self._register(self._backward_hooks, hook, False)

    def _hook_kind(self, full: bool) -> None:
        if getattr(self, "_is_full_backward_hook", None) is (not full):
            raise RuntimeError("Cannot use both regular backward hooks and full backward "
                               "hooks on a single Module. Please use only one of them.")
        object.__setattr__(self, "_is_full_backward_hook", full)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with_kwargs = getattr(self, "_hooks_with_kwargs", ())
        if G.FORWARD_WITH_KWARGS:
            with_kwargs = set(with_kwargs) | G.FORWARD_WITH_KWARGS
        # The global hooks run first, as PyTorch's.
        for key, hook in [*G.FORWARD_PRE.items(), *self._forward_pre_hooks.items()]:
            if key in with_kwargs:
                new = hook(self, args, kwargs)
                if new is not None:
                    if not (isinstance(new, tuple) and len(new) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {new}.")
                    args, kwargs = new
                continue
            new = hook(self, args)
            if new is not None:
                args = new if isinstance(new, tuple) else (new,)
        non_full = getattr(self, "_is_full_backward_hook", None) is False
        bw_hook = None
        if ((getattr(self, "_backward_hooks", None) or G.BACKWARD) and not non_full) or \
                getattr(self, "_backward_pre_hooks", None) or G.BACKWARD_PRE:
            from funcgrad.torch.nn import _backward_hooks  # noqa: PLC0415

            bw_hook, args = _backward_hooks.setup_input_hook(self, args)
        try:
            out = self.forward(*args, **kwargs)
        except Exception:
            always = set(getattr(self, "_hooks_always_called", ())) | G.FORWARD_ALWAYS_CALLED
            for key, hook in [*G.FORWARD.items(), *self._forward_hooks.items()]:
                if key in always:
                    try:
                        hook(self, args, kwargs, None) if key in with_kwargs \
                            else hook(self, args, None)
                    except Exception as e:  # noqa: BLE001 - PyTorch warns and re-raises
                        import warnings  # noqa: PLC0415

                        warnings.warn("forward hook with ``always_call=True`` raised an "
                                      f"exception that was silenced as another error was "
                                      f"raised in forward: {e}", stacklevel=2)
            raise
        for key, hook in [*G.FORWARD.items(), *self._forward_hooks.items()]:
            new = hook(self, args, kwargs, out) if key in with_kwargs else \
                hook(self, args, out)
            if new is not None:
                out = new
        if bw_hook is not None:
            # after the forward hooks, as PyTorch: the gradients seen are those of the result
            out = _backward_hooks.setup_output_hook(bw_hook, out)
        if non_full and self._backward_hooks:
            from funcgrad.torch.nn._backward_hooks import attach_non_full  # noqa: PLC0415

            attach_non_full(self, args, out)
        return out

    # ---------------------------------------------------------- dtype & device

    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> Module:
        """Replace the data of every parameter, gradient and buffer by ``fn`` of it, keeping
        the Parameter objects (so an optimizer made earlier still holds them) unless the
        data moves to or from the meta device (new Parameters then, as PyTorch's, whose
        meta tensors are of another tensor type); ``recurse``: the submodules' too."""
        for module in (self.modules() if recurse else [self]):
            for name, p in module._parameters.items():
                if p is None:
                    continue
                with no_grad():
                    new = fn(p.detach())
                    grad = None if p.grad is None else Tensor(fn(p.grad.detach())._data)
                    if new.is_meta != p.is_meta:
                        p = module._parameters[name] = type(p)(new, p.requires_grad)
                    else:
                        p.data = new._data
                    if grad is not None:
                        p.grad = grad
            for name, b in module._buffers.items():
                if b is not None:
                    with no_grad():
                        module._buffers[name] = fn(b.detach())
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Move to a device and/or cast floating-point parameters and buffers to a dtype."""
        device = kwargs.get("device")
        dtype = kwargs.get("dtype")
        fmt = kwargs.get("memory_format")
        if any(isinstance(a, memory_format) for a in args):
            raise TypeError(_to_overloads(args))
        for a in args:
            if isinstance(a, Tensor):
                device, dtype = a.device, a.dtype
            elif _is_device(a):
                device = a
            else:
                dtype = a
        if dtype is not None:
            dtype = to_torch(dtype)
            if not (dtype.is_floating_point or dtype.is_complex):
                raise TypeError("nn.Module.to only accepts floating point or complex dtypes, "
                                f"but got desired dtype={dtype}")

        def convert(t: Tensor) -> Tensor:
            if dtype is not None and (t.dtype.is_floating_point or t.dtype.is_complex):
                t = t.to(dtype)
            if device is not None and t.is_meta and as_device(device).type != "meta":
                raise NotImplementedError(
                    f"{META_COPY_OUT} Please use torch.nn.Module.to_empty() instead of "
                    "torch.nn.Module.to() when moving module from meta to a different device.")
            if device is not None:
                t = t.to(device)
            if fmt is not None and t.dim() in (4, 5):
                # Only 4-d and 5-d tensors take the layout (a 5-d one refuses
                # channels_last, as in PyTorch).
                t = t.to(memory_format=fmt)
            return t

        return self._apply(convert)

    def to_empty(self, *, device: Any, recurse: bool = True) -> Module:
        """Give every parameter and buffer new, uninitialized memory on ``device``, of its
        shape and dtype (a model made on the ``meta`` device gets its storage so; then
        ``reset_parameters()`` or ``load_state_dict`` fills it).

        >>> import funcgrad.torch as torch
        >>> with torch.device("meta"):
        ...     m = torch.nn.Linear(3, 4)
        >>> m.to_empty(device="cpu").weight.device
        device(type='cpu')
        """
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def _cast_floats(self, dtype: Any) -> Module:
        return self._apply(lambda t: t.to(dtype) if t.dtype.is_floating_point else t)

    def float(self) -> Module:
        return self._cast_floats(np.float32)

    def double(self) -> Module:
        return self._cast_floats(np.float64)

    def half(self) -> Module:
        return self._cast_floats(np.float16)

    def bfloat16(self) -> Module:
        return self._cast_floats(D.bfloat16)

    def type(self, dst_type: Any) -> Module:  # noqa: A003 - PyTorch's name
        """Every parameter and buffer cast to ``dst_type``."""
        return self._apply(lambda t: t.type(dst_type))

    def share_memory(self) -> Module:
        return self._apply(lambda t: cast(Any, t).share_memory_())

    def cuda(self, device: Any = None) -> Module:
        return self.to("cuda" if device is None else f"cuda:{device}")

    def cpu(self) -> Module:
        return self.to("cpu")

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call ``fn`` on every submodule (children first) and then on this module."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    # -------------------------------------------------------------------- repr

    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The text inside the parentheses of this module's repr (override in layers)."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(module), 2)
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


def _type_name(value: Any) -> str:
    """The type as PyTorch names it in errors: ``torch.FloatTensor``, ``int``..."""
    if isinstance(value, Tensor):
        return value.type()
    t = type(value)
    mod = t.__module__.split(".")[0]
    return f"{mod}.{t.__name__}" if mod not in ("builtins",) else t.__name__


def _check_name(name: Any, what: str) -> None:
    if not isinstance(name, str):
        raise TypeError(f"{what} name should be a string. Got {type(name).__name__}")
    if name == "":
        raise KeyError(f'{what} name can\'t be empty string ""')
    if "." in name:
        # (PyTorch's add_module alone names the offending name)
        got = f", got: {name}" if what == "module" else ""
        raise KeyError(f'{what} name can\'t contain "."{got}')


def _to_overloads(args: tuple[Any, ...]) -> str:
    """PyTorch's error for ``Module.to`` given a memory format positionally (its argument
    parser lists the overloads)."""
    names = {memory_format: "torch.memory_format", str: "str", Tensor: "Tensor"}
    got = ", ".join(names.get(type(a)) or ("torch.device" if _is_device(a) else "torch.dtype")
                    for a in args)
    sig = "bool non_blocking = False, bool copy = False, *, torch.memory_format " \
          "memory_format = None)"
    return (f"to() received an invalid combination of arguments - got ({got}), but expected "
            f"one of:\n * (torch.device device = None, torch.dtype dtype = None, {sig}\n"
            f" * (torch.dtype dtype, {sig}\n * (Tensor tensor, {sig}\n")


def _is_device(a: Any) -> bool:
    from funcgrad.devices import Device  # noqa: PLC0415
    from funcgrad.torch._device import device  # noqa: PLC0415

    return isinstance(a, (Device, device)) or (
        isinstance(a, str) and a.split(":")[0] in _DEVICE_TYPES)


# PyTorch's device type names: a string among them names a device, not a dtype (funcgrad
# has only the first two; the others are refused when used).
_DEVICE_TYPES = ("cpu", "cuda", "meta", "mps", "xpu", "hpu", "xla", "mtia", "ipu", "privateuseone")


# --------------------------------------------------------------------- containers


_EXTRA_STATE = "_extra_state"  # the key of a module's extra state in its state_dict


class _ModuleSequence(Module):
    """What Sequential and ModuleList share: integer indexing, deletion with PyTorch's
    renumbering, length and iteration."""

    def _index(self, idx: int) -> str:
        n = len(self._modules)
        i = operator.index(idx)
        if not -n <= i < n:
            raise IndexError(f"index {idx} is out of range")
        return list(self._modules)[i % n]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, self._index(idx), module)

    def __delitem__(self, idx: Any) -> None:
        keys = list(self._modules)[idx] if isinstance(idx, slice) else [self._index(idx)]
        for key in keys:
            del self._modules[key]
        # PyTorch renumbers the remaining modules.
        items = list(self._modules.values())
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(m for m in self._modules.values() if m is not None)

    def pop(self, key: Any) -> Any:
        """Remove and return the module (or slice) at ``key``."""
        v = self[key]  # type: ignore[index]
        del self[key]
        return v


class Sequential(_ModuleSequence):
    """Modules applied one after another; indexable, sliceable, iterable.

    >>> import funcgrad.torch.nn as nn
    >>> seq = nn.Sequential(nn.Linear(2, 2), nn.Tanh(), nn.Linear(2, 1))
    >>> len(seq), seq[1], seq[-1]
    (3, Tanh(), Linear(in_features=2, out_features=1, bias=True))
    >>> seq[:2]
    Sequential(
      (0): Linear(in_features=2, out_features=2, bias=True)
      (1): Tanh()
    )
    """

    def __init__(self, *args: Any) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], Mapping):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return self._modules[self._index(idx)]

    def append(self, module: Module) -> Sequential:
        self.add_module(str(len(self)), module)
        return self

    def extend(self, sequential: Iterable[Module]) -> Sequential:
        for layer in sequential:
            self.append(layer)
        return self

    def __add__(self, other: Any) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        return Sequential().extend(self).extend(other)

    def __iadd__(self, other: Any) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        offset = len(self)
        for i, module in enumerate(other):
            self.add_module(str(i + offset), module)
        return self

    def _factor(self, other: Any) -> int:
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and "
                            f"{type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        return other

    def __mul__(self, other: Any) -> Sequential:
        n = self._factor(other)
        combined = Sequential()
        for _ in range(n):
            combined.extend(self)
        return combined

    def __rmul__(self, other: Any) -> Sequential:
        return self.__mul__(other)

    def __imul__(self, other: Any) -> Sequential:
        n = self._factor(other)
        original = list(self)
        for _ in range(n - 1):
            self.extend(original)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        """Put ``module`` at position ``index`` (the later ones move up by one)."""
        if not isinstance(module, Module):
            raise AssertionError("module should be of type: <class "
                                 "'torch.nn.modules.module.Module'>")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        at = operator.index(index) + (n if index < 0 else 0)
        # Shifted by key, from the end, as PyTorch does (the keys are the positions).
        for i in range(n, at, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(at)] = module
        return self

    def forward(self, input: Any) -> Any:  # noqa: A002 - PyTorch's name
        for module in self:
            input = module(input)
        return input


class ModuleList(_ModuleSequence):
    """A list of submodules, registered so that their parameters are found.

    >>> import funcgrad.torch.nn as nn
    >>> layers = nn.ModuleList([nn.Linear(3, 3) for _ in range(2)])
    >>> layers.append(nn.ReLU())
    ModuleList(
      (0-1): 2 x Linear(in_features=3, out_features=3, bias=True)
      (2): ReLU()
    )
    >>> len(list(layers.parameters()))
    4
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])  # type: ignore[arg-type]
        return self._modules[self._index(idx)]

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        combined = ModuleList()
        for i, module in enumerate([*self, *other]):
            combined.add_module(str(i), module)
        return combined

    def append(self, module: Module) -> ModuleList:
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        if isinstance(modules, (Module, Tensor)) or not isinstance(modules, Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            + type(modules).__name__)
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(items):
            self.add_module(str(i), m)

    def __repr__(self) -> str:
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        groups: list[list[Any]] = []  # [start, end, text]
        for i, text in enumerate(reprs):
            if groups and groups[-1][2] == text:
                groups[-1][1] = i
            else:
                groups.append([i, i, text])
        lines = []
        for start, end, text in groups:
            head = f"({start}): " if start == end else f"({start}-{end}): {end - start + 1} x "
            lines.append(_addindent(head + text, 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


def _register_global(hooks: G.Hooks, hook: Callable[..., Any], prepend: bool = False
                     ) -> RemovableHandle:
    """``hook`` added to ``hooks`` (first if ``prepend``): a module's table or a global one."""
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


def register_module_forward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, args)`` before every Module's ``forward`` (before its own hooks).

    >>> import funcgrad.torch as torch
    >>> seen = []
    >>> h = torch.nn.modules.module.register_module_forward_pre_hook(
    ...     lambda m, args: seen.append(type(m).__name__))
    >>> _ = torch.nn.Linear(2, 1)(torch.ones(2)); h.remove()
    >>> seen
    ['Linear']
    """
    return _register_global(G.FORWARD_PRE, hook)


def register_module_forward_hook(hook: Callable[..., Any], *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:
    """``hook(module, args, output)`` after every Module's ``forward`` (before its own
    hooks); it may return a new output."""
    handle = _register_global(G.FORWARD, hook)
    if with_kwargs:
        G.FORWARD_WITH_KWARGS.add(handle.id)
    if always_call:
        G.FORWARD_ALWAYS_CALLED.add(handle.id)
    return handle


def register_module_full_backward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, grad_output)`` for every Module, before its own backward pre-hooks."""
    return _register_global(G.BACKWARD_PRE, hook)


def register_module_full_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, grad_input, grad_output)`` for every Module, before its own full
    backward hooks."""
    return _register_global(G.BACKWARD, hook)


def register_module_buffer_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, name, buffer)`` whenever a buffer is registered; it may return a
    replacement."""
    return _register_global(G.BUFFER_REGISTRATION, hook)


def register_module_module_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, name, submodule)`` whenever a submodule is registered; it may return
    a replacement."""
    return _register_global(G.MODULE_REGISTRATION, hook)


def register_module_parameter_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, name, param)`` whenever a parameter is registered; it may return a
    replacement."""
    return _register_global(G.PARAMETER_REGISTRATION, hook)


__all__ = ["Module", "ModuleList", "RemovableHandle", "Sequential",
           "register_module_buffer_registration_hook", "register_module_forward_hook",
           "register_module_forward_pre_hook", "register_module_full_backward_hook",
           "register_module_full_backward_pre_hook", "register_module_module_registration_hook",
           "register_module_parameter_registration_hook"]
