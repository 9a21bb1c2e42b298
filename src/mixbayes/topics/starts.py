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

from ..exceptions import ConvergenceWarning
from . import _fit, blocks


def residual_topic(docs, theta_PK, threshold=3.0):
    """The normalised excess counts where the fit under-predicts (see module docstring), of the
    documents ``docs`` (:class:`~mixbayes.topics.blocks.Documents`) at their weights."""
    p = theta_PK.shape[0]
    share = docs.sum(blocks.residual, theta_PK, threshold)
    topic = (share[:p] if share[-1] else share[p:2 * p]) + 1.0 / p
    return topic / topic.sum()


# the weight solves of the starts: to 1e-4 in L1, at most 20 Newton steps a document
WEIGHT_TOL, WEIGHT_MAX_STEPS = 1e-4, 20


def grow_topics(docs, theta_PK, n_components, alpha_for, c_for, em_steps=3,
                weight_tol=WEIGHT_TOL, weight_max_steps=WEIGHT_MAX_STEPS):
    """Add residual topics one at a time until there are ``n_components``; return the topics
    (the documents ``docs`` end holding their weights).

    After each new topic the weights are solved and ``em_steps`` EM steps refine both blocks.
    ``alpha_for(K)`` and ``c_for(K)`` give the priors at K topics.
    """
    theta = theta_PK
    while theta.shape[1] < n_components:
        K = theta.shape[1]
        new = residual_topic(docs, theta)
        theta = (K * theta + theta.mean(axis=1, keepdims=True)) / (K + 1)
        theta = np.column_stack([theta, new])
        theta /= theta.sum(axis=0)
        alpha, c = alpha_for(K + 1), c_for(K + 1)
        docs.update(blocks.restart, theta)
        docs.update(blocks.solve, theta, c, weight_tol, weight_max_steps)
        for _ in range(em_steps):
            theta = _fit.topics_from_counts(docs.update_sum(blocks.em, theta, c), alpha)
    return theta


def build_up(X, n_components, alpha_for, c_for, em_steps=3):
    """Topics ``(p, K)`` grown from one topic on an evenly spaced subset of documents."""
    return build_up_from(X[build_up_rows(X.shape[0], n_components)], n_components, alpha_for,
                         c_for, em_steps)


def build_up_rows(n, n_components):
    """The documents :func:`build_up` grows its topics on, out of ``n``."""
    size = min(n, max(min(math.ceil(0.05 * n), 100), 10 * n_components))
    return np.unique(np.linspace(0, n - 1, size).round().astype(int))


def build_up_from(X_rows, n_components, alpha_for, c_for, em_steps=3):
    """:func:`build_up` given its documents ``X_rows`` (:func:`build_up_rows` of the corpus)."""
    p = X_rows.shape[1]
    subset = blocks.CountsCSR.from_matrix(X_rows)
    column_totals = np.asarray(X_rows.sum(axis=0)).ravel()
    theta = ((column_totals + 1.0 / p) / (column_totals.sum() + 1.0))[:, None]
    docs = blocks.Documents(blocks.with_weights(subset, np.ones((X_rows.shape[0], 1))))
    return grow_topics(docs, theta, n_components, alpha_for, c_for, em_steps)


# the collapsed Gibbs sweeps before the clusters' CAVI run (the mixture's own default, "auto",
# sweeps until its log joint stops rising: 78 sweeps, 4.5 s of a 50-s fit on 20 Newsgroups)
START_SWEEPS = 5


def from_clusters(X, n_components, random_state, fit=None, alpha_for=None, c_for=None):
    """Topics ``(p, K)``: posterior-mean word distributions of a K-cluster Dirichlet–multinomial
    mixture of the documents (one CAVI run after ``START_SWEEPS`` Gibbs sweeps; every entry
    positive). ``fit(model, X)`` fits it (by default ``model.fit(X)``; on a cluster,
    :func:`mixbayes.distributed.fit`).

    Clusters the mixture leaves empty all have the prior's word distribution: equal topics,
    which the MAP iterations keep equal (a saddle point of the log posterior that only rounding
    breaks, after tens of iterations or never). Where ``alpha_for`` and ``c_for`` (K -> the
    priors) are given, one of each set of equal topics is kept and the others are replaced by
    residual topics (:func:`grow_topics`, the build-up's rule) grown on the build-up's
    documents. On tweet (K = 89, seeds 0-3) 10-16 of the start's topics equalled another; the
    fits from them ended at log posteriors -106,359 to -105,302 with those topics still equal,
    from the grown start at -103,515 to -103,299 (``bench/topic_start_equal.py``).

    A start needs the clusters roughly, not the mixture's best ELBO: on 20 Newsgroups' train
    split (K = 20, seeds 0 and 1) five sweeps against the mixture's automatic warm-up gave
    48.3 and 45.8 s against 52.5 and 93.1 s (140 and 121 iterations against 137 and 250),
    held-out completion log-likelihood -8.0790 and -8.0864 a word against -8.0796 and -8.0871,
    NPMI 0.286 and 0.284 against 0.282 and 0.282 (the log posterior 1,048 nats higher at seed
    0, 6,892 lower at seed 1); no sweeps at all stopped lower (-8.0901, NPMI 0.261).
    """
    from ..mixture.dmm import DirichletMultinomialMixture

    # the k-means++ start alone (the mixture's default since issue 25 adds a random rival):
    # a start needs the clusters roughly, and the topic fits were measured from this one
    model = DirichletMultinomialMixture(n_components, n_init=1, init="kmeans++",
                                        init_sweeps=START_SWEEPS, random_state=random_state)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        if fit is None:
            model.fit(X)
        else:
            fit(model, X)
    theta = np.ascontiguousarray(model.components_.T)
    _, first = np.unique(model.components_, axis=0, return_index=True)
    if first.size == n_components or alpha_for is None:
        return theta
    return _grow_distinct(X, theta[:, np.sort(first)], n_components, alpha_for, c_for)


def _grow_distinct(X, theta_PK, n_components, alpha_for, c_for):
    """``theta_PK`` (distinct topics) completed to ``n_components`` by residual topics on
    the build-up's documents of ``X``, their weights first solved under ``theta_PK``."""
    rows = X[build_up_rows(X.shape[0], n_components)]
    K = theta_PK.shape[1]
    docs = blocks.Documents(blocks.with_weights(blocks.CountsCSR.from_matrix(rows),
                                                np.full((rows.shape[0], K), 1.0 / K)))
    docs.update(blocks.solve, theta_PK, c_for(K), WEIGHT_TOL, WEIGHT_MAX_STEPS)
    return np.ascontiguousarray(grow_topics(docs, theta_PK, n_components, alpha_for, c_for))
