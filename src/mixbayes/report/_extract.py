"""What the report shows of each kind of model, as plain JSON-ready data.

One function per kind of picture: :func:`term_payload` (the Dirichlet-multinomial mixture,
the topic model and the categorical HDP: word distributions), :func:`gaussian_payload` (the
variational Gaussian mixture and the Gaussian HDP: means and covariances) and
:func:`tree_payload` (the tree model). Each returns a dict with ``kind`` (``"terms"``,
``"gaussian"`` or ``"tree"``), the ``components`` shown (id, share, a size text, map
position), the pieces its panel draws, and ``traces`` (the convergence record the model
keeps); :mod:`mixbayes.report` adds the selection curve and assembles the page.

The relevance of Sievert & Shirley (2014) ranks a topic's terms by
``lambda * log p(w|k) + (1 - lambda) * log(p(w|k) / p(w))``. The page re-ranks on every move of
its slider from the candidates shipped here: every term in a component's top
:data:`CANDIDATES` at any of :data:`LAMBDAS`, with p(w|k) and p(w), which keeps the file small
(K = 50 over 10,000 terms: about 100 kB) and the ranking that of the full vocabulary.
"""

from __future__ import annotations

import numpy as np

from .._validation import plural
from . import _geometry

CANDIDATES = 30  # terms per component and lambda shipped for the slider to re-rank
SHOWN_TERMS = 20  # terms the panel lists
LAMBDAS = np.linspace(0.0, 1.0, 11)
EXAMPLES = 5  # example documents per cluster or topic
EXAMPLE_WORDS = 12  # words shown of every example document
MAX_POINTS = 3000  # points drawn in a projection (a fixed random subsample beyond)
MAX_TRACE = 2000  # points of a trace line (every k-th beyond)
JITTER = 1.0  # one feature: points spread over [-JITTER, JITTER] vertically


# --------------------------------------------------------------------------- term models
def term_payload(model, counts=None, vocabulary=None, doc_ids=None, rows=None):
    """The map, term panel, sizes, trace and examples of a model of word distributions.

    ``counts`` (the training documents, CSR) enables the example documents; ``vocabulary``
    names the terms (default: ``term 0``, ``term 1``, ... as the model file stores none).
    ``rows``, when given, numbers the documents of ``counts`` among the training documents
    (a sample of them): the examples are drawn from those.
    """
    V = model.n_features_in_
    names = (np.array([f"term {j}" for j in range(V)], dtype=object) if vocabulary is None
             else np.asarray(vocabulary, dtype=object))
    view = model._report_kind[1]  # declared by the model: "clusters", "sampled" or "topics"
    if rows is not None and view == "sampled":
        raise ValueError("rows: the HDP's example documents come from every document's token "
                         "labels; give all the documents it was fitted to.")
    if view == "clusters":
        view = _dmm_view(model, counts, rows)
    elif view == "sampled":
        view = _hdp_view(model, counts)
    else:
        view = _topic_view(model, counts, rows)
    P, kept = view["P"], view["kept"]
    coords = _geometry.map_coordinates(_geometry.js_distances(P[kept])) if kept.size else \
        np.zeros((0, 2))
    columns, per_component = _candidates(P[kept], view["frequency"], view["present"][kept])
    components = [dict(id=int(k), share=float(view["share"][k]), size=view["size"][k],
                       x=float(coords[i, 0]), y=float(coords[i, 1]), terms=per_component[i])
                  for i, k in enumerate(kept)]
    payload = dict(kind="terms", unit=view["unit"], subtitle=view["subtitle"],
                   components=components, vocabulary=[str(names[j]) for j in columns],
                   frequency=[_round(view["frequency"][j]) for j in columns],
                   shown_terms=SHOWN_TERMS, lambda_default=0.6, traces=view["traces"],
                   map_note="Jensen-Shannon distance between word distributions, by "
                            "metric MDS (classical MDS refined by stress majorization); "
                            "circle area = share")
    notes = []
    empty = sorted(set(range(P.shape[0])) - set(kept.tolist()))
    if empty:
        notes.append(f"{plural(len(empty), 'empty ' + view['unit'])} not drawn: "
                     f"{', '.join(map(str, empty[:20]))}{' ...' if len(empty) > 20 else ''}")
    if view["scores"] is not None:
        payload["examples"] = _examples(view["scores"], kept, counts, names, doc_ids)
        payload["example_score"] = view["score_name"]
        if rows is not None:
            notes.append(f"example documents drawn from a sample of {rows.size:,} of the "
                         f"{view['n_documents']:,} documents")
    if notes:
        payload["note"] = "; ".join(notes)
    return payload


