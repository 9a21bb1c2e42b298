"""``mixbayes topics``: its options, and the fit (or the choice of K and the fit) of a topic
model."""

from __future__ import annotations

import time

import numpy as np

from .._validation import plural
from ._dask import add_options as add_dask_options, fit, select_n_topics
from ._fitting import run_fitting
from ._parser import range_option, positive_int, add_common, add_text_options
from ._inputs import check_k, read_documents
from ..topics import main_topics
from ._outputs import (note_documents, print_groups, save_figure, topic_cell, write_json,
                       write_rows)
from .report import write_run_report


def add_parser(sub):
    """The command's options, on the subcommand parser it adds to ``sub``."""
    topics = sub.add_parser("topics", allow_abbrev=False,
                            help="fit a topic model (every document mixes topics)",
                            description="Fit a topic model to the documents of INPUT by joint "
                            "MAP, with K given or chosen by the Laplace marginal likelihood.")
    topics.add_argument("input", help="documents: .mtx[.gz] (+vocab.txt), UCI docword.*, .txt, "
                        ".csv with a text column, or a folder of .txt files")
    size = topics.add_mutually_exclusive_group(required=True)
    size.add_argument("-k", "--n-components", type=positive_int, default=None, metavar="K",
                      help="number of topics")
    size.add_argument("--select", type=range_option, default=None, metavar="LOW:HIGH[:STEP]",
                      help="choose K in this range (LOW >= 2) by the Laplace marginal likelihood")
    topics.add_argument("--scan-all", action="store_true",
                        help="fit every K of --select (default: stop after two decreases)")
    topics.add_argument("--labels", default=None, metavar="FILE",
                        help="one known label per document, to score each document's main topic")
    topics.add_argument("--label-column", default=None, metavar="NAME",
                        help="a documents CSV's column holding known labels (its header's name, "
                        "or its number from 1), as --labels (default: none)")
    topics.add_argument("--coherence", choices=("umass", "npmi", "c_v"), default="umass",
                        help="topic coherence in topics.json and selection.csv, from document "
                        "co-occurrence of each topic's --top words (default: %(default)s)")
    add_text_options(topics)
    add_dask_options(topics)
    add_common(topics, "mixbayes-topics")
    return topics


def run(parsed, stream):
    return run_fitting(parsed, stream, run_topics)


