"""Reading what the command line is given: documents, points, labels and groups.

Every failure is a ``ValueError`` naming the file and, for tables, the line and column
(both 1-based, counting every line of the file) so that the user can open it and look.
"""

from __future__ import annotations

import csv
import io
import os
import re

import numpy as np

from .._validation import first_few, plural

_RAW_TEXT = (".txt", ".txt.gz", ".csv", ".csv.gz")
RAW_TEXT_MAX_DF = 0.5  # --max-df's default for raw text (max_df_of)
_MISSING = ("NA", "NAN", "NULL", "?")
_LABEL_NAMES = ("class", "classes", "label", "labels", "target", "species", "category")
_DOCUMENTS_HINT = ("cluster documents with --model dmm or hdp (or fit topics), or give a table "
                   "of numbers")
_POINTS_HINT = ("cluster points with --model gmm or --model tree (--label-column NAME for a "
                "class column), or points within groups with --model hdp --groups FILE")


def _is_raw_text(path):
    """Whether ``path`` holds raw text to tokenise (not a count matrix)."""
    name = os.path.basename(os.fspath(path))
    if os.path.isdir(path):
        import glob

        return not (glob.glob(os.path.join(path, "*.mtx*"))
                    or glob.glob(os.path.join(path, "docword.*.txt*")))
    return name.lower().endswith(_RAW_TEXT) and not name.lower().startswith("docword.")


def stop_words_of(option, raw_text):
    """``--stop-words``: None (keep all), "english", or the words of a file."""
    from .._formats import read_text
    from .._validation import check_file

    if option is None:
        return "english" if raw_text else None
    if option.lower() == "none":
        return None
    if option.lower() == "english":
        return "english"
    if not os.path.isfile(option):
        raise ValueError(f"--stop-words must be english, none or a file of words; no file "
                         f"named {option!r}.")
    words = read_text(check_file(option, "--stop-words"), "--stop-words").split()
    if not words:
        raise ValueError(f"--stop-words: {option!r} holds no words.")
    return words


def max_df_of(args, raw_text):
    """``--max-df``: as given, else half the documents for raw text (words in most of them say
    little about any cluster) and none dropped for count matrices (their maker chose the
    terms)."""
    given = args.max_df
    return given if given is not None else (RAW_TEXT_MAX_DF if raw_text else 1.0)


def _looks_numeric(path):
    """Whether a CSV looks like a table of points, not documents: a data row of numbers, or of
    numbers but for one cell (a class column, as R and UCI ship iris or Vehicle). Asked only
    once its text column is missing, to say which model reads it."""
    from .._formats import allow_long_fields, read_text, sniff_delimiter

    text = read_text(path, "input")
    allow_long_fields(text)
    delimiter = sniff_delimiter(text)
    decimal_comma = delimiter != ","
    for row in csv.reader(io.StringIO(text, newline=""), delimiter=delimiter):
        numbers = sum(_all_numbers([cell], decimal_comma) for cell in row)
        if row and numbers == len(row):
            return True
        if numbers >= 2 and numbers >= len(row) - 1:
            return True
    return False


def _columns_of(path):
    """``"3 columns"``: the fields of the first line of a numeric table."""
    from .._formats import read_text, sniff_delimiter

    text = read_text(path, "input")
    first = next((line for line in text.splitlines() if line.strip()), "")
    return plural(len(next(csv.reader([first], delimiter=sniff_delimiter(text)))), "column")


def _not_a_table(path):
    """Why a CSV file without a text column is not a table (one document a line, named
    ``.csv``), or None when it looks like one: its rows split into differing numbers of fields,
    or into one field, while its first row does not name columns (short names of a few words,
    one of which ``--text-column`` could give)."""
    from .._formats import read_text, sniff_delimiter

    text = read_text(path, "input")
    delimiter = sniff_delimiter(text)
    lines = [line for line in text.splitlines() if line.strip()][:200]
    rows = [row for row in csv.reader(io.StringIO("\n".join(lines), newline=""),
                                      delimiter=delimiter) if row]
    widths = sorted({len(row) for row in rows})
    if not rows or (len(widths) == 1 and widths[0] > 1):
        return None
    if all(0 < len(field.strip()) <= 30 and len(field.split()) <= 3 for field in rows[0]):
        return None  # a header row: its names are the columns to choose from
    shown = "\\t" if delimiter == "\t" else delimiter
    if len(widths) == 1:
        return f"its first line, {lines[0][:30]!r}..., names no column"
    return (f"its lines split at {shown!r} into {widths[0]} to {widths[-1]} fields, not the "
            "same number on every line")


