"""``mixbayes report`` (and ``--report`` on ``cluster`` and ``topics``): the interactive HTML
report of a fitted model, one self-contained file (see :mod:`mixbayes.report`).

``mixbayes report MODEL.npz [--corpus INPUT] [--out report.html]`` reads the model with the
vocabulary saved with it (which names the terms), and the documents or points it was fitted to
when ``--corpus`` names them: read as the saved preprocessing says (matched to the saved terms),
or, for a file saved without one or when ``--stop-words``, ``--min-df``, ``--max-df``,
``--max-features`` or ``--text-column`` is given, as ``cluster`` and ``topics`` read them with
those options. A model of words with no vocabulary at all gets a warning (on the page too). A
``selection.csv`` beside the model (written by ``--select``) draws the choice of K.
"""

from __future__ import annotations

import csv
import os
import re
import sys

from .._validation import plural
from ._parser import add_text_options

REPORT_FILE = "report.html"


def add_parser(sub):
    """The command's options, on the subcommand parser it adds to ``sub``."""
    report = sub.add_parser(
        "report", allow_abbrev=False, help="write an interactive HTML report of a saved model",
        description="Write one self-contained HTML file (no network needed) showing a saved "
        "model: a map of its clusters or topics, the selected one's top terms by relevance "
        "(or its points and ellipse, or the tree), sizes, the choice of K (from a "
        "selection.csv beside the model), the convergence trace and example documents.")
    report.add_argument("model", help="a model.npz written by mixbayes (cluster, topics; or the "
                         "--out folder holding it) or "
                        "mixbayes.save")
    report.add_argument("--corpus", default=None, metavar="INPUT",
                        help="the documents or points the model was fitted to, in any format "
                        "cluster and topics read (as the model file says they were read): adds "
                        "example documents, draws the points, names the terms of a file saved "
                        "without its vocabulary (default: none)")
    report.add_argument("--out", default="report.html", metavar="FILE",
                        help="the HTML file to write (default: %(default)s)")
    report.add_argument("--force", action="store_true",
                        help="replace --out when it exists (default: refuse)")
    add_text_options(report)
    report.add_argument("--drop-column", action="append", default=None, metavar="NAME",
                        help="points: a column of --corpus to leave out (a class column of text, "
                        "as --label-column or --drop-column left it out of the fit), by name or "
                        "number from 1; repeat it for several (default: none)")
    return report


def run(parsed, stream):
    """The command, on the parsed options (frozen: nothing changes them)."""
    from ._settings import Options

    return run_report(Options(vars(parsed)), stream)

def run_report(args, stream):
    """The ``report`` command; returns the exit status."""
    from ..report import NO_VOCABULARY
    from ._inputs import read_model, read_vocabulary

    model = read_model(args.model)
    saved = read_vocabulary(args.model)
    target = args.out
    if os.path.isdir(target):
        raise ValueError(f"--out: {target!r} is a folder; name the report's file, e.g. "
                         f"{os.path.join(target, REPORT_FILE)!r}.")
    if os.path.exists(target) and not args.force:
        raise ValueError(f"--out: {target!r} already exists; choose another name, or pass "
                         "--force to replace it.")
    data, options = None, {}
    words = _is_of_words(model)
    if args.corpus is not None:
        data, options = _read_data(model, args, saved)
    elif words and saved is not None:
        options["vocabulary"] = saved.terms
    elif saved is not None:  # points: the columns' names the fit saved (not x1, x2, ...)
        options["feature_names"] = [str(t) for t in saved.terms]
    elif words:
        print(f"warning: {NO_VOCABULARY.replace('mixbayes report --corpus INPUT', '--corpus INPUT')}",
              file=sys.stderr)
    selection, note = _selection_beside(args.model, model)
    if selection is not None:
        options["selection"] = selection
    folder = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(folder):
        raise ValueError(f"--out: the folder {folder!r} does not exist.")
    _write(model, target, data, options)
    if note:
        print(f"note: {note}", file=stream)
    size = os.path.getsize(target)
    print(f"report of the {type(model).__name__} written to {target} ({size / 1e3:,.0f} kB); "
          "open it in a browser (it needs no network)", file=stream)
    return 0


def write_run_report(args, out, model, data, **options):
    """``--report`` on ``cluster`` and ``topics``: report.html into the run's folder (of a
    sample of the documents when they stay on a cluster)."""
    if getattr(args, "report", False):
        from ._sharded import report_data

        data, sample = report_data(data)
        _write(model, out.file(REPORT_FILE), data, dict(options, **sample))


def _write(model, path, data, options):
    from ..report import write_report

    try:
        write_report(model, path, data, **options)
    except ValueError as exc:  # name the command's flags, not the function's arguments
        message = str(exc)
        if message.startswith("data: "):
            message = "--corpus: " + message[len("data: "):]
        left_out = getattr(data, "left_out", 0)
        if left_out and "documents but the model was fitted to" in message:
            # a model fitted in Python may hold the empty documents the command leaves out
            ones = "one" if left_out == 1 else "ones"
            message = re.sub(r"(the corpus has \S+ documents?)", r"\1 (after leaving out "
                             f"its {left_out} empty {ones}, as cluster and topics do)", message,
                             count=1)
        message = message.replace("(the same stop words and minimum document frequency)",
                                  "(the same --stop-words, --min-df, --max-df, --max-features and "
                                  "--text-column)")
        raise ValueError(message) from None


