"""The ``Distribution`` base class (``torch.distributions.Distribution``)."""

from __future__ import annotations

import warnings
from typing import Any

from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.utils import lazy_property, torch


class Distribution:
    """A family of probability distributions with a batch and an event shape.

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.Normal(torch.zeros(2), torch.ones(2))
    >>> d.batch_shape, d.event_shape
    (torch.Size([2]), torch.Size([]))
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turns argument validation on or off for distributions made afterwards."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape: Any = (), event_shape: Any = (),
                 validate_args: bool | None = None) -> None:
        self._batch_shape = torch.Size(batch_shape)
        self._event_shape = torch.Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if not self._validate_args:
            return
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                          "`arg_constraints = {}` or initialize the distribution with "
                          "`validate_args=False` to turn off validation.", stacklevel=2)
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue
            if param not in self.__dict__ and isinstance(getattr(type(self), param, None),
                                                         lazy_property):
                continue
            value = getattr(self, param)
            if not bool(constraint.check(value).all()):
                raise ValueError(
                    f"Expected parameter {param} ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                    f"constraint {constraint!r}, but found invalid values:\n{value}")

    @property
    def batch_shape(self) -> Any:
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> Any:
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self) -> dict[str, Any]:
        """Parameter name to the constraint it must satisfy."""
        raise NotImplementedError

    @property
    def support(self) -> Any:
        """The constraint every sample satisfies."""
        raise NotImplementedError

    @property
    def mean(self) -> Any:
        raise NotImplementedError

    @property
    def mode(self) -> Any:
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Any:
        raise NotImplementedError

    @property
    def stddev(self) -> Any:
        return self.variance.sqrt()

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        raise NotImplementedError

    def _get_checked_instance(self, cls: type, _instance: Any = None) -> Any:
        if _instance is None and type(self).__init__ is not cls.__init__:  # type: ignore[misc]
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a "
                "custom __init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def sample(self, sample_shape: Any = ()) -> Any:
        """Draws a sample (or a batch of ``sample_shape`` samples) without gradients."""
        with torch.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Any:
        """Draws a reparameterized sample, through which gradients flow."""
        raise NotImplementedError

    def log_prob(self, value: Any) -> Any:
        raise NotImplementedError

    def cdf(self, value: Any) -> Any:
        raise NotImplementedError

    def icdf(self, value: Any) -> Any:
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Any:
        raise NotImplementedError

    def entropy(self) -> Any:
        raise NotImplementedError

    def perplexity(self) -> Any:
        return self.entropy().exp()

    def _extended_shape(self, sample_shape: Any = ()) -> Any:
        return torch.Size(tuple(sample_shape) + tuple(self._batch_shape)
                          + tuple(self._event_shape))

    def _validate_sample(self, value: Any) -> None:
        if not isinstance(value, torch.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        size = torch.Size(value.shape)
        start = len(size) - len(self._event_shape)
        if size[start:] != self._event_shape:
            raise ValueError("The right-most size of value must match event_shape: "
                             f"{size} vs {self._event_shape}.")
        expected = torch.Size(tuple(self._batch_shape) + tuple(self._event_shape))
        for i, j in zip(reversed(size), reversed(expected)):
            if i != 1 and j not in (1, i):
                raise ValueError("Value is not broadcastable with batch_shape+event_shape: "
                                 f"{size} vs {expected}.")
        support = self.support
        if not bool(support.check(value).all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape "
                f"{tuple(value.shape)}) to be within the support ({support!r}) of the "
                f"distribution {self!r}, but found invalid values:\n{value}")

    def __repr__(self) -> str:
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
            for p in names)
        return f"{type(self).__name__}({args})"
