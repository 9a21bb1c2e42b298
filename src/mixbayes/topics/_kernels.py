r"""numba kernels of the joint-MAP topic model: the per-document weight solver and the EM pass.

Notation (Taddy 2012): counts :math:`x_{ij}`, document lengths :math:`m_i`, topics
:math:`\theta_k` (stored word-major as ``theta_PK[j, k]``), weights :math:`\omega_i` (``omega_NK``)
and word probabilities :math:`q_{ij} = \sum_k \omega_{ik}\theta_{jk}`. Every kernel loops over
documents (or words) in a ``prange`` and reduces in a fixed order, so its results do not depend
on the number of threads.

The weight problem
------------------
Given the topics, document :math:`i`'s weights maximise

.. math::

    l(\omega) = \sum_j x_j \log q_j(\omega) + c \sum_k \log\omega_k,
    \qquad \mathbf 1^\top\omega = 1,

the conditional log posterior in the natural (logit) parameterisation, where the
:math:`\mathrm{Dir}(c)` prior on :math:`\omega` gains a Jacobian :math:`\prod_k\omega_k` (the
reference uses :math:`c = 1/K`). It is strictly concave with gradient and negative Hessian

.. math::

    g_k = a_k + c/\omega_k,\quad a_k = \sum_j x_j\theta_{jk}/q_j, \qquad
    N_{kh} = \sum_j x_j\theta_{jk}\theta_{jh}/q_j^2 + \delta_{kh}\,c/\omega_k^2.

Stationarity :math:`g_k = \lambda` with :math:`\sum_k\omega_k g_k = m + Kc` gives
:math:`\omega_k = c/(m + Kc - a_k)`, and :math:`a_k \ge 0` bounds every weight of the MAP below by
:math:`\ell = c/(m + Kc)`. The solver is the reference's active-set SQP — Newton steps from the
bordered KKT system :math:`[N\ \mathbf 1; \mathbf 1^\top\ 0][\Delta; \lambda] = [g; 0]`, the
longest step that keeps every weight feasible, a coordinate that reaches its bound joining the
active set — with two changes that make its answer the exact conditional MAP: the bound is
:math:`\ell` rather than 0 (so a coordinate fixed on it is never fixed at a non-optimal point,
and the log prior stays finite), an active coordinate whose gradient exceeds the multiplier is
released, and a step that would lower :math:`l` is halved (Newton's direction is always an ascent
direction here, since :math:`g^\top\Delta = \Delta^\top N\Delta > 0`).

Two things keep a step cheap. A weight that starts on its bound (a warm start from a solve that
ended there) starts in the active set, so the step is solved, and :math:`N` formed, on the free
coordinates only, and is not cut to nothing by a weight already on the bound. And on the free set
:math:`N = D + AA^\top` (:math:`D` the prior's diagonal, :math:`A` the document's scaled
columns): with fewer distinct words :math:`n` than free topics, the solve goes through
Woodbury's identity (an :math:`n \times n` system) instead of the :math:`|F| \times |F|` Gram
matrix, :math:`O(|F|n^2)` in place of :math:`O(|F|^2 n + |F|^3)`. On tweet (K = 89, 8 distinct
words a document) that is 4-6x less time for the whole fit, the same log posteriors.
"""

import math

import numpy as np
from numba import njit, prange

from .._kernel_tools import ordered_sum, twice

_N_CHUNKS = 64


@njit(cache=True, inline="always")
def _mix(w, row):
    """:math:`q = \\sum_k \\omega_k\\theta_{jk}`: a word's probability under the weights ``w``."""
    q = 0.0
    for k in range(w.shape[0]):
        q += w[k] * row[k]
    return q


@njit(cache=True)
def document_objective(words, counts, theta_PK, w, c):
    """:math:`l(\\omega)` of one document (words and counts of its non-zero entries)."""
    K = w.shape[0]
    total = 0.0
    for e in range(words.shape[0]):
        row = theta_PK[words[e]]
        q = _mix(w, row)
        total += counts[e] * math.log(q)
    for k in range(K):
        total += c * math.log(w[k])
    return total


