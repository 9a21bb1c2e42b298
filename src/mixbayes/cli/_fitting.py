"""What every fitting command (demo, cluster, topics) does around its fit, written once: the
settings read, the output folder staged, the dask cluster of --scheduler/--workers started,
the run (its kernels on the threads of --n-jobs), and its summary printed only once the folder is in place (so that a reader who leaves
early, ``| head``, cannot cost the run its files)."""

from __future__ import annotations

import io

from .._kernel_tools import threads
from . import _dask
from ._outputs import OutputFolder
from ._settings import read_settings


def run_fitting(parsed, stream, body):
    """``body(options, summary, out, verbose, text)`` in the output folder, with the options'
    ``client`` the cluster's; returns its exit status."""
    options, summary = read_settings(parsed)
    verbose = 0 if options.quiet else 1
    text = io.StringIO()
    with OutputFolder(options.out, force=options.force) as out, \
            _dask.cluster_client(options) as client, threads(options.n_jobs):
        status = body(options.replace(client=client), summary, out, verbose, text)
    stream.write(text.getvalue())
    stream.flush()
    return status
