r"""Collapsed Gibbs sampler for the Dirichlet–multinomial mixture (the same model as the VB fit).

With :math:`\lambda` and every :math:`\beta_k` integrated out (document 1, Appendix A), the
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
def _sweep(indptr, indices, data, lengths, z, docs_K, words_PK, tokens_K, alpha, theta,
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


def gibbs_sweeps(X, z, n_components, alpha, theta, n_sweeps, rng, log_base_total=0.0):
    """Run ``n_sweeps`` collapsed Gibbs sweeps from assignments ``z``.

    Yields
    ------
    (z, log_joint) after every sweep; ``z`` is a fresh copy each time.
    """
    z = np.asarray(z, dtype=np.int64).copy()
    docs_K, words_KP, tokens_K = count_tables(X, z, n_components)
    words_PK = np.ascontiguousarray(words_KP.T)
    lengths = np.asarray(X.sum(axis=1)).ravel().astype(np.int64)
    indptr, indices, data = X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data
    data = data.astype(np.int64)
    scratch = np.empty(n_components)
    table_size = min(int(lengths.sum()) + _SMALL + 1, _TABLE_MAX)
    log_docs = np.log(np.arange(z.shape[0] + 1) + float(alpha))
    log_words = np.log(np.arange(table_size) + float(theta))
    log_tokens = np.log(np.arange(table_size) + X.shape[1] * float(theta))
    for _ in range(n_sweeps):
        _sweep(indptr, indices, data, lengths, z, docs_K, words_PK, tokens_K,
               float(alpha), float(theta), rng.random(z.shape[0]), scratch,
               log_docs, log_words, log_tokens)
        yield z.copy(), collapsed_log_joint(docs_K, words_PK.T, alpha, theta, log_base_total)
