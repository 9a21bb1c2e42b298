"""The terms a model was fitted on, and how text became them: new documents onto those terms.

A :class:`Vocabulary` holds the terms of a model's features (one per column of the counts it
was fitted to) and the :class:`~mixbayes.preprocessing.Preprocessing` that made them.
:func:`mixbayes.save` stores one with the model and :func:`mixbayes.persist.load_vocabulary`
reads it back; its :meth:`~Vocabulary.texts`, :meth:`~Vocabulary.read` and
:meth:`~Vocabulary.map` turn new documents into counts on exactly those columns, so that
``model.predict`` can read them::

    model = mb.load("out/model.npz")
    vocabulary = mb.persist.load_vocabulary("out/model.npz")
    new = vocabulary.texts(["a new document", "and another one"])
    model.predict(new.counts)

Words outside the vocabulary are dropped and counted (:class:`Mapped`), stop words apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
import scipy.sparse as sp

from .preprocessing import Preprocessing

__all__ = ["Mapped", "Vocabulary"]


@dataclass(frozen=True)
class Mapped:
    """New documents as counts on a vocabulary's terms, and what was left out.

    Attributes
    ----------
    corpus : Corpus
        The documents, one row each (in the order read, none left out), the columns the
        vocabulary's terms.
    tokens : int
        Words the documents held (after the tokenisation, before any was dropped).
    stop_tokens : int
        Of them, stop words (dropped, as the fitted documents' were).
    unknown_tokens : int
        Of them, words outside the vocabulary (dropped): terms the fit's documents never
        held, or held too rarely or too often for its filters.
    unknown_terms : ndarray of str
        The distinct unknown words, the most frequent first.
    """

    corpus: object
    tokens: int
    stop_tokens: int
    unknown_tokens: int
    unknown_terms: np.ndarray

    @property
    def counts(self):
        """The documents' counts (CSR, n_documents x n_terms): what ``predict`` reads."""
        return self.corpus.counts

    @property
    def known_tokens(self):
        """Words counted (in the vocabulary)."""
        return int(self.corpus.counts.sum())

    @property
    def words_per_document(self):
        """Words of the vocabulary in each document (ndarray of int)."""
        return np.asarray(self.corpus.counts.sum(axis=1)).ravel().astype(np.int64)


@dataclass(frozen=True)
class Vocabulary:
    """The terms of a model's features and how text became them.

    Parameters
    ----------
    terms : sequence of str of shape (n_terms,)
        One term per feature, in the columns' order.
    preprocessing : Preprocessing or None, default=None
        How the fitted documents' text became counts; None when unknown.
    """

    terms: np.ndarray
    preprocessing: Optional[Preprocessing] = None

    def __post_init__(self):
        if isinstance(self.terms, str):
            raise TypeError("terms must be a sequence of strings, not one string.")
        terms = np.asarray(self.terms, dtype=str)
        if terms.ndim != 1 or terms.size == 0:
            raise ValueError(f"terms must be a non-empty 1-D sequence of strings; got shape "
                             f"{terms.shape}.")
        object.__setattr__(self, "terms", terms)
        if self.preprocessing is not None and not isinstance(self.preprocessing,
                                                             Preprocessing):
            raise TypeError(f"preprocessing must be a Preprocessing or None; got "
                            f"{type(self.preprocessing).__name__}.")

    @classmethod
    def of(cls, corpus):
        """The vocabulary and preprocessing of ``corpus`` (a :class:`mixbayes.Corpus`)."""
        if not hasattr(corpus, "vocabulary"):
            raise TypeError(f"corpus must be a mixbayes Corpus; got {type(corpus).__name__}.")
        return cls(corpus.vocabulary, getattr(corpus, "preprocessing", None))

    def __len__(self):
        return self.terms.size

    # ------------------------------------------------------------------ new documents
    def reading_options(self):
        """The ``CountVectorizer`` options that split new text as the fitted text was split
        (see :meth:`Preprocessing.vectorizer_options`).

        Raises
        ------
        ValueError
            When the preprocessing is unknown, or was not a tokenisation of text.
        """
        if self.preprocessing is None:
            raise ValueError("preprocessing: the vocabulary does not say how text became its "
                             "terms; pass reading options (e.g. mixbayes.corpus."
                             "raw_text_options()) or map a corpus read with them.")
        return self.preprocessing.vectorizer_options()

    def texts(self, texts, doc_ids=None, labels=None, **options):
        """Raw ``texts`` as counts on these terms, split as the fitted text was (or with the
        ``CountVectorizer`` ``options`` given instead).

        Returns
        -------
        Mapped
        """
        texts = [str(text) for text in texts]
        if not texts:
            raise ValueError("texts must hold at least one document; got none.")
        from sklearn.feature_extraction.text import CountVectorizer

        vectorizer = CountVectorizer(**(options or self.reading_options()))
        try:
            counts = vectorizer.fit_transform(texts)
            found = vectorizer.get_feature_names_out()
        except ValueError:  # scikit-learn's "empty vocabulary": not one word in any text
            counts, found = sp.csr_matrix((len(texts), 0), dtype=np.int64), np.empty(0, str)
        return self._onto(counts, found, doc_ids if doc_ids is not None
                          else np.arange(len(texts)).astype(str), labels)

    def read(self, path, labels=None, text_column=None, id_column=None, label_column=None):
        """The documents of ``path`` (any format :func:`mixbayes.read_corpus` reads) as counts
        on these terms: text split as the fitted text was (a CSV's text in the fitted one's
        column unless ``text_column`` names another), count files matched term by term (by
        their ``vocab.txt``).

        Returns
        -------
        Mapped
        """
        from ._formats import count_file
        from .corpus import read_corpus
        from ._validation import check_file

        path = check_file(path, "path")
        if count_file(path) is not None:
            return self.map(read_corpus(path, labels=labels))
        if text_column is None:
            text_column = getattr(self.preprocessing, "text_column", None) or "text"
        options = self.reading_options()
        corpus = read_corpus(path, labels=labels, text_column=text_column, id_column=id_column,
                             label_column=label_column, **options)
        return self.map(corpus)

    def map(self, corpus):
        """``corpus`` (a :class:`mixbayes.Corpus` with its own vocabulary) on these terms:
        its columns matched by term, the others dropped and counted.

        Returns
        -------
        Mapped

        Raises
        ------
        ValueError
            When none of the corpus's terms is among these (a vocabulary of another kind:
            column numbers, or another language).
        """
        if not hasattr(corpus, "counts") or not hasattr(corpus, "vocabulary"):
            raise TypeError(f"corpus must be a mixbayes Corpus; got {type(corpus).__name__}.")
        return self._onto(corpus.counts, corpus.vocabulary, corpus.doc_ids, corpus.labels)

    def _onto(self, counts, found, doc_ids, labels):
        from .corpus import Corpus

        counts = sp.csr_matrix(counts, dtype=np.int64)
        found = np.asarray(found, dtype=str)
        index = {}
        for j, term in enumerate(self.terms):
            index.setdefault(term, j)  # a repeated term: its first column
        columns = np.array([index.get(term, -1) for term in found], dtype=np.int64)
        known = columns >= 0
        per_term = np.asarray(counts.sum(axis=0)).ravel().astype(np.int64)
        stop = self.preprocessing.stop_words() if self.preprocessing is not None else set()
        stopped = ~known & np.array([term.lower() in stop for term in found], dtype=bool)
        unknown = ~known & ~stopped
        if found.size and not known.any() and per_term.sum():
            raise ValueError(f"none of the documents' {found.size} distinct words is among the "
                             f"vocabulary's {self.terms.size} terms (e.g. {str(found[0])!r} against "
                             f"{str(self.terms[0])!r}); were they read as the fitted documents were?")
        selector = sp.csr_matrix((np.ones(int(known.sum()), dtype=np.int64),
                                  (np.flatnonzero(known), columns[known])),
                                 shape=(found.size, self.terms.size))
        mapped = (counts @ selector).tocsr()
        mapped.sum_duplicates()
        mapped.eliminate_zeros()
        order = np.flatnonzero(unknown)
        order = order[np.lexsort((order, -per_term[order]))]
        corpus = Corpus(mapped, self.terms, doc_ids, labels, self.preprocessing)
        return Mapped(corpus, int(per_term.sum()), int(per_term[stopped].sum()),
                      int(per_term[unknown].sum()), found[order])
