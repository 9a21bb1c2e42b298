r"""Joint MAP of topics and weights by block relaxation (document 3, §3; R package maptpx).

The objective, in the natural-exponential-family parameterisation of both blocks, is

.. math::

    L(\Theta, \Omega) = \sum_{ij} x_{ij}\log q_{ij} + \alpha\sum_{jk}\log\theta_{jk}
        + c\sum_{ik}\log\omega_{ik}, \qquad q_{ij} = \sum_k \omega_{ik}\theta_{jk},

(topics :math:`\theta_k \sim \mathrm{Dir}(\alpha)`, weights :math:`\omega_i \sim \mathrm{Dir}(c)`,
:math:`c = 1/K`, each with its logit Jacobian). One iteration is

1. the exact conditional MAP of every :math:`\omega_i` given :math:`\Theta` (active-set SQP,
   :func:`~mixbayes.topics._kernels.solve_document`);
2. one EM step for both blocks with the word-to-topic allocations as missing data:
   :math:`\hat x_{jk} = \theta_{jk}\sum_i \omega_{ik}x_{ij}/q_{ij}`,
   :math:`t_{ik} = \omega_{ik}\sum_j\theta_{jk}x_{ij}/q_{ij}`, then
   :math:`\theta_{jk} \propto \hat x_{jk} + \alpha` and :math:`\omega_{ik} \propto t_{ik} + c`;
3. once the gain per iteration is below ``qn_below``, a quasi-Newton (secant) extrapolation
   from the last three iterates :math:`Y_1, Y_2, Y_3` in logit coordinates,
   :math:`Y = Y_3 + V\,(V^\top U)/(U^\top U - V^\top U)`, :math:`U = Y_2 - Y_1`,
   :math:`V = Y_3 - Y_2`, kept only if it raises :math:`L`. The reference tries only this full
   jump; with EM's rates near 1 (0.9-0.96 on the document's simulation) and unequal across
   coordinates it overshoots almost always, so we also try the jump halved up to
   ``qn_halvings`` times and keep the first that raises :math:`L`.

Each block can only raise :math:`L`, so its trace never decreases. The loop stops when both the
gain :math:`|\Delta L|` and :math:`\sum|\Delta\Theta|` are below ``tol`` (absolute, as the
reference).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from . import _kernels


@dataclass
class CountsCSR:
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


@dataclass
class MapState:
    """Topics (p, K) word-major, weights (n, K), and the log posterior at them."""

    theta_PK: np.ndarray
    omega_NK: np.ndarray
    log_posterior: float = np.nan


def log_prior(theta_PK, omega_NK, alpha, c):
    r""":math:`\alpha\sum\log\theta + c\sum\log\omega` (the unnormalised NEF log priors)."""
    return float(alpha * np.log(theta_PK).sum() + c * np.log(omega_NK).sum())


def log_posterior(counts, theta_PK, omega_NK, alpha, c):
    """The objective :math:`L` at ``(theta_PK, omega_NK)``."""
    return _kernels.log_likelihood(counts.indptr, counts.indices, counts.data, theta_PK,
                                   omega_NK) + log_prior(theta_PK, omega_NK, alpha, c)


def solve_weights(counts, theta_PK, omega_NK, c, tol, max_steps, start_NK=None):
    """Conditional MAP weights of every document given the topics, in place in ``omega_NK``.

    The solver starts from ``start_NK`` (default: ``omega_NK``), which then holds the solutions;
    ``omega_NK`` takes each solution that does not lower the document's objective. Returns the
    Newton steps per document.
    """
    steps = np.empty(counts.shape[0], dtype=np.int64)
    start = omega_NK if start_NK is None else start_NK
    _kernels.solve_weights(counts.indptr, counts.indices, counts.data, theta_PK, omega_NK,
                           start, c, tol, max_steps, steps)
    return steps


@dataclass
class _Workspace:
    ratio: np.ndarray
    topic_counts_NK: np.ndarray
    word_counts_PK: np.ndarray

    @classmethod
    def for_problem(cls, counts, K):
        n, p = counts.shape
        return cls(np.empty(counts.data.shape[0]), np.empty((n, K)), np.empty((p, K)))


def em_step(counts, theta_PK, omega_NK, alpha, c, work=None):
    """One EM step for both blocks; returns the new ``(theta_PK, omega_NK)`` and the
    log-likelihood at the *old* parameters (a by-product of the pass)."""
    K = theta_PK.shape[1]
    work = work or _Workspace.for_problem(counts, K)
    loglik = _kernels.em_documents(counts.indptr, counts.indices, counts.data, theta_PK,
                                   omega_NK, work.ratio, work.topic_counts_NK)
    _kernels.em_words(counts.col_indptr, counts.col_rows, counts.col_to_csr, work.ratio,
                      theta_PK, omega_NK, work.word_counts_PK)
    theta = work.word_counts_PK + alpha
    theta /= theta.sum(axis=0)
    omega = work.topic_counts_NK + c
    omega /= omega.sum(axis=1, keepdims=True)
    return theta, omega, loglik


def to_logits(theta_PK, omega_NK):
    """Logit coordinates (first element of every simplex as the reference) as one vector."""
    log_theta = np.log(theta_PK)
    log_omega = np.log(omega_NK)
    return np.concatenate([(log_theta[1:] - log_theta[:1]).ravel(),
                           (log_omega[:, 1:] - log_omega[:, :1]).ravel()])


def from_logits(Y, p, n, K):
    """Inverse of :func:`to_logits` (softmax with the reference coordinate at 0)."""
    theta = np.zeros((p, K))
    theta[1:] = Y[: (p - 1) * K].reshape(p - 1, K)
    omega = np.zeros((n, K))
    omega[:, 1:] = Y[(p - 1) * K:].reshape(n, K - 1)
    for logits, axis in ((theta, 0), (omega, 1)):
        logits -= logits.max(axis=axis, keepdims=True)
        np.exp(logits, out=logits)
        logits /= logits.sum(axis=axis, keepdims=True)
    return theta, omega


def _floor_to_bounds(theta_PK, omega_NK, counts, alpha, c):
    r"""Raise extrapolated probabilities to the least values the EM and weight steps can produce,
    and renormalise.

    An EM step gives :math:`\theta_{jk} \ge \alpha/(\sum_i m_i + p\alpha)` and every conditional
    MAP weight is at least :math:`c/(m_i + Kc)`; a secant jump in logit space can send
    probabilities far below (down to subnormal numbers, whose arithmetic is a hundred times
    slower), where no MAP lies.
    """
    p, K = theta_PK.shape
    np.maximum(theta_PK, alpha / (counts.lengths.sum() + p * alpha), out=theta_PK)
    theta_PK /= theta_PK.sum(axis=0)
    np.maximum(omega_NK, (c / (counts.lengths + K * c))[:, None], out=omega_NK)
    omega_NK /= omega_NK.sum(axis=1, keepdims=True)


@dataclass
class FitSettings:
    alpha: float
    c: float
    tol: float
    max_iter: int
    weight_tol: float
    weight_max_steps: int
    qn_below: float  # use the quasi-Newton step once the last gain is below this
    qn_halvings: int = 4  # shorter secant jumps tried before giving up on one


@dataclass
class FitResult:
    state: MapState
    trace: list = field(default_factory=list)
    converged: bool = False
    n_iter: int = 0
    qn_accepted: int = 0


def fit_map(counts, theta_PK, omega_NK, settings, callback=None):
    """Block relaxation from ``(theta_PK, omega_NK)`` to a joint MAP (see module docstring)."""
    # single-threaded BLAS inside the loop: its only BLAS calls are the secant step's dot
    # products, and OpenBLAS threads woken between two numba parallel regions fight numba's
    # spinning OpenMP threads for the two cores (stalls of 4-25 ms per region here)
    with threadpool_limits(limits=1, user_api="blas"):
        return _fit_map(counts, theta_PK, omega_NK, settings, callback)


def _fit_map(counts, theta_PK, omega_NK, settings, callback):
    n, p = counts.shape
    K = theta_PK.shape[1]
    s = settings
    work = _Workspace.for_problem(counts, K)
    theta, omega = theta_PK.copy(), omega_NK.copy()
    L = log_posterior(counts, theta, omega, s.alpha, s.c)
    result = FitResult(MapState(theta, omega, L), [L])
    history = []  # logit coordinates of the last EM iterates, for the secant step
    gain = np.inf
    # the weight solve starts from its own last solution (the conditional MAP under the
    # previous topics), which is closer to the next one than the EM or secant update of omega
    warm = omega.copy()
    for iteration in range(1, s.max_iter + 1):
        if K > 1:
            omega = omega.copy()
            solve_weights(counts, theta, omega, s.c, s.weight_tol, s.weight_max_steps, warm)
        new_theta, new_omega, _ = em_step(counts, theta, omega, s.alpha, s.c, work)
        L_new = log_posterior(counts, new_theta, new_omega, s.alpha, s.c)
        if K > 1 and gain < s.qn_below:
            history.append(to_logits(new_theta, new_omega))
            if len(history) == 3:
                U = history[1] - history[0]
                V = history[2] - history[1]
                uu, vu = U @ U, V @ U
                accepted = False
                if uu > vu > 0:
                    # the secant jump to the limit assumes one common rate of convergence; when
                    # the rates differ it overshoots, so its length is halved until L rises
                    jump = vu / (uu - vu)
                    for _ in range(s.qn_halvings + 1):
                        Y = history[2] + V * jump
                        qn_theta, qn_omega = from_logits(Y, p, n, K)
                        _floor_to_bounds(qn_theta, qn_omega, counts, s.alpha, s.c)
                        L_qn = log_posterior(counts, qn_theta, qn_omega, s.alpha, s.c)
                        if L_qn > L_new:
                            new_theta, new_omega, L_new = qn_theta, qn_omega, L_qn
                            history = [history[1], Y]
                            accepted = True
                            result.qn_accepted += 1
                            break
                        jump *= 0.5
                if not accepted:
                    history = history[1:]
        if L_new < L:
            # cannot happen in exact arithmetic (every block raises L); guard against rounding
            new_theta, new_omega, L_new = theta, omega, L
        gain = L_new - L
        theta_change = float(np.abs(new_theta - theta).sum())
        theta, omega, L = new_theta, new_omega, L_new
        result.trace.append(L)
        result.n_iter = iteration
        if callback is not None:
            callback(iteration, L, theta)
        if abs(gain) < s.tol and theta_change < s.tol:
            result.converged = True
            break
    result.state = MapState(theta, omega, L)
    return result
