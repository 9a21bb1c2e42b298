"""The file formats under a corpus: text read whatever its encoding and compression, lists of
one entry per line, label files, delimiter sniffing, and where the counts of a folder lie; the
readers of :mod:`mixbayes.corpus`, of the CLI and of the sharded readers share them."""

from __future__ import annotations

import codecs
import csv
import glob
import gzip
import io
import os

import numpy as np

from ._validation import check_file

_SIDE_FILES = {"vocab.txt", "labels.txt", "doc_ids.txt"}

# the first bytes of the binary files most often given by mistake, for the refusal's message
_MAGIC = ((b"\x89PNG", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"),
          (b"%PDF", "a PDF document: extract its text first, e.g. pdftotext"),
          (b"PK\x03\x04", "a zip archive (or an .xlsx/.docx file): unzip or export it "
                           "as CSV/text first"),
          (b"BZh", "a bzip2 file: bunzip2 it first"),
          (b"\xfd7zXZ", "an xz file: unxz it first"),
          (b"\x93NUMPY", "a .npy array: load it with numpy"))


def binary_kind(data):
    """What the leading bytes of a file say it is (``"a PNG image"``), or None."""
    for magic, kind in _MAGIC:
        if data.startswith(magic):
            return kind
    return None


def read_text(path, name="path"):
    """The whole text of a UTF-8 file (gunzipped when ``*.gz`` or when its bytes are gzip's,
    whatever its name), refusing files that are not text.

    A file holding a NUL byte, or bytes that do not decode as UTF-8, is refused with a
    ``ValueError`` naming it: reading such a file with replacement characters would cluster
    garbage without a word of warning. UTF-16 with its byte-order mark (what Excel's "Unicode
    text" writes) is read as such.
    """
    opener = gzip.open if str(path).endswith(".gz") else open
    try:
        with opener(path, "rb") as handle:
            data = handle.read()
        if opener is open and data.startswith(b"\x1f\x8b"):  # gzip under another name
            data = gzip.decompress(data)
    except (OSError, EOFError) as exc:  # a truncated or fake .gz
        raise ValueError(f"{name}: cannot read {str(path)!r} ({exc}).") from None
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise ValueError(f"{name}: {str(path)!r} starts as UTF-16 text but does not decode "
                             f"as such ({exc.reason} at byte {exc.start}).") from None
        if "\x00" not in text:
            return text
        data = data[2:]  # not text after all: refused below for its NUL bytes
    kind = binary_kind(data)
    if kind is not None:
        raise ValueError(f"{name}: {str(path)!r} is not a text file: it looks like {kind}.")
    nul = data.find(b"\x00")
    if nul >= 0:
        raise ValueError(f"{name}: {str(path)!r} is not a text file (a NUL byte at offset {nul}).")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{name}: {str(path)!r} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
            f"{exc.start}); convert it first, e.g. iconv -f latin1 -t utf-8."
        ) from None

def read_lines(path, name="path"):
    # universal newlines, as a file opened in text mode reads them
    return [line.rstrip("\r\n") for line in io.StringIO(read_text(path, name), newline=None)]

def read_list(path, name="path"):
    """Lines of a side file (vocabulary, labels, ids), dropping a trailing empty line."""
    lines = read_lines(path, name)
    while lines and lines[-1] == "":
        lines.pop()
    return lines

DELIMITERS = (",", ";", "\t", "|")

_SNIFF_CHARS = 65536

def allow_long_fields(text):
    """Let the csv module read every field of ``text``, however long.

    Its default limit, 131,072 characters a field, is below some real documents (20 Newsgroups
    has one of 160,616). The limit is raised to the text's length (no field is longer), never
    lowered, and kept below 2**31 so that it fits a C long on every platform (``sys.maxsize``
    overflows it on Windows).
    """
    limit = min(len(text) + 1, 2**31 - 1)
    if csv.field_size_limit() < limit:
        csv.field_size_limit(limit)

# first-row names that mark a header in a labels (or groups) file, and the columns they name
_LABEL_COLUMNS = ("label", "labels", "class", "category", "target", "y", "group", "groups",
                  "topic", "cluster")

_ID_COLUMNS = ("id", "doc_id", "document", "doc", "index", "name", "file")

def sniff_delimiter(text):
    """The field delimiter of a delimited table's ``text``: one of ``, ; tab |``.

    Each candidate splits the first records (quotes respected, as the csv module reads
    them); a candidate is *consistent* when it gives every record the same number of fields,
    more than one. One consistent candidate is the answer. Of several, quoted fields decide
    (``csv.Sniffer`` restricted to them, which reads the delimiter beside the quotes); without
    quotes the comma comes last, because a comma inside a field is the usual reason for the
    tie (decimal commas in a semicolon file from European Excel, commas in prose). With none
    consistent (ragged rows), ``csv.Sniffer`` restricted to the four guesses; failing that, or
    for a single column, the comma.
    """
    sample = text[:_SNIFF_CHARS]
    if len(text) > _SNIFF_CHARS and "\n" in sample:
        sample = sample[:sample.rindex("\n")]  # whole lines only
    lines = [line for line in sample.splitlines() if line.strip() and not line.startswith("#")]
    sample = "\n".join(lines[:200])
    if not sample:
        return ","
    allow_long_fields(sample)
    consistent = []
    for delimiter in DELIMITERS:
        widths = {len(row) for row in csv.reader(io.StringIO(sample), delimiter=delimiter)
                  if row}
        if len(widths) == 1 and widths.pop() > 1:
            consistent.append(delimiter)
    if len(consistent) == 1:
        return consistent[0]
    if len(consistent) > 1 and '"' not in sample:
        return next(d for d in (";", "\t", "|", ",") if d in consistent)
    try:
        return csv.Sniffer().sniff(sample, delimiters="".join(consistent or DELIMITERS)).delimiter
    except csv.Error:
        return consistent[0] if consistent else ","

