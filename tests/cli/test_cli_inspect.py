"""``mixbayes inspect``: a few lines on each kind of saved model, one clear error on a bad file."""

import json

import numpy as np
import pytest

import mixbayes as mb
from mixbayes.cli import main


def _inspect(capsys, *args):
    status = main(["inspect", *map(str, args)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize("kind, name, size, fit", [
    ("dmm", "DirichletMultinomialMixture", "60 documents x 30 terms -> 3 clusters",
     "fit: ELBO {elbo_:.6g} after {n_iter_} iterations, converged"),
    ("gmm", "VariationalGaussianMixture", "90 points x 3 features -> 3 components",
     "fit: ELBO {elbo_:.6g} after {n_iter_} iterations, converged"),
    ("topics", "TopicModel", "60 documents x 30 terms -> 3 topics",
     "fit: log posterior {log_posterior_:.6g} after {n_iter_} iterations, converged"),
    ("hdp", "HDPMixture", "60 documents x 30 terms -> {n_components_} clusters",
     "fit: 1 chain x 6 sweeps; final log joint"),
])
def test_each_kind_in_a_few_lines(capsys, saved, kind, name, size, fit):
    paths, models, _, _ = saved
    model = models[kind]
    status, out, err = _inspect(capsys, paths[kind], "--top", "4")
    assert status == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith(f"{paths[kind]}: {name}, ")
    assert f"saved by mixbayes {mb.__version__} (file format 1)" in lines[0]
    assert lines[1].startswith("settings: ") and "random_state=0" in lines[1]
    if kind == "hdp":  # a prior's (shape, rate) by its values, not "array of 2"
        assert "top_concentration_prior=auto (Gamma(1, 0.1))" in lines[1]
        assert "top_concentration=auto (1)" in lines[1]
    assert lines[2].startswith("size: " + size.format(**vars(model)))
    assert lines[3].startswith(fit.format(**vars(model)))
    if kind == "gmm":
        means = [line for line in lines if line.startswith("component ")]
        # the components in use, by weight; one line for the one switched off
        assert len(means) == model.n_effective_components_ == 2
        assert lines[-1].startswith("1 component switched off (less than half a point")
        k = int(np.argmax(model.weights_))
        assert means[0].startswith(f"component {k}: weight {model.weights_[k]:.3f}, mean (")
        return
    assert lines[4].startswith("top terms by probability (column numbers")
    columns = model.top_words(np.arange(30), n=4)
    shown = {int(line.split()[1]): line.split(": ")[1].split() for line in lines[5:]}
    assert shown == {k: [str(c) for c in columns[k]] for k in shown}
    assert len(shown) == (model.n_components_ if kind == "hdp" else 3)
    assert len(lines) == 5 + len(shown)


def test_a_gaussian_mixture_lists_the_components_in_use_and_counts_the_rest(capsys, tmp_path):
    """n_components=10 on three clusters: the components in use by weight, then one line for
    the ones switched off (they listed one by one, each at the prior mean, weight 0.001)."""
    X = mb.datasets.make_gaussian_mixture(150, 3, 3, random_state=0)[0]
    model = mb.VariationalGaussianMixture(10).fit(X)
    mb.save(model, tmp_path / "m.npz")
    status, out, err = _inspect(capsys, tmp_path / "m.npz")
    assert status == 0 and err == ""
    listed = [int(line.split()[1][:-1]) for line in out.splitlines()
              if line.startswith("component ")]
    used = model.n_effective_components_
    assert 1 < used < 10 and len(listed) == used
    assert listed == list(np.argsort(-model.weights_, kind="stable")[:used])
    off = np.setdiff1d(np.arange(10), listed)
    assert out.splitlines()[-1] == (
        f"{10 - used} components switched off (less than half a point each, weight at most "
        f"{model.weights_[off].max():.3g})")


def test_vocabulary_names_the_terms(capsys, saved):
    paths, models, corpus, folder = saved
    status, out, _ = _inspect(capsys, paths["topics"], "--vocabulary", folder / "vocab.txt")
    assert status == 0
    words = models["topics"].top_words(corpus.vocabulary)
    for k in range(3):
        assert f"(usage {models['topics'].usage_[k]:.3f}): {' '.join(words[k])}" in out
    (folder / "short.txt").write_text("a\nb\n")
    status, _, err = _inspect(capsys, paths["topics"], "--vocabulary", folder / "short.txt")
    assert status == 1 and "lists 2 terms but the model has 30" in err


def _error(capsys, path, *fragments):
    status, out, err = _inspect(capsys, path)
    assert status == 1 and out == ""
    assert err.startswith("mixbayes: error: ") and err.count("\n") == 1, err
    for fragment in fragments:
        assert fragment in err


def test_bad_files_are_one_clear_error(capsys, saved, tmp_path):
    paths = saved[0]
    _error(capsys, tmp_path / "none.npz", "no such file")
    text = tmp_path / "notes.npz"
    text.write_text("not a model\n")
    _error(capsys, text, "model file: '" + str(text) + "' is not a model saved by mixbayes")
    foreign = tmp_path / "foreign.npz"
    np.savez(foreign, x=np.arange(3))
    _error(capsys, foreign, "is not a model saved by mixbayes (no __meta__ entry)")
    pickled = tmp_path / "pickled.npz"
    np.savez(pickled, __meta__=np.array([{"a": 1}], dtype=object))
    _error(capsys, pickled, "pickled objects, which are never loaded")
    # another version: a newer file format, and an unknown class
    with np.load(paths["dmm"]) as data:
        arrays = {k: data[k] for k in data.files}
    meta = json.loads(str(arrays["__meta__"]))
    for change, fragment in [(dict(format=3), "written by a newer mixbayes (format 3)"),
                             (dict(cls="Tree"), "unknown model class 'Tree'")]:
        arrays["__meta__"] = np.asarray(json.dumps({**meta, **change}))
        other = tmp_path / "other.npz"
        np.savez(other, **arrays)
        _error(capsys, other, fragment)


def test_every_savable_kind_is_described(capsys, saved):
    """Every class save/load knows has its lines (the tree model once ended in a KeyError)."""
    from mixbayes.persist import _registry

    paths, models, _, _ = saved
    assert {type(m).__name__ for m in models.values()} == set(_registry())
    tree = models["tree"]
    status, out, err = _inspect(capsys, paths["tree"])
    lines = out.splitlines()
    assert status == 0 and err == ""
    branches = int(np.sum(tree.node_parent_ == 0))
    assert lines[2].startswith(f"size: 90 points x 3 features -> depth 2, a tree of {branches} "
                               "top-level branch")
    assert lines[2].endswith(f"{tree.n_components_} component"
                             + ("" if tree.n_components_ == 1 else "s") + " (tied covariances)")
    assert lines[3].startswith(f"fit: 1 chain x 6 sweeps; best regularised complete-data "
                               f"log-likelihood {tree.best_rcdll_:.6g}")
    nodes = [line for line in lines[4:] if line.startswith("node ")]
    biggest = max(range(1, tree.node_size_.size), key=lambda z: tree.node_size_[z])
    assert nodes and nodes[0].startswith(f"node {biggest} (level ")
    assert nodes[0].endswith(f"{tree.node_size_[biggest]} points")


def test_tree_with_covariances_says_which(capsys, tmp_path):
    X, _ = mb.datasets.make_tree_data(40, kind="nested", random_state=0)
    tree = mb.HierarchicalMixture(n_iter=4, covariance_type="diag").fit(X)
    status, out, _ = _inspect(capsys, mb.save(tree, tmp_path / "tree"))
    assert status == 0 and out.splitlines()[2].endswith("(diag covariances)")
    known = mb.HierarchicalMixture(n_iter=4, covariance_type="known").fit(X)  # said nothing
    status, out, _ = _inspect(capsys, mb.save(known, tmp_path / "known"))
    assert status == 0 and out.splitlines()[2].endswith(
        f"(one known variance, {known.observation_variance_:.3g})")


def test_a_missing_model_file_is_named_as_the_model(capsys, tmp_path):
    """inspect, report and predict said 'path: no such file or folder' for a MODEL that is not
    there (load's own argument name, which the command line never shows): now 'model file:'."""
    from mixbayes.cli import main

    missing = str(tmp_path / "none.npz")
    for args in (["inspect", missing], ["report", missing],
                 ["predict", missing, str(tmp_path / "x.npy"), "-o", "-"]):
        assert main(args) == 1
        err = capsys.readouterr().err
        assert err == f"mixbayes: error: model file: no such file or folder: {missing!r}.\n", err


def test_an_hdp_chain_with_a_high_r_hat_is_not_called_settled(capsys, tmp_path, saved):
    """One HDP chain whose trend tests did not warn but whose split R-hat was 1.27 read
    "R-hat of the log joint 1.27; settled (no convergence warning)" (a new user's tryout)."""
    import copy

    model = copy.deepcopy(saved[1]["hdp"])  # (the fixture's model is shared)
    model.rhat_ = model.rhat_.copy()
    model.rhat_["log_joint"] = 1.27
    model.convergence_warnings_ = []
    status, out, _ = _inspect(capsys, mb.save(model, tmp_path / "hdp"))
    assert status == 0
    assert out.splitlines()[3].endswith("R-hat of the log joint 1.27; NOT settled: its split "
                                        "R-hat is above 1.1 (raise n_iter)")
    model.rhat_["log_joint"] = 1.02
    status, out, _ = _inspect(capsys, mb.save(model, tmp_path / "hdp2"))
    assert out.splitlines()[3].endswith("1.02; settled (no convergence warning)")


def test_the_vocabulary_line_of_a_model_of_counts_reads_once(capsys, tmp_path):
    """A model fitted to counts said "vocabulary: 30 terms (saved), read as counts read as
    given"; the line now says where the terms came from once."""
    simulated, _ = mb.datasets.make_dmm_corpus(40, 30, 2, random_state=0)
    simulated.write(tmp_path / "docs", format="mtx")
    corpus = mb.read_corpus(tmp_path / "docs" / "counts.mtx")  # counts, read as given
    model = mb.DirichletMultinomialMixture(2, random_state=0).fit(corpus.counts)
    path = mb.save(model, tmp_path / "model.npz", vocabulary=corpus)
    status, out, _ = _inspect(capsys, path)
    assert status == 0
    line = next(line for line in out.splitlines() if line.startswith("vocabulary: "))
    assert line == "vocabulary: 30 terms (saved), from counts read as given"


def test_a_topic_model_chosen_by_select_counts_the_scans_iterations(capsys, tmp_path):
    """inspect said 'after 30 iterations' where summary.json and the selection table said 53
    (the scan's coarse fit, then its continuation): it now says both, as the report does."""
    import json

    import scipy.io

    corpus, _ = mb.datasets.make_topic_corpus(80, 60, 4, random_state=0)
    scipy.io.mmwrite(str(tmp_path / "c.mtx"), corpus.counts)
    assert main(["topics", str(tmp_path / "c.mtx"), "--select", "2:5", "--out",
                 str(tmp_path / "o"), "-q"]) == 0
    capsys.readouterr()
    total = json.loads((tmp_path / "o" / "summary.json").read_text())["n_iter"]
    model = mb.load(tmp_path / "o" / "model.npz")
    status, out, _ = _inspect(capsys, tmp_path / "o" / "model.npz")
    assert status == 0
    line = out.splitlines()[3]
    assert line.startswith(f"fit: log posterior {model.log_posterior_:.6g} after "
                           f"{model.n_iter_} iterations")
    assert total > model.n_iter_  # a K the scan refined (72 against 62 here)
    assert line.endswith(f"{total} in all, as in the selection table)")
