"""``torch.distributions``: probability distributions with reparameterized sampling,
log-densities, entropies and KL divergences, built on the Tensor face (so gradients flow).

Supported: ``Normal``, ``Uniform``, ``Bernoulli``, ``Categorical``, ``Exponential``,
``Laplace``, ``Gamma``, ``Chi2``, ``Beta``, ``Dirichlet``, ``Poisson``, ``Binomial``,
``Geometric``, ``NegativeBinomial``, ``Multinomial``, ``OneHotCategorical``,
``OneHotCategoricalStraightThrough``, ``MultivariateNormal``, ``LowRankMultivariateNormal``,
``Independent``, ``MixtureSameFamily``, ``StudentT``, ``Cauchy``, ``HalfCauchy``,
``HalfNormal``, ``LogNormal``, ``Gumbel``, ``Weibull``, ``Pareto``, ``Kumaraswamy``,
``FisherSnedecor``, ``InverseGamma``, ``GeneralizedPareto``, ``ContinuousBernoulli``,
``LogisticNormal``, ``RelaxedBernoulli``, ``RelaxedOneHotCategorical``, ``VonMises``,
``Wishart``, ``LKJCholesky`` and ``TransformedDistribution`` over the ``transforms``;
``biject_to`` and ``transform_to`` (``constraint_registry``); ``ExponentialFamily`` as their
base where torch has it. ``kl_divergence`` covers the pairs torch 2.13 registers among these
families, extensible with ``register_kl``. Samples built on
``rand``/``randn``/``cauchy_``/``exponential_`` follow ``torch.manual_seed`` as PyTorch's
CPU stream does (the von Mises rejection sampler included); gamma-based ones (gamma, beta,
chi2, Student's t, Dirichlet, F, negative binomial, Wishart, LKJ) come from funcgrad's own
gamma sampler and carry implicit reparameterization gradients.
"""

from __future__ import annotations

from funcgrad.torch.distributions import constraint_registry, constraints, transforms
from funcgrad.torch.distributions.bernoulli import Bernoulli
from funcgrad.torch.distributions.beta import Beta
from funcgrad.torch.distributions.binomial import Binomial
from funcgrad.torch.distributions.categorical import Categorical
from funcgrad.torch.distributions.cauchy import Cauchy
from funcgrad.torch.distributions.chi2 import Chi2
from funcgrad.torch.distributions.constraint_registry import biject_to, transform_to
from funcgrad.torch.distributions.continuous_bernoulli import ContinuousBernoulli
from funcgrad.torch.distributions.dirichlet import Dirichlet
from funcgrad.torch.distributions.distribution import Distribution
from funcgrad.torch.distributions.exp_family import ExponentialFamily
from funcgrad.torch.distributions.exponential import Exponential
from funcgrad.torch.distributions.fishersnedecor import FisherSnedecor
from funcgrad.torch.distributions.gamma import Gamma
from funcgrad.torch.distributions.generalized_pareto import GeneralizedPareto
from funcgrad.torch.distributions.geometric import Geometric
from funcgrad.torch.distributions.gumbel import Gumbel
from funcgrad.torch.distributions.half_cauchy import HalfCauchy
from funcgrad.torch.distributions.half_normal import HalfNormal
from funcgrad.torch.distributions.independent import Independent
from funcgrad.torch.distributions.inverse_gamma import InverseGamma
from funcgrad.torch.distributions.kl import kl_divergence, register_kl
from funcgrad.torch.distributions.kumaraswamy import Kumaraswamy
from funcgrad.torch.distributions.laplace import Laplace
from funcgrad.torch.distributions.lkj_cholesky import LKJCholesky
from funcgrad.torch.distributions.log_normal import LogNormal
from funcgrad.torch.distributions.logistic_normal import LogisticNormal
from funcgrad.torch.distributions.lowrank_multivariate_normal import LowRankMultivariateNormal
from funcgrad.torch.distributions.mixture_same_family import MixtureSameFamily
from funcgrad.torch.distributions.multinomial import Multinomial
from funcgrad.torch.distributions.multivariate_normal import MultivariateNormal
from funcgrad.torch.distributions.negative_binomial import NegativeBinomial
from funcgrad.torch.distributions.normal import Normal
from funcgrad.torch.distributions.one_hot_categorical import (
    OneHotCategorical,
    OneHotCategoricalStraightThrough,
)
from funcgrad.torch.distributions.pareto import Pareto
from funcgrad.torch.distributions.poisson import Poisson
from funcgrad.torch.distributions.relaxed_bernoulli import RelaxedBernoulli
from funcgrad.torch.distributions.relaxed_categorical import RelaxedOneHotCategorical
from funcgrad.torch.distributions.studentT import StudentT
from funcgrad.torch.distributions.transformed_distribution import TransformedDistribution
from funcgrad.torch.distributions.transforms import (
    AbsTransform,
    AffineTransform,
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from funcgrad.torch.distributions.uniform import Uniform
from funcgrad.torch.distributions.von_mises import VonMises
from funcgrad.torch.distributions.weibull import Weibull
from funcgrad.torch.distributions.wishart import Wishart

__all__ = ["AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "CatTransform",
           "Categorical", "Cauchy", "Chi2", "ComposeTransform", "ContinuousBernoulli",
           "CorrCholeskyTransform", "CumulativeDistributionTransform", "Dirichlet",
           "Distribution", "ExpTransform", "Exponential", "ExponentialFamily",
           "FisherSnedecor", "Gamma", "GeneralizedPareto", "Geometric", "Gumbel",
           "HalfCauchy", "HalfNormal", "Independent", "IndependentTransform", "InverseGamma",
           "Kumaraswamy", "LKJCholesky", "Laplace", "LogNormal", "LogisticNormal",
           "LowRankMultivariateNormal", "LowerCholeskyTransform", "MixtureSameFamily",
           "Multinomial", "MultivariateNormal", "NegativeBinomial", "Normal",
           "OneHotCategorical", "OneHotCategoricalStraightThrough", "Pareto", "Poisson",
           "PositiveDefiniteTransform", "PowerTransform", "RelaxedBernoulli",
           "RelaxedOneHotCategorical", "ReshapeTransform", "SigmoidTransform",
           "SoftmaxTransform", "SoftplusTransform", "StackTransform", "StickBreakingTransform",
           "StudentT", "TanhTransform", "Transform", "TransformedDistribution", "Uniform",
           "VonMises", "Weibull", "Wishart", "biject_to", "constraint_registry", "constraints",
           "identity_transform", "kl_divergence", "register_kl", "transform_to", "transforms"]
