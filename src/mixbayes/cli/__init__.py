"""The ``mixbayes`` command.

::

    mixbayes demo [--out DIR]
    mixbayes cluster INPUT --model dmm [-k K | --select 2:30] [--labels FILE] [--out DIR] [--seed N]
    mixbayes cluster POINTS --model gmm [-k K] [--covariance-type full|diag|spherical]
    mixbayes cluster POINTS --model tree [--depth 2] [--covariance-type known|full|diag|spherical]
    mixbayes cluster INPUT --model dmm|gmm -k K (--scheduler ADDRESS | --workers N)
    mixbayes cluster INPUT --model hdp [--n-iter 100] [--gamma0 1] [--alpha0 1]
    mixbayes cluster POINTS --model hdp --groups FILE
    mixbayes topics INPUT (-k K | --select 2:30) [--labels FILE] [--seed N]
                  [--scheduler ADDRESS | --workers N]
    mixbayes inspect MODEL.npz [--vocabulary FILE]
    mixbayes report MODEL.npz [--corpus INPUT] [--out report.html]

Every fitting run writes its files (``assignments.csv``, ``clusters.json`` or ``topics.json``,
``model.npz``, ``summary.json``, PNG figures) to ``--out`` and prints a short summary. Errors
are one line on stderr and exit status 2 (usage) or 1 (anything else), never a traceback; a
run that fails leaves ``--out`` as it was.

The parser and the rules that tie options to models live here; each command runs in its own
module (:mod:`.cluster`, :mod:`.topics`, :mod:`.inspect`, :mod:`.report`), sharing the readers
(:mod:`._inputs`), the writers (:mod:`._outputs`) and the dask cluster of
``--scheduler``/``--workers`` (:mod:`._dask`).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import warnings

from . import _dask

_MODELS = ("dmm", "gmm", "hdp", "tree")

# option dest -> (flag users typed, models it applies to, default once it applies)
_CLUSTER_OPTIONS = {
    "n_components": ("-k", ("dmm", "gmm"), 10),
    "select": ("--select", ("dmm",), None),
    "inference": ("--inference", ("dmm",), "vb"),
    "n_init": ("--n-init", ("dmm", "gmm"), {"dmm": 5, "gmm": 1}),
    "covariance_type": ("--covariance-type", ("gmm", "tree"), {"gmm": "full", "tree": "known"}),
    "reg_covar": ("--reg-covar", ("gmm",), 1e-6),
    "n_iter": ("--n-iter", ("hdp", "tree"), 100),
    "burn_in": ("--burn-in", ("hdp", "tree"), None),
    "n_chains": ("--n-chains", ("hdp", "tree"), 1),
    "word_prior": ("--word-prior", ("hdp",), None),
    "depth": ("--depth", ("tree",), 2),
    "margin_weight": ("--margin-weight", ("tree",), 0.0),
    "gamma0": ("--gamma0", ("hdp",), 1.0),
    "alpha0": ("--alpha0", ("hdp",), 1.0),
    "gamma0_prior": ("--gamma0-prior", ("hdp",), None),
    "alpha0_prior": ("--alpha0-prior", ("hdp",), None),
    "groups": ("--groups", ("hdp",), None),
    "uncertainty": ("--uncertainty", ("dmm", "gmm", "hdp", "tree"), False),
}
# options for documents; refused where the input is points (gmm, hdp --groups)
_TEXT_OPTIONS = {"text_column": ("--text-column", "text"),
                 "stop_words": ("--stop-words", None),
                 "min_df": ("--min-df", 1)}

# estimator parameter names -> the flags a CLI user knows them by, for error messages
_CLI_WORDS = {
    "n_components": "-k", "candidates": "--select", "n_init": "--n-init",
    "random_state": "--seed", "top_concentration_prior": "--gamma0-prior",
    "group_concentration_prior": "--alpha0-prior", "top_concentration": "--gamma0",
    "group_concentration": "--alpha0", "n_iter": "--n-iter", "burn_in": "--burn-in",
    "n_chains": "--n-chains", "word_prior": "--word-prior", "covariance_type":
    "--covariance-type", "reg_covar": "--reg-covar", "inference": "--inference",
    "text_column": "--text-column", "label_column": "--label-column", "depth": "--depth",
    "margin_weight": "--margin-weight",
}


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


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors, as every other error of the command: the usage block
    would bury the message (``--help`` still shows it)."""

    def error(self, message):
        message = re.sub(r"^argument ([^:]+): (?=\1)", "", message)  # "argument -k: -k must"
        sys.stderr.write(f"mixbayes: error: {message} (see {self.prog} --help)\n")
        sys.exit(2)


