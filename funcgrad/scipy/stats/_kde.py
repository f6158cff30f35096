"""``jax.scipy.stats.gaussian_kde``: a Gaussian kernel density estimate (SciPy's), a pytree
so it can be passed through ``jit`` and differentiated.

>>> import funcgrad.numpy as jnp
>>> from funcgrad.scipy.stats import gaussian_kde
>>> kde = gaussian_kde(jnp.array([-1.0, 0.0, 1.0]))
>>> round(float(kde.integrate_box_1d(-10.0, 10.0)), 4)
1.0
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad import random
from funcgrad.scipy import linalg, special
from funcgrad.transforms.jit import jit
from funcgrad.transforms.vmap import vmap
from funcgrad.tree_util import register_pytree_node_class

_FIELDS = ("neff", "dataset", "weights", "covariance", "inv_cov")


def _inexact(*xs: Any) -> list[Any]:
    dt = jnp.result_type(*xs, float)
    return [jnp.asarray(x, dt) for x in xs]


@register_pytree_node_class
class gaussian_kde:  # noqa: N801 - SciPy's and JAX's name
    """The density estimate of ``dataset`` (shape ``(n,)`` or ``(d, n)``) as a sum of
    Gaussians with the data's (weighted) covariance scaled by a bandwidth factor:
    ``bw_method`` "scott" (default), "silverman", a number, or a function of the estimate.

    >>> import funcgrad.numpy as jnp
    >>> kde = gaussian_kde(jnp.array([[0.0, 1.0, 2.0], [1.0, 0.0, 2.0]]), bw_method=0.5)
    >>> kde.d, kde.n, kde.pdf(jnp.array([1.0, 1.0])).shape
    (2, 3, (1,))
    """

    __slots__ = _FIELDS
    neff: Any
    dataset: Any
    weights: Any
    covariance: Any
    inv_cov: Any

    def __init__(self, dataset: Any, bw_method: str | float | Callable[..., Any] | None = None,
                 weights: Any = None) -> None:
        dataset = jnp.atleast_2d(dataset)
        if jnp.iscomplexobj(dataset):
            raise NotImplementedError("gaussian_kde does not support complex data")
        if not dataset.size > 1:
            raise ValueError("`dataset` input should have multiple elements.")
        d, n = dataset.shape
        if weights is not None:
            dataset, weights = _inexact(dataset, weights)
            weights = jnp.atleast_1d(weights)
            weights = weights / jnp.sum(weights)
            if weights.ndim != 1:
                raise ValueError("`weights` input should be one-dimensional.")
            if len(weights) != n:
                raise ValueError("`weights` input should be of length n")
        else:
            (dataset,) = _inexact(dataset)
            weights = jnp.full(n, 1.0 / n, dtype=dataset.dtype)
        object.__setattr__(self, "dataset", dataset)
        object.__setattr__(self, "weights", weights)
        neff = 1 / jnp.sum(weights ** 2)
        object.__setattr__(self, "neff", neff)
        if bw_method is None or (isinstance(bw_method, str) and bw_method == "scott"):
            factor = jnp.power(neff, -1.0 / (d + 4))
        elif isinstance(bw_method, str) and bw_method == "silverman":
            factor = jnp.power(neff * (d + 2) / 4.0, -1.0 / (d + 4))
        elif jnp.isscalar(bw_method) and not isinstance(bw_method, str):
            factor = bw_method
        elif callable(bw_method):
            factor = bw_method(self)
        else:
            raise ValueError(
                "`bw_method` should be 'scott', 'silverman', a scalar, or a callable.")
        data_cov = jnp.atleast_2d(jnp.cov(dataset, rowvar=True, bias=False, aweights=weights))
        object.__setattr__(self, "covariance", data_cov * factor ** 2)
        object.__setattr__(self, "inv_cov", jnp.linalg.inv(data_cov) / factor ** 2)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field '{name}'")  # frozen, as JAX's

    def tree_flatten(self) -> tuple[tuple[Any, ...], None]:
        return tuple(getattr(self, f) for f in _FIELDS), None

    @classmethod
    def tree_unflatten(cls, aux: Any, children: Any) -> gaussian_kde:
        kde = cls.__new__(cls)
        for f, v in zip(_FIELDS, children):
            object.__setattr__(kde, f, v)
        return kde

    @property
    def d(self) -> int:
        return int(self.dataset.shape[0])

    @property
    def n(self) -> int:
        return int(self.dataset.shape[1])

    def evaluate(self, points: Any) -> Any:
        """The density at ``points`` (shape ``(d, m)``, or ``(m,)`` for ``d == 1``)."""
        pts = self._reshape_points(points)
        return _kernel_sums(False, self.dataset.T, self.weights[:, None], pts.T,
                            self.inv_cov)[:, 0]

    def __call__(self, points: Any) -> Any:
        return self.evaluate(points)

    def pdf(self, x: Any) -> Any:
        """The density (``evaluate``)."""
        return self.evaluate(x)

    def logpdf(self, x: Any) -> Any:
        """The log density, summed in log space (no underflow far from the data)."""
        pts = self._reshape_points(x)
        return _kernel_sums(True, self.dataset.T, self.weights[:, None], pts.T,
                            self.inv_cov)[:, 0]

    def integrate_gaussian(self, mean: Any, cov: Any) -> Any:
        """The integral of the density times the Gaussian ``N(mean, cov)``."""
        mean = jnp.atleast_1d(jnp.squeeze(mean))
        cov = jnp.atleast_2d(cov)
        if mean.shape != (self.d,):
            raise ValueError(f"mean does not have dimension {self.d}")
        if cov.shape != (self.d, self.d):
            raise ValueError(f"covariance does not have dimension {self.d}")
        chol = linalg.cho_factor(self.covariance + cov)
        norm = 1.0 / (jnp.sqrt(2 * np.pi) ** self.d * jnp.prod(jnp.diag(chol[0])))
        return _convolved(chol, norm, self.dataset, self.weights, mean)

    def integrate_box_1d(self, low: Any, high: Any) -> Any:
        """The probability of ``[low, high]`` for a one-dimensional estimate."""
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        if np.ndim(low) != 0 or np.ndim(high) != 0:
            raise ValueError("the limits of integration in integrate_box_1d must be scalars")
        return _box_1d(self, low, high)

    def integrate_kde(self, other: gaussian_kde) -> Any:
        """The integral of the product of this density and ``other``."""
        if other.d != self.d:
            raise ValueError("KDEs are not the same dimensionality")
        chol = linalg.cho_factor(self.covariance + other.covariance)
        norm = 1.0 / (jnp.sqrt(2 * np.pi) ** self.d * jnp.prod(jnp.diag(chol[0])))
        small, large = (self, other) if self.n < other.n else (other, self)
        per_point = vmap(lambda m: _convolved(chol, norm, large.dataset, large.weights, m),
                         in_axes=1)(small.dataset)
        return jnp.sum(per_point * small.weights)

    def resample(self, key: Any, shape: tuple[int, ...] = ()) -> Any:
        """Draws from the estimate: shape ``(d,) + shape``."""
        return _resample(self, key, tuple(shape))

    def integrate_box(self, low_bounds: Any, high_bounds: Any, maxpts: Any = None) -> Any:
        """Not in JAX's interface (nor here): only ``integrate_box_1d``."""
        raise NotImplementedError(
            "only 1D box integrations are supported; use `integrate_box_1d`")

    def set_bandwidth(self, bw_method: Any = None) -> Any:
        """Not in JAX's interface (nor here): the estimate is immutable."""
        raise NotImplementedError("dynamically changing the bandwidth method is not supported")

    def _reshape_points(self, points: Any) -> Any:
        if jnp.iscomplexobj(points):
            raise NotImplementedError("gaussian_kde does not support complex coordinates")
        points = jnp.atleast_2d(points)
        d, m = points.shape
        if d != self.d:
            if d == 1 and m == self.d:
                return jnp.reshape(points, (self.d, 1))
            raise ValueError(f"points have dimension {d}, dataset has dimension {self.d}")
        return points


