"""Agreement between a clustering and known classes, between estimated and true topics, and
topics' held-out likelihood by document completion.

NMI and ARI come from scikit-learn; purity and matched accuracy are defined here. Every function
takes the truth first; clustering scores accept labels of any hashable type.
"""

import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score
from sklearn.metrics.cluster import contingency_matrix

__all__ = ["nmi", "ari", "purity", "matched_accuracy", "clustering_report", "matched_topic_mse",
           "match_topics", "completion_split", "completion_log_likelihood"]


def _check_pair(labels_true, labels_pred):
    labels_true, labels_pred = np.asarray(labels_true), np.asarray(labels_pred)
    if labels_true.ndim != 1 or labels_pred.ndim != 1:
        raise ValueError("labels_true and labels_pred must be 1-D.")
    if labels_true.shape != labels_pred.shape:
        raise ValueError(
            f"labels_true and labels_pred must have the same length; got "
            f"{labels_true.size} and {labels_pred.size}."
        )
    if labels_true.size == 0:
        raise ValueError("labels_true and labels_pred are empty.")
    return labels_true, labels_pred


def nmi(labels_true, labels_pred, average="arithmetic"):
    """Normalised mutual information, with ``average`` in {"arithmetic", "geometric", "min", "max"}.

    Arithmetic averaging, I/((H(U)+H(V))/2), is scikit-learn's default; geometric, I/sqrt(H(U)H(V)),
    is what the HDP literature reports.
    """
    labels_true, labels_pred = _check_pair(labels_true, labels_pred)
    return float(normalized_mutual_info_score(labels_true, labels_pred, average_method=average))


def ari(labels_true, labels_pred):
    """Adjusted Rand index (0 for chance, 1 for identical partitions)."""
    return float(adjusted_rand_score(*_check_pair(labels_true, labels_pred)))


def purity(labels_true, labels_pred):
    """Fraction of samples in the majority class of their cluster."""
    table = contingency_matrix(*_check_pair(labels_true, labels_pred))
    return float(table.max(axis=0).sum() / table.sum())


def matched_accuracy(labels_true, labels_pred):
    """Accuracy after the one-to-one matching of clusters to classes that maximises it (Hungarian)."""
    table = contingency_matrix(*_check_pair(labels_true, labels_pred))
    rows, cols = linear_sum_assignment(-table)
    return float(table[rows, cols].sum() / table.sum())


def clustering_report(labels_true, labels_pred):
    """All four scores in one dict (``nmi`` arithmetic, ``nmi_geometric``, ``ari``, ...)."""
    return dict(
        nmi=nmi(labels_true, labels_pred),
        nmi_geometric=nmi(labels_true, labels_pred, "geometric"),
        ari=ari(labels_true, labels_pred),
        purity=purity(labels_true, labels_pred),
        accuracy=matched_accuracy(labels_true, labels_pred),
    )


def match_topics(true_topics, estimated_topics):
    """The one-to-one matching of estimated to true topics with the least total squared error.

    Parameters
    ----------
    true_topics, estimated_topics : array-like of shape (K, p)
        Topics as rows (each a distribution over the p terms); the same K and p.

    Returns
    -------
    ndarray of int of shape (K,)
        ``order`` such that ``estimated_topics[order[k]]`` is matched to ``true_topics[k]``.
    """
    true_topics = np.asarray(true_topics, dtype=float)
    estimated_topics = np.asarray(estimated_topics, dtype=float)
    if true_topics.ndim != 2 or true_topics.shape != estimated_topics.shape:
        raise ValueError(
            "true_topics and estimated_topics must be 2-D arrays of the same shape (K, p); got "
            f"{true_topics.shape} and {estimated_topics.shape}."
        )
    cost = ((true_topics[:, None, :] - estimated_topics[None, :, :]) ** 2).sum(axis=2)
    rows, cols = linear_sum_assignment(cost)
    return cols[np.argsort(rows)]


def matched_topic_mse(true_topics, estimated_topics):
    """Mean squared error over all K x p topic probabilities after :func:`match_topics`
    (the document's measure of topic recovery; label switching is undone first)."""
    order = match_topics(true_topics, estimated_topics)
    diff = np.asarray(true_topics, dtype=float) - np.asarray(estimated_topics, dtype=float)[order]
    return float(np.mean(diff**2))


