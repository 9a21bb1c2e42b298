"""Agreement between a clustering and known classes, between a tree of clusters and known
classes or a known hierarchy, between estimated and true topics; and topic coherence.

Every measure here knows no model: a model's own scores (the topic model's held-out likelihood
by document completion, :mod:`mixbayes.topics.evaluation`) stay with the model.
:func:`coherence` reads a fitted model only through its ``top_words``.

NMI and ARI come from scikit-learn; purity, matched accuracy and dendrogram purity are defined
here. Every function takes the truth first, except the tree measures, which take the tree
(``paths``) first as :class:`~mixbayes.HierarchicalMixture` gives it (``paths_``); clustering
scores accept labels of any hashable type.
"""

import functools
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score
from sklearn.metrics.cluster import contingency_matrix

__all__ = ["nmi", "ari", "purity", "matched_accuracy", "clustering_report", "dendrogram_purity",
           "levelwise_scores", "matched_topic_mse", "match_topics", "coherence", "Coherence"]


def _check_pair(labels_true, labels_pred):
    labels_true, labels_pred = np.asarray(labels_true), np.asarray(labels_pred)
    if labels_true.ndim != 1 or labels_pred.ndim != 1:
        raise ValueError("labels_true and labels_pred must be 1-D.")
    if labels_true.shape != labels_pred.shape:
        raise ValueError(
            f"labels_true and labels_pred must have the same length; got "
            f"{labels_true.size} and {labels_pred.size}."
        )
    if labels_true.size == 0:
        raise ValueError("labels_true and labels_pred are empty.")
    return labels_true, labels_pred


def nmi(labels_true, labels_pred, average="arithmetic"):
    """Normalised mutual information, with ``average`` in {"arithmetic", "geometric", "min", "max"}.

    Arithmetic averaging, I/((H(U)+H(V))/2), is scikit-learn's default; geometric, I/sqrt(H(U)H(V)),
    is what the HDP literature reports.
    """
    labels_true, labels_pred = _check_pair(labels_true, labels_pred)
    return float(normalized_mutual_info_score(labels_true, labels_pred, average_method=average))


def ari(labels_true, labels_pred):
    """Adjusted Rand index (0 for chance, 1 for identical partitions)."""
    return float(adjusted_rand_score(*_check_pair(labels_true, labels_pred)))


def purity(labels_true, labels_pred):
    """Fraction of samples in the majority class of their cluster."""
    table = contingency_matrix(*_check_pair(labels_true, labels_pred))
    return float(table.max(axis=0).sum() / table.sum())


def matched_accuracy(labels_true, labels_pred):
    """Accuracy after the one-to-one matching of clusters to classes that maximises it (Hungarian)."""
    table = contingency_matrix(*_check_pair(labels_true, labels_pred))
    rows, cols = linear_sum_assignment(-table)
    return float(table[rows, cols].sum() / table.sum())


def clustering_report(labels_true, labels_pred):
    """All four scores in one dict (``nmi`` arithmetic, ``nmi_geometric``, ``ari``, ...)."""
    return dict(
        nmi=nmi(labels_true, labels_pred),
        nmi_geometric=nmi(labels_true, labels_pred, "geometric"),
        ari=ari(labels_true, labels_pred),
        purity=purity(labels_true, labels_pred),
        accuracy=matched_accuracy(labels_true, labels_pred),
    )


