r"""Gibbs updates of the HDP's two concentrations given the seating.

Given the seating (tables within groups, dishes of tables), the concentrations enter the model
only through the franchise's partition probabilities,

.. math::

    p(\text{seating} \mid \gamma_0, \alpha_0) \propto
        \gamma_0^{K}\frac{\Gamma(\gamma_0)}{\Gamma(\gamma_0 + m)}
        \prod_j \alpha_0^{T_j}\frac{\Gamma(\alpha_0)}{\Gamma(\alpha_0 + n_j)},

with :math:`K` dishes in use, :math:`m` occupied tables in all, :math:`T_j` of them in group
:math:`j` and :math:`n_j` customers there. Under Gamma priors (shape :math:`a`, rate :math:`b`)
each conditional is sampled exactly by the auxiliary variables of Escobar & West (1995), as in
Teh et al. (2006, appendix A), from the identity

.. math::

    \frac{\Gamma(c)}{\Gamma(c + n)} = \frac{1}{\Gamma(n)}\int_0^1 w^{c}(1-w)^{n-1}
        \Bigl(1 + \frac{n}{c}\Bigr)\,dw .

* :math:`\gamma_0`: draw :math:`\eta \sim \mathrm{Beta}(\gamma_0 + 1, m)`, then
  :math:`\gamma_0 \sim \pi\,\mathrm{Gamma}(a + K, b - \log\eta) +
  (1 - \pi)\,\mathrm{Gamma}(a + K - 1, b - \log\eta)` with
  :math:`\pi / (1 - \pi) = (a + K - 1) / (m\,(b - \log\eta))`.
* :math:`\alpha_0`: draw :math:`w_j \sim \mathrm{Beta}(\alpha_0 + 1, n_j)` and
  :math:`s_j \sim \mathrm{Bernoulli}(n_j / (n_j + \alpha_0))` for every group, then
  :math:`\alpha_0 \sim \mathrm{Gamma}(a + \sum_j T_j - \sum_j s_j,\ b - \sum_j \log w_j)`
  (the shape stays positive: every group has a table).

Each is a two-block Gibbs step on (auxiliary, concentration), so it keeps the concentration's
exact conditional; between sweeps the sampler's state is just the seating (every stick is redrawn
within a sweep), so the update may run after any sweep.
"""

import numpy as np


def check_gamma_prior(prior, name):
    """``None`` or a (shape, rate) pair of positive finite numbers, as floats."""
    if prior is None:
        return None
    try:
        shape, rate = (float(value) for value in prior)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be None or a (shape, rate) pair of numbers; "
                         f"got {prior!r}.") from None
    if not (np.isfinite(shape) and np.isfinite(rate) and shape > 0 and rate > 0):
        raise ValueError(f"{name} must have a positive finite shape and rate; got {prior!r}.")
    return shape, rate


def resample_top_concentration(gamma0, n_dishes, n_tables, prior, rng):
    r"""One exact Gibbs update of :math:`\gamma_0` given :math:`K` dishes on :math:`m` tables
    under a Gamma(shape, rate) ``prior`` (module docstring)."""
    shape, rate = prior
    eta = rng.beta(gamma0 + 1.0, n_tables)
    rate_post = rate - np.log(eta)
    odds = (shape + n_dishes - 1.0) / (n_tables * rate_post)
    extra = rng.random() < odds / (1.0 + odds)
    return float(rng.gamma(shape + n_dishes - 1.0 + extra, 1.0 / rate_post))


def resample_group_concentration(alpha0, tables_per_group, group_sizes, prior, rng):
    r"""One exact Gibbs update of :math:`\alpha_0` given every group's tables :math:`T_j` and
    customers :math:`n_j` under a Gamma(shape, rate) ``prior`` (module docstring)."""
    shape, rate = prior
    sizes = np.asarray(group_sizes, dtype=float)
    w = rng.beta(alpha0 + 1.0, sizes)
    s = rng.random(sizes.size) < sizes / (sizes + alpha0)
    shape_post = shape + float(np.sum(tables_per_group)) - float(s.sum())
    return float(rng.gamma(shape_post, 1.0 / (rate - np.log(w).sum())))


def resample_concentrations(gamma0, alpha0, counts, table_dish, top_prior, group_prior, rng):
    """Both updates after a sweep, each only where its prior is given, from the seating:
    ``counts[j, t]`` customers at table t of group j and ``table_dish[j, t]`` its dish.
    Returns the new ``(gamma0, alpha0)``; with neither prior, costs nothing."""
    if top_prior is None and group_prior is None:
        return gamma0, alpha0
    occupied = counts > 0
    if top_prior is not None:
        n_dishes = np.unique(table_dish[occupied]).size
        gamma0 = resample_top_concentration(gamma0, n_dishes, int(occupied.sum()), top_prior, rng)
    if group_prior is not None:
        alpha0 = resample_group_concentration(alpha0, occupied.sum(axis=1), counts.sum(axis=1),
                                              group_prior, rng)
    return gamma0, alpha0
