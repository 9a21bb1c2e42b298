"""A worker lost mid-fit: its shards are recomputed from their graph (the file reader) on the
workers left, a replacement joins, and the fit ends where the undisturbed one does.

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

import mixbayes as mb  # noqa: E402
from mixbayes.distributed import _cavi, _readers, read_docword  # noqa: E402
from test_dask_fit import _write_docword  # noqa: E402  (a sibling module, on sys.path)

READS = []  # the shards read from the file (module level: the workers call it by reference)


def _counted_read(path, header, start, stop, lo, hi, sorted_rows):
    READS.append(lo)
    return _READ(path, header, start, stop, lo, hi, sorted_rows)


_READ = _readers._read_shard


def test_worker_killed_mid_fit(tmp_path, monkeypatch):
    corpus, _ = mb.datasets.make_dmm_corpus(150, 60, 4, mean_length=6, word_concentration=0.5,
                                            random_state=1)
    counts = sp.csr_matrix(corpus.counts)
    params = dict(n_components=4, n_init=2, tol=1e-6, random_state=0)
    local = mb.DirichletMultinomialMixture(**params).fit(counts)
    assert local.n_iter_ > 6
    monkeypatch.setattr(_readers, "_read_shard", _counted_read)
    READS.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                           dashboard_address=None)
    reduce, calls, killed = _cavi._Shards._reduce, [], []

    def kill_then_reduce(shards, parts, add):
        """At the 4th iteration, with its local steps submitted: close a worker holding
        shards, then let a fresh one join (the cluster replaces it)."""
        calls.append(1)
        if len(calls) == 4:
            holders = shards.client.who_has(shards.data)
            address = sorted({a for where in holders.values() for a in where})[0]
            name = next(n for n, w in cluster.workers.items() if w.address == address)
            shards.client.sync(cluster.workers[name].close)
            killed.append(address)
            # once the scheduler has let it go (a scatter to it would wait out the connect
            # timeout), a fresh worker joins
            deadline = time.monotonic() + 10
            while address in shards.client.scheduler_info()["workers"]:
                assert time.monotonic() < deadline, "the scheduler kept the closed worker"
                time.sleep(0.01)
            cluster.worker_spec.pop(name)
            cluster.workers.pop(name, None)
            cluster.scale(2)
            shards.client.wait_for_workers(2, timeout=10)
        return reduce(shards, parts, add)

    monkeypatch.setattr(_cavi._Shards, "_reduce", kill_then_reduce)
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
