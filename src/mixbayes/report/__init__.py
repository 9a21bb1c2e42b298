"""An interactive report of a fitted model: one self-contained HTML file (all JavaScript, CSS
and data inline, no network) to look at a clustering rather than read its JSON.

It shows a map of the clusters or topics (how close they are: Jensen-Shannon distance between
word distributions, or Hellinger distance between Gaussians, by classical MDS; circle area =
share), the selected one's top terms ranked by relevance with Sievert & Shirley's (2014)
lambda slider (models of words), or the points' 2-D projection with every component's
2-sigma ellipse (Gaussian models), or the tree drawn (the tree model); the sizes; the
selection curve when K was chosen; the convergence trace the model keeps; and a few example
documents per cluster or topic when the documents are given.

::

    import mixbayes as mb
    from mixbayes.report import write_report

    corpus = mb.datasets.load_classic3()
    model = mb.DirichletMultinomialMixture(3, random_state=0).fit(corpus.counts)
    write_report(model, "report.html", corpus)

Modules: :mod:`._term_page`, :mod:`._gaussian_page`, :mod:`._tree_page` (what each kind of
page shows of its model), :mod:`._extract` (what the pages share: traces, the partition
posterior, the selection curve), :mod:`._geometry` (distances, MDS, projections),
:mod:`._html` (the page from its template files).
"""

from __future__ import annotations

import os

import numpy as np

from .._validation import plural

__all__ = ["build_report", "principal_plane", "write_report"]


def principal_plane(X):
    """The centre and the 2-D basis the page draws points of ``X`` on (the features for one
    or two, else the first two principal axes signed so that each one's largest loading is
    positive); the figures of :mod:`mixbayes.plotting` use it too, so that ``scatter.png``
    and the page are never mirror images of one another."""
    from ._geometry import principal_plane as plane

    return plane(X)


NO_VOCABULARY = ("no vocabulary: the terms are shown by their column numbers (term 0, term 1, "
                 "...); give the corpus the model was fitted to (mixbayes report --corpus "
                 "INPUT), or save the model with its vocabulary (mixbayes.save(model, path, "
                 "vocabulary=corpus), as mixbayes cluster and topics do)")


def build_report(model, data=None, *, selection=None, vocabulary=None, doc_ids=None,
                 feature_names=None, title=None, rows=None):
    """The report of a fitted model as one HTML page (a string).

    Parameters
    ----------
    model : fitted DirichletMultinomialMixture, TopicModel, HDPMixture, \
            VariationalGaussianMixture or HierarchicalMixture
    data : Corpus, sparse matrix or array-like, default=None
        What the model was fitted to. Documents (a :class:`~mixbayes.Corpus`, or counts of
        shape (n_documents, n_terms)) for the models of words: their vocabulary names the
        terms and example documents are shown; the corpus must be the one the model was fitted
        to (same documents, same terms in the same order). Points of shape (n_samples,
        n_features) for the Gaussian mixture, the Gaussian HDP and the tree model: drawn in
        the 2-D projection.
    selection : TopicSelection, ClusterSelection or list of dict, default=None
        The result (or its ``table``) of :func:`~mixbayes.select_n_topics` or
        :func:`~mixbayes.select_n_clusters` that chose the model's K: its curve is drawn.
    vocabulary : sequence of str, default=None
        The terms' names, when ``data`` is not a Corpus (e.g. the vocabulary saved with the
        model, :func:`mixbayes.persist.load_vocabulary`); without one the terms are ``term
        0``, ``term 1``, ... and the page's warnings say so.
    doc_ids : sequence of str, default=None
        The documents' names, when ``data`` is not a Corpus (default: their row numbers).
    feature_names : sequence of str, default=None
        Names of the points' features (default: x1, x2, ...).
    title : str, default=None
        The page's title (default: the model's kind).
    rows : array-like of int, default=None
        When ``data`` holds only some of the documents the model was fitted to (a sample of a
        corpus kept on a dask cluster, as ``mixbayes topics --scheduler`` gives), their row
        numbers among those documents, increasing: the example documents are drawn from them
        and the page says so. For a Dirichlet-multinomial mixture or a topic model.

    Returns
    -------
    str

    Raises
    ------
    TypeError
        ``model`` is not one of mixbayes's fitted models.
    ValueError
        ``data`` does not match the model (other terms, other documents, other features), or
        ``selection`` is for another K.
    """
    from . import _extract, _gaussian_page, _term_page, _tree_page
    from ._html import assemble

    kind = _kind(model)
    if kind == "terms":
        counts, vocabulary, doc_ids, rows = _documents(model, data, vocabulary, doc_ids, rows)
        payload = _term_page.term_payload(model, counts, vocabulary, doc_ids, rows)
    else:
        if rows is not None:
            raise ValueError("rows: a sample of the documents is for a model of words; a "
                             f"{type(model).__name__} draws its points.")
        points = _points(model, data, kind)
        if kind == "tree":
            payload = _tree_page.tree_payload(model, points, feature_names)
        else:
            payload = _gaussian_page.gaussian_payload(model, points, feature_names)
    from .notes import convergence_warnings

    payload["warnings"] = convergence_warnings(model)
    if kind == "terms" and vocabulary is None:
        payload["warnings"].append(NO_VOCABULARY)
    names = doc_ids if kind == "terms" else None
    partition = _extract.partition_payload(model, names)
    if partition is not None:
        payload["partition"] = partition
    if selection is not None:
        rows = list(getattr(selection, "table", selection))
        chosen = getattr(model, "n_components", None)
        ks = [int(float(row["k"])) for row in rows] if rows else []
        if chosen not in ks:
            raise ValueError(f"selection: its table covers K = {ks[:1] + ks[-1:]} but the "
                             f"model has K = {chosen}; pass the selection that chose this "
                             "model.")
        payload["selection"] = _extract.selection_payload(rows, chosen)
        payload["subtitle"] += coarse_iterations_note(model, rows, chosen)
    if title is None:
        title = {"terms": "Clusters", "gaussian": "Clusters", "tree": "Tree of clusters"}[kind]
        title = "Topics" if payload["unit"] == "topic" else title
        title = f"mixbayes report: {title}"
    return assemble(payload, str(title))


