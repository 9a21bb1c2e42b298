"""One LocalCluster for the distributed tests (per test process): 2 workers of one thread each,
in this process (``processes=False``). Starting it takes 0.1 s where worker processes take about
8 s (each imports dask, numba and scikit-learn anew), and the scheduler, the persisted shards,
the scatter of the globals and the tree reduce are the same ones a multi-machine cluster runs.
What threads skip is pickling; the objects that travel are pickled in the tests directly.
"""

import warnings

import pytest

distributed = pytest.importorskip("distributed",
                                  reason='needs pip install "mixbayes[distributed]"')


@pytest.fixture(scope="package")
def client():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dask's notes on the dashboard port and the like
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                           dashboard_address=None)
    with distributed.Client(cluster) as client:
        yield client
    cluster.close()
