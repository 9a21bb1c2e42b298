"""numba kernel of the dendrogram's greedy BHC search (:func:`mixbayes.tree._linkage.merge_group`)
for the known-variance marginal, the default tree's: the same search on plain arrays, without
the per-merge numpy calls that cost the Python path about 50 us a point.

The parts' statistics are their sizes, their sums (centred at the prior mean) and their total
sums of squares; the marginal is :func:`mixbayes.families.gaussian.known_variance_log_marginal`.
"""

from math import lgamma

import numpy as np
from numba import njit


@njit(cache=True)
def _log_h1(n, sums, squares, variance, prior_variance):
    d = sums.shape[0]
    norm = 0.0
    for j in range(d):
        norm += sums[j] * sums[j]
    quadratic = squares - prior_variance * norm / (variance + n * prior_variance)
    return (-0.5 * n * d * np.log(2.0 * np.pi * variance)
            - 0.5 * d * np.log1p(n * prior_variance / variance) - 0.5 * quadratic / variance)


@njit(cache=True)
def _logaddexp(a, b):
    top = max(a, b)
    if top == -np.inf:
        return top
    return top + np.log(np.exp(a - top) + np.exp(b - top))


@njit(cache=True)
def _pair(a, b, counts, sums, squares, log_d, log_p, merged, variance, prior_variance,
          log_alpha):
    """(log r, log d, log p(D | T)) of merging parts ``a`` and ``b``."""
    n = counts[a] + counts[b]
    for j in range(sums.shape[1]):
        merged[j] = sums[a, j] + sums[b, j]
    log_h1 = _log_h1(n, merged, squares[a] + squares[b], variance, prior_variance)
    log_prior = log_alpha + lgamma(n)
    log_below = log_d[a] + log_d[b]
    d = _logaddexp(log_prior, log_below)
    log_pi, log_not = log_prior - d, log_below - d
    p = _logaddexp(log_pi + log_h1, log_not + log_p[a] + log_p[b])
    return log_pi + log_h1 - p, d, p


@njit(cache=True)
def _row_best(log_r, row):
    """First index of the row's largest entry (numpy's argmax)."""
    best, top = 0, log_r[row, 0]
    for j in range(1, log_r.shape[1]):
        if log_r[row, j] > top:
            best, top = j, log_r[row, j]
    return best


@njit(cache=True)
def greedy_known(counts, sums, squares, log_d, log_p, score, variance, prior_variance,
                 log_alpha):
    """BHC's greedy merges of the parts, in place (the merged part takes the first slot).
    Returns the merges as slots ``(a, b)`` (m - 1, 2), their costs and sizes, and the slot
    left at the end."""
    m = counts.shape[0]
    merged = np.empty(sums.shape[1])
    log_r = np.full((m, m), -np.inf)
    for a in range(m - 1):
        for b in range(a + 1, m):
            r = _pair(a, b, counts, sums, squares, log_d, log_p, merged, variance,
                      prior_variance, log_alpha)[0]
            log_r[a, b] = r
            log_r[b, a] = r
    best = np.empty(m, dtype=np.int64)
    for a in range(m):
        best[a] = _row_best(log_r, a)
    active = np.ones(m, dtype=np.bool_)
    pairs = np.empty((m - 1, 2), dtype=np.int64)
    costs = np.empty(m - 1)
    sizes = np.empty(m - 1)
    a = 0
    for step in range(m - 1):
        a, top = -1, -np.inf
        for i in range(m):
            if active[i] and (a < 0 or log_r[i, best[i]] > top):
                a, top = i, log_r[i, best[i]]
        b = best[a]
        r, d, p = _pair(a, b, counts, sums, squares, log_d, log_p, merged, variance,
                        prior_variance, log_alpha)
        counts[a] += counts[b]
        for j in range(sums.shape[1]):
            sums[a, j] += sums[b, j]
        squares[a] += squares[b]
        log_d[a], log_p[a] = d, p
        cost = max(-r, 0.0, score[a], score[b])
        score[a] = cost
        pairs[step, 0], pairs[step, 1] = a, b
        costs[step], sizes[step] = cost, counts[a]
        active[b] = False
        for j in range(m):
            log_r[b, j] = -np.inf
            log_r[j, b] = -np.inf
        any_other = False
        for j in range(m):
            if active[j] and j != a:
                any_other = True
                r = _pair(a, j, counts, sums, squares, log_d, log_p, merged, variance,
                          prior_variance, log_alpha)[0]
                log_r[a, j] = r
                log_r[j, a] = r
        if not any_other:
            break
        best[a] = _row_best(log_r, a)
        for j in range(m):
            if active[j] and j != a and (best[j] == a or best[j] == b):
                best[j] = _row_best(log_r, j)
        for j in range(m):
            if active[j] and j != a and log_r[j, a] > log_r[j, best[j]]:
                best[j] = a
    return pairs, costs, sizes, a
