r"""The tree sampler's starting state and default observation variance, from Ward's hierarchy.

Ward's agglomerative hierarchy is built on at most ``max_points`` points (a random subset when
there are more: its cost is quadratic in the points it sees), cut where the Bayesian
information criterion of a spherical, equal-variance hard clustering is lowest,

.. math::

    \mathrm{BIC}(k) = N d \log\frac{W_k}{N d} - 2\sum_{j=1}^k n_j\log\frac{n_j}{N}
                      + k(d + 1)\log N,

with :math:`W_k` the within-cluster sum of squares of the cut into :math:`k` clusters,
:math:`n_j` their sizes and :math:`d` the number of columns that vary (at most :math:`n/5` and
``max_leaves`` leaves), and cut at :math:`k^{\ell/L}` clusters at level :math:`\ell` above.
All points then take the leaf of the nearest leaf centre, and its ancestors. (Grouping the same
leaves above by the first :math:`k - k^{\ell/L}` merges of Bayesian hierarchical clustering
with the components' marginal likelihood, the search of :mod:`mixbayes.tree._linkage`, was
tried and is not used. The default fit's dendrogram purity, mean of 3 seeds,
``bench/bench_tree.py``, rose on glass 0.474 -> 0.500, wdbc 0.836 -> 0.867, olive 0.911 ->
0.921 and the depth-3 2-D hierarchy 0.545 -> 0.552, and fell on digits 0.764 -> 0.663, diabetes
0.736 -> 0.685, crabs 0.352 -> 0.341, ecoli 0.824 -> 0.817 and yeast 0.380 -> 0.375: one more
table within 0.01 of the best peer (8 of 15 against 7), at a larger loss where it lost.) The
chosen :math:`k` follows the data, not :math:`N` (the first start cut at :math:`\sqrt{N/2}`
leaves, so a sweep grew as :math:`N^{3/2}`, and stopped one leaf short of twelve on a depth-3
hierarchy with no move that splits a leaf). Any start is valid for the sampler: it only
shortens the burn-in.

With unknown per-component covariances (a conjugate ``family``) the leaves are cut instead
where the conjugate marginal likelihood of the cut is highest, among the same candidate numbers
of leaves,

.. math::

    \log p(\text{cut into } k) = k\log\alpha + \sum_{j=1}^k \big[\log\Gamma(n_j)
        + \log p(X_j)\big],

the Chinese restaurant's partition prior (:math:`\alpha = 1`) times every cluster's
marginal likelihood :math:`p(X_j)` (``GaussianFamily.log_marginal_likelihood``), with at least
:math:`d + 1` points a leaf on average for full covariances. The BIC's
round clusters of equal spread tile an elongated class with many leaves, and the sampler,
moving one point at a time, does not merge them: on three elongated classes (2-D, 60 points
each) the full model kept the 22 leaves of that start over 40 sweeps (leaf ARI 0.21), and the
three classes when started from them.

:func:`regroup` rebuilds the levels above given leaves by the same rule: Ward's merges of
the leaves (sizes and centres; above a cut of Ward's tree these are its own merges) cut at
:math:`k^{\ell/L}` groups. ``HierarchicalMixture`` calls it during burn-in on the chain's
leaves (its ``init`` parameter says when and why).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Start:
    """Nested labels per level (shape (N, L), leaves last) and the pooled within-leaf
    variance averaged over features (the default :math:`\\sigma^2`)."""

    paths: np.ndarray
    within_variance: float

    @property
    def n_leaves(self):
        return int(self.paths[:, -1].max()) + 1


def ward_start(X, depth, rng, max_points=2000, max_leaves=100, family=None):
    """The start described in the module docstring (the marginal-likelihood cut when a
    ``GaussianFamily`` is given)."""
    from sklearn.cluster import AgglomerativeClustering

    N = X.shape[0]
    seen = np.sort(rng.choice(N, max_points, replace=False)) if N > max_points else np.arange(N)
    # a constant column changes no distance, but counted in d it would move the BIC's cut and
    # shrink the variance (d * N squares over the same sum): d counts the columns that vary
    d = max(int(np.count_nonzero(np.ptp(X, axis=0) > 0)), 1) if family is None else X.shape[1]
    sub = X[seen]
    n = sub.shape[0]
    if n < 2:
        return Start(np.zeros((N, depth), dtype=np.int64), 0.0)
    children = AgglomerativeClustering(n_clusters=1, linkage="ward",
                                       compute_full_tree=True).fit(sub).children_
    within, entropy = _merge_costs(sub, children)
    k = np.arange(n, 0, -1)  # clusters after 0, 1, ..., n - 1 merges
    with np.errstate(divide="ignore"):
        bic = (n * d * np.log(np.maximum(within, 1e-300) / (n * d))
               - 2.0 * (entropy - n * np.log(n)) + k * (d + 1) * np.log(n))
    # a hard-assignment BIC falls without bound as clusters shrink to single points: at
    # least five points a leaf on average (Gaussian noise then gets one leaf up to 2,000)
    usable = k <= min(max_leaves, max(1, n // 5))
    if family is None:
        leaves = int(k[usable][np.argmin(bic[usable])])
    else:
        if family.covariance_type == "full":
            # a full covariance needs d + 1 points to be seen at all: as many a leaf on
            # average (with five, wdbc's 30 features were cut into 98 leaves of near-degenerate
            # clusters, whose marginal likelihood grows again with k; ARI 0.02)
            usable &= k <= max(1, n // (d + 1))
        leaves = int(k[usable][np.argmax(_cut_log_marginals(sub, children, family)[usable])])
    labels = np.column_stack([_cut(children, n, max(1, int(round(leaves ** (level / depth)))))
                              for level in range(1, depth + 1)])
    centres = np.zeros((leaves, X.shape[1]))
    np.add.at(centres, labels[:, -1], sub)
    centres /= np.bincount(labels[:, -1], minlength=leaves)[:, None]
    ancestors = np.zeros((leaves, depth), dtype=np.int64)
    ancestors[labels[:, -1]] = labels
    leaf = _nearest(X, centres) if N > n else labels[:, -1]
    paths = ancestors[leaf]
    spread = X - centres[leaf]
    variance = float((spread**2).sum() / (max(N - leaves, 1) * d))
    return Start(paths, variance)


def _cut_log_marginals(X, children, family, alpha=1.0):
    r"""The module docstring's :math:`\log p(\text{cut})` after 0, 1, ..., n - 1 merges of a
    scikit-learn merge tree: every node's statistics are its children's sum, the marginal
    likelihoods of all nodes come from one vectorised call, and a merge of ``a`` and ``b``
    into ``c`` changes the score by :math:`\log p(X_c) - \log p(X_a) - \log p(X_b)` plus
    the partition prior's change."""
    from scipy.special import gammaln

    from ..families.gaussian import GaussianStats

    n, d = X.shape
    Y = X - family.mean_prior
    full = family.covariance_type == "full"
    counts = np.ones(2 * n - 1)
    sums = np.vstack([Y, np.zeros((n - 1, d))])
    squares = np.zeros((2 * n - 1, d, d) if full else (2 * n - 1, d))
    squares[:n] = np.einsum("ni,nj->nij", Y, Y) if full else Y * Y
    for step, (a, b) in enumerate(children):
        c = n + step
        counts[c] = counts[a] + counts[b]
        sums[c] = sums[a] + sums[b]
        squares[c] = squares[a] + squares[b]
    node = family.log_marginal_likelihood(GaussianStats(counts, sums, squares)) + gammaln(
        counts) + np.log(alpha)
    change = node[n:] - node[children[:, 0]] - node[children[:, 1]]
    return node[:n].sum() + np.concatenate([[0.0], np.cumsum(change)])