def prose_note(path, shape):
    """The note for a ``.csv`` file read one document a line (``shape``: :func:`_not_a_table`'s
    reason), the same from every command."""
    return (f"{os.path.basename(path)} does not look like a table ({shape}); read as one "
            "document per line")


def read_documents(args):
    """The corpus of ``args.input`` with ``--labels``, ``--stop-words`` and ``--min-df``
    applied and its empty documents left out (blank lines, or nothing left after the filters:
    no model has anything to say about them, and every command treats them alike); returns
    ``(corpus, stop_words_used, n_left_out)``.

    On a cluster (``args.client``), a docword or Matrix Market file is read by the workers and
    stays there: the corpus is then a :class:`mixbayes.distributed.ShardedCorpus`, filtered
    by the same calls as a :class:`mixbayes.Corpus` here.
    """
    from ._sharded import count_file, read_sharded

    path = args.input
    if path.lower().endswith(".npy"):
        raise ValueError(f"input: {path!r} holds an array of points, not documents; "
                         f"{_POINTS_HINT}.")
    label_column = getattr(args, "label_column", None)
    if label_column is not None and not path.lower().endswith((".csv", ".csv.gz")):
        raise ValueError(f"--label-column names a column of a CSV file; {path!r} is not one "
                         "(give the labels with --labels FILE).")
    if "text_column" not in getattr(args, "defaulted", ("text_column",)):
        check_text_column(path)
    source = count_file(args)
    raw = source is None and os.path.exists(path) and _is_raw_text(path)
    corpus = read_sharded(args, source) if source is not None else _read_here(args, raw)
    notes = getattr(corpus, "notes", None)
    if args.labels is not None:
        corpus = corpus.with_labels(read_sidecar(args.labels, "labels", corpus.n_documents,
                                                 "documents"))
    stop_words = stop_words_of(args.stop_words, raw)
    max_df = max_df_of(args, raw)
    max_features = args.max_features
    if stop_words is not None or args.min_df != 1 or max_df != 1.0 or max_features:
        corpus = corpus.drop_terms(stop_words=stop_words, min_df=args.min_df, max_df=max_df,
                                   max_features=max_features)
    n_documents = corpus.n_documents
    corpus = corpus.drop_empty_documents()
    if corpus is None:
        raise empty_corpus_error(path)
    if notes and source is None:
        corpus.notes = notes
    return corpus, stop_words, int(n_documents - corpus.n_documents)


def _read_here(args, raw):
    """The :class:`mixbayes.Corpus` of ``args.input``, read in this process (``raw``: text,
    tokenised with the raw-text options)."""
    from ..corpus import raw_text_options, read_corpus

    path = args.input
    label_column = getattr(args, "label_column", None)
    words = raw_text_options() if raw else {}
    try:
        if path.lower().endswith((".csv", ".csv.gz")):
            try:
                return read_corpus(path, text_column=args.text_column,
                                   label_column=label_column, **words)
            except ValueError as exc:
                if "text_column" in str(exc) and _looks_numeric(path):
                    raise ValueError(f"input: {path!r} is a table of numbers "
                                     f"({_columns_of(path)}) with no {args.text_column!r} "
                                     "column of text: documents in a CSV are a column of "
                                     "text, and counts are read from .mtx (with vocab.txt) or "
                                     f"UCI docword files; {_POINTS_HINT}.") from None
                shape = ("text_column" in str(exc)
                         and "text_column" in getattr(args, "defaulted", ())
                         and _not_a_table(path))
                if not shape:
                    raise  # main names text_column as --text-column
                from .._formats import read_list
                from ..corpus import Corpus

                corpus = Corpus.from_texts(read_list(path, "input"), **words)
                corpus.notes = [prose_note(path, shape)]
                return corpus
        corpus = read_corpus(path, **words)
        if os.path.isdir(path):
            corpus.notes = _folder_notes(path)
        return corpus
    except (ValueError, OSError) as exc:  # read_corpus names its argument "path"
        raise as_input_error(exc) from None


