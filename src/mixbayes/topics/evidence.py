r"""How many topics? Laplace marginal likelihood and residual dispersion (Taddy 2012, §4).

**Marginal likelihood.** Laplace's method at the joint MAP, with the Hessian of
:math:`L` (topics in simplex coordinates, weights in logits) replaced by its diagonal blocks —
one K x K block per word, one (K-1) x (K-1) block per document — as in the reference:

.. math::

    \log\hat p(X \mid K) = L(\hat\Theta, \hat\Omega) + \log K!
      - \tfrac12\sum_b \max(\log|-H_b|, -10)
      + \tfrac12\big(Kp + \#\{\hat\omega_{ik} > 0.01\}\big)\log 2\pi \\
      + K\big[\log\Gamma(p(\alpha+1)) - p\log\Gamma(\alpha+1)\big]
      + D\,\big[\log K! - K\log\Gamma(1 + 1/K)\big],

where the last two terms normalise the :math:`\mathrm{Dir}(\alpha+1)` and
:math:`\mathrm{Dir}(1/K+1)` densities that :math:`L` leaves unnormalised, :math:`\log K!` counts
the equivalent labellings, and :math:`D` is the number of document blocks above the floor
(the reference's count). It is reported against the one-topic model,
:math:`\log\mathrm{BF} = \log\hat p(X\mid K) - [\sum_{ij} x_{ij}\log(x_{+j}/x_{++})
- \tfrac12(n+p)(\log x_{++} - \log 2\pi)]`.
The reference adds the prior curvature of each document block once per *word* of the document
(a slip in its C code); here it enters once per document, as the derivation gives.

**Dispersion.** With fitted :math:`q_{ij}` the Pearson statistic over all n x p cells,
:math:`X^2 = \sum_{ij} (x_{ij} - m_iq_{ij})^2/(m_iq_{ij}(1-q_{ij}))`, is computed sparsely as
:math:`\sum_{x_{ij}>0}(x_{ij}^2 - 2x_{ij}m_iq_{ij})/(m_iq_{ij}(1-q_{ij})) + \sum_{ij} m_iq_{ij}/(1-q_{ij})`;
with :math:`\nu = \#\{m_iq_{ij} > 0.01\} - \hat p - [n(K-1) + K(\hat p - 1)]` degrees of freedom,
:math:`\hat\sigma^2 = X^2/\nu` estimates the dispersion (1 under the model; above 1 suggests more
topics) and :math:`P(\chi^2_\nu > X^2)` tests it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln
from scipy.stats import chi2
from threadpoolctl import threadpool_limits

from .._validation import check_counts
from . import _kernels, blocks

LOG_DET_FLOOR = -10.0


@dataclass
class TopicEvidence:
    """Model-choice statistics of one fitted topic model (see the module docstring)."""

    n_components: int
    log_marginal_likelihood: float
    log_null: float  # the one-topic model's
    log_bayes_factor: float
    dispersion: float
    degrees_of_freedom: float
    p_value: float


def _training_problem(model, X):
    """The counts, topics and weights the model was fitted to (used documents and terms)."""
    X = check_counts(X, "X")
    if X.shape != (model.doc_topic_.shape[0], model.n_features_in_):
        raise ValueError(
            f"X must be the training data of the model, of shape {model.doc_topic_.shape[0]} x "
            f"{model.n_features_in_}; got {X.shape[0]} x {X.shape[1]}."
        )
    used_docs = np.flatnonzero(np.diff(X.indptr) > 0)
    used_terms = np.flatnonzero(np.asarray(X.sum(axis=0)).ravel() > 0)
    counts = blocks.CountsCSR.from_matrix(X[used_docs][:, used_terms])
    theta = np.ascontiguousarray(model.topics_[:, used_terms].T)
    omega = np.ascontiguousarray(model.doc_topic_[used_docs])
    return counts, clip_simplex(theta, 0), clip_simplex(omega, 1)


def clip_simplex(probabilities, axis):
    """The reference's guard: probabilities exactly 0 or 1 have no finite curvature, so they
    are clipped to [1e-14, 1 - 1e-14] and renormalised along ``axis``."""
    clipped = np.clip(probabilities, 1e-14, 1 - 1e-14)
    return clipped / clipped.sum(axis=axis, keepdims=True)


def log_null(column_totals, n_documents):
    r"""Laplace log marginal likelihood of the one-topic model (the reference's null), from the
    corpus's word totals :math:`x_{+j}`: :math:`\sum_j x_{+j}\log(x_{+j}/x_{++})
    - \tfrac12(n+p)(\log x_{++} - \log 2\pi)`."""
    totals = column_totals[column_totals > 0]
    total = totals.sum()
    loglik = float(np.sum(totals * np.log(totals / total)))
    return loglik - 0.5 * (n_documents + totals.size) * (np.log(total) - np.log(2 * np.pi))


def block_log_determinants(counts, theta_PK, omega_NK, alpha, c):
    """Unfloored log-determinants of the word blocks (p,) and document blocks (n,)."""
    q = _word_probabilities(counts, theta_PK, omega_NK)
    words = np.empty(theta_PK.shape[0])
    _kernels.topic_block_log_determinants(counts.col_indptr, counts.col_rows, counts.col_to_csr,
                                          counts.data, q, theta_PK, omega_NK, alpha, words)
    return words, _document_log_determinants(counts, q, theta_PK, omega_NK, c)


def word_grams(counts, theta_PK, omega_NK, lo, hi):
    """What the documents ``counts`` (weights ``omega_NK``) add to the likelihood part of the
    word blocks of words ``lo .. hi - 1``, (hi - lo, K, K) lower triangles; the shares of
    disjoint sets of documents add (a cluster sums its shards' before
    :func:`floored_word_log_dets`)."""
    q = _word_probabilities(counts, theta_PK, omega_NK)
    K = theta_PK.shape[1]
    grams = np.empty((hi - lo, K, K))
    _kernels.topic_block_grams(counts.col_indptr, counts.col_rows, counts.col_to_csr,
                               counts.data, q, omega_NK, lo, grams)
    return grams


def floored_word_log_dets(grams, theta_WK, alpha):
    """The word blocks' log-determinants from their summed likelihood Grams (:func:`word_grams`)
    and the topics' rows ``theta_WK`` of those words, each floored at :data:`LOG_DET_FLOOR`,
    summed."""
    out = np.empty(grams.shape[0])
    _kernels.gram_log_determinants(grams, theta_WK, alpha, out)
    return float(np.maximum(out, LOG_DET_FLOOR).sum())


def _word_probabilities(counts, theta_PK, omega_NK):
    q = np.empty(counts.data.shape[0])
    _kernels.word_probabilities(counts.indptr, counts.indices, theta_PK, omega_NK, q)
    return q


def _document_log_determinants(counts, q, theta_PK, omega_NK, c):
    documents = np.zeros(omega_NK.shape[0])
    if theta_PK.shape[1] > 1:
        _kernels.weight_block_log_determinants(counts.indptr, counts.indices, counts.data, q,
                                               theta_PK, omega_NK, c, documents)
    return documents


def document_share(counts, theta_PK, omega_NK, c, block=128):
    r"""What the documents ``counts`` (weights ``omega_NK``) add to the evidence; the shares
    of disjoint sets of documents add. An array of: the log posterior's document terms
    (:math:`\sum_{ij}x_{ij}\log q_{ij} + c\sum_{ik}\log\omega_{ik}`), the floored
    log-determinants of the document blocks and how many are above the floor (0 and 0 for
    K = 1), the number of weights above 0.01, the Pearson statistic :math:`X^2` and the number
    of cells with :math:`m_iq_{ij} > 0.01` (module docstring)."""
    n, _ = counts.shape
    q = _word_probabilities(counts, theta_PK, omega_NK)
    documents = _document_log_determinants(counts, q, theta_PK, omega_NK, c)
    multi = theta_PK.shape[1] > 1
    lengths = counts.lengths
    m = lengths[np.repeat(np.arange(n), np.diff(counts.indptr))]
    x = counts.data
    statistic = float(np.sum((x * x - 2.0 * x * m * q) / (m * q * (1.0 - q))))
    n_cells = 0
    # all n x p cells, a block of documents at a time: one product into a reused buffer and one
    # fused pass over it (the temporaries of a 2,048-document block, 260 MB each on 20
    # Newsgroups, cost more than the product)
    Q = np.empty((min(block, n), theta_PK.shape[0]))
    sums, above = np.empty(Q.shape[0]), np.empty(Q.shape[0], dtype=np.int64)
    for start in range(0, n, block):
        size = min(block, n - start)
        np.matmul(omega_NK[start:start + size], theta_PK.T, out=Q[:size])
        _kernels.dense_cells(Q[:size], lengths[start:start + size], sums[:size], above[:size])
        statistic += float(sums[:size].sum())
        n_cells += int(above[:size].sum())
    objective = _kernels.log_likelihood(counts.indptr, counts.indices, counts.data, theta_PK,
                                        omega_NK) + float(c * np.log(omega_NK).sum())
    return np.array([
        objective,
        np.maximum(documents, LOG_DET_FLOOR).sum() if multi else 0.0,
        np.sum(documents > LOG_DET_FLOOR) if multi else 0,
        np.sum(omega_NK > 0.01), statistic, n_cells], dtype=float)


def evidence_from(share, word_log_dets, theta_PK, alpha, n_documents, null):
    """:class:`TopicEvidence` from the documents' summed :func:`document_share`, the floored
    word blocks' log-determinants summed, the topics and the null's log marginal likelihood."""
    objective, document_log_dets, n_doc_blocks, n_large, statistic, n_cells = share
    p, K = theta_PK.shape
    L = objective + alpha * float(np.log(theta_PK).sum())
    log_k_factorial = gammaln(K + 1.0)
    log_ml = float(
        L + log_k_factorial
        - 0.5 * (word_log_dets + document_log_dets)
        + 0.5 * (K * p + n_large) * np.log(2 * np.pi)
        + K * (gammaln(p * (alpha + 1.0)) - p * gammaln(alpha + 1.0))
        + n_doc_blocks * (log_k_factorial - K * gammaln(1.0 + 1.0 / K))
    )
    df = n_cells - p - (n_documents * (K - 1) + K * (p - 1))
    if df <= 0:
        sigma2 = p_value = np.nan
    else:
        sigma2, p_value = statistic / df, float(chi2.sf(statistic, df))
    return TopicEvidence(K, log_ml, null, log_ml - null, sigma2, float(df), p_value)


def topic_evidence(model, X):
    """Laplace log marginal likelihood, log Bayes factor against one topic, and dispersion of
    a :class:`~mixbayes.topics.TopicModel` fitted to ``X``.

    Returns
    -------
    TopicEvidence
    """
    counts, theta, omega = _training_problem(model, X)
    c = 1.0 / model.n_components
    with threadpool_limits(limits=1, user_api="blas"):
        share = document_share(counts, theta, omega, c)
        q = _word_probabilities(counts, theta, omega)
        words = np.empty(theta.shape[0])
        _kernels.topic_block_log_determinants(counts.col_indptr, counts.col_rows,
                                              counts.col_to_csr, counts.data, q, theta, omega,
                                              model.topic_prior_, words)
    null = log_null(np.bincount(counts.indices, weights=counts.data, minlength=theta.shape[0]),
                    counts.shape[0])
    return evidence_from(share, float(np.maximum(words, LOG_DET_FLOOR).sum()), theta,
                         model.topic_prior_, counts.shape[0], null)
