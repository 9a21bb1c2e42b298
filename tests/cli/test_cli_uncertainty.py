"""``--uncertainty`` (issue 26): the posterior of the partition of a run, in process."""

import csv
import json

import numpy as np
import pytest

import mixbayes as mb
from mixbayes.cli import main


def _rows(path):
    with open(path, newline="") as handle:
        return list(csv.reader(handle))


@pytest.mark.parametrize("model, extra", [("gmm", ["-k", "3"]), ("dmm", ["-k", "3", "--inference",
                                                                          "gibbs"])])
def test_uncertainty_writes_the_partitions_posterior(tmp_path, capsys, model, extra):
    """partition.json (the estimate, the ball and its bounds, P(K)), the estimate and each
    item's certainty as assignments.csv's last columns, similarity.png, one printed line;
    on well-separated data the estimate is the truth."""
    if model == "gmm":
        X, truth = mb.datasets.make_gaussian_mixture(90, 2, 3, separation=8.0, random_state=0)
        np.savetxt(tmp_path / "in.csv", X, delimiter=",")
        labels = truth.labels
        source = "in.csv"
    else:
        corpus, truth = mb.datasets.make_dmm_corpus(90, 40, 3, mean_length=30, random_state=0)
        corpus.write(str(tmp_path / "c"))
        labels, source = truth.labels, "c"
    status = main(["cluster", str(tmp_path / source), "--model", model, *extra,
                   "--uncertainty", "--out", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert status == 0 and "partition (from " in out and "credible ball" in out
    summary = json.loads((tmp_path / "out" / "partition.json").read_text())
    assert summary["n_clusters"] == 3 and summary["loss"] == "vi (bits)"
    ball = summary["credible_ball"]
    assert ball["level"] == 0.95 and ball["mass"] >= 0.95 and ball["radius"] >= 0
    assert sum(summary["n_clusters_posterior"].values()) == pytest.approx(1.0)
    rows = _rows(tmp_path / "out" / "assignments.csv")
    assert rows[0][-2:] == ["point_estimate", "certainty"] and len(rows) == 91
    estimate = [int(r[-2]) for r in rows[1:]]
    assert mb.metrics.ari(labels, estimate) == 1.0
    assert all(0 <= float(r[-1]) <= 1 for r in rows[1:])
    assert (tmp_path / "out" / "similarity.png").stat().st_size > 5_000


def test_uncertainty_of_the_trees_leaves(tmp_path, capsys):
    """The tree's leaves over its kept sweeps; refused where a command has no partition to
    summarise (topics has no --uncertainty)."""
    X, truth = mb.datasets.make_tree_data(60, 2, "nested", branching=(2, 2), leaf_spread=8.0,
                                          parent_spread=30.0, random_state=0)
    np.savetxt(tmp_path / "in.csv", X, delimiter=",")
    status = main(["cluster", str(tmp_path / "in.csv"), "--model", "tree", "--n-iter", "20",
                   "--uncertainty", "--out", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert status == 0 and "the leaves over the kept sweeps" in out
    rows = _rows(tmp_path / "out" / "assignments.csv")
    assert rows[0][-2:] == ["point_estimate", "certainty"]
    estimate = [int(r[-2]) for r in rows[1:]]
    assert mb.metrics.ari(truth.paths[:, 1], estimate) > 0.85
    with pytest.raises(SystemExit) as usage:  # topics takes no --uncertainty: a usage error
        main(["topics", str(tmp_path / "in.csv"), "-k", "2", "--uncertainty"])
    assert usage.value.code == 2 and "unrecognized arguments: --uncertainty" in \
        capsys.readouterr().err


def test_a_certain_partition_has_no_negative_expected_loss(tmp_path, capsys):
    """Every draw the same partition: the expected VI summed to -2e-15 and was printed as
    "least expected VI -0.000 bits" (and written negative); it is 0 in both now."""
    corpus, _ = mb.datasets.make_dmm_corpus(300, 200, 4, random_state=0)
    corpus.write(str(tmp_path / "c"))
    status = main(["cluster", str(tmp_path / "c"), "--model", "dmm", "-k", "4",
                   "--uncertainty", "--out", str(tmp_path / "out"), "-q"])
    out = capsys.readouterr().out
    assert status == 0 and "least expected VI 0.000 bits with 4 clusters" in out
    summary = json.loads((tmp_path / "out" / "partition.json").read_text())
    assert summary["expected_loss"] >= 0 and summary["credible_ball"]["radius"] == 0
