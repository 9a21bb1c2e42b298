"""The tree sampler's start: Ward's hierarchy cut where the BIC is lowest."""

import numpy as np
import pytest
from sklearn.metrics import normalized_mutual_info_score as nmi

import mixbayes as mb
from mixbayes.tree._start import regroup, ward_start


def test_bic_cut_finds_the_leaves_and_their_spread():
    """Twelve well-separated leaves under two levels: the start has twelve leaves matching
    the truth, nested levels grouped as the truth's, with
    round(12^(l/3)) nodes at level l, and the pooled within-leaf variance of the truth (1.0)."""
    X, truth = mb.datasets.make_tree_data(240, 3, branching=(2, 2, 3), leaf_spread=5.0,
                                          parent_spread=20.0, min_parent_distance=40.0,
                                          n_features=10, random_state=0)
    start = ward_start(X, 3, np.random.default_rng(0))
    assert start.n_leaves == 12
    assert nmi(truth.paths[:, -1], start.paths[:, -1]) == 1.0
    assert 0.85 < start.within_variance < 1.15
    assert [np.unique(start.paths[:, level]).size for level in range(3)] == [2, 5, 12]
    assert nmi(truth.paths[:, 0], start.paths[:, 0]) == 1.0
    # level 2 holds 5 nodes for the truth's 4: each of them inside one true parent
    pairs = np.unique(np.column_stack([truth.paths[:, 1], start.paths[:, 1]]), axis=0)
    assert np.unique(pairs[:, 1]).size == pairs.shape[0]
    for level in range(2):  # every node has one parent
        pairs = np.unique(start.paths[:, level:level + 2], axis=0)
        assert np.unique(pairs[:, 1]).size == pairs.shape[0]


def test_a_subset_starts_large_data_and_the_leaf_count_follows_the_data_not_n():
    """Beyond ``max_points`` Ward sees a random subset and every point takes the nearest
    leaf: the leaf count stays at the truth's (it grew as sqrt(N/2) in the first start)."""
    counts = []
    for n in (300, 3000):
        X, truth = mb.datasets.make_tree_data(n, 2, branching=(3, 3), leaf_spread=5.0,
                                              parent_spread=20.0, min_parent_distance=25.0,
                                              random_state=1)
        start = ward_start(X, 2, np.random.default_rng(0), max_points=500)
        counts.append(start.n_leaves)
        assert nmi(truth.paths[:, -1], start.paths[:, -1]) > 0.97
    assert counts == [9, 9]


def test_one_cluster_and_tiny_inputs():
    X = np.random.default_rng(0).normal(size=(40, 3))
    assert ward_start(X, 2, np.random.default_rng(0)).n_leaves == 1
    two = ward_start(np.array([[0.0, 0.0], [1.0, 1.0]]), 2, np.random.default_rng(0))
    assert two.paths.shape == (2, 2) and two.n_leaves == 1


def test_regroup_keeps_the_leaves_and_groups_them_as_wards_tree_above_the_cut():
    """Ward's merges of the leaves (sizes and centres) are Ward's tree above the cut: given
    the start's own leaves, ``regroup`` gives back the start's levels; given the true leaves
    under new numbers, it finds the true parents, with round(12^(l/3)) nodes at level l."""
    X, truth = mb.datasets.make_tree_data(240, 3, branching=(2, 2, 3), leaf_spread=5.0,
                                          parent_spread=20.0, min_parent_distance=40.0,
                                          n_features=10, random_state=0)
    start = ward_start(X, 3, np.random.default_rng(0))
    again = regroup(X, start.paths[:, -1], 3)
    for level in range(3):
        assert nmi(start.paths[:, level], again[:, level]) == 1.0
    renumbered = (7 * truth.paths[:, -1] + 3) % 101
    paths = regroup(X, renumbered, 3)
    assert [np.unique(paths[:, level]).size for level in range(3)] == [2, 5, 12]
    assert nmi(truth.paths[:, -1], paths[:, -1]) == 1.0
    assert nmi(truth.paths[:, 0], paths[:, 0]) == 1.0
    for level in range(2):  # nested: every node has one parent
        pairs = np.unique(paths[:, level:level + 2], axis=0)
        assert np.unique(pairs[:, 1]).size == pairs.shape[0]
    assert regroup(X, np.zeros(240, dtype=int), 2).tolist() == [[0, 0]] * 240


