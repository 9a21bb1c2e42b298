"""Simulation-based calibration of the partition summaries (issue 26): data drawn from the
model's own prior, the true partition inside its credible ball as often as the balls say.

Budget: 200 replicates of a tiny Dirichlet-multinomial mixture (6 documents of about 4
tokens over 5 terms, K = 3; weights ~ Dir(1), words ~ Dir(0.1): the estimator's priors),
each fitted by collapsed Gibbs (one chain of 200 sweeps, 100 kept draws), summarised by the
least-expected-VI partition and its 95% credible ball: about 7 s, marked slow. The share of
replicates whose truth lies inside its ball must agree with the balls' mean posterior mass
(at least 0.95 each) within the binomial 99% interval (3 standard errors). Power, measured
when the test was written: the sampler's conditionals with the word prior ten times too
small put the coverage 0.043 from the mass (3 standard errors: 0.027), with the weight prior
ten times too small 0.132; a ball from the 50% quantile has a mass of 0.48. A sampler whose
posterior is too wide (the word prior ten times too large) passes: its balls over-cover, and
above a mass of 0.975 over-coverage cannot reach 3 standard errors.
"""

import warnings

import numpy as np
import pytest

import mixbayes as mb

REPLICATES = 200


@pytest.mark.slow
def test_credible_balls_cover_the_truth_as_often_as_they_claim():
    rng = np.random.default_rng(0)
    inside, masses = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tiny chains' convergence warnings
        for replicate in range(REPLICATES):
            corpus, truth = mb.datasets.make_dmm_corpus(
                6, 5, 3, mean_length=4, weight_concentration=1.0, word_concentration=0.1,
                random_state=rng)
            model = mb.DirichletMultinomialMixture(
                3, inference="gibbs", n_init=1, n_sweeps=200, max_samples=100,
                random_state=replicate).fit(corpus.counts)
            summary = model.partition_summary()
            distance = mb.partition.loss_to_draws(summary.estimate.labels,
                                                  truth.labels[None, :])[0]
            inside.append(distance <= summary.ball.radius + 1e-12)
            masses.append(summary.ball.mass)
    coverage, mass = np.mean(inside), np.mean(masses)
    assert np.min(masses) >= 0.95
    error = np.sqrt(mass * (1 - mass) / REPLICATES)
    assert abs(coverage - mass) <= 3 * error + 1.0 / REPLICATES, (coverage, mass)
