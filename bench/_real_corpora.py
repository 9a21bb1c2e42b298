"""The shared real corpora of ``../shared/data`` (their READMEs describe them), read once.

Each loader returns a :class:`mixbayes.Corpus` with labels; ``twenty_newsgroups`` also returns
its train/test split. ``completion`` gives the document-completion split every topic benchmark
scores held-out likelihood on: the test documents (20 Newsgroups' test split, or a random 20%)
with their words halved at random, the columns restricted to the terms seen in training.
"""

from __future__ import annotations

import gzip
import os

import numpy as np
import scipy.io
import scipy.sparse as sp

import mixbayes as mb

DATA = os.environ.get(
    "MIXBAYES_DATA", os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data")
)
SHORT_TEXTS = ("tweet", "googlenews_t")
ALL = ("twenty_newsgroups", "tweet", "googlenews_t", "classic3", "dblp3")


def available(name):
    return os.path.isdir(os.path.join(DATA, name))


def _lines(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [line.rstrip("\n") for line in handle]


def _mtx(folder):
    for name in ("counts.mtx.gz", "counts.mtx"):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            return sp.csr_matrix(scipy.io.mmread(path)).astype(np.int64)
    raise FileNotFoundError(folder)


def load(name):
    """``(corpus, split)``: ``split`` is a boolean train mask for 20 Newsgroups, else None."""
    folder = os.path.join(DATA, name)
    labels = _lines(os.path.join(folder, "labels.txt"))
    if name in SHORT_TEXTS:
        # the sets come tokenised: every whitespace-separated token is a word (GSDMM's reading)
        corpus = mb.Corpus.from_texts(_lines(os.path.join(folder, "docs.txt.gz")),
                                      labels=labels, token_pattern=r"\S+")
        return corpus, None
    X = _mtx(folder)
    vocabulary = _lines(os.path.join(folder, "vocab.txt"))
    corpus = mb.Corpus(X, vocabulary=vocabulary, labels=labels)
    split = None
    if name == "twenty_newsgroups":
        split = np.array([s == "train" for s in _lines(os.path.join(folder, "split.txt"))])
    return corpus, split


def completion(X, split=None, seed=0):
    """``(train, observed, held_out, columns)`` for document completion: ``split`` (a train
    mask) or a random 20% of the documents left out; every count of a left-out document goes
    to ``observed`` or ``held_out`` with probability 1/2; columns restricted to terms with
    training counts (``columns`` indexes them in ``X``)."""
    X = sp.csr_matrix(X)
    if split is None:
        train, observed, held_out = mb.topics.completion_split(X, 0.2, random_state=seed)
    else:
        rng = np.random.default_rng(seed)
        train, left_out = X[split], X[~split]
        observed = left_out.copy()
        observed.data = rng.binomial(left_out.data, 0.5)
        held_out = (left_out - observed).tocsr()
        observed.eliminate_zeros()
        held_out.eliminate_zeros()
    columns = np.flatnonzero(np.asarray(train.sum(axis=0)).ravel() > 0)
    return (train[:, columns].tocsr(), observed[:, columns].tocsr(),
            held_out[:, columns].tocsr(), columns)
