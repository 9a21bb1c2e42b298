"""HierarchicalMixture as an estimator: recovery, the tree result, bad input."""

import json

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.metrics import normalized_mutual_info_score as nmi

import mixbayes as mb


@pytest.fixture(scope="module")
def nested():
    X, truth = mb.datasets.make_tree_data(135, 2, "nested", branching=(3, 3),
                                          observation_variance=1.0, leaf_spread=5.0,
                                          parent_spread=20.0, random_state=0)
    return (X - X.mean(axis=0)) / X.std(axis=0), truth


def test_fit_recovers_a_nested_hierarchy_and_its_tree_is_consistent(nested):
    X, _ = nested
    fitted = mb.HierarchicalMixture(2, margin_weight=1.0, n_iter=30, random_state=0).fit(X)
    _recovers_the_leaves(nested, fitted)
    _tree_result_is_consistent(nested, fitted)
    _predict_on_the_training_points_mostly_agrees(nested, fitted)
    _traces_and_diagnostics(fitted)


def _recovers_the_leaves(nested, fitted):
    """Nine leaf clusters under three parents (135 points, seed 0, C = 1, 30 sweeps): the
    leaves are recovered (NMI measured 0.98) and the level-1 partition better than a random
    grouping of those leaves (NMI measured 0.59; BHMC groups leaves by the components they
    share, not by distance, so the level-1 split is only weakly identified, and in this data
    set, standardised, two leaves of different parents lie 0.65 apart where two siblings lie
    1.44 apart: the mean over data sets is in the next test)."""
    X, truth = nested
    assert nmi(truth.paths[:, 1], fitted.labels_) > 0.85
    assert nmi(truth.paths[:, 0], fitted.cut(1)) > 0.45


def test_level_one_is_recovered_on_average_over_data_sets():
    """The level-1 partition of the fixture's hierarchy over data seeds 0-7 (C = 0, 30
    sweeps): mean NMI measured 0.80, four of eight data sets at 0.79 or above (0.58, 0.74,
    1, 1, 0.71, 1, 0.79, 0.62; the chain keeps the level 1 of its last burn-in regroup, Ward's
    merges of its leaves). Before the regroup (level 1 the start's, Ward's cut): mean 0.81,
    five of eight."""
    scores = []
    for seed in range(8):
        X, truth = mb.datasets.make_tree_data(135, 2, "nested", branching=(3, 3),
                                              observation_variance=1.0, leaf_spread=5.0,
                                              parent_spread=20.0, random_state=seed)
        X = (X - X.mean(axis=0)) / X.std(axis=0)
        fitted = mb.HierarchicalMixture(2, n_iter=30, random_state=0).fit(X)
        scores.append(nmi(truth.paths[:, 0], fitted.cut(1)))
    assert np.mean(scores) > 0.78
    assert np.sum(np.array(scores) > 0.78) >= 4


def _tree_result_is_consistent(nested, fitted):
    X, _ = nested
    tree = fitted.tree_
    assert fitted.paths_.shape == (X.shape[0], 2)
    assert np.array_equal(fitted.labels_, fitted.paths_[:, -1])
    # every point's node at level 1 is the parent of (or merged with) its leaf
    leaf_parent = tree.parent[fitted.paths_[:, 1]]
    merged = fitted.paths_[:, 0] == fitted.paths_[:, 1]
    assert np.all(merged | (leaf_parent == fitted.paths_[:, 0]))
    # sizes add up: the root holds every point, every inner node its children
    assert tree.size[0] == X.shape[0]
    for z in range(tree.n_nodes):
        kids = tree.children(z)
        if kids.size:
            assert tree.size[kids].sum() == tree.size[z] and kids.size >= 2
    assert tree.weights.shape == (tree.n_nodes, fitted.n_components_)
    assert np.all(tree.weights.sum(axis=1) <= 1 + 1e-12)
    assert np.array_equal(np.unique(fitted.cut(2)), np.arange(np.unique(fitted.labels_).size))
    newick = fitted.to_newick()
    assert newick.endswith("n0;") and newick.count("(") == newick.count(")")
    assert newick.count("n") == tree.n_nodes
    nodes = json.loads(fitted.to_json())["nodes"]
    assert [n["parent"] for n in nodes] == tree.parent.tolist()


def _predict_on_the_training_points_mostly_agrees(nested, fitted):
    X, _ = nested
    assert np.mean(fitted.predict(X) == fitted.labels_) > 0.9
    assert set(np.unique(fitted.predict(X[:5] + 0.01))) <= set(np.flatnonzero(
        np.bincount(fitted.tree_.parent[1:], minlength=fitted.tree_.n_nodes) == 0))


def _traces_and_diagnostics(fitted):
    trace = fitted.trace_
    assert trace.shape == (1, 30)
    assert np.all(np.isfinite(trace["rcdll"])) and np.all(trace["nodes"] >= 1)
    assert np.all((trace["acceptance"] >= 0) & (trace["acceptance"] <= 1))
    assert fitted.best_rcdll_ == pytest.approx(trace["rcdll"][0, 15:].max())
    assert set(fitted.rhat_) == {"rcdll", "n_components"}


