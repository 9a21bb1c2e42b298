"""Per-row work on dask data, computed where the rows lie: the Dask engine's ``map_rows`` and
``sum_rows``.

``predict``, ``predict_proba``, ``score_samples`` (a mixture) and ``transform`` (a topic model)
are independent per row given the fitted globals, so on a dask array (or a
:class:`~mixbayes.distributed.ShardedCorpus`) each row chunk is computed by a task on its
worker and the result is a dask array chunked like the rows, as dask-ml's ``ParallelPostFit``
does; a sum over rows (``score``, coherence's co-document counts) is computed there too and
only the sum comes back. A model's bound method travels without the fitted attributes that are
dask collections (a cluster fit's ``labels_``, ``doc_topic_``: futures, which no task may carry).
"""

from __future__ import annotations

import copy
import inspect

import numpy as np

from ._dask import require


def travelling(function):
    """``function``, or for a bound method the method of a shallow copy of its object without
    the attributes that are dask collections."""
    if not inspect.ismethod(function):
        return function
    light = copy.copy(function.__self__)
    for name, value in list(vars(light).items()):
        if callable(getattr(type(value), "__dask_graph__", None)):
            del light.__dict__[name]
    return getattr(light, function.__name__)


def _apply(block, function, width, out_dtype):
    if block.shape[0] == 0:  # an empty chunk: the model's checks refuse a matrix of no rows
        return np.empty((0, width) if width else 0, dtype=out_dtype)
    return np.asarray(function(block), dtype=out_dtype)


def _rows(X):
    """The dask data ``X`` as a 2-D dask array with one column chunk."""
    X = getattr(X, "counts", X)  # a ShardedCorpus
    if X.ndim == 1:
        X = X[:, None]
    return X if len(X.chunks[1]) == 1 else X.rechunk({1: -1})


def map_rows(X, function, width=None, dtype=np.float64):
    """``function(chunk)`` of every row chunk of the dask data ``X``, as a dask array of
    shape (n_rows, width), or (n_rows,) with ``width`` None."""
    X = _rows(X)
    kwargs = dict(function=travelling(function), width=width, out_dtype=dtype)
    if width is None:
        return X.map_blocks(_apply, drop_axis=1, chunks=(X.chunks[0],), dtype=dtype,
                            meta=np.empty(0, dtype), **kwargs)
    return X.map_blocks(_apply, chunks=(X.chunks[0], (width,)), dtype=dtype,
                        meta=np.empty((0, 0), dtype), **kwargs)


def _total(block, function, shape):
    return np.zeros(shape) if block.shape[0] == 0 else function(block)


def sum_rows(X, function, shape=()):
    """The sum over the row chunks of the dask data ``X`` of ``function(chunk)`` (zeros of
    ``shape`` for an empty chunk), each computed on its worker, summed there (on dask's
    default scheduler: the running ``distributed.Client`` when there is one)."""
    import math

    delayed = require()[0].delayed
    X = _rows(X)
    if any(math.isnan(size) for size in X.chunks[0]):
        raise ValueError("X: a dask array with unknown chunk sizes; call "
                         "X.compute_chunk_sizes() first.")
    light = delayed(travelling(function))  # one task holds it, every chunk's reads it
    parts = [delayed(_total)(block, light, shape) for block in X.to_delayed().ravel()]
    return delayed(sum)(parts).compute()
