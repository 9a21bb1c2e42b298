"""save -> load gives identical predictions; files are never half-written; no pickle."""

import json
import os

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
    with pytest.raises(TypeError, match="cannot save an object of type KMeans"):
        mb.save(KMeans(2), tmp_path / "m")


def test_save_into_a_missing_folder_names_the_folder(tmp_path):
    """Not mkstemp's own temporary name (a new user's report)."""
    X = np.random.default_rng(0).normal(size=(30, 2))
    model = mb.VariationalGaussianMixture(2, random_state=0).fit(X)
    missing = tmp_path / "nodir"
    with pytest.raises(FileNotFoundError, match="path: the folder .*nodir.* does not exist"):
        mb.save(model, missing / "m")
    assert not missing.exists()


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


# --------------------------------------------------------------------------- hostile files
def _fitted_files(tmp_path):
    """A saved DMM and a saved full-covariance Gaussian mixture."""
    corpus, _ = mb.datasets.make_dmm_corpus(40, 12, 2, random_state=0)
    dmm = mb.DirichletMultinomialMixture(2, n_init=1).fit(corpus.counts)
    rng = np.random.default_rng(0)
    gmm = mb.VariationalGaussianMixture(2).fit(rng.normal(size=(30, 3)))
    return mb.save(dmm, tmp_path / "dmm"), mb.save(gmm, tmp_path / "gmm")


def _entries(path):
    with np.load(path, allow_pickle=False) as data:
        entries = {key: data[key] for key in data.files}
    return entries, json.loads(str(entries["__meta__"]))


def _rewrite(path, target, meta=None, **changes):
    """Copy the saved model at ``path`` to ``target`` with entries (or metadata) replaced."""
    entries, old_meta = _entries(path)
    if meta is not None:
        entries["__meta__"] = np.asarray(json.dumps(meta) if not isinstance(meta, np.ndarray)
                                         else meta)
    entries.update(changes)
    np.savez(target, **{k: v for k, v in entries.items() if v is not None})
    return target


def _refused(path, match="is not a model saved by mixbayes"):
    with pytest.raises(ValueError, match=match) as info:
        mb.load(path)
    message = str(info.value)
    assert "\n" not in message and repr(str(path)) in message
    return message


@pytest.mark.parametrize("cut", [0, 1, 30, 200, 0.5, -100, -22, -1])
def test_truncated_file_refused(tmp_path, cut):
    path, _ = _fitted_files(tmp_path)
    data = open(path, "rb").read()
    cut = int(cut * len(data)) if isinstance(cut, float) else cut % len(data) if cut else 0
    (tmp_path / "cut.npz").write_bytes(data[:cut])
    _refused(tmp_path / "cut.npz")


def test_random_bytes_and_foreign_files_refused(tmp_path):
    rng = np.random.default_rng(0)
    (tmp_path / "noise.npz").write_bytes(rng.integers(0, 256, 5000, dtype=np.uint8).tobytes())
    _refused(tmp_path / "noise.npz")
    (tmp_path / "model.json").write_text('{"format": 1, "cls": "TopicModel"}')
    _refused(tmp_path / "model.json")
    np.save(tmp_path / "single.npy", np.arange(3))
    assert "not an .npz archive" in _refused(tmp_path / "single.npy")
    np.savez(tmp_path / "nometa.npz", means_=np.zeros(3))
    assert "no __meta__" in _refused(tmp_path / "nometa.npz")


@pytest.mark.parametrize("meta,match", [
    (np.asarray("{not json"), "__meta__ is not valid JSON"),
    (np.asarray("[1, 2]"), "__meta__ is a JSON list"),
    (np.arange(3), "__meta__ is not a JSON string"),
    ({"format": 1, "cls": "KMeans", "params": {}, "scalars": {}}, "unknown model class 'KMeans'"),
    ({"format": "1"}, "unknown format '1'"),
    ({"format": 1, "cls": "DirichletMultinomialMixture", "params": [], "scalars": {}},
     "params and scalars must be JSON objects"),
])
def test_bad_metadata_refused(tmp_path, meta, match):
    path, _ = _fitted_files(tmp_path)
    _refused(_rewrite(path, tmp_path / "bad.npz", meta=meta), match)


