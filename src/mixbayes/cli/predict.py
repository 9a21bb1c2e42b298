"""``mixbayes predict MODEL INPUT``: a saved model applied to new documents or points.

Documents (a model of words: the Dirichlet-multinomial mixture, the topic model) are read with
the reader the fit used and split as the saved preprocessing says; their words are matched to
the vocabulary saved with the model (:class:`mixbayes.vocabulary.Vocabulary`), the others
dropped and counted. Points (the Gaussian mixture, the tree) are read as ``cluster`` reads
them; their columns are those the model was fitted to (found by name in a header row when the
model file names them). The predictions go to ``predictions.csv`` in ``--out`` (with
``summary.json``), or to the one file ``-o FILE`` names (``-o -``: standard output):

* a mixture: ``id, cluster, probability`` (of that cluster), then ``p_cluster0`` ... (every
  cluster's), and for documents ``words`` (of the vocabulary, in the document);
* the topic model: ``id, topic0`` ... (the document's topic weights), ``main_topic`` (empty for
  a document without a word of the vocabulary: its weights are the prior's, all equal),
  ``words``;
* the tree: ``id, leaf``.

The HDP mixture, a sampler of the data it was fitted to, has no prediction and is refused.
"""

from __future__ import annotations

import os
import sys

import numpy as np

from .._validation import plural

PREDICTIONS = "predictions.csv"


def add_parser(sub):
    """The command's options, on the subcommand parser it adds to ``sub``."""
    predict = sub.add_parser(
        "predict", allow_abbrev=False, help="apply a saved model to new documents or points",
        description="Assign new documents or points with a saved model (a model.npz written by "
        "cluster or topics): documents are read as the fitted ones were and their words matched "
        "to the saved vocabulary (the others dropped, and counted); points need the model's "
        "columns. Writes predictions.csv (and summary.json) to --out, or one CSV to -o FILE.")
    predict.add_argument("model", help="a model.npz written by mixbayes (cluster, topics; or the "
                         "--out folder holding it) or "
                         "mixbayes.save")
    predict.add_argument("input", help="new documents in any format cluster reads (.txt, .csv "
                         "with a text column, a folder of .txt files, .mtx with vocab.txt, UCI "
                         "docword), or new points (.csv, .npy) for a model of points")
    where = predict.add_mutually_exclusive_group()
    where.add_argument("--out", default=None, metavar="DIR",
                       help="output folder for predictions.csv and summary.json (default: "
                       "mixbayes-predict)")
    where.add_argument("-o", "--output", default=None, metavar="FILE",
                       help="write the predictions to this one CSV file instead (- for "
                       "standard output; the summary then goes to standard error) (default: "
                       "none, --out)")
    predict.add_argument("--force", action="store_true",
                         help="replace an earlier run's files in --out, or the -o file "
                         "(default: refuse)")
    predict.add_argument("--text-column", default=None, metavar="NAME",
                         help="documents: the CSV column holding the text (default: the one "
                         "the model was fitted with, else text)")
    predict.add_argument("--drop-column", action="append", default=None, metavar="NAME",
                         help="points: a column of INPUT to leave out, by name or number from "
                         "1; repeat it for several (default: none; with a header row, columns "
                         "the model does not name are left out anyway)")
    return predict


def run(parsed, stream):
    """The command, on the parsed options (frozen: nothing changes them)."""
    from ._settings import Options

    return run_predict(Options(vars(parsed)), stream)


def run_predict(args, stream):
    """Read, predict and write; returns the exit status."""
    from ._inputs import read_model, read_vocabulary

    model = read_model(args.model)
    page, view = model._report_kind
    name = type(model).__name__
    if view == "sampled":
        raise ValueError(f"model file: the {name} has no prediction for new data (a sampler "
                         "clusters the data it was fitted to): run mixbayes cluster again on "
                         "the old and new data together, or cluster with --model dmm "
                         "(documents) or gmm (points), which predict.")
    saved = read_vocabulary(args.model)
    if not os.path.exists(args.input):
        raise ValueError(f"input: no file or folder named {args.input!r}.")
    documents = page == "terms"
    if documents and args.drop_column:
        raise ValueError(f"--drop-column is for points; a {name} was fitted to documents.")
    if not documents and args.text_column is not None:
        raise ValueError(f"--text-column is for documents; a {name} was fitted to points.")
    from ._inputs import check_text_column
    from ._predicting import read_new_documents, read_new_points

    if args.text_column is not None:
        check_text_column(args.input)

    read = read_new_documents if documents else read_new_points
    data, ids, notes, facts = read(args, model, saved)
    header, rows, assigned = _predictions(model, view, data, ids, facts.get("words"))
    summary_stream = sys.stderr if args.output == "-" else stream
    text = _summary_lines(model, args, documents, notes, facts, assigned)
    if args.output is not None:
        _write_one_file(args, header, rows, stream)
    else:
        _write_folder(args, model, header, rows, facts, assigned, text)
    where = "standard output" if args.output == "-" else (args.output or
                                                         os.path.join(_out(args), PREDICTIONS))
    for line in text + [f"predictions written to {where}"]:
        print(line, file=summary_stream)
    return 0


