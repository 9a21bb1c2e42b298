r"""Multinomial observations with a symmetric Dirichlet prior (documents as bags of words).

Model for one component :math:`k` and a document :math:`y_i \in \mathbb N^p` of length
:math:`y_{i+}`:

.. math::

    \beta_k \sim \mathrm{Dir}(\theta\mathbf 1_p), \qquad
    y_i \mid z_i = k \sim \mathrm{Mult}(y_{i+}, \beta_k).

With :math:`q(\beta_k) = \mathrm{Dir}(\phi_k)` the family contributes

.. math::

    \mathbb E_q[\log p(y_i \mid \beta_k)] = \log\binom{y_{i+}}{y_i}
        + \sum_l y_{il}\,\mathbb E_q[\log\beta_{kl}],

and its conjugate update from responsibilities :math:`r_{ik}` is
:math:`\phi_{kl} = \theta + \sum_i r_{ik} y_{il}`. The sufficient statistics
:math:`\sum_i r_{ik} y_{il}` add over disjoint sets of documents.

The collapsed form (document 1, Appendix A) integrates :math:`\beta_k` out:

.. math::

    p(y_i \mid z_i = k, \theta) = \binom{y_{i+}}{y_i}\frac{B(y_i + \theta)}{B(\theta\mathbf 1_p)}.
"""

import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln

from .dirichlet import dirichlet_expected_log, dirichlet_neg_kl, fit_symmetric_concentration


def log_multinomial_coefficient(X):
    r"""Return :math:`\log\big(y_{i+}! / \prod_l y_{il}!\big)` for every row of CSR ``X``."""
    X = sp.csr_matrix(X)
    lengths = np.asarray(X.sum(axis=1)).ravel()
    per_entry = sp.csr_matrix((gammaln(X.data + 1.0), X.indices, X.indptr), shape=X.shape)
    row_sums = np.asarray(per_entry.sum(axis=1)).ravel()
    return gammaln(lengths + 1.0) - row_sums


def dirichlet_multinomial_logpmf(y, pseudo_counts):
    r"""Log Dirichlet–multinomial pmf of count vector ``y`` given concentration vector ``pseudo_counts``.

    .. math:: \log\binom{y_+}{y} + \log B(y + c) - \log B(c).
    """
    y = np.asarray(y, dtype=float)
    c = np.asarray(pseudo_counts, dtype=float)
    coef = gammaln(y.sum() + 1.0) - gammaln(y + 1.0).sum()
    return float(
        coef
        + gammaln(y + c).sum() - gammaln((y + c).sum())
        - gammaln(c).sum() + gammaln(c.sum())
    )


class MultinomialFamily:
    """Conjugate multinomial–Dirichlet family for the CAVI loop.

    Parameters
    ----------
    concentration : float
        Symmetric Dirichlet prior concentration :math:`\\theta` on each component's word
        distribution.

    Notes
    -----
    The posterior of the family is the ``(K, p)`` array of Dirichlet concentrations ``phi``.
    Its "expected parameters" are :math:`E[\\log\\beta]`, from which the evidence of every
    document under every component is one sparse product ``X @ E[log beta].T``.
    """

    def __init__(self, concentration):
        self.concentration = float(concentration)

    # -- data ------------------------------------------------------------------------------
    @staticmethod
    def log_base_measure(X):
        """Per-document terms of the log-likelihood that do not depend on the component."""
        return log_multinomial_coefficient(X)

    # -- global step ----------------------------------------------------------------------
    @staticmethod
    def sufficient_statistics(X, resp):
        """Return the ``(K, p)`` expected word counts :math:`\\sum_i r_{ik} y_{il}`."""
        return np.asarray((X.T @ resp).T)

    def posterior(self, stats):
        """Conjugate update :math:`\\phi = \\theta + \\text{stats}`."""
        return self.concentration + stats

    @staticmethod
    def expected_log_params(posterior):
        """:math:`E[\\log\\beta_{kl}]` under ``Dir(phi_k)``."""
        return dirichlet_expected_log(posterior)

    def neg_kl(self, posterior, expected_log_params):
        """:math:`\\sum_k E_q[\\log p(\\beta_k)] - E_q[\\log q(\\beta_k)]`."""
        return dirichlet_neg_kl(posterior, self.concentration, expected_log_params)

    def fit_prior(self, posterior, expected_log_params):
        """Empirical-Bayes update of :math:`\\theta` (maximises the ELBO given ``phi``)."""
        K, p = posterior.shape
        self.concentration = fit_symmetric_concentration(
            float(expected_log_params.sum()), K, p, self.concentration
        )

    # -- local step -----------------------------------------------------------------------
    @staticmethod
    def expected_log_likelihood(X, expected_log_params):
        """Return the ``(n, K)`` array :math:`\\sum_l y_{il} E[\\log\\beta_{kl}]` (no base measure)."""
        return np.asarray(X @ expected_log_params.T)

    @staticmethod
    def point_estimate(posterior):
        """Posterior mean word distributions, rows on the simplex."""
        return posterior / posterior.sum(axis=1, keepdims=True)
