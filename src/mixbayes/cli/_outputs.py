"""Writing a run's files and printing its summary, the same way for every command."""

from __future__ import annotations

import csv
import json
import os
import shutil
import tempfile

import numpy as np

from .._validation import plural
from ..persist import umask

# every file some run writes: what --force may replace in a folder used before
OUTPUT_FILES = ("assignments.csv", "clusters.json", "topics.json", "doc_topics.csv",
                "model.npz", "summary.json", "selection.csv", "trace.csv", "convergence.png",
                "top_words.png", "selection.png", "scatter.png", "trace.png", "report.html",
                "predictions.csv")
SHOWN = 20  # clusters or topics printed; the rest are in the JSON file


class OutputFolder:
    """Stage a run's files in a hidden folder beside ``--out``; move them in only when the
    run succeeds, so that a failed run leaves ``--out`` as it was and a reused folder never
    mixes two runs' files.

    An existing, non-empty ``--out`` is refused unless ``force``, which removes the files an
    earlier run wrote there (other files are left alone) before this run's move in. While the
    run lasts it holds a lock on ``--out`` (a hidden ``.mixbayes-lock-NAME`` file beside it,
    removed at the end; the lock itself goes with the process, however it ends), so that a
    second run into the same folder, ``--force`` or not, is refused at its start instead of
    silently replacing the first one's files. Without ``force``, a folder that received files
    from elsewhere during the run is refused at its end too, this run's files left staged.
    """

    def __init__(self, target, force=False):
        self.target = os.fspath(target)
        self.force = force
        self.path = None
        self._lock = None

    def __enter__(self):
        if os.path.exists(self.target) and not os.path.isdir(self.target):
            raise ValueError(f"--out: {self.target!r} is a file, not a folder.")
        parent = os.path.dirname(os.path.abspath(self.target))
        try:
            os.makedirs(parent, exist_ok=True)
        except OSError as exc:
            raise _uncreatable(self.target, parent, exc) from None
        self._lock = _lock(parent, os.path.basename(os.path.abspath(self.target)), self.target)
        try:
            if _holds_files(self.target) and not self.force:
                raise ValueError(f"--out: {self.target!r} already holds files; choose another "
                                 "folder, or pass --force to replace an earlier run's files.")
            try:
                self.path = tempfile.mkdtemp(prefix=".mixbayes-partial-", dir=parent)
                # the folder becomes --out: the mode mkdir gives (0o777 less the umask), not
                # the private 0o700 of a temporary folder
                os.chmod(self.path, 0o777 & ~umask())
            except OSError as exc:
                raise _uncreatable(self.target, parent, exc) from None
        except BaseException:
            _unlock(self._lock)
            raise
        return self

    def file(self, name):
        """The staged path of output file ``name``."""
        return os.path.join(self.path, name)

    def __exit__(self, kind, value, traceback):
        try:
            if kind is not None:
                shutil.rmtree(self.path, ignore_errors=True)
                return False
            if _holds_files(self.target) and not self.force:
                raise ValueError(f"--out: {self.target!r} received files from elsewhere during "
                                 f"this run; this run's files are left in {self.path!r} (move "
                                 "them, or run again with --force).")
            if not os.path.isdir(self.target):
                os.replace(self.path, self.target)
                return False
            for name in OUTPUT_FILES:
                old = os.path.join(self.target, name)
                if os.path.isfile(old):
                    os.unlink(old)
            for name in os.listdir(self.path):
                os.replace(os.path.join(self.path, name), os.path.join(self.target, name))
            os.rmdir(self.path)
            return False
        finally:
            _unlock(self._lock)


def _uncreatable(target, parent, exc):
    return ValueError(f"--out: cannot create {target!r} (in {parent!r}: "
                      f"{exc.strerror or exc}); choose a folder you can write to.")


def _holds_files(folder):
    return os.path.isdir(folder) and bool(os.listdir(folder))


def _lock(parent, name, target):
    """An exclusive lock on ``parent/.mixbayes-lock-name``, taken without waiting; returns
    ``(path, fd)`` (None where the platform has no ``fcntl``).

    The file is removed when the lock is released; a run that opened it just before is then
    holding a lock on a removed file, which it notices (the path names another file, or
    none) and takes the lock again.
    """
    try:
        import fcntl
    except ImportError:  # Windows: no lock; the end-of-run check still refuses a filled folder
        return None
    path = os.path.join(parent, f".mixbayes-lock-{name}")
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as exc:
            raise _uncreatable(target, parent, exc) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise ValueError(f"--out: another mixbayes run is writing to {target!r} (it holds "
                             f"{path!r}); wait for it to end, or choose another folder.") from None
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return path, fd
        os.close(fd)


