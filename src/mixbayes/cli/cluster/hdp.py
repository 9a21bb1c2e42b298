"""``mixbayes cluster --model hdp``: the hierarchical Dirichlet process's run, of documents or
of points within groups."""

from __future__ import annotations

import time

import numpy as np

from ..._validation import plural
from .._inputs import read_documents, read_labelled_points, read_sidecar
from .._outputs import (feature_names, mean_text, named_mean, note_documents, print_groups,
                       save_figure, write_json, write_rows)
from .._uncertainty import write_uncertainty
from ..report import write_run_report
from ._common import note_points, print_scores, scores


def run(args, settings, out, verbose, stream, start):
    """Fit, write and print an HDP: of documents, or of points within the groups of --groups."""
    if args.groups is not None:
        return _run_hdp_points(args, settings, out, verbose, stream, start)
    return _run_documents(args, settings, out, verbose, stream, start)


def _hdp_model(args, verbose, kernel):
    from ...hdp import HDPMixture

    return HDPMixture(kernel, n_iter=args.n_iter, burn_in=args.burn_in, n_chains=args.n_chains,
                      word_prior=args.word_prior, random_state=args.seed, verbose=verbose,
                      top_concentration=args.gamma0, group_concentration=args.alpha0,
                      top_concentration_prior=args.gamma0_prior,
                      group_concentration_prior=args.alpha0_prior)


def _hdp_summary(model, settings, **sizes):
    """The summary's common part; the burn-in, concentrations, priors and word prior the fit
    used stand in the settings where they were left to their defaults (not null or "auto": the
    values the documents' length chose), and a resampled concentration's posterior mean beside
    its prior."""
    from ...hdp.model import fitted_defaults

    settings["burn_in"] = model._burn_in()
    used = fitted_defaults(model)
    if model.kernel == "categorical":
        settings["word_prior"] = used["word_prior"]
    else:  # points have no word prior
        settings.pop("word_prior", None)
    for name, param in (("gamma0", "top_concentration"), ("alpha0", "group_concentration")):
        if name in settings:
            settings[name] = used[param]
        if name + "_prior" in settings:
            prior = used[param + "_prior"]
            settings[name + "_prior"] = None if prior is None else list(prior)
    for name, mean in (("gamma0", model.top_concentration_),
                       ("alpha0", model.group_concentration_)):
        if settings.get(f"{name}_prior") is not None:
            settings[f"{name}_posterior_mean"] = round(float(mean), 6)
    return dict(settings=settings, **sizes, n_clusters=int(model.n_components_))


def _write_hdp_trace(out, model, nmi_trace, vocabulary):
    """trace.csv and trace.png (clusters, tables, log joint and NMI per sweep) and model.npz
    (with the ``vocabulary``: the corpus's, or the points' column names)."""
    from ... import plotting
    from ...persist import save

    header = ["chain", "sweep", "n_clusters", "n_tables", "log_joint", "gamma0", "alpha0"]
    rows = []
    for chain, row in enumerate(model.trace_):
        for sweep, entry in enumerate(row):
            rows.append([chain, sweep + 1, entry["n_dishes"], entry["n_tables"],
                         f"{entry['log_joint']:.6f}", f"{entry['top_concentration']:.6g}",
                         f"{entry['group_concentration']:.6g}"]
                        + ([f"{nmi_trace[chain][sweep]:.6f}"] if nmi_trace else []))
    write_rows(out.file("trace.csv"), header + (["nmi"] if nmi_trace else []), rows)
    save_figure(plotting.plot_hdp_trace(model, np.asarray(nmi_trace) if nmi_trace else None),
                out.file("trace.png"))
    save(model, out.file("model.npz"), vocabulary=vocabulary)


def _print_hdp_header(model, what, args, elapsed, stream):
    print(f"{what} -> {plural(model.n_components_, 'cluster')} after "
          f"{plural(args.n_iter, 'sweep')} in {elapsed:.1f} s", file=stream)