def test_estimator_api_and_seeds(nested):
    X, _ = nested
    model = mb.HierarchicalMixture(2, n_iter=10, n_chains=2, random_state=3)
    assert model.fit(X[:60]) is model
    again = clone(model).fit(X[:60])
    assert np.array_equal(model.labels_, again.labels_)
    assert model.get_params()["n_chains"] == 2
    assert model.set_params(margin=2.0).margin == 2.0
    assert model.trace_.shape == (2, 10)
    assert np.isfinite(model.rhat_["rcdll"])


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(depth=0), ValueError, "depth must be an integer >= 1"),
    (dict(depth=2.5), TypeError, "depth must be an integer"),
    (dict(margin_weight=-1.0), ValueError, "margin_weight"),
    (dict(top_concentration=0.0), ValueError, "top_concentration"),
    (dict(branch_concentration=-2), ValueError, "branch_concentration"),
    (dict(path_concentration=np.nan), ValueError, "path_concentration"),
    (dict(observation_variance=0.0), ValueError, "observation_variance"),
    (dict(burn_in=10, n_iter=10), ValueError, "burn_in must be below"),
    (dict(init="kmeans"), ValueError, "init must be one of"),
    (dict(covariance_type="tilted"), ValueError, "covariance_type must be one of"),
    (dict(covariance_type="full", observation_variance=1.0), ValueError,
     "observation_variance applies only to covariance_type='known'.*covariance_type='full'"),
    (dict(observation_variance=1.0), ValueError,  # the tied default has no sigma^2 to give
     "observation_variance applies only to covariance_type='known'.*covariance_type='tied'"),
])
def test_bad_parameters(kwargs, error, match):
    X = np.random.default_rng(0).normal(size=(20, 2))
    with pytest.raises(error, match=match):
        mb.HierarchicalMixture(**kwargs).fit(X)


def test_bad_data():
    model = mb.HierarchicalMixture(n_iter=2)
    with pytest.raises(ValueError, match="NaN or infinite"):
        model.fit(np.array([[0.0, 1.0], [np.nan, 2.0], [1.0, 1.0]]))
    with pytest.raises(ValueError, match="minimum of 2"):
        model.fit(np.zeros((1, 2)))
    with pytest.raises(ValueError, match="depth must be at most the number of points"):
        mb.HierarchicalMixture(depth=4, n_iter=2).fit(np.arange(6.0).reshape(3, 2))
    with pytest.raises(ValueError, match="features"):
        mb.HierarchicalMixture(n_iter=2).fit(np.random.default_rng(0).normal(size=(12, 2))) \
            .predict(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="kind must be"):
        mb.datasets.make_tree_data(10, kind="flat")
    with pytest.raises(ValueError, match="covariance_type must be one of"):
        mb.datasets.make_tree_data(10, covariance_type="tied")


def test_default_observation_variance_is_the_spread_of_one_cluster():
    """The default sigma^2 is estimated from the points (pooled within Ward's clusters): near
    the truth (1.0) on the nested hierarchy and unchanged by a shift of the data, scaled by
    the square of a rescaling; the first default (a tenth of the overall variance, 11 here)
    let three components cover nine clusters."""
    X, _ = mb.datasets.make_tree_data(200, kind="nested", random_state=1)
    model = mb.HierarchicalMixture(2, n_iter=2, burn_in=0, covariance_type="known",
                                   random_state=0)
    sigma2 = model.fit(X).observation_variance_
    assert 0.6 < sigma2 < 1.5
    assert model.fit(X + 100.0).observation_variance_ == pytest.approx(sigma2, rel=1e-9)
    assert model.fit(3.0 * X).observation_variance_ == pytest.approx(9 * sigma2, rel=1e-9)
    assert 0.1 * X.var(axis=0).mean() > 5 * sigma2
    given = mb.HierarchicalMixture(2, n_iter=2, burn_in=0, covariance_type="known",
                                   observation_variance=0.5).fit(X)
    assert given.observation_variance_ == 0.5


@pytest.mark.slow  # three fits of 150 points, 60 sweeps
def test_margin_weight_separates_siblings():
    """Overlapping siblings (parents 4 apart, leaves 3 around them): as C grows the share of
    points violating their margin falls and the low end of the margins rises (measured on
    this seed: violations 1.0, 0.14, 0.13 at C = 0, 0.5, 2; the 10% quantile of the margins
    -14, 0.87, 0.84 - on one seed the quantile at C = 0.5 and 2 is a tie within noise, the
    three-seed study in bench/tree_margins.py shows it rising; with C = 0 the discriminants
    follow their prior), while the tree keeps siblings (at
    C = 8 it may collapse to one branch: a tree without siblings has no constraint)."""
    X, _ = mb.datasets.make_tree_data(150, kind="nested", parent_spread=4.0, leaf_spread=3.0,
                                      random_state=1)
    violations, low_end = [], []
    for C in (0.0, 0.5, 2.0):
        model = mb.HierarchicalMixture(2, margin_weight=C, n_iter=60, random_state=1).fit(X)
        with_siblings = np.isfinite(model.margins_)
        assert with_siblings.mean() > 0.9 and np.unique(model.cut(1)).size >= 2
        margins = model.margins_[with_siblings]
        violations.append(np.mean(margins < model.margin))
        low_end.append(np.quantile(margins, 0.1))
    assert violations[0] > 0.5 and violations[1] < 0.3 and violations[2] < violations[1]
    assert low_end[0] < 0 < min(low_end[1:])