def _bic_by_hand(X, k):
    """The module docstring's BIC of Ward's cut into ``k`` clusters, from scikit-learn's flat
    cut and the clusters' own sums of squares (not the start's running merge costs)."""
    from sklearn.cluster import AgglomerativeClustering

    n, d = X.shape
    labels = AgglomerativeClustering(n_clusters=k, linkage="ward").fit(X).labels_
    within = sum(((X[labels == j] - X[labels == j].mean(axis=0)) ** 2).sum() for j in range(k))
    sizes = np.bincount(labels)
    return (n * d * np.log(within / (n * d)) - 2.0 * np.sum(sizes * np.log(sizes / n))
            + k * (d + 1) * np.log(n))


def test_the_leaf_count_is_the_argmin_of_the_bic_written_out():
    """Four 1-D blobs 3.5 apart: the chosen leaf count (1, 2 or 4 by seed) is the k <= n/5 of
    lowest BIC computed from its definition, k(d + 1) log N penalty included (with k d log N
    these seeds cut into 4, 4, 11 and 4 leaves)."""
    for seed, leaves in ((0, 1), (1, 4), (2, 1), (7, 2)):
        rng = np.random.default_rng(seed)
        X = np.concatenate([rng.normal(c, 1.0, size=(20, 1)) for c in (0.0, 3.5, 7.0, 10.5)])
        bic = [_bic_by_hand(X, k) for k in range(1, X.shape[0] // 5 + 1)]
        assert int(np.argmin(bic)) + 1 == leaves
        assert ward_start(X, 2, np.random.default_rng(0)).n_leaves == leaves


def test_within_variance_is_the_pooled_unbiased_variance_of_the_varying_columns():
    """The start's sigma^2 from its own leaves, by hand: the squares about the leaf means over
    (N - leaves) times the number of columns that vary (a constant column counts in neither)."""
    rng = np.random.default_rng(1)
    X = np.concatenate([rng.normal(c, 1.0, size=(20, 1)) for c in (0.0, 3.5, 7.0, 10.5)])
    X = np.column_stack([X, np.full(X.shape[0], 7.0)])
    start = ward_start(X, 2, np.random.default_rng(0))
    leaf, k = start.paths[:, -1], start.n_leaves
    assert k == 4
    centres = np.array([X[leaf == j].mean(axis=0) for j in range(k)])
    expected = ((X - centres[leaf]) ** 2).sum() / ((X.shape[0] - k) * 1)
    assert start.within_variance == pytest.approx(expected, rel=1e-10)


def test_at_least_five_points_a_leaf_on_average():
    """Ten far-apart triples of 30 points: the BIC wants ten leaves, the n/5 cap allows six
    (and ``max_leaves`` fewer still)."""
    rng = np.random.default_rng(0)
    X = np.concatenate([[100.0 * j, 0.0] + rng.normal(0, 0.1, size=(3, 2)) for j in range(10)])
    assert ward_start(X, 2, np.random.default_rng(0)).n_leaves == 6
    assert ward_start(X, 2, np.random.default_rng(0), max_leaves=4).n_leaves == 4


@pytest.mark.parametrize("covariance_type", ["diag", "full"])
def test_cut_log_marginals_are_the_partition_prior_times_the_clusters_marginals(
        covariance_type):
    """The conjugate cut's score after every number of merges, written out from the flat
    cut: sum over its clusters of log alpha + log Gamma(n_j) + log p(X_j), each cluster's
    statistics from its own points (not the running node sums)."""
    from scipy.special import gammaln
    from sklearn.cluster import AgglomerativeClustering

    from mixbayes.families.gaussian import scaled_prior
    from mixbayes.tree._start import _cut, _cut_log_marginals

    rng = np.random.default_rng(3)
    X = np.concatenate([rng.normal(c, 1.0, size=(6, 2)) for c in (0.0, 4.0)])
    n = X.shape[0]
    family = scaled_prior(covariance_type, X.mean(axis=0), np.cov(X.T), 4.0)
    children = AgglomerativeClustering(n_clusters=1, linkage="ward",
                                       compute_full_tree=True).fit(X).children_
    alpha = 0.7
    got = _cut_log_marginals(X, children, family, alpha=alpha)
    data = family.prepare(X)
    for merges in range(n):
        k = n - merges
        labels = _cut(children, n, k)
        stats = family.label_statistics(data, labels, k)
        expected = np.sum(np.log(alpha) + gammaln(stats.counts)
                          + family.log_marginal_likelihood(stats))
        assert got[merges] == pytest.approx(expected, rel=1e-9, abs=1e-9)
