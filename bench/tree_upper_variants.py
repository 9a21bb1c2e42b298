"""Other ways of joining a fitted tree's kept leaves above the leaf level, for
``tree_upper.py --linkage NAME``: each takes the fitted model (with ``_bench_comp``) and the
points and returns a linkage matrix."""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln

from mixbayes.families.gaussian import GaussianStats, KnownVarianceMarginal, scaled_prior
from mixbayes.tree._linkage import Dendrogram, Parts, _select, merge_group, point_stats


def _known(model):
    return KnownVarianceMarginal(model.observation_variance_, model.mean_prior_variance_)


def _family(model, X, kind="full"):
    variances = X.var(axis=0)
    scale = float(np.mean(variances))
    floor = np.diag(1e-6 * np.where(variances > 0, variances, scale))
    covariance = np.atleast_2d(np.cov(X.T, bias=True)) * (variances > 0) + floor
    return scaled_prior(kind, X.mean(axis=0), covariance, model.mean_prior_variance_)


def _leaf_parts(model, X, dendrogram):
    """Stages 0-1 as the estimator builds them: {leaf: Parts} (known-variance statistics)."""
    Y = X - model.prior_mean_
    stats = point_stats(Y, False)
    marginal, alpha = _known(model), float(model.top_concentration)
    built = {}
    for node in np.unique(model.labels_):
        members = np.flatnonzero(model.labels_ == node)
        comps = []
        for k in np.unique(model._bench_comp[members]):
            inside = members[model._bench_comp[members] == k]
            comps.append(merge_group(Parts.points(_select(stats, inside), marginal, alpha,
                                                  inside), marginal, alpha, 0.0, dendrogram))
        joined = Parts.join(comps)
        joined.score = np.zeros(len(joined))
        built[int(node)] = merge_group(joined, marginal, alpha, 1.0, dendrogram)
    return built


def _as_atoms(model, X, built, family, full, alpha=1.0):
    """Leaves re-scored as BHC atoms under ``family``: p(D|T) = p(D|H1), d = alpha Gamma(n)."""
    Y = X - model.prior_mean_
    out = {}
    for node, part in built.items():
        members = np.flatnonzero(model.labels_ == node)
        y = Y[members]
        squares = (y.T @ y)[None] if full else (y * y).sum(axis=0)[None]
        stats = GaussianStats(np.array([float(members.size)]), y.sum(axis=0)[None], squares)
        log_p = family.log_marginal_likelihood(stats)
        out[node] = Parts(stats, np.array([np.log(alpha) + gammaln(members.size)]),
                          np.asarray(log_p, float).reshape(1), part.ids.copy(),
                          np.zeros(1))
    return out


def _upper(model, built, marginal, alpha, dendrogram, constrained=True):
    parent, level = model.node_parent_, model.node_level_
    if not constrained:
        joined = Parts.join(list(built.values()))
        joined.score = np.zeros(len(joined))
        merge_group(joined, marginal, alpha, 2.0, dendrogram, max_group=10_000)
        return
    inner = [z for z in range(parent.size) if np.any(parent == z)]
    deepest = int(level.max()) if level.size else 0
    for z in sorted(inner, key=lambda z: -level[z]):
        kids = np.flatnonzero(parent == z)
        joined = Parts.join([built.pop(int(c)) for c in kids])
        joined.score = np.zeros(len(joined))
        stage = 2.0 + (deepest - 1 - int(level[z]))
        built[int(z)] = merge_group(joined, marginal, alpha, stage, dendrogram)


def current(model, X):
    """The estimator's own linkage, rebuilt (a check of this module)."""
    dendrogram = Dendrogram(X.shape[0])
    built = _leaf_parts(model, X, dendrogram)
    _upper(model, built, _known(model), float(model.top_concentration), dendrogram)
    return dendrogram.linkage()


def _niw(model, X, kind, constrained, alpha=1.0):
    dendrogram = Dendrogram(X.shape[0])
    built = _leaf_parts(model, X, dendrogram)
    family = _family(model, X, kind)
    full = kind == "full"
    atoms = _as_atoms(model, X, built, family, full, alpha)
    _upper(model, atoms, family.log_marginal_likelihood, alpha, dendrogram, constrained)
    return dendrogram.linkage()


