"""The ``mixbayes`` command.

::

    mixbayes demo [--out DIR]
    mixbayes cluster INPUT --model dmm [-k K | --select 2:30] [--labels FILE] [--out DIR] [--seed N]
    mixbayes cluster INPUT --model hdp [--n-iter 200] [--gamma0 1] [--alpha0 1] [--labels FILE]
                     [--gamma0-prior SHAPE RATE] [--alpha0-prior SHAPE RATE]
    mixbayes cluster POINTS --model hdp --groups FILE [...]

Every run writes ``assignments.csv``, ``clusters.json``, ``model.npz``, ``summary.json`` and
PNG figures to ``--out`` and prints a short summary. Errors are one line on stderr and exit
status 2 (usage) or 1 (anything else), never a traceback.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
import warnings

import numpy as np

_MODELS = ("dmm", "gmm", "hdp")


def _parse_range(text):
    """``LOW:HIGH`` or ``LOW:HIGH:STEP`` (both ends included when the step reaches HIGH)."""
    try:
        parts = [int(v) for v in text.split(":")]
        if len(parts) not in (2, 3):
            raise ValueError
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--select must look like 2:30 or 10:100:10; got {text!r}") from None
    lo, hi, step = parts + [1] * (3 - len(parts))
    if lo < 1 or hi < lo or step < 1:
        raise argparse.ArgumentTypeError(
            f"--select must satisfy 1 <= low <= high and step >= 1; got {text!r}")
    return range(lo, hi + 1, step)


def _range_text(candidates):
    """The searched range as ``LOW:HIGH`` or ``LOW:HIGH:STEP``, HIGH the last K searched."""
    text = f"{candidates[0]}:{candidates[-1]}"
    return text if candidates.step == 1 else f"{text}:{candidates.step}"


def build_parser():
    parser = argparse.ArgumentParser(
        prog="mixbayes", description="Bayesian mixture-model clustering of documents."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="cluster the embedded classic3 corpus (3,891 abstracts)")
    demo.add_argument("--out", default="mixbayes-demo", help="output folder (default: %(default)s)")
    demo.add_argument("--seed", type=int, default=0)

    cluster = sub.add_parser("cluster", help="cluster the documents of INPUT")
    cluster.add_argument("input", help="dmm, hdp: .mtx[.gz] (+vocab.txt), UCI docword.*, .txt, "
                         ".csv or a folder; gmm, hdp --groups: a numeric .csv or .npy of points")
    cluster.add_argument("--model", choices=_MODELS, default="dmm")
    size = cluster.add_mutually_exclusive_group()
    size.add_argument("-k", "--n-components", type=int, default=None, help="number of clusters")
    size.add_argument("--select", type=_parse_range, default=None, metavar="LOW:HIGH[:STEP]",
                      help="choose K in this range by ELBO + log K!")
    cluster.add_argument("--labels", default=None, help="file with one known label per document")
    cluster.add_argument("--inference", choices=("vb", "gibbs"), default="vb")
    cluster.add_argument("--covariance-type", choices=("full", "diag", "spherical"),
                         default="full", help="gmm only")
    cluster.add_argument("--n-init", type=int, default=5)
    cluster.add_argument("--n-iter", type=int, default=200, help="hdp: sweeps (default 200)")
    cluster.add_argument("--gamma0", type=float, default=1.0,
                         help="hdp: top-level concentration (default 1)")
    cluster.add_argument("--alpha0", type=float, default=1.0,
                         help="hdp: group-level concentration (default 1)")
    for name in ("gamma0", "alpha0"):
        cluster.add_argument(f"--{name}-prior", type=float, nargs=2, default=None,
                             metavar=("SHAPE", "RATE"),
                             help=f"hdp: a Gamma prior on {name}, which is then resampled every "
                             f"sweep starting from --{name} (e.g. 1 1)")
    cluster.add_argument("--groups", default=None,
                         help="hdp: file with the group of every point (one per line); the "
                         "input is then points, clustered by the Gaussian kernel")
    cluster.add_argument("--text-column", default="text", help="CSV column holding the text")
    cluster.add_argument("--stop-words", default=None, help="e.g. 'english' (text inputs)")
    cluster.add_argument("--out", default="mixbayes-out", help="output folder (default: %(default)s)")
    cluster.add_argument("--seed", type=int, default=0)
    topics = sub.add_parser("topics", help="fit a topic model to the documents of INPUT")
    topics.add_argument("input", help=".mtx[.gz] (+vocab.txt), UCI docword.*, .txt, .csv or a folder")
    size = topics.add_mutually_exclusive_group(required=True)
    size.add_argument("-k", "--n-components", type=int, default=None, help="number of topics")
    size.add_argument("--select", type=_parse_range, default=None, metavar="LOW:HIGH[:STEP]",
                      help="choose K in this range by the Laplace marginal likelihood")
    topics.add_argument("--scan-all", action="store_true",
                        help="fit every K of --select (default: stop after two decreases)")
    topics.add_argument("--text-column", default="text", help="CSV column holding the text")
    topics.add_argument("--stop-words", default=None, help="e.g. 'english' (text inputs)")
    topics.add_argument("--out", default="mixbayes-topics", help="output folder (default: %(default)s)")
    for p in (demo, cluster, topics):
        p.add_argument("--top", type=int, default=10, help="top words shown per cluster")
        p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    return parser


def _write_outputs(out, corpus, model, settings, elapsed, selection=None, top=10):
    """Write every output file and return the summary dict."""
    import matplotlib

    matplotlib.use("Agg")
    from . import metrics, plotting
    from .persist import save

    os.makedirs(out, exist_ok=True)
    proba = model.predict_proba(corpus.counts)
    with open(os.path.join(out, "assignments.csv"), "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["doc_id", "cluster", "probability"] + (["label"] if corpus.labels is not None else []))
        for i, doc in enumerate(corpus.doc_ids):
            row = [doc, int(model.labels_[i]), f"{proba[i, model.labels_[i]]:.6f}"]
            writer.writerow(row + ([corpus.labels[i]] if corpus.labels is not None else []))
    sizes = np.bincount(model.labels_, minlength=model.n_components)
    words = model.top_words(corpus.vocabulary, n=top)
    lifts = model.top_words(corpus.vocabulary, n=top, by="lift")
    clusters = [
        dict(cluster=k, size=int(sizes[k]), weight=float(model.weights_[k]),
             top_words=words[k], top_words_by_lift=lifts[k])
        for k in range(model.n_components)
    ]
    with open(os.path.join(out, "clusters.json"), "w", encoding="utf-8") as handle:
        json.dump(clusters, handle, indent=2)
    save(model, os.path.join(out, "model.npz"))
    summary = dict(
        settings=settings, n_documents=corpus.n_documents, n_terms=corpus.n_terms,
        n_components=int(model.n_components), elbo=float(model.elbo_),
        n_iter=int(model.n_iter_), converged=bool(model.converged_),
        seconds=round(elapsed, 3),
    )
    if corpus.labels is not None:
        summary["scores"] = metrics.clustering_report(corpus.labels, model.labels_)
    if selection is not None:
        summary["selection"] = selection.table
        summary["best_k"] = selection.best_k
        selection.plot().savefig(os.path.join(out, "selection.png"), dpi=110)
    plotting.plot_elbo_trace(model).savefig(os.path.join(out, "convergence.png"), dpi=110)
    plotting.plot_top_words(model, corpus.vocabulary, n=top).savefig(
        os.path.join(out, "top_words.png"), dpi=110
    )
    with open(os.path.join(out, "summary.json"), "w", encoding="utf-8") as handle:
        json.dump(summary, handle, indent=2, default=str)
    import matplotlib.pyplot as plt

    plt.close("all")
    return summary, clusters


def _edge_note(best, low, high):
    """A warning line when the chosen K sits at an end of the range searched (the best K may
    lie beyond it), else None."""
    if low == high:
        return None
    if best == high:
        return (f"note: K = {best} is the top of the range searched ({low}:{high}); a larger K "
                "may score higher - widen the range")
    if best == low and low > 1:
        return (f"note: K = {best} is the bottom of the range searched ({low}:{high}); a smaller "
                "K may score higher - widen the range")
    return None


def _print_summary(summary, clusters, out, stream):
    print(
        f"{summary['n_documents']} documents x {summary['n_terms']} terms -> "
        f"{summary['n_components']} clusters in {summary['seconds']:.1f} s "
        f"(ELBO {summary['elbo']:.1f}, {summary['n_iter']} iterations"
        f"{'' if summary['converged'] else ', NOT converged'})",
        file=stream,
    )
    if "best_k" in summary:
        print(f"chosen K = {summary['best_k']} by ELBO + log K!", file=stream)
        searched = [row["k"] for row in summary["selection"]]
        note = _edge_note(summary["best_k"], searched[0], searched[-1])
        if note:
            print(note, file=stream)
    for c in clusters:
        words = " ".join(c["top_words"]) or "(no words: an empty cluster)"
        print(f"  cluster {c['cluster']:>2} ({c['size']:>5} docs): {words}", file=stream)
    if "scores" in summary:
        s = summary["scores"]
        print(f"against known labels: NMI {s['nmi']:.3f}  ARI {s['ari']:.3f}  "
              f"purity {s['purity']:.3f}", file=stream)
    print(f"outputs written to {out}/", file=stream)


def read_points(path):
    """Points from a ``.npy`` file or a numeric CSV (an optional header row is skipped)."""
    from ._validation import check_file

    path = check_file(path, "input")
    if path.endswith(".npy"):
        return np.load(path, allow_pickle=False)
    if not path.endswith((".csv", ".csv.gz", ".txt", ".txt.gz")):
        raise ValueError(f"input: points are read from .csv or .npy files; got {path!r}.")
    with (__import__("gzip").open(path, "rt") if path.endswith(".gz") else open(path)) as handle:
        lines = [line for line in handle if line.strip() and not line.startswith("#")]
    try:
        float(lines[0].replace(",", " ").split()[0])
    except (ValueError, IndexError):
        lines = lines[1:]  # a header row
    try:
        return np.loadtxt(lines, delimiter="," if "," in lines[0] else None, ndmin=2)
    except ValueError as exc:
        raise ValueError(f"input: {path!r} is not a numeric table ({exc}).") from None


def _run_gmm(args, verbose, stream, start):
    import matplotlib

    matplotlib.use("Agg")
    from . import metrics, plotting
    from .corpus import read_labels
    from .mixture import VariationalGaussianMixture
    from .persist import save

    X = read_points(args.input)
    labels = read_labels(args.labels) if args.labels else None
    if labels is not None and labels.shape != (X.shape[0],):
        raise ValueError(f"labels has {labels.size} entries but the input has {X.shape[0]} points.")
    model = VariationalGaussianMixture(
        10 if args.n_components is None else args.n_components,
        covariance_type=args.covariance_type, n_init=args.n_init, random_state=args.seed,
        verbose=verbose).fit(X)
    elapsed = time.perf_counter() - start
    out = args.out
    os.makedirs(out, exist_ok=True)
    proba = model.predict_proba(X)
    with open(os.path.join(out, "assignments.csv"), "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["index", "cluster", "probability"] + (["label"] if labels is not None else []))
        for i, k in enumerate(model.labels_):
            writer.writerow([i, int(k), f"{proba[i, k]:.6f}"] + ([labels[i]] if labels is not None else []))
    sizes = np.bincount(model.labels_, minlength=model.n_components)
    clusters = [dict(cluster=k, size=int(sizes[k]), weight=float(model.weights_[k]),
                     mean=model.means_[k].tolist()) for k in range(model.n_components)]
    with open(os.path.join(out, "clusters.json"), "w", encoding="utf-8") as handle:
        json.dump(clusters, handle, indent=2)
    save(model, os.path.join(out, "model.npz"))
    summary = dict(settings=dict(model="gmm", input=args.input, n_components=model.n_components,
                                 covariance_type=args.covariance_type, seed=args.seed),
                   n_samples=X.shape[0], n_features=X.shape[1] if X.ndim == 2 else 1,
                   n_effective_components=model.n_effective_components_,
                   elbo=float(model.elbo_), n_iter=int(model.n_iter_),
                   converged=bool(model.converged_), seconds=round(elapsed, 3))
    if labels is not None:
        summary["scores"] = metrics.clustering_report(labels, model.labels_)
    plotting.plot_elbo_trace(model).savefig(os.path.join(out, "convergence.png"), dpi=110)
    plotting.plot_gaussian_clusters(model, X).savefig(os.path.join(out, "scatter.png"), dpi=110)
    with open(os.path.join(out, "summary.json"), "w", encoding="utf-8") as handle:
        json.dump(summary, handle, indent=2, default=str)
    import matplotlib.pyplot as plt

    plt.close("all")
    print(f"{summary['n_samples']} points x {summary['n_features']} features -> "
          f"{model.n_effective_components_} effective components of {model.n_components} in "
          f"{elapsed:.1f} s (ELBO {model.elbo_:.1f})", file=stream)
    for c in clusters:
        if c["size"]:
            mean = ", ".join(f"{v:.3g}" for v in c["mean"][:4])
            print(f"  cluster {c['cluster']:>2} ({c['size']:>5} points, weight "
                  f"{c['weight']:.3f}): mean [{mean}{', ...' if len(c['mean']) > 4 else ''}]",
                  file=stream)
    if labels is not None:
        s_ = summary["scores"]
        print(f"against known labels: NMI {s_['nmi']:.3f}  ARI {s_['ari']:.3f}", file=stream)
    print(f"outputs written to {out}/", file=stream)
    return 0


def run(args, stream=sys.stdout):
    from . import datasets
    from .corpus import read_corpus
    from .mixture import DirichletMultinomialMixture, select_n_clusters

    start = time.perf_counter()
    verbose = 0 if args.quiet else 1
    if args.command == "topics":
        return _run_topics(args, verbose, stream, start)
    if args.command == "demo":
        corpus = datasets.load_classic3()
        settings = dict(model="dmm", input="classic3 (embedded)", n_components=3, seed=args.seed)
        model = DirichletMultinomialMixture(3, random_state=args.seed, verbose=verbose).fit(corpus.counts)
        selection = None
    elif args.groups is not None and args.model != "hdp":
        raise ValueError("--groups is for --model hdp (points clustered within groups).")
    elif args.model == "hdp":
        if args.select is not None or args.n_components is not None:
            raise ValueError("--model hdp chooses the number of clusters itself; drop -k and "
                             "--select.")
        return _run_hdp(args, verbose, stream, start)
    elif args.model == "gmm":
        if args.select is not None:
            raise ValueError("--select is for --model dmm; a Gaussian mixture switches unneeded "
                             "components off by itself, so give an upper bound with -k.")
        return _run_gmm(args, verbose, stream, start)
    else:
        options = {} if args.stop_words is None else dict(stop_words=args.stop_words)
        if args.input.endswith((".csv", ".csv.gz")):
            options["text_column"] = args.text_column
        corpus = read_corpus(args.input, labels=args.labels, **options)
        estimator = DirichletMultinomialMixture(
            10 if args.n_components is None else args.n_components, inference=args.inference, n_init=args.n_init,
            random_state=args.seed, verbose=verbose,
        )
        settings = dict(model=args.model, input=args.input, inference=args.inference,
                        n_init=args.n_init, seed=args.seed)
        selection = None
        if args.select is not None:
            selection = select_n_clusters(corpus.counts, args.select, estimator, verbose=verbose)
            model = selection.best_model
            settings["select"] = _range_text(args.select)
        else:
            model = estimator.fit(corpus.counts)
            settings["n_components"] = model.n_components
    elapsed = time.perf_counter() - start
    summary, clusters = _write_outputs(args.out, corpus, model, settings, elapsed, selection, args.top)
    _print_summary(summary, clusters, args.out, stream)
    return 0


def _write_hdp_trace(out, model, nmi_trace):
    """trace.csv and trace.png (clusters, tables, log joint and NMI per sweep) and model.npz."""
    import matplotlib

    matplotlib.use("Agg")
    from . import plotting
    from .persist import save

    with open(os.path.join(out, "trace.csv"), "w", encoding="utf-8") as handle:
        handle.write("chain,sweep,n_clusters,n_tables,log_joint,gamma0,alpha0"
                     + (",nmi" if nmi_trace else "") + "\n")
        for chain, row in enumerate(model.trace_):
            for sweep, entry in enumerate(row):
                extra = f",{nmi_trace[chain][sweep]:.6f}" if nmi_trace else ""
                handle.write(f"{chain},{sweep + 1},{entry['n_dishes']},{entry['n_tables']},"
                             f"{entry['log_joint']:.6f},{entry['top_concentration']:.6g},"
                             f"{entry['group_concentration']:.6g}{extra}\n")
    plotting.plot_hdp_trace(model, np.asarray(nmi_trace) if nmi_trace else None).savefig(
        os.path.join(out, "trace.png"), dpi=110)
    import matplotlib.pyplot as plt

    plt.close("all")
    save(model, os.path.join(out, "model.npz"))


def _hdp_concentrations(args):
    """The HDPMixture arguments for the two concentrations and their optional priors."""
    return dict(top_concentration=args.gamma0, group_concentration=args.alpha0,
                top_concentration_prior=args.gamma0_prior,
                group_concentration_prior=args.alpha0_prior)


def _hdp_settings(args, model, **extra):
    """The summary's settings: the run's options and, for a resampled concentration, its
    posterior mean over the sweeps after burn-in."""
    settings = dict(model="hdp", input=args.input, **extra, gamma0=args.gamma0,
                    alpha0=args.alpha0, gamma0_prior=args.gamma0_prior,
                    alpha0_prior=args.alpha0_prior, n_iter=args.n_iter, seed=args.seed)
    for name, mean in (("gamma0", model.top_concentration_),
                       ("alpha0", model.group_concentration_)):
        if settings[f"{name}_prior"] is not None:
            settings[f"{name}_posterior_mean"] = round(mean, 6)
    return settings


def _write_scored_summary(out, summary, known, predicted):
    """summary.json, with the scores of ``predicted`` against ``known`` labels when given."""
    from . import metrics

    if known is not None:
        summary["scores"] = metrics.clustering_report(known, predicted)
    with open(os.path.join(out, "summary.json"), "w", encoding="utf-8") as handle:
        json.dump(summary, handle, indent=2, default=str)


def _run_hdp_points(args, verbose, stream, start):
    """``mixbayes cluster POINTS --model hdp --groups FILE``: the Gaussian kernel; writes
    assignments.csv, clusters.json, trace.csv, trace.png, summary.json and model.npz."""
    from . import metrics
    from .corpus import read_labels
    from .hdp import HDPMixture

    X = read_points(args.input)
    groups = read_labels(args.groups)
    known = read_labels(args.labels) if args.labels else None
    for name, values in (("groups", groups), ("labels", known)):
        if values is not None and values.shape != (X.shape[0],):
            raise ValueError(f"{name} has {values.size} entries but the input has {X.shape[0]} "
                             "points.")
    nmi_trace = []

    def point_nmi(chain, sweep, info):
        if chain == len(nmi_trace):
            nmi_trace.append([])
        nmi_trace[chain].append(metrics.nmi(known, info["labels"]))

    model = HDPMixture("gaussian", n_iter=args.n_iter, random_state=args.seed, verbose=verbose,
                       **_hdp_concentrations(args))
    model.fit(X, groups=groups, callback=point_nmi if known is not None else None)
    elapsed = time.perf_counter() - start
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "assignments.csv"), "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["index", "group", "cluster"] + (["label"] if known is not None else []))
        for i, k in enumerate(model.labels_):
            writer.writerow([i, groups[i], int(k)] + ([known[i]] if known is not None else []))
    sizes = np.bincount(model.labels_, minlength=model.n_components_)
    clusters = [dict(cluster=k, points=int(sizes[k]), mean=model.components_[k].tolist())
                for k in range(model.n_components_)]
    with open(os.path.join(args.out, "clusters.json"), "w", encoding="utf-8") as handle:
        json.dump(clusters, handle, indent=2)
    _write_hdp_trace(args.out, model, nmi_trace)
    summary = dict(settings=_hdp_settings(args, model, kernel="gaussian", groups=args.groups),
                   n_points=int(X.shape[0]), n_features=int(X.shape[1]),
                   n_groups=int(model.n_groups_), n_clusters=model.n_components_,
                   seconds=round(elapsed, 3))
    _write_scored_summary(args.out, summary, known, model.labels_)
    print(f"{X.shape[0]} points in {model.n_groups_} groups -> {model.n_components_} clusters "
          f"after {args.n_iter} sweeps in {elapsed:.1f} s", file=stream)
    for c in clusters[:20]:
        mean = ", ".join(f"{v:.3g}" for v in c["mean"][:4])
        print(f"  cluster {c['cluster']:>2} ({c['points']:>6} points): mean [{mean}"
              f"{', ...' if len(c['mean']) > 4 else ''}]", file=stream)
    if known is not None:
        s = summary["scores"]
        print(f"against known labels: NMI {s['nmi']:.3f}  ARI {s['ari']:.3f}", file=stream)
    print(f"outputs written to {args.out}/", file=stream)
    return 0


def _run_hdp(args, verbose, stream, start):
    """``mixbayes cluster INPUT --model hdp``: documents as groups of tokens; writes
    assignments.csv, clusters.json, trace.csv, trace.png, summary.json and model.npz."""
    from . import metrics
    from .corpus import read_corpus
    from .hdp import HDPMixture

    if args.groups is not None:
        return _run_hdp_points(args, verbose, stream, start)
    options = {} if args.stop_words is None else dict(stop_words=args.stop_words)
    if args.input.endswith((".csv", ".csv.gz")):
        options["text_column"] = args.text_column
    corpus = read_corpus(args.input, labels=args.labels, **options)
    keep = np.flatnonzero(np.asarray(corpus.counts.sum(axis=1)).ravel() > 0)
    if keep.size < corpus.n_documents:
        print(f"{corpus.n_documents - keep.size} empty document(s) left out", file=stream)
    X = corpus.counts[keep]
    known = None if corpus.labels is None else np.asarray(corpus.labels)[keep]
    group_of = np.repeat(np.arange(X.shape[0]), np.asarray(X.sum(axis=1)).ravel())
    nmi_trace = []

    def majority_nmi(chain, sweep, info):
        names, index = np.unique(info["labels"], return_inverse=True)
        counts = np.zeros((X.shape[0], names.size), dtype=np.int64)
        np.add.at(counts, (group_of, index), 1)
        if chain == len(nmi_trace):
            nmi_trace.append([])
        nmi_trace[chain].append(metrics.nmi(known, counts.argmax(axis=1), "geometric"))

    model = HDPMixture(n_iter=args.n_iter, random_state=args.seed, verbose=verbose,
                       **_hdp_concentrations(args))
    model.fit(X, callback=majority_nmi if known is not None else None)
    elapsed = time.perf_counter() - start
    os.makedirs(args.out, exist_ok=True)
    shares = np.zeros(X.shape[0])
    np.add.at(shares, group_of, model.labels_ == model.group_labels_[group_of])
    shares /= np.bincount(group_of, minlength=X.shape[0])
    with open(os.path.join(args.out, "assignments.csv"), "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["doc_id", "cluster", "token_share"] + (["label"] if known is not None else []))
        for row, i in enumerate(keep):
            line = [corpus.doc_ids[i], int(model.group_labels_[row]), f"{shares[row]:.4f}"]
            writer.writerow(line + ([known[row]] if known is not None else []))
    words = model.top_words(corpus.vocabulary, n=args.top)
    lifts = model.top_words(corpus.vocabulary, n=args.top, by="lift")
    tokens = np.bincount(model.labels_, minlength=model.n_components_)
    documents = np.bincount(model.group_labels_, minlength=model.n_components_)
    clusters = [dict(cluster=k, documents=int(documents[k]), tokens=int(tokens[k]),
                     top_words=words[k], top_words_by_lift=lifts[k])
                for k in range(model.n_components_)]
    with open(os.path.join(args.out, "clusters.json"), "w", encoding="utf-8") as handle:
        json.dump(clusters, handle, indent=2)
    _write_hdp_trace(args.out, model, nmi_trace)
    summary = dict(settings=_hdp_settings(args, model),
                   n_documents=int(X.shape[0]), n_terms=int(X.shape[1]),
                   n_tokens=int(X.sum()), n_clusters=model.n_components_,
                   seconds=round(elapsed, 3))
    _write_scored_summary(args.out, summary, known, model.group_labels_)
    print(f"{X.shape[0]} documents ({summary['n_tokens']} tokens) -> {model.n_components_} "
          f"clusters after {args.n_iter} sweeps in {elapsed:.1f} s", file=stream)
    for c in clusters[:20]:
        print(f"  cluster {c['cluster']:>2} ({c['documents']:>5} docs, {c['tokens']:>6} tokens): "
              f"{' '.join(c['top_words'])}", file=stream)
    if known is not None:
        s = summary["scores"]
        print(f"against known labels (majority cluster per document): NMI {s['nmi']:.3f} "
              f"(geometric {s['nmi_geometric']:.3f})  ARI {s['ari']:.3f}", file=stream)
    print(f"outputs written to {args.out}/", file=stream)
    return 0


def _run_topics(args, verbose, stream, start):
    """``mixbayes topics``: fit (or choose K and fit) a topic model; write topics.json,
    doc_topics.csv, model.npz and, with --select, selection.csv and selection.png."""
    from .corpus import read_corpus
    from .topics import TopicModel, select_n_topics

    options = {} if args.stop_words is None else dict(stop_words=args.stop_words)
    if args.input.endswith((".csv", ".csv.gz")):
        options["text_column"] = args.text_column
    corpus = read_corpus(args.input, **options)
    os.makedirs(args.out, exist_ok=True)
    if args.select is not None:
        if args.select.start < 2:
            raise ValueError("--select must start at 2 or more topics (the Bayes factor is "
                             "against one topic).")
        selection = select_n_topics(corpus.counts, args.select, scan_all=args.scan_all,
                                    verbose=verbose)
        model = selection.best_model
        columns = ["k", "log_bayes_factor", "dispersion", "df", "p_value", "log_posterior",
                   "n_iter", "seconds"]
        with open(os.path.join(args.out, "selection.csv"), "w") as handle:
            handle.write(",".join(columns) + "\n")
            for row in selection.table:
                handle.write(",".join(f"{row[c]:.6g}" for c in columns) + "\n")
        fig = selection.plot()
        fig.savefig(os.path.join(args.out, "selection.png"), dpi=120, bbox_inches="tight")
    else:
        model = TopicModel(args.n_components, verbose=verbose).fit(corpus.counts)
    order = np.argsort(-model.usage_, kind="stable")
    by_probability = model.top_words(corpus.vocabulary, args.top)
    by_lift = model.top_words(corpus.vocabulary, args.top, by="lift")
    topics = [dict(topic=int(k), usage=float(model.usage_[k]), top_words=by_probability[k],
                   top_lift=by_lift[k]) for k in order]
    summary = dict(input=args.input, n_documents=corpus.counts.shape[0],
                   n_terms=corpus.counts.shape[1], n_topics=model.n_components,
                   log_posterior=model.log_posterior_, n_iter=model.n_iter_,
                   seconds=time.perf_counter() - start, topics=topics)
    with open(os.path.join(args.out, "topics.json"), "w") as handle:
        json.dump(summary, handle, indent=2)
    ids = corpus.doc_ids if corpus.doc_ids is not None else range(corpus.counts.shape[0])
    with open(os.path.join(args.out, "doc_topics.csv"), "w") as handle:
        handle.write("document," + ",".join(f"topic{k}" for k in range(model.n_components)) + "\n")
        for doc, row in zip(ids, model.doc_topic_):
            handle.write(f"{doc}," + ",".join(f"{v:.6g}" for v in row) + "\n")
    from .persist import save

    save(model, os.path.join(args.out, "model.npz"))
    print(f"{model.n_components} topics from {corpus.counts.shape[0]} documents x "
          f"{corpus.counts.shape[1]} terms in {summary['seconds']:.1f} s", file=stream)
    if args.select is not None:
        note = _edge_note(model.n_components, args.select[0], args.select[-1])
        if note:
            print(note, file=stream)
    for entry in topics:
        print(f"  topic {entry['topic']:>3} ({entry['usage']:.3f}): {', '.join(entry['top_lift'][:5])}",
              file=stream)
    print(f"outputs written to {args.out}/", file=stream)
    return 0


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            status = run(args)
        from .exceptions import ConvergenceWarning

        for w in caught:
            if issubclass(w.category, ConvergenceWarning):
                print(f"warning: {w.message}", file=sys.stderr)
        return status
    except KeyboardInterrupt:
        print("mixbayes: interrupted", file=sys.stderr)
        return 130
    except (ValueError, TypeError, OSError) as exc:
        print(f"mixbayes: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
