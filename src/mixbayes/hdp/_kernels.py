r"""Numba kernels of the HDP slice sampler: the two label steps and the initial seating.

Both kernels (categorical tokens, Gaussian points) reach the label steps through one lookup
table ``loglik[row_of[i], k]`` :math:`= \log f_k(y_i)`: for tokens the row is the word (the table
is :math:`\log\phi^\top`, W x K), for points the row is the point itself (N x K). Observations are
sorted by group; group j holds positions ``group_ptr[j]:group_ptr[j+1]``.

Every random choice reads a uniform drawn beforehand by the driver's numpy generator, so a step
is a deterministic function of its inputs and the groups (independent given the sticks, slices
and atoms) run in a ``prange`` with results identical to a serial run.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .._kernel_tools import counting_order, twice


# a draw from weights whose largest (or total) is below this is redone from logarithms: every
# weight that may have underflowed is then below 1e-58 of the largest
_TINY = 1e-250


@njit(cache=True, inline="always")
def _draw_from_weights(weights, count, uniform):
    """Index ``< count`` drawn with probabilities proportional to ``weights[:count]`` (>= 0)."""
    total = 0.0
    for c in range(count):
        total += weights[c]
    target = uniform * total
    running = 0.0
    for c in range(count):
        running += weights[c]
        if target < running:
            return c
    for c in range(count - 1, -1, -1):  # rounding left the target at the very top
        if weights[c] > 0.0:
            return c
    return count - 1


@njit(cache=True, inline="always")
def _draw_from_logs(logs, count, uniform):
    """Index ``< count`` drawn with probabilities proportional to ``exp(logs[:count])``
    (``logs`` is overwritten with the scaled weights)."""
    top = -np.inf
    for c in range(count):
        if logs[c] > top:
            top = logs[c]
    for c in range(count):
        logs[c] = math.exp(logs[c] - top)
    return _draw_from_weights(logs, count, uniform)


def _table_counts(group_ptr, table_of, n_table_slots):
    """Customers at every table, shape (J, n_table_slots)."""
    J = group_ptr.shape[0] - 1
    counts = np.zeros((J, n_table_slots), dtype=np.int64)
    for j in prange(J):
        for i in range(group_ptr[j], group_ptr[j + 1]):
            counts[j, table_of[i]] += 1
    return counts


def _dish_of(group_ptr, table_of, table_dish):
    """The dish of every observation: ``table_dish[j, table_of[i]]`` for i in group j."""
    dishes = np.empty(table_of.shape[0], dtype=np.int64)
    for j in prange(group_ptr.shape[0] - 1):
        for i in range(group_ptr[j], group_ptr[j + 1]):
            dishes[i] = table_dish[j, table_of[i]]
    return dishes


def _stick_parameters(counts, last, first, concentration, a, b):
    r"""Beta parameters of every group's table sticks up to its last occupied table:
    :math:`a = 1 + n_{jt}`, :math:`b = \alpha_0 + n_{j,>t}`, flat at
    ``first[j]:first[j]+last[j]``."""
    for j in prange(counts.shape[0]):
        after = 0.0
        for t in range(last[j] - 1, -1, -1):
            a[first[j] + t] = 1.0 + counts[j, t]
            b[first[j] + t] = concentration + after
            after += counts[j, t]


def _table_slices(group_ptr, table_of, last, first, sticks, uniforms, weights, tail, table_slice,
                  lowest):
    r"""Table weights :math:`\gamma_{jt} = x_t\prod_{s<t}(1 - x_s)` from the flat sticks
    (``weights`` (J, width) zero beyond them), each group's unbroken mass ``tail``, the customers'
    slices :math:`u_i = U_i\,\gamma_{j t_i}` and each group's least slice ``lowest``."""
    for j in prange(group_ptr.shape[0] - 1):
        remaining = 1.0
        for t in range(last[j]):
            x = sticks[first[j] + t]
            weights[j, t] = x * remaining
            remaining *= 1.0 - x
        for t in range(last[j], weights.shape[1]):
            weights[j, t] = 0.0
        tail[j] = remaining
        least = np.inf
        for i in range(group_ptr[j], group_ptr[j + 1]):
            table_slice[i] = uniforms[i] * weights[j, table_of[i]]
            least = min(least, table_slice[i])
        lowest[j] = least


@njit(cache=True, inline="always")
def _count_at_least(descending, threshold):
    """How many of the ``descending`` values are >= ``threshold`` (bisection)."""
    low, high = 0, descending.shape[0]
    while low < high:
        middle = (low + high) // 2
        if descending[middle] >= threshold:
            low = middle + 1
        else:
            high = middle
    return low


def _dish_step(group_ptr, table_of, row_of, loglik, table_dish, occupied, dish_slice,
               sorted_beta, by_weight, uniforms):
    r"""Redraw the dish of every occupied table given the dish slices, in place.

    .. math::

        P(k_{jt} = k \mid \cdot) \propto 1\{v_{jt} \le \beta_k\}\prod_{i:\,t_{ji}=t} f_k(y_{ji}).

    ``occupied[j, t]`` counts table t's customers; ``dish_slice[j, t]`` is :math:`v_{jt}`;
    ``uniforms[j, t]`` drives the draw. The dishes above a slice are the first ones of
    ``by_weight`` (dishes by decreasing :math:`\beta`, ``sorted_beta``). The driver has
    instantiated every dish with :math:`\beta_k \ge \min v`.
    """
    J = group_ptr.shape[0] - 1
    K = by_weight.shape[0]
    n_slots = occupied.shape[1]
    for j in prange(J):
        used = 0  # tables past the group's last occupied one need no scratch
        for t in range(n_slots):
            if occupied[j, t] > 0:
                used = t + 1
        reach = np.zeros(used, dtype=np.int64)
        for t in range(used):
            if occupied[j, t] > 0:
                reach[t] = _count_at_least(sorted_beta, dish_slice[j, t])
        sums = np.zeros((used, K))
        for i in range(group_ptr[j], group_ptr[j + 1]):
            t = table_of[i]
            r = row_of[i]
            for q in range(reach[t]):
                sums[t, q] += loglik[r, by_weight[q]]
        for t in range(used):
            if reach[t] > 0:
                q = _draw_from_logs(sums[t], reach[t], uniforms[j, t])
                table_dish[j, t] = by_weight[q]


def _customer_step(group_ptr, row_of, loglik, table_dish, table_weight, n_tables, table_slice,
                  uniforms, table_of):
    r"""Redraw every customer's table given the table slices, in place in ``table_of``.

    .. math::

        P(t_{ji} = t \mid \cdot) \propto 1\{u_{ji} \le \gamma_{jt}\}\, f_{k_{jt}}(y_{ji}),

    over the ``n_tables[j]`` instantiated tables of group j (occupied ones and empty ones whose
    dish the driver has just drawn from :math:`\beta`); the driver has instantiated every table
    with :math:`\gamma_{jt} \ge u_{ji}`.
    """
    J = group_ptr.shape[0] - 1
    for j in prange(J):
        T = n_tables[j]
        logs = np.empty(T)
        candidates = np.empty(T, dtype=np.int64)
        for i in range(group_ptr[j], group_ptr[j + 1]):
            r = row_of[i]
            count = 0
            for t in range(T):
                if table_weight[j, t] >= table_slice[i]:
                    logs[count] = loglik[r, table_dish[j, t]]
                    candidates[count] = t
                    count += 1
            table_of[i] = candidates[_draw_from_logs(logs, count, uniforms[i])]


# The group loops below are built twice, serial and parallel, and chosen per call by the one
# policy of the numba kernels (:func:`mixbayes._kernel_tools.twice`): in parallel from
# ``_PARALLEL_FROM`` multiply-adds a call. prange is range in the serial build, so both give
# identical results. A group loop's work is counted per observation, WORK_PER_OBSERVATION
# multiply-adds each (an observation's step is an exp or a log, a uniform and a search over
# its group's tables): 100 keeps the switch at 50,000 observations, where it was measured
# when the HDP landed (below it, launching a parallel region cost more than the work).
WORK_PER_OBSERVATION = 100


def group_work(n_observations):
    """The work of one call of a group loop over ``n_observations``, in multiply-adds (the
    ``work`` every group loop takes)."""
    return n_observations * WORK_PER_OBSERVATION


