"""Parametrizations of a module's tensors, as ``torch.nn.utils.parametrize``.

``register_parametrization(module, "weight", P)`` moves ``module.weight`` to
``module.parametrizations.weight.original`` and makes ``module.weight`` a property that
computes ``P(original)`` on every access, so gradients reach ``original`` through ``P``.
As in PyTorch, the module's class is swapped for a subclass named ``Parametrized<Name>``
that holds the property, and the class is swapped back when the last parametrization goes.

>>> import funcgrad.torch as torch
>>> import funcgrad.torch.nn as nn
>>> from funcgrad.torch.nn.utils import parametrize
>>> class Symmetric(nn.Module):
...     def forward(self, X):
...         return X.triu() + X.triu(1).mT
>>> lin = nn.Linear(3, 3)
>>> _ = parametrize.register_parametrization(lin, "weight", Symmetric())
>>> bool((lin.weight == lin.weight.T).all())
True
>>> list(lin.state_dict())
['bias', 'parametrizations.weight.original']
>>> type(lin).__name__, parametrize.type_before_parametrizations(lin).__name__
('ParametrizedLinear', 'Linear')
"""

from __future__ import annotations

import collections.abc
import copyreg
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from copy import deepcopy
from typing import Any

from funcgrad.torch._grad_mode import no_grad
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn.containers import ModuleDict
from funcgrad.torch.nn.module import Module, ModuleList
from funcgrad.torch.nn.parameter import Parameter

__all__ = [
    "ParametrizationList",
    "cached",
    "is_parametrized",
    "register_parametrization",
    "remove_parametrizations",
    "transfer_parametrizations_and_params",
    "type_before_parametrizations",
]

# Nesting depth of ``cached()`` and the tensors computed inside it, by (id(module), name).
_cache_enabled = 0
_cache: dict[tuple[int, str], Tensor | None] = {}


@contextmanager
def cached() -> Iterator[None]:
    """Inside this context a parametrized tensor is computed once, on first access, and
    reused until the outermost ``cached()`` exits.

    >>> import funcgrad.torch.nn as nn
    >>> from funcgrad.torch.nn.utils import parametrize, parametrizations
    >>> lin = parametrizations.orthogonal(nn.Linear(3, 3))
    >>> with parametrize.cached():
    ...     same = lin.weight is lin.weight
    >>> same, lin.weight is lin.weight
    (True, False)
    """
    global _cache, _cache_enabled  # noqa: PLW0603 - PyTorch's module-level cache
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register_parameter_or_buffer(module: Module, name: str, x: Tensor) -> None:
    if isinstance(x, Parameter):
        module.register_parameter(name, x)
    else:
        module.register_buffer(name, x)


