"""The bucketed collapsed moves for tokens (issue 25) keep running sums and per-word lists of
dishes as customers and tables move: at the end of a pass they equal their recomputation from
the seating the pass leaves."""

import numpy as np
import pytest

import mixbayes as mb
from mixbayes.hdp import _kernels, _moves, _sampler


def _start(seed):
    corpus, _ = mb.datasets.make_hdp_data(30, 25, n_words=40, random_state=seed)
    data = mb.HDPMixture(word_prior=0.05)._grouped_tokens(corpus.counts, None)[0]
    rng = np.random.default_rng(seed)
    state = _sampler.initial_state(data, 3.0, 0.5, rng)
    occupied = state.table_dish >= 0
    state.table_dish[occupied] = _sampler.compact(state.table_dish[occupied])
    return data, state


def _dishes(data, table_of, table_dish):
    group = np.repeat(np.arange(data.n_groups), np.diff(data.group_ptr))
    return table_dish[group, table_of]


def _assert_lists(data, dish_of, nz_ptr, nz_len, nz_dish, nz_count):
    """Every word's list holds exactly the dishes that use it, with their token counts."""
    for w in range(data.n_words):
        here = slice(nz_ptr[w], nz_ptr[w] + nz_len[w])
        listed = dict(zip(nz_dish[here].tolist(), nz_count[here].tolist()))
        dishes, counts = np.unique(dish_of[data.rows == w], return_counts=True)
        assert listed == dict(zip(dishes.tolist(), counts.astype(float).tolist()))


def test_word_dish_lists_are_the_lists_built_token_by_token():
    """The counting build lists each word's dishes in the order a token-by-token build with
    ``_sparse_add`` does (same entries, same order, so the moves' draws are unchanged), with
    repeats, unused words and unused labels."""
    rng = np.random.default_rng(0)
    W, L, N = 30, 12, 400
    row_of = (rng.zipf(1.5, N) % (W - 5)).astype(np.int64)  # the last 5 words unused
    dish_of = rng.integers(0, L - 2, N)  # the last two labels unused
    built = _kernels._word_dish_lists(row_of, dish_of, W, L)
    nz_ptr = built[1]
    nz_len, nz_dish, nz_count = np.zeros(W, np.int64), np.zeros(N, np.int64), np.zeros(N)
    for r, k in zip(row_of, dish_of):
        _kernels._sparse_add.py_func(nz_ptr, nz_len, nz_dish, nz_count, r, k, 1.0)
    np.testing.assert_array_equal(built[0], np.bincount(dish_of, minlength=L))
    np.testing.assert_array_equal(built[2], nz_len)
    assert (built[2] == 0).any() and built[2].max() > 3  # unused words and long lists
    for w in range(W):
        here = slice(nz_ptr[w], nz_ptr[w] + nz_len[w])
        np.testing.assert_array_equal(built[3][here], nz_dish[here])
        np.testing.assert_array_equal(built[4][here], nz_count[here])
    _assert_lists(type("D", (), {"n_words": W, "rows": row_of}), dish_of, *built[1:])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_franchise_pass_sums_match_recomputation(seed):
    data, state = _start(seed)
    W, a = data.n_words, data.word_prior
    new_dish, (m, totals, smooth, *lists) = _moves.crf_gibbs_pass_tokens(
        data.group_ptr, state.table_of, data.rows, state.table_dish, W, a, 3.0, 0.5, seed)
    dish_of = _dishes(data, state.table_of, new_dish)
    tables = np.bincount(new_dish[new_dish >= 0], minlength=m.size)
    tokens = np.bincount(dish_of, minlength=m.size)
    np.testing.assert_array_equal(m, tables)
    np.testing.assert_array_equal(totals, tokens)
    np.testing.assert_allclose(smooth, (tables / (tokens + W * a)).sum(), rtol=1e-12)
    _assert_lists(data, dish_of, *lists)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_collapsed_dish_step_sums_match_recomputation(seed):
    data, state = _start(seed)
    W, a = data.n_words, data.word_prior
    K = int(state.table_dish.max()) + 1
    rng = np.random.default_rng(seed)
    beta = np.zeros(K + 2)  # little room: the tail's dishes grow the arrays
    beta[:K] = rng.dirichlet(np.ones(K + 1))[:K] * 0.9
    beta, n_dishes, tail, (totals, smoothing, *lists) = _kernels.collapsed_dish_step_tokens(
        data.group_ptr, state.table_of, data.rows, state.table_dish, W, a, beta, K, 0.1, 3.0,
        seed)
    assert 0.0 < tail <= 0.1 and n_dishes >= K
    dish_of = _dishes(data, state.table_of, state.table_dish)
    tokens = np.bincount(dish_of, minlength=totals.size).astype(float)
    np.testing.assert_array_equal(totals, tokens)
    sizes = np.arange(smoothing.size)
    # Q_n = sum_k beta_k / prod_{s<n} (c_k + Wa + s), summed afresh
    rising = np.cumprod(np.concatenate([np.ones((n_dishes, 1)),
                                        tokens[:n_dishes, None] + W * a + sizes[None, :-1]],
                                       axis=1), axis=1)
    np.testing.assert_allclose(smoothing, (beta[:n_dishes, None] / rising).sum(axis=0),
                               rtol=1e-10)
    _assert_lists(data, dish_of, *lists)


