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

The collapsed form (Bilancia et al. 2023, Appendix A) integrates :math:`\beta_k` out:

.. math::

    p(y_i \mid z_i = k, \theta) = \binom{y_{i+}}{y_i}\frac{B(y_i + \theta)}{B(\theta\mathbf 1_p)}.
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln

from .._sizes import Sized
from ._count_kernels import compressed_times_dense, dirichlet_columns, responsibilities
from .dirichlet import fit_polya_concentration


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


@dataclass
class CountData(Sized):
    """Counts in both sparse orientations (float64 values), prepared once per fit."""

    csr: sp.csr_matrix  # documents x terms, float64
    csc: sp.csc_matrix  # the same, column-compressed
    log_base: np.ndarray  # (n,) log multinomial coefficients

    @property
    def shape(self):
        return self.csr.shape


@dataclass
class WordStats(Sized):
    r"""Expected word counts :math:`s_{lk} = \sum_i r_{ik} y_{il}` (word-major) and their column
    totals; both add over disjoint sets of documents."""

    counts_PK: np.ndarray  # (p, K)
    totals_K: np.ndarray  # (K,)

    def __add__(self, other):
        return WordStats(self.counts_PK + other.counts_PK, self.totals_K + other.totals_K)


@dataclass
class WordExpectations:
    """What the local step and the ELBO need from q(beta): E[log beta] and the KL term."""

    expected_log_PK: np.ndarray  # (p, K), word-major
    neg_kl: float


class MultinomialFamily:
    r"""Conjugate multinomial–Dirichlet family for the CAVI loop.

    Parameters
    ----------
    concentration : float
        Symmetric Dirichlet prior concentration :math:`\theta` on each component's word
        distribution.

    Notes
    -----
    The posterior :math:`q(\beta_k) = \mathrm{Dir}(\theta + s_k)` is represented by its
    :class:`WordStats` (the prior is the family's ``concentration``); the expectations hold
    :math:`E[\log\beta]^\top`, so that the evidence of every document under every component is
    one sparse product ``X @ E[log beta].T``. The hot paths are the numba kernels of
    :mod:`mixbayes.families._count_kernels`; :mod:`mixbayes.families.dirichlet` is the
    readable reference they are tested against.
    """

    def __init__(self, concentration, reuse_buffers=False):
        self.concentration = float(concentration)
        self.reuse_buffers = reuse_buffers
        self._buffers = {}

    @property
    def prior(self):
        """The (possibly fitted) prior concentration theta, recorded in the fit's state."""
        return self.concentration

    def _buffer(self, name, shape):
        """An output array for a kernel: fresh, or with ``reuse_buffers`` the same every call.

        The fit loop turns reuse on: its large per-iteration arrays, allocated anew, are fresh
        pages each time, and their page faults cost as much as the arithmetic (about half of a
        CAVI iteration on googlenews_t). Each array is overwritten only after the loop has
        finished with its previous contents (see :meth:`VariationalMixture._fit_single`).
        """
        if not self.reuse_buffers:
            return np.empty(shape)
        buffer = self._buffers.get(name)
        if buffer is None or buffer.shape != shape:
            buffer = self._buffers[name] = np.empty(shape)
        return buffer

    # -- data ------------------------------------------------------------------------------
    @staticmethod
    def prepare(X):
        """Wrap validated CSR counts for repeated use by the loop."""
        csr = sp.csr_matrix(X, dtype=np.float64)
        return CountData(csr, csr.tocsc(), log_multinomial_coefficient(X))

    @staticmethod
    def log_base_measure(data):
        """Per-document terms of the log-likelihood that do not depend on the component."""
        return data.log_base

    # -- global step ----------------------------------------------------------------------
    def sufficient_statistics(self, data, resp):
        r"""Expected word counts :math:`\sum_i r_{ik} y_{il}` as :class:`WordStats`."""
        csc = data.csc
        resp = np.ascontiguousarray(resp, dtype=np.float64)
        out = self._buffer("stats", (csc.shape[1], resp.shape[1]))
        counts = compressed_times_dense(csc.indptr, csc.indices, csc.data, resp, out,
                                        work=csc.nnz * resp.shape[1])
        # a numpy reduction rather than a BLAS call: OpenBLAS threads started right after a
        # numba region fight its spinning OpenMP threads for the two cores (3x slower here)
        return WordStats(counts, counts.sum(axis=0))

    @staticmethod
    def posterior(stats):
        """The conjugate posterior is ``Dir(theta + stats)``: the statistics represent it."""
        return stats

    def posterior_from_concentration(self, concentration_KP):
        """Rebuild the posterior from stored Dirichlet parameters (K, p)."""
        counts = np.ascontiguousarray(concentration_KP.T) - self.concentration
        return WordStats(counts, counts.sum(axis=0))

    def concentration_of(self, posterior):
        r"""The Dirichlet parameters :math:`\phi` as a (K, p) array."""
        return np.ascontiguousarray((self.concentration + posterior.counts_PK).T)

    def expectations(self, posterior):
        r""":math:`E[\log\beta]` under every ``Dir(theta + s_k)`` and the KL term, in one pass."""
        p, K = posterior.counts_PK.shape
        theta = self.concentration
        expected_log = self._buffer("expected_log", (p, K))
        partial = dirichlet_columns(
            posterior.counts_PK, posterior.totals_K, theta, expected_log, work=p * K
        )
        neg_kl = K * gammaln(p * theta) - gammaln(posterior.totals_K + p * theta).sum() + partial.sum()
        return WordExpectations(expected_log, float(neg_kl))

    @staticmethod
    def neg_kl(posterior, expectations):
        r""":math:`\sum_k E_q[\log p(\beta_k)] - E_q[\log q(\beta_k)]`."""
        return expectations.neg_kl

    def fit_prior(self, stats):
        r"""Empirical-Bayes update of :math:`\theta`: the exact maximiser of the ELBO over
        (:math:`\theta`, :math:`q(\beta)`) given the word statistics."""
        self.concentration = fit_polya_concentration(
            stats.counts_PK, stats.totals_K, stats.counts_PK.shape[0], self.concentration
        )

    # -- local step -----------------------------------------------------------------------
    @staticmethod
    def expected_log_likelihood(data, expectations):
        r"""Return the ``(n, K)`` array :math:`\sum_l y_{il} E[\log\beta_{kl}]` (no base measure)."""
        csr = data.csr
        E = expectations.expected_log_PK
        return compressed_times_dense(csr.indptr, csr.indices, csr.data, E,
                                      np.empty((csr.shape[0], E.shape[1])),
                                      work=csr.nnz * E.shape[1])

    def responsibilities(self, data, expectations, expected_log_weights):
        """Fused local step: the row-softmax of ``E[log lambda] + X @ E[log beta].T``, its log
        normaliser and the column sums of the responsibilities, in one pass over the documents."""
        csr = data.csr
        E = expectations.expected_log_PK
        n, K = csr.shape[0], E.shape[1]
        resp, log_norm = self._buffer("resp", (n, K)), self._buffer("log_norm", (n,))
        counts = responsibilities(
            csr.indptr, csr.indices, csr.data, E,
            np.ascontiguousarray(expected_log_weights, dtype=np.float64), resp, log_norm,
            work=csr.nnz * K,
        )
        return resp, log_norm, counts

    def point_estimate(self, posterior):
        """Posterior mean word distributions as a ``(K, p)`` array, rows on the simplex."""
        phi = self.concentration_of(posterior)
        return phi / phi.sum(axis=1, keepdims=True)