@njit(cache=True)
def document_derivatives(words, counts, theta_PK, w, c, g, N, scaled_KW):
    r"""Write the gradient ``g`` (K,) and the negative Hessian ``N`` (K, K) of :math:`l` at ``w``.

    The likelihood part of ``N`` is the Gram matrix of the columns
    :math:`\sqrt{x_j}\,\theta_{j\cdot}/q_j`, staged topic-major in ``scaled_KW`` (K, >= n_words)
    so that each entry is one contiguous dot product (vectorised; half the time of
    accumulating word by word). The solver forms only the rows it needs
    (:func:`_gradient_and_columns`, :func:`_gram_rows`); this is all of them.
    """
    K = w.shape[0]
    _gradient_and_columns(words, counts, theta_PK, w, c, g, scaled_KW)
    _gram_rows(scaled_KW, words.shape[0], w, c, N, np.arange(K), 0, K)


@njit(cache=True, fastmath=True)
def _gradient_and_columns(words, counts, theta_PK, w, c, g, scaled_KW):
    """The gradient ``g`` of :math:`l` at ``w`` and the scaled columns of
    :func:`document_derivatives`, without the Gram matrix: :func:`_gram_rows` adds its
    entries only for the coordinates a Newton step solves for."""
    K = w.shape[0]
    for k in range(K):
        g[k] = c / w[k]
    for e in range(words.shape[0]):
        row = theta_PK[words[e]]
        q = _mix(w, row)
        s = counts[e] / q
        r = math.sqrt(counts[e]) / q
        for k in range(K):
            g[k] += s * row[k]
            scaled_KW[k, e] = r * row[k]


@njit(cache=True, fastmath=True)
def _gram_rows(scaled_KW, n_words, w, c, N, free, first, n_free):
    """Fill ``N[k, h]`` (and ``N[h, k]``) for ``k`` in ``free[first:n_free]`` and ``h`` in
    ``free[:n_free]`` up to ``k``: the negative Hessian of :func:`document_derivatives` on the
    coordinates of the free set the entries are not yet known for."""
    for a in range(first, n_free):
        k = free[a]
        x = scaled_KW[k]
        for b in range(a + 1):
            h = free[b]
            y = scaled_KW[h]
            total = 0.0
            for e in range(n_words):
                total += x[e] * y[e]
            N[k, h] = total
            N[h, k] = total
        N[k, k] += c / (w[k] * w[k])


@njit(cache=True)
def _cholesky_solve_two(N, free, n_free, L, y, z):
    """Cholesky-factor ``N`` restricted to the ``free`` coordinates and solve ``N y = g``-ready
    systems: on entry ``y`` holds the right-hand side, ``z`` is set to ``N^-1 1``; returns False
    if the matrix is not numerically positive definite."""
    for a in range(n_free):  # gathered into L, factored there in place
        for b in range(a + 1):
            L[a, b] = N[free[a], free[b]]
    if not _cholesky(L, n_free, L):
        return False
    for a in range(n_free):
        z[a] = 1.0
    _cholesky_solve(L, n_free, y)
    _cholesky_solve(L, n_free, z)
    return True


@njit(cache=True)
def _cholesky(M, n, L):
    """The Cholesky factor of the leading ``n`` x ``n`` block of ``M`` (lower triangle read)
    into ``L`` (which may be ``M`` itself: each entry is read before it is overwritten); False
    if that block is not numerically positive definite."""
    for a in range(n):
        for b in range(a + 1):
            s = M[a, b]
            for t in range(b):
                s -= L[a, t] * L[b, t]
            if a == b:
                if s <= 0.0:
                    return False
                L[a, a] = math.sqrt(s)
            else:
                L[a, b] = s / L[b, b]
    return True


@njit(cache=True)
def _cholesky_solve(L, n, vec):
    """``vec <- (L L^T)^-1 vec`` on its first ``n`` entries, in place."""
    for a in range(n):  # forward substitution
        s = vec[a]
        for t in range(a):
            s -= L[a, t] * vec[t]
        vec[a] = s / L[a, a]
    for a in range(n - 1, -1, -1):  # back substitution
        s = vec[a]
        for t in range(a + 1, n):
            s -= L[t, a] * vec[t]
        vec[a] = s / L[a, a]


