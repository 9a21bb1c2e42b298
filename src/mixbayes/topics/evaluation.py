"""Topics' held-out likelihood by document completion: split the counts, then score topics on
the held-out half of each left-out document's words with one common weight estimator (the
topic model's own solver), so that every tool's topics are compared on the same footing.

It lives beside the topic model because it runs the topic model's solver; the measures that
know no model are in :mod:`mixbayes.metrics`.
"""

import numpy as np

from .._validation import check_counts, check_random_state
from . import _kernels, blocks

__all__ = ["completion_split", "completion_log_likelihood"]


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
        counts = blocks.CountsCSR.from_matrix(observed)
        c = 1.0 / K if weight_prior is None else float(weight_prior)
        blocks.solve_weights(counts, theta_PK, omega, c, 1e-6, 1000)
    held = blocks.CountsCSR.from_matrix(held_out)
    total = _kernels.log_likelihood(held.indptr, held.indices, held.data, theta_PK, omega)
    return float(total / held.data.sum())