# ---------------------------------------------------------------------- trees
def _check_paths(paths, name="paths"):
    """A tree as an (n, L) array of integer node ids, a 1-D array being a tree of depth 1."""
    array = np.asarray(paths)
    if array.ndim == 1:
        array = array[:, None]
    if array.ndim != 2:
        raise ValueError(f"{name} must be 1-D or 2-D (points x levels); got {array.ndim} "
                         "dimensions.")
    if array.size == 0:
        raise ValueError(f"{name} is empty (shape {array.shape}); a tree needs at least one "
                         "point and one level.")
    if array.dtype.kind in "biu":
        return array.astype(np.int64)
    if array.dtype.kind == "f":
        bad = ~np.isfinite(array) | (array != np.round(array))
        if not bad.any():
            return array.astype(np.int64)
        row, level = np.argwhere(bad)[0]
        raise ValueError(f"{name} must hold integer node ids; got {array[row, level]} for "
                         f"point {row} at level {level + 1}.")
    raise ValueError(f"{name} must hold integer node ids; got values of dtype {array.dtype}.")


def _tree_nodes(paths):
    """Every point's node at depths 0..L as consecutive integers, a node being the prefix
    ``paths[i, :l]`` (so ids may repeat under different parents); depth 0 is the root."""
    n, depth = paths.shape
    nodes = np.zeros((n, depth + 1), dtype=np.int64)
    for level in range(depth):
        _, child = np.unique(paths[:, level], return_inverse=True)
        key = nodes[:, level] * (int(child.max()) + 1) + child.ravel()
        _, inverse = np.unique(key, return_inverse=True)
        nodes[:, level + 1] = inverse.ravel()
    return nodes


def _classes(labels, n, name="labels_true"):
    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got {labels.ndim} dimensions.")
    if labels.size != n:
        raise ValueError(f"paths and {name} must have the same length; got {n} points and "
                         f"{labels.size} labels.")
    return np.unique(labels, return_inverse=True)[1].ravel()


def dendrogram_purity(paths, labels_true):
    r"""Dendrogram purity (Heller & Ghahramani, 2005) of a tree of clusters against known classes.

    Over every pair of distinct points with the same class :math:`c`, the purity of their
    lowest common ancestor :math:`v` (the share of the points under :math:`v` that are of
    class :math:`c`), averaged over the pairs:

    .. math::

        \mathrm{DP} = \frac{1}{|\mathcal P|} \sum_{\{i, j\} \in \mathcal P}
            \frac{n_{\mathrm{lca}(i, j),\, c_i}}{n_{\mathrm{lca}(i, j)}},
        \qquad \mathcal P = \{\{i, j\} : i \ne j,\ c_i = c_j\}.

    The tree need not be binary: the nodes are given by each point's path, and two points in
    the same node at the deepest level have that node as their common ancestor (the root is
    implicit and holds every point). 1 when every class is a subtree of its own; a flat
    clustering (depth 1) is scored by the purity of the shared cluster for pairs within one
    cluster and of the root for pairs across clusters.

    Computed in :math:`O(nL)` counts, not over the pairs: the pairs of class :math:`c` whose
    lowest common ancestor is :math:`v` number
    :math:`\binom{n_{vc}}{2} - \sum_{u \in \mathrm{children}(v)} \binom{n_{uc}}{2}`.

    Parameters
    ----------
    paths : array-like of int of shape (n_points, n_levels) or (n_points,), or a linkage matrix
        Each point's node at levels 1..L below the root (``HierarchicalMixture.paths_``). A
        node is the path prefix ``paths[i, :l]``, so ids may be unique per level, per parent
        or overall. A 1-D array is a tree of depth 1 (a flat clustering). A float array of
        shape (n_points - 1, 4) is read as scipy's linkage matrix of a binary merge tree
        (``HierarchicalMixture.linkage_``, ``scipy.cluster.hierarchy.linkage``): row i
        merges nodes ``Z[i, 0]`` and ``Z[i, 1]`` (ids below n_points are the points) into
        node n_points + i.
    labels_true : array-like of shape (n_points,)
        Known classes, of any hashable type.

    Returns
    -------
    float in (0, 1]

    Raises
    ------
    ValueError
        Empty input, lengths that differ, node ids that are not integers, or no two points of
        the same class (no pair to score).
    """
    if _is_linkage(paths, labels_true):
        return _linkage_purity(np.asarray(paths, dtype=float), labels_true)
    paths = _check_paths(paths)
    n, depth = paths.shape
    classes = _classes(labels_true, n)
    n_classes = int(classes.max()) + 1
    pairs = _pairs(np.bincount(classes)).sum()
    if pairs == 0:
        raise ValueError("labels_true gives every point a class of its own: no pair of points "
                         "shares a class, so dendrogram purity is undefined.")
    nodes = _tree_nodes(paths)
    total = 0.0
    parent_purity = None  # per (node, class) key of the level above, for the children's term
    for level in range(depth + 1):
        key = nodes[:, level] * n_classes + classes
        keys, n_vc = np.unique(key, return_counts=True)
        node_of_key = keys // n_classes
        purity_vc = n_vc / np.bincount(nodes[:, level])[node_of_key]
        total += np.sum(_pairs(n_vc) * purity_vc)
        if parent_purity is not None:  # pairs of the children's classes meet lower down
            parent_keys, purities, parent_of = parent_purity
            above = parent_of[node_of_key] * n_classes + keys % n_classes
            total -= np.sum(_pairs(n_vc) * purities[np.searchsorted(parent_keys, above)])
        if level < depth:
            parent_of = np.empty(int(nodes[:, level + 1].max()) + 1, dtype=np.int64)
            parent_of[nodes[:, level + 1]] = nodes[:, level]
            parent_purity = (keys, purity_vc, parent_of)
    return float(total / pairs)