def run_topics(args, settings, out, verbose, stream):
    """Write topics.json, doc_topics.csv, model.npz, summary.json and, with --select,
    selection.csv and selection.png."""
    from .. import metrics
    from ..persist import save
    from ..topics import TopicModel
    from ..topics.selection import SELECTION_TOL

    start = time.perf_counter()
    corpus, stop_words, left_out = read_documents(args)
    note_documents(settings, stop_words, args, left_out, stream, getattr(corpus, "notes", ()),
                   corpus)
    if args.select is None:
        check_k(args.n_components, corpus.n_documents, left_out)
    # --select fits at select_n_topics' own tolerance (closer to the mode than a fit for
    # prediction needs: the evidence reads the curvature there), -k at TopicModel's default
    tol = {} if args.select is None else {"tol": SELECTION_TOL}
    estimator = TopicModel(args.n_components or 2, random_state=args.seed, verbose=verbose,
                           **tol)
    selection = None
    if args.select is not None:
        if args.select.start < 2:
            raise ValueError("--select must start at 2 or more topics (the Bayes factor is "
                             "against one topic).")
        selection = select_n_topics(corpus.counts, args.select, estimator, args,
                                    scan_all=args.scan_all, verbose=verbose,
                                    coherence=args.coherence)
        model = selection.best_model
        columns = ["k", "log_bayes_factor", "dispersion", "df", "p_value", "log_posterior",
                   "coherence", "n_iter", "seconds"]
        write_rows(out.file("selection.csv"), columns,
                   ([f"{row.get(c, np.nan):.6g}" for c in columns] for row in selection.table))
        save_figure(selection.plot(), out.file("selection.png"))
    else:
        model = fit(estimator, corpus.counts, args)
    settings["n_components"] = int(model.n_components)
    elapsed = time.perf_counter() - start
    by_probability = model.top_words(corpus.vocabulary, args.top)
    by_lift = model.top_words(corpus.vocabulary, args.top, by="lift")
    coherence = metrics.coherence(model, corpus.counts, args.coherence, n=args.top).to_dict()
    topics = [dict(topic=int(k), usage=float(model.usage_[k]), top_words=by_probability[k],
                   top_words_by_lift=by_lift[k], coherence=coherence["per_topic"][k])
              for k in np.argsort(-model.usage_, kind="stable")]
    main_topic = main_topics(model.doc_topic_)  # -1 for empty documents
    summary = dict(settings=settings, n_documents=corpus.n_documents, n_terms=corpus.n_terms,
                   n_topics=int(model.n_components), log_posterior=float(model.log_posterior_),
                   n_iter=_iterations(model, selection), seconds=round(elapsed, 3),
                   coherence=dict(measure=coherence["measure"], mean=coherence["mean"],
                                  top_words=args.top))
    if corpus.labels is not None:
        summary["scores"] = metrics.clustering_report(corpus.labels, main_topic)
    if selection is not None:
        summary.update(selection=selection.table, best_k=selection.best_k,
                       dispersion_k=selection.dispersion_k,
                       notes=[_flags(note) for note in selection.notes])
    same = _same_topics(model.topics_)
    if same:
        summary["notes"] = summary.get("notes", []) + [same]
    write_json(out.file("topics.json"), dict(summary, topics=topics))
    write_json(out.file("summary.json"), summary)
    known = corpus.labels
    write_rows(out.file("doc_topics.csv"),
               ["id"] + [f"topic{k}" for k in range(model.n_components)]
               + ["main_topic"] + (["label"] if known is not None else []),
               ([doc] + [f"{v:.6g}" for v in row] + [topic_cell(main_topic[i])]
                + ([known[i]] if known is not None else [])
                for i, (doc, row) in enumerate(zip(corpus.doc_ids, model.doc_topic_))))
    save(model, out.file("model.npz"), vocabulary=corpus)
    write_run_report(args, out, model, corpus, selection=selection)

    print(f"{plural(corpus.n_documents, 'document')} x {plural(corpus.n_terms, 'term')} -> "
          f"{plural(model.n_components, 'topic')} in {elapsed:.1f} s", file=stream)
    if selection is not None:
        print(_flags(str(selection)), file=stream)
    if same:
        print(f"note: {same}", file=stream)
    print_groups([dict(t, sort=t["usage"]) for t in topics], "topic",
                 lambda t: f"usage {t['usage']:.3f}", stream, "topics.json")
    if coherence["mean"] is not None:
        print(f"coherence ({coherence['measure']}, top {plural(args.top, 'word')}, document "
              f"co-occurrence): mean {coherence['mean']:.3f}", file=stream)
    if "scores" in summary:
        s = summary["scores"]
        print(f"against known labels (each document's main topic): NMI {s['nmi']:.3f}  "
              f"ARI {s['ari']:.3f}  purity {s['purity']:.3f}", file=stream)
    print(f"outputs written to {args.out}/", file=stream)
    return 0


def _flags(text):
    """The selection's notes in the command's words."""
    return text.replace("scan_all=True", "--scan-all")


def _iterations(model, selection):
    """The fit's iterations; with --select, the chosen K's row of the table, which counts a
    coarse fit and its continuation (the model's ``n_iter_`` is the continuation's alone)."""
    if selection is None:
        return int(model.n_iter_)
    return int(next(row["n_iter"] for row in selection.table
                    if row["k"] == model.n_components))


def _same_topics(topics, tolerance=1e-3):
    """A note when topics are one word distribution (L1 distance below ``tolerance``): the
    documents hold fewer distinct topics than K (every document the same text gave K equal
    topics and no word of it)."""
    K = topics.shape[0]
    distance = np.abs(topics[:, None, :] - topics[None, :, :]).sum(axis=2)
    groups, seen = [], set()
    for k in range(K):
        if k in seen:
            continue
        twins = [j for j in range(k + 1, K) if distance[k, j] < tolerance]
        if twins:
            groups.append([k] + twins)
            seen.update(twins)
    if not groups:
        return None
    listed = "; ".join(" and ".join(str(k) for k in group) if len(group) == 2 else
                       ", ".join(str(k) for k in group[:-1]) + f" and {group[-1]}"
                       for group in groups)
    distinct = K - sum(len(group) - 1 for group in groups)
    return (f"topics {listed} are one word distribution: the documents hold about "
            f"{plural(distinct, 'distinct topic')}, fewer than K = {K} (try a smaller -k)")