def check_text_column(path):
    """Refuse ``--text-column`` given for an input that is not a CSV file (a .txt file is one
    document per line: the option was silently ignored)."""
    if not str(path).lower().endswith((".csv", ".csv.gz")):
        raise ValueError(f"--text-column names the text column of a CSV file; {path!r} is not "
                         "one (a .txt file is one document per line).")


def _folder_notes(path):
    """A note naming the files of a folder of documents that were not read (only its .txt
    files are documents: a .csv or .md beside them was left out without a word)."""
    from ..corpus import folder_documents, folder_other_files, folder_subfolders

    read, other, inside = folder_documents(path), folder_other_files(path), folder_subfolders(path)
    if not other and not inside:
        return []
    left = ([f"{plural(len(other), 'other file')} left out ({first_few(other)})"]
            if other else [])
    left += ([f"{plural(len(inside), 'subfolder')} not read ({first_few(inside)})"]
             if inside else [])
    return [f"{plural(len(read), 'document')} read from the folder's .txt files; "
            f"{' and '.join(left)}: only .txt files directly in a folder are documents"]


def as_input_error(exc):
    """A reader's error naming its argument ``path`` as the command's ``input`` (others as they
    are)."""
    if not str(exc).startswith("path: "):
        return exc
    return type(exc)("input: " + str(exc)[len("path: "):])


def empty_corpus_error(path):
    return ValueError(f"input: every document of {path!r} is empty (after dropping stop words "
                      "and rare terms).")


