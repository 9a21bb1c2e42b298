"""The settings of a run, built once from the parsed options: the rules that tie options to
models, their defaults, and the frozen record every command reads (nothing changes the parsed
options afterwards); the estimators' parameter names in the flags' words, for messages."""

from __future__ import annotations

import re
from typing import NamedTuple

from . import _dask

# the HDP's defaults, as in Python: gamma0, alpha0 and gamma0's prior "auto" (chosen by the
# documents' length, HDPMixture's Notes), alpha0's Gamma prior one value
AUTO, DEFAULT_GROUP_PRIOR = "auto", (1.0, 1.0)

# option dest -> (flag users typed, models it applies to, default once it applies)
_CLUSTER_OPTIONS = {
    "n_components": ("-k", ("dmm", "gmm"), 10),
    "select": ("--select", ("dmm",), None),
    "inference": ("--inference", ("dmm",), "vb"),
    "n_init": ("--n-init", ("dmm", "gmm"), {"dmm": 5, "gmm": 1}),
    "covariance_type": ("--covariance-type", ("gmm", "tree"), {"gmm": "full", "tree": "tied"}),
    "reg_covar": ("--reg-covar", ("gmm",), 1e-6),
    "merge_moves": ("--merge-moves", ("gmm",), False),
    "n_iter": ("--n-iter", ("hdp", "tree"), 100),
    "burn_in": ("--burn-in", ("hdp", "tree"), None),
    "n_chains": ("--n-chains", ("hdp", "tree"), 1),
    "word_prior": ("--word-prior", ("hdp",), None),
    "depth": ("--depth", ("tree",), 2),
    "margin_weight": ("--margin-weight", ("tree",), 0.0),
    "gamma0": ("--gamma0", ("hdp",), AUTO),
    "alpha0": ("--alpha0", ("hdp",), AUTO),
    "gamma0_prior": ("--gamma0-prior", ("hdp",), AUTO),
    "alpha0_prior": ("--alpha0-prior", ("hdp",), DEFAULT_GROUP_PRIOR),
    "groups": ("--groups", ("hdp",), None),
    "uncertainty": ("--uncertainty", ("dmm", "gmm", "hdp", "tree"), False),
}
# options for documents; refused where the input is points (gmm, hdp --groups)
_TEXT_OPTIONS = {"text_column": ("--text-column", "text"),
                 "stop_words": ("--stop-words", None),
                 "min_df": ("--min-df", 1),
                 "max_df": ("--max-df", None),  # None: by the input's kind (read_documents)
                 "max_features": ("--max-features", None)}

# recorded in summary.json's settings even when not given (the later ones only when given)
_RECORDED = ("text_column", "stop_words", "min_df")

# estimator parameter names -> the flags a CLI user knows them by, for error messages
_CLI_WORDS = {
    "n_components": "-k", "candidates": "--select", "n_init": "--n-init",
    "random_state": "--seed", "top_concentration_prior": "--gamma0-prior",
    "group_concentration_prior": "--alpha0-prior", "top_concentration": "--gamma0",
    "group_concentration": "--alpha0", "n_iter": "--n-iter", "burn_in": "--burn-in",
    "n_chains": "--n-chains", "word_prior": "--word-prior", "covariance_type":
    "--covariance-type", "reg_covar": "--reg-covar", "merge_moves": "--merge-moves",
    "inference": "--inference",
    "text_column": "--text-column", "label_column": "--label-column", "depth": "--depth",
    "margin_weight": "--margin-weight", "n_jobs": "--n-jobs", "min_df": "--min-df",
    "max_df": "--max-df", "max_features": "--max-features",
}


class Options:
    """The options of a run, every default filled in, read as attributes and never changed
    (:meth:`replace` makes another record: the cluster's ``client`` once it runs)."""

    __slots__ = ("_values",)

    def __init__(self, values):
        object.__setattr__(self, "_values", dict(values))

    def __getattr__(self, name):
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name, value):
        raise AttributeError(f"the settings of a run are frozen; cannot set {name}")

    def replace(self, **changes):
        return Options({**self._values, **changes})


class _Reading(Options):
    """The options while the rules read them: what they filled in shows at once."""

    def __init__(self, values):
        object.__setattr__(self, "_values", values)  # the rules' own dict, not a copy


class Settings(NamedTuple):
    options: Options  # every option, defaults filled in
    summary: dict  # the options the run uses, for summary.json (the run adds its figures)


def read_settings(parsed):
    """Refuse options that do not apply to the chosen model, fill in the defaults, and return
    the :class:`Settings`: the frozen options, and the record of every option the run uses,
    with its value, for ``summary.json``. ``parsed`` (argparse's Namespace) is left as it is.
    """
    values = dict(vars(parsed))
    args = _Reading(values)
    if args.command == "demo":
        return Settings(Options(values), dict(
            command="demo", input="classic3 (embedded)", model="dmm", n_components=3,
            seed=args.seed, top=args.top, **_threads(args)))
    points = False
    defaulted = set()  # the options left to their defaults
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
            if dest == "covariance_type" and value in ("known", "tied") and model == "gmm":
                raise ValueError(f"--covariance-type {value} applies to --model tree only (a "
                                 "Gaussian mixture estimates every component's covariance): "
                                 "use full, diag or spherical.")
            if value is None:
                values[dest] = default.get(model) if isinstance(default, dict) else default
                defaulted.add(dest)
            if model in models and not (dest == "n_components" and args.select is not None):
                settings[dest] = getattr(args, dest)
    else:
        settings.update(n_components=args.n_components, scan_all=args.scan_all,
                        coherence=args.coherence)
        if args.label_column is not None:
            if args.labels is not None:
                raise ValueError("--labels and --label-column both give the labels; give one.")
            settings["label_column"] = args.label_column
    if args.command == "cluster":
        for name in ("gamma0", "alpha0"):
            # --gamma0 (--alpha0) alone fixes the concentration; with its prior it is the start
            if name not in defaulted and name + "_prior" in defaulted:
                values[name + "_prior"] = None
                if name + "_prior" in settings:
                    settings[name + "_prior"] = None
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
            values[dest] = default
            defaulted.add(dest)
        if not points and (dest in _RECORDED or value is not None):
            settings[dest] = getattr(args, dest)
    if args.select is not None:
        settings["select"] = range_text(args.select)
    _dask.check(args, settings)
    settings.update(labels=args.labels, seed=args.seed, top=args.top, out=args.out,
                    **_threads(args))
    values["defaulted"] = frozenset(defaulted)
    return Settings(Options(values), settings)


def _threads(args):
    """``n_jobs`` for summary.json, when --n-jobs was given (results do not depend on it)."""
    return {} if args.n_jobs is None else {"n_jobs": args.n_jobs}


def range_text(candidates):
    """The searched range as ``LOW:HIGH`` or ``LOW:HIGH:STEP``, HIGH the last K searched."""
    text = f"{candidates[0]}:{candidates[-1]}"
    return text if candidates.step == 1 else f"{text}:{candidates.step}"


def cli_words(message):
    """Name the estimators' parameters in a message by the flags a CLI user typed."""
    message = re.sub(r"\(at most n_samples=(\d+)\)",  # the estimators' word for the rows
                     r"(at most the number of documents or points fitted, \1)", message)
    for name in sorted(_CLI_WORDS, key=len, reverse=True):
        message = re.sub(rf"(?<![\w-]){name}(?![\w-])", _CLI_WORDS[name], message)
    return message
