"""``mixbayes cluster`` (and ``mixbayes demo``): one function per model."""

from __future__ import annotations

import time

import numpy as np

from .._validation import plural
from . import range_text
from ._dask import fit as cluster_fit
from ._inputs import read_documents, read_labelled_points, read_sidecar
from ._outputs import (feature_names, mean_text, named_mean, note_documents, print_groups,
                       save_figure, write_json, write_rows)
from ._sharded import probabilities
from ._uncertainty import write_uncertainty
from .report import write_run_report


def run_cluster(args, settings, out, verbose, stream):
    start = time.perf_counter()
    if args.command == "demo":
        return _run_dmm(args, settings, out, verbose, stream, start)
    if args.model == "gmm":
        return _run_gmm(args, settings, out, verbose, stream, start)
    if args.model == "tree":
        return _run_tree(args, settings, out, verbose, stream, start)
    if args.model == "hdp":
        if args.groups is not None:
            return _run_hdp_points(args, settings, out, verbose, stream, start)
        return _run_hdp(args, settings, out, verbose, stream, start)
    return _run_dmm(args, settings, out, verbose, stream, start)


def _scores(summary, known, predicted):
    from .. import metrics

    if known is not None:
        summary["scores"] = metrics.clustering_report(known, predicted)


def _print_scores(summary, stream, what=""):
    if "scores" in summary:
        s = summary["scores"]
        print(f"against known labels{what}: NMI {s['nmi']:.3f}  ARI {s['ari']:.3f}  "
              f"purity {s['purity']:.3f}", file=stream)


