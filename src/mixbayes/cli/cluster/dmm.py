"""``mixbayes cluster --model dmm`` (and ``mixbayes demo``): the Dirichlet-multinomial
mixture's run."""

from __future__ import annotations

import time

import numpy as np

from ..._validation import plural
from .._settings import range_text
from .._dask import fit as cluster_fit
from .._inputs import check_k, left_out_text, read_documents
from .._outputs import note_documents, print_groups, save_figure, write_json, write_rows
from .._sharded import probabilities
from .._uncertainty import write_uncertainty
from ..report import write_run_report
from ._common import print_scores, scores


def run(args, settings, out, verbose, stream, start):
    """Fit, write and print a document mixture (or the demo's, on the embedded corpus)."""
    from ... import datasets, plotting
    from ...mixture import DirichletMultinomialMixture, select_n_clusters
    from ...persist import save

    lowered = None  # the note when -k's default is lowered to the documents there are
    if args.command == "demo":
        corpus = datasets.load_classic3()
        estimator = DirichletMultinomialMixture(3, random_state=args.seed, verbose=verbose)
    else:
        corpus, stop_words, left_out = read_documents(args)
        note_documents(settings, stop_words, args, left_out, stream,
                       getattr(corpus, "notes", ()), corpus)
        k, lowered = _clusters_for(args, settings, corpus.n_documents, left_out, stream)
        estimator = DirichletMultinomialMixture(
            k, inference=args.inference, n_init=args.n_init,
            random_state=args.seed, verbose=verbose)
    selection = None
    if getattr(args, "select", None) is not None:
        selection = select_n_clusters(corpus.counts, args.select, estimator, verbose=verbose,
                                      random_state=args.seed)
        model = selection.best_model
    else:
        model = cluster_fit(estimator, corpus.counts, args)
    settings["n_components"] = int(model.n_components)
    elapsed = time.perf_counter() - start

    known = corpus.labels
    write_rows(out.file("assignments.csv"),
               ["id", "cluster", "probability"] + (["label"] if known is not None else []),
               _assignments(model, corpus, known))
    sizes = np.bincount(model.labels_, minlength=model.n_components)
    words = model.top_words(corpus.vocabulary, n=args.top)
    lifts = model.top_words(corpus.vocabulary, n=args.top, by="lift")
    clusters = [dict(cluster=k, size=int(sizes[k]), weight=float(model.weights_[k]),
                     top_words=words[k], top_words_by_lift=lifts[k])
                for k in range(model.n_components)]
    write_json(out.file("clusters.json"), clusters)
    save(model, out.file("model.npz"), vocabulary=corpus)
    write_run_report(args, out, model, corpus, selection=selection)
    summary = dict(settings=settings, n_documents=corpus.n_documents, n_terms=corpus.n_terms,
                   n_components=int(model.n_components), elbo=float(model.elbo_),
                   n_iter=int(model.n_iter_), converged=bool(model.converged_),
                   seconds=round(elapsed, 3))
    scores(summary, known, model.labels_)
    if lowered:
        summary["notes"] = [lowered]
    if selection is not None:
        summary.update(selection=selection.table, best_k=selection.best_k,
                       best_k_heldout=selection.best_k_heldout, n_heldout=selection.n_heldout,
                       notes=selection.notes)
        columns = ("k", "elbo", "log_k_factorial", "score", "heldout_log_likelihood",
                   "heldout_standard_error", "n_occupied", "converged")  # the console's
        write_rows(out.file("selection.csv"), list(columns),
                   ([row[c] for c in columns] for row in selection.table))
        save_figure(selection.plot(), out.file("selection.png"))
    save_figure(plotting.plot_elbo_trace(model), out.file("convergence.png"))
    save_figure(plotting.plot_top_words(model, corpus.vocabulary, n=args.top),
                out.file("top_words.png"))
    write_json(out.file("summary.json"), summary)
    uncertain = _dmm_draws(model, corpus, args) if getattr(args, "uncertainty", None) else None

    gibbs = getattr(model, "inference", "vb") == "gibbs"
    occupied = int(np.count_nonzero(sizes))  # the headline counts clusters that hold documents
    fitted = "" if occupied == model.n_components else f" (of K = {model.n_components} fitted)"
    print(f"{plural(summary['n_documents'], 'document')} x "
          f"{plural(summary['n_terms'], 'term')} -> {plural(occupied, 'cluster')}{fitted} "
          f"in {elapsed:.1f} s ({'log p(y, z)' if gibbs else 'ELBO'} {model.elbo_:.1f}, "
          f"{plural(model.n_iter_, 'sweep' if gibbs else 'iteration')}"
          f"{'' if model.converged_ else ', NOT converged'})", file=stream)
    if selection is not None:
        print(f"choice of K over {range_text(args.select)}:", file=stream)
        print(str(selection), file=stream)
    print_groups([dict(c, sort=c["size"]) for c in clusters], "cluster",
                 lambda c: plural(c["size"], "document", spec=">5"), stream,
                 "clusters.json")
    print_scores(summary, stream)
    if uncertain is not None:
        write_uncertainty(out, uncertain[0], stream, note=uncertain[1])
    print(f"outputs written to {args.out}/", file=stream)
    return 0


def _dmm_draws(model, corpus, args):
    """(draws, note) of a document mixture's partition: the Gibbs chain's, or draws from the
    responsibilities of a variational fit."""
    if getattr(model, "inference", "vb") == "gibbs":
        return model._partition_draws(None, 0, args.seed), "the Gibbs chain's second half"
    if getattr(args, "scheduler", None) or getattr(args, "workers", None):
        raise ValueError("--uncertainty: not available on a cluster yet (the draws would "
                         "gather every document's responsibilities); run it in process.")
    return (model._partition_draws(corpus.counts, 200, args.seed),
            "drawn from the variational responsibilities: a mean-field posterior, narrower "
            "than the exact one")


def _clusters_for(args, settings, n_documents, left_out, stream):
    """``(k, note)``: ``-k``, lowered (with the note) from its default to the documents there are, as the
    Gaussian mixture's is to its points; a ``-k`` the user gave that exceeds them is an error
    that says how many documents had words (a file of numbers has none: numbers are not
    tokens)."""
    k = args.n_components
    if getattr(args, "select", None) is not None or k <= n_documents:
        return k, None
    if "n_components" in args.defaulted:
        note = (f"-k lowered from its default {k} to the number of documents with words "
                f"({n_documents}{left_out_text(left_out)})")
        print(f"note: {note}", file=stream)
        return n_documents, note
    check_k(k, n_documents, left_out)


def _assignments(model, corpus, known):
    """The rows of a document mixture's assignments.csv, the probabilities computed a row
    chunk at a time (one chunk in process, a shard at a time on a cluster)."""
    i = 0
    for proba in probabilities(model, corpus):
        for row in proba:
            k = model.labels_[i]
            yield ([corpus.doc_ids[i], int(k), f"{row[k]:.6f}"]
                   + ([known[i]] if known is not None else []))
            i += 1
