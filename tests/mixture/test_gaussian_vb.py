"""Variational Gaussian mixture: monotone ELBO, closed forms vs Monte Carlo, scikit-learn agreement."""

import os
import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn.mixture import BayesianGaussianMixture

import mixbayes as mb
from mixbayes.families.gaussian import GaussianFamily

FAITHFUL = os.path.join(os.path.dirname(__file__), "..", "data", "old_faithful.csv")


def _blobs(seed, n=300):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0, 0.0], [6.0, 2.0, -1.0], [-3.0, 5.0, 2.0]])
    labels = rng.integers(3, size=n)
    A = rng.normal(size=(3, 3, 3)) * 0.6
    X = centres[labels] + np.einsum("nij,nj->ni", A[labels], rng.normal(size=(n, 3)))
    return X, labels


def _quiet_fit(model, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mb.ConvergenceWarning)
        return model.fit(X)


@pytest.mark.parametrize("prior_type", ["dirichlet_distribution", "dirichlet_process"])
@pytest.mark.parametrize("covariance_type", ["full", "diag", "spherical"])
@pytest.mark.parametrize("K", [1, 3, 6])
@pytest.mark.parametrize("seed", [0, 1])
def test_elbo_never_decreases(covariance_type, K, seed, prior_type):
    X, _ = _blobs(seed)
    model = _quiet_fit(mb.VariationalGaussianMixture(
        K, covariance_type=covariance_type, init="random", tol=0.0, max_iter=80,
        weight_concentration_prior_type=prior_type, random_state=seed), X)
    trace = model.elbo_trace_
    assert np.all(np.diff(trace) >= -1e-9 * np.abs(trace[1:])), np.diff(trace).min()


def test_old_faithful_collapses_to_two_components():
    eruptions = np.loadtxt(FAITHFUL, delimiter=",", skiprows=3)[:, 0]
    assert eruptions.shape == (272,)
    model = mb.VariationalGaussianMixture(10, covariance_type="diag", n_init=3).fit(eruptions)
    assert model.n_effective_components_ == 2
    big = np.argsort(-model.weights_)[:2]
    order = big[np.argsort(model.means_[big, 0])]
    np.testing.assert_allclose(model.means_[order, 0], [2.05, 4.29], atol=0.02)
    np.testing.assert_allclose(model.weights_[order], [0.36, 0.64], atol=0.01)
    # In one dimension scikit-learn's diag model is exactly this Normal-Gamma one (same default
    # priors: nu_0 = 1, W_0^{-1} = the variance, kappa_0 = 1, m_0 = the mean); fitted to a
    # tight tolerance it is an independent value for the means, variances and weights.
    ref = BayesianGaussianMixture(
        n_components=10, covariance_type="diag", weight_concentration_prior_type=
        "dirichlet_distribution", reg_covar=0.0, n_init=3, tol=1e-8, max_iter=5000,
        random_state=0).fit(eruptions[:, None])
    assert np.sum(ref.weights_ > 0.01) == 2
    big = np.argsort(-ref.weights_)[:2]
    ref_order = big[np.argsort(ref.means_[big, 0])]
    np.testing.assert_allclose(model.means_[order], ref.means_[ref_order], rtol=1e-5)
    np.testing.assert_allclose(model.covariances_[order], ref.covariances_[ref_order], rtol=1e-4)
    np.testing.assert_allclose(model.weights_[order], ref.weights_[ref_order], rtol=1e-5)
    np.testing.assert_allclose(model.covariances_[order, 0], [0.1048, 0.1797], atol=1e-4)


class _SklearnFromResp(BayesianGaussianMixture):
    """scikit-learn's model started from given responsibilities."""

    resp0 = None

    def _initialize_parameters(self, X, random_state, **kwargs):
        self._initialize(X, self.resp0)


