"""numba kernels of :mod:`mixbayes.partition`: the SALSO-style search for the partition of
least posterior expected loss, and the per-draw contingency tables it and the losses read.

State of a search: the estimate's cluster sizes ``size[a]`` and, for every draw ``t``, the
contingency ``table[t, a, b]`` of the estimate's cluster ``a`` against the draw's cluster
``b``, over the items allocated so far. With :math:`g(x) = (x + 1)\\log(x + 1) - x\\log x`,
putting item :math:`i` (in cluster :math:`b_t` of draw :math:`t`) into cluster :math:`a` changes

* the expected VI, times :math:`n`, by :math:`g(s_a) - \\frac2T\\sum_t g(C_{t a b_t})` (in nats;
  a new cluster changes it by 0, and the draws' own terms do not depend on :math:`a`);
* the expected Binder loss (pairs in disagreement) by
  :math:`s_a - \\frac2T\\sum_t C_{t a b_t}` (a new cluster: 0),

since :math:`\\sum_{j\\in a}p_{ij} = \\frac1T\\sum_t C_{t a b_t}`: neither loss needs the
:math:`n\\times n` similarity matrix.
"""

import numpy as np
from numba import njit

VI, BINDER = 0, 1


@njit(cache=True)
def _gain(x):
    """:math:`(x + 1)\\log(x + 1) - x\\log x` (0 log 0 = 0)."""
    if x == 0:
        return 0.0
    return (x + 1.0) * np.log(x + 1.0) - x * np.log(x)


@njit(cache=True)
def _gains(n):
    """:func:`_gain` of 0..n, looked up by the search instead of two logarithms a cell."""
    out = np.empty(n + 1)
    for x in range(n + 1):
        out[x] = _gain(x)
    return out


@njit(cache=True)
def _costs(i, draws, table, size, n_clusters, loss, out, gains):
    """Change of the loss (up to a constant) if item ``i`` joins each cluster; ``out[k]`` for
    k < n_clusters, the new cluster's change (0) at ``out[n_clusters]``."""
    T = draws.shape[0]
    for a in range(n_clusters):
        total = 0.0
        if loss == VI:
            for t in range(T):
                total += gains[table[t, a, draws[t, i]]]
            out[a] = gains[size[a]] - 2.0 * total / T
        else:
            for t in range(T):
                total += table[t, a, draws[t, i]]
            out[a] = size[a] - 2.0 * total / T
    out[n_clusters] = 0.0


@njit(cache=True)
def _place(i, a, draws, table, size, sign):
    for t in range(draws.shape[0]):
        table[t, a, draws[t, i]] += sign
    size[a] += sign


@njit(cache=True)
def _best(costs, n, allow_new):
    """The cheapest of the ``n`` clusters and, when allowed, a new one (index ``n``); ties go
    to the lowest index."""
    best, top = 0, costs[0]
    for a in range(1, n + (1 if allow_new else 0)):
        if costs[a] < top - 1e-12:
            best, top = a, costs[a]
    return best


@njit(cache=True)
def _compact(labels, table, size, n_clusters):
    """Drop empty clusters (moving the last one into the hole); returns the new count."""
    a = 0
    while a < n_clusters:
        if size[a] == 0:
            last = n_clusters - 1
            if a != last:
                size[a] = size[last]
                table[:, a, :] = table[:, last, :]
                for i in range(labels.shape[0]):
                    if labels[i] == last:
                        labels[i] = a
            size[last] = 0
            table[:, last, :] = 0
            n_clusters -= 1
        else:
            a += 1
    return n_clusters


