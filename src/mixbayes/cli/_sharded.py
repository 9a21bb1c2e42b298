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

BLOCKSIZE = 2**26  # bytes of the file per shard, at most (the readers' default)


def count_file(args):
    """The docword or Matrix Market file ``args.input`` names, read by the workers, as
    ``(file, "mtx" or "uci")``; None when the command reads the input here (no cluster, or
    text)."""
    from .._formats import count_file as found

    if getattr(args, "client", None) is None or not os.path.exists(args.input):
        return None
    return found(args.input)


# ---------------------------------------------------------------------- on the client
def probabilities(model, corpus):
    """``model.predict_proba`` of the corpus's documents in row chunks: the whole matrix at once
    in process, a shard at a time from the workers for a
    :class:`~mixbayes.distributed.ShardedCorpus`."""
    from ..distributed import ShardedCorpus, predict_proba_of

    if not isinstance(corpus, ShardedCorpus):
        yield model.predict_proba(corpus.counts)
        return
    yield from corpus.map(predict_proba_of, _without_documents(model))


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

    from ..distributed import ShardedCorpus

    if not isinstance(corpus, ShardedCorpus):
        return corpus, {}
    sample, rows = corpus.sample(_dask.SAMPLE)
    return sample, ({} if rows.size == corpus.n_documents else {"rows": rows})


def read_sharded(args, source):
    """The docword or Matrix Market file ``source`` (from :func:`count_file`) as a
    :class:`~mixbayes.distributed.ShardedCorpus` read and checked by the workers of
    ``args.client`` and kept there (its ``notes`` say what the reading did); the filters are
    :func:`mixbayes.cli._inputs.read_documents`' own."""
    from ..distributed import NotSortedError, entries_mismatch

    path, kind = source
    notes = []
    try:
        corpus = _read(path, kind, args.client, sorted_rows=True)
    except NotSortedError as exc:
        if kind != "mtx":  # UCI files are sorted by document; the readers rely on it
            raise NotSortedError(f"{str(exc).rstrip('.')}; sort it by document, or leave out "
                                 "--scheduler/--workers to read it in this process.") from None
        corpus = _read(path, kind, args.client, sorted_rows=False)
        notes.append(f"{path} is not sorted by row: every worker read the whole file and kept "
                     "its rows")
    mismatch = entries_mismatch(args.client, corpus.shards, path, corpus.entries)
    if mismatch:  # read_corpus refuses such a file; here the shards are read before the count
        notes.append(mismatch.rstrip("."))
    corpus.notes = notes
    corpus.doc_ids = corpus.document_ids()  # the outputs name every document
    return corpus


def _read(path, kind, client, sorted_rows):
    """The corpus of ``path``, its shards read and checked on the workers (the first bad
    shard's error raised here, naming the input as the user gave it)."""
    from ..distributed import WorkerReadError, read_docword, read_matrix_market
    from ._inputs import as_input_error

    where = os.path.abspath(path)  # a worker's working folder is not this one
    n_shards = max(len(client.scheduler_info()["workers"]),
                   math.ceil(os.path.getsize(where) / BLOCKSIZE))
    try:
        sharded = (read_matrix_market(where, n_shards, BLOCKSIZE, sorted_rows) if kind == "mtx"
                   else read_docword(where, n_shards, BLOCKSIZE))
        return sharded.persist(client)
    except WorkerReadError as exc:  # the file is here, so not where a worker looked
        raise as_input_error(OSError(f"{str(exc).rstrip('.')}, or leave out --scheduler to "
                                     "fit in this process.")) from None
    except (ValueError, OSError) as exc:
        raise as_input_error(type(exc)(str(exc).replace(repr(where), repr(path)))) from None