def _is_linkage(tree, labels_true):
    tree, labels = np.asarray(tree), np.asarray(labels_true)
    return (tree.ndim == 2 and tree.shape[1] == 4 and tree.dtype.kind == "f"
            and labels.ndim == 1 and tree.shape[0] == labels.size - 1)


def _linkage_purity(Z, labels_true):
    """Dendrogram purity of a binary merge tree in scipy's linkage format: class counts
    merged bottom-up; the same-class pairs whose lowest common ancestor is merge node v are
    ``counts[a] * counts[b]`` (one point under each side), each scoring v's purity in their
    class. O(n C) for C classes."""
    n = Z.shape[0] + 1
    classes = _classes(labels_true, n)
    if not np.all(np.isfinite(Z[:, :2])) or np.any(Z[:, :2] != np.round(Z[:, :2])):
        raise ValueError("paths read as a linkage matrix must hold integer node ids in its "
                         "first two columns.")
    children = Z[:, :2].astype(np.int64)
    if children.size and (children.min() < 0 or np.any(children >= n + np.arange(n - 1)[:, None])):
        raise ValueError("paths read as a linkage matrix must merge only points and earlier "
                         "rows (row i may name nodes below n_points + i).")
    per_class = np.bincount(classes)
    pairs = _pairs(per_class).sum()
    if pairs == 0:
        raise ValueError("labels_true gives every point a class of its own: no pair of points "
                         "shares a class, so dendrogram purity is undefined.")
    counts = np.zeros((2 * n - 1, per_class.size))
    counts[np.arange(n), classes] = 1
    total = 0.0
    for row, (a, b) in enumerate(children):
        node = n + row
        counts[node] = counts[a] + counts[b]
        total += np.dot(counts[a] * counts[b], counts[node]) / counts[node].sum()
    return float(total / pairs)


def _pairs(counts):
    counts = np.asarray(counts, dtype=float)
    return counts * (counts - 1) / 2


