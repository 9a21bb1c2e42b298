r"""Collapsed Gibbs sampler for the Dirichlet–multinomial mixture (the same model as the VB fit).

With :math:`\lambda` and every :math:`\beta_k` integrated out (Bilancia et al. 2023, Appendix A), the
conditional of one document's cluster given all others is

.. math::

    p(z_i = k \mid z_{-i}, y) \propto (m_k^{-i} + \alpha)\,
      \frac{\prod_l \Gamma(n_{kl}^{-i} + y_{il} + \theta)/\Gamma(n_{kl}^{-i} + \theta)}
           {\Gamma(n_k^{-i} + y_{i+} + p\theta)/\Gamma(n_k^{-i} + p\theta)},

where :math:`m_k` counts documents, :math:`n_{kl}` word tokens and :math:`n_k = \sum_l n_{kl}`
in cluster :math:`k`. The multinomial coefficient cancels in the conditional but is kept in the
joint

.. math::

    \log p(y, z) = \log\frac{\Gamma(K\alpha)}{\Gamma(n + K\alpha)}
      + \sum_k \log\frac{\Gamma(m_k + \alpha)}{\Gamma(\alpha)}
      + \sum_k \Big[\log\frac{\Gamma(p\theta)}{\Gamma(n_k + p\theta)}
        + \sum_l \log\frac{\Gamma(n_{kl} + \theta)}{\Gamma(\theta)}\Big]
      + \sum_i \log\binom{y_{i+}}{y_i},

so that it is comparable with the ELBO. The sweep is a numba kernel fed with uniforms from a
``numpy.random.Generator``, so runs are reproducible from ``random_state``.

At GSDMM's scale (K = 500 clusters, most of them empty after a few sweeps) two things keep a
sweep cheap (:func:`_sweep`; :func:`_sweep_reference` is the plain one, kept for the tests):

* **Empty clusters share one value.** Their conditionals are equal, the collapsed predictive
  of a new cluster :math:`\alpha\,\prod_l \Gamma(y_{il}+\theta)/\Gamma(\theta) \big/
  [\Gamma(y_{i+}+p\theta)/\Gamma(p\theta)]`, so it is computed once per document; only the
  occupied clusters (a list kept up to date as clusters empty and fill) read their word
  counts. The draw still scans the labels in order with the same numbers, so the chain is the
  plain kernel's, bit for bit.
* **The log joint is updated, not recomputed.** Moving document :math:`i` from cluster
  :math:`k` to :math:`k'` changes :math:`\log p(y, z)` by the difference of the two
  unnormalised log conditionals (the normaliser and the document's multinomial coefficient are
  common to both), so the sweep returns the sum of these differences; the exact
  :func:`collapsed_log_joint` (:math:`Kp` log-gamma calls, half the cost of a sweep at
  K = 500) is computed once, at the start.
"""

import math

import numpy as np
from numba import njit
from scipy.special import gammaln

# below this many tokens the ratio Gamma(a + y) / Gamma(a) is a short sum of logs read from a
# table (counts are integers, so log(count + prior) takes finitely many values); above it, lgamma
_SMALL = 8
_TABLE_MAX = 1 << 22  # 32 MiB per table at most, whatever the counts


@njit(cache=True, inline="always")
def _log_rising(table, count, prior, y):
    """log Gamma(count + prior + y) - log Gamma(count + prior), with table[m] = log(m + prior)."""
    if y <= _SMALL:
        total = 0.0
        if count + y <= table.shape[0]:
            for j in range(y):
                total += table[count + j]
        else:  # counts beyond the table (huge documents): compute the logs
            for j in range(y):
                total += math.log(count + prior + j)
        return total
    return math.lgamma(count + prior + y) - math.lgamma(count + prior)