def niw_upper(model, X):
    return _niw(model, X, "full", True)


def niw_free(model, X):
    return _niw(model, X, "full", False)


def diag_upper(model, X):
    return _niw(model, X, "diag", True)


def diag_free(model, X):
    return _niw(model, X, "diag", False)


def ward_free(model, X):
    """Leaves joined by Ward's merges of their centres (sizes and centres), sampled upper
    tree ignored."""
    dendrogram = Dendrogram(X.shape[0])
    built = _leaf_parts(model, X, dendrogram)
    nodes = list(built)
    size = np.array([float(np.sum(model.labels_ == z)) for z in nodes])
    centre = np.array([X[model.labels_ == z].mean(axis=0) for z in nodes])
    ids = [int(built[z].ids[0]) for z in nodes]
    active = list(range(len(nodes)))
    while len(active) > 1:
        best, pair = np.inf, None
        for i, a in enumerate(active):
            for b in active[i + 1:]:
                c = size[a] * size[b] / (size[a] + size[b]) * np.sum((centre[a] - centre[b]) ** 2)
                if c < best:
                    best, pair = c, (a, b)
        a, b = pair
        centre[a] = (size[a] * centre[a] + size[b] * centre[b]) / (size[a] + size[b])
        size[a] += size[b]
        ids[a] = dendrogram.add(ids[a], ids[b], 2.0, best, int(size[a]))
        active.remove(b)
    return dendrogram.linkage()


# --- candidates over the leaves, and their evidence ----------------------------------------
def _leaf_summary(model, X):
    nodes = np.unique(model.labels_)
    size = np.array([float(np.sum(model.labels_ == z)) for z in nodes])
    centre = np.array([X[model.labels_ == z].mean(axis=0) for z in nodes])
    return nodes, size, centre


def _emit(model, X, merges):
    """Linkage: stages 0-1 as the estimator's, then ``merges`` (pairs of atom slots, the merged
    part taking the first slot) over the leaves in ``np.unique(labels_)`` order."""
    dendrogram = Dendrogram(X.shape[0])
    built = _leaf_parts(model, X, dendrogram)
    nodes = np.unique(model.labels_)
    ids = [int(built[int(z)].ids[0]) for z in nodes]
    size = [int(np.sum(model.labels_ == z)) for z in nodes]
    for step, (a, b) in enumerate(merges):
        size[a] += size[b]
        ids[a] = dendrogram.add(ids[a], ids[b], 2.0, float(step), size[a])
    return dendrogram.linkage()


def _greedy(cost, update):
    """Greedy merges on a symmetric cost matrix; ``update(a, b)`` returns a's new row."""
    cost = cost.copy()
    np.fill_diagonal(cost, np.inf)
    k = cost.shape[0]
    merges = []
    for _ in range(k - 1):
        a, b = np.unravel_index(np.argmin(cost), cost.shape)
        a, b = min(a, b), max(a, b)
        merges.append((a, b))
        row = update(a, b)
        cost[b, :] = cost[:, b] = np.inf
        row[a] = np.inf
        alive = np.isfinite(cost).any(axis=0) | np.isfinite(cost).any(axis=1)
        row[~alive] = np.inf
        row[b] = np.inf
        cost[a, :] = cost[:, a] = row
    return merges


def ward_merges(model, X):
    _, size, centre = _leaf_summary(model, X)
    size, centre = size.copy(), centre.copy()

    def cost_of():
        return size[:, None] * size[None, :] / (size[:, None] + size[None, :]) * (
            (centre[:, None] - centre[None]) ** 2).sum(axis=2)

    def update(a, b):
        centre[a] = (size[a] * centre[a] + size[b] * centre[b]) / (size[a] + size[b])
        size[a] += size[b]
        return size[a] * size / (size[a] + size) * ((centre - centre[a]) ** 2).sum(axis=1)

    return _greedy(cost_of(), update)


