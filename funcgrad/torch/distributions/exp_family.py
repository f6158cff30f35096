"""``ExponentialFamily``: distributions with density ``exp(<t(x), theta> - F(theta) + k(x))``,
whose entropy and same-family KL divergence follow from the log normalizer ``F``."""

from __future__ import annotations

from typing import Any

from funcgrad.torch.distributions.distribution import Distribution


class ExponentialFamily(Distribution):
    """Base class of the exponential families: subclasses give ``_natural_params``,
    ``_log_normalizer`` and ``_mean_carrier_measure`` (``E[k(x)]``); the entropy is then the
    Bregman form ``F(theta) - <theta, grad F(theta)> - E[k(x)]``.

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.Exponential(torch.tensor([2.0]))
    >>> isinstance(d, ExponentialFamily), ExponentialFamily.entropy(d)
    (True, tensor([0.3069], grad_fn=<SubBackward0>))
    """

    @property
    def _natural_params(self) -> tuple[Any, ...]:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Any) -> Any:
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> Any:
        raise NotImplementedError

    def entropy(self) -> Any:
        from funcgrad.torch import autograd  # noqa: PLC0415 - import cycle

        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for nparam, g in zip(nparams, gradients):
            result = result - (nparam * g).reshape(*self._batch_shape, -1).sum(-1)
        return result