# well separated (make_tree_data's docstring): sibling leaves 8.7 (depth 2) or 10 (depth 3)
# sigma apart, siblings above twice their subtree's radius apart, top-level centres >= 25 / 40
WELL_SEPARATED = {
    2: dict(n_samples=180, branching=(3, 3), leaf_spread=5.0, parent_spread=20.0,
            min_parent_distance=25.0),
    3: dict(n_samples=240, branching=(2, 2, 3), leaf_spread=5.0, parent_spread=20.0,
            min_parent_distance=40.0),
}


@pytest.mark.slow  # six fits of 180-240 points, 30 sweeps, per setting
@pytest.mark.parametrize("depth, d", [(2, 2), (2, 10), (3, 2), (3, 10)])
def test_recovery_of_well_separated_hierarchies(depth, d):
    """Issue 14's recovery target with the default model (C = 0): level-wise NMI >= 0.9 at
    every level and dendrogram purity >= 0.9, mean of data seeds 0-2 (points scaled by one
    number, so the components stay isotropic); and the regularisation (C = 1) loses no
    level-wise NMI. Measured (40 sweeps, seeds 0-5, the last three not tuned on): C = 0 NMI
    1.0 at level 1, 0.94-1.0 below, purity 0.98-1.0; C = 1 NMI 0.95-1.0, purity 1.0.
    (With the first defaults, gamma = alpha = 1, the leaves fragmented at C = 0: purity
    0.74-0.83 from the same start.)

    The fits keep the per-point moves only (``moves="path"``): the level-1 partition they
    recover is Ward's start, kept because those moves cannot regroup leaves. With every move
    (the default), which reaches the posterior's trees, the same means were level 1 0.76-0.87,
    the levels below 0.82-0.99 and purity 0.91-1.0: at these concentrations the posterior
    gives leaves of distinct components parents of their own (two under one parent cost about
    gamma) and merges a pair of sibling leaves at odds about gamma / alpha (issue 22)."""
    scores = {setting: [] for setting in SETTINGS}
    for setting, kwargs in SETTINGS.items():
        for seed in range(3):
            X, truth = mb.datasets.make_tree_data(depth=depth, n_features=d, random_state=seed,
                                                  **WELL_SEPARATED[depth])
            X = (X - X.mean(axis=0)) / np.sqrt(X.var(axis=0).mean())
            fitted = mb.HierarchicalMixture(depth, n_iter=30, moves="path", random_state=0,
                                            **kwargs).fit(X)
            scores[setting].append(
                list(mb.metrics.levelwise_scores(fitted.paths_, truth.paths))
                + [mb.metrics.dendrogram_purity(fitted.paths_, truth.paths[:, -1])])
    mean = {setting: np.mean(values, axis=0) for setting, values in scores.items()}
    assert np.all(mean["default"] >= 0.9), mean
    assert np.all(mean["known"] >= 0.9), mean
    assert np.all(mean["known, C=1"][:depth] >= mean["known"][:depth] - 0.02), mean


# the recovery test's settings: the default (a tied covariance, C = 0), and the regularisation
# judged against the known sigma^2 I it was built on. (With the tied default and C = 1, whose
# chain does not regroup and so keeps Sigma from the start, the level NMI below the top fell
# to 0.86-0.97 against 0.93-1.0 at C = 0, 2026-12-04.)
SETTINGS = {"default": {}, "known": dict(covariance_type="known"),
            "known, C=1": dict(covariance_type="known", margin_weight=1.0)}


def test_two_separated_clusters_get_a_leaf_each():
    """Two Gaussians 8 sd apart, 30 points each: every chain seed keeps them in two leaves
    (with branch_concentration 0.1, the first sparse default, 12 of 20 fits put both in one
    leaf of two components or split off a few points: the odds of two leaves against one
    mixed leaf are about alpha / gamma, 1 there and 10 now). A kept state may still hold
    a stray point in a leaf of its own (8 of 50 seeds; seed 1 here): no leaf mixes the two,
    and each has a leaf of at least 28 of its 30 points."""
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0, 1, (30, 2)), rng.normal(0, 1, (30, 2)) + [8, 0]])
    truth = np.repeat([0, 1], 30)
    for seed in range(3):
        leaves = mb.HierarchicalMixture(2, random_state=seed).fit(X).labels_
        for leaf in np.unique(leaves):
            assert np.unique(truth[leaves == leaf]).size == 1  # no mixed leaf
        for side in (0, 1):
            assert np.bincount(leaves[truth == side]).max() >= 28