def levelwise_scores(paths, true_levels, measure="nmi"):
    """Agreement of a tree of clusters with a known hierarchy, level by level.

    At every level :math:`l`, the points' nodes (the path prefixes ``paths[:, :l]``) are
    compared with the known groups at that level (the prefixes of ``true_levels`` likewise,
    so known ids, too, may repeat under different parents).

    Parameters
    ----------
    paths : array-like of int of shape (n_points, n_levels) or (n_points,)
        Each point's node at levels 1..L below the root (``HierarchicalMixture.paths_``).
    true_levels : array-like of shape (n_points, n_levels), or a list of n_levels arrays
        The known hierarchy, top level first: integer ids of each point's group at every
        level, or a list of one label array (any hashable type) per level, each of length
        n_points (a list is read so whenever its shape allows).
    measure : {"nmi", "ari"} or callable, default="nmi"
        :func:`nmi` (arithmetic mean), :func:`ari`, or ``f(labels_true, labels_pred)``.

    Returns
    -------
    ndarray of float of shape (n_levels,)
        The score at levels 1..L.
    """
    paths = _check_paths(paths)
    n, depth = paths.shape
    if isinstance(true_levels, (list, tuple)) and len(true_levels) == depth and all(
            np.ndim(level) == 1 and len(level) == n for level in true_levels):
        truth = np.column_stack([_classes(level, n, f"true_levels[{i}]")
                                 for i, level in enumerate(true_levels)])
    else:
        truth = _check_paths(true_levels, "true_levels")
        if truth.shape[0] != n:
            raise ValueError(f"paths and true_levels must have the same number of points; got "
                             f"{n} and {truth.shape[0]}.")
    if truth.shape[1] != depth:
        raise ValueError(f"paths has {depth} levels but true_levels has {truth.shape[1]}; "
                         "compare trees of the same depth (slice the deeper one).")
    if callable(measure):
        score = measure
    elif measure in ("nmi", "ari"):
        score = nmi if measure == "nmi" else ari
    else:
        raise ValueError(f"measure must be 'nmi', 'ari' or a callable; got {measure!r}.")
    estimated, known = _tree_nodes(paths), _tree_nodes(truth)
    return np.array([score(known[:, level], estimated[:, level])
                     for level in range(1, depth + 1)], dtype=float)


def match_topics(true_topics, estimated_topics):
    """The one-to-one matching of estimated to true topics with the least total squared error.

    Parameters
    ----------
    true_topics, estimated_topics : array-like of shape (K, p)
        Topics as rows (each a distribution over the p terms); the same K and p.

    Returns
    -------
    ndarray of int of shape (K,)
        ``order`` such that ``estimated_topics[order[k]]`` is matched to ``true_topics[k]``.
    """
    true_topics = np.asarray(true_topics, dtype=float)
    estimated_topics = np.asarray(estimated_topics, dtype=float)
    if true_topics.ndim != 2 or true_topics.shape != estimated_topics.shape:
        raise ValueError(
            "true_topics and estimated_topics must be 2-D arrays of the same shape (K, p); got "
            f"{true_topics.shape} and {estimated_topics.shape}."
        )
    cost = ((true_topics[:, None, :] - estimated_topics[None, :, :]) ** 2).sum(axis=2)
    rows, cols = linear_sum_assignment(cost)
    return cols[np.argsort(rows)]


def matched_topic_mse(true_topics, estimated_topics):
    """Mean squared error over all K x p topic probabilities after :func:`match_topics`
    (Taddy's (2012) measure of topic recovery; label switching is undone first)."""
    order = match_topics(true_topics, estimated_topics)
    diff = np.asarray(true_topics, dtype=float) - np.asarray(estimated_topics, dtype=float)[order]
    return float(np.mean(diff**2))


# ---------------------------------------------------------------------- topic coherence
EPSILON = 1e-12  # gensim's, added to co-occurrence probabilities in every measure
_MEASURES = {"umass": "umass", "u_mass": "umass", "npmi": "npmi", "c_npmi": "npmi",
             "c_v": "c_v"}


