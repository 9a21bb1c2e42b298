r"""The documents' side of the MAP loop: pure functions on a block of documents.

An iteration of the joint MAP (:mod:`._fit`) alternates work on every document — the weight
solve, the document half of the EM step, the weights' share of the log posterior and of the
secant step — with steps on the topics, which read only sums over documents: the EM word
counts :math:`\hat x_{jk}`, the log posterior, two dot products. A :class:`Block` holds some
documents with their per-document state (weights, the solver's warm start, the last EM iterates
of the weights for the secant step, this iteration's candidate weights); every function below
takes a block and returns the new block, or its share of a sum, or both, and never changes its
arguments. In process one block holds every document (:class:`Documents`); on a dask cluster
every shard is a block kept on its worker, the shares are summed there, and the topic steps run
on the client (:mod:`mixbayes.distributed`) — the same functions either way.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from .._sizes import Sized
from . import _kernels


@dataclass
class CountsCSR(Sized):
    """Counts prepared once per fit: CSR (documents) and CSC (words) views of the same entries."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray  # float64 counts, CSR order
    col_indptr: np.ndarray
    col_rows: np.ndarray
    col_to_csr: np.ndarray  # position in CSR order of each CSC entry
    lengths: np.ndarray  # (n,) m_i
    shape: tuple

    @classmethod
    def from_matrix(cls, X):
        X = sp.csr_matrix(X, dtype=np.float64)
        X.sort_indices()
        positions = sp.csr_matrix(
            (np.arange(X.nnz, dtype=np.float64), X.indices, X.indptr), shape=X.shape
        ).tocsc()
        positions.sort_indices()
        return cls(
            X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data,
            positions.indptr.astype(np.int64), positions.indices.astype(np.int64),
            positions.data.astype(np.int64), np.asarray(X.sum(axis=1)).ravel(), X.shape,
        )


@dataclass(frozen=True)
class Block(Sized):
    """Documents (``counts``, a :class:`CountsCSR`) and their state."""

    counts: object
    omega: np.ndarray  # (n, K) current weights
    warm: np.ndarray  # (n, K) the weight solver's last solutions, its next start
    new_omega: np.ndarray = None  # (n, K) this iteration's candidate (EM or secant step)
    history: tuple = ()  # the weights' logits (n * (K - 1),) of the last EM iterates
    proposal: tuple = None  # (weights, logits, objectives) of the secant step last proposed
    # (n,) each document's share of the objective at ``omega`` (``new_omega``) under the
    # topics the MAP loop holds (will hold once it commits), where known: the loop scores the
    # candidate anyway, and the next weight solve needs those values under the same topics
    objectives: np.ndarray = None
    new_objectives: np.ndarray = None
    # (n,) bool: documents whose last Newton step moved their weights by less than the loop's
    # settle_tol, which a lazy iteration leaves to the EM step (see solve_em)
    settled: np.ndarray = None


def start_weights(counts, theta_PK):
    """A cheap start for the weights: each document's word-averaged topic responsibilities."""
    X = sp.csr_matrix((counts.data, counts.indices, counts.indptr), shape=counts.shape)
    resp = theta_PK / theta_PK.sum(axis=1, keepdims=True)
    omega = np.asarray(X @ resp) + 1e-3
    return omega / omega.sum(axis=1, keepdims=True)


def start(counts, theta_PK):
    """A block of ``counts`` with the start weights under ``theta_PK``."""
    omega = start_weights(counts, theta_PK)
    return Block(counts, omega, omega.copy())


def with_weights(counts, omega_NK):
    """A block of ``counts`` with the given weights (copied)."""
    return Block(counts, omega_NK.copy(), omega_NK.copy())


# ---------------------------------------------------------------------- shares of sums
def objective(block, theta_PK, c, which="omega"):
    r"""The documents' share of the log posterior at the weights ``which`` (``omega``,
    ``new_omega``): :math:`\sum_{ij} x_{ij}\log q_{ij} + c\sum_{ik}\log\omega_{ik}`."""
    return _objective(block.counts, theta_PK, getattr(block, which), c)


def _objective(counts, theta_PK, omega_NK, c):
    return _kernels.log_likelihood(counts.indptr, counts.indices, counts.data, theta_PK,
                                   omega_NK) + float(c * np.log(omega_NK).sum())


def _objectives(counts, theta_PK, omega_NK, c):
    r"""Every document's :math:`\sum_j x_{ij}\log q_{ij} + c\sum_k\log\omega_{ik}` (n,)."""
    out = np.empty(counts.shape[0])
    _kernels.document_objectives(counts.indptr, counts.indices, counts.data, theta_PK,
                                 omega_NK, c, out)
    return out


