"""The ``mixbayes`` command.

::

    mixbayes demo [--out DIR]
    mixbayes cluster INPUT --model dmm [-k K | --select 2:30] [--labels FILE] [--out DIR] [--seed N]
    mixbayes cluster POINTS --model gmm [-k K] [--covariance-type full|diag|spherical]
    mixbayes cluster POINTS --model tree [--depth 2] [--covariance-type tied|known|full|diag|spherical]
    mixbayes cluster INPUT --model dmm|gmm -k K (--scheduler ADDRESS | --workers N)
    mixbayes cluster INPUT --model hdp [--n-iter 100] [--gamma0 1] [--alpha0 1]
    mixbayes cluster POINTS --model hdp --groups FILE
    mixbayes topics INPUT (-k K | --select 2:30) [--labels FILE] [--seed N]
                  [--scheduler ADDRESS | --workers N]
    mixbayes predict MODEL.npz INPUT [--out DIR | -o FILE] [--text-column NAME]
    mixbayes inspect MODEL.npz [--vocabulary FILE]
    mixbayes report MODEL.npz [--corpus INPUT] [--out report.html]

Every fitting run writes its files (``assignments.csv``, ``clusters.json`` or ``topics.json``,
``model.npz``, ``summary.json``, PNG figures) to ``--out`` and prints a short summary. Errors
are one line on stderr and exit status 2 (usage) or 1 (anything else), never a traceback; a
run that fails leaves ``--out`` as it was.

Here: :func:`main` and the table of commands, each looked up when run. Each command is one
module declaring its options and its run (:mod:`.demo`, :mod:`.cluster` with a module per
model, :mod:`.topics`, :mod:`.predict`, :mod:`.inspect`, :mod:`.report`); they share the parser's pieces
(:mod:`._parser`), the settings built once from the parsed options (:mod:`._settings`), the
fitting commands' ceremony (:mod:`._fitting`), the readers (:mod:`._inputs`), the writers
(:mod:`._outputs`) and the dask cluster of ``--scheduler``/``--workers`` (:mod:`._dask`).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import warnings

# the commands, in the order --help lists them: name -> the module that declares and runs it
COMMANDS = {"demo": ".demo", "cluster": ".cluster", "topics": ".topics",
            "predict": ".predict", "inspect": ".inspect", "report": ".report"}


def build_parser():
    """The parser of every command (each module adds its own options)."""
    from ._parser import build_parser as build

    return build(COMMANDS)


def run(parsed, stream=None):
    """Run the parsed command and print its summary to ``stream`` (default: standard output);
    returns the exit status."""
    stream = sys.stdout if stream is None else stream
    if parsed.command in ("predict", "inspect", "report"):
        parsed.model = _model_in_folder(parsed.model)
    return importlib.import_module(COMMANDS[parsed.command], __name__).run(parsed, stream)


def _model_in_folder(path):
    """MODEL as given, or the ``model.npz`` inside it when it is a folder that ``cluster`` or
    ``topics`` wrote (``mixbayes inspect out/`` is what one types after ``--out out``)."""
    inside = os.path.join(path, "model.npz")
    return inside if os.path.isdir(path) and os.path.isfile(inside) else path


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
    """The ``mixbayes`` command on ``argv`` (default: the process's); returns the exit
    status."""
    from . import _settings

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings(record=True) as caught, _terminate_as_interrupt():
            warnings.simplefilter("always")
            status = run(args)
        from ..exceptions import ConvergenceWarning

        for w in caught:
            if issubclass(w.category, ConvergenceWarning):
                print(f"warning: {_settings.cli_words(str(w.message))}", file=sys.stderr)
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
        print(f"mixbayes: error: {_settings.cli_words(message)}", file=sys.stderr)
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