table_counts = twice(_table_counts)
dish_step = twice(_dish_step)
dish_of = twice(_dish_of)
stick_parameters = twice(_stick_parameters)
table_slices = twice(_table_slices)
customer_step = twice(_customer_step)


@njit(cache=True, inline="always")
def _predictive_log(kernel, stats, k, i, row, points, prior_mean, settings):
    r"""Log predictive density of observation i under dish k with the atom integrated out.

    Categorical (``kernel == 0``): :math:`(c_{kw} + a)/(c_k + Wa)` with ``stats[k, :W]`` word
    counts and ``stats[k, W]`` the total. Gaussian: ``stats[k, :d]`` sums and ``stats[k, d]``
    the count; :math:`N(y; \mu_k, (1/\lambda_k + 1/\tau_y) I)` with
    :math:`\lambda_k = \tau_\phi + n_k\tau_y`,
    :math:`\mu_k = (\tau_\phi\mu_0 + \tau_y\sum y)/\lambda_k`.
    ``settings`` = (a, W) or (tau_phi, tau_y).
    """
    if kernel == 0:
        a = settings[0]
        W = stats.shape[1] - 1
        return math.log((stats[k, row] + a) / (stats[k, W] + W * a))
    d = points.shape[1]
    tau_phi, tau_y = settings[0], settings[1]
    precision = tau_phi + stats[k, d] * tau_y
    variance = 1.0 / precision + 1.0 / tau_y
    total = 0.0
    for e in range(d):
        mean = (tau_phi * prior_mean[e] + tau_y * stats[k, e]) / precision
        diff = points[i, e] - mean
        total += diff * diff
    return -0.5 * (total / variance + d * math.log(2.0 * math.pi * variance))


@njit(cache=True, inline="always")
def _add_to_stats(kernel, stats, k, i, row, points):
    if kernel == 0:
        stats[k, row] += 1.0
        stats[k, stats.shape[1] - 1] += 1.0
    else:
        d = points.shape[1]
        for e in range(d):
            stats[k, e] += points[i, e]
        stats[k, d] += 1.0


@njit(cache=True)
def crf_seating(kernel, group_ptr, row_of, points, prior_mean, settings, n_stats, alpha0, gamma0,
                uniforms, max_dishes):
    r"""One sequential pass of the Chinese restaurant franchise with the atoms integrated out.

    Customers enter group by group; customer i sits at occupied table t with probability
    :math:`\propto n_{jt} p_{k_{jt}}(y_i)` and at a new table with probability
    :math:`\propto \alpha_0 \bigl(\sum_k m_k p_k(y_i) + \gamma_0 p_\text{new}(y_i)\bigr)/
    (m_\cdot + \gamma_0)`, whose dish is drawn in proportion to the two kinds of terms
    (:math:`p_k` the predictive density given dish k's customers so far, ``_predictive_log``).
    This is a draw from the prior seating updated one customer at a time — a valid HDP state
    that already reflects the data, unlike the all-at-one-table start.

    Returns ``table_of`` (N,), ``table_dish`` (J, max table count), dish count.
    ``uniforms`` holds two per customer; at most ``max_dishes`` dishes are opened.
    """
    J = group_ptr.shape[0] - 1
    N = row_of.shape[0]
    widest = 1
    for j in range(J):
        widest = max(widest, group_ptr[j + 1] - group_ptr[j])
    stats = np.zeros((max_dishes, n_stats))
    tables_per_dish = np.zeros(max_dishes)
    table_of = np.zeros(N, dtype=np.int64)
    group_dish, dish_ptr, dish_list = _seating_scratch(J, N, widest)
    table_size = np.zeros(widest)
    n_dishes = 0
    n_all_tables = 0.0
    logs = np.empty(widest + 1)
    dish_logs = np.empty(max_dishes + 1)
    for j in range(J):
        n_tables = 0
        for i in range(group_ptr[j], group_ptr[j + 1]):
            row = row_of[i]
            # log predictive under every dish so far and under a new one
            for k in range(n_dishes):
                dish_logs[k] = math.log(tables_per_dish[k]) + _predictive_log(
                    kernel, stats, k, i, row, points, prior_mean, settings)
            if n_dishes < max_dishes:
                stats[n_dishes, :] = 0.0
                dish_logs[n_dishes] = math.log(gamma0) + _predictive_log(
                    kernel, stats, n_dishes, i, row, points, prior_mean, settings)
                n_options = n_dishes + 1
            else:
                n_options = n_dishes
            top = -np.inf
            for k in range(n_options):
                top = max(top, dish_logs[k])
            mixture = 0.0
            for k in range(n_options):
                mixture += math.exp(dish_logs[k] - top)
            new_table_log = (math.log(alpha0) + top + math.log(mixture)
                             - math.log(n_all_tables + gamma0))
            for t in range(n_tables):
                logs[t] = math.log(table_size[t]) + _predictive_log(
                    kernel, stats, group_dish[t], i, row, points, prior_mean, settings)
            logs[n_tables] = new_table_log
            t = _draw_from_logs(logs, n_tables + 1, uniforms[i, 0])
            if t == n_tables:
                k = _draw_from_logs(dish_logs, n_options, uniforms[i, 1])
                if k == n_dishes:
                    n_dishes += 1
                group_dish[t] = k
                table_size[t] = 0.0
                tables_per_dish[k] += 1.0
                n_all_tables += 1.0
                n_tables += 1
            table_size[t] += 1.0
            table_of[i] = t
            _add_to_stats(kernel, stats, group_dish[t], i, row, points)
        _pack_group(j, n_tables, group_dish, dish_ptr, dish_list)
    return table_of, unpacked_dishes(dish_ptr, dish_list, J, 1), n_dishes


@njit(cache=True)
def _seating_scratch(J, N, widest):
    """The seating passes' dishes: one group's (a slot per customer of the longest group) and
    every group's packed (``dish_ptr``, ``dish_list``), unpacked at the end as wide as the
    most tables a group opened. A (J, longest group) table was 1.1 GB on 20 Newsgroups' 11,291
    messages, the longest of 12,343 tokens, and the sweeps kept that width: 8 GB in all."""
    return (np.full(widest, -1, dtype=np.int64), np.zeros(J + 1, dtype=np.int64),
            np.empty(max(N, 1), dtype=np.int64))


@njit(cache=True, inline="always")
def _pack_group(j, n_tables, group_dish, dish_ptr, dish_list):
    """Group ``j``'s ``n_tables`` dishes appended to the packed list."""
    for t in range(n_tables):
        dish_list[dish_ptr[j] + t] = group_dish[t]
    dish_ptr[j + 1] = dish_ptr[j] + n_tables


@njit(cache=True)
def unpacked_dishes(dish_ptr, dish_list, J, width):
    """The packed dishes as a (J, max(widest group, ``width``)) table, -1 past each group's."""
    widest = 1
    for j in range(J):
        widest = max(widest, dish_ptr[j + 1] - dish_ptr[j])
    table_dish = np.full((J, max(widest, width)), -1, dtype=np.int64)
    for j in range(J):
        for s in range(dish_ptr[j + 1] - dish_ptr[j]):
            table_dish[j, s] = dish_list[dish_ptr[j] + s]
    return table_dish


@njit(cache=True, inline="always")
def _word_offsets(row_of, n_words):
    """``ptr`` with word w's tokens at ``ptr[w]:ptr[w + 1]`` (counts, cumulated): the room of
    every word's list of dishes, as many as its tokens, the most it can be in."""
    ptr = np.zeros(n_words + 1, dtype=np.int64)
    for i in range(row_of.shape[0]):
        ptr[row_of[i] + 1] += 1
    for w in range(n_words):
        ptr[w + 1] += ptr[w]
    return ptr


@njit(cache=True, inline="always")
def _dish_from_buckets(target, nz_dish, first, stop, seen_at, m, inverse, a, n_labels):
    """A new table's dish from the bucket split of the franchise's new-table mixture: the
    dishes of the customer's word (``nz_dish[first:stop]``, its counts there ``seen_at``), then
    every dish's smoothing share; -1 when ``target`` lies beyond both (a new dish)."""
    running = 0.0
    for p in range(first, stop):
        d = nz_dish[p]
        running += m[d] * seen_at[d] * inverse[d]
        if target < running:
            return d
    for d in range(n_labels):
        if m[d] > 0.0:
            running += a * m[d] * inverse[d]
            if target < running:
                return d
    return -1


