"""Topic coherence: hand-computed values, and gensim's CoherenceModel on the same corpus."""

import numpy as np
import pytest
import scipy.sparse as sp

import mixbayes as mb
from mixbayes.metrics import EPSILON, coherence

# four documents over the terms a, b, c, d
TOY = sp.csr_matrix(np.array([[2, 1, 0, 0],
                              [1, 0, 1, 0],
                              [0, 3, 1, 0],
                              [1, 1, 1, 0]]))
VOCAB = ["a", "b", "c", "d"]


def test_umass_by_hand_on_four_documents():
    # D(a) = 3, D(b) = 3, D(c) = 3, D(a,b) = 2, D(a,c) = 2, D(b,c) = 2; N = 4.
    # Pairs (w_i | w_j), i > j: (b|a), (c|a), (c|b): each log((2/4 + eps) / (3/4)).
    result = coherence([["a", "b", "c"], ["c", "a"]], TOY, vocabulary=VOCAB)
    pair = np.log((2 / 4 + EPSILON) / (3 / 4))
    assert result.measure == "umass"
    np.testing.assert_allclose(result.per_topic, [pair, pair], rtol=1e-12)
    assert result.mean == pytest.approx(pair)
    assert result.top_words == [["a", "b", "c"], ["c", "a"]]
    # the order matters: a word is conditioned on the better-ranked one
    only_a_d = sp.csr_matrix(np.array([[1, 0, 0, 1], [1, 0, 0, 0]]))
    forward = coherence([[0, 3]], only_a_d, n=2).per_topic[0]   # d given a: log((1/2)/(2/2))
    backward = coherence([[3, 0]], only_a_d, n=2).per_topic[0]  # a given d: log((1/2)/(1/2))
    assert forward == pytest.approx(np.log(0.5 + EPSILON))
    assert backward == pytest.approx(np.log(1 + 2 * EPSILON))


def test_npmi_and_c_v_by_hand_on_four_documents():
    p_ab, p_a = 2 / 4, 3 / 4
    npmi = np.log((p_ab + EPSILON) / p_a**2) / -np.log(p_ab + EPSILON)
    result = coherence([["a", "b"]], TOY, "npmi", vocabulary=VOCAB)
    assert result.per_topic[0] == pytest.approx(npmi, rel=1e-12)
    # c_v on two words of equal frequency: both context vectors are (self, npmi) permuted,
    # the topic's is their sum, so each cosine is the same
    self_npmi = np.log((p_a + EPSILON) / p_a**2) / -np.log(p_a + EPSILON)
    v = np.array([self_npmi, npmi])
    total = v + v[::-1]
    expected = v @ total / (np.linalg.norm(v) * np.linalg.norm(total))
    assert coherence([["a", "b"]], TOY, "c_v", vocabulary=VOCAB).per_topic[0] == pytest.approx(
        expected, rel=1e-12)


def test_words_columns_corpus_and_edge_cases():
    corpus = mb.Corpus(TOY, vocabulary=VOCAB)
    by_words = coherence([["a", "b", "c"]], corpus, "npmi")  # the Corpus brings its vocabulary
    by_columns = coherence([[0, 1, 2]], TOY, "c_npmi")      # gensim's name, column indices
    assert by_words.per_topic[0] == by_columns.per_topic[0] and by_columns.measure == "npmi"
    assert by_columns.top_words == [[0, 1, 2]]
    # n keeps the first n words of each list (gensim's topn)
    assert coherence([["a", "b", "c", "d"]], corpus, n=3).top_words == [["a", "b", "c"]]
    # one word has no pair: NaN, left out of the mean
    result = coherence([["a"], ["a", "b"]], corpus)
    assert np.isnan(result.per_topic[0]) and result.mean == result.per_topic[1]
    assert result.to_dict()["per_topic"][0] is None
    # "d" occurs in no document: a pair conditioned on it scores 0 in umass (gensim's rule),
    # any pair with it 0 in npmi and c_v (where gensim divides by zero)
    assert coherence([["d", "a"]], corpus).per_topic[0] == 0.0
    assert coherence([["a", "d"]], corpus).per_topic[0] == pytest.approx(np.log(EPSILON / 0.75))
    assert coherence([["a", "d"]], corpus, "npmi").per_topic[0] == 0.0


