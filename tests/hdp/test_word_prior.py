"""The word prior's slice step (mixbayes.hdp._word_prior): its conditional written two ways, its
draws against that conditional on a grid, the whole sampler with it against enumeration, and
the estimator's option."""

import os
import sys
import warnings
from collections import Counter
from dataclasses import replace

import numpy as np
import pytest
from scipy.special import logsumexp

import mixbayes as mb
from mixbayes.hdp import _sampler
from mixbayes.hdp._word_prior import log_conditional, resample_word_prior, word_count_histograms

sys.path.insert(0, os.path.dirname(__file__))
from exact import canonical, exact_partition_posterior, log_marginal_sequential  # noqa: E402
from _support.helpers import chi_square_p  # noqa: E402

P_FLOOR = 1e-3  # as test_hdp.py: each test fails by chance with probability 1e-3 at most


def _fixed_state():
    """12 tokens of W = 5 words in 3 dishes (one of a single token)."""
    dishes = np.array([0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2])
    words = np.array([0, 0, 0, 1, 0, 2, 3, 2, 2, 3, 4, 1])
    return dishes, words, 5


def test_conditional_matches_the_chain_rule():
    """log p(a | seating) differs between two values of a by the prior's log ratio plus that of
    the dishes' marginal likelihoods computed token by token (tests/hdp/exact.py)."""
    dishes, words, W = _fixed_state()
    histograms = word_count_histograms(dishes, words, W)
    prior = (2.0, 3.0)
    data = _sampler.GroupedData(_sampler.CATEGORICAL, np.array([0, 12]), words,
                                np.zeros((0, 0)), W, 0.0)
    for a, b in [(0.1, 0.7), (0.02, 3.0), (1.3, 1.31)]:
        by_chain_rule = (log_marginal_sequential(replace(data, word_prior=a), dishes)
                         - log_marginal_sequential(replace(data, word_prior=b), dishes)
                         + (prior[0] - 1) * np.log(a / b) - prior[1] * (a - b))
        difference = (log_conditional(a, histograms, W, prior)
                      - log_conditional(b, histograms, W, prior))
        assert difference == pytest.approx(by_chain_rule, rel=1e-10, abs=1e-10)
    grid = np.array([0.1, 0.5, 2.0])
    np.testing.assert_allclose(log_conditional(grid, histograms, W, prior),
                               [log_conditional(a, histograms, W, prior) for a in grid])


@pytest.mark.parametrize("prior", [(2.0, 3.0), (0.5, 0.1)], ids=["gamma2-3", "gamma0.5-0.1"])
def test_slice_step_draws_follow_the_conditional(prior):
    """On a fixed seating, the slice step run as a chain on a alone: every 3rd of 6,000 draws
    against the conditional normalised on a fine log grid, in 20 cells of equal probability
    (chi-square). Sampling the conditional of a seating with one token moved (words[3] = 0),
    or with half the prior's rate, the p-value measured below 1e-40 under both priors."""
    dishes, words, W = _fixed_state()
    histograms = word_count_histograms(dishes, words, W)
    x = np.linspace(np.log(1e-5), np.log(200.0), 40_001)
    log_density = log_conditional(np.exp(x), histograms, W, prior) + x  # on log a
    cdf = np.cumsum(np.exp(log_density - logsumexp(log_density)))
    edges = np.exp(np.interp(np.arange(1, 20) / 20, cdf, x))  # 20 equiprobable cells
    rng = np.random.default_rng(5)
    a, draws = 0.3, []
    for step in range(6000):
        a = resample_word_prior(a, histograms, W, prior, rng)
        if step % 3 == 0:
            draws.append(a)
    cells = Counter(np.searchsorted(edges, draws).tolist())
    assert chi_square_p({c: 1 / 20 for c in range(20)}, cells, len(draws)) > P_FLOOR


