"""``--scheduler ADDRESS`` and ``--workers N``: run a command's fit on a dask cluster.

A UCI docword or Matrix Market input is read by the workers, each its own rows, and stays
there: everything the command computes from the counts is computed on the shards
(:mod:`._sharded`), and the client holds at most :data:`SAMPLE` documents' counts at once.
Other inputs (text, CSV, points) are read here, as without these flags, and sent to the
workers in one row shard each (:func:`mixbayes.distributed.fit`). The CAVI or MAP iterations
then run there, the loop and its progress bar (one tick per iteration) here. The workers' logs
are kept to errors.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager

# the models whose fit runs on a cluster; the samplers (hdp, tree) are sequential
MODELS = ("dmm", "gmm")
CONNECT_SECONDS = 10  # for --scheduler to answer
# worker processes for --workers (the tests swap in threads: a process costs seconds to start)
PROCESSES = True
# documents whose counts the client gathers at once, at most: the fit's start sample and the
# report's (mixbayes.distributed.START_SAMPLE)
SAMPLE = 10_000


def add_options(parser):
    """The two flags, one or the other."""
    from ._parser import positive_int

    where = parser.add_mutually_exclusive_group()
    where.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="fit on the running dask cluster of this scheduler (e.g. "
                       "tcp://host:8786); its workers read a docword or .mtx[.gz] input "
                       "themselves (the path must be readable there), other inputs are read "
                       'here and sent; needs pip install "mixbayes[distributed]" (default: '
                       "fit in this process)")
    where.add_argument("--workers", type=positive_int, default=None, metavar="N",
                       help="fit on a dask cluster of N worker processes started on this "
                       "machine for the run (default: fit in this process)")


def check(args, settings):
    """Refuse the flags where the fit cannot run on a cluster; record them in ``settings``."""
    flag, value = _given(args)
    if value is None:
        return
    if args.command == "cluster" and args.model not in MODELS:
        raise ValueError(f"{flag} applies to --model {' or '.join(MODELS)}, not --model "
                         f"{args.model} (its sampler visits the points one after another).")
    if args.command == "cluster" and args.select is not None:
        raise ValueError(f"{flag} fits one number of clusters: give -k, not --select.")
    settings[flag[2:]] = value


@contextmanager
def cluster_client(args):
    """The ``distributed.Client`` the flags ask for (None without them), closed afterwards."""
    flag, value = _given(args)
    if value is None:
        yield None
        return
    try:
        from ..distributed._dask import require

        distributed = require()[2]
    except ImportError as exc:
        raise ValueError(f"{flag}: {exc}") from None
    quiet = logging.getLogger("distributed")
    level = quiet.level
    # the client's notes on the workers it sees come and go, and the workers' report of a task
    # that failed (a shard of a bad input): the failure reaches the command as an exception,
    # which it says in one line
    quiet.setLevel(logging.CRITICAL)
    try:
        if flag == "--scheduler":
            try:
                # 10 s, not dask's 30: a scheduler that answers at all answers in well under
                client = distributed.Client(value, timeout=CONNECT_SECONDS)
            except (OSError, TimeoutError, ValueError) as exc:
                raise OSError(
                    f"--scheduler: cannot reach a dask scheduler at {value!r} "
                    f"({' '.join(str(exc).split()) or type(exc).__name__}); check the address "
                    "and that the scheduler runs (dask scheduler), or use --workers N for a "
                    "cluster on this machine."
                ) from None
            with client:
                yield client
        else:
            with distributed.LocalCluster(
                n_workers=value, threads_per_worker=1, processes=PROCESSES,
                dashboard_address=None, silence_logs=logging.CRITICAL,
            ) as cluster, distributed.Client(cluster) as client:
                yield client
    finally:
        quiet.setLevel(level)


def _given(args):
    """``(flag, value)`` of the flag given; value None when neither is (or the command has
    neither)."""
    scheduler = getattr(args, "scheduler", None)
    if scheduler is not None:
        return "--scheduler", scheduler
    return "--workers", getattr(args, "workers", None)


def fit(estimator, X, args):
    """``estimator.fit(X)``, on the cluster of ``args.client`` when there is one."""
    client = getattr(args, "client", None)
    if client is None:
        return estimator.fit(X)
    from ..distributed import fit as fit_on

    return _home(fit_on(estimator, X, client=client, start_sample=SAMPLE))


def select_n_topics(X, candidates, estimator, args, **options):
    """:func:`mixbayes.select_n_topics`, on the cluster of ``args.client`` when there is one."""
    client = getattr(args, "client", None)
    if client is None:
        from ..topics import select_n_topics as select

        return select(X, candidates, estimator, **options)
    from ..distributed import select_n_topics as select

    selection = select(X, candidates, estimator, client=client, start_sample=SAMPLE, **options)
    _home(selection.best_model)
    return selection


def _home(model):
    """The model with its per-document results (``labels_``, ``doc_topic_``) brought back from
    the cluster: the command writes every one."""
    for name in ("labels_", "doc_topic_"):
        value = getattr(model, name, None)
        if hasattr(value, "compute"):
            setattr(model, name, value.compute())
    return model
