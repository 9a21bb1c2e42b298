"""The full dendrogram of a fitted tree (``linkage_``, :mod:`mixbayes.tree._linkage`)."""

import itertools

import numpy as np
import pytest
from scipy import stats
from scipy.cluster.hierarchy import fcluster, is_monotonic, is_valid_linkage, linkage
from scipy.special import gammaln, logsumexp

import mixbayes as mb
from mixbayes.families.gaussian import known_variance_log_marginal
from mixbayes.tree import _linkage

SIGMA2, S02, ALPHA = 0.5, 3.0, 1.0


def _log_h1(points):
    """log p(points | one component), mean integrated out, from the joint Gaussian of each
    dimension (no shared code with the families' closed form)."""
    n = len(points)
    cov = SIGMA2 * np.eye(n) + S02 * np.ones((n, n))
    return sum(stats.multivariate_normal(np.zeros(n), cov).logpdf(points[:, j])
               for j in range(points.shape[1]))


def _reference_bhc(X):
    """BHC (Heller & Ghahramani 2005) by its definition: at every step every pair of the
    current clusters is scored from scratch and the pair of highest r merged. Returns the
    merges as (frozenset of points, log r) in order."""
    clusters = [(frozenset([i]), np.log(ALPHA), _log_h1(X[[i]])) for i in range(len(X))]
    merges = []
    while len(clusters) > 1:
        best = None
        for (i, a), (j, b) in itertools.combinations(enumerate(clusters), 2):
            members = a[0] | b[0]
            n = len(members)
            log_d = np.logaddexp(np.log(ALPHA) + gammaln(n), a[1] + b[1])
            log_pi = np.log(ALPHA) + gammaln(n) - log_d
            h1 = _log_h1(X[sorted(members)])
            log_p = logsumexp([log_pi + h1, np.log1p(-np.exp(log_pi)) + a[2] + b[2]])
            log_r = log_pi + h1 - log_p
            if best is None or log_r > best[0]:
                best = (log_r, i, j, (members, log_d, log_p))
        log_r, i, j, merged = best
        merges.append((merged[0], log_r))
        clusters = [c for k, c in enumerate(clusters) if k not in (i, j)] + [merged]
    return merges, clusters[0][2]


def _members(Z):
    """The set of points under every row of a linkage matrix."""
    n = Z.shape[0] + 1
    sets = [frozenset([i]) for i in range(n)]
    for a, b in Z[:, :2].astype(int):
        sets.append(sets[a] | sets[b])
    return sets[n:]


def _one_group_linkage(X):
    def log_marginal(s):
        return known_variance_log_marginal(s, SIGMA2, S02)

    n = len(X)
    return _linkage.tree_linkage(X, np.zeros(n, dtype=int), np.zeros(n, dtype=int),
                                 np.array([-1]), np.array([0]), log_marginal, ALPHA)


