"""Corpora: sparse document-term counts with their vocabulary, ids and optional labels.

:func:`read_corpus` reads, by what ``path`` is:

* ``*.mtx`` / ``*.mtx.gz`` — Matrix Market counts (rows documents, columns terms) with
  ``vocab.txt`` beside it (one term per line) and, when present, ``labels.txt`` and
  ``doc_ids.txt``; a folder holding ``counts.mtx[.gz]`` is read the same way;
* ``docword.NAME.txt[.gz]`` — the UCI bag-of-words format (header lines D, W, NNZ, then
  1-based ``doc word count`` triples) with ``vocab.NAME.txt`` beside it; a folder holding one
  ``docword.*`` file is read the same way;
* ``*.txt`` / ``*.txt.gz`` — plain text, one document per line (a blank line is an empty
  document, so that line i and label i always belong together);
* a folder of ``*.txt`` files — one document per file (ids are the file names);
* ``*.csv`` / ``*.csv.gz`` — a CSV file with a text column (``text_column``, default ``"text"``).

Text is tokenised by scikit-learn's ``CountVectorizer``, whose options pass through.
A ``labels.txt`` beside the input is attached when its length matches; ``labels=`` names any
other file (one label per line) or gives the labels directly.
"""

from __future__ import annotations

import csv
import glob
import io
import os
from dataclasses import dataclass

import numpy as np
import scipy.io
import scipy.sparse as sp

from ._formats import (_SIDE_FILES, allow_long_fields, check_announced_shape, count_file, label_count_message, read_label_file,
                       read_labels, read_list, read_text, sniff_delimiter, write_list)
from ._raw_text import raw_text_options, strip_headers
from ._validation import check_counts, check_file, first_few, plural
from .preprocessing import Preprocessing

__all__ = ["Corpus", "read_corpus", "read_labels", "raw_text_options", "strip_headers"]


