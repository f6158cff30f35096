"""The containers beyond ``Sequential`` and ``ModuleList``, as PyTorch's: ``ModuleDict``,
``ParameterList``, ``ParameterDict`` and the deprecated ``Container``.

Their entries are registered on the module (as submodules or parameters) under their key
or index, so ``parameters()``, ``state_dict()``, ``to()`` and the rest see them.

>>> import funcgrad.torch as torch
>>> import funcgrad.torch.nn as nn
>>> params = nn.ParameterList([nn.Parameter(torch.ones(2, 3)), torch.zeros(3)])
>>> params
ParameterList(
    (0): Parameter containing: [torch.float32 of size 2x3]
    (1): Parameter containing: [torch.float32 of size 3]
)
>>> list(params.state_dict())
['0', '1']
"""

from __future__ import annotations

import operator
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn.module import Module
from funcgrad.torch.nn.parameter import Parameter

__all__ = ["Container", "ModuleDict", "ParameterDict", "ParameterList"]


class Container(Module):
    """Deprecated: a Module holding the modules given as keyword arguments."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now "
                      "implemented in `nn.Module`. Subclass that instead.", stacklevel=2)
        for key, value in kwargs.items():
            self.add_module(key, value)


class ModuleDict(Module):
    """An ordered dict of submodules, registered so that their parameters are found.

    >>> import funcgrad.torch.nn as nn
    >>> layers = nn.ModuleDict({"lin": nn.Linear(2, 3), "act": nn.ReLU()})
    >>> layers
    ModuleDict(
      (lin): Linear(in_features=2, out_features=3, bias=True)
      (act): ReLU()
    )
    >>> list(layers), "act" in layers
    (['lin', 'act'], True)
    """

    def __init__(self, modules: Any = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]  # type: ignore[return-value]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def clear(self) -> None:
        """Remove every entry."""
        self._modules.clear()

    def pop(self, key: str) -> Module:
        """Remove ``key`` and return its module."""
        value = self[key]
        del self[key]
        return value

    def keys(self) -> Iterable[str]:
        return self._modules.keys()

    def items(self) -> Iterable[tuple[str, Module]]:
        return self._modules.items()  # type: ignore[return-value]

    def values(self) -> Iterable[Module]:
        return self._modules.values()  # type: ignore[return-value]

    def update(self, modules: Any) -> None:
        """Add the entries of a mapping or of an iterable of (key, module) pairs."""
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleDict.update should be called with an iterable of key/value "
                            f"pairs, but got {type(modules).__name__}")
        if isinstance(modules, (OrderedDict, ModuleDict, Mapping)):
            for key, module in modules.items():
                self[key] = module
            return
        for j, m in enumerate(modules):
            if not isinstance(m, Iterable):
                raise TypeError(f"ModuleDict update sequence element #{j} should be Iterable; "
                                f"is{type(m).__name__}")
            if len(m) != 2:  # type: ignore[arg-type]
                raise ValueError(f"ModuleDict update sequence element #{j} has length "
                                 f"{len(m)}; 2 is required")  # type: ignore[arg-type]
            self[m[0]] = m[1]  # type: ignore[index]


def _as_parameter(value: Any) -> Any:
    """PyTorch's rule: a plain Tensor put in a parameter container becomes a Parameter."""
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _describe(p: Any, type_text: str) -> str:
    if not isinstance(p, Tensor):
        return "Object of type: " + type(p).__name__
    size = "x".join(str(n) for n in p.shape)
    device = f" ({p.device})" if str(p.device).startswith("cuda") else ""
    kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
    return f"{kind} containing: [{type_text} of size {size}{device}]"