@njit(cache=True)
def _woodbury_solve_two(scaled_KW, n_words, w, c, free, n_free, M, L, y, z, t):
    r""":func:`_cholesky_solve_two` for a document with fewer distinct words than free
    coordinates, without forming ``N``: on the free set :math:`N = D + AA^\top` with
    :math:`D = \mathrm{diag}(c/\omega_k^2)` and :math:`A` the scaled columns (``|F|`` by
    ``n_words``), so by the Woodbury identity

    .. math::

        N^{-1}v = D^{-1}v - D^{-1}A\,(I + A^\top D^{-1}A)^{-1}A^\top D^{-1}v,

    an ``n_words``-square system (``M``, factored into ``L``) in place of a ``|F|``-square one:
    :math:`O(|F|\,n^2)` where the Gram matrix and its Cholesky factor cost
    :math:`O(|F|^2 n + |F|^3)`. :math:`I + A^\top D^{-1}A` has every eigenvalue at least 1, so the
    factorisation cannot fail; ``t`` is scratch of length ``n_words``."""
    n = n_words
    for a in range(n):
        for b in range(a + 1):
            M[a, b] = 0.0
        M[a, a] = 1.0
    for i in range(n_free):
        k = free[i]
        d = w[k] * w[k] / c
        row = scaled_KW[k]
        for a in range(n):
            ra = d * row[a]
            for b in range(a + 1):
                M[a, b] += ra * row[b]
    _cholesky(M, n, L)
    for i in range(n_free):
        z[i] = 1.0
    for vec in (y, z):
        for a in range(n):
            t[a] = 0.0
        for i in range(n_free):  # vec <- D^-1 vec, t <- A^T vec
            k = free[i]
            vec[i] *= w[k] * w[k] / c
            row = scaled_KW[k]
            for a in range(n):
                t[a] += row[a] * vec[i]
        _cholesky_solve(L, n, t)  # t <- M^-1 t
        for i in range(n_free):  # vec <- vec - D^-1 A t
            k = free[i]
            row = scaled_KW[k]
            s = 0.0
            for a in range(n):
                s += row[a] * t[a]
            vec[i] -= w[k] * w[k] / c * s


@njit(cache=True)
def workspace(K, max_words):
    """The buffers of :func:`solve_document` for documents of at most ``max_words`` distinct
    words: allocated once per chunk of documents, not once per document (a dozen small
    allocations cost about as much as a Newton step on a short document)."""
    return (np.empty(K), np.empty((K, K)), np.empty((K, max(max_words, 1))), np.empty((K, K)),
            np.empty(K), np.empty(K), np.empty(K), np.empty(K), np.empty(K, dtype=np.int64),
            np.zeros(K, dtype=np.bool_))


@njit(cache=True)
def solve_document(words, counts, theta_PK, w, c, tol, max_steps, work):
    """Conditional MAP weights of one document by active-set SQP, in place in ``w``.

    ``w`` on entry is the start (any non-negative vector; it is moved into the feasible set).
    Stops when a step changes the weights by less than ``tol`` in L1 norm or after
    ``max_steps`` Newton steps. ``work`` is a :func:`workspace` for at least the document's
    words. Returns the number of steps taken and the objective :math:`l` at the result.
    """
    K = w.shape[0]
    m = 0.0
    for e in range(counts.shape[0]):
        m += counts[e]
    lower = c / (m + K * c)
    total = 0.0
    feasible = True
    for k in range(K):
        if not (w[k] > 0.0) or not math.isfinite(w[k]):
            w[k] = 0.0
        total += w[k]
    for k in range(K):
        if w[k] < lower * total:
            feasible = False
    for k in range(K):  # a feasible start is only renormalised: a warm start stays where it is
        share = w[k] / total if total > 0.0 else 1.0 / K
        w[k] = share if feasible else lower + (1.0 - K * lower) * share
    f = document_objective(words, counts, theta_PK, w, c)
    if K == 1 or m == 0.0:  # an empty document's MAP is its start, the uniform weights
        return 0, f
    g, N, scaled_KW, L, y, z, step, trial, free, active = work
    # a weight on its bound starts active (a warm start's zeros stay zeros unless the KKT test
    # below releases them): the Newton step is then solved, and the Hessian formed, on the
    # free coordinates only, and a step is not cut to nothing by a weight already on the bound
    for k in range(K):
        active[k] = w[k] <= lower * (1.0 + 1e-9)
    n_words = words.shape[0]
    n_steps = 0
    while n_steps < max_steps:
        n_steps += 1
        _gradient_and_columns(words, counts, theta_PK, w, c, g, scaled_KW)
        n_free = 0
        for k in range(K):
            if not active[k]:
                free[n_free] = k
                n_free += 1
        low_rank = n_words < n_free  # then Woodbury's identity, and no Gram matrix
        if not low_rank:
            _gram_rows(scaled_KW, n_words, w, c, N, free, 0, n_free)
        while True:  # solve on the free set; release active coordinates that want to grow
            for a in range(n_free):
                y[a] = g[free[a]]
            if low_rank:
                _woodbury_solve_two(scaled_KW, n_words, w, c, free, n_free, N, L, y, z, trial)
            elif not _cholesky_solve_two(N, free, n_free, L, y, z):
                return n_steps, f
            sy = 0.0
            sz = 0.0
            for a in range(n_free):
                sy += y[a]
                sz += z[a]
            lam = sy / sz
            worst = -1
            worst_gap = 1e-12 * abs(lam)
            for k in range(K):
                if active[k] and g[k] - lam > worst_gap:
                    worst = k
                    worst_gap = g[k] - lam
            if worst < 0:
                break
            active[worst] = False
            free[n_free] = worst
            n_free += 1
            if not low_rank:
                _gram_rows(scaled_KW, n_words, w, c, N, free, n_free - 1, n_free)
        for k in range(K):
            step[k] = 0.0
        for a in range(n_free):
            step[free[a]] = y[a] - lam * z[a]
        # the longest step along the Newton direction that keeps every weight >= lower
        length = 1.0
        blocking = -1
        for k in range(K):
            if step[k] < 0.0 and w[k] + step[k] < lower:
                t = (lower - w[k]) / step[k]
                if t < length:
                    length = t
                    blocking = k
        improved = False
        for _ in range(60):  # halve until the objective does not decrease
            for k in range(K):
                trial[k] = w[k] + length * step[k]
            if blocking >= 0:
                trial[blocking] = lower
            f_trial = document_objective(words, counts, theta_PK, trial, c)
            if f_trial >= f:
                improved = True
                break
            length *= 0.5
            blocking = -1
        if not improved:
            return n_steps, f
        change = 0.0
        for k in range(K):
            change += abs(trial[k] - w[k])
            w[k] = trial[k]
        f = f_trial
        if blocking >= 0:
            active[blocking] = True
        if change < tol:
            break
    return n_steps, f


