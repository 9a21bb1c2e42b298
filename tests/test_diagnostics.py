"""Split R-hat and effective sample size against cases with known answers."""

import numpy as np
import pytest

from mixbayes.diagnostics import effective_sample_size, split_rhat


def test_independent_draws():
    draws = np.random.default_rng(0).standard_normal((4, 2000))
    assert abs(split_rhat(draws) - 1) < 0.01
    assert 0.8 * draws.size < effective_sample_size(draws) < 1.2 * draws.size


def test_autocorrelated_chain_has_the_ar1_effective_size():
    """AR(1) with coefficient phi: ESS = N (1 - phi) / (1 + phi)."""
    rng = np.random.default_rng(1)
    phi, n = 0.8, 40000
    x = np.empty(n)
    x[0] = 0.0
    for t in range(1, n):
        x[t] = phi * x[t - 1] + rng.standard_normal()
    expected = n * (1 - phi) / (1 + phi)
    assert 0.8 * expected < effective_sample_size(x) < 1.25 * expected


def test_chains_that_disagree():
    rng = np.random.default_rng(2)
    draws = rng.standard_normal((2, 500)) + np.array([[0.0], [3.0]])
    assert split_rhat(draws) > 1.5
    trending = np.linspace(0, 10, 400)[None, :] + rng.standard_normal((1, 400))
    assert split_rhat(trending) > 1.5  # one chain whose halves differ


def test_bad_draws():
    with pytest.raises(ValueError, match="at least 4"):
        split_rhat(np.ones((2, 3)))
    with pytest.raises(ValueError, match="NaN"):
        effective_sample_size(np.array([1.0, np.nan, 2.0, 3.0, 4.0]))


def test_geweke_z_is_standard_normal_on_settled_chains_and_large_on_trends():
    from scipy.signal import lfilter

    from mixbayes.diagnostics import geweke_z

    rng = np.random.default_rng(0)
    settled = []
    for _ in range(300):  # stationary AR(1), rho = 0.8: autocorrelated like a sampler's trace
        noise = rng.standard_normal(400)
        noise[0] /= 0.6
        settled.append(geweke_z(lfilter([1.0], [1.0, -0.8], noise)))
    settled = np.asarray(settled)
    assert abs(settled.mean()) < 0.2 and 0.75 < settled.std() < 1.35
    assert np.mean(np.abs(settled) > 3) < 0.03  # the false-alarm rate of the HDP warning
    # a cluster count creeping up by 25 over 200 sweeps, with sampler-like noise
    trending = [geweke_z(np.linspace(480, 505, 200) + rng.normal(0, 3, 200)) for _ in range(50)]
    assert np.all(np.abs(trending) > 3)
    assert geweke_z(np.ones(100)) == 0.0
    assert geweke_z(np.r_[np.zeros(50), np.ones(50)]) == -np.inf
    with pytest.raises(ValueError, match="enough values"):
        geweke_z(np.ones(10))
