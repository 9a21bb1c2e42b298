"""``mixbayes cluster --model tree``: the tree model's run."""

from __future__ import annotations

import time

import numpy as np

from ..._validation import plural
from .._inputs import read_labelled_points
from .._outputs import feature_names, named_mean, save_figure, write_json, write_rows
from .._uncertainty import write_uncertainty
from ..report import write_run_report
from ._common import note_points


def run(args, settings, out, verbose, stream, start):
    """Fit, write and print a tree of clusters of points."""
    from ... import metrics, plotting
    from ...persist import save
    from ...tree import HierarchicalMixture

    X, names, notes, known = read_labelled_points(args)
    if args.covariance_type in ("known", "spherical"):  # round components only
        notes += _scale_notes(X, names)
    note_points(notes, stream)
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
    save(model, out.file("model.npz"), vocabulary=names)
    write_run_report(args, out, model, X, feature_names=names)
    children = [tree.children(z) for z in range(tree.n_nodes)]
    leaves = [z for z in range(tree.n_nodes) if children[z].size == 0]
    lone_leaf = None
    if len(leaves) == 1 and model.n_components_ > 1:  # a legitimate state, easy to misread
        lone_leaf = (f"the kept tree is one path: every point in one leaf, the structure "
                     f"only in its {model.n_components_} components (dendrogram.png splits "
                     "them); another --seed or more --n-iter may grow branches")
        notes.append(lone_leaf)
    from ...report.notes import unsettled_tree

    rhat = model.rhat_.get("rcdll", float("nan"))
    unsettled = None
    if round(rhat, 2) > 1.1:  # as printed: not "1.10 > 1.1"
        unsettled = unsettled_tree(rhat, "--n-iter")
        notes.append(unsettled)  # in summary.json too, as every printed note
    settings["burn_in"] = model._burn_in()  # the sweeps left out, not null
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

    print(f"{plural(X.shape[0], 'point')} x {plural(X.shape[1], 'feature')} -> "
          f"{tree.describe()} and {plural(model.n_components_, 'component')} in "
          f"{elapsed:.1f} s", file=stream)
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
    for note in (lone_leaf, unsettled):
        if note:
            print(f"note: {note}", file=stream)
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
    varying = np.flatnonzero(spread > 0)  # a constant column has no spread to compare
    if varying.size < 2 or spread[varying].max() / spread[varying].min() <= ratio:
        return []
    names = feature_names(names, X.shape[1])
    wide = int(varying[spread[varying].argmax()])
    narrow = int(varying[spread[varying].argmin()])
    return [f"the features' spreads differ {spread[wide] / spread[narrow]:.0f}-fold "
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
