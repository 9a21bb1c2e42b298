r"""The topic model on a dask cluster: documents and their weights on the workers, topics here.

An iteration of the joint MAP is per-document work (the weight solve, the document half of the
EM step, the weights' part of the log posterior and of the secant step) and topic steps that
read sums over documents (:mod:`mixbayes.topics.blocks`). So every shard's non-empty
documents become a block kept on its worker with their weights, and the loop
(:func:`mixbayes.topics._fit.fit_map`, the in-process one) runs here, calling through
:class:`ShardedDocuments` the block functions the in-process fit calls on its one block: each
call maps over the shards, scatters the topics (p x K) once to every worker, and, where the
loop needs a number, sums the shards' shares on the workers. Steps that return nothing (keep
the secant iterate, accept, commit) only chain tasks; they wait for nothing.

The fit loop is the model's own (:meth:`mixbayes.TopicModel.fit`, against this corpus). The
start runs as in process: ``init="clusters"`` fits the document mixture on the cluster
(on ``start_sample`` documents first), ``"buildup"`` gathers
its evenly spaced subset of documents here. ``select_n_topics`` scans K the same way, the warm
starts grown on the workers from the previous fit's weights, and the Laplace evidence's
document blocks, Pearson residuals and the word blocks' Gram matrices (in slices of words, so
that a reduce carries at most 64 MiB) summed over the shards.

Unlike a mixture's shards, the blocks carry state from one iteration to the next; a worker lost
mid-fit has the blocks it held rebuilt from their counts and the latest topics (see
:class:`ShardedDocuments`).
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import scipy.sparse as sp

from .. import _engines
from .._validation import check_counts
from ..topics import blocks, starts
from ..topics.selection import SCAN_TOL
from ..topics.evidence import (clip_simplex, document_share, evidence_from,
                               floored_word_log_dets, log_null, word_grams)
from ._cavi import RowShards, _as_dask, _take
from ._dask import require, scatter, total, tree_reduce
from ._readers import warn_entries

_GRAM_BYTES = 1 << 26  # word-block Gram matrices carried by one evidence reduce, at most
# the steps that start or solve the weights afresh under their first argument, the topics; a
# block lost after one is rebuilt from them (see ShardedDocuments)
_REBUILT_FROM = (blocks.restart, blocks.solve, blocks.solve_em)
MAX_LOSSES = 3  # workers lost during one call before the fit gives up


# ---------------------------------------------------------------------- on the workers
def _check(X):
    return check_counts(X, "X")


def _column_totals(X):
    return np.asarray(X.sum(axis=0)).ravel()


def _used_mask(X):
    return np.diff(X.indptr) > 0


def _used_rows(X, mask, used_terms):
    return X[mask][:, used_terms]


def _apply(held, steps):
    """Apply block functions to a shard's block in turn: ``steps`` holds ``(function, args,
    kind)`` with kind ``"update"`` (returns the block), ``"sum"`` (returns a share) or
    ``"both"`` (returns both). ``held`` is the block, or the ``(block, share)`` an earlier call
    left; returns ``(block, share)``."""
    block, share = held if isinstance(held, tuple) else (held, None)
    for function, args, kind in steps:
        out = function(block, *args)
        if kind == "update":
            block = out
        elif kind == "sum":
            share = out
        else:
            block, share = out
    return block, share


def _replay(counts, theta_PK, steps):
    """A lost block rebuilt: its counts at the start weights under ``theta_PK``, then ``steps``."""
    return _apply(blocks.start(counts, theta_PK), steps)


def _share(held):
    return held[1]


def _block_of(held):
    return held[0] if isinstance(held, tuple) else held


def _doc_topic(held, mask, K):
    """A shard's weights, uniform for its empty documents (``held`` None: all empty)."""
    out = np.full((mask.size, K), 1.0 / K)
    if held is not None:
        out[mask] = _block_of(held).omega
    return out


def _evidence_share(block, theta_PK, c):
    return document_share(block.counts, theta_PK, clip_simplex(block.omega, 1), c)


def _word_grams(held, theta_PK, lo, hi):
    block = _block_of(held)
    return word_grams(block.counts, theta_PK, clip_simplex(block.omega, 1), lo, hi)