@njit(cache=True)
def _sweep_reference(indptr, indices, data, lengths, z, docs_K, words_PK, tokens_K, alpha, theta,
           uniforms, log_prob_K, log_docs, log_words, log_tokens):
    """One systematic-scan sweep over all documents, updating ``z`` and the counts in place.

    ``log_docs[m] = log(m + alpha)``, ``log_words[m] = log(m + theta)`` and
    ``log_tokens[m] = log(m + p theta)`` replace every ``log`` of the inner loop by a lookup.
    The word counts are word-major (``words_PK``, p x K): a document's word reads the K
    clusters' counts of that word from one contiguous row, and the loop over clusters is the
    inner one (a word used once, the common case, is one table lookup per cluster).
    """
    n = z.shape[0]
    K = docs_K.shape[0]
    p_theta = words_PK.shape[0] * theta
    table = log_words.shape[0]
    for i in range(n):
        k_old = z[i]
        start, stop = indptr[i], indptr[i + 1]
        docs_K[k_old] -= 1
        tokens_K[k_old] -= lengths[i]
        for e in range(start, stop):
            words_PK[indices[e], k_old] -= data[e]
        for k in range(K):
            log_prob_K[k] = log_docs[docs_K[k]] - _log_rising(log_tokens, tokens_K[k], p_theta,
                                                              lengths[i])
        for e in range(start, stop):
            row = words_PK[indices[e]]
            y = data[e]
            if y == 1:
                for k in range(K):
                    count = row[k]
                    log_prob_K[k] += (log_words[count] if count < table
                                      else math.log(count + theta))
            else:
                for k in range(K):
                    log_prob_K[k] += _log_rising(log_words, row[k], theta, y)
        best = -np.inf
        for k in range(K):
            if log_prob_K[k] > best:
                best = log_prob_K[k]
        total = 0.0
        for k in range(K):
            log_prob_K[k] = math.exp(log_prob_K[k] - best)  # <= 1: the exponent is bounded
            total += log_prob_K[k]
        target = uniforms[i] * total
        k_new = K - 1
        acc = 0.0
        for k in range(K):
            acc += log_prob_K[k]
            if target < acc:
                k_new = k
                break
        z[i] = k_new
        docs_K[k_new] += 1
        tokens_K[k_new] += lengths[i]
        for e in range(start, stop):
            words_PK[indices[e], k_new] += data[e]


@njit(cache=True)
def _sweep(indptr, indices, data, lengths, z, docs_K, words_PK, tokens_K, alpha, theta,
           uniforms, log_prob_K, prob_K, labels, position, log_docs, log_words, log_tokens):
    """One sweep of the same conditionals as :func:`_sweep_reference`, the empty clusters as
    one entry; returns the change of the log joint over the sweep.

    ``labels`` is a permutation of the K cluster labels whose first ``n_occupied`` hold
    documents (``position[k]`` is label k's place in it); a document's conditional is computed
    for those and once for the empty ones, which are drawn together with probability
    proportional to their number times their common value, and then as the first empty label
    of ``labels`` (the empty clusters are exchangeable, so which one is immaterial to the
    partition). The chain differs from the reference's, which scans all labels in order, but
    its moves between partitions have the same probabilities.
    """
    n = z.shape[0]
    K = docs_K.shape[0]
    p_theta = words_PK.shape[0] * theta
    table = log_words.shape[0]
    n_occupied = 0
    for k in range(K):  # occupied labels first, in label order, then the empty ones
        if docs_K[k] > 0:
            labels[n_occupied] = k
            n_occupied += 1
    rest = n_occupied
    for k in range(K):
        if docs_K[k] == 0:
            labels[rest] = k
            rest += 1
    for j in range(K):
        position[labels[j]] = j
    change = 0.0
    for i in range(n):
        k_old = z[i]
        start, stop = indptr[i], indptr[i + 1]
        length = lengths[i]
        docs_K[k_old] -= 1
        tokens_K[k_old] -= length
        for e in range(start, stop):
            words_PK[indices[e], k_old] -= data[e]
        if docs_K[k_old] == 0:  # k_old swaps places with the last occupied label
            n_occupied -= 1
            last = labels[n_occupied]
            at = position[k_old]
            labels[at], labels[n_occupied] = last, k_old
            position[last], position[k_old] = at, n_occupied
        # the common log conditional of every empty cluster (a new cluster's predictive)
        empty = log_docs[0] - _log_rising(log_tokens, 0, p_theta, length)
        for e in range(start, stop):
            y = data[e]
            if y == 1:
                empty += log_words[0]
            else:
                empty += _log_rising(log_words, 0, theta, y)
        for j in range(n_occupied):
            k = labels[j]
            log_prob_K[j] = log_docs[docs_K[k]] - _log_rising(log_tokens, tokens_K[k], p_theta,
                                                              length)
        for e in range(start, stop):
            row = words_PK[indices[e]]
            y = data[e]
            if y == 1:
                for j in range(n_occupied):
                    count = row[labels[j]]
                    log_prob_K[j] += (log_words[count] if count < table
                                      else math.log(count + theta))
            else:
                for j in range(n_occupied):
                    log_prob_K[j] += _log_rising(log_words, row[labels[j]], theta, y)
        n_empty = K - n_occupied
        best = empty if n_empty > 0 else -np.inf
        for j in range(n_occupied):
            if log_prob_K[j] > best:
                best = log_prob_K[j]
        old_value = empty if docs_K[k_old] == 0 else log_prob_K[position[k_old]]
        total = 0.0
        for j in range(n_occupied):
            prob_K[j] = math.exp(log_prob_K[j] - best)
            total += prob_K[j]
        empty_prob = n_empty * math.exp(empty - best)
        target = uniforms[i] * (total + empty_prob)
        chosen = n_occupied  # the first empty label, unless an occupied one is drawn
        acc = 0.0
        for j in range(n_occupied):
            acc += prob_K[j]
            if target < acc:
                chosen = j
                break
        if chosen == n_occupied and n_empty == 0:  # rounding at the top end
            chosen = n_occupied - 1
        k_new = labels[chosen]
        if chosen == n_occupied:  # an empty label joins the occupied ones
            new_value = empty
            n_occupied += 1
        else:
            new_value = log_prob_K[chosen]
        change += new_value - old_value
        z[i] = k_new
        docs_K[k_new] += 1
        tokens_K[k_new] += length
        for e in range(start, stop):
            words_PK[indices[e], k_new] += data[e]
    return change


