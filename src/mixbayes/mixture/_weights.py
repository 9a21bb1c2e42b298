r"""Priors on the mixture weights: the finite symmetric Dirichlet and a truncated stick-breaking
(Dirichlet-process) prior, each with its conjugate variational factor.

* :class:`DirichletWeights`: :math:`\lambda \sim \mathrm{Dir}(\alpha\mathbf 1_K)`,
  :math:`q(\lambda) = \mathrm{Dir}(\alpha + N)`.
* :class:`StickBreakingWeights`: :math:`v_k \sim \mathrm{Beta}(1, \gamma)`,
  :math:`\lambda_k = v_k\prod_{j<k}(1 - v_j)`, truncated at K sticks as in scikit-learn;
  :math:`q(v_k) = \mathrm{Beta}(1 + N_k, \gamma + \sum_{j>k} N_j)` and
  :math:`E[\log\lambda_k] = E[\log v_k] + \sum_{j<k} E[\log(1 - v_j)]`.

Both turn expected cluster sizes :math:`N` into a posterior, its :math:`E[\log\lambda]`, the
negated KL term of the ELBO, and the posterior mean weights.
"""

import numpy as np
from scipy.special import betaln, digamma

from ..families.dirichlet import dirichlet_expected_log, dirichlet_neg_kl


class DirichletWeights:
    """Finite symmetric Dirichlet prior with concentration ``prior``."""

    def __init__(self, prior):
        self.prior = float(prior)

    def posterior(self, counts):
        return self.prior + counts

    @staticmethod
    def expected_log(posterior):
        return dirichlet_expected_log(posterior)

    def neg_kl(self, posterior, expected_log):
        return dirichlet_neg_kl(posterior, self.prior, expected_log)

    def counts(self, posterior):
        return posterior - self.prior

    @staticmethod
    def mean(posterior):
        return posterior / posterior.sum()


class StickBreakingWeights:
    """Truncated stick-breaking prior :math:`v_k \\sim \\mathrm{Beta}(1, \\gamma)`, ``prior`` = gamma.

    The posterior is a (K, 2) array of Beta parameters.
    """

    def __init__(self, prior):
        self.prior = float(prior)

    def posterior(self, counts):
        beyond = np.cumsum(counts[::-1])[::-1] - counts  # sum_{j > k} N_j
        return np.column_stack([1.0 + counts, self.prior + beyond])

    @staticmethod
    def expected_log(posterior):
        a, b = posterior[:, 0], posterior[:, 1]
        total = digamma(a + b)
        log_rest = digamma(b) - total
        return digamma(a) - total + np.concatenate([[0.0], np.cumsum(log_rest)[:-1]])

    def neg_kl(self, posterior, expected_log):
        r"""Minus the sum of :math:`\mathrm{KL}(\mathrm{Beta}(a_k, b_k)\,\|\,\mathrm{Beta}(1, \gamma))`."""
        a, b = posterior[:, 0], posterior[:, 1]
        a0, b0 = 1.0, self.prior
        kl = (betaln(a0, b0) - betaln(a, b) + (a - a0) * digamma(a) + (b - b0) * digamma(b)
              + (a0 - a + b0 - b) * digamma(a + b))
        return -float(kl.sum())

    @staticmethod
    def counts(posterior):
        return posterior[:, 0] - 1.0

    @staticmethod
    def mean(posterior):
        """Posterior mean stick lengths turned into weights, renormalised over the K sticks."""
        a, b = posterior[:, 0], posterior[:, 1]
        v = a / (a + b)
        weights = v * np.concatenate([[1.0], np.cumprod(1.0 - v)[:-1]])
        return weights / weights.sum()