def _solve_weights(indptr, indices, data, theta_PK, omega_NK, start_NK, c, tol, max_steps,
                  steps_N, before_N, skip_N):
    """:func:`solve_document` for every document (rows of CSR counts), in parallel.

    Each document's solve starts from its row of ``start_NK``, which receives the solution; the
    solution replaces the row of ``omega_NK`` unless it is worse there (possible only when the
    solver stops early), so this step never lowers the objective. ``start_NK`` may be
    ``omega_NK`` itself. ``before_N`` holds every document's :math:`l` at its row of
    ``omega_NK`` (:func:`document_objectives`, which the MAP loop has from scoring that weight
    last iteration), or is empty, and then they are computed here: one pass of a logarithm an
    entry less an iteration. Documents where ``skip_N`` (empty: none) is true keep their
    weights and take no step. Documents are independent given the topics, so the result is the
    same whatever the number of threads; ``steps_N`` receives the Newton steps taken.
    """
    n = indptr.shape[0] - 1
    K = theta_PK.shape[1]
    known = before_N.shape[0] == n
    skipping = skip_N.shape[0] == n
    size = (n + _N_CHUNKS - 1) // _N_CHUNKS
    for chunk in prange(_N_CHUNKS):
        lo_doc, hi_doc = chunk * size, min((chunk + 1) * size, n)
        longest = 0
        for i in range(lo_doc, hi_doc):
            longest = max(longest, indptr[i + 1] - indptr[i])
        work = workspace(K, longest)
        for i in range(lo_doc, hi_doc):
            if skipping and skip_N[i]:
                steps_N[i] = 0
                continue
            lo, hi = indptr[i], indptr[i + 1]
            words, counts = indices[lo:hi], data[lo:hi]
            current = omega_NK[i]
            positive = True
            for k in range(K):
                if not current[k] > 0.0:
                    positive = False
            if not positive:
                before = -np.inf
            elif known:
                before = before_N[i]
            else:
                before = document_objective(words, counts, theta_PK, current, c)
            solution = start_NK[i]
            steps_N[i], after = solve_document(words, counts, theta_PK, solution, c, tol,
                                               max_steps, work)
            if after >= before:
                for k in range(K):
                    current[k] = solution[k]


