r"""Random draws in log space and Chinese-restaurant table counts, for the samplers.

Dirichlet and Beta draws with tiny parameters (sparse weights, :math:`\gamma = 0.01`)
underflow to exact zeros in linear space; here they are kept as logarithms throughout.
"""

import numpy as np

__all__ = ["log_gamma_draws", "log_dirichlet", "log_beta", "antoniak"]


def log_gamma_draws(shape, rng):
    r""":math:`\log G`, :math:`G \sim \mathrm{Gamma}(a)`, without underflow for tiny :math:`a`:
    :math:`G = G' U^{1/a}` with :math:`G' \sim \mathrm{Gamma}(a + 1)`."""
    shape = np.maximum(shape, 1e-300)  # a shape that underflowed to 0 (or a denormal): G ~ 0
    return np.log(rng.standard_gamma(shape + 1.0)) + np.log(rng.random(shape.shape)) / shape


def log_dirichlet(log_alpha, rng):
    """Log of a Dirichlet draw with parameters ``exp(log_alpha)`` (zeros stay -inf), one draw
    per row along the last axis (the Gamma variates drawn in row order)."""
    alpha = np.exp(log_alpha)
    out = np.full(alpha.shape, -np.inf)
    positive = alpha > 0
    out[positive] = log_gamma_draws(alpha[positive], rng)
    # logaddexp(x, -inf) is x exactly, so the zeros' entries leave each row's total as it is
    with np.errstate(invalid="ignore"):
        total = np.logaddexp.reduce(out, axis=-1, keepdims=True)
    return out - total


def log_beta(a, b, rng):
    r""":math:`(\log w, \log(1 - w))` for :math:`w \sim \mathrm{Beta}(a, b)`, in log space."""
    ga, gb = log_gamma_draws(np.array([a, b]), rng)
    total = np.logaddexp(ga, gb)
    return ga - total, gb - total


def antoniak(customers, concentration, rng):
    r"""Tables of a Chinese restaurant with ``customers`` :math:`n` and ``concentration``
    :math:`a` (elementwise): :math:`1 + \sum_{i=1}^{n-1}\mathrm{Bernoulli}(a/(a + i))` for
    :math:`n \ge 1`, 0 for :math:`n = 0`."""
    customers = np.asarray(customers, dtype=np.int64)
    concentration = np.broadcast_to(np.asarray(concentration, float), customers.shape).ravel()
    customers = customers.ravel()
    tables = (customers > 0).astype(np.int64)
    extra = np.maximum(customers - 1, 0)
    total = int(extra.sum())
    if total:
        owner = np.repeat(np.arange(customers.size), extra)
        start = np.cumsum(extra) - extra
        i = np.arange(total) - np.repeat(start, extra) + 1.0
        a = concentration[owner]
        joins = rng.random(total) * (a + i) < a
        tables += np.bincount(owner[joins], minlength=customers.size)
    return tables
