"""The exact HDP posterior over partitions of a few observations, by enumeration.

Every seating is enumerated: a set partition of each group's customers into tables and a set
partition of all the tables into dishes. Its prior probability is the franchise's exchangeable
partition probability; the data enter through each dish's marginal likelihood. Summing over the
seatings that give the same partition of the observations into dishes gives that partition's
posterior probability.

The marginal likelihood and the log joint of a seating are written here from the model's
definition, one predictive step at a time (the chain rule), so that they share no code and no
closed form with :mod:`mixbayes.hdp._sampler`, which uses Gamma-function products.
"""

import itertools

import numpy as np
from scipy.special import gammaln, logsumexp
from scipy.stats import norm

from mixbayes.hdp._sampler import CATEGORICAL  # the kernel's code; any other is Gaussian


def set_partitions(items):
    """Every set partition of ``items`` (a list), as lists of blocks."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for partition in set_partitions(rest):
        for b in range(len(partition)):
            yield partition[:b] + [[first] + partition[b]] + partition[b + 1:]
        yield [[first]] + partition


def _crp_log(block_sizes, concentration):
    n = sum(block_sizes)
    return (len(block_sizes) * np.log(concentration) + gammaln(concentration)
            - gammaln(concentration + n) + sum(gammaln(s) for s in block_sizes))


def canonical(labels):
    """Labels renamed in order of first appearance (a partition's canonical form)."""
    names = {}
    return tuple(names.setdefault(label, len(names)) for label in labels)


def exact_partition_posterior(data, gamma0, alpha0):
    """``{canonical dish labels of the observations: posterior probability}``."""
    groups = [list(range(data.group_ptr[j], data.group_ptr[j + 1])) for j in range(data.n_groups)]
    logs = {}
    for tables_per_group in itertools.product(*(list(set_partitions(g)) for g in groups)):
        tables = [table for partition in tables_per_group for table in partition]
        seating_log = sum(_crp_log([len(t) for t in partition], alpha0)
                          for partition in tables_per_group)
        for dishes in set_partitions(list(range(len(tables)))):
            labels = np.empty(data.n_observations, dtype=np.int64)
            for k, dish in enumerate(dishes):
                for t in dish:
                    labels[tables[t]] = k
            value = (seating_log + _crp_log([len(d) for d in dishes], gamma0)
                     + log_marginal_sequential(data, labels))
            key = canonical(labels)
            logs[key] = np.logaddexp(logs.get(key, -np.inf), value)
    total = logsumexp(list(logs.values()))
    return {key: float(np.exp(value - total)) for key, value in logs.items()}


def log_marginal_sequential(data, labels):
    r""":math:`\sum_k \log p(y_{(k)})`, atoms integrated out, by the chain rule: every observation
    predicted from the earlier ones of its dish.

    Categorical: :math:`p(y_i = w \mid \text{earlier}) = (c_{kw} + a) / (n_k + W a)` (a token
    sequence, no multinomial coefficient). Gaussian, per feature: the posterior of the atom is
    :math:`N(m, 1/\tau)` with :math:`\tau = \tau_\phi + n_k\tau_y`,
    :math:`m = (\tau_\phi\mu_0 + \tau_y s_k)/\tau`, and the next point is
    :math:`N(m, 1/\tau + 1/\tau_y)`.
    """
    total = 0.0
    if data.kernel == CATEGORICAL:
        W, a = data.n_words, data.word_prior
        word_counts, sizes = {}, {}
        for k, w in zip(labels.tolist(), data.rows.tolist()):
            c, n = word_counts.get((k, w), 0), sizes.get(k, 0)
            total += np.log((c + a) / (n + W * a))
            word_counts[(k, w)], sizes[k] = c + 1, n + 1
        return total
    tau0, tau = data.prior_precision, data.observation_precision
    sums, sizes = {}, {}
    for k, i in zip(labels.tolist(), data.rows.tolist()):
        x = data.points[i]
        n, s = sizes.get(k, 0), sums.get(k, np.zeros_like(x))
        precision = tau0 + n * tau
        mean = (tau0 * data.prior_mean + tau * s) / precision
        total += norm.logpdf(x, mean, np.sqrt(1.0 / precision + 1.0 / tau)).sum()
        sums[k], sizes[k] = s + x, n + 1
    return total


def log_seating_sequential(group_ptr, table_of, table_dish, gamma0, alpha0):
    r"""Log probability of a seating under the Chinese restaurant franchise, customer by customer.

    In group j, the i-th customer (0-based) joins table t with probability
    :math:`n_{jt}/(i + \alpha_0)` or opens a new one with :math:`\alpha_0/(i + \alpha_0)`; a new
    table eats dish k with probability :math:`m_k/(M + \gamma_0)` (M tables so far, m_k of them
    eating k) or a new dish with :math:`\gamma_0/(M + \gamma_0)`. Labels only name the blocks:
    the value is that of the partitions.
    """
    total, tables_per_dish, n_tables = 0.0, {}, 0
    for j in range(len(group_ptr) - 1):
        at_table = {}
        for i, t in enumerate(table_of[group_ptr[j]:group_ptr[j + 1]].tolist()):
            if t in at_table:
                total += np.log(at_table[t] / (i + alpha0))
                at_table[t] += 1
                continue
            total += np.log(alpha0 / (i + alpha0))
            at_table[t] = 1
            k = int(table_dish[j, t])
            assert k >= 0, "an occupied table must have a dish"
            m_k = tables_per_dish.get(k, 0)
            total += np.log((m_k if m_k else gamma0) / (n_tables + gamma0))
            tables_per_dish[k] = m_k + 1
            n_tables += 1
    return total


def log_joint_by_definition(data, table_of, table_dish, gamma0, alpha0):
    """log p(y, seating): the franchise's seating probability times every dish's marginal
    likelihood, both by the chain rule."""
    dishes = np.array([table_dish[j, table_of[i]] for j in range(data.n_groups)
                       for i in range(data.group_ptr[j], data.group_ptr[j + 1])], dtype=np.int64)
    return (log_seating_sequential(data.group_ptr, table_of, table_dish, gamma0, alpha0)
            + log_marginal_sequential(data, dishes))
