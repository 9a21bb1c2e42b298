r"""Dirichlet expectations and divergences, used for mixture weights and word distributions.

For :math:`q(\pi) = \mathrm{Dir}(c)` and a symmetric prior :math:`p(\pi) = \mathrm{Dir}(a\mathbf 1_K)`,

.. math::

    \mathbb E_q[\log \pi_k] = \psi(c_k) - \psi\big(\textstyle\sum_j c_j\big),

    \mathbb E_q[\log p(\pi)] - \mathbb E_q[\log q(\pi)]
      = \log\Gamma(Ka) - K\log\Gamma(a) - \log\Gamma\big(\textstyle\sum c\big) + \sum_k\log\Gamma(c_k)
        + \sum_k (a - c_k)\,\mathbb E_q[\log\pi_k].

Every function works row-wise on a 2-D array of concentrations (one Dirichlet per row).
"""

import numpy as np
from scipy.special import digamma, gammaln


def dirichlet_expected_log(concentration):
    """Return :math:`E[\\log \\pi]` for each row of ``concentration`` (last axis sums to one)."""
    concentration = np.asarray(concentration, dtype=float)
    return digamma(concentration) - digamma(concentration.sum(axis=-1, keepdims=True))


def dirichlet_neg_kl(concentration, prior, expected_log=None):
    """Return :math:`-\\mathrm{KL}(\\mathrm{Dir}(c)\\,\\|\\,\\mathrm{Dir}(a\\mathbf 1))` summed over rows.

    Parameters
    ----------
    concentration : ndarray of shape (..., K)
        Posterior concentrations ``c``, all positive.
    prior : float
        Symmetric prior concentration ``a``.
    expected_log : ndarray, optional
        ``dirichlet_expected_log(concentration)`` when the caller already has it.
    """
    c = np.asarray(concentration, dtype=float)
    if expected_log is None:
        expected_log = dirichlet_expected_log(c)
    K = c.shape[-1]
    n_rows = c.size // K
    log_norm_prior = gammaln(K * prior) - K * gammaln(prior)
    log_norm_post = gammaln(c.sum(axis=-1)) - gammaln(c).sum(axis=-1)
    return float(
        n_rows * log_norm_prior - log_norm_post.sum() + np.sum((prior - c) * expected_log)
    )


def fit_symmetric_concentration(sum_expected_log, n_rows, dim, start):
    r"""Empirical-Bayes symmetric Dirichlet concentration maximising the expected log prior.

    Maximises :math:`f(a) = R[\log\Gamma(Da) - D\log\Gamma(a)] + (a-1)S` over :math:`a>0`, where
    ``S = sum_expected_log`` is :math:`\sum E[\log\pi]` over ``R = n_rows`` Dirichlets of
    dimension ``D = dim``. :math:`f` is concave in :math:`a`; Newton's method on
    :math:`\log a` from ``start``, with step halving so that :math:`f` never decreases.
    """
    from scipy.special import polygamma

    def objective(a):
        return n_rows * (gammaln(dim * a) - dim * gammaln(a)) + (a - 1.0) * sum_expected_log

    log_a = np.log(start)
    value = objective(start)
    for _ in range(100):
        a = np.exp(log_a)
        grad = n_rows * dim * (digamma(dim * a) - digamma(a)) + sum_expected_log
        hess = n_rows * dim * (dim * polygamma(1, dim * a) - polygamma(1, a))
        # derivatives with respect to log a
        g_log = grad * a
        h_log = hess * a * a + grad * a
        step = -g_log / h_log if h_log < 0 else np.sign(g_log) * 1.0
        step = float(np.clip(step, -5.0, 5.0))
        for _ in range(60):
            candidate = log_a + step
            new_value = objective(np.exp(candidate))
            if new_value >= value:
                break
            step *= 0.5
        else:
            break
        converged = abs(candidate - log_a) < 1e-10
        log_a, value = candidate, new_value
        if converged:
            break
    return float(np.exp(log_a))
