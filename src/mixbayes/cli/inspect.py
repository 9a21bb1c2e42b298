"""``mixbayes inspect``: what a saved model file is, in a few lines.

Kind, settings, size, fitted figures (K, the ELBO or log posterior, iterations, convergence)
and the top terms of every component or topic (at most :data:`SHOWN`), named by the vocabulary
saved with the model (``cluster`` and ``topics`` save it; ``--vocabulary FILE`` names them
instead), else column numbers, with a note; and how the text became counts. A file that
is not a mixbayes model, or was written by a newer mixbayes, is refused by
:func:`mixbayes.load` with its one-line error.
"""

from __future__ import annotations

import json

import numpy as np

from .._validation import plural
from ._outputs import SHOWN
from ._parser import positive_int

_HDP = ("hierarchical Dirichlet process mixture", "cluster")
# what a model is and what it calls its parts, by the kind it declares (``_report_kind``: its
# report page and view, as mixbayes.report reads it; no class name is branched on)
_KINDS = {
    ("terms", "clusters"): ("Dirichlet-multinomial mixture (one cluster per document)",
                            "cluster"),
    ("gaussian", "clusters"): ("variational Gaussian mixture", "component"),
    ("terms", "topics"): ("topic model (every document mixes topics)", "topic"),
    ("terms", "sampled"): _HDP,
    ("gaussian", "sampled"): _HDP,
    ("tree", "tree"): ("tree of clusters (nested CRP + hierarchical DP)", "node"),
}


def add_parser(sub):
    """The command's options, on the subcommand parser it adds to ``sub``."""
    inspect = sub.add_parser("inspect", allow_abbrev=False,
                             help="say what a saved model file is",
                             description="Print a saved model's kind, settings, size, fitted "
                             "figures and top terms.")
    inspect.add_argument("model", help="a model.npz written by mixbayes (cluster, topics; or the "
                         "--out folder holding it) or "
                         "mixbayes.save")
    inspect.add_argument("--vocabulary", default=None, metavar="FILE",
                         help="one term per line (e.g. the corpus's vocab.txt), to name the "
                         "top terms (default: the vocabulary saved with the model; column "
                         "numbers for a file saved without one)")
    inspect.add_argument("--top", type=positive_int, default=10, metavar="N",
                         help="top terms shown per cluster or topic (default: %(default)s)")
    return inspect


def run(parsed, stream):
    """The command, on the parsed options (frozen: nothing changes them)."""
    from ._settings import Options

    return run_inspect(Options(vars(parsed)), stream)

def run_inspect(args, stream):
    """Print the summary of ``args.model`` to ``stream``; returns the exit status."""
    from .._formats import read_list
    from ._inputs import read_model, read_vocabulary

    model = read_model(args.model)
    saved = read_vocabulary(args.model)
    vocabulary = None if saved is None else saved.terms
    if args.vocabulary is not None:
        vocabulary = read_list(args.vocabulary, "--vocabulary")
        if len(vocabulary) != model.n_features_in_:
            raise ValueError(f"--vocabulary: {args.vocabulary!r} lists "
                             f"{plural(len(vocabulary), 'term')} but the model has "
                             f"{model.n_features_in_}.")
    given = "--vocabulary" if args.vocabulary is not None else None
    for line in describe(model, args.model, vocabulary, args.top, saved, given):
        print(line, file=stream)
    return 0


def describe(model, path, vocabulary=None, top=10, saved=None, given=None):
    """The lines :func:`run_inspect` prints: ``vocabulary`` names the terms (``given``: the
    flag it came from, None when it is the one ``saved`` with the model, a
    :class:`~mixbayes.vocabulary.Vocabulary`)."""
    declared = model._report_kind
    kind, unit = _KINDS[declared]
    meta = _meta(path)
    lines = [f"{path}: {type(model).__name__}, {kind}; saved by mixbayes "
             f"{meta.get('version', '?')} (file format {meta.get('format', '?')})",
             "settings: " + _settings(model)]
    lines += _figures(model, declared, unit)
    if declared == ("terms", "topics"):  # a K chosen by --select: the table's iterations too
        lines[-1] += _scan_iterations(model, path)
    lines += _reading(model, saved)
    lines += _top_terms(model, declared, unit, vocabulary, top, given)
    return lines


def _reading(model, saved):
    """What the file says about the features: how text became the terms, or the points'
    column names."""
    if saved is None:
        return []
    if getattr(model, "_report_kind", ("",))[0] != "terms":
        names = ", ".join(saved.terms[:8]) + (", ..." if len(saved) > 8 else "")
        return [f"features: {names}"]
    if saved.preprocessing is None:
        return [f"vocabulary: {plural(len(saved), 'term', spec=',')} (saved; how they were read is not "
                "known)"]
    return [f"vocabulary: {plural(len(saved), 'term', spec=',')} (saved), from "
            f"{saved.preprocessing.describe()}"]