def _log_predictive(table_words, dish_words, n_words, a):
    """log of a table's joint predictive under a dish, as Dirichlet-multinomial normalisers:
    sum_w [lgamma(c_w + n_w + a) - lgamma(c_w + a)] - [lgamma(c + Wa + n) - lgamma(c + Wa)]."""
    from scipy.special import gammaln

    n_w = np.bincount(table_words, minlength=n_words)
    c_w = np.bincount(dish_words, minlength=n_words)
    return (np.sum(gammaln(c_w + n_w + a) - gammaln(c_w + a))
            - gammaln(c_w.sum() + n_words * a + n_w.sum()) + gammaln(c_w.sum() + n_words * a))


@pytest.mark.parametrize("table", [[0] * 12 + [1] * 5, [0, 0, 1, 0, 2]], ids=["long", "short"])
@pytest.mark.parametrize("shared", [False, True], ids=["alone", "shared"])
def test_collapsed_dish_step_draws_a_table_from_its_exact_conditional(table, shared):
    """A table is the first moved, so its new dish is drawn from the exact conditional given
    the other group's table (20 tokens of word 0, dish 0): dish k with weight beta_k times the
    Dirichlet-multinomial predictive written with lgamma, the empty instantiated dish 1 and the
    tail with the empty predictive. The table has 17 tokens (more than _PRODUCT_TOKENS: the
    logarithmic path) or 5 (the bucketed products), and starts alone at dish 1 or shares dish 0
    with the other table (whose counts then hold its own tokens until it moves: they must be
    taken off). Frequencies over 10,000 seeds against those probabilities (chi-square)."""
    from scipy import stats

    W, a = 3, 0.5
    table = np.array(table)
    n = table.size
    other = np.zeros(20, dtype=np.int64)  # group 1's table: 20 tokens of word 0, dish 0
    row_of = np.concatenate([table, other]).astype(np.int64)
    group_ptr = np.array([0, n, n + 20], dtype=np.int64)
    table_of = np.zeros(n + 20, dtype=np.int64)
    start = np.array([[0 if shared else 1], [0]], dtype=np.int64)
    beta0, beta1, tail = 0.3, 0.5, 0.2
    log_weights = np.array([
        np.log(beta0) + _log_predictive(table, other, W, a),
        np.log(beta1) + _log_predictive(table, other[:0], W, a),
        np.log(tail) + _log_predictive(table, other[:0], W, a),
    ])
    expected = np.exp(log_weights - log_weights.max())
    expected /= expected.sum()
    assert expected.min() > 0.05  # every outcome is seen often: the test has power
    draws = 10_000  # 15 us a call
    outcomes = np.zeros(3)
    for seed in range(draws):
        table_dish = start.copy()
        beta = np.zeros(4)
        beta[:2] = beta0, beta1
        _kernels.collapsed_dish_step_tokens(group_ptr, table_of, row_of, table_dish, W, a, beta,
                                            2, tail, 1.0, seed)
        outcomes[min(table_dish[0, 0], 2)] += 1
    assert stats.chisquare(outcomes, draws * expected).pvalue > 1e-3, (outcomes / draws,
                                                                        expected)