# ---------------------------------------------------------------------- on the client
class ShardedDocuments:
    """The documents of a topic fit as blocks on the workers, one per shard that has any:
    the interface of :class:`mixbayes.topics.blocks.Documents`.

    An update waits for nothing: it is kept and applied, with any others, in the tasks of the
    next call that needs a number (one task per shard and call, so that a chain of updates
    costs no round trips to the scheduler).

    A lost worker
    -------------
    A block's weights are state, the product of every iteration so far, and a worker that dies
    takes the blocks it held with it (their shard's counts, being data, dask reads again). Yet
    they are all but a function of the latest topics: every iteration begins by solving each
    document's weights under the topics to the solver's tolerance. So the blocks keep, besides
    their counts (``sources``), the topics of the last step that solves or restarts the weights
    (:data:`_REBUILT_FROM`) and the steps since (``_log``); a call whose result a lost worker
    cancelled rebuilds each lost block from its counts at the start weights under those topics,
    replays the steps, and is made again. The rebuilt weights equal the lost ones up to the
    weight solver's tolerance, and their secant-step history starts afresh; the fit ends at the
    same joint MAP, not bit for bit on the same path.
    """

    def __init__(self, client, blocks, total_words, sources, theta, homes):
        self.client, self.total_words, self.homes = client, total_words, homes
        self._held = blocks  # futures of each shard's block, or of (block, share)
        self._steps = []  # updates not yet sent
        self._sent = (None, None)  # the last array scattered and its future
        self._sources = sources  # futures of each block's counts
        self._anchor, self._log = theta, []  # a lost block's start topics, and the steps since

    @property
    def blocks(self):
        """Futures of the shards' blocks (or of (block, share) pairs), updates applied."""
        if self._steps:
            self._held = self._submit([])
        return self._held

    def copy(self):
        """Another handle on the same blocks (their updates then part ways)."""
        twin = ShardedDocuments(self.client, list(self.blocks), self.total_words, self._sources,
                                self._anchor, self.homes)
        twin._log = list(self._log)
        return twin

    def _send(self, args):
        """The arguments, arrays scattered to every worker (the last one once only)."""
        sent = []
        for arg in args:
            if isinstance(arg, np.ndarray):
                if arg is not self._sent[0]:
                    self._sent = (arg, scatter(self.client, arg))
                arg = self._sent[1]
            sent.append(arg)
        return tuple(sent)

    def _record(self, function, args, kind):
        step = (function, self._send(args), kind)
        if function in _REBUILT_FROM:
            self._anchor, self._log = step[1][0], []
        self._log.append(step)
        return step

    def _submit(self, steps):
        steps, self._steps = self._steps + steps, []
        return [self.homes.submit(i, _apply, held, steps, pure=False)
                for i, held in enumerate(self._held)]

    def update(self, function, *args):
        self._steps.append(self._record(function, args, "update"))

    def _reduce(self, function, args, kind):
        self._held = self._submit([self._record(function, args, kind)])
        return self.fetch(lambda held: tree_reduce(self.client, held, total, _share))

    def fetch(self, reduce):
        """The result of the future ``reduce(blocks)``: the blocks a lost worker took rebuilt
        (see the class docstring) and the reduce made again, up to ``MAX_LOSSES`` times."""
        distributed = require()[2]
        for losses in range(MAX_LOSSES + 1):
            try:
                return reduce(self.blocks).result()
            except distributed.client.FutureCancelledError:
                if losses == MAX_LOSSES:
                    raise
                try:
                    distributed.wait(self._held)  # it raises once all are done, if any was lost
                except distributed.client.FuturesCancelledError:
                    pass
                # a block is kept where the scheduler still knows a worker holding it: a
                # future's own status can lag the scheduler's news of a lost worker on a busy
                # machine, and a block kept on that word alone fails the next reduce again
                try:
                    where = self.client.who_has(
                        [held for held in self._held if held.status == "finished"])
                except distributed.client.FuturesCancelledError:  # news while asking
                    where = {}  # every block rebuilt: slower, as exact
                self._held = [
                    held if held.status == "finished" and where.get(held.key) else
                    self.homes.submit(i, _replay, source, self._anchor, self._log, pure=False)
                    for i, (held, source) in enumerate(zip(self._held, self._sources))]

    def sum(self, function, *args):
        return self._reduce(function, args, "sum")

    def update_sum(self, function, *args):
        return self._reduce(function, args, "both")