def _meta(path):
    """The file's metadata (already checked by :func:`~mixbayes.load`)."""
    import os

    if not os.path.exists(path) and os.path.isfile(path + ".npz"):
        path += ".npz"
    with np.load(path, allow_pickle=False) as data:
        return json.loads(str(data["__meta__"]))


def _settings(model):
    def text(value):
        if isinstance(value, float):
            return f"{value:g}"
        if isinstance(value, (list, tuple, np.ndarray)):
            if np.size(value) <= 4:  # a prior's (shape, rate), a mean of a few features
                return "(" + ", ".join(text(v.item() if hasattr(v, "item") else v)
                                       for v in np.ravel(value)) + ")"
            return f"array of {np.size(value)}"
        return str(value)

    params = model.get_params(deep=False)
    shown = {key: text(value) for key, value in params.items() if key != "verbose"}
    for key, value in _resolved_defaults(model, params).items():
        if key.endswith("concentration_prior"):  # the HDP's Gamma prior, or none (fixed)
            value = "fixed" if value is None else f"Gamma{text(value)}"
        shown[key] += f" ({text(value)})"  # None said nothing of what the fit used
    return ", ".join(f"{key}={value}" for key, value in sorted(shown.items()))


def _resolved_defaults(model, params):
    """The values the fit used for parameters left to None or "auto": the samplers' burn-in,
    the HDP's concentrations, their prior and word prior (by the regime the data chose)."""
    resolved = {}
    if params.get("burn_in", 0) is None and hasattr(model, "_burn_in"):
        resolved["burn_in"] = model._burn_in()
    from ..hdp.model import AUTO, HDPMixture, fitted_defaults

    if isinstance(model, HDPMixture):
        values = fitted_defaults(model)
        for name in ("top_concentration", "group_concentration", "top_concentration_prior",
                     "moves"):
            if isinstance(params[name], str) and params[name] == AUTO:
                resolved[name] = values[name]
        if params["word_prior"] is None and params["kernel"] == "categorical":
            resolved["word_prior"] = values["word_prior"]
    return resolved


def _converged(flag):
    return "converged" if flag else "NOT converged (raise max_iter)"


def _scan_iterations(model, path):
    """The words the report's subtitle adds when the selection table beside the model counts
    the scan's coarse iterations too ('' without one): inspect said 'after 30 iterations' where
    summary.json and the table said 53."""
    from ..report import coarse_iterations_note
    from .report import _selection_beside

    rows, _ = _selection_beside(path, model)
    return "" if rows is None else coarse_iterations_note(model, rows, int(model.n_components))


def _figures(model, declared, unit):
    page, view = declared
    p = model.n_features_in_
    if view == "tree":
        chains, sweeps = model.trace_.shape
        rhat = float(model.rhat_.get("rcdll", float("nan")))
        verdict = "settled" if round(rhat, 2) <= 1.1 else "NOT settled (raise n_iter)"
        return [f"size: {plural(len(model.labels_), 'point')} x {plural(p, 'feature')} -> "
                f"depth {model.depth_}, {model.tree_.describe()}, "
                f"{plural(model.n_components_, 'component')}" + (
                    f" (one known variance, {model.observation_variance_:.3g})"
                    if model.covariance_type == "known"
                    else f" ({model.covariance_type} covariances)"),
                f"fit: {plural(chains, 'chain')} x {plural(sweeps, 'sweep')}; best regularised "
                f"complete-data log-likelihood {model.best_rcdll_:.6g}; split R-hat {rhat:.3g}, "
                f"{verdict}"]
    if view == "sampled":
        categorical = page == "terms"
        data = (f"{plural(model.n_groups_, 'document')} x {plural(p, 'term')}" if categorical
                else f"{plural(len(model.labels_), 'point')} in {plural(model.n_groups_, 'group')}"
                f" x {plural(p, 'feature')}")
        chains, sweeps = model.trace_.shape
        log_joint = model.trace_["log_joint"][:, -1]
        rhat = float(model.rhat_["log_joint"])
        # the fit's own warnings (trend tests) first; a split R-hat above 1.1 with none of
        # them is still no settled chain (one chain of 40 sweeps read "R-hat 1.27; settled")
        verdict = (f"NOT settled: {model.convergence_warnings_[0]}"
                   if model.convergence_warnings_ else
                   "NOT settled: its split R-hat is above 1.1 (raise n_iter)"
                   if round(rhat, 2) > 1.1 else "settled (no convergence warning)")
        if getattr(model, "short_groups_", False):
            from ..hdp.model import SHORT_GROUP_TOKENS

            data += (f" (short: under {SHORT_GROUP_TOKENS} tokens a document on average, "
                     "so the short-text defaults)")
        return [f"size: {data} -> {plural(model.n_components_, unit)}",
                f"fit: {plural(chains, 'chain')} x {plural(sweeps, 'sweep')}; final log joint "
                f"{', '.join(f'{v:.6g}' for v in log_joint)}; R-hat of the log joint "
                f"{rhat:.3g}; {verdict}"]
    if view == "topics":
        return [f"size: {plural(model.doc_topic_.shape[0], 'document')} x {plural(p, 'term')} "
                f"-> {plural(model.n_components, unit)}",
                f"fit: log posterior {model.log_posterior_:.6g} after "
                f"{plural(model.n_iter_, 'iteration')}, {_converged(model.converged_)}"]
    n = len(model.labels_)
    if page == "gaussian":
        size = (f"size: {plural(n, 'point')} x {plural(p, 'feature')} -> "
                f"{plural(model.n_components, unit)} ({model.n_effective_components_} in use, "
                f"{model.covariance_type} covariance)")
    else:
        used = int(np.count_nonzero(np.bincount(model.labels_, minlength=model.n_components)))
        size = (f"size: {plural(n, 'document')} x {plural(p, 'term')} -> "
                f"{plural(model.n_components, unit)} ({used} holding documents)")
    return [size, f"fit: ELBO {model.elbo_:.6g} after {plural(model.n_iter_, 'iteration')}, "
            f"{_converged(model.converged_)}"]


