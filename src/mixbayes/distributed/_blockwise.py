"""Per-row results of a fitted model on dask data, computed where the rows lie.

``predict``, ``predict_proba``, ``score_samples`` (a mixture) and ``transform`` (a topic model)
are independent per row given the fitted globals, so on a dask array (or a
:class:`~mixbayes.distributed.ShardedCorpus`) each row chunk is scored by a task on its worker
and the result is a dask array chunked like the rows, as dask-ml's ``ParallelPostFit`` does; a
sum over rows (``score``) is computed there too and only the number comes back. The model
travels to the workers without its per-document fitted arrays (``labels_``, ``doc_topic_``: a
cluster fit's are dask arrays of futures, which no task may carry).
"""

from __future__ import annotations

import copy

import numpy as np

from ._dask import require

_PER_DOCUMENT = ("labels_", "doc_topic_")


def _travelling(model):
    """A shallow copy of ``model`` without its per-document fitted arrays."""
    light = copy.copy(model)
    for name in _PER_DOCUMENT:
        light.__dict__.pop(name, None)
    return light


def _apply(block, model, method, width, out_dtype):
    if block.shape[0] == 0:  # an empty chunk: the model's checks refuse a matrix of no rows
        return np.empty((0, width) if width else 0, dtype=out_dtype)
    return np.asarray(getattr(model, method)(block), dtype=out_dtype)


def _rows(X):
    """The dask data ``X`` as a 2-D dask array with one column chunk."""
    X = getattr(X, "counts", X)  # a ShardedCorpus
    if X.ndim == 1:
        X = X[:, None]
    return X if len(X.chunks[1]) == 1 else X.rechunk({1: -1})


def map_rows(model, X, method, width=None, dtype=np.float64):
    """``model.method(chunk)`` of every row chunk of the dask data ``X``, as a dask array of
    shape (n_rows, width), or (n_rows,) with ``width`` None."""
    X = _rows(X)
    kwargs = dict(model=_travelling(model), method=method, width=width, out_dtype=dtype)
    if width is None:
        return X.map_blocks(_apply, drop_axis=1, chunks=(X.chunks[0],), dtype=dtype,
                            meta=np.empty(0, dtype), **kwargs)
    return X.map_blocks(_apply, chunks=(X.chunks[0], (width,)), dtype=dtype,
                        meta=np.empty((0, 0), dtype), **kwargs)


def _total(block, model, method):
    return 0.0 if block.shape[0] == 0 else float(getattr(model, method)(block))


def sum_over_chunks(model, X, method):
    """The sum over the row chunks of the dask data ``X`` of ``model.method(chunk)`` (a
    number), each computed on its worker."""
    delayed = require()[0].delayed
    light = delayed(_travelling(model))  # one task holds the model, every chunk's reads it
    parts = [delayed(_total)(block, light, method) for block in _rows(X).to_delayed().ravel()]
    return float(delayed(sum)(parts).compute())
