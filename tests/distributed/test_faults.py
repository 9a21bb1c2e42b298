"""A worker lost mid-fit: its shards are recomputed from their graph (the file reader) on the
workers left, a replacement joins, and the fit ends where the undisturbed one does. A topic
fit's lost weights are REBUILT from the latest topics, and it ends at the same joint MAP.

Its own cluster (threads of this process, started in 0.1 s), since the test kills one of its
workers. The worker is closed abruptly, as a crash would end it: the scheduler is not asked to
move its data first (``retire_workers`` would), so whatever it held is lost.
"""

import time
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

distributed = pytest.importorskip("distributed", reason='needs pip install "mixbayes[distributed]"')
da = pytest.importorskip("dask.array")

import mixbayes as mb  # noqa: E402
from mixbayes.distributed import _cavi, _readers, _topics, read_docword  # noqa: E402
from mixbayes.topics import blocks  # noqa: E402
from test_dask_fit import _write_docword  # noqa: E402  (a sibling module, on sys.path)

READS = []  # the shards read from the file (module level: the workers call it by reference)


def _counted_read(path, header, start, stop, lo, hi, sorted_rows):
    READS.append(lo)
    return _READ(path, header, start, stop, lo, hi, sorted_rows)


_READ = _readers._read_shard
REBUILT = []  # the sizes of the topic fit's blocks rebuilt after a lost worker


def _counted_replay(counts, theta, steps):
    REBUILT.append(counts.shape[0])
    return _REPLAY(counts, theta, steps)


_REPLAY = _topics._replay


def _kill_and_replace(cluster, client, futures):
    """Close a worker holding some of ``futures`` abruptly, then let a fresh one join (the
    cluster replaces it); return the closed worker's address."""
    distributed.wait(futures)
    holders = client.who_has(futures)
    address = sorted({a for where in holders.values() for a in where})[0]
    name = next(n for n, w in cluster.workers.items() if w.address == address)
    client.sync(cluster.workers[name].close)
    # once the scheduler has let it go (a scatter to it would wait out the connect timeout), a
    # fresh worker joins
    deadline = time.monotonic() + 10
    while address in client.scheduler_info()["workers"]:
        assert time.monotonic() < deadline, "the scheduler kept the closed worker"
        time.sleep(0.01)
    cluster.worker_spec.pop(name)
    cluster.workers.pop(name, None)
    cluster.scale(2)
    client.wait_for_workers(2, timeout=10)
    return address


def _cluster():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                        dashboard_address=None)


def test_worker_killed_mid_fit(tmp_path, monkeypatch):
    corpus, _ = mb.datasets.make_dmm_corpus(150, 60, 4, mean_length=6, word_concentration=0.5,
                                            random_state=1)
    counts = sp.csr_matrix(corpus.counts)
    params = dict(n_components=4, n_init=2, tol=1e-6, random_state=0)
    local = mb.DirichletMultinomialMixture(**params).fit(counts)
    assert local.n_iter_ > 6
    monkeypatch.setattr(_readers, "_read_shard", _counted_read)
    READS.clear()
    cluster = _cluster()
    reduce, calls, killed = _cavi.RowShards._reduce, [], []

    def kill_then_reduce(shards, parts, add, first=None):
        """At the 4th iteration, with its local steps submitted: kill a worker holding shards,
        and let a fresh one join."""
        calls.append(1)
        if len(calls) == 4:
            killed.append(_kill_and_replace(cluster, shards.client, shards.data))
        return reduce(shards, parts, add, first)

    monkeypatch.setattr(_cavi.RowShards, "_reduce", kill_then_reduce)
    try:
        with distributed.Client(cluster) as client:
            remote = mb.DirichletMultinomialMixture(**params).fit(
                read_docword(str(_write_docword(tmp_path, counts)), n_shards=3))
            labels = remote.labels_.compute()
            assert len(client.nthreads()) == 2  # the replacement joined
    finally:
        cluster.close()
    # the closed worker held shards, and those it held alone were read again from the file
    assert killed and len(READS) > 3
    np.testing.assert_array_equal(labels, local.labels_)
    assert remote.n_iter_ == local.n_iter_
    assert abs(remote.elbo_ - local.elbo_) <= 1e-9 * abs(local.elbo_)



def test_worker_killed_mid_topic_fit(monkeypatch):
    """The worker holding blocks dies at the 5th iteration, when the blocks have secant
    history: the blocks it held, and only those, are rebuilt from the latest topics, and the
    fit converges to the undisturbed fit's MAP, up to the tolerance both fits stop at.

    Measured (SQUAREM's extrapolation, one Newton step a document after the third iteration):
    stopping at a gain of 0.001 nats, the log posteriors 0.004 apart, the topics 1.3e-4 and the
    weights 7e-4 (the rebuilt blocks start their extrapolation history afresh, so the two paths
    part at the 5th iteration and come together again, 30 iterations against 26; at 0.01 nats
    the log posteriors were 0.0104 apart; with weight solves to tolerance in every iteration,
    0.002 and 3.2e-5 at 0.01 nats)."""
    corpus, _ = mb.datasets.make_topic_corpus(90, 50, 3, mean_length=40, random_state=3)
    counts = sp.csr_matrix(corpus.counts)
    # a gain of 0.001 nats (tol is per word)
    params = dict(n_components=3, tol=0.001 / counts.sum(), max_iter=200, qn_below=1e9,
                  random_state=0)
    local = mb.TopicModel(**params).fit(counts)
    assert local.converged_ and local.n_iter_ >= 8
    update_sum, iterations, killed = _topics.ShardedDocuments.update_sum, [], []
    REBUILT.clear()

    def kill_then_solve(docs, function, *args):
        if function is blocks.solve_em:
            iterations.append(1)
            if len(iterations) == 5:
                killed.append(_kill_and_replace(cluster, docs.client, docs.blocks))
        return update_sum(docs, function, *args)

    monkeypatch.setattr(_topics, "_replay", _counted_replay)
    monkeypatch.setattr(_topics.ShardedDocuments, "update_sum", kill_then_solve)
    cluster = _cluster()
    try:
        with distributed.Client(cluster) as client:
            remote = mb.TopicModel(**params).fit(
                da.from_array(counts, chunks=((30, 30, 30), (50,)), asarray=False))
            doc_topic = remote.doc_topic_.compute()
            assert len(client.nthreads()) == 2  # the replacement joined
    finally:
        cluster.close()
    # the closed worker held one or two of the three blocks of 30 documents
    assert killed and REBUILT in ([30], [30, 30])
    assert remote.converged_
    assert abs(remote.log_posterior_ - local.log_posterior_) <= 0.01
    np.testing.assert_allclose(remote.topics_, local.topics_, atol=2e-4)
    # the same leading topic wherever the undisturbed fit's two largest weights are not tied
    top2 = np.sort(local.doc_topic_, axis=1)[:, -2:]
    clear = top2[:, 1] - top2[:, 0] > 1e-2
    assert clear.sum() >= 80
    np.testing.assert_array_equal(doc_topic.argmax(axis=1)[clear],
                                  local.doc_topic_.argmax(axis=1)[clear])
    np.testing.assert_allclose(doc_topic, local.doc_topic_, atol=1e-3)