def test_newer_format_says_upgrade(tmp_path):
    path, _ = _fitted_files(tmp_path)
    _, meta = _entries(path)
    meta["format"] = 7
    _refused(_rewrite(path, tmp_path / "new.npz", meta=meta),
             r"written by a newer mixbayes \(format 7\); this version reads formats 1 to 2 .* upgrade")


@pytest.mark.parametrize("where,key,value,match", [
    ("params", "evil", 1, r"has no parameter\(s\) \['evil'\]"),
    ("params", "n_components", "two", "n_components must be an integer"),
    ("params", "covariance_type", "bogus", "covariance_type must be one of"),
    ("scalars", "n_features_in_", 0, "invalid scalar n_features_in_=0"),
    ("scalars", "__class__", "KMeans", "invalid scalar __class__"),
    ("scalars", "elbo_", None, "invalid scalar elbo_"),
])
def test_tampered_metadata_refused(tmp_path, where, key, value, match):
    _, path = _fitted_files(tmp_path)
    _, meta = _entries(path)
    meta[where][key] = value
    _refused(_rewrite(path, tmp_path / "bad.npz", meta=meta), match)


@pytest.mark.parametrize("change,match", [
    (dict(means_=np.zeros((2, 4))), r"means_ has shape \(2, 4\); expected \(2, 3\)"),
    (dict(means_=np.zeros(2)), "means_ has shape"),
    (dict(means_=np.array([["a", "b", "c"]] * 2)), "means_ has dtype <U1"),
    (dict(means_=np.full((2, 3), np.nan)), "means_ holds values outside its range"),
    (dict(labels_=np.full(30, 5)), "labels_ holds values outside its range"),
    (dict(labels_=np.zeros(30)), "labels_ has dtype float64"),
    (dict(weight_concentration_=-np.ones(2)), "weight_concentration_ holds values outside"),
    (dict(scale_=-np.ones((2, 3, 3))), "scale_ is not symmetric positive definite"),
    (dict(precisions_=None), r"missing fitted attribute\(s\) \['precisions_'\]"),
    (dict(extra_=np.zeros(3)), "unexpected array extra_"),
])
def test_tampered_arrays_refused(tmp_path, change, match):
    _, path = _fitted_files(tmp_path)
    _refused(_rewrite(path, tmp_path / "bad.npz", **change), match)


def test_tampered_components_refused(tmp_path):
    path, _ = _fitted_files(tmp_path)
    _refused(_rewrite(path, tmp_path / "bad.npz", components_=np.zeros((3, 12))),
             r"components_ has shape \(3, 12\); expected \(2, 12\)")
    # consistent shapes but values the model cannot use: the trial prediction refuses them
    _refused(_rewrite(path, tmp_path / "bad2.npz", word_concentration_=np.full((2, 12), 1e308)),
             "the stored DirichletMultinomialMixture does not work")


class _Marker:
    """Unpickling this object creates a folder: the proof that something was unpickled."""

    def __init__(self, folder):
        self.folder = str(folder)

    def __reduce__(self):
        return os.mkdir, (self.folder,)


@pytest.mark.parametrize("entry", ["__meta__", "means_"])
def test_pickled_objects_never_unpickled(tmp_path, entry):
    _, path = _fitted_files(tmp_path)
    marker = tmp_path / "unpickled"
    payload = np.empty(1, dtype=object)
    payload[0] = _Marker(marker)
    entries, _ = _entries(path)
    entries[entry] = payload
    np.savez(tmp_path / "evil.npz", **entries)  # np.savez pickles object arrays
    assert "pickled objects" in _refused(tmp_path / "evil.npz")
    assert not marker.exists()


def test_round_trip_of_topic_and_hdp_models(tmp_path):
    corpus, _ = mb.datasets.make_dmm_corpus(30, 12, 2, random_state=0)
    topics = mb.TopicModel(2).fit(corpus.counts)
    loaded = mb.load(mb.save(topics, tmp_path / "t"))
    np.testing.assert_array_equal(loaded.transform(corpus.counts), topics.transform(corpus.counts))
    for hdp, X, groups in [
        (mb.HDPMixture(n_iter=4), corpus.counts, None),
        (mb.HDPMixture("gaussian", n_iter=4), np.random.default_rng(0).normal(size=(20, 2)),
         np.arange(20) % 3),
    ]:
        hdp.fit(X, groups=groups)
        loaded = mb.load(mb.save(hdp, tmp_path / "h"))
        np.testing.assert_array_equal(loaded.labels_, hdp.labels_)
        np.testing.assert_array_equal(loaded.trace_, hdp.trace_)
        assert loaded.n_components_ == hdp.n_components_