def count_tables(X, z, n_components):
    """Return ``(docs_K, words_KP, tokens_K)``: documents, word counts and tokens per cluster."""
    docs_K = np.bincount(z, minlength=n_components).astype(np.int64)
    words_KP = np.zeros((n_components, X.shape[1]), dtype=np.int64)
    rows = np.repeat(z, np.diff(X.indptr))
    np.add.at(words_KP, (rows, X.indices), X.data)
    return docs_K, words_KP, words_KP.sum(axis=1)


def collapsed_log_joint(docs_K, words_KP, alpha, theta, log_base_total):
    """Exact :math:`\\log p(y, z)` of the collapsed model (see the module docstring)."""
    K, p = words_KP.shape
    n = docs_K.sum()
    log_p_z = (
        gammaln(K * alpha) - gammaln(n + K * alpha) + np.sum(gammaln(docs_K + alpha) - gammaln(alpha))
    )
    tokens_K = words_KP.sum(axis=1)
    log_p_y = np.sum(gammaln(p * theta) - gammaln(tokens_K + p * theta)) + np.sum(
        gammaln(words_KP + theta) - gammaln(theta)
    )
    return float(log_p_z + log_p_y + log_base_total)


def gibbs_sweeps(X, z, n_components, alpha, theta, n_sweeps, rng, log_base_total=0.0,
                 reference=False):
    """Run ``n_sweeps`` collapsed Gibbs sweeps from assignments ``z``.

    ``reference=True`` runs the plain kernel and recomputes the exact log joint after every
    sweep (the same chain; the reference for the tests and the benchmark).

    Yields
    ------
    (z, log_joint) after every sweep; ``z`` is a fresh copy each time.
    """
    z = np.asarray(z, dtype=np.int64).copy()
    docs_K, words_KP, tokens_K = count_tables(X, z, n_components)
    # int32 word counts (when they fit) halve the memory a document's rows of them cost
    small = int(X.data.sum()) < np.iinfo(np.int32).max
    words_PK = np.ascontiguousarray(words_KP.T, dtype=np.int32 if small else np.int64)
    lengths = np.asarray(X.sum(axis=1)).ravel().astype(np.int64)
    indptr, indices, data = X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data
    data = data.astype(np.int64)
    scratch = np.empty(n_components)
    table_size = min(int(lengths.sum()) + _SMALL + 1, _TABLE_MAX)
    log_docs = np.log(np.arange(z.shape[0] + 1) + float(alpha))
    log_words = np.log(np.arange(table_size) + float(theta))
    log_tokens = np.log(np.arange(table_size) + X.shape[1] * float(theta))
    if reference:
        for _ in range(n_sweeps):
            _sweep_reference(indptr, indices, data, lengths, z, docs_K, words_PK, tokens_K,
                             float(alpha), float(theta), rng.random(z.shape[0]), scratch,
                             log_docs, log_words, log_tokens)
            yield z.copy(), collapsed_log_joint(docs_K, words_PK.T, alpha, theta, log_base_total)
        return
    log_joint = collapsed_log_joint(docs_K, words_KP, alpha, theta, log_base_total)
    probabilities = np.empty(n_components)
    labels = np.empty(n_components, dtype=np.int64)
    position = np.empty(n_components, dtype=np.int64)
    for _ in range(n_sweeps):
        log_joint += _sweep(indptr, indices, data, lengths, z, docs_K, words_PK, tokens_K,
                            float(alpha), float(theta), rng.random(z.shape[0]), scratch,
                            probabilities, labels, position, log_docs, log_words, log_tokens)
        yield z.copy(), float(log_joint)
