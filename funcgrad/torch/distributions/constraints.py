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
    def __init__(self, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented
                 ) -> None:
        self._is_discrete, self._event_dim = is_discrete, event_dim

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return bool(self._is_discrete)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return int(self._event_dim)

    def __call__(self, *, is_discrete: Any = NotImplemented,
                 event_dim: Any = NotImplemented) -> _Dependent:
        if is_discrete is NotImplemented:
            is_discrete = self._is_discrete
        if event_dim is NotImplemented:
            event_dim = self._event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, value: Any) -> Any:
        raise ValueError("Cannot determine validity of dependent constraint")


class _DependentProperty(property, _Dependent):
    """A property on instances and a dependent constraint on the class (so a support that
    depends on parameters goes unchecked where the class is inspected).

    >>> class D:
    ...     @dependent_property(is_discrete=True, event_dim=0)
    ...     def support(self):
    ...         return integer_interval(0, 3)
    >>> D().support, is_dependent(D.support), D.support.is_discrete
    (IntegerInterval(lower_bound=0, upper_bound=3), True, True)
    """

    def __init__(self, fn: Any = None, *, is_discrete: Any = NotImplemented,
                 event_dim: Any = NotImplemented) -> None:
        property.__init__(self, fn)
        self._is_discrete, self._event_dim = is_discrete, event_dim

    def __call__(self, fn: Any) -> _DependentProperty:  # type: ignore[override]
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


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


class _GreaterThanEq(Constraint):
    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound

    def check(self, value: Any) -> Any:
        return self.lower_bound <= value

    def __repr__(self) -> str:
        return f"GreaterThanEq(lower_bound={self.lower_bound})"


class _IntegerGreaterThan(Constraint):
    is_discrete = True

    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound

    def check(self, value: Any) -> Any:
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self) -> str:
        return f"IntegerGreaterThan(lower_bound={self.lower_bound})"


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


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value: Any) -> Any:
        return ((value == 0) | (value == 1)).all(-1) & value.sum(-1).eq(1)


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value: Any) -> Any:
        lower = (value.tril() == value).reshape(*value.shape[:-2], -1).all(-1)
        return lower & (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)


class _Square(Constraint):
    event_dim = 2

    def check(self, value: Any) -> Any:
        from funcgrad.torch.distributions.utils import torch  # noqa: PLC0415 - import cycle

        return torch.full(value.shape[:-2], value.shape[-2] == value.shape[-1],
                          dtype=torch.bool, device=value.device)


class _Symmetric(_Square):
    def check(self, value: Any) -> Any:
        square = super().check(value)
        if not bool(square.all()):
            return square

        return value.isclose(value.mT, atol=1e-6).all(-2).all(-1)


class _PositiveDefinite(_Symmetric):
    def check(self, value: Any) -> Any:
        symmetric = super().check(value)
        if not bool(symmetric.all()):
            return symmetric
        from funcgrad.torch import linalg  # noqa: PLC0415 - import cycle

        return linalg.cholesky_ex(value).info.eq(0)


class _IndependentConstraint(Constraint):
    def __init__(self, base: Constraint, reinterpreted_batch_ndims: int) -> None:
        self.base_constraint, self.reinterpreted_batch_ndims = base, reinterpreted_batch_ndims

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value: Any) -> Any:
        result = self.base_constraint.check(value)
        n = self.reinterpreted_batch_ndims
        if result.dim() < n:
            raise ValueError(f"Expected value.dim() >= {self.base_constraint.event_dim + n} "
                             f"but got {value.dim()}")
        return result.reshape(*result.shape[:result.dim() - n], -1).all(-1)

    def __repr__(self) -> str:
        return (f"IndependentConstraint({self.base_constraint!r}, "
                f"{self.reinterpreted_batch_ndims})")


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
real = _Real()
real_vector = _IndependentConstraint(real, 1)
boolean = _Boolean()
one_hot = _OneHot()
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
greater_than_eq = _GreaterThanEq
lower_cholesky = _LowerCholesky()
square = _Square()
symmetric = _Symmetric()
positive_definite = _PositiveDefinite()
unit_interval = _Interval(0.0, 1.0)
simplex = _Simplex()
greater_than = _GreaterThan
less_than = _LessThan
interval = _Interval
integer_interval = _IntegerInterval

__all__ = ["Constraint", "boolean", "dependent", "dependent_property", "greater_than",
           "greater_than_eq", "independent", "integer_interval", "interval", "is_dependent",
           "less_than", "lower_cholesky", "nonnegative", "nonnegative_integer", "one_hot",
           "positive", "positive_definite", "positive_integer", "real", "real_vector",
           "simplex", "square", "symmetric", "unit_interval"]
