r"""Joint MAP of topics and weights by block relaxation (Taddy 2012, §3; R package maptpx).

The objective, in the natural-exponential-family parameterisation of both blocks, is

.. math::

    L(\Theta, \Omega) = \sum_{ij} x_{ij}\log q_{ij} + \alpha\sum_{jk}\log\theta_{jk}
        + c\sum_{ik}\log\omega_{ik}, \qquad q_{ij} = \sum_k \omega_{ik}\theta_{jk},

(topics :math:`\theta_k \sim \mathrm{Dir}(\alpha)`, weights :math:`\omega_i \sim \mathrm{Dir}(c)`,
:math:`c = 1/K`, each with its logit Jacobian). One iteration is

1. the conditional MAP of every :math:`\omega_i` given :math:`\Theta` (active-set SQP,
   :func:`~mixbayes.topics._kernels.solve_document`, from the previous iteration's solution):
   solved to ``weight_tol`` in the first ``SOLVED_ITERATIONS`` iterations, then one Newton
   step per iteration (the weights after the loop are solved to ``weight_tol`` again);
2. one EM step for both blocks with the word-to-topic allocations as missing data:
   :math:`\hat x_{jk} = \theta_{jk}\sum_i \omega_{ik}x_{ij}/q_{ij}`,
   :math:`t_{ik} = \omega_{ik}\sum_j\theta_{jk}x_{ij}/q_{ij}`, then
   :math:`\theta_{jk} \propto \hat x_{jk} + \alpha` and :math:`\omega_{ik} \propto t_{ik} + c`;
3. once the gain per iteration is below ``qn_below`` (by default from the first iteration), an
   extrapolation from the last three iterates :math:`Y_1, Y_2, Y_3` in logit coordinates
   (:math:`U = Y_2 - Y_1`, :math:`V = Y_3 - Y_2`), kept only if it raises :math:`L`: SQUAREM's
   step (Varadhan & Roland 2008, scheme S3),
   :math:`Y = Y_1 + 2sU + s^2(V - U) = Y_3 - (1 - s)^2U + (s^2 - 1)V` with
   :math:`s = \lVert U\rVert/\lVert V - U\rVert`, and where it would lower :math:`L`,
   :math:`s` moved half way to 1 (the plain EM iterate) up to ``qn_halvings`` times; after
   an accepted step the next three iterates start from it. The reference (maptpx) tries one
   secant jump to the limit, :math:`Y = Y_3 + V\,(V^\top U)/(U^\top U - V^\top U)`, and only
   once the gain is below an absolute 100 nats; on 20 Newsgroups' train split (K = 20) that
   waited about 100 iterations, and SQUAREM's step tried from the first iteration stopped
   after 119 iterations where the secant stopped after 183 (133 with the secant also tried
   from the first iteration), the held-out score and coherence the same.

One Newton step with its line search is a block step that can only raise :math:`L`, and at
the loop's fixed point it is the exact conditional MAP (a step from the MAP stays there), so
the fixed point is the one of exact solves. It is taken because a solve to ``weight_tol``
from a warm start spent two Newton steps a document an iteration throughout (the second
only confirming the first; each step's Hessian, :math:`K^2/2` products a word, is most of an
iteration's cost): on 20 Newsgroups' train split (K = 20) one step from the fourth iteration
on cost 45.1 CPU seconds instead of 63.8 for 137 iterations instead of 119, the held-out
completion log-likelihood (-8.0796 a word) and NPMI (0.282) the same. The path is more
sensitive to rounding than with solves to tolerance (a rounding-level difference of the
topics can flip a document's active set), so fits over shards part from the in-process one
before meeting it again at the MAP; :mod:`mixbayes.distributed`'s tests compare trajectories
under solves to tolerance.

Lazy iterations. Between full iterations (every ``full_every``-th, and the first
``SOLVED_ITERATIONS``), a document whose last Newton step moved its weights by less than
``settle_tol`` in L1 norm takes no Newton step, only the EM step (which also raises
:math:`L`); a document stays settled until a full iteration moves it more. Settled documents
are near their conditional MAP already and the step would be most of their cost; the fixed
point is unchanged, as every document is stepped every full iteration, and the loop stops only
after a full one (a lazy iteration's small gain may be the settled documents' share left out,
and the next iteration is then a full one). On 20 Newsgroups' train split (K = 20, 2 cores,
two runs each, tomotopy's 500 sweeps beside): 25.3 and 26.5 s against 34.7 and 29.7 s for a
Newton step every document every iteration, 140 iterations either way, the held-out
completion log-likelihood (-8.0790 a word) and NPMI (0.286) the same, the log posterior 30
nats of 1.03e7 lower at the stop.

Each block can only raise :math:`L`, so its trace never decreases. The loop stops when the
gain per word, :math:`\Delta L / \sum_i m_i`, is at most ``tol`` (see
:class:`~mixbayes.topics.TopicModel` for why it is relative to the data and no longer the
reference's absolute rule).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from threadpoolctl import threadpool_limits

from . import _kernels, blocks


@dataclass
class MapState:
    """Topics (p, K) word-major and the log posterior there (the weights stay with the
    documents, :mod:`.blocks`)."""

    theta_PK: np.ndarray
    log_posterior: float = np.nan


def log_prior(theta_PK, omega_NK, alpha, c):
    r""":math:`\alpha\sum\log\theta + c\sum\log\omega` (the unnormalised NEF log priors)."""
    return float(alpha * np.log(theta_PK).sum() + c * np.log(omega_NK).sum())


def log_posterior(counts, theta_PK, omega_NK, alpha, c):
    """The objective :math:`L` at ``(theta_PK, omega_NK)``."""
    return _kernels.log_likelihood(counts.indptr, counts.indices, counts.data, theta_PK,
                                   omega_NK) + log_prior(theta_PK, omega_NK, alpha, c)


def theta_logits(theta_PK):
    """Logits of the topics against the first word, as one vector."""
    log_theta = np.log(theta_PK)
    return (log_theta[1:] - log_theta[:1]).ravel()


def theta_from_logits(Y, p, K):
    """Inverse of :func:`theta_logits` (softmax with the reference word at 0)."""
    theta = np.zeros((p, K))
    theta[1:] = Y.reshape(p - 1, K)
    theta -= theta.max(axis=0, keepdims=True)
    np.exp(theta, out=theta)
    theta /= theta.sum(axis=0, keepdims=True)
    return theta


def topics_from_counts(word_counts_PK, alpha):
    r"""The EM step's topics :math:`\theta_{jk} \propto \hat x_{jk} + \alpha`."""
    theta = word_counts_PK + alpha
    theta /= theta.sum(axis=0)
    return theta


