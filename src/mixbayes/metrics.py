"""Agreement between a clustering and known classes.

NMI and ARI come from scikit-learn; purity and matched accuracy are defined here. Every function
takes the true classes first and accepts labels of any hashable type.
"""

import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score
from sklearn.metrics.cluster import contingency_matrix

__all__ = ["nmi", "ari", "purity", "matched_accuracy", "clustering_report"]


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