def _seating_key(group_ptr, table_of, table_dish):
    """A seating up to labels: every customer's table (numbered by first appearance within its
    group) and dish (numbered by first appearance)."""
    group = np.repeat(np.arange(group_ptr.size - 1), np.diff(group_ptr))
    dishes, tables = {}, {}
    return (tuple(dishes.setdefault(d, len(dishes)) for d in table_dish[group, table_of])
            + tuple(tables.setdefault((g, t), len(tables)) for g, t in zip(group, table_of)))


@pytest.mark.parametrize("max_dishes", [6, 2], ids=["open", "capped"])
def test_token_start_follows_the_dense_start(max_dishes):
    """The categorical start (``crf_seating_tokens``: buckets, products) draws seatings from
    the same law as the dense pass (``crf_seating``: every dish, logarithms): 20,000 starts of
    each on two groups of 3 and 2 tokens with repeated words, seating frequencies compared by a
    chi-square test of homogeneity (seatings seen fewer than 40 times in all pooled), with
    dishes free to open and with at most two."""
    from scipy import stats

    group_ptr = np.array([0, 3, 5])
    rows = np.array([0, 1, 0, 1, 2])
    W, a, alpha0, gamma0 = 3, 0.5, 0.7, 1.3
    settings = np.array([a, float(W)])
    rng = np.random.default_rng(0)
    counts = [{}, {}]
    for _ in range(20_000):
        uniforms = rng.random((5, 2))
        dense = _kernels.crf_seating(0, group_ptr, rows, np.zeros((0, 0)), np.zeros(1),
                                     settings, W + 1, alpha0, gamma0, uniforms, max_dishes)
        tokens = _kernels.crf_seating_tokens(group_ptr, rows, W, a, alpha0, gamma0,
                                             rng.random((5, 2)), max_dishes)
        for seen, (table_of, table_dish, n_dishes) in zip(counts, (dense, tokens)):
            assert n_dishes <= max_dishes
            key = _seating_key(group_ptr, table_of, table_dish)
            seen[key] = seen.get(key, 0) + 1
    keys = sorted(set(counts[0]) | set(counts[1]))
    table = np.array([[seen.get(key, 0) for key in keys] for seen in counts])
    common = table.sum(axis=0) >= 40
    pooled = np.column_stack([table[:, common], table[:, ~common].sum(axis=1)])
    assert common.sum() >= 10  # many seatings: the test has power
    assert stats.chi2_contingency(pooled).pvalue > 1e-3


def _pooled_chi_square_p(outcomes, probabilities, draws):
    """The chi-square p-value of ``outcomes`` (counts by key) against ``probabilities`` (by
    key): the keys expected fewer than 5 times, and any key drawn that has no probability,
    pooled into one bin (an impossible outcome drawn fails the test)."""
    from scipy import stats

    large = [key for key, p in probabilities.items() if p * draws >= 5]
    observed = [outcomes.get(key, 0) for key in large]
    expected = [probabilities[key] * draws for key in large]
    rest = draws - sum(observed), draws - sum(expected)
    if rest[0] > 0 or rest[1] > 1e-6:
        observed.append(rest[0])
        expected.append(max(rest[1], 1e-9))
    expected = np.array(expected) * draws / sum(expected)  # the same total, for scipy
    return stats.chisquare(observed, expected).pvalue


def _franchise_moves(groups, words, seat, dish, i, n_words, a, gamma0, alpha0):
    """Every outcome of customer ``i``'s move in the franchise's Gibbs pass with the atoms
    integrated out, from the definition (Teh et al. 2006): with every count taken without
    ``i``, table t of its group with weight n_t f_k(w), a new table with weight
    alpha0 (sum_k m_k f_k(w) + gamma0 / W) / (m + gamma0), its dish k with weight m_k f_k(w)
    or a new dish with weight gamma0 / W, f_k(w) = (c_kw + a) / (c_k + Wa). ``seat`` maps the
    customers to table keys, ``dish`` the tables to dish keys. Returns (probability, seat,
    dish) triples."""
    seat = dict(seat)
    del seat[i]
    dish = {t: dish[t] for t in set(seat.values())}  # i's table closes if it empties
    c_kw, c_k = {}, {}
    for customer, t in seat.items():
        k = dish[t]
        c_k[k] = c_k.get(k, 0) + 1
        c_kw[k, words[customer]] = c_kw.get((k, words[customer]), 0) + 1
    m = {}
    for k in dish.values():
        m[k] = m.get(k, 0) + 1

    def f(k):
        return (c_kw.get((k, words[i]), 0) + a) / (c_k.get(k, 0) + n_words * a)

    moves = []
    for t in {seat[c] for c in seat if groups[c] == groups[i]}:
        n_t = sum(1 for c in seat if seat[c] == t)
        moves.append((n_t * f(dish[t]), {**seat, i: t}, dish))
    table = ("table", i)
    new_table = alpha0 / (sum(m.values()) + gamma0)
    for k in m:
        moves.append((new_table * m[k] * f(k), {**seat, i: table}, {**dish, table: k}))
    moves.append((new_table * gamma0 / n_words, {**seat, i: table},
                  {**dish, table: ("dish", i)}))
    total = sum(weight for weight, _, _ in moves)
    return [(weight / total, s, d) for weight, s, d in moves]


