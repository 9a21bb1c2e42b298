"""``mixbayes cluster|topics FILE --scheduler``: a docword or Matrix Market file is read by the
workers and stays there, and every output is the in-process run's."""

import json
import threading

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("distributed", reason='needs pip install "mixbayes[distributed]"')

import mixbayes as mb  # noqa: E402
from mixbayes.cli import _dask  # noqa: E402
from mixbayes.distributed import _readers  # noqa: E402
from _support.cli import run as _run  # noqa: E402  (tests/ is on pytest's pythonpath)


def _corpus(n_documents, random_state=0):
    """A labelled corpus of 3 clusters whose document 7 is empty and whose first two terms
    are English stop words ("the", "and")."""
    corpus, _ = mb.datasets.make_dmm_corpus(n_documents, 40, 3, mean_length=20,
                                            random_state=random_state)
    counts = corpus.counts.tolil()
    counts[7, :] = 0
    vocabulary = ["the", "and"] + list(corpus.vocabulary[2:])
    corpus = mb.Corpus(sp.csr_matrix(counts), vocabulary, [f"d{i}" for i in range(n_documents)],
                       corpus.labels)
    return corpus


def _write(corpus, folder):
    """data/counts.mtx (with its side files), data/unsorted.mtx (its entries last row first,
    as no byte range can hold a row range), uci/docword.corpus.txt and labels.txt."""
    corpus.write(folder / "data", format="mtx")
    corpus.write(folder / "uci", format="uci")
    lines = (folder / "data" / "counts.mtx").read_text().splitlines(keepends=True)
    body = next(i for i, line in enumerate(lines) if not line.startswith("%")) + 1
    (folder / "data" / "unsorted.mtx").write_text("".join(lines[:body] + lines[body:][::-1]))
    (folder / "labels.txt").write_text("".join(f"{label}\n" for label in corpus.labels))


_READ_SHARD = _readers._read_shard
_READ_ON = []  # per shard read: whether on a worker's thread (not the client's)


def _read_shard_recorded(*args):
    # module-level, so that the graph's pickle refers to it (a closure would travel as a copy)
    _READ_ON.append(threading.current_thread() is not threading.main_thread())
    return _READ_SHARD(*args)


def _on_workers_only(monkeypatch):
    """Make the client unable to read the counts: mixbayes.read_corpus raises, and every shard
    read is recorded in _READ_ON."""
    def refused(*args, **kwargs):
        raise AssertionError("the client read the count matrix")

    _READ_ON.clear()
    monkeypatch.setattr(_readers, "_read_shard", _read_shard_recorded)
    monkeypatch.setattr(mb.corpus, "read_corpus", refused)


def _no_figures(monkeypatch):
    """The mixture's PNG figures left out (0.3 s each; they are tested elsewhere)."""
    from mixbayes import plotting
    from mixbayes.cli.cluster import dmm as cluster  # the document mixture's run

    for name in ("plot_elbo_trace", "plot_top_words"):
        monkeypatch.setattr(plotting, name, lambda *args, **kwargs: None)
    monkeypatch.setattr(cluster, "save_figure", lambda figure, path: None)


def _json(path):
    return json.loads(path.read_text())


