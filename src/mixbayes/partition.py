r"""Posterior summaries of a partition from any sampler's draws (Wade & Ghahramani 2018).

A sampler's draws of a clustering are an integer array ``draws`` of shape (n_draws, n_items),
labels arbitrary within each draw (only which items share a label matters). From them:

* :func:`similarity`: the posterior similarity (co-clustering) matrix
  :math:`p_{ij} = P(c_i = c_j\mid X)`, estimated by the share of draws in which i and j share
  a cluster;
* :func:`point_estimate`: the partition :math:`\hat c` minimising the posterior expected loss
  :math:`E[\ell(\hat c, c)\mid X] \approx \frac1T\sum_t\ell(\hat c, c^{(t)})` for the
  variation of information (Meila 2007; ``loss="vi"``) or Binder's loss (``"binder"``), by
  the search of SALSO (Dahl, Johnson & Müller 2022): sequential allocation of the items in a
  random order, each to the cluster (or a new one) that adds least to the loss of the items
  placed so far, then sweetening (every item moved to its best cluster given the others until
  a pass moves none), the best of ``n_runs`` runs;
* :func:`credible_ball`: the smallest VI ball around the estimate holding ``level`` of the
  posterior mass, and its bounds among the draws (vertical upper: the draws in the ball with
  the fewest clusters, the farthest of them; vertical lower: the most clusters; horizontal:
  the farthest draw);
* :func:`n_clusters_posterior` and :func:`chain_diagnostics` (VI between successive draws,
  R-hat and ESS of the number of clusters over chains): label-invariant, unlike a trace of
  any cluster's parameters.

Losses. The VI between partitions :math:`a` and :math:`b` of :math:`n` items with cluster
sizes :math:`n_a`, :math:`n_b` and contingency :math:`n_{ab}` is

.. math:: \mathrm{VI}(a, b) = \frac1n\Big[\sum_a n_a\log_2 n_a + \sum_b n_b\log_2 n_b
          - 2\sum_{ab}n_{ab}\log_2 n_{ab}\Big]

(bits, as R's ``mcclust``; 0 for equal partitions, at most :math:`\log_2 n`), and Binder's loss
(equal costs) the share of the :math:`\binom n2` pairs on which they disagree (in one cluster
in one, apart in the other). Both are computed from per-draw contingency tables, so nothing
here forms the :math:`n\times n` similarity matrix unless :func:`similarity` is asked for it.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from . import _partition_kernels as kernels
from .diagnostics import effective_sample_size, split_rhat

LOSSES = {"vi": kernels.VI, "binder": kernels.BINDER}
LOG2 = np.log(2.0)


def kept_sweeps(first, stop, at_most):
    """The sweeps of ``first..stop-1`` whose draws a sampler keeps: at most ``at_most`` of
    them, evenly spaced (a set; empty when ``at_most`` is 0)."""
    after = np.arange(first, stop)
    if at_most <= 0 or after.size == 0:
        return set()
    pick = np.unique(np.linspace(0, after.size - 1, min(at_most, after.size)).round())
    return set(after[pick.astype(int)].tolist())


def majority_labels(labels, groups, n_groups):
    """Every group's most frequent label (``labels`` and ``groups`` per item), a tie going to
    the tied label that occurs first in the group: a function of the partition, not of how its
    labels happen to be numbered (a tie broken toward the smaller label is not, and made a
    sampler's group partitions and a simulation's true ones disagree on ties). An empty group
    gets label 0."""
    labels = np.asarray(labels, dtype=np.int64)
    groups = np.asarray(groups, dtype=np.int64)
    n = labels.size
    K = int(labels.max()) + 1 if n else 1
    key = groups * K + labels
    counts = np.bincount(key, minlength=n_groups * K).reshape(n_groups, K)
    first = np.full(n_groups * K, n, dtype=np.int64)
    np.minimum.at(first, key, np.arange(n))
    # the highest count, then the earliest first item (counts <= n, so no overflow below 2^31)
    return (counts * (n + 1) - first.reshape(n_groups, K)).argmax(axis=1)


def point_labels(draws, loss, settings):
    """What a sampler with ``point_estimate=loss`` stores as ``point_labels_``: the
    :func:`point_estimate` of its kept ``draws`` (``settings`` name what keeps too few)."""
    if draws is None or len(draws) < 2:
        raise ValueError(f"point_estimate={loss!r} needs at least 2 kept draws; "
                         f"{0 if draws is None else len(draws)} were kept ({settings} too "
                         "small).")
    return point_estimate(draws, loss=loss).labels


def _check_draws(draws, name="draws", min_draws=2):
    """Draws as int64 (n_draws, n_items), each draw relabelled 0.. in order of appearance."""
    try:
        array = np.asarray(draws)
    except ValueError:  # numpy's "inhomogeneous shape", which names nothing
        raise ValueError(f"{name} must be 2-D (n_draws, n_items), one row per draw, every draw "
                         "labelling the same items; got rows of different lengths.") from None
    if array.dtype == object or array.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold integer cluster labels; got dtype {array.dtype}.")
    if array.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_draws, n_items), one row per draw; got shape "
                         f"{array.shape}.")
    if array.shape[0] < min_draws:
        raise ValueError(f"{name} must hold at least {min_draws} draws; got {array.shape[0]}: "
                         "a posterior summary needs several draws of the partition.")
    if array.shape[1] < 1:
        raise ValueError(f"{name} must label at least one item; got shape {array.shape}.")
    if array.dtype.kind == "f":
        if not np.all(np.isfinite(array)):
            raise ValueError(f"{name} holds NaN or infinite values: labels must be integers.")
        if np.any(array != np.round(array)):
            raise TypeError(f"{name} must hold integer cluster labels; got fractional values.")
    relabelled = np.empty(array.shape, dtype=np.int64)
    for t, row in enumerate(array):
        _, first, inverse = np.unique(row, return_index=True, return_inverse=True)
        rank = np.empty(first.size, dtype=np.int64)
        rank[np.argsort(first, kind="stable")] = np.arange(first.size)
        relabelled[t] = rank[inverse.ravel()]
    return relabelled


def _check_labels(labels, n_items, name):
    labels = _check_draws(np.asarray(labels)[None, :] if np.ndim(labels) == 1 else labels,
                          name, min_draws=1)
    if labels.shape != (1, n_items):
        raise ValueError(f"{name} must label the draws' {n_items} items, one label each; got "
                         f"shape {np.shape(labels)}.")
    return labels[0]


@dataclass
class PointEstimate:
    """The partition of least posterior expected loss.

    Attributes
    ----------
    labels : ndarray of shape (n_items,)
        Clusters numbered 0.. by decreasing size.
    expected_loss : float
        Its posterior expected loss (VI in bits, or Binder's share of pairs).
    loss : str
    n_clusters : int
    n_runs : int
        Runs of the search; ``best_run_passes`` sweetening passes of the best.
    """

    labels: np.ndarray
    expected_loss: float
    loss: str
    n_clusters: int
    n_runs: int
    best_run_passes: int


@dataclass
class CredibleBall:
    """The smallest VI ball around an estimate holding ``level`` of the posterior mass
    (estimated by the draws), and its bounds among the draws inside it.

    Attributes
    ----------
    radius : float
        In bits of VI.
    level : float
        The mass asked for; ``mass`` is the share of draws inside (at least ``level``).
    upper, lower, horizontal : ndarray of shape (n_items,)
        Vertical upper bound (fewest clusters, the farthest such draw), vertical lower bound
        (most clusters), horizontal bound (the farthest draw), as labels.
    upper_distance, lower_distance, horizontal_distance : float
        Their VI from the estimate.
    """

    radius: float
    level: float
    mass: float
    upper: np.ndarray
    lower: np.ndarray
    horizontal: np.ndarray
    upper_distance: float
    lower_distance: float
    horizontal_distance: float


def _by_size(labels):
    """Labels renumbered 0.. by decreasing cluster size (ties by first appearance)."""
    sizes = np.bincount(labels)
    first = np.full(sizes.size, labels.size)
    np.minimum.at(first, labels, np.arange(labels.size))
    order = np.lexsort((first, -sizes))
    rank = np.empty(sizes.size, dtype=np.int64)
    rank[order] = np.arange(sizes.size)
    return rank[labels]


def loss_to_draws(labels, draws, loss="vi"):
    """The loss between ``labels`` and every draw: VI in bits, or Binder's share of pairs."""
    draws = _check_draws(draws, min_draws=1)
    labels = _check_labels(labels, draws.shape[1], "labels")
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of 'vi', 'binder'; got {loss!r}.")
    return _losses(labels, draws, loss)


def _losses(labels, draws, loss):
    """:func:`loss_to_draws` of checked labels and draws (0.. within each row)."""
    out = kernels.loss_to_draws(labels, draws, int(draws.max()) + 1, LOSSES[loss])
    # both losses are distances: a sum's rounding below 0 (-2e-15 between equal partitions)
    # is 0, which the CLI printed as "-0.000 bits"
    out = np.maximum(out, 0.0)
    return out / LOG2 if loss == "vi" else out


def expected_loss(labels, draws, loss="vi"):
    """Posterior expected loss of the partition ``labels``: the mean of
    :func:`loss_to_draws`."""
    return float(np.mean(loss_to_draws(labels, draws, loss)))


def point_estimate(draws, loss="vi", n_runs=16, max_clusters=None, max_sweeps=50,
                   random_state=0):
    """The partition minimising the posterior expected ``loss`` (module docstring).

    Parameters
    ----------
    draws : array-like of int of shape (n_draws, n_items)
    loss : {"vi", "binder"}
    n_runs : int
        Runs of the search from independent random orders; the best is kept.
    max_clusters : int or None
        Most clusters the estimate may have; None: twice the most of any draw, plus one.
    max_sweeps : int
        Most sweetening passes per run.
    random_state : int, Generator or None

    Returns
    -------
    PointEstimate
    """
    from ._validation import check_random_state

    draws = _check_draws(draws)
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of 'vi', 'binder'; got {loss!r}.")
    for name, value in (("n_runs", n_runs), ("max_sweeps", max_sweeps)):
        if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be an integer >= 1; got {value!r}.")
    n_labels = int(draws.max()) + 1
    T, n = draws.shape
    if max_clusters is None:
        max_clusters = min(n, 2 * n_labels + 1)
    elif (not isinstance(max_clusters, numbers.Integral) or isinstance(max_clusters, bool)
          or max_clusters < 1):
        raise ValueError(f"max_clusters must be an integer >= 1 or None; got {max_clusters!r}.")
    max_clusters = int(min(max_clusters, n))
    rng = check_random_state(random_state)
    best, best_loss, best_passes = None, np.inf, 0
    for _ in range(n_runs):
        labels, passes = kernels.salso_run(draws, n_labels, LOSSES[loss], max_clusters,
                                           rng.permutation(n), max_sweeps)
        value = float(np.mean(_losses(labels, draws, loss)))
        if value < best_loss - 1e-12:
            best, best_loss, best_passes = labels, value, passes
    labels = _by_size(best)
    return PointEstimate(labels, float(best_loss), loss, int(labels.max()) + 1, int(n_runs),
                         int(best_passes))


def credible_ball(draws, estimate, level=0.95):
    """The credible ball of :class:`CredibleBall` around ``estimate`` (labels, or a
    :class:`PointEstimate`), in VI: its radius is the smallest distance holding at least
    ``level`` of the draws."""
    draws = _check_draws(draws)
    if isinstance(estimate, PointEstimate):
        estimate = estimate.labels
    estimate = _check_labels(estimate, draws.shape[1], "estimate")
    if not isinstance(level, numbers.Real) or isinstance(level, bool) or not 0 < level < 1:
        raise ValueError(f"level must be a number in (0, 1); got {level!r}.")
    distance = _losses(estimate, draws, "vi")
    ordered = np.sort(distance)
    radius = float(ordered[int(np.ceil(level * distance.size)) - 1])
    inside = np.flatnonzero(distance <= radius + 1e-12)
    k = draws[inside].max(axis=1) + 1

    def farthest(candidates):
        return candidates[np.argmax(distance[candidates])]

    upper = farthest(inside[k == k.min()])
    lower = farthest(inside[k == k.max()])
    horizontal = farthest(inside)
    return CredibleBall(radius, float(level), float(inside.size / distance.size),
                        _by_size(draws[upper]), _by_size(draws[lower]),
                        _by_size(draws[horizontal]), float(distance[upper]),
                        float(distance[lower]), float(distance[horizontal]))


def n_clusters_posterior(draws):
    """Posterior of the number of clusters: ``{k: share of draws with k clusters}``."""
    draws = _check_draws(draws, min_draws=1)
    values, counts = np.unique(draws.max(axis=1) + 1, return_counts=True)
    return {int(k): float(c) / draws.shape[0] for k, c in zip(values, counts)}


def similarity(draws, max_dense=5000, top=None, block_size=None):
    """The posterior similarity matrix :math:`p_{ij}`: dense (n_items, n_items) up to
    ``max_dense`` items; with ``top`` an int, a sparse matrix (``scipy.sparse.csr_array``)
    holding each item's ``top`` largest similarities to other items (its neighbours; ties
    broken by the lower index, zeros left out), whatever n. Above ``max_dense`` items a
    dense matrix is refused (its memory is quadratic): ask for ``top`` neighbours, read the
    rows block by block (:func:`similarity_blocks`), or summarise with
    :func:`point_estimate`, :func:`credible_ball` and :func:`block_similarity`.

    The sparse form is computed block by block (``block_size`` rows at a time, default so
    that a block holds about 4 million counts), never as the n x n array; its time is the
    sum over draws and items of the item's cluster size (n^2 x draws / clusters for balanced
    clusters), its memory the blocks' plus n x ``top``."""
    draws = _check_draws(draws, min_draws=1)
    T, n = draws.shape
    if top is not None:
        if not isinstance(top, numbers.Integral) or isinstance(top, bool) or top < 1:
            raise ValueError(f"top must be an integer >= 1 or None; got {top!r}.")
        return _top_neighbours(draws, int(min(top, max(n - 1, 1))), block_size)
    if n > max_dense:
        raise ValueError(f"draws label {n} items: a dense similarity matrix would hold {n}^2 "
                         f"entries (more than max_dense={max_dense} items); ask for each "
                         "item's top neighbours (similarity(draws, top=m), sparse), read it "
                         "block by block (similarity_blocks), use block_similarity(draws, "
                         "labels), or raise max_dense.")
    out = np.zeros((n, n))
    for row in draws:
        onehot = np.zeros((n, row.max() + 1))
        onehot[np.arange(n), row] = 1.0
        out += onehot @ onehot.T
    return out / T


def similarity_blocks(draws, block_size=None):
    """The rows of the posterior similarity matrix, ``block_size`` at a time: yields
    ``(start, block)`` with ``block[r, j]`` = :math:`p_{start + r, j}` (float,
    (rows, n_items)); memory one block (default about 4 million entries), never n x n."""
    draws = _check_draws(draws, min_draws=1)
    for lo, counts in _count_blocks(draws, block_size):
        yield lo, counts / draws.shape[0]


def _count_blocks(draws, block_size):
    """``(start, counts)``: draws in which each row's item shares a cluster with each item
    (int32, one buffer reused: copy what is kept)."""
    T, n = draws.shape
    if block_size is None:
        block_size = max(1, 4_000_000 // n)
    elif (not isinstance(block_size, numbers.Integral) or isinstance(block_size, bool)
          or block_size < 1):
        raise ValueError(f"block_size must be an integer >= 1 or None; got {block_size!r}.")
    order, starts = kernels.members(draws, int(draws.max()) + 1)
    counts = np.zeros((min(int(block_size), n), n), dtype=np.int32)
    for lo in range(0, n, int(block_size)):
        hi = min(n, lo + int(block_size))
        counts[:] = 0
        kernels.shared_counts(draws, order, starts, lo, hi, counts)
        yield lo, counts[:hi - lo]


def _top_neighbours(draws, top, block_size):
    """Each row's ``top`` largest off-diagonal similarities as a CSR array: one selection
    per block on the key count x n + (n - 1 - j), unique per row, so that ties go to the
    lower index exactly."""
    import scipy.sparse as sp

    T, n = draws.shape
    reverse = np.arange(n - 1, -1, -1, dtype=np.int64)
    rows, cols, values = [], [], []
    for lo, counts in _count_blocks(draws, block_size):
        b = counts.shape[0]
        key = counts.astype(np.int64) * n + reverse
        key[np.arange(b), np.arange(lo, lo + b)] = -1  # an item is not its own neighbour
        pick = np.argpartition(-key, top - 1, axis=1)[:, :top] if top < n else \
            np.broadcast_to(np.arange(n), (b, n))
        shared = np.take_along_axis(counts, pick, axis=1)
        own = pick == np.arange(lo, lo + b)[:, None]
        keep = (shared > 0) & ~own
        r = np.nonzero(keep)[0]
        rows.append(r + lo)
        cols.append(pick[keep])
        values.append(shared[keep] / T)
    return sp.csr_array((np.concatenate(values), (np.concatenate(rows), np.concatenate(cols))),
                        shape=(n, n))


def block_similarity(draws, labels):
    """Mean posterior similarity between and within the clusters of ``labels`` (k, k), and
    every item's certainty: its mean similarity to the rest of its cluster (1 for an item
    alone). Linear in the items: from per-draw contingency tables, never the n x n matrix."""
    draws = _check_draws(draws, min_draws=1)
    labels = _check_labels(labels, draws.shape[1], "labels")
    T, n = draws.shape
    k = labels.max() + 1
    size = np.bincount(labels, minlength=k).astype(float)
    blocks = np.zeros((k, k))
    same = np.zeros(n)  # sum over draws of the items of i's cluster sharing i's draw cluster
    for row in draws:
        table = np.zeros((k, row.max() + 1))
        np.add.at(table, (labels, row), 1.0)
        blocks += table @ table.T
        same += table[labels, row]
    blocks /= T
    pairs = np.outer(size, size) - np.diag(size)  # ordered pairs of distinct items
    within = np.diag(blocks) - size  # each item with itself shares its cluster every time
    blocks[np.diag_indices(k)] = within
    with np.errstate(invalid="ignore", divide="ignore"):
        blocks = np.where(pairs > 0, blocks / np.maximum(pairs, 1), 1.0)
        certainty = np.where(size[labels] > 1, (same / T - 1.0) / (size[labels] - 1), 1.0)
    return blocks, certainty


def chain_diagnostics(chains):
    """Label-invariant diagnostics of one or more chains of draws (a list of arrays of shape
    (n_draws, n_items), or one such array): the VI (bits) between successive draws of every
    chain, and the split R-hat and ESS of the number of clusters over the chains."""
    if isinstance(chains, np.ndarray) and chains.ndim != 3:
        chains = [chains]  # one chain (any other shape is refused naming its own)
    chains = [_check_draws(c, "chains") for c in chains]
    if len({c.shape for c in chains}) != 1:
        raise ValueError("every chain must have the same shape (n_draws, n_items); got "
                         f"{[c.shape for c in chains]}.")
    steps = []
    for c in chains:
        n_labels = int(c.max()) + 1
        steps.append(np.array([kernels.loss_to_draws(c[t], c[t + 1:t + 2], n_labels,
                                                     kernels.VI)[0]
                               for t in range(c.shape[0] - 1)]) / LOG2)
    k = np.array([c.max(axis=1) + 1 for c in chains], dtype=float)
    ok = k.shape[1] >= 4
    return dict(successive_vi=steps,
                n_clusters_rhat=split_rhat(k) if ok else float("nan"),
                n_clusters_ess=effective_sample_size(k) if ok else float("nan"))


@dataclass
class PartitionSummary:
    """What a model's draws of its partition say (:func:`summarise`).

    Attributes
    ----------
    estimate : PointEstimate
        The partition of least posterior expected loss.
    ball : CredibleBall
        The credible ball around it.
    n_clusters : dict
        Posterior of the number of clusters.
    n_draws : int
        Draws the summary rests on.
    """

    estimate: PointEstimate
    ball: CredibleBall
    n_clusters: dict
    n_draws: int


def summarise(draws, loss="vi", level=0.95, n_runs=16, random_state=0):
    """:func:`point_estimate`, :func:`credible_ball` and :func:`n_clusters_posterior` of
    ``draws`` in one :class:`PartitionSummary`."""
    estimate = point_estimate(draws, loss=loss, n_runs=n_runs, random_state=random_state)
    return PartitionSummary(estimate, credible_ball(draws, estimate, level),
                            n_clusters_posterior(draws), int(np.shape(draws)[0]))


def draws_from_responsibilities(resp, n_draws, random_state=0):
    """Partitions drawn from a mean-field posterior: every item's cluster drawn independently
    from its row of ``resp`` (n_items, n_clusters), ``n_draws`` times. Mean-field posteriors
    ignore the dependence between assignments and understate the spread: a credible ball of
    such draws is narrower than the exact posterior's."""
    from ._validation import check_random_state

    resp = np.asarray(resp, dtype=float)
    if resp.ndim != 2 or not np.all(np.isfinite(resp)) or np.any(resp < 0):
        raise ValueError("resp must be a finite, non-negative (n_items, n_clusters) array.")
    if not isinstance(n_draws, numbers.Integral) or isinstance(n_draws, bool) or n_draws < 2:
        raise ValueError(f"n_draws must be an integer >= 2; got {n_draws!r}.")
    rng = check_random_state(random_state)
    cumulative = np.cumsum(resp / resp.sum(axis=1, keepdims=True), axis=1)
    u = rng.random((n_draws, resp.shape[0], 1))
    return np.minimum((u > cumulative[None]).sum(axis=2), resp.shape[1] - 1).astype(np.int32)
