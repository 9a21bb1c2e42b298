"""Agreement between a clustering and known classes, and between estimated and true topics.

NMI and ARI come from scikit-learn; purity and matched accuracy are defined here. Every function
takes the truth first; clustering scores accept labels of any hashable type.
"""

import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score
from sklearn.metrics.cluster import contingency_matrix

__all__ = ["nmi", "ari", "purity", "matched_accuracy", "clustering_report", "matched_topic_mse",
           "match_topics"]


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
