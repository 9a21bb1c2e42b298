"""The distributed CAVI driver: shards persisted on the workers, the loop on the client.

Worker-side functions are the module's top-level ``_``-functions; they receive shards and the
scattered globals and return small objects. The client-side loop is
:meth:`~mixbayes.mixture.VariationalMixture._cavi`, the one the in-process fit runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._sizes import Sized
from .._validation import validate_params
from ._dask import Homes, get_client, require, scatter, total, tree_reduce
from ._readers import warn_entries

START_SAMPLE = 10_000  # documents the start (k-means++, screen, warm-up) runs on, on the client


# ---------------------------------------------------------------------- on the workers
@dataclass
class _Local(Sized):
    """One shard's local step: additive statistics, and its labels (which stay on the worker)."""

    stats: object  # the family's sufficient statistics
    counts: np.ndarray  # (K,) expected cluster sizes
    log_norm: float  # sum over the shard's documents of log sum_k exp L_ik
    labels: np.ndarray | None  # (n_shard,) argmax of the responsibilities; None in a sum


def _validate(check_values, block):
    return check_values(block)


def _take(X, rows):
    return X[rows]


def _prepare(family, X):
    return family.prepare(X)


def _log_base(family, *shards):
    return math.fsum(float(family.log_base_measure(data).sum()) for data in shards)


def _local_step(data, globals_):
    family, expectations, expected_log_weights = globals_
    resp, log_norm, counts = family.responsibilities(data, expectations, expected_log_weights)
    return _Local(family.sufficient_statistics(data, resp), np.array(counts),
                  float(log_norm.sum()), resp.argmax(axis=1))


def _summary(local):
    """A shard's local step without its labels (which stay on its worker)."""
    return _Local(local.stats, local.counts, local.log_norm, None)


def _add(*parts):
    stats, counts, log_norm = parts[0].stats, parts[0].counts, parts[0].log_norm
    for part in parts[1:]:
        stats, counts, log_norm = stats + part.stats, counts + part.counts, log_norm + part.log_norm
    return _Local(stats, counts, log_norm, None)


def _labels(local):
    return local.labels


def _moments(X, centre, full):
    from ..families.gaussian import PointMoments

    return PointMoments.of(X, centre, full)


# ---------------------------------------------------------------------- on the client
def evenly_spaced(n, m):
    """``m`` evenly spaced row numbers of ``n`` rows, increasing (all of them when ``m >= n``)."""
    if m >= n:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, m).round().astype(np.int64))


def gather_rows(client, parts, sizes, rows):
    """The rows numbered ``rows`` (increasing) of the row shards ``parts`` (futures of ``sizes``
    rows each), gathered to the client as one matrix: a shard wanted whole travels as it is,
    the others send only the rows wanted."""
    offsets = np.cumsum([0] + list(sizes))
    shard = np.searchsorted(offsets, rows, side="right") - 1
    wanted = []
    for s, part in enumerate(parts):
        mine = rows[shard == s] - offsets[s]
        if mine.size == sizes[s]:
            wanted.append(part)
        elif mine.size:
            wanted.append(client.submit(_take, part, mine))
    gathered = client.gather(wanted)
    return (sp.vstack(gathered, format="csr") if sp.issparse(gathered[0])
            else np.vstack(gathered))


def _check_model(model):
    from ..mixture import DirichletMultinomialMixture, VariationalGaussianMixture

    if not isinstance(model, (DirichletMultinomialMixture, VariationalGaussianMixture)):
        raise TypeError(
            f"model: mixbayes.distributed fits a DirichletMultinomialMixture, a "
            f"VariationalGaussianMixture or a TopicModel; got {type(model).__name__}. Fit it on "
            "numpy or scipy data instead."
        )
    if getattr(model, "inference", "vb") != "vb":
        raise ValueError(
            f"inference: a distributed fit runs variational Bayes (inference='vb'); got "
            f"{model.inference!r} (the collapsed Gibbs sampler is sequential over documents)."
        )