def average_merges(model, X):
    from scipy.spatial.distance import cdist

    nodes, size, _ = _leaf_summary(model, X)
    k = nodes.size
    total = np.zeros((k, k))
    for i, z in enumerate(nodes):
        for j in range(i, k):
            s = cdist(X[model.labels_ == z], X[model.labels_ == nodes[j]]).sum()
            total[i, j] = total[j, i] = s
    size = size.copy()

    def update(a, b):
        total[a] += total[b]
        total[:, a] = total[a]
        size[a] += size[b]
        return total[a] / (size[a] * size)

    return _greedy(total / np.outer(size, size), update)


def single_merges(model, X):
    from scipy.spatial.distance import cdist

    nodes, _, _ = _leaf_summary(model, X)
    k = nodes.size
    dist = np.zeros((k, k))
    for i, z in enumerate(nodes):
        for j in range(i + 1, k):
            dist[i, j] = dist[j, i] = cdist(X[model.labels_ == z],
                                            X[model.labels_ == nodes[j]]).min()

    def update(a, b):
        dist[a] = np.minimum(dist[a], dist[b])
        dist[:, a] = dist[a]
        return dist[a].copy()

    return _greedy(dist, update)


def ward_leaves(model, X):
    return _emit(model, X, ward_merges(model, X))


def average_leaves(model, X):
    return _emit(model, X, average_merges(model, X))


def single_leaves(model, X):
    return _emit(model, X, single_merges(model, X))


def upper_evidence(Z, labels, family, full, alpha=1.0):
    """BHC's log p(D|T) of the tree ``Z`` over the leaves of ``labels`` as atoms (every leaf
    must be a subtree of Z): d = alpha Gamma(n), p = p(D|H1) at an atom."""
    n = labels.size
    Y = X_CENTRED[0]
    node_leaf = np.concatenate([labels, np.full(n - 1, -2)])  # -2: not pure, -1 unknown
    size = np.concatenate([np.ones(n), Z[:, 3]])
    leaf_size = np.bincount(np.unique(labels, return_inverse=True)[1])
    _, inverse = np.unique(labels, return_inverse=True)
    counts_of = dict(zip(np.unique(labels), leaf_size))
    d = X_CENTRED[0].shape[1]
    cnt = np.zeros(2 * n - 1)
    sums = np.zeros((2 * n - 1, d))
    sq = np.zeros((2 * n - 1, d, d) if full else (2 * n - 1, d))
    log_d = np.full(2 * n - 1, np.nan)
    log_p = np.full(2 * n - 1, np.nan)
    cnt[:n], sums[:n] = 1, Y
    sq[:n] = np.einsum("ni,nj->nij", Y, Y) if full else Y * Y
    for r, (a, b, _, s) in enumerate(Z):
        a, b, c = int(a), int(b), n + r
        cnt[c], sums[c], sq[c] = cnt[a] + cnt[b], sums[a] + sums[b], sq[a] + sq[b]
        if node_leaf[a] >= 0 and node_leaf[a] == node_leaf[b]:
            node_leaf[c] = node_leaf[a]
    is_atom = np.zeros(2 * n - 1, bool)
    for c in range(2 * n - 1):
        if node_leaf[c] >= 0 and cnt[c] == counts_of[node_leaf[c]]:
            is_atom[c] = True
    h1 = family.log_marginal_likelihood(GaussianStats(cnt, sums, sq))
    prior = np.log(alpha) + gammaln(cnt)
    for c in range(2 * n - 1):
        if is_atom[c]:
            log_d[c], log_p[c] = prior[c], h1[c]
    for r, (a, b, _, _) in enumerate(Z):
        a, b, c = int(a), int(b), n + r
        if np.isnan(log_p[c]) and not np.isnan(log_p[a]) and not np.isnan(log_p[b]):
            below = log_d[a] + log_d[b]
            log_d[c] = np.logaddexp(prior[c], below)
            log_p[c] = np.logaddexp(prior[c] - log_d[c] + h1[c],
                                    below - log_d[c] + log_p[a] + log_p[b])
    return float(log_p[-1])


X_CENTRED = [None]


def _atoms_bhc(model, X, family, full, constrained, alpha=1.0):
    dendrogram = Dendrogram(X.shape[0])
    built = _leaf_parts(model, X, dendrogram)
    atoms = _as_atoms(model, X, built, family, full, alpha)
    _upper(model, atoms, family.log_marginal_likelihood, alpha, dendrogram, constrained)
    return dendrogram.linkage()