@jit
def _box_1d(kde: gaussian_kde, low: Any, high: Any) -> Any:
    sigma = jnp.squeeze(jnp.sqrt(kde.covariance))
    lo = jnp.squeeze((low - kde.dataset) / sigma)
    hi = jnp.squeeze((high - kde.dataset) / sigma)
    return jnp.sum(kde.weights * (special.ndtr(hi) - special.ndtr(lo)))


def _resample_impl(kde: gaussian_kde, key: Any, shape: tuple[int, ...]) -> Any:
    ind_key, eps_key = random.split(key)
    ind = random.choice(ind_key, kde.n, shape=shape, p=kde.weights)
    eps = random.multivariate_normal(eps_key, jnp.zeros(kde.d, kde.covariance.dtype),
                                     kde.covariance, shape=shape, dtype=kde.dataset.dtype).T
    return kde.dataset[:, ind] + eps


_resample = jit(_resample_impl, static_argnums=2)


def _convolved(chol: Any, norm: Any, target: Any, weights: Any, mean: Any) -> Any:
    diff = target - mean[:, None]
    alpha = linalg.cho_solve(chol, diff)
    return norm * jnp.sum(jnp.exp(-0.5 * jnp.sum(diff * alpha, axis=0)) * weights)


def _kernel_sums_impl(in_log: bool, points: Any, values: Any, xi: Any, precision: Any) -> Any:
    """Per row of ``xi``: the weighted sum (or log-sum-exp) of Gaussian kernels around
    ``points``, in the coordinates where ``precision`` is the identity."""
    points, values, xi, precision = _inexact(points, values, xi, precision)
    d = points.shape[1]
    if xi.shape[1] != d:
        raise ValueError("points and xi must have same trailing dim")
    if precision.shape != (d, d):
        raise ValueError("precision matrix must match data dims")
    whitening = linalg.cholesky(precision, lower=True)
    points, xi = jnp.dot(points, whitening), jnp.dot(xi, whitening)
    log_norm = jnp.sum(jnp.log(jnp.diag(whitening))) - 0.5 * d * jnp.log(2 * np.pi)

    def kernel(x_test: Any, x_train: Any, y_train: Any) -> Any:
        arg = log_norm - 0.5 * jnp.sum(jnp.square(x_train - x_test))
        return jnp.log(y_train) + arg if in_log else y_train * jnp.exp(arg)

    reduce = special.logsumexp if in_log else jnp.sum
    return vmap(lambda x: reduce(vmap(kernel, in_axes=(None, 0, 0))(x, points, values),
                                 axis=0))(xi)


_kernel_sums = jit(_kernel_sums_impl, static_argnums=0)

__all__ = ["gaussian_kde"]
