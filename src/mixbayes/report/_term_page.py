"""The term page's data: the word distributions of a Dirichlet-multinomial mixture, a topic model
or a categorical HDP, as plain JSON-ready data (the map, the term panel, sizes, the trace and
example documents).

The relevance of Sievert & Shirley (2014) ranks a topic's terms by
``lambda * log p(w|k) + (1 - lambda) * log(p(w|k) / p(w))``. The page re-ranks on every move of
its slider from the candidates shipped here: every term in a component's top
:data:`CANDIDATES` at any of :data:`LAMBDAS`, with p(w|k) and p(w), which keeps the file small
(K = 50 over 10,000 terms: about 100 kB) and the ranking that of the full vocabulary.
"""

from __future__ import annotations

import numpy as np

from .._validation import plural
from ..topics import main_topics
from . import _geometry
from ._extract import _hdp_traces, _round, _trace

CANDIDATES = 30  # terms per component and lambda shipped for the slider to re-rank
SHOWN_TERMS = 20  # terms the panel lists
LAMBDAS = np.linspace(0.0, 1.0, 11)
EXAMPLES = 5  # example documents per cluster or topic
EXAMPLE_WORDS = 12  # words shown of every example document


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
                  f"{plural(P.shape[1], 'term')}, {kept.size} of "
                  f"{plural(model.n_components, 'cluster')} holding documents; {fit}"
                  + ("" if model.converged_ else " (NOT converged)")),
        scores=scores, score_name="probability")


def _topic_view(model, counts, rows=None):
    """What a topic model shows: every topic, its usage, and (given the documents, or the
    sample of them at ``rows``) the documents of highest weight on it."""
    P = model.topics_
    main = main_topics(model.doc_topic_)  # -1: an empty document, no main topic
    main = np.bincount(main[main >= 0], minlength=P.shape[0])
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
    from ..hdp.model import fitted_word_prior

    P = model.components_
    K, V = P.shape
    tokens = np.bincount(model.labels_, minlength=K)
    documents = np.bincount(model.group_labels_, minlength=K)
    a = fitted_word_prior(model)  # as top_words: only terms the cluster's tokens use
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