def _non_negative_float(text):
    """An argparse type: a finite number of at least 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number; got {text!r}") from None
    if not (value >= 0 and value != float("inf")):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0; got {text}")
    return value


def _whole_number(minimum):
    """An argparse type: a whole number of at least ``minimum``."""
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number; got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be {minimum} or more; got {value}")
        return value

    return parse


_seed, _positive_int = _whole_number(0), _whole_number(1)


def _positive_float(text):
    """An argparse type: a finite number above 0."""
    value = _non_negative_float(text)
    if value == 0:
        raise argparse.ArgumentTypeError(f"must be a finite number > 0; got {text}")
    return value


def _depth(text):
    """An argparse type: ``auto`` or a whole number of at least 1."""
    return "auto" if text == "auto" else _positive_int(text)


def _min_df(text):
    try:
        value = int(text)
    except ValueError:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a count or a share; got {text!r}") from None
        if not 0 < value <= 1:
            raise argparse.ArgumentTypeError(f"a share must lie in (0, 1]; got {text!r}")
        return value
    if value < 1:
        raise argparse.ArgumentTypeError(f"a count must be 1 or more; got {value}")
    return value


def _add_text_options(parser):
    parser.add_argument("--text-column", default=None, metavar="NAME",
                        help="CSV column holding the text (default: text)")
    parser.add_argument("--stop-words", default=None, metavar="english|none|FILE",
                        help="words to drop: scikit-learn's English list, none, or a file with "
                        "one word per line (used instead of the English list; include those "
                        "words in it to drop both) (default: english for raw text - .txt, "
                        ".csv, a folder -, none for count matrices)")
    parser.add_argument("--min-df", type=_min_df, default=None, metavar="N",
                        help="drop terms used by fewer than N documents (or a share such as "
                        "0.01) (default: 1)")


def _add_common(parser, out_default):
    parser.add_argument("--out", default=out_default, metavar="DIR",
                        help="output folder (default: %(default)s)")
    parser.add_argument("--force", action="store_true",
                        help="replace the files of an earlier run in --out (default: refuse "
                        "to write into a folder that is not empty)")
    parser.add_argument("--seed", type=_seed, default=0,
                        help="random seed, 0 or more (default: %(default)s)")
    parser.add_argument("--top", type=_positive_int, default=10, metavar="N",
                        help="top words shown per cluster or topic (default: %(default)s)")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="no progress bar (default: a bar on runs over a second)")
    parser.add_argument("--report", action="store_true",
                        help="also write report.html, an interactive report in one "
                        "self-contained file (see mixbayes report)")


def build_parser():
    from .. import __version__

    parser = _Parser(
        prog="mixbayes", allow_abbrev=False,
        description="Bayesian mixture-model clustering of documents (word counts or raw text) "
        "and of real-valued points, with topic models and hierarchical Dirichlet processes.")
    parser.add_argument("--version", action="version", version=f"mixbayes {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=_Parser)

    demo = sub.add_parser("demo", allow_abbrev=False,
                          help="cluster the embedded classic3 corpus (3,891 abstracts)",
                          description="Cluster the embedded classic3 corpus into its three "
                          "collections with the Dirichlet-multinomial mixture.")
    _add_common(demo, "mixbayes-demo")

    cluster = sub.add_parser(
        "cluster", allow_abbrev=False, help="cluster documents or points",
        description="Cluster the documents of INPUT (dmm, hdp) or its points (gmm, tree, "
        "hdp --groups). Options marked with a model apply to that model only; giving one to "
        "another model is an error.")
    cluster.add_argument("input", help="documents: .mtx[.gz] (+vocab.txt), UCI docword.*, "
                         ".txt (one document per line), .csv with a text column, or a folder "
                         "of .txt files; points (gmm, tree, hdp --groups): a numeric .csv (optional "
                         "header row) or .npy")
    cluster.add_argument("--model", choices=_MODELS, default="dmm",
                         help="dmm: Dirichlet-multinomial mixture of documents; gmm: Gaussian "
                         "mixture of points; hdp: hierarchical Dirichlet process (documents, or "
                         "points with --groups); tree: a tree of clusters of points (nested "
                         "CRP + hierarchical Dirichlet process) (default: %(default)s)")
    size = cluster.add_mutually_exclusive_group()
    size.add_argument("-k", "--n-components", type=_positive_int, default=None, metavar="K",
                      help="number of clusters (dmm), or an upper bound (gmm: unneeded "
                      "components switch off) (default: 10)")
    size.add_argument("--select", type=_parse_range, default=None, metavar="LOW:HIGH[:STEP]",
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
    cluster.add_argument("--n-init", type=_positive_int, default=None, metavar="N",
                         help="dmm, gmm: restarts, the best kept (default: 5 dmm, 1 gmm, as "
                         "in Python)")
    cluster.add_argument("--covariance-type", choices=("full", "diag", "spherical", "known"),
                         default=None, help="gmm, tree: covariance of each component; known "
                         "(tree only): one variance shared by all, estimated from the points "
                         "(default: full gmm, known tree)")
    cluster.add_argument("--reg-covar", type=float, default=None, metavar="FLOOR",
                         help="gmm: added to every variance, relative to the data's (default: 1e-6)")
    cluster.add_argument("--n-iter", type=_positive_int, default=None, metavar="N",
                         help="hdp, tree: sweeps of each chain (default: 100, as in Python)")
    cluster.add_argument("--burn-in", type=_seed, default=None, metavar="N",
                         help="hdp, tree: first sweeps of each chain left out of the summaries "
                         "and diagnostics, below --n-iter (default: half of --n-iter)")
    cluster.add_argument("--n-chains", type=_positive_int, default=None, metavar="N",
                         help="hdp, tree: independent chains, each from its own start; with 2 "
                         "or more, R-hat compares them (default: 1)")
    cluster.add_argument("--word-prior", type=_positive_float, default=None, metavar="A",
                         help="hdp (documents): the Dirichlet prior of each term in a cluster; "
                         "smaller opens more clusters for rare words (default: 0.1)")
    cluster.add_argument("--depth", type=_depth, default=None, metavar="L",
                         help="tree: levels below the root, or auto: the depth of 1-5 whose "
                         "dendrogram has the highest evidence (default: 2)")
    cluster.add_argument("--margin-weight", type=_non_negative_float, default=None,
                         metavar="C", help="tree: weight of the max-margin regularisation "
                         "that pushes sibling branches apart; 0 is plain BHMC (default: 0)")
    cluster.add_argument("--gamma0", type=float, default=None,
                         help="hdp: top-level concentration (default: 1)")
    cluster.add_argument("--alpha0", type=float, default=None,
                         help="hdp: group-level concentration (default: 1)")
    for name in ("gamma0", "alpha0"):
        cluster.add_argument(f"--{name}-prior", type=float, nargs=2, default=None,
                             metavar=("SHAPE", "RATE"),
                             help=f"hdp: a Gamma prior on {name}, then resampled every sweep "
                             f"from --{name} (default: none, {name} fixed)")
    cluster.add_argument("--groups", default=None, metavar="FILE",
                         help="hdp: the group of every point, one per line; INPUT is then "
                         "points, clustered by the Gaussian kernel")
    cluster.add_argument("--uncertainty", action="store_const", const=True, default=None,
                         help="dmm, gmm, hdp, tree: the posterior of the partition (the "
                         "tree's leaves): partition.json "
                         "(least expected VI partition, 95%% credible ball, P(number of "
                         "clusters)), each item's point estimate and certainty in "
                         "assignments.csv, similarity.png")
    _add_text_options(cluster)
    _dask.add_options(cluster)
    _add_common(cluster, "mixbayes-out")

    topics = sub.add_parser("topics", allow_abbrev=False,
                            help="fit a topic model (every document mixes topics)",
                            description="Fit a topic model to the documents of INPUT by joint "
                            "MAP, with K given or chosen by the Laplace marginal likelihood.")
    topics.add_argument("input", help="documents: .mtx[.gz] (+vocab.txt), UCI docword.*, .txt, "
                        ".csv with a text column, or a folder of .txt files")
    size = topics.add_mutually_exclusive_group(required=True)
    size.add_argument("-k", "--n-components", type=_positive_int, default=None, metavar="K",
                      help="number of topics")
    size.add_argument("--select", type=_parse_range, default=None, metavar="LOW:HIGH[:STEP]",
                      help="choose K in this range (LOW >= 2) by the Laplace marginal likelihood")
    topics.add_argument("--scan-all", action="store_true",
                        help="fit every K of --select (default: stop after two decreases)")
    topics.add_argument("--labels", default=None, metavar="FILE",
                        help="one known label per document, to score each document's main topic")
    topics.add_argument("--coherence", choices=("umass", "npmi", "c_v"), default="umass",
                        help="topic coherence in topics.json and selection.csv, from document "
                        "co-occurrence of each topic's --top words (default: %(default)s)")
    _add_text_options(topics)
    _dask.add_options(topics)
    _add_common(topics, "mixbayes-topics")

    inspect = sub.add_parser("inspect", allow_abbrev=False,
                             help="say what a saved model file is",
                             description="Print a saved model's kind, settings, size, fitted "
                             "figures and top terms.")
    inspect.add_argument("model", help="a model.npz written by mixbayes (cluster, topics) or "
                         "mixbayes.save")
    inspect.add_argument("--vocabulary", default=None, metavar="FILE",
                         help="one term per line (e.g. the corpus's vocab.txt), to name the "
                         "top terms (default: column numbers; a model file stores no "
                         "vocabulary)")
    inspect.add_argument("--top", type=_positive_int, default=10, metavar="N",
                         help="top terms shown per cluster or topic (default: %(default)s)")
    report = sub.add_parser(
        "report", allow_abbrev=False, help="write an interactive HTML report of a saved model",
        description="Write one self-contained HTML file (no network needed) showing a saved "
        "model: a map of its clusters or topics, the selected one's top terms by relevance "
        "(or its points and ellipse, or the tree), sizes, the choice of K (from a "
        "selection.csv beside the model), the convergence trace and example documents.")
    report.add_argument("model", help="a model.npz written by mixbayes (cluster, topics) or "
                        "mixbayes.save")
    report.add_argument("--corpus", default=None, metavar="INPUT",
                        help="the documents or points the model was fitted to, in any format "
                        "cluster and topics read: names the terms, adds example documents, "
                        "draws the points (default: none; terms are then column numbers)")
    report.add_argument("--out", default="report.html", metavar="FILE",
                        help="the HTML file to write (default: %(default)s)")
    report.add_argument("--force", action="store_true",
                        help="replace --out when it exists (default: refuse)")
    _add_text_options(report)
    report.add_argument("--drop-column", action="append", default=None, metavar="NAME",
                        help="points: a column of --corpus to leave out (a class column of text, "
                        "as --label-column or --drop-column left it out of the fit), by name or "
                        "number from 1; repeat it for several (default: none)")
    return parser


def _apply_rules(args):
    """Refuse options that do not apply to the chosen model, then fill in the defaults.

    Returns the settings (every option the run uses, with its value) for ``summary.json``.
    """
    if args.command == "demo":
        return dict(command="demo", input="classic3 (embedded)", model="dmm", n_components=3,
                    seed=args.seed, top=args.top)
    points = False
    args.defaulted = set()  # the options left to their defaults
    settings = dict(command=args.command, input=args.input)
    if args.command == "cluster":
        model = args.model
        points = model in ("gmm", "tree") or args.groups is not None
        settings["model"] = model
        for dest, (flag, models, default) in _CLUSTER_OPTIONS.items():
            value = getattr(args, dest)
            if value is not None and model not in models:
                hint = ""
                if dest in ("n_components", "select") and model in ("hdp", "tree"):
                    hint = (" (the HDP chooses the number of clusters itself)" if model == "hdp"
                            else " (the tree model chooses its branches and components itself;"
                            " set --depth)")
                elif dest == "select" and model == "gmm":
                    hint = (" (a Gaussian mixture switches unneeded components off: give an "
                            "upper bound with -k)")
                raise ValueError(f"{flag} applies to --model {' or '.join(models)}, not "
                                 f"--model {model}{hint}.")
            if dest == "covariance_type" and value == "known" and model == "gmm":
                raise ValueError("--covariance-type known applies to --model tree only (a "
                                 "Gaussian mixture estimates every component's covariance): "
                                 "use full, diag or spherical.")
            if value is None:
                setattr(args, dest, default.get(model) if isinstance(default, dict) else default)
                args.defaulted.add(dest)
            if model in models and not (dest == "n_components" and args.select is not None):
                settings[dest] = getattr(args, dest)
    else:
        settings.update(n_components=args.n_components, scan_all=args.scan_all,
                        coherence=args.coherence)
    if args.command == "cluster":
        if args.word_prior is not None and args.groups is not None:
            raise ValueError("--word-prior is for documents (the HDP's categorical kernel); the "
                             "input of --model hdp --groups is points.")
        if args.drop_column and not points:
            raise ValueError(f"--drop-column is for points (a table of numbers); the input of "
                             f"--model {args.model} is documents.")
        if args.label_column is not None and args.labels is not None:
            raise ValueError("--labels and --label-column both give the labels; give one.")
        settings.update(label_column=args.label_column, drop_columns=args.drop_column or [])
    for dest, (flag, default) in _TEXT_OPTIONS.items():
        value = getattr(args, dest)
        if value is not None and points:
            raise ValueError(f"{flag} is for documents; the input of --model "
                             f"{args.model}{' --groups' if args.groups else ''} is points.")
        if value is None:
            setattr(args, dest, default)
        if not points:
            settings[dest] = getattr(args, dest)
    if args.select is not None:
        settings["select"] = range_text(args.select)
    _dask.check(args, settings)
    settings.update(labels=args.labels, seed=args.seed, top=args.top, out=args.out)
    return settings


def range_text(candidates):
    """The searched range as ``LOW:HIGH`` or ``LOW:HIGH:STEP``, HIGH the last K searched."""
    text = f"{candidates[0]}:{candidates[-1]}"
    return text if candidates.step == 1 else f"{text}:{candidates.step}"


def cli_words(message):
    """Name the estimators' parameters in a message by the flags a CLI user typed."""
    for name in sorted(_CLI_WORDS, key=len, reverse=True):
        message = re.sub(rf"(?<![\w-]){name}(?![\w-])", _CLI_WORDS[name], message)
    return message


