"""numba kernels for the multinomial family's two sparse products and its Dirichlet pass.

Layout: word-major, ``(p, K)`` arrays, so that a document's evidence is a sum of the rows of
``E[log beta]`` picked by its words, and the word statistics of column ``l`` of the counts are
one row of the output. Every kernel is parallel over independent rows and reduces in a fixed
order, so results do not depend on the number of threads.
"""

import math

import numpy as np
from numba import njit, prange

from .._kernel_tools import ordered_sum, softmax_row, twice as _twice

# Where a statistic s is below this fraction of the prior concentration a, the Dirichlet
# parameter a + s is a plus a negligible amount: a second-order Taylor expansion around a has
# relative error ~(s/a)^3 = 1e-24 and costs a few flops instead of a digamma and an lgamma (most
# (word, cluster) pairs of a fitted model are of this kind).
_TAYLOR_BELOW = 1e-8


@njit(cache=True, inline="always")
def digamma(x):
    """Digamma for x > 0: upward recurrence to x >= 10, then the asymptotic series (~1e-15)."""
    result = 0.0
    while x < 10.0:
        result -= 1.0 / x
        x += 1.0
    inv = 1.0 / x
    inv2 = inv * inv
    series = inv2 * (1.0 / 12 - inv2 * (1.0 / 120 - inv2 * (1.0 / 252 - inv2 * (
        1.0 / 240 - inv2 * (1.0 / 132 - inv2 * (691.0 / 32760))))))
    return result + math.log(x) - 0.5 * inv - series


@njit(cache=True, inline="always")
def trigamma(x):
    """Trigamma for x > 0 (recurrence to x >= 10 + asymptotic series)."""
    result = 0.0
    while x < 10.0:
        result += 1.0 / (x * x)
        x += 1.0
    inv = 1.0 / x
    inv2 = inv * inv
    return result + inv + 0.5 * inv2 + inv * inv2 * (1.0 / 6 - inv2 * (1.0 / 30 - inv2 * (
        1.0 / 42 - inv2 * (1.0 / 30 - inv2 * (5.0 / 66 - inv2 * (691.0 / 2730))))))


@njit(cache=True)
def tetragamma(x):
    """Second derivative of digamma for x > 0 (recurrence to x >= 10 + asymptotic series)."""
    result = 0.0
    while x < 10.0:
        result -= 2.0 / (x * x * x)
        x += 1.0
    inv = 1.0 / x
    inv2 = inv * inv
    return result - inv2 * (1.0 + inv * (1.0 + inv * (0.5 - inv2 * (1.0 / 6 - inv2 * (
        1.0 / 6 - inv2 * (3.0 / 10))))))


def _polya_sums(stats, a):
    r"""Sums over every entry :math:`s` of ``stats`` of the Dirichlet–multinomial terms in :math:`a`.

    Returns :math:`\sum[\log\Gamma(a+s) - \log\Gamma(a)]`, :math:`\sum[\psi(a+s) - \psi(a)]`
    and :math:`\sum[\psi'(a+s) - \psi'(a)]`, with a Taylor expansion for negligible ``s``.
    """
    flat = stats.ravel()
    dg_a, tg_a, qg_a = digamma(a), trigamma(a), tetragamma(a)
    lg_a = math.lgamma(a)
    taylor_below = _TAYLOR_BELOW * a
    n_chunks = 64
    size = (flat.shape[0] + n_chunks - 1) // n_chunks
    parts = np.zeros((n_chunks, 3))
    for c in prange(n_chunks):
        v0 = 0.0
        v1 = 0.0
        v2 = 0.0
        for e in range(c * size, min((c + 1) * size, flat.shape[0])):
            s = flat[e]
            if abs(s) < taylor_below:
                v0 += dg_a * s + 0.5 * tg_a * s * s
                v1 += tg_a * s + 0.5 * qg_a * s * s
                v2 += qg_a * s
            else:
                v0 += math.lgamma(a + s) - lg_a
                v1 += digamma(a + s) - dg_a
                v2 += trigamma(a + s) - tg_a
        parts[c, 0] = v0
        parts[c, 1] = v1
        parts[c, 2] = v2
    return np.array([ordered_sum(parts[:, 0]), ordered_sum(parts[:, 1]),
                     ordered_sum(parts[:, 2])])