def _em_documents(indptr, indices, data, theta_PK, omega_NK, ratio, topic_counts_NK):
    r"""Document half of the EM step.

    For every non-zero :math:`x_{ij}` writes ``ratio`` = :math:`x_{ij}/q_{ij}` (CSR order) and sets
    :math:`t_{ik} = \omega_{ik}\sum_j \theta_{jk} x_{ij}/q_{ij}` (expected topic counts of each
    document). No logarithm: the loop scores the new weights under the new topics instead.
    """
    n = indptr.shape[0] - 1
    K = theta_PK.shape[1]
    for i in prange(n):
        w = omega_NK[i]
        out = topic_counts_NK[i]
        for k in range(K):
            out[k] = 0.0
        for e in range(indptr[i], indptr[i + 1]):
            row = theta_PK[indices[e]]
            q = _mix(w, row)
            r = data[e] / q
            ratio[e] = r
            for k in range(K):
                out[k] += r * row[k]
        for k in range(K):
            out[k] *= w[k]


def _em_words(col_indptr, col_rows, col_to_csr, ratio, theta_PK, omega_NK, word_counts_PK):
    r"""Word half of the EM step: :math:`\hat x_{jk} = \theta_{jk}\sum_i \omega_{ik}x_{ij}/q_{ij}`.

    ``col_*`` are the CSC structure of the counts and ``col_to_csr`` maps each CSC entry to its
    position in CSR order, where :func:`em_documents` left the ratios.
    """
    p, K = theta_PK.shape
    for j in prange(p):
        out = word_counts_PK[j]
        for k in range(K):
            out[k] = 0.0
        for e in range(col_indptr[j], col_indptr[j + 1]):
            r = ratio[col_to_csr[e]]
            w = omega_NK[col_rows[e]]
            for k in range(K):
                out[k] += r * w[k]
        for k in range(K):
            out[k] *= theta_PK[j, k]


def _log_likelihood(indptr, indices, data, theta_PK, omega_NK):
    r""":math:`\sum_{ij} x_{ij}\log q_{ij}` (fixed-order reduction over 64 chunks of documents)."""
    n = indptr.shape[0] - 1
    size = (n + _N_CHUNKS - 1) // _N_CHUNKS
    partial = np.zeros(_N_CHUNKS)
    for chunk in prange(_N_CHUNKS):
        acc = 0.0
        for i in range(chunk * size, min((chunk + 1) * size, n)):
            w = omega_NK[i]
            for e in range(indptr[i], indptr[i + 1]):
                row = theta_PK[indices[e]]
                q = _mix(w, row)
                acc += data[e] * math.log(q)
        partial[chunk] = acc
    return ordered_sum(partial)


def _document_objectives(indptr, indices, data, theta_PK, omega_NK, c, out_N):
    """:func:`document_objective` of every document (rows of CSR counts) into ``out_N``."""
    n = indptr.shape[0] - 1
    for i in prange(n):
        lo, hi = indptr[i], indptr[i + 1]
        out_N[i] = document_objective(indices[lo:hi], data[lo:hi], theta_PK, omega_NK[i], c)


@njit(cache=True)
def _log_determinant(M, size):
    """log det of the leading ``size`` x ``size`` block of symmetric positive definite ``M``
    (Cholesky); falls back to the LU-based ``slogdet`` when it is not numerically PD."""
    L = np.zeros((size, size))
    if not _cholesky(M, size, L):
        return np.linalg.slogdet(M[:size, :size].copy())[1]
    total = 0.0
    for a in range(size):
        total += 2.0 * math.log(L[a, a])
    return total


def _word_probabilities(indptr, indices, theta_PK, omega_NK, q):
    """Write :math:`q_{ij}` of every non-zero entry (CSR order) into ``q``."""
    n = indptr.shape[0] - 1
    for i in prange(n):
        w = omega_NK[i]
        for e in range(indptr[i], indptr[i + 1]):
            row = theta_PK[indices[e]]
            total = _mix(w, row)
            q[e] = total


@njit(cache=True, inline="always")
def _add_word_gram(H, col_indptr, col_rows, col_to_csr, data, q, omega_NK, j):
    r"""Add word ``j``'s :math:`\sum_i (x_{ij}/q_{ij}^2)\,\omega_i\omega_i^\top` (lower triangle)
    to ``H``."""
    K = omega_NK.shape[1]
    for e in range(col_indptr[j], col_indptr[j + 1]):
        pos = col_to_csr[e]
        weight = data[pos] / (q[pos] * q[pos])
        w = omega_NK[col_rows[e]]
        for k in range(K):
            wk = weight * w[k]
            for h in range(k + 1):
                H[k, h] += wk * w[h]