def _elongated_classes(seed=0):
    """Three elongated 2-D classes of 60 points: along x, along y, and slanted."""
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(0, 1, (60, 2)) * [3, 0.3],
                   rng.normal(0, 1, (60, 2)) * [0.3, 3] + [8, 0],
                   rng.normal(0, 1, (60, 2)) @ [[2, 1.9], [0, 0.3]] + [0, 10]])
    return X, np.repeat([0, 1, 2], 60)


def test_tied_covariance_is_the_whitened_known_model():
    r"""``covariance_type="tied"`` (the default) runs the known model on the points whitened by
    :math:`\Sigma`, the pooled within-leaf covariance: doubling the points leaves the chain
    the same, bit for bit (the whitened points are), doubles the means, quadruples the
    covariances, and lowers the evidence and the RCDLL by the Jacobian, :math:`N d \log 2`
    (without it they would not move). Every component has the one covariance
    :math:`\sigma^2\Sigma`, positive definite, and predict mostly gives the fitted leaves."""
    X, _ = mb.datasets.make_tree_data(200, kind="nested", random_state=1)
    X = X @ np.array([[2.0, 0.5], [0.0, 0.4]])  # classes stretched alike: what tied is for
    one = mb.HierarchicalMixture(2, n_iter=20, random_state=0).fit(X)
    two = mb.HierarchicalMixture(2, n_iter=20, random_state=0).fit(2.0 * X)
    N, d = X.shape
    assert one.covariance_type == "tied"
    np.testing.assert_array_equal(one.labels_, two.labels_)
    np.testing.assert_array_equal(one.linkage_[:, :2], two.linkage_[:, :2])
    listed = mb.HierarchicalMixture(2, n_iter=20, random_state=0).fit(X.tolist())
    np.testing.assert_array_equal(listed.labels_, one.labels_)  # re-whitened at each regroup
    column = mb.HierarchicalMixture(2, n_iter=20, random_state=0).fit(X[:, 0])  # 1-D: a feature
    np.testing.assert_array_equal(
        column.labels_, mb.HierarchicalMixture(2, n_iter=20, random_state=0).fit(X[:, :1]).labels_)
    assert two.log_evidence_ == pytest.approx(one.log_evidence_ - N * d * np.log(2), rel=1e-12)
    assert two.best_rcdll_ == pytest.approx(one.best_rcdll_ - N * d * np.log(2), rel=1e-12)
    np.testing.assert_allclose(two.means_, 2.0 * one.means_, rtol=1e-12)
    np.testing.assert_allclose(two.covariances_, 4.0 * one.covariances_, rtol=1e-12)
    # sigma^2 Sigma, with Sigma the whitening's (A A^T)^{-1}: doubling X cannot see a dropped
    # sigma^2 (it is the same number in whitened units)
    A = one.whitening_
    np.testing.assert_allclose(one.covariances_[0], one.observation_variance_
                               * np.linalg.inv(A @ A.T), rtol=1e-10)
    np.testing.assert_allclose(one.precisions_[0] @ one.covariances_[0], np.eye(d), atol=1e-10)
    K = one.n_components_
    assert one.covariances_.shape == (K, d, d)
    assert np.all(one.covariances_ == one.covariances_[0])
    assert np.all(np.linalg.eigvalsh(one.covariances_[0]) > 0)
    np.testing.assert_allclose(one.precisions_[0] @ one.covariances_[0], np.eye(d), atol=1e-10)
    np.testing.assert_allclose(one.covariance_matrix(0), one.covariances_[0])
    assert np.mean(one.predict(X) == one.labels_) > 0.9
    # the means are in the points' units: a point is about one spread from its nearest mean
    # (the points' centre is 8 spreads from the origin, where the whitened means lie)
    spread = np.sqrt(np.trace(one.covariances_[0]) / d)
    nearest = np.min(np.linalg.norm(X[:, None, :] - one.means_[None], axis=2), axis=1)
    assert np.median(nearest) < spread < 0.2 * np.linalg.norm(X.mean(axis=0))


def test_whitening_maps_the_covariance_to_the_identity():
    """:class:`~mixbayes.families.gaussian.Whitening`: A^T Sigma A = I, restore undoes apply,
    log |det A| = -log|Sigma| / 2; a constant column stays constant (its variance floored);
    the pooled within-cluster covariance is the scatter about each cluster's mean over n - k,
    shrunk towards its diagonal."""
    from mixbayes.families.gaussian import Whitening, pooled_within_covariance

    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 3)) @ np.array([[2.0, 0.3, 0.0], [0.0, 1.0, 0.5],
                                                  [0.0, 0.0, 0.2]])
    labels = np.repeat([0, 1], 25)
    residuals = X - np.where(labels[:, None] == 0, X[:25].mean(0), X[25:].mean(0))
    W = residuals.T @ residuals / 48
    np.testing.assert_allclose(pooled_within_covariance(X, labels, shrinkage=0.0), W)
    np.testing.assert_allclose(pooled_within_covariance(X, labels, shrinkage=0.25),
                               0.75 * W + 0.25 * np.diag(np.diag(W)))
    w = Whitening.of_covariance(X.mean(axis=0), W)
    np.testing.assert_allclose(w.transform.T @ W @ w.transform, np.eye(3), atol=1e-12)
    np.testing.assert_allclose(w.covariance, W)
    np.testing.assert_allclose(w.restore(w.apply(X)), X)
    assert w.log_det == pytest.approx(-0.5 * np.linalg.slogdet(W)[1])
    X[:, 2] = 1.0  # a constant column: no variance, floored, and still constant whitened
    w = Whitening.of_covariance(X.mean(axis=0), pooled_within_covariance(X, labels))
    assert np.all(np.isfinite(w.apply(X))) and np.ptp(w.apply(X) @ w.inverse[:, 2]) < 1e-9
    flat = Whitening.of_covariance(np.zeros(2), np.zeros((2, 2)))  # nothing varies: identity
    np.testing.assert_array_equal(flat.transform, np.eye(2))


