"""Measures of a corpus on a cluster: what adds over row shards is computed on each shard where
it lies and summed there (by dask's tree reduction); only the sum comes to the client."""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_counts
from ._dask import require


def _shard_co_documents(block, terms):
    """:func:`mixbayes.metrics._co_documents` of one shard, as a (1, m, m) block."""
    from ..metrics import _co_documents

    if block.shape[0] == 0:  # an empty shard (check_counts refuses a matrix of no rows)
        return np.zeros((1, terms.size, terms.size))
    return _co_documents(check_counts(block, "X"), terms)[None]


def co_documents(X, terms):
    """How many documents of the dask array of counts ``X`` hold each pair of the columns
    ``terms`` (the diagonal: how many hold each), as :func:`mixbayes.metrics._co_documents`
    counts them in process: one (m, m) array per row chunk, summed on the workers (on dask's
    default scheduler, the running ``distributed.Client`` when there is one)."""
    require()
    if any(math.isnan(size) for size in X.chunks[0]):
        raise ValueError("X: a dask array with unknown chunk sizes; call "
                         "X.compute_chunk_sizes() first.")
    X = X if len(X.chunks[1]) == 1 else X.rechunk({1: -1})
    m = int(terms.size)
    blocks = X.map_blocks(_shard_co_documents, terms=terms, new_axis=2, dtype=np.float64,
                          chunks=((1,) * X.numblocks[0], (m,), (m,)),
                          meta=np.empty((0, 0, 0)))
    return blocks.sum(axis=0).compute()
