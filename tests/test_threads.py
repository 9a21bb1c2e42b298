"""The one threading policy (``mixbayes._kernel_tools``): ``n_jobs`` on every estimator with
threads, validated, cloned, applied to numba's kernels and BLAS in the fit, and results that do
not depend on it."""

import numba
import numpy as np
import pytest
from sklearn.base import clone
from threadpoolctl import threadpool_info

import mixbayes as mb
from mixbayes import _kernel_tools
from mixbayes.cli import main

THREADED = (mb.DirichletMultinomialMixture, mb.VariationalGaussianMixture, mb.TopicModel,
            mb.HDPMixture)
CORES = numba.config.NUMBA_NUM_THREADS


def _pool_threads():
    """The thread counts of every pool threadpoolctl sees (BLAS, OpenMP runtimes)."""
    return {info["num_threads"] for info in threadpool_info()}


@pytest.mark.parametrize("cls", THREADED, ids=lambda c: c.__name__)
def test_n_jobs_is_a_parameter_cloned_and_checked(cls):
    model = cls(n_jobs=2)
    assert model.get_params()["n_jobs"] == 2 and clone(model).n_jobs == 2
    assert cls().n_jobs is None
    X = np.ones((4, 3), dtype=np.int64)
    for bad in (0, 1.5, "2", True):
        with pytest.raises(ValueError, match=rf"^n_jobs must be None .* got {bad!r}\.$"):
            cls(n_jobs=bad).fit(X)


def test_the_tree_has_no_n_jobs_and_fits_serially(monkeypatch):
    """The tree sampler has no parallel kernels: its fit runs under threads(1)."""
    assert "n_jobs" not in mb.HierarchicalMixture().get_params()
    seen = []
    original = mb.HierarchicalMixture._fit
    monkeypatch.setattr(mb.HierarchicalMixture, "_fit", lambda self, X: (
        seen.append((numba.get_num_threads(), _pool_threads())), original(self, X))[1])
    X, _ = mb.datasets.make_tree_data(30, random_state=0)
    mb.HierarchicalMixture(2, n_iter=2).fit(X)
    assert seen == [(1, {1})]


def test_thread_counts():
    assert _kernel_tools.thread_count(1) == 1
    assert _kernel_tools.thread_count(-1) == CORES
    assert _kernel_tools.thread_count(-2) == max(CORES - 1, 1)
    assert _kernel_tools.thread_count(-1000) == 1
    assert _kernel_tools.thread_count(CORES + 5) == CORES  # numba's pool has no more
    assert _kernel_tools.thread_count(None) == CORES


def test_threads_sets_and_restores_numba_and_blas():
    before_numba, before_blas = numba.get_num_threads(), _pool_threads()
    with _kernel_tools.threads(1) as count:
        assert count == 1 and numba.get_num_threads() == 1 and _pool_threads() == {1}
        assert not _kernel_tools.runs_parallel(10**12)  # one thread: the serial builds
        with _kernel_tools.threads(None) as inner:  # None: the enclosing block's count
            assert inner == 1 and numba.get_num_threads() == 1
        with _kernel_tools.threads(-1) as inner:
            assert inner == CORES and numba.get_num_threads() == CORES
            assert _pool_threads() == {1}  # BLAS, OpenMP: one thread in a fit whatever n_jobs
            assert _kernel_tools.runs_parallel(10**12) == (CORES > 1)
            assert not _kernel_tools.runs_parallel(_kernel_tools._PARALLEL_FROM - 1)
        assert numba.get_num_threads() == 1
    assert numba.get_num_threads() == before_numba and _pool_threads() == before_blas
    with pytest.raises(ValueError, match="n_jobs must be"):
        with _kernel_tools.threads(0):
            pass
    assert numba.get_num_threads() == before_numba


def _spy(monkeypatch, cls, name):
    """Record numba's thread count and the other pools' while ``cls.name`` runs."""
    seen = []
    original = getattr(cls, name)

    def spy(self, *args, **kwargs):
        seen.append((numba.get_num_threads(), _pool_threads()))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cls, name, spy)
    return seen


def test_every_fit_runs_under_its_n_jobs(monkeypatch):
    docs, _ = mb.datasets.make_dmm_corpus(40, 20, 2, mean_length=10, random_state=0)
    X, _ = mb.datasets.make_gaussian_mixture(40, 2, 2, random_state=0)
    fits = [
        (mb.DirichletMultinomialMixture, "_fit_labels", lambda m: m.fit(docs.counts)),
        (mb.VariationalGaussianMixture, "_fit_labels", lambda m: m.fit(X)),
        (mb.TopicModel, "_fit_corpus_threads", lambda m: m.fit(docs.counts)),
        (mb.HDPMixture, "_fit", lambda m: m.fit(docs.counts)),
    ]
    for cls, name, fit in fits:
        seen = _spy(monkeypatch, cls, name)
        params = {"n_iter": 2} if cls is mb.HDPMixture else {}
        for n_jobs in (1, None):
            fit(cls(n_jobs=n_jobs, **params))
        assert seen == [(1, {1}), (CORES, {1})], cls.__name__
    gibbs = _spy(monkeypatch, mb.DirichletMultinomialMixture, "_fit_gibbs")
    mb.DirichletMultinomialMixture(2, inference="gibbs", n_sweeps=2, n_init=1,
                                   n_jobs=1).fit(docs.counts)
    assert gibbs == [(1, {1})]


