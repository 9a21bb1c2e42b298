"""Count files read in row shards, each by the worker that keeps it: UCI ``docword`` and
Matrix Market coordinate files.

Both formats are a header, then one ``row column value`` triple per line, 1-based (a Matrix
Market ``pattern`` file leaves the value out: 1). When the triples are sorted by row (UCI
promises it; Matrix Market files written from CSR, as ``scipy.io.mmwrite`` and
:meth:`mixbayes.Corpus.write` write them, are), the client reads the header and, for a plain
text file, finds the shard boundaries by a cheap scan: it seeks to evenly spaced byte offsets
and reads forward to the first line of the next row (a few lines each), so that every shard is
a byte range holding whole rows, and a worker reads only its byte range. A gzipped file
cannot be seeked, and an unsorted one has no row ranges in byte ranges: their shards are
equal row ranges, and each worker streams the file from the start (to the end of its rows
when sorted, to the end of the file when not), keeping its own rows.

A file said to be sorted that is not is refused (:class:`NotSortedError`) by the shard that
finds a row outside its range, or a row before the one above it when streaming
(``sorted_rows=False`` then reads it, each shard reading the whole file).
"""

from __future__ import annotations

import gzip
import io
import math
import os
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._formats import check_announced_shape, count_file, read_labels, read_list
from ..preprocessing import Preprocessing
from ._corpus import ShardedCorpus
from ._dask import require

_BLOCK = 1 << 24  # bytes of a streamed file parsed at a time


class NotSortedError(ValueError):
    """A file read as sorted by row that is not (``sorted_rows=False`` reads it)."""


# ---------------------------------------------------------------------- the two headers
@dataclass(frozen=True)
class _Layout:
    """What a header says: the shape, and how the triples read."""

    n_rows: int
    n_cols: int
    columns: int  # 3, or 2 for a pattern file
    dtype: type  # of the values
    what: str  # "document" or "row", for messages
    column: str  # "word" or "column", for messages
    kind: str  # the format's name, for messages
    entries: int = None  # the entries (triples) the header announces


def _docword_header(handle, path):
    """Read the three header lines (documents D, words W, entries NNZ)."""
    try:
        n_docs, n_words, nnz = (int(handle.readline()) for _ in range(3))
    except ValueError as exc:
        raise ValueError(f"path: {path!r} is not a UCI docword file ({exc}).") from None
    if min(n_docs, n_words, nnz) < 0:
        raise ValueError(f"path: {path!r} announces negative sizes ({n_docs}, {n_words}, {nnz}).")
    return _Layout(n_docs, n_words, 3, np.int64, "document", "word", "UCI docword", nnz)


def _mtx_header(handle, path):
    """Read the banner, the comments and the size line of a Matrix Market coordinate file."""
    banner = handle.readline().decode("latin-1").split()
    if len(banner) != 5 or banner[0] != "%%MatrixMarket" or banner[1].lower() != "matrix":
        raise ValueError(f"path: {path!r} is not a Matrix Market file (its first line is not a "
                         "%%MatrixMarket matrix banner).")
    layout, field, symmetry = (word.lower() for word in banner[2:])
    if layout != "coordinate":
        raise ValueError(f"path: {path!r} is a dense Matrix Market array; shards are read from "
                         "coordinate files (read a dense one whole with mixbayes.read_corpus).")
    if field not in ("integer", "real", "pattern") or symmetry != "general":
        raise ValueError(f"path: {path!r} holds a {field} {symmetry} matrix; counts are an "
                         "integer, real or pattern general matrix.")
    line = b"%"
    while line.startswith(b"%") or not line.strip():
        line = handle.readline()
        if not line:
            raise ValueError(f"path: {path!r} ends before its size line.")
    try:
        n_rows, n_cols, nnz = (int(v) for v in line.split())
    except ValueError:
        raise ValueError(f"path: {path!r} has a bad size line {line.strip()[:40]!r}.") from None
    if min(n_rows, n_cols, nnz) < 0:
        raise ValueError(f"path: {path!r} announces negative sizes ({n_rows}, {n_cols}, {nnz}).")
    return _Layout(n_rows, n_cols, 2 if field == "pattern" else 3,
                   np.int64 if field != "real" else np.float64, "row", "column", "Matrix Market",
                   nnz)