@njit(cache=True)
def crf_seating_tokens(group_ptr, row_of, n_words, a, alpha0, gamma0, uniforms, max_dishes):
    r""":func:`crf_seating` for the categorical kernel: the same sequential pass, the same
    conditionals, with each customer's cost in its group's tables and the dishes that use its
    word rather than every dish (the bucket split of
    :func:`~mixbayes.hdp._moves.crf_gibbs_pass_tokens`):

    .. math::

        \sum_k m_k\,\frac{c_{kw} + a}{c_k + Wa} + \frac{\gamma_0}{W}
        = \sum_{k:\,c_{kw} > 0} \frac{m_k c_{kw}}{c_k + Wa} + a\,S + \frac{\gamma_0}{W},
        \qquad S = \sum_k \frac{m_k}{c_k + Wa}

    (the new dish's predictive is :math:`a / Wa = 1/W`), weighed as products, not logarithms
    (a token's predictive is at least :math:`a/(c_k + Wa)`: nothing underflows). A new table's
    dish is drawn from the word bucket, then the smoothing shares, then a new dish (none past
    ``max_dishes``). The dense pass costs a logarithm per dish and token: 1.9 s on
    googlenews_t (69,229 tokens, 438 dishes opened; 2.3 s in a loaded fit), a third of a
    100-sweep fit; this pass 11 ms.

    Returns ``table_of`` (N,), ``table_dish`` (J, max table count), dish count.
    """
    J = group_ptr.shape[0] - 1
    N = row_of.shape[0]
    W = n_words
    Wa = W * a
    widest = 1
    for j in range(J):
        widest = max(widest, group_ptr[j + 1] - group_ptr[j])
    nz_ptr = _word_offsets(row_of, W)  # every word's list of (dish, count), empty
    nz_len = np.zeros(W, dtype=np.int64)
    nz_dish = np.empty(max(N, 1), dtype=np.int64)
    nz_count = np.zeros(max(N, 1))
    m = np.zeros(max_dishes)  # tables per dish
    totals = np.zeros(max_dishes)  # tokens per dish
    inverse = np.full(max_dishes, 1.0 / Wa)  # 1 / (c_k + Wa)
    seen_at = np.zeros(max_dishes)  # the customer's word's count at the dishes of its list
    seen_by = np.full(max_dishes, -1, dtype=np.int64)
    table_of = np.zeros(N, dtype=np.int64)
    group_dish, dish_ptr, dish_list = _seating_scratch(J, N, widest)
    table_size = np.zeros(widest)
    weights = np.empty(widest + 1)
    n_dishes = 0
    n_all_tables = 0.0
    new_weight = gamma0 / W
    for j in range(J):
        n_tables = 0
        smooth = 0.0  # S afresh at every group, so that rounding cannot build up
        for d in range(n_dishes):
            smooth += m[d] * inverse[d]
        for i in range(group_ptr[j], group_ptr[j + 1]):
            r = row_of[i]
            bucket = 0.0
            first, stop = nz_ptr[r], nz_ptr[r] + nz_len[r]
            for p in range(first, stop):
                d = nz_dish[p]
                seen_at[d] = nz_count[p]
                seen_by[d] = i
                bucket += m[d] * nz_count[p] * inverse[d]
            opens = n_dishes < max_dishes
            mixture = bucket + a * smooth + (new_weight if opens else 0.0)
            for t in range(n_tables):
                d = group_dish[t]
                seen = seen_at[d] if seen_by[d] == i else 0.0
                weights[t] = table_size[t] * (seen + a) * inverse[d]
            weights[n_tables] = alpha0 * mixture / (n_all_tables + gamma0)
            t = _draw_from_weights(weights, n_tables + 1, uniforms[i, 0])
            if t < n_tables:
                k = group_dish[t]
            else:
                # the dish: the word bucket, the smoothing shares, a new dish, in turn
                k = _dish_from_buckets(uniforms[i, 1] * mixture, nz_dish, first, stop, seen_at,
                                       m, inverse, a, n_dishes)
                if k < 0:
                    # a new dish (also where rounding left the target at the very top, then
                    # the last dish once no new one may open)
                    if opens:
                        k = n_dishes
                        n_dishes += 1
                    else:
                        k = n_dishes - 1
                group_dish[t] = k
                table_size[t] = 0.0
                smooth -= m[k] * inverse[k]
                m[k] += 1.0
                smooth += m[k] * inverse[k]
                n_all_tables += 1.0
                n_tables += 1
            table_size[t] += 1.0
            table_of[i] = t
            _sparse_add(nz_ptr, nz_len, nz_dish, nz_count, r, k, 1.0)
            smooth -= m[k] * inverse[k]
            totals[k] += 1.0
            inverse[k] = 1.0 / (totals[k] + Wa)
            smooth += m[k] * inverse[k]
        _pack_group(j, n_tables, group_dish, dish_ptr, dish_list)
    return table_of, unpacked_dishes(dish_ptr, dish_list, J, 1), n_dishes


@njit(cache=True, inline="always")
def _remove_from_stats(kernel, stats, k, i, row, points):
    if kernel == 0:
        stats[k, row] -= 1.0
        stats[k, stats.shape[1] - 1] -= 1.0
    else:
        d = points.shape[1]
        for e in range(d):
            stats[k, e] -= points[i, e]
        stats[k, d] -= 1.0


@njit(cache=True, inline="always")
def _table_predictive_log(kernel, stats, k, members, size, row_of, points, prior_mean, settings,
                          repeats):
    """Log joint predictive of a table's customers under dish k (as if added one by one).

    Categorical: the product of :math:`(c_{kw} + a + r)/(c_k + Wa + s)` over the customers in
    order, :math:`r` the earlier customers of the same word (``repeats``) and :math:`s` the
    earlier customers, read without writing the statistics. Gaussian: the customers are added
    to ``stats`` one by one and removed again."""
    if size == 1:  # most tables: no bookkeeping needed
        i = members[0]
        return _predictive_log(kernel, stats, k, i, row_of[i], points, prior_mean, settings)
    total = 0.0
    if kernel == 0:
        a = settings[0]
        W = stats.shape[1] - 1
        base = stats[k, W] + W * a
        for s in range(size):
            total += math.log((stats[k, row_of[members[s]]] + repeats[s] + a) / (base + s))
        return total
    for s in range(size):
        i = members[s]
        total += _predictive_log(kernel, stats, k, i, row_of[i], points, prior_mean, settings)
        _add_to_stats(kernel, stats, k, i, row_of[i], points)
    for s in range(size):
        i = members[s]
        _remove_from_stats(kernel, stats, k, i, row_of[i], points)
    return total


@njit(cache=True, inline="always")
def _block_products_categorical(word_major, candidates, n_candidates, block, repeats, size,
                                row_of, a, W, offset, products):
    """``products[c]``: the joint predictive of a table's tokens ``block`` under dish
    ``candidates[c]`` (``_table_predictive_log``'s categorical product, the tokens counted from
    ``offset``), the dishes in the inner loop over the word-major counts (``word_major[W]`` the
    dishes' totals). For at most 16 tokens: every ratio is at least :math:`a/(n + Wa)`."""
    for c in range(n_candidates):
        products[c] = 1.0
    for s in range(size):
        counts_of_word = word_major[row_of[block[s]]]
        extra = repeats[s] + a
        for c in range(n_candidates):
            k = candidates[c]
            products[c] *= (counts_of_word[k] + extra) / (word_major[W, k] + W * a + offset + s)


@njit(cache=True, inline="always")
def _block_logs_categorical(stats, word_major, candidates, n_candidates, block, repeats, size,
                            row_of, a, products, logs):
    """``logs[c]``: the log of :func:`_block_products_categorical` for any number of tokens,
    products of up to 16 ratios between logarithms, so none underflows."""
    W = stats.shape[1] - 1
    for c in range(n_candidates):
        logs[c] = 0.0
    for first in range(0, size, 16):
        last = min(size, first + 16)
        _block_products_categorical(word_major, candidates, n_candidates, block[first:last],
                                    repeats[first:last], last - first, row_of, a, W, first,
                                    products)
        for c in range(n_candidates):
            logs[c] += math.log(products[c])