@dataclass(frozen=True)
class Coherence:
    """Result of :func:`coherence`.

    Attributes
    ----------
    measure : {"umass", "npmi", "c_v"}
    per_topic : ndarray of float of shape (n_topics,)
        Each topic's coherence; NaN for a topic of fewer than two words (no pair to score).
    mean : float
        The mean over the topics that have a value (gensim's ``get_coherence``); NaN when none.
    top_words : list of lists
        The words scored, per topic: terms of the vocabulary when one is known, else column
        indices of ``X``.
    """

    measure: str
    per_topic: np.ndarray
    mean: float
    top_words: list

    def to_dict(self):
        """Plain Python values for JSON: ``measure``, ``mean`` and ``per_topic`` (NaN as None)."""
        def plain(value):
            return None if np.isnan(value) else float(value)

        return dict(measure=self.measure, mean=plain(self.mean),
                    per_topic=[plain(v) for v in self.per_topic])


def coherence(topics, X, measure="umass", vocabulary=None, n=10):
    r"""Topic coherence from document co-occurrence, per topic and on average, as gensim's
    ``CoherenceModel`` defines it.

    With :math:`D(w)` the number of documents of ``X`` that hold term :math:`w`,
    :math:`D(w, w')` the number that hold both, :math:`N` the number of documents (empty ones
    included), :math:`P = D/N` and :math:`\epsilon = 10^{-12}`, a topic's top words
    :math:`w_1, \dots, w_m` (best first) score

    * ``"umass"`` (Mimno et al., 2011, gensim's ``u_mass``): the mean over :math:`i > j` of
      :math:`\log \frac{P(w_i, w_j) + \epsilon}{P(w_j)}` (gensim's ``s_one_pre`` segmentation:
      each word conditioned on every better-ranked one; gensim's :math:`\epsilon` in place of
      Mimno's +1). At most 0; higher is more coherent.
    * ``"npmi"`` (gensim's ``c_npmi``): the mean over :math:`i \ne j` of
      :math:`\mathrm{NPMI}(w_i, w_j) = \log \frac{P(w_i, w_j) + \epsilon}{P(w_i) P(w_j)} \big/
      \left(-\log(P(w_i, w_j) + \epsilon)\right)`, in about [-1, 1].
    * ``"c_v"`` (Röder et al., 2015, gensim's ``c_v``): each word's context vector
      :math:`v_i = (\mathrm{NPMI}(w_i, w_j))_{j=1..m}` (the diagonal included), the topic's
      :math:`v = \sum_i v_i`, and the mean over :math:`i` of the cosine of :math:`v_i` and
      :math:`v` (``one_set`` segmentation, :math:`\gamma = 1`), in about [0, 1].

    **The document is the window.** gensim estimates the probabilities of ``c_npmi`` and
    ``c_v`` from boolean sliding windows over token sequences (10 and 110 tokens by default),
    counting each window as a document. Counts carry no token order, so here every document is
    one window. That is exactly gensim's value with ``window_size`` at least the longest
    document (gensim then takes each document whole), and so exactly gensim's default
    ``c_v`` (``c_npmi``) on a corpus whose documents are at most 110 (10) tokens long. On
    longer documents gensim's windows count nearby words only, which counts cannot reproduce.
    ``umass`` counts documents in gensim too, so it is gensim's on any corpus.

    A word that occurs in no document of ``X`` scores 0 in every ``umass`` pair that conditions
    on it (gensim's rule) and in every ``npmi`` and ``c_v`` pair (where gensim divides by zero).

    Parameters
    ----------
    topics : fitted model, array of shape (n_topics, n_terms), or list of lists of str or int
        A fitted :class:`~mixbayes.TopicModel`, :class:`~mixbayes.DirichletMultinomialMixture`
        or categorical :class:`~mixbayes.HDPMixture` (its ``top_words`` by probability); a
        topic-word matrix of float weights, one column per term of ``X`` (scikit-learn's
        ``LatentDirichletAllocation.components_`` or ``NMF.components_``, gensim's
        ``get_topics()``), whose ``n`` heaviest terms per row are scored (``vocabulary`` names
        them); or the top words of each topic, best first: terms of ``vocabulary``, or column
        indices of ``X``.
    X : array-like, sparse matrix, Corpus or dask array of shape (n_documents, n_terms)
        Word counts of the reference corpus (usually the one fitted); a
        :class:`~mixbayes.Corpus` brings its vocabulary. A dask array (or a
        :class:`~mixbayes.distributed.ShardedCorpus`) stays where it is: every chunk counts its
        documents' pairs of top words, and the counts are summed on the workers (they add
        over documents), so the result is the in-process one.
    measure : {"umass", "npmi", "c_v"}, default="umass"
        gensim's names ``"u_mass"`` and ``"c_npmi"`` are accepted too.
    vocabulary : sequence of str of length n_terms, optional
        Maps words to the columns of ``X`` (default: the Corpus's, when ``X`` is one).
    n : int, default=10
        Top words per topic: taken from a model, or the first ``n`` of each given list (gensim's
        ``topn``).

    Returns
    -------
    Coherence
        ``per_topic``, ``mean``, ``measure`` and the ``top_words`` scored.

    Examples
    --------
    >>> import mixbayes as mb
    >>> corpus = mb.Corpus.from_texts(["apple banana", "apple banana cherry", "cherry date"])
    >>> result = mb.metrics.coherence([["apple", "banana"], ["apple", "date"]], corpus)
    >>> [round(v, 3) for v in result.per_topic]
    [0.0, -27.226]
    """
    from . import _engines
    from ._validation import check_counts

    kind = _MEASURES.get(measure) if isinstance(measure, str) else None
    if kind is None:
        raise ValueError(f"measure must be one of 'umass', 'npmi', 'c_v'; got {measure!r}.")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be an integer >= 1; got {n!r}.")
    if vocabulary is None:
        vocabulary = getattr(X, "vocabulary", None)
    if _engines.engine_for(X, fit=False).in_process:
        X = check_counts(X, "X")
    else:  # the counts stay where they are; only the pair counts come here
        X = getattr(X, "counts", X)
    n_documents, n_terms = X.shape
    columns, words = _topic_columns(topics, n_terms, vocabulary, int(n))
    terms = np.unique(np.concatenate(columns))  # every topic's top words, each once
    together = _engines.sum_rows(X, functools.partial(co_documents, terms=terms),
                                 (terms.size, terms.size))
    per_topic = np.array([_topic_coherence(together[np.ix_(at, at)], n_documents, kind)
                          for at in (np.searchsorted(terms, cols) for cols in columns)])
    scored = per_topic[~np.isnan(per_topic)]
    mean = float(scored.mean()) if scored.size else float("nan")
    return Coherence(kind, per_topic, mean, words)