def _open(path):
    return gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")


# ---------------------------------------------------------------------- the shards
def _row_after(handle, offset, end, n_rows):
    """``(position, row)`` of the first line at or after ``offset`` that starts a new row (the
    end of the file and n_rows + 1 when none does)."""
    handle.seek(offset - 1)
    handle.readline()  # to the start of the next line (stays put when offset starts one)
    first = None
    while True:
        position = handle.tell()
        line = handle.readline()
        if not line:
            return end, n_rows + 1
        if not line.strip():
            continue
        row = int(line.split()[0])
        if first is None:
            first = row
        elif row != first:
            return position, row


def _plan(path, header, n_shards, blocksize, sorted_rows):
    """The header's layout and the shards as ``(start byte, stop byte, first row, end row)``;
    bytes are None where the shard streams the file (gzip, or rows not sorted)."""
    size = os.path.getsize(path)
    with _open(path) as handle:
        try:
            layout = header(handle, path)
        except gzip.BadGzipFile:
            raise ValueError(f"path: {path!r} is not gzipped, though its name ends in .gz; "
                             "rename it without .gz, or gzip it.") from None
        check_announced_shape(path, layout.n_rows, layout.n_cols, dense=False)
        if path.endswith(".gz") or not sorted_rows:
            n_shards = n_shards or max(1, math.ceil(size / blocksize))
            firsts = [1 + layout.n_rows * s // n_shards for s in range(n_shards + 1)]
            return layout, [(None, None, lo, hi) for lo, hi in zip(firsts, firsts[1:])]
        begin = handle.tell()
        n_shards = n_shards or max(1, math.ceil((size - begin) / blocksize))
        cuts = [(begin, 1)]
        for s in range(1, n_shards):
            offset = max(begin + (size - begin) * s // n_shards, cuts[-1][0], begin + 1)
            cuts.append(_row_after(handle, offset, size, layout.n_rows) if offset < size
                        else (size, layout.n_rows + 1))
    cuts.append((size, layout.n_rows + 1))
    return layout, [(a, b, lo, hi) for (a, lo), (b, hi) in zip(cuts, cuts[1:])]


def _parse(text, path, layout):
    """The ``(row, column, value)`` lines of ``text`` as three arrays."""
    if not text.strip():
        return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, layout.dtype)
    try:
        table = np.loadtxt(io.BytesIO(text), dtype=np.float64 if layout.dtype is np.float64
                           else np.int64, ndmin=2)
    except ValueError as exc:
        raise ValueError(f"path: {path!r} is not a {layout.kind} file ({exc}).") from None
    if table.shape[1] != layout.columns:
        raise ValueError(f"path: {path!r} holds a line that is not a {layout.what} "
                         f"{layout.column}{' count' if layout.columns == 3 else ''} entry.")
    rows, cols = table[:, 0].astype(np.int64), table[:, 1].astype(np.int64)
    values = table[:, 2] if layout.columns == 3 else np.ones(len(table), np.int64)
    return rows, cols, values


def _read_shard(path, header, start, stop, lo, hi, sorted_rows):
    """Rows ``lo .. hi - 1`` (1-based) as CSR counts of shape (hi - lo, n_cols)."""
    if start is not None:
        with open(path, "rb") as handle:
            layout = header(handle, path)
            handle.seek(start)
            rows, cols, values = _parse(handle.read(stop - start), path, layout)
        if rows.size and rows.max() > layout.n_rows:  # before "not sorted", which it is not
            raise ValueError(f"path: {path!r} holds {layout.what} {rows.max()}, beyond the "
                             f"{layout.n_rows} its header announces.")
        if rows.size and (rows.min() < lo or rows.max() >= hi):
            raise NotSortedError(
                f"path: {path!r} is not sorted by {layout.what} ({layout.what}s {lo}..{hi - 1} "
                f"expected in its byte range){_UNSORTED_HINT.get(layout.kind, '')}.")
    else:
        layout, (rows, cols, values) = _stream_range(path, header, lo, hi, sorted_rows)
    if cols.size and (cols.min() < 1 or cols.max() > layout.n_cols):
        raise ValueError(f"path: {path!r} holds a {layout.column} number outside "
                         f"1..{layout.n_cols}.")
    return sp.csr_matrix((values, (rows - lo, cols - 1)), shape=(hi - lo, layout.n_cols))


_UNSORTED_HINT = {"Matrix Market": "; read it with sorted_rows=False (every shard then reads "
                                   "the whole file), or write it sorted by row"}


def _stream_range(path, header, lo, hi, sorted_rows):
    """The layout and the triples of rows ``lo .. hi - 1``, read from the start of the file
    (to its end, unless the rows are sorted)."""
    kept, tail, last = [], b"", 0
    with _open(path) as handle:
        layout = header(handle, path)
        while True:
            block = handle.read(_BLOCK)
            text = tail + block
            cut = len(text) if not block else text.rfind(b"\n") + 1
            text, tail = text[:cut], text[cut:]
            rows, cols, values = _parse(text, path, layout)
            if rows.size and (rows.min() < 1 or rows.max() > layout.n_rows):
                raise ValueError(f"path: {path!r} holds a {layout.what} number outside "
                                 f"1..{layout.n_rows}.")
            if sorted_rows and rows.size:  # else the stop below could miss rows further on
                if rows[0] < last or np.any(np.diff(rows) < 0):
                    raise NotSortedError(f"path: {path!r} is not sorted by {layout.what}"
                                         f"{_UNSORTED_HINT.get(layout.kind, '')}.")
                last = rows[-1]
            keep = (rows >= lo) & (rows < hi)
            kept.append((rows[keep], cols[keep], values[keep]))
            if not block or (sorted_rows and rows.size and rows[-1] >= hi):
                return layout, tuple(np.concatenate(parts) for parts in zip(*kept))


def _sharded(path, header, n_shards, blocksize, sorted_rows):
    """The counts of ``path`` as a dask array of CSR row shards, read by the workers, and the
    entries its header announces."""
    dask, da, _ = require()
    layout, shards = _plan(path, header, n_shards, blocksize, sorted_rows)
    read = dask.delayed(_read_shard, pure=True)
    meta = sp.csr_matrix((0, layout.n_cols), dtype=layout.dtype)
    return da.concatenate([
        da.from_delayed(read(path, header, start, stop, lo, hi, sorted_rows),
                        shape=(hi - lo, layout.n_cols), dtype=layout.dtype, meta=meta)
        for start, stop, lo, hi in shards
    ]), layout.entries


def _stored(block):
    return int(block.nnz)


def entries_mismatch(client, parts, path, announced):
    """What to say when the shards ``parts`` (futures of CSR counts) hold fewer or more entries
    than the header of ``path`` announces (a file cut short reads as one whose last documents
    are empty), or None. Summed on the workers; pairs given twice count once in a shard."""
    if announced is None or not parts:
        return None
    held = sum(client.gather([client.submit(_stored, part) for part in parts]))
    if held == announced:
        return None
    return (f"{path!r} announces {announced} entries but its shards hold {held} (a file cut "
            "short, or document-word pairs given twice); check the file.")


def warn_entries(client, parts, X):
    """:func:`entries_mismatch` as a UserWarning, for a :class:`ShardedCorpus` ``X`` (nothing
    for other data)."""
    message = entries_mismatch(client, parts, getattr(X, "path", None),
                               getattr(X, "entries", None))
    if message:
        warnings.warn(message, UserWarning, stacklevel=4)


def _existing(path, kind):
    """``path`` as a string when it is a file; for a folder, its count file, found as
    :func:`mixbayes.read_corpus` finds it (``Corpus.write`` writes folders, and the command
    line takes them), which must be of ``kind`` (``"mtx"`` or ``"uci"``)."""
    path = os.fspath(path)
    if os.path.isdir(path):
        found = count_file(path)
        if found is None or found[1] != kind:
            raise FileNotFoundError(
                f"path: the folder {path!r} holds no "
                f"{'Matrix Market file (*.mtx[.gz])' if kind == 'mtx' else 'docword.*.txt[.gz]'}.")
        return found[0]
    if not os.path.isfile(path):
        raise FileNotFoundError(f"path: no file {path!r}.")
    return path


def read_docword(path, n_shards=None, blocksize=2**26):
    """Read a UCI bag-of-words ``docword`` file as a :class:`ShardedCorpus` (lazily: each shard
    is read by the worker that computes it, the client reads only the header and a few lines
    at each shard boundary).

    Parameters
    ----------
    path : str
        ``docword.NAME.txt`` or ``docword.NAME.txt.gz``, with ``vocab.NAME.txt[.gz]`` beside it,
        or a folder holding one (``Corpus.write(folder, format="uci")``).
    n_shards : int, optional
        Number of row shards; by default one per ``blocksize`` bytes of the file.
    blocksize : int, default=64 MiB

    Returns
    -------
    ShardedCorpus
    """
    require()
    path = _existing(path, "uci")
    stem = os.path.basename(path)[len("docword."):].split(".txt")[0]
    folder = os.path.dirname(os.path.abspath(path))
    vocab_path = next((c for c in (os.path.join(folder, f"vocab.{stem}.txt"),
                                   os.path.join(folder, f"vocab.{stem}.txt.gz"))
                       if os.path.isfile(c)), None)
    if vocab_path is None:
        raise FileNotFoundError(f"path: no vocab.{stem}.txt beside {path!r} (UCI bag-of-words).")
    counts, entries = _sharded(path, _docword_header, n_shards, blocksize, True)
    return ShardedCorpus(counts, read_list(vocab_path), path, entries=entries,
                         preprocessing=Preprocessing())  # counts read as given


def read_matrix_market(path, n_shards=None, blocksize=2**26, sorted_rows=True):
    """Read a Matrix Market coordinate file of counts (rows documents, columns terms) as a
    :class:`ShardedCorpus`, each shard by the worker that keeps it (see the module docstring).

    Parameters
    ----------
    path : str
        ``NAME.mtx`` or ``NAME.mtx.gz``, or a folder holding one (``counts.mtx*`` first, as
        ``Corpus.write(folder, format="mtx")`` writes it); ``vocab.txt`` beside it names the
        columns (else ``term_0``, ``term_1``, ...), and ``labels.txt`` and ``doc_ids.txt`` are read when
        present, as :func:`mixbayes.read_corpus` reads them.
    n_shards : int, optional
        Number of row shards; by default one per ``blocksize`` bytes of the file.
    blocksize : int, default=64 MiB
    sorted_rows : bool, default=True
        Whether the entries are sorted by row (as files written from CSR are). A plain text
        file is then cut into byte ranges, each read by one worker; a shard that finds a row
        outside its range refuses the file. With False (or for a gzipped file) every shard
        reads the file from the start and keeps its rows: reading costs the file's size per
        shard, but any order is read.

    Returns
    -------
    ShardedCorpus
    """
    require()
    path = _existing(path, "mtx")
    counts, entries = _sharded(path, _mtx_header, n_shards, blocksize, bool(sorted_rows))
    folder = os.path.dirname(os.path.abspath(path))

    def beside(name):
        found = os.path.join(folder, name)
        return found if os.path.isfile(found) else None

    vocabulary = (read_list(beside("vocab.txt")) if beside("vocab.txt")
                  else [f"term_{j}" for j in range(counts.shape[1])])
    if len(vocabulary) != counts.shape[1]:
        raise ValueError(f"path: vocab.txt beside {path!r} has {len(vocabulary)} terms but the "
                         f"matrix has {counts.shape[1]} columns.")
    labels = read_labels(beside("labels.txt")) if beside("labels.txt") else None
    if labels is not None and labels.shape != (counts.shape[0],):
        labels = None  # as read_corpus: labels.txt of another length is not this corpus's
    doc_ids = read_list(beside("doc_ids.txt")) if beside("doc_ids.txt") else None
    return ShardedCorpus(counts, vocabulary, path, labels, doc_ids, entries,
                         preprocessing=Preprocessing())  # counts read as given