def _peer_family(X, scale=0.25, kappa=0.05):
    from mixbayes.families.gaussian import GaussianFamily
    d = X.shape[1]
    return GaussianFamily("full", X.mean(axis=0), kappa, d + 2.0, scale * np.eye(d))


def _pooled_family(model, X, factor=1.0, kappa=0.05, kind="full"):
    from mixbayes.families.gaussian import GaussianFamily
    d = X.shape[1]
    centres = np.zeros_like(X)
    for z in np.unique(model.labels_):
        centres[model.labels_ == z] = X[model.labels_ == z].mean(axis=0)
    R = X - centres
    W = R.T @ R / X.shape[0] + 1e-6 * np.eye(d)
    if kind == "diag":
        return GaussianFamily("diag", X.mean(axis=0), kappa, 3.0, factor * np.diag(W))
    return GaussianFamily("full", X.mean(axis=0), kappa, d + 2.0, factor * W)


def peer_free(model, X):
    return _atoms_bhc(model, X, _peer_family(X), True, False)


def peer_upper(model, X):
    return _atoms_bhc(model, X, _peer_family(X), True, True)


def pooled_free(model, X):
    return _atoms_bhc(model, X, _pooled_family(model, X), True, False)


def pooled_upper(model, X):
    return _atoms_bhc(model, X, _pooled_family(model, X), True, True)


def pooled4_free(model, X):
    return _atoms_bhc(model, X, _pooled_family(model, X, 4.0), True, False)


def pooled4_upper(model, X):
    return _atoms_bhc(model, X, _pooled_family(model, X, 4.0), True, True)


def pooled_diag_free(model, X):
    return _atoms_bhc(model, X, _pooled_family(model, X, 1.0, kind="diag"), False, False)


def pooled_diag_upper(model, X):
    return _atoms_bhc(model, X, _pooled_family(model, X, 1.0, kind="diag"), False, True)


def pooled4_diag_free(model, X):
    return _atoms_bhc(model, X, _pooled_family(model, X, 4.0, kind="diag"), False, False)


Y_TRUE = [None]


def _ward_sets(size, centre, groups):
    """Ward merges over slots, first within each group of ``groups`` then the groups."""
    size, centre = size.astype(float).copy(), centre.copy()
    merges, heads = [], []
    for g in np.unique(groups):
        slots = list(np.flatnonzero(groups == g))
        while len(slots) > 1:
            best, pair = np.inf, None
            for i, a in enumerate(slots):
                for b in slots[i + 1:]:
                    c = (size[a] * size[b] / (size[a] + size[b])
                         * np.sum((centre[a] - centre[b]) ** 2))
                    if c < best:
                        best, pair = c, (a, b)
            a, b = pair
            centre[a] = (size[a] * centre[a] + size[b] * centre[b]) / (size[a] + size[b])
            size[a] += size[b]
            merges.append((a, b))
            slots.remove(b)
        heads.append(slots[0])
    slots = heads
    while len(slots) > 1:
        best, pair = np.inf, None
        for i, a in enumerate(slots):
            for b in slots[i + 1:]:
                c = size[a] * size[b] / (size[a] + size[b]) * np.sum((centre[a] - centre[b]) ** 2)
                if c < best:
                    best, pair = c, (a, b)
        a, b = pair
        centre[a] = (size[a] * centre[a] + size[b] * centre[b]) / (size[a] + size[b])
        size[a] += size[b]
        merges.append((a, b))
        slots.remove(b)
    return merges


def oracle(model, X):
    """Leaves grouped by their majority true class (Y_TRUE), Ward within and between."""
    nodes, size, centre = _leaf_summary(model, X)
    y = Y_TRUE[0]
    groups = np.array([np.bincount(y[model.labels_ == z]).argmax() for z in nodes])
    return _emit(model, X, _ward_sets(size, centre, groups))


def parents_ward(model, X):
    """Sampled level-1 parents as groups, Ward within and between (depth 2)."""
    nodes, size, centre = _leaf_summary(model, X)
    groups = np.array([model.paths_[model.labels_ == z][0, 0] for z in nodes])
    return _emit(model, X, _ward_sets(size, centre, groups))


