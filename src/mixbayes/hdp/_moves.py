r"""Exact auxiliary moves of the HDP sampler on the seating, sticks and atoms integrated out.

Between sweeps the sampler's state is the labelled seating: every customer's table label, every
occupied table's dish label. Its posterior factorises as

.. math::

    \pi(\text{labels}, \text{partition} \mid y) = \pi(\text{partition} \mid y)\,
    p(\text{labels} \mid \text{partition}),

because neither the likelihood (atoms are exchangeable) nor the franchise's partition
probability sees labels. Two moves use this.

Labels (:func:`stick_labels`). With the sticks :math:`x_k \sim \mathrm{Beta}(1, c)` integrated
out, labels :math:`z` of items with :math:`n_k` items at label k have probability
:math:`\prod_k B(1 + n_k, c + n_{>k}) / B(1, c)`. Given only the partition into blocks, the
labels follow by filling label slots 0, 1, 2, ... in turn: with :math:`M` items in blocks not
yet placed, the next slot holds block b with probability :math:`n_b / (M + c)` and stays empty
with probability :math:`c / (M + c)` (the ratio of the block's stick integral to the partition
probability of the blocks left, by the exchangeable partition formula). So the labels are
redrawn exactly, from scratch: a size-biased order of the blocks with geometric runs of empty
labels between them - big clusters on early sticks, where the slices find them cheaply.

Customers reseated by the franchise's collapsed Gibbs sampler (:func:`crf_gibbs_pass`, Teh et
al. 2006): sticks and atoms integrated out, every customer chooses among all the tables of its
group and, for a new table, among all dishes, weighted by how well each fits, where the slice
steps offer only the tables and dishes above its slice variables. It is serial (every dish's
statistics change as customers move): about a third of a sweep's time on the 10,000-document
benchmark corpus. It moves the partition; the label redraw after it restores the labelled
posterior.

A sequentially allocated split-merge of dishes (Dahl 2005) was built and passed the same
enumeration tests, but did not raise NMI per sweep or per second on Amini et al.'s simulation,
dblp3 or a Gaussian example, so it is not part of the sampler.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .._kernel_tools import twice
from ._kernels import (_add_to_stats, _dish_from_buckets, _draw_from_weights, _predictive_log,
                       _remove_from_stats, _sparse_add, _word_dish_lists, unpacked_dishes)


@njit(cache=True)
def stick_labels(sizes, concentration, uniforms):
    r"""New labels of blocks with ``sizes`` (items per old label, zero for empty labels), drawn
    from their exact conditional given the partition (module docstring).

    ``uniforms`` holds at least two per block (nonzero size). Returns ``new_label`` (old label
    -> new label, -1 for empty old labels) and the number of label slots the new labels span.
    """
    L = sizes.shape[0]
    new_label = np.full(L, -1, dtype=np.int64)
    remaining = 0.0
    n_blocks = 0
    for b in range(L):
        if sizes[b] > 0:
            remaining += sizes[b]
            n_blocks += 1
    slot = 0
    u = 0
    for _ in range(n_blocks):
        # empty slots before the next block: each is empty with probability c / (M + c)
        log_empty = math.log(concentration / (remaining + concentration))
        slot += int(math.floor(math.log1p(-uniforms[u]) / log_empty))
        target = uniforms[u + 1] * remaining
        u += 2
        running = 0.0
        chosen = -1
        for b in range(L):
            if sizes[b] > 0 and new_label[b] < 0:
                chosen = b
                running += sizes[b]
                if target < running:
                    break
        new_label[chosen] = slot
        remaining -= sizes[chosen]
        slot += 1
    return new_label, slot


def _relabel_tables(group_ptr, counts, concentration, uniforms, first, new_label, spans):
    """:func:`stick_labels` for every group's tables: new labels into ``new_label`` (J, width)
    and each group's span into ``spans``. Group j reads ``uniforms[first[j]:first[j + 1]]``
    (two per occupied table)."""
    J = group_ptr.shape[0] - 1
    for j in prange(J):
        labels, span = stick_labels(counts[j], concentration, uniforms[first[j]:first[j + 1]])
        new_label[j] = labels
        spans[j] = span


def _apply_table_labels(group_ptr, table_of, table_dish, new_label, relabelled_dish):
    """Move customers and dishes to the new table labels (``relabelled_dish`` is the output
    table-dish array, filled with -1)."""
    J = group_ptr.shape[0] - 1
    for j in prange(J):
        for t in range(new_label.shape[1]):
            if new_label[j, t] >= 0:
                relabelled_dish[j, new_label[j, t]] = table_dish[j, t]
        for i in range(group_ptr[j], group_ptr[j + 1]):
            table_of[i] = new_label[j, table_of[i]]


# serial or parallel as the group loops are (work: _kernels.group_work)
relabel_tables = twice(_relabel_tables)
apply_table_labels = twice(_apply_table_labels)


@njit(cache=True, inline="always")
def _sum(values, count):
    """``values[:count].sum()`` in four interleaved partial sums (independent additions; the
    pass's draws, and so its figures in docs/benchmarks.md, follow this order of summation)."""
    s0 = s1 = s2 = s3 = 0.0
    head = count - count % 4
    for c in range(0, head, 4):
        s0 += values[c]
        s1 += values[c + 1]
        s2 += values[c + 2]
        s3 += values[c + 3]
    for c in range(head, count):
        s0 += values[c]
    return (s0 + s1) + (s2 + s3)


@njit(cache=True)
def _grow_columns(array, columns):
    """``array`` (2-D) with zero columns appended up to ``columns``."""
    grown = np.zeros((array.shape[0], columns))
    grown[:, : array.shape[1]] = array
    return grown


@njit(cache=True)
def _grow_rows(array, rows):
    """``array`` (2-D) with zero rows appended up to ``rows``."""
    grown = np.zeros((rows, array.shape[1]))
    grown[: array.shape[0]] = array
    return grown


@njit(cache=True)
def _grow_vector(vector, size, fill):
    """``vector`` with entries ``fill`` appended up to ``size``."""
    grown = np.full(size, fill)
    grown[: vector.shape[0]] = vector
    return grown


@njit(cache=True)
def _renumber_tables(j, start, end, n_slots, room, count, dish, new_slot, out_dish, out_ptr,
                     table_of):
    """Group ``j``'s occupied tables renumbered 0, 1, ... in slot order (their dishes packed
    into ``out_dish`` from ``out_ptr[j]``, ``out_ptr[j + 1]`` set), its customers' tables
    relabelled, and the scratch ``count`` and ``dish`` cleared for the next group."""
    used = 0
    for s in range(n_slots):
        if count[s] > 0.0:
            new_slot[s] = used
            out_dish[out_ptr[j] + used] = dish[s]
            used += 1
    out_ptr[j + 1] = out_ptr[j] + used
    for i in range(start, end):
        table_of[i] = new_slot[table_of[i]]
    for s in range(room):
        count[s] = 0.0
        dish[s] = -1


@njit(cache=True)
def crf_gibbs_pass(kernel, group_ptr, table_of, row_of, points, prior_mean, settings,
                   table_dish, stats, gamma0, alpha0, seed):
    r"""One pass of the franchise's collapsed Gibbs sampler over every customer (sticks and atoms
    integrated out): customer i of group j leaves its table, then sits at occupied table t with
    probability :math:`\propto n_{jt}\, p_{k_{jt}}(y_i)`, or at a new table with probability
    :math:`\propto \alpha_0 \bigl(\sum_k m_k p_k(y_i) + \gamma_0 p_\text{new}(y_i)\bigr) /
    (m_\cdot + \gamma_0)`, whose dish is then drawn in proportion to those terms (:math:`p_k`
    the predictive of dish k given its other customers).

    Categorical tokens use the weights themselves, :math:`p_k(w) = (c_{kw} + a)/(c_k + Wa)`,
    from word-major counts (one contiguous row per word) and reciprocal denominators kept up to
    date: no logarithm per candidate. Gaussian points go through logarithms.
    ``stats`` holds the statistics of dish labels ``0..L-1`` in rows (one more row, zero, for
    the empty dish). Tables are renumbered 0, 1, ... within every group and new dishes take free
    labels (the label redraw that follows sets both exactly). Returns the new ``table_dish``.
    """
    np.random.seed(seed)
    J = group_ptr.shape[0] - 1
    width = table_dish.shape[1]
    categorical = kernel == 0
    W = stats.shape[1] - 1
    a = settings[0]
    n_labels = stats.shape[0] - 1
    m = np.zeros(n_labels + 1)
    for j in range(J):
        for t in range(width):
            if table_dish[j, t] >= 0:
                m[table_dish[j, t]] += 1.0
    total_tables = m.sum()
    if categorical:
        word_major = np.ascontiguousarray(stats[:, :W].T)  # (W, labels + 1)
        inverse = np.empty(n_labels + 1)
        for d in range(n_labels + 1):
            inverse[d] = 1.0 / (stats[d, W] + W * a)
        totals = stats[:, W].copy()
    else:
        word_major = np.zeros((1, 1))
        inverse = np.zeros(1)
        totals = np.zeros(1)
    dish_weights = np.empty(n_labels + 1)
    out_ptr = np.zeros(J + 1, dtype=np.int64)
    out_dish = np.empty(row_of.shape[0] + J * width, dtype=np.int64)
    # scratch for the largest group, reused (a group of n customers uses at most width + n slots)
    largest = 0
    for j in range(J):
        largest = max(largest, group_ptr[j + 1] - group_ptr[j])
    count = np.zeros(width + largest)
    dish = np.full(width + largest, -1, dtype=np.int64)
    weights = np.empty(width + largest + 1)
    new_slot = np.full(width + largest, -1, dtype=np.int64)
    for j in range(J):
        start, end = group_ptr[j], group_ptr[j + 1]
        room = width + end - start
        n_slots = 0
        for t in range(width):
            dish[t] = table_dish[j, t]
        for i in range(start, end):
            count[table_of[i]] += 1.0
            n_slots = max(n_slots, table_of[i] + 1)
        for i in range(start, end):
            r = row_of[i]
            t = table_of[i]
            k = dish[t]
            if categorical:
                word_major[r, k] -= 1.0
                totals[k] -= 1.0
                inverse[k] = 1.0 / (totals[k] + W * a)
            else:
                _remove_from_stats(kernel, stats, k, i, r, points)
            count[t] -= 1.0
            if count[t] == 0.0:
                m[k] -= 1.0
                total_tables -= 1.0
                dish[t] = -1
                while n_slots > 0 and count[n_slots - 1] == 0.0:
                    n_slots -= 1
            # the dishes (for a new table) and the occupied tables
            if categorical:
                counts_of_word = word_major[r]
                for d in range(n_labels):
                    dish_weights[d] = m[d] * (counts_of_word[d] + a) * inverse[d]
                dish_weights[n_labels] = gamma0 / W
                for s in range(n_slots):
                    d = dish[s]
                    weights[s] = count[s] * (counts_of_word[d] + a) * inverse[d] if d >= 0 \
                        else 0.0
            else:
                top = -np.inf
                for d in range(n_labels + 1):
                    if d == n_labels or m[d] > 0.0:
                        dish_weights[d] = (math.log(gamma0 if d == n_labels else m[d])
                                           + _predictive_log(kernel, stats, d, i, r, points,
                                                             prior_mean, settings))
                        top = max(top, dish_weights[d])
                    else:
                        dish_weights[d] = -np.inf
                for s in range(n_slots):
                    if dish[s] >= 0:
                        weights[s] = math.log(count[s]) + _predictive_log(
                            kernel, stats, dish[s], i, r, points, prior_mean, settings)
                        top = max(top, weights[s])
                    else:
                        weights[s] = -np.inf
                for d in range(n_labels + 1):
                    dish_weights[d] = math.exp(dish_weights[d] - top)
                for s in range(n_slots):
                    weights[s] = math.exp(weights[s] - top)
            mixture = _sum(dish_weights, n_labels + 1)
            weights[n_slots] = alpha0 * mixture / (total_tables + gamma0)
            c = _draw_from_weights(weights, n_slots + 1, np.random.random())
            if c < n_slots:
                t = c
            else:
                # a new table, at the first free slot, and its dish
                t = 0
                while count[t] > 0.0:
                    t += 1
                n_slots = max(n_slots, t + 1)
                k = _draw_from_weights(dish_weights, n_labels + 1, np.random.random())
                if k == n_labels:
                    # a new dish: the first free label, growing the arrays when none is left
                    k = -1
                    for d in range(n_labels):
                        if m[d] == 0.0:
                            k = d
                            break
                    if k < 0:
                        # the empty dish's row (zero counts) becomes the new label, and the
                        # last of the grown rows the empty dish
                        k = n_labels
                        grown = 2 * n_labels + 2
                        stats = _grow_rows(stats, grown)
                        m = _grow_vector(m, grown, 0.0)
                        if categorical:
                            word_major = _grow_columns(word_major, grown)
                            totals = _grow_vector(totals, grown, 0.0)
                            inverse = _grow_vector(inverse, grown, 1.0 / (W * a))
                        n_labels = grown - 1
                        dish_weights = np.empty(grown)
                    # a free label's statistics are already zero (its customers all left)
                dish[t] = k
                m[k] += 1.0
                total_tables += 1.0
            table_of[i] = t
            count[t] += 1.0
            k = dish[t]
            if categorical:
                word_major[r, k] += 1.0
                totals[k] += 1.0
                inverse[k] = 1.0 / (totals[k] + W * a)
            else:
                _add_to_stats(kernel, stats, k, i, r, points)
        # renumber the group's tables 0, 1, ..., and leave the scratch clean
        _renumber_tables(j, start, end, n_slots, room, count, dish, new_slot, out_dish,
                         out_ptr, table_of)
    return unpacked_dishes(out_ptr, out_dish, J, width)


@njit(cache=True)
def crf_gibbs_pass_tokens(group_ptr, table_of, row_of, table_dish, n_words, a, gamma0, alpha0,
                          seed):
    r""":func:`crf_gibbs_pass` for the categorical kernel (the same conditionals, the same two
    uniforms a customer), each customer's cost in its group's tables and the dishes that use
    its word rather than every dish (the bucket split of Yao, Mimno & McCallum 2009):

    .. math::

        \sum_k m_k\,\frac{c_{kw} + a}{c_k + Wa} + \frac{\gamma_0}{W}
        = \underbrace{\sum_{k:\,c_{kw} > 0} \frac{m_k c_{kw}}{c_k + Wa}}_{\text{word bucket}}
        + a\underbrace{\sum_k \frac{m_k}{c_k + Wa}}_{S} + \frac{\gamma_0}{W},

    S kept up to date as customers move (and summed afresh at every group, so that rounding
    cannot build up), the word bucket over the word's list of dishes. A new table's dish is
    drawn from the same split: the word bucket's dishes, then every dish's smoothing share,
    then a new dish. The word lists keep a customer at its old dish while it chooses (its
    token taken off that dish's count where the word bucket reads it; the bucket walk also
    notes the word's count at each dish, which the tables read) and change only when the
    customer's dish does. ``table_dish`` holds dish labels ``0..L-1`` (compacted). Returns the new
    ``table_dish`` and the bookkeeping at the end (tables and tokens per dish label, the last
    group's S, the word lists), for tests.
    """
    np.random.seed(seed)
    J = group_ptr.shape[0] - 1
    N = row_of.shape[0]
    width = table_dish.shape[1]
    W = n_words
    Wa = W * a
    n_labels = 0
    for j in range(J):
        for t in range(width):
            n_labels = max(n_labels, table_dish[j, t] + 1)
    cap = n_labels + 1
    dish_of = np.empty(N, dtype=np.int64)
    for j in range(J):
        for i in range(group_ptr[j], group_ptr[j + 1]):
            dish_of[i] = table_dish[j, table_of[i]]
    totals, nz_ptr, nz_len, nz_dish, nz_count = _word_dish_lists(row_of, dish_of, W, cap)
    m = np.zeros(cap)
    for j in range(J):
        for t in range(width):
            if table_dish[j, t] >= 0:
                m[table_dish[j, t]] += 1.0
    total_tables = m.sum()
    inverse = np.empty(cap)
    for d in range(cap):
        inverse[d] = 1.0 / (totals[d] + Wa)
    out_ptr = np.zeros(J + 1, dtype=np.int64)
    out_dish = np.empty(N + J * width, dtype=np.int64)
    largest = 0
    for j in range(J):
        largest = max(largest, group_ptr[j + 1] - group_ptr[j])
    count = np.zeros(width + largest)
    dish = np.full(width + largest, -1, dtype=np.int64)
    weights = np.empty(width + largest + 1)
    new_slot = np.full(width + largest, -1, dtype=np.int64)
    new_weight = gamma0 / W
    smooth = 0.0
    # a word's count at each dish of its list, read by the customer's tables (stamped by
    # customer: no reset); the lists keep a customer at its old dish until it moves
    seen_at = np.zeros(cap)
    seen_by = np.full(cap, -1, dtype=np.int64)
    for j in range(J):
        start, end = group_ptr[j], group_ptr[j + 1]
        room = width + end - start
        n_slots = 0
        for t in range(width):
            dish[t] = table_dish[j, t]
        for i in range(start, end):
            count[table_of[i]] += 1.0
            n_slots = max(n_slots, table_of[i] + 1)
        smooth = 0.0  # S, afresh
        for d in range(cap):
            smooth += m[d] * inverse[d]
        for i in range(start, end):
            r = row_of[i]
            t = table_of[i]
            k = dish[t]
            smooth -= m[k] * inverse[k]
            old = k
            totals[k] -= 1.0
            inverse[k] = 1.0 / (totals[k] + Wa)
            count[t] -= 1.0
            if count[t] == 0.0:
                m[k] -= 1.0
                total_tables -= 1.0
                dish[t] = -1
                while n_slots > 0 and count[n_slots - 1] == 0.0:
                    n_slots -= 1
            smooth += m[k] * inverse[k]
            bucket = 0.0
            first, stop = nz_ptr[r], nz_ptr[r] + nz_len[r]
            for p in range(first, stop):
                d = nz_dish[p]
                seen = nz_count[p] - 1.0 if d == old else nz_count[p]
                seen_at[d] = seen
                seen_by[d] = i
                bucket += m[d] * seen * inverse[d]
            mixture = bucket + a * smooth + new_weight
            for s in range(n_slots):
                d = dish[s]
                if d >= 0:
                    seen = seen_at[d] if seen_by[d] == i else 0.0
                    weights[s] = count[s] * (seen + a) * inverse[d]
                else:
                    weights[s] = 0.0
            weights[n_slots] = alpha0 * mixture / (total_tables + gamma0)
            c = _draw_from_weights(weights, n_slots + 1, np.random.random())
            if c < n_slots:
                t = c
                k = dish[t]
                smooth -= m[k] * inverse[k]
            else:
                t = 0
                while count[t] > 0.0:
                    t += 1
                n_slots = max(n_slots, t + 1)
                # the dish: the word bucket, the smoothing shares, a new dish, in turn
                k = _dish_from_buckets(np.random.random() * mixture, nz_dish, first, stop,
                                       seen_at, m, inverse, a, cap)
                if k < 0:
                    # a new dish (also where rounding left the target at the very top): the
                    # first free label, growing the arrays when none is left
                    for d in range(cap):
                        if m[d] == 0.0:
                            k = d
                            break
                    if k < 0:
                        k = cap
                        grown = 2 * cap
                        m = _grow_vector(m, grown, 0.0)
                        totals = _grow_vector(totals, grown, 0.0)
                        inverse = _grow_vector(inverse, grown, 1.0 / Wa)
                        seen_at = _grow_vector(seen_at, grown, 0.0)
                        seen_by = _grow_vector(seen_by, grown, -1)
                        cap = grown
                smooth -= m[k] * inverse[k]
                dish[t] = k
                m[k] += 1.0
                total_tables += 1.0
            table_of[i] = t
            count[t] += 1.0
            if k != old:
                _sparse_add(nz_ptr, nz_len, nz_dish, nz_count, r, old, -1.0)
                _sparse_add(nz_ptr, nz_len, nz_dish, nz_count, r, k, 1.0)
            totals[k] += 1.0
            inverse[k] = 1.0 / (totals[k] + Wa)
            smooth += m[k] * inverse[k]
        _renumber_tables(j, start, end, n_slots, room, count, dish, new_slot, out_dish,
                         out_ptr, table_of)
    new_dish = unpacked_dishes(out_ptr, out_dish, J, width)
    # the running sums kept, for a test to check against recomputation from new_dish
    return new_dish, (m, totals, smooth, nz_ptr, nz_len, nz_dish, nz_count)
