"""``ShardedCorpus``: a corpus whose counts are row shards on a cluster, with the filters and
views of :class:`mixbayes.Corpus` (labels, stop words, ``min_df``/``max_df``/``max_features``,
empty documents, a sample, a map over the documents), each computed where the shards lie.

The readers (:func:`~mixbayes.distributed.read_docword`,
:func:`~mixbayes.distributed.read_matrix_market`) make one lazily: every shard is read by
the worker that computes it. :meth:`ShardedCorpus.persist` reads and checks them once and
keeps them on the workers; the filters then cut the kept shards there, and the client learns
only what it must (the terms' document frequencies, the empty documents' row numbers).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .._engines import evenly_spaced
from .._validation import check_counts
from ._cavi import gather_rows
from ._dask import get_client, require, scatter, spread, total, tree_reduce


# ---------------------------------------------------------------------- on the workers
def _checked(block, path):
    """A shard's counts as :func:`mixbayes.read_corpus` checks them (CSR, int64, whole and
    non-negative), its error naming the file as the readers name it."""
    try:
        return check_counts(block, "counts")
    except ValueError as exc:
        raise ValueError(f"path: {path!r}: {exc}") from None


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


class WorkerReadError(OSError):
    """A file the client has that a dask worker cannot read (it is not on the worker's file
    system)."""


def _raise_first_error(parts, path):
    """Wait for the shards ``parts`` and raise the first one's error here, if any."""
    from distributed import wait

    wait(parts)
    for part in parts:
        if part.status != "error":
            continue
        exc = part.exception()
        if isinstance(exc, OSError):  # the file is on the client, so not where a worker looked
            raise WorkerReadError(f"path: a dask worker cannot read {path!r} "
                          f"({exc.strerror or exc}); the workers read a docword or Matrix "
                          "Market file themselves: put it where they can (a shared file "
                          "system).") from None
        raise exc


