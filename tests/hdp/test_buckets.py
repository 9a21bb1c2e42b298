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
