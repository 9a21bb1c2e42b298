r"""Starts for the topic model: document clusters, or build-up from residuals (the reference's).

:func:`from_clusters` takes the word distributions of a Dirichlet–multinomial mixture of the
documents. :func:`build_up` is the reference's deterministic scheme:

A topic that the current fit lacks shows up as words that documents use far more often than the
fit predicts. With fitted probabilities :math:`q_{ij}` and expected counts
:math:`\hat x_{ij} = m_i q_{ij}`, the standardised residual of a non-zero count is
:math:`r_{ij} = (x_{ij} - \hat x_{ij}) / \sqrt{\hat x_{ij}(1 - q_{ij})}`; the new topic is the
normalised total excess :math:`\sum_i (x_{ij} - \hat x_{ij})\,[r_{ij} > 3] + 1/p` (all positive
excess when no residual passes 3), and the old topics are shrunk a little towards their mean so
that the new one can take words from them. :func:`build_up` grows a fit on a subset of the
documents from one topic to K this way, with a few EM steps after each new topic.

The reference fits the *first* 5% of the documents (at most 100); we take them evenly spaced
through the corpus, so that a corpus sorted by source (congress109 is sorted by party) does not
start from one side of it, and at least 10 K documents where the corpus has them.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import scipy.sparse as sp

from ..exceptions import ConvergenceWarning
from . import _fit


def start_weights(counts, theta_PK):
    """A cheap start for the weights: each document's word-averaged topic responsibilities."""
    X = sp.csr_matrix((counts.data, counts.indices, counts.indptr), shape=counts.shape)
    resp = theta_PK / theta_PK.sum(axis=1, keepdims=True)
    omega = np.asarray(X @ resp) + 1e-3
    return omega / omega.sum(axis=1, keepdims=True)


def residual_topic(counts, theta_PK, omega_NK, threshold=3.0):
    """The normalised excess counts where the fit under-predicts (see module docstring)."""
    n, p = counts.shape
    rows = np.repeat(np.arange(n), np.diff(counts.indptr))
    q = np.einsum("ek,ek->e", omega_NK[rows], theta_PK[counts.indices])
    expected = counts.lengths[rows] * q
    excess = counts.data - expected
    standardised = excess / np.sqrt(np.maximum(expected * (1.0 - q), 1e-300))
    use = standardised > threshold
    if not use.any():
        use = excess > 0
    topic = np.bincount(counts.indices[use], weights=excess[use], minlength=p) + 1.0 / p
    return topic / topic.sum()


def grow_topics(counts, theta_PK, omega_NK, n_components, alpha_for, c_for, em_steps=3,
                weight_tol=1e-4, weight_max_steps=20):
    """Add residual topics one at a time until there are ``n_components``; return the topics.

    After each new topic the weights are solved and ``em_steps`` EM steps refine both blocks.
    ``alpha_for(K)`` and ``c_for(K)`` give the priors at K topics.
    """
    theta, omega = theta_PK, omega_NK
    while theta.shape[1] < n_components:
        K = theta.shape[1]
        new = residual_topic(counts, theta, omega)
        theta = (K * theta + theta.mean(axis=1, keepdims=True)) / (K + 1)
        theta = np.column_stack([theta, new])
        theta /= theta.sum(axis=0)
        omega = start_weights(counts, theta)
        alpha, c = alpha_for(K + 1), c_for(K + 1)
        _fit.solve_weights(counts, theta, omega, c, weight_tol, weight_max_steps)
        for _ in range(em_steps):
            theta, omega, _ = _fit.em_step(counts, theta, omega, alpha, c)
    return theta, omega


def build_up(X, n_components, alpha_for, c_for, em_steps=3):
    """Topics ``(p, K)`` grown from one topic on an evenly spaced subset of documents."""
    n, p = X.shape
    size = min(n, max(min(math.ceil(0.05 * n), 100), 10 * n_components))
    rows = np.unique(np.linspace(0, n - 1, size).round().astype(int))
    subset = _fit.CountsCSR.from_matrix(X[rows])
    column_totals = np.asarray(X[rows].sum(axis=0)).ravel()
    theta = ((column_totals + 1.0 / p) / (column_totals.sum() + 1.0))[:, None]
    omega = np.ones((len(rows), 1))
    theta, _ = grow_topics(subset, theta, omega, n_components, alpha_for, c_for, em_steps)
    return theta


def from_clusters(X, n_components, random_state):
    """Topics ``(p, K)``: posterior-mean word distributions of a K-cluster Dirichlet–multinomial
    mixture of the documents (one CAVI run; every entry positive)."""
    from ..mixture.dmm import DirichletMultinomialMixture

    model = DirichletMultinomialMixture(n_components, n_init=1, random_state=random_state)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X)
    return np.ascontiguousarray(model.components_.T)