def run(args, stream=None):
    """Run the parsed command and print its summary to ``stream`` (default: standard output);
    returns the exit status.

    The summary is printed only once the output folder is in place, so that a reader who
    leaves early (``| head``) cannot cost the run its files.
    """
    import io

    from ._outputs import OutputFolder

    stream = sys.stdout if stream is None else stream
    if args.command == "inspect":
        from .inspect import run_inspect

        return run_inspect(args, stream)
    if args.command == "report":
        from .report import run_report

        return run_report(args, stream)
    settings = _apply_rules(args)
    verbose = 0 if args.quiet else 1
    text = io.StringIO()
    with OutputFolder(args.out, force=args.force) as out, _dask.cluster_client(args) as client:
        args.client = client
        if args.command == "topics":
            from .topics import run_topics

            status = run_topics(args, settings, out, verbose, text)
        else:
            from . import cluster

            status = cluster.run_cluster(args, settings, out, verbose, text)
    stream.write(text.getvalue())
    stream.flush()
    return status


class _Terminated(KeyboardInterrupt):
    """SIGTERM (sent by ``timeout``, Slurm, ``docker stop``), raised as an interrupt so that a
    run cleans up as it does on Ctrl-C: its staging folder removed, ``--out`` as it was."""


@contextlib.contextmanager
def _terminate_as_interrupt():
    """SIGTERM raises :class:`_Terminated` while the command runs (the main thread only: a
    signal handler cannot be set elsewhere); the previous handler is restored afterwards."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(number, frame):
        raise _Terminated()

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings(record=True) as caught, _terminate_as_interrupt():
            warnings.simplefilter("always")
            status = run(args)
        from ..exceptions import ConvergenceWarning

        for w in caught:
            if issubclass(w.category, ConvergenceWarning):
                print(f"warning: {cli_words(str(w.message))}", file=sys.stderr)
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        # `mixbayes ... | head`: the reader left; the run itself finished. Point stdout at
        # /dev/null so that the interpreter's final flush does not complain either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except _Terminated:
        print("mixbayes: terminated", file=sys.stderr)
        return 143  # 128 + SIGTERM, as the shell reports a process that SIGTERM ended
    except KeyboardInterrupt:
        print("mixbayes: interrupted", file=sys.stderr)
        return 130
    except (ValueError, TypeError, OSError) as exc:
        message = " ".join(str(exc).split())  # one line, whatever the message held
        print(f"mixbayes: error: {cli_words(message)}", file=sys.stderr)
        return 1
    except Exception as exc:
        if not type(exc).__module__.startswith("distributed."):
            raise
        # the cluster failed under the fit (a task that kills its workers, as running out of
        # memory does; a scheduler gone; a worker lost more often than a fit recovers from)
        message = " ".join(str(exc).split()) or "no message"
        print(f"mixbayes: error: the dask cluster failed during the run ({type(exc).__name__}: "
              f"{message}); check the workers' memory and logs, then run it again.",
              file=sys.stderr)
        return 1