def _beta_marginal_posterior(data, gamma0, alpha0, prior):
    """The exact posterior over partitions with a ~ Gamma(prior) integrated out on a log grid:
    every partition's prior mass (the enumeration at one a, less its marginal likelihood) times
    its marginal likelihood at every a."""
    at_one = exact_partition_posterior(replace(data, word_prior=1.0), gamma0, alpha0)
    keys = list(at_one)
    labels = [np.array(key) for key in keys]
    log_prior_mass = np.array([np.log(at_one[key]) - log_marginal_sequential(
        replace(data, word_prior=1.0), lab) for key, lab in zip(keys, labels)])
    x = np.linspace(np.log(1e-4), np.log(100.0), 2001)
    shape, rate = prior
    log_a_prior = shape * x - rate * np.exp(x)  # Gamma density on log a (Jacobian included)
    table = np.array([[log_marginal_sequential(replace(data, word_prior=a), lab)
                       for a in np.exp(x)] for lab in labels])  # partitions x grid
    joint = log_prior_mass[:, None] + table + log_a_prior[None, :]
    marginal = logsumexp(joint, axis=1)
    probabilities = np.exp(marginal - logsumexp(marginal))
    return dict(zip(keys, probabilities.tolist()))


@pytest.mark.slow  # 5,100 sweeps, ~1 ms of Python each
def test_partition_frequencies_match_enumeration_with_the_word_prior_resampled():
    """The default moves and the word prior's slice step after every sweep (as the estimator
    runs them) against the exact posterior over the 52 partitions with a ~ Gamma(2, 2)
    integrated out: thinned draws, chi-square. Run with the step skipped (a fixed at its
    start 0.5, whose posterior over partitions is not the marginal's), the p-value measured
    6e-6 (3e-13 with 2,000 draws; with the step, 0.22)."""
    data = replace(_tiny_categorical(), word_prior=0.5)
    gamma0, alpha0, prior = 1.0, 2.0, (2.0, 2.0)
    exact = _beta_marginal_posterior(data, gamma0, alpha0, prior)
    assert len(exact) == 52 and abs(sum(exact.values()) - 1) < 1e-9
    rng = np.random.default_rng(11)
    state = _sampler.initial_state(data, gamma0, alpha0, rng, "crf", 2)
    frequencies, n, thin = Counter(), 1000, 5
    for sweep in range(100 + n * thin):
        _sampler.sweep(data, state, gamma0, alpha0, rng, collapsed=True)
        dishes = state.dish_of(data)
        data.word_prior = resample_word_prior(
            data.word_prior, word_count_histograms(dishes, data.rows, data.n_words),
            data.n_words, prior, rng)
        if sweep >= 100 and (sweep - 100) % thin == 0:
            frequencies[canonical(dishes)] += 1
    assert chi_square_p(exact, frequencies, n) > P_FLOOR


def _tiny_categorical():
    """As test_hdp.py's: 5 tokens of W = 3 words in 2 groups."""
    return _sampler.GroupedData(_sampler.CATEGORICAL, np.array([0, 3, 5]),
                                np.array([0, 0, 1, 1, 2]), np.zeros((0, 0)), 3, 0.5)


def _short_texts():
    corpus, _ = mb.datasets.make_dmm_corpus(300, 500, 20, mean_length=8.0,
                                            word_concentration=0.05, random_state=0)
    return corpus


def test_resampled_word_prior_finds_the_simulated_one():
    """Short texts simulated with word concentration 0.05: started at 0.03 (or 0.3), the
    resampled word prior settles near 0.05 (0.057 and 0.054 at sweep 60, seed 0), the
    callback sees it every sweep, and ``word_prior_`` is the last sweep's."""
    corpus = _short_texts()
    for start in (None, 0.3):
        seen = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mb.ConvergenceWarning)
            model = mb.HDPMixture(n_iter=60, word_prior=start, word_prior_prior=(1.0, 1.0),
                                  random_state=0).fit(
                corpus.counts, callback=lambda c, s, info: seen.append(info["word_prior"]))
        assert len(seen) == 60 and np.unique(seen).size > 30
        assert model.word_prior_ == seen[-1]
        assert 0.035 < model.word_prior_ < 0.08


