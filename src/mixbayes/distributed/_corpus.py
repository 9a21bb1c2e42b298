"""A corpus whose counts stay on the workers, as a library object: a :class:`ShardedCorpus`'s
shards checked where they lie, filtered as :class:`mixbayes.Corpus` filters (stop words,
``min_df``, empty documents, labels), sampled and mapped over; the command line's runs with
``--scheduler``/``--workers`` read their docword or Matrix Market input into one."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from .._engines import evenly_spaced
from .._validation import check_counts
from ._cavi import gather_rows
from ._dask import require, scatter, spread, total, tree_reduce


# ---------------------------------------------------------------------- on the workers
def _checked(block, path):
    """A shard's counts as :func:`mixbayes.read_corpus` checks them (CSR, int64, no zeros)."""
    try:
        return check_counts(block, "counts")
    except ValueError as exc:
        raise ValueError(f"input: {path!r}: {exc}") from None


def _document_frequency(block):
    return np.asarray((block > 0).sum(axis=0)).ravel()  # as Corpus.drop_terms counts them


def _select_terms(block, columns):
    return block[:, columns]


def _empty_rows(block):
    return np.flatnonzero(np.diff(block.indptr) == 0)


def _drop_rows(block, rows):
    keep = np.ones(block.shape[0], dtype=bool)
    keep[rows] = False
    return block[keep]


def predict_proba_of(block, model):
    """``model.predict_proba`` of one shard (on its worker)."""
    return model.predict_proba(block)


def checked_shards(client, sharded, path):
    """Futures of the non-empty shards of the :class:`ShardedCorpus` ``sharded``, each checked
    on its worker as :func:`mixbayes.read_corpus` checks its counts (``path``: the input's
    name in the messages); a shard that fails holds its error."""
    from dask import delayed

    blocks = [block for block, size in zip(sharded.counts.to_delayed().ravel(),
                                            sharded.counts.chunks[0]) if size]
    return spread(client, [delayed(_checked)(block, path) for block in blocks])


# ---------------------------------------------------------------------- on the client
@dataclass
class ClusterCorpus:
    """A corpus whose counts stay on the workers, with the attributes of
    :class:`mixbayes.Corpus` that its readers read (:func:`filtered` makes one).

    Attributes
    ----------
    client : distributed.Client
    parts : list of Future
        The shards' CSR counts, in row order; none is empty, nor holds an empty document.
    sizes : list of int
        Documents per shard.
    vocabulary, doc_ids : ndarray of str
    labels : ndarray or None
    notes : list of str
        What the reading did that the user should know.
    preprocessing : mixbayes.preprocessing.Preprocessing or None
        The filters applied to the terms (as :class:`mixbayes.Corpus` records them).
    """

    client: object
    parts: list
    sizes: list
    vocabulary: np.ndarray
    doc_ids: np.ndarray
    labels: np.ndarray = None
    notes: list = field(default_factory=list)
    preprocessing: object = None

    @property
    def n_documents(self):
        return int(sum(self.sizes))

    @property
    def n_terms(self):
        return len(self.vocabulary)

    @cached_property
    def counts(self):
        """The counts as one dask array, a chunk per shard (the fits take it)."""
        da = require()[1]
        meta = sp.csr_matrix((0, self.n_terms), dtype=np.int64)
        return da.concatenate([
            da.from_delayed(part, shape=(size, self.n_terms), dtype=np.int64, meta=meta)
            for part, size in zip(self.parts, self.sizes)])

    def map(self, function, *args):
        """``function(shard, *args)`` of every shard, computed on the workers (``args`` sent
        once to each) and yielded in row order, one at a time: the client holds one shard's
        result at once."""
        sent = [scatter(self.client, arg) for arg in args]
        results = [self.client.submit(function, part, *sent, pure=False) for part in self.parts]
        while results:  # each fetched and let go in turn
            yield results.pop(0).result()

    def sample(self, m):
        """``(corpus, rows)``: ``m`` evenly spaced documents (all, when there are no more)
        gathered here as a :class:`mixbayes.Corpus`, and their row numbers."""
        from ..corpus import Corpus

        rows = evenly_spaced(self.n_documents, m)
        counts = gather_rows(self.client, self.parts, self.sizes, rows)
        return Corpus(counts, self.vocabulary, self.doc_ids[rows],
                      None if self.labels is None else self.labels[rows]), rows


def filtered(client, sharded, parts, labels=None, stop_words=None, min_df=1, name=None,
             max_df=1.0, max_features=None):
    """The corpus of the checked shards ``parts`` of ``sharded`` with its ``labels``, the terms
    of ``stop_words``, those in fewer than ``min_df`` or more than ``max_df`` documents and
    beyond the ``max_features`` most widely used dropped (as
    :meth:`mixbayes.Corpus.drop_terms` drops them: the document frequencies summed on the
    workers, every shard cut there) and the empty documents left out (on the workers too; the
    client learns their row numbers). ``name``: the input's, in messages (default: its path).
    Returns ``(ClusterCorpus, n_left_out)``; the corpus is None when every document is empty."""
    from ..corpus import kept_terms
    from ..preprocessing import Preprocessing

    n = sharded.counts.shape[0]
    sizes = [int(size) for size in sharded.counts.chunks[0] if size]
    doc_ids = np.asarray(sharded.doc_ids if sharded.doc_ids is not None
                         else np.arange(n).astype(str), dtype=str)
    if doc_ids.shape != (n,):
        raise ValueError(f"input: doc_ids.txt beside {name or sharded.path!r} has {doc_ids.size} "
                         f"entries for {n} documents.")
    vocabulary = np.asarray(sharded.vocabulary, dtype=str)
    done = Preprocessing()  # counts read as given (a docword or Matrix Market file)
    if stop_words is not None or min_df != 1 or max_df != 1.0 or max_features:
        frequency = tree_reduce(client, [client.submit(_document_frequency, part)
                                         for part in parts], total).result()
        keep = kept_terms(vocabulary, frequency, n, stop_words, min_df, max_df, max_features)
        columns = scatter(client, np.flatnonzero(keep))
        parts = [client.submit(_select_terms, part, columns) for part in parts]
        vocabulary = vocabulary[keep]
        done = done.filtered(stop_words, min_df, max_df, max_features)
    empty = client.gather([client.submit(_empty_rows, part) for part in parts])
    starts = np.cumsum([0] + sizes[:-1])
    dropped = np.concatenate([rows + start for rows, start in zip(empty, starts)]
                             + [np.empty(0, np.int64)])
    if dropped.size == n:
        return None, n
    kept = [(client.submit(_drop_rows, part, rows) if rows.size else part, size - rows.size)
            for part, rows, size in zip(parts, empty, sizes) if size > rows.size]
    documents = np.ones(n, dtype=bool)
    documents[dropped] = False
    corpus = ClusterCorpus(client, [part for part, _ in kept], [size for _, size in kept],
                           vocabulary, doc_ids[documents],
                           None if labels is None else np.asarray(labels)[documents],
                           preprocessing=done)
    return corpus, int(dropped.size)
