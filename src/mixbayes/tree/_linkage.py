r"""A full binary dendrogram consistent with a sampled tree: Bayesian merges inside its nodes.

The sampled tree has depth :math:`L` and multi-way nodes: a leaf holds many points (in one or
more components), an inner node many children. Dendrogram purity, ``fcluster`` and every
dendrogram plot want a binary merge sequence, so inside every group the parts are joined by
the greedy merges of Bayesian hierarchical clustering (Heller & Ghahramani 2005) with the
model's own marginal likelihood :math:`p(D\mid H_1)` (all of :math:`D` from one component, its
parameters integrated out): from the bottom,

1. the points of every component within a leaf,
2. the components of every leaf,
3. the children of every inner node, level by level up to the root,

each merge of two parts :math:`D_i, D_j` into :math:`D_k` scored (steps 1 and 2) by the
posterior probability that :math:`D_k` is one cluster,

.. math::

    d_k = \alpha\Gamma(n_k) + d_i d_j,\qquad \pi_k = \alpha\Gamma(n_k)/d_k,\qquad
    p(D_k\mid T_k) = \pi_k p(D_k\mid H_1) + (1 - \pi_k)\,p(D_i\mid T_i)\,p(D_j\mid T_j),

    r_k = \pi_k\,p(D_k\mid H_1)/p(D_k\mid T_k),

(:math:`d = \alpha`, :math:`p(D\mid T) = p(D\mid H_1)` for a single point), always merging the
pair of highest :math:`r_k` (in log space throughout), in steps 1 and 2. Above the leaves
(step 3) the pair merged is instead the one of highest Bayes factor of one component against
two under the same marginal,

.. math::

    \log p(D_i\cup D_j\mid H_1) - \log p(D_i\mid H_1) - \log p(D_j\mid H_1)

(:func:`merge_by_bayes_factor`; with a known variance and a flat prior on the means it is
minus Ward's merge cost over :math:`2\sigma^2`, plus a term in the sizes): with a
within-component variance, :math:`p(D_k\mid H_1)` of two leaves is negligible, so BHC's
:math:`r_k` falls to the tree-shape terms :math:`\pi_k` and the evidence of the partitions below
(:math:`p(D_i\mid T_i)`), which carry little of the geometry. The merged part's :math:`d` and
:math:`p(D\mid T)` still follow the recursion above. (Dendrogram purity of the default fit,
``bench/tree_upper.py``, against BHC's merges on the same fits; 15 sets, seeds 0-6: best or
within 0.01 of the best peer on 8 / 6 / 8 / 8 / 8 / 10 / 7 sets against 7 / 6 / 8 / 9 / 8 / 10
/ 5, 55 against 53 of 105; mean of ours minus the best peer -0.017 against -0.019, higher at
five seeds of seven; per set, over the seven, digits +0.023, glass +0.007, ecoli +0.006, iris
+0.003, but wdbc -0.009 (still above every peer) and wine -0.004 (``--versus current,installed
--seeds 0,1,2,3,4,5,6``). With the burn-in regroup's parents also finer, :math:`k^{3/4}`
instead of :math:`k^{1/2}` at depth 2, it was 63 of 105 and -0.016, but the sampled tree's
level-1 NMI on the recovery test's hierarchies fell from above 0.9 to 0.82: not used.) A part
that enters a group is a subtree built below, with its own :math:`d` and :math:`p(D\mid T)`, so
the whole dendrogram is one binary tree constrained to the sampled hierarchy, whose
:math:`p(D\mid T)` is BHC's: no partition of the sampled tree is changed.

Heights (scipy's third column) increase along every path to the root: a merge of stage
:math:`b` (0: points within a component, 1: components within a leaf, then one stage per
level of inner nodes, up to the root) has height
:math:`b + 0.95\log(1 + t)/\log(1 + t_{\max,b})`, with :math:`t` the largest
:math:`-\log r` (inner nodes: minus the log Bayes factor, floored at 0) of the merge and
of the merges below it in the same stage and
:math:`t_{\max,b}` the largest of the stage (merges BHC is sure of sit near the stage's
floor, the doubtful ones near its ceiling). So ``fcluster(linkage_, k, "maxclust")`` cuts the
sampled tree's upper levels first.

A group of more than ``MAX_GROUP`` parts (the greedy search is quadratic in them) is first
bisected along its first principal axis until every piece has at most that many; the pieces
are joined by the same merges. Below ``MAX_GROUP`` parts the sequence is BHC's exactly (steps
1 and 2) or the Bayes factor's.
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln

from ..families.gaussian import GaussianStats, KnownVarianceMarginal
from ._linkage_kernels import greedy_known

MAX_GROUP = 250


class Parts:
    """The parts being merged in one group: their statistics, :math:`\\log d`,
    :math:`\\log p(D\\mid T)`, dendrogram ids and heights (within the stage)."""

    def __init__(self, stats, log_d, log_p, ids, score):
        self.stats, self.log_d, self.log_p, self.ids, self.score = stats, log_d, log_p, ids, score

    @classmethod
    def points(cls, stats, log_marginal, alpha, ids):
        n = stats.counts.size
        return cls(stats, np.full(n, np.log(alpha)), log_marginal(stats), np.asarray(ids),
                   np.zeros(n))

    @classmethod
    def join(cls, parts):
        stats = GaussianStats(np.concatenate([p.stats.counts for p in parts]),
                              np.concatenate([p.stats.sums for p in parts]),
                              np.concatenate([p.stats.squares for p in parts]))
        return cls(stats, *(np.concatenate([getattr(p, name) for p in parts])
                            for name in ("log_d", "log_p", "ids", "score")))

    def __len__(self):
        return self.ids.size


def _select(stats, index):
    return GaussianStats(stats.counts[index], stats.sums[index], stats.squares[index])


def _merged(stats, a, others):
    """Statistics of part ``a`` merged with each of ``others``."""
    return GaussianStats(stats.counts[a] + stats.counts[others],
                         stats.sums[a] + stats.sums[others],
                         stats.squares[a] + stats.squares[others])


def _scores(parts, a, others, log_marginal, log_alpha):
    """:math:`\\log r`, :math:`\\log d` and :math:`\\log p(D\\mid T)` of merging part ``a``
    with each of ``others`` (module docstring)."""
    merged = _merged(parts.stats, a, others)
    log_h1 = log_marginal(merged)
    log_prior = log_alpha + gammaln(merged.counts)
    log_below = parts.log_d[a] + parts.log_d[others]
    log_d = np.logaddexp(log_prior, log_below)
    log_pi, log_not = log_prior - log_d, log_below - log_d
    log_p = np.logaddexp(log_pi + log_h1, log_not + parts.log_p[a] + parts.log_p[others])
    return log_pi + log_h1 - log_p, log_d, log_p


class Dendrogram:
    """Merge rows gathered in creation order: (id a, id b, height, size); ids below
    ``n_points`` are points, ``n_points + i`` is the i-th row."""

    def __init__(self, n_points):
        self.n_points = n_points
        self.rows = []
        self.stages, self.costs = [], []

    def add(self, a, b, stage, cost, size):
        self.rows.append((a, b, 0.0, size))
        self.stages.append(stage)
        self.costs.append(cost)
        return self.n_points + len(self.rows) - 1

    def linkage(self):
        """scipy's linkage matrix: heights ``stage + 0.95 log(1 + t)/log(1 + t_max)`` with
        ``t_max`` the stage's largest (module docstring); rows sorted by height (stably: a
        row's parts, created before it with heights no larger, stay before it), ids
        renumbered to match."""
        rows = np.array(self.rows, dtype=float).reshape(-1, 4)
        stages, costs = np.array(self.stages), np.log1p(np.array(self.costs))
        top = np.zeros(stages.size)
        for stage in np.unique(stages):
            here = stages == stage
            top[here] = costs[here].max()
        rows[:, 2] = stages + 0.95 * np.divide(costs, top, out=np.zeros_like(costs),
                                               where=top > 0)
        order = np.argsort(rows[:, 2], kind="stable")
        new = np.arange(self.n_points + rows.shape[0])
        new[self.n_points + order] = self.n_points + np.arange(rows.shape[0])
        out = rows[order]
        out[:, :2] = np.sort(new[out[:, :2].astype(np.int64)], axis=1)
        return out


def merge_group(parts, log_marginal, alpha, stage, dendrogram, max_group=None):
    """Join ``parts`` into one by BHC's greedy merges (module docstring), writing a row per
    merge; a group of more than ``max_group`` (default ``MAX_GROUP``) parts is bisected
    first. Returns the single part that is left."""
    max_group = MAX_GROUP if max_group is None else max_group
    if len(parts) > max_group:
        parts = Parts.join([
            merge_group(piece, log_marginal, alpha, stage, dendrogram, max_group)
            for piece in _bisect(parts, max_group)])
    m = len(parts)
    if m == 1:
        return parts
    if isinstance(log_marginal, KnownVarianceMarginal):
        return _merge_known(parts, log_marginal, alpha, stage, dendrogram)
    log_alpha = np.log(alpha)
    log_r = np.full((m, m), -np.inf)
    for a in range(m - 1):
        log_r[a, a + 1:] = _scores(parts, a, np.arange(a + 1, m), log_marginal, log_alpha)[0]
    log_r = np.maximum(log_r, log_r.T)  # symmetric; -inf on the diagonal
    best = log_r.argmax(axis=1)
    active = np.ones(m, dtype=bool)
    stats = parts.stats
    log_d, log_p = parts.log_d.copy(), parts.log_p.copy()
    ids, score = parts.ids.copy(), parts.score.copy()
    work = Parts(stats, log_d, log_p, ids, score)
    for _ in range(m - 1):
        rows = np.flatnonzero(active)
        a = rows[np.argmax(log_r[rows, best[rows]])]
        b = best[a]
        r_ab, d_ab, p_ab = _scores(work, a, np.array([b]), log_marginal, log_alpha)
        # the merged part takes a's slot
        stats.counts[a] += stats.counts[b]
        stats.sums[a] += stats.sums[b]
        stats.squares[a] += stats.squares[b]
        log_d[a], log_p[a] = d_ab[0], p_ab[0]
        cost = max(-float(r_ab[0]), 0.0, score[a], score[b])
        score[a] = cost
        ids[a] = dendrogram.add(int(ids[a]), int(ids[b]), stage, cost, int(stats.counts[a]))
        active[b] = False
        log_r[b, :] = log_r[:, b] = -np.inf
        others = np.flatnonzero(active)
        others = others[others != a]
        if others.size == 0:
            break
        log_r[a, others] = log_r[others, a] = _scores(work, a, others, log_marginal,
                                                      log_alpha)[0]
        best[a] = others[np.argmax(log_r[a, others])]
        stale = others[(best[others] == a) | (best[others] == b)]
        if stale.size:
            best[stale] = log_r[stale].argmax(axis=1)
        better = others[log_r[others, a] > log_r[others, best[others]]]
        best[better] = a
    return Parts(_select(stats, [a]), log_d[[a]], log_p[[a]], ids[[a]], score[[a]])


def merge_by_bayes_factor(parts, log_marginal, alpha, stage, dendrogram):
    r"""Join ``parts`` into one by greedy merges of the highest Bayes factor of one component
    against two, :math:`\log p(D_i\cup D_j\mid H_1) - \log p(D_i\mid H_1)
    - \log p(D_j\mid H_1)` (module docstring), writing a row per merge with
    :math:`t = -\log` of it; every merged part's :math:`d` and :math:`p(D\mid T)` follow
    BHC's recursion, so the root's is the evidence of the tree built. Returns the single part
    that is left."""
    if len(parts) > MAX_GROUP:
        parts = Parts.join([merge_by_bayes_factor(piece, log_marginal, alpha, stage, dendrogram)
                            for piece in _bisect(parts, MAX_GROUP)])
    m = len(parts)
    if m == 1:
        return parts
    stats = GaussianStats(parts.stats.counts.astype(float).copy(),
                          parts.stats.sums.astype(float).copy(),
                          parts.stats.squares.astype(float).copy())
    log_d, log_p = parts.log_d.copy(), parts.log_p.copy()
    ids, score = parts.ids.copy(), parts.score.copy()
    log_h1 = log_marginal(stats)
    log_alpha = np.log(alpha)

    def factors(a, others):
        return log_marginal(_merged(stats, a, others)) - log_h1[a] - log_h1[others]

    log_bf = np.full((m, m), -np.inf)
    for a in range(m - 1):
        log_bf[a, a + 1:] = factors(a, np.arange(a + 1, m))
    log_bf = np.maximum(log_bf, log_bf.T)  # symmetric; -inf on the diagonal
    active = np.ones(m, dtype=bool)
    for _ in range(m - 1):
        a, b = np.unravel_index(np.argmax(log_bf), log_bf.shape)
        a, b = int(min(a, b)), int(max(a, b))
        factor = float(log_bf[a, b])
        _, d_ab, p_ab = _scores(Parts(stats, log_d, log_p, ids, score), a, np.array([b]),
                                log_marginal, log_alpha)
        stats.counts[a] += stats.counts[b]
        stats.sums[a] += stats.sums[b]
        stats.squares[a] += stats.squares[b]
        log_h1[a] = log_marginal(_select(stats, [a]))[0]
        log_d[a], log_p[a] = d_ab[0], p_ab[0]
        cost = max(-factor, 0.0, score[a], score[b])
        score[a] = cost
        ids[a] = dendrogram.add(int(ids[a]), int(ids[b]), stage, cost, int(stats.counts[a]))
        active[b] = False
        log_bf[b, :] = log_bf[:, b] = -np.inf
        others = np.flatnonzero(active)
        others = others[others != a]
        if others.size:
            log_bf[a, others] = log_bf[others, a] = factors(a, others)
    return Parts(_select(stats, [a]), log_d[[a]], log_p[[a]], ids[[a]], score[[a]])


def _merge_known(parts, marginal, alpha, stage, dendrogram):
    """:func:`merge_group`'s search for the known-variance marginal, in the numba kernel of
    :mod:`mixbayes.tree._linkage_kernels` (the same merges as the Python search)."""
    stats = parts.stats
    m = len(parts)
    log_d, log_p, score = parts.log_d.copy(), parts.log_p.copy(), parts.score.copy()
    pairs, costs, sizes, last = greedy_known(
        stats.counts.astype(float), stats.sums.astype(float),
        stats.squares.reshape(m, -1).sum(axis=1), log_d, log_p, score,
        float(marginal.variance), float(marginal.prior_variance), float(np.log(alpha)))
    ids = parts.ids.copy()
    for (a, b), cost, size in zip(pairs, costs, sizes):
        ids[a] = dendrogram.add(int(ids[a]), int(ids[b]), stage, float(cost), int(size))
    whole = GaussianStats(stats.counts.sum(keepdims=True), stats.sums.sum(axis=0)[None],
                          stats.squares.sum(axis=0)[None])
    return Parts(whole, log_d[[last]], log_p[[last]], ids[[last]], score[[last]])


def _bisect(parts, max_group):
    """Pieces of at most ``max_group`` parts: split at the median of the parts' means'
    projection on their first principal axis, recursively."""
    if len(parts) <= max_group:
        return [parts]
    means = parts.stats.sums / parts.stats.counts[:, None]
    centred = means - means.mean(axis=0)
    axis = np.linalg.svd(centred, full_matrices=False)[2][0]
    projection = centred @ axis
    order = np.argsort(projection, kind="stable")
    half = len(parts) // 2
    pieces = []
    for index in (order[:half], order[half:]):
        pieces.extend(_bisect(Parts(_select(parts.stats, index), parts.log_d[index],
                                    parts.log_p[index], parts.ids[index], parts.score[index]),
                              max_group))
    return pieces


def point_stats(Y, full):
    """Per-point :class:`GaussianStats` of points ``Y`` centred at the prior mean."""
    squares = np.einsum("ni,nj->nij", Y, Y) if full else Y * Y
    return GaussianStats(np.ones(Y.shape[0]), Y.copy(), squares)


def tree_linkage(Y, leaves, components, parent, level, log_marginal, alpha, full=False):
    r"""The scipy linkage matrix of the module docstring.

    Parameters
    ----------
    Y : ndarray of shape (n, d)
        Points centred at the prior mean.
    leaves : ndarray of shape (n,)
        Every point's leaf (a node of the simplified tree).
    components : ndarray of shape (n,)
        Every point's component.
    parent, level : ndarray of shape (n_nodes,)
        The simplified tree (node 0 the root, parent -1).
    log_marginal : callable
        :class:`GaussianStats` of K parts -> their log marginal likelihoods (K,).
    alpha : float
        BHC's concentration :math:`\\alpha`.
    full : bool
        Whether ``log_marginal`` reads full second moments (d x d) or their diagonal.

    Returns
    -------
    linkage : ndarray of shape (n - 1, 4)
    log_evidence : float
        :math:`\log p(D\mid T)` of the root: BHC's marginal likelihood of the points under the
        Dirichlet-process mixture, summed over the partitions consistent with the dendrogram
        (a lower bound on the mixture's marginal likelihood, Heller & Ghahramani 2005).
    """
    n = Y.shape[0]
    dendrogram = Dendrogram(n)
    stats = point_stats(Y, full)
    built = {}
    for node in np.unique(leaves):  # stages 0 and 1
        members = np.flatnonzero(leaves == node)
        comps = []
        for k in np.unique(components[members]):
            inside = members[components[members] == k]
            comps.append(merge_group(Parts.points(_select(stats, inside), log_marginal, alpha,
                                                  inside), log_marginal, alpha, 0.0,
                                     dendrogram))
        joined = Parts.join(comps)
        joined.score = np.zeros(len(joined))  # a new stage: heights restart above it
        built[int(node)] = merge_group(joined, log_marginal, alpha, 1.0, dendrogram)
    # inner nodes, deepest first; node stage = 2 + (deepest level - 1 - its level)
    inner = [z for z in range(parent.size) if np.any(parent == z)]
    deepest = int(level.max()) if level.size else 0
    for z in sorted(inner, key=lambda z: -level[z]):
        kids = np.flatnonzero(parent == z)
        joined = Parts.join([built.pop(int(c)) for c in kids])
        joined.score = np.zeros(len(joined))
        stage = 2.0 + (deepest - 1 - int(level[z]))
        built[int(z)] = merge_by_bayes_factor(joined, log_marginal, alpha, stage, dendrogram)
    evidence = float(built[0].log_p[0])
    return (dendrogram.linkage() if n > 1 else np.zeros((0, 4))), evidence


def bhc_linkage(Y, log_marginal, alpha, full=False):
    """Plain Bayesian hierarchical clustering (Heller & Ghahramani 2005) of every point, as one
    group with no sampled tree above it and no bisection: the peer of ``bench/bench_tree.py``.
    Arguments as :func:`tree_linkage`'s; returns the linkage matrix."""
    n = Y.shape[0]
    dendrogram = Dendrogram(n)
    parts = Parts.points(point_stats(Y, full), log_marginal, alpha, np.arange(n))
    merge_group(parts, log_marginal, alpha, 0.0, dendrogram, max_group=n)
    return dendrogram.linkage() if n > 1 else np.zeros((0, 4))