def _floor_topics(theta_PK, total_words, alpha):
    r"""Raise extrapolated topic probabilities to the least value an EM step can produce,
    :math:`\alpha/(\sum_i m_i + p\alpha)`, and renormalise (the weights get the same
    treatment in :func:`~mixbayes.topics.blocks.propose`, with their bound :math:`c/(m_i + Kc)`).

    A secant jump in logit space can send probabilities far below (down to subnormal numbers,
    whose arithmetic is a hundred times slower), where no MAP lies.
    """
    p = theta_PK.shape[0]
    np.maximum(theta_PK, alpha / (total_words + p * alpha), out=theta_PK)
    theta_PK /= theta_PK.sum(axis=0)


# iterations whose weight solves run to weight_tol; one Newton step a document after them
SOLVED_ITERATIONS = 3
SETTLE_TOL, FULL_EVERY = 1e-3, 5


@dataclass
class FitSettings:
    alpha: float
    c: float
    tol: float  # per word: stop when the gain of L is at most tol * (number of words)
    max_iter: int
    weight_tol: float
    weight_max_steps: int
    qn_below: float  # use the quasi-Newton step once the last gain is below this
    qn_halvings: int = 4  # shorter secant jumps tried before giving up on one
    # lazy iterations (see the module docstring): a Newton step only for documents its last
    # one moved by at least settle_tol (L1), every document's every full_every-th iteration
    settle_tol: float = SETTLE_TOL
    full_every: int = FULL_EVERY


@dataclass
class FitResult:
    state: MapState
    trace: list = field(default_factory=list)
    converged: bool = False
    n_iter: int = 0
    qn_accepted: int = 0


def fit_map(documents, theta_PK, settings, callback=None):
    """Block relaxation from the topics ``theta_PK`` and the weights held by ``documents`` to a
    joint MAP (see module docstring). ``documents`` is a
    :class:`~mixbayes.topics.blocks.Documents` (or a cluster's shards of them), which ends
    holding the weights of the returned state."""
    # single-threaded BLAS inside the loop: its only BLAS calls are the secant step's dot
    # products, and OpenBLAS threads woken between two numba parallel regions fight numba's
    # spinning OpenMP threads for the two cores (stalls of 4-25 ms per region here)
    with threadpool_limits(limits=1, user_api="blas"):
        return _fit_map(documents, theta_PK, settings, callback)