def _unlock(lock):
    if lock is not None:
        path, fd = lock
        try:
            os.unlink(path)
        except OSError:
            pass
        os.close(fd)


def write_json(path, value):
    """``value`` as strict JSON (RFC 8259): a NaN or infinite number, which ``json`` would write
    as the bare ``NaN``/``Infinity`` that strict parsers (JavaScript, jq, Go) refuse, is written
    as ``null``."""
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(_strict(value), handle, indent=2, allow_nan=False, default=_plain)


def _strict(value):
    """``value`` with numpy numbers and arrays made plain and non-finite floats made None."""
    if isinstance(value, dict):
        return {key: _strict(v) for key, v in value.items()}
    if isinstance(value, (list, tuple, range, np.ndarray)):
        return [_strict(v) for v in value]
    if isinstance(value, (float, np.floating)):
        return float(value) if np.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def _plain(value):
    """JSON for anything else json cannot write (a path, a type): its text."""
    return str(value)


def topic_cell(k):
    """A main topic in a CSV: its number, or empty for none."""
    return "" if k < 0 else int(k)


def write_rows(path, header, rows):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)


def save_figure(fig, path):
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def print_groups(entries, unit, size_text, stream, where, body=None, shown=SHOWN):
    """Print clusters or topics the same way for every model: the largest first (by
    ``entry["sort"]``), and how many were left out.

    ``entries`` are dicts with the index under ``unit``; ``size_text(entry)`` formats the part
    in brackets and ``body(entry)`` what follows (default: the top words by probability);
    ``where`` names the file that lists them all.
    """
    if body is None:
        def body(entry):
            return " ".join(entry["top_words"]) or f"(no words: an empty {unit})"
    ordered = sorted(entries, key=lambda e: -e["sort"])
    empty = [e for e in ordered if e["sort"] == 0]
    ordered = [e for e in ordered if e["sort"] > 0]
    for entry in ordered[:shown]:
        print(f"  {unit} {entry[unit]:>3} ({size_text(entry)}): {body(entry)}", file=stream)
    if len(ordered) > shown:
        print(f"  ... and {plural(len(ordered) - shown, 'smaller ' + unit)} not shown (all are "
              f"in {where})", file=stream)
    if empty:
        print(f"  ({plural(len(empty), 'empty ' + unit)}: "
              f"{', '.join(str(e[unit]) for e in empty[:10])}{', ...' if len(empty) > 10 else ''})",
              file=stream)


def feature_names(names, d):
    """The names of ``d`` features: the input's header row (``names``), else x1, x2, ..."""
    return list(names) if names is not None else [f"x{j + 1}" for j in range(d)]


def named_mean(mean, names):
    """A cluster's mean for clusters.json: ``{feature name: value}``."""
    return dict(zip(feature_names(names, len(mean)), map(float, mean)))


def mean_text(entry):
    """A cluster's mean, its first four coordinates with their names."""
    items = list(entry["mean"].items())
    mean = ", ".join(f"{name} {v:.3g}" for name, v in items[:4])
    return f"mean ({mean}{', ...' if len(items) > 4 else ''})"


def note_documents(settings, stop_words, args, left_out, stream, notes=(), corpus=None):
    """Record the stop words used, say how many empty documents were left out, and print the
    reader's ``notes``; where the reader attached the ``labels.txt`` beside the input (no
    ``--labels`` given), say so and record its path."""
    for note in notes:
        print(f"note: {note}", file=stream)
    if (corpus is not None and getattr(corpus, "labels", None) is not None
            and args.labels is None and getattr(args, "label_column", None) is None):
        path = args.input
        folder = path if os.path.isdir(path) else os.path.dirname(path)  # as the user wrote
        settings["labels"] = os.path.join(folder, "labels.txt")
        print(f"note: labels read from {settings['labels']}, beside the input (one a line; "
              "--labels FILE gives others)", file=stream)
    settings["stop_words"] = stop_words if isinstance(stop_words, (str, type(None))) else (
        f"{len(stop_words)} words from {args.stop_words}")
    # the document-frequency limits as applied (--max-df defaults by the input's kind: half
    # the documents for raw text, none for counts), which summary.json left out unless given
    filters = getattr(getattr(corpus, "preprocessing", None), "filters", ()) or ({},)
    settings["max_df"] = filters[-1].get("max_df", 1.0)
    settings["max_features"] = filters[-1].get("max_features")
    settings["empty_documents_left_out"] = left_out
    if left_out:
        listed = "doc_topics.csv" if args.command == "topics" else "assignments.csv"
        print(f"{plural(left_out, 'empty document')} left out (blank, or no words left after "
              f"--stop-words, --min-df and --max-df); they are not in {listed}", file=stream)