def score(block, theta_PK, c):
    """The block's share of the log posterior at its weights under ``theta_PK``, the topics
    the loop holds; the block keeps the documents' shares for the next weight solve."""
    values = _objectives(block.counts, theta_PK, block.omega, c)
    return replace(block, objectives=values), float(values.sum())


def score_candidate(block, theta_PK, c):
    """:func:`score` of the candidate weights under the candidate topics ``theta_PK``."""
    values = _objectives(block.counts, theta_PK, block.new_omega, c)
    return replace(block, new_objectives=values), float(values.sum())


def candidate_and_secant(block, theta_PK, c):
    """:func:`score_candidate`, and the weights' share of the secant step's
    :math:`U^\\top U`, :math:`V^\\top U` and :math:`V^\\top V` (from the last three
    iterates), in one pass."""
    h0, h1, h2 = _last(block.history, 3)
    U, V = h1 - h0, h2 - h1
    block, share = score_candidate(block, theta_PK, c)
    return block, np.array([share, U @ U, V @ U, V @ V])


def residual(block, theta_PK, threshold=3.0):
    """The documents' share of the residual topic (see
    :func:`~mixbayes.topics.starts.residual_topic`): the excess counts per word where the
    standardised residual passes ``threshold``, the positive excess per word, and how many
    residuals pass."""
    counts = block.counts
    n, p = counts.shape
    rows = np.repeat(np.arange(n), np.diff(counts.indptr))
    q = np.einsum("ek,ek->e", block.omega[rows], theta_PK[counts.indices])
    expected = counts.lengths[rows] * q
    excess = counts.data - expected
    standardised = excess / np.sqrt(np.maximum(expected * (1.0 - q), 1e-300))
    passing, positive = standardised > threshold, excess > 0
    return np.concatenate([
        np.bincount(counts.indices[passing], weights=excess[passing], minlength=p),
        np.bincount(counts.indices[positive], weights=excess[positive], minlength=p),
        [passing.sum()]])


def weight_sums(block):
    """Column sums of the weights (for the mean usage of every topic)."""
    return block.omega.sum(axis=0)


# ---------------------------------------------------------------------- steps
def restart(block, theta_PK):
    """The start weights under ``theta_PK`` (as :func:`start`), the history forgotten."""
    return start(block.counts, theta_PK)


def solve(block, theta_PK, c, tol, max_steps):
    """The conditional MAP weights under ``theta_PK``, solved from the current weights."""
    omega = block.omega.copy()
    if theta_PK.shape[1] > 1:
        solve_weights(block.counts, theta_PK, omega, c, tol, max_steps)
    return replace(block, omega=omega, warm=omega.copy(), objectives=None)


def solve_weights(counts, theta_PK, omega_NK, c, tol, max_steps, start_NK=None,
                  objectives=None, skip=None):
    """Conditional MAP weights of every document given the topics, in place in ``omega_NK``.

    The solver starts from ``start_NK`` (default: ``omega_NK``), which then holds the solutions;
    ``omega_NK`` takes each solution that does not lower the document's objective, which
    ``objectives`` gives at ``omega_NK`` where known (:func:`score`); documents where ``skip``
    is true are left as they are. Returns the Newton steps per document.
    """
    steps = np.empty(counts.shape[0], dtype=np.int64)
    start = omega_NK if start_NK is None else start_NK
    _kernels.solve_weights(counts.indptr, counts.indices, counts.data, theta_PK, omega_NK,
                           start, c, tol, max_steps, steps, objectives, skip)
    return steps


def em(block, theta_PK, c):
    r"""The document half of an EM step at the current weights: the new weights
    :math:`\omega_{ik} \propto t_{ik} + c` replace the current ones; returns the block and
    its word counts :math:`\hat x_{jk}` (p, K), whose sum over blocks gives the new topics."""
    omega, word_counts = _em(block.counts, theta_PK, block.omega, c)
    return replace(block, omega=omega, objectives=None), word_counts


def _em(counts, theta_PK, omega_NK, c):
    n, p = counts.shape
    K = theta_PK.shape[1]
    ratio, topic_counts, word_counts = np.empty(counts.data.shape[0]), np.empty((n, K)), \
        np.empty((p, K))
    _kernels.em_documents(counts.indptr, counts.indices, counts.data, theta_PK, omega_NK,
                          ratio, topic_counts)
    _kernels.em_words(counts.col_indptr, counts.col_rows, counts.col_to_csr, ratio, theta_PK,
                      omega_NK, word_counts)
    omega = topic_counts + c
    omega /= omega.sum(axis=1, keepdims=True)
    return omega, word_counts


