"""Pruning of a module's tensors, as ``torch.nn.utils.prune``.

Pruning ``module.<name>`` moves the parameter to ``<name>_orig``, adds a buffer
``<name>_mask`` and sets ``module.<name> = <name>_mask * <name>_orig`` as a plain attribute,
which a forward pre-hook (the pruning method itself) recomputes before every call, so the
gradient reaches ``<name>_orig`` masked. Pruning the same tensor again combines the methods
in a ``PruningContainer``: each new one acts only on the units still unpruned. ``remove``
makes the pruning permanent.

>>> import funcgrad.torch as torch
>>> import funcgrad.torch.nn.utils.prune as prune
>>> lin = torch.nn.Linear(3, 2)
>>> with torch.no_grad():
...     _ = lin.weight.copy_(torch.tensor([[1., -5., 2.], [0.5, 3., -4.]]))
>>> _ = prune.l1_unstructured(lin, "weight", amount=2)
>>> list(lin.state_dict())
['bias', 'weight_orig', 'weight_mask']
>>> lin.weight_mask
tensor([[0., 1., 1.],
        [0., 1., 1.]])
>>> _ = prune.remove(lin, "weight")
>>> [name for name, _ in lin.named_parameters()]
['bias', 'weight']
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

from funcgrad.torch._creation import ones_like, rand, rand_like, zeros_like
from funcgrad.torch._device import contiguous_format
from funcgrad.torch.nn.module import Module
from funcgrad.torch.nn.utils.convert_parameters import parameters_to_vector

__all__ = [
    "BasePruningMethod",
    "CustomFromMask",
    "Identity",
    "L1Unstructured",
    "LnStructured",
    "PruningContainer",
    "RandomStructured",
    "RandomUnstructured",
    "custom_from_mask",
    "global_unstructured",
    "identity",
    "is_pruned",
    "l1_unstructured",
    "ln_structured",
    "random_structured",
    "random_unstructured",
    "remove",
]

T_module = TypeVar("T_module", bound=Module)


class BasePruningMethod(ABC):
    """The base of the pruning methods: a subclass says which entries to keep
    (``compute_mask``); ``apply`` installs it on a module as a forward pre-hook.

    >>> import funcgrad.torch as torch
    >>> class KeepPositive(BasePruningMethod):
    ...     PRUNING_TYPE = "unstructured"
    ...     def compute_mask(self, t, default_mask):
    ...         return default_mask * (t > 0)
    >>> KeepPositive().prune(torch.tensor([1., -2., 3.]))
    tensor([1., -0., 3.])
    """

    # The tensor the method acts on; set by ``apply``, never by ``__init__`` (a method made
    # by hand has no such attribute, and PyTorch's errors for it are AttributeErrors).
    _tensor_name: str

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Any, default_mask: Any) -> Any:
        """The new mask for ``t`` (the importance scores), given the mask so far."""

    def apply_mask(self, module: Module) -> Any:
        """``<name>_mask * <name>_orig`` of ``module``: the pruned tensor."""
        assert self._tensor_name is not None, f"Module {module} has to be pruned"
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module: Module, name: str, *args: Any, importance_scores: Any = None,
              **kwargs: Any) -> BasePruningMethod:
        """Prune ``module.<name>`` with ``cls(*args, **kwargs)`` (combined with the pruning
        already there in a ``PruningContainer``); the mask is computed from
        ``importance_scores`` (default: the tensor itself)."""
        method = _composite_method(cls, module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is not None:
            assert importance_scores.shape == orig.shape, (
                f"importance_scores should have the same shape as parameter {name} of "
                f"{module}, got {importance_scores.shape} vs {orig.shape}")
        else:
            # Pruned before, ``orig`` is the pruned tensor: the scores of pruned entries
            # are zero.
            importance_scores = orig
        container = isinstance(method, PruningContainer)
        if not container:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone(
                memory_format=contiguous_format)
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            # A first pruning that failed leaves the parameter as it was (though last in
            # the order, as in PyTorch); a failed repeat leaves the old mask, unhooked.
            if not container:
                orig = getattr(module, name + "_orig")
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t: Any, default_mask: Any = None,
              importance_scores: Any = None) -> Any:
        """``t`` times the mask computed from ``importance_scores`` (default ``t``)."""
        if importance_scores is not None:
            assert importance_scores.shape == t.shape, (
                "importance_scores should have the same shape as tensor t, got "
                f"{importance_scores.shape} vs {t.shape}")
        else:
            importance_scores = t
        default_mask = default_mask if default_mask is not None else ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module: Module) -> None:
        """Make the pruning permanent: ``<name>`` is a parameter again, holding the pruned
        values; ``<name>_orig`` and ``<name>_mask`` go (the hook stays: see
        ``prune.remove``)."""
        assert self._tensor_name is not None, (
            f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        assert orig is not None
        # The same Parameter object, so an optimizer made before still holds it.
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _composite_method(cls: type[BasePruningMethod], module: Module, name: str, *args: Any,
                      **kwargs: Any) -> BasePruningMethod:
    """A new ``cls(*args, **kwargs)`` for ``name``, in a container with the method already
    pruning ``name`` (whose hook is taken off: the caller registers the result)."""
    old_method = None
    found = 0
    hooks_to_remove = []
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            old_method = hook
            hooks_to_remove.append(k)
            found += 1
    assert found <= 1, (f"Avoid adding multiple pruning hooks to the same tensor {name} of "
                        f"module {module}. Use a PruningContainer.")
    for k in hooks_to_remove:
        del module._forward_pre_hooks[k]
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if isinstance(old_method, PruningContainer):
        old_method.add_pruning_method(method)
        method = old_method
    elif old_method is not None:
        combined = PruningContainer(old_method)
        combined.add_pruning_method(method)
        method = combined
    return method


class PruningContainer(BasePruningMethod):
    """The pruning methods applied in turn to one tensor: each new one acts only on the
    units its predecessors left (entries, channels or everything, by its
    ``PRUNING_TYPE``).

    >>> import funcgrad.torch as torch
    >>> first = L1Unstructured(amount=1)
    >>> first._tensor_name = "weight"
    >>> c = PruningContainer(first)
    >>> second = L1Unstructured(amount=1)
    >>> second._tensor_name = "weight"
    >>> c.add_pruning_method(second)
    >>> c.compute_mask(torch.tensor([3., 1., 2.]), torch.tensor([1., 0., 1.]))
    tensor([1., 0., 0.])
    """

    _pruning_methods: tuple[Any, ...]

    def __init__(self, *args: Any) -> None:
        self._pruning_methods = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method: Any) -> None:
        """Append ``method`` (which must prune the same tensor)."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError("Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found "
                             f"'{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._pruning_methods)

    def __getitem__(self, idx: Any) -> Any:
        return self._pruning_methods[idx]

    def compute_mask(self, t: Any, default_mask: Any) -> Any:
        """``default_mask`` with the last method's mask computed on the unpruned part."""
        method = self._pruning_methods[-1]
        return self._combine_masks(method, t, default_mask)

    @staticmethod
    def _combine_masks(method: Any, t: Any, mask: Any) -> Any:
        # The combined mask takes the dtype of the scores, as PyTorch's does.
        new_mask = mask.to(dtype=t.dtype)
        kind = method.PRUNING_TYPE
        slc: tuple[Any, ...]
        if kind == "unstructured":
            slc = (mask == 1,)
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to '
                                     "have the attribute `dim` defined.")
            n_dims = t.dim()
            dim = method.dim
            if dim < 0:
                dim = n_dims + dim
                if dim < 0:
                    raise IndexError(
                        f"Index is out of bounds for tensor with dimensions {n_dims}")
            # A channel counts as unpruned while any of its entries is.
            keep_channel = mask.sum(dim=[d for d in range(n_dims) if d != dim]) != 0
            parts: list[Any] = [slice(None)] * n_dims
            parts[dim] = keep_channel
            slc = tuple(parts)
        elif kind == "global":
            slc = (slice(None),) * len(t.shape)
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        partial_mask = method.compute_mask(t[slc], default_mask=mask[slc])
        new_mask[slc] = partial_mask.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing: the mask stays all ones (but the module is reparametrized).

    >>> import funcgrad.torch as torch
    >>> lin = Identity.apply(torch.nn.Linear(2, 1), "weight")
    >>> Identity().prune(torch.tensor([1., 2.]))
    tensor([1., 2.])
    """

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Any, default_mask: Any) -> Any:
        return default_mask

    @classmethod
    def apply(cls, module: Module, name: str) -> Identity:  # type: ignore[override]
        """Reparametrize ``module.<name>`` with an all-ones mask."""
        return super().apply(module, name)  # type: ignore[return-value]


def _validate_amount_init(amount: Any) -> None:
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and int(amount) < 0) or (
            not isinstance(amount, numbers.Integral)
            and (float(amount) > 1.0 or float(amount) < 0.0)):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or "
                         "a non-negative integer")


def _validate_amount(amount: Any, tensor_size: int) -> None:
    if isinstance(amount, numbers.Integral) and int(amount) > tensor_size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters "
                         f"to prune={tensor_size}")


def _nparams_toprune(amount: Any, tensor_size: int) -> Any:
    """An integer amount is a count; a fraction is rounded (half to even) to one."""
    if isinstance(amount, numbers.Integral):
        return amount
    return round(amount * tensor_size)


def _k(k: Any, fn: str) -> Any:
    # An amount of True counts as 1 up to here; PyTorch's pruning passes it to topk and
    # kthvalue by keyword, whose argument parser then refuses it (no position in the text).
    if isinstance(k, bool):
        raise TypeError(f"{fn}(): argument 'k' must be int, not bool")
    return k


def _channels_to_prune(t: Any, amount: Any, dim: int) -> tuple[int, Any]:
    """The channel count along ``dim`` and how many of them ``amount`` prunes, checked as
    PyTorch checks them (the tensor, the dim, then the amount)."""
    _validate_structured(t)
    _validate_dim(t, dim)
    tensor_size = t.shape[dim]
    nparams_toprune = _nparams_toprune(amount, tensor_size)
    _validate_amount(nparams_toprune, tensor_size)
    return tensor_size, nparams_toprune


def _validate_structured(t: Any) -> None:
    if len(t.shape) <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional "
                         f"tensors. Found tensor of shape {t.shape} with {len(t.shape)} dims")


def _validate_dim(t: Any, dim: int) -> None:
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _compute_norm(t: Any, n: Any, dim: int) -> Any:
    """The ``n``-norm of each slice of ``t`` along ``dim`` (over all the other dims)."""
    dims = list(range(t.dim()))
    if dim < 0:
        dim = dims[dim]
    dims.remove(dim)
    # torch.norm refuses an unknown order (before it looks at the dims), and 'fro' over
    # more than two dims, which Tensor.norm here would take.
    if isinstance(n, str):
        if n not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {n} not supported.")
        if n == "fro" and len(dims) > 2:
            raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got "
                               + " ".join(map(str, dims)))
    return t.norm(p=n, dim=dims)


def _channel_index(ndim: int, dim: int, which: Any) -> tuple[Any, ...]:
    parts: list[Any] = [slice(None)] * ndim
    parts[dim] = which
    return tuple(parts)


class _Unstructured(BasePruningMethod):
    """Prunes ``amount`` entries (a count, or a fraction of them), chosen by
    ``_pruned(t, k)``: the flat indices of the ``k`` entries to prune."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: Any) -> None:
        _validate_amount_init(amount)
        self.amount = amount

    @abstractmethod
    def _pruned(self, t: Any, k: Any) -> Any:
        """The flat indices of the ``k`` entries of ``t`` to prune."""

    def compute_mask(self, t: Any, default_mask: Any) -> Any:
        tensor_size = t.nelement()
        nparams_toprune = _nparams_toprune(self.amount, tensor_size)
        _validate_amount(nparams_toprune, tensor_size)
        mask = default_mask.clone(memory_format=contiguous_format)
        # Nothing to prune draws nothing: the generator's stream is left as it was.
        if nparams_toprune != 0:
            mask.view(-1)[self._pruned(t, _k(nparams_toprune, "topk"))] = 0
        return mask


