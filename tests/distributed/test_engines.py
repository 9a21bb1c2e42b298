"""One start rule for both engines: a data set above the start sample starts from the same
evenly spaced rows in process and on the cluster, so the two fits agree (labels identical,
ELBO to 1e-9) on 1, 2 or 3 shards; and ``with engine(...)`` sends a fit of data held here to
the cluster."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

da = pytest.importorskip("dask.array", reason='needs dask: pip install "mixbayes[distributed]"')

import mixbayes as mb  # noqa: E402
from mixbayes import _engines  # noqa: E402
from mixbayes.distributed import engine  # noqa: E402

SAMPLE = 40  # below the 150 rows: the start runs on a sample in both engines


@pytest.fixture(scope="module")
def data():
    corpus, _ = mb.datasets.make_dmm_corpus(150, 60, 4, mean_length=6, word_concentration=0.5,
                                            random_state=1)
    points, _ = mb.datasets.make_gaussian_mixture(150, 3, 2, random_state=3)
    return dict(dmm=sp.csr_matrix(corpus.counts), gmm=points)


def _model(kind):
    if kind == "dmm":
        return mb.DirichletMultinomialMixture(4, n_init=3, tol=1e-6, random_state=0)
    return mb.VariationalGaussianMixture(3, n_init=2, tol=1e-3, random_state=0)


@pytest.mark.parametrize("shards", [1, 2, 3])
@pytest.mark.parametrize("kind", ["dmm", "gmm"])
def test_a_sampled_start_gives_the_in_process_fit_on_the_cluster(client, data, kind, shards):
    X = data[kind]
    with _engines.use(start_sample=SAMPLE):
        local = _model(kind).fit(X)
    chunks = (math.ceil(X.shape[0] / shards), -1)
    with engine(client=client, start_sample=SAMPLE):
        remote = _model(kind).fit(da.from_array(X, chunks=chunks, asarray=False))
    np.testing.assert_array_equal(remote.labels_.compute(), local.labels_)
    assert remote.n_iter_ == local.n_iter_
    assert abs(remote.elbo_ - local.elbo_) <= 1e-9 * abs(local.elbo_)


def test_the_start_sample_changes_the_start_in_process_too(data):
    """The rule is not the cluster's alone: a smaller start sample is another start here."""
    X = data["dmm"]
    with _engines.use(start_sample=SAMPLE):
        sampled = _model("dmm").fit(X)
    full = _model("dmm").fit(X)
    assert not np.array_equal(sampled.elbo_trace_, full.elbo_trace_)


def test_the_context_sends_data_held_here_to_the_cluster(client, data):
    X = data["dmm"]
    with engine(client=client):
        remote = _model("dmm").fit(X)
    assert isinstance(remote.labels_, da.Array)  # fitted there: the labels stay there
    np.testing.assert_array_equal(remote.labels_.compute(), _model("dmm").fit(X).labels_)
    assert _engines.engine_for(X) is _engines.IN_PROCESS  # and the context is gone after


def test_a_bad_start_sample_is_refused():
    with pytest.raises(ValueError, match="start_sample must be a positive integer; got 0"):
        with _engines.use(start_sample=0):
            pass


def test_models_with_no_cluster_path_say_they_run_here_inside_an_engine_block():
    """Inside ``with engine(client=...)`` the HDP's and the tree's numpy fits ran in this
    process without a word (a new user's tryout; Gibbs is refused there): they say so, and
    outside such a block they say nothing."""
    import warnings

    class Elsewhere:  # an engine whose rows live on a cluster
        in_process = False

    corpus, _ = mb.datasets.make_dmm_corpus(30, 20, 2, mean_length=8, random_state=0)
    points, _ = mb.datasets.make_gaussian_mixture(40, 2, 2, random_state=0)
    fits = {"HDPMixture": lambda: mb.HDPMixture(n_iter=2).fit(corpus.counts),
            "HierarchicalMixture": lambda: mb.HierarchicalMixture(n_iter=2).fit(points)}
    for name, fit in fits.items():
        with _engines.use(Elsewhere()):
            with pytest.warns(UserWarning, match=f"{name} runs in this process: the engine"):
                fit()
        with warnings.catch_warnings():
            warnings.filterwarnings("error", message=".*runs in this process")
            fit()
