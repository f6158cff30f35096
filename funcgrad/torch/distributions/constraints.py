"""The few constraints the distributions check (``torch.distributions.constraints``)."""

from __future__ import annotations

from typing import Any


class Constraint:
    """A region of values; ``check`` says elementwise (per event) whether a value lies in it.

    >>> import funcgrad.torch as torch
    >>> positive.check(torch.tensor([1.0, -1.0]))
    tensor([ True, False])
    """

    is_discrete = False
    event_dim = 0

    def check(self, value: Any) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        return type(self).__name__[1:] + "()"


class _Dependent(Constraint):
    def __init__(self, *, is_discrete: bool = False, event_dim: int = 0) -> None:
        self.is_discrete, self.event_dim = is_discrete, event_dim

    def check(self, value: Any) -> Any:
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint: Any) -> bool:
    """Whether ``constraint`` depends on other parameters (and so goes unchecked).

    >>> is_dependent(real), is_dependent(dependent)
    (False, True)
    """
    return isinstance(constraint, _Dependent)


class _Real(Constraint):
    def check(self, value: Any) -> Any:
        return value == value  # noqa: PLR0124 - false only for NaN


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value: Any) -> Any:
        return (value == 0) | (value == 1)


class _GreaterThan(Constraint):
    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound

    def check(self, value: Any) -> Any:
        return self.lower_bound < value

    def __repr__(self) -> str:
        return f"GreaterThan(lower_bound={self.lower_bound})"


class _LessThan(Constraint):
    def __init__(self, upper_bound: Any) -> None:
        self.upper_bound = upper_bound

    def check(self, value: Any) -> Any:
        return value < self.upper_bound

    def __repr__(self) -> str:
        return f"LessThan(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value: Any) -> Any:
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return f"Interval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerInterval(_Interval):
    is_discrete = True

    def check(self, value: Any) -> Any:
        return (value % 1 == 0) & super().check(value)

    def __repr__(self) -> str:
        return "Integer" + super().__repr__()


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value: Any) -> Any:
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _IndependentConstraint(Constraint):
    def __init__(self, base: Constraint, reinterpreted_batch_ndims: int) -> None:
        self.base_constraint, self.reinterpreted_batch_ndims = base, reinterpreted_batch_ndims
        self.event_dim = base.event_dim + reinterpreted_batch_ndims

    def check(self, value: Any) -> Any:
        result = self.base_constraint.check(value)
        for _ in range(self.reinterpreted_batch_ndims):
            result = result.all(-1)
        return result

    def __repr__(self) -> str:
        return (f"IndependentConstraint({self.base_constraint!r}, "
                f"{self.reinterpreted_batch_ndims})")


dependent = _Dependent()
real = _Real()
real_vector = _IndependentConstraint(real, 1)
boolean = _Boolean()
positive = _GreaterThan(0.0)
unit_interval = _Interval(0.0, 1.0)
simplex = _Simplex()
greater_than = _GreaterThan
less_than = _LessThan
interval = _Interval
integer_interval = _IntegerInterval

__all__ = ["Constraint", "boolean", "dependent", "greater_than", "integer_interval",
           "interval", "is_dependent", "less_than", "positive", "real", "real_vector",
           "simplex", "unit_interval"]
