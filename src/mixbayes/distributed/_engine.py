"""The Dask engine: the :class:`~mixbayes._engines.Engine` of dask data, and the ``with
engine(client=...)`` context that sends every fit in its block to a cluster.

It builds the rows (:class:`._cavi.RowShards`) and the topic model's corpus
(:class:`._topics.TopicShards`) that the models' own fit loops drive, and maps
per-row work over the row chunks where they lie (:mod:`._blockwise`). It never calls a model's
private member: the models ask it for their data through the declared protocols.
"""

from __future__ import annotations

from .. import _engines
from .._validation import is_distributed_input as accepts  # a dask collection, or a corpus of one
from ._dask import get_client, require


class DaskEngine:
    """The engine of a ``distributed.Client`` (None: dask's default client, found when a fit
    asks for it)."""

    in_process = False

    def __init__(self, client=None):
        self.client = client

    def rows(self, X, check_values, points):
        from ._blockwise import travelling
        from ._cavi import RowShards, _as_dask
        from ._readers import warn_entries

        check_values = travelling(check_values)  # a model's method travels without futures
        da = require()[1]
        client = get_client(self.client)
        shards = RowShards(client, _as_dask(X, check_values, client, da, points), check_values)
        warn_entries(client, shards.raw, X)
        return shards

    def corpus(self, X):
        from ._topics import TopicShards

        return TopicShards(X, get_client(self.client))

    def map_rows(self, X, function, width, dtype):
        from ._blockwise import map_rows

        return map_rows(X, function, width, dtype)

    def sum_rows(self, X, function, shape):
        from ._blockwise import sum_rows

        return sum_rows(X, function, shape)


def engine(client=None, start_sample=_engines.START_SAMPLE):
    """A context in which every fit runs on the cluster of ``client`` (dask's default client
    when None), its start on ``start_sample`` evenly spaced rows gathered to the client::

        with mixbayes.distributed.engine(client=client):
            model.fit(X)          # X on the client is cut into one shard per worker

    Data already on a cluster (a dask array, a :class:`ShardedCorpus`) need no context."""
    return _engines.use(DaskEngine(client), start_sample)


def fit(model, X, *, client=None, start_sample=_engines.START_SAMPLE):
    """Fit ``model`` on a ``dask.distributed`` cluster and return it: ``model.fit(X)`` in
    :func:`engine` (kept for the callers of the first interface).

    Parameters
    ----------
    model : DirichletMultinomialMixture, VariationalGaussianMixture or TopicModel
        A document mixture with ``inference="vb"``, a Gaussian mixture or a topic model; its
        parameters mean what they mean in process.
    X : dask array, ShardedCorpus, or array-like / sparse matrix of shape (n_samples, n_features)
        Row chunks become the shards (dense chunks or ``scipy.sparse`` CSR chunks; points
        dense). Data on the client are validated there and cut into one shard per worker.
    client : distributed.Client, optional
        The cluster to use; by default dask's default client (the last one started).
    start_sample : int, default=10_000
        Rows the start runs on, on the client (evenly spaced; all of them when there are no
        more). The first global step comes from this sample; every later one from all
        documents. The in-process fit starts by the same rule.

    Returns
    -------
    model
        Fitted; ``labels_`` (a topic model's ``doc_topic_``) is a dask array on the cluster
        (``.compute()`` brings it home).
    """
    _check_model(model)
    with engine(client, start_sample):
        return model.fit(X)


def fit_predict(model, X, *, client=None, start_sample=_engines.START_SAMPLE):
    """:func:`fit`, returning ``labels_`` (a dask array)."""
    _check_model(model)
    with engine(client, start_sample):
        return model.fit_predict(X)


def _check_model(model):
    if not _engines.fits_anywhere(model):
        raise TypeError(
            f"model: mixbayes.distributed fits a DirichletMultinomialMixture, a "
            f"VariationalGaussianMixture or a TopicModel; got {type(model).__name__}. Fit it on "
            "numpy or scipy data instead."
        )


_engines.register(accepts, DaskEngine)