def _maybe_set(dest: Any, src: Any) -> None:
    # ``set_`` keeps the tensor object (an optimizer made earlier still holds it).
    dest.set_(src)
    # funcgrad's set_ misreads a view whose storage is Fortran-ordered (geqrf's output,
    # transposed, reaches here from orthogonal's right_inverse); its own memory is safe.
    if dest.shape != src.shape or not bool((dest == src).all()):
        dest.set_(src.clone())


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and the unparametrized
    tensor they start from: ``original`` (or ``original0``, ``original1``, ... when the
    first parametrization's ``right_inverse`` returns a sequence).

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn as nn
    >>> from funcgrad.torch.nn.utils import parametrize
    >>> plist = parametrize.ParametrizationList([nn.Identity()], torch.ones(2))
    >>> plist.original, plist()
    (tensor([1., 1.]), tensor([1., 1.]))
    """

    original: Tensor
    unsafe: bool
    is_tensor: bool
    ntensors: int

    def __init__(self, modules: Sequence[Module], original: Tensor,
                 unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe

        original_shape = original.shape
        original_dtype = original.dtype

        # ``original`` is what the last right_inverse (the first module's) returns for
        # the tensor as it is now, so that registering leaves the parametrized value as is.
        with no_grad():
            new: Any = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass

        if not isinstance(new, (Tensor, Sequence)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                             f"(list, tuple...). Got {type(new).__name__}")

        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)

        if isinstance(new, Tensor):
            if original.dtype != new.dtype:
                raise ValueError(
                    "When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                    f"original.dtype: {original.dtype}\n"
                    f"right_inverse(original).dtype: {new.dtype}")
            if original.device != new.device:
                raise ValueError(
                    "When `right_inverse` outputs one tensor, it may not change the device.\n"
                    f"original.device: {original.device}\n"
                    f"right_inverse(original).device: {new.device}")
            with no_grad():
                _maybe_set(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, originali in enumerate(new):
                if not isinstance(originali, Tensor):
                    raise ValueError(
                        "'right_inverse' must return a Tensor or a Sequence of tensors "
                        "(list, tuple...). "
                        f"Got element {i} of the sequence with type {type(originali).__name__}.")
                if isinstance(original, Parameter):
                    originali = Parameter(originali, original.requires_grad)
                originali.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", originali)

        if not self.unsafe:
            z = self()
            if not isinstance(z, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got "
                                 f"{type(z).__name__}.")
            if z.dtype != original_dtype:
                raise ValueError(
                    "Registering a parametrization may not change the dtype of the tensor, "
                    "unless `unsafe` flag is enabled.\n"
                    f"unparametrized dtype: {original_dtype}\n"
                    f"parametrized dtype: {z.dtype}")
            if z.shape != original_shape:
                raise ValueError(
                    "Registering a parametrization may not change the shape of the tensor, "
                    "unless `unsafe` flag is enabled.\n"
                    f"unparametrized shape: {original_shape}\n"
                    f"parametrized shape: {z.shape}")

    def right_inverse(self, value: Tensor) -> None:
        """Set the originals so that the parametrized tensor becomes ``value`` (what
        assigning ``module.weight = value`` does): each ``right_inverse``, last first."""
        with no_grad():
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    value = module.right_inverse(value)
                else:
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       "implement right_inverse.")
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError("`right_inverse` should return a tensor. Got "
                                     f"{type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype "
                                     f"{value.dtype} while `original` has dtype "
                                     f"{self.original.dtype}")
                _maybe_set(self.original, value)
            else:
                if not isinstance(value, collections.abc.Sequence):
                    raise ValueError("'right_inverse' must return a sequence of tensors. "
                                     f"Got {type(value).__name__}.")
                if len(value) != self.ntensors:
                    raise ValueError("'right_inverse' must return a sequence of tensors of "
                                     f"length {self.ntensors}. Got a sequence of length "
                                     f"{len(value)}.")
                for i, tensor in enumerate(value):
                    original_i = getattr(self, f"original{i}")
                    if not isinstance(tensor, Tensor):
                        raise ValueError("'right_inverse' must return a sequence of tensors "
                                         "or reference-type opaques. Got element "
                                         f"{i} of type {type(tensor).__name__}.")
                    if original_i.dtype != tensor.dtype:
                        raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype "
                                         f"{tensor.dtype} while `original{i}` has dtype "
                                         f"{original_i.dtype}")
                    _maybe_set(original_i, tensor)

    def forward(self) -> Tensor:
        if self.is_tensor:
            x = self[0](self.original)
        else:
            originals = (getattr(self, f"original{i}") for i in range(self.ntensors))
            x = self[0](*originals)
        curr_idx = 1
        while hasattr(self, str(curr_idx)):
            x = self[curr_idx](x)
            curr_idx += 1
        return x


def _default_deepcopy(self: Module, memo: dict[int, Any]) -> Module:
    obj = memo.get(id(self), None)
    if obj is not None:
        return obj
    replica = self.__new__(self.__class__)
    memo[id(self)] = replica
    replica.__dict__ = deepcopy(self.__dict__, memo)
    for slot in copyreg._slotnames(self.__class__):  # type: ignore[attr-defined]
        if hasattr(self, slot):
            setattr(replica, slot, deepcopy(getattr(self, slot), memo))
    return replica


def _getstate(self: Module) -> Any:
    raise RuntimeError(
        "Serialization of parametrized modules is only supported through state_dict(). See:\n"
        "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
        "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training")


def _inject_new_class(module: Module) -> None:
    """Give ``module`` a class of its own, ``Parametrized<Name>``, to hold the properties
    (a property on the original class would parametrize every instance)."""
    cls = module.__class__
    dct: dict[str, Any] = {"__getstate__": _getstate}
    # Pickling is refused above, and copy.deepcopy goes through pickling's protocol.
    if not hasattr(cls, "__deepcopy__"):
        dct["__deepcopy__"] = _default_deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), dct)


def _inject_property(module: Module, tensor_name: str) -> None:
    if hasattr(module, tensor_name):
        raise AssertionError(f"Module already has an attribute named '{tensor_name}'")

    def get_cached_parametrization(parametrization: Module) -> Tensor:
        key = (id(module), tensor_name)
        tensor = _cache.get(key)
        if tensor is None:
            tensor = parametrization()
            _cache[key] = tensor
        return tensor

    def get_parametrized(self: Module) -> Tensor:
        parametrization = self.parametrizations[tensor_name]
        if _cache_enabled:
            return get_cached_parametrization(parametrization)
        return parametrization()

    def set_original(self: Module, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Make ``module.<tensor_name>`` the result of ``parametrization`` applied to a new
    ``module.parametrizations.<tensor_name>.original``; registering again on the same name
    stacks the new parametrization after the existing ones.

    If ``parametrization`` has ``right_inverse``, the original is set to
    ``right_inverse(tensor)`` (so the parametrized tensor keeps its value) and assigning to
    ``module.<tensor_name>`` goes through it. ``unsafe=True`` skips the shape and dtype
    checks.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn as nn
    >>> from funcgrad.torch.nn.utils import parametrize
    >>> class Double(nn.Module):
    ...     def forward(self, X):
    ...         return 2 * X
    ...     def right_inverse(self, A):
    ...         return A / 2
    >>> lin = nn.Linear(2, 1)
    >>> with torch.no_grad():
    ...     lin.weight.fill_(3.0)
    Parameter containing:
    tensor([[3., 3.]], requires_grad=True)
    >>> lin = parametrize.register_parametrization(lin, "weight", Double())
    >>> lin.parametrizations.weight.original
    Parameter containing:
    tensor([[1.5000, 1.5000]], requires_grad=True)
    >>> lin.weight
    tensor([[3., 3.]], grad_fn=<MulBackward0>)
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got "
                                 f"{type(x).__name__}.")
            if x.dtype != y.dtype:
                raise ValueError(
                    "Registering a parametrization may not change the dtype of the tensor, "
                    "unless the `unsafe` flag is enabled.\n"
                    f"module.{tensor_name}.dtype: {y.dtype}\n"
                    f"parametrization(module.{tensor_name}).dtype: {x.dtype}")
            if x.shape != y.shape:
                raise ValueError(
                    "Registering a parametrization may not change the shape of the tensor, "
                    "unless the `unsafe` flag is enabled.\n"
                    f"module.{tensor_name}.shape: {y.shape}\n"
                    f"parametrization(module.{tensor_name}).shape: {x.shape}")
            if hasattr(parametrization, "right_inverse"):
                try:
                    z = parametrization.right_inverse(x)
                except NotImplementedError:
                    pass
                else:
                    if not isinstance(z, Tensor):
                        raise ValueError("parametrization.right_inverse must return a tensor. "
                                         f"Got: {type(z).__name__}")
                    if z.dtype != y.dtype:
                        raise ValueError(
                            "The tensor returned by parametrization.right_inverse must have "
                            f"the same dtype as module.{tensor_name}, unless the `unsafe` "
                            "flag is enabled.\n"
                            f"module.{tensor_name}.dtype: {y.dtype}\n"
                            f"returned dtype: {z.dtype}")
                    if z.shape != y.shape:
                        raise ValueError(
                            "The tensor returned by parametrization.right_inverse must have "
                            f"the same shape as module.{tensor_name}, unless the `unsafe` "
                            "flag is enabled.\n"
                            f"module.{tensor_name}.shape: {y.shape}\n"
                            f"returned shape: {z.shape}")
        plist = module.parametrizations[tensor_name]
        plist.append(parametrization)
        plist.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has any parametrization (or one on ``tensor_name``).

    >>> import funcgrad.torch.nn as nn
    >>> from funcgrad.torch.nn.utils import parametrize, parametrizations
    >>> lin = parametrizations.weight_norm(nn.Linear(2, 2))
    >>> parametrize.is_parametrized(lin), parametrize.is_parametrized(lin, "bias")
    (True, False)
    """
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module: Module, tensor_name: str,
                            leave_parametrized: bool = True) -> Module:
    """Undo ``register_parametrization`` on ``tensor_name``: the tensor becomes a plain
    parameter (or buffer) again, holding the parametrized value
    (``leave_parametrized=True``) or ``original``.

    >>> import funcgrad.torch.nn as nn
    >>> from funcgrad.torch.nn.utils import parametrize, parametrizations
    >>> lin = parametrizations.orthogonal(nn.Linear(3, 3))
    >>> lin = parametrize.remove_parametrizations(lin, "weight")
    >>> type(lin).__name__, list(lin.state_dict())
    ('Linear', ['bias', 'weight'])
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with no_grad():
                t = getattr(module, tensor_name)
                _maybe_set(original, t)
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                             "that is parametrized in terms of a sequence of tensors.")
        t = getattr(module, tensor_name)
        original = Parameter(t) if t.requires_grad else t

    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)

    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The class ``module`` had before it was parametrized (its class if it is not).

    >>> import funcgrad.torch.nn as nn
    >>> from funcgrad.torch.nn.utils import parametrize, parametrizations
    >>> parametrize.type_before_parametrizations(parametrizations.weight_norm(nn.Linear(2, 2)))
    <class 'funcgrad.torch.nn.modules.Linear'>
    """
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(from_module: Module, to_module: Module,
                                         tensor_name: str | None = None) -> Module:
    """Register on ``to_module`` the parametrizations ``from_module`` has (all of them, or
    those of ``tensor_name``), sharing their modules and original parameters.

    >>> import funcgrad.torch.nn as nn
    >>> from funcgrad.torch.nn.utils import parametrize, parametrizations
    >>> src = parametrizations.orthogonal(nn.Linear(3, 3))
    >>> dst = parametrize.transfer_parametrizations_and_params(src, nn.Linear(3, 3))
    >>> dst.parametrizations.weight.original is src.parametrizations.weight.original
    True
    """
    if is_parametrized(from_module):
        names: Any = from_module.parametrizations if tensor_name is None else [tensor_name]
        for parameter_name in names:
            if not hasattr(to_module, parameter_name):
                setattr(to_module, parameter_name,
                        Parameter(getattr(from_module, parameter_name)))
            source = from_module.parametrizations[parameter_name]
            for param_func in source:
                register_parametrization(to_module, parameter_name, param_func)
            target = to_module.parametrizations[parameter_name]
            if hasattr(source, "original"):
                target.original = source.original
            else:
                num = 0
                while hasattr(source, f"original{num}"):
                    setattr(target, f"original{num}", getattr(source, f"original{num}"))
                    num += 1
    return to_module
