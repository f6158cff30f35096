"""``torch.distributions``: probability distributions with reparameterized sampling,
log-densities, entropies and KL divergences, built on the Tensor face (so gradients flow).

Supported: ``Normal``, ``Uniform``, ``Bernoulli``, ``Categorical``; ``kl_divergence`` for each
same-family pair, extensible with ``register_kl``. Samples come from funcgrad's random
streams, not PyTorch's bits.
"""

from __future__ import annotations

from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.bernoulli import Bernoulli
from funcgrad.torch.distributions.categorical import Categorical
from funcgrad.torch.distributions.distribution import Distribution
from funcgrad.torch.distributions.kl import kl_divergence, register_kl
from funcgrad.torch.distributions.normal import Normal
from funcgrad.torch.distributions.uniform import Uniform

__all__ = ["Bernoulli", "Categorical", "Distribution", "Normal", "Uniform", "constraints",
           "kl_divergence", "register_kl"]