def _same(a, b, path="", skip=("seconds", "out", "scheduler")):
    """``a == b``, floats within 1e-9 relative, JSON keys in ``skip`` left out."""
    if isinstance(a, dict):
        assert set(a) - set(skip) == set(b) - set(skip), path
        for key in set(a) - set(skip):
            _same(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{path}[{i}]")
    elif isinstance(a, float):
        assert a == pytest.approx(b, rel=1e-9), path
    else:
        assert a == b, path


def _here_and_there(tmp_path, monkeypatch, address, runs):
    """Run every ``(command, input, options, files)`` of ``runs`` in process, then on the
    cluster with the client unable to read the counts; check that the ``files`` and
    summary.json are the same, and that the empty document was left out of both; return
    what the cluster runs printed."""
    _no_figures(monkeypatch)
    for i, (command, data, options, _) in enumerate(runs):
        here = _run(command, data, *options, "-q", "--out", f"here{i}", cwd=tmp_path)
        assert here.returncode == 0, here.stderr
    _on_workers_only(monkeypatch)
    printed = []
    for i, (command, data, options, files) in enumerate(runs):
        there = _run(command, data, *options, "-q", "--out", f"there{i}", "--scheduler",
                     address, cwd=tmp_path)
        assert there.returncode == 0 and there.stderr == "", there.stderr
        assert "1 empty document left out" in there.stdout
        printed.append(there.stdout)
        for name in files + ["summary.json"]:
            a, b = tmp_path / f"here{i}" / name, tmp_path / f"there{i}" / name
            if name.endswith(".csv"):  # ids, labels, clusters, probabilities to 6 digits
                assert a.read_text() == b.read_text(), (command, data, name)
            else:
                _same(_json(a), _json(b), f"{command} {data} {name}")
    assert _READ_ON and all(_READ_ON)  # every shard read on a worker's thread
    return printed


def test_cluster_reads_docword_and_matrix_market_on_the_workers(client, tmp_path, monkeypatch):
    _write(_corpus(100), tmp_path)
    printed = _here_and_there(tmp_path, monkeypatch, client.scheduler.address, [
        ("cluster", "data/unsorted.mtx", ["-k", "3", "--n-init", "1", "--stop-words",
                                          "english", "--min-df", "2"],
         ["assignments.csv", "clusters.json"]),
        ("cluster", "uci/docword.corpus.txt", ["-k", "3", "--n-init", "1", "--labels",
                                               "labels.txt", "--min-df", "0.05"],
         ["assignments.csv", "clusters.json"]),
    ])
    assert "scores" in _json(tmp_path / "there1" / "summary.json")  # against --labels
    assert "note: data/unsorted.mtx is not sorted by row: every worker read the whole file" \
        in printed[0]


def test_topics_reads_docword_on_the_workers(client, tmp_path, monkeypatch):
    _write(_corpus(100), tmp_path)
    _here_and_there(tmp_path, monkeypatch, client.scheduler.address, [
        ("topics", "uci/docword.corpus.txt", ["-k", "2", "--stop-words", "english", "--labels",
                                              "labels.txt"], ["doc_topics.csv", "topics.json"]),
    ])
    topics = _json(tmp_path / "there0" / "topics.json")
    assert topics["coherence"]["mean"] is not None  # summed on the workers, as here
    assert "scores" in topics


def test_the_client_holds_one_sample_of_documents_at_most(client, tmp_path, monkeypatch):
    """A corpus 10 times the client's sample: the fit's start and --report gather evenly
    spaced samples of at most that many documents, the probabilities come a shard at a time,
    and nothing else of the counts comes to the client."""
    import distributed

    n, sample = 600, 60
    _write(_corpus(n, random_state=1), tmp_path)
    monkeypatch.setattr(_dask, "SAMPLE", sample)
    counts, arrays = [], []  # shapes of what the client gathered: CSR counts, dense arrays
    gather = distributed.Client._gather

    async def recorded(self, futures, *args, **kwargs):
        result = await gather(self, futures, *args, **kwargs)
        for value in (result if isinstance(result, list) else [result]):
            if sp.issparse(value):
                counts.append(value.shape)
            elif isinstance(value, np.ndarray) and value.ndim == 2:
                arrays.append(value.shape)
        return result

    monkeypatch.setattr(distributed.Client, "_gather", recorded)
    _on_workers_only(monkeypatch)
    _no_figures(monkeypatch)
    result = _run("cluster", "data/counts.mtx", "-k", "3", "--n-init", "1", "-q", "--report",
                  "--out", "out", "--scheduler", client.scheduler.address, cwd=tmp_path)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert len(counts) >= 2 and max(rows for rows, _ in counts) <= sample  # start, report
    assert [columns for _, columns in arrays] == [3] * len(arrays)  # probabilities only,
    assert len(arrays) >= 2 and sum(rows for rows, _ in arrays) == n - 1  # a shard at a time
    rows = (tmp_path / "out" / "assignments.csv").read_text().splitlines()
    assert len(rows) == n  # a header and every document but the empty one
    page = (tmp_path / "out" / "report.html").read_text()
    assert f"example documents drawn from a sample of {sample} of the {n - 1:,} documents" in page
