"""VariationalGaussianMixture.sample: the draws follow the fitted mixture, by value.

(Kept apart from test_gaussian_vb.py, whose check of ``sample`` looks at the component means
only, to within 0.5.) Each statistical check below fails by chance with probability about 1e-3
at most, so the file's false-alarm budget is about 1%.
"""

import numpy as np
import pytest
from scipy.stats import chi2, chisquare

import mixbayes as mb

P_FLOOR, Z_CEILING = 1e-3, 3.9  # z: two-sided 1e-4 per covariance entry (18 of them)


def test_sample_follows_the_fitted_weights_means_and_covariances():
    """20,000 draws from a fit of three correlated clusters of sizes 0.6, 0.3, 0.1: component
    counts against n * weights_ (chi-square), each component's sample mean against means_
    (its Mahalanobis statistic is chi-square with d degrees of freedom), and every entry of its
    sample covariance against covariance_matrix(k) within Monte-Carlo error (the standard
    error of a Gaussian sample covariance entry is sqrt((s_ii s_jj + s_ij^2) / n))."""
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0, 0.0], [6.0, 2.0, -1.0], [-3.0, 5.0, 2.0]])
    labels = rng.choice(3, size=600, p=[0.6, 0.3, 0.1])
    A = rng.normal(size=(3, 3, 3)) * 0.6
    X = centres[labels] + np.einsum("nij,nj->ni", A[labels], rng.normal(size=(600, 3)))
    model = mb.VariationalGaussianMixture(3, covariance_type="full", random_state=0).fit(X)
    assert np.sort(model.weights_).min() > 0.05  # three live components of unequal weight

    n = 20000
    draws, z = model.sample(n, random_state=1)
    assert draws.shape == (n, 3) and z.shape == (n,)
    counts = np.bincount(z, minlength=3)
    assert chisquare(counts, n * model.weights_).pvalue > P_FLOOR
    for k in range(3):
        mine = draws[z == k]
        m = mine.shape[0]
        cov = model.covariance_matrix(k)
        diff = mine.mean(axis=0) - model.means_[k]
        assert chi2.sf(m * diff @ np.linalg.solve(cov, diff), 3) > P_FLOOR
        se = np.sqrt((np.outer(np.diag(cov), np.diag(cov)) + cov**2) / m)
        z_cov = (np.cov(mine, rowvar=False) - cov) / se
        assert np.abs(z_cov[np.triu_indices(3)]).max() < Z_CEILING


def test_sample_is_reproducible_and_validates_n_samples():
    X = np.random.default_rng(2).normal(size=(50, 2))
    model = mb.VariationalGaussianMixture(2, random_state=0).fit(X)
    a, b = model.sample(5, random_state=3), model.sample(5, random_state=3)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    for bad in (0, 2.5):
        with pytest.raises(ValueError, match="n_samples must be an integer >= 1"):
            model.sample(bad)