def test_a_point_mass_column_keeps_half_its_variance_in_the_pooled_covariance():
    """A column holding one value in more than half its rows (a flag, zero-inflated counts)
    is raised to half its variance over all rows in the tied Sigma, its correlations with
    the others kept; one that varies inside no cluster gets that floor alone; continuous
    columns, a point mass already above its floor and a constant column are left as they
    were."""
    from mixbayes.families.gaussian import point_mass_columns, pooled_within_covariance

    rng = np.random.default_rng(3)
    labels = np.repeat([0, 1, 2], 40)
    X = rng.standard_normal((120, 4)) + 6.0 * labels[:, None] * [1, 0, 0, 0]
    X[:, 1] = np.where(labels == 2, 5.0, 0.0) + 0.3 * X[:, 0] * (rng.random(120) < 0.15)
    X[:, 2] = np.where(labels == 0, 1.0, 0.0)  # varies between clusters, never inside one
    X[:, 3] = 2.5  # constant
    np.testing.assert_array_equal(point_mass_columns(X), [False, True, True, True])
    plain = pooled_within_covariance(X, labels, point_mass_floor=0.0)
    floored = pooled_within_covariance(X, labels)
    floor = 0.5 * X.var(axis=0)
    assert plain[1, 1] < floor[1] and plain[2, 2] == 0.0
    scale = np.array([1.0, np.sqrt(floor[1] / plain[1, 1]), 1.0, 1.0])
    expected = plain * scale[:, None] * scale[None, :]
    expected[2, 2] = floor[2]
    np.testing.assert_allclose(floored, expected, rtol=1e-12)
    # the correlation of columns 0 and 1 is the plain one
    assert floored[0, 1] / np.sqrt(floored[0, 0] * floored[1, 1]) == pytest.approx(
        plain[0, 1] / np.sqrt(plain[0, 0] * plain[1, 1]))
    # above its floor a point-mass column keeps its entry; continuous data are untouched
    X[:, 1] = np.where(rng.random(120) < 0.6, 0.0, rng.standard_normal(120) * 3)
    assert point_mass_columns(X)[1]
    within = pooled_within_covariance(X, labels, point_mass_floor=0.0)
    assert within[1, 1] >= 0.5 * X[:, 1].var()  # unrelated to the clusters
    np.testing.assert_array_equal(pooled_within_covariance(X, labels)[1], within[1])
    Y = rng.standard_normal((60, 3))
    np.testing.assert_array_equal(pooled_within_covariance(Y, labels[:60]),
                                  pooled_within_covariance(Y, labels[:60],
                                                           point_mass_floor=0.0))


def test_the_point_mass_floor_leaves_other_columns_without_within_variance_alone():
    """A column constant inside every cluster but with no value in more than half its rows
    (three clusters of 40, values 0, 1, 2) is not a point mass: its pooled within variance
    stays 0 with the floor, as does every entry of its row; only a point-mass column
    (here 0 in two clusters, 1 in one) is raised to its floor."""
    from mixbayes.families.gaussian import point_mass_columns, pooled_within_covariance

    rng = np.random.default_rng(4)
    labels = np.repeat([0, 1, 2], 40)
    X = np.column_stack([rng.standard_normal(120), labels.astype(float),
                         (labels == 2).astype(float)])
    np.testing.assert_array_equal(point_mass_columns(X), [False, False, True])
    plain = pooled_within_covariance(X, labels, point_mass_floor=0.0)
    floored = pooled_within_covariance(X, labels)
    assert plain[1, 1] == 0.0 and plain[2, 2] == 0.0
    np.testing.assert_array_equal(floored[1], plain[1])
    np.testing.assert_array_equal(floored[:2, :2], plain[:2, :2])
    assert floored[2, 2] == pytest.approx(0.5 * X[:, 2].var(), rel=1e-12)


