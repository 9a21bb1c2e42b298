"""Ranking terms: the top terms of every component or topic, by probability or by lift.

Shared by every model that has term distributions (``top_words`` of the Dirichlet-multinomial
mixture, the topic model and the categorical HDP) and by :func:`mixbayes.metrics.coherence`.
"""

import numpy as np


def top_terms(scores, vocabulary, n, by, frequency, present=None):
    """The ``n`` top terms of every row of ``scores`` (components x term probabilities), by
    probability or by lift (probability over the term's overall ``frequency``; terms of
    frequency 0 score 0), after checking that ``vocabulary`` has one entry per term and ``by``
    is a known ranking. Where ``present`` (components x terms, boolean) is given, only the
    terms it marks are ranked: a term a component has no evidence for scores its prior's
    floor, tied with every other such term, and by lift the rarest of those would rank first,
    so a component with fewer than ``n`` such terms lists fewer."""
    vocabulary = np.asarray(vocabulary, dtype=object)
    if vocabulary.shape != (scores.shape[1],):
        raise ValueError(
            f"vocabulary must have one entry per feature ({scores.shape[1]}); "
            f"got {vocabulary.shape[0] if vocabulary.ndim else 0}."
        )
    if by not in ("probability", "lift"):
        raise ValueError(f"by must be one of 'probability', 'lift'; got {by!r}.")
    probability = scores
    if by == "lift":
        with np.errstate(divide="ignore", invalid="ignore"):
            scores = _to_digits(np.where(frequency > 0, scores / frequency, 0.0))
    if present is None:
        present = np.ones(scores.shape, dtype=bool)
    # ties (every term used by one topic alone has the same lift, 1 / its share) go to the more
    # probable term: they were ordered by rounding noise, the rarest one-off words first
    order = np.array([np.lexsort((-p_row, np.where(keep, -row, np.inf)))
                      for row, p_row, keep in zip(scores, probability, present)],
                     dtype=np.int64).reshape(scores.shape)[:, :n]
    counts = np.minimum(present.sum(axis=1), n)
    return [list(vocabulary[row[:count]]) for row, count in zip(order, counts)]


def _to_digits(values, digits=10):
    """``values`` rounded to ``digits`` significant digits (0 stays 0), so that values equal
    but for rounding compare equal."""
    magnitude = np.floor(np.log10(np.where(values > 0, values, 1.0)))
    scale = 10.0 ** (digits - 1 - magnitude)
    return np.round(values * scale) / scale