@pytest.mark.parametrize("prior_type", ["dirichlet_distribution", "dirichlet_process"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_agrees_with_scikit_learn_given_the_same_start(seed, prior_type):
    X, _ = _blobs(seed, n=250)
    K = 4
    resp0 = np.random.default_rng(seed).dirichlet(np.ones(K), size=X.shape[0])

    class Ours(mb.VariationalGaussianMixture):
        def _initial_responsibilities(self, X, family, rng):
            return resp0

    iters = 30
    ours = _quiet_fit(Ours(K, covariance_type="full", max_iter=iters, tol=0.0, reg_covar=0.0,
                           weight_concentration_prior_type=prior_type), X)
    ref = _SklearnFromResp(
        n_components=K, covariance_type="full", weight_concentration_prior_type=prior_type,
        weight_concentration_prior=1.0 / K, reg_covar=0.0,
        max_iter=iters, tol=0.0, n_init=1)
    ref.resp0 = resp0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref.fit(X)
    # all iterations run, unless ours reached an exact fixed point (an ELBO change of 0 <= tol)
    assert ours.n_iter_ == iters or ours.elbo_trace_[-1] == ours.elbo_trace_[-2]
    np.testing.assert_allclose(ours.weights_, ref.weights_, atol=1e-6)
    np.testing.assert_allclose(ours.means_, ref.means_, atol=1e-6)
    np.testing.assert_allclose(ours.covariances_, ref.covariances_, atol=1e-6)


def test_wishart_expectations_match_monte_carlo():
    """E[log|Lambda|] and E[(x-mu)^T Lambda (x-mu)] from scipy.stats draws."""
    rng = np.random.default_rng(0)
    d, kappa, nu = 3, 2.5, 6.0
    A = rng.normal(size=(d, d))
    scale_inv = A @ A.T + d * np.eye(d)  # W^{-1}
    m = rng.normal(size=d)
    family = GaussianFamily("full", np.zeros(d), 1.0, d, np.eye(d))
    from mixbayes.families.gaussian import GaussianData, GaussianPosterior

    post = GaussianPosterior(np.array([kappa]), m[None], np.array([nu]), scale_inv[None])
    exp = family.expectations(post)
    Lams = stats.wishart(df=nu, scale=np.linalg.inv(scale_inv)).rvs(20000, random_state=rng)
    logdets = np.linalg.slogdet(Lams)[1]
    assert exp.expected_log_det[0] == pytest.approx(logdets.mean(), abs=4 * logdets.std() / 141)
    x = rng.normal(size=d)
    mus = np.array([rng.multivariate_normal(m, np.linalg.inv(kappa * L)) for L in Lams[:5000]])
    quad = np.einsum("ni,nij,nj->n", x - mus, Lams[:5000], x - mus)
    logpdf = 0.5 * (logdets[:5000] - d * np.log(2 * np.pi) - quad)
    got = family.expected_log_likelihood(GaussianData(x[None]), exp)[0, 0]
    assert got == pytest.approx(logpdf.mean(), abs=4 * logpdf.std() / np.sqrt(5000))


@pytest.mark.parametrize("covariance_type", ["full", "diag", "spherical"])
def test_kl_term_matches_monte_carlo(covariance_type):
    """-KL(q || p) of the component factors against sampling from q."""
    rng = np.random.default_rng(1)
    d = 2
    X, _ = _blobs(3, n=60)
    X = X[:, :d]
    model = mb.VariationalGaussianMixture(1, covariance_type=covariance_type, max_iter=3).fit(X)
    state, family = model._restore_state()
    post = state.family_posterior
    k0, nu0, W0inv = family.mean_precision_prior, family.degrees_of_freedom_prior, family.covariance_prior
    n = 4000
    if covariance_type == "full":  # all draws at once; the normal densities written out
        W = np.linalg.inv(post.scale[0])
        L = stats.wishart(df=post.dof[0], scale=W).rvs(size=n, random_state=rng)
        kappa, m = post.mean_precision[0], post.means[0]
        upper = np.swapaxes(np.linalg.cholesky(kappa * L), 1, 2)  # kappa L = U^T U
        mu = m + np.linalg.solve(upper, rng.standard_normal((n, d))[..., None])[..., 0]

        def log_normal(x, centre, precision):
            diff = x - centre
            return 0.5 * (np.linalg.slogdet(precision)[1] - d * np.log(2 * np.pi)
                          - np.einsum("ni,nij,nj->n", diff, precision, diff))

        wishart_q = stats.wishart(df=post.dof[0], scale=W).logpdf(np.moveaxis(L, 0, -1))
        wishart_p = stats.wishart(df=nu0, scale=np.linalg.inv(W0inv)).logpdf(
            np.moveaxis(L, 0, -1))
        draws = (wishart_p + log_normal(mu, 0.0, k0 * L)) - (wishart_q
                                                             + log_normal(mu, m, kappa * L))
    else:  # all draws at once: independent Gamma precisions, then normal means given them
        b = np.broadcast_to(post.scale[0], (d,))
        if covariance_type == "diag":
            tau = rng.gamma(post.dof[0], 1.0 / b, size=(n, d))
        else:
            tau = np.repeat(rng.gamma(post.dof[0], 1.0 / post.scale[0], size=(n, 1)), d, axis=1)
        mu = rng.normal(post.means[0], 1.0 / np.sqrt(post.mean_precision[0] * tau))
        n_tau = d if covariance_type == "diag" else 1
        b0 = np.broadcast_to(0.5 * W0inv, (d,))
        lq = np.sum(stats.gamma(post.dof[0], scale=1.0 / b).logpdf(tau)[:, :n_tau], axis=1) \
            + np.sum(stats.norm(post.means[0], 1 / np.sqrt(post.mean_precision[0] * tau))
                     .logpdf(mu), axis=1)
        lp = np.sum(stats.gamma(0.5 * nu0, scale=1.0 / b0).logpdf(tau)[:, :n_tau], axis=1) \
            + np.sum(stats.norm(0.0, 1 / np.sqrt(k0 * tau)).logpdf(mu), axis=1)
        draws = lp - lq
    draws = np.array(draws)
    neg_kl = state.family_expectations.neg_kl
    assert neg_kl == pytest.approx(draws.mean(), abs=5 * draws.std() / np.sqrt(len(draws)))


def test_permuting_rows_gives_the_same_fit():
    X, _ = _blobs(4)
    perm = np.random.default_rng(0).permutation(len(X))

    class FixedStart(mb.VariationalGaussianMixture):
        def _initial_responsibilities(self, X_, family, rng):
            from sklearn.cluster import KMeans

            km = KMeans(3, n_init=1, random_state=0).fit(X)  # the same start, permuted below
            labels = km.predict(X_)
            return np.eye(3)[labels]

    a = FixedStart(3).fit(X)
    b = FixedStart(3).fit(X[perm])
    np.testing.assert_allclose(a.means_, b.means_, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(a.labels_[perm], b.labels_)


@pytest.mark.parametrize("shift,scale", [(100.0, 1.0), (0.0, 1e-3), (-5.0, 250.0)])
def test_translation_and_rescaling_give_the_same_partition(shift, scale):
    X, _ = _blobs(5)
    a = mb.VariationalGaussianMixture(3, random_state=0).fit(X)
    b = mb.VariationalGaussianMixture(3, random_state=0).fit(shift + scale * X)
    assert mb.metrics.ari(a.labels_, b.labels_) == 1.0
    np.testing.assert_allclose(b.means_, shift + scale * a.means_, rtol=1e-6, atol=1e-6 * scale)


def test_recovers_simulated_clusters_and_samples():
    X, labels = _blobs(6, n=600)
    model = mb.VariationalGaussianMixture(8, random_state=0).fit(X)
    assert mb.metrics.ari(labels, model.labels_) > 0.95
    assert model.n_effective_components_ == 3
    draws, z = model.sample(500, random_state=0)
    assert draws.shape == (500, 3) and z.shape == (500,)
    big = np.flatnonzero(model.weights_ > 0.05)
    assert big.size == 3 and np.mean(np.isin(z, big)) > 0.97
    for k in big:  # draws of a component scatter around its mean
        assert np.linalg.norm(draws[z == k].mean(axis=0) - model.means_[k]) < 0.5
    np.testing.assert_allclose(model.predict_proba(X).sum(axis=1), 1.0)


@pytest.mark.parametrize("X,params,error,match", [
    (np.array([[0.0, 1.0], [np.nan, 2.0], [3.0, 1.0]]), {}, ValueError, "X contains NaN"),
    (np.array([[0.0, 1.0], [np.inf, 2.0], [3.0, 1.0]]), {}, ValueError, "X contains NaN"),
    (np.array([[0.0, 1.0]]), dict(n_components=1), ValueError, "n_samples=1"),
    (np.array([[0.0, 1.0], [1.0, 1.0], [2.0, 1.0]]), dict(reg_covar=0.0), ValueError,
     r"a zero-variance column \[1\].*use reg_covar > 0"),
    (np.array([[0.0, 0.0], [1.0, 2.0], [2.0, 4.0]]), dict(reg_covar=0.0), ValueError,
     r"X's covariance is singular.*use reg_covar > 0"),
    (np.arange(10.0).reshape(5, 2), dict(reg_covar=-1e-6), ValueError,
     r"reg_covar must be a finite number >= 0; got -1e-06\."),
    (np.arange(10.0).reshape(5, 2), dict(reg_covar=np.inf), ValueError,
     r"reg_covar must be a finite number >= 0; got inf\."),
    (np.arange(10.0).reshape(5, 2), dict(reg_covar="1e-6"), TypeError,
     r"reg_covar must be a finite number >= 0; got '1e-6'\."),
    (np.ones((5, 2)) * np.arange(5)[:, None], dict(mean_precision_prior=0.0), ValueError,
     "mean_precision_prior must be a finite number > 0"),
    (np.arange(10.0).reshape(5, 2), dict(degrees_of_freedom_prior=0.5), ValueError,
     "degrees_of_freedom_prior must be > n_features - 1"),
    (np.arange(10.0).reshape(5, 2), dict(covariance_prior=-np.eye(2)), ValueError,
     "covariance_prior must be positive"),
    (np.arange(10.0).reshape(5, 2), dict(covariance_type="tied"), ValueError,
     "covariance_type must be one of"),
])
def test_bad_input(X, params, error, match):
    params = {"n_components": 2, **params}
    with pytest.raises(error, match=match):
        mb.VariationalGaussianMixture(**params).fit(X)


def test_wrong_dimension_at_predict():
    X, _ = _blobs(0)
    model = mb.VariationalGaussianMixture(2).fit(X)
    with pytest.raises(ValueError, match="X has 2 features, but VariationalGaussianMixture is expecting 3"):
        model.predict(X[:, :2])


def test_a_single_point_as_a_1d_array_is_told_to_reshape():
    """``predict(X[0])`` reads the 1-D point as one feature; the error says how to pass it."""
    X, _ = _blobs(0)
    model = mb.VariationalGaussianMixture(2).fit(X)
    with pytest.raises(ValueError, match=r"single point as a row, X\.reshape\(1, -1\)"):
        model.predict(X[0])
    assert model.predict(X[0].reshape(1, -1)).shape == (1,)


def test_zero_variance_column_with_explicit_prior_is_handled():
    X, _ = _blobs(0, n=100)
    X = np.column_stack([X, np.ones(100)])
    model = mb.VariationalGaussianMixture(
        3, covariance_type="diag", covariance_prior=np.array([1.0, 1.0, 1.0, 1e-4])).fit(X)
    assert np.isfinite(model.elbo_)


def test_student_t_predictive_matches_numerical_integration_in_1d():
    """p(x | data) = double integral of N(x | mu, 1/tau) NG(mu, tau) over mu and tau."""
    from scipy import integrate

    from mixbayes.families.gaussian import GaussianData, GaussianPosterior

    family = GaussianFamily("diag", np.zeros(1), 1.0, 1.0, np.ones(1))
    kappa, m, a, b = 3.0, 0.4, 2.5, 1.7
    post = GaussianPosterior(np.array([kappa]), np.array([[m]]), np.array([a]), np.array([[b]]))
    for x in (-1.0, 0.3, 2.2):
        got = family.log_predictive(GaussianData(np.array([[x]])), post)[0, 0]

        import math

        log_gamma_norm = a * math.log(b) - math.lgamma(a)

        def integrand(mu, tau):  # N(x | mu, 1/tau) N(mu | m, 1/(kappa tau)) Gamma(tau | a, b)
            return math.exp(
                0.5 * math.log(tau / (2 * math.pi)) - 0.5 * tau * (x - mu) ** 2
                + 0.5 * math.log(kappa * tau / (2 * math.pi)) - 0.5 * kappa * tau * (mu - m) ** 2
                + log_gamma_norm + (a - 1) * math.log(tau) - b * tau)

        value, _ = integrate.dblquad(integrand, 1e-12, 40, -15, 15, epsabs=1e-10, epsrel=1e-8)
        assert got == pytest.approx(np.log(value), abs=1e-6)


@pytest.mark.parametrize("covariance_type", ["full", "diag", "spherical"])
def test_predictive_equals_the_average_over_posterior_draws(covariance_type):
    """log_predictive against log-mean of Gaussian densities at draws from ``draw``."""
    X, _ = _blobs(2, n=40)
    X = X[:, :2]
    model = mb.VariationalGaussianMixture(1, covariance_type=covariance_type, max_iter=5).fit(X)
    state, family = model._restore_state()
    points = np.array([[0.0, 0.0], [3.0, 1.0]])
    got = family.log_predictive(family.prepare(points), state.family_posterior)[:, 0]
    rng = np.random.default_rng(0)
    means, prec = family.draw(state.family_posterior, rng, size=20000)
    means, prec = means[:, 0], prec[:, 0]
    if covariance_type == "full":
        prec_matrix = prec
    elif covariance_type == "diag":
        prec_matrix = prec[:, :, None] * np.eye(2)
    else:
        prec_matrix = prec[:, None, None] * np.eye(2)
    diff = points[None, :, :] - means[:, None, :]  # (draws, points, d)
    quad = np.einsum("spi,sij,spj->sp", diff, prec_matrix, diff)
    log_det = np.linalg.slogdet(prec_matrix)[1]
    dens = np.exp(0.5 * (log_det[:, None] - 2 * np.log(2 * np.pi) - quad))
    mc = np.log(dens.mean(axis=0))
    se = dens.std(axis=0) / np.sqrt(len(dens)) / dens.mean(axis=0)
    np.testing.assert_array_less(np.abs(got - mc), 5 * se)
    mixture = model.log_predictive_density(points)
    np.testing.assert_allclose(mixture, got, rtol=1e-12)  # one component: the same density


def test_full_covariance_kernels_match_the_numpy_reference():
    from scipy.special import logsumexp, softmax

    X, _ = _blobs(7, n=500)
    model = mb.VariationalGaussianMixture(4, random_state=0, max_iter=3, tol=0).fit(X)
    state, family = model._restore_state()
    data = family.prepare(X)
    resp, log_norm, counts = family.responsibilities(
        data, state.family_expectations, state.expected_log_weights)
    L = state.expected_log_weights + family.expected_log_likelihood(data, state.family_expectations)
    np.testing.assert_allclose(log_norm, logsumexp(L, axis=1), rtol=1e-12)
    np.testing.assert_allclose(resp, softmax(L, axis=1), atol=1e-12)
    np.testing.assert_allclose(counts, resp.sum(axis=0), rtol=1e-12)
    stats_ = family.sufficient_statistics(data, resp)
    Xc = data.centred
    np.testing.assert_allclose(stats_.sums, resp.T @ Xc, rtol=1e-12)
    np.testing.assert_allclose(stats_.squares, np.einsum("nk,ni,nj->kij", resp, Xc, Xc), rtol=1e-11)


def test_gaussian_kernel_helpers():
    from mixbayes.families import _gaussian_kernels as kern

    rng = np.random.default_rng(9)
    A = rng.normal(size=(3, 5, 5))
    L = np.linalg.cholesky(A @ np.swapaxes(A, 1, 2) + 5 * np.eye(5))
    np.testing.assert_allclose(kern.inverse_lower(L), np.linalg.inv(L), rtol=1e-12, atol=1e-14)
    X = rng.normal(size=(300, 5))
    resp = rng.dirichlet(np.ones(3), size=300)
    for a, b in zip(kern.weighted_moments.serial(X, resp), kern.weighted_moments.parallel(X, resp)):
        np.testing.assert_array_equal(a, b)  # fixed chunks: threads cannot change the sums


def test_stick_breaking_kl_matches_monte_carlo():
    from mixbayes.mixture._weights import StickBreakingWeights

    rng = np.random.default_rng(3)
    weights = StickBreakingWeights(0.7)
    post = weights.posterior(np.array([30.0, 5.5, 0.2, 0.0]))
    a, b = post[:, 0], post[:, 1]
    v = rng.beta(a, b, size=(200000, 4))
    terms = (stats.beta(1.0, 0.7).logpdf(v) - stats.beta(a, b).logpdf(v)).sum(axis=1)
    got = weights.neg_kl(post, weights.expected_log(post))
    assert got == pytest.approx(terms.mean(), abs=5 * terms.std() / np.sqrt(len(terms)))
    log_pi = np.log(v) + np.concatenate([np.zeros((len(v), 1)),
                                         np.cumsum(np.log1p(-v), axis=1)[:, :-1]], axis=1)
    np.testing.assert_allclose(weights.expected_log(post), log_pi.mean(axis=0), atol=0.01)


# ---------------------------------------------------------------- degenerate columns (issue 13)
def _standardise(X):
    spread = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(spread > 0, spread, 1.0)


def _assert_fits(model):
    trace = model.elbo_trace_
    assert np.all(np.isfinite(trace)) and np.all(np.isfinite(model.covariances_))
    assert np.all(np.diff(trace) >= -1e-9 * np.abs(trace[1:])), np.diff(trace).min()


def _degenerate(kind, X):
    rng = np.random.default_rng(1)
    extra = {
        "duplicated": X[:, 0],
        "collinear": X[:, 0] - 2.0 * X[:, 1],
        "constant": np.ones(len(X)),
        # a real-looking table: a column that is a combination of two others plus noise 1e-6,
        # all standardised, so the smallest singular value is ~1e-6 of the largest
        "nearly collinear": X[:, 0] + 2.0 * X[:, 1] + 1e-6 * rng.normal(size=len(X)),
    }[kind]
    Z = np.column_stack([X, extra])
    return _standardise(Z) if kind == "nearly collinear" else Z


@pytest.mark.parametrize("covariance_type", ["full", "diag", "spherical"])
@pytest.mark.parametrize("kind", ["duplicated", "collinear", "constant", "nearly collinear"])
def test_degenerate_columns_fit_and_keep_the_clusters(kind, covariance_type):
    X, labels = _blobs(0)
    base = mb.VariationalGaussianMixture(6, covariance_type=covariance_type).fit(X)
    model = mb.VariationalGaussianMixture(6, covariance_type=covariance_type).fit(
        _degenerate(kind, X))
    _assert_fits(model)
    nmi, nmi_base = mb.metrics.nmi(labels, model.labels_), mb.metrics.nmi(labels, base.labels_)
    if covariance_type == "full":
        assert nmi == pytest.approx(1.0) and nmi_base == pytest.approx(1.0)
    else:  # an extra correlated column can mislead a diagonal model a little
        assert nmi > nmi_base - 0.15, (nmi, nmi_base)


@pytest.mark.parametrize("covariance_type", ["full", "diag", "spherical"])
def test_constant_column_gets_the_floor_not_rounding_noise(covariance_type):
    """A constant column's value must not matter: np.var of a column of 7/3 is rounding noise
    (~1e-32), not 0, and must not become a precision of 1e32 that dominates the ELBO."""
    X, labels = _blobs(0)
    fits = [mb.VariationalGaussianMixture(6, covariance_type=covariance_type).fit(
        np.column_stack([X, np.full(len(X), value)])) for value in (1.0, 7.0 / 3.0)]
    for model in fits:
        _assert_fits(model)
    assert fits[1].elbo_ == pytest.approx(fits[0].elbo_, rel=1e-9)
    np.testing.assert_array_equal(fits[1].labels_, fits[0].labels_)
    # no spread in the column: its posterior scale is the prior's, i.e. the floor
    # reg_covar * (the mean variance of the columns that vary: families.gaussian.data_scale),
    # so covariances_ = floor / (nu_0 + N_k)
    model = fits[0]
    floor = 1e-6 * np.var(X, axis=0, ddof=1).mean()
    counts = model.weight_concentration_ - model.weight_prior_
    if covariance_type == "diag":
        np.testing.assert_allclose(model.covariances_[:, 3], floor / (1.0 + counts), rtol=1e-6)
    elif covariance_type == "full":
        np.testing.assert_allclose(model.covariances_[:, 3, 3], floor / (4.0 + counts),
                                   rtol=1e-6)


@pytest.mark.parametrize("covariance_type", ["full", "diag", "spherical"])
def test_more_features_than_samples(covariance_type):
    rng = np.random.default_rng(2)
    truth = np.repeat([0, 1], 10)
    X = rng.normal(size=(20, 40)) + 5.0 * truth[:, None]  # data covariance of rank 19 < 40
    model = mb.VariationalGaussianMixture(4, covariance_type=covariance_type).fit(X)
    _assert_fits(model)
    # each fitted cluster lies within one true cluster (full may split one: 40-D scales from
    # 10 points are barely determined)
    from sklearn.metrics import homogeneity_score

    assert homogeneity_score(truth, model.labels_) == pytest.approx(1.0)


def test_nearly_collinear_old_faithful_fits_like_the_original_table():
    table = np.loadtxt(FAITHFUL, delimiter=",", skiprows=3)
    noise = 1e-6 * np.random.default_rng(0).normal(size=len(table))
    near = _standardise(np.column_stack([table, table[:, 0] + table[:, 1] / 10 + noise]))
    assert np.linalg.svd(near, compute_uv=False)[[-1, 0]] @ [1, -1e-5] < 0  # ratio < 1e-5
    base = mb.VariationalGaussianMixture(5).fit(_standardise(table))
    model = mb.VariationalGaussianMixture(5).fit(near)
    _assert_fits(model)
    assert model.n_effective_components_ == base.n_effective_components_ == 2
    assert mb.metrics.ari(base.labels_, model.labels_) == 1.0


def test_posterior_scale_is_kept_positive_definite_without_a_floor():
    """reg_covar=0 and a tiny prior scale: far-apart clusters make S_k - kappa m m^T a
    difference of numbers ~1e8 whose duplicated direction should be ~1e-12; rounding makes it
    indefinite, and the posterior must be put back above the prior (a Cholesky failed here)."""
    rng = np.random.default_rng(0)
    truth = rng.integers(2, size=300)
    X = rng.normal(size=(300, 2)) + np.array([[0.0, 0.0], [1e4, 0.0]])[truth]
    model = _quiet_fit(mb.VariationalGaussianMixture(
        2, reg_covar=0.0, covariance_prior=1e-12 * np.eye(3), tol=0.0, max_iter=30),
        np.column_stack([X, X[:, 0]]))
    assert np.all(np.isfinite(model.elbo_trace_))
    assert np.all(np.linalg.eigvalsh(model.scale_) > 0)
    assert mb.metrics.nmi(truth, model.labels_) == 1.0


# ---------------------------------------------------------------- diag/spherical vs a reference
def _reference_normal_gamma_cavi(X, resp, iters, spherical, alpha, m0, kappa0, nu0, prior_var):
    """Textbook CAVI for a Dirichlet mixture of Normal-Gamma components (Bishop 10.2 with one
    Gamma precision per dimension, or one shared), written from scratch: the rate is
    b0 + (scatter about the component mean + shrinkage term) / 2, with a0 = nu0/2 and
    b0 = prior_var/2. Returns weights, means and variances E[tau]^-1 after ``iters`` sweeps."""
    from scipy.special import digamma as psi

    n, d = X.shape
    a0, b0 = nu0 / 2.0, prior_var / 2.0
    for sweep in range(iters + 1):
        N = resp.sum(axis=0)
        xbar = (resp.T @ X) / N[:, None]
        scatter = np.stack([(resp[:, k:k + 1] * (X - xbar[k]) ** 2).sum(axis=0)
                            for k in range(len(N))])  # (K, d)
        kappa = kappa0 + N
        m = (kappa0 * m0 + N[:, None] * xbar) / kappa[:, None]
        shrink = (kappa0 * N / kappa)[:, None] * (xbar - m0) ** 2
        if spherical:
            a = a0 + d * N / 2.0
            b = b0 + 0.5 * (scatter + shrink).sum(axis=1)
            e_log_tau, e_tau = (psi(a) - np.log(b))[:, None] * np.ones(d), (a / b)[:, None]
        else:
            a = a0 + N / 2.0
            b = b0 + 0.5 * (scatter + shrink)
            e_log_tau, e_tau = psi(a)[:, None] - np.log(b), a[:, None] / b
        conc = alpha + N
        if sweep == iters:
            return conc / conc.sum(), m, 1.0 / e_tau if not spherical else 1.0 / e_tau[:, 0]
        e_log_w = psi(conc) - psi(conc.sum())
        log_rho = e_log_w + 0.5 * (
            e_log_tau.sum(axis=1) - d * np.log(2 * np.pi) - d / kappa
            - np.stack([(e_tau[k] * (X - m[k]) ** 2).sum(axis=1) for k in range(len(N))], 1))
        resp = np.exp(log_rho - log_rho.max(axis=1, keepdims=True))
        resp /= resp.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("reg_covar", [0.0, 1e-2])
@pytest.mark.parametrize("covariance_type", ["diag", "spherical"])
def test_diag_and_spherical_agree_with_a_reference_cavi(covariance_type, reg_covar):
    X, _ = _blobs(1, n=200)
    K, iters = 4, 20
    resp0 = np.random.default_rng(1).dirichlet(np.ones(K), size=len(X))

    class Ours(mb.VariationalGaussianMixture):
        def _initial_responsibilities(self, X, family, rng):
            return resp0

    m0, kappa0, nu0, alpha = np.array([0.5, 1.0, -0.2]), 0.7, 2.5, 0.3
    prior = np.array([2.0, 3.0, 1.5]) if covariance_type == "diag" else np.asarray(2.5)
    ours = _quiet_fit(Ours(K, covariance_type=covariance_type, max_iter=iters, tol=0.0,
                           weight_concentration_prior=alpha, mean_prior=m0,
                           mean_precision_prior=kappa0, degrees_of_freedom_prior=nu0,
                           covariance_prior=prior, reg_covar=reg_covar), X)
    assert ours.n_iter_ == iters
    floor = reg_covar * X.var(axis=0, ddof=1)  # reg_covar's documented meaning
    prior_var = prior + (floor if covariance_type == "diag" else floor.mean())
    weights, means, variances = _reference_normal_gamma_cavi(
        X, resp0, iters, covariance_type == "spherical", alpha, m0, kappa0, nu0, prior_var)
    np.testing.assert_allclose(ours.weights_, weights, rtol=1e-8)
    np.testing.assert_allclose(ours.means_, means, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(ours.covariances_, variances, rtol=1e-8)


def test_max_iter_stops_the_fit_and_says_so():
    X, _ = _blobs(3, n=200)
    with pytest.warns(mb.ConvergenceWarning, match="did not converge in max_iter=2"):
        model = mb.VariationalGaussianMixture(4, max_iter=2, tol=0.0).fit(X)
    assert model.n_iter_ == 2 and not model.converged_ and len(model.elbo_trace_) == 2
    settled = mb.VariationalGaussianMixture(4, max_iter=500).fit(X)
    assert settled.converged_ and settled.n_iter_ < 500
    assert abs(settled.elbo_trace_[-1] - settled.elbo_trace_[-2]) <= settled.tol


def test_three_points_in_three_components_are_three_effective_components():
    """Each of three points keeps its own component with about one point's responsibility
    (0.98-1.01: the weights' prior pulls), so all three count, as labels_ and the CLI's
    listing say (the threshold was one whole point: 2 of 3)."""
    model = mb.VariationalGaussianMixture(3).fit(np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]]))
    assert np.bincount(model.labels_).tolist() == [1, 1, 1]
    assert model.n_effective_components_ == 3


def test_constant_points_fit_without_scikit_learns_kmeans_warning():
    """Ten equal points and three components: k-means' start finds one distinct cluster and
    scikit-learn warns in its own words; the fit says nothing of it and uses one component."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = mb.VariationalGaussianMixture(3).fit(np.ones((10, 2)))
    assert [str(w.message) for w in caught] == []
    assert model.n_effective_components_ == 1


# ---------------------------------------------------------------- merge moves
def test_merged_statistics_are_those_of_the_merged_responsibilities():
    """A merge's global step reads the current statistics with one component's added to
    another's: exactly the statistics of the responsibilities so merged."""
    X, _ = _blobs(0, n=60)
    family = GaussianFamily("full", X.mean(axis=0), 1.0, 3.0, np.cov(X.T))
    data = family.prepare(X)
    resp = np.random.default_rng(0).dirichlet(np.ones(4), size=60)
    merged_resp = resp.copy()
    merged_resp[:, 1] += merged_resp[:, 3]
    merged_resp[:, 3] = 0.0
    got = family.sufficient_statistics(data, resp).merged(1, 3)
    want = family.sufficient_statistics(data, merged_resp)
    for name in ("counts", "sums", "squares"):
        np.testing.assert_allclose(getattr(got, name), getattr(want, name), atol=1e-12)


def _split_blobs():
    """Three well-separated clusters of which the k-means start of 10 components leaves one
    split between two components that CAVI keeps (data seed 10 of the merge study)."""
    X, truth = mb.datasets.make_gaussian_mixture(150, 3, 3, random_state=10)
    return X, truth.labels


@pytest.mark.parametrize("covariance_type", ["full", "diag"])
def test_merge_moves_join_a_split_cluster_at_a_higher_elbo(covariance_type):
    X, truth = _split_blobs()
    plain = mb.VariationalGaussianMixture(10, covariance_type=covariance_type).fit(X)
    merged = mb.VariationalGaussianMixture(10, covariance_type=covariance_type,
                                           merge_moves=True).fit(X)
    assert plain.n_effective_components_ > 3
    assert merged.n_effective_components_ == 3 and mb.metrics.ari(truth, merged.labels_) > 0.97
    assert mb.metrics.ari(truth, merged.labels_) > mb.metrics.ari(truth, plain.labels_) + 0.05
    assert merged.elbo_ > plain.elbo_ + 5.0
    # the trace runs through the kept merges and never falls
    assert merged.n_iter_ == merged.elbo_trace_.size > plain.n_iter_
    assert np.all(np.diff(merged.elbo_trace_) >= -1e-8 * np.abs(merged.elbo_trace_[1:]))
    assert merged.elbo_trace_[-1] == merged.elbo_
    np.testing.assert_array_equal(merged.labels_, merged.predict(X))


def test_merge_moves_respect_max_iter_and_leave_a_degenerate_prior_alone():
    X, _ = _split_blobs()
    plain = mb.VariationalGaussianMixture(10).fit(X)
    capped = _quiet_fit(mb.VariationalGaussianMixture(10, merge_moves=True,
                                                      max_iter=plain.n_iter_ + 3), X)
    assert capped.n_iter_ <= plain.n_iter_ + 3
    constant = np.column_stack([X, np.full(len(X), 2.0)])
    for model in (mb.VariationalGaussianMixture(10, merge_moves=True, reg_covar=0.0),
                  mb.VariationalGaussianMixture(10, merge_moves=True)):
        data = X if model.reg_covar == 0 else constant
        with_merges = model.fit(data)
        assert with_merges._degenerate_prior()
        without = mb.VariationalGaussianMixture(10, reg_covar=model.reg_covar).fit(data)
        assert with_merges.elbo_ == without.elbo_