def completion_split(X, held_out_fraction=0.2, random_state=0):
    """Split counts for document completion: training documents, and for the held-out
    documents an observed and a held-out half of their words.

    A fraction ``held_out_fraction`` of the documents (chosen at random) is left out of training;
    each of their words goes to the observed or the held-out half with probability 1/2
    (binomial thinning of every count).

    Returns
    -------
    train, observed, held_out : scipy.sparse.csr_matrix
        ``train`` has the remaining documents; ``observed + held_out`` are the left-out ones.
    """
    from ._validation import check_counts, check_random_state

    X = check_counts(X, "X")
    if not 0.0 < held_out_fraction < 1.0:
        raise ValueError(f"held_out_fraction must lie in (0, 1); got {held_out_fraction!r}.")
    rng = check_random_state(random_state)
    n = X.shape[0]
    n_held = int(round(held_out_fraction * n))
    if not 0 < n_held < n:
        raise ValueError(f"X has {n} documents: too few to leave out {held_out_fraction:.0%}.")
    order = rng.permutation(n)
    held, kept = np.sort(order[:n_held]), np.sort(order[n_held:])
    left_out = X[held]
    observed = left_out.copy()
    observed.data = rng.binomial(left_out.data, 0.5)
    held_out = left_out - observed
    observed.eliminate_zeros()
    held_out.eliminate_zeros()
    return X[kept], observed, held_out


def completion_log_likelihood(topics, observed, held_out, weight_prior=None):
    r"""Held-out log-likelihood per word by document completion.

    Each document's weights are the MAP given its ``observed`` words and the fixed ``topics``
    (prior :math:`\mathrm{Dir}(c)`, default :math:`c = 1/K`, the topic model's own solver);
    the score is

    .. math::

        \frac{\sum_{ij} h_{ij}\log\sum_k\hat\omega_{ik}\theta_{kj}}{\sum_{ij} h_{ij}}

    over the ``held_out`` counts :math:`h`. The same estimator serves every model's topics, so
    the score compares topics, not each tool's own weight inference.

    Parameters
    ----------
    topics : array-like of shape (K, p)
        Rows on the simplex.
    observed, held_out : sparse or dense counts of shape (n, p)
        As returned by :func:`completion_split`.
    weight_prior : float, optional
        Dirichlet concentration :math:`c` of the weights.

    Returns
    -------
    float
        ``-inf`` when a held-out word has probability 0 under every topic (words of terms a
        model never saw in training, for instance: restrict the vocabulary to the training
        documents' terms to compare such models); observed words of that kind are ignored.
    """
    from ._validation import check_counts
    from .topics import _fit, _kernels

    topics = np.asarray(topics, dtype=float)
    observed = check_counts(observed, "observed")
    held_out = check_counts(held_out, "held_out")
    if topics.ndim != 2 or topics.shape[1] != observed.shape[1]:
        raise ValueError(f"topics must have shape (K, {observed.shape[1]}); got {topics.shape}.")
    if observed.shape != held_out.shape:
        raise ValueError("observed and held_out must have the same shape; got "
                         f"{observed.shape} and {held_out.shape}.")
    if not np.all(np.isfinite(topics)) or topics.min() < 0:
        raise ValueError("topics must be finite and non-negative.")
    K = topics.shape[0]
    theta_PK = np.ascontiguousarray((topics / topics.sum(axis=1, keepdims=True)).T)
    impossible = theta_PK.max(axis=1) == 0
    if impossible.any():
        # such words say nothing about the weights; held out, they make the score -inf
        if held_out[:, impossible].sum() > 0:
            return -np.inf
        keep = np.flatnonzero(~impossible)
        theta_PK = np.ascontiguousarray(theta_PK[keep])
        observed, held_out = observed[:, keep], held_out[:, keep]
    omega = np.full((observed.shape[0], K), 1.0 / K)
    if K > 1:
        counts = _fit.CountsCSR.from_matrix(observed)
        c = 1.0 / K if weight_prior is None else float(weight_prior)
        _fit.solve_weights(counts, theta_PK, omega, c, 1e-6, 1000)
    held = _fit.CountsCSR.from_matrix(held_out)
    total = _kernels.log_likelihood(held.indptr, held.indices, held.data, theta_PK, omega)
    return float(total / held.data.sum())
