"""Documents that stay on the workers: a UCI docword or Matrix Market file given to ``mixbayes
cluster`` or ``mixbayes topics`` with ``--scheduler`` or ``--workers``.

The file is read in row shards, each by the worker that keeps it
(:func:`mixbayes.distributed.read_docword`, :func:`~mixbayes.distributed.read_matrix_market`):
at least one shard per worker, and one per 64 MiB of the file. The client reads the header, the
vocabulary and what holds one entry per document (``--labels``, ``labels.txt``,
``doc_ids.txt``), never the counts. What the command does in process with the whole matrix is
done on the shards, where they lie, and gives the same outputs:

* every shard is checked as :func:`mixbayes.read_corpus` checks its counts;
* ``--stop-words`` and ``--min-df``: the terms' document frequencies add over the shards, so
  they are summed on the workers, the terms chosen here (:func:`mixbayes.corpus.kept_terms`,
  as :meth:`mixbayes.Corpus.drop_terms` chooses them) and every shard cut to them on its worker;
* the empty documents (blank, or emptied by the filters) are dropped on the workers; the client
  learns only their row numbers, to drop their names and labels and say how many;
* the fit, the topics' coherence (:func:`mixbayes.metrics.coherence` sums its co-document
  counts on the workers) and the mixture's probabilities (:func:`probabilities`: computed per
  shard on its worker, fetched one shard at a time) need nothing more;
* ``--report`` gets an evenly spaced sample of at most :data:`._dask.SAMPLE` documents (all
  of them when there are no more), and its page says when it is a sample.

So the client holds at most ``SAMPLE`` documents' counts at once (the fit's start sample, or
the report's).

A Matrix Market file not sorted by row (R's ``writeMM`` writes column by column) is read again
with every worker streaming the whole file and keeping its rows, with a note.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from .._validation import check_counts

BLOCKSIZE = 2**26  # bytes of the file per shard, at most (the readers' default)


def count_file(args):
    """The docword or Matrix Market file ``args.input`` names, read by the workers, as
    ``(file, "mtx" or "uci")``; None when the command reads the input here (no cluster, or
    text)."""
    from .._formats import count_file as found

    if getattr(args, "client", None) is None or not os.path.exists(args.input):
        return None
    return found(args.input)


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


def _predict_proba(block, model):
    return model.predict_proba(block)


# ---------------------------------------------------------------------- on the client
@dataclass
class ClusterCorpus:
    """A corpus whose counts stay on the workers, with the attributes of
    :class:`mixbayes.Corpus` that the commands read.

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
    """

    client: object
    parts: list
    sizes: list
    vocabulary: np.ndarray
    doc_ids: np.ndarray
    labels: np.ndarray = None
    notes: list = field(default_factory=list)

    @property
    def n_documents(self):
        return int(sum(self.sizes))

    @property
    def n_terms(self):
        return len(self.vocabulary)

    @cached_property
    def counts(self):
        """The counts as one dask array, a chunk per shard (the fits take it)."""
        from ..distributed._dask import require

        da = require()[1]
        meta = sp.csr_matrix((0, self.n_terms), dtype=np.int64)
        return da.concatenate([
            da.from_delayed(part, shape=(size, self.n_terms), dtype=np.int64, meta=meta)
            for part, size in zip(self.parts, self.sizes)])

    def map(self, function, *args):
        """``function(shard, *args)`` of every shard, computed on the workers (``args`` sent
        once to each) and yielded in row order, one at a time: the client holds one shard's
        result at once."""
        from ..distributed._dask import scatter

        sent = [scatter(self.client, arg) for arg in args]
        results = [self.client.submit(function, part, *sent, pure=False) for part in self.parts]
        while results:  # each fetched and let go in turn
            yield results.pop(0).result()

    def sample(self, m):
        """``(corpus, rows)``: ``m`` evenly spaced documents (all, when there are no more)
        gathered here as a :class:`mixbayes.Corpus`, and their row numbers."""
        from .._engines import evenly_spaced
        from ..corpus import Corpus
        from ..distributed._cavi import gather_rows

        rows = evenly_spaced(self.n_documents, m)
        counts = gather_rows(self.client, self.parts, self.sizes, rows)
        return Corpus(counts, self.vocabulary, self.doc_ids[rows],
                      None if self.labels is None else self.labels[rows]), rows


def probabilities(model, corpus):
    """``model.predict_proba`` of the corpus's documents in row chunks: the whole matrix at once
    in process, a shard at a time from the workers for a :class:`ClusterCorpus`."""
    if not isinstance(corpus, ClusterCorpus):
        yield model.predict_proba(corpus.counts)
        return
    light = _without_documents(model)
    yield from corpus.map(_predict_proba, light)


def _without_documents(model):
    """A shallow copy of a fitted mixture without ``labels_`` (one per document): what the
    workers need to predict, not the labels they would each be sent."""
    import copy

    light = copy.copy(model)
    del light.labels_
    return light


def report_data(corpus):
    """What ``--report`` draws from ``corpus``: ``(data, options)`` for
    :func:`mixbayes.report.write_report`; the corpus itself in process, a sample of at most
    :data:`._dask.SAMPLE` documents (its ``rows`` when not all of them) from the workers."""
    from . import _dask

    if not isinstance(corpus, ClusterCorpus):
        return corpus, {}
    sample, rows = corpus.sample(_dask.SAMPLE)
    return sample, ({} if rows.size == corpus.n_documents else {"rows": rows})


def read_sharded(args, source):
    """:func:`mixbayes.cli._inputs.read_documents` of the docword or Matrix Market file
    ``source`` (from :func:`count_file`), read by the workers of ``args.client``; returns
    ``(ClusterCorpus, stop_words_used, n_left_out)``."""
    from ..distributed import NotSortedError
    from ..distributed._readers import entries_mismatch

    path, kind = source
    notes = []
    try:
        sharded, parts = _read(path, kind, args.client, sorted_rows=True)
    except NotSortedError as exc:
        if kind != "mtx":  # UCI files are sorted by document; the readers rely on it
            raise NotSortedError(f"{str(exc).rstrip('.')}; sort it by document, or leave out "
                                 "--scheduler/--workers to read it in this process.") from None
        sharded, parts = _read(path, kind, args.client, sorted_rows=False)
        notes.append(f"{path} is not sorted by row: every worker read the whole file and kept "
                     "its rows")
    mismatch = entries_mismatch(args.client, parts, path, sharded.entries)
    if mismatch:  # read_corpus refuses such a file; here the shards are read before the count
        notes.append(mismatch.rstrip("."))
    corpus, stop_words, left_out = _documents(args, sharded, parts)
    corpus.notes = notes
    return corpus, stop_words, left_out


def _read(path, kind, client, sorted_rows):
    """The ShardedCorpus of ``path`` and the futures of its non-empty shards, checked on the
    workers (the first bad shard's error raised here, naming the input)."""
    from dask import delayed

    from ..distributed import read_docword, read_matrix_market
    from ..distributed._dask import spread
    from ._inputs import as_input_error

    where = os.path.abspath(path)  # a worker's working folder is not this one
    n_shards = max(len(client.scheduler_info()["workers"]),
                   math.ceil(os.path.getsize(where) / BLOCKSIZE))
    try:
        sharded = (read_matrix_market(where, n_shards, BLOCKSIZE, sorted_rows) if kind == "mtx"
                   else read_docword(where, n_shards, BLOCKSIZE))
    except (ValueError, OSError) as exc:
        raise as_input_error(type(exc)(str(exc).replace(repr(where), repr(path)))) from None
    blocks = [block for block, size in zip(sharded.counts.to_delayed().ravel(),
                                            sharded.counts.chunks[0]) if size]
    parts = spread(client, [delayed(_checked)(block, path) for block in blocks])
    _raise_first_error(parts, path, where)
    return sharded, parts


def _raise_first_error(parts, path, where):
    """Wait for ``parts`` and raise the first one's error here, if any, naming the input as
    the user gave it (``path``, read by the workers at ``where``)."""
    from distributed import wait

    from ._inputs import as_input_error

    wait(parts)
    for part in parts:
        if part.status != "error":
            continue
        exc = part.exception()
        if isinstance(exc, OSError):  # the file is here, so not where a worker looked
            raise OSError(f"input: a dask worker cannot read {where!r} "
                          f"({exc.strerror or exc}); the workers read a docword or Matrix "
                          "Market input themselves: put it where they can (a shared file "
                          "system), or leave out --scheduler to fit in this process.") from None
        if isinstance(exc, ValueError):
            exc = type(exc)(str(exc).replace(repr(where), repr(path)))
        raise as_input_error(exc) from None


def _documents(args, sharded, parts):
    """The corpus of the checked shards with ``--labels``, ``--stop-words`` and ``--min-df``
    applied and the empty documents left out, as ``read_documents`` leaves them; returns
    ``(ClusterCorpus, stop_words_used, n_left_out)``."""
    from ..corpus import kept_terms
    from ..distributed._dask import scatter, total, tree_reduce
    from ._inputs import empty_corpus_error, read_sidecar, stop_words_of

    client = args.client
    n = sharded.counts.shape[0]
    sizes = [int(size) for size in sharded.counts.chunks[0] if size]
    labels = (read_sidecar(args.labels, "labels", n, "documents") if args.labels is not None
              else sharded.labels)
    doc_ids = np.asarray(sharded.doc_ids if sharded.doc_ids is not None
                         else np.arange(n).astype(str), dtype=str)
    if doc_ids.shape != (n,):
        raise ValueError(f"input: doc_ids.txt beside {args.input!r} has {doc_ids.size} "
                         f"entries for {n} documents.")
    vocabulary = np.asarray(sharded.vocabulary, dtype=str)
    stop_words = stop_words_of(args.stop_words, False)  # counts, not raw text
    if stop_words is not None or args.min_df != 1:  # the condition read_documents applies
        frequency = tree_reduce(client, [client.submit(_document_frequency, part)
                                         for part in parts], total).result()
        keep = kept_terms(vocabulary, frequency, n, stop_words, args.min_df)
        columns = scatter(client, np.flatnonzero(keep))
        parts = [client.submit(_select_terms, part, columns) for part in parts]
        vocabulary = vocabulary[keep]
    empty = client.gather([client.submit(_empty_rows, part) for part in parts])
    starts = np.cumsum([0] + sizes[:-1])
    dropped = np.concatenate([rows + start for rows, start in zip(empty, starts)]
                             + [np.empty(0, np.int64)])
    if dropped.size == n:
        raise empty_corpus_error(args.input)
    kept = [(client.submit(_drop_rows, part, rows) if rows.size else part, size - rows.size)
            for part, rows, size in zip(parts, empty, sizes) if size > rows.size]
    documents = np.ones(n, dtype=bool)
    documents[dropped] = False
    corpus = ClusterCorpus(client, [part for part, _ in kept], [size for _, size in kept],
                           vocabulary, doc_ids[documents],
                           None if labels is None else np.asarray(labels)[documents])
    return corpus, stop_words, int(dropped.size)
