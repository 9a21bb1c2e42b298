"""``mixbayes cluster``: its options, and the run of the chosen model, one module per model
(:mod:`.dmm`, :mod:`.gmm`, :mod:`.hdp`, :mod:`.tree`), looked up in :data:`MODELS`."""

from __future__ import annotations

import importlib
import time

from .. import _dask
from .._fitting import run_fitting
from .._parser import (add_common, add_text_options, depth_option, non_negative_float,
                       positive_float, positive_int, range_option, seed_number)

# --model -> the module that runs it (its own flags are tied to it in cli/_settings.py)
MODELS = {"dmm": ".dmm", "gmm": ".gmm", "hdp": ".hdp", "tree": ".tree"}
_MODELS = tuple(MODELS)


def _model_name(value):
    """--model's value; "topics", a command of its own, is pointed there."""
    if value == "topics":
        import argparse

        raise argparse.ArgumentTypeError(
            "the topic model is a command of its own: mixbayes topics INPUT")
    return value


def add_parser(sub):
    """The command's options, on the subcommand parser it adds to ``sub``."""
    cluster = sub.add_parser(
        "cluster", allow_abbrev=False, help="cluster documents or points",
        description="Cluster the documents of INPUT (dmm, hdp) or its points (gmm, tree, "
        "hdp --groups). Options marked with a model apply to that model only; giving one to "
        "another model is an error.")
    cluster.add_argument("input", help="documents: .mtx[.gz] (+vocab.txt), UCI docword.*, "
                         ".txt (one document per line), .csv with a text column, or a folder "
                         "of .txt files; points (gmm, tree, hdp --groups): a numeric .csv (optional "
                         "header row) or .npy")
    cluster.add_argument("--model", type=_model_name, choices=_MODELS, default="dmm",
                         help="dmm: Dirichlet-multinomial mixture of documents; gmm: Gaussian "
                         "mixture of points; hdp: hierarchical Dirichlet process (documents, or "
                         "points with --groups); tree: a tree of clusters of points (nested "
                         "CRP + hierarchical Dirichlet process) (default: %(default)s)")
    size = cluster.add_mutually_exclusive_group()
    size.add_argument("-k", "--n-components", type=positive_int, default=None, metavar="K",
                      help="number of clusters (dmm), or an upper bound (gmm: unneeded "
                      "components switch off) (default: 10)")
    size.add_argument("--select", type=range_option, default=None, metavar="LOW:HIGH[:STEP]",
                      help="dmm: fit every K in this range and choose one (ELBO + log K!, with "
                      "held-out likelihood beside it)")
    cluster.add_argument("--labels", default=None, metavar="FILE",
                         help="one known label per document or point, to score the clustering")
    cluster.add_argument("--label-column", default=None, metavar="NAME",
                         help="a CSV's column holding known labels (its header's name, or its "
                         "number from 1), to score the clustering; in a table of points it is "
                         "left out of the features (default: none; or --labels FILE)")
    cluster.add_argument("--drop-column", action="append", default=None, metavar="NAME",
                         help="points (gmm, tree, hdp --groups): a column of the table to leave "
                         "out of the features, by name or number from 1; repeat it for several "
                         "(default: none)")
    cluster.add_argument("--inference", choices=("vb", "gibbs"), default=None,
                         help="dmm: variational Bayes or collapsed Gibbs (default: vb)")
    cluster.add_argument("--n-init", type=positive_int, default=None, metavar="N",
                         help="dmm, gmm: restarts, the best kept (default: 5 dmm, 1 gmm, as "
                         "in Python)")
    cluster.add_argument("--covariance-type",
                         choices=("full", "diag", "spherical", "known", "tied"),
                         default=None, help="gmm, tree: covariance of each component; tree "
                         "only: known, one variance shared by all, or tied, one covariance "
                         "matrix shared by all, each estimated from the points (default: full "
                         "gmm, tied tree)")
    cluster.add_argument("--reg-covar", type=float, default=None, metavar="FLOOR",
                         help="gmm: added to every variance, relative to the data's (default: 1e-6)")
    cluster.add_argument("--merge-moves", action="store_const", const=True, default=None,
                         help="gmm: after the fit converges, merge pairs of components where "
                         "that raises the ELBO (joins a cluster the start split in two; for a "
                         "generous -k, as it may join overlapping classes too)")
    cluster.add_argument("--n-iter", type=positive_int, default=None, metavar="N",
                         help="hdp, tree: sweeps of each chain (default: 100, as in Python)")
    cluster.add_argument("--burn-in", type=seed_number, default=None, metavar="N",
                         help="hdp, tree: first sweeps of each chain left out of the summaries "
                         "and diagnostics, below --n-iter (default: half of --n-iter)")
    cluster.add_argument("--n-chains", type=positive_int, default=None, metavar="N",
                         help="hdp, tree: independent chains, each from its own start; with 2 "
                         "or more, R-hat compares them (default: 1)")
    cluster.add_argument("--word-prior", type=positive_float, default=None, metavar="A",
                         help="hdp (documents): the Dirichlet prior of each term in a cluster; "
                         "smaller opens more clusters for rare words (default: 0.05 for short "
                         "documents, under 20 tokens on average; else 0.03)")
    cluster.add_argument("--depth", type=depth_option, default=None, metavar="L",
                         help="tree: levels below the root, or auto: the depth of 1-5 whose "
                         "dendrogram has the highest evidence (default: 2)")
    cluster.add_argument("--margin-weight", type=non_negative_float, default=None,
                         metavar="C", help="tree: weight of the max-margin regularisation "
                         "that pushes sibling branches apart; 0 is plain BHMC (default: 0)")
    cluster.add_argument("--gamma0", type=float, default=None,
                         help="hdp: top-level concentration, its start (default: auto: for "
                         "short documents, under 20 tokens on average, the square root of "
                         "the number of documents, fixed; else 1, under --gamma0-prior); "
                         "given without --gamma0-prior, fixed at this value")
    cluster.add_argument("--alpha0", type=float, default=None,
                         help="hdp: group-level concentration, its start (default: auto: 0.1 "
                         "for short documents, else 1); given without --alpha0-prior, fixed "
                         "at this value")
    for name, default in (("gamma0", "auto: none (fixed) for short documents, else 1 0.1"),
                          ("alpha0", "1 1")):
        cluster.add_argument(f"--{name}-prior", type=float, nargs=2, default=None,
                             metavar=("SHAPE", "RATE"),
                             help=f"hdp: the Gamma prior on {name}, resampled every sweep "
                             f"from --{name} (default: {default})")
    cluster.add_argument("--groups", default=None, metavar="FILE",
                         help="hdp: the group of every point, one per line; INPUT is then "
                         "points, clustered by the Gaussian kernel")
    cluster.add_argument("--uncertainty", action="store_const", const=True, default=None,
                         help="dmm, gmm, hdp, tree: the posterior of the partition (the "
                         "tree's leaves): partition.json "
                         "(least expected VI partition, 95%% credible ball, P(number of "
                         "clusters)), each item's point estimate and certainty in "
                         "assignments.csv, similarity.png")
    add_text_options(cluster)
    _dask.add_options(cluster)
    add_common(cluster, "mixbayes-out")
    return cluster


def run(parsed, stream):
    """The command: the settings, the output folder and the cluster, then the model's run."""
    return run_fitting(parsed, stream, run_model)


def run_model(args, settings, out, verbose, stream):
    """The chosen model's run (the demo's: the document mixture's)."""
    start = time.perf_counter()
    model = args.model if args.command == "cluster" else "dmm"
    return importlib.import_module(MODELS[model], __name__).run(args, settings, out, verbose,
                                                               stream, start)