def _merge_costs(X, children):
    r"""Within-cluster sum of squares :math:`W` and :math:`\sum_j n_j\log n_j` after
    0, 1, ..., n - 1 merges of a scikit-learn merge tree: a merge of clusters :math:`a, b`
    adds :math:`n_a n_b/(n_a + n_b)\lVert\bar x_a - \bar x_b\rVert^2` (Ward's criterion)."""
    n = X.shape[0]
    size = np.ones(2 * n - 1)
    mean = np.vstack([X, np.zeros((n - 1, X.shape[1]))])
    cost = np.zeros(n)
    gain = np.zeros(n)
    for step, (a, b) in enumerate(children):
        na, nb = size[a], size[b]
        new = n + step
        size[new] = na + nb
        mean[new] = (na * mean[a] + nb * mean[b]) / (na + nb)
        cost[step + 1] = na * nb / (na + nb) * np.sum((mean[a] - mean[b]) ** 2)
        gain[step + 1] = ((na + nb) * np.log(na + nb) - na * np.log(na) - nb * np.log(nb))
    return np.cumsum(cost), np.cumsum(gain)


def _cut(children, n_leaves, k):
    """Flat labels of the points when a scikit-learn merge tree is cut into ``k`` clusters."""
    parent = np.arange(n_leaves + children.shape[0])
    for step, (a, b) in enumerate(children[: n_leaves - k]):
        parent[a] = parent[b] = n_leaves + step
    labels = np.arange(n_leaves)
    for _ in range(n_leaves):
        moved = parent[labels]
        if np.array_equal(moved, labels):
            break
        labels = moved
    return np.unique(labels, return_inverse=True)[1].ravel()