def _run_hdp_points(args, settings, out, verbose, stream, start):
    """Points within groups: the Gaussian kernel."""
    from ... import metrics

    X, names, notes, known = read_labelled_points(args)
    note_points(notes, stream)
    groups = read_sidecar(args.groups, "groups", X.shape[0], "points")
    nmi_trace = []

    def point_nmi(chain, sweep, info):
        if chain == len(nmi_trace):
            nmi_trace.append([])
        nmi_trace[chain].append(metrics.nmi(known, info["labels"]))

    model = _hdp_model(args, verbose, "gaussian")
    model.fit(X, groups=groups, callback=point_nmi if known is not None else None)
    elapsed = time.perf_counter() - start
    write_rows(out.file("assignments.csv"),
               ["id", "group", "cluster"] + (["label"] if known is not None else []),
               ([i, groups[i], int(k)] + ([known[i]] if known is not None else [])
                for i, k in enumerate(model.labels_)))
    sizes = np.bincount(model.labels_, minlength=model.n_components_)
    clusters = [dict(cluster=k, size=int(sizes[k]),
                     mean=named_mean(model.components_[k], names)) for k in range(model.n_components_)]
    write_json(out.file("clusters.json"), clusters)
    _write_hdp_trace(out, model, nmi_trace, names)
    write_run_report(args, out, model, X, feature_names=names)
    summary = _hdp_summary(model, settings, n_points=int(X.shape[0]),
                           n_features=int(X.shape[1]), features=feature_names(names, X.shape[1]),
                           n_groups=int(model.n_groups_))
    scores(summary, known, model.labels_)
    summary.update(seconds=round(elapsed, 3), warnings=model.convergence_warnings_,
                   notes=notes)
    write_json(out.file("summary.json"), summary)
    _print_hdp_header(model, f"{plural(X.shape[0], 'point')} in "
                      f"{plural(model.n_groups_, 'group')}", args, elapsed, stream)
    print_groups([dict(c, sort=c["size"]) for c in clusters], "cluster",
                 lambda c: plural(c["size"], "point", spec=">6"), stream, "clusters.json",
                 body=mean_text)
    print_scores(summary, stream)
    if args.uncertainty:
        write_uncertainty(out, model._samples("observations"), stream,
                          note="the points' clusters over the kept sweeps")
    print(f"outputs written to {args.out}/", file=stream)
    return 0


def _run_documents(args, settings, out, verbose, stream, start):
    """Documents as groups of tokens: the categorical kernel."""
    from ... import metrics

    corpus, stop_words, left_out = read_documents(args)
    note_documents(settings, stop_words, args, left_out, stream,
                   getattr(corpus, "notes", ()), corpus)
    X = corpus.counts
    known = corpus.labels
    group_of = np.repeat(np.arange(X.shape[0]), np.asarray(X.sum(axis=1)).ravel())
    nmi_trace = []

    def majority_nmi(chain, sweep, info):
        names, index = np.unique(info["labels"], return_inverse=True)
        counts = np.zeros((X.shape[0], names.size), dtype=np.int64)
        np.add.at(counts, (group_of, index), 1)
        if chain == len(nmi_trace):
            nmi_trace.append([])
        nmi_trace[chain].append(metrics.nmi(known, counts.argmax(axis=1), "geometric"))

    model = _hdp_model(args, verbose, "categorical")
    model.fit(X, callback=majority_nmi if known is not None else None)
    elapsed = time.perf_counter() - start
    shares = np.zeros(X.shape[0])
    np.add.at(shares, group_of, model.labels_ == model.group_labels_[group_of])
    shares /= np.bincount(group_of, minlength=X.shape[0])
    write_rows(out.file("assignments.csv"),
               ["id", "cluster", "token_share"] + (["label"] if known is not None else []),
               ([doc, int(model.group_labels_[row]), f"{shares[row]:.4f}"]
                + ([known[row]] if known is not None else [])
                for row, doc in enumerate(corpus.doc_ids)))
    words = model.top_words(corpus.vocabulary, n=args.top)
    lifts = model.top_words(corpus.vocabulary, n=args.top, by="lift")
    tokens = np.bincount(model.labels_, minlength=model.n_components_)
    documents = np.bincount(model.group_labels_, minlength=model.n_components_)
    clusters = [dict(cluster=k, size=int(documents[k]), tokens=int(tokens[k]),
                     top_words=words[k], top_words_by_lift=lifts[k])
                for k in range(model.n_components_)]
    write_json(out.file("clusters.json"), clusters)
    _write_hdp_trace(out, model, nmi_trace, corpus)
    write_run_report(args, out, model, corpus)
    summary = _hdp_summary(model, settings, n_documents=int(X.shape[0]),
                           n_terms=int(X.shape[1]), n_tokens=int(X.sum()))
    scores(summary, known, model.group_labels_)
    summary.update(seconds=round(elapsed, 3), warnings=model.convergence_warnings_)
    write_json(out.file("summary.json"), summary)
    _print_hdp_header(model, f"{plural(X.shape[0], 'document')} "
                      f"({plural(summary['n_tokens'], 'token')})", args, elapsed, stream)
    print_groups([dict(c, sort=c["tokens"]) for c in clusters], "cluster",
                 lambda c: f"{plural(c['size'], 'document', spec='>5')}, "
                           f"{plural(c['tokens'], 'token', spec='>6')}", stream,
                 "clusters.json")
    print_scores(summary, stream, " (majority cluster per document)")
    if args.uncertainty:
        write_uncertainty(out, model._samples("groups"), stream,
                          note="every document's majority cluster over the kept sweeps")
    print(f"outputs written to {args.out}/", file=stream)
    return 0
