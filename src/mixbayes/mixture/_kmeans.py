"""The DMM's k-means start: spherical k-means++ on sublinear tf-idf rows, refined by a few
Lloyd steps (the ``init="kmeans++"`` starting assignment of
:class:`~mixbayes.mixture.dmm.DirichletMultinomialMixture`)."""

from __future__ import annotations

import numpy as np
from numba import njit, prange
from sklearn.feature_extraction.text import TfidfTransformer

from .._kernel_tools import twice


def tfidf_rows(X):
    """L2-normalised sublinear tf-idf rows of counts ``X`` (CSR), the space of the k-means start."""
    return TfidfTransformer(sublinear_tf=True).fit_transform(X.astype(np.float64)).tocsr()


def spherical_kmeans_labels(X, n_components, rng, n_refine=5, tfidf=None):
    """Spherical k-means++ on L2-normalised tf-idf rows, refined by ``n_refine`` Lloyd steps.

    Seeds are drawn with probability proportional to the squared cosine distance to the nearest
    seed so far (k-means++); each refinement assigns every document to its most similar centre
    and re-normalises the centres. Empty documents get a random cluster. ``tfidf`` is
    ``tfidf_rows(X)`` when the caller has it already (several starts on the same data).
    """
    n = X.shape[0]
    T = tfidf_rows(X) if tfidf is None else tfidf

    def distances(c):  # cosine distance of every row to row c (a dense vector: one pass)
        return np.maximum(1.0 - T @ T[c].toarray().ravel(), 0.0)

    centres = [int(rng.integers(n))]
    closest = distances(centres[0])
    for _ in range(1, n_components):
        weight = closest**2
        total = weight.sum()
        c = int(rng.choice(n, p=weight / total)) if total > 0 else int(rng.integers(n))
        centres.append(c)
        closest = np.minimum(closest, distances(c))
    C_PK = np.ascontiguousarray(T[centres].toarray().T)
    empty = np.diff(T.indptr) == 0
    labels = np.empty(n, dtype=np.int64)
    sums_PK = np.empty_like(C_PK)
    for _ in range(n_refine + 1):
        _lloyd_step(T.indptr, T.indices, T.data, C_PK, labels, sums_PK)
        labels[empty] = rng.integers(n_components, size=int(empty.sum()))
        norms = np.linalg.norm(sums_PK, axis=0)
        keep = norms > 0
        C_PK[:, keep] = sums_PK[:, keep] / norms[keep]
    return labels


def _lloyd_step(indptr, indices, data, centres_PK, labels, sums_PK):
    """One spherical k-means step over CSR rows: every row goes to its most similar centre
    (``labels``, ties to the lower index; rows in parallel, the K-fold dominant work) and is
    then added to that centre's column of ``sums_PK`` (word-major, p x K; one serial pass)."""
    _assign_rows(indptr, indices, data, centres_PK, labels, work=data.size * centres_PK.shape[1])
    _sum_rows(indptr, indices, data, labels, sums_PK)


def _assign_rows_kernel(indptr, indices, data, centres_PK, labels):
    K = centres_PK.shape[1]
    for i in prange(indptr.shape[0] - 1):
        similarity = np.zeros(K)
        for e in range(indptr[i], indptr[i + 1]):
            row = centres_PK[indices[e]]
            value = data[e]
            for k in range(K):
                similarity[k] += value * row[k]
        best = 0
        for k in range(1, K):
            if similarity[k] > similarity[best]:
                best = k
        labels[i] = best


# serial below the package's threshold (_kernel_tools.runs_parallel): on classic3 (176,000
# entries, K = 3) the parallel build ran 3.3 ms a call to the serial build's 1.7 ms, and each
# DMM start calls it six times
_assign_rows = twice(_assign_rows_kernel)


@njit(cache=True)
def _sum_rows(indptr, indices, data, labels, sums_PK):
    sums_PK[:] = 0.0
    for i in range(indptr.shape[0] - 1):
        best = labels[i]
        for e in range(indptr[i], indptr[i + 1]):
            sums_PK[indices[e], best] += data[e]