def test_point_mass_columns_need_more_than_half_the_rows():
    """``point_mass_columns``: one value in more than half the rows marks a column; exactly
    half does not, nor 4 of 10 or of 9 (the median is then another value); with an even
    count either middle value is the point mass's, and no rows mark no column."""
    from mixbayes.families.gaussian import point_mass_columns

    rows = np.arange(10)
    X = np.column_stack([np.where(rows < m, 0.0, rows + 1.0) for m in (4, 5, 6, 10)])
    np.testing.assert_array_equal(point_mass_columns(X), [False, False, True, True])
    np.testing.assert_array_equal(point_mass_columns(X[:9]), [False, True, True, True])
    np.testing.assert_array_equal(point_mass_columns(-X[::-1]), [False, False, True, True])
    np.testing.assert_array_equal(point_mass_columns(np.empty((0, 3))), [False] * 3)


def test_rare_flag_columns_do_not_take_over_the_tied_tree():
    """Two columns that are 0 in 96% of the rows (an exponential value elsewhere, unrelated to
    the clusters) beside a nested hierarchy: constant inside most leaves, their pooled
    within variance is near 0 and the tied whitening stretched them into the tree's top
    splits (dendrogram purity 0.922 over data seeds 0-5 against 0.953 on the hierarchy's
    columns alone). With the point-mass floor the tree is the hierarchy's (0.952)."""
    purity, alone = [], []
    for seed in range(6):
        X, truth = mb.datasets.make_tree_data(300, 2, n_features=3, branching=(3, 2),
                                              parent_spread=8.0, leaf_spread=3.0,
                                              random_state=seed)
        rng = np.random.default_rng(seed)
        flags = (rng.random((300, 2)) < 0.04) * rng.exponential(1.0, (300, 2))
        for points, scores in ((np.hstack([X, flags]), purity), (X, alone)):
            model = mb.HierarchicalMixture(random_state=0).fit(points)
            scores.append(mb.metrics.dendrogram_purity(model.linkage_, truth.labels))
    assert np.mean(purity) >= np.mean(alone) - 0.01, (purity, alone)


def test_full_covariances_recover_elongated_classes():
    """Round components of one shared variance tile every elongated class with many leaves;
    full covariances give each class one leaf (leaf ARI measured on this seed, 40 sweeps:
    known 0.20 with 23 leaves, full 0.98 with 3), and the fitted covariances are elongated.
    (The known model's chain is bit for bit what it was before covariances came: checked
    once against the code before them, labels, means, RCDLL trace and predictions at C = 0
    and 1; the tests of test_exactness.py run it unchanged.)"""
    X, y = _elongated_classes()
    known = mb.HierarchicalMixture(n_iter=40, covariance_type="known", random_state=0).fit(X)
    full = mb.HierarchicalMixture(n_iter=40, covariance_type="full", random_state=0).fit(X)
    assert mb.metrics.ari(y, full.labels_) > 0.9 > 0.5 > mb.metrics.ari(y, known.labels_)
    assert full.covariances_.shape == (full.n_components_, 2, 2)
    np.testing.assert_allclose(full.covariances_, np.linalg.inv(full.precisions_))
    eigen = np.linalg.eigvalsh(full.covariances_)
    assert np.all(eigen[:, -1] > 4 * eigen[:, 0])  # every component is elongated (5.8-17)
    assert np.mean(full.predict(X) == full.labels_) > 0.95
    assert known.covariances_ == pytest.approx(np.full(known.n_components_,
                                                       known.observation_variance_))


def test_burn_in_regroups_the_leaves_by_wards_merges():
    """With the path moves, which never move a leaf to another parent, the Ward start's
    upper levels are rebuilt during burn-in (``REGROUP_AT``) by Ward's merges of the chain's
    own leaves: on the Wisconsin breast-cancer table (standardised, "known"; 0.870 at seed 0
    with the tied default) the full
    dendrogram's purity at chain seeds 0-3 is 0.875, 0.825, 0.875, 0.872 (0.876, 0.824, 0.874,
    0.893 with BHC's merges above the leaves, before the Bayes-factor ones), against
    0.823-0.826 without the regroups (genie's 0.845 is the best peer of ``bench/bench_tree.py``). Seed 0
    is asserted above 0.86."""
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    fitted = mb.HierarchicalMixture(covariance_type="known", random_state=0).fit(X)
    assert mb.metrics.dendrogram_purity(fitted.linkage_, y) > 0.86
    assert np.unique(fitted.paths_[:, 0]).size < np.unique(fitted.labels_).size