@njit(cache=True)
def _bucket_scratch(group_ptr, width):
    """Scratch for :func:`_bucket_customers`: table labels are below ``width`` (the dish
    table's), a group holds at most the widest group's customers."""
    widest = 1
    for j in range(group_ptr.shape[0] - 1):
        widest = max(widest, group_ptr[j + 1] - group_ptr[j])
    return (np.zeros(width + 1, dtype=np.int64), np.zeros(width, dtype=np.int64),
            np.empty(widest, dtype=np.int64), np.zeros(widest))


@njit(cache=True)
def _bucket_customers(table_of, row_of, start, end, fill, cursor, members, repeats, same_word):
    """The customers ``start``..``end`` of one group bucketed by table: table t's are
    ``members[fill[t]:fill[t + 1]]``, in order; with ``same_word``, ``repeats[s]`` counts the
    earlier customers of ``members[s]``'s word at its table (else 0). Returns the number of
    table slots the group uses."""
    n_slots = 0
    for i in range(start, end):
        n_slots = max(n_slots, table_of[i] + 1)
    for t in range(n_slots + 1):
        fill[t] = 0
    for i in range(start, end):
        fill[table_of[i] + 1] += 1
    for t in range(n_slots):
        fill[t + 1] += fill[t]
    for t in range(n_slots):
        cursor[t] = fill[t]
    for i in range(start, end):
        t = table_of[i]
        members[cursor[t]] = i
        cursor[t] += 1
    for s in range(end - start):
        repeats[s] = 0.0
    if same_word:
        for t in range(n_slots):
            for s in range(fill[t], fill[t + 1]):
                for q in range(fill[t], s):
                    if row_of[members[q]] == row_of[members[s]]:
                        repeats[s] += 1.0
    return n_slots


@njit(cache=True)
def collapsed_dish_step(kernel, group_ptr, table_of, row_of, points, prior_mean, settings, stats,
                        table_dish, beta, n_dishes, tail, gamma0, seed):
    r"""Redraw every occupied table's dish with the atoms integrated out, given :math:`\beta`.

    .. math::

        P(k_{jt} = k \mid \beta, \text{other tables}) \propto \beta_k\,
        p(y_{jt} \mid \text{other customers of dish } k),

    over the instantiated dishes and the unbroken tail. Every dish nobody else eats (an empty
    instantiated one, or any in the tail) has the prior predictive, so they are one candidate
    of weight :math:`(\sum_{k\ \text{empty}}\beta_k + \text{tail})\,p_\text{new}(y_{jt})`; when
    it is chosen, the dish is an empty instantiated one with probability proportional to its
    :math:`\beta_k`, or one in the tail, found by breaking further prior sticks.
    Tables are visited one after another (serial). ``stats`` holds every dish's sufficient
    statistics, rows from ``n_dishes`` on zero (one more row than ``beta``); both grow when new
    dishes need room. Returns ``beta, stats, n_dishes, tail``.
    """
    np.random.seed(seed)
    J = group_ptr.shape[0] - 1
    last = stats.shape[1] - 1  # the token (point) count of every dish
    logs = np.empty(beta.shape[0] + 1)
    candidates = np.empty(beta.shape[0] + 1, dtype=np.int64)
    products = np.empty(beta.shape[0] + 1)
    # categorical: the word counts and totals word-major too, so that one word's counts under
    # every dish are contiguous (the dish loop below reads them for every customer)
    word_major = (np.ascontiguousarray(stats.T) if kernel == 0
                  else np.zeros((1, stats.shape[0])))
    W_all = stats.shape[1] - 1
    fill, cursor, members, repeats = _bucket_scratch(group_ptr, table_dish.shape[1])
    for j in range(J):
        start, end = group_ptr[j], group_ptr[j + 1]
        # customers of every table of the group, bucketed (earlier customers of the same
        # word at the same table counted for tokens)
        n_slots = _bucket_customers(table_of, row_of, start, end, fill, cursor, members,
                                    repeats, kernel == 0)
        for t in range(n_slots):
            count = fill[t + 1] - fill[t]
            if count == 0:
                continue
            block = members[fill[t]:fill[t + 1]]
            block_repeats = repeats[fill[t]:fill[t + 1]]
            old = table_dish[j, t]
            for s in range(count):
                _remove_from_stats(kernel, stats, old, block[s], row_of[block[s]], points)
                if kernel == 0:
                    word_major[row_of[block[s]], old] -= 1.0
                    word_major[last, old] -= 1.0
            n_candidates = 0
            empty_mass = 0.0
            for k in range(n_dishes):
                if beta[k] <= 0.0:
                    continue
                # the dish's count (word-major for tokens: one contiguous row)
                if (word_major[last, k] if kernel == 0 else stats[k, last]) == 0.0:
                    empty_mass += beta[k]
                    continue
                candidates[n_candidates] = k
                n_candidates += 1
            uniform = np.random.random()
            if kernel == 0 and count <= 16:
                # weights, not logarithms: 16 ratios (each at least a/(n + Wa)) times beta
                # cannot underflow but where beta is tiny, and then the logs take over
                _block_products_categorical(word_major, candidates, n_candidates, block,
                                            block_repeats, count, row_of, settings[0], W_all, 0,
                                            logs)
                top = 0.0
                for c in range(n_candidates):
                    logs[c] *= beta[candidates[c]]
                    top = max(top, logs[c])
                logs[n_candidates] = (empty_mass + tail) * math.exp(_table_predictive_log(
                    kernel, stats, n_dishes, block, count, row_of, points, prior_mean,
                    settings, block_repeats))
                top = max(top, logs[n_candidates])
                if top > _TINY:
                    c = _draw_from_weights(logs, n_candidates + 1, uniform)
                    linear = True
                else:
                    linear = False
            else:
                linear = False
            if linear:
                pass  # drawn above
            elif kernel == 0:
                _block_logs_categorical(stats, word_major, candidates, n_candidates, block,
                                        block_repeats, count, row_of, settings[0], products,
                                        logs)
                for c in range(n_candidates):
                    logs[c] += math.log(beta[candidates[c]])
            else:
                for c in range(n_candidates):
                    k = candidates[c]
                    logs[c] = math.log(beta[k]) + _table_predictive_log(
                        kernel, stats, k, block, count, row_of, points, prior_mean, settings,
                        block_repeats)
            if not linear:
                # every dish nobody else eats: the prior predictive (statistics row n_dishes
                # is kept at zero for this)
                logs[n_candidates] = math.log(empty_mass + tail) + _table_predictive_log(
                    kernel, stats, n_dishes, block, count, row_of, points, prior_mean,
                    settings, block_repeats)
                c = _draw_from_logs(logs, n_candidates + 1, uniform)
            if c < n_candidates:
                k = candidates[c]
            else:
                # which empty dish: an instantiated one by its weight, else one in the tail
                target = np.random.random() * (empty_mass + tail)
                k = -1
                running = 0.0
                for d in range(n_dishes):
                    if beta[d] > 0.0 and stats[d, last] == 0.0:
                        running += beta[d]
                        if target < running:
                            k = d
                            break
                if k < 0:
                    # in the tail: break prior sticks until the cumulative mass passes a
                    # uniform point of it
                    target = np.random.random() * tail
                    running = 0.0
                    while True:
                        if n_dishes + 1 >= beta.shape[0]:
                            # room for more dishes: copies twice the size (rows beyond stay
                            # zero)
                            bigger = np.zeros(2 * beta.shape[0])
                            bigger[: beta.shape[0]] = beta
                            beta = bigger
                            more = np.zeros((2 * stats.shape[0], stats.shape[1]))
                            more[: stats.shape[0]] = stats
                            stats = more
                            logs = np.empty(beta.shape[0] + 1)  # scratch: nothing to keep
                            candidates = np.empty(beta.shape[0] + 1, dtype=np.int64)
                            products = np.empty(beta.shape[0] + 1)
                            if kernel == 0:
                                wider = np.zeros((word_major.shape[0], stats.shape[0]))
                                wider[:, : word_major.shape[1]] = word_major
                                word_major = wider
                        stick = np.random.beta(1.0, gamma0)
                        beta[n_dishes] = tail * stick
                        tail *= 1.0 - stick
                        running += beta[n_dishes]
                        n_dishes += 1
                        if running > target:
                            break
                    k = n_dishes - 1
            table_dish[j, t] = k
            for s in range(count):
                _add_to_stats(kernel, stats, k, block[s], row_of[block[s]], points)
                if kernel == 0:
                    word_major[row_of[block[s]], k] += 1.0
                    word_major[last, k] += 1.0
    return beta, stats, n_dishes, tail