class _Shards:
    """Row shards of the data, validated and then prepared on the workers, and kept there.

    ``sizes`` holds every chunk's row count (empty ones too, so that labels line up with the
    input's chunks); only the non-empty ones have futures.
    """

    def __init__(self, client, X, check_values):
        if any(math.isnan(size) for size in X.chunks[0]):
            raise ValueError("X: a dask array with unknown chunk sizes; call "
                             "X.compute_chunk_sizes() first.")
        self.client = client
        self.sizes = [int(size) for size in X.chunks[0]]
        self.n = sum(self.sizes)
        if not self.n:
            raise ValueError("X has no rows (a dask array of shape "
                             f"{tuple(int(n) for n in X.shape)}).")
        blocks = [block for block, size in zip(X.to_delayed().ravel(), self.sizes) if size]
        delayed = require()[0].delayed
        self.homes = Homes(client, len(blocks))
        self.raw = self.homes.compute([delayed(_validate)(check_values, block)
                                       for block in blocks])
        self.data = None
        self.constant = None

    def sample(self, m):
        """``m`` evenly spaced rows of the validated data, gathered to the client (every row,
        in order, when ``m >= n``)."""
        return gather_rows(self.client, self.raw, [size for size in self.sizes if size],
                           evenly_spaced(self.n, m))

    def moments(self, centre, full):
        """The validated data's column moments about ``centre``, summed on the workers."""
        centre = scatter(self.client, centre)
        parts = [self.homes.submit(i, _moments, raw, centre, full)
                 for i, raw in enumerate(self.raw)]
        return self._reduce(parts, total).result()

    def _reduce(self, parts, add, first=None):
        """The future of ``add`` over ``parts`` (``first`` applied to each), by a tree reduce
        on the workers."""
        return tree_reduce(self.client, parts, add, first)

    def prepare(self, family):
        """Prepare every shard for ``family`` (on its worker) and drop the validated copy."""
        self.data = [self.homes.submit(i, _prepare, family, raw) for i, raw in enumerate(self.raw)]
        self.raw = None
        self.constant = self.client.submit(_log_base, family, *self.data).result()

    def local_step(self, family, state):
        """Scatter the globals once to every worker, map the local step over the shards and
        sum the statistics on the workers; return the shards' futures and the fetched sum."""
        globals_ = scatter(self.client, (family, state.family_expectations,
                                          state.expected_log_weights))
        local = [self.homes.submit(i, _local_step, data, globals_, pure=False)
                 for i, data in enumerate(self.data)]
        return local, self._reduce(local, _add, _summary).result()

    def labels(self, local):
        """The labels left on the workers by ``local`` as one dask array, chunked like X's
        non-empty row chunks (dask's concatenate drops empty ones)."""
        da = require()[1]
        return da.concatenate([
            da.from_delayed(self.client.submit(_labels, part), shape=(size,), dtype=np.intp)
            for part, size in zip(local, [size for size in self.sizes if size])
        ])


def _as_dask(X, check_values, client, da, points=False):
    """``X`` as a dask array with one column chunk; data on the client are validated and cut
    into one row shard per worker."""
    X = getattr(X, "counts", X)  # a ShardedCorpus
    if not callable(getattr(type(X), "__dask_graph__", None)):
        X = check_values(X)
        n_workers = max(len(client.scheduler_info()["workers"]), 1)
        return da.from_array(X, chunks=(max(math.ceil(X.shape[0] / n_workers), 1), -1),
                             asarray=False)
    if X.ndim == 1 and points:
        X = X[:, None]
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D ({'points x features' if points else 'documents x terms'}"
                         f"); got a dask array with {X.ndim} dimension(s).")
    return X if len(X.chunks[1]) == 1 else X.rechunk({1: -1})


def fit(model, X, *, client=None, start_sample=START_SAMPLE):
    """Fit ``model`` on a ``dask.distributed`` cluster and return it.

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
        documents.

    Returns
    -------
    model
        Fitted; ``labels_`` (a topic model's ``doc_topic_``) is a dask array on the cluster
        (``.compute()`` brings it home).
    """
    from ..topics import TopicModel

    if isinstance(model, TopicModel):
        from ._topics import fit_topics

        return fit_topics(model, X, client=client, start_sample=start_sample)
    fit_predict(model, X, client=client, start_sample=start_sample)
    return model


def fit_predict(model, X, *, client=None, start_sample=START_SAMPLE):
    """:func:`fit`, returning ``labels_`` (a dask array)."""
    da = require()[1]
    _check_model(model)
    validate_params(model, model._parameter_rules)
    if not isinstance(start_sample, (int, np.integer)) or start_sample < 1:
        raise ValueError(f"start_sample must be a positive integer; got {start_sample!r}.")
    client = get_client(client)
    check_values = type(model)._check_values
    from ..mixture import VariationalGaussianMixture

    points = isinstance(model, VariationalGaussianMixture)  # 1-D: one feature, as in process
    shards = _Shards(client, _as_dask(X, check_values, client, da, points), check_values)
    warn_entries(client, shards.raw, X)
    model._check_params(shards.n)
    sample, rngs = model._begin_fit(shards.sample(max(start_sample, model.n_components, 2)))
    make_family = model._family_factory(
        sample, lambda full: shards.moments(sample.mean(axis=0), full))
    family = make_family()
    shards.prepare(family)
    data = family.prepare(sample)
    fit_priors = bool(getattr(model, "fit_priors", False))

    def fit_one(run, resp):
        family = make_family()  # fresh: empirical Bayes changes the prior

        def local_step(state):
            local, total = shards.local_step(family, state)
            return (local, total), shards.constant + total.log_norm

        def global_step(local, state):
            total = local[1]
            return model._global_from_stats(total.stats, total.counts, family,
                                            state.weight_prior, fit_priors)

        state = model._start_state(sample, data, family, rngs[run], resp)
        result = model._cavi(run, shards.n, family, state, local_step, global_step)
        result["labels"] = shards.labels(result.pop("local")[0])
        return result

    model._fit_starts(sample, family, data, rngs, fit_one)
    return model.labels_