def _out(args):
    return args.out if args.out is not None else "mixbayes-predict"


def _predictions(model, view, data, ids, words):
    """The CSV's header, its rows (a list) and every item's cluster, topic or leaf."""
    extra = ["words"] if words is not None else []
    if view == "topics":
        from ..topics import main_topics
        from ._outputs import topic_cell

        weights = model.transform(data)
        assigned = main_topics(weights)
        header = ["id"] + [f"topic{k}" for k in range(weights.shape[1])] + ["main_topic"] + extra
        rows = [[ids[i]] + [f"{v:.6g}" for v in weights[i]] + [topic_cell(assigned[i])]
                + ([int(words[i])] if extra else []) for i in range(weights.shape[0])]
        return header, rows, assigned
    if view == "tree":
        assigned = model.predict(data)
        return ["id", "leaf"], [[ids[i], int(k)] for i, k in enumerate(assigned)], assigned
    proba = model.predict_proba(data)
    assigned = proba.argmax(axis=1)
    header = (["id", "cluster", "probability"] + [f"p_cluster{k}" for k in range(proba.shape[1])]
              + extra)
    rows = [[ids[i], int(k), f"{proba[i, k]:.6f}"] + [f"{v:.6f}" for v in proba[i]]
            + ([int(words[i])] if extra else []) for i, k in enumerate(assigned)]
    return header, rows, assigned


def _summary_lines(model, args, documents, notes, facts, assigned):
    unit = "document" if documents else "point"
    what = {"topics": "main topic", "tree": "leaf"}.get(model._report_kind[1], "cluster")
    lines = [f"note: {note}" for note in notes]
    lines.append(f"{plural(len(assigned), unit, spec=',')} assigned by the {type(model).__name__} of "
                 f"{args.model}")
    if documents:
        lines.append(_words_line(facts))
        if facts["empty"]:
            given = ("the prior's equal topic weights, no main topic" if what == "main topic"
                     else "the model's weights alone")
            lines.append(f"{plural(facts['empty'], 'document')} without a word of the vocabulary "
                         f"(given {given}; 'words' is 0 in the file)")
    values, counts = np.unique(assigned, return_counts=True)
    order = np.argsort(-counts, kind="stable")
    shown = ", ".join(f"{values[j] if values[j] >= 0 else 'none'}: {counts[j]}"
                      for j in order[:20])
    lines.append(f"{unit}s per {what}: {shown}" + (", ..." if order.size > 20 else ""))
    return lines


def _words_line(facts):
    tokens, known = facts["tokens"], facts["known"]
    dropped = []
    if facts["stop"]:
        dropped.append(plural(facts["stop"], "stop word", spec=","))
    if facts["unknown"]:
        examples = ", ".join(facts["unknown_terms"][:5])
        more = ", ..." if len(facts["unknown_terms"]) > 5 else ""
        dropped.append(f"{plural(facts['unknown'], 'word', spec=',')} outside it ({examples}{more})")
    line = (f"words: {known:,} of {tokens:,} in the model's vocabulary of "
            f"{plural(facts['n_terms'], 'term', spec=',')}")
    return line + (f"; dropped {' and '.join(dropped)}" if dropped else "")


def _write_one_file(args, header, rows, stream):
    """``-o FILE``: the CSV alone, written atomically (``-``: to ``stream``)."""
    import csv
    import io

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    if args.output == "-":
        stream.write(buffer.getvalue())
        return
    target = args.output
    if os.path.isdir(target):
        raise ValueError(f"-o: {target!r} is a folder; name the CSV file to write, or use --out "
                         "DIR.")
    if os.path.exists(target) and not args.force:
        raise ValueError(f"-o: {target!r} already exists; choose another name, or pass --force "
                         "to replace it.")
    folder = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(folder):
        raise ValueError(f"-o: the folder {folder!r} does not exist.")
    from ..persist import write_atomically

    data = buffer.getvalue().encode("utf-8")
    write_atomically(target, lambda handle: handle.write(data))


def _write_folder(args, model, header, rows, facts, assigned, text):
    """``--out DIR``: predictions.csv and summary.json, staged and moved in at the end."""
    from ._outputs import OutputFolder, write_json, write_rows

    out = _out(args)
    summary = dict(settings=dict(command="predict", model=args.model, input=args.input,
                                 text_column=args.text_column,
                                 drop_columns=args.drop_column or [], out=out),
                   model_class=type(model).__name__, n_predicted=int(len(assigned)),
                   **{key: value for key, value in facts.items() if key != "words"},
                   summary=text)
    with OutputFolder(out, force=args.force) as folder:
        write_rows(folder.file(PREDICTIONS), header, rows)
        write_json(folder.file("summary.json"), summary)
