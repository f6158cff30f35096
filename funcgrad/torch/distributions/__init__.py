"""``torch.distributions``: probability distributions with reparameterized sampling,
log-densities, entropies and KL divergences, built on the Tensor face (so gradients flow).

Supported: ``Normal``, ``Uniform``, ``Bernoulli``, ``Categorical``, ``Exponential``,
``Laplace``, ``Gamma``, ``Beta``, ``Dirichlet``, ``Poisson``, ``Binomial``, ``Geometric``,
``OneHotCategorical``, ``MultivariateNormal``, ``Independent``, ``LogNormal`` and
``TransformedDistribution`` over the ``transforms`` (``ExpTransform``, ``AffineTransform``,
``SigmoidTransform``, ``TanhTransform``, ``SoftplusTransform``, ``ComposeTransform``,
``IndependentTransform``); ``ExponentialFamily`` as their base where torch has it.
``kl_divergence`` covers the pairs torch 2.13 registers among these families, extensible
with ``register_kl``. Samples come from funcgrad's random streams, not PyTorch's bits; gamma,
beta and Dirichlet samples carry implicit reparameterization gradients.
"""

from __future__ import annotations

from funcgrad.torch.distributions import constraints, transforms
from funcgrad.torch.distributions.bernoulli import Bernoulli
from funcgrad.torch.distributions.beta import Beta
from funcgrad.torch.distributions.binomial import Binomial
from funcgrad.torch.distributions.categorical import Categorical
from funcgrad.torch.distributions.dirichlet import Dirichlet
from funcgrad.torch.distributions.distribution import Distribution
from funcgrad.torch.distributions.exp_family import ExponentialFamily
from funcgrad.torch.distributions.exponential import Exponential
from funcgrad.torch.distributions.gamma import Gamma
from funcgrad.torch.distributions.geometric import Geometric
from funcgrad.torch.distributions.independent import Independent
from funcgrad.torch.distributions.kl import kl_divergence, register_kl
from funcgrad.torch.distributions.laplace import Laplace
from funcgrad.torch.distributions.log_normal import LogNormal
from funcgrad.torch.distributions.multivariate_normal import MultivariateNormal
from funcgrad.torch.distributions.normal import Normal
from funcgrad.torch.distributions.one_hot_categorical import OneHotCategorical
from funcgrad.torch.distributions.poisson import Poisson
from funcgrad.torch.distributions.transformed_distribution import TransformedDistribution
from funcgrad.torch.distributions.transforms import (
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    IndependentTransform,
    SigmoidTransform,
    SoftplusTransform,
    TanhTransform,
    Transform,
)
from funcgrad.torch.distributions.uniform import Uniform

__all__ = ["AffineTransform", "Bernoulli", "Beta", "Binomial", "Categorical",
           "ComposeTransform", "Dirichlet", "Distribution", "ExpTransform", "Exponential",
           "ExponentialFamily", "Gamma", "Geometric", "Independent", "IndependentTransform",
           "Laplace", "LogNormal", "MultivariateNormal", "Normal", "OneHotCategorical",
           "Poisson", "SigmoidTransform", "SoftplusTransform", "TanhTransform", "Transform",
           "TransformedDistribution", "Uniform", "constraints", "kl_divergence",
           "register_kl", "transforms"]