@dataclass
class Corpus:
    """Document-term counts plus what is known about the documents and terms.

    Attributes
    ----------
    counts : scipy.sparse.csr_matrix of shape (n_documents, n_terms), int64
    vocabulary : ndarray of str of shape (n_terms,)
    doc_ids : ndarray of str of shape (n_documents,)
    labels : ndarray of shape (n_documents,) or None
        Known classes, used only to evaluate clusterings.
    preprocessing : Preprocessing or None
        How text became the counts (:class:`mixbayes.preprocessing.Preprocessing`: the
        tokenisation and the filters of the terms), filled in by :meth:`from_texts` and
        :meth:`drop_terms`; :func:`mixbayes.save` stores it with the vocabulary. None for
        counts made elsewhere and not filtered here.
    """

    counts: sp.csr_matrix
    vocabulary: np.ndarray
    doc_ids: np.ndarray = None
    labels: np.ndarray = None
    preprocessing: Preprocessing = None

    def __post_init__(self):
        self.counts = check_counts(self.counts, "counts")
        n, p = self.counts.shape
        self.vocabulary = np.asarray(self.vocabulary, dtype=str)
        if self.vocabulary.shape != (p,):
            raise ValueError(
                f"vocabulary has {self.vocabulary.size} terms but the count matrix has {p} columns."
            )
        if self.doc_ids is None:
            self.doc_ids = np.arange(n).astype(str)
        self.doc_ids = np.asarray(self.doc_ids, dtype=str)
        if self.doc_ids.shape != (n,):
            raise ValueError(
                f"doc_ids has {self.doc_ids.size} entries but the count matrix has {n} documents."
            )
        if self.labels is not None:
            self.labels = np.asarray(self.labels)
            if self.labels.shape != (n,):
                raise ValueError(
                    f"labels has {self.labels.size} entries but the corpus has {n} documents."
                )
        if self.preprocessing is not None and not isinstance(self.preprocessing, Preprocessing):
            raise TypeError(f"preprocessing must be a mixbayes.preprocessing.Preprocessing or "
                            f"None; got {type(self.preprocessing).__name__}.")

    @property
    def n_documents(self):
        return self.counts.shape[0]

    @property
    def n_terms(self):
        return self.counts.shape[1]

    def __repr__(self):
        labelled = "labelled" if self.labels is not None else "unlabelled"
        return (
            f"Corpus({self.n_documents} documents x {self.n_terms} terms, "
            f"{self.counts.nnz} non-zeros, {int(self.counts.sum())} tokens, {labelled})"
        )

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_texts(cls, texts, doc_ids=None, labels=None, vectorizer=None, **options):
        """Tokenise raw texts with scikit-learn's ``CountVectorizer``.

        Parameters
        ----------
        texts : iterable of str
        doc_ids, labels : sequences of length n_documents, optional
        vectorizer : CountVectorizer, optional
            A configured vectorizer to use instead of building one from ``options``.
        **options
            ``CountVectorizer`` options, e.g. ``stop_words="english"``, ``min_df``, ``max_df``,
            ``max_features``, ``token_pattern``, ``lowercase``.
        """
        from sklearn.feature_extraction.text import CountVectorizer

        if isinstance(texts, (str, bytes)):
            raise TypeError("texts must be a list of documents (one str each), not one str; "
                            "wrap a single document as [text].")
        texts = list(texts)
        if not texts:
            raise ValueError("texts must hold at least one document; got none.")
        vectorizer = vectorizer if vectorizer is not None else CountVectorizer(**options)
        if getattr(vectorizer, "input", "content") == "content":
            for i, text in enumerate(texts):
                if not isinstance(text, (str, bytes)):
                    raise TypeError(f"texts[{i}] must be a str (a document's text); got "
                                    f"{type(text).__name__} {text!r} (a missing value? "
                                    "use '' for an empty document).")
        try:
            counts = vectorizer.fit_transform(texts)
        except ValueError as exc:  # "empty vocabulary; perhaps the documents only contain stop words"
            raise ValueError(f"texts: {exc}") from None
        return cls(counts, vectorizer.get_feature_names_out(), doc_ids, labels,
                   Preprocessing.of_vectorizer(vectorizer))

    def with_labels(self, labels):
        """Return a copy with ``labels`` (a sequence, or a file with one label per line)."""
        if isinstance(labels, (str, os.PathLike)):
            path, (labels, header) = os.fspath(labels), read_label_file(labels)
            if labels.shape != (self.n_documents,):
                raise ValueError(label_count_message("labels", path, labels.size, header,
                                                     self.n_documents, "documents"))
        return Corpus(self.counts, self.vocabulary, self.doc_ids, labels, self.preprocessing)

    def drop_terms(self, stop_words=None, min_df=1, max_df=1.0, max_features=None):
        """Return a copy without the stop words, the terms of too few or too many documents,
        and beyond the ``max_features`` most widely used.

        Parameters
        ----------
        stop_words : {"english"}, iterable of str or None, default=None
            Terms to drop: scikit-learn's English list, or your own (compared after lower-casing
            both sides, as ``CountVectorizer`` compares them).
        min_df : int >= 1 or float in (0, 1], default=1
            Keep terms used by at least this many documents (a float: this share of them).
        max_df : int >= 1 or float in (0, 1], default=1.0
            Keep terms used by at most this many documents (a float: this share of them):
            words in most documents say little about any cluster.
        max_features : int >= 1 or None, default=None
            Keep at most this many terms, those used by the most documents (ties to the
            earlier term), after the other filters. (scikit-learn's ``max_features`` ranks by
            total count; document frequency adds over shards the same way, so a corpus on a
            cluster keeps the same terms.)

        Documents left without terms stay in the corpus, empty (every model accepts them).
        """
        document_frequency = np.asarray((self.counts > 0).sum(axis=0)).ravel()
        keep = kept_terms(self.vocabulary, document_frequency, self.n_documents, stop_words,
                          min_df, max_df, max_features)
        columns = np.flatnonzero(keep)
        done = (self.preprocessing or Preprocessing()).filtered(stop_words, min_df, max_df,
                                                                max_features)
        return Corpus(self.counts[:, columns], self.vocabulary[columns], self.doc_ids,
                      self.labels, done)

    def drop_empty_documents(self):
        """Return a copy without the documents that hold no term (blank, or emptied by
        :meth:`drop_terms`), their names and labels dropped with them; the corpus itself when
        there are none, and None when every document is empty (a corpus holds at least one).

        Every model accepts empty documents (they carry no evidence); the command line leaves
        them out so that its outputs are about documents with something to say.
        """
        keep = np.flatnonzero(np.diff(self.counts.indptr) > 0)
        if keep.size == self.n_documents:
            return self
        if keep.size == 0:
            return None
        return Corpus(self.counts[keep], self.vocabulary, self.doc_ids[keep],
                      None if self.labels is None else self.labels[keep], self.preprocessing)

    # ------------------------------------------------------------------ writing
    def write(self, path, format="mtx"):
        """Write the corpus so that :func:`read_corpus` reads it back.

        Parameters
        ----------
        path : str
            ``"mtx"``: a folder receiving ``counts.mtx``, ``vocab.txt``, ``doc_ids.txt`` and
            ``labels.txt``; ``"uci"``: a folder receiving ``docword.corpus.txt`` and
            ``vocab.corpus.txt``; ``"lines"``: a text file, one document per line, each term
            repeated as often as it occurs (read it back with ``token_pattern=r"\\S+"`` and
            ``lowercase=False``).
        """
        if format == "mtx":
            os.makedirs(path, exist_ok=True)
            scipy.io.mmwrite(os.path.join(path, "counts.mtx"), self.counts, field="integer")
            write_list(os.path.join(path, "vocab.txt"), self.vocabulary)
            write_list(os.path.join(path, "doc_ids.txt"), self.doc_ids)
            if self.labels is not None:
                write_list(os.path.join(path, "labels.txt"), self.labels)
        elif format == "uci":
            os.makedirs(path, exist_ok=True)
            coo = self.counts.tocoo()
            with open(os.path.join(path, "docword.corpus.txt"), "w", encoding="utf-8") as out:
                out.write(f"{self.n_documents}\n{self.n_terms}\n{coo.nnz}\n")
                for d, w, c in zip(coo.row + 1, coo.col + 1, coo.data):
                    out.write(f"{d} {w} {c}\n")
            write_list(os.path.join(path, "vocab.corpus.txt"), self.vocabulary)
        elif format == "lines":
            if any(" " in term for term in self.vocabulary):
                raise ValueError("format='lines' needs terms without spaces.")
            with open(path, "w", encoding="utf-8") as out:
                for i in range(self.n_documents):
                    row = self.counts[i]
                    out.write(" ".join(
                        " ".join([self.vocabulary[j]] * c) for j, c in zip(row.indices, row.data)
                    ) + "\n")
        else:
            raise ValueError(f"format must be one of 'mtx', 'uci', 'lines'; got {format!r}.")


