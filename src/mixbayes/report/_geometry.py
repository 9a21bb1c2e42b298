"""The maths of the report's pictures: distances between components, classical MDS, the
principal plane of a set of points, and a covariance's ellipse in that plane.

Everything here is plain numpy on small arrays (components x terms at most): the map of
K = 50 topics over 10,000 terms takes a few milliseconds.
"""

from __future__ import annotations

import numpy as np


def js_distances(P):
    r"""Jensen-Shannon distances between the rows of ``P`` (distributions over the same terms).

    .. math::

        d(p, q) = \sqrt{\tfrac12 \mathrm{KL}(p \,\|\, m) + \tfrac12 \mathrm{KL}(q \,\|\, m)},
        \qquad m = \tfrac12 (p + q),

    with logarithms to base 2, so that distances lie in [0, 1] (1: no term in common). Rows
    are normalised first; terms of probability 0 contribute 0 (``0 log 0 = 0``).

    Returns
    -------
    ndarray of shape (K, K), symmetric with zeros on the diagonal.
    """
    P = np.asarray(P, dtype=float)
    P = P / P.sum(axis=1, keepdims=True)
    K = P.shape[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        plogp = np.where(P > 0, P * np.log2(P), 0.0).sum(axis=1)  # -entropy of every row
        D = np.zeros((K, K))
        for i in range(K - 1):
            M = 0.5 * (P[i] + P[i + 1:])  # (K - i - 1, V)
            logm = np.log2(np.where(M > 0, M, 1.0))
            cross = (P[i] * logm).sum(axis=1) + (P[i + 1:] * logm).sum(axis=1)
            js = 0.5 * (plogp[i] + plogp[i + 1:] - cross)
            D[i, i + 1:] = D[i + 1:, i] = np.sqrt(np.clip(js, 0.0, 1.0))
    return D


def hellinger_distances(means, covariances):
    r"""Hellinger distances between Gaussians N(mean_k, cov_k) (full covariance matrices),
    in [0, 1]:

    .. math::

        H^2 = 1 - \frac{|\Sigma_1|^{1/4} |\Sigma_2|^{1/4}}{|\bar\Sigma|^{1/2}}
        \exp\!\big(-\tfrac18 \delta^\top \bar\Sigma^{-1} \delta\big),
        \quad \bar\Sigma = \tfrac12(\Sigma_1 + \Sigma_2),\ \delta = \mu_1 - \mu_2.
    """
    means = np.asarray(means, dtype=float)
    covariances = np.asarray(covariances, dtype=float)
    K = means.shape[0]
    logdet = np.linalg.slogdet(covariances)[1]
    D = np.zeros((K, K))
    for i in range(K):
        for j in range(i + 1, K):
            average = 0.5 * (covariances[i] + covariances[j])
            delta = means[i] - means[j]
            log_bc = (0.25 * (logdet[i] + logdet[j]) - 0.5 * np.linalg.slogdet(average)[1]
                      - 0.125 * delta @ np.linalg.solve(average, delta))
            D[i, j] = D[j, i] = np.sqrt(np.clip(1.0 - np.exp(log_bc), 0.0, 1.0))
    return D


def classical_mds(D, dims=2):
    """Classical (Torgerson) multidimensional scaling of the distance matrix ``D``: the
    coordinates whose Euclidean distances best match ``D`` in the double-centred squared
    distances. Dimensions beyond the positive eigenvalues (fewer than three points, or a
    non-Euclidean ``D``) are zero; every axis is signed so that its largest coordinate is
    positive, so that the picture does not flip between runs.

    Returns
    -------
    ndarray of shape (K, dims)
    """
    D = np.asarray(D, dtype=float)
    K = D.shape[0]
    J = np.eye(K) - 1.0 / K
    B = -0.5 * J @ (D ** 2) @ J
    values, vectors = np.linalg.eigh((B + B.T) / 2)
    order = np.argsort(values)[::-1][:dims]
    coords = np.zeros((K, dims))
    for axis, index in enumerate(order):
        if values[index] > 1e-12:
            column = vectors[:, index] * np.sqrt(values[index])
            column *= np.sign(column[np.argmax(np.abs(column))]) or 1.0
            coords[:, axis] = column
    return coords


def refine_mds(D, start, n_iter=300, tol=1e-6):
    """Metric MDS by stress majorization (SMACOF: the Guttman transform, which never raises
    the stress), started from ``start`` (classical MDS). Classical MDS keeps the two largest
    axes of variation: where most components are about equally far apart (a DMM with K = 50)
    a few outliers take both axes and the rest pile up in the middle; majorizing the stress
    over every pair spreads them as their distances say.

    Returns
    -------
    ndarray like ``start``, and the raw stress before and after, sum (d_ij - |z_i - z_j|)^2
    """
    D = np.asarray(D, dtype=float)
    Z = np.array(start, dtype=float)
    K = D.shape[0]
    if K < 3:
        return Z, stress(D, Z), stress(D, Z)
    before = previous = stress(D, Z)
    for _ in range(n_iter):
        E = np.sqrt(((Z[:, None] - Z[None]) ** 2).sum(-1))
        with np.errstate(divide="ignore", invalid="ignore"):
            B = np.where(E > 0, -D / E, 0.0)
        B[np.diag_indices(K)] = -B.sum(axis=1)
        Z = B @ Z / K
        current = stress(D, Z)
        if previous - current <= tol * max(previous, 1e-300):
            break
        previous = current
    return Z, before, stress(D, Z)


def stress(D, Z):
    """Raw stress of the configuration ``Z`` against the distances ``D`` (each pair once)."""
    E = np.sqrt(((Z[:, None] - Z[None]) ** 2).sum(-1))
    return float(np.sum(np.triu(D - E, 1) ** 2))


def map_coordinates(D):
    """The map's 2-D positions for the distances ``D``: classical MDS refined by
    :func:`refine_mds`, each axis signed as :func:`classical_mds` signs it."""
    Z = refine_mds(D, classical_mds(D))[0]
    for axis in range(Z.shape[1]):
        column = Z[:, axis]
        column *= np.sign(column[np.argmax(np.abs(column))]) or 1.0
    return Z


def principal_plane(X, weights=None):
    """The centre and the first two principal axes of ``X`` (rows: points), or of a weighted
    set of means; with one feature the second axis is zero (a 1-D picture on a line).

    Returns
    -------
    centre : ndarray of shape (d,) (zeros when d <= 2: the features keep their values)
    basis : ndarray of shape (d, 2), orthonormal columns (a zero column when d = 1)
    """
    X = np.asarray(X, dtype=float)
    w = np.full(X.shape[0], 1.0 / X.shape[0]) if weights is None else np.asarray(weights, float)
    w = w / w.sum()
    centre = w @ X
    return _plane(centre, (X - centre).T @ ((X - centre) * w[:, None]))


def mixture_plane(weights, means, covariances):
    """The principal plane of a Gaussian mixture's own covariance (its weighted within- and
    between-component spread): the projection used when the points are not at hand."""
    weights = np.asarray(weights, dtype=float) / np.sum(weights)
    centre = weights @ means
    spread = means - centre
    cov = np.einsum("k,kij->ij", weights, covariances) + spread.T @ (spread * weights[:, None])
    return _plane(centre, cov)


def _plane(centre, cov):
    """The centre and the two leading eigenvectors of ``cov`` as columns; with one or two
    features the features themselves, uncentred (the picture keeps their names and values)."""
    d = cov.shape[0]
    if d <= 2:
        basis = np.zeros((d, 2))
        basis[:d, :d] = np.eye(d)
        return np.zeros(d), basis
    values, vectors = np.linalg.eigh(cov)
    basis = vectors[:, ::-1][:, :2].copy()
    for axis in range(2):  # the same sign every run
        column = basis[:, axis]
        column *= np.sign(column[np.argmax(np.abs(column))]) or 1.0
    return centre, basis


def ellipse(covariance, basis, scale=2.0):
    """The ``scale``-sigma ellipse of a covariance projected on ``basis``: semi-axes and the
    angle (degrees, of the first semi-axis from the x axis)."""
    cov2 = basis.T @ covariance @ basis
    values, vectors = np.linalg.eigh((cov2 + cov2.T) / 2)
    values = np.clip(values, 0.0, None)
    angle = float(np.degrees(np.arctan2(vectors[1, -1], vectors[0, -1])))
    return scale * float(np.sqrt(values[-1])), scale * float(np.sqrt(values[0])), angle