def test_regroup_cuts_the_leaves_merges_at_their_gaps():
    """``regroup``: twelve leaves of 20 points at the centres of a 2 x 2 x 3 hierarchy (parents
    40 apart, their two children 12 apart, leaves 3 apart) and one leaf of 2 points. The
    equal-branching cut gives round(13^(1/3)) = 2 and round(13^(2/3)) = 6 groups; the gaps
    give the truth's 2 and 4, the small leaf joining its nearest leaf's groups, and every
    leaf kept as it was."""
    from mixbayes.tree._start import regroup

    parents = np.array([[0.0, 0.0], [40.0, 0.0]])
    children = np.array([[0.0, -6.0], [0.0, 6.0]])
    leaves = np.array([[-3.0, 0.0], [0.0, 0.0], [3.0, 0.0]])
    centres = np.array([p + c + leaf for p in parents for c in children for leaf in leaves])
    truth = np.array([[i // 6, i // 3] for i in range(12)])
    X = np.repeat(centres, 20, axis=0) + 0.1 * np.random.default_rng(0).standard_normal(
        (240, 2))
    X = np.vstack([X, centres[4] + [0.5, 0.5], centres[4] + [0.6, 0.4]])
    labels = np.r_[np.repeat(np.arange(12), 20), 12, 12]
    for cut, expected in (("branching", (2, 6)), ("gaps", (2, 4))):
        paths = regroup(X, labels, 3, cut=cut)
        np.testing.assert_array_equal(paths[:, -1], labels)
        assert tuple(np.unique(paths[:, level]).size for level in (0, 1)) == expected, cut
    for level in (0, 1):  # the gaps' groups are the truth's, the small leaf with leaf 4
        assert mb.metrics.ari(truth[labels[:-2], level], paths[:-2, level]) == 1.0
        assert paths[-1, level] == paths[4 * 20, level]
    # four far-apart clumps of four leaves: the largest gap is at 4 groups for both levels'
    # ranges, and the level above still gets fewer groups than the one below
    clumps = np.array([[0.0, 0.0], [50.0, 0.0], [0.0, 50.0], [50.0, 50.0]])
    centres = np.array([c + leaf for c in clumps for leaf in
                        [[-3.0, 0.0], [3.0, 0.0], [0.0, -3.0], [0.0, 3.0]]])
    X = np.repeat(centres, 10, axis=0) + 0.1 * np.random.default_rng(1).standard_normal(
        (160, 2))
    paths = regroup(X, np.repeat(np.arange(16), 10), 3, cut="gaps")
    assert np.unique(paths[:, 1]).size == 4 and np.unique(paths[:, 0]).size < 4


def test_regroup_keeps_a_leaf_of_exactly_the_small_share():
    """``regroup(cut="gaps")`` on two clumps of two leaves (20 apart) and a far leaf (100
    away): a leaf of at least ``SMALL_LEAF`` (2 %) of the points, or of 2 points, is kept in
    the merges and is its own group (2 of 98 points, where the floor is 2; 4 of 196, 2.04 %);
    a smaller one (3 of 195) follows the nearest kept leaf's group."""
    from mixbayes.tree import _start
    from mixbayes.tree._start import regroup

    assert _start.SMALL_LEAF == 0.02
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0], [1.0, 0.0], [20.0, 0.0], [21.0, 0.0], [10.0, 100.0]])
    for big, small, own in ((24, 2, True), (48, 4, True), (48, 3, False)):
        sizes = [big] * 4 + [small]
        leaves = np.repeat(np.arange(5), sizes)
        X = centres[leaves] + 0.1 * rng.standard_normal((leaves.size, 2))
        top = regroup(X, leaves, 2, cut="gaps")[:, 0]
        first = [top[leaves == leaf][0] for leaf in range(5)]
        assert first[0] == first[1] != first[2] == first[3], (big, small, first)
        if own:
            assert np.unique(top).size == 3 and first[4] not in first[:4], (big, small, first)
        else:
            assert np.unique(top).size == 2 and first[4] == first[0], (big, small, first)


def test_regroup_with_one_large_leaf_merges_all_the_leaves():
    """``regroup(cut="gaps")`` with a single leaf of at least ``SMALL_LEAF`` of the points (95
    of 100) and five one-point leaves in two far clumps: with fewer than two large leaves
    every leaf takes part in the merges, so the level above has the three groups (the large
    leaf, each clump), not one."""
    from mixbayes.tree._start import regroup

    centres = np.array([[0.0, 0.0], [50.0, 0.0], [51.0, 0.0], [0.0, 50.0], [0.0, 51.0],
                        [1.0, 50.0]])
    leaves = np.repeat(np.arange(6), [95, 1, 1, 1, 1, 1])
    X = centres[leaves] + 0.1 * np.random.default_rng(0).standard_normal((100, 2))
    paths = regroup(X, leaves, 2, cut="gaps")
    np.testing.assert_array_equal(paths[:, 1], leaves)
    top = [paths[leaves == leaf][0, 0] for leaf in range(6)]
    assert top[1] == top[2] and top[3] == top[4] == top[5], top
    assert len({top[0], top[1], top[3]}) == 3, top


