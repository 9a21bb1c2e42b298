"""Clustering metrics against hand-computed values."""

import re
from itertools import combinations

import numpy as np
import pytest

from mixbayes import metrics


def test_perfect_and_permuted_labels():
    truth = ["a", "a", "b", "b", "c", "c"]
    pred = [2, 2, 0, 0, 1, 1]
    for fn in (metrics.nmi, metrics.ari, metrics.purity, metrics.matched_accuracy):
        assert fn(truth, pred) == pytest.approx(1.0)


def test_hand_computed_values():
    truth = [0, 0, 0, 1, 1, 1]
    pred = [0, 0, 1, 1, 1, 1]
    # contingency [[2, 1], [0, 3]]: purity = (2 + 3) / 6, matched accuracy the same
    assert metrics.purity(truth, pred) == pytest.approx(5 / 6)
    assert metrics.matched_accuracy(truth, pred) == pytest.approx(5 / 6)
    # NMI by hand: H(U) = log 2, H(V) = H(2/6, 4/6), I from the contingency table
    p = np.array([[2, 1], [0, 3]]) / 6
    pu, pv = p.sum(1), p.sum(0)
    mi = sum(p[i, j] * np.log(p[i, j] / (pu[i] * pv[j])) for i in range(2) for j in range(2) if p[i, j] > 0)
    hu, hv = -np.sum(pu * np.log(pu)), -np.sum(pv * np.log(pv))
    assert metrics.nmi(truth, pred) == pytest.approx(mi / ((hu + hv) / 2))
    assert metrics.nmi(truth, pred, "geometric") == pytest.approx(mi / np.sqrt(hu * hv))


def test_ari_by_pair_counting():
    """ARI from its definition over the 28 pairs of 8 points: a = pairs together in both, the
    expected index sum_i C(a_i, 2) sum_j C(b_j, 2) / C(n, 2) from the margins, the maximum their
    mean (Hubert & Arabie): (a - expected) / (max - expected)."""
    truth = [0, 0, 0, 1, 1, 1, 2, 2]
    pred = [0, 0, 1, 1, 1, 2, 2, 2]
    pairs = list(combinations(range(8), 2))
    both = sum(truth[i] == truth[j] and pred[i] == pred[j] for i, j in pairs)
    same_true = sum(truth[i] == truth[j] for i, j in pairs)
    same_pred = sum(pred[i] == pred[j] for i, j in pairs)
    expected = same_true * same_pred / len(pairs)
    value = (both - expected) / ((same_true + same_pred) / 2 - expected)
    assert value == pytest.approx(5 / 21)  # (3 - 49/28) / (7 - 49/28)
    assert metrics.ari(truth, pred) == pytest.approx(value, rel=1e-12)
    assert metrics.clustering_report(truth, pred)["ari"] == pytest.approx(value, rel=1e-12)


def test_matched_accuracy_is_one_to_one():
    # purity lets two clusters map to one class; matched accuracy does not
    truth = [0, 0, 1, 1]
    pred = [0, 1, 2, 3]
    assert metrics.purity(truth, pred) == 1.0
    assert metrics.matched_accuracy(truth, pred) == 0.5


def test_length_mismatch():
    with pytest.raises(ValueError, match="same length; got 3 and 2"):
        metrics.nmi([0, 1, 1], [0, 1])


def test_report_keys():
    report = metrics.clustering_report([0, 1, 1, 0], [1, 0, 0, 1])
    assert set(report) == {"nmi", "nmi_geometric", "ari", "purity", "accuracy"}
    assert all(v == pytest.approx(1.0) for v in report.values())


# ---------------------------------------------------------------------- trees
def _brute_dendrogram_purity(paths, labels):
    """Heller & Ghahramani's definition pair by pair: for two points of one class, the share
    of that class under their lowest common ancestor (the longest common path prefix)."""
    paths, labels = np.atleast_2d(np.asarray(paths).T).T, np.asarray(labels)
    scores = []
    for i in range(len(labels)):
        for j in range(i + 1, len(labels)):
            if labels[i] != labels[j]:
                continue
            depth = 0
            while depth < paths.shape[1] and paths[i, depth] == paths[j, depth]:
                depth += 1
            under = np.all(paths[:, :depth] == paths[i, :depth], axis=1)
            scores.append(np.mean(labels[under] == labels[i]))
    return np.mean(scores)


def _random_tree(rng, n, depth, branching):
    """Paths with child ids numbered within each parent (0, 1, ...), as a sampler might."""
    return rng.integers(0, branching, size=(n, depth))


def test_dendrogram_purity_matches_the_pairwise_definition_on_random_trees():
    rng = np.random.default_rng(0)
    for case in range(60):
        n, depth = int(rng.integers(2, 25)), int(rng.integers(1, 4))
        paths = _random_tree(rng, n, depth, int(rng.integers(1, 4)))
        labels = rng.choice(["a", "b", "c"][: int(rng.integers(1, 4))], size=n)
        if len(set(labels)) == n:
            continue
        assert metrics.dendrogram_purity(paths, labels) == pytest.approx(
            _brute_dendrogram_purity(paths, labels), abs=1e-12), case


