"""The categorical atoms drawn lazily (mixbayes.hdp._lazy_atoms): the entries revealed, in
whatever order and pieces, follow the Dirichlet posterior a whole draw has, and the label steps
read revealed entries only."""

import numpy as np
import pytest
from scipy import stats

import mixbayes as mb
from mixbayes.hdp import _kernels, _lazy_atoms, _sampler

P_FLOOR = 1e-3


def _dishes_with_counts(K, words, W, alpha):
    """K dishes, every one eating the tokens ``words``, over W words."""
    rows = np.tile(words, K)
    data = _sampler.GroupedData(_sampler.CATEGORICAL, np.array([0, rows.size]), rows,
                                np.zeros((0, 0)), W, alpha)
    return data, np.repeat(np.arange(K), len(words))


def test_revealed_atoms_follow_the_dirichlet_posterior():
    """4,000 dishes with counts (3, 0, 1, 0, 0, 0) and prior 0.3: words 1 and 4 revealed for
    every dish first (word 4 alongside word 5 for the even dishes only), the rest after, one
    entry twice. Every coordinate (and word 4 on even and odd dishes apart, revealed in
    different pieces) has its Beta marginal of Dir(0.3 + n), the sum of two its aggregated
    Beta, and every atom sums to one."""
    K, W, alpha = 4000, 6, 0.3
    data, dish_of = _dishes_with_counts(K, [0, 0, 0, 2], W, alpha)
    rng = np.random.default_rng(0)
    atoms = _lazy_atoms.Atoms(data, dish_of, K, rng)
    assert np.isnan(atoms.loglik[[1, 3, 4, 5]]).all() and not np.isnan(atoms.loglik[[0, 2]]).any()
    every, even = np.arange(K), np.arange(0, K, 2)
    atoms.reveal_pairs(np.concatenate([np.full(K, 1), np.full(even.size, 4),
                                       np.full(even.size, 5), [1]]),
                       np.concatenate([every, even, even, [0]]), rng)
    assert np.isnan(atoms.loglik[4, 1::2]).all()
    atoms.reveal_pairs(np.repeat([3, 4, 5], K), np.tile(every, 3), rng)
    phi = np.exp(atoms.loglik.T)  # (K, W)
    assert not np.isnan(phi).any()
    np.testing.assert_allclose(phi.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(atoms.likelihood, phi.T, rtol=1e-12)
    shape = alpha + np.array([3, 0, 1, 0, 0, 0])
    total = shape.sum()
    for w in range(W):
        marginal = stats.beta(shape[w], total - shape[w]).cdf
        assert stats.kstest(phi[:, w], marginal).pvalue > P_FLOOR, w
    for half in (slice(0, None, 2), slice(1, None, 2)):
        marginal = stats.beta(shape[4], total - shape[4]).cdf
        assert stats.kstest(phi[half, 4], marginal).pvalue > P_FLOOR
    pair = phi[:, 1] + phi[:, 4]  # revealed in different pieces, aggregated
    assert stats.kstest(pair, stats.beta(2 * alpha, total - 2 * alpha).cdf).pvalue > P_FLOOR
    assert (atoms.hidden == 0).all()


def test_atoms_without_the_likelihood_table_reveal_the_same_entries():
    """``likelihood=False`` (the plain customer step's atoms) keeps no table of exponentials:
    the same draws reveal the same log probabilities, through growth, extension, a reset for the
    next sweep and a second reveal; asking for the table is an error, and a step that needs it
    gets a fresh buffer with one."""
    K, W, alpha = 50, 6, 0.3
    data, dish_of = _dishes_with_counts(K, [0, 0, 2], W, alpha)
    runs = []
    for likelihood in (True, False):
        rng = np.random.default_rng(3)
        atoms = _lazy_atoms.Atoms(data, dish_of, K, rng, likelihood=likelihood)
        atoms.reveal_pairs(np.full(K, 1), np.arange(K), rng)
        atoms.extend(atoms.buffer.capacity + 10, rng)  # grows the buffer
        atoms.reveal_pairs(np.array([3, 4]), np.array([K + 3, 0]), rng)
        first = atoms.loglik.copy()
        again = _lazy_atoms.Atoms(data, dish_of, K, rng, atoms.buffer, likelihood=likelihood)
        again.reveal_pairs(np.array([5]), np.array([7]), rng)
        runs.append((first, again.loglik.copy(), atoms.buffer))
    (first, second, kept), (first_, second_, bare) = runs
    np.testing.assert_array_equal(first, first_)
    np.testing.assert_array_equal(second, second_)
    assert np.isfinite(second[5, 7]) and np.isnan(second[1, 0])  # the reset hid sweep 1's
    assert kept.likelihood.shape == kept.loglik.shape and bare.likelihood.shape[1] == 0
    with pytest.raises(RuntimeError, match="no likelihood table"):
        again.scaled_likelihood()
    rng = np.random.default_rng(3)
    needs = _lazy_atoms.Atoms(data, dish_of, K, rng, bare, likelihood=True)
    assert needs.buffer is not bare
    np.testing.assert_allclose(needs.likelihood[0], np.exp(needs.loglik[0]), rtol=1e-12)


def test_prior_atoms_of_new_dishes_follow_the_prior():
    """Dishes added by ``extend`` nobody eats: their revealed entries are Dir(alpha) draws."""
    W, alpha = 5, 0.5
    data, dish_of = _dishes_with_counts(1, [0], W, alpha)
    rng = np.random.default_rng(1)
    atoms = _lazy_atoms.Atoms(data, dish_of, 1, rng)
    atoms.extend(3001, rng)
    new = np.arange(1, 3001)
    atoms.reveal_pairs(np.repeat(np.arange(W), new.size), np.tile(new, W), rng)
    phi = np.exp(atoms.loglik[:, 1:].T)
    np.testing.assert_allclose(phi.sum(axis=1), 1.0, rtol=1e-12)
    for w in range(W):
        marginal = stats.beta(alpha, (W - 1) * alpha).cdf
        assert stats.kstest(phi[:, w], marginal).pvalue > P_FLOOR


class _Guard:
    """A lookup table that fails on reading a hidden (NaN) entry and counts the reads."""

    def __init__(self, table, hidden):
        self.table, self.hidden, self.reads = table, hidden, 0
        self.shape = table.shape

    def __getitem__(self, index):
        assert not self.hidden[index], f"read hidden entry {index}"
        self.reads += 1
        return self.table[index]


@pytest.mark.parametrize("informed", [True, False])
def test_label_steps_read_revealed_entries_only(informed, monkeypatch):
    """The dish step and both customer steps, run as plain Python (the kernels' source, not
    their numba builds) on guarded tables over sweeps of a small corpus with every move: no
    read of a hidden entry, many reads, and entries left hidden (the draw is lazy)."""
    guards = []

    def guarded(name, positions):
        plain = getattr(_kernels, "_" + name)

        def run(*args, work=None):
            args = list(args)
            hidden = np.isnan(args[positions[0]])
            for p in positions:
                args[p] = _Guard(args[p], hidden)
                guards.append(args[p])
            return plain(*args)
        monkeypatch.setattr(_kernels, name, run)

    guarded("dish_step", [3])
    guarded("customer_step_informed", [2, 3])
    guarded("customer_step", [2])
    corpus, _ = mb.datasets.make_hdp_data(6, 12, n_words=40, random_state=0)
    data = mb.HDPMixture(word_prior=0.05)._grouped_tokens(corpus.counts, None)[0]
    rng = np.random.default_rng(2)
    state = _sampler.initial_state(data, 2.0, 1.0, rng)
    for _ in range(4):
        _sampler.sweep(data, state, 2.0, 1.0, rng, collapsed=True, informed=informed)
    assert sum(g.reads for g in guards) > 500
    assert any(g.hidden.mean() > 0.2 for g in guards)


def test_likelihood_table_is_the_exponential_of_the_revealed_entries():
    """The exponentials' table the informed customer step reads equals ``exp(loglik)`` at
    every revealed entry and is NaN exactly where ``loglik`` is (hidden), through a reveal, a
    growth of the buffer (the entries written before it kept), a reveal in the new columns and
    a reset for the next sweep (the last sweep's entries hidden again in both tables)."""
    K, W, alpha = 50, 6, 0.3
    data, dish_of = _dishes_with_counts(K, [0, 0, 2], W, alpha)
    rng = np.random.default_rng(4)

    def check(atoms):
        table, loglik = atoms.buffer.likelihood, atoms.buffer.loglik
        assert table.shape == loglik.shape
        np.testing.assert_array_equal(np.isnan(table), np.isnan(loglik))
        revealed = ~np.isnan(loglik)
        np.testing.assert_allclose(table[revealed], np.exp(loglik[revealed]), rtol=1e-12)
        return revealed.sum()

    atoms = _lazy_atoms.Atoms(data, dish_of, K, rng)
    atoms.reveal_pairs(np.full(K, 1), np.arange(K), rng)
    before = check(atoms)
    atoms.extend(atoms.buffer.capacity + 10, rng)  # grows the buffer
    assert check(atoms) == before
    atoms.reveal_pairs(np.array([3, 4, 1]), np.array([K + 3, 0, atoms.K - 1]), rng)
    assert check(atoms) == before + 3
    again = _lazy_atoms.Atoms(data, dish_of, K, rng, atoms.buffer)
    assert again.buffer is atoms.buffer and check(again) == 2 * K  # words 0 and 2 of each dish
    np.testing.assert_array_equal(again.buffer.likelihood, again.scaled_likelihood())
