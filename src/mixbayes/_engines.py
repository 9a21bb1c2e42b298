"""Where a fit runs: the declared protocols the models' loops are written against, the
in-process engine, and the registry by which another engine (:mod:`mixbayes.distributed`)
takes the inputs it serves.

A model never imports an engine. Its fit loop (restarts, screening, convergence, warnings) is
written once, against two protocols:

* :class:`Rows` — the rows of the data wherever they live: a sample of them, their column
  summary, the local step mapped over them returning additive statistics, the labels it left;
* :class:`Documents` — a topic model's documents with their per-document state:
  ``update``/``sum``/``update_sum`` of the block functions of :mod:`mixbayes.topics.blocks`;

and asks :func:`engine_for` for the engine of its input. The in-process engine
(:class:`InProcess`) holds the data as one block; an engine registered by :func:`register`
(the Dask engine registers itself when :mod:`mixbayes.distributed` is imported, which
``import mixbayes`` does, without importing dask) serves the inputs it accepts (dask arrays,
sharded corpora), and :func:`use` makes one engine serve every fit in a ``with`` block, as
joblib's ``parallel_backend`` does (``with mixbayes.distributed.engine(client=c): model.fit(X)``).

One start rule serves every engine: the start (k-means++, the screen of ``n_init`` starts, the
warm-up sweeps) runs on :func:`start_sample` evenly spaced rows (:func:`evenly_spaced`; all of
them when there are no more), then every iteration reads all rows; so the same seed gives the
same answer in process and on a cluster.
"""

from __future__ import annotations

import contextlib
import contextvars
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Protocol, runtime_checkable

import numpy as np

START_SAMPLE = 10_000  # rows the start runs on, at most (k-means++, screen, warm-up)


# ---------------------------------------------------------------------- the protocols
@runtime_checkable
class Rows(Protocol):
    """The validated rows of a data set wherever they live (one block here, shards on a cluster).

    ``n`` is the number of rows; ``constant`` (set by :meth:`prepare`) the sum over rows of the
    family's log base measure; ``reuses_buffers`` whether a run's family may overwrite its
    buffers from one iteration to the next (not where it travels to several workers at once).
    """

    n: int
    constant: float
    reuses_buffers: bool

    def sample(self, m: int) -> Any:
        """``m`` evenly spaced rows (:func:`evenly_spaced`), here, as one matrix; every row, in
        order, when ``m >= n``."""

    def summary(self, full: bool) -> tuple:
        """``(n, mean, variances, covariance)`` of the rows' columns, as
        :func:`mixbayes.families.gaussian.point_summary` gives them: what a model scales its
        priors by."""

    def prepare(self, family, sample, data) -> None:
        """Prepare every row for ``family`` (``data`` is ``sample`` prepared, which an engine
        holding the sample as its rows reuses) and set ``constant``."""

    def local_step(self, family, state) -> tuple:
        """The local step of every row under the global ``state``: ``(local, evidence)``, with
        ``evidence`` the data's part of the ELBO (``constant`` + the sum of the rows' log
        normalisers) and ``local`` what :meth:`statistics` and :meth:`labels` read."""

    def statistics(self, family, local) -> tuple:
        """``(stats, counts)``: the family's sufficient statistics and the expected cluster
        sizes summed over the rows of ``local``."""

    def labels(self, local) -> Any:
        """Every row's most probable component under ``local`` (kept where the rows are)."""


@runtime_checkable
class Documents(Protocol):
    """A topic model's documents and their per-document state (one block here, a block per
    shard on a cluster), moved by the pure block functions of :mod:`mixbayes.topics.blocks`:
    ``function(block, *args)`` returns the new block (``update``), its share of a sum
    (``sum``), or both (``update_sum``). ``total_words`` is the number of words."""

    total_words: float

    def update(self, function: Callable, *args) -> None:
        """Replace every block by ``function(block, *args)``."""

    def sum(self, function: Callable, *args) -> Any:
        """The sum over blocks of ``function(block, *args)``."""

    def update_sum(self, function: Callable, *args) -> Any:
        """Both at once: ``function`` returns ``(block, share)``; the shares summed."""

    def copy(self) -> "Documents":
        """Another handle on the same documents (their updates then part ways)."""


class Engine(Protocol):
    """Where the rows of an input live and how work is mapped over them."""

    in_process: bool

    def rows(self, X, check_values: Callable, points: bool) -> Rows:
        """The rows of ``X``, validated by ``check_values`` (``points``: a 1-D input is one
        feature)."""

    def corpus(self, X) -> Any:
        """``X``'s counts prepared for topic fits, as :class:`mixbayes.topics.model.OneCorpus`
        prepares them in process (not asked of the in-process engine: that corpus is the topic
        model's own one-block case)."""

    def map_rows(self, X, function: Callable, width, dtype) -> Any:
        """``function(block)`` of every row block of ``X``, stacked like the rows (a model's
        bound method travels without the per-row results a cluster fit left on the workers)."""

    def sum_rows(self, X, function: Callable, shape: tuple) -> Any:
        """The sum over row blocks of ``function(block)`` (zeros of ``shape`` for none)."""