def _seating_outcome(seat, dish):
    """Group 0's two customers' seating: whether they share a table, each one's dish as 0, 1
    or another (2), and whether their dishes are the same."""
    d0, d1 = dish[seat[0]], dish[seat[1]]
    return (seat[0] == seat[1], d0 if d0 in (0, 1) else 2, d1 if d1 in (0, 1) else 2, d0 == d1)


def test_franchise_pass_draws_a_groups_first_two_customers_from_their_exact_conditionals():
    """The pass moves group 0's two customers first, each from its exact conditional given the
    seating at its turn (:func:`_franchise_moves`, written from the definition): the joint law
    of where they end up is the two steps' transition, summed exactly. Customer 0 (word 0)
    starts alone at dish 0, which group 1's table shares with five more tokens of word 0 (the
    word lists keep customer 0 at its old dish while it chooses: its token must be taken off
    there); customer 1 (word 1) starts alone at dish 2, then weighs customer 0's new table,
    whose dish its word may not use (the count noted for customer 0's word there must not be
    read for customer 1's). The later groups move after them and cannot change group 0's
    tables. Frequencies over 20,000 seeds of :func:`_seating_outcome` against the exact
    probabilities (chi-square)."""
    W, a, gamma0, alpha0 = 4, 0.5, 1.0, 1.0
    words = [0, 1] + [0] * 5 + [2] * 5 + [0] * 3 + [1] * 3 + [3] * 3
    groups = [0, 0] + [1] * 10 + [2] * 9
    tables = ["A", "B"] + ["C"] * 10 + ["D"] * 9  # A and B in group 0
    dish = {"A": 0, "B": 2, "C": 0, "D": 1}
    probabilities = {}
    for p0, seat, dish0 in _franchise_moves(groups, words, dict(enumerate(tables)), dish, 0,
                                            W, a, gamma0, alpha0):
        for p1, seat1, dish1 in _franchise_moves(groups, words, seat, dish0, 1, W, a, gamma0,
                                                 alpha0):
            key = _seating_outcome(seat1, dish1)
            probabilities[key] = probabilities.get(key, 0.0) + p0 * p1
    assert abs(sum(probabilities.values()) - 1.0) < 1e-12
    assert sorted(probabilities.values())[-6] > 0.03  # several outcomes are seen often

    group_ptr = np.array([0, 2, 12, 21], dtype=np.int64)
    row_of = np.array(words, dtype=np.int64)
    start_tables = np.array([0, 1] + [0] * 19, dtype=np.int64)
    start_dishes = np.array([[0, 2], [0, -1], [1, -1]], dtype=np.int64)
    draws, outcomes = 20_000, {}
    for seed in range(draws):
        table_of = start_tables.copy()
        new_dish, _ = _moves.crf_gibbs_pass_tokens(group_ptr, table_of, row_of,
                                                   start_dishes.copy(), W, a, gamma0, alpha0,
                                                   seed)
        key = _seating_outcome({0: table_of[0], 1: table_of[1]},
                               {t: new_dish[0, t] for t in table_of[:2]})
        outcomes[key] = outcomes.get(key, 0) + 1
    assert _pooled_chi_square_p(outcomes, probabilities, draws) > 1e-3, (
        {k: v / draws for k, v in outcomes.items()}, probabilities)