# ---------------------------------------------------------------------- on the client
@dataclass
class ShardedCorpus:
    """Document-term counts in row shards on a ``dask.distributed`` cluster, plus what is
    known about the documents and terms (the attributes of :class:`mixbayes.Corpus`).

    Give it (or its ``counts``) to a model's ``fit`` with a client running: the fit runs on
    the cluster (the user guide's "Larger than one machine").

    Attributes
    ----------
    counts : dask.array.Array of shape (n_documents, n_terms)
        Counts in ``scipy.sparse`` CSR chunks, one per shard. From a reader a shard may be
        empty, and its values are checked when fitted (int64 from a docword file, float64 from
        Matrix Market); after :meth:`persist`, every chunk is a checked int64 CSR matrix kept
        on a worker, and none is empty.
    vocabulary : ndarray of str of shape (n_terms,)
    path : str or None
        The file the shards are read from (named in messages).
    labels : ndarray of shape (n_documents,) or None
        Known classes (``labels.txt`` beside a Matrix Market file, or :meth:`with_labels`).
    doc_ids : ndarray of str of shape (n_documents,) or None
        ``doc_ids.txt`` beside a Matrix Market file; None: the documents are numbered
        ``"0"``, ``"1"``, ... (:meth:`document_ids` makes them when asked: a million names
        are not held on the client for a fit that needs none).
    entries : int or None
        The entries the file's header announces (checked against the shards when fitted).
    notes : list of str
        What the reading did that the user should know (the command line prints them).
    preprocessing : mixbayes.preprocessing.Preprocessing or None
        The filters applied to the terms, as :class:`mixbayes.Corpus` records them.
    client : distributed.Client or None
        The cluster's client, after :meth:`persist`.
    shards : list of distributed.Future or None
        After :meth:`persist`: the futures of the shards' counts, in row order.
    """

    counts: object
    vocabulary: np.ndarray
    path: str = None
    labels: np.ndarray = None
    doc_ids: np.ndarray = None
    entries: int = None
    notes: list = field(default_factory=list)
    preprocessing: object = None
    client: object = field(default=None, repr=False, compare=False)
    shards: list = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        n, p = self.counts.shape
        self.vocabulary = np.asarray(self.vocabulary, dtype=str)
        if self.vocabulary.shape != (p,):
            raise ValueError(f"vocabulary has {self.vocabulary.size} terms but the count "
                             f"matrix has {p} columns.")
        if self.doc_ids is not None:
            self.doc_ids = np.asarray(self.doc_ids, dtype=str)
            if self.doc_ids.shape != (n,):
                raise ValueError(f"doc_ids has {self.doc_ids.size} entries but the count "
                                 f"matrix has {n} documents.")
        if self.labels is not None:
            self.labels = np.asarray(self.labels)
            if self.labels.shape != (n,):
                raise ValueError(f"labels has {self.labels.size} entries but the corpus has "
                                 f"{n} documents.")

    @property
    def n_documents(self):
        return int(self.counts.shape[0])

    @property
    def n_terms(self):
        return int(self.counts.shape[1])

    def document_ids(self):
        """``doc_ids``, or the documents' numbers as strings when it is None."""
        return (np.arange(self.n_documents).astype(str) if self.doc_ids is None
                else self.doc_ids)

    def __repr__(self):
        where = f", from {self.path!r}" if self.path else ""
        kept = ", kept on the workers" if self.shards is not None else ""
        return (f"ShardedCorpus({self.n_documents} documents x {self.n_terms} terms in "
                f"{self.counts.numblocks[0]} shards{kept}{where})")

    # ------------------------------------------------------------------ on the cluster
    def persist(self, client=None):
        """Return this corpus with every shard read and checked (as :func:`mixbayes.read_corpus`
        checks counts) on a worker of ``client`` (dask's default client when None), and kept
        there, the empty shards left out; the first bad shard's error is raised here.

        The filters and views below persist the corpus first; call it yourself to read the
        file once before several of them.
        """
        if self.shards is not None and client in (None, self.client):
            return self
        from dask import delayed

        client = get_client(client)
        chunks = self.counts.to_delayed().ravel()
        sizes = [int(size) for size in self.counts.chunks[0]]
        shards = spread(client, [delayed(_checked)(chunk, self.path)
                                 for chunk, size in zip(chunks, sizes) if size])
        _raise_first_error(shards, self.path)
        return self._kept(client, shards, [size for size in sizes if size], self.vocabulary)

    def _kept(self, client, shards, sizes, vocabulary, **changes):
        """A copy holding the kept ``shards`` (futures of ``sizes`` documents each)."""
        da = require()[1]
        meta = sp.csr_matrix((0, len(vocabulary)), dtype=np.int64)
        counts = da.concatenate([
            da.from_delayed(shard, shape=(size, len(vocabulary)), dtype=np.int64, meta=meta)
            for shard, size in zip(shards, sizes)])
        return dataclasses.replace(self, counts=counts, vocabulary=vocabulary, client=client,
                                   shards=list(shards), notes=list(self.notes), **changes)

    def _sizes(self):
        return [int(size) for size in self.counts.chunks[0]]

    def with_labels(self, labels):
        """Return a copy with ``labels`` (one per document)."""
        return dataclasses.replace(self, labels=labels, notes=list(self.notes))

    def drop_terms(self, stop_words=None, min_df=1, max_df=1.0, max_features=None):
        """Return a copy without the stop words, the terms of too few or too many documents,
        and beyond the ``max_features`` most widely used: the terms
        :meth:`mixbayes.Corpus.drop_terms` keeps (document frequencies add over shards, so
        they are summed on the workers, the terms chosen here and every shard cut on its
        worker).

        Documents left without terms stay in the corpus, empty (:meth:`drop_empty_documents`).
        """
        from ..corpus import kept_terms
        from ..preprocessing import Preprocessing

        kept = self.persist()
        client = kept.client
        frequency = tree_reduce(client, [client.submit(_document_frequency, shard)
                                         for shard in kept.shards], total).result()
        keep = kept_terms(kept.vocabulary, frequency, kept.n_documents, stop_words, min_df,
                          max_df, max_features)
        columns = scatter(client, np.flatnonzero(keep))
        shards = [client.submit(_select_terms, shard, columns) for shard in kept.shards]
        done = (kept.preprocessing or Preprocessing()).filtered(stop_words, min_df, max_df,
                                                                max_features)
        return kept._kept(client, shards, kept._sizes(), kept.vocabulary[keep],
                          preprocessing=done)

    def drop_empty_documents(self):
        """Return a copy without the documents that hold no term (found on the workers: the
        client learns only their row numbers, to drop their names and labels); the corpus
        itself when there are none, and None when every document is empty."""
        kept = self.persist()
        client, sizes = kept.client, kept._sizes()
        empty = client.gather([client.submit(_empty_rows, shard) for shard in kept.shards])
        if not any(rows.size for rows in empty):
            return kept
        documents = np.ones(kept.n_documents, dtype=bool)
        for rows, start in zip(empty, np.cumsum([0] + sizes[:-1])):
            documents[rows + start] = False
        if not documents.any():
            return None
        left = [(client.submit(_drop_rows, shard, rows) if rows.size else shard,
                 size - rows.size)
                for shard, rows, size in zip(kept.shards, empty, sizes) if size > rows.size]
        return kept._kept(client, [shard for shard, _ in left], [size for _, size in left],
                          kept.vocabulary, doc_ids=kept.document_ids()[documents],
                          labels=None if kept.labels is None else kept.labels[documents])

    def map(self, function, *args):
        """``function(shard, *args)`` of every shard, computed on the workers (``args`` sent
        once to each) and yielded in row order, one at a time: the client holds one shard's
        result at once."""
        kept = self.persist()
        sent = [scatter(kept.client, arg) for arg in args]
        results = [kept.client.submit(function, shard, *sent, pure=False)
                   for shard in kept.shards]
        while results:  # each fetched and let go in turn
            yield results.pop(0).result()

    def sample(self, m):
        """``(corpus, rows)``: ``m`` evenly spaced documents (all, when there are no more)
        gathered here as a :class:`mixbayes.Corpus`, and their row numbers."""
        from ..corpus import Corpus

        kept = self.persist()
        rows = evenly_spaced(kept.n_documents, m)
        counts = gather_rows(kept.client, kept.shards, kept._sizes(), rows)
        return Corpus(counts, kept.vocabulary, kept.document_ids()[rows],
                      None if kept.labels is None else kept.labels[rows],
                      kept.preprocessing), rows