def test_fixed_word_prior_is_kept_and_saved(tmp_path):
    """Without a prior the word prior is the setting (left to None on these short texts, the
    short-group default 0.05); with one, ``word_prior_`` survives save/load and top_words
    reads it."""
    corpus = _short_texts()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mb.ConvergenceWarning)
        fixed = mb.HDPMixture(n_iter=5, random_state=0).fit(corpus.counts)
        model = mb.HDPMixture(n_iter=5, word_prior_prior=(1.0, 1.0),
                              random_state=0).fit(corpus.counts)
    assert fixed.short_groups_ and fixed.word_prior_ == 0.05
    assert model.word_prior_ != 0.05
    loaded = mb.load(mb.save(model, tmp_path / "hdp"))
    assert loaded.word_prior_ == model.word_prior_
    vocabulary = np.array([f"w{i}" for i in range(corpus.counts.shape[1])])
    assert loaded.top_words(vocabulary) == model.top_words(vocabulary)


@pytest.mark.parametrize("prior", [(0.0, 1.0), (1.0,), "gamma"])
def test_bad_word_prior_prior(prior):
    with pytest.raises(ValueError, match="word_prior_prior"):
        mb.HDPMixture(word_prior_prior=prior).fit(np.ones((3, 4), dtype=int))


@pytest.mark.slow  # 4,000 sweeps: 15-40 s on a shared machine
def test_geweke_joint_distribution_with_the_word_prior_resampled():
    """Successive-conditional simulation (a default sweep and the word prior's step given y,
    then y given the seating with fresh atoms from Dir(a)) against forward draws (a from its
    Gamma(2, 2) prior, the franchise, atoms, data): the word prior, its log, the number of
    dishes and the share of word 0 agree (Geweke z-scores; measured -0.5, -0.6, -1.5, -1.0).
    With the step run under Gamma(2, 3) the word prior's z measured 13.1 (its log's 11.9),
    under Gamma(3, 2) -19.0 (-18.1), against the ceiling 3.3."""
    from mixbayes.datasets._simulate import _franchise

    J, n, W, gamma0, alpha0, prior = 2, 3, 3, 1.5, 1.0, (2.0, 2.0)
    rng = np.random.default_rng(3)
    group_ptr = np.array([0, n, 2 * n])

    def draw_data(dishes, a):
        atoms = rng.dirichlet(np.full(W, a), size=dishes.max() + 1)
        atoms = np.where(np.isfinite(atoms) & (atoms.sum(axis=1, keepdims=True) > 0), atoms,
                         1.0 / W)  # a Dirichlet of tiny a may underflow to all zeros
        words = np.array([rng.choice(W, p=atoms[k] / atoms[k].sum()) for k in dishes])
        return _sampler.GroupedData(_sampler.CATEGORICAL, group_ptr, words, np.zeros((0, 0)),
                                    W, a)

    def row(data, dishes):
        a = data.word_prior
        return a, np.log(a), np.unique(dishes).size, (data.rows == 0).mean()

    forward = []
    for _ in range(1000):
        dishes, _, _ = _franchise(J, n, gamma0, alpha0, rng)
        forward.append(row(draw_data(dishes, rng.gamma(prior[0], 1 / prior[1])), dishes))
    dishes, _, _ = _franchise(J, n, gamma0, alpha0, rng)
    data = draw_data(dishes, rng.gamma(prior[0], 1 / prior[1]))
    state = _sampler.initial_state(data, gamma0, alpha0, rng, "crf", 2)
    successive = []
    for _ in range(4000):
        _sampler.sweep(data, state, gamma0, alpha0, rng, collapsed=True)
        labels = state.dish_of(data)
        a = resample_word_prior(data.word_prior,
                                word_count_histograms(labels, data.rows, W), W, prior, rng)
        data = draw_data(np.unique(labels, return_inverse=True)[1], a)
        successive.append(row(data, labels))
    from _support.helpers import geweke_z_scores

    assert np.all(np.abs(geweke_z_scores(forward, successive)) < 3.3)
