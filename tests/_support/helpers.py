"""Independent reference computations for the tests (written separately from the package)."""

import itertools

import numpy as np
from scipy.special import gammaln, logsumexp


def log_dm_predictive(y, pseudo):
    """log p(y | pseudo-counts) of the Dirichlet–multinomial, multinomial coefficient included."""
    y = np.asarray(y, dtype=float)
    coef = gammaln(y.sum() + 1) - gammaln(y + 1).sum()
    return coef + gammaln(pseudo.sum()) - gammaln(pseudo.sum() + y.sum()) + np.sum(
        gammaln(pseudo + y) - gammaln(pseudo)
    )


def exact_log_joint(X, z, K, alpha, theta):
    """log p(y, z) by the chain rule: each document and each label predicted from the earlier ones.

    Independent of the closed form used in the package: no pooled Beta functions, one
    predictive step per document.
    """
    X = np.asarray(X, dtype=float)
    n, p = X.shape
    doc_counts = np.zeros(K)
    word_counts = np.full((K, p), float(theta))
    total = 0.0
    for i in range(n):
        k = z[i]
        total += np.log((doc_counts[k] + alpha) / (i + K * alpha))
        total += log_dm_predictive(X[i], word_counts[k])
        doc_counts[k] += 1
        word_counts[k] += X[i]
    return total


def enumerate_posterior(X, K, alpha, theta):
    """All K**n labelled assignments with their exact log joint; returns (assignments, log p(y))."""
    n = np.asarray(X).shape[0]
    zs = np.array(list(itertools.product(range(K), repeat=n)))
    log_joint = np.array([exact_log_joint(X, z, K, alpha, theta) for z in zs])
    return zs, log_joint, logsumexp(log_joint)


def canonical_partition(z):
    """Relabel clusters in order of first appearance, so label permutations compare equal."""
    mapping, out = {}, []
    for label in z:
        mapping.setdefault(label, len(mapping))
        out.append(mapping[label])
    return tuple(out)


def geweke_z_scores(forward, successive):
    """Geweke's comparison, column by column: z-scores of the difference between the means of
    independent forward draws and of a successive-conditional chain (its variance of the mean
    from its effective sample size)."""
    from mixbayes.diagnostics import effective_sample_size

    forward, successive = np.asarray(forward, float), np.asarray(successive, float)
    scores = []
    for column in range(forward.shape[1]):
        draws = successive[:, column]
        se = np.sqrt(forward[:, column].var() / len(forward)
                     + draws.var() / effective_sample_size(draws))
        scores.append((forward[:, column].mean() - draws.mean()) / se)
    return np.array(scores)


def chi_square_p(exact, frequencies, n):
    """p-value of observed state counts (``frequencies[state]``, n draws in all) against exact
    probabilities ``exact[state]``; cells with an expected count below 5 are pooled into one."""
    from scipy.stats import chi2

    keys = sorted(exact, key=lambda key: -exact[key])
    expected = np.array([exact[key] * n for key in keys])
    observed = np.array([frequencies[key] for key in keys], dtype=float)
    big = expected >= 5
    statistic = ((observed[big] - expected[big]) ** 2 / expected[big]).sum()
    cells = big.sum()
    if (~big).any():
        statistic += (observed[~big].sum() - expected[~big].sum()) ** 2 / expected[~big].sum()
        cells += 1
    assert sum(frequencies.values()) == n
    return chi2.sf(statistic, cells - 1)
