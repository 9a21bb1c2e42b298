r"""The exact slice sampler for HDP mixtures (Amini et al. 2019, Algorithm 1 made exact).

Model, in the Chinese-restaurant-franchise form the document uses:

.. math::

    \beta = F(\beta'),\ \beta'_k \sim \mathrm{Beta}(1, \gamma_0); \qquad
    \gamma_j = F(\gamma'_j),\ \gamma'_{jt} \sim \mathrm{Beta}(1, \alpha_0); \qquad
    k_{jt} \sim \beta; \quad t_{ji} \sim \gamma_j; \quad y_{ji} \sim f_{k_{j t_{ji}}},

with :math:`F(x)_k = x_k\prod_{l<k}(1-x_l)` and atoms :math:`\phi_k \sim H`. Slice variables
:math:`u_{ji} \sim U(0, \gamma_{j t_{ji}})` and :math:`v_{jt} \sim U(0, \beta_{k_{jt}})` make every
label step a choice among finitely many candidates. One sweep:

1. :math:`(\beta', v)` jointly: :math:`\beta'_k \sim \mathrm{Beta}(m_k + 1, m_{>k} + \gamma_0)`
   (:math:`m_k` = occupied tables serving dish k), then :math:`v` for every occupied table;
   dish sticks are instantiated from the prior until the unbroken mass is below :math:`\min v`.
2. Atoms from their conjugate posteriors (prior draws for dishes nobody eats); the categorical
   kernel's are drawn lazily, only the entries the label steps may read, in the same law
   (:mod:`~mixbayes.hdp._lazy_atoms`).
3. Dishes of occupied tables: :math:`k_{jt} \propto 1\{v_{jt} \le \beta_k\}\prod f_k(y)`
   (left out when the ``collapsed`` move runs: it has just redrawn the same dishes given
   :math:`\beta` alone, and the slices and atoms are then drawn given its dishes).
4. :math:`(\gamma'_j, u_j)` jointly, then table sticks from the prior until each group's unbroken
   mass is below its least :math:`u`.
5. Dishes of the instantiated *empty* tables are drawn from :math:`\beta` (their exact
   conditional; dish sticks are extended from the prior when a draw falls beyond them), then
   every customer's table: :math:`t_{ji} \propto 1\{u_{ji} \le \gamma_{jt}\} f_{k_{jt}}(y_{ji})`;
   afterwards the dishes of tables left empty are forgotten again.

Empty tables. Under the model every group has infinitely many empty tables, each with a dish
drawn from :math:`\beta`; kept in the state, any finite number of them would enter step 1's counts
and make :math:`\beta` depend on how many were kept (the published code counts those up to its
cap, so its number of dishes follows the cap). Here their dishes are integrated out: step 1 counts
occupied tables only, and step 5 instantiates the dishes of exactly the tables a customer may
move to, from their exact conditional (:math:`\beta`, as no data touch them), and drops them
after the step. The result does not depend on any cap.

Auxiliary moves (exact; the estimator's ``moves``). Between sweeps the state is just the
seating (tables and their dishes): every stick, slice and atom is redrawn from its conditional
before it is used, so any kernel that keeps the posterior of the seating may be interleaved.
``crf``: the franchise's collapsed Gibbs pass over every customer, sticks and atoms integrated
out (:func:`~mixbayes.hdp._moves.crf_gibbs_pass`). ``relabel``: the dish labels and every
group's table labels redrawn from their exact conditional given the partitions
(:func:`~mixbayes.hdp._moves.stick_labels`). ``informed``: step 5 with the empty tables' dishes
integrated out, each keeping only its dish slice, so that a customer who opens a table chooses
its dish by likelihood among those above the slice. ``collapsed``: every occupied table's dish
redrawn given :math:`\beta` with the atoms integrated out and no slice
(:func:`~mixbayes.hdp._kernels.collapsed_dish_step`).

Caps. Sticks live in arrays that grow (by half) whenever the slices need more; the extension
continues where it stopped, so a cap is only an allocation size, never a truncation, and no draw
is ever redone (redoing a sweep with fresh random numbers after an overflow would bias it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from ..families.atoms import CATEGORICAL, GAUSSIAN, GroupedData, draw_atoms, lookup  # noqa: F401
from . import _kernels, _lazy_atoms, _moves


def _work(data):
    """The work of a group loop over ``data`` (serial or parallel as suits its size)."""
    return _kernels.group_work(data.n_observations)


@dataclass
class SliceState:
    """Everything the sampler keeps between sweeps: the seating. Sticks, slices and atoms are
    redrawn from their conditionals within every sweep before they are used.

    ``table_dish[j, t]`` is -1 for empty tables (their dishes are integrated out, see the module
    docstring).
    """

    table_of: np.ndarray  # (N,)
    table_dish: np.ndarray  # (J, table cap)
    atoms_buffer: object = None  # the categorical atoms' tables, reused (_lazy_atoms.Buffer)

    def dish_of(self, data):
        """The dish of every observation."""
        return _kernels.dish_of(data.group_ptr, self.table_of, self.table_dish, work=_work(data))


def _stick_weights(sticks):
    """:math:`F(x)` row-wise and the unbroken mass left after the last stick."""
    remaining = np.cumprod(1.0 - sticks, axis=-1)
    before = np.concatenate([np.ones(sticks.shape[:-1] + (1,)), remaining[..., :-1]], axis=-1)
    return sticks * before, remaining[..., -1] if sticks.shape[-1] else np.ones(sticks.shape[:-1])


class _DishSticks:
    """The instantiated dish weights, extended from the prior on demand."""

    def __init__(self, beta, tail, gamma0, rng):
        self.beta, self.tail, self.gamma0, self.rng = list(beta), float(tail), gamma0, rng

    def extend_until(self, predicate):
        while not predicate(self):
            stick = self.rng.beta(1.0, self.gamma0)
            self.beta.append(self.tail * stick)
            self.tail *= 1.0 - stick

    @property
    def array(self):
        return np.asarray(self.beta)


def _by_weight(beta):
    """The dish weights in decreasing order and the dishes in that order (ties by label): the
    dishes above a slice are a prefix of it."""
    return _kernels.by_weight(beta)


def _uniforms_at(mask, rng):
    """Uniforms where ``mask`` holds (zeros elsewhere): draws only for the entries read."""
    uniforms = np.zeros(mask.shape)
    uniforms[mask] = rng.random(int(mask.sum()))
    return uniforms


def _grow(array, width, fill):
    grown = np.full((array.shape[0], width), fill, dtype=array.dtype)
    grown[:, : array.shape[1]] = array
    return grown


def dish_statistics(data, dish_of, rows):
    """Sufficient statistics of every dish, ``rows`` rows (zero beyond the dishes in use):
    word counts and their total, or sums of the points and their number."""
    if data.kernel == CATEGORICAL:
        W = data.n_words
        stats = np.zeros((rows, W + 1))
        stats[:, :W] = np.bincount(dish_of * W + data.rows, minlength=rows * W).reshape(rows, W)
    else:
        d = data.points.shape[1]
        stats = np.zeros((rows, d + 1))
        np.add.at(stats[:, :d], dish_of, data.points)
    stats[:, -1] += np.bincount(dish_of, minlength=rows)[:rows] if data.kernel == GAUSSIAN \
        else stats[:, :-1].sum(axis=1)
    return stats


def _collapsed_dishes(data, state, beta, tail, gamma0, rng):
    """The auxiliary move: every occupied table's dish redrawn given beta with the atoms
    integrated out (:func:`~mixbayes.hdp._kernels.collapsed_dish_step`)."""
    K = beta.size
    room = K + 8  # an allocation size: the kernel doubles it when new dishes need more
    padded = np.zeros(room)
    padded[:K] = beta
    if data.kernel == CATEGORICAL:  # sparse in the dishes a word is in (no statistics table)
        padded, K, tail, _ = _kernels.collapsed_dish_step_tokens(
            data.group_ptr, state.table_of, data.rows, state.table_dish, data.n_words,
            float(data.word_prior), padded, K, float(tail), gamma0, int(rng.integers(2**31 - 1)))
        return padded[:K].copy(), tail
    stats = dish_statistics(data, state.dish_of(data), room + 1)
    mean = np.zeros(1) if data.prior_mean is None else data.prior_mean
    padded, _, K, tail = _kernels.collapsed_dish_step(
        data.kernel, data.group_ptr, state.table_of, data.rows, data.points, mean,
        data.predictive_settings(), stats, state.table_dish, padded, K, float(tail), gamma0,
        int(rng.integers(2**31 - 1)))
    return padded[:K].copy(), tail


def _crf_pass(data, state, gamma0, alpha0, rng):
    """The franchise's collapsed Gibbs pass over every customer
    (:func:`~mixbayes.hdp._moves.crf_gibbs_pass`), dish labels compacted first (the pass
    weighs every label)."""
    _kernels.compact_dishes(state.table_dish)
    if data.kernel == CATEGORICAL:  # sparse in the dishes a word is in (no statistics table)
        state.table_dish, _ = _moves.crf_gibbs_pass_tokens(
            data.group_ptr, state.table_of, data.rows, state.table_dish, data.n_words,
            float(data.word_prior), gamma0, alpha0, int(rng.integers(2**31 - 1)))
        return
    stats = dish_statistics(data, state.dish_of(data), int(state.table_dish.max()) + 2)
    mean = np.zeros(1) if data.prior_mean is None else data.prior_mean
    state.table_dish = _moves.crf_gibbs_pass(
        data.kernel, data.group_ptr, state.table_of, data.rows, data.points, mean,
        data.predictive_settings(), state.table_dish, stats, gamma0, alpha0,
        int(rng.integers(2**31 - 1)))


def _redraw_labels(data, state, counts, gamma0, alpha0, rng):
    """Dish labels and every group's table labels redrawn from their exact conditional given
    the partitions (:func:`~mixbayes.hdp._moves.stick_labels`), in place in ``state``."""
    m, first = _kernels.label_sizes(counts, state.table_dish)
    new_dish, _ = _moves.stick_labels(m, gamma0, rng.random(2 * m.size))
    _kernels.relabel_dishes(counts, state.table_dish, new_dish)
    J, width = counts.shape
    new_table = np.empty((J, width), dtype=np.int64)
    spans = np.zeros(J, dtype=np.int64)
    _moves.relabel_tables(data.group_ptr, counts, alpha0, rng.random(first[-1]), first,
                          new_table, spans, work=_work(data))
    relabelled = np.full((J, max(width, int(spans.max()) + 1)), -1, dtype=np.int64)
    _moves.apply_table_labels(data.group_ptr, state.table_of, state.table_dish, new_table,
                              relabelled, work=_work(data))
    state.table_dish = relabelled


def sweep(data, state, gamma0, alpha0, rng, collapsed=False, relabel=True, informed=True,
          crf=True):
    """One sweep of the exact slice sampler (module docstring), in place in ``state``; the
    defaults are the estimator's default moves.

    ``crf`` opens it with the franchise's collapsed Gibbs pass (:func:`_crf_pass`), then
    ``relabel`` redraws the labels (:func:`_redraw_labels`; always after ``crf``), ``collapsed``
    adds the collapsed dish move after the dish sticks, ``informed`` integrates the empty
    tables' dishes out of the customer step (:func:`~mixbayes.hdp._kernels._customer_step_informed`) instead
    of drawing them from beta beforehand."""
    J = data.n_groups
    slots = state.table_dish.shape[1]
    work = _work(data)

    counts = _kernels.table_counts(data.group_ptr, state.table_of, slots, work=work)
    _kernels.forget_empty(state.table_dish, counts)
    if crf:
        _crf_pass(data, state, gamma0, alpha0, rng)
        counts = _kernels.table_counts(data.group_ptr, state.table_of,
                                       state.table_dish.shape[1], work=work)
    if relabel or crf:  # the collapsed pass renumbers tables and dishes: labels must follow
        _redraw_labels(data, state, counts, gamma0, alpha0, rng)
        slots = state.table_dish.shape[1]
        counts = _kernels.table_counts(data.group_ptr, state.table_of, slots, work=work)

    # 1. dish sticks given the occupied tables' dishes, then their slices
    a, b, n_occupied = _kernels.dish_stick_parameters(counts, state.table_dish, gamma0)
    beta, tail = _kernels.stick_weights(rng.beta(a, b))
    if collapsed:
        beta, tail = _collapsed_dishes(data, state, beta, tail, gamma0, rng)
    sticks = _DishSticks(beta, tail, gamma0, rng)
    dish_slice, lowest = _kernels.dish_slices(counts, state.table_dish, beta,
                                              rng.random(n_occupied))
    sticks.extend_until(lambda s: s.tail < lowest)

    # 2. atoms, and 3. the dishes of the occupied tables (left out after the collapsed dish
    # move, which has just redrawn them from a conditional with fewer variables fixed: the atoms
    # integrated out and no dish slice; the slices and atoms below are drawn given its dishes)
    K = len(sticks.beta)
    # the exponentials' table only for the informed customer step, the one step reading it
    atoms = _lazy_atoms.Atoms(data, state.dish_of(data), K, rng, state.atoms_buffer,
                              likelihood=informed)
    if atoms.lazy:
        state.atoms_buffer = atoms.buffer
    if not collapsed:
        sorted_beta, by_weight = _by_weight(sticks.array)
        atoms.reveal_for_dish_step(state.table_of, dish_slice, sorted_beta, by_weight, rng)
        _kernels.dish_step(data.group_ptr, state.table_of, data.rows, atoms.table,
                           state.table_dish, counts, dish_slice, sorted_beta, by_weight,
                           _uniforms_at(counts > 0, rng), work=work)

    # 4. table sticks given the seating, their slices, and as many more sticks as they reach
    last, first, a, b = _kernels.table_stick_parameters(counts, alpha0)
    weights, group_tail = np.empty(counts.shape), np.empty(J)
    table_slice, lowest_u = np.empty(data.n_observations), np.empty(J)
    _kernels.table_slices(data.group_ptr, state.table_of, last, first, rng.beta(a, b),
                          rng.random(data.n_observations), weights, group_tail,
                          table_slice, lowest_u, work=work)
    n_tables = last.copy()
    need, widest = _kernels.groups_short_of(group_tail, lowest_u, np.arange(J), n_tables)
    while need.size:
        if widest >= weights.shape[1]:
            width = int(weights.shape[1] * 1.5) + 1
            weights = _grow(weights, width, 0.0)
            state.table_dish = _grow(state.table_dish, width, -1)
        _kernels.break_table_sticks(need, rng.beta(1.0, alpha0, size=need.size), weights,
                                    group_tail, n_tables)
        need, widest = _kernels.groups_short_of(group_tail, lowest_u, need, n_tables)

    # 5. dishes of the reachable empty tables from beta, then every customer's table
    empty, n_empty = _kernels.empty_reachable(state.table_dish, n_tables)
    draws = rng.random(n_empty)
    if draws.size:
        top = draws.max()
        sticks.extend_until(lambda s: 1.0 - s.tail > top)
        _kernels.dishes_from_beta(state.table_dish, empty, sticks.array, draws)
        atoms.extend(len(sticks.beta), rng)
    if informed:
        # keep each empty table's dish slice, forget its dish, and let the customers choose
        slices, lowest = _kernels.empty_table_slices(state.table_dish, empty, dish_slice,
                                                     sticks.array, rng.random(n_empty))
        if n_empty:
            sticks.extend_until(lambda s: s.tail < lowest)
            atoms.extend(len(sticks.beta), rng)
        # the kernel keeps the counts and forgets the dishes of tables it empties
        counts = _kernels.table_counts(data.group_ptr, state.table_of, weights.shape[1],
                                       work=work)
        sorted_beta, by_weight = _by_weight(sticks.array)
        atoms.reveal_for_customer_step(state.table_of, state.table_dish, weights, n_tables,
                                       table_slice, slices, sorted_beta, by_weight, rng)
        _kernels.customer_step_informed(
            data.group_ptr, data.rows, atoms.scaled_likelihood(), atoms.table,
            state.table_dish, weights, n_tables,
            table_slice, slices, sorted_beta, by_weight, counts,
            rng.random(data.n_observations), state.table_of, work=work)
        return counts
    atoms.reveal_for_plain_customer_step(state.table_dish, weights, n_tables, table_slice,
                                         rng)
    _kernels.customer_step(data.group_ptr, data.rows, atoms.table, state.table_dish, weights,
                           n_tables, table_slice, rng.random(data.n_observations),
                           state.table_of, work=work)
    counts = _kernels.table_counts(data.group_ptr, state.table_of, weights.shape[1], work=work)
    state.table_dish[counts == 0] = -1
    return counts


# ---------------------------------------------------------------------- summaries
def log_joint(data, state, gamma0, alpha0, counts=None, dishes=None):
    r"""Log density of the data and the seating, sticks and atoms integrated out:

    .. math::

        \log p(y, \text{seating}) = \sum_j\Bigl[T_j\log\alpha_0 + \log\frac{\Gamma(\alpha_0)}
        {\Gamma(\alpha_0 + n_j)} + \sum_t\log\Gamma(n_{jt})\Bigr] + K\log\gamma_0
        + \log\frac{\Gamma(\gamma_0)}{\Gamma(\gamma_0 + m)} + \sum_k\log\Gamma(m_k)
        + \sum_k \log p(y_{(k)}),

    (the franchise's exchangeable partition probability for tables within groups and dishes
    among tables, and each dish's marginal likelihood), the scalar traced per sweep.
    ``counts`` (customers per table) and ``dishes`` (every observation's dish) are recomputed
    when not given.
    """
    if counts is None:
        counts = _kernels.table_counts(data.group_ptr, state.table_of,
                                       state.table_dish.shape[1], work=_work(data))
    value = _kernels.seating_log_prior(data.group_ptr, counts, state.table_dish, float(alpha0),
                                       float(gamma0))
    dishes = state.dish_of(data) if dishes is None else dishes
    if data.kernel == CATEGORICAL:
        return value + _kernels.marginal_likelihood_tokens(dishes, data.rows, data.n_words,
                                                           float(data.word_prior))
    return value + marginal_likelihood(data, dishes)


def compact(labels):
    """Non-negative integer labels renumbered 0, 1, ... in order (by counting, not sorting)."""
    present = np.bincount(labels) > 0
    return (np.cumsum(present) - 1)[labels]


def marginal_likelihood(data, labels):
    r""":math:`\sum_k \log p(y_{(k)})` with the atoms integrated out, for any labelling (an
    unused label adds exactly zero)."""
    K = labels.max() + 1 if labels.size else 0
    if K > 2 * labels.size:  # sparse labels: renumber before counting per label
        labels = compact(labels)
        K = labels.max() + 1
    if data.kernel == CATEGORICAL:
        W, a = data.n_words, data.word_prior
        # only the (dish, word) pairs with tokens: a zero count adds exactly zero
        pairs = np.bincount(labels * W + data.rows, minlength=K * W)
        counts = pairs[pairs > 0]
        totals = np.bincount(labels, minlength=K)
        return float((gammaln(W * a) - gammaln(W * a + totals)).sum()
                     + (gammaln(a + counts) - gammaln(a)).sum())
    X, tau, tau0 = data.points, data.observation_precision, data.prior_precision
    d = X.shape[1]
    n = np.bincount(labels, minlength=K).astype(float)
    sums = np.zeros((K, d))
    np.add.at(sums, labels, X)
    means = sums / np.maximum(n, 1.0)[:, None]
    within = ((X - means[labels]) ** 2).sum()
    offset = ((means - data.prior_mean) ** 2).sum(axis=1)
    return float(
        0.5 * d * (n.sum() * np.log(tau / (2 * np.pi)) + np.log(tau0 / (tau0 + n * tau)).sum())
        - 0.5 * tau * within - 0.5 * (n * tau * tau0 / (tau0 + n * tau) * offset).sum()
    )


def initial_state(data, gamma0, alpha0, rng, how="crf", table_cap=None):
    """A valid starting state: one pass of the franchise (``"crf"``) or everyone at one table
    eating one dish (``"ones"``, the start of Amini et al.)."""
    J = data.n_groups
    if how == "ones":
        table_of = np.zeros(data.n_observations, dtype=np.int64)
        table_dish = np.zeros((J, 1), dtype=np.int64)
    elif data.kernel == CATEGORICAL:  # buckets: a customer's cost in its word's dishes
        table_of, table_dish, _ = _kernels.crf_seating_tokens(
            data.group_ptr, data.rows, data.n_words, float(data.word_prior), alpha0, gamma0,
            rng.random((data.n_observations, 2)), min(data.n_observations, 10_000))
    else:
        table_of, table_dish, _ = _kernels.crf_seating(
            data.kernel, data.group_ptr, data.rows, data.points,
            np.zeros(1) if data.prior_mean is None else data.prior_mean,
            data.predictive_settings(), data.n_stats(), alpha0, gamma0,
            rng.random((data.n_observations, 2)), min(data.n_observations, 10_000))
    # as wide as the most tables a group opened (the sweeps widen it when a group needs more)
    width = max(table_dish.shape[1], table_cap or 0)
    table_dish = _grow(table_dish, width, -1)
    return SliceState(table_of, table_dish)