def _dmm_view(model, counts, rows=None):
    """What a Dirichlet-multinomial mixture shows: the clusters holding documents, their
    posterior mean word distributions, and (given the documents, or the sample of them at
    ``rows``) each member's probability."""
    P = model.components_
    totals = term_totals(model)
    sizes = np.bincount(model.labels_, minlength=model.n_components)
    kept = np.flatnonzero(sizes > 0)
    gibbs = getattr(model, "log_joint_trace_", None) is not None
    if gibbs:
        traces = [_trace("log p(y, z) per Gibbs sweep", "sweep", "log p(y, z) (nats)",
                         [("kept chain", model.log_joint_trace_)])]
        fit = (f"log p(y, z) {model.log_joint_trace_[-1]:.6g} after "
               f"{plural(model.n_iter_, 'sweep')}")
    else:
        traces = [_trace("ELBO per CAVI iteration", "iteration", "ELBO (nats)",
                         [("ELBO", model.elbo_trace_)])]
        fit = f"ELBO {model.elbo_:.6g} after {plural(model.n_iter_, 'iteration')}"
    scores = None
    if counts is not None:  # a document's probability in its own cluster only
        labels = model.labels_ if rows is None else model.labels_[rows]
        own = np.arange(P.shape[0])[None, :] == labels[:, None]
        scores = np.where(own, model.predict_proba(counts), -np.inf)
    return dict(n_documents=len(model.labels_),
        P=P, frequency=totals / totals.sum(), kept=kept, share=model.weights_,
        present=model.word_concentration_ - model.word_prior_ >= 0.5,  # as top_words
        size=[plural(int(n), "document") for n in sizes], unit="cluster", traces=traces,
        subtitle=(f"Dirichlet-multinomial mixture: {plural(len(model.labels_), 'document')} x "
                  f"{plural(P.shape[1], 'term')}, {plural(kept.size, 'cluster')} holding "
                  f"documents of {model.n_components}; {fit}"
                  + ("" if model.converged_ else " (NOT converged)")),
        scores=scores, score_name="probability")


def _topic_view(model, counts, rows=None):
    """What a topic model shows: every topic, its usage, and (given the documents, or the
    sample of them at ``rows``) the documents of highest weight on it."""
    P = model.topics_
    main = np.bincount(model.doc_topic_.argmax(axis=1), minlength=P.shape[0])
    scores = None
    if counts is not None:
        scores = model.doc_topic_ if rows is None else model.doc_topic_[rows]
    return dict(n_documents=model.doc_topic_.shape[0],
        P=P, frequency=model.term_frequency_, kept=np.arange(P.shape[0]), share=model.usage_,
        present=P > 0,
        size=[f"usage {u:.3f}, main topic of {plural(int(n), 'document')}"
              for u, n in zip(model.usage_, main)],
        unit="topic",
        traces=[_trace("log posterior per iteration", "iteration (0: the start)",
                       "log posterior (nats)", [("log posterior", model.log_posterior_trace_)],
                       first=0)],
        subtitle=(f"topic model: {plural(model.doc_topic_.shape[0], 'document')} x "
                  f"{plural(P.shape[1], 'term')}, {plural(P.shape[0], 'topic')}; log posterior "
                  f"{model.log_posterior_:.6g} after {plural(model.n_iter_, 'iteration')}"
                  + ("" if model.converged_ else " (NOT converged)")),
        scores=scores, score_name="topic weight")