def read_points(path, label_column=None, drop_columns=(), min_points=2, features=None):
    """Points from a ``.npy`` file or a delimited table of numbers.

    The delimiter (``, ; tab |``, else runs of spaces) is detected; with a delimiter other
    than the comma, decimal commas are read too (``1,5;2,25``, as European Excel writes). An
    optional header row names the columns; a first column named as an identifier (id, name,
    point_id, ...), or a row index (unnamed, or named index, holding 0, 1, 2, ... or 1, 2, 3,
    ... as pandas and R write one), is left out, with a note. ``label_column`` (a column's
    name, or its number from 1) is taken out of the table as the points' labels, and the
    columns of ``drop_columns`` are left out (``--label-column``, ``--drop-column``: a class
    column of text, as R and UCI ship tables). Returns ``(X, names, notes)``, and the labels
    after them when ``label_column`` is given: an (n, d) float array with no missing,
    NaN or infinite value, the column names (None without a header; a blank or repeated name
    is made unique, as ``x3`` or ``a.1``) and what the reader did that the user should know.
    Fewer than ``min_points`` points are refused (clustering needs 2; a prediction 1).
    ``features`` (a fitted model's column names): when the header row names them all, the
    other columns are left out before any value is read (the id and class columns of the
    table the model was fitted to), with a note. A column is numbered in messages as in the
    file, from 1, whatever was left out before it.
    """
    from .._formats import DELIMITERS, allow_long_fields, read_text, sniff_delimiter
    from .._validation import check_file

    path = check_file(path, "input")
    if os.path.isdir(path):
        raise ValueError(f"input: {path!r} is a folder; points are read from a .csv or .npy file.")
    suffix = path.lower()  # Windows writes .CSV as often as .csv
    if suffix.endswith(".npy"):
        if label_column is not None or drop_columns:
            flag = "--label-column" if label_column is not None else "--drop-column"
            raise ValueError(f"{flag} names a column of a table; {path!r} is an array (.npy).")
        return _two_points(_points_from_npy(path), path, min_points), None, []
    tables = (".csv", ".txt", ".tsv", ".data", ".dat")  # .data: the UCI repository's tables
    if not suffix.endswith(tables + tuple(t + ".gz" for t in tables)):
        raise ValueError(f"input: points are read from .csv or .npy files (or tables named "
                         f".txt, .tsv, .data, .dat); got {path!r}.")
    text = read_text(path, "input")
    allow_long_fields(text)
    lines = [(number, line) for number, line in enumerate(text.splitlines(), start=1)
             if line.strip() and not line.startswith("#")]
    delimiter = (sniff_delimiter(text) if any(d in line for _, line in lines[:200]
                                              for d in DELIMITERS) else None)
    decimal_comma = delimiter not in (",", None)
    header, rows = None, []
    for number, line in lines:
        fields = ([v.strip() for v in next(csv.reader([line], delimiter=delimiter))]
                  if delimiter else line.split())
        rows.append((number, fields))
    if rows and _is_header(rows, decimal_comma):
        header, rows = rows[0][1], rows[1:]
    if not rows:
        raise ValueError(f"input: {path!r} holds no points (the file is empty or has a header "
                         "row only).")
    number, fields = rows[0]
    present = [f for f in fields if f and f.upper() not in _MISSING]
    if present and not any(_all_numbers([f], decimal_comma) for f in present):
        raise ValueError(f"input: {path!r} line {number} is not numbers ({fields[0][:30]!r} ...):"
                         f" it looks like text; {_DOCUMENTS_HINT}.")
    notes = []
    width = len(header) if header is not None else len(rows[0][1])
    for number, fields in rows:
        if len(fields) != width:
            raise ValueError(f"input: {path!r} line {number} has {plural(len(fields), 'value')}"
                             f"; expected {width} (as on the {'header' if header else 'first'} "
                             "row).")
    labels, chosen = None, bool(label_column is not None or drop_columns)
    at = list(range(width))  # each column's place in the file (the messages number it so)
    if chosen:
        keep = list(range(width))
        label_at = (None if label_column is None else
                    _column_of(label_column, "--label-column", header, width, path))
        for name in drop_columns:
            j = _column_of(name, "--drop-column", header, width, path)
            if j == label_at:
                raise ValueError(f"--drop-column {name!r} is the --label-column.")
            if j in keep:
                keep.remove(j)
        if label_at is not None:
            keep.remove(label_at)
            labels = _as_labels([fields[label_at] for _, fields in rows])
        if not keep:
            raise ValueError(f"input: {path!r} has no column left after --label-column and "
                             "--drop-column.")
        header = None if header is None else [header[j] for j in keep]
        rows = [(number, [fields[j] for j in keep]) for number, fields in rows]
        width, at = len(keep), [at[j] for j in keep]
    if (features is not None and header is not None and set(features) <= set(header)
            and len(header) > len(features)):
        keep = [j for j, name in enumerate(header) if name in set(features)]
        notes.append("the model's columns taken by name; left out: " + ", ".join(
            repr(name) for name in header if name not in set(features)))
        header = [header[j] for j in keep]
        rows = [(number, [fields[j] for j in keep]) for number, fields in rows]
        width, at = len(keep), [at[j] for j in keep]
    elif header is not None and len(header) > 1 and _is_id_name(header[0]):
        notes.append(f"column {at[0] + 1} ({header[0]!r}) identifies the points; it is left "
                     "out of the features")
        header, rows = header[1:], [(number, fields[1:]) for number, fields in rows]
        width, at = width - 1, at[1:]
    values = np.empty((len(rows), width))
    for i, (number, fields) in enumerate(rows):
        for j, field in enumerate(fields):
            where = f"input: {path!r} line {number}, column {at[j] + 1}" + (
                f" ({header[j]!r})" if header is not None else "")
            if field == "" or field.upper() in _MISSING:
                shown = f" ({field!r})" if field else ""
                raise ValueError(f"{where}: a missing value{shown}; remove or impute the row "
                                 "first.")
            try:
                values[i, j] = _number(field, decimal_comma)
            except ValueError:
                if _GROUPED.match(field):
                    raise ValueError(
                        f"{where}: {field[:30]!r} is a number written with thousands "
                        "separators; write it without them (as 1234.5, or 1234,5 in a table "
                        "separated by ';' or tabs).") from None
                name = header[j] if header is not None else str(at[j] + 1)
                raise ValueError(
                    f"{where}: {field[:30]!r} is not a number; points are numbers in every "
                    f"column: use a column of text (classes?) as the labels with --label-column "
                    f"{name}, or leave it out with --drop-column {name}.") from None
            if not np.isfinite(values[i, j]):
                raise ValueError(f"{where}: {field!r} is not a finite number.")
    if (features is None or header is None or header[0] not in features) and (
            header is not None and width > 1 and _is_row_index(header[0], values[:, 0])):
        notes.append(f"column {at[0] + 1} ({header[0]!r}) numbers the rows {values[0, 0]:.0f}, "
                     f"{values[1, 0]:.0f}, ... (a row index, as pandas and R write one); it is "
                     "left out of the features")
        values, header, at = values[:, 1:], header[1:], at[1:]
    if features is None and header is not None and width > 1:
        for j, name in enumerate(header):  # a class or id column of numbers would be clustered
            column = values[:, j]
            if (label_column is None and name.strip().lower() in _LABEL_NAMES
                    and np.all(column == np.round(column)) and np.unique(column).size <= 20):
                notes.append(f"column {at[j] + 1} ({name!r}) is named as known labels but is "
                             f"clustered as a feature; give --label-column {name} to score "
                             f"against it, or --drop-column {name}")
            elif _is_id_name(name):  # an id column read as one only when it comes first
                notes.append(f"column {at[j] + 1} ({name!r}) is named as an identifier but is "
                             f"clustered as a feature (only a first column is left out); give "
                             f"--drop-column {name}")
    result = (_two_points(values, path, min_points), None if header is None else _unique_names(header),
              notes)
    return result if label_column is None else result + (labels,)