def _is_of_words(model):
    return getattr(model, "_report_kind", ("",))[0] == "terms"


_TEXT_FLAGS = ("text_column", "stop_words", "min_df", "max_df", "max_features")


def _read_data(model, args, saved=None):
    """The documents or points of ``--corpus``: read as the ``saved`` vocabulary's
    preprocessing says when it says (and no text option is given), else as the fitting command
    read them with the options given."""
    import argparse

    from ._inputs import (_DOCUMENTS_HINT, _POINTS_HINT, _looks_numeric, check_text_column,
                          read_documents, read_points)

    name = type(model).__name__
    documents = _is_of_words(model)
    if documents and args.corpus.endswith(".npy"):
        raise ValueError(f"--corpus: {args.corpus!r} holds points, but a {name} was fitted to "
                         "documents; give the documents it was fitted to.")
    if documents and args.drop_column:
        raise ValueError(f"--drop-column is for points; a {name} was fitted to documents.")
    if documents and args.text_column is not None:
        check_text_column(args.corpus)
    if not documents:
        for flag in _TEXT_FLAGS:
            if getattr(args, flag) is not None:
                raise ValueError(f"--{flag.replace('_', '-')} is for documents; a {name} was "
                                 "fitted to points.")
    try:
        if documents and _as_saved(saved, args):
            return _saved_reading(saved, args.corpus), {}
        if documents:
            settings = argparse.Namespace(input=args.corpus, labels=None,
                                          text_column=args.text_column or "text",
                                          stop_words=args.stop_words, min_df=args.min_df or 1,
                                          max_df=args.max_df, max_features=args.max_features)
            corpus, _, left_out = read_documents(settings)
            corpus.left_out = left_out  # named if the number of documents differs
            return corpus, {}
        if not os.path.exists(args.corpus):
            raise ValueError(f"input: no file named {args.corpus!r}.")
        features = None if saved is None else [str(t) for t in saved.terms]
        X, names, _ = read_points(args.corpus, drop_columns=args.drop_column or (),
                                  features=features)
        return X, dict(feature_names=names)
    except ValueError as exc:  # the readers name the file "input"; here it is --corpus
        message = str(exc)
        if (documents and ("text_column" in message or "table of numbers" in message)
                and _looks_numeric(args.corpus)):
            raise ValueError(f"--corpus: {args.corpus!r} is a table of numbers (points); a "
                             f"{name} was fitted to documents: give the documents it was "
                             "fitted to (their text, or counts).") from None
        if message.startswith("input: "):
            message = "--corpus: " + message[len("input: "):]
        message = re.sub(r"use a column of text \(classes\?\) as the labels with "
                         r"--label-column (.+?), or leave it out", "leave it out", message)
        # the readers advise a fit of another model; here the model is given: say what differs
        hint = _DOCUMENTS_HINT if not documents else _POINTS_HINT
        if hint in message:
            kind = "points" if not documents else "documents"
            message = message.replace(
                hint, f"a {name} was fitted to {kind}: give the {kind} it was fitted to")
        if not documents and "points are read from" in message:
            message += f" (a {name} was fitted to points)"
        raise ValueError(message) from None


def _as_saved(saved, args):
    """Whether ``--corpus`` is read as the saved preprocessing says: there is one, it can be
    repeated, and no text option asks for another reading."""
    if saved is None or saved.preprocessing is None or saved.preprocessing.unsaved:
        return False
    return all(getattr(args, flag) is None for flag in _TEXT_FLAGS)


def _saved_reading(saved, path):
    """The documents of ``path`` on the saved terms, without those left empty (as the fit left
    them out: on its own terms a document is empty exactly when the fit's filters emptied
    it)."""
    import numpy as np

    from ..corpus import Corpus
    from ._inputs import as_input_error

    if not os.path.exists(path):
        raise ValueError(f"input: no file named {path!r}.")
    try:
        corpus = saved.read(path).corpus
    except (ValueError, OSError) as exc:
        raise as_input_error(exc) from None
    keep = np.flatnonzero(np.diff(corpus.counts.indptr) > 0)
    kept = Corpus(corpus.counts[keep], corpus.vocabulary, corpus.doc_ids[keep], None,
                  corpus.preprocessing)
    kept.left_out = int(corpus.n_documents - keep.size)  # named if the number differs
    return kept


def _selection_beside(model_path, model):
    """The rows of ``selection.csv`` in the model's folder when they chose this model's K;
    returns ``(rows or None, a note or None)``."""
    path = os.path.join(os.path.dirname(os.path.abspath(model_path)), "selection.csv")
    if not os.path.isfile(path) or not hasattr(model, "n_components"):
        return None, None
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
        ks = [int(float(row["k"])) for row in rows]
    except (OSError, ValueError, KeyError, TypeError):
        return None, f"{path} is not a selection table; the choice of K is not drawn"
    if model.n_components not in ks:
        return None, (f"{path} covers K = {ks[0]}..{ks[-1]}, not the model's K = "
                      f"{model.n_components}; the choice of K is not drawn")
    return rows, f"the choice of K drawn from {path} ({plural(len(rows), 'candidate')})"