def _hdp_view(model, counts):
    """What a categorical HDP shows: every cluster in use, its share of the tokens, and
    (given the documents) the documents it is the majority of, by their share in it."""
    from ..hdp.model import word_prior_value

    P = model.components_
    K, V = P.shape
    tokens = np.bincount(model.labels_, minlength=K)
    documents = np.bincount(model.group_labels_, minlength=K)
    a = word_prior_value(model.word_prior)  # as top_words: only terms the cluster's tokens use
    scores = None
    if counts is not None:
        own = np.arange(K)[None, :] == model.group_labels_[:, None]
        scores = np.where(own, hdp_document_shares(model, counts), -np.inf)
    chains, sweeps = model.trace_.shape
    return dict(
        P=P, frequency=model.term_frequency_, kept=np.arange(K), share=tokens / tokens.sum(),
        present=P * (tokens + V * a)[:, None] - a > 0.5,
        size=[f"{plural(int(t), 'token')}, majority of {plural(int(d), 'document')}"
              for t, d in zip(tokens, documents)],
        unit="cluster", traces=_hdp_traces(model),
        subtitle=(f"hierarchical Dirichlet process: {plural(model.n_groups_, 'document')} x "
                  f"{plural(V, 'term')} -> {plural(K, 'cluster')}; "
                  f"{plural(chains, 'chain')} x {plural(sweeps, 'sweep')}"),
        scores=scores, score_name="token share")


def term_totals(model):
    """Every term's count in the documents a Dirichlet-multinomial mixture was fitted to:
    the word concentrations less their prior, summed over clusters (exact for variational
    Bayes, whose responsibilities sum to one per document, and for Gibbs)."""
    return np.clip((model.word_concentration_ - model.word_prior_).sum(axis=0), 0.0, None)


def hdp_document_shares(model, counts):
    """Share of every document's tokens in every cluster (documents x clusters), from the
    categorical HDP's token labels (ordered document by document, term by term)."""
    lengths = np.asarray(counts.sum(axis=1)).ravel().astype(np.int64)
    group_of = np.repeat(np.arange(counts.shape[0]), lengths)
    K = model.components_.shape[0]
    table = np.zeros((counts.shape[0], K))
    np.add.at(table, (group_of, model.labels_), 1.0)
    return table / np.maximum(lengths, 1)[:, None]


def _candidates(P, frequency, present):
    """The terms the slider can bring to the top: per component, its top CANDIDATES by
    relevance at every lambda of LAMBDAS among the terms it has evidence for. Returns the
    union's columns and, per component, ``[[position in the union, p(w|k)], ...]``."""
    with np.errstate(divide="ignore"):
        log_p = np.where(present & (P > 0), np.log(P), -np.inf)
        log_f = np.log(np.where(frequency > 0, frequency, 1.0))
    chosen = []
    n = min(CANDIDATES, P.shape[1])
    for row, logs in enumerate(log_p):
        mine = set()
        finite = np.isfinite(logs)
        if not finite.any():
            chosen.append([])
            continue
        for lam in LAMBDAS:
            relevance = logs - (1.0 - lam) * log_f
            top = np.argpartition(-relevance, n - 1)[:n] if n < logs.size else np.arange(
                logs.size)
            mine.update(int(j) for j in top if finite[j])
        chosen.append(sorted(mine))
    columns = sorted(set().union(*map(set, chosen))) if chosen else []
    where = {j: i for i, j in enumerate(columns)}
    return columns, [[[where[j], _round(P[row, j])] for j in mine]
                     for row, mine in enumerate(chosen)]


def _examples(scores, kept, counts, names, doc_ids):
    """Up to EXAMPLES documents per component, the highest ``scores`` first (the cluster's
    probability, topic weight or token share; -inf where a document is not the cluster's),
    each with its most frequent words."""
    counts = counts.tocsr()
    examples = {}
    for k in kept:
        column = scores[:, k]
        n = min(EXAMPLES, column.size)
        top = np.argpartition(-column, n - 1)[:n]
        top = top[np.argsort(-column[top], kind="stable")]
        rows = []
        for i in top:
            if not np.isfinite(column[i]) or column[i] <= 0:
                continue
            start, end = counts.indptr[i], counts.indptr[i + 1]
            terms, values = counts.indices[start:end], counts.data[start:end]
            order = np.argsort(-values, kind="stable")[:EXAMPLE_WORDS]
            rows.append(dict(id=str(doc_ids[i]) if doc_ids is not None else str(i),
                             score=_round(column[i]),
                             words=" ".join(f"{names[terms[j]]}" + (
                                 f"\u00d7{values[j]}" if values[j] > 1 else "") for j in order)))
        examples[str(int(k))] = rows
    return examples