# n_jobs = 1 against 2, with every kernel call "large" (_PARALLEL_FROM = 0), so that the fit at
# 2 threads runs the parallel builds and the fit at 1 the serial ones: identical answers
def _parallel_everywhere(monkeypatch):
    monkeypatch.setattr(_kernel_tools, "_PARALLEL_FROM", 0)


def test_document_fits_do_not_depend_on_n_jobs(monkeypatch):
    _parallel_everywhere(monkeypatch)
    docs, _ = mb.datasets.make_dmm_corpus(150, 60, 3, mean_length=20, random_state=1)
    fits = {}
    for n_jobs in (1, 2):
        dmm = mb.DirichletMultinomialMixture(3, n_jobs=n_jobs).fit(docs.counts)
        topics = mb.TopicModel(3, n_jobs=n_jobs).fit(docs.counts)
        hdp = mb.HDPMixture(n_iter=4, n_jobs=n_jobs).fit(docs.counts)
        fits[n_jobs] = (dmm, topics, hdp)
    (dmm1, topics1, hdp1), (dmm2, topics2, hdp2) = fits[1], fits[2]
    np.testing.assert_array_equal(dmm1.labels_, dmm2.labels_)
    np.testing.assert_array_equal(dmm1.elbo_trace_, dmm2.elbo_trace_)
    np.testing.assert_array_equal(dmm1.start_elbos_, dmm2.start_elbos_)
    np.testing.assert_array_equal(dmm1.word_concentration_, dmm2.word_concentration_)
    np.testing.assert_array_equal(topics1.topics_, topics2.topics_)
    np.testing.assert_array_equal(topics1.doc_topic_, topics2.doc_topic_)
    np.testing.assert_array_equal(topics1.log_posterior_trace_, topics2.log_posterior_trace_)
    np.testing.assert_array_equal(hdp1.labels_, hdp2.labels_)
    np.testing.assert_array_equal(hdp1.trace_, hdp2.trace_)
    assert dmm1.n_iter_ > 1 and topics1.n_iter_ > 1


def test_point_fits_do_not_depend_on_n_jobs(monkeypatch):
    _parallel_everywhere(monkeypatch)
    X, _ = mb.datasets.make_gaussian_mixture(300, 4, 3, random_state=2)
    fits = [mb.VariationalGaussianMixture(3, n_init=2, n_jobs=n_jobs).fit(X) for n_jobs in (1, 2)]
    for name in ("labels_", "elbo_trace_", "means_", "precisions_", "weights_"):
        np.testing.assert_array_equal(getattr(fits[0], name), getattr(fits[1], name), name)
    assert fits[0].n_iter_ > 1


def test_cli_n_jobs(monkeypatch, tmp_path, capsys):
    docs, _ = mb.datasets.make_dmm_corpus(60, 30, 2, mean_length=15, random_state=0)
    docs.write(tmp_path / "data", format="mtx")
    seen = _spy(monkeypatch, mb.DirichletMultinomialMixture, "_fit_labels")
    status = main(["cluster", str(tmp_path / "data" / "counts.mtx"), "--model", "dmm", "-k",
                   "2", "--n-jobs", "1", "--out", str(tmp_path / "o"), "-q"])
    assert status == 0 and seen == [(1, {1})]
    assert '"n_jobs": 1' in (tmp_path / "o" / "summary.json").read_text()
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:
        main(["demo", "--n-jobs", "0", "--out", str(tmp_path / "d")])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "--n-jobs" in err and "got 0" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "d").exists()


@pytest.mark.parametrize("given", [None, "ACTIVE"])
def test_the_layer_loads_with_passive_waiting_unless_told(given):
    """numba's OpenMP runtime reads OMP_WAIT_POLICY when it loads: mixbayes sets PASSIVE for
    that moment (libgomp reports it as a spin count of 0), restores the environment, and
    leaves a policy the user chose alone."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    env["OMP_DISPLAY_ENV"] = "verbose"  # libgomp prints its settings when it loads
    if given:
        env["OMP_WAIT_POLICY"] = given
    code = ("import os, numba; from mixbayes import _kernel_tools; _kernel_tools.load_layer(); "
            "print(numba.threading_layer(), os.environ.get('OMP_WAIT_POLICY'))")
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    layer, policy = result.stdout.split()
    assert policy == str(given)  # the environment as it was
    spins = [line for line in result.stderr.splitlines() if "GOMP_SPINCOUNT" in line]
    if layer != "omp" or not spins:
        pytest.skip("numba's threading layer here is not GNU OpenMP")
    # the last runtime to load is numba's (scikit-learn's own libgomp loads on import)
    assert (spins[-1].split("=")[1].strip() == "'0'") == (given is None), spins


def test_counting_order_is_a_stable_sort_by_key():
    rng = np.random.default_rng(0)
    keys = rng.integers(0, 7, 200)
    items = rng.permutation(200)[:150]
    order = _kernel_tools.counting_order(keys, 7, items)
    expected = items[np.argsort(keys[items], kind="stable")]
    np.testing.assert_array_equal(order, expected)
    assert _kernel_tools.counting_order(keys, 7, items[:0]).shape == (0,)
