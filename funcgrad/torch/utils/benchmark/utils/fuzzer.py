"""``Fuzzer``: random benchmark inputs (sizes, strides, layouts) drawn as PyTorch draws
them, so one seed gives the same parameters and tensors on both.

>>> from funcgrad.torch.utils.benchmark import FuzzedParameter, FuzzedTensor, Fuzzer
>>> fuzzer = Fuzzer(parameters=[FuzzedParameter("n", 4, 16, distribution="uniform")],
...                 tensors=[FuzzedTensor("x", size=("n",))], seed=0)
>>> tensors, properties, params = next(fuzzer.take(1))
>>> tensors["x"].shape[0] == params["n"]
True
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from funcgrad.torch import _dtypes
from funcgrad.torch._creation import rand, randint
from funcgrad.torch._random import manual_seed
from funcgrad.torch._type_info import finfo, iinfo

__all__ = ["FuzzedParameter", "FuzzedTensor", "Fuzzer", "ParameterAlias"]

_DISTRIBUTIONS = ("loguniform", "uniform")

Params = dict[str, Any]


class FuzzedParameter:
    """A named random value: ``"uniform"`` (integers when both bounds are ints),
    ``"loguniform"`` (uniform in log space) or a ``{value: probability}`` dict.
    A ``strict`` parameter keeps its first draw while the fuzzer redraws the others.

    >>> import numpy as np
    >>> p = FuzzedParameter("k", 1, 8, distribution="uniform")
    >>> 1 <= p.sample(np.random.RandomState(0)) <= 8
    True
    """

    def __init__(self, name: str, minval: float | None = None, maxval: float | None = None,
                 distribution: str | dict[Any, float] | None = None,
                 strict: bool = False) -> None:
        self._name = name
        self._minval = minval
        self._maxval = maxval
        self._distribution = self._check_distribution(distribution)
        self.strict = strict

    @property
    def name(self) -> str:
        """The name tensors and constraints refer to it by."""
        return self._name

    def _check_distribution(self, distribution: Any) -> Any:
        if not isinstance(distribution, dict):
            if distribution not in _DISTRIBUTIONS:
                raise AssertionError(f"Unknown distribution: {distribution}")
            return distribution
        if any(p < 0 for p in distribution.values()):
            raise AssertionError("Probabilities cannot be negative")
        # PyTorch 2.13's check is inverted (it refuses exactly the distributions that sum
        # to one, so none can be drawn from); this one is the documented rule.
        if abs(sum(distribution.values()) - 1) > 1e-5:
            raise AssertionError("Distribution is not normalized")
        if self._minval is not None:
            raise AssertionError("When passing a custom distribution, 'minval' must be None")
        if self._maxval is not None:
            raise AssertionError("When passing a custom distribution, 'maxval' must be None")
        return distribution

    def sample(self, state: np.random.RandomState) -> Any:
        """One draw from ``state``."""
        if self._distribution == "loguniform":
            low: Any = None if self._minval is None else np.log2(self._minval)
            high: Any = None if self._maxval is None else np.log2(self._maxval)
            value = int(2 ** state.uniform(low=low, high=high))
            if self._minval is not None and value < self._minval:
                return self._minval
            if self._maxval is not None and value > self._maxval:
                return self._maxval
            return value
        if self._distribution == "uniform":
            if isinstance(self._minval, int) and isinstance(self._maxval, int):
                return int(state.randint(low=self._minval, high=self._maxval + 1))
            bounds: Any = (self._minval, self._maxval)
            return state.uniform(low=bounds[0], high=bounds[1])
        index = state.choice(np.arange(len(self._distribution)),
                             p=tuple(self._distribution.values()))
        return list(self._distribution)[index]


class ParameterAlias:
    """Stands for another parameter's value (in a custom distribution, say, so that two
    sizes are sometimes equal). Chains are allowed, cycles are not.

    >>> ParameterAlias("n")
    ParameterAlias[alias_to: n]
    """

    def __init__(self, alias_to: str) -> None:
        self.alias_to = alias_to

    def __repr__(self) -> str:
        return f"ParameterAlias[alias_to: {self.alias_to}]"


def dtype_size(dtype: Any) -> int:
    """Bytes per element of a PyTorch dtype.

    >>> import funcgrad.torch as torch
    >>> dtype_size(torch.float16)
    2
    """
    if dtype == _dtypes.bool:
        return 1
    if dtype.is_floating_point or dtype.is_complex:
        return int(finfo(dtype).bits / 8)
    return int(iinfo(dtype).bits / 8)


def prod(values: Iterable[Any], base: int = 1) -> int:
    """The product in Python integers (NumPy's int64 product can overflow).

    >>> prod([2**40, 2**40])
    1208925819614629174706176
    """
    return functools.reduce(lambda x, y: int(x) * int(y), values, base)


class FuzzedTensor:
    """A random tensor whose sizes (and ``steps``, strides) name parameters; with
    probability ``1 - probability_contiguous`` its memory order is a random permutation.
    ``min_elements``, ``max_elements`` and ``max_allocation_bytes`` reject draws.

    >>> FuzzedTensor("x", size=("n", 4)).name
    'x'
    """

    def __init__(self, name: str, size: tuple[str | int, ...],
                 steps: tuple[str | int, ...] | None = None,
                 probability_contiguous: float = 0.5, min_elements: int | None = None,
                 max_elements: int | None = None, max_allocation_bytes: int | None = None,
                 dim_parameter: str | None = None, roll_parameter: str | None = None,
                 dtype: Any = _dtypes.float32, cuda: bool = False,
                 tensor_constructor: Callable[..., Any] | None = None) -> None:
        self._name = name
        self._size = size
        self._steps = steps
        self._probability_contiguous = probability_contiguous
        self._min_elements = min_elements
        self._max_elements = max_elements
        self._max_allocation_bytes = max_allocation_bytes
        self._dim_parameter = dim_parameter
        self._dtype = dtype
        self._cuda = cuda
        self._tensor_constructor = tensor_constructor

    @property
    def name(self) -> str:
        """The key of this tensor in what ``Fuzzer.take`` yields."""
        return self._name

    @staticmethod
    def default_tensor_constructor(size: tuple[int, ...], dtype: Any, **kwargs: Any) -> Any:
        """``rand`` for floating and complex dtypes, ``randint(1, 127)`` otherwise."""
        if dtype.is_floating_point or dtype.is_complex:
            return rand(size=size, dtype=dtype, device="cpu")
        return randint(1, 127, size=size, dtype=dtype, device="cpu")

    def _make_tensor(self, params: Params, state: np.random.RandomState) -> tuple[Any, Params]:
        size, steps, allocation = self._get_size_and_steps(params)
        make = self._tensor_constructor or self.default_tensor_constructor
        raw = make(size=allocation, dtype=self._dtype, **params)
        if self._cuda:
            raw = raw.cuda()
        dim = len(size)
        order = np.arange(dim)
        if state.rand() > self._probability_contiguous:
            while dim > 1 and np.all(order == np.arange(dim)):
                order = state.permutation(raw.dim())
            raw = raw.permute(tuple(order)).contiguous().permute(tuple(np.argsort(order)))
        tensor = raw[tuple(slice(0, n * s, s) for n, s in zip(size, steps, strict=True))]
        properties = {"numel": int(tensor.numel()), "order": order, "steps": steps,
                      "is_contiguous": tensor.is_contiguous(), "dtype": str(self._dtype)}
        return tensor, properties

    def _get_size_and_steps(
            self, params: Params) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        dim = params[self._dim_parameter] if self._dim_parameter is not None \
            else len(self._size)

        def resolve(values: tuple[str | int, ...]) -> tuple[int, ...]:
            out = tuple(params.get(v, v) if isinstance(v, str) else v for v in values)[:dim]
            return out + (1,) * (dim - len(out))

        size, steps = resolve(self._size), resolve(self._steps or ())
        return size, steps, tuple(n * s for n, s in zip(size, steps, strict=True))

    def satisfies_constraints(self, params: Params) -> bool:
        """Whether ``params`` give a tensor within the element and allocation limits."""
        size, _, allocation = self._get_size_and_steps(params)
        count = prod(size)
        if count < 0:
            raise AssertionError("Computed number of elements is negative")
        nbytes = prod(allocation, base=dtype_size(self._dtype))

        def above(a: int | None, b: int | None) -> bool:
            return a is not None and b is not None and a > b

        return not (above(count, self._max_elements) or above(self._min_elements, count)
                    or above(nbytes, self._max_allocation_bytes))


class Fuzzer:
    """Draw parameters (redrawing until every constraint holds) and the tensors they
    describe, from a NumPy ``RandomState`` seeded with ``seed`` (which also seeds the
    tensors' generator).

    >>> fuzzer = Fuzzer([FuzzedParameter("n", 1, 4, distribution="uniform")],
    ...                 [FuzzedTensor("x", size=("n",))], seed=1)
    >>> len(list(fuzzer.take(3)))
    3
    """

    def __init__(self, parameters: list[FuzzedParameter | list[FuzzedParameter]],
                 tensors: list[FuzzedTensor | list[FuzzedTensor]],
                 constraints: list[Callable[..., bool]] | None = None,
                 seed: int | None = None) -> None:
        if seed is None:
            seed = int(np.random.RandomState().randint(0, 2 ** 32 - 1, dtype=np.int64))
        self._seed = seed
        self._parameters: tuple[FuzzedParameter, ...] = self._unpack(parameters,
                                                                     FuzzedParameter)
        self._tensors: tuple[FuzzedTensor, ...] = self._unpack(tensors, FuzzedTensor)
        self._constraints = constraints or ()
        overlap = {p.name for p in self._parameters} & {t.name for t in self._tensors}
        if overlap:
            raise ValueError(f"Duplicate names in parameters and tensors: {overlap}")
        self._rejections = 0
        self._total_generated = 0

    @staticmethod
    def _unpack(values: Iterable[Any], cls: type) -> tuple[Any, ...]:
        return tuple(itertools.chain.from_iterable(
            [v] if isinstance(v, cls) else v for v in values))

    def take(self, n: int) -> Iterator[tuple[dict[str, Any], dict[str, Params], Params]]:
        """Yield ``n`` draws of ``(tensors, tensor_properties, params)``."""
        state = np.random.RandomState(self._seed)
        manual_seed(int(state.randint(low=0, high=2 ** 63, dtype=np.int64)))
        for _ in range(n):
            params = self._generate(state)
            tensors, properties = {}, {}
            for t in self._tensors:
                tensors[t.name], properties[t.name] = t._make_tensor(params, state)
            yield tensors, properties, params

    @property
    def rejection_rate(self) -> float:
        """The share of drawn parameter sets that a constraint refused."""
        return self._rejections / self._total_generated if self._total_generated else 0.0

    def _generate(self, state: np.random.RandomState) -> Params:
        strict: Params = {}
        for _ in range(1000):
            params: Params = {}
            for p in self._parameters:
                if p.strict and p.name in strict:
                    params[p.name] = strict[p.name]
                    continue
                params[p.name] = p.sample(state)
                if p.strict:
                    strict[p.name] = params[p.name]
            params = self._resolve_aliases(params)
            self._total_generated += 1
            if not all(c(params) for c in self._constraints) or \
                    not all(t.satisfies_constraints(params) for t in self._tensors):
                self._rejections += 1
                continue
            return params
        raise ValueError("Failed to generate a set of valid parameters.")

    @staticmethod
    def _resolve_aliases(params: Params) -> Params:
        params = dict(params)
        pending = sum(isinstance(v, ParameterAlias) for v in params.values())
        while pending:
            for k, v in list(params.items()):
                if isinstance(v, ParameterAlias):
                    params[k] = params[v.alias_to]
            left = sum(isinstance(v, ParameterAlias) for v in params.values())
            if left == pending:
                raise ValueError(f"ParameterAlias cycle detected\n{params}")
            pending = left
        return params