def _squarem_step(uu, vu, vv):
    r"""SQUAREM's step length :math:`s = \lVert r\rVert/\lVert v\rVert` from the dot products
    of :math:`U = Y_2 - Y_1` and :math:`V = Y_3 - Y_2` (:math:`r = U`, :math:`v = V - U`), or
    None where it would not extrapolate (:math:`s \le 1` is the plain EM step)."""
    ww = vv - 2.0 * vu + uu
    if not (ww > 0.0 and uu > 0.0):
        return None
    step = float(np.sqrt(uu / ww))
    return step if step > 1.0 else None


def _fit_map(docs, theta_PK, settings, callback):
    p, K = theta_PK.shape
    s = settings

    def log_prior(theta):
        return s.alpha * float(np.log(theta).sum())

    theta = theta_PK.copy()
    threshold = s.tol * docs.total_words  # the gain at which the loop stops
    L = docs.update_sum(blocks.score, theta, s.c) + log_prior(theta)
    result = FitResult(MapState(theta, L), [L])
    history = []  # the topics' logits of the last EM iterates (the weights' are in docs)
    gain = np.inf
    lazy = False
    # the weight solve starts from its own last solution (the conditional MAP under the
    # previous topics), which is closer to the next one than the EM or secant update of omega
    for iteration in range(1, s.max_iter + 1):
        steps = s.weight_max_steps if iteration <= SOLVED_ITERATIONS else 1
        word_counts = docs.update_sum(blocks.solve_em, theta, s.c, s.weight_tol, steps,
                                      s.settle_tol, lazy)
        new_theta = topics_from_counts(word_counts, s.alpha)
        secant = K > 1 and gain < s.qn_below
        if secant:
            history.append(theta_logits(new_theta))
            docs.update(blocks.push)
        if not (secant and len(history) == 3):
            L_new = docs.update_sum(blocks.score_candidate, new_theta, s.c) \
                + log_prior(new_theta)
        else:
            U, V = history[1] - history[0], history[2] - history[1]
            # one pass over the documents for their share of L and of the dot products
            share = docs.update_sum(blocks.candidate_and_secant, new_theta, s.c)
            L_new = share[0] + log_prior(new_theta)
            uu, vu, vv = share[1:] + np.array([U @ U, V @ U, V @ V])
            step = _squarem_step(uu, vu, vv)
            # SQUAREM's step length (Varadhan & Roland 2008), moved half way towards the plain
            # EM step (step 1) until L rises
            for _ in range(s.qn_halvings + 1 if step is not None else 0):
                coefficients = (-(1.0 - step) ** 2, step * step - 1.0)
                Y = history[2] + U * coefficients[0] + V * coefficients[1]
                qn_theta = theta_from_logits(Y, p, K)
                _floor_topics(qn_theta, docs.total_words, s.alpha)
                L_qn = docs.update_sum(blocks.propose, qn_theta, coefficients, s.c) \
                    + log_prior(qn_theta)
                if L_qn > L_new:
                    new_theta, L_new = qn_theta, L_qn
                    docs.update(blocks.accept)
                    history = [Y]
                    result.qn_accepted += 1
                    break
                step = 0.5 * (step + 1.0)
            else:
                history = history[1:]
                docs.update(blocks.drop_oldest)
        if L_new < L:
            # cannot happen in exact arithmetic (every block raises L); guard against rounding
            new_theta, L_new = theta, L
            docs.update(blocks.keep_current)
        gain = L_new - L
        theta, L = new_theta, L_new
        docs.update(blocks.commit)
        result.trace.append(L)
        result.n_iter = iteration
        if callback is not None:
            callback(iteration, L, theta)
        if gain <= threshold and not lazy:
            result.converged = True
            break
        # a small gain of a lazy iteration may be the settled documents' share left out: the
        # next iteration is a full one, and only a full one may stop the loop
        lazy = (iteration >= SOLVED_ITERATIONS and (iteration + 1) % s.full_every != 0
                and gain > threshold)
    result.state = MapState(theta, L)
    return result
