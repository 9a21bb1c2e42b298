"""The topic model on a dask cluster equals its in-process fit, shard by shard, and so does the
choice of K (the Laplace evidence's blocks summed over the shards)."""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

da = pytest.importorskip("dask.array", reason='needs dask: pip install "mixbayes[distributed]"')

import mixbayes as mb  # noqa: E402
from mixbayes.exceptions import ConvergenceWarning  # noqa: E402
from mixbayes.topics import _fit, blocks  # noqa: E402

# 12 iterations from the first, the secant step tried in every one of them after the third
SETTINGS = dict(tol=1e-9, max_iter=12, qn_below=1e9)


@pytest.fixture(scope="module", autouse=True)
def solved_weights():
    """Weight solves to tolerance in every iteration, so that trajectories agree to rounding.

    The default's single Newton step a document after the third iteration is path-sensitive:
    a rounding-level difference of the summed topics (shards add in another order) can flip a
    document's active set or step length, and the trajectories part (measured: the weights'
    sums equal to 8 digits through iteration 9, 1.7 apart at 10, on the build-up start over 2
    shards) and meet again at the MAP (test_default_rule_reaches_the_in_process_map)."""
    saved = _fit.SOLVED_ITERATIONS
    _fit.SOLVED_ITERATIONS = 10**9
    yield
    _fit.SOLVED_ITERATIONS = saved


@pytest.fixture(scope="module")
def counts():
    corpus, _ = mb.datasets.make_topic_corpus(60, 40, 3, mean_length=40, random_state=0)
    X = sp.csr_matrix(corpus.counts).tolil()
    X[[0, 30]] = 0  # empty documents: the first is a one-row shard of its own below
    return X.tocsr()


def _fit_quietly(model, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(X)


@pytest.fixture(scope="module")
def local(counts):
    fits = {}

    def fitted(init):
        if init not in fits:
            fits[init] = _fit_quietly(mb.TopicModel(3, init=init, **SETTINGS), counts)
        return fits[init]

    return fitted


@pytest.mark.parametrize("rows, init", [((60,), "clusters"), ((30, 30), "buildup"),
                                        ((0, 1, 59), "clusters")],
                         ids=["1 shard", "2 shards, build-up start",
                              "3 shards: empty, one empty document"])
def test_same_fit_as_in_process(client, counts, local, rows, init):
    expected = local(init)
    assert expected.n_iter_ == 12 and expected.n_quasi_newton_ >= 5  # a real trajectory
    remote = _fit_quietly(mb.TopicModel(3, init=init, **SETTINGS),
                          da.from_array(counts, chunks=(rows, (40,)), asarray=False))
    assert isinstance(remote.doc_topic_, da.Array)
    doc_topic = remote.doc_topic_.compute()
    np.testing.assert_array_equal(doc_topic.argmax(axis=1), expected.doc_topic_.argmax(axis=1))
    np.testing.assert_allclose(doc_topic, expected.doc_topic_, atol=1e-7)
    assert remote.n_iter_ == expected.n_iter_
    assert remote.n_quasi_newton_ == expected.n_quasi_newton_
    np.testing.assert_allclose(remote.log_posterior_trace_, expected.log_posterior_trace_,
                               rtol=1e-8, atol=0)  # shards sum in another order
    assert abs(remote.log_posterior_ - expected.log_posterior_) <= 1e-9 * abs(
        expected.log_posterior_)
    np.testing.assert_allclose(remote.topics_, expected.topics_, atol=1e-8)
    np.testing.assert_allclose(remote.usage_, expected.usage_, atol=1e-8)
    np.testing.assert_array_equal(remote.term_frequency_, expected.term_frequency_)
    X = da.from_array(counts, chunks=(rows, (40,)), asarray=False)  # new data on the cluster
    weights = remote.transform(X)  # solved where the rows lie
    assert isinstance(weights, da.Array) and weights.chunks[0] == rows
    np.testing.assert_allclose(weights.compute(), expected.transform(counts), atol=1e-7)
    assert remote.score(X) == pytest.approx(expected.score(counts), rel=1e-9)


def test_default_rule_reaches_the_in_process_map(client, counts, monkeypatch):
    """With the default weight rule (one Newton step a document after the third iteration)
    the sharded fit converges to the in-process fit's MAP, up to the tolerance both stop at:
    measured at tol=1e-8 per word, 6e-5 nats apart, topics 5.5e-5, weights 3.3e-4 (at 1e-6:
    0.008 nats, 1.2e-3 and 5.6e-3)."""
    monkeypatch.setattr(_fit, "SOLVED_ITERATIONS", 3)
    settings = dict(tol=1e-8, max_iter=500)
    expected = mb.TopicModel(3, init="buildup", **settings).fit(counts)
    remote = mb.TopicModel(3, init="buildup", **settings).fit(
        da.from_array(counts, chunks=((30, 30), (40,)), asarray=False))
    assert expected.converged_ and remote.converged_
    assert abs(remote.log_posterior_ - expected.log_posterior_) <= 1e-3
    np.testing.assert_allclose(remote.topics_, expected.topics_, atol=5e-4)
    np.testing.assert_allclose(remote.doc_topic_.compute(), expected.doc_topic_, atol=3e-3)


def test_select_n_topics_as_in_process(client, counts):
    estimator = mb.TopicModel(max_iter=10, qn_below=1e9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        expected = mb.select_n_topics(counts, range(2, 4), estimator, scan_all=True, verbose=0,
                                      coherence="npmi")
        remote = mb.select_n_topics(da.from_array(counts, chunks=((0, 1, 59), (40,)),
                                                  asarray=False),
                                    range(2, 4), estimator, scan_all=True, verbose=0,
                                    coherence="npmi")
    assert remote.best_k == expected.best_k
    for got, want in zip(remote.table, expected.table, strict=True):
        assert got["n_iter"] == want["n_iter"]
        for name in ("log_marginal_likelihood", "log_bayes_factor", "log_posterior",
                     "dispersion", "df", "coherence"):
            assert got[name] == pytest.approx(want[name], rel=1e-9), name


def test_blocks_pickle(counts):
    # the cluster's threads move blocks by reference; a cluster of processes pickles them
    block = blocks.start(blocks.CountsCSR.from_matrix(counts[1:10]), np.full((40, 3), 1 / 40))
    pickle.loads(pickle.dumps(block))