# --------------------------------------------------------------------------- Gaussian models
def gaussian_payload(model, points=None, feature_names=None):
    """The map (Hellinger distances between the components), the 2-D projection with 2-sigma
    ellipses, sizes and trace of a Gaussian mixture or a Gaussian HDP."""
    d = model.n_features_in_
    names = list(feature_names) if feature_names is not None else [f"x{j + 1}" for j in range(d)]
    if model._report_kind[1] == "sampled":  # the Gaussian HDP: components from its draws
        means = model.components_
        K = means.shape[0]
        sizes = np.bincount(model.labels_, minlength=K)
        share = sizes / sizes.sum()
        tau = model.observation_precision
        if tau is None and points is not None:
            from ..families.gaussian import column_variances, data_scale

            tau = 10.0 / data_scale(column_variances(points))
        covariances = None if tau is None else np.repeat(np.eye(d)[None] / tau, K, axis=0)
        kept = np.arange(K)
        traces = _hdp_traces(model)
        chains, sweeps = model.trace_.shape
        subtitle = (f"hierarchical Dirichlet process (Gaussian): "
                    f"{plural(len(model.labels_), 'point')} in "
                    f"{plural(model.n_groups_, 'group')} x {plural(d, 'feature')} -> "
                    f"{plural(K, 'cluster')}; {plural(chains, 'chain')} x "
                    f"{plural(sweeps, 'sweep')}")
        unit = "cluster"
    else:
        means = model.means_
        K = means.shape[0]
        sizes = np.bincount(model.labels_, minlength=K)
        share = model.weights_
        covariances = np.array([model.covariance_matrix(k) for k in range(K)])
        kept = np.flatnonzero(sizes > 0)
        traces = [_trace("ELBO per CAVI iteration", "iteration", "ELBO (nats)",
                         [("ELBO", model.elbo_trace_)])]
        effective = plural(model.n_effective_components_, "effective component")
        subtitle = (f"variational Gaussian mixture: {plural(len(model.labels_), 'point')} x "
                    f"{plural(d, 'feature')} -> {effective} of {K} ({model.covariance_type} "
                    f"covariance); ELBO {model.elbo_:.6g} after "
                    f"{plural(model.n_iter_, 'iteration')}"
                    + ("" if model.converged_ else " (NOT converged)"))
        unit = "component"
    if covariances is not None:
        distances = _geometry.hellinger_distances(means[kept], covariances[kept])
        map_note = ("Hellinger distance between the Gaussians, by metric MDS (classical MDS "
                    "refined by stress majorization); circle area = share")
    else:
        spread = means[kept] - means[kept].mean(axis=0)
        distances = np.sqrt(((spread[:, None] - spread[None]) ** 2).sum(axis=-1))
        map_note = ("Euclidean distance between the means, by metric MDS (classical MDS "
                    "refined by stress majorization); circle area = share")
    coords = _geometry.map_coordinates(distances)
    if points is not None:
        centre, basis = _geometry.principal_plane(points)
    elif covariances is not None:
        centre, basis = _geometry.mixture_plane(share[kept], means[kept], covariances[kept])
    else:
        centre, basis = _geometry.principal_plane(means[kept], share[kept])
    components = []
    for i, k in enumerate(kept):
        entry = dict(id=int(k), share=float(share[k]),
                     size=f"{plural(int(sizes[k]), 'point')}, weight {share[k]:.3f}",
                     x=float(coords[i, 0]), y=float(coords[i, 1]),
                     centre=[_round(v) for v in (means[k] - centre) @ basis],
                     mean=[_round(v) for v in means[k]])
        if covariances is not None:
            ellipse = _geometry.ellipse(covariances[k], basis)
            if d == 1:  # one feature: the 2-sigma interval, as tall as the points' jitter
                ellipse = (ellipse[0], JITTER * 1.25, 0.0)
            entry["ellipse"] = [_round(v) for v in ellipse]
        components.append(entry)
    payload = dict(kind="gaussian", unit=unit, subtitle=subtitle, components=components,
                   features=names, axes=_axis_names(names, d), traces=traces,
                   map_note=map_note)
    if points is not None:
        labels = model.labels_ if len(model.labels_) == points.shape[0] else model.predict(points)
        keep = _subsample(points.shape[0])
        xy = _jitter((points[keep] - centre) @ basis, d)
        payload["points"] = [[_round(a), _round(b), int(k)]
                             for (a, b), k in zip(xy, labels[keep])]
        payload["points_note"] = _points_note(points.shape[0], keep.size)
    return payload