def test_log_fit_kernel_skips_only_the_components_of_no_weight():
    r"""The compiled ``_log_fit`` (:math:`\log p(x_n \mid` leaf), the component summed out)
    skips the exponentials of components with -inf weight in the leaf: it equals the plain
    log-sum-exp over the leaf's K components and its new-component term
    (``logrest + log_pred``), also where the best-fitting component has no weight there or
    only the new-component term has any, ignores columns past K, and is -inf where nothing
    has weight."""
    from scipy.special import logsumexp

    from mixbayes.tree._kernels import _log_fit

    rng = np.random.default_rng(0)
    K = 6
    weights = np.log(rng.dirichlet(np.ones(K + 1), size=3))
    logw = np.hstack([weights[:, :K], np.zeros((3, 2))])  # two spare columns past K
    logrest = weights[:, K].copy()
    logw[0, [1, 4]] = -np.inf
    logw[1, :K] = -np.inf  # leaf 1: only a new component
    loglik = np.hstack([rng.normal(-5.0, 3.0, (4, K)), np.full((4, 2), 100.0)])
    loglik[2, 1] = 50.0  # point 2 fits best a component leaf 0 has no weight on
    log_pred = rng.normal(-6.0, 2.0, 4)
    for n in range(4):
        for leaf in range(3):
            expected = logsumexp(np.r_[logw[leaf, :K] + loglik[n, :K],
                                       logrest[leaf] + log_pred[n]])
            assert _log_fit(n, leaf, K, logw, logrest, loglik, log_pred) == pytest.approx(
                expected, rel=1e-12, abs=1e-12), (n, leaf)
    assert _log_fit(0, 1, K, logw, logrest, loglik, log_pred) == pytest.approx(
        logrest[1] + log_pred[0], rel=1e-12)
    logrest[1] = -np.inf
    assert _log_fit(0, 1, K, logw, logrest, loglik, log_pred) == -np.inf


def test_the_tree_describes_its_shape_and_a_lone_leaf_as_such():
    """``Tree.describe`` counts the simplified tree's top-level branches and leaves; a fit
    whose every point shares one path is one leaf, not "a tree of 0 top-level branches"
    (the CLI's summary, inspect and plot_tree's title print it)."""
    X, _ = mb.datasets.make_tree_data(90, kind="nested", random_state=0)
    tree = mb.HierarchicalMixture(n_iter=6).fit(X).tree_
    top = int(np.sum(tree.parent == 0))
    leaves = int(np.sum(~np.isin(np.arange(tree.n_nodes), tree.parent)))
    assert top > 1 and leaves > top
    assert tree.describe() == f"a tree of {top} top-level branches, {leaves} leaves"
    lone = mb.HierarchicalMixture().fit(np.array([[1.0, 2.0], [1.1, 2.1], [0.9, 1.9]])).tree_
    assert lone.n_nodes == 1 and lone.describe() == "one leaf (no branches)"


@pytest.mark.parametrize("covariance_type", ["tied", "known", "full", "diag", "spherical"])
def test_a_constant_column_leaves_the_tree_as_it_was(covariance_type):
    """Two blobs beside a column of 7s (a new user's tryout): the column tells nothing apart, yet
    counted in d it moved the start's BIC cut and shrank the within variance and the data's
    scale (``families.gaussian.data_scale`` averaged a 0 in), and the tree went from 2 leaves to
    5-8 (tied, known) or 1 (diag). Now the fit with the column is the fit without it, up to a
    point or two (seeds 0-1, 40 sweeps: leaf ARI 0.81-1.0 between the two, 2 or 3 leaves)."""
    rng = np.random.default_rng(0)
    X = np.column_stack([np.r_[rng.normal(0, 1, 20), rng.normal(6, 1, 20)],
                         rng.normal(0, 1, 40)])
    with_constant = np.column_stack([X, np.full(40, 7.0)])
    for seed in (0, 1):
        plain, padded = (mb.HierarchicalMixture(covariance_type=covariance_type, n_iter=40,
                                                random_state=seed).fit(points)
                         for points in (X, with_constant))
        assert np.unique(padded.labels_).size <= 3
        assert mb.metrics.ari(plain.labels_, padded.labels_) >= 0.8, seed
        assert padded.means_.shape[1] == 3  # the means keep every column


def test_a_tied_regroup_groups_the_whitened_points(monkeypatch):
    """At every burn-in regroup of a tied fit, Sigma is re-estimated from the chain's leaves
    and Ward's merges of the leaves run on the points whitened by it (the sampler's space),
    not on the raw points: what ``regroup`` is given is the whitening of X by the pooled
    within-leaf covariance of the leaves it is given, recomputed here."""
    from mixbayes.families.gaussian import Whitening, pooled_within_covariance
    from mixbayes.tree import model as tree_model

    seen = []
    real = tree_model.regroup

    def spy(points, leaves, depth, *args, **kwargs):
        seen.append((np.array(points), np.array(leaves)))
        return real(points, leaves, depth, *args, **kwargs)

    monkeypatch.setattr(tree_model, "regroup", spy)
    X, _ = mb.datasets.make_tree_data(80, kind="nested", random_state=1)
    X = X @ np.array([[2.0, 0.5], [0.0, 0.4]])
    mb.HierarchicalMixture(2, n_iter=10, burn_in=5, random_state=0).fit(X)
    assert len(seen) == 4  # after sweeps 1, 2, 3 and 4 of 5
    for points, leaves in seen:
        expected = Whitening.of_covariance(X.mean(axis=0),
                                           pooled_within_covariance(X, leaves)).apply(X)
        np.testing.assert_allclose(points, expected, rtol=1e-9, atol=1e-9)