@pytest.mark.parametrize("call, message", [
    (lambda: coherence([["a", "b"]], TOY, "cv", vocabulary=VOCAB), "measure must be one of"),
    (lambda: coherence([["a", "zebra"]], TOY, vocabulary=VOCAB), "'zebra', which is not in"),
    (lambda: coherence([["a", "b"]], TOY), "give vocabulary"),
    (lambda: coherence([[0, 7]], TOY), "column 7, outside"),
    (lambda: coherence([["a", "b"]], TOY, vocabulary=VOCAB[:3]), "one entry per column"),
    (lambda: coherence("a b", TOY), "non-empty list of word lists"),
    (lambda: coherence(["ab", "cd"], TOY), r"topics\[0\] must be a list of words"),
    (lambda: coherence([[0, 1]], TOY, n=0), "n must be an integer >= 1"),
    (lambda: coherence(np.ones((2, 3)), TOY), r"one column per term of X \(4\); got shape"),
    (lambda: coherence(np.full((1, 4), np.nan), TOY), "NaN or infinite weights"),
])
def test_bad_input_is_one_clear_message(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.filterwarnings("ignore::mixbayes.ConvergenceWarning", "ignore:.*never occur")
def test_fitted_models_are_scored_by_their_top_words():
    corpus, _ = mb.datasets.make_topic_corpus(60, 30, 3, 40, random_state=0)
    models = [mb.TopicModel(3, random_state=0).fit(corpus.counts),
              mb.DirichletMultinomialMixture(3, n_init=1, random_state=0).fit(corpus.counts),
              mb.HDPMixture(kernel="categorical", n_iter=6, random_state=0).fit(corpus.counts)]
    for model in models:
        words = model.top_words(corpus.vocabulary, n=5)
        result = coherence(model, corpus, "c_v", n=5)
        assert result.top_words == words
        expected = coherence(words, corpus.counts, "c_v", vocabulary=corpus.vocabulary)
        np.testing.assert_array_equal(result.per_topic, expected.per_topic)
    with pytest.raises(ValueError, match="X has 29 terms but the model was fitted on 30"):
        coherence(models[0], corpus.counts[:, :29])


def test_a_topic_word_matrix_is_scored_by_its_heaviest_terms():
    """scikit-learn's components_ (or gensim's get_topics()): n heaviest terms per row, named
    by vocabulary; the same values as the word lists."""
    from sklearn.decomposition import LatentDirichletAllocation

    corpus, _ = mb.datasets.make_topic_corpus(60, 30, 3, 40, random_state=0)
    lda = LatentDirichletAllocation(3, max_iter=5, random_state=0).fit(corpus.counts)
    words = [[corpus.vocabulary[j] for j in np.argsort(-row, kind="stable")[:6]]
             for row in lda.components_]
    for measure in ("umass", "npmi", "c_v"):
        result = coherence(lda.components_, corpus.counts, measure,
                           vocabulary=corpus.vocabulary, n=6)
        expected = coherence(words, corpus.counts, measure, vocabulary=corpus.vocabulary)
        assert result.top_words == words
        np.testing.assert_array_equal(result.per_topic, expected.per_topic)
    # without a vocabulary the terms are columns; a list of float rows and a sparse matrix too
    weights = np.array([[0.1, 0.5, 0.0, 0.4], [0.7, 0.0, 0.3, 0.0]])
    for given in (weights, weights.tolist(), sp.csr_matrix(weights)):
        assert coherence(given, TOY, n=2).top_words == [[1, 3], [0, 2]]
    assert coherence(weights, TOY, vocabulary=VOCAB, n=2).top_words == [["b", "d"], ["a", "c"]]


# ---------------------------------------------------------------- agreement with gensim
def _gensim_case():
    """A 60-document corpus (one document empty, none over 59 tokens), its texts in a random
    token order, and five 8-word topics of words that occur."""
    rng = np.random.default_rng(0)
    n_docs, n_terms = 60, 40
    topics = rng.dirichlet(np.full(n_terms, 0.2), size=4)
    weights = rng.dirichlet(np.full(4, 0.3), size=n_docs)
    lengths = rng.integers(0, 60, size=n_docs)
    lengths[3] = 0
    X = sp.csr_matrix(np.vstack([rng.multinomial(n, w @ topics)
                                 for n, w in zip(lengths, weights)]))
    vocab = [f"w{j}" for j in range(n_terms)]
    texts = []
    for row in X:
        tokens = [vocab[j] for j, c in zip(row.indices, row.data) for _ in range(c)]
        rng.shuffle(tokens)
        texts.append(tokens)
    used = np.flatnonzero(np.asarray((X > 0).sum(axis=0)).ravel())
    top = [[vocab[j] for j in rng.choice(used, 8, replace=False)] for _ in range(5)]
    return X, vocab, texts, top


@pytest.mark.parametrize("ours, theirs, window", [
    ("umass", "u_mass", None),
    ("npmi", "c_npmi", "longest"),  # the document as the window
    ("c_v", "c_v", "longest"),
    ("c_v", "c_v", None),           # gensim's default 110 tokens: longer than every document
])
def test_equals_gensim_coherence_model(ours, theirs, window):
    pytest.importorskip("gensim", reason="gensim (the [bench] extra) is the reference for "
                        "coherence; install it to compare")
    from gensim.corpora import Dictionary
    from gensim.models import CoherenceModel

    X, vocab, texts, top = _gensim_case()
    dictionary = Dictionary(texts)
    if ours == "umass":
        data = dict(corpus=[dictionary.doc2bow(text) for text in texts])
    else:
        data = dict(texts=texts, window_size=max(map(len, texts)) if window else None)
    reference = CoherenceModel(topics=top, dictionary=dictionary, coherence=theirs, topn=8,
                               processes=1, **data)
    result = coherence(top, X, ours, vocabulary=vocab, n=8)
    np.testing.assert_allclose(result.per_topic, reference.get_coherence_per_topic(),
                               rtol=0, atol=1e-6)
    assert result.mean == pytest.approx(reference.get_coherence(), abs=1e-6)
    assert np.ptp(result.per_topic) > 0.01  # topics that differ, not a degenerate case
