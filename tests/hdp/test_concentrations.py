"""Resampled concentrations: each auxiliary-variable update keeps its exact conditional, and a
fit with Gamma priors finds the concentrations that simulated the data."""

import numpy as np
import pytest
from scipy import stats
from scipy.special import gammaln

import mixbayes as mb
from _support.helpers import geweke_z_scores
from mixbayes.datasets._simulate import _franchise
from mixbayes.hdp import _sampler
from mixbayes.hdp._concentrations import (
    resample_concentrations,
    resample_group_concentration,
    resample_top_concentration,
)

FALSE_ALARM = 1e-3  # per KS test
Z_CEILING = 3.3  # per z-test (two-sided 1e-3)


def _exact_sampler(log_density, upper):
    """Inverse-CDF sampler and CDF of a density on (0, upper) known up to a constant."""
    grid = np.linspace(upper * 1e-7, upper, 200_001)
    logs = log_density(grid)
    weights = np.exp(logs - logs.max())
    cdf = np.concatenate([[0.0], np.cumsum((weights[1:] + weights[:-1]) / 2)])
    cdf /= cdf[-1]
    return (lambda u: np.interp(u, cdf, grid)), (lambda x: np.interp(x, grid, cdf))


def _top_log_density(shape, rate, K, m):
    return lambda g: ((shape - 1) * np.log(g) - rate * g + K * np.log(g)
                      + gammaln(g) - gammaln(g + m))


def _group_log_density(shape, rate, tables, sizes):
    def log_density(a):
        a = np.asarray(a)[:, None]
        return ((shape - 1) * np.log(a[:, 0]) - rate * a[:, 0]
                + (tables * np.log(a) + gammaln(a) - gammaln(a + sizes)).sum(axis=1))
    return log_density


def _one_update_from_exact_draws(draw_exact, update, n=4000, seed=0):
    """Apply the update once to each of n independent exact draws: if it keeps the conditional,
    the results are again independent exact draws."""
    rng = np.random.default_rng(seed)
    starts = draw_exact(rng.random(n))
    return np.array([update(start, rng) for start in starts])


def test_top_concentration_update_keeps_its_exact_conditional():
    prior, K, m = (2.0, 0.5), 5, 40
    draw, cdf = _exact_sampler(_top_log_density(*prior, K, m), upper=40.0)
    after = _one_update_from_exact_draws(
        draw, lambda g, rng: resample_top_concentration(g, K, m, prior, rng))
    assert stats.kstest(after, cdf).pvalue > FALSE_ALARM
    # the check has power: the update for other counts (m = 60) is told apart
    wrong = _one_update_from_exact_draws(
        draw, lambda g, rng: resample_top_concentration(g, K, 60, prior, rng))
    assert stats.kstest(wrong, cdf).pvalue < 1e-6


def test_group_concentration_update_keeps_its_exact_conditional():
    prior = (1.0, 1.0)
    sizes = np.array([1, 3, 10, 40, 7, 2])
    tables = np.array([1, 2, 3, 6, 2, 1])
    draw, cdf = _exact_sampler(_group_log_density(*prior, tables, sizes), upper=30.0)
    after = _one_update_from_exact_draws(
        draw, lambda a, rng: resample_group_concentration(a, tables, sizes, prior, rng))
    assert stats.kstest(after, cdf).pvalue > FALSE_ALARM
    wrong = _one_update_from_exact_draws(
        draw, lambda a, rng: resample_group_concentration(a, tables + 1, sizes, prior, rng))
    assert stats.kstest(wrong, cdf).pvalue < 1e-6


def test_top_concentration_update_keeps_the_prior_for_one_dish_at_one_table():
    """With K = m = 1 the seating's factor gamma Gamma(gamma) / Gamma(gamma + 1) is 1, so the
    exact conditional is the Gamma(1, 1) prior itself, an exponential known in closed form (no
    grid). Here the mixture weight pi of the two Gamma components is one half on average, so a
    wrong odds, e.g. (a + K) / (m (b - log eta)) for (a + K - 1) / (m (b - log eta)), is told
    apart at p ~ 1e-20, where the grid test above (K = 5, m = 40) cannot see it."""
    rng = np.random.default_rng(0)
    starts = rng.exponential(size=4000)
    after = np.array([resample_top_concentration(g, 1, 1, (1.0, 1.0), rng) for g in starts])
    assert stats.kstest(after, stats.expon.cdf).pvalue > FALSE_ALARM


def test_resample_concentrations_reads_dishes_tables_and_sizes_of_occupied_tables_only():
    """The seating summary handed to the two updates, checked against the updates called by
    hand with the counts written out (same seed, so the draws are equal to the last bit): the
    empty tables (count 0, dish -1 as the sampler leaves them) are neither dishes nor tables."""
    counts = np.array([[3, 0, 2, 0], [1, 4, 0, 0], [0, 5, 0, 0]])
    table_dish = np.array([[0, -1, 2, -1], [2, 0, -1, -1], [-1, 3, -1, -1]])
    top, group = (1.5, 0.5), (2.0, 1.0)
    got = resample_concentrations(1.2, 0.8, counts, table_dish, top, group,
                                  np.random.default_rng(7))
    rng = np.random.default_rng(7)
    gamma0 = resample_top_concentration(1.2, 3, 5, top, rng)  # dishes 0, 2, 3 on 5 tables
    alpha0 = resample_group_concentration(0.8, np.array([2, 2, 1]), np.array([5, 5, 5]), group,
                                          rng)
    assert got == (gamma0, alpha0)