def write_report(model, path, data=None, **options):
    """Write :func:`build_report`'s page to ``path`` (through a temporary file in the same
    folder, renamed into place) and return the path. ``options`` are those of
    :func:`build_report`."""
    from ..persist import write_atomically

    page = build_report(model, data, **options).encode("utf-8")
    path = os.fspath(path)
    write_atomically(path, lambda handle: handle.write(page))
    return path


# --------------------------------------------------------------------------- inputs
def _kind(model):
    from sklearn.exceptions import NotFittedError

    # each model declares its page ("terms", "gaussian", "tree") and view
    declared = getattr(model, "_report_kind", None)
    if isinstance(declared, tuple):
        kind = declared[0]
    else:
        raise TypeError(f"model: a report shows a fitted DirichletMultinomialMixture, "
                        f"TopicModel, HDPMixture, VariationalGaussianMixture or "
                        f"HierarchicalMixture; got {type(model).__name__}.")
    if not hasattr(model, "n_features_in_"):
        raise NotFittedError(f"model: this {type(model).__name__} is not fitted yet; call fit "
                             "first.")
    return kind


def _n_documents(model):
    if hasattr(model, "doc_topic_"):
        return model.doc_topic_.shape[0]
    if hasattr(model, "group_labels_"):
        return model.group_labels_.shape[0]
    return model.labels_.shape[0]