class TopicShards:
    """A corpus's shards on the workers, ready for topic fits: validated, their word totals
    summed, their non-empty documents on the used terms prepared as counts (the figures of
    :class:`mixbayes.topics.model.OneCorpus`, over shards)."""

    used_docs = None  # the documents stay on the cluster

    def __init__(self, X, client):
        da = require()[1]
        self.client, self.reference = client, X  # coherence is measured on X where it lies
        shards = RowShards(client, _as_dask(X, _check, client, da), _check)
        warn_entries(client, shards.raw, X)
        self.n, self.sizes = shards.n, [size for size in shards.sizes if size]
        at = shards.homes.submit  # every shard's tasks on its home worker
        self.masks = [at(i, _used_mask, raw) for i, raw in enumerate(shards.raw)]
        self.n_used = client.gather([at(i, np.count_nonzero, mask)
                                     for i, mask in enumerate(self.masks)])
        self.column_totals = tree_reduce(
            client, [at(i, _column_totals, raw) for i, raw in enumerate(shards.raw)],
            total).result()
        self.used_terms = np.flatnonzero(self.column_totals > 0)
        self.total_words = float(self.column_totals.sum())
        # kept: a worker lost later has the rows it held prepared again from the terms
        self._terms = terms = scatter(client, self.used_terms)
        self.rows = [at(i, _used_rows, raw, mask, terms)
                     for i, (raw, mask) in enumerate(zip(shards.raw, self.masks))]
        self.counts = [at(i, blocks.CountsCSR.from_matrix, rows) if used else None
                       for i, (rows, used) in enumerate(zip(self.rows, self.n_used))]
        self.homes = shards.homes.subset([used > 0 for used in self.n_used])

    @property
    def n_used_total(self):
        return int(sum(self.n_used))

    def used_array(self):
        """The non-empty documents on the used terms, as a dask array (for the mixture start)."""
        da = require()[1]
        meta = sp.csr_matrix((0, self.used_terms.size), dtype=np.int64)
        return da.concatenate([
            da.from_delayed(rows, shape=(used, self.used_terms.size), dtype=np.int64, meta=meta)
            for rows, used in zip(self.rows, self.n_used) if used])

    def rows_of(self, rows):
        """The non-empty documents numbered ``rows`` (among them), gathered here."""
        offsets = np.cumsum([0] + list(self.n_used))
        shard = np.searchsorted(offsets, rows, side="right") - 1
        parts = self.client.gather([
            self.client.submit(_take, part, rows[shard == s] - offsets[s])
            for s, part in enumerate(self.rows) if np.any(shard == s)])
        return sp.vstack(parts, format="csr")

    def documents(self, theta_PK):
        """The non-empty documents with their start weights under ``theta_PK``."""
        theta = scatter(self.client, theta_PK)
        sources = [counts for counts in self.counts if counts is not None]
        return ShardedDocuments(self.client, [
            self.homes.submit(i, blocks.start, counts, theta, pure=False)
            for i, counts in enumerate(sources)], self.total_words, sources, theta, self.homes)

    # ---------------------------------------------------------------- for select_n_topics
    def note_unused_terms(self):
        """The terms that never occur, said once for the scan (its fits keep quiet)."""
        p = self.column_totals.size
        if self.used_terms.size < p:
            warnings.warn(
                f"{p - self.used_terms.size} term(s) of X never occur; they are left out of "
                "every fit and get probability 0 in every topic.", UserWarning, stacklevel=3)

    @contextlib.contextmanager
    def fitting(self):
        """Every fit of the scan: its unused-terms warning said once, before (above)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            yield

    def warm_topics(self, previous, docs, n_components, alpha_for, c_for):
        """The previous fit's topics grown by residual topics on the workers, (K, p)."""
        used_terms = self.used_terms
        grown = starts.grow_topics(docs.copy(),
                                  np.ascontiguousarray(previous.topics_[:, used_terms].T),
                                  n_components, alpha_for, c_for)
        warm = np.zeros((n_components, self.column_totals.size))
        warm[:, used_terms] = grown.T
        return warm

    def evidence(self, model, docs):
        """The Laplace evidence of ``model``: the document blocks' shares and the word blocks'
        Gram matrices (in slices, at most ``_GRAM_BYTES`` a reduce) summed over the shards."""
        used_terms = self.used_terms
        theta = np.ascontiguousarray(clip_simplex(model.topics_[:, used_terms].T, 0))
        K, alpha = model.n_components, model.topic_prior_
        share = docs.sum(_evidence_share, theta, 1.0 / K)
        words, width = 0.0, max(1, _GRAM_BYTES // (8 * K * K))
        client, sent = self.client, scatter(self.client, theta)
        for lo in range(0, theta.shape[0], width):
            hi = min(lo + width, theta.shape[0])
            words += docs.fetch(lambda blocks: client.submit(floored_word_log_dets, tree_reduce(
                client, [client.submit(_word_grams, block, sent, lo, hi, pure=False)
                         for block in blocks], total), theta[lo:hi], alpha))
        return evidence_from(share, words, theta, alpha, self.n_used_total,
                             log_null(self.column_totals, self.n_used_total))

    def doc_topic(self, docs, K):
        """Every document's weights as a dask array, chunked like the non-empty shards."""
        da = require()[1]
        blocks = iter(docs.blocks)
        return da.concatenate([
            da.from_delayed(self.client.submit(_doc_topic, next(blocks) if counts is not None
                                               else None, mask, K),
                            shape=(size, K), dtype=np.float64)
            for counts, mask, size in zip(self.counts, self.masks, self.sizes)])


def select_n_topics(X, candidates=range(2, 31), estimator=None, scan_all=False, stop_after=2,
                    verbose=1, coherence=None, warm_start=False, scan_tol=SCAN_TOL, *,
                    client=None, start_sample=None):
    """:func:`mixbayes.select_n_topics` on the cluster of ``client`` (data held here are sent in
    one shard per worker), the starts on ``start_sample`` documents (None: as the engine
    context says, by default :data:`~mixbayes.distributed.START_SAMPLE`)."""
    from ..topics.selection import select_n_topics as select
    from ._engine import DaskEngine

    if start_sample is None:
        start_sample = _engines.start_sample()
    with _engines.use(DaskEngine(client), start_sample):
        return select(X, candidates, estimator, scan_all=scan_all, stop_after=stop_after,
                      verbose=verbose, coherence=coherence, warm_start=warm_start,
                      scan_tol=scan_tol)