def _topic_columns(topics, n_terms, vocabulary, n):
    """Every topic's top words as column indices of X, and as the words to report."""
    if vocabulary is not None:
        vocabulary = np.asarray(vocabulary, dtype=object)
        if vocabulary.shape != (n_terms,):
            raise ValueError(f"vocabulary must have one entry per column of X ({n_terms}); got "
                             f"{vocabulary.shape[0] if vocabulary.ndim else 0}.")
    weights = _topic_word_matrix(topics)
    if hasattr(topics, "top_words") and hasattr(topics, "n_features_in_"):
        if topics.n_features_in_ != n_terms:
            raise ValueError(f"X has {n_terms} terms but the model was fitted on "
                             f"{topics.n_features_in_}.")
        columns = [np.asarray(row, dtype=np.int64)
                   for row in topics.top_words(np.arange(n_terms), n=n)]
    elif weights is not None:
        if weights.shape[1] != n_terms or not weights.shape[0]:
            raise ValueError(f"topics: a topic-word matrix needs one row per topic and one "
                             f"column per term of X ({n_terms}); got shape {weights.shape}.")
        if not np.all(np.isfinite(weights)):
            raise ValueError("topics: the topic-word matrix holds NaN or infinite weights.")
        columns = [np.argsort(-row, kind="stable")[:n].astype(np.int64) for row in weights]
    else:
        if isinstance(topics, (str, bytes)) or not hasattr(topics, "__len__") or not len(topics):
            raise ValueError("topics must be a fitted model or a non-empty list of word lists; "
                             f"got {type(topics).__name__}.")
        index = None if vocabulary is None else {w: j for j, w in enumerate(vocabulary)}
        columns = []
        for k, topic in enumerate(topics):
            if isinstance(topic, (str, bytes)):
                raise ValueError(f"topics[{k}] must be a list of words; got the string "
                                 f"{topic!r}.")
            cols = []
            for word in list(topic)[:n]:
                if isinstance(word, (int, np.integer)) and not isinstance(word, bool) and (
                        index is None or word not in index):
                    if not 0 <= word < n_terms:
                        raise ValueError(f"topics[{k}] holds column {word}, outside X's "
                                         f"{n_terms} columns.")
                    cols.append(int(word))
                elif index is None:
                    raise ValueError(f"topics[{k}] holds the word {word!r}: give vocabulary "
                                     "(or X as a Corpus) to map words to columns of X.")
                elif word in index:
                    cols.append(index[word])
                else:
                    raise ValueError(f"topics[{k}] holds {word!r}, which is not in the "
                                     "vocabulary.")
            columns.append(np.asarray(cols, dtype=np.int64))
    words = [[vocabulary[j] if vocabulary is not None else int(j) for j in cols]
             for cols in columns]
    return columns, words


