"""The ``mixbayes`` command run in this process, for the tests of its outputs."""

import subprocess


def run(*args, cwd):
    """Run ``mixbayes ARGS`` in ``cwd`` inside this process (a fresh interpreter per call cost
    2 s of imports each; ``python -m mixbayes`` itself is run as a subprocess in
    test_cli_first_contact.py) and return its exit status, stdout and stderr."""
    import contextlib
    import io
    import os

    from mixbayes.cli import main

    out, err, here = io.StringIO(), io.StringIO(), os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main([str(a) for a in args])
            except SystemExit as stop:  # argparse's usage errors and --help
                status = stop.code if isinstance(stop.code, int) else int(stop.code is not None)
    finally:
        os.chdir(here)
    return subprocess.CompletedProcess(args, status, out.getvalue(), err.getvalue())