# ---------------------------------------------------------------------- dmm
def _run_dmm(args, settings, out, verbose, stream, start):
    from .. import datasets, plotting
    from ..mixture import DirichletMultinomialMixture, select_n_clusters
    from ..persist import save

    if args.command == "demo":
        corpus = datasets.load_classic3()
        estimator = DirichletMultinomialMixture(3, random_state=args.seed, verbose=verbose)
    else:
        corpus, stop_words, left_out = read_documents(args)
        note_documents(settings, stop_words, args, left_out, stream,
                       getattr(corpus, "notes", ()))
        estimator = DirichletMultinomialMixture(
            args.n_components, inference=args.inference, n_init=args.n_init,
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
    save(model, out.file("model.npz"))
    write_run_report(args, out, model, corpus, selection=selection)
    summary = dict(settings=settings, n_documents=corpus.n_documents, n_terms=corpus.n_terms,
                   n_components=int(model.n_components), elbo=float(model.elbo_),
                   n_iter=int(model.n_iter_), converged=bool(model.converged_),
                   seconds=round(elapsed, 3))
    _scores(summary, known, model.labels_)
    if selection is not None:
        summary.update(selection=selection.table, best_k=selection.best_k,
                       best_k_heldout=selection.best_k_heldout, n_heldout=selection.n_heldout,
                       notes=selection.notes)
        write_rows(out.file("selection.csv"),
                   ["k", "elbo", "log_k_factorial", "score", "heldout_log_likelihood",
                    "n_occupied", "converged"],
                   ([row[c] for c in ("k", "elbo", "log_k_factorial", "score",
                                      "heldout_log_likelihood", "n_occupied", "converged")]
                    for row in selection.table))
        save_figure(selection.plot(), out.file("selection.png"))
    save_figure(plotting.plot_elbo_trace(model), out.file("convergence.png"))
    save_figure(plotting.plot_top_words(model, corpus.vocabulary, n=args.top),
                out.file("top_words.png"))
    write_json(out.file("summary.json"), summary)
    uncertain = _dmm_draws(model, corpus, args) if getattr(args, "uncertainty", None) else None

    gibbs = getattr(model, "inference", "vb") == "gibbs"
    print(f"{plural(summary['n_documents'], 'document')} x "
          f"{plural(summary['n_terms'], 'term')} -> {plural(summary['n_components'], 'cluster')} "
          f"in {elapsed:.1f} s ({'log p(y, z)' if gibbs else 'ELBO'} {model.elbo_:.1f}, "
          f"{plural(model.n_iter_, 'sweep' if gibbs else 'iteration')}"
          f"{'' if model.converged_ else ', NOT converged'})", file=stream)
    if selection is not None:
        print(f"choice of K over {range_text(args.select)}:", file=stream)
        print(str(selection), file=stream)
    print_groups([dict(c, sort=c["size"]) for c in clusters], "cluster",
                 lambda c: plural(c["size"], "doc", spec=">5"), stream, "clusters.json")
    _print_scores(summary, stream)
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


# ---------------------------------------------------------------------- gmm
def _note_points(notes, stream):
    for note in notes:
        print(f"note: {note}", file=stream)


def _run_gmm(args, settings, out, verbose, stream, start):
    from .. import plotting
    from ..mixture import VariationalGaussianMixture
    from ..persist import save

    X, names, notes, known = read_labelled_points(args)
    _note_points(notes, stream)
    if args.n_components > X.shape[0] and "n_components" in args.defaulted:
        notes.append(f"-k lowered from its default {args.n_components} to the number of points")
        print(f"note: {notes[-1]}", file=stream)
        args.n_components = settings["n_components"] = X.shape[0]
    if args.n_components > X.shape[0]:
        raise ValueError(f"-k must be at most the number of points ({X.shape[0]}); got "
                         f"{args.n_components}.")
    model = cluster_fit(VariationalGaussianMixture(
        args.n_components, covariance_type=args.covariance_type, reg_covar=args.reg_covar,
        n_init=args.n_init, random_state=args.seed, verbose=verbose), X, args)
    elapsed = time.perf_counter() - start
    proba = model.predict_proba(X)
    write_rows(out.file("assignments.csv"),
               ["id", "cluster", "probability"] + (["label"] if known is not None else []),
               ([i, int(k), f"{proba[i, k]:.6f}"] + ([known[i]] if known is not None else [])
                for i, k in enumerate(model.labels_)))
    sizes = np.bincount(model.labels_, minlength=model.n_components)
    clusters = [dict(cluster=k, size=int(sizes[k]), weight=float(model.weights_[k]),
                     mean=named_mean(model.means_[k], names)) for k in range(model.n_components)]
    write_json(out.file("clusters.json"), clusters)
    save(model, out.file("model.npz"))
    write_run_report(args, out, model, X, feature_names=names)
    summary = dict(settings=settings, n_samples=X.shape[0], n_features=X.shape[1],
                   features=feature_names(names, X.shape[1]), n_effective_components=model.n_effective_components_,
                   elbo=float(model.elbo_), n_iter=int(model.n_iter_),
                   converged=bool(model.converged_), seconds=round(elapsed, 3), notes=notes)
    _scores(summary, known, model.labels_)
    save_figure(plotting.plot_elbo_trace(model), out.file("convergence.png"))
    save_figure(plotting.plot_gaussian_clusters(model, X, feature_names=names),
                out.file("scatter.png"))
    write_json(out.file("summary.json"), summary)
    uncertain = None
    if args.uncertainty:
        uncertain = (model._partition_draws(X, 200, args.seed),
                     "drawn from the variational responsibilities: a mean-field posterior, "
                     "narrower than the exact one")

    print(f"{plural(summary['n_samples'], 'point')} x {plural(summary['n_features'], 'feature')}"
          f" -> {plural(model.n_effective_components_, 'effective component')} of "
          f"{model.n_components} in {elapsed:.1f} s (ELBO {model.elbo_:.1f})", file=stream)
    print_groups([dict(c, sort=c["size"]) for c in clusters if c["size"]], "cluster",
                 lambda c: f"{plural(c['size'], 'point', spec='>5')}, weight {c['weight']:.3f}",
                 stream, "clusters.json", body=mean_text)
    _print_scores(summary, stream)
    if uncertain is not None:
        write_uncertainty(out, uncertain[0], stream, note=uncertain[1])
    print(f"outputs written to {args.out}/", file=stream)
    return 0


# ---------------------------------------------------------------------- hdp
def _hdp_model(args, verbose, kernel):
    from ..hdp import HDPMixture

    return HDPMixture(kernel, n_iter=args.n_iter, burn_in=args.burn_in, n_chains=args.n_chains,
                      word_prior=args.word_prior, random_state=args.seed, verbose=verbose,
                      top_concentration=args.gamma0, group_concentration=args.alpha0,
                      top_concentration_prior=args.gamma0_prior,
                      group_concentration_prior=args.alpha0_prior)


def _hdp_summary(model, settings, **sizes):
    """The summary's common part; a resampled concentration's posterior mean goes into the
    settings beside its prior."""
    for name, mean in (("gamma0", model.top_concentration_),
                       ("alpha0", model.group_concentration_)):
        if settings.get(f"{name}_prior") is not None:
            settings[f"{name}_posterior_mean"] = round(float(mean), 6)
    return dict(settings=settings, **sizes, n_clusters=int(model.n_components_))


def _write_hdp_trace(out, model, nmi_trace):
    """trace.csv and trace.png (clusters, tables, log joint and NMI per sweep) and model.npz."""
    from .. import plotting
    from ..persist import save

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
    save(model, out.file("model.npz"))


def _print_hdp_header(model, what, args, elapsed, stream):
    print(f"{what} -> {plural(model.n_components_, 'cluster')} after "
          f"{plural(args.n_iter, 'sweep')} in {elapsed:.1f} s", file=stream)


def _run_hdp_points(args, settings, out, verbose, stream, start):
    """Points within groups: the Gaussian kernel."""
    from .. import metrics

    X, names, notes, known = read_labelled_points(args)
    _note_points(notes, stream)
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
    _write_hdp_trace(out, model, nmi_trace)
    write_run_report(args, out, model, X, feature_names=names)
    summary = _hdp_summary(model, settings, n_points=int(X.shape[0]),
                           n_features=int(X.shape[1]), features=feature_names(names, X.shape[1]),
                           n_groups=int(model.n_groups_))
    _scores(summary, known, model.labels_)
    summary.update(seconds=round(elapsed, 3), warnings=model.convergence_warnings_,
                   notes=notes)
    write_json(out.file("summary.json"), summary)
    _print_hdp_header(model, f"{plural(X.shape[0], 'point')} in "
                      f"{plural(model.n_groups_, 'group')}", args, elapsed, stream)
    print_groups([dict(c, sort=c["size"]) for c in clusters], "cluster",
                 lambda c: plural(c["size"], "point", spec=">6"), stream, "clusters.json",
                 body=mean_text)
    _print_scores(summary, stream)
    if args.uncertainty:
        write_uncertainty(out, model._samples("observations"), stream,
                          note="the points' clusters over the kept sweeps")
    print(f"outputs written to {args.out}/", file=stream)
    return 0


def _run_hdp(args, settings, out, verbose, stream, start):
    """Documents as groups of tokens: the categorical kernel."""
    from .. import metrics

    corpus, stop_words, left_out = read_documents(args)
    note_documents(settings, stop_words, args, left_out, stream)
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
    _write_hdp_trace(out, model, nmi_trace)
    write_run_report(args, out, model, corpus)
    summary = _hdp_summary(model, settings, n_documents=int(X.shape[0]),
                           n_terms=int(X.shape[1]), n_tokens=int(X.sum()))
    _scores(summary, known, model.group_labels_)
    summary.update(seconds=round(elapsed, 3), warnings=model.convergence_warnings_)
    write_json(out.file("summary.json"), summary)
    _print_hdp_header(model, f"{plural(X.shape[0], 'document')} "
                      f"({plural(summary['n_tokens'], 'token')})", args, elapsed, stream)
    print_groups([dict(c, sort=c["tokens"]) for c in clusters], "cluster",
                 lambda c: f"{plural(c['size'], 'doc', spec='>5')}, "
                           f"{plural(c['tokens'], 'token', spec='>6')}", stream,
                 "clusters.json")
    _print_scores(summary, stream, " (majority cluster per document)")
    if args.uncertainty:
        write_uncertainty(out, model._samples("groups"), stream,
                          note="every document's majority cluster over the kept sweeps")
    print(f"outputs written to {args.out}/", file=stream)
    return 0


# ---------------------------------------------------------------------- tree
def _run_tree(args, settings, out, verbose, stream, start):
    from .. import metrics, plotting
    from ..persist import save
    from ..tree import HierarchicalMixture

    X, names, notes, known = read_labelled_points(args)
    if args.covariance_type in ("known", "spherical"):  # round components only
        notes += _scale_notes(X, names)
    _note_points(notes, stream)
    model = HierarchicalMixture(args.depth, margin_weight=args.margin_weight,
                                covariance_type=args.covariance_type, n_iter=args.n_iter,
                                burn_in=args.burn_in, n_chains=args.n_chains,
                                random_state=args.seed, verbose=verbose).fit(X)
    elapsed = time.perf_counter() - start
    L = model.depth_
    write_rows(out.file("assignments.csv"),
               ["id", "leaf"] + [f"level{level}" for level in range(1, L + 1)]
               + (["label"] if known is not None else []),
               ([i, int(model.labels_[i])] + [int(v) for v in model.paths_[i]]
                + ([known[i]] if known is not None else []) for i in range(X.shape[0])))
    tree = model.tree_
    description = tree.to_dict()
    description["features"] = feature_names(names, X.shape[1])
    for component in description["components"]:
        component["mean"] = named_mean(np.asarray(component["mean"]), names)
    write_json(out.file("tree.json"), description)
    with open(out.file("tree.newick"), "w", encoding="utf-8") as handle:
        handle.write(tree.to_newick() + "\n")
    with open(out.file("dendrogram.newick"), "w", encoding="utf-8") as handle:
        handle.write(model.to_newick(full=True) + "\n")
    write_rows(out.file("linkage.csv"), ["a", "b", "height", "size"],
               ([int(a), int(b), f"{h:.6f}", int(c)] for a, b, h, c in model.linkage_))
    header = ["chain", "sweep", "rcdll", "n_components", "acceptance"] + [
        f"nodes_level{level}" for level in range(1, L + 1)]
    write_rows(out.file("trace.csv"), header, (
        [chain, sweep + 1, f"{entry['rcdll']:.6f}", int(entry["n_components"]),
         f"{entry['acceptance']:.4f}"] + [int(v) for v in entry["nodes"]]
        for chain, row in enumerate(model.trace_) for sweep, entry in enumerate(row)))
    save(model, out.file("model.npz"))
    write_run_report(args, out, model, X, feature_names=names)
    children = [tree.children(z) for z in range(tree.n_nodes)]
    leaves = [z for z in range(tree.n_nodes) if children[z].size == 0]
    summary = dict(settings=settings, n_samples=X.shape[0], n_features=X.shape[1],
                   features=feature_names(names, X.shape[1]), n_nodes=int(tree.n_nodes),
                   n_top_branches=int(children[0].size), n_leaves=len(leaves),
                   n_components=int(model.n_components_), best_rcdll=model.best_rcdll_,
                   depth=int(model.depth_), log_evidence=model.log_evidence_,
                   rhat=model.rhat_, ess=model.ess_, seconds=round(elapsed, 3), notes=notes)
    if known is not None:
        summary["scores"] = metrics.clustering_report(known, model.labels_)
        summary["scores_top_level"] = metrics.clustering_report(known, model.cut(1))
        summary["dendrogram_purity"] = float(metrics.dendrogram_purity(model.linkage_, known))
        summary["dendrogram_purity_sampled_tree"] = float(
            metrics.dendrogram_purity(model.paths_, known))
    save_figure(plotting.plot_tree(model, X, feature_names=names), out.file("tree.png"))
    save_figure(plotting.plot_tree_trace(model), out.file("trace.png"))
    save_figure(plotting.plot_dendrogram(model), out.file("dendrogram.png"))
    write_json(out.file("summary.json"), summary)

    print(f"{plural(X.shape[0], 'point')} x {plural(X.shape[1], 'feature')} -> a tree of "
          f"{plural(int(children[0].size), 'top-level branch', 'top-level branches')}, "
          f"{plural(len(leaves), 'leaf', 'leaves')} and "
          f"{plural(model.n_components_, 'component')} in {elapsed:.1f} s", file=stream)
    _print_tree(tree, children, stream)
    if hasattr(model, "depth_scores_"):
        summary["depth_scores"] = [
            dict(depth=int(r["depth"]), log_evidence=float(r["log_evidence"]),
                 best_rcdll=float(r["best_rcdll"]), n_leaves=int(r["n_leaves"]))
            for r in model.depth_scores_]
        write_json(out.file("summary.json"), summary)
        scores = ", ".join(f"{int(r['depth'])}: {r['log_evidence']:.1f}"
                           for r in model.depth_scores_)
        print(f"depth auto: {model.depth_} has the highest evidence of its dendrogram "
              f"(log p(X | T) by depth: {scores})", file=stream)
    rhat = model.rhat_.get("rcdll", float("nan"))
    if round(rhat, 2) > 1.1:  # as printed: not "1.10 > 1.1"
        print(f"note: the chain has not settled (split R-hat of the RCDLL {rhat:.2f} > 1.1); "
              "raise --n-iter", file=stream)
    if known is not None:
        s = summary["scores"]
        print(f"against known labels: leaves NMI {s['nmi']:.3f}  ARI {s['ari']:.3f}; top "
              f"level NMI {summary['scores_top_level']['nmi']:.3f}; dendrogram purity "
              f"{summary['dendrogram_purity']:.3f} (full dendrogram; sampled tree "
              f"{summary['dendrogram_purity_sampled_tree']:.3f})", file=stream)
    if args.uncertainty:
        if model.level_samples_.shape[0] < 2:
            raise ValueError("--uncertainty: fewer than 2 sweeps after burn-in to summarise; "
                             "raise --n-iter.")
        write_uncertainty(out, model.level_samples_[:, -1], stream,
                          note="the leaves over the kept sweeps")
    print(f"outputs written to {args.out}/", file=stream)
    return 0


def _scale_notes(X, names, ratio=10.0):
    """A note when the features' spreads differ by more than ``ratio``: the tree's components
    are round (one variance for every feature), so the widest feature decides the clusters."""
    spread = X.std(axis=0)
    if X.shape[1] < 2 or spread.min() <= 0 or spread.max() / spread.min() <= ratio:
        return []
    names = feature_names(names, X.shape[1])
    wide, narrow = int(spread.argmax()), int(spread.argmin())
    return [f"the features' spreads differ {spread.max() / spread.min():.0f}-fold "
            f"({names[wide]} {spread[wide]:.3g}, {names[narrow]} {spread[narrow]:.3g}); the "
            "tree's components are round, so the widest feature decides the clusters: "
            "standardise the columns first unless their units are comparable, or use "
            "--covariance-type diag or full"]


def _print_tree(tree, children, stream, shown=20):
    """The tree as indented lines, the largest branch first, at most ``shown`` nodes."""
    lines = []

    def walk(node, indent):
        for child in sorted(children[node], key=lambda c: -tree.size[c]):
            size = plural(int(tree.size[child]), "point", spec=">5")
            leaf = "" if children[child].size else "  leaf"
            lines.append(f"  {'  ' * indent}node {child:>3} ({size}){leaf}")
            walk(child, indent + 1)

    walk(0, 0)
    for line in lines[:shown]:
        print(line, file=stream)
    if len(lines) > shown:
        print(f"  ... and {plural(len(lines) - shown, 'smaller node')} not shown (all are in "
              "tree.json)", file=stream)