def _documents(model, data, vocabulary, doc_ids, rows):
    """The counts, vocabulary, document names and sample ``rows``, checked against the model:
    the same number of documents (or rows naming documents of the model) and of terms, and
    every term's total count where the model records it (a vocabulary in another order, or
    read with other stop words, differs there; a sample's totals are its own)."""
    from ..corpus import Corpus
    from ._term_page import term_totals

    if isinstance(data, Corpus):
        counts = data.counts
        vocabulary = data.vocabulary if vocabulary is None else vocabulary
        doc_ids = data.doc_ids if doc_ids is None else doc_ids
    elif data is not None:
        from .._validation import check_counts

        counts = check_counts(data, "data")
    else:
        counts = None
    p = model.n_features_in_
    if counts is not None and counts.shape[1] != p:
        raise ValueError(f"data: the corpus has {plural(counts.shape[1], 'term')} but the model "
                         f"was fitted to {plural(p, 'term')}: its vocabulary does not match; "
                         "give the corpus the model was fitted to, read the same way (the same "
                         "stop words and minimum document frequency).")
    if vocabulary is not None and len(vocabulary) != p:
        raise ValueError(f"vocabulary: it has {plural(len(vocabulary), 'term')} but the model "
                         f"was fitted to {plural(p, 'term')}.")
    if counts is None:
        if rows is not None:
            raise ValueError("rows: they name the documents of data, and no data are given.")
        return None, vocabulary, None, None
    n = _n_documents(model)
    if rows is not None:
        return counts, vocabulary, _sample_ids(counts, doc_ids), _sample_rows(rows, counts, n)
    if counts.shape[0] != n:
        raise ValueError(f"data: the corpus has {plural(counts.shape[0], 'document')} but the "
                         f"model was fitted to {plural(n, 'document')}; give the corpus the "
                         "model was fitted to.")
    totals = np.asarray(counts.sum(axis=0)).ravel().astype(float)
    if hasattr(model, "term_frequency_"):
        expected = model.term_frequency_ * totals.sum()
    else:
        expected = term_totals(model)
    wrong = np.flatnonzero(~np.isclose(totals, expected, rtol=1e-6, atol=1e-6 * max(
        totals.sum(), 1.0) / p + 1e-6))
    if wrong.size:
        j = wrong[0]
        name = f"{vocabulary[j]!r} (column {j})" if vocabulary is not None else f"column {j}"
        raise ValueError(f"data: the corpus's vocabulary does not match the model's: term "
                         f"{name} occurs {totals[j]:.0f} times in it but {expected[j]:.0f} in "
                         f"the documents the model was fitted to ({plural(wrong.size, 'term')} "
                         "differ); give the corpus the model was fitted to, its terms in the "
                         "same order.")
    return counts, vocabulary, _sample_ids(counts, doc_ids), None


def _sample_ids(counts, doc_ids):
    if doc_ids is not None and len(doc_ids) != counts.shape[0]:
        raise ValueError(f"doc_ids: it has {len(doc_ids)} entries for "
                         f"{plural(counts.shape[0], 'document')}.")
    return doc_ids


def _sample_rows(rows, counts, n):
    """``rows`` as increasing row numbers below ``n``, one per document of ``counts``."""
    rows = np.asarray(rows)
    if rows.ndim != 1 or rows.dtype.kind not in "iu" or rows.size != counts.shape[0]:
        raise ValueError(f"rows: expected one row number per document of data "
                         f"({counts.shape[0]}); got {rows.size} of dtype {rows.dtype}.")
    if rows.size and (rows[0] < 0 or rows[-1] >= n or np.any(np.diff(rows) <= 0)):
        raise ValueError(f"rows: must increase within 0..{n - 1} (the documents the model "
                         "was fitted to).")
    return rows.astype(np.int64)


def _points(model, data, kind):
    """The points as an (n, d) float array, checked against the model (None when none)."""
    if data is None:
        return None
    from ..corpus import Corpus

    if isinstance(data, Corpus) or hasattr(data, "tocsr"):
        raise ValueError(f"data: a {type(model).__name__} was fitted to points, not documents; "
                         "give the points (an array of shape (n_samples, n_features)).")
    X = np.asarray(data, dtype=float)
    X = X[:, None] if X.ndim == 1 else X
    d = model.n_features_in_
    if X.ndim != 2 or X.shape[1] != d:
        raise ValueError(f"data: the points have shape {X.shape} but the model was fitted to "
                         f"{plural(d, 'feature')}.")
    if not np.all(np.isfinite(X)):
        raise ValueError("data: the points hold NaN or infinite values.")
    n = len(model.labels_)
    if model._report_kind[1] != "clusters" and X.shape[0] != n:  # a mixture predicts any points
        raise ValueError(f"data: {plural(X.shape[0], 'point')} given but the model was "
                         f"fitted to {n}; give the points it was fitted to.")
    return X


def coarse_iterations_note(model, rows, chosen):
    """When the chosen K's row counts more iterations than the model's ``n_iter_`` (a coarse
    fit of the scan, then its continuation: ``select_n_topics``), the words that say so, so
    that the page's count agrees with the table (selection.csv, summary.json); else ''."""
    row = next(row for row in rows if int(float(row["k"])) == chosen)
    try:
        total = int(float(row.get("n_iter")))
    except (TypeError, ValueError):
        return ""
    fitted = int(getattr(model, "n_iter_", total))
    if total <= fitted:
        return ""
    return (f" (continued from {plural(total - fitted, 'iteration')} at the scan's coarser "
            f"tolerance: {total} in all, as in the selection table)")