def _customer_step_informed(group_ptr, row_of, likelihood, loglik, table_dish, table_weight,
                            n_tables, table_slice, dish_slice, sorted_beta, by_weight, counts,
                            uniforms, table_of):
    r"""Every customer's table, one customer after another within a group, with the dishes of
    empty tables integrated out; in place in ``table_of``, ``table_dish`` and ``counts``.

    Every instantiated table t keeps a dish slice :math:`v_t` (occupied tables: drawn with
    the dish sticks; empty ones: drawn with a dish from :math:`\beta` that is then forgotten).
    Customer i leaves its table (a table left empty forgets its dish), then joins table t and,
    if t is empty, dish k with probability

    .. math::

        \propto 1\{u_i \le \gamma_t\} \times \begin{cases} f_{k_t}(y_i) & t \text{ occupied}\\
        1\{v_t \le \beta_k\} f_k(y_i) / N(v_t) & t \text{ empty}, \end{cases}

    the exact conditional of the pair: an empty table's dish, integrated out, contributes
    :math:`N(v_t) = \#\{k: \beta_k \ge v_t\}` to the joint density while nobody sits there.
    Unlike drawing empty tables' dishes blindly from :math:`\beta`, a customer can open a table
    at whichever reachable dish fits it.

    The dishes above :math:`v_t` (``dish_slice[j, t]``) are the first :math:`N(v_t)` of
    ``by_weight`` (dishes by decreasing :math:`\beta`, ``sorted_beta``), and the weights are
    ``likelihood`` :math:`= f_k(y)` times any constant of its row at most 1 over its
    largest entry (no exponential per candidate); a customer whose candidates' weights sum
    to less than ``_TINY`` (1e-250: all far below the row's scale, where some might have
    underflowed) is drawn again from ``loglik``.
    """
    J = group_ptr.shape[0] - 1
    K = by_weight.shape[0]
    for j in prange(J):
        T = n_tables[j]
        weights = np.empty(T * (K + 1))
        tables = np.empty(T * (K + 1), dtype=np.int64)
        dishes = np.empty(T * (K + 1), dtype=np.int64)
        reach = np.empty(T, dtype=np.int64)
        for t in range(T):
            reach[t] = _count_at_least(sorted_beta, dish_slice[j, t])
        for i in range(group_ptr[j], group_ptr[j + 1]):
            r = row_of[i]
            old = table_of[i]
            counts[j, old] -= 1
            if counts[j, old] == 0:
                table_dish[j, old] = -1
            count = 0
            for t in range(T):
                if table_weight[j, t] < table_slice[i]:
                    continue
                if table_dish[j, t] >= 0:
                    weights[count] = likelihood[r, table_dish[j, t]]
                    tables[count] = t
                    dishes[count] = table_dish[j, t]
                    count += 1
                elif reach[t] > 0:
                    # the empty table's integrated dish contributes N(v_t), the number of dishes
                    # above its slice, to every other choice: divide it out here
                    share = 1.0 / reach[t]
                    for q in range(reach[t]):
                        k = by_weight[q]
                        weights[count] = likelihood[r, k] * share
                        tables[count] = t
                        dishes[count] = k
                        count += 1
            total = 0.0
            for c in range(count):
                total += weights[c]
            if total > _TINY:
                c = _draw_from_weights(weights, count, uniforms[i])
            else:
                for c in range(count):
                    t = tables[c]
                    share = 1.0 if table_dish[j, t] >= 0 else 1.0 / reach[t]
                    weights[c] = loglik[r, dishes[c]] + math.log(share)
                c = _draw_from_logs(weights, count, uniforms[i])
            t = tables[c]
            table_dish[j, t] = dishes[c]
            counts[j, t] += 1
            table_of[i] = t


customer_step_informed = twice(_customer_step_informed)


@njit(cache=True, inline="always")
def _sparse_find(nz_ptr, nz_len, nz_dish, r, k):
    """Where dish k is in word r's list, or -1."""
    for p in range(nz_ptr[r], nz_ptr[r] + nz_len[r]):
        if nz_dish[p] == k:
            return p
    return -1


@njit(cache=True, inline="always")
def _sparse_add(nz_ptr, nz_len, nz_dish, nz_count, r, k, amount):
    """``amount`` more (or, negative, fewer) tokens of word r at dish k; a dish left with none
    leaves the word's list (the last one takes its place)."""
    p = _sparse_find(nz_ptr, nz_len, nz_dish, r, k)
    if p < 0:
        p = nz_ptr[r] + nz_len[r]
        nz_dish[p] = k
        nz_count[p] = 0.0
        nz_len[r] += 1
    nz_count[p] += amount
    if nz_count[p] == 0.0:
        last = nz_ptr[r] + nz_len[r] - 1
        nz_dish[p] = nz_dish[last]
        nz_count[p] = nz_count[last]
        nz_len[r] -= 1


@njit(cache=True)
def _word_dish_lists(row_of, dish_of, n_words, n_labels):
    r"""The token statistics of every dish, sparse: ``totals[k]`` tokens at dish k
    (``n_labels`` of them) and every word's list of the dishes that use it with their counts
    (``nz_dish``, ``nz_count`` at ``nz_ptr[w]:nz_ptr[w] + nz_len[w]``; room for as many dishes
    as the word has tokens, the most it can be in). No word x dish table: a short text's dish
    uses few words.

    Built in O(N + W + labels): the tokens bucketed by word (a counting pass, token order kept
    within a word), then each word's dishes listed in the order they first appear, repeats found
    through a per-label mark. The lists are those :func:`_sparse_add` token by token would
    build (same entries, same order) at a tenth of its cost, whose linear search per token
    walked the long lists of frequent words (1.2 of the 5.6 ms of a collapsed dish step on
    tweet)."""
    N = row_of.shape[0]
    totals = np.zeros(n_labels)
    for i in range(N):
        totals[dish_of[i]] += 1.0
    nz_ptr = _word_offsets(row_of, n_words)
    cursor = nz_ptr[:-1].copy()
    by_word = np.empty(max(N, 1), dtype=np.int64)  # every token's dish, grouped by word
    for i in range(N):
        by_word[cursor[row_of[i]]] = dish_of[i]
        cursor[row_of[i]] += 1
    nz_len = np.zeros(n_words, dtype=np.int64)
    nz_dish = np.empty(max(N, 1), dtype=np.int64)
    nz_count = np.zeros(max(N, 1))
    where = np.full(n_labels, -1, dtype=np.int64)  # a label's place in the current list
    for w in range(n_words):
        first, n = nz_ptr[w], 0
        for p in range(nz_ptr[w], nz_ptr[w + 1]):
            k = by_word[p]
            if where[k] < 0:
                where[k] = first + n
                nz_dish[first + n] = k
                n += 1
            nz_count[where[k]] += 1.0
        for p in range(first, first + n):
            where[nz_dish[p]] = -1
        nz_len[w] = n
    return totals, nz_ptr, nz_len, nz_dish, nz_count


# the collapsed dish step's tables of at most this many tokens are weighed by products (no
# logarithm): every ratio is at least a / (n + Wa)
_PRODUCT_TOKENS = 16


@njit(cache=True, inline="always")
def _rising_inverses(reciprocals, k, total, Wa):
    r"""``reciprocals[n, k]`` :math:`= 1/\prod_{s<n}(c_k + Wa + s)` for n up to
    ``_PRODUCT_TOKENS`` (dish k's ``total`` tokens): the denominators of a table's joint
    predictive, the same for every table of n tokens (size-major: a walk over the dishes for
    one size reads one row)."""
    value = 1.0
    reciprocals[0, k] = 1.0
    for n in range(1, reciprocals.shape[0]):
        value /= total + Wa + n - 1
        reciprocals[n, k] = value


@njit(cache=True, inline="always")
def _shift_smoothing(smoothing, reciprocals, k, weight, sign):
    """Add (``sign`` 1) or take away (-1) dish k's terms ``weight * reciprocals[n, k]``."""
    for n in range(smoothing.shape[0]):
        smoothing[n] += sign * weight * reciprocals[n, k]


