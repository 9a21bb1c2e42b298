"""The mixbayes command end to end, in a subprocess, on small files."""

import json
import re

import numpy as np
import pytest

import mixbayes as mb
from _support.cli import run as _run


def _assert_written(out, names):
    for name in names:
        assert (out / name).stat().st_size > 0, name


@pytest.fixture
def small_corpus(tmp_path):
    corpus, _ = mb.datasets.make_dmm_corpus(120, 50, 3, mean_length=30, random_state=0)
    corpus.write(tmp_path / "data", format="mtx")
    return tmp_path / "data" / "counts.mtx", corpus


def test_cluster_end_to_end(tmp_path, small_corpus):
    path, corpus = small_corpus
    result = _run("cluster", str(path), "--model", "dmm", "-k", "3", "--out", "out", "-q",
                  cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = tmp_path / "out"
    _assert_written(out, ("assignments.csv", "clusters.json", "model.npz", "summary.json",
                          "convergence.png", "top_words.png"))
    summary = json.loads((out / "summary.json").read_text())
    assert summary["scores"]["nmi"] > 0.9  # labels.txt beside the matrix were picked up
    assert "NMI" in result.stdout and "cluster" in result.stdout
    clusters = json.loads((out / "clusters.json").read_text())
    assert sum(c["size"] for c in clusters) == 120
    lines = (out / "assignments.csv").read_text().splitlines()
    assert lines[0] == "id,cluster,probability,label" and len(lines) == 121
    model = mb.load(out / "model.npz")
    np.testing.assert_array_equal(model.predict(corpus.counts), model.labels_)


def test_cluster_with_selection_and_text_input(tmp_path):
    corpus, _ = mb.datasets.make_dmm_corpus(90, 40, 2, mean_length=20, random_state=1)
    corpus.write(tmp_path / "docs.txt", format="lines")
    (tmp_path / "gold.txt").write_text("\n".join(map(str, corpus.labels)) + "\n")
    result = _run("cluster", "docs.txt", "--select", "1:4", "--labels", "gold.txt",
                  "--out", "sel", "-q", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    summary = json.loads((tmp_path / "sel" / "summary.json").read_text())
    assert summary["best_k"] == 2 and len(summary["selection"]) == 4
    assert (tmp_path / "sel" / "selection.png").exists()
    # 2 is inside 1:4: no note on the ELBO's choice (the held-out likelihood is a near tie here,
    # K = 4 against 2 by 0.2-0.7 nats over 9 held-out documents depending on the chain, and may
    # get its own note)
    assert "ELBO + log K! is" not in result.stdout
    # the whole curve is printed, both criteria
    assert "heldout_log_likelihood" in result.stdout and "chosen K = 2" in result.stdout
    # a range above the truth: whichever end wins, the user is told to widen it
    edge = _run("cluster", "docs.txt", "--select", "3:4", "--out", "edge", "-q", cwd=tmp_path)
    assert edge.returncode == 0, edge.stderr
    assert "of the range (3:4)" in edge.stdout and "widen the range" in edge.stdout
    # a stepped range: every second K, and the note names the last K searched
    stepped = _run("cluster", "docs.txt", "--select", "3:8:2", "--out", "step", "-q",
                   cwd=tmp_path)
    assert stepped.returncode == 0, stepped.stderr
    summary = json.loads((tmp_path / "step" / "summary.json").read_text())
    assert [row["k"] for row in summary["selection"]] == [3, 5, 7]
    assert summary["settings"]["select"] == "3:7:2"
    assert "of the range (3:7)" in stepped.stdout


@pytest.mark.parametrize("args,message", [
    (("cluster", "missing.mtx"), "no such file"),
    (("cluster", "bad.txt", "-k", "5"), "-k must"),
])
def test_errors_are_one_line_and_nonzero(tmp_path, args, message):
    (tmp_path / "bad.txt").write_text("alpha beta\ngamma delta\n")
    result = _run(*args, "-q", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_usage_error_exit_code(tmp_path):
    for bad in ("5:2", "2:9:0", "2:4:6:8"):
        result = _run("cluster", "x.mtx", "--select", bad, cwd=tmp_path)
        assert result.returncode == 2 and "--select" in result.stderr


def test_demo_runs_on_embedded_corpus(tmp_path):
    result = _run("demo", "--out", "demo", "-q", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    summary = json.loads((tmp_path / "demo" / "summary.json").read_text())
    assert summary["n_documents"] == 3891 and summary["scores"]["nmi"] > 0.9


@pytest.mark.parametrize("suffix", [".csv", ".npy"])
def test_gmm_end_to_end(tmp_path, suffix):
    X, truth = mb.datasets.make_gaussian_mixture(300, 3, 3, random_state=2)
    path = tmp_path / f"points{suffix}"
    if suffix == ".csv":
        np.savetxt(path, X, delimiter=",", header="a,b,c", comments="")
    else:
        np.save(path, X)
    np.savetxt(tmp_path / "gold.txt", truth.labels, fmt="%d")
    result = _run("cluster", path.name, "--model", "gmm", "-k", "6", "--labels", "gold.txt",
                  "--out", "g", "-q", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = tmp_path / "g"
    _assert_written(out, ("assignments.csv", "clusters.json", "model.npz", "summary.json",
                          "convergence.png", "scatter.png"))
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_effective_components"] == 3 and summary["scores"]["ari"] > 0.95
    model = mb.load(out / "model.npz")
    np.testing.assert_array_equal(model.predict(X), model.labels_)


def test_gmm_rejects_non_numeric_input(tmp_path):
    (tmp_path / "words.csv").write_text("a,b\nx,y\nz,w\n")
    result = _run("cluster", "words.csv", "--model", "gmm", "-q", cwd=tmp_path)
    assert result.returncode == 1
    assert "line 2 is not numbers ('x' ...): it looks like text" in result.stderr
    assert "--model dmm" in result.stderr


def test_hdp_end_to_end(tmp_path):
    corpus, truth = mb.datasets.make_hdp_data(30, 40, n_words=30, random_state=0)
    corpus.write(tmp_path / "data", format="mtx")
    labels = tmp_path / "labels.txt"
    labels.write_text("\n".join(str(v) for v in truth.group_labels) + "\n")
    result = _run("cluster", str(tmp_path / "data" / "counts.mtx"), "--model", "hdp",
                  "--n-iter", "15", "--gamma0", "3", "--labels", str(labels), "--out", "out",
                  "-q", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = tmp_path / "out"
    _assert_written(out, ("assignments.csv", "clusters.json", "trace.csv", "trace.png",
                          "summary.json", "model.npz"))
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_documents"] == 30 and summary["n_clusters"] >= 2
    clusters = json.loads((out / "clusters.json").read_text())  # size: documents, as dmm's
    assert sum(c["size"] for c in clusters) == 30 and sum(c["tokens"] for c in clusters) > 30
    assert summary["scores"]["nmi"] > 0.3
    trace = (out / "trace.csv").read_text().splitlines()
    assert trace[0].endswith(",nmi") and len(trace) == 16
    assert "NMI" in result.stdout
    model = mb.load(out / "model.npz")
    assert model.n_components_ == summary["n_clusters"]
    bad = _run("cluster", str(tmp_path / "data" / "counts.mtx"), "--model", "hdp", "-k", "3",
               cwd=tmp_path)
    assert bad.returncode != 0 and "chooses the number of clusters itself" in bad.stderr


def test_hdp_points_end_to_end(tmp_path):
    """Points within groups (--groups): the Gaussian kernel, its outputs, and clear errors."""
    rng = np.random.default_rng(0)
    means = np.array([[-4.0, 0.0], [0.0, 4.0], [4.0, 0.0]])
    groups = np.repeat(np.arange(12), 25)
    truth = np.concatenate([rng.choice(3, 25, p=rng.dirichlet(np.ones(3))) for _ in range(12)])
    points = means[truth] + rng.normal(0.0, 0.5, (truth.size, 2))
    np.savetxt(tmp_path / "points.csv", points, delimiter=",", header="x,y", comments="")
    (tmp_path / "groups.txt").write_text("\n".join(f"site{g}" for g in groups) + "\n")
    (tmp_path / "labels.txt").write_text("\n".join(str(v) for v in truth) + "\n")
    result = _run("cluster", "points.csv", "--model", "hdp", "--groups", "groups.txt",
                  "--labels", "labels.txt", "--n-iter", "20", "--alpha0-prior", "1", "1",
                  "--gamma0", "1", "--out", "out", "-q", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = tmp_path / "out"
    _assert_written(out, ("assignments.csv", "clusters.json", "trace.csv", "trace.png",
                          "summary.json", "model.npz"))
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_points"] == 300 and summary["n_groups"] == 12
    assert sum(c["size"] for c in json.loads((out / "clusters.json").read_text())) == 300
    assert summary["scores"]["nmi"] > 0.8
    rows = (out / "assignments.csv").read_text().splitlines()
    assert rows[0] == "id,group,cluster,label" and rows[1].startswith("0,site0,")
    trace = np.genfromtxt(out / "trace.csv", delimiter=",", names=True)
    assert trace.size == 20 and np.all(trace["gamma0"] == 1.0)  # fixed: --gamma0, no prior
    assert np.ptp(trace["alpha0"]) > 0  # resampled every sweep under its Gamma(1, 1) prior
    assert summary["settings"]["alpha0_prior"] == [1.0, 1.0]
    assert summary["settings"]["alpha0_posterior_mean"] > 0
    assert "gamma0_posterior_mean" not in summary["settings"]
    assert summary["settings"]["gamma0_prior"] is None
    assert mb.load(out / "model.npz").n_components_ == summary["n_clusters"]
    (tmp_path / "short.txt").write_text("a\nb\n")
    bad = _run("cluster", "points.csv", "--model", "hdp", "--groups", "short.txt", cwd=tmp_path)
    assert bad.returncode != 0 and "'short.txt' holds 2 entries but the input has 300 points" in bad.stderr
    bad = _run("cluster", "points.csv", "--model", "gmm", "--groups", "groups.txt", cwd=tmp_path)
    assert bad.returncode != 0 and "--groups applies to --model hdp" in bad.stderr


def test_tree_end_to_end(tmp_path, capsys, monkeypatch):
    """--model tree on a points CSV with a header: the path of every point, the tree as JSON
    and Newick (the same nodes), the figures, the trace, a model that loads, scores against
    the leaf labels; a note when the features' spreads differ widely; options of other models
    refused, tree options refused elsewhere."""
    X, truth = mb.datasets.make_tree_data(120, kind="nested", random_state=1)
    np.savetxt(tmp_path / "points.csv", X, delimiter=",", header="height,weight", comments="")
    np.savetxt(tmp_path / "leaves.txt", truth.paths[:, 1], fmt="%d")
    result = _run("cluster", "points.csv", "--model", "tree", "--depth", "2", "--n-iter", "30",
                  "--labels", "leaves.txt", "--out", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = tmp_path / "out"
    rows = (out / "assignments.csv").read_text().splitlines()
    assert rows[0] == "id,leaf,level1,level2,label" and len(rows) == 121
    tree = json.loads((out / "tree.json").read_text())
    newick = (out / "tree.newick").read_text().strip()
    assert newick.endswith("n0;") and newick.count("(") == newick.count(")")
    assert sorted(int(name) for name in re.findall(r"n(\d+)", newick)) == [
        node["id"] for node in tree["nodes"]]
    assert set(tree["components"][0]["mean"]) == {"height", "weight"}
    leaves = {int(r.split(",")[1]) for r in rows[1:]}
    parents = {node["parent"] for node in tree["nodes"]}
    assert leaves and not leaves & parents  # every point sits at a leaf
    summary = json.loads((out / "summary.json").read_text())
    assert summary["settings"]["depth"] == 2 and summary["settings"]["n_iter"] == 30
    assert summary["settings"]["margin_weight"] == 0.0
    assert summary["scores"]["nmi"] > 0.7 and 0 < summary["dendrogram_purity"] <= 1
    assert f"dendrogram purity {summary['dendrogram_purity']:.3f}" in result.stdout
    assert summary["dendrogram_purity_sampled_tree"] <= summary["dendrogram_purity"]
    for figure in ("tree.png", "trace.png", "dendrogram.png"):
        assert (out / figure).stat().st_size > 10_000
    assert len((out / "trace.csv").read_text().splitlines()) == 31
    assert summary["settings"]["covariance_type"] == "tied"  # one shared matrix, the default
    covariances = [np.asarray(c["covariance"]) for c in tree["components"]]
    assert covariances[0].shape == (2, 2) and all(np.array_equal(c, covariances[0])
                                                  for c in covariances)
    linkage = np.loadtxt(out / "linkage.csv", delimiter=",", skiprows=1)
    assert linkage.shape == (119, 4) and linkage[-1, 3] == 120
    full = (out / "dendrogram.newick").read_text().strip()
    assert sorted(int(p) for p in re.findall(r"p(\d+):", full)) == list(range(120))
    loaded = mb.load(out / "model.npz")
    assert np.array_equal(loaded.labels_, [int(r.split(",")[1]) for r in rows[1:]])
    assert "spreads differ" not in result.stdout + result.stderr
    # one feature in other units: with round components (known) a note that the widest
    # feature decides; the tied default whitens the points, so units do not matter to it
    X[:, 1] *= 1000.0
    np.savetxt(tmp_path / "grams.csv", X, delimiter=",", header="height,weight", comments="")
    result = _run("cluster", "grams.csv", "--model", "tree", "--n-iter", "2", "--out", "g",
                  "--covariance-type", "known", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "note: the features' spreads differ" in result.stdout + result.stderr
    assert "(weight " in result.stdout + result.stderr
    # a constant column beside them (its spread of 0 was the least, and hid the note)
    np.savetxt(tmp_path / "batch.csv", np.column_stack([X, np.full(len(X), 5.0)]),
               delimiter=",", header="height,weight,batch", comments="")
    result = _run("cluster", "batch.csv", "--model", "tree", "--n-iter", "2", "--out", "g3",
                  "--covariance-type", "known", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    printed = result.stdout + result.stderr
    assert "note: the features' spreads differ" in printed and "(weight " in printed
    assert "inf-fold" not in printed
    result = _run("cluster", "grams.csv", "--model", "tree", "--n-iter", "2", "--out", "g2",
                  cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "spreads differ" not in result.stdout + result.stderr
    # --depth auto: the depth chosen and every depth's evidence, printed and in the summary
    result = _run("cluster", "points.csv", "--model", "tree", "--depth", "auto", "--n-iter",
                  "3", "--out", "auto", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    summary = json.loads((tmp_path / "auto" / "summary.json").read_text())
    assert [r["depth"] for r in summary["depth_scores"]] == [1, 2, 3, 4, 5]
    best = max(summary["depth_scores"], key=lambda r: r["log_evidence"])
    assert summary["depth"] == best["depth"] and summary["settings"]["depth"] == "auto"
    assert f"depth auto: {best['depth']} has the highest evidence" in result.stdout
    for args, message in [
        (("--model", "tree", "-k", "3"), "-k applies to --model dmm or gmm, not --model tree"),
        (("--model", "gmm", "--depth", "2"), "--depth applies to --model tree"),
        (("--model", "tree", "--margin-weight", "-1"), "--margin-weight"),
        (("--model", "tree", "--depth", "0"), "--depth"),
    ]:
        from mixbayes.cli import main

        monkeypatch.chdir(tmp_path)
        try:
            status = main(["cluster", "points.csv", *args, "--out", "bad"])
        except SystemExit as stop:  # argparse's own errors
            status = stop.code
        stderr = capsys.readouterr().err
        assert status != 0 and message in stderr, (args, stderr)
        assert stderr.count("\n") == 1


def test_points_id_column_is_not_a_feature(tmp_path):
    # an "id" column of numbers was clustered as a feature (means printed "id 129"), one of
    # names refused the file as text
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(10, 2)), rng.normal(size=(10, 2)) + [6, 0]])
    for name, ids in (("numbers.csv", [f"{100 + 7 * i}" for i in range(20)]),
                      ("names.csv", [f"p{i}" for i in range(20)])):
        (tmp_path / name).write_text("id,height,weight\n" + "".join(
            f"{i},{x},{y}\n" for i, (x, y) in zip(ids, X)))
        result = _run("cluster", name, "--model", "gmm", "-k", "2", "--n-init", "1", "--out",
                      name[:-4], cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert "column 1 ('id') identifies the points" in result.stdout
        summary = json.loads((tmp_path / name[:-4] / "summary.json").read_text())
        assert summary["features"] == ["height", "weight"] and summary["n_samples"] == 20


def test_gmm_on_fewer_points_than_the_default_k(tmp_path):
    # -k defaults to 10; six points were refused with "-k must be at most the number of
    # points (6); got 10" although no -k was given
    (tmp_path / "six.csv").write_text("x\n1\n2\n3\n10\n11\n12\n")
    result = _run("cluster", "six.csv", "--model", "gmm", "--n-init", "1", "--out", "o",
                  cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "-k lowered from its default 10 to the number of points" in result.stdout
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["settings"][
        "n_components"] == 6
    result = _run("cluster", "six.csv", "--model", "gmm", "-k", "7", "--out", "p", cwd=tmp_path)
    assert result.returncode == 1 and "-k must be at most the number of points (6); got 7" in (
        result.stderr)


def test_document_input_errors_name_the_input(tmp_path):
    # read_corpus's errors began "path:", a name the command line never shows
    (tmp_path / "image.csv").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 20)
    (tmp_path / "one.csv").write_text("1,2,3\n")
    for name, words in (("image.csv", "is not a text file"), ("one.csv", "under its header")):
        result = _run("cluster", name, "--out", "o", cwd=tmp_path)
        assert result.returncode == 1
        assert result.stderr.startswith("mixbayes: error: input: ") and words in result.stderr


def test_points_from_uci_tables_and_a_single_point(tmp_path):
    # the UCI repository's whitespace tables (iris.data) were refused by their name; a single
    # point failed with "X has 1 sample(s) (shape=(1, 2)) ...", naming no file
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(10, 2)), rng.normal(size=(10, 2)) + 6])
    np.savetxt(tmp_path / "iris.data", X, fmt="%.3f")
    result = _run("cluster", "iris.data", "--model", "gmm", "-k", "2", "--n-init", "1",
                  "--out", "o", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    (tmp_path / "one.csv").write_text("1,2\n")
    for model in ("gmm", "tree"):
        result = _run("cluster", "one.csv", "--model", model, "--out", model, cwd=tmp_path)
        assert result.returncode == 1
        assert "input: 'one.csv' holds a single point; clustering needs at least 2" in (
            result.stderr)


def test_inspect_and_report_of_a_folder(tmp_path):
    # a folder given as MODEL ended in "[Errno 21] Is a directory: 'run'"
    (tmp_path / "run").mkdir()
    for command in ("inspect", "report"):
        result = _run(command, "run", cwd=tmp_path)
        assert result.returncode == 1
        assert "'run' is a folder, not a model saved by mixbayes" in result.stderr


def test_report_without_corpus_names_the_points_columns_as_the_fit_saved_them(tmp_path):
    """``mixbayes report RUN`` of points (no --corpus) labels the features by the header the
    fit read, which the run saved beside the model (it said x1, x2)."""
    (tmp_path / "pts.csv").write_text("length,width\n1,2\n1.1,2.1\n0.9,1.9\n5,5\n5.2,5.1\n"
                                      "4.9,5\n")
    assert _run("cluster", "pts.csv", "--model", "tree", "--n-iter", "5", "--out", "run",
                cwd=tmp_path).returncode == 0
    result = _run("report", "run", "--out", "r.html", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert '"features":["length","width"]' in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_tree_with_full_covariances(tmp_path):
    """--model tree --covariance-type full: the components' covariance matrices in tree.json
    and in the saved model; 'known' is refused for gmm with a reason."""
    X, _ = mb.datasets.make_tree_data(60, kind="nested", random_state=1)
    np.savetxt(tmp_path / "points.csv", X, delimiter=",")
    result = _run("cluster", "points.csv", "--model", "tree", "--covariance-type", "full",
                  "--n-iter", "5", "--out", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    tree = json.loads((tmp_path / "out" / "tree.json").read_text())
    assert np.shape(tree["components"][0]["covariance"]) == (2, 2)
    model = mb.load(tmp_path / "out" / "model.npz")
    assert model.covariance_type == "full" and model.covariances_.shape[1:] == (2, 2)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["settings"]["covariance_type"] == "full"
    bad = _run("cluster", "points.csv", "--model", "gmm", "--covariance-type", "known",
               cwd=tmp_path)
    assert bad.returncode != 0 and "known applies to --model tree only" in bad.stderr


def test_tree_notes_that_a_chain_has_not_settled_in_summary_json_too(tmp_path, capsys,
                                                                    monkeypatch):
    """The R-hat note was printed but left out of summary.json's notes (found by the
    new-user tryout); here the fit's split R-hat is set to 1.67 after a real fit."""
    from mixbayes.cli import main
    from mixbayes.tree.model import HierarchicalMixture

    fit = HierarchicalMixture.fit

    def unsettled_fit(self, X, y=None):
        fit(self, X)
        self.rhat_ = dict(self.rhat_, rcdll=1.67)
        return self

    monkeypatch.setattr(HierarchicalMixture, "fit", unsettled_fit)
    X, _ = mb.datasets.make_tree_data(60, kind="nested", random_state=1)
    np.savetxt(tmp_path / "points.csv", X, delimiter=",", header="a,b", comments="")
    monkeypatch.chdir(tmp_path)
    assert main(["cluster", "points.csv", "--model", "tree", "--n-iter", "10", "--out",
                 "out", "-q"]) == 0
    note = ("the chain has not settled (split R-hat 1.67 > 1.1 of the regularised complete-data "
            "log-likelihood, rcdll); raise --n-iter")
    assert f"note: {note}" in capsys.readouterr().out
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["notes"] == [note]


def test_cluster_model_topics_points_to_the_topics_command(capsys):
    """`cluster --model topics` named only the four choices (found by the new-user tryout)."""
    from mixbayes.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["cluster", "docs.txt", "--model", "topics"])
    assert stop.value.code == 2
    assert "the topic model is a command of its own: mixbayes topics INPUT" in \
        capsys.readouterr().err


def test_an_option_the_command_lacks_points_to_that_commands_help(capsys):
    """`topics ... --model dmm` said 'see mixbayes --help', which lists no command's options
    (found by the new-user tryout)."""
    from mixbayes.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["topics", "docs.txt", "-k", "3", "--model", "dmm"])
    assert stop.value.code == 2
    assert capsys.readouterr().err == ("mixbayes: error: unrecognized arguments: --model dmm "
                                       "(see mixbayes topics --help)\n")


def test_a_tree_of_one_leaf_is_noted(tmp_path, capsys, monkeypatch):
    """Iris, full covariances, C = 1, two chains of 30 sweeps, seed 0: the kept state is one
    path whose two components hold the structure (a legitimate state; found by the new-user
    tryout, where it came with no word of explanation and NMI 0 at both levels)."""
    from sklearn.datasets import load_iris

    from mixbayes.cli import main

    iris = load_iris()
    np.savetxt(tmp_path / "iris.csv", iris.data, delimiter=",", header="a,b,c,d", comments="")
    monkeypatch.chdir(tmp_path)
    assert main(["cluster", "iris.csv", "--model", "tree", "--covariance-type", "full",
                 "--margin-weight", "1", "--n-iter", "30", "--n-chains", "2", "--out", "out",
                 "-q"]) == 0
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["n_leaves"] == 1 and summary["n_components"] == 2
    note = ("the kept tree is one path: every point in one leaf, the structure only in its 2 "
            "components (dendrogram.png splits them); another --seed or more --n-iter may "
            "grow branches")
    assert summary["notes"] == [note] and f"note: {note}" in capsys.readouterr().out


def test_topics_select_fits_at_the_selection_tolerance(tmp_path, monkeypatch):
    """`topics --select` used TopicModel's prediction tolerance (1e-5) for its fits instead of
    select_n_topics' own default, SELECTION_TOL (3e-6: the evidence reads the curvature at the
    mode); a plain `topics -k` keeps TopicModel's default."""
    from mixbayes.cli import _dask
    from mixbayes.topics.model import TopicModel
    from mixbayes.topics.selection import SELECTION_TOL

    seen = []
    real_select, real_fit = _dask.select_n_topics, _dask.fit

    def select(X, candidates, estimator, args, **options):
        seen.append(estimator.tol)
        return real_select(X, candidates, estimator, args, **options)

    def fit(estimator, X, args):
        seen.append(estimator.tol)
        return real_fit(estimator, X, args)

    monkeypatch.setattr("mixbayes.cli.topics.select_n_topics", select)
    monkeypatch.setattr("mixbayes.cli.topics.fit", fit)
    (tmp_path / "docs.txt").write_text("\n".join(
        ["apple banana cherry apple banana", "dog cat mouse dog cat",
         "apple cherry banana cherry", "cat mouse dog mouse"] * 5) + "\n")
    assert _run("topics", "docs.txt", "--select", "2:3", "--out", "sel", "-q",
                cwd=tmp_path).returncode == 0
    assert _run("topics", "docs.txt", "-k", "2", "--out", "one", "-q",
                cwd=tmp_path).returncode == 0
    assert seen == [SELECTION_TOL, TopicModel().tol]
