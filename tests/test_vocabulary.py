"""The vocabulary saved with a model: new documents onto its terms, and the record of how text
became counts (mixbayes.preprocessing, mixbayes.vocabulary, their place in mixbayes.persist)."""

import json
import warnings

import numpy as np
import pytest

import mixbayes as mb
from mixbayes.corpus import raw_text_options
from mixbayes.preprocessing import Preprocessing
from mixbayes.vocabulary import Vocabulary

TEXTS = ["the cat sat on the mat with a dog", "dogs and cats and dogs",
         "Subject: cats\nFrom: someone@example.com\n\nmy cat purrs", "the mat was red red red"]


@pytest.fixture
def corpus():
    return mb.Corpus.from_texts(TEXTS, **raw_text_options()).drop_terms(stop_words="english")


@pytest.fixture
def fitted(corpus, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = mb.DirichletMultinomialMixture(2, n_init=1, random_state=0).fit(corpus.counts)
    return model, mb.save(model, tmp_path / "model.npz", vocabulary=corpus)


def test_a_corpus_records_its_preprocessing(corpus):
    record = corpus.preprocessing
    assert record.tokens["preprocessor"] == "raw_text"
    assert record.tokens["token_pattern"] == raw_text_options()["token_pattern"]
    assert record.filters == ({"stop_words": "english", "min_df": 1, "max_df": 1.0,
                               "max_features": None},)
    # the reading's own filters come first, each later filter after them
    again = mb.Corpus.from_texts(TEXTS, min_df=2).drop_terms(max_df=0.9)
    assert [step["min_df"] for step in again.preprocessing.filters] == [2, 1]
    assert [step["max_df"] for step in again.preprocessing.filters] == [1.0, 0.9]
    assert again.preprocessing.tokens["preprocessor"] is None
    # labels and a CSV's text column are kept with it
    assert corpus.with_labels([0, 1, 0, 1]).preprocessing == record


def test_preprocessing_survives_json_and_refuses_what_it_cannot_hold(corpus):
    record = corpus.preprocessing
    assert Preprocessing.from_dict(json.loads(json.dumps(record.to_dict()))) == record
    with pytest.raises(ValueError, match="unknown preprocessor 'evil'"):
        Preprocessing.from_dict(dict(tokens=dict(preprocessor="evil")))
    with pytest.raises(ValueError, match="stop_words must be None, 'english' or a list"):
        Preprocessing.from_dict(dict(filters=[dict(stop_words=3)]))
    custom = mb.Corpus.from_texts(TEXTS, tokenizer=str.split).preprocessing
    assert custom.unsaved == ("tokenizer",)
    with pytest.raises(ValueError, match=r"a function \(tokenizer\) that a model file cannot"):
        custom.vectorizer_options()


def test_texts_map_onto_the_terms_with_unknown_and_stop_words_counted(corpus):
    vocabulary = Vocabulary.of(corpus)
    new = vocabulary.texts(["A red CAT and a zebra, zebra", "dogs!", "nothing known here"])
    np.testing.assert_array_equal(vocabulary.terms, corpus.vocabulary)
    column = {term: j for j, term in enumerate(corpus.vocabulary)}
    expected = np.zeros((3, corpus.n_terms), dtype=int)
    expected[0, [column["red"], column["cat"]]] = 1
    expected[1, column["dogs"]] = 1
    np.testing.assert_array_equal(new.counts.toarray(), expected)
    # red cat and zebra zebra | dogs | nothing known here: 9 words; "and", "nothing", "here"
    # are English stop words; zebra (twice) and "known" are outside the vocabulary
    assert (new.tokens, new.stop_tokens, new.unknown_tokens) == (9, 3, 3)
    assert list(new.unknown_terms) == ["zebra", "known"]
    np.testing.assert_array_equal(new.words_per_document, [2, 1, 0])
    # the preprocessing is the saved one: the header block of an e-mail is not words
    mail = vocabulary.texts(["From: mat@example.com\nOrganization: red\n\ncat"])
    assert mail.counts.toarray()[0, column["cat"]] == 1 and mail.counts.sum() == 1


def test_a_corpus_of_counts_maps_by_term_and_refuses_another_vocabulary(corpus):
    vocabulary = Vocabulary.of(corpus)
    reordered = corpus.counts[:, ::-1]
    other = mb.Corpus(reordered, corpus.vocabulary[::-1])
    mapped = vocabulary.map(other)
    assert (mapped.counts != corpus.counts).nnz == 0
    with pytest.raises(ValueError, match="none of the documents' .* distinct words"):
        vocabulary.map(mb.Corpus(corpus.counts, [f"term_{j}" for j in range(corpus.n_terms)]))


def test_texts_on_the_terms_of_a_count_file_say_how_to_read_them(tmp_path):
    """A vocabulary saved from counts (dblp3's counts.mtx) has no tokenisation to repeat:
    ``texts`` said only that, and the user was left to guess; the error now names the way on
    (reading options, or a corpus mapped), and the options it names work."""
    counts = mb.Corpus([[1, 2, 0], [0, 1, 3]], ["learn", "network", "secur"])
    counts.write(tmp_path / "c", format="mtx")
    vocabulary = Vocabulary.of(mb.read_corpus(tmp_path / "c" / "counts.mtx"))
    with pytest.raises(ValueError, match=r"read as given.*Vocabulary\.texts\(texts, "
                                         r"\*\*mixbayes\.corpus\.raw_text_options\(\)\).*"
                                         r"token_pattern.*Vocabulary\.map"):
        vocabulary.texts(["learn network zebra"])
    new = vocabulary.texts(["learn network zebra"], **raw_text_options())
    assert new.counts.toarray().tolist() == [[1, 1, 0]] and list(new.unknown_terms) == ["zebra"]
    spaced = vocabulary.texts(["secur secur 3d"], token_pattern=r"\S+")
    assert spaced.counts.toarray().tolist() == [[0, 0, 2]]


def test_saved_vocabulary_round_trip_predicts_as_in_process(fitted, corpus):
    model, path = fitted
    back = mb.persist.load_vocabulary(path)
    np.testing.assert_array_equal(back.terms, corpus.vocabulary)
    assert back.preprocessing == corpus.preprocessing
    new = ["my red cat", "dogs and dogs and a cat", "the mat"]
    np.testing.assert_array_equal(mb.load(path).predict(back.texts(new).counts),
                                  model.predict(Vocabulary.of(corpus).texts(new).counts))
    with np.load(path) as archive:
        assert json.loads(str(archive["__meta__"]))["format"] == 2


def test_files_without_a_vocabulary_still_load(tmp_path, corpus):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = mb.DirichletMultinomialMixture(2, n_init=1, random_state=0).fit(corpus.counts)
    path = mb.save(model, tmp_path / "old.npz")
    with np.load(path) as archive:
        assert json.loads(str(archive["__meta__"]))["format"] == 1
        assert "__vocabulary__" not in archive.files
    assert mb.persist.load_vocabulary(path) is None
    np.testing.assert_array_equal(mb.load(path).labels_, model.labels_)


def test_save_refuses_a_vocabulary_of_another_size(fitted, corpus, tmp_path):
    model, _ = fitted
    with pytest.raises(ValueError, match=r"vocabulary: it names 2 features but the "
                                         r"DirichletMultinomialMixture was fitted to 8"):
        mb.save(model, tmp_path / "x.npz", vocabulary=["a", "b"])
    assert not (tmp_path / "x.npz").exists()


def _rewrite(path, target, meta=None, **arrays):
    with np.load(path) as archive:
        entries = {name: archive[name] for name in archive.files}
    if meta is not None:
        entries["__meta__"] = np.asarray(json.dumps(meta))
    entries.update(arrays)
    np.savez(target, **entries)
    return target


@pytest.mark.parametrize("change,match", [
    (dict(__vocabulary__=np.arange(8)), "its vocabulary has dtype int64"),
    (dict(__vocabulary__=np.array(["a", "b"])), "its vocabulary names 2 terms, its model 8"),
])
def test_a_tampered_vocabulary_is_refused(fitted, tmp_path, change, match):
    _, path = fitted
    bad = _rewrite(path, tmp_path / "bad.npz", **change)
    for read in (mb.load, mb.persist.load_vocabulary):
        with pytest.raises(ValueError, match=match):
            read(bad)


def test_a_vocabulary_in_a_format_1_file_is_refused(fitted, tmp_path):
    _, path = fitted
    with np.load(path) as archive:
        meta = json.loads(str(archive["__meta__"]))
    meta["format"] = 1
    with pytest.raises(ValueError, match="a vocabulary in a format-1 file"):
        mb.load(_rewrite(path, tmp_path / "bad.npz", meta=meta))