@njit(cache=True)
def _fresh_smoothing(smoothing, reciprocals, beta, n_dishes):
    r""":math:`Q_n = \sum_{k < K} \beta_k / \prod_{s<n}(c_k + Wa + s)`, summed afresh."""
    for n in range(smoothing.shape[0]):
        smoothing[n] = 0.0
    for k in range(n_dishes):
        _shift_smoothing(smoothing, reciprocals, k, beta[k], 1.0)


# the smoothing sums are summed afresh after this many tables (rounding cannot build up)
_REFRESH_TABLES = 64


@njit(cache=True)
def collapsed_dish_step_tokens(group_ptr, table_of, row_of, table_dish, n_words, a, beta,
                               n_dishes, tail, gamma0, seed):
    r""":func:`collapsed_dish_step` for the categorical kernel, the same conditional with each
    table's cost in the dishes that use its words rather than in every dish (the bucket split
    of Yao, Mimno & McCallum 2009). A table's joint predictive under dish k,

    .. math::

        \prod_s \frac{c_{k w_s} + r_s + a}{c_k + Wa + s}
        = C \cdot R_{kn} \cdot \rho_k, \quad C = \prod_s (r_s + a),\
        R_{kn} = \prod_{s<n} \frac{1}{c_k + Wa + s},\
        \rho_k = \prod_{s:\, c_{k w_s} > 0} \frac{c_{k w_s} + r_s + a}{r_s + a} \ge 1

    (:math:`r_s` earlier tokens of the same word at the table, n its tokens), so that its
    weights :math:`\beta_k C R_{kn}\rho_k` over the instantiated dishes (an empty one has
    :math:`c_k = 0`) and :math:`\text{tail}\cdot C R_{0n}` for the unbroken tail split into
    a word bucket :math:`C\sum_{k:\,\rho_k > 1}\beta_k R_{kn}(\rho_k - 1)` over the dishes
    in the table's words' lists and a smoothing bucket
    :math:`C(Q_n + \text{tail}\cdot R_{0n})`, :math:`Q_n = \sum_k \beta_k R_{kn}` kept up to
    date per table size as tables move (:func:`_rising_inverses` per dish; summed afresh every
    ``_REFRESH_TABLES`` tables). One uniform picks the bucket and the dish in it; a dish in the
    tail is found by breaking prior sticks (another uniform, and the Beta draws). Tables of more
    than ``_PRODUCT_TOKENS`` tokens, or whose weights all but underflow, are weighed by
    logarithms over every dish, :func:`collapsed_dish_step`'s way. The word lists keep a table
    at its old dish while it is weighed (its own tokens taken off that dish's counts where they
    are read) and change only when it moves: most tables stay, and the lists' linear searches
    were half the step's time (tweet: 4.4 -> 2.5 ms a step). Returns ``beta, n_dishes, tail``
    and the bookkeeping at the end (tokens per dish, :math:`Q_n`, the word lists), for tests.
    """
    np.random.seed(seed)
    J = group_ptr.shape[0] - 1
    N = row_of.shape[0]
    W = n_words
    Wa = W * a
    cap = beta.shape[0]
    dish_of = np.empty(N, dtype=np.int64)
    for j in range(J):
        for i in range(group_ptr[j], group_ptr[j + 1]):
            dish_of[i] = table_dish[j, table_of[i]]
    totals, nz_ptr, nz_len, nz_dish, nz_count = _word_dish_lists(row_of, dish_of, W, cap)
    reciprocals = np.empty((_PRODUCT_TOKENS + 1, cap))
    for k in range(cap):
        _rising_inverses(reciprocals, k, totals[k], Wa)
    empty_reciprocals = np.empty((_PRODUCT_TOKENS + 1, 1))
    _rising_inverses(empty_reciprocals, 0, 0.0, Wa)
    smoothing = np.zeros(_PRODUCT_TOKENS + 1)
    order = np.arange(cap)  # the dishes by decreasing weight, new ones after them
    order[:n_dishes] = np.argsort(-beta[:n_dishes], kind="mergesort")
    weights = np.empty(cap + 1)
    candidates = np.empty(cap + 1, dtype=np.int64)
    values = np.empty(cap + 1)  # long tables: every dish's running product
    seen_at_dish = np.zeros(cap)  # long tables: a token's word's count at every dish, else 0
    correction = np.ones(cap)
    stamp = np.full(cap, -1, dtype=np.int64)
    touched = np.empty(cap, dtype=np.int64)
    fill, cursor, members, repeats = _bucket_scratch(group_ptr, table_dish.shape[1])
    own = np.zeros(repeats.shape[0])  # the table's tokens of each token's word
    word_tally = np.zeros(W)  # scratch, zero between tables
    n_table = 0
    for j in range(J):
        start, end = group_ptr[j], group_ptr[j + 1]
        n_slots = _bucket_customers(table_of, row_of, start, end, fill, cursor, members,
                                    repeats, True)
        for t in range(n_slots):
            count = fill[t + 1] - fill[t]
            if count == 0:
                continue
            if n_table % _REFRESH_TABLES == 0:
                _fresh_smoothing(smoothing, reciprocals, beta, n_dishes)
            n_table += 1
            block = members[fill[t]:fill[t + 1]]
            block_repeats = repeats[fill[t]:fill[t + 1]]
            old = table_dish[j, t]
            # the word lists keep the table at its old dish (they change only if it moves):
            # its own tokens are taken off dish old's counts where they are read
            for s in range(count):
                word_tally[row_of[block[s]]] += 1.0
            for s in range(count):
                own[s] = word_tally[row_of[block[s]]]
            for s in range(count):
                word_tally[row_of[block[s]]] = 0.0
            _shift_smoothing(smoothing, reciprocals, old, beta[old], -1.0)
            totals[old] -= count
            _rising_inverses(reciprocals, old, totals[old], Wa)
            _shift_smoothing(smoothing, reciprocals, old, beta[old], 1.0)
            uniform = np.random.random()
            k = -1
            linear = False
            if count <= _PRODUCT_TOKENS:
                # the corrections of the dishes that use the table's words
                common = 1.0
                n_touched = 0
                for s in range(count):
                    r = row_of[block[s]]
                    base = block_repeats[s] + a
                    common *= base
                    for p in range(nz_ptr[r], nz_ptr[r] + nz_len[r]):
                        d = nz_dish[p]
                        seen = nz_count[p] - own[s] if d == old else nz_count[p]
                        if seen == 0.0:
                            continue
                        if stamp[d] != n_table:
                            stamp[d] = n_table
                            correction[d] = 1.0
                            touched[n_touched] = d
                            n_touched += 1
                        correction[d] *= (seen + base) / base
                bucket = 0.0
                for c in range(n_touched):
                    d = touched[c]
                    weights[c] = beta[d] * reciprocals[count, d] * (correction[d] - 1.0)
                    bucket += weights[c]
                smooth = smoothing[count] + tail * empty_reciprocals[count, 0]
                if smooth < 0.0:  # rounding of the running sums (never seen): sum afresh
                    _fresh_smoothing(smoothing, reciprocals, beta, n_dishes)
                    smooth = smoothing[count] + tail * empty_reciprocals[count, 0]
                if common * (bucket + smooth) > _TINY:
                    linear = True
                    target = uniform * (bucket + smooth)
                    running = 0.0
                    for c in range(n_touched):
                        running += weights[c]
                        if target < running:
                            k = touched[c]
                            break
                    if k < 0:  # heaviest dishes first: the walk mostly stops early
                        for q in range(n_dishes):
                            d = order[q]
                            running += beta[d] * reciprocals[count, d]
                            if target < running:
                                k = d
                                break
                    in_tail = k < 0
            if not linear:
                n_candidates = 0
                empty_mass = 0.0
                for d in range(n_dishes):
                    if beta[d] <= 0.0:
                        continue
                    if totals[d] == 0.0:
                        empty_mass += beta[d]
                        continue
                    candidates[n_candidates] = d
                    n_candidates += 1
                # logarithms: the same factors, products of at most _PRODUCT_TOKENS ratios,
                # token by token for every dish at once: each token's word list is spread
                # over the dishes once (a search of the list for every dish and token was
                # most of a 20 Newsgroups sweep), each dish's factors in the same order
                for c in range(n_candidates + 1):
                    d = candidates[c] if c < n_candidates else -1
                    weights[c] = math.log(beta[d] if d >= 0 else empty_mass + tail)
                    values[c] = 1.0
                for s in range(count):
                    r = row_of[block[s]]
                    first, stop = nz_ptr[r], nz_ptr[r] + nz_len[r]
                    for p in range(first, stop):
                        seen_at_dish[nz_dish[p]] = nz_count[p]
                    repeat = block_repeats[s]
                    for c in range(n_candidates + 1):
                        seen, dish_total = 0.0, 0.0
                        if c < n_candidates:
                            d = candidates[c]
                            seen = seen_at_dish[d] - own[s] if d == old else seen_at_dish[d]
                            dish_total = totals[d]
                        values[c] *= (seen + repeat + a) / (dish_total + Wa + s)
                    if (s + 1) % _PRODUCT_TOKENS == 0:
                        for c in range(n_candidates + 1):
                            weights[c] += math.log(values[c])
                            values[c] = 1.0
                    for p in range(first, stop):
                        seen_at_dish[nz_dish[p]] = 0.0
                for c in range(n_candidates + 1):
                    weights[c] += math.log(values[c])
                c = _draw_from_logs(weights, n_candidates + 1, uniform)
                in_tail = False
                if c < n_candidates:
                    k = candidates[c]
                else:
                    # which empty dish: an instantiated one by its weight, else one in the tail
                    target = np.random.random() * (empty_mass + tail)
                    running = 0.0
                    for d in range(n_dishes):
                        if beta[d] > 0.0 and totals[d] == 0.0:
                            running += beta[d]
                            if target < running:
                                k = d
                                break
                    in_tail = k < 0
            if in_tail:
                # break prior sticks until the cumulative mass passes a uniform point of it
                target = np.random.random() * tail
                running = 0.0
                while True:
                    if n_dishes + 1 >= cap:
                        grown = 2 * cap
                        bigger = np.zeros(grown)
                        bigger[:cap] = beta
                        beta = bigger
                        more = np.zeros(grown)
                        more[:cap] = totals
                        totals = more
                        rows = np.empty((_PRODUCT_TOKENS + 1, grown))
                        rows[:, :cap] = reciprocals
                        for d in range(cap, grown):
                            _rising_inverses(rows, d, 0.0, Wa)
                        reciprocals = rows
                        longer = np.arange(grown)
                        longer[:cap] = order
                        order = longer
                        more = np.ones(grown)
                        more[:cap] = correction
                        correction = more
                        marks = np.full(grown, -1, dtype=np.int64)
                        marks[:cap] = stamp
                        stamp = marks
                        touched = np.empty(grown, dtype=np.int64)
                        weights = np.empty(grown + 1)
                        candidates = np.empty(grown + 1, dtype=np.int64)
                        values = np.empty(grown + 1)
                        seen_at_dish = np.zeros(grown)
                        cap = grown
                    stick = np.random.beta(1.0, gamma0)
                    beta[n_dishes] = tail * stick
                    tail *= 1.0 - stick
                    _shift_smoothing(smoothing, reciprocals, n_dishes, beta[n_dishes], 1.0)
                    running += beta[n_dishes]
                    n_dishes += 1
                    if running > target:
                        break
                k = n_dishes - 1
            table_dish[j, t] = k
            if k != old:
                for s in range(count):
                    _sparse_add(nz_ptr, nz_len, nz_dish, nz_count, row_of[block[s]], old, -1.0)
                    _sparse_add(nz_ptr, nz_len, nz_dish, nz_count, row_of[block[s]], k, 1.0)
            _shift_smoothing(smoothing, reciprocals, k, beta[k], -1.0)
            totals[k] += count
            _rising_inverses(reciprocals, k, totals[k], Wa)
            _shift_smoothing(smoothing, reciprocals, k, beta[k], 1.0)
    return beta, n_dishes, tail, (totals, smoothing, nz_ptr, nz_len, nz_dish, nz_count)


