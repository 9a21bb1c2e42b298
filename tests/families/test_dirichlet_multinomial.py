"""Each conjugate quantity checked two independent ways (closed form vs scipy / Monte Carlo)."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats
from scipy.special import gammaln

from mixbayes.families.dirichlet import (
    dirichlet_expected_log,
    dirichlet_neg_kl,
    fit_polya_concentration,
)
from mixbayes.families.multinomial import (
    MultinomialFamily,
    dirichlet_multinomial_logpmf,
    log_multinomial_coefficient,
)


def test_expected_log_matches_monte_carlo():
    rng = np.random.default_rng(0)
    c = np.array([0.3, 2.0, 5.0, 0.9])
    draws = stats.dirichlet(c).rvs(200_000, random_state=rng)
    mc = np.log(draws).mean(axis=0)
    se = np.log(draws).std(axis=0) / np.sqrt(len(draws))
    assert np.all(np.abs(dirichlet_expected_log(c) - mc) < 5 * se)


def test_neg_kl_matches_monte_carlo_and_is_zero_at_the_prior():
    rng = np.random.default_rng(1)
    c, a = np.array([1.5, 0.4, 3.0]), 0.7
    q, p = stats.dirichlet(c), stats.dirichlet(np.full(3, a))
    draws = q.rvs(200_000, random_state=rng)
    draws = np.clip(draws, 1e-300, None)
    draws /= draws.sum(axis=1, keepdims=True)
    terms = p.logpdf(draws.T) - q.logpdf(draws.T)
    assert dirichlet_neg_kl(c, a) == pytest.approx(terms.mean(), abs=5 * terms.std() / np.sqrt(len(terms)))
    assert dirichlet_neg_kl(np.full((2, 3), a), a) == pytest.approx(0.0, abs=1e-12)
    assert dirichlet_neg_kl(c, a) < 0


@pytest.mark.parametrize("true_a", [0.05, 0.5, 3.0])
def test_fitted_concentration_is_the_polya_maximiser(true_a):
    """Counts drawn from Dirichlet-multinomials with concentration a: the fit maximises F and
    recovers a."""
    rng = np.random.default_rng(2)
    dim, rows = 30, 40
    probs = rng.dirichlet(np.full(dim, true_a), size=rows)
    counts = np.array([rng.multinomial(200, p) for p in probs]).astype(float)
    a_hat = fit_polya_concentration(counts, counts.sum(axis=1), dim, start=1.0)

    def F(a):  # written out independently of the package
        return sum(
            gammaln(dim * a) - gammaln(dim * a + row.sum()) + np.sum(gammaln(a + row) - gammaln(a))
            for row in counts
        )

    assert F(a_hat) >= F(a_hat * 1.001) and F(a_hat) >= F(a_hat / 1.001)
    assert a_hat == pytest.approx(true_a, rel=0.35)


def test_polya_sums_and_polygammas_match_scipy():
    from scipy.special import digamma, polygamma

    from mixbayes.families._count_kernels import polya_sums, tetragamma

    rng = np.random.default_rng(7)
    stats = rng.gamma(0.5, size=(50, 7))
    stats[rng.random(stats.shape) < 0.4] *= 1e-10  # Taylor branch
    a = 0.3
    got = polya_sums(stats, a, work=0)
    np.testing.assert_array_equal(got, polya_sums(stats, a, work=10**9))  # serial == parallel
    np.testing.assert_allclose(got, [
        np.sum(gammaln(a + stats) - gammaln(a)),
        np.sum(digamma(a + stats) - digamma(a)),
        np.sum(polygamma(1, a + stats) - polygamma(1, a)),
    ], rtol=1e-12)
    for x in (1e-3, 0.3, 2.0, 9.9, 10.0, 250.0):
        assert tetragamma(x) == pytest.approx(polygamma(2, x), rel=1e-12)


def test_multinomial_coefficient_matches_scipy():
    rng = np.random.default_rng(3)
    X = rng.poisson(2.0, size=(6, 5))
    X[2] = 0
    X[-1] = 0  # trailing empty document
    got = log_multinomial_coefficient(sp.csr_matrix(X))
    for i, row in enumerate(X):
        n = row.sum()
        p = np.full(5, 0.2)
        expected = stats.multinomial(n, p).logpmf(row) - np.sum(row * np.log(p)) if n else 0.0
        assert got[i] == pytest.approx(expected, abs=1e-10)


def test_dirichlet_multinomial_pmf_sums_to_one_and_matches_scipy():
    c = np.array([0.3, 1.2, 2.0])
    n = 4
    outcomes = [y for y in itertools.product(range(n + 1), repeat=3) if sum(y) == n]
    total = sum(np.exp(dirichlet_multinomial_logpmf(y, c)) for y in outcomes)
    assert total == pytest.approx(1.0, abs=1e-12)
    ref = stats.dirichlet_multinomial(c, n)
    for y in outcomes:
        assert dirichlet_multinomial_logpmf(y, c) == pytest.approx(ref.logpmf(y), abs=1e-10)


def test_sufficient_statistics_add_over_disjoint_documents():
    rng = np.random.default_rng(4)
    X = sp.csr_matrix(rng.poisson(1.0, size=(40, 7)))
    resp = rng.dirichlet(np.ones(3), size=40)
    fam = MultinomialFamily(0.1)
    whole = fam.sufficient_statistics(fam.prepare(X), resp)
    parts = fam.sufficient_statistics(fam.prepare(X[:15]), resp[:15]) + fam.sufficient_statistics(
        fam.prepare(X[15:]), resp[15:]
    )
    np.testing.assert_allclose(whole.counts_PK, parts.counts_PK, rtol=1e-12)
    np.testing.assert_allclose(whole.totals_K, parts.totals_K, rtol=1e-12)
    np.testing.assert_allclose(whole.counts_PK, X.T.toarray() @ resp, rtol=1e-12)
    np.testing.assert_allclose(whole.totals_K, whole.counts_PK.sum(axis=0), rtol=1e-12)


def test_kernels_match_the_numpy_reference():
    """The numba pass equals digamma/gammaln from scipy, including the Taylor branch."""
    rng = np.random.default_rng(5)
    n, p, K, theta = 30, 12, 4, 0.1
    X = sp.csr_matrix(rng.poisson(1.0, size=(n, p)))
    fam = MultinomialFamily(theta)
    phi_KP = theta + rng.gamma(1.0, size=(K, p))
    phi_KP[rng.random((K, p)) < 0.5] = theta + 1e-12  # tiny statistics take the Taylor branch
    phi_KP[0, 0] = theta
    got = fam.expectations(fam.posterior_from_concentration(phi_KP))
    reference = dirichlet_expected_log(phi_KP).T
    np.testing.assert_allclose(got.expected_log_PK, reference, rtol=1e-13, atol=1e-13)
    assert got.neg_kl == pytest.approx(dirichlet_neg_kl(phi_KP, theta), rel=1e-12)
    data = fam.prepare(X)
    np.testing.assert_allclose(fam.expected_log_likelihood(data, got), X @ reference, rtol=1e-12)
    log_weights = np.log(np.array([0.1, 0.2, 0.3, 0.4]))
    resp, log_norm, counts = fam.responsibilities(data, got, log_weights)
    L = log_weights + X @ reference
    from scipy.special import logsumexp, softmax

    np.testing.assert_allclose(log_norm, logsumexp(L, axis=1), rtol=1e-12)
    np.testing.assert_allclose(resp, softmax(L, axis=1), rtol=1e-12, atol=1e-20)
    np.testing.assert_allclose(counts, resp.sum(axis=0), rtol=1e-12)


@pytest.mark.parametrize("x", [1e-4, 0.1, 0.5, 1.0, 5.9, 6.0, 37.5, 1e6])
def test_numba_digamma_and_trigamma(x):
    from scipy.special import digamma as sc_digamma, polygamma

    from mixbayes.families._count_kernels import digamma, trigamma

    assert digamma(x) == pytest.approx(sc_digamma(x), rel=1e-14, abs=1e-14)
    assert trigamma(x) == pytest.approx(polygamma(1, x), rel=1e-13)


def test_serial_and_parallel_kernels_agree_bitwise():
    """Every kernel sums each output row in a fixed order: thread count cannot change results."""
    from mixbayes.families import _count_kernels as kern

    rng = np.random.default_rng(8)
    X = sp.csr_matrix(rng.poisson(0.7, size=(300, 40)).astype(float))
    E = np.log(rng.dirichlet(np.ones(40), size=5)).T.copy()
    w = np.log(np.full(5, 0.2))
    S = rng.gamma(1.0, size=(40, 5))
    cases = [
        ("compressed_times_dense", lambda: (X.indptr, X.indices, X.data, E, np.empty((300, 5)))),
        ("responsibilities", lambda: (X.indptr, X.indices, X.data, E, w, np.empty((300, 5)),
                                      np.empty(300))),
        ("dirichlet_columns", lambda: (S, S.sum(axis=0), 0.1, np.empty((40, 5)))),
        ("polya_sums", lambda: (S, 0.3)),
    ]
    for name, make_args in cases:
        fn = getattr(kern, name)
        serial_args, parallel_args = make_args(), make_args()
        serial, parallel = fn.serial(*serial_args), fn.parallel(*parallel_args)
        np.testing.assert_array_equal(serial, parallel)
        for a, b in zip(serial_args, parallel_args):  # outputs written in place agree too
            np.testing.assert_array_equal(a, b)