def read_labels(path):
    """Read one label per document (or point) from a file, in the input's order.

    The file holds one label per line, or is a table (``.csv``/``.tsv``, or any file whose
    first line names its columns) whose delimiter is detected: its column named ``label``
    (or labels, class, category, target, y, group, topic, cluster), or with two columns and
    no such name the second (``id,label``). A first line that is a header is skipped: a
    line naming a column so, or a word above a column of integers. Labels that all look like
    integers become integers.
    """
    return read_label_file(path)[0]

def read_label_file(path, name="labels"):
    """``read_labels`` and the header row it skipped (None when there was none)."""
    path = check_file(path, name)
    if os.path.isdir(path):
        raise ValueError(f"{name}: {path!r} is a folder; give a file with one label per line.")
    lines = read_list(path, name)
    if not lines:
        return np.asarray([], dtype=int), None
    delimiter = sniff_delimiter("\n".join(lines[:200]))
    allow_long_fields(max(lines, key=len))
    first = next(csv.reader([lines[0]], delimiter=delimiter))
    named = [f.strip().lower() in _LABEL_COLUMNS + _ID_COLUMNS for f in first]
    table = len(first) > 1 and (any(named) or path.endswith((".csv", ".csv.gz", ".tsv",
                                                               ".tsv.gz")))
    header = None
    if table:
        rows = [[f.strip() for f in row] for row in csv.reader(lines, delimiter=delimiter)]
        widths = {len(row) for row in rows}
        if len(widths) > 1:
            bad = next(i for i, row in enumerate(rows) if len(row) != len(rows[0]))
            raise ValueError(f"{name}: {path!r} line {bad + 1} has {len(rows[bad])} fields; "
                             f"the first line has {len(rows[0])}.")
        names = [f.lower() for f in rows[0]]
        wanted = [j for j, n in enumerate(names) if n in _LABEL_COLUMNS]
        if wanted:
            column = wanted[0]
        elif len(names) == 2:
            column = 1
        else:
            raise ValueError(f"{name}: {path!r} has {len(names)} columns; name the one holding "
                             "the labels 'label' in a header row, or give one label per line.")
        if any(named) or _header_above_integers([row[column] for row in rows]):
            header, rows = rows[0], rows[1:]
        labels = [row[column] for row in rows]
        header = None if header is None else header[column]
    else:
        labels = lines
        if (lines[0].strip().lower() in _LABEL_COLUMNS and lines[0] not in lines[1:]) or (
                _header_above_integers(labels)):
            header, labels = labels[0], labels[1:]
    try:
        return np.asarray([int(v) for v in labels]), header
    except ValueError:
        return np.asarray(labels, dtype=str), header

def label_count_message(name, path, n_labels, header, n, what):
    """The error for a labels (or groups) file whose length is not the input's."""
    message = (f"{name}: {path!r} holds {n_labels} {'entry' if n_labels == 1 else 'entries'}"
               f"{' (after its header row)' if header is not None else ''} but the input has "
               f"{n} {what}; give one per line, in the input's order")
    if header is None and n_labels == n + 1:
        message += " (if its first line is a header, name the column 'label')"
    return message + "."

def _header_above_integers(values):
    """Whether ``values[0]`` is a word above a column of integers (a header row)."""
    def integer(v):
        try:
            int(v)
        except ValueError:
            return False
        return True

    return len(values) > 1 and not integer(values[0]) and all(integer(v) for v in values[1:])

def write_list(path, values):
    with open(path, "w", encoding="utf-8") as out:
        for value in values:
            out.write(f"{value}\n")

def count_file(path):
    """The count-matrix file :func:`read_corpus` reads for ``path`` and its format, as
    ``(file, "mtx" or "uci")``: ``path`` itself when it names a Matrix Market or UCI docword
    file, the one a folder holds (``counts.mtx*``, else any ``*.mtx*``, else
    ``docword.*.txt*``); None when ``path`` holds text."""
    name = os.path.basename(path)
    if os.path.isdir(path):
        found = sorted(glob.glob(os.path.join(path, "counts.mtx*"))) + sorted(
            glob.glob(os.path.join(path, "*.mtx*"))
        )
        docword = sorted(glob.glob(os.path.join(path, "docword.*.txt*")))
        if found:
            return found[0], "mtx"
        return (docword[0], "uci") if docword else None
    if name.lower().endswith((".mtx", ".mtx.gz")):
        return path, "mtx"
    return (path, "uci") if name.lower().startswith("docword.") else None

# the largest count matrix a reader builds: column indices are int32 (see check_counts), and a
# header announcing more rows than this would make scipy allocate (or loop over) a row pointer
# of that length before a single entry is read
_MAX_SIDE = 2**31 - 1

_MAX_DENSE_ENTRIES = 2**27  # a dense Matrix Market array is read whole: 1 GiB of int64

def check_announced_shape(path, n_rows, n_cols, dense):
    if n_rows > _MAX_SIDE or n_cols > _MAX_SIDE:
        raise ValueError(f"path: {path!r} announces {n_rows} x {n_cols} entries; at most "
                         f"{_MAX_SIDE} rows and columns are supported.")
    if dense and n_rows * n_cols > _MAX_DENSE_ENTRIES:
        raise ValueError(f"path: {path!r} announces a dense {n_rows} x {n_cols} array; store "
                         "counts this large in coordinate (sparse) format.")