@njit(cache=True)
def seating_log_prior(group_ptr, counts, table_dish, alpha0, gamma0):
    r"""The franchise's log partition probability of the seating (``counts[j, t]`` customers,
    ``table_dish[j, t]`` dishes): :math:`\sum_j [T_j\log\alpha_0 + \log\Gamma(\alpha_0) -
    \log\Gamma(\alpha_0 + n_j) + \sum_t \log\Gamma(n_{jt})] + K\log\gamma_0 +
    \log\Gamma(\gamma_0) - \log\Gamma(\gamma_0 + m) + \sum_k \log\Gamma(m_k)`."""
    J, width = counts.shape
    log_alpha, gamma_alpha = math.log(alpha0), math.lgamma(alpha0)
    value = 0.0
    top = -1
    for j in range(J):
        T = 0
        for t in range(width):
            if counts[j, t] > 0:
                T += 1
                value += math.lgamma(counts[j, t])
                top = max(top, table_dish[j, t])
        value += T * log_alpha + gamma_alpha - math.lgamma(alpha0 + group_ptr[j + 1]
                                                           - group_ptr[j])
    m = np.zeros(top + 1, dtype=np.int64)
    for j in range(J):
        for t in range(width):
            if counts[j, t] > 0:
                m[table_dish[j, t]] += 1
    K, total = 0, 0
    for k in range(top + 1):
        if m[k] > 0:
            K += 1
            total += m[k]
            value += math.lgamma(m[k])
    return value + K * math.log(gamma0) + math.lgamma(gamma0) - math.lgamma(gamma0 + total)


@njit(cache=True)
def marginal_likelihood_tokens(labels, rows, n_words, a):
    r""":math:`\sum_k \log p(y_{(k)})` of tokens, the atoms :math:`\mathrm{Dir}(a)`
    integrated out: :math:`\log\Gamma(Wa) - \log\Gamma(Wa + n_k) + \sum_w [\log\Gamma(a +
    n_{kw}) - \log\Gamma(a)]` over the labels used, each label's tokens counted per word in
    one scratch row (no label x word table)."""
    N = labels.shape[0]
    W = n_words
    K = 0
    for i in range(N):
        K = max(K, labels[i] + 1)
    if K > 2 * N:  # sparse labels: group the tokens by sorting
        order = np.argsort(labels)
    else:  # by counting
        order = counting_order(labels, K, np.arange(N))
    scratch = np.zeros(W, dtype=np.int64)
    Wa = W * a
    gamma_Wa, gamma_a = math.lgamma(Wa), math.lgamma(a)
    value = 0.0
    start = 0
    while start < N:
        stop = start
        while stop < N and labels[order[stop]] == labels[order[start]]:
            scratch[rows[order[stop]]] += 1
            stop += 1
        value += gamma_Wa - math.lgamma(Wa + (stop - start))
        for s in range(start, stop):
            w = rows[order[s]]
            if scratch[w] > 0:
                value += math.lgamma(a + scratch[w]) - gamma_a
                scratch[w] = 0
        start = stop
    return value


# ---------------------------------------------------------------------- the sweep's glue
# Small serial kernels for what were chains of numpy calls in the sweep: on a short text's
# tiny problems each numpy call's overhead was the cost. Each computes what the numpy chain did,
# in the same order, so the random draws fed to it and the chain are unchanged.


@njit(cache=True)
def dish_stick_parameters(counts, table_dish, gamma0):
    r"""Beta parameters of the dish sticks, :math:`m_k + 1` and :math:`m_{>k} + \gamma_0`
    (``m`` the occupied tables per dish, ``np.bincount`` long), and the number of occupied
    tables."""
    J, width = counts.shape
    top = -1
    n = 0
    for j in range(J):
        for t in range(width):
            if counts[j, t] > 0:
                top = max(top, table_dish[j, t])
                n += 1
    m = np.zeros(top + 1, dtype=np.int64)
    for j in range(J):
        for t in range(width):
            if counts[j, t] > 0:
                m[table_dish[j, t]] += 1
    a = np.empty(top + 1)
    b = np.empty(top + 1)
    after = 0
    for k in range(top, -1, -1):
        a[k] = m[k] + 1.0
        b[k] = after + gamma0
        after += m[k]
    return a, b, n


@njit(cache=True)
def stick_weights(sticks):
    """:math:`F(x)` of one row of sticks and the unbroken mass after the last
    (``_sampler._stick_weights`` for a vector)."""
    weights = np.empty(sticks.shape[0])
    remaining = 1.0
    for k in range(sticks.shape[0]):
        weights[k] = sticks[k] * remaining
        remaining *= 1.0 - sticks[k]
    return weights, remaining