def _top_terms(model, declared, unit, vocabulary, top, given=None):
    page, view = declared
    if view == "tree":
        sizes = model.node_size_
        order = [z for z in np.argsort(-sizes, kind="stable") if z != 0]
        return _more([f"{unit} {z} (level {model.node_level_[z]}, parent "
                      f"{model.node_parent_[z]}): {plural(int(sizes[z]), 'point')}"
                      for z in order[:SHOWN]], len(order), unit)
    if page == "gaussian":
        if view == "sampled":  # the Gaussian HDP: its components' sizes and means
            sizes = np.bincount(model.labels_, minlength=model.n_components_)
            order = np.argsort(-sizes, kind="stable")
            return _more([f"{unit} {k}: {plural(int(sizes[k]), 'point')}, mean "
                          f"{_vector(model.components_[k])}" for k in order[:SHOWN]],
                         len(order), unit)
        order = np.argsort(-model.weights_, kind="stable")
        in_use = model._in_use()
        used, off = order[in_use[order]], order[~in_use[order]]
        lines = _more([f"{unit} {k}: weight {model.weights_[k]:.3f}, mean "
                       f"{_vector(model.means_[k])}" for k in used[:SHOWN]], len(used), unit)
        if off.size:  # at the prior, every one alike: a line for them all
            lines.append(f"{plural(off.size, unit)} switched off (less than half a point "
                         f"each, weight at most {model.weights_[off].max():.3g})")
        return lines
    names = np.arange(model.n_features_in_) if vocabulary is None else vocabulary
    words = model.top_words(names, n=top)
    if view == "topics":
        share = model.usage_
        notes = [f"usage {v:.3f}" for v in share]
    elif view == "sampled":
        share = np.bincount(model.group_labels_, minlength=model.n_components_)
        notes = [plural(int(v), "document") for v in share]
    else:
        share = model.weights_
        notes = [f"weight {v:.3f}" for v in share]
    header = "top terms by probability" + (
        f" (named by {given})" if given and vocabulary is not None else
        "" if vocabulary is not None else " (column numbers: the file stores no vocabulary; "
        "--vocabulary FILE names them)") + ":"
    order = np.argsort(-share, kind="stable")
    lines = [header] + [f"  {unit} {k} ({notes[k]}): "
                        f"{' '.join(str(w) for w in words[k])}" for k in order[:SHOWN]]
    if len(order) > SHOWN:
        lines.append(f"  ... and {plural(len(order) - SHOWN, unit)} more")
    return lines


def _more(lines, total, unit):
    """``lines`` (the first :data:`SHOWN` of ``total``), and how many were left out."""
    if total > len(lines):
        lines.append(f"... and {plural(total - len(lines), unit)} more")
    return lines


def _vector(values, shown=4):
    text = ", ".join(f"{v:.3g}" for v in values[:shown])
    return f"({text}{', ...' if len(values) > shown else ''})"