# --------------------------------------------------------------------------- tree model
MAIN_WEIGHT = 1e-3  # a node's components listed on the page: those of at least this weight
def tree_payload(model, points=None, feature_names=None):
    """The tree (nodes by level, disc area = points through the node), every node's top
    components, the points' paths in the 2-D projection, and the sampler's trace."""
    from ..plotting import tree_layout

    tree = model.tree_
    d = model.n_features_in_
    names = list(feature_names) if feature_names is not None else [f"x{j + 1}" for j in range(d)]
    x, children = tree_layout(tree.parent)
    levels = {lv: i for i, lv in enumerate(np.unique(tree.level))}
    n = int(tree.size[0])
    K = tree.means.shape[0]
    if points is not None:
        centre, basis = _geometry.principal_plane(points)
    else:
        centre, basis = _geometry.principal_plane(tree.means, np.maximum(tree.weights[0], 1e-12))
    sigma = float(np.sqrt(model.observation_variance_))
    radius = 2.0 * sigma * float(np.linalg.norm(basis, axis=0).max())  # 2 sigma, isotropic
    nodes = []
    for z in range(tree.n_nodes):
        order = np.argsort(-tree.weights[z], kind="stable")[:5]
        top = [dict(component=int(c), weight=_round(tree.weights[z, c])) for c in order
               if tree.weights[z, c] >= MAIN_WEIGHT]
        leaf = not children[z]
        nodes.append(dict(id=int(z), parent=int(tree.parent[z]), level=int(tree.level[z]),
                          depth=levels[int(tree.level[z])], x=float(x[z]),
                          share=float(tree.size[z]) / max(n, 1),
                          size=("root, " if z == 0 else f"level {int(tree.level[z])}, ")
                          + plural(int(tree.size[z]), "point") + (", leaf" if leaf else ""),
                          components=top))
    chains, sweeps = model.trace_.shape
    traces = [
        _trace("regularised complete-data log-likelihood", "sweep", "nats",
               [(f"chain {c + 1}", model.trace_["rcdll"][c]) for c in range(chains)]),
        _trace("components in use", "sweep", "components",
               [(f"chain {c + 1}", model.trace_["n_components"][c]) for c in range(chains)]),
    ]
    leaves = sum(not c for c in children)
    payload = dict(
        kind="tree", unit="node", features=names, axes=_axis_names(names, d),
        subtitle=(f"tree of clusters: {plural(n, 'point')} x {plural(d, 'feature')} -> "
                  f"{plural(len(children[0]), 'top-level branch', 'top-level branches')}, "
                  f"{plural(leaves, 'leaf', 'leaves')}, {plural(K, 'component')}; "
                  f"{plural(chains, 'chain')} x {plural(sweeps, 'sweep')}"),
        nodes=nodes, traces=traces, radius=_round(radius),
        means=[[_round(v) for v in (m - centre) @ basis] for m in tree.means],
        # every component's own 2-sigma ellipse where the covariances are not one shared sigma
        ellipses=None if getattr(model, "covariance_type", "known") == "known" else [
            [_round(v) for v in _geometry.ellipse(model.covariance_matrix(k), basis)]
            for k in range(K)],
        component_means=[[_round(v) for v in m] for m in tree.means],
        map_note="nodes by level; disc area = points through the node",
        dendrogram=_dendrogram(model))
    if points is not None:
        paths = model.paths_ if model.paths_.shape[0] == points.shape[0] else None
        if paths is not None:
            keep = _subsample(points.shape[0])
            xy = _jitter((points[keep] - centre) @ basis, d)
            payload["points"] = [[_round(a), _round(b)] + [int(v) for v in path]
                                 for (a, b), path in zip(xy, paths[keep])]
            payload["points_note"] = _points_note(points.shape[0], keep.size)
    return payload