@njit(cache=True)
def dish_slices(counts, table_dish, beta, uniforms):
    """Every occupied table's dish slice ``uniforms[c] * beta[dish]`` (the occupied tables in
    row-major order, inf elsewhere) and the least of them."""
    J, width = counts.shape
    dish_slice = np.full((J, width), np.inf)
    lowest = np.inf
    c = 0
    for j in range(J):
        for t in range(width):
            if counts[j, t] > 0:
                dish_slice[j, t] = uniforms[c] * beta[table_dish[j, t]]
                lowest = min(lowest, dish_slice[j, t])
                c += 1
    return dish_slice, lowest


@njit(cache=True)
def table_stick_parameters(counts, concentration):
    r"""Every group's tables up to its last occupied one (``last``), their flat offsets
    (``first``) and Beta parameters :math:`1 + n_{jt}`, :math:`\alpha_0 + n_{j,>t}`
    (:func:`_stick_parameters`, serially)."""
    J, width = counts.shape
    last = np.zeros(J, dtype=np.int64)
    for j in range(J):
        for t in range(width - 1, -1, -1):
            if counts[j, t] > 0:
                last[j] = t + 1
                break
    first = np.zeros(J + 1, dtype=np.int64)
    for j in range(J):
        first[j + 1] = first[j] + last[j]
    a = np.empty(first[J])
    b = np.empty(first[J])
    for j in range(J):
        after = 0.0
        for t in range(last[j] - 1, -1, -1):
            a[first[j] + t] = 1.0 + counts[j, t]
            b[first[j] + t] = concentration + after
            after += counts[j, t]
    return last, first, a, b


@njit(cache=True)
def groups_short_of(group_tail, lowest, need, n_tables):
    """The groups of ``need`` (all groups when it is empty... given as -1) whose unbroken mass
    is still at least their least slice, and the most tables any of them has."""
    n = 0
    for c in range(need.shape[0]):
        if group_tail[need[c]] >= lowest[need[c]]:
            n += 1
    out = np.empty(n, dtype=np.int64)
    widest = -1
    n = 0
    for c in range(need.shape[0]):
        j = need[c]
        if group_tail[j] >= lowest[j]:
            out[n] = j
            widest = max(widest, n_tables[j])
            n += 1
    return out, widest


@njit(cache=True)
def break_table_sticks(need, sticks, weights, group_tail, n_tables):
    """One more table stick for every group of ``need``: its weight, the group's tail."""
    for c in range(need.shape[0]):
        j = need[c]
        weights[j, n_tables[j]] = group_tail[j] * sticks[c]
        group_tail[j] *= 1.0 - sticks[c]
        n_tables[j] += 1


@njit(cache=True)
def empty_reachable(table_dish, n_tables):
    """The instantiated empty tables (below ``n_tables[j]``, no dish) and their number."""
    J, width = table_dish.shape
    empty = np.zeros((J, width), dtype=np.bool_)
    n = 0
    for j in range(J):
        for t in range(n_tables[j]):
            if table_dish[j, t] < 0:
                empty[j, t] = True
                n += 1
    return empty, n


@njit(cache=True)
def dishes_from_beta(table_dish, empty, beta, draws):
    """The empty tables' dishes (row-major order) from uniform ``draws`` by the cumulative
    weights (``np.searchsorted(np.cumsum(beta), draws, side="right")``, at most the last
    dish)."""
    K = beta.shape[0]
    cumulative = np.empty(K)
    running = 0.0
    for k in range(K):
        running += beta[k]
        cumulative[k] = running
    J, width = table_dish.shape
    c = 0
    for j in range(J):
        for t in range(width):
            if empty[j, t]:
                low, high = 0, K
                while low < high:
                    middle = (low + high) // 2
                    if cumulative[middle] <= draws[c]:
                        low = middle + 1
                    else:
                        high = middle
                table_dish[j, t] = min(low, K - 1)
                c += 1


@njit(cache=True)
def empty_table_slices(table_dish, empty, dish_slice, beta, uniforms):
    """The informed step's slices: the occupied tables' ``dish_slice``, the empty tables'
    ``uniforms[c] * beta[dish]`` (row-major), inf elsewhere; the empty tables' dishes
    forgotten (-1). Returns the slices and the least of the empty tables'."""
    J, width = table_dish.shape
    slices = np.full((J, width), np.inf)
    slices[:, : dish_slice.shape[1]] = dish_slice
    lowest = np.inf
    c = 0
    for j in range(J):
        for t in range(width):
            if empty[j, t]:
                slices[j, t] = uniforms[c] * beta[table_dish[j, t]]
                lowest = min(lowest, slices[j, t])
                table_dish[j, t] = -1
                c += 1
    return slices, lowest


@njit(cache=True)
def by_weight(beta):
    """The dish weights in decreasing order and the dishes in that order, ties by label
    (``np.argsort(-beta, kind="stable")``)."""
    order = np.argsort(-beta, kind="mergesort")
    return beta[order], order


@njit(cache=True)
def forget_empty(table_dish, counts):
    """The dishes of the tables nobody sits at forgotten (-1), in place."""
    J, width = counts.shape
    for j in range(J):
        for t in range(width):
            if counts[j, t] == 0:
                table_dish[j, t] = -1


@njit(cache=True)
def compact_dishes(table_dish):
    """The dish labels of the occupied tables (``>= 0``) renumbered 0, 1, ... in order, in
    place (``_sampler.compact``)."""
    J, width = table_dish.shape
    top = -1
    for j in range(J):
        for t in range(width):
            top = max(top, table_dish[j, t])
    new = np.zeros(top + 1, dtype=np.int64)
    for j in range(J):
        for t in range(width):
            if table_dish[j, t] >= 0:
                new[table_dish[j, t]] = 1
    running = -1
    for k in range(top + 1):
        running += new[k]
        new[k] = running
    for j in range(J):
        for t in range(width):
            if table_dish[j, t] >= 0:
                table_dish[j, t] = new[table_dish[j, t]]


@njit(cache=True)
def label_sizes(counts, table_dish):
    """Occupied tables per dish label (``np.bincount`` long) and every group's offset into the
    table relabelling's uniforms (two per occupied table)."""
    J, width = counts.shape
    top = -1
    first = np.zeros(J + 1, dtype=np.int64)
    for j in range(J):
        n = 0
        for t in range(width):
            if counts[j, t] > 0:
                top = max(top, table_dish[j, t])
                n += 1
        first[j + 1] = first[j] + 2 * n
    m = np.zeros(top + 1, dtype=np.int64)
    for j in range(J):
        for t in range(width):
            if counts[j, t] > 0:
                m[table_dish[j, t]] += 1
    return m, first


@njit(cache=True)
def relabel_dishes(counts, table_dish, new_dish):
    """The occupied tables' dishes through ``new_dish``, in place."""
    J, width = counts.shape
    for j in range(J):
        for t in range(width):
            if counts[j, t] > 0:
                table_dish[j, t] = new_dish[table_dish[j, t]]


@njit(cache=True)
def seating_size(counts, table_dish):
    """Dishes and tables in use."""
    J, width = counts.shape
    top = -1
    tables = 0
    for j in range(J):
        for t in range(width):
            if counts[j, t] > 0:
                top = max(top, table_dish[j, t])
                tables += 1
    seen = np.zeros(top + 1, dtype=np.bool_)
    dishes = 0
    for j in range(J):
        for t in range(width):
            if counts[j, t] > 0 and not seen[table_dish[j, t]]:
                seen[table_dish[j, t]] = True
                dishes += 1
    return dishes, tables


@njit(cache=True)
def group_majority(group_ptr, labels):
    """Every group's most frequent label, a tie to the tied label that occurs first in the
    group (:func:`mixbayes.partition.majority_labels` for groups of consecutive items)."""
    J = group_ptr.shape[0] - 1
    K = 1
    for i in range(labels.shape[0]):
        K = max(K, labels[i] + 1)
    tally = np.zeros(K, dtype=np.int64)
    out = np.zeros(J, dtype=np.int64)
    for j in range(J):
        most = 0
        for i in range(group_ptr[j], group_ptr[j + 1]):
            tally[labels[i]] += 1
            most = max(most, tally[labels[i]])
        for i in range(group_ptr[j], group_ptr[j + 1]):  # the first item of a top label
            if tally[labels[i]] == most:
                out[j] = labels[i]
                break
        for i in range(group_ptr[j], group_ptr[j + 1]):
            tally[labels[i]] = 0
    return out