def _compressed_times_dense(indptr, indices, data, dense, out):
    """Product of a compressed sparse matrix with a C-ordered dense one.

    Given CSR arrays of ``X`` (n, p) this is ``X @ dense`` for ``dense`` (p, K); given the CSC
    arrays of ``X`` it is ``X.T @ dense`` for ``dense`` (n, K). Rows of the output are
    independent, so the loop over them is parallel and each is summed in a fixed order. The
    result is written into ``out`` (n_out, K) and returned.
    """
    n_out = indptr.shape[0] - 1
    K = dense.shape[1]
    for r in prange(n_out):
        for k in range(K):
            out[r, k] = 0.0
        for e in range(indptr[r], indptr[r + 1]):
            src = dense[indices[e]]
            c = data[e]
            for k in range(K):
                out[r, k] += c * src[k]
    return out




def _responsibilities(indptr, indices, data, expected_log_PK, expected_log_weights, resp,
                      log_norm):
    r"""Fused local step: :math:`L = E[\log\lambda] + X E[\log\beta]^\top`, then row softmax.

    Writes the responsibilities into ``resp`` (n, K) and the log normalisers
    :math:`\operatorname{logsumexp}_k L_{ik}` into ``log_norm`` (n,), without storing ``L``,
    and returns the expected cluster sizes :math:`N_k = \sum_i r_{ik}` (K,). Rows are processed in 64 fixed chunks whose partial sizes are
    added in order, so the result does not depend on threads.
    """
    n = indptr.shape[0] - 1
    K = expected_log_PK.shape[1]
    n_chunks = 64
    size = (n + n_chunks - 1) // n_chunks
    partial_CK = np.zeros((n_chunks, K))
    for c in prange(n_chunks):
        sizes = partial_CK[c]
        for i in range(c * size, min((c + 1) * size, n)):
            row = resp[i]
            for k in range(K):
                row[k] = expected_log_weights[k]
            for e in range(indptr[i], indptr[i + 1]):
                src = expected_log_PK[indices[e]]
                v = data[e]
                for k in range(K):
                    row[k] += v * src[k]
            log_norm[i] = softmax_row(row, sizes)
    counts = np.zeros(K)
    for c in range(n_chunks):
        for k in range(K):
            counts[k] += partial_CK[c, k]
    return counts


def _dirichlet_columns(stats_PK, sums_K, theta, expected_log):
    r"""Dirichlet posteriors :math:`\phi_{lk} = \theta + s_{lk}` of the K word distributions.

    Writes :math:`E[\log\beta_{kl}]` into ``expected_log`` (p, K) and returns the per-word
    partial sums of
    :math:`\log\Gamma(\phi_{lk}) - \log\Gamma(\theta) - s_{lk}E[\log\beta_{kl}]`, which add up
    (with the column terms) to :math:`-\mathrm{KL}`; taking the difference per entry avoids
    cancelling two large sums. ``sums_K`` holds :math:`\sum_l s_{lk}`.
    """
    p, K = stats_PK.shape
    dg_totals = np.empty(K)
    for k in range(K):
        dg_totals[k] = digamma(sums_K[k] + p * theta)
    dg_theta = digamma(theta)
    tg_theta = trigamma(theta)
    lg_theta = math.lgamma(theta)
    psi2 = tetragamma(theta)
    taylor_below = _TAYLOR_BELOW * theta
    partial = np.zeros(p)
    for l in prange(p):
        acc = 0.0
        for k in range(K):
            s = stats_PK[l, k]
            if abs(s) < taylor_below:
                dg = dg_theta + tg_theta * s + 0.5 * psi2 * s * s
                lg_change = dg_theta * s + 0.5 * tg_theta * s * s
            else:
                dg = digamma(theta + s)
                lg_change = math.lgamma(theta + s) - lg_theta
            e = dg - dg_totals[k]
            expected_log[l, k] = e
            acc += lg_change - s * e
        partial[l] = acc
    return partial


dirichlet_columns = _twice(_dirichlet_columns)


compressed_times_dense = _twice(_compressed_times_dense)
responsibilities = _twice(_responsibilities)
polya_sums = _twice(_polya_sums)
