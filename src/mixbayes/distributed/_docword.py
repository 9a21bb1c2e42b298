"""UCI bag-of-words ``docword`` files read in row shards, each by the worker that keeps it.

The format: three header lines (documents D, words W, entries NNZ), then one ``doc word count``
triple per line, 1-based and sorted by document. The client reads the header and, for a plain
text file, finds the shard boundaries by a cheap scan: it seeks to evenly spaced byte offsets
and reads forward to the first line of the next document (a few lines each), so every shard is
a byte range holding whole documents. A worker reads only its byte range. A gzipped file
cannot be seeked: its shards are equal document ranges, and each worker streams the file from
the start up to the end of its range, keeping its own documents.
"""

from __future__ import annotations

import gzip
import io
import math
import os
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..corpus import _check_announced_shape, _read_list
from ._dask import require

_BLOCK = 1 << 24  # bytes of a gzipped file parsed at a time


@dataclass
class ShardedCorpus:
    """A corpus whose counts are a dask array of CSR row shards, read by the workers.

    Attributes
    ----------
    counts : dask.array.Array of shape (n_documents, n_terms)
        int64 counts in ``scipy.sparse`` CSR chunks (one per shard; a shard may be empty).
    vocabulary : list of str
    path : str
    """

    counts: object
    vocabulary: list
    path: str

    def __repr__(self):
        n_documents, n_terms = self.counts.shape
        return (f"ShardedCorpus({n_documents} documents x {n_terms} terms in "
                f"{self.counts.numblocks[0]} shards, from {self.path!r})")


def _header(handle, path):
    try:
        n_docs, n_words, nnz = (int(handle.readline()) for _ in range(3))
    except ValueError as exc:
        raise ValueError(f"path: {path!r} is not a UCI docword file ({exc}).") from None
    if min(n_docs, n_words, nnz) < 0:
        raise ValueError(f"path: {path!r} announces negative sizes ({n_docs}, {n_words}, {nnz}).")
    _check_announced_shape(path, n_docs, n_words, dense=False)
    return n_docs, n_words


def _document_after(handle, offset, end, n_docs):
    """``(position, document)`` of the first line at or after ``offset`` that starts a new
    document (the end of the file and D + 1 when none does)."""
    handle.seek(offset - 1)
    handle.readline()  # to the start of the next line (stays put when offset starts one)
    first = None
    while True:
        position = handle.tell()
        line = handle.readline()
        if not line:
            return end, n_docs + 1
        if not line.strip():
            continue
        doc = int(line.split()[0])
        if first is None:
            first = doc
        elif doc != first:
            return position, doc


def _plan(path, n_shards, blocksize):
    """Header sizes and the shards as ``(start byte, stop byte, first doc, end doc)``; bytes
    are None for a gzipped file."""
    size = os.path.getsize(path)
    if path.endswith(".gz"):
        with gzip.open(path, "rb") as handle:
            n_docs, n_words = _header(handle, path)
        n_shards = n_shards or max(1, math.ceil(size / blocksize))
        firsts = [1 + n_docs * s // n_shards for s in range(n_shards + 1)]
        return n_docs, n_words, [(None, None, lo, hi) for lo, hi in zip(firsts, firsts[1:])]
    with open(path, "rb") as handle:
        n_docs, n_words = _header(handle, path)
        begin = handle.tell()
        n_shards = n_shards or max(1, math.ceil((size - begin) / blocksize))
        cuts = [(begin, 1)]
        for s in range(1, n_shards):
            offset = max(begin + (size - begin) * s // n_shards, cuts[-1][0], begin + 1)
            cuts.append(_document_after(handle, offset, size, n_docs) if offset < size
                        else (size, n_docs + 1))
    cuts.append((size, n_docs + 1))
    return n_docs, n_words, [(a, b, lo, hi) for (a, lo), (b, hi) in zip(cuts, cuts[1:])]


def _parse(text, path):
    if not text.strip():
        return np.empty((0, 3), dtype=np.int64)
    try:
        triples = np.loadtxt(io.BytesIO(text), dtype=np.int64, ndmin=2)
    except ValueError as exc:
        raise ValueError(f"path: {path!r} is not a UCI docword file ({exc}).") from None
    if triples.size and triples.shape[1] != 3:
        raise ValueError(f"path: {path!r} holds a line that is not a doc word count triple.")
    return triples.reshape(-1, 3)


def _read_shard(path, start, stop, lo, hi, n_words):
    """Documents ``lo .. hi - 1`` (1-based) as CSR counts of shape (hi - lo, W)."""
    if start is not None:
        with open(path, "rb") as handle:
            handle.seek(start)
            triples = _parse(handle.read(stop - start), path)
        if triples.size and (triples[:, 0].min() < lo or triples[:, 0].max() >= hi):
            raise ValueError(f"path: {path!r} is not sorted by document (documents {lo}..{hi - 1}"
                             " expected in its byte range).")
    else:
        triples = _stream_range(path, lo, hi)
    if triples.size and (triples[:, 1].min() < 1 or triples[:, 1].max() > n_words):
        raise ValueError(f"path: {path!r} holds a word number outside 1..{n_words}.")
    return sp.csr_matrix((triples[:, 2], (triples[:, 0] - lo, triples[:, 1] - 1)),
                         shape=(hi - lo, n_words))


def _stream_range(path, lo, hi):
    """The triples of documents ``lo .. hi - 1`` of a gzipped file, read from its start."""
    kept, tail = [], b""
    with gzip.open(path, "rb") as handle:
        for _ in range(3):
            handle.readline()
        while True:
            block = handle.read(_BLOCK)
            text = tail + block
            cut = len(text) if not block else text.rfind(b"\n") + 1
            text, tail = text[:cut], text[cut:]
            triples = _parse(text, path)
            kept.append(triples[(triples[:, 0] >= lo) & (triples[:, 0] < hi)])
            if not block or (triples.size and triples[-1, 0] >= hi):
                return np.concatenate(kept)


def read_docword(path, n_shards=None, blocksize=2**26):
    """Read a UCI bag-of-words ``docword`` file as a :class:`ShardedCorpus` (lazily: each shard
    is read by the worker that computes it, the client reads only the header and a few lines
    at each shard boundary).

    Parameters
    ----------
    path : str
        ``docword.NAME.txt`` or ``docword.NAME.txt.gz``, with ``vocab.NAME.txt[.gz]`` beside it.
    n_shards : int, optional
        Number of row shards; by default one per ``blocksize`` bytes of the file.
    blocksize : int, default=64 MiB

    Returns
    -------
    ShardedCorpus
    """
    dask, da, _ = require()
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"path: no file {path!r}.")
    stem = os.path.basename(path)[len("docword."):].split(".txt")[0]
    folder = os.path.dirname(os.path.abspath(path))
    vocab_path = next((c for c in (os.path.join(folder, f"vocab.{stem}.txt"),
                                   os.path.join(folder, f"vocab.{stem}.txt.gz"))
                       if os.path.isfile(c)), None)
    if vocab_path is None:
        raise FileNotFoundError(f"path: no vocab.{stem}.txt beside {path!r} (UCI bag-of-words).")
    n_docs, n_words, shards = _plan(path, n_shards, blocksize)
    read = dask.delayed(_read_shard, pure=True)
    meta = sp.csr_matrix((0, n_words), dtype=np.int64)
    counts = da.concatenate([
        da.from_delayed(read(path, start, stop, lo, hi, n_words), shape=(hi - lo, n_words),
                        dtype=np.int64, meta=meta)
        for start, stop, lo, hi in shards
    ])
    return ShardedCorpus(counts, _read_list(vocab_path), path)