def test_collapsed_dish_step_draws_a_groups_first_two_tables_from_their_exact_conditionals():
    """The step moves group 0's two tables first, each from its exact conditional given the
    other tables' dishes at its turn (beta_k times the Dirichlet-multinomial predictive written
    with lgamma), so the joint law of their new dishes is the two steps' transition, summed
    exactly. Both start at dish 0 with group 1's table and share word 0 with it: the second
    table's own tokens must be taken off dish 0's counts, not the first table's too (each
    table's tally of its words starts from zero). Dish 2 is instantiated and empty, the tail
    too light to be drawn (1e-9). Frequencies over 20,000 seeds of the two tables' dishes
    against those probabilities (chi-square)."""
    W, a, tail = 3, 0.5, 1e-9
    first, second = [0, 0, 1], [0, 2]
    others = {0: [0] * 6 + [1] * 2, 1: [2] * 5 + [0]}  # group 1's table at dish 0, group 2's at 1
    beta = np.array([0.35, 0.35, 0.3, 0.0, 0.0])
    tokens = np.array(first + second + others[0] + others[1], dtype=np.int64)

    def at(k, *tables):
        """The tokens at dish k: the other groups' and those of ``tables`` (table, dish)."""
        return np.array(others.get(k, []) + sum((t for t, d in tables if d == k), []),
                        dtype=np.int64)

    def conditional(table, *placed):
        """The table's dish among 0, 1, 2 given the others (``placed``: (table, dish))."""
        table = np.array(table)
        weights = np.exp([np.log(beta[k]) + _log_predictive(table, at(k, *placed), W, a)
                          for k in range(3)])
        return weights / weights.sum()

    probabilities = {}
    for k0, p0 in enumerate(conditional(first, (second, 0))):
        for k1, p1 in enumerate(conditional(second, (first, k0))):
            probabilities[k0, k1] = p0 * p1
    assert sorted(probabilities.values())[-5] > 0.03  # several outcomes are seen often

    group_ptr = np.array([0, 5, 13, 19], dtype=np.int64)
    table_of = np.array([0, 0, 0, 1, 1] + [0] * 14, dtype=np.int64)
    start = np.array([[0, 0], [0, -1], [1, -1]], dtype=np.int64)
    draws, outcomes = 20_000, {}
    for seed in range(draws):
        table_dish = start.copy()
        _kernels.collapsed_dish_step_tokens(group_ptr, table_of, tokens, table_dish, W, a,
                                            beta.copy(), 3, tail, 1.0, seed)
        key = (min(table_dish[0, 0], 3), min(table_dish[0, 1], 3))
        outcomes[key] = outcomes.get(key, 0) + 1
    assert _pooled_chi_square_p(outcomes, probabilities, draws) > 1e-3, (
        {k: v / draws for k, v in outcomes.items()}, probabilities)


@pytest.mark.parametrize("tokens", [True, False], ids=["crf_seating_tokens", "crf_seating"])
def test_the_start_is_as_wide_as_the_most_tables_a_group_opened(tokens):
    """The seating passes gave every group a slot per customer of the longest group: on 20
    Newsgroups (11,291 messages, one of 12,343 tokens) that table and the sweeps' tables after
    it were 12,343 wide, 8 GB in all. Now as wide as the most tables a group opened, each
    group's dishes where its customers' tables say."""
    rng = np.random.default_rng(0)
    lengths = np.r_[np.full(60, 5), 3000, np.full(40, 8)]
    group_ptr = np.r_[0, np.cumsum(lengths)]
    W = 30
    rows = rng.integers(W, size=group_ptr[-1])
    uniforms = rng.random((rows.size, 2))
    if tokens:
        table_of, table_dish, n_dishes = _kernels.crf_seating_tokens(
            group_ptr, rows, W, 0.5, 1.0, 1.0, uniforms, 1000)
    else:
        table_of, table_dish, n_dishes = _kernels.crf_seating(
            0, group_ptr, rows, np.zeros((0, 0)), np.zeros(1), np.array([0.5, W]),
            W + 1, 1.0, 1.0, uniforms, 1000)
    group = np.repeat(np.arange(lengths.size), lengths)
    opened = np.array([table_of[group == j].max() + 1 for j in range(lengths.size)])
    assert table_dish.shape == (lengths.size, opened.max()) and opened.max() < 100
    for j in range(lengths.size):  # tables 0..opened-1 hold dishes, the rest of the row none
        assert np.all(table_dish[j, :opened[j]] >= 0) and np.all(table_dish[j, opened[j]:] == -1)
    assert table_dish.max() == n_dishes - 1