def read_labelled_points(args):
    """The points of ``args.input`` and their labels (``--labels FILE`` or ``--label-column``;
    None without either), ``--drop-column`` applied; returns ``(X, names, notes, labels)``."""
    label_column = getattr(args, "label_column", None)
    drop = getattr(args, "drop_column", None) or ()
    if label_column is not None and args.labels is not None:
        raise ValueError("--labels and --label-column both give the labels; give one.")
    if label_column is not None:
        return read_points(args.input, label_column, drop)
    X, names, notes = read_points(args.input, drop_columns=drop)
    labels = (read_sidecar(args.labels, "labels", X.shape[0], "points")
              if args.labels is not None else None)
    return X, names, notes, labels


def _is_header(rows, decimal_comma):
    """Whether the first row names the columns: it is not all numbers, and (when the second
    row has numbers) it has a word where the second row has a number, so that a table without
    a header whose class column is text keeps its first point."""
    first = rows[0][1]
    if _all_numbers(first, decimal_comma):
        return False
    if len(rows) < 2 or len(rows[1][1]) != len(first):
        return True
    numeric = [j for j, f in enumerate(rows[1][1]) if _all_numbers([f], decimal_comma)]
    return not numeric or not _all_numbers([first[j] for j in numeric], decimal_comma)


def _column_of(name, flag, header, width, path):
    """The index of column ``name`` (as in the header row, else its number from 1)."""
    if header is not None and name in header:
        return header.index(name)
    if name.isdigit() and 1 <= int(name) <= width:
        return int(name) - 1
    columns = f"columns: {header}" if header is not None else (
        f"it has no header row: give a column number from 1 to {width}")
    raise ValueError(f"{flag}: {name!r} is not a column of {path!r}; {columns}.")


def _as_labels(values):
    """Labels read from a column: integers when they all are, else the text."""
    try:
        return np.asarray([int(v) for v in values])
    except ValueError:
        return np.asarray(values, dtype=str)


def _two_points(X, path, minimum=2):
    """``X``, refused with the file named when it holds a single point (no model clusters
    one: the priors are scaled by the points' spread) and ``minimum`` is 2."""
    if X.shape[0] < minimum:
        raise ValueError(f"input: {path!r} holds a single point; clustering needs at least 2.")
    return X


def _is_id_name(name):
    """Whether a column named ``name`` identifies the rows (id, name, point_id, ...): never a
    feature, whatever it holds (an id of numbers was clustered as one)."""
    name = name.strip().lower()
    return name in ("id", "ids", "name") or name.endswith(("_id", " id"))


