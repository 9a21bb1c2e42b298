"""What ``mixbayes predict`` reads: new documents on the saved vocabulary, new points in the
model's columns. Each reader returns ``(data, ids, notes, facts)``: what the model reads, the
items' ids, what the user should know, and the figures for ``summary.json``."""

from __future__ import annotations

import numpy as np

from .._validation import plural

UNKNOWN_LISTED = 100  # unknown words kept in summary.json, the most frequent first


def read_new_documents(args, model, saved):
    """The documents of ``args.input`` as counts on the model's terms (``saved``: the
    :class:`~mixbayes.vocabulary.Vocabulary` of the model file, or None)."""
    from .._formats import count_file
    from ..corpus import raw_text_options
    from ._inputs import _looks_numeric, as_input_error

    path, notes = args.input, []
    counts_given = count_file(path) is not None
    if path.endswith(".npy"):
        raise ValueError(f"input: {path!r} holds an array of points, but a "
                         f"{type(model).__name__} was fitted to documents; give documents.")
    try:
        if saved is None:
            if not counts_given:
                raise ValueError(
                    f"model file: {args.model!r} holds no vocabulary (saved by a mixbayes "
                    "before format 2, or without one), so the words of new text cannot be "
                    "matched to its terms: fit it again with mixbayes cluster or topics, "
                    "which save it, or give the documents as counts in the model's columns (a "
                    ".mtx or docword file).")
            return _positional(args, model, notes)
        if counts_given:
            mapped = saved.read(path)
        elif saved.preprocessing is None or saved.preprocessing.tokens is None:
            notes.append("the model was fitted to counts; the text is read as raw text (words "
                         "of two or more letters, e-mail headers dropped, lower-cased) and its "
                         "words matched to the model's terms")
            mapped = _read_raw(saved, path, args, raw_text_options())
        else:
            mapped = saved.read(path, text_column=args.text_column)
    except ValueError as exc:
        if "text_column" in str(exc) and _looks_numeric(path):
            raise ValueError(f"input: {path!r} is a table of numbers, but the "
                             f"{type(model).__name__} was fitted to documents; give "
                             "documents.") from None
        mapped = _lines_of_prose(args, saved, notes) if "text_column" in str(exc) else None
        if mapped is None:
            raise as_input_error(_in_cli_words(exc, path)) from None
    facts = dict(n_terms=len(saved), tokens=mapped.tokens, known=mapped.known_tokens,
                 stop=mapped.stop_tokens, unknown=mapped.unknown_tokens,
                 unknown_terms=[str(t) for t in mapped.unknown_terms[:UNKNOWN_LISTED]])
    words = mapped.words_per_document
    facts.update(empty=int(np.sum(words == 0)), words=words)
    return mapped.counts, mapped.corpus.doc_ids, notes, facts


def _lines_of_prose(args, saved, notes):
    """A ``.csv`` input that is prose, not a table (no ``--text-column`` given), mapped one
    document a line, as ``mixbayes cluster`` reads it; None where it looks like a table."""
    from .._formats import read_list
    from ..corpus import raw_text_options
    from ._inputs import _not_a_table, prose_note

    shape = args.text_column is None and _not_a_table(args.input)
    if not shape:
        return None
    fitted_to_text = saved.preprocessing is not None and saved.preprocessing.tokens is not None
    options = {} if fitted_to_text else raw_text_options()
    notes.append(prose_note(args.input, shape))
    return saved.texts(read_list(args.input, "input"), **options)


def _read_raw(saved, path, args, options):
    """The text of ``path`` read with ``options`` and mapped onto the saved terms."""
    from ..corpus import read_corpus
    from ..vocabulary import Vocabulary

    column = args.text_column or "text"
    corpus = read_corpus(path, text_column=column, **options)
    return Vocabulary(saved.terms, None).map(corpus)


def _positional(args, model, notes):
    """Counts of a file saved without a vocabulary: the input's columns taken as the model's,
    when there are as many."""
    from ..corpus import read_corpus

    corpus = read_corpus(args.input)
    p = model.n_features_in_
    if corpus.n_terms != p:
        raise ValueError(f"input: {args.input!r} has {plural(corpus.n_terms, 'term')} but the "
                         f"{type(model).__name__} was fitted to {p}, and its file names no "
                         "terms to match them by.")
    notes.append(f"{args.model} holds no vocabulary: the input's {plural(p, 'column')} are "
                 "taken as the model's, in order")
    words = np.asarray(corpus.counts.sum(axis=1)).ravel().astype(np.int64)
    total = int(words.sum())
    facts = dict(n_terms=p, tokens=total, known=total, stop=0, unknown=0, unknown_terms=[],
                 empty=int(np.sum(words == 0)), words=words)
    return corpus.counts, corpus.doc_ids, notes, facts


def _in_cli_words(exc, path):
    """A library message in the command's words, naming the input."""
    message = str(exc)
    if not message.startswith(("input: ", "path: ", "model file: ", "--")):
        message = f"input: {path!r}: {message}"
    if "Vocabulary.map" in message:
        message = (message.split(";")[0] + "; give the new documents as counts in the model's "
                   "terms (a .mtx file with its vocab.txt).")
    message = message.replace("text_column=", "--text-column ")
    return type(exc)(message)


def read_new_points(args, model, saved):
    """The points of ``args.input`` in the model's columns (found by name when both the file
    and the model name them)."""
    from ._inputs import _DOCUMENTS_HINT, read_points

    expected = None if saved is None else [str(t) for t in saved.terms]
    try:
        X, names, notes = read_points(args.input, drop_columns=args.drop_column or (),
                                      min_points=1, features=expected)
    except ValueError as exc:  # the reader advises a fit of documents; here the model is given
        raise ValueError(str(exc).replace(_DOCUMENTS_HINT, f"the {type(model).__name__} was "
                                          "fitted to points: give points")) from None
    p = model.n_features_in_
    name = type(model).__name__
    if expected is not None and names is not None and list(names) != expected:
        missing = [column for column in expected if column not in names]
        if missing:
            # both lists named as whose they are: "(its columns: 'x', 'y', 'z')" after a
            # file of columns a, b, c read as if the file held x, y and z
            raise ValueError(f"input: {args.input!r} lacks the column(s) "
                             f"{', '.join(map(repr, missing))} that the {name} was fitted to "
                             f"(the model's columns: {', '.join(map(repr, expected))}; the "
                             f"file's: {', '.join(map(repr, names))}).")
        left_out = [column for column in names if column not in expected]
        X = X[:, [list(names).index(column) for column in expected]]
        if left_out or not any(n.startswith("the model's columns taken by name") for n in notes):
            notes.append("the model's columns taken by name" + (
                f"; left out: {', '.join(map(repr, left_out))}" if left_out else " (reordered)"))
    elif X.shape[1] != p:
        fitted = f" ({', '.join(map(repr, expected))})" if expected is not None else ""
        if not str(args.input).lower().endswith(".npy"):
            advice = "the same columns (leave others out with --drop-column)"
        else:  # an array has no columns to drop: say the shape to save
            advice = f"an array of shape (n_points, {p})"
            if X.shape[1] == 1:
                advice += (f" (a 1-D array is one column: save a single point as shape (1, {p}))"
                           if X.shape[0] == p else " (a 1-D array is one column)")
        raise ValueError(f"input: {args.input!r} has {plural(X.shape[1], 'column')} of numbers "
                         f"but the {name} was fitted to {plural(p, 'feature')}{fitted}; give "
                         f"{advice}.")
    ids = np.arange(X.shape[0]).astype(str)
    return X, ids, notes, dict(n_features=p)