@pytest.mark.slow  # 1,000 forward draws and 6,000 sweeps
def test_geweke_with_resampled_concentrations():
    """Successive-conditional simulation (a sweep, both concentration updates, then fresh data
    given the seating) against forward draws (concentrations from their priors, a franchise
    seating, data): the concentrations, dishes, tables and a data statistic agree in mean."""
    J, n, top_prior, group_prior = 2, 3, (2.0, 2.0), (3.0, 2.0)
    rng = np.random.default_rng(5)
    group_ptr = np.array([0, n, 2 * n])

    def draw_data(dishes):
        atoms = rng.dirichlet(np.full(3, 0.7), size=dishes.max() + 1)
        words = np.array([rng.choice(3, p=atoms[k]) for k in dishes])
        return _sampler.GroupedData(_sampler.CATEGORICAL, group_ptr, words, np.zeros((0, 0)),
                                    3, 0.7)

    # 1000 forward draws and 6000 sweeps: with the sampler run at gamma0 * 1.5, or the top
    # prior's rate 1.5 times too large in the update, the largest |z| measured 10.3 and 13.6
    # against the ceiling 3.3; the budget of 3000 and 20000 before gave 17 and 23
    forward = []
    for _ in range(1000):
        gamma0 = rng.gamma(top_prior[0], 1 / top_prior[1])
        alpha0 = rng.gamma(group_prior[0], 1 / group_prior[1])
        dishes, tables, _ = _franchise(J, n, gamma0, alpha0, rng)
        data = draw_data(dishes)
        n_tables = len(set(zip(np.repeat([0, 1], n), tables)))
        forward.append((gamma0, alpha0, np.unique(dishes).size, n_tables, (data.rows == 0).mean()))
    gamma0, alpha0 = 1.0, 1.5
    dishes, _, _ = _franchise(J, n, gamma0, alpha0, rng)
    data = draw_data(dishes)
    state = _sampler.initial_state(data, gamma0, alpha0, rng, "crf", 2)
    successive = []
    for _ in range(6000):
        counts = _sampler.sweep(data, state, gamma0, alpha0, rng)
        gamma0, alpha0 = resample_concentrations(gamma0, alpha0, counts, state.table_dish,
                                                 top_prior, group_prior, rng)
        labels = state.dish_of(data)
        data = draw_data(np.unique(labels, return_inverse=True)[1])
        successive.append((gamma0, alpha0, np.unique(labels).size, int((counts > 0).sum()),
                           (data.rows == 0).mean()))
    assert np.all(np.abs(geweke_z_scores(forward, successive)) < Z_CEILING)


def test_fit_recovers_the_concentrations_that_simulated_the_data():
    corpus, _ = mb.datasets.make_hdp_data(60, 50, n_words=30, top_concentration=3.0,
                                              group_concentration=1.0, random_state=1)
    model = mb.HDPMixture(top_concentration=1.0, group_concentration=5.0,
                          top_concentration_prior=(1.0, 0.1),
                          group_concentration_prior=(1.0, 1.0), n_iter=200,
                          random_state=0).fit(corpus.counts)
    kept = model.trace_[0, 100:]
    # started at 1 and 5, far from the truth (3 and 1); posterior sds are about 1 and 0.15
    assert 1.5 < model.top_concentration_ < 6.0
    assert 0.6 < model.group_concentration_ < 1.6
    assert model.group_concentration_ == pytest.approx(kept["group_concentration"].mean())
    assert kept["group_concentration"].std() > 0
    assert np.isfinite(model.rhat_["group_concentration"])


def test_fixed_concentrations_are_traced_as_constants():
    corpus, _ = mb.datasets.make_hdp_data(8, 20, n_words=10, random_state=0)
    model = mb.HDPMixture(top_concentration=2.5, group_concentration=0.7,
                          top_concentration_prior=None, group_concentration_prior=None, n_iter=6,
                          random_state=0).fit(corpus.counts)
    assert np.all(model.trace_["top_concentration"] == 2.5)
    assert np.all(model.trace_["group_concentration"] == 0.7)
    assert (model.top_concentration_, model.group_concentration_) == (2.5, 0.7)
    assert np.isnan(model.rhat_["top_concentration"])


@pytest.mark.parametrize("prior, message", [((-1.0, 1.0), "positive finite shape"),
                                            ((1.0, np.inf), "positive finite shape"),
                                            ((1.0,), "(shape, rate) pair"),
                                            (("a", 1.0), "(shape, rate) pair"),
                                            (2.0, "(shape, rate) pair")])
def test_bad_priors_are_named(prior, message):
    corpus, _ = mb.datasets.make_hdp_data(4, 10, n_words=5, random_state=0)
    with pytest.raises(ValueError, match="group_concentration_prior") as error:
        mb.HDPMixture(group_concentration_prior=prior, n_iter=2).fit(corpus.counts)
    assert message in str(error.value)