# ---------------------------------------------------------------------- the start rule
def evenly_spaced(n, m):
    """``m`` evenly spaced row numbers of ``n`` rows, increasing (all of them when ``m >= n``)."""
    if m >= n:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, m).round().astype(np.int64))


# ---------------------------------------------------------------------- the in-process engine
class OneBlock:
    """:class:`Rows` of data held here, as one block: the reference path."""

    reuses_buffers = True

    def __init__(self, X, data=None):
        self.X, self.n, self.data, self.constant = X, X.shape[0], data, None

    def sample(self, m):
        if m >= self.n:
            return self.X  # the rows themselves: prepared once, for the start and the loop
        return self.X[evenly_spaced(self.n, m)]

    def summary(self, full):
        from .families.gaussian import point_summary

        return (self.n, *point_summary(self.X, full))

    def prepare(self, family, sample, data):
        self.data = data if sample is self.X else family.prepare(self.X)
        self.constant = float(family.log_base_measure(self.data).sum())

    def local_step(self, family, state):
        resp, log_norm, counts = family.responsibilities(
            self.data, state.family_expectations, state.expected_log_weights)
        return (resp, counts), self.constant + float(log_norm.sum())

    def statistics(self, family, local):
        resp, counts = local
        return family.sufficient_statistics(self.data, resp), counts

    def labels(self, local):
        return local[0].argmax(axis=1)


class InProcess:
    """The engine of data held in this process: one block, the functions called on it."""

    in_process = True

    def rows(self, X, check_values, points):
        return OneBlock(check_values(X))

    def map_rows(self, X, function, width, dtype):
        return function(X)

    def sum_rows(self, X, function, shape):
        return function(X)


IN_PROCESS = InProcess()


# ---------------------------------------------------------------------- the registry
_ANYWHERE: set = set()


def fits_anywhere(model_or_class):
    """Whether the model's fit loop is written against the protocols (so runs on any
    engine); a model class declares it with :func:`runs_anywhere`."""
    cls = model_or_class if isinstance(model_or_class, type) else type(model_or_class)
    return any(base in _ANYWHERE for base in cls.__mro__)


def runs_anywhere(cls):
    """Class decorator: the model's fit runs on any engine (see :func:`fits_anywhere`)."""
    _ANYWHERE.add(cls)
    return cls


@dataclass(frozen=True)
class _Entry:
    accepts: Callable[[Any], bool]
    make: Callable[[], Engine]


_REGISTRY: list[_Entry] = []
_CURRENT = contextvars.ContextVar("mixbayes_engine", default=(None, START_SAMPLE))


def register(accepts, make):
    """Serve every input for which ``accepts(X)`` holds by the engine ``make()`` returns (the
    latest registration first)."""
    _REGISTRY.insert(0, _Entry(accepts, make))


@contextlib.contextmanager
def use(engine=None, start_sample=START_SAMPLE):
    """Fit on ``engine`` (None: the engine of each input) with the start on ``start_sample``
    rows, in the ``with`` block."""
    if isinstance(start_sample, bool) or not isinstance(start_sample, (int, np.integer)) \
            or start_sample < 1:
        raise ValueError(f"start_sample must be a positive integer; got {start_sample!r}.")
    token = _CURRENT.set((engine, int(start_sample)))
    try:
        yield engine
    finally:
        _CURRENT.reset(token)


def start_sample():
    """The rows the start runs on, at most (:data:`START_SAMPLE` unless :func:`use` says)."""
    return _CURRENT.get()[1]


def runs_here(model_name, stacklevel=3):
    """Say so when a model with no cluster path is fitted inside :func:`use` with an engine
    elsewhere (``mixbayes.distributed.engine``): the fit runs in this process all the same (the
    HDP's numpy fit inside the block ran here without a word, where Gibbs is refused)."""
    engine = _CURRENT.get()[0]
    if engine is not None and not engine.in_process:
        warnings.warn(
            f"{model_name} runs in this process: the engine set by mixbayes.distributed.engine "
            "serves only the document mixture, the Gaussian mixture and the topic model.",
            UserWarning, stacklevel=stacklevel)


def engine_for(X, fit=True):
    """The engine of ``X``: the one :func:`use` set for fits (``fit``), else the first
    registered that accepts it, else the in-process one. Results per row (``predict``) and
    sums over rows are computed where the rows are, so they take the input's engine."""
    chosen = _CURRENT.get()[0] if fit else None
    if chosen is not None:
        return chosen
    for entry in _REGISTRY:
        if entry.accepts(X):
            return entry.make()
    return IN_PROCESS


def map_rows(X, function, width=None, dtype=np.float64):
    """``function`` of ``X``'s row blocks, computed where they are (:meth:`Engine.map_rows`);
    ``width`` None: one value per row, else ``width`` per row."""
    return engine_for(X, fit=False).map_rows(X, function, width, dtype)


def sum_rows(X, function, shape=()):
    """The sum over ``X``'s row blocks of ``function(block)``, computed where they are."""
    return engine_for(X, fit=False).sum_rows(X, function, shape)