def _topic_word_matrix(topics):
    """``topics`` as a float (n_topics, n_terms) array when it is a topic-word matrix
    (scikit-learn's ``components_``, gensim's ``get_topics()``, a dense or sparse array of
    weights), else None (a model, or lists of words or of column indices)."""
    if hasattr(topics, "top_words") or isinstance(topics, (str, bytes)):
        return None
    if sp.issparse(topics):
        topics = topics.toarray()
    try:
        weights = np.asarray(topics)
    except (ValueError, TypeError):  # ragged lists of words
        return None
    if weights.ndim == 2 and weights.dtype.kind == "f":
        return weights.astype(float)
    return None


def co_documents(X, terms):
    """How many documents of the counts ``X`` hold each pair of the columns ``terms`` (the
    diagonal: how many hold each), as a dense float array of shape (m, m); it adds over row
    shards, so a cluster sums it over them (:func:`mixbayes._engines.sum_rows`)."""
    from ._validation import check_counts

    X = check_counts(X, "X")
    present = sp.csr_matrix(((X.data > 0).astype(float), X.indices, X.indptr),
                            shape=X.shape)[:, terms]  # 1 where a term occurs
    return (present.T @ present).toarray()


def _topic_coherence(together, n_docs, kind):
    """One topic's coherence from :func:`co_documents` of its top words (best first) in a
    corpus of ``n_docs`` documents."""
    m = together.shape[0]
    if m < 2:
        return float("nan")
    prob = together / n_docs  # P(w_i, w_j); P(w_i) on the diagonal
    single = np.diag(prob).copy()
    seen = single > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "umass":
            lower = np.tril_indices(m, -1)  # i > j: w_i given the better-ranked w_j
            values = np.log((prob + EPSILON) / single[None, :])[lower]
            values[~seen[lower[1]]] = 0.0
            return float(values.mean())
        joint = prob + EPSILON
        npmi = np.log(joint / np.outer(single, single)) / -np.log(joint)
    npmi[~(seen[:, None] & seen[None, :])] = 0.0
    if kind == "npmi":
        return float(npmi[~np.eye(m, dtype=bool)].mean())
    total = npmi.sum(axis=0)  # the context vector of the whole topic (gamma = 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        cosines = npmi @ total / (np.linalg.norm(npmi, axis=1) * np.linalg.norm(total))
    return float(cosines.mean())
