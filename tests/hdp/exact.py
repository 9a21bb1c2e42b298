"""The exact HDP posterior over partitions of a few observations, by enumeration.

Every seating is enumerated: a set partition of each group's customers into tables and a set
partition of all the tables into dishes. Its prior probability is the franchise's exchangeable
partition probability; the data enter through each dish's marginal likelihood. Summing over the
seatings that give the same partition of the observations into dishes gives that partition's
posterior probability.
"""

import itertools

import numpy as np
from scipy.special import gammaln, logsumexp

from mixbayes.hdp import _sampler


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
                     + _sampler.marginal_likelihood(data, labels))
            key = canonical(labels)
            logs[key] = np.logaddexp(logs.get(key, -np.inf), value)
    total = logsumexp(list(logs.values()))
    return {key: float(np.exp(value - total)) for key, value in logs.items()}
