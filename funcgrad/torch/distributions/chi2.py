"""``Chi2(df)``: ``Gamma(df / 2, 1 / 2)``."""

from __future__ import annotations

from typing import Any

from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.gamma import Gamma


class Chi2(Gamma):
    """The chi-squared distribution with ``df`` degrees of freedom.

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.Chi2(torch.tensor([2.0]))
    >>> d, d.df, d.log_prob(torch.tensor([1.0]))
    (Chi2(), tensor([2.]), tensor([-1.1931]))
    """

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df: Any, validate_args: bool | None = None) -> None:
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Chi2:
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)  # type: ignore[return-value]

    @property
    def df(self) -> Any:
        return self.concentration * 2
