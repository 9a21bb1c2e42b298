r"""Slice-sampling update of the categorical kernel's word prior given the seating.

The atoms are :math:`\phi_k \sim \mathrm{Dir}(a, \dots, a)` over W words (``word_prior``, the
symmetric Dirichlet concentration :math:`\alpha_w`, written :math:`a` here). Given the seating
(hence every token's dish), :math:`a` enters the model only through the dishes' marginal
likelihoods with the atoms integrated out, so under a Gamma(shape :math:`s`, rate :math:`r`)
prior its exact conditional is

.. math::

    p(a \mid \text{seating}, y) \propto a^{s - 1} e^{-r a} \prod_k
        \frac{\Gamma(W a)}{\Gamma(n_k + W a)} \prod_w \frac{\Gamma(n_{kw} + a)}{\Gamma(a)},

with :math:`n_{kw}` the tokens of word w eaten at dish k and :math:`n_k = \sum_w n_{kw}`
(the dishes in use; a zero count contributes a factor 1). It has no closed form, so
:math:`x = \log a` is updated by one univariate slice-sampling step (Neal 2003, stepping out and shrinkage) on the density
:math:`p(e^x \mid \cdot)\,e^x` (the Jacobian), which leaves that conditional exactly invariant.
The density is evaluated from histograms: :math:`h_c` pairs (k, w) with :math:`n_{kw} = c` and
:math:`g_n` dishes with :math:`n_k = n`, so a step costs a few dozen log-gamma calls per distinct
count, not per token.

Like the concentrations' updates (:mod:`mixbayes.hdp._concentrations`), it runs between
sweeps, where the sampler's state is just the seating: every atom is redrawn within the next
sweep from its conditional given the new :math:`a`.
"""

import numpy as np
from scipy.special import gammaln

from ._concentrations import check_gamma_prior

__all__ = ["check_gamma_prior", "word_count_histograms", "log_conditional", "resample_word_prior"]


def word_count_histograms(dish_of, words, n_words):
    """``(pair_values, pair_counts, size_values, size_counts)``: the distinct non-zero counts
    :math:`n_{kw}` of the (dish, word) pairs and how many pairs have each, and the same for
    the dishes' sizes :math:`n_k`, from every token's dish and word."""
    keys = np.asarray(dish_of, dtype=np.int64) * n_words + np.asarray(words, dtype=np.int64)
    _, per_pair = np.unique(keys, return_counts=True)
    pair_values, pair_counts = np.unique(per_pair, return_counts=True)
    _, per_dish = np.unique(dish_of, return_counts=True)
    size_values, size_counts = np.unique(per_dish, return_counts=True)
    return pair_values, pair_counts, size_values, size_counts


def log_conditional(a, histograms, n_words, prior):
    r""":math:`\log p(a \mid \text{seating}, y)` up to a constant (module docstring), for a
    scalar or an array of :math:`a > 0`."""
    pair_values, pair_counts, size_values, size_counts = histograms
    shape, rate = prior
    a = np.asarray(a, dtype=float)
    flat = a.reshape(-1, 1)
    words = (pair_counts * (gammaln(pair_values + flat) - gammaln(flat))).sum(axis=1)
    sizes = (size_counts * (gammaln(n_words * flat) - gammaln(size_values + n_words * flat))
             ).sum(axis=1)
    value = (shape - 1.0) * np.log(flat[:, 0]) - rate * flat[:, 0] + words + sizes
    return value.reshape(a.shape) if a.ndim else float(value[0])


def resample_word_prior(a, histograms, n_words, prior, rng, width=1.0, max_steps=50):
    r"""One exact slice-sampling update of the word prior :math:`a` (module docstring): a
    slice step on :math:`x = \log a`, stepping out by ``width`` (at most ``max_steps`` each
    way, Neal's limited stepping out, still exact) and shrinking. Returns the new :math:`a`."""
    def log_density(x):
        return log_conditional(np.exp(x), histograms, n_words, prior) + x

    x0 = float(np.log(a))
    level = log_density(x0) + np.log(rng.random())
    left = x0 - width * rng.random()
    right = left + width
    steps_left = int(rng.random() * max_steps)
    steps_right = max_steps - 1 - steps_left
    while steps_left > 0 and log_density(left) > level:
        left -= width
        steps_left -= 1
    while steps_right > 0 and log_density(right) > level:
        right += width
        steps_right -= 1
    while True:
        x = left + (right - left) * rng.random()
        if log_density(x) > level:
            return float(np.exp(x))
        if x < x0:
            left = x
        else:
            right = x
