"""The Gaussian mixture on a dask cluster equals its in-process fit, shard by shard; its
data-scaled priors come from column moments summed over the shards."""

import warnings

import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason='needs dask: pip install "mixbayes[distributed]"')

import mixbayes as mb  # noqa: E402
from mixbayes.datasets import make_gaussian_mixture  # noqa: E402
from mixbayes.distributed import fit  # noqa: E402
from mixbayes.exceptions import ConvergenceWarning  # noqa: E402
from mixbayes.families.gaussian import PointMoments, point_summary  # noqa: E402


@pytest.fixture(scope="module")
def points():
    # two of four components switch off along the way: 17 iterations at tol 1e-6
    return make_gaussian_mixture(60, 2, 3, separation=1.5, random_state=4)[0]


def _model(**params):
    return mb.VariationalGaussianMixture(**{
        "n_components": 4, "tol": 1e-6, "random_state": 0, **params})


def _assert_same_fit(local, remote):
    assert local.n_iter_ > 5  # a real trajectory
    assert isinstance(remote.labels_, da.Array)
    np.testing.assert_array_equal(remote.labels_.compute(), local.labels_)
    assert remote.n_iter_ == local.n_iter_ and remote.converged_ == local.converged_
    np.testing.assert_allclose(remote.elbo_trace_, local.elbo_trace_, rtol=1e-9, atol=0)
    assert abs(remote.elbo_ - local.elbo_) <= 1e-9 * abs(local.elbo_)
    for name in ("mean_prior_", "covariance_prior_", "means_", "scale_", "weights_"):
        np.testing.assert_allclose(getattr(remote, name), getattr(local, name), rtol=1e-7,
                                   atol=1e-12, err_msg=name)


@pytest.fixture(scope="module")
def local(points):
    return _model().fit(points)


@pytest.mark.parametrize("rows", [(60,), (30, 30), (0, 1, 59)],
                         ids=["1 shard", "2 shards", "3 shards: empty, one row"])
def test_same_fit_as_in_process(client, points, local, rows):
    remote = _model().fit(da.from_array(points, chunks=(rows, 2)))
    _assert_same_fit(local, remote)
    assert remote.labels_.chunks == (tuple(size for size in rows if size),)


def test_one_dimensional_points_are_one_feature(client, points):
    """As in process: a 1-D array holds points of one feature."""
    x = np.ascontiguousarray(points[:, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # 6 iterations say enough
        remote = _model().set_params(max_iter=6).fit(da.from_array(x, chunks=30))
        _assert_same_fit(_model().set_params(max_iter=6).fit(x), remote)


def test_diagonal_sticks_from_client_data(client, points, capsys, monkeypatch):
    from contextlib import contextmanager

    from mixbayes.mixture import _base

    ticks = []

    class Bar:
        def update(self, n=1):
            ticks[-1] += n

        def set_postfix_str(self, text, refresh=True):
            pass

    @contextmanager
    def progress(total, verbose, desc, upper_bound=False):
        ticks.append(0)
        yield Bar()

    monkeypatch.setattr(_base, "progress", progress)
    params = dict(covariance_type="diag", weight_concentration_prior_type="dirichlet_process")
    remote = fit(_model(**params), points, client=client)
    assert remote.labels_.numblocks == (2,)  # one shard per worker
    assert ticks == [remote.n_iter_]  # the client's bar: one tick per iteration
    assert capsys.readouterr().err == ""  # and nothing from the workers
    _assert_same_fit(_model(**params).fit(points), remote)


@pytest.mark.parametrize("full", [False, True], ids=["diagonal", "full"])
def test_point_moments_add(full):
    rng = np.random.default_rng(0)
    X = rng.normal(5.0, 2.0, size=(40, 3))
    X[:, 1] = 1.0 / 3.0  # a constant column: variance exactly 0
    centre = X[::7].mean(axis=0)  # the client's sample mean, not the data's
    parts = [PointMoments.of(X[a:b], centre, full) for a, b in ((0, 1), (1, 25), (25, 40))]
    total = parts[0] + parts[1] + parts[2]
    assert total.n == 40
    for got, want in zip(total.summary(), point_summary(X, full)):
        if want is None:
            assert got is None
        else:
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    assert total.summary()[1][1] == 0.0


def test_travelling_objects_pickle(points, local):
    # the cluster's threads move objects by reference; these are what a real cluster pickles
    import pickle

    from mixbayes.distributed import _cavi

    state, family = local._restore_state()
    data = family.prepare(points[:5])
    step = _cavi._local_step(data, (family, state.family_expectations, state.expected_log_weights))
    for thing in (_model(), family, data, step, PointMoments.of(points, points[0], True)):
        pickle.loads(pickle.dumps(thing))


def test_merge_moves_on_the_cluster_equal_them_in_process(client):
    """The merge moves read only the engine's local steps and summed statistics: the same
    merges, the same fit, shard by shard."""
    X = make_gaussian_mixture(150, 3, 3, random_state=10)[0]
    params = dict(n_components=10, merge_moves=True, random_state=0)
    local = mb.VariationalGaussianMixture(**params).fit(X)
    assert local.n_effective_components_ == 3
    assert local.n_effective_components_ < mb.VariationalGaussianMixture(
        **dict(params, merge_moves=False)).fit(X).n_effective_components_
    remote = mb.VariationalGaussianMixture(**params).fit(da.from_array(X, chunks=((70, 80), 3)))
    _assert_same_fit(local, remote)