def _nearest(X, centres, block=65536):
    """Index of the nearest centre of every row of ``X`` (in blocks, to bound memory)."""
    out = np.empty(X.shape[0], dtype=np.int64)
    norms = (centres**2).sum(axis=1)
    for lo in range(0, X.shape[0], block):
        out[lo:lo + block] = np.argmin(norms - 2.0 * X[lo:lo + block] @ centres.T, axis=1)
    return out


# regroup(cut="gaps"): leaves below this share of the points (or of 2 points) follow the
# group of the nearest larger leaf, and each level's number of groups lies within half a
# level of the equal-branching count k^(l/L)
SMALL_LEAF = 0.02
GAP_WIDTH = 0.5


def _leaf_merges(size, centre):
    """Ward's merges of clusters given by their sizes and centres: scikit-learn's
    ``children_`` and each merge's cost (the within-cluster sum of squares it adds, which
    never decreases along the merges)."""
    k = size.size
    size, centre = size.astype(float).copy(), centre.copy()
    children = np.empty((max(k - 1, 0), 2), dtype=np.int64)
    heights = np.empty(max(k - 1, 0))
    node = np.arange(k)  # the merge-tree node each active slot holds
    active = np.ones(k, dtype=bool)
    cost = size[:, None] * size[None, :] / (size[:, None] + size[None, :]) * (
        (centre[:, None, :] - centre[None, :, :]) ** 2).sum(axis=2)
    np.fill_diagonal(cost, np.inf)
    for step in range(k - 1):
        a, b = np.unravel_index(np.argmin(cost), cost.shape)
        a, b = min(a, b), max(a, b)
        heights[step] = cost[a, b]
        children[step] = node[a], node[b]
        centre[a] = (size[a] * centre[a] + size[b] * centre[b]) / (size[a] + size[b])
        size[a] += size[b]
        node[a] = k + step
        active[b] = False
        cost[b, :] = cost[:, b] = np.inf
        row = size[a] * size / (size[a] + size) * ((centre - centre[a]) ** 2).sum(axis=1)
        row[~active] = np.inf
        row[a] = np.inf
        cost[a, :] = cost[:, a] = row
    return children, heights