def test_dendrogram_purity_hand_computed_values():
    # Heller & Ghahramani's binary trees: ((a1, b1), a2) -> the one a-pair meets at the root,
    # 2 of whose 3 points are a's; ((a1, b1), (a2, b2)) -> both pairs meet at the root, 1/2
    assert metrics.dendrogram_purity([[0, 0], [0, 1], [1, 2]], ["a", "b", "a"]) == (
        pytest.approx(2 / 3))
    assert metrics.dendrogram_purity([[0, 0], [0, 1], [1, 2], [1, 3]], list("abab")) == 0.5
    # every class its own subtree: 1, whatever happens below
    perfect = [[0, 0], [0, 1], [0, 1], [1, 0], [1, 2]]
    assert metrics.dendrogram_purity(perfect, [7, 7, 7, 3, 3]) == 1.0
    # a flat clustering is a tree of depth 1: pairs across clusters meet at the root
    # (a-pairs: (0,1) in {a,a,b} 2/3, (0,3), (1,3) at the root 3/5; b-pair (2,4) at root 2/5)
    assert metrics.dendrogram_purity([0, 0, 0, 1, 1], list("aabab")) == pytest.approx(
        (2 / 3 + 2 * 3 / 5 + 2 / 5) / 4)


def test_dendrogram_purity_reads_nodes_as_path_prefixes():
    per_parent = np.array([[0, 0], [0, 1], [1, 0], [1, 1], [1, 1], [2, 0]])
    unique_ids = per_parent[:, 0:1] * 10 + per_parent  # the same tree, ids unique overall
    labels = [1, 1, 2, 2, 1, 2]
    expected = _brute_dendrogram_purity(unique_ids, labels)
    for paths in (per_parent, unique_ids, unique_ids.astype(float), unique_ids.astype(np.int32)):
        assert metrics.dendrogram_purity(paths, labels) == pytest.approx(expected)


def test_levelwise_scores_against_a_known_hierarchy():
    rng = np.random.default_rng(1)
    top = np.repeat([0, 1, 2], 20)
    truth = np.column_stack([top, rng.integers(0, 2, size=60)])  # ids repeat across parents
    assert np.allclose(metrics.levelwise_scores(truth, truth), 1.0)
    tree = np.column_stack([top, rng.integers(0, 2, size=60)])  # right top, random below
    nmi = metrics.levelwise_scores(tree, truth)
    assert nmi[0] == pytest.approx(1.0) and nmi[1] < 0.9  # the top level is shared
    assert nmi[1] == pytest.approx(metrics.nmi(top * 2 + truth[:, 1], top * 2 + tree[:, 1]))
    ari = metrics.levelwise_scores(tree, [top.astype(str), top * 2 + truth[:, 1]], "ari")
    assert ari[0] == 1.0 and ari[1] == pytest.approx(
        metrics.ari(top * 2 + truth[:, 1], top * 2 + tree[:, 1]))
    purity = metrics.levelwise_scores(tree, truth, metrics.purity)
    assert purity[0] == 1.0 and 0.4 < purity[1] < 1.0


@pytest.mark.parametrize("call,message", [
    (lambda: metrics.dendrogram_purity([0, 1, 1], [1, 1]), "got 3 points and 2 labels"),
    (lambda: metrics.dendrogram_purity([], []), "paths is empty"),
    (lambda: metrics.dendrogram_purity(np.zeros((3, 0)), [1, 1, 2]), "paths is empty"),
    (lambda: metrics.dendrogram_purity([[0, 0.5], [0, 1]], [1, 1]),
     "integer node ids; got 0.5 for point 0 at level 2"),
    (lambda: metrics.dendrogram_purity([0, np.nan], [1, 1]), "integer node ids"),
    (lambda: metrics.dendrogram_purity(["a", "b"], [1, 1]), "integer node ids"),
    (lambda: metrics.dendrogram_purity(np.zeros((2, 2, 2)), [1, 1]), "1-D or 2-D"),
    (lambda: metrics.dendrogram_purity([0, 1], [1, 2]), "no pair of points shares a class"),
    (lambda: metrics.dendrogram_purity([0, 1], [[1, 2]]), "labels_true must be 1-D"),
    (lambda: metrics.levelwise_scores([[0, 1]] * 3, [[0, 1]] * 2), "got 3 and 2"),
    (lambda: metrics.levelwise_scores([[0, 1]] * 3, [0, 1, 1]), "2 levels but true_levels has 1"),
    (lambda: metrics.levelwise_scores([0, 1], [0, 1], "vi"), "measure must be"),
])
def test_tree_metrics_refuse_bad_input_with_a_clear_message(call, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        call()


# ---------------------------------------------------------------------- topics
def test_matched_topic_mse_by_hand():
    """Estimated topics in a cyclic order, one topic off by 0.1 in two entries and one by 0.2:
    the matching undoes the order (estimated[order[k]] is true topic k), and the MSE is the
    mean over all K x p = 9 entries, (2 * 0.01 + 2 * 0.04) / 9."""
    truth = np.array([[0.5, 0.3, 0.2], [0.1, 0.1, 0.8], [0.2, 0.6, 0.2]])
    estimated = np.array([[0.1, 0.3, 0.6],    # true topic 1, moved by (0, 0.2, -0.2)
                          [0.2, 0.6, 0.2],    # true topic 2
                          [0.6, 0.3, 0.1]])   # true topic 0, moved by (0.1, 0, -0.1)
    order = metrics.match_topics(truth, estimated)
    np.testing.assert_array_equal(order, [2, 0, 1])
    assert metrics.matched_topic_mse(truth, estimated) == pytest.approx(
        (2 * 0.01 + 2 * 0.04) / 9, rel=1e-12)