def _bf_sets(model, X, groups, marginal=None, full=False):
    """Greedy merges of highest Bayes factor log p(D_a+b|H1) - log p(D_a|H1) - log p(D_b|H1)
    under the known-variance marginal, first within each group, then the groups."""
    nodes, size, _ = _leaf_summary(model, X)
    Y = X - model.prior_mean_
    marginal = _known(model) if marginal is None else marginal
    cnt = size.copy()
    sums = np.array([Y[model.labels_ == z].sum(axis=0) for z in nodes])
    sq = np.array([(Y[model.labels_ == z].T @ Y[model.labels_ == z]) if full else
                   (Y[model.labels_ == z] ** 2).sum(axis=0) for z in nodes])

    def h1(idx):
        return marginal(GaussianStats(cnt[idx], sums[idx], sq[idx]))

    def bf(a, others):
        s = GaussianStats(cnt[a] + cnt[others], sums[a] + sums[others], sq[a] + sq[others])
        return marginal(s) - h1([a]) - h1(others)

    merges = []

    def run(slots):
        slots = list(slots)
        while len(slots) > 1:
            best, pair = -np.inf, None
            for i, a in enumerate(slots[:-1]):
                others = np.array(slots[i + 1:])
                v = bf(a, others)
                j = int(np.argmax(v))
                if v[j] > best:
                    best, pair = v[j], (a, int(others[j]))
            a, b = pair
            cnt[a] += cnt[b]
            sums[a] += sums[b]
            sq[a] += sq[b]
            merges.append((a, b))
            slots.remove(b)
        return slots[0]

    heads = [run(np.flatnonzero(groups == g)) for g in np.unique(groups)]
    run(heads)
    return merges


def bf_upper(model, X):
    nodes, _, _ = _leaf_summary(model, X)
    groups = np.array([model.paths_[model.labels_ == z][0, 0] for z in nodes])
    return _emit(model, X, _bf_sets(model, X, groups))


def bf_free(model, X):
    nodes, _, _ = _leaf_summary(model, X)
    return _emit(model, X, _bf_sets(model, X, np.zeros(nodes.size, int)))


def _groups(model, X):
    nodes, _, _ = _leaf_summary(model, X)
    return np.array([model.paths_[model.labels_ == z][0, 0] for z in nodes])


def bf_pooled_full(model, X):
    fam = _pooled_family(model, X, 1.0)
    return _emit(model, X, _bf_sets(model, X, _groups(model, X), fam.log_marginal_likelihood,
                                    True))


def bf_pooled_diag(model, X):
    fam = _pooled_family(model, X, 1.0, kind="diag")
    return _emit(model, X, _bf_sets(model, X, _groups(model, X), fam.log_marginal_likelihood))


def bf_data_diag(model, X):
    fam = _family(model, X, "diag")
    return _emit(model, X, _bf_sets(model, X, _groups(model, X), fam.log_marginal_likelihood))


def bf_data_full(model, X):
    fam = _family(model, X, "full")
    return _emit(model, X, _bf_sets(model, X, _groups(model, X), fam.log_marginal_likelihood,
                                    True))


def installed(model, X):
    """The package's tree_linkage on the cached kept state (the code as it is now)."""
    from mixbayes.tree._linkage import tree_linkage

    Z, _ = tree_linkage(X - model.prior_mean_, model.labels_, model._bench_comp,
                        model.node_parent_, model.node_level_, _known(model),
                        float(model.top_concentration))
    return Z


def bf_everywhere(model, X):
    """The Bayes-factor merges in every step (points in a component and components in a
    leaf too)."""
    from mixbayes.tree import _linkage

    original = _linkage.merge_group
    _linkage.merge_group = lambda parts, log_marginal, alpha, stage, dendrogram, max_group=None: (
        _linkage.merge_by_bayes_factor(parts, log_marginal, alpha, stage, dendrogram))
    try:
        return installed(model, X)
    finally:
        _linkage.merge_group = original