def _gap_counts(heights, k, depth):
    r"""Groups at levels 1..L-1 from the gaps in Ward's merges of ``k`` leaves, lowest level
    first: at level :math:`\ell` the count :math:`g` in
    :math:`[k^{(\ell - 1/2)/L}, k^{(\ell + 1/2)/L}]`, below the level under it, whose
    next merge is the largest multiple of the merge before it,
    :math:`\log h_{k-g} - \log h_{k-g-1}` (``heights`` 0-based)."""
    def gap(g):
        if g <= 1 or g >= k:
            return -np.inf
        return np.log(max(heights[k - g], 1e-300)) - np.log(max(heights[k - g - 1], 1e-300))

    counts, below = [], k
    for level in range(depth - 1, 0, -1):
        low = max(1, int(np.ceil(k ** ((level - GAP_WIDTH) / depth))))
        high = min(below - 1, int(np.floor(k ** ((level + GAP_WIDTH) / depth))))
        if high < low:  # too few leaves for a range: the equal-branching count
            g = max(1, min(below - 1, int(round(k ** (level / depth)))))
        else:
            g = max(range(low, high + 1), key=gap)
        counts.insert(0, g)
        below = max(g, 2)
    return counts


def regroup(X, leaves, depth, power=None, cut="branching"):
    r"""Paths (shape (N, ``depth``), leaves last) that keep the leaves ``leaves`` and group
    them above by Ward's merges of the leaves themselves (sizes and centres: the
    within-cluster sum of squares each merge adds, as in Ward's tree above a cut).

    ``cut="branching"`` cuts those merges at :math:`k^{\ell p}` groups at level
    :math:`\ell` (:math:`p = 1/L` by default, the start's rule), :math:`k` the number of
    leaves: the same branching at every level, right for the Ward start, whose leaf count
    the BIC chose. ``cut="gaps"`` (:func:`_gap_counts`) puts each level where a merge of
    the leaves costs most more than the one before, near that count, and runs on the
    leaves of at least ``SMALL_LEAF`` of the points (smaller ones join the group of the
    nearest of those): for leaves the restructuring moves found, whose number and sizes no
    criterion chose (``HierarchicalMixture(moves="burn-in")``). On the recovery test's
    depth-3 hierarchies (branching 2 x 2 x 3) from one path or from too many or too few
    leaves, 200 sweeps, the middle level's NMI was 0.87-0.90 with the equal branching (12
    to 17 leaves give 5-8 groups where the truth has 4) and 0.96-1.0 at every level with
    the gaps (``tests/tree/test_moves.py``); as the default's cut the gaps lost digits and
    iris on ``bench/bench_tree.py`` (11 of 15 sets at chain seeds 3-5 against 13)."""
    leaf_ids, leaf = np.unique(leaves, return_inverse=True)
    k = leaf_ids.size
    size = np.bincount(leaf, minlength=k).astype(float)
    centre = np.zeros((k, X.shape[1]))
    np.add.at(centre, leaf, X)
    centre /= size[:, None]
    if cut == "branching":
        power = 1.0 / depth if power is None else power
        children, _ = _leaf_merges(size, centre)
        labels = [_cut(children, k, max(1, int(round(k ** min(level * power, 1.0)))))
                  for level in range(1, depth)]
        return np.column_stack([lab[leaf] for lab in labels] + [leaf])
    large = size >= max(2.0, SMALL_LEAF * X.shape[0])
    if large.sum() < 2:
        large[:] = True
    kept = np.flatnonzero(large)
    children, heights = _leaf_merges(size[kept], centre[kept])
    # every leaf's stand-in among the kept ones: itself, or the nearest kept centre
    stand_in = np.argmin(((centre[:, None, :] - centre[kept][None]) ** 2).sum(axis=2), axis=1)
    labels = [_cut(children, kept.size, g)[stand_in]
              for g in _gap_counts(heights, kept.size, depth)]
    return np.column_stack([lab[leaf] for lab in labels] + [leaf])