def kept_terms(vocabulary, document_frequency, n_documents, stop_words=None, min_df=1,
               max_df=1.0, max_features=None):
    """Which terms :meth:`Corpus.drop_terms` keeps, from the terms' document frequencies
    (which add over row shards, so that a corpus on a cluster is filtered the same way).

    Parameters
    ----------
    vocabulary : sequence of str of shape (n_terms,)
    document_frequency : ndarray of int of shape (n_terms,)
        The number of documents holding each term.
    n_documents : int
        Documents in the corpus, empty ones included (the base of a ``min_df`` share).
    stop_words, min_df, max_df, max_features
        As :meth:`Corpus.drop_terms` takes them.

    Returns
    -------
    ndarray of bool of shape (n_terms,)
    """
    min_df = _documents_of("min_df", min_df, n_documents, np.ceil)
    max_count = _documents_of("max_df", max_df, n_documents, np.floor)
    if max_features is not None and (isinstance(max_features, bool) or not isinstance(
            max_features, (int, np.integer)) or max_features < 1):
        raise ValueError(f"max_features must be a whole number >= 1 or None; got "
                         f"{max_features!r}.")
    frequency = np.asarray(document_frequency)
    keep = (frequency >= min_df) & (frequency <= max_count)
    if stop_words is not None:
        if isinstance(stop_words, str):
            if stop_words != "english":
                raise ValueError(f"stop_words must be 'english', a list of words or None; "
                                 f"got {stop_words!r}.")
            from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS as stop_words
        stop = {str(word).lower() for word in stop_words}
        keep &= np.array([term.lower() not in stop for term in vocabulary], dtype=bool)
    if max_features is not None and keep.sum() > max_features:
        # the most widely used terms; ties to the earlier term, so every engine agrees
        order = np.lexsort((np.arange(frequency.size), -frequency))
        order = order[keep[order]][:max_features]
        keep = np.zeros_like(keep)
        keep[order] = True
    if not keep.any():
        dropped = [what for what, asked in (
            ("stop words", stop_words is not None),
            (f"terms used by fewer than {min_df} documents", min_df > 1),
            (f"terms used by more than {max_count} of the {n_documents} "
             f"document{'s' if n_documents != 1 else ''} (max_df {max_df!r}; 1.0 keeps them)",
             max_count < n_documents))
            if asked]
        raise ValueError(f"no terms are left after dropping {' and '.join(dropped)}." if dropped
                         else "no term occurs in any document.")
    return keep