def _dendrogram(model, shown=40):
    """The top of the full dendrogram (``linkage_``): its merges above the sampled tree's
    components, or its last ``shown - 1`` merges when there are more
    (:func:`mixbayes.plotting.dendrogram_clusters`), laid out as scipy's dendrogram is (clusters evenly spaced in the
    merge order, a merge centred over its two sides). ``links``: x of the left and right
    side, their heights, the merge's height, its size and its top-level branch of the
    sampled tree (-1 when it spans several); ``clusters``: x, size and branch of each
    cluster at the bottom."""
    from ..plotting import dendrogram_clusters, linkage_branches

    Z = model.linkage_
    n = Z.shape[0] + 1
    if n < 2:
        return None
    _, branch_of, mixed = linkage_branches(model)
    rows = dendrogram_clusters(Z, shown) - 1
    first = n - 1 - rows  # rows from here on are drawn
    height = np.concatenate([np.zeros(n), Z[:, 2]])
    x, clusters, links = {}, [], []
    stack = [(2 * n - 2, False)]
    while stack:  # depth first, left before right: clusters get x in that order
        node, done = stack.pop()
        drawn = node >= n + first
        if not drawn:
            x[node] = float(len(clusters))
            size = 1 if node < n else int(Z[node - n, 3])
            clusters.append(dict(x=x[node], size=size, branch=int(branch_of[node])
                                 if not mixed[node] else -1))
            continue
        a, b = (int(v) for v in Z[node - n, :2])
        if not done:
            stack.extend([(node, True), (b, False), (a, False)])
            continue
        x[node] = 0.5 * (x[a] + x[b])
        ya = height[a] if a >= n + first else 0.0
        yb = height[b] if b >= n + first else 0.0
        links.append([_round(x[a]), _round(x[b]), _round(ya), _round(yb),
                      _round(height[node]), int(Z[node - n, 3]),
                      -1 if mixed[node] else int(branch_of[node])])
    return dict(links=links, clusters=clusters, n_points=int(n),
                note=(f"the full dendrogram (linkage_) of {plural(n, 'point')}"
                      + (f": its top {len(clusters)} clusters, sizes below" if first else "")
                      + "; height: stage (points in a component < 1 < components in a "
                        "leaf < 2 < one per level above), colour: top-level branch "
                        "(grey: above the branches)"))


def partition_payload(model, names=None, shown=10):
    """The posterior of the partition, for a model that keeps draws of it (a Gibbs-fitted
    DMM's ``label_samples_``, the HDP's groups over its kept sweeps, the tree's leaves): the
    least-expected-VI partition's clusters (sizes), the block-averaged posterior similarity
    between and within them, the credible ball, the posterior of the number of clusters,
    and the ``shown`` least certain items (mean similarity to the rest of their cluster).
    None for a model without draws."""
    from .. import partition

    draws = _partition_draws(model)
    if draws is None or draws.shape[0] < 2:
        return None
    summary = partition.summarise(draws)
    estimate, ball = summary.estimate, summary.ball
    blocks, certainty = partition.block_similarity(draws, estimate.labels)
    if names is None or len(names) != draws.shape[1]:  # (a sample of the documents: rows)
        names = [str(i) for i in range(draws.shape[1])]
    names = list(names)
    order = np.argsort(certainty, kind="stable")[:shown]
    return dict(
        sizes=np.bincount(estimate.labels).tolist(),
        blocks=[[_round(v, 3) for v in row] for row in blocks],
        least_certain=[dict(id=names[i], cluster=int(estimate.labels[i]),
                            certainty=_round(certainty[i], 3)) for i in order],
        note=(f"from {plural(summary.n_draws, 'draw')}: least expected VI "
              f"{estimate.expected_loss:.3f} bits with {plural(estimate.n_clusters, 'cluster')}"
              f"; {ball.level:.0%} credible ball of radius {ball.radius:.3f} bits, "
              f"{int(ball.upper.max()) + 1} to {int(ball.lower.max()) + 1} clusters; "
              "P(clusters) " + ", ".join(f"{k}: {p:.2f}" for k, p in sorted(
                  summary.n_clusters.items(), key=lambda kv: -kv[1])[:4])))


