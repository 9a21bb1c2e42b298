"""The conjugate Gaussian family's marginal likelihood and densities, each two ways."""

import numpy as np
import pytest
from scipy import stats

from mixbayes.families.gaussian import GaussianFamily, GaussianStats, scaled_prior

TYPES = ("full", "diag", "spherical")


def _family(covariance_type, d=3):
    rng = np.random.default_rng(0)
    A = rng.standard_normal((d, d))
    covariance = A @ A.T + d * np.eye(d)
    return scaled_prior(covariance_type, rng.standard_normal(d), covariance, 2.5)


def _stats(family, X):
    data = family.prepare(X)
    return family.sufficient_statistics(data, np.ones((X.shape[0], 1)))


@pytest.mark.parametrize("covariance_type", TYPES)
def test_marginal_likelihood_is_the_chain_rule_of_the_predictive(covariance_type):
    """log p(x_1..x_5) in closed form against sum_i log p(x_i | x_<i), the Student-t
    predictives of the posteriors given the points before (the two share only posterior())."""
    family = _family(covariance_type)
    X = np.random.default_rng(1).normal(size=(5, 3)) * [1.0, 3.0, 0.5]
    chain = family.log_predictive(family.prepare(X[:1]),
                                  family.posterior(family.prior_statistics()))[0, 0]
    for i in range(1, X.shape[0]):
        post = family.posterior(_stats(family, X[:i]))
        chain += family.log_predictive(family.prepare(X[i:i + 1]), post)[0, 0]
    assert family.log_marginal_likelihood(_stats(family, X))[0] == pytest.approx(chain,
                                                                                  rel=1e-10)
    # statistics add: two components at once give each its own marginal
    both = _stats(family, X[:2])
    two = GaussianStats(np.append(both.counts, 3.0), np.vstack([both.sums,
                        _stats(family, X[2:]).sums]), np.concatenate([both.squares,
                        _stats(family, X[2:]).squares]))
    values = family.log_marginal_likelihood(two)
    assert values[0] == pytest.approx(family.log_marginal_likelihood(_stats(family, X[:2]))[0])
    assert family.log_marginal_likelihood(family.prior_statistics(2)) == pytest.approx(0.0)


def test_one_dimensional_marginal_is_the_normal_gamma_formula():
    """In 1-D the three types are one Normal-Gamma model: each against the textbook
    formula Gamma(a_n)/Gamma(a_0) b_0^a_0/b_n^a_n (kappa_0/kappa_n)^(1/2) (2 pi)^(-n/2)."""
    x = np.array([[0.3], [-1.2], [2.0], [0.9]])
    m0, k0, a0, b0 = 0.5, 0.4, 1.5, 0.8
    n, xbar = x.size, x.mean()
    kn, an = k0 + n, a0 + n / 2
    bn = b0 + 0.5 * ((x - xbar) ** 2).sum() + k0 * n * (xbar - m0) ** 2 / (2 * kn)
    from scipy.special import gammaln
    exact = (gammaln(an) - gammaln(a0) + a0 * np.log(b0) - an * np.log(bn)
             + 0.5 * np.log(k0 / kn) - 0.5 * n * np.log(2 * np.pi))
    for covariance_type in TYPES:
        prior = np.array([[2 * b0]]) if covariance_type == "full" else np.array(
            [2 * b0] if covariance_type == "diag" else 2 * b0)
        family = GaussianFamily(covariance_type, [m0], k0, 2 * a0, prior)
        assert family.log_marginal_likelihood(_stats(family, x))[0] == pytest.approx(exact)


@pytest.mark.parametrize("covariance_type", TYPES)
def test_log_density_is_the_gaussian_of_the_draws(covariance_type):
    """log_density against scipy's multivariate normal at the family's own draws, and the
    scaled prior's covariance has the prior mean it was given (closed form)."""
    family = _family(covariance_type)
    rng = np.random.default_rng(2)
    means, precisions = family.draw(family.posterior(family.prior_statistics(2)), rng)
    X = rng.normal(size=(4, 3))
    got = family.log_density(X, means[0], precisions[0])
    for k in range(2):
        P = precisions[0, k]
        P = P if P.ndim == 2 else np.diag(np.broadcast_to(P, (3,)))
        expected = stats.multivariate_normal(means[0, k], np.linalg.inv(P)).logpdf(X)
        np.testing.assert_allclose(got[:, k], expected, rtol=1e-10)
    nu0, prior = family.degrees_of_freedom_prior, family.covariance_prior
    mean_cov = prior / (nu0 - 3 - 1) if covariance_type == "full" else prior / (nu0 - 2)
    target = _family("full").covariance_prior
    want = {"full": target, "diag": np.diagonal(target), "spherical": np.trace(target) / 3}
    np.testing.assert_allclose(mean_cov, want[covariance_type])


def test_wishart_draws_have_the_wishart_moments():
    """The Bartlett draws of full precisions against E[Lambda] = nu W and
    E[log|Lambda|] = sum_i psi((nu - i)/2) + d log 2 + log|W| (z-tests on 20,000 draws)."""
    from scipy.special import digamma

    family = _family("full")
    post = family.posterior(family.prior_statistics(1))
    precisions = family.draw(post, np.random.default_rng(3), size=20000)[1][:, 0]
    nu, W = post.dof[0], np.linalg.inv(post.scale[0])
    se = precisions.std(axis=0) / np.sqrt(precisions.shape[0])
    assert np.all(np.abs(precisions.mean(axis=0) - nu * W) < 3.3 * se)
    log_det = np.linalg.slogdet(precisions)[1]
    expected = digamma(0.5 * (nu - np.arange(3))).sum() + 3 * np.log(2) + np.linalg.slogdet(W)[1]
    assert abs(log_det.mean() - expected) < 3.3 * log_det.std() / np.sqrt(log_det.size)


@pytest.mark.parametrize("covariance_type", TYPES)
def test_label_statistics_are_the_one_hot_responsibilities(covariance_type):
    """Statistics of hard labels (a component left empty included) against the weighted
    statistics of their one-hot responsibilities."""
    family = _family(covariance_type)
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 3))
    labels = rng.choice([0, 1, 3], size=30)
    data = family.prepare(X)
    got = family.label_statistics(data, labels, 4)
    expected = family.sufficient_statistics(data, np.eye(4)[labels])
    for field in ("counts", "sums", "squares"):
        np.testing.assert_allclose(getattr(got, field), getattr(expected, field), atol=1e-12)


def test_known_variance_marginal_is_the_joint_gaussian_of_the_points():
    """Per dimension, n points with a known variance and their mean integrated out are jointly
    N(m0 1, sigma^2 I + s0^2 11^T): the closed form equals that density, for two clusters at
    once (sizes 3 and 1)."""
    from mixbayes.families.gaussian import known_variance_log_marginal

    rng = np.random.default_rng(0)
    variance, prior_variance = 0.5, 3.0
    Y = [rng.normal(size=(3, 2)), rng.normal(size=(1, 2))]  # centred at m0
    clusters = GaussianStats(np.array([3.0, 1.0]), np.array([y.sum(axis=0) for y in Y]),
                             np.array([(y**2).sum(axis=0) for y in Y]))
    expected = [sum(stats.multivariate_normal(np.zeros(len(y)), variance * np.eye(len(y))
                                              + prior_variance).logpdf(y[:, j])
                    for j in range(2)) for y in Y]
    np.testing.assert_allclose(known_variance_log_marginal(clusters, variance, prior_variance),
                               expected, rtol=1e-12)