@njit(cache=True, inline="always")
def _word_log_determinant(H, theta_row, alpha):
    r"""log det of a word's block: its Gram ``H`` (lower triangle, overwritten) plus the prior's
    curvature :math:`\mathrm{diag}(\alpha/\theta_{jk}^2)`."""
    K = theta_row.shape[0]
    for k in range(K):
        H[k, k] += alpha / (theta_row[k] * theta_row[k])
        for h in range(k):
            H[h, k] = H[k, h]
    return _log_determinant(H, K)


def _topic_block_log_determinants(col_indptr, col_rows, col_to_csr, data, q, theta_PK,
                                 omega_NK, alpha, out_P):
    r"""log det of each word's K x K block of the negative Hessian in the topics,
    :math:`\sum_i (x_{ij}/q_{ij}^2)\,\omega_i\omega_i^\top + \mathrm{diag}(\alpha/\theta_{j\cdot}^2)`."""
    p, K = theta_PK.shape
    for j in prange(p):
        H = np.zeros((K, K))
        _add_word_gram(H, col_indptr, col_rows, col_to_csr, data, q, omega_NK, j)
        out_P[j] = _word_log_determinant(H, theta_PK[j], alpha)


def _topic_block_grams(col_indptr, col_rows, col_to_csr, data, q, omega_NK, lo, out_WKK):
    """The likelihood part of the word blocks of words ``lo .. lo + len(out_WKK) - 1`` (lower
    triangles): what one shard of the documents adds to them."""
    for j in prange(out_WKK.shape[0]):
        out_WKK[j] = 0.0
        _add_word_gram(out_WKK[j], col_indptr, col_rows, col_to_csr, data, q, omega_NK, lo + j)


def _gram_log_determinants(grams_WKK, theta_WK, alpha, out_W):
    """log det of word blocks from their summed Grams (copied, not overwritten)."""
    for j in prange(grams_WKK.shape[0]):
        out_W[j] = _word_log_determinant(grams_WKK[j].copy(), theta_WK[j], alpha)


def _weight_block_log_determinants(indptr, indices, data, q, theta_PK, omega_NK, c, out_N):
    r"""log det of each document's (K-1) x (K-1) block of the negative Hessian in the logits
    :math:`\varphi_{i1..K-1}` (:math:`\varphi_{i0} = 0`):

    .. math::

        -H_{hg} = -\delta_{hg}\,\omega_h(a_h - m - Kc) - \omega_h\omega_g(m + Kc - B_{hg}),

    :math:`a_h = \sum_j x_j\theta_{jh}/q_j`, :math:`B_{hg} = \sum_j x_j\theta_{jh}\theta_{jg}/q_j^2`.
    """
    n = indptr.shape[0] - 1
    K = theta_PK.shape[1]
    for i in prange(n):
        w = omega_NK[i]
        a = np.zeros(K)
        B = np.zeros((K, K))
        m = 0.0
        for e in range(indptr[i], indptr[i + 1]):
            row = theta_PK[indices[e]]
            x = data[e]
            m += x
            s = x / q[e]
            s2 = s / q[e]
            for k in range(K):
                a[k] += s * row[k]
                for h in range(k + 1):
                    B[k, h] += s2 * row[k] * row[h]
        H = np.zeros((K - 1, K - 1))
        for k in range(1, K):
            for h in range(1, k + 1):
                value = -w[k] * w[h] * (m + K * c - B[k, h])
                if h == k:
                    value -= w[k] * (a[k] - m - K * c)
                H[k - 1, h - 1] = value
                H[h - 1, k - 1] = value
        out_N[i] = _log_determinant(H, K - 1)


def _dense_cells(Q_BP, lengths_B, sums_B, counts_B):
    r"""The dispersion's dense part over a block of documents' cells: for every row ``i`` of
    the word probabilities ``Q_BP`` (lengths ``lengths_B``), :math:`\sum_j m_iq_{ij}/(1-q_{ij})`
    into ``sums_B`` and :math:`\#\{j: m_iq_{ij} > 0.01\}` into ``counts_B``, in one pass and
    without temporaries (each row summed in order)."""
    for i in prange(Q_BP.shape[0]):
        m = lengths_B[i]
        total = 0.0
        above = 0
        for j in range(Q_BP.shape[1]):
            mq = m * Q_BP[i, j]
            total += mq / (1.0 - Q_BP[i, j])
            if mq > 0.01:
                above += 1
        sums_B[i] = total
        counts_B[i] = above