# --- h-tree4: the model's own within-component covariance, size weighting, evidence choice --
def _within_covariance(model, X):
    """Pooled scatter of the points about their kept components' means (d, d), floored."""
    comp = model._bench_comp
    centres = np.zeros_like(X)
    for k in np.unique(comp):
        centres[comp == k] = X[comp == k].mean(axis=0)
    R = X - centres
    W = R.T @ R / X.shape[0]
    return W + 1e-6 * np.mean(np.diag(W)) * np.eye(X.shape[1])


def _whitened(model, X, W=None):
    """X with the within-component covariance whitened to the model's sigma^2 I (same prior
    mean), so the known-variance marginal becomes a known full-covariance marginal."""
    W = _within_covariance(model, X) if W is None else W
    L = np.linalg.cholesky(W)
    Y = X - model.prior_mean_
    Z = np.linalg.solve(L, Y.T).T * np.sqrt(model.observation_variance_)
    return model.prior_mean_ + Z


def white_upper(model, X):
    return _emit(model, X, _bf_sets(model, _whitened(model, X), _groups(model, X)))


def white_free(model, X):
    nodes, _, _ = _leaf_summary(model, X)
    return _emit(model, X, _bf_sets(model, _whitened(model, X), np.zeros(nodes.size, int)))


def bf_peer_upper(model, X):
    fam = _peer_family(X)
    return _emit(model, X, _bf_sets(model, X, _groups(model, X), fam.log_marginal_likelihood,
                                    True))


def bf_peer_free(model, X):
    fam = _peer_family(X)
    nodes, _, _ = _leaf_summary(model, X)
    return _emit(model, X, _bf_sets(model, X, np.zeros(nodes.size, int),
                                    fam.log_marginal_likelihood, True))


def _within_family(model, X, kind="full"):
    """The model's own prior scaling (scaled_prior with s0^2) around the within-component
    covariance."""
    return scaled_prior(kind, X.mean(axis=0), _within_covariance(model, X),
                        model.mean_prior_variance_)


def bf_within_upper(model, X):
    fam = _within_family(model, X)
    return _emit(model, X, _bf_sets(model, X, _groups(model, X), fam.log_marginal_likelihood,
                                    True))


def bf_within_free(model, X):
    fam = _within_family(model, X)
    nodes, _, _ = _leaf_summary(model, X)
    return _emit(model, X, _bf_sets(model, X, np.zeros(nodes.size, int),
                                    fam.log_marginal_likelihood, True))


def _pick(model, X, names, family_of):
    """Of the candidate linkages ``names``, the one of highest BHC evidence (leaves as atoms)
    under ``family_of(model, X)`` (full)."""
    family = family_of(model, X)
    X_CENTRED[0] = X - X.mean(axis=0)
    best, choice = -np.inf, None
    for name in names:
        Z = globals()[name](model, X)
        e = upper_evidence(Z, model.labels_, family, True)
        if e > best:
            best, choice = e, Z
    return choice


def pick_within(model, X):
    return _pick(model, X, ["installed", "bf_free", "white_free", "white_upper"], _within_family)


def pick_within2(model, X):
    return _pick(model, X, ["installed", "bf_free"], _within_family)


def pick_peer(model, X):
    return _pick(model, X, ["installed", "bf_free", "white_free", "white_upper"],
                 lambda m, x: _peer_family(x))


def pick_white2(model, X):
    return _pick(model, X, ["installed", "white_free"], _within_family)


def pick_white2_peer(model, X):
    return _pick(model, X, ["installed", "white_free"], lambda m, x: _peer_family(x))


def _shrunk(model, X, weight):
    W = _within_covariance(model, X)
    return (1 - weight) * W + weight * np.trace(W) / W.shape[0] * np.eye(W.shape[0])


def white_free_half(model, X):
    """white_free with the within covariance shrunk half-way to its mean variance."""
    nodes, _, _ = _leaf_summary(model, X)
    Xw = _whitened(model, X, _shrunk(model, X, 0.5))
    return _emit(model, X, _bf_sets(model, Xw, np.zeros(nodes.size, int)))


def white_free_diag(model, X):
    """white_free with the within covariance's diagonal only."""
    nodes, _, _ = _leaf_summary(model, X)
    Xw = _whitened(model, X, np.diag(np.diag(_within_covariance(model, X))))
    return _emit(model, X, _bf_sets(model, Xw, np.zeros(nodes.size, int)))
