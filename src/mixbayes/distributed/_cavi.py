"""Rows on a dask cluster: shards persisted on the workers, implementing the
:class:`~mixbayes._engines.Rows` protocol the mixtures' one fit loop is written against.

Worker-side functions are the module's top-level ``_``-functions; they receive shards and the
scattered globals and return small objects. The loop itself is the model's
(:meth:`~mixbayes.mixture.VariationalMixture.fit_predict`), run on the client.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._engines import START_SAMPLE, evenly_spaced  # noqa: F401 (START_SAMPLE: a public name)
from .._sizes import Sized
from ._dask import Homes, require, scatter, total, tree_reduce


# ---------------------------------------------------------------------- on the workers
@dataclass
class _Local(Sized):
    """One shard's local step: additive statistics, and its labels (which stay on the worker)."""

    stats: object  # the family's sufficient statistics
    counts: np.ndarray  # (K,) expected cluster sizes
    log_norm: float  # sum over the shard's documents of log sum_k exp L_ik
    labels: np.ndarray | None  # (n_shard,) argmax of the responsibilities; None in a sum


def _validate(check_values, block, shape):
    """A shard validated, and checked to hold the rows and columns its dask array declares
    (a chunk of ``from_delayed`` may not: its sums would fail to add up, or its labels to line
    up with the rows, far from the cause)."""
    X = check_values(block)
    if tuple(X.shape) != shape:
        raise ValueError(
            f"X: a chunk holds {X.shape[0]} x {X.shape[1]} values where the dask array declares "
            f"{shape[0]} x {shape[1]}; give every chunk the shape its array says (the shape= "
            "of da.from_delayed).")
    return X


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


class RowShards:
    """Row shards of the data, validated and then prepared on the workers, and kept there: the
    :class:`~mixbayes._engines.Rows` of a dask array.

    ``sizes`` holds every chunk's row count (empty ones too, so that labels line up with the
    input's chunks); only the non-empty ones have futures.
    """

    reuses_buffers = False  # the family travels to every worker each iteration

    def __init__(self, client, X, check_values):
        if any(math.isnan(size) for size in X.chunks[0]):
            raise ValueError("X: a dask array with unknown chunk sizes; call "
                             "X.compute_chunk_sizes() first.")
        self.client, self.check_values = client, check_values
        self.sizes = [int(size) for size in X.chunks[0]]
        self.n = sum(self.sizes)
        if not self.n:
            raise ValueError("X has no rows (a dask array of shape "
                             f"{tuple(int(n) for n in X.shape)}).")
        blocks = [block for block, size in zip(X.to_delayed().ravel(), self.sizes) if size]
        delayed = require()[0].delayed
        self.homes = Homes(client, len(blocks))
        width = int(X.shape[1])
        self.raw = self.homes.compute([
            delayed(_validate)(check_values, block, (size, width))
            for block, size in zip(blocks, [size for size in self.sizes if size])])
        self.data = None
        self.constant = None
        self._last = None  # (size, rows) of the last sample drawn: the start's

    def sample(self, m):
        """``m`` evenly spaced rows of the validated data, gathered to the client (every row,
        in order, when ``m >= n``)."""
        if self._last is not None and self._last[0] == m:
            return self._last[1]
        rows = gather_rows(self.client, self.raw, [size for size in self.sizes if size],
                           evenly_spaced(self.n, m))
        self._last = (m, self.check_values(rows))  # in the form the model's checks give
        return self._last[1]

    def moments(self, centre, full):
        """The validated data's column moments about ``centre``, summed on the workers."""
        centre = scatter(self.client, centre)
        parts = [self.homes.submit(i, _moments, raw, centre, full)
                 for i, raw in enumerate(self.raw)]
        return self._reduce(parts, total).result()

    def summary(self, full):
        """``(n, mean, variances, covariance)`` from the column moments about the mean of
        the start sample (:meth:`sample`, the one the fit drew: near the mean, the centred
        moments lose nothing to cancellation)."""
        centre = (self._last[1] if self._last else self.sample(START_SAMPLE)).mean(axis=0)
        totals = self.moments(centre, full)
        return (totals.n, *totals.summary())

    def _reduce(self, parts, add, first=None):
        """The future of ``add`` over ``parts`` (``first`` applied to each), by a tree reduce
        on the workers."""
        return tree_reduce(self.client, parts, add, first)

    def prepare(self, family, sample=None, data=None):
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
        summed = self._reduce(local, _add, _summary).result()
        return (local, summed), self.constant + summed.log_norm

    def statistics(self, family, local):
        """The summed statistics and cluster sizes of a :meth:`local_step`."""
        return local[1].stats, local[1].counts

    def labels(self, local):
        """The labels left on the workers by a :meth:`local_step` as one dask array, chunked
        like X's non-empty row chunks (dask's concatenate drops empty ones)."""
        da = require()[1]
        return da.concatenate([
            da.from_delayed(self.client.submit(_labels, part), shape=(size,), dtype=np.intp)
            for part, size in zip(local[0], [size for size in self.sizes if size])
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
