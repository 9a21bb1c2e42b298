"""``mixbayes cluster --model gmm``: the Gaussian mixture's run."""

from __future__ import annotations

import time

import numpy as np

from ..._validation import plural
from .._dask import fit as cluster_fit
from .._inputs import read_labelled_points
from .._outputs import (feature_names, mean_text, named_mean, print_groups, save_figure,
                       write_json, write_rows)
from .._uncertainty import write_uncertainty
from ..report import write_run_report
from ._common import note_points, print_scores, scores


def run(args, settings, out, verbose, stream, start):
    """Fit, write and print a Gaussian mixture of points."""
    from ... import plotting
    from ...mixture import VariationalGaussianMixture
    from ...persist import save

    X, names, notes, known = read_labelled_points(args)
    note_points(notes, stream)
    k = args.n_components
    if k > X.shape[0] and "n_components" in args.defaulted:
        notes.append(f"-k lowered from its default {k} to the number of points")
        print(f"note: {notes[-1]}", file=stream)
        k = settings["n_components"] = X.shape[0]
    if k > X.shape[0]:
        raise ValueError(f"-k must be at most the number of points ({X.shape[0]}); got "
                         f"{k}.")
    model = cluster_fit(VariationalGaussianMixture(
        k, covariance_type=args.covariance_type, reg_covar=args.reg_covar,
        merge_moves=args.merge_moves, n_init=args.n_init, random_state=args.seed,
        verbose=verbose), X, args)
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
    save(model, out.file("model.npz"), vocabulary=names)
    write_run_report(args, out, model, X, feature_names=names)
    summary = dict(settings=settings, n_samples=X.shape[0], n_features=X.shape[1],
                   features=feature_names(names, X.shape[1]), n_effective_components=model.n_effective_components_,
                   elbo=float(model.elbo_), n_iter=int(model.n_iter_),
                   converged=bool(model.converged_), seconds=round(elapsed, 3), notes=notes)
    scores(summary, known, model.labels_)
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
    print_scores(summary, stream)
    if uncertain is not None:
        write_uncertainty(out, uncertain[0], stream, note=uncertain[1])
    print(f"outputs written to {args.out}/", file=stream)
    return 0
