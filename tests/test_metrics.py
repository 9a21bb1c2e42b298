"""Clustering metrics against hand-computed values."""

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


# ---------------------------------------------------------------- document completion
def _topic_data(seed=0):
    import mixbayes as mb

    corpus, truth = mb.datasets.make_topic_corpus(200, 50, 3, 80, random_state=seed)
    return corpus.counts, truth


def test_completion_split_partitions_documents_and_words():
    X, _ = _topic_data()
    train, observed, held_out = metrics.completion_split(X, 0.25, random_state=3)
    assert train.shape == (150, 50) and observed.shape == held_out.shape == (50, 50)
    assert observed.min() >= 0 and held_out.min() >= 0
    # every left-out document is split into two halves that add back to one row of X
    rows = {tuple(X[i].toarray().ravel()) for i in range(X.shape[0])}
    left_out = (observed + held_out).toarray()
    assert all(tuple(row) in rows for row in left_out)
    assert X.sum() == train.sum() + left_out.sum()
    # binomial thinning at 1/2: about half the left-out words are observed
    assert abs(observed.sum() / left_out.sum() - 0.5) < 0.02


def test_completion_log_likelihood_with_one_topic_is_its_plain_average():
    X, _ = _topic_data()
    _, observed, held_out = metrics.completion_split(X, 0.2, random_state=1)
    topic = np.asarray(X.sum(axis=0), dtype=float) + 1.0
    topic /= topic.sum()
    h = held_out.toarray()
    expected = (h * np.log(topic)).sum() / h.sum()
    assert metrics.completion_log_likelihood(topic, observed, held_out) == pytest.approx(expected)


def test_completion_log_likelihood_prefers_the_true_topics():
    X, truth = _topic_data(seed=2)
    _, observed, held_out = metrics.completion_split(X, 0.3, random_state=2)
    true_score = metrics.completion_log_likelihood(truth.topics, observed, held_out)
    rng = np.random.default_rng(0)
    blurred = 0.5 * truth.topics + 0.5 * rng.dirichlet(np.ones(50), size=3)
    assert true_score > metrics.completion_log_likelihood(blurred, observed, held_out) + 0.05
    # the weights come from the observed half: hiding it (uniform weights) scores worse
    empty = observed.copy()
    empty.data[:] = 0
    empty.eliminate_zeros()
    assert true_score > metrics.completion_log_likelihood(truth.topics, empty, held_out) + 0.05


def test_completion_log_likelihood_impossible_words_and_bad_input():
    X, truth = _topic_data()
    _, observed, held_out = metrics.completion_split(X, 0.2, random_state=0)
    topics = truth.topics.copy()
    word = held_out.indices[0]
    topics[:, word] = 0.0
    assert metrics.completion_log_likelihood(topics, observed, held_out) == -np.inf
    # the same word only among the observed ones is ignored, not fatal
    held = held_out.tolil()
    held[:, word] = 0
    assert np.isfinite(metrics.completion_log_likelihood(topics, observed, held.tocsr()))
    with pytest.raises(ValueError, match="topics must have shape"):
        metrics.completion_log_likelihood(truth.topics[:, :10], observed, held_out)
    with pytest.raises(ValueError, match="same shape"):
        metrics.completion_log_likelihood(truth.topics, observed, held_out[:5])
    with pytest.raises(ValueError, match="held_out_fraction"):
        metrics.completion_split(X, 1.5)
