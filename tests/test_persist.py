"""save -> load gives identical predictions; files are never half-written; no pickle."""

import os
import zipfile

import numpy as np
import pytest

import mixbayes as mb


@pytest.mark.parametrize("inference", ["vb", "gibbs"])
def test_round_trip_identical_predictions(tmp_path, inference):
    corpus, _ = mb.datasets.make_dmm_corpus(150, 60, 3, random_state=0)
    model = mb.DirichletMultinomialMixture(3, inference=inference, n_sweeps=20).fit(corpus.counts)
    path = mb.save(model, tmp_path / "model")
    assert path.endswith(".npz") and os.path.exists(path)
    loaded = mb.load(path)
    assert type(loaded) is type(model)
    assert loaded.get_params() == model.get_params()
    np.testing.assert_array_equal(loaded.predict(corpus.counts), model.predict(corpus.counts))
    np.testing.assert_array_equal(loaded.predict_proba(corpus.counts), model.predict_proba(corpus.counts))
    assert loaded.score(corpus.counts) == model.score(corpus.counts)
    np.testing.assert_array_equal(loaded.elbo_trace_, model.elbo_trace_)
    assert loaded.converged_ == model.converged_ and loaded.n_iter_ == model.n_iter_
    # nothing left behind but the file itself
    assert os.listdir(tmp_path) == ["model.npz"]


def test_file_holds_no_pickle(tmp_path):
    corpus, _ = mb.datasets.make_dmm_corpus(50, 20, 2, random_state=0)
    path = mb.save(mb.DirichletMultinomialMixture(2).fit(corpus.counts), tmp_path / "m.npz")
    with np.load(path, allow_pickle=False) as data:  # would raise on object arrays
        assert "__meta__" in data.files and "components_" in data.files


def test_failed_write_leaves_previous_file_intact(tmp_path, monkeypatch):
    corpus, _ = mb.datasets.make_dmm_corpus(50, 20, 2, random_state=0)
    model = mb.DirichletMultinomialMixture(2).fit(corpus.counts)
    path = mb.save(model, tmp_path / "m.npz")
    before = open(path, "rb").read()

    def explode(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez_compressed", explode)
    with pytest.raises(OSError, match="disk full"):
        mb.save(model, path)
    assert open(path, "rb").read() == before
    assert os.listdir(tmp_path) == ["m.npz"]  # no temporary file left


def test_load_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        mb.load(tmp_path / "nothing.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="is not a model saved by mixbayes"):
        mb.load(tmp_path / "junk.npz")
    np.savez(tmp_path / "other.npz", a=np.arange(3))
    with pytest.raises(ValueError, match="is not a model saved by mixbayes"):
        mb.load(tmp_path / "other.npz")


def test_save_refuses_unfitted_and_foreign_models(tmp_path):
    from sklearn.cluster import KMeans
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        mb.save(mb.DirichletMultinomialMixture(2), tmp_path / "m")
    with pytest.raises(TypeError, match="cannot save a KMeans"):
        mb.save(KMeans(2), tmp_path / "m")


@pytest.mark.parametrize("prior_type", ["dirichlet_distribution", "dirichlet_process"])
@pytest.mark.parametrize("covariance_type", ["full", "diag", "spherical"])
def test_gaussian_round_trip(tmp_path, covariance_type, prior_type):
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0, 1, (50, 2)), rng.normal(5, 1, (50, 2))])
    model = mb.VariationalGaussianMixture(3, covariance_type=covariance_type,
                                          weight_concentration_prior_type=prior_type,
                                          mean_prior=[0.0, 0.0]).fit(X)
    loaded = mb.load(mb.save(model, tmp_path / "g"))
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    np.testing.assert_array_equal(loaded.covariances_, model.covariances_)
    assert loaded.get_params()["mean_prior"] == [0.0, 0.0]