class RandomUnstructured(_Unstructured):
    """Prunes ``amount`` entries (a count, or a fraction of them) chosen at random: those
    with the largest draws of ``rand_like`` from the default generator.

    >>> import funcgrad.torch as torch
    >>> _ = torch.manual_seed(0)
    >>> RandomUnstructured(amount=2).compute_mask(torch.zeros(4), torch.ones(4))
    tensor([0., 0., 1., 1.])
    """

    def _pruned(self, t: Any, k: Any) -> Any:
        return rand_like(t).view(-1).topk(k).indices

    @classmethod
    def apply(cls, module: Module, name: str, amount: Any  # type: ignore[override]
              ) -> RandomUnstructured:
        """Prune ``amount`` random entries of ``module.<name>``."""
        return super().apply(module, name, amount=amount)  # type: ignore[return-value]


class L1Unstructured(_Unstructured):
    """Prunes the ``amount`` entries (a count, or a fraction of them) of smallest absolute
    value, ties broken as ``topk(largest=False)`` breaks them.

    >>> import funcgrad.torch as torch
    >>> L1Unstructured(amount=0.5).compute_mask(torch.tensor([3., -1., 2., 0.5]),
    ...                                         torch.ones(4))
    tensor([1., 0., 1., 0.])
    """

    def _pruned(self, t: Any, k: Any) -> Any:
        return t.abs().view(-1).topk(k, largest=False).indices

    @classmethod
    def apply(cls, module: Module, name: str, amount: Any,  # type: ignore[override]
              importance_scores: Any = None) -> L1Unstructured:
        """Prune the ``amount`` smallest entries of ``module.<name>`` (by absolute value of
        ``importance_scores`` if given)."""
        return super().apply(module, name, amount=amount,  # type: ignore[return-value]
                             importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes ``amount`` whole channels along ``dim``, chosen at random: those whose draw
    of ``rand(channels)`` from the default generator is among the ``amount`` smallest.

    >>> import funcgrad.torch as torch
    >>> _ = torch.manual_seed(0)
    >>> RandomStructured(amount=1, dim=0).compute_mask(torch.ones(2, 2), torch.ones(2, 2))
    tensor([[0., 0.],
            [1., 1.]])
    """

    PRUNING_TYPE = "structured"

    def __init__(self, amount: Any, dim: int = -1) -> None:
        _validate_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t: Any, default_mask: Any) -> Any:
        tensor_size, nparams_toprune = _channels_to_prune(t, self.amount, self.dim)
        if nparams_toprune == 0:
            return default_mask
        # Drawn on the CPU default generator, whatever the tensor's device, as PyTorch's.
        prob: Any = rand(tensor_size)
        threshold = prob.kthvalue(_k(nparams_toprune, "kthvalue")).values
        channel_mask = (prob > threshold).to(t.device)
        mask = zeros_like(t)
        mask[_channel_index(len(t.shape), self.dim, channel_mask)] = 1
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module: Module, name: str, amount: Any,  # type: ignore[override]
              dim: int = -1) -> RandomStructured:
        """Prune ``amount`` random channels of ``module.<name>`` along ``dim``."""
        return super().apply(module, name, amount=amount,  # type: ignore[return-value]
                             dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the ``amount`` channels along ``dim`` of smallest ``n``-norm (``n`` as
    ``torch.norm``'s ``p``: a number, ``inf``, ``-inf``, ``'fro'`` or ``'nuc'``).

    >>> import funcgrad.torch as torch
    >>> t = torch.tensor([[1., 2.], [0.1, 0.2], [3., 0.]])
    >>> LnStructured(amount=1, n=2, dim=0).compute_mask(t, torch.ones(3, 2))
    tensor([[1., 1.],
            [0., 0.],
            [1., 1.]])
    """

    PRUNING_TYPE = "structured"

    def __init__(self, amount: Any, n: Any, dim: int = -1) -> None:
        _validate_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t: Any, default_mask: Any) -> Any:
        tensor_size, nparams_toprune = _channels_to_prune(t, self.amount, self.dim)
        nparams_tokeep = tensor_size - nparams_toprune
        # The channels kept are the largest norms, in topk's order for ties.
        norm = _compute_norm(t, self.n, self.dim)
        topk = norm.topk(_k(nparams_tokeep, "topk"), largest=True)
        if nparams_toprune == 0:
            return default_mask
        mask = zeros_like(t)
        mask[_channel_index(len(t.shape), self.dim, topk.indices)] = 1
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module: Module, name: str, amount: Any, n: Any,  # type: ignore[override]
              dim: int, importance_scores: Any = None) -> LnStructured:
        """Prune the ``amount`` channels of ``module.<name>`` along ``dim`` of smallest
        ``n``-norm (of ``importance_scores`` if given)."""
        return super().apply(module, name, amount=amount,  # type: ignore[return-value]
                             n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes with a given mask (multiplied into the mask so far).

    >>> import funcgrad.torch as torch
    >>> CustomFromMask(torch.tensor([0, 1, 1])).prune(torch.tensor([4., 5., 6.]))
    tensor([0., 5., 6.])
    """

    PRUNING_TYPE = "global"

    def __init__(self, mask: Any) -> None:
        self.mask = mask

    def compute_mask(self, t: Any, default_mask: Any) -> Any:
        assert default_mask.shape == self.mask.shape, (
            f"default_mask shape {default_mask.shape} must match self.mask shape "
            f"{self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module: Module, name: str, mask: Any  # type: ignore[override]
              ) -> CustomFromMask:
        """Prune ``module.<name>`` with ``mask``."""
        return super().apply(module, name, mask=mask)  # type: ignore[return-value]


def identity(module: T_module, name: str) -> T_module:
    """Reparametrize ``module.<name>`` as pruned with an all-ones mask.

    >>> import funcgrad.torch as torch
    >>> lin = identity(torch.nn.Linear(2, 1), "bias")
    >>> lin.bias_mask
    tensor([1.])
    """
    Identity.apply(module, name)
    return module


def random_unstructured(module: T_module, name: str, amount: Any) -> T_module:
    """Prune ``amount`` (a count, or a fraction) random entries of ``module.<name>``.

    >>> import funcgrad.torch as torch
    >>> lin = random_unstructured(torch.nn.Linear(4, 2), "weight", amount=0.25)
    >>> int(lin.weight_mask.sum())
    6
    """
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: T_module, name: str, amount: Any,
                    importance_scores: Any = None) -> T_module:
    """Prune the ``amount`` (a count, or a fraction) entries of ``module.<name>`` of
    smallest absolute value (of ``importance_scores`` if given).

    >>> import funcgrad.torch as torch
    >>> lin = torch.nn.Linear(3, 1)
    >>> scores = torch.tensor([[3., 1., 2.]])
    >>> l1_unstructured(lin, "weight", 1, importance_scores=scores).weight_mask
    tensor([[1., 0., 1.]])
    """
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: T_module, name: str, amount: Any, dim: int) -> T_module:
    """Prune ``amount`` (a count, or a fraction) random channels of ``module.<name>``
    along ``dim``.

    >>> import funcgrad.torch as torch
    >>> lin = random_structured(torch.nn.Linear(3, 4), "weight", amount=2, dim=0)
    >>> lin.weight_mask.sum(dim=1).tolist().count(0.0)
    2
    """
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: T_module, name: str, amount: Any, n: Any, dim: int,
                  importance_scores: Any = None) -> T_module:
    """Prune the ``amount`` (a count, or a fraction) channels of ``module.<name>`` along
    ``dim`` of smallest ``n``-norm (of ``importance_scores`` if given).

    >>> import funcgrad.torch as torch
    >>> conv = torch.nn.Conv2d(1, 4, 2)
    >>> conv = ln_structured(conv, "weight", amount=0.5, n=float("inf"), dim=0)
    >>> conv.weight_mask.sum(dim=(1, 2, 3)).tolist().count(0.0)
    2
    """
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters: Iterable[tuple[Module, str]], pruning_method: Any,
                        importance_scores: dict[tuple[Module, str], Any] | None = None,
                        **kwargs: Any) -> None:
    """Prune the ``(module, name)`` tensors together: ``pruning_method(**kwargs)`` (an
    unstructured method) chooses among all their entries at once, as if they were one
    vector, and each tensor gets its part of the mask.

    >>> import funcgrad.torch as torch
    >>> a, b = torch.nn.Linear(2, 1), torch.nn.Linear(2, 1)
    >>> with torch.no_grad():
    ...     _ = a.weight.copy_(torch.tensor([[1., 2.]]))
    ...     _ = b.weight.copy_(torch.tensor([[3., 0.5]]))
    >>> global_unstructured([(a, "weight"), (b, "weight")], L1Unstructured, amount=2)
    >>> a.weight_mask, b.weight_mask
    (tensor([[0., 1.]]), tensor([[1., 0.]]))
    """
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    # ``parameters`` is iterated once per pass, as in PyTorch: a generator is spent by the
    # first pass, and the next sees nothing.
    relevant_importance_scores = _flatten([
        importance_scores.get((module, name), getattr(module, name))
        for (module, name) in parameters])
    default_mask = _flatten([
        getattr(module, name + "_mask", ones_like(getattr(module, name)))
        for (module, name) in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the '
                        f"`pruning_method`. Found method {pruning_method} of type "
                        f"{method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final_mask = container.compute_mask(relevant_importance_scores, default_mask)
    pointer = 0
    for module, name in parameters:
        param = getattr(module, name)
        num_param = param.numel()
        param_mask = final_mask[pointer: pointer + num_param].view_as(param)
        custom_from_mask(module, name, mask=param_mask)
        pointer += num_param


def _flatten(tensors: list[Any]) -> Any:
    if not tensors:
        # What torch.cat says of an empty list.
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    return parameters_to_vector(tensors)


def custom_from_mask(module: T_module, name: str, mask: Any) -> T_module:
    """Prune ``module.<name>`` with the given ``mask``.

    >>> import funcgrad.torch as torch
    >>> lin = custom_from_mask(torch.nn.Linear(2, 1), "weight", torch.tensor([[0, 1]]))
    >>> lin.weight_mask
    tensor([[0., 1.]])
    """
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module: T_module, name: str) -> T_module:
    """Make the pruning of ``module.<name>`` permanent: it is a parameter again, holding
    the pruned values, and the hook, ``<name>_orig`` and ``<name>_mask`` go.

    >>> import funcgrad.torch as torch
    >>> lin = remove(identity(torch.nn.Linear(2, 1), "weight"), "weight")
    >>> list(lin.state_dict())
    ['bias', 'weight']
    """
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before "
                     "pruning can be removed")


def is_pruned(module: Module) -> bool:
    """Whether ``module`` or one of its submodules has a pruning hook.

    >>> import funcgrad.torch as torch
    >>> net = torch.nn.Sequential(torch.nn.Linear(2, 2))
    >>> is_pruned(net)
    False
    >>> _ = identity(net[0], "weight")
    >>> is_pruned(net)
    True
    """
    for _, submodule in module.named_modules():
        for hook in submodule._forward_pre_hooks.values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False