def _is_row_index(name, column):
    """Whether a column named ``name`` is a row index: no name (or id, index, row) over the
    row numbers counted from 0 or 1."""
    if name.strip().lower() not in ("", "id", "index", "row", "rownames", "unnamed: 0"):
        return False
    return column.size > 1 and any(np.array_equal(column, np.arange(start, start + column.size))
                                   for start in (0, 1))


def _unique_names(header):
    names, seen = [], {}
    for j, name in enumerate(header):
        name = name or f"x{j + 1}"
        if name in seen:
            seen[name] += 1
            name = f"{name}.{seen[name]}"
        seen.setdefault(name, 0)
        names.append(name)
    return names


# 1,234 or 1,234.5 (or 1.234,5; 1 234; 1'234): digits in groups of three, as spreadsheets
# format numbers for reading, which ``float`` refuses.
_GROUPED = re.compile(r"^[+-]?\d{1,3}(?:([,.' ])\d{3})(?:\1\d{3})*(?:(?!\1)[.,]\d+)?$")


def _number(field, decimal_comma=False):
    """``float(field)``, reading ``1,5`` as 1.5 when ``decimal_comma``."""
    if decimal_comma and field.count(",") == 1 and "." not in field:
        field = field.replace(",", ".")
    return float(field)


def _all_numbers(fields, decimal_comma=False):
    try:
        [_number(v, decimal_comma) for v in fields]
    except ValueError:
        return False
    return True


def _points_from_npy(path):
    with open(path, "rb") as handle:
        if handle.read(6) != b"\x93NUMPY":
            raise ValueError(f"input: {path!r} is not a .npy file (it lacks the format's "
                             "signature).")
    try:
        X = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise ValueError(f"input: {path!r} is not a readable .npy array ({exc}).") from None
    if not isinstance(X, np.ndarray) or X.dtype.kind not in "biuf":
        raise ValueError(f"input: {path!r} holds {getattr(X, 'dtype', type(X))} values; points "
                         "must be real numbers.")
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2 or X.size == 0:
        raise ValueError(f"input: {path!r} holds an array of shape {X.shape}; points need "
                         "shape (n_points, n_features) with at least one of each.")
    X = X.astype(float)
    bad = np.argwhere(~np.isfinite(X))
    if bad.size:
        row, column = bad[0] + 1
        raise ValueError(f"input: {path!r} row {row}, column {column}: {X[tuple(bad[0])]} is "
                         f"not a finite number ({plural(len(bad), 'such value', 'such values')} in all).")
    return X


def read_sidecar(path, name, n, what):
    """One label (or group) per document or point from ``path`` (a header row skipped, see
    :func:`mixbayes.corpus.read_labels`); its length must be ``n``."""
    from .._formats import label_count_message, read_label_file

    values, header = read_label_file(path, f"--{name}")
    if values.shape != (n,):
        raise ValueError(label_count_message(f"--{name}", path, values.size, header, n, what))
    return values


def read_vocabulary(path):
    """:func:`mixbayes.persist.load_vocabulary` of the command's MODEL argument (None for a
    file saved without one), its errors naming the model file."""
    from ..persist import load_vocabulary

    try:
        return load_vocabulary(path)
    except ValueError as exc:
        raise _as_model_error(exc) from None


def _as_model_error(exc):
    message = str(exc)
    if message.startswith("path: "):
        return type(exc)("model file: " + message[len("path: "):])
    return exc


def read_model(path):
    """:func:`mixbayes.load` of the command's MODEL argument, its errors naming the model file
    (``load`` names its own argument, ``path``, which the command line never shows)."""
    from ..persist import load

    try:
        return load(path)
    except (ValueError, OSError) as exc:  # OSError: a missing or unreadable file
        raise _as_model_error(exc) from None


def left_out_text(left_out):
    """", after N empty documents left out" where some were, for messages about -k."""
    return f", after {plural(left_out, 'empty document')} left out" if left_out else ""


def check_k(k, n_documents, left_out):
    """A ``-k`` the user gave above the documents with words is an error that says how many
    had words (the same words for clusters and topics)."""
    if k is not None and k > n_documents:
        raise ValueError(f"-k must be an integer in [1, {n_documents}] (at most the number of "
                         f"documents or points fitted, {n_documents}"
                         f"{left_out_text(left_out)}); got {k}.")
