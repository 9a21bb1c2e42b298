"""The conjugate atoms of the samplers' kernels (the HDP's, the tree's): observations sorted by
group with the kernel's prior, draws of every component's atom from its conjugate posterior,
and the log-likelihood table of the observations under given atoms.

Two kernels: categorical tokens (a component's atom is its log word probabilities, a
Dirichlet(``word_prior``) posterior) and Gaussian points of known precision ``tau_y`` (its
mean, a Normal(``prior_mean``, ``1/tau_phi``) posterior).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

CATEGORICAL, GAUSSIAN = 0, 1


@dataclass
class GroupedData:
    """Observations sorted by group, with the kernel's prior.

    ``rows`` indexes the log-likelihood lookup: the word of each token, or the point itself.
    """

    kernel: int
    group_ptr: np.ndarray  # (J + 1,)
    rows: np.ndarray  # (N,)
    points: np.ndarray  # (N, d) for the Gaussian kernel, (0, 0) otherwise
    n_words: int = 0  # W for the categorical kernel
    word_prior: float = 0.0  # alpha_w
    prior_mean: np.ndarray = None  # (d,)
    prior_precision: float = 0.0  # tau_phi
    observation_precision: float = 0.0  # tau_y

    @property
    def n_groups(self):
        return self.group_ptr.shape[0] - 1

    @property
    def n_observations(self):
        return self.rows.shape[0]

    @cached_property
    def group_of(self):
        return np.repeat(np.arange(self.n_groups), np.diff(self.group_ptr))

    def predictive_settings(self):
        if self.kernel == CATEGORICAL:
            return np.array([self.word_prior, float(self.n_words)])
        return np.array([self.prior_precision, self.observation_precision])

    def n_stats(self):
        return self.n_words + 1 if self.kernel == CATEGORICAL else self.points.shape[1] + 1


def draw_atoms(data, dish_of, K, rng):
    """Atoms of dishes ``0..K-1`` from their conjugate posteriors given the observations'
    dishes (prior draws for dishes nobody eats): log word probabilities (K, W) or means (K, d)."""
    if data.kernel == CATEGORICAL:
        W = data.n_words
        counts = np.bincount(dish_of * W + data.rows, minlength=K * W).reshape(K, W)
        shape = counts + data.word_prior
        # log-Dirichlet via Gamma(a) = Gamma(a + 1) U^(1/a): no underflow for tiny a
        log_gamma = (np.log(rng.standard_gamma(shape + 1.0))
                     + np.log(rng.random(shape.shape)) / shape)
        # normalised in log space by the row maximum (one exp per entry, not logaddexp's
        # log and exp per entry)
        top = log_gamma.max(axis=1, keepdims=True)
        log_gamma -= top
        return log_gamma - np.log(np.exp(log_gamma).sum(axis=1, keepdims=True))
    X = data.points
    n = np.bincount(dish_of, minlength=K).astype(float)
    sums = np.zeros((K, X.shape[1]))
    np.add.at(sums, dish_of, X)
    precision = data.prior_precision + n * data.observation_precision
    mean = data.prior_precision * data.prior_mean + data.observation_precision * sums
    mean /= precision[:, None]
    return mean + rng.standard_normal(mean.shape) / np.sqrt(precision)[:, None]


def lookup(data, atoms):
    r"""``loglik[row, k]`` :math:`= \log f_k`: rows are words (categorical) or points."""
    if data.kernel == CATEGORICAL:
        return np.ascontiguousarray(atoms.T)
    X, tau = data.points, data.observation_precision
    d = X.shape[1]
    squared = ((X * X).sum(axis=1)[:, None] - 2.0 * X @ atoms.T + (atoms * atoms).sum(axis=1))
    return np.ascontiguousarray(-0.5 * tau * np.maximum(squared, 0.0)
                                + 0.5 * d * np.log(tau / (2.0 * np.pi)))
