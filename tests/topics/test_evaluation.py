"""Document completion: the split, and the held-out likelihood against hand-computed values."""

import numpy as np
import pytest

from mixbayes.topics import evaluation


def _topic_data(seed=0):
    import mixbayes as mb

    corpus, truth = mb.datasets.make_topic_corpus(200, 50, 3, 80, random_state=seed)
    return corpus.counts, truth


def test_completion_split_partitions_documents_and_words():
    X, _ = _topic_data()
    train, observed, held_out = evaluation.completion_split(X, 0.25, random_state=3)
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
    _, observed, held_out = evaluation.completion_split(X, 0.2, random_state=1)
    topic = np.asarray(X.sum(axis=0), dtype=float) + 1.0
    topic /= topic.sum()
    h = held_out.toarray()
    expected = (h * np.log(topic)).sum() / h.sum()
    assert evaluation.completion_log_likelihood(topic, observed, held_out) == pytest.approx(expected)


def test_completion_log_likelihood_prefers_the_true_topics():
    X, truth = _topic_data(seed=2)
    _, observed, held_out = evaluation.completion_split(X, 0.3, random_state=2)
    true_score = evaluation.completion_log_likelihood(truth.topics, observed, held_out)
    rng = np.random.default_rng(0)
    blurred = 0.5 * truth.topics + 0.5 * rng.dirichlet(np.ones(50), size=3)
    assert true_score > evaluation.completion_log_likelihood(blurred, observed, held_out) + 0.05
    # the weights come from the observed half: hiding it (uniform weights) scores worse
    empty = observed.copy()
    empty.data[:] = 0
    empty.eliminate_zeros()
    assert true_score > evaluation.completion_log_likelihood(truth.topics, empty, held_out) + 0.05


def test_completion_log_likelihood_impossible_words_and_bad_input():
    X, truth = _topic_data()
    _, observed, held_out = evaluation.completion_split(X, 0.2, random_state=0)
    topics = truth.topics.copy()
    word = held_out.indices[0]
    topics[:, word] = 0.0
    assert evaluation.completion_log_likelihood(topics, observed, held_out) == -np.inf
    # the same word only among the observed ones is ignored, not fatal
    held = held_out.tolil()
    held[:, word] = 0
    assert np.isfinite(evaluation.completion_log_likelihood(topics, observed, held.tocsr()))
    with pytest.raises(ValueError, match="topics must have shape"):
        evaluation.completion_log_likelihood(truth.topics[:, :10], observed, held_out)
    with pytest.raises(ValueError, match="same shape"):
        evaluation.completion_log_likelihood(truth.topics, observed, held_out[:5])
    with pytest.raises(ValueError, match="held_out_fraction"):
        evaluation.completion_split(X, 1.5)