def _documents_of(name, value, n_documents, rounding):
    """``min_df``/``max_df`` (a share in (0, 1] or a count >= 1) as a number of documents,
    a share rounded by ``rounding`` (up for a floor, down for a ceiling)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number; got {type(value).__name__}.")
    if isinstance(value, (float, np.floating)):
        if not 0 < value <= 1:
            raise ValueError(f"{name} as a share must lie in (0, 1]; got {value!r}.")
        return int(rounding(value * n_documents))
    if value < 1:
        raise ValueError(f"{name} must be an integer >= 1 or a share in (0, 1]; got {value}.")
    return int(value)


# ---------------------------------------------------------------------- reading
def read_corpus(path, labels=None, text_column="text", id_column=None, label_column=None,
                **vectorizer_options):
    """Read a corpus from any supported format (see the module docstring).

    Parameters
    ----------
    path : str or os.PathLike
    labels : str, os.PathLike or sequence, optional
        Labels file (one per line) or the labels themselves; overrides a ``labels.txt`` beside.
    text_column, id_column, label_column : str, optional
        Column names for CSV input. Without ``id_column`` a column named ``id``, ``doc_id``,
        ``document_id`` or ``docid`` (any case) gives the documents' ids, and without one they
        are the rows' numbers from 0.
    **vectorizer_options
        Passed to ``CountVectorizer`` for text formats.

    Returns
    -------
    Corpus
    """
    path = check_file(path, "path")
    try:
        corpus = _read_any(path, text_column, id_column, label_column, **vectorizer_options)
    except (ValueError, TypeError) as exc:
        message = " ".join(str(exc).split())  # one line, whatever the parser said
        if repr(path) not in message:  # name the file the bad content came from, once
            message = f"path: {path!r}: {message}"
        raise type(exc)(message) from None
    folder = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    if labels is not None:
        return corpus.with_labels(labels)
    beside = os.path.join(folder, "labels.txt")
    if corpus.labels is None and os.path.isfile(beside):
        found_labels = read_labels(beside)
        if found_labels.shape == (corpus.n_documents,):
            corpus = Corpus(corpus.counts, corpus.vocabulary, corpus.doc_ids, found_labels,
                            corpus.preprocessing)
    return corpus


def _read_any(path, text_column, id_column, label_column, **vectorizer_options):
    name = os.path.basename(path).lower()  # Windows writes .CSV and .TXT as often
    counts = count_file(path)
    if counts is not None:
        corpus = read_mtx(counts[0]) if counts[1] == "mtx" else read_uci(counts[0])
    elif os.path.isdir(path):
        corpus = _read_folder(path, **vectorizer_options)
    elif name.endswith((".csv", ".csv.gz")):
        corpus = _read_csv(path, text_column, id_column, label_column, **vectorizer_options)
    elif name.endswith((".txt", ".txt.gz")):
        corpus = Corpus.from_texts(read_list(path), **vectorizer_options)
    else:
        raise ValueError(
            f"path: cannot tell the format of {path!r}; expected .mtx[.gz], docword.*.txt[.gz], "
            ".txt[.gz] (one document per line), .csv[.gz] or a folder."
        )
    return corpus


def read_mtx(path):
    try:
        n_rows, n_cols, _, layout, _, _ = scipy.io.mminfo(path)
    except Exception as exc:
        raise ValueError(f"path: {path!r} is not a readable Matrix Market file ({exc}).") from None
    check_announced_shape(path, n_rows, n_cols, layout == "array")
    try:
        counts = scipy.io.mmread(path)
    except Exception as exc:
        raise ValueError(f"path: {path!r} is not a readable Matrix Market file ({exc}).") from None
    if not sp.issparse(counts):
        counts = sp.csr_matrix(counts)
    folder = os.path.dirname(os.path.abspath(path))
    vocab_path = os.path.join(folder, "vocab.txt")
    vocabulary = (
        read_list(vocab_path) if os.path.isfile(vocab_path)
        else [f"term_{j}" for j in range(counts.shape[1])]
    )
    ids_path = os.path.join(folder, "doc_ids.txt")
    doc_ids = read_list(ids_path) if os.path.isfile(ids_path) else None
    return Corpus(check_counts(counts, "counts"), vocabulary, doc_ids,
                  preprocessing=Preprocessing())  # counts read as given


def read_uci(path):
    base = os.path.basename(path)
    stem = base[len("docword."):].split(".txt")[0]
    folder = os.path.dirname(os.path.abspath(path))
    candidates = [os.path.join(folder, f"vocab.{stem}.txt"), os.path.join(folder, f"vocab.{stem}.txt.gz")]
    vocab_path = next((c for c in candidates if os.path.isfile(c)), None)
    if vocab_path is None:
        raise FileNotFoundError(f"path: no vocab.{stem}.txt beside {path!r} (UCI bag-of-words).")
    with io.StringIO(read_text(path)) as handle:
        try:
            n_docs, n_words, nnz = (int(handle.readline()) for _ in range(3))
            triples = np.loadtxt(handle, dtype=np.int64, ndmin=2)
        except ValueError as exc:
            raise ValueError(f"path: {path!r} is not a UCI docword file ({exc}).") from None
    if triples.shape[0] != nnz or (nnz and triples.shape[1] != 3):
        raise ValueError(f"path: {path!r} announces {nnz} entries but holds {triples.shape[0]}.")
    if min(n_docs, n_words, nnz) < 0:
        raise ValueError(f"path: {path!r} announces negative sizes ({n_docs}, {n_words}, {nnz}).")
    check_announced_shape(path, n_docs, n_words, dense=False)
    if nnz and (triples[:, :2].min() < 1 or triples[:, 0].max() > n_docs
                or triples[:, 1].max() > n_words):
        raise ValueError(f"path: {path!r} holds a document or word number outside 1..{n_docs} "
                         f"/ 1..{n_words}.")
    counts = sp.csr_matrix(
        (triples[:, 2], (triples[:, 0] - 1, triples[:, 1] - 1)) if nnz
        else ([], ([], [])), shape=(n_docs, n_words)
    )
    return Corpus(counts, read_list(vocab_path), preprocessing=Preprocessing())


def folder_documents(path):
    """The document files of a folder: its ``.txt`` files (whatever the extension's case), less
    the side files (vocabulary, labels, ids), in name order."""
    return sorted(os.path.join(path, f) for f in os.listdir(path)
                  if f.lower().endswith(".txt") and f not in _SIDE_FILES
                  and os.path.isfile(os.path.join(path, f)))


def folder_other_files(path):
    """The files of a folder of documents that are not read: neither its documents
    (:func:`folder_documents`) nor its side files, nor hidden."""
    read = {os.path.basename(f) for f in folder_documents(path)}
    return sorted(f for f in os.listdir(path) if f not in read and f not in _SIDE_FILES
                  and not f.startswith(".") and os.path.isfile(os.path.join(path, f)))


def folder_subfolders(path):
    """The subfolders of a folder of documents (not hidden), which are not read: only the
    files directly in it are documents."""
    return sorted(f for f in os.listdir(path)
                  if not f.startswith(".") and os.path.isdir(os.path.join(path, f)))


def _read_folder(path, **options):
    files = folder_documents(path)
    if not files:
        inside = folder_subfolders(path)
        where = ""
        if inside:  # a folder per class, as 20 Newsgroups ships: said, not a bare "no documents"
            where = (f" directly in it; its {plural(len(inside), 'subfolder')} "
                     f"({first_few(inside)}) "
                     f"{'is' if len(inside) == 1 else 'are'} not read: give one of them, or "
                     "put the .txt files in one folder")
        raise ValueError(f"path: folder {path!r} holds no .mtx, docword.* or .txt "
                         f"documents{where}.")
    texts = [read_text(f) for f in files]
    ids = [os.path.splitext(os.path.basename(f))[0] for f in files]
    return Corpus.from_texts(texts, doc_ids=ids, **options)


# names of a CSV column read as the documents' ids when no id_column is given
ID_COLUMNS = ("id", "doc_id", "document_id", "docid")


def _read_csv(path, text_column, id_column, label_column, **options):
    text = read_text(path)
    allow_long_fields(text)
    if not text.strip():
        raise ValueError(f"path: CSV file {path!r} is empty (a CSV of documents needs a "
                         "header line naming the columns, one of them text, and a row a "
                         "document).")
    rows = list(csv.DictReader(io.StringIO(text, newline=""), delimiter=sniff_delimiter(text)))
    if not rows:
        raise ValueError(f"path: CSV file {path!r} has no rows under its header line (its "
                         "first line names the columns, one of them text).")
    for role, column in (("text_column", text_column), ("id_column", id_column),
                         ("label_column", label_column)):
        if column is not None and column not in rows[0]:
            raise ValueError(
                f"{role}={column!r} is not a column of {path!r}; columns: {list(rows[0])}."
            )
    if id_column is None:  # the table's own ids, where a column says it holds them
        id_column = next((c for c in rows[0] if c is not None and c not in (
            text_column, label_column) and c.strip().lower() in ID_COLUMNS), None)
    texts = [row[text_column] or "" for row in rows]
    ids = [row[id_column] for row in rows] if id_column else None
    labels = [row[label_column] for row in rows] if label_column else None
    corpus = Corpus.from_texts(texts, doc_ids=ids, labels=labels, **options)
    corpus.preprocessing = corpus.preprocessing.with_text_column(text_column)
    return corpus