def _partition_draws(model):
    """The partitions a sampler kept (the model's declared ``_kept_partitions``), or None."""
    kept = getattr(model, "_kept_partitions", None)
    return None if kept is None else kept()


# --------------------------------------------------------------------------- shared pieces
def _hdp_traces(model):
    chains = model.trace_.shape[0]
    return [_trace("log p(y, seating) per sweep", "sweep", "nats",
                   [(f"chain {c + 1}", model.trace_["log_joint"][c]) for c in range(chains)]),
            _trace("clusters in use per sweep", "sweep", "clusters",
                   [(f"chain {c + 1}", model.trace_["n_dishes"][c]) for c in range(chains)])]


def _trace(title, xlabel, ylabel, series, first=1):
    """One convergence panel: named lines over ``first``, ``first + 1``, ... (every k-th point
    of a long one); ``first`` 0 for a trace that starts with the starting value."""
    lines = []
    for name, values in series:
        values = np.asarray(values, dtype=float)
        step = max(1, int(np.ceil(values.size / MAX_TRACE)))
        x = np.arange(first, first + values.size)[::step]
        # five significant digits of the trace's own span, not of its values: an ELBO of
        # -929,100 moving by 57 nats was drawn as a staircase of tens
        finite = values[np.isfinite(values)]
        span = float(np.ptp(finite)) if finite.size else 0.0
        top = float(np.abs(finite).max()) if finite.size else 0.0
        digits = 5 if span <= 0 or top <= 0 else min(15, 5 + max(0, int(np.ceil(
            np.log10(top / span)))))
        lines.append(dict(name=name, x=x.tolist(),
                          y=[_round(v, digits) if np.isfinite(v) else None
                             for v in values[::step]]))
    return dict(title=title, xlabel=xlabel, ylabel=ylabel, series=lines)


def selection_payload(rows, chosen):
    """The selection curve from a selection table (rows of dicts, as
    ``select_n_topics(...).table``, ``select_n_clusters(...).table`` or their CSV files hold):
    the criterion on the left axis, its companion (dispersion, held-out likelihood) on the
    right, the chosen K marked."""
    def column(name):
        values = []
        for row in rows:
            value = row.get(name)
            try:
                value = float(value)
            except (TypeError, ValueError):
                value = float("nan")
            values.append(_round(value) if np.isfinite(value) else None)
        return values

    ks = [int(float(row["k"])) for row in rows]
    if "log_bayes_factor" in rows[0]:
        series = [dict(name="log Bayes factor vs K = 1", y=column("log_bayes_factor"),
                       axis="left"),
                  dict(name="residual dispersion", y=column("dispersion"), axis="right")]
        xlabel, ylabel = "number of topics K", "log Bayes factor (nats)"
    else:
        series = [dict(name="ELBO + log K!", y=column("score"), axis="left")]
        held = column("heldout_log_likelihood")
        if any(v is not None for v in held):
            series.append(dict(name="held-out log likelihood", y=held, axis="right"))
        xlabel, ylabel = "number of clusters K", "ELBO + log K! (nats)"
    return dict(x=ks, series=series, chosen=int(chosen), xlabel=xlabel, ylabel=ylabel)


def _subsample(n):
    if n <= MAX_POINTS:
        return np.arange(n)
    return np.sort(np.random.default_rng(0).choice(n, MAX_POINTS, replace=False))


def _points_note(n, shown):
    return (f"all {plural(n, 'point')}" if shown == n else
            f"{shown:,} of {n:,} points (a random subsample)")


def _jitter(xy, d):
    """One feature: spread the points up and down at random (the height means nothing), so
    that they do not hide one another on a line."""
    if d == 1:
        xy = xy.copy()
        xy[:, 1] = np.random.default_rng(0).uniform(-JITTER, JITTER, xy.shape[0])
    return xy


def _axis_names(names, d):
    if d == 1:
        return [names[0], "(random jitter)"]
    if d == 2:
        return list(names)
    return ["principal component 1", "principal component 2"]


def _round(value, digits=5):
    """A float with ``digits`` significant digits: the page needs no more, and the file
    shrinks by half."""
    value = float(value)
    return float(f"{value:.{digits}g}")