def test_one_group_is_bhc_greedy_merges():
    """Seven 2-D points in one leaf and one component: the merges are BHC's, in BHC's order,
    the heights follow the largest -log r so far, and the evidence is BHC's p(D | T)."""
    X = np.random.default_rng(3).normal(size=(7, 2)) * [1.0, 2.0]
    Z, log_evidence = _one_group_linkage(X)
    assert is_valid_linkage(Z) and is_monotonic(Z)
    reference, reference_evidence = _reference_bhc(X)
    assert log_evidence == pytest.approx(reference_evidence, rel=1e-10)
    assert _members(Z) == [m for m, _ in reference]
    cost = np.log1p(np.maximum.accumulate(np.maximum(-np.array([r for _, r in reference]),
                                                     0.0)))
    np.testing.assert_allclose(Z[:, 2], 0.95 * cost / cost.max(), rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(Z[:, 3], [len(m) for m, _ in reference])


def test_bisected_groups_are_joined_whole(monkeypatch):
    """A group above MAX_GROUP parts is bisected first; the result is still one valid,
    monotone tree over every point."""
    monkeypatch.setattr(_linkage, "MAX_GROUP", 5)
    X = np.random.default_rng(0).normal(size=(23, 3))
    Z = _one_group_linkage(X)[0]
    assert Z.shape == (22, 4) and is_valid_linkage(Z) and is_monotonic(Z)
    assert Z[-1, 3] == 23


@pytest.fixture(scope="module")
def fitted():
    X, truth = mb.datasets.make_tree_data(90, 2, "nested", branching=(3, 3),
                                          leaf_spread=5.0, parent_spread=20.0, random_state=1)
    return X, truth, mb.HierarchicalMixture(2, n_iter=8, random_state=0).fit(X)


def test_the_dendrogram_refines_the_sampled_tree(fitted):
    """Every node of the sampled tree is the set of points under one row of linkage_ (or a
    single point), heights rise to the root, and fcluster at the number of leaves gives the
    leaves back: the dendrogram changes no partition of the sampled tree."""
    X, _, model = fitted
    Z = model.linkage_
    assert Z.shape == (X.shape[0] - 1, 4) and is_valid_linkage(Z) and is_monotonic(Z)
    clusters = set(_members(Z))
    paths = model.paths_
    for level in range(paths.shape[1]):
        for node in np.unique(paths[:, level]):
            points = frozenset(np.flatnonzero(paths[:, level] == node).tolist())
            assert len(points) == 1 or points in clusters
    n_leaves = np.unique(model.labels_).size
    cut = fcluster(Z, n_leaves, "maxclust")
    assert mb.metrics.ari(cut, model.labels_) == 1.0


def test_dendrogram_purity_of_a_linkage_matrix():
    """dendrogram_purity reads scipy's linkage format: against purity by its definition (the
    lowest common ancestor of every same-class pair, found by brute force)."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(14, 2))
    labels = rng.integers(0, 3, size=14)
    Z = linkage(X, "average")
    members = _members(Z)
    total, pairs = 0.0, 0
    for i, j in itertools.combinations(range(14), 2):
        if labels[i] == labels[j]:
            lca = min((m for m in members if i in m and j in m), key=len)
            total += np.mean(labels[sorted(lca)] == labels[i])
            pairs += 1
    assert mb.metrics.dendrogram_purity(Z, labels) == pytest.approx(total / pairs, rel=1e-12)
    with pytest.raises(ValueError, match="earlier rows"):
        mb.metrics.dendrogram_purity(np.array([[0.0, 20.0, 1.0, 2.0]] * 13), labels)


def test_depth_auto_keeps_the_depth_of_highest_evidence(tmp_path):
    """depth="auto" fits depths 1-5 and keeps the fit whose dendrogram has the highest
    evidence; the kept fit is that depth's own fit, and it round-trips through save/load."""
    X, _ = mb.datasets.make_tree_data(60, 2, "nested", branching=(2, 2), leaf_spread=6.0,
                                      parent_spread=20.0, random_state=2)
    auto = mb.HierarchicalMixture("auto", n_iter=4, random_state=0).fit(X)
    scores = auto.depth_scores_
    assert list(scores["depth"]) == [1, 2, 3, 4, 5]
    assert auto.depth_ == scores["depth"][np.argmax(scores["log_evidence"])]
    fixed = mb.HierarchicalMixture(int(auto.depth_), n_iter=4, random_state=0).fit(X)
    assert auto.log_evidence_ == fixed.log_evidence_ == scores["log_evidence"].max()
    np.testing.assert_array_equal(auto.linkage_, fixed.linkage_)
    assert auto.paths_.shape[1] == auto.depth_ and auto.cut(auto.depth_).shape == (60,)
    loaded = mb.load(mb.save(auto, tmp_path / "auto"))
    np.testing.assert_array_equal(loaded.depth_scores_, scores)
    with pytest.raises(ValueError, match="depth must be an integer >= 1 or one of 'auto'"):
        mb.HierarchicalMixture("deep").fit(X)


def test_the_compiled_search_makes_the_python_searchs_merges():
    """The known-variance marginal's numba search (the default tree's) against the generic
    Python search on the same parts: the same merges in the same order, the same heights and
    evidence. 40 points in three clusters of one leaf, joined as components then points."""
    from mixbayes.families.gaussian import KnownVarianceMarginal

    rng = np.random.default_rng(4)
    X = np.vstack([rng.normal(c, 1.0, size=(n, 3)) for c, n in ((0, 15), (4, 15), (9, 10))])
    comps = np.repeat([0, 1, 2], [15, 15, 10])
    args = (X, np.zeros(40, dtype=int), comps, np.array([-1]), np.array([0]))
    compiled = _linkage.tree_linkage(*args, KnownVarianceMarginal(SIGMA2, S02), ALPHA)
    python = _linkage.tree_linkage(*args, lambda s: known_variance_log_marginal(s, SIGMA2, S02),
                                   ALPHA)
    np.testing.assert_array_equal(compiled[0][:, [0, 1, 3]], python[0][:, [0, 1, 3]])
    np.testing.assert_allclose(compiled[0][:, 2], python[0][:, 2], rtol=1e-9)
    assert compiled[1] == pytest.approx(python[1], rel=1e-12)


def test_above_the_leaves_the_merges_are_greedy_bayes_factors():
    """The children of an inner node are joined by the pair of highest Bayes factor of one
    component against two, rescored from scratch at every step with the test's own marginal
    (:func:`_log_h1`), and the root's evidence is BHC's p(D|T) of the tree so built. Eight
    one-point leaves under the root, in 2-D; BHC's own merges of the same points differ."""
    X = np.array([[0.7, 1.6], [0.7, -2.6], [1.8, 0.9], [-1.1, 1.2], [0.7, 0.6], [0.1, 1.1],
                  [-1.5, -0.3], [-1.0, 1.2]])
    n = len(X)
    parent, level = np.array([-1] + [0] * n), np.array([0] + [1] * n)

    def log_marginal(s):
        return known_variance_log_marginal(s, SIGMA2, S02)

    Z, evidence = _linkage.tree_linkage(X, np.arange(1, n + 1), np.zeros(n, dtype=int),
                                        parent, level, log_marginal, ALPHA)
    clusters = [(frozenset([i]), np.log(ALPHA), _log_h1(X[[i]])) for i in range(n)]
    merged_sets = []
    while len(clusters) > 1:
        best = None
        for (i, a), (j, b) in itertools.combinations(enumerate(clusters), 2):
            members = a[0] | b[0]
            factor = _log_h1(X[sorted(members)]) - _log_h1(
                X[sorted(a[0])]) - _log_h1(X[sorted(b[0])])
            if best is None or factor > best[0]:
                best = (factor, i, j)
        _, i, j = best
        a, b = clusters[i], clusters[j]
        members = a[0] | b[0]
        log_prior = np.log(ALPHA) + gammaln(len(members))
        log_d = np.logaddexp(log_prior, a[1] + b[1])
        log_p = np.logaddexp(log_prior - log_d + _log_h1(X[sorted(members)]),
                             a[1] + b[1] - log_d + a[2] + b[2])
        merged_sets.append(members)
        clusters = [c for k, c in enumerate(clusters) if k not in (i, j)] + [
            (members, log_d, log_p)]
    assert set(_members(Z)) == set(merged_sets)
    assert evidence == pytest.approx(clusters[0][2], rel=1e-10)
    assert is_valid_linkage(Z) and is_monotonic(Z)
    # every merge joins the root's children: stage 2 (0 points in a component, 1 components
    # in a leaf), heights in [2, 2.95]
    assert np.all((Z[:, 2] >= 2.0) & (Z[:, 2] <= 2.95 + 1e-12))
    bhc = {members for members, _ in _reference_bhc(X)[0]}
    assert bhc != set(merged_sets)
