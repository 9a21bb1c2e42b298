"""Property-based fuzzing of every estimator, save/load and the corpus readers.

Every input either gives a correct result (finite outputs, probabilities that sum to one,
labels in range) or a one-line ValueError/TypeError naming the argument - never an internal
numpy/numba/scipy error, a hang or a silently wrong answer. Examples are small and the runs
derandomized, so the file takes well under a minute and fails the same way on every machine.
"""

import contextlib
import csv
import os
import re
import tempfile
import warnings

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import mixbayes as mb

FUZZ = settings(max_examples=20, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))
SPARSE = ("csr", "csc", "coo", "lil", "dok", "bsr", "dia")
COUNT_LIMIT = np.iinfo(np.int64).max / 4  # the largest count check_counts accepts


def _clean_error(exc, argument):
    """A user error: ValueError/TypeError, one line, naming ``argument``."""
    assert type(exc) in (ValueError, TypeError), f"internal error {type(exc).__name__}: {exc}"
    message = str(exc)
    assert "\n" not in message, message
    assert re.search(rf"\b{argument}\b", message), f"{argument} not named in: {message}"


@contextlib.contextmanager
def _quiet():
    """Ignore the legitimate UserWarning/ConvergenceWarning of tiny fits (RuntimeWarnings from
    mixbayes stay errors, as the project's pytest settings make them)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        warnings.filterwarnings("error", category=RuntimeWarning, module="mixbayes")
        yield


# --------------------------------------------------------------------------- count matrices
EXTREMES = [2**31 - 1, 2**31, 2**53, -1, 0.5, np.nan, np.inf]


@st.composite
def count_matrices(draw, small=False):
    """(X in some container and dtype, the float64 values it holds)."""
    n = draw(st.integers(1, 6))
    p = draw(st.integers(1, 5))
    element = st.integers(0, 4) if small else st.one_of(
        st.integers(0, 4), st.integers(0, 4), st.sampled_from(EXTREMES))
    values = np.array(draw(st.lists(element, min_size=n * p, max_size=n * p)),
                      dtype=np.float64).reshape(n, p)
    if draw(st.booleans()):
        values[draw(st.integers(0, n - 1))] = 0  # an all-zero row
    if draw(st.booleans()):
        values[:, draw(st.integers(0, p - 1))] = 0  # an all-zero column
    dtype = draw(st.sampled_from(["float64", "float32", "int64", "int32", "bool", "float16"]))
    clean = np.all(np.isfinite(values)) and np.all(values == np.floor(values))
    if dtype == "bool" and clean:
        arr = values != 0
        values = arr.astype(np.float64)
    elif dtype.startswith("int") and clean and np.abs(values).max() <= np.iinfo(dtype).max:
        arr = values.astype(dtype)
    elif dtype == "float16":
        with np.errstate(over="ignore"):
            arr = values.astype(np.float16)
        values = arr.astype(np.float64)
    elif dtype == "float32":
        arr = values.astype(np.float32)
        values = arr.astype(np.float64)
    else:
        arr = values
    container = draw(st.sampled_from(("dense", "list") + SPARSE))
    if container == "list":
        X = arr.tolist()
    elif container == "dense" or arr.dtype == np.float16:
        X = arr
    else:
        X = sp.csr_matrix(arr).asformat(container)
    return X, values


def _valid_counts(values):
    return bool(np.all(np.isfinite(values)) and np.all(values >= 0)
                and np.all(values == np.floor(values)) and values.max() <= COUNT_LIMIT)


def _check_probabilities(P, n, K):
    assert P.shape == (n, K)
    assert np.all(np.isfinite(P)) and np.all(P >= 0)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-6)


ESTIMATORS = {
    "dmm-vb": lambda K: mb.DirichletMultinomialMixture(K, n_init=1, max_iter=30),
    "dmm-gibbs": lambda K: mb.DirichletMultinomialMixture(K, inference="gibbs", n_init=1,
                                                          n_sweeps=3),
    "topics": lambda K: mb.TopicModel(K, max_iter=20),
}


@pytest.mark.parametrize("name", ESTIMATORS)
@FUZZ
@given(data=count_matrices(), k=st.data())
def test_count_models_fuzz(name, data, k):
    X, values = data
    n, p = values.shape
    K = k.draw(st.sampled_from(sorted({1, min(2, n), n})))  # K = 1, K = n and between
    model = ESTIMATORS[name](K)
    with _quiet():
        try:
            model.fit(X)
        except Exception as exc:
            used_docs = int(np.sum(np.any(values != 0, axis=1)))
            if name == "topics" and _valid_counts(values) and 0 < used_docs < K:
                _clean_error(exc, "n_components")  # "clusters" start: K <= non-empty docs
                return
            _clean_error(exc, "X")
            no_words = name == "topics" and not np.any(values)
            assert not _valid_counts(values) or no_words, f"valid counts refused: {exc}"
            return
        assert _valid_counts(values), "invalid counts accepted"
        if name == "topics":
            _check_probabilities(model.transform(X), n, K)
            _check_probabilities(model.doc_topic_, n, K)
            assert np.isfinite(model.score(X))
        else:
            _check_probabilities(model.predict_proba(X), n, K)
            labels = model.predict(X)
            assert labels.min() >= 0 and labels.max() < K
            np.testing.assert_array_equal(labels, model.labels_)
            assert np.isfinite(model.score(X))


@FUZZ
@given(data=count_matrices(small=True), bad=count_matrices())
def test_prediction_input_fuzz(data, bad):
    """A model fitted on good data judges every later input on its own."""
    X, values = data
    assume(values.any())
    Y, y_values = bad
    with _quiet():
        for model in (mb.DirichletMultinomialMixture(1, n_init=1, max_iter=10).fit(X),
                      mb.TopicModel(1, max_iter=10).fit(X)):
            method = model.transform if isinstance(model, mb.TopicModel) else model.predict_proba
            try:
                P = method(Y)
            except Exception as exc:
                _clean_error(exc, "X")
                assert not _valid_counts(y_values) or y_values.shape[1] != values.shape[1]
                continue
            assert _valid_counts(y_values) and y_values.shape[1] == values.shape[1]
            _check_probabilities(P, y_values.shape[0], 1)


@FUZZ
@given(data=count_matrices(small=True))
def test_hdp_categorical_fuzz(data):
    # small counts only: the categorical kernel keeps one state per token (the refusal of
    # huge totals is test_hdp_refuses_more_tokens_than_it_can_hold)
    X, values = data
    with _quiet():
        try:
            model = mb.HDPMixture(n_iter=3).fit(X)
        except Exception as exc:
            _clean_error(exc, "X")
            assert not np.all(values.sum(axis=1) > 0), f"valid counts refused: {exc}"
            return
    assert np.all(values.sum(axis=1) > 0)
    assert model.labels_.shape == (values.sum(),) and model.group_labels_.shape == (len(values),)
    assert 0 <= model.labels_.min() and model.labels_.max() < model.n_components_
    np.testing.assert_allclose(model.components_.sum(axis=1), 1.0)


# --------------------------------------------------------------------------- points
POINT_EXTREMES = [np.nan, np.inf, -np.inf, 1e300, -1e300, 1e-300]


@st.composite
def point_sets(draw, extremes=True):
    n = draw(st.integers(1, 8))
    d = draw(st.integers(1, 3))
    element = st.floats(-1e3, 1e3, allow_nan=False)
    if extremes:
        element = st.one_of(element, element, element, st.sampled_from(POINT_EXTREMES))
    values = np.array(draw(st.lists(element, min_size=n * d, max_size=n * d))).reshape(n, d)
    kind = draw(st.sampled_from(["float64", "float32", "int64", "bool", "1d", "list"]))
    if kind == "float32":
        with np.errstate(over="ignore"):
            values = values.astype(np.float32).astype(np.float64)
        return values.astype(np.float32), values
    if kind in ("int64", "bool") and np.all(np.isfinite(values)) and np.abs(values).max() < 1e15:
        arr = values.astype(kind)
        return arr, arr.astype(np.float64)
    if kind == "1d":
        return values[:, 0], values[:, :1]
    if kind == "list":
        return values.tolist(), values
    return values, values


def _usable_points(values):
    finite = np.all(np.isfinite(values))
    return finite and np.abs(values).max(initial=0) < 1e150


@FUZZ
@given(data=point_sets(), groups=st.data())
def test_hdp_gaussian_fuzz(data, groups):
    X, values = data
    n = values.shape[0]
    g = np.asarray(groups.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    with _quiet():
        try:
            model = mb.HDPMixture("gaussian", n_iter=3).fit(X, groups=g)
        except Exception as exc:
            _clean_error(exc, "X")
            assert not _usable_points(values) or n < 2, f"valid points refused: {exc}"
            return
    assert n >= 2 and np.all(np.isfinite(values))
    assert np.all(np.isfinite(model.components_))
    assert model.labels_.shape == (n,) and model.labels_.max() < model.n_components_


@pytest.mark.parametrize("covariance_type", ["full", "diag", "spherical"])
@FUZZ
@given(data=point_sets(), dp=st.booleans(), k=st.data())
def test_gaussian_mixture_fuzz(covariance_type, data, dp, k):
    X, values = data
    n = values.shape[0]
    K = k.draw(st.sampled_from(sorted({1, min(2, n), n})))
    model = mb.VariationalGaussianMixture(
        K, covariance_type=covariance_type, max_iter=30,
        weight_concentration_prior_type="dirichlet_process" if dp else "dirichlet_distribution")
    with _quiet():
        try:
            model.fit(X)
        except Exception as exc:  # singular data (duplicates, constant columns) must fit too
            _clean_error(exc, "X")
            assert not _usable_points(values) or n < 2, f"valid refused: {exc}"
            return
        # finite values beyond 1e150 may be refused, or fitted: then the answer must be finite
        assert np.all(np.isfinite(values)) and n >= 2
        _check_probabilities(model.predict_proba(X), n, K)
        labels = model.predict(X)
        assert labels.min() >= 0 and labels.max() < K
        assert np.isfinite(model.score(X))


# --------------------------------------------------------------------------- save / load
@FUZZ
@given(data=count_matrices(small=True), points=point_sets(extremes=False),
       which=st.sampled_from(["dmm", "gibbs", "topics", "hdp", "gmm", "hdp-gaussian"]))
def test_save_load_round_trip_fuzz(data, points, which):
    X, values = data
    P, p_values = points
    with _quiet(), tempfile.TemporaryDirectory() as folder:
        try:
            if which == "dmm":
                model = mb.DirichletMultinomialMixture(1, n_init=1).fit(X)
            elif which == "gibbs":
                model = mb.DirichletMultinomialMixture(1, inference="gibbs", n_sweeps=2,
                                                       n_init=1).fit(X)
            elif which == "topics":
                model = mb.TopicModel(1, max_iter=10).fit(X)
            elif which == "hdp":
                model = mb.HDPMixture(n_iter=2).fit(X)
            elif which == "gmm":
                model = mb.VariationalGaussianMixture(1, covariance_type="diag").fit(P)
            else:
                model = mb.HDPMixture("gaussian", n_iter=2).fit(P, groups=np.zeros(len(p_values)))
        except (ValueError, TypeError):
            assume(False)  # input the model refuses: fuzzed by the tests above
        loaded = mb.load(mb.save(model, os.path.join(folder, "model")))
        assert os.listdir(folder) == ["model.npz"]
        assert loaded.get_params() == model.get_params()
        for key, value in vars(model).items():
            if key.endswith("_") and not key.startswith("_") and isinstance(value, np.ndarray):
                stored = getattr(loaded, key)  # bytes: structured arrays hold NaN R-hats
                assert stored.dtype == value.dtype and stored.tobytes() == value.tobytes(), key
        if which in ("dmm", "gibbs"):
            np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
        elif which == "topics":
            np.testing.assert_array_equal(loaded.transform(X), model.transform(X))
        elif which == "gmm":
            np.testing.assert_array_equal(loaded.predict_proba(P), model.predict_proba(P))


@FUZZ
@given(cut=st.floats(0, 1, exclude_max=True), flip=st.integers(0, 10**6), byte=st.integers(0, 255))
def test_load_damaged_file_fuzz(cut, flip, byte):
    """A damaged file loads to a working model or is refused with one line naming it."""
    corpus, _ = mb.datasets.make_dmm_corpus(20, 8, 2, random_state=0)
    with _quiet(), tempfile.TemporaryDirectory() as folder:
        path = mb.save(mb.DirichletMultinomialMixture(2, n_init=1).fit(corpus.counts),
                       os.path.join(folder, "m"))
        data = bytearray(open(path, "rb").read())
        data[flip % len(data)] = byte
        for damaged in (bytes(data), bytes(data[: int(cut * len(data))])):
            open(path, "wb").write(damaged)
            try:
                model = mb.load(path)
            except Exception as exc:
                _clean_error(exc, "path")
                assert repr(path) in str(exc)
                continue
            _check_probabilities(model.predict_proba(corpus.counts), 20, 2)


# --------------------------------------------------------------------------- readers
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)


def _check_corpus(corpus):
    n, p = corpus.counts.shape
    assert n >= 1 and p >= 1
    assert corpus.vocabulary.shape == (p,) and corpus.doc_ids.shape == (n,)
    assert corpus.counts.dtype == np.int64 and corpus.counts.data.min(initial=1) > 0


def _read_or_refuse(path):
    try:
        corpus = mb.read_corpus(path)
    except Exception as exc:
        _clean_error(exc, "path")
        return None
    _check_corpus(corpus)
    return corpus


@FUZZ
@given(lines=st.lists(TEXT, min_size=0, max_size=6), cut=st.integers(0, 10**4),
       raw=st.binary(max_size=60))
def test_read_txt_fuzz(lines, cut, raw):
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "docs.txt")
        content = "\n".join(lines).encode("utf-8")
        for data in (content, content[: cut % (len(content) + 1)], raw):
            open(path, "wb").write(data)
            _read_or_refuse(path)
        with open(path, "w", encoding="utf-8", newline="") as out:
            out.write("\n".join(line.replace("\n", " ").replace("\r", " ") for line in lines))
        corpus = _read_or_refuse(path)
        if corpus is not None:
            assert corpus.n_documents <= max(len(lines), 1)


@FUZZ
@given(rows=st.lists(st.tuples(TEXT, TEXT), min_size=1, max_size=5), cut=st.integers(0, 10**4))
def test_read_csv_fuzz(rows, cut):
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "docs.csv")
        with open(path, "w", encoding="utf-8", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(["text", "id"])
            writer.writerows(rows)
        corpus = _read_or_refuse(path)
        if corpus is not None:
            assert corpus.n_documents == len(rows)  # one document per CSV row, newlines and all
        content = open(path, "rb").read()
        open(path, "wb").write(content[: cut % (len(content) + 1)])
        _read_or_refuse(path)


@FUZZ
@given(data=count_matrices(small=True), cut=st.integers(0, 10**4), flip=st.integers(0, 10**4),
       byte=st.sampled_from(list(b"0123456789 -.e\n%x")))
def test_read_mtx_fuzz(data, cut, flip, byte):
    _, values = data
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "counts.mtx")
        scipy.io.mmwrite(path, sp.coo_matrix(values.astype(np.int64)), field="integer")
        corpus = _read_or_refuse(path)
        if corpus is not None:
            np.testing.assert_array_equal(corpus.counts.toarray(), values)
        content = bytearray(open(path, "rb").read())
        for damaged in (bytes(content[: cut % (len(content) + 1)]),
                        bytes(content[: flip % len(content)] + bytes([byte])
                              + content[flip % len(content) + 1:])):
            open(path, "wb").write(damaged)
            _read_or_refuse(path)


# --------------------------------------------------------------------------- regressions
def test_float16_counts_are_read_not_refused_by_scipy():
    X = np.array([[1, 0, 2], [0, 3, 1]], dtype=np.float16)
    model = mb.DirichletMultinomialMixture(1, n_init=1).fit(X)
    np.testing.assert_allclose(model.predict_proba(X), 1.0)


def test_hdp_refuses_more_tokens_than_it_can_hold():
    X = np.array([[2**31, 1], [1, 1]])
    with pytest.raises(ValueError, match=r"X holds 2147483651 tokens .* at most 2147483647"):
        mb.HDPMixture(n_iter=2).fit(X)


@pytest.mark.parametrize("X,error,match", [
    (np.array([[1.0, 2.0], [3.0, -1e300], [2.0, 1e300]]), ValueError,
     "X holds values too large to work with"),
    ([[1.0, 2.0], [3.0]], TypeError, "X must be a 2-D array of real numbers"),
    (np.array([["a", "b"], ["c", "d"]]), TypeError, "X must be a 2-D array of real numbers"),
    (np.ones((3, 2)) + 1j, ValueError, "Complex data not supported: X"),
])
def test_hdp_gaussian_bad_points(X, error, match):
    with pytest.raises(error, match=match):
        mb.HDPMixture("gaussian", n_iter=2).fit(X, groups=np.zeros(len(X)))


def test_hdp_groups_of_mixed_kinds_are_named():
    points = np.random.default_rng(0).normal(size=(4, 2))
    with pytest.raises(TypeError, match="groups must be labels of one kind"):
        mb.HDPMixture("gaussian", n_iter=2).fit(points, groups=np.array([0, "a", 1, "b"],
                                                                        dtype=object))


@pytest.mark.parametrize("header", [
    "%%MatrixMarket matrix coordinate integer general\n100000000000 100000000000 1\n1 1 5\n",
    "%%MatrixMarket matrix array integer general\n100000 100000\n1\n",
])
def test_mtx_header_announcing_a_huge_matrix_is_refused_at_once(tmp_path, header):
    (tmp_path / "counts.mtx").write_text(header)
    with pytest.raises(ValueError, match="path: .* announces "):
        mb.read_corpus(tmp_path / "counts.mtx")


def test_reader_errors_name_the_file(tmp_path):
    (tmp_path / "neg.mtx").write_text(
        "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 -5.5\n")
    with pytest.raises(ValueError, match=r"path: '.*neg.mtx': .*negative counts"):
        mb.read_corpus(tmp_path / "neg.mtx")
    (tmp_path / "empty.txt").write_text("\n\n")
    with pytest.raises(ValueError, match=r"path: '.*empty.txt': texts must hold at least one"):
        mb.read_corpus(tmp_path / "empty.txt")
    (tmp_path / "docword.c.txt").write_text("2\n2\n1\n0 1 5\n")
    (tmp_path / "vocab.c.txt").write_text("a\nb\n")
    with pytest.raises(ValueError, match="path: .* document or word number outside"):
        mb.read_corpus(tmp_path / "docword.c.txt")


def test_topic_model_names_k_above_the_non_empty_documents():
    X = np.array([[0, 0], [1, 2]])  # two documents, one of them empty
    with pytest.raises(ValueError, match=r"n_components must be at most the number of "
                                         r"non-empty documents of X \(1\)"):
        mb.TopicModel(2).fit(X)