def test_failure_midway_leaves_no_target_and_no_temporary(tmp_path, monkeypatch):
    corpus, _ = mb.datasets.make_dmm_corpus(30, 12, 2, random_state=0)
    model = mb.DirichletMultinomialMixture(2, n_init=1).fit(corpus.counts)
    real = np.savez_compressed

    def half_then_fail(handle, **arrays):
        real(handle, **dict(list(arrays.items())[:2]))  # some bytes reach the temporary file
        raise KeyboardInterrupt

    monkeypatch.setattr(np, "savez_compressed", half_then_fail)
    with pytest.raises(KeyboardInterrupt):
        mb.save(model, tmp_path / "m.npz")
    assert os.listdir(tmp_path) == []


def test_load_takes_the_path_save_was_given(tmp_path):
    corpus, _ = mb.datasets.make_dmm_corpus(40, 20, 2, random_state=0)
    model = mb.DirichletMultinomialMixture(2, n_init=1).fit(corpus.counts)
    written = mb.save(model, tmp_path / "model")
    assert written.endswith("model.npz")
    np.testing.assert_array_equal(mb.load(tmp_path / "model").labels_, model.labels_)


def test_round_trip_of_the_tree_model_and_its_tampering_refused(tmp_path):
    X, _ = mb.datasets.make_tree_data(kind="nested", random_state=0)
    tree = mb.HierarchicalMixture(depth=2, n_iter=12, burn_in=6, random_state=0).fit(X)
    path = mb.save(tree, tmp_path / "tree")
    loaded = mb.load(path)
    np.testing.assert_array_equal(loaded.predict(X), tree.predict(X))
    np.testing.assert_array_equal(loaded.paths_, tree.paths_)
    for field in tree.trace_.dtype.names:  # NaN-aware, field by field
        np.testing.assert_array_equal(loaded.trace_[field], tree.trace_[field])
    np.testing.assert_array_equal(loaded.linkage_, tree.linkage_)
    assert loaded.to_newick() == tree.to_newick()
    assert loaded.to_newick(full=True) == tree.to_newick(full=True)
    assert loaded.rhat_ == pytest.approx(tree.rhat_, nan_ok=True)
    n_nodes = tree.node_parent_.size
    for change, match in [
        (dict(paths_=np.full_like(tree.paths_, n_nodes)), "paths_ holds values outside"),
        (dict(node_parent_=np.full(n_nodes, -2)), "node_parent_ holds values outside"),
        (dict(means_=np.zeros((tree.n_components_ + 1, X.shape[1]))), "means_ has shape"),
        (dict(trace_=np.zeros((1, 12))), "trace_ has dtype"),
        (dict(linkage_=tree.linkage_[::-1].copy()), "linkage_ holds values outside"),
        (dict(linkage_=tree.linkage_[1:]), "linkage_ holds values outside"),
        (dict(state_log_weights_=np.zeros((tree.state_parent_.size, 1))),
         "state_log_weights_ has shape"),
    ]:
        _refused(_rewrite(path, tmp_path / "bad.npz", **change), match)


@pytest.mark.parametrize("covariance_type", ["full", "diag", "spherical"])
def test_round_trip_of_the_tree_model_with_covariances(tmp_path, covariance_type):
    """Per-component covariances and the prior they came from survive the file (predict
    reads them all), in the tree's JSON too; a precision that is not positive (definite) is
    refused."""
    X, _ = mb.datasets.make_tree_data(60, kind="nested", random_state=0)
    tree = mb.HierarchicalMixture(depth=2, n_iter=6, burn_in=3, covariance_type=covariance_type,
                                  random_state=0).fit(X)
    loaded = mb.load(mb.save(tree, tmp_path / "tree"))
    for key in ("precisions_", "covariances_", "covariance_prior_"):
        np.testing.assert_array_equal(getattr(loaded, key), getattr(tree, key))
    assert loaded.degrees_of_freedom_prior_ == tree.degrees_of_freedom_prior_
    np.testing.assert_array_equal(loaded.predict(X), tree.predict(X))
    assert loaded.to_json() == tree.to_json()
    component = json.loads(tree.to_json())["components"][0]
    assert np.shape(component["covariance"]) == tree.covariances_.shape[1:]
    bad = -tree.precisions_
    _refused(_rewrite(tmp_path / "tree.npz", tmp_path / "bad.npz", precisions_=bad),
             "precisions_ (is not symmetric positive definite|holds values outside)")


