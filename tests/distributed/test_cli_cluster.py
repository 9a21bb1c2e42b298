"""``mixbayes cluster --scheduler ADDRESS`` and ``--workers N``: the same outputs as the fit
in this process, one clear line for a scheduler that cannot be reached."""

import json

import numpy as np
import pytest

pytest.importorskip("distributed", reason='needs pip install "mixbayes[distributed]"')

import mixbayes as mb  # noqa: E402
from mixbayes.cli import _dask  # noqa: E402
from mixbayes.topics.selection import SELECTION_TOL  # noqa: E402
from mixbayes.cli.cluster import gmm as cluster  # noqa: E402  (the Gaussian mixture's run)
from _support.cli import run as _run  # noqa: E402  (tests/ is on pytest's pythonpath)


def _labels(folder):
    """The cluster column of assignments.csv."""
    rows = (folder / "assignments.csv").read_text().splitlines()[1:]
    return np.array([int(row.split(",")[1]) for row in rows])


def test_scheduler_gives_the_in_process_fit(client, tmp_path):
    corpus, _ = mb.datasets.make_dmm_corpus(80, 40, 3, mean_length=20, random_state=0)
    corpus.write(tmp_path / "data", format="mtx")
    result = _run("cluster", "data/counts.mtx", "-k", "3", "--n-init", "1", "-q", "--out", "out",
                  "--scheduler", client.scheduler.address, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # no worker or client logs
    local = mb.DirichletMultinomialMixture(3, n_init=1, random_state=0).fit(corpus.counts)
    np.testing.assert_array_equal(_labels(tmp_path / "out"), local.labels_)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["settings"]["scheduler"] == client.scheduler.address
    assert summary["elbo"] == pytest.approx(local.elbo_, rel=1e-9)


def test_workers_start_a_local_cluster(tmp_path, monkeypatch):
    monkeypatch.setattr(_dask, "PROCESSES", False)  # threads: a worker process takes seconds
    X, _ = mb.datasets.make_gaussian_mixture(60, 2, 3, separation=3.0, random_state=1)
    np.save(tmp_path / "points.npy", X)
    result = _run("cluster", "points.npy", "--model", "gmm", "-k", "4", "--n-init", "1", "-q",
                  "--out", "out", "--workers", "2", cwd=tmp_path)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    local = mb.VariationalGaussianMixture(4, n_init=1, random_state=0).fit(X)
    np.testing.assert_array_equal(_labels(tmp_path / "out"), local.labels_)
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["settings"][
        "workers"] == 2


def test_unreachable_scheduler_is_one_line(tmp_path, monkeypatch):
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setattr(_dask, "CONNECT_SECONDS", 0.5)  # the command waits 10 s
    result = _run("cluster", "any.npy", "--model", "gmm", "--scheduler",
                  f"tcp://127.0.0.1:{port}", "--out", "out", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith(f"mixbayes: error: --scheduler: cannot reach a dask "
                                    f"scheduler at 'tcp://127.0.0.1:{port}'")
    assert result.stderr.count("\n") == 1 and not (tmp_path / "out").exists()


@pytest.mark.parametrize("flags, message", [
    (["--model", "hdp", "--workers", "2"], "--workers applies to --model dmm or gmm, not "
                                           "--model hdp"),
    (["--select", "2:4", "--scheduler", "tcp://h:1"], "--scheduler fits one number of "
                                                      "clusters: give -k, not --select"),
    (["--workers", "0"], "argument --workers: must be 1 or more"),
    (["--workers", "2", "--scheduler", "tcp://h:1"], "not allowed with argument"),
])
def test_refusals(tmp_path, flags, message):
    result = _run("cluster", "any.mtx", *flags, cwd=tmp_path)
    assert result.returncode in (1, 2) and message in result.stderr, result.stderr


def test_without_dask_the_flag_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "distributed", None)  # as if not installed
    result = _run("cluster", "any.npy", "--model", "gmm", "--workers", "2", "--out", "out",
                  cwd=tmp_path)
    assert result.returncode == 1 and result.stderr.count("\n") == 1
    assert result.stderr.startswith("mixbayes: error: --workers: mixbayes.distributed needs dask")
    assert 'pip install "mixbayes[distributed]"' in result.stderr


def test_topics_select_on_the_scheduler(client, tmp_path):
    corpus, _ = mb.datasets.make_topic_corpus(40, 30, 2, mean_length=60, random_state=0)
    corpus.write(tmp_path / "data", format="mtx")
    # one K (13 iterations): each iteration costs the cluster's round trips, ~80 ms here
    result = _run("topics", "data/counts.mtx", "--select", "2:2", "-q", "--out", "out",
                  "--scheduler", client.scheduler.address, cwd=tmp_path)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    # the command fits at select_n_topics' own tolerance (SELECTION_TOL), as without a cluster
    local = mb.select_n_topics(corpus.counts, [2], mb.TopicModel(2, random_state=0,
                                                                 tol=SELECTION_TOL),
                               verbose=0, coherence="umass")
    rows = (tmp_path / "out" / "selection.csv").read_text().splitlines()
    header = rows[0].split(",")
    table = [dict(zip(header, row.split(","))) for row in rows[1:]]
    assert [float(row["log_bayes_factor"]) for row in table] == pytest.approx(
        [row["log_bayes_factor"] for row in local.table], rel=5e-6)  # as written: 6 digits
    # (6 significant digits round by up to half a unit of the 6th: 5e-6 relative at most)
    # the co-document counts summed on the workers
    assert [float(row["coherence"]) for row in table] == pytest.approx(
        [row["coherence"] for row in local.table], rel=5e-6)
    doc_topics = (tmp_path / "out" / "doc_topics.csv").read_text().splitlines()
    assert len(doc_topics) == 41


def test_a_failing_cluster_is_one_line(tmp_path, monkeypatch):
    """A task that kills its workers (as running out of memory does) ends the run with one
    line naming the cluster, not dask's traceback."""
    import types

    import distributed

    def killed(estimator, X, args):
        worker = types.SimpleNamespace(address="tcp://10.0.0.2:4321")
        raise distributed.KilledWorker("_local_step-1", worker, 3)

    monkeypatch.setattr(_dask, "PROCESSES", False)
    monkeypatch.setattr(cluster, "cluster_fit", killed)
    X, _ = mb.datasets.make_gaussian_mixture(30, 2, 2, random_state=1)
    np.save(tmp_path / "points.npy", X)
    result = _run("cluster", "points.npy", "--model", "gmm", "-k", "2", "--workers", "1",
                  "--out", "out", cwd=tmp_path)
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("mixbayes: error: the dask cluster failed during the run "
                                    "(KilledWorker: ")
    assert not (tmp_path / "out").exists()
