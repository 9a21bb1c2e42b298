"""Bad input gets a clear error naming the argument, never a numpy traceback from deep inside."""

import numpy as np
import pytest
import scipy.sparse as sp

import mixbayes as mb

GOOD = np.array([[1, 0, 2], [0, 3, 1], [2, 2, 0], [1, 1, 1]])


@pytest.mark.parametrize("X,error,match", [
    (np.array([[1, -1, 0], [0, 1, 1]]), ValueError, "X contains negative counts"),
    (np.array([[1.5, 0, 0], [0, 1, 1]]), ValueError, "X contains fractional counts"),
    (np.array([[np.nan, 0, 0], [0, 1, 1]]), ValueError, "X contains NaN or infinite"),
    (np.array([[np.inf, 0, 0], [0, 1, 1]]), ValueError, "X contains NaN or infinite"),
    (sp.csr_matrix(np.array([[np.inf, 0.0], [0, 1]])), ValueError, "X contains NaN or infinite"),
    (sp.csr_matrix(np.array([[-2, 0], [0, 1]])), ValueError, "X contains negative counts"),
    (np.zeros((3, 0)), ValueError, "X has an empty vocabulary"),
    (np.zeros((0, 3)), ValueError, "X has no documents"),
    (np.array([1, 2, 3]), ValueError, "X must be 2-D"),
    (np.array([["a", "b"], ["c", "d"]]), TypeError, "X must hold numeric counts"),
    (np.array([[1 + 1j, 0], [0, 1]]), ValueError, "Complex data not supported"),
])
def test_bad_counts(X, error, match):
    with pytest.raises(error, match=match):
        mb.DirichletMultinomialMixture(2).fit(X)


@pytest.mark.parametrize("params,error,match", [
    (dict(n_components=0), ValueError, r"n_components must be an integer >= 1; got 0"),
    (dict(n_components=5), ValueError, r"n_components must be an integer in \[1, 4\] \(at most n_samples=4\); got 5"),
    (dict(n_components=2.5), TypeError, "n_components must be an integer"),
    (dict(weight_concentration_prior=-1.0), ValueError, "weight_concentration_prior must be a finite number > 0"),
    (dict(word_concentration_prior=0.0), ValueError, "word_concentration_prior must be a finite number > 0"),
    (dict(word_concentration_prior=np.nan), ValueError, "word_concentration_prior must be"),
    (dict(inference="mcmc"), ValueError, "inference must be one of 'vb', 'gibbs'; got 'mcmc'"),
    (dict(init="kmeans"), ValueError, "init must be one of 'auto', 'kmeans\\+\\+', 'random'"),
    (dict(n_init=0), ValueError, "n_init must be an integer >= 1"),
    (dict(tol=-1.0), ValueError, "tol must be a finite number >= 0"),
    (dict(max_iter="10"), TypeError, "max_iter must be an integer >= 1; got '10'"),
    (dict(random_state="seed"), ValueError, "random_state must be None, a non-negative integer"),
])
def test_bad_parameters(params, error, match):
    params = {"n_components": 2, **params}
    with pytest.raises(error, match=match):
        mb.DirichletMultinomialMixture(**params).fit(GOOD)


def test_gibbs_checks_parameters_too():
    with pytest.raises(ValueError, match="n_components must be an integer in"):
        mb.DirichletMultinomialMixture(9, inference="gibbs").fit(GOOD)


def test_wrong_width_at_predict():
    model = mb.DirichletMultinomialMixture(2).fit(GOOD)
    with pytest.raises(ValueError, match="X has 2 features, but DirichletMultinomialMixture is expecting 3"):
        model.predict(GOOD[:, :2])


def test_unfitted_predict():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        mb.DirichletMultinomialMixture(2).predict(GOOD)


def test_simulator_checks_its_arguments():
    with pytest.raises(ValueError, match="word_concentration must be a finite number > 0"):
        mb.datasets.make_dmm_corpus(word_concentration=0)
    with pytest.raises(TypeError, match="n_documents must be an integer"):
        mb.datasets.make_dmm_corpus(n_documents=2.5)


def test_select_n_clusters_bad_candidates():
    with pytest.raises(ValueError, match=r"candidates must lie in \[1, 4\]"):
        mb.select_n_clusters(GOOD, range(2, 9))
    with pytest.raises(ValueError, match="candidates must hold at least one"):
        mb.select_n_clusters(GOOD, [])


def test_gaussian_simulator_checks_and_returns_truth():
    X, truth = mb.datasets.make_gaussian_mixture(200, 4, 3, random_state=0)
    assert X.shape == (200, 4) and truth.covariances.shape == (3, 4, 4)
    assert np.all(np.linalg.eigvalsh(truth.covariances) > 0)
    np.testing.assert_allclose(truth.weights.sum(), 1.0)
    with pytest.raises(ValueError, match="weight_concentration must be a finite number > 0"):
        mb.datasets.make_gaussian_mixture(weight_concentration=0.0)
