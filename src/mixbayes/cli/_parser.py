"""The command line's parser: one-line errors, the option types, the options every fitting
command shares, and the parser built from the command table (each command adds its own)."""

from __future__ import annotations

import argparse
import importlib
import re
import sys


def range_option(text):
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


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors, as every other error of the command: the usage block
    would bury the message (``--help`` still shows it)."""

    def error(self, message):
        message = re.sub(r"^argument ([^:]+): (?=\1)", "", message)  # "argument -k: -k must"
        sys.stderr.write(f"mixbayes: error: {message} (see {self.prog} --help)\n")
        sys.exit(2)

    def parse_args(self, args=None, namespace=None):
        """As argparse's, but an option the command does not take is refused by that
        command's parser, so the error points to ``mixbayes COMMAND --help`` (argparse leaves
        it to the top parser: ``see mixbayes --help``, which does not list the option)."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            command = self
            for action in self._actions:
                if isinstance(action, argparse._SubParsersAction):
                    command = action.choices.get(getattr(parsed, action.dest, None), self)
            command.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed


def non_negative_float(text):
    """An argparse type: a finite number of at least 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number; got {text!r}") from None
    if not (value >= 0 and value != float("inf")):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0; got {text}")
    return value


def whole_number(minimum):
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


seed_number, positive_int = whole_number(0), whole_number(1)


def positive_float(text):
    """An argparse type: a finite number above 0."""
    value = non_negative_float(text)
    if value == 0:
        raise argparse.ArgumentTypeError(f"must be a finite number > 0; got {text}")
    return value


def depth_option(text):
    """An argparse type: ``auto`` or a whole number of at least 1."""
    return "auto" if text == "auto" else positive_int(text)


def document_count_option(text):
    """An argparse type for --min-df and --max-df: a count of documents (1 or more) or a
    share in (0, 1]."""
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


def n_jobs_option(text):
    """An argparse type for --n-jobs: a whole number other than 0 (scikit-learn's n_jobs)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number; got {text!r}") from None
    if value == 0:
        raise argparse.ArgumentTypeError("must be a number of threads (1 or more) or -1 for "
                                         "every core; got 0")
    return value


def add_text_options(parser):
    parser.add_argument("--text-column", default=None, metavar="NAME",
                        help="CSV column holding the text (default: text)")
    parser.add_argument("--stop-words", default=None, metavar="english|none|FILE",
                        help="words to drop: scikit-learn's English list, none, or a file with "
                        "one word per line (used instead of the English list; include those "
                        "words in it to drop both) (default: english for raw text - .txt, "
                        ".csv, a folder -, none for count matrices)")
    parser.add_argument("--min-df", type=document_count_option, default=None, metavar="N",
                        help="drop terms used by fewer than N documents (or a share such as "
                        "0.01) (default: 1)")
    parser.add_argument("--max-df", type=document_count_option, default=None, metavar="N",
                        help="drop terms used by more than N documents (or a share such as "
                        "0.5) (default: 0.5 for raw text, 1.0 - none dropped - for count "
                        "matrices)")
    parser.add_argument("--max-features", type=positive_int, default=None, metavar="N",
                        help="keep at most the N terms used by the most documents, after the "
                        "other filters (default: all)")


def add_common(parser, out_default):
    parser.add_argument("--out", default=out_default, metavar="DIR",
                        help="output folder (default: %(default)s)")
    parser.add_argument("--force", action="store_true",
                        help="replace the files of an earlier run in --out (default: refuse "
                        "to write into a folder that is not empty)")
    parser.add_argument("--seed", type=seed_number, default=0,
                        help="random seed, 0 or more (default: %(default)s)")
    parser.add_argument("--top", type=positive_int, default=10, metavar="N",
                        help="top words shown per cluster or topic (default: %(default)s)")
    parser.add_argument("--n-jobs", type=n_jobs_option, default=None, metavar="N",
                        help="threads the fit may use: N, or -1 for every core (default: "
                        "every core, for the large kernels only; 1 runs serially, kindest on "
                        "a shared machine)")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="no progress bar (default: a bar on runs over a second)")
    parser.add_argument("--report", action="store_true",
                        help="also write report.html, an interactive report in one "
                        "self-contained file (see mixbayes report)")


def build_parser(commands):
    """The ``mixbayes`` parser: each module of ``commands`` (name -> module) adds its
    subcommand."""
    from .. import __version__

    parser = Parser(
        prog="mixbayes", allow_abbrev=False,
        description="Bayesian mixture-model clustering of documents (word counts or raw text) "
        "and of real-valued points, with topic models and hierarchical Dirichlet processes.")
    parser.add_argument("--version", action="version", version=f"mixbayes {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=Parser)
    for module in commands.values():
        importlib.import_module(module, __package__).add_parser(sub)
    return parser
