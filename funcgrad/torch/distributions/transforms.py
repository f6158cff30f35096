"""Invertible transforms with log-Jacobians (``torch.distributions.transforms``): ``Transform``,
``ComposeTransform``, ``IndependentTransform``, ``ExpTransform``, ``AffineTransform``,
``SigmoidTransform``, ``TanhTransform``, ``SoftplusTransform`` and ``identity_transform``."""

from __future__ import annotations

import functools
import math
import operator
from numbers import Number
from typing import Any

from funcgrad.torch._type_info import finfo
from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.utils import lazy_property, sum_rightmost, torch
from funcgrad.torch.nn import functional as F

__all__ = ["AffineTransform", "ComposeTransform", "ExpTransform", "IndependentTransform",
           "SigmoidTransform", "SoftplusTransform", "TanhTransform", "Transform",
           "identity_transform"]


class Transform:
    """An invertible map ``x -> y`` with ``log |dy/dx|``; ``cache_size=1`` remembers the last
    pair so ``inv(t(x))`` returns ``x`` itself.

    >>> import funcgrad.torch as torch
    >>> t = ExpTransform()
    >>> t(torch.tensor(0.0)), t.inv(torch.tensor(1.0)), t.inv
    (tensor(1.), tensor(0.), _InverseTransform(ExpTransform()))
    """

    bijective = False
    domain: Any
    codomain: Any

    def __init__(self, cache_size: int = 0) -> None:
        self._cache_size = cache_size
        self._inv: Transform | None = None
        if cache_size == 1:
            self._cached_x_y: tuple[Any, Any] = (None, None)
        elif cache_size != 0:
            raise ValueError("cache_size must be 0 or 1")

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_inv"] = None
        return state

    @property
    def event_dim(self) -> int:
        if self.domain.event_dim == self.codomain.event_dim:
            return int(self.domain.event_dim)
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self) -> Transform:
        """The inverse transform (``t.inv.inv is t``)."""
        inv = self._inv
        if inv is None:
            inv = _InverseTransform(self)
            self._inv = inv
        return inv

    @property
    def sign(self) -> Any:
        """The sign of the Jacobian's determinant (+1 or -1 for monotone maps)."""
        raise NotImplementedError

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other: object) -> bool:
        return self is other

    # Unhashable, as torch's (it defines __eq__ only).
    __hash__ = None  # type: ignore[assignment]

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)


    def __call__(self, x: Any) -> Any:
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y: Any) -> Any:
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x: Any) -> Any:
        raise NotImplementedError

    def _inverse(self, y: Any) -> Any:
        raise NotImplementedError

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        """``log |dy/dx|`` at the pair ``(x, y)``."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return type(self).__name__ + "()"

    def forward_shape(self, shape: Any) -> Any:
        return shape

    def inverse_shape(self, shape: Any) -> Any:
        return shape


class _InverseTransform(Transform):
    def __init__(self, transform: Transform) -> None:
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @constraints.dependent_property(is_discrete=False)
    def domain(self) -> Any:
        assert self._inv is not None
        return self._inv.codomain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self) -> Any:
        assert self._inv is not None
        return self._inv.domain

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        assert self._inv is not None
        return self._inv.bijective

    @property
    def sign(self) -> Any:
        assert self._inv is not None
        return self._inv.sign

    @property
    def inv(self) -> Transform:
        assert self._inv is not None
        return self._inv

    def with_cache(self, cache_size: int = 1) -> Transform:
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _InverseTransform):
            return False
        return self._inv == other._inv

    __hash__ = None


    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._inv!r})"

    def __call__(self, x: Any) -> Any:
        assert self._inv is not None
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        assert self._inv is not None
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape: Any) -> Any:
        assert self._inv is not None
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape: Any) -> Any:
        assert self._inv is not None
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """The transforms ``parts`` applied in order (each responsible for its own caching).

    >>> import funcgrad.torch as torch
    >>> t = ComposeTransform([ExpTransform(), AffineTransform(1.0, 2.0)])
    >>> t(torch.tensor(0.0)), t.log_abs_det_jacobian(torch.tensor(0.0), torch.tensor(3.0))
    (tensor(3.), tensor(0.6931))
    """

    def __init__(self, parts: list[Transform], cache_size: int = 0) -> None:
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = parts

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ComposeTransform):
            return False
        return self.parts == other.parts

    __hash__ = None


    @constraints.dependent_property(is_discrete=False)
    def domain(self) -> Any:
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        # Walk back from the last codomain: a later part may need more event dimensions.
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self) -> Any:
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @lazy_property
    def bijective(self) -> bool:
        return all(p.bijective for p in self.parts)

    @lazy_property
    def sign(self) -> Any:
        sign: Any = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self) -> Transform:
        inv = self._inv
        if inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv = inv
            inv._inv = self
        return inv

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x: Any) -> Any:
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        if not self.parts:
            return torch.zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        terms = []
        event_dim = self.domain.event_dim
        for part, xi, yi in zip(self.parts, xs[:-1], xs[1:]):
            terms.append(sum_rightmost(part.log_abs_det_jacobian(xi, yi),
                                       event_dim - part.domain.event_dim))
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return functools.reduce(operator.add, terms)

    def forward_shape(self, shape: Any) -> Any:
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape: Any) -> Any:
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self) -> str:
        return (type(self).__name__ + "(\n    " + ",\n    ".join(repr(p) for p in self.parts)
                + "\n)")


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """``base_transform`` with its rightmost ``reinterpreted_batch_ndims`` dimensions treated
    as one event (the log-Jacobian sums over them).

    >>> import funcgrad.torch as torch
    >>> IndependentTransform(ExpTransform(), 1).log_abs_det_jacobian(torch.ones(2, 3), None)
    tensor([3., 3.])
    """

    def __init__(self, base_transform: Transform, reinterpreted_batch_ndims: int,
                 cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims,
                                    cache_size=cache_size)

    @constraints.dependent_property(is_discrete=False)
    def domain(self) -> Any:
        return constraints.independent(self.base_transform.domain,
                                       self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self) -> Any:
        return constraints.independent(self.base_transform.codomain,
                                       self.reinterpreted_batch_ndims)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self.base_transform.bijective

    @property
    def sign(self) -> Any:
        return self.base_transform.sign

    def _call(self, x: Any) -> Any:
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y: Any) -> Any:
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y),
                             self.reinterpreted_batch_ndims)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.base_transform!r}, "
                f"{self.reinterpreted_batch_ndims})")

    def forward_shape(self, shape: Any) -> Any:
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape: Any) -> Any:
        return self.base_transform.inverse_shape(shape)


class ExpTransform(Transform):
    """``y = exp(x)``.

    >>> import funcgrad.torch as torch
    >>> ExpTransform()(torch.tensor([0.0, 1.0]))
    tensor([1.0000, 2.7183])
    """

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ExpTransform)

    __hash__ = None


    def _call(self, x: Any) -> Any:
        return x.exp()

    def _inverse(self, y: Any) -> Any:
        return y.log()

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return x


class SigmoidTransform(Transform):
    """``y = sigmoid(x)``, clipped inside ``(0, 1)``; the inverse is the logit.

    >>> import funcgrad.torch as torch
    >>> SigmoidTransform()(torch.tensor(0.0)), SigmoidTransform().inv(torch.tensor(0.75))
    (tensor(0.5000), tensor(1.0986))
    """

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SigmoidTransform)

    __hash__ = None


    def _call(self, x: Any) -> Any:
        info = finfo(x.dtype)
        return x.sigmoid().clamp(min=info.tiny, max=1.0 - info.eps)

    def _inverse(self, y: Any) -> Any:
        info = finfo(y.dtype)
        y = y.clamp(min=info.tiny, max=1.0 - info.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return -F.softplus(-x) - F.softplus(x)


class SoftplusTransform(Transform):
    """``y = log(1 + exp(x))``.

    >>> import funcgrad.torch as torch
    >>> SoftplusTransform().inv(SoftplusTransform()(torch.tensor(0.5)))
    tensor(0.5000)
    """

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SoftplusTransform)

    __hash__ = None


    def _call(self, x: Any) -> Any:
        return F.softplus(x)

    def _inverse(self, y: Any) -> Any:
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return -F.softplus(-x)


class TanhTransform(Transform):
    """``y = tanh(x)``, with a log-Jacobian stable for large ``|x|``.

    >>> import funcgrad.torch as torch
    >>> TanhTransform().log_abs_det_jacobian(torch.tensor(0.0), torch.tensor(0.0))
    tensor(0.)
    """

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TanhTransform)

    __hash__ = None


    def _call(self, x: Any) -> Any:
        return x.tanh()

    def _inverse(self, y: Any) -> Any:
        return y.atanh()

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return 2.0 * (math.log(2.0) - x - F.softplus(-2.0 * x))


class AffineTransform(Transform):
    """``y = loc + scale * x``; ``event_dim`` says how many rightmost dimensions form one
    event (the log-Jacobian sums over them).

    >>> import funcgrad.torch as torch
    >>> t = AffineTransform(1.0, torch.tensor([2.0, -3.0]))
    >>> t(torch.ones(2)), t.sign, t.log_abs_det_jacobian(torch.ones(2), None)
    (tensor([ 3., -2.]), tensor([ 1., -1.]), tensor([0.6931, 1.0986]))
    """

    bijective = True

    def __init__(self, loc: Any, scale: Any, event_dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    @property
    def event_dim(self) -> int:
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self) -> Any:
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self) -> Any:
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self.event_dim, cache_size=cache_size)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AffineTransform):
            return False
        for mine, theirs in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(mine, Number) and isinstance(theirs, Number):
                if mine != theirs:
                    return False
            elif not bool((mine == theirs).all().item()):
                return False
        return True

    __hash__ = None


    @property
    def sign(self) -> Any:
        if isinstance(self.scale, (int, float)):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x: Any) -> Any:
        return self.loc + self.scale * x

    def _inverse(self, y: Any) -> Any:
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        shape = x.shape
        scale = self.scale
        if isinstance(scale, (int, float)):
            result = torch.full_like(x, math.log(abs(scale)))
        else:
            result = scale.abs().log()
        if self.event_dim:
            result = result.view(*result.size()[:-self.event_dim], -1).sum(-1)
            shape = shape[:-self.event_dim]
        return result.expand(shape)

    def forward_shape(self, shape: Any) -> Any:
        return torch.broadcast_shapes(shape, getattr(self.loc, "shape", ()),
                                      getattr(self.scale, "shape", ()))

    def inverse_shape(self, shape: Any) -> Any:
        return torch.broadcast_shapes(shape, getattr(self.loc, "shape", ()),
                                      getattr(self.scale, "shape", ()))