# The fit loop's kernels: a serial and a parallel build each, the parallel one from
# _kernel_tools._PARALLEL_FROM multiply-adds (the families' policy: a spinning parallel region
# stalls beside busy processes, and costs more than a small corpus's whole pass). The weight
# solve counts about ten multiply-adds per entry and topic for its Newton steps.
_solve_weights_builds = twice(_solve_weights)
_em_documents_builds = twice(_em_documents)
_em_words_builds = twice(_em_words)
_log_likelihood_builds = twice(_log_likelihood)
_document_objectives_builds = twice(_document_objectives)


def solve_weights(indptr, indices, data, theta_PK, omega_NK, start_NK, c, tol, max_steps,
                  steps_N, before_N=None, skip_N=None):
    before_N = np.empty(0) if before_N is None else before_N
    skip_N = np.empty(0, dtype=np.bool_) if skip_N is None else skip_N
    return _solve_weights_builds(indptr, indices, data, theta_PK, omega_NK, start_NK, c, tol,
                                 max_steps, steps_N, before_N, skip_N,
                                 work=10 * data.size * theta_PK.shape[1])


def em_documents(indptr, indices, data, theta_PK, omega_NK, ratio, topic_counts_NK):
    return _em_documents_builds(indptr, indices, data, theta_PK, omega_NK, ratio,
                                topic_counts_NK, work=data.size * theta_PK.shape[1])


def em_words(col_indptr, col_rows, col_to_csr, ratio, theta_PK, omega_NK, word_counts_PK):
    return _em_words_builds(col_indptr, col_rows, col_to_csr, ratio, theta_PK, omega_NK,
                            word_counts_PK, work=ratio.size * theta_PK.shape[1])


def log_likelihood(indptr, indices, data, theta_PK, omega_NK):
    return _log_likelihood_builds(indptr, indices, data, theta_PK, omega_NK,
                                  work=data.size * theta_PK.shape[1])


def document_objectives(indptr, indices, data, theta_PK, omega_NK, c, out_N):
    return _document_objectives_builds(indptr, indices, data, theta_PK, omega_NK, c, out_N,
                                       work=data.size * theta_PK.shape[1])


for _public, _raw in ((solve_weights, _solve_weights), (em_documents, _em_documents),
                      (em_words, _em_words), (log_likelihood, _log_likelihood),
                      (document_objectives, _document_objectives)):
    _public.__doc__ = _raw.__doc__


# The evidence's kernels (the Laplace approximation and its shards), under the same policy:
# each called with its work, about K multiply-adds an entry for the word probabilities, K^2 an
# entry and K^3 a block for the Hessian blocks' Grams and determinants.
def _by_work(py_func, work):
    """``py_func``'s serial and parallel builds (:func:`~mixbayes._kernel_tools.twice`), called
    with ``work(*args)`` multiply-adds."""
    builds = twice(py_func)

    def call(*args):
        return builds(*args, work=work(*args))

    call.__doc__, call.__name__ = py_func.__doc__, py_func.__name__.lstrip("_")
    call.serial, call.parallel = builds.serial, builds.parallel
    return call


word_probabilities = _by_work(
    _word_probabilities, lambda indptr, indices, theta, omega, q: indices.size * theta.shape[1])
topic_block_log_determinants = _by_work(
    _topic_block_log_determinants,
    lambda col_indptr, rows, to_csr, data, q, theta, omega, alpha, out:
    (data.size + theta.shape[0] * theta.shape[1]) * theta.shape[1] ** 2)
topic_block_grams = _by_work(
    _topic_block_grams,
    lambda col_indptr, rows, to_csr, data, q, omega, lo, out:
    int(col_indptr[lo + out.shape[0]] - col_indptr[lo]) * omega.shape[1] ** 2)
gram_log_determinants = _by_work(
    _gram_log_determinants, lambda grams, theta, alpha, out: grams.size * grams.shape[1])
dense_cells = _by_work(_dense_cells, lambda Q, lengths, sums, counts: 4 * Q.size)
weight_block_log_determinants = _by_work(
    _weight_block_log_determinants,
    lambda indptr, indices, data, q, theta, omega, c, out:
    (data.size + omega.shape[0] * theta.shape[1]) * theta.shape[1] ** 2)