@njit(cache=True)
def salso_run(draws, n_labels, loss, max_clusters, order, max_sweeps):
    """One run: sequential allocation of the items in ``order``, then sweetening (every item
    in turn moved to its best cluster given the others) until a full pass moves none or
    ``max_sweeps`` passes. Returns the labels and the number of passes."""
    T, n = draws.shape
    table = np.zeros((T, max_clusters, n_labels), dtype=np.int64)
    size = np.zeros(max_clusters, dtype=np.int64)
    labels = np.full(n, -1, dtype=np.int64)
    costs = np.empty(max_clusters + 1)
    gains = _gains(n)
    n_clusters = 0
    for i in order:  # sequential allocation
        _costs(i, draws, table, size, n_clusters, loss, costs, gains)
        a = _best(costs, n_clusters, n_clusters < max_clusters) if n_clusters else 0
        if a == n_clusters:
            n_clusters += 1
        labels[i] = a
        _place(i, a, draws, table, size, 1)
    passes = 0
    for _ in range(max_sweeps):
        passes += 1
        moved = 0
        for i in order:
            a = labels[i]
            _place(i, a, draws, table, size, -1)
            _costs(i, draws, table, size, n_clusters, loss, costs, gains)
            # an emptied cluster is the new cluster (its cost is 0): no second one
            allow_new = size[a] > 0 and n_clusters < max_clusters
            best, top = a, costs[a]  # ties keep the item where it is
            for b in range(n_clusters + (1 if allow_new else 0)):
                if costs[b] < top - 1e-12:
                    best, top = b, costs[b]
            if best == n_clusters:
                n_clusters += 1
            labels[i] = best
            _place(i, best, draws, table, size, 1)
            if best != a:
                moved += 1
                if size[a] == 0:
                    n_clusters = _compact(labels, table, size, n_clusters)
        if moved == 0:
            break
    return labels, passes


@njit(cache=True)
def _cell(c, loss):
    r"""A contingency cell's term: :math:`c\log c` (VI) or :math:`\binom c2` (Binder)."""
    if c <= 0:
        return 0.0
    return c * np.log(c) if loss == VI else c * (c - 1.0) / 2.0


@njit(cache=True)
def loss_to_draws(labels, draws, n_labels, loss):
    r"""The loss between ``labels`` and every draw: with cell terms :math:`f` (:func:`_cell`),
    :math:`[\sum_a f(n_a) + \sum_b f(n_b) - 2\sum_{ab} f(n_{ab})]` over :math:`n` (VI in
    nats) or over :math:`\binom n2` (Binder's share of pairs in disagreement)."""
    T, n = draws.shape
    k = labels.max() + 1
    out = np.empty(T)
    table = np.zeros((k, n_labels))
    own = np.zeros(k)
    for i in range(n):
        own[labels[i]] += 1
    base = 0.0
    for a in range(k):
        base += _cell(own[a], loss)
    theirs = np.zeros(n_labels)
    norm = n if loss == VI else n * (n - 1) / 2.0
    for t in range(T):
        table[:, :] = 0.0
        theirs[:] = 0.0
        for i in range(n):
            table[labels[i], draws[t, i]] += 1
            theirs[draws[t, i]] += 1
        joint, marginal = 0.0, 0.0
        for b in range(n_labels):
            marginal += _cell(theirs[b], loss)
            for a in range(k):
                joint += _cell(table[a, b], loss)
        out[t] = (base + marginal - 2.0 * joint) / norm if norm > 0 else 0.0
    return out


@njit(cache=True)
def members(draws, n_labels):
    """Every draw's items grouped by cluster: ``order[t, starts[t, c]:starts[t, c + 1]]`` are
    the items of cluster ``c`` in draw ``t`` (a counting sort; int32, linear in the draws)."""
    T, n = draws.shape
    starts = np.zeros((T, n_labels + 1), dtype=np.int64)
    order = np.empty((T, n), dtype=np.int32)
    fill = np.empty(n_labels, dtype=np.int64)
    for t in range(T):
        for i in range(n):
            starts[t, draws[t, i] + 1] += 1
        for c in range(n_labels):
            starts[t, c + 1] += starts[t, c]
            fill[c] = starts[t, c]
        for i in range(n):
            c = draws[t, i]
            order[t, fill[c]] = i
            fill[c] += 1
    return order, starts


@njit(cache=True)
def shared_counts(draws, order, starts, lo, hi, out):
    """``out[i - lo, j]`` += the draws in which items i (lo <= i < hi) and j share a cluster:
    every row visits only its cluster's members in each draw (time: the sum over draws of
    the block's cluster sizes)."""
    for t in range(draws.shape[0]):
        for i in range(lo, hi):
            c = draws[t, i]
            for p in range(starts[t, c], starts[t, c + 1]):
                out[i - lo, order[t, p]] += 1