def solve_em(block, theta_PK, c, tol, max_steps, settle_tol=0.0, lazy=False):
    """One iteration's document work: the weights solved under ``theta_PK`` from the warm
    start, then the EM step from them, whose weights become the candidate ``new_omega``;
    returns the block and its word counts.

    A document whose solve moved its weights by less than ``settle_tol`` (L1) is *settled*;
    a ``lazy`` iteration takes no Newton step for settled documents (their weights still take
    the EM step), and a document stays settled until a full iteration moves it more.
    """
    omega, warm, settled = block.omega, block.warm, block.settled
    if theta_PK.shape[1] > 1:
        skip = settled if lazy else None
        omega, warm = omega.copy(), warm.copy()
        solve_weights(block.counts, theta_PK, omega, c, tol, max_steps, warm,
                      block.objectives, skip)
        settled = np.abs(warm - block.warm).sum(axis=1) < settle_tol
    new_omega, word_counts = _em(block.counts, theta_PK, omega, c)
    return replace(block, omega=omega, warm=warm, new_omega=new_omega, objectives=None,
                   settled=settled), word_counts


def weight_logits(omega_NK):
    """Logits of the weights against the first topic, as one vector."""
    log_omega = np.log(omega_NK)
    return (log_omega[:, 1:] - log_omega[:, :1]).ravel()


def _last(history, n):
    """The last ``n`` iterates of ``history``, its oldest repeated in front where it holds fewer.

    A block always holds as many as the loop's topics do, but for one rebuilt after a lost
    worker (:mod:`mixbayes.distributed`), which starts again with none: its documents then add
    nothing to the secant step's dot products (their differences are zero) and keep their EM
    weights under its proposal, until they have iterates of their own.
    """
    return (history[:1] * (n - len(history)) + tuple(history))[-n:]


def push(block):
    """Keep the candidate weights' logits as the newest of the secant step's iterates."""
    return replace(block, history=block.history + (weight_logits(block.new_omega),))


def propose(block, theta_PK, coefficients, c):
    r"""The extrapolated weights :math:`Y = Y_3 + aU + bV` for ``coefficients`` :math:`(a, b)`,
    :math:`U = Y_2 - Y_1`, :math:`V = Y_3 - Y_2` (softmax of the logits, raised to the least
    weight a MAP can hold, :math:`c/(m_i + Kc)`); returns the block with the proposal and its
    share of the log posterior under ``theta_PK``."""
    h0, h1, h2 = _last(block.history, 3)
    a, b = coefficients
    Y = h2 + (h1 - h0) * a + (h2 - h1) * b
    n, K = block.omega.shape
    omega = np.zeros((n, K))
    omega[:, 1:] = Y.reshape(n, K - 1)
    omega -= omega.max(axis=1, keepdims=True)
    np.exp(omega, out=omega)
    omega /= omega.sum(axis=1, keepdims=True)
    np.maximum(omega, (c / (block.counts.lengths + K * c))[:, None], out=omega)
    omega /= omega.sum(axis=1, keepdims=True)
    values = _objectives(block.counts, theta_PK, omega, c)
    return replace(block, proposal=(omega, Y, values)), float(values.sum())


def accept(block):
    """The proposal becomes the candidate, its logits the only iterate kept (the next cycle of
    the extrapolation starts there)."""
    omega, Y, values = block.proposal
    return replace(block, new_omega=omega, new_objectives=values, history=(Y,), proposal=None)


def drop_oldest(block):
    return replace(block, history=block.history[1:], proposal=None)


def keep_current(block):
    """The candidate is the current weights (a step that would lower the log posterior)."""
    return replace(block, new_omega=block.omega, new_objectives=block.objectives)


def commit(block):
    """The candidate becomes the current weights."""
    return replace(block, omega=block.new_omega, new_omega=None, proposal=None,
                   objectives=block.new_objectives, new_objectives=None)


class Documents:
    """Every document in one :class:`Block`, in this process: the interface the MAP loop calls,
    which a cluster implements over shards (``sum`` of the shares, ``update`` of the blocks)."""

    def __init__(self, block):
        self.block = block

    @property
    def omega(self):
        return self.block.omega

    @property
    def total_words(self):
        return float(self.block.counts.lengths.sum())

    def sum(self, function, *args):
        return function(self.block, *args)

    def update(self, function, *args):
        self.block = function(self.block, *args)

    def update_sum(self, function, *args):
        self.block, share = function(self.block, *args)
        return share
