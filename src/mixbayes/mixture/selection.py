r"""Choosing the number of clusters of a Dirichlet–multinomial mixture by its ELBO.

The ELBO bounds :math:`\log p(y \mid K)`, but a mean-field posterior sits on one of the
:math:`K!` equivalent labellings of the clusters; the exact marginal likelihood counts all of
them. The score used to rank K is therefore :math:`\mathrm{ELBO}_K + \log K!`, as maptpx and stm
do.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from sklearn.base import clone

from .._progress import progress
from .._validation import check_counts
from .dmm import DirichletMultinomialMixture, log_k_factorial


@dataclass
class ClusterSelection:
    """Result of :func:`select_n_clusters`.

    Attributes
    ----------
    table : list of dict
        One row per candidate K: ``k``, ``elbo``, ``log_k_factorial``, ``score``
        (``elbo + log K!``), ``n_occupied`` (clusters holding at least one document),
        ``converged``.
    best_k : int
        The candidate with the highest score.
    best_model : DirichletMultinomialMixture
        The model fitted at ``best_k``.
    """

    table: list
    best_k: int
    best_model: object = field(repr=False)

    def plot(self, ax=None):
        """Plot the score against K (see :func:`mixbayes.plotting.plot_selection`)."""
        from ..plotting import plot_selection

        return plot_selection(self, ax=ax)


def select_n_clusters(X, candidates, estimator=None, verbose=0):
    """Fit a Dirichlet–multinomial mixture for every K in ``candidates`` and rank them.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_documents, n_terms)
        Word counts.
    candidates : iterable of int
        Numbers of clusters to try, each in [1, n_documents].
    estimator : DirichletMultinomialMixture, optional
        Settings to use (cloned for every K); defaults to the class defaults.
    verbose : int
        Show a progress bar over the candidates.

    Returns
    -------
    ClusterSelection
    """
    X = check_counts(X, "X")
    candidates = sorted({int(k) for k in candidates})
    if not candidates:
        raise ValueError("candidates must hold at least one number of clusters; got none.")
    if candidates[0] < 1 or candidates[-1] > X.shape[0]:
        raise ValueError(
            f"candidates must lie in [1, {X.shape[0]}] (the number of documents); "
            f"got {candidates[0]}..{candidates[-1]}."
        )
    base = estimator if estimator is not None else DirichletMultinomialMixture()
    table, models = [], {}
    with progress(len(candidates), verbose, "select K") as bar:
        for k in candidates:
            model = clone(base).set_params(n_components=k).fit(X)
            correction = log_k_factorial(k)
            table.append(dict(
                k=k, elbo=model.elbo_, log_k_factorial=correction,
                score=model.elbo_ + correction,
                n_occupied=int(np.unique(model.labels_).size), converged=model.converged_,
            ))
            models[k] = model
            bar.update()
    best = max(table, key=lambda row: row["score"])
    return ClusterSelection(table=table, best_k=best["k"], best_model=models[best["k"]])