class ParameterList(Module):
    """A list of parameters (plain Tensors become Parameters), registered as ``'0'``,
    ``'1'``, ...

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn as nn
    >>> params = nn.ParameterList([torch.ones(2)])
    >>> params.append(nn.Parameter(torch.zeros(1)))
    ParameterList(
        (0): Parameter containing: [torch.float32 of size 2]
        (1): Parameter containing: [torch.float32 of size 1]
    )
    >>> [tuple(p.shape) for p in params]
    [(2,), (1,)]
    """

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        object.__setattr__(self, "_size", 0)
        if values is not None:
            self += values

    def _index(self, idx: int) -> str:
        i = operator.index(idx)
        if not -self._size <= i < self._size:
            raise IndexError(f"index {idx} is out of range")
        return str(i % self._size)

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, slice):
            return type(self)([self[i] for i in range(*idx.indices(self._size))])
        return getattr(self, self._index(idx))

    def __setitem__(self, idx: int, param: Any) -> None:
        setattr(self, self._index(idx), _as_parameter(param))

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return iter(self[i] for i in range(self._size))

    def __iadd__(self, parameters: Iterable[Any]) -> ParameterList:
        return self.extend(parameters)

    def append(self, value: Any) -> ParameterList:
        """Add ``value`` at the end."""
        new_idx = self._size
        object.__setattr__(self, "_size", new_idx + 1)
        setattr(self, str(new_idx), _as_parameter(value))
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        """Add each of ``values`` at the end."""
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            + type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(f"  ({k}): " + _describe(p, str(p.dtype) if isinstance(p, Tensor)
                                                   else "")
                         for k, p in enumerate(self))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """An ordered dict of parameters (plain Tensors become Parameters).

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn as nn
    >>> params = nn.ParameterDict({"w": torch.ones(2, 2), "b": torch.zeros(2)})
    >>> params
    ParameterDict(
        (b): Parameter containing: [torch.FloatTensor of size 2]
        (w): Parameter containing: [torch.FloatTensor of size 2x2]
    )
    >>> sorted(params.state_dict())
    ['b', 'w']
    """

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        object.__setattr__(self, "_keys", {})
        if parameters is not None:
            self.update(parameters)

    def _key_to_attr(self, key: Any) -> str:
        if not isinstance(key, str):
            raise TypeError("Index given to ParameterDict cannot be used as a key as it is not "
                            f"a string (type is '{type(key).__name__}'). Open an issue on "
                            "github if you need non-string keys.")
        return key

    def __getitem__(self, key: str) -> Any:
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key: str, value: Any) -> None:
        self._keys[key] = None
        setattr(self, self._key_to_attr(key), _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._keys))

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def copy(self) -> ParameterDict:
        """A new ParameterDict holding the same parameters."""
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        for k in list(self._keys):
            del self[k]

    def pop(self, key: str) -> Any:
        v = self[key]
        del self[key]
        return v

    def popitem(self) -> tuple[str, Any]:
        k, _ = self._keys.popitem()
        self._keys[k] = None  # __delitem__ removes it again
        val = self[k]
        del self[k]
        return k, val

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default

    def fromkeys(self, keys: Iterable[str], default: Any = None) -> ParameterDict:
        return ParameterDict((k, default) for k in keys)

    def keys(self) -> Iterable[str]:
        return self._keys.keys()

    def items(self) -> Iterable[tuple[str, Any]]:
        return ((k, self[k]) for k in self._keys)

    def values(self) -> Iterable[Any]:
        return (self[k] for k in self._keys)

    def update(self, parameters: Any) -> None:
        """Add the entries of a mapping or of an iterable of (key, value) pairs."""
        if not isinstance(parameters, Iterable):
            raise TypeError("ParametersDict.update should be called with an iterable of "
                            "key/value pairs, but got " + type(parameters).__name__)
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            for key, value in parameters.items():
                self[key] = value
        elif isinstance(parameters, Mapping):
            for key, value in sorted(parameters.items()):
                self[key] = value
        else:
            for j, p in enumerate(parameters):
                if not isinstance(p, Iterable):
                    raise TypeError(f"ParameterDict update sequence element #{j} should be "
                                    f"Iterable; is{type(p).__name__}")
                if len(p) != 2:  # type: ignore[arg-type]
                    raise ValueError(f"ParameterDict update sequence element #{j} has length "
                                     f"{len(p)}; 2 is required")  # type: ignore[arg-type]
                self[p[0]] = p[1]  # type: ignore[index]

    def __or__(self, other: ParameterDict) -> ParameterDict:
        out = self.copy()
        out.update(other)
        return out

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        out = other.copy()
        out.update(self)
        return out

    def __ior__(self, other: ParameterDict) -> ParameterDict:
        self.update(other)
        return self

    def extra_repr(self) -> str:
        return "\n".join(f"  ({k}): " + _describe(p, p.type() if isinstance(p, Tensor) else "")
                         for k, p in self.items())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterDict should not be called.")