def _fitted_models():
    """One small fit of every model and setting whose fitted state differs in kind."""
    corpus, _ = mb.datasets.make_dmm_corpus(60, 30, 2, random_state=0)
    points, _ = mb.datasets.make_gaussian_mixture(60, 2, 2, random_state=0)
    tree_points, _ = mb.datasets.make_tree_data(40, kind="nested", random_state=0)
    groups = np.repeat(np.arange(4), 15)
    return {
        "dmm vb": lambda: mb.DirichletMultinomialMixture(2).fit(corpus.counts),
        "dmm gibbs": lambda: mb.DirichletMultinomialMixture(
            2, inference="gibbs", n_sweeps=10).fit(corpus.counts),
        "gmm diag": lambda: mb.VariationalGaussianMixture(2, covariance_type="diag").fit(points),
        "topics": lambda: mb.TopicModel(2).fit(corpus.counts),
        "hdp": lambda: mb.HDPMixture(n_iter=6).fit(corpus.counts),
        "hdp gaussian": lambda: mb.HDPMixture("gaussian", n_iter=6).fit(points, groups=groups),
        "tree": lambda: mb.HierarchicalMixture(2, n_iter=6).fit(tree_points),
        "tree margins": lambda: mb.HierarchicalMixture(2, n_iter=6, margin_weight=1.0).fit(
            tree_points),
        "tree auto": lambda: mb.HierarchicalMixture("auto", n_iter=3).fit(tree_points),
        "tree full": lambda: mb.HierarchicalMixture(2, n_iter=6, covariance_type="full").fit(
            tree_points),
    }


@pytest.mark.parametrize("kind", list(_fitted_models()))
def test_every_fitted_attribute_survives_the_round_trip(tmp_path, kind):
    """Whatever a model holds after its fit (every public attribute ending in _, the ones
    save writes and load's schema checks) comes back from the file equal, value for value:
    a field that load forgets or restores wrongly fails here, whichever model it belongs to."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short chains' convergence warnings
        model = _fitted_models()[kind]()
    loaded = mb.load(mb.save(model, tmp_path / "m"))
    fitted = {k for k in vars(model) if k.endswith("_") and not k.startswith("_")}
    assert fitted == {k for k in vars(loaded) if k.endswith("_") and not k.startswith("_")}
    for key in sorted(fitted):
        mine, theirs = getattr(model, key), getattr(loaded, key)
        if isinstance(mine, np.ndarray):
            assert theirs.dtype == mine.dtype and theirs.shape == mine.shape, key
            for field in mine.dtype.names or [None]:  # structured: NaN-aware per field
                np.testing.assert_array_equal(theirs if field is None else theirs[field],
                                              mine if field is None else mine[field],
                                              err_msg=f"{key} {field or ''}")
        elif isinstance(mine, float) and np.isnan(mine):
            assert np.isnan(theirs), key
        else:
            assert theirs == pytest.approx(mine, nan_ok=True) if isinstance(mine, (dict, float)) \
                else theirs == mine, key


def test_save_to_a_folder_or_unwritable_folder_says_so(tmp_path, monkeypatch):
    """save(model, folder) wrote folder.npz beside it (which load(folder) refused); a folder
    named m.npz or an unwritable folder failed naming mkstemp's temporary file."""
    import tempfile

    X = np.random.default_rng(0).normal(size=(30, 2))
    model = mb.VariationalGaussianMixture(2, random_state=0).fit(X)
    with pytest.raises(IsADirectoryError, match="path: .* is a folder; name the file .*model.npz"):
        mb.save(model, tmp_path)
    assert not os.path.exists(f"{tmp_path}.npz")
    (tmp_path / "m.npz").mkdir()
    with pytest.raises(IsADirectoryError, match=r"path: .*m\.npz' is a folder, not a file"):
        mb.save(model, tmp_path / "m")
    with pytest.raises(TypeError, match="path must be a path"):
        mb.save(model, 5)

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(tmp_path / ".mixbayes-x.npz.tmp"))

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    with pytest.raises(PermissionError, match=r"path: cannot write .*g\.npz'.*not writable") as err:
        mb.save(model, tmp_path / "g")
    assert ".mixbayes-" not in str(err.value)
