r"""The categorical kernel's atoms drawn lazily: only the word probabilities the label steps read.

A dish's atom given its tokens is :math:`\phi_k \sim \mathrm{Dir}(\alpha_w + n_{k\cdot})`, W
probabilities, but a short text's dish uses a few dozen words and the label steps read
:math:`\log\phi_{kw}` only for the words of the tables and customers that may choose dish k (the
dishes above a slice). Drawing the whole atom costs W Gamma variates a dish every sweep; here
it is drawn in the same law, in pieces (the Dirichlet's aggregation property):

1. at the start, a Gamma variate :math:`g_w \sim \mathrm{Ga}(\alpha_w + n_{kw})` for every word
   the dish uses and one :math:`r \sim \mathrm{Ga}((W - u_k)\alpha_w)` for the total of the
   :math:`W - u_k` words it does not use; normalised by their sum, these are the used words'
   probabilities and the unused words' total mass :math:`R_k` (exactly their joint law under
   the Dirichlet, and the unused words' shares of :math:`R_k` are an independent
   :math:`\mathrm{Dir}(\alpha_w, \dots, \alpha_w)`);
2. whenever a step is about to read hidden entries, a set S of them is revealed: Gamma
   variates :math:`\mathrm{Ga}(\alpha_w)` for the words of S and one
   :math:`\mathrm{Ga}((h_k - |S|)\alpha_w)` for the :math:`h_k - |S|` words still hidden,
   normalised, split the hidden mass :math:`R_k` among them (again exactly the law of those
   shares, and the rest stays an independent Dirichlet).

Which entries are revealed depends only on the slices, the sticks and entries already
revealed, never on a hidden value, so the atoms the steps see have exactly the law of atoms
drawn whole (lazy evaluation of the same random variables); the random stream differs from
the dense draw's. Hidden entries of ``loglik`` hold NaN, so a step that read one would show.

Which entries a step may read: the dish step reads table t's words under the first
``reach[t]`` dishes of ``by_weight`` (those above its slice), the informed customer step the
customer's word under the first ``reach[t]`` dishes for every table t above its slice (an
occupied table's dish is among them: its weight is above the table's dish slice). Both sets
are prefixes of one ordering, so a word's wanted dishes are the prefix of the longest reach
among its tokens (:func:`dish_step_reach`, :func:`customer_step_needs`). The customer step
reads an occupied table's prefix only when the table may be empty at the customer's turn (all
its customers come no later in the pass); before that, it reads the table's dish alone, and
only that entry is revealed for it.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..families.atoms import CATEGORICAL, GAUSSIAN, GroupedData, draw_atoms, lookup
from .._kernel_tools import counting_order
from ._kernels import _count_at_least


_NONE = np.zeros(0, dtype=np.int64)


def _log_gamma_variates(shape, rng, size=None):
    """log of Gamma(shape) variates (any shape > 0) by Gamma(a) = Gamma(a + 1) U^(1/a): no
    underflow for tiny shapes (the dense draw's formula, numpy's generator). ``shape`` an
    array, or a number and ``size`` (numpy's faster path for one shape)."""
    if size is None:
        size = shape.shape
    return np.log(rng.standard_gamma(shape + 1.0, size=size)) + np.log(rng.random(size)) / shape


@njit(cache=True)
def _forget(loglik, likelihood, words, dishes):
    """Hide the entries ``(words[c], dishes[c])`` again (NaN in both tables; ``likelihood``
    may be kept by no step, then it has no columns)."""
    kept = likelihood.shape[1] > 0
    for c in range(words.shape[0]):
        loglik[words[c], dishes[c]] = np.nan
        if kept:
            likelihood[words[c], dishes[c]] = np.nan


@njit(cache=True)
def _used_pairs(dish_of, rows, W, K, capacity, alpha):
    """The (dish, word) pairs with tokens, sorted by dish then word (``np.unique`` of
    ``dish_of * W + rows``), and from them the Gamma shapes of the lazy draw: every used pair's
    ``count + alpha``, every dish's words still hidden (``capacity`` of them, W from K on) and
    ``hidden * alpha`` of the dishes below K that have some."""
    N = dish_of.shape[0]
    # the keys sorted by two counting passes (by word, then stably by dish): O(N + W + K)
    top = 0
    for i in range(N):
        top = max(top, dish_of[i] + 1)
    by_dish = counting_order(dish_of, top, counting_order(rows, W, np.arange(N)))
    keys = np.empty(N, dtype=np.int64)
    for c in range(N):
        keys[c] = dish_of[by_dish[c]] * W + rows[by_dish[c]]
    n = 0
    for i in range(N):
        if i == 0 or keys[i] != keys[i - 1]:
            n += 1
    pair_dish = np.empty(n, dtype=np.int64)
    pair_word = np.empty(n, dtype=np.int64)
    used_shape = np.empty(n)
    hidden = np.full(capacity, W, dtype=np.int64)
    p = -1
    for i in range(N):
        if i == 0 or keys[i] != keys[i - 1]:
            p += 1
            pair_dish[p] = keys[i] // W
            pair_word[p] = keys[i] % W
            used_shape[p] = 0.0
            hidden[pair_dish[p]] -= 1
        used_shape[p] += 1.0
    for q in range(n):
        used_shape[q] += alpha
    some = 0
    for k in range(K):
        if hidden[k] > 0:
            some += 1
    rest_shape = np.empty(some)
    some = 0
    for k in range(K):
        if hidden[k] > 0:
            rest_shape[some] = hidden[k] * alpha
            some += 1
    return pair_dish, pair_word, used_shape, hidden, rest_shape


@njit(cache=True)
def _scatter_rest(hidden, K, rest, at):
    """``log_rest`` of K dishes: ``rest`` (in order) at the dishes with ``hidden > 0`` and,
    unless ``at`` is empty, ``at[k] > 0``; -inf elsewhere."""
    log_rest = np.full(K, -np.inf)
    c = 0
    for k in range(K):
        if hidden[k] > 0 and (at.shape[0] == 0 or at[k] > 0):
            log_rest[k] = rest[c]
            c += 1
    return log_rest


@njit(cache=True)
def _normalise_used(loglik, likelihood, K, pair_dish, pair_word, log_used, log_rest):
    """Into ``loglik`` (W, at least K columns, NaN everywhere on entry) the used words' log
    probabilities, their exponentials (``likelihood``, unset elsewhere; skipped when it has no
    columns), and every dish's log
    hidden mass, from the log Gamma variates of the used pairs (sorted by dish) and of every
    dish's unused total (-inf where every word is used); columns from K on are prior atoms
    with nothing revealed (log hidden mass 0)."""
    log_hidden = np.zeros(loglik.shape[1])
    kept = likelihood.shape[1] > 0
    p, n = 0, pair_dish.shape[0]
    for k in range(K):
        start = p
        while p < n and pair_dish[p] == k:
            p += 1
        top = log_rest[k]
        for q in range(start, p):
            top = max(top, log_used[q])
        total = math.exp(log_rest[k] - top)
        for q in range(start, p):
            total += math.exp(log_used[q] - top)
        norm = top + math.log(total)
        for q in range(start, p):
            loglik[pair_word[q], k] = log_used[q] - norm
            if kept:
                likelihood[pair_word[q], k] = math.exp(log_used[q] - norm)
        log_hidden[k] = log_rest[k] - norm
    return log_hidden


@njit(cache=True)
def _mark(loglik, words, dishes):
    """The distinct hidden entries among the pairs ``(words[c], dishes[c])`` (repeats allowed):
    their positions, marked +inf in ``loglik`` until filled, and how many each dish has."""
    wanted = np.zeros(loglik.shape[1], dtype=np.int64)
    at_word = np.empty(words.shape[0], dtype=np.int64)
    at_dish = np.empty(words.shape[0], dtype=np.int64)
    count = 0
    for c in range(words.shape[0]):
        w, k = words[c], dishes[c]
        if math.isnan(loglik[w, k]):
            loglik[w, k] = np.inf
            at_word[count] = w
            at_dish[count] = k
            count += 1
            wanted[k] += 1
    return at_word[:count], at_dish[:count], wanted


@njit(cache=True)
def _mark_hidden(loglik, words, dishes, hidden, alpha):
    """:func:`_mark`, and the hidden words left after the marked ones (``hidden - wanted``)
    with the Gamma shapes ``left * alpha`` of the dishes that want some and have words left."""
    at_word, at_dish, wanted = _mark(loglik, words, dishes)
    left = hidden - wanted
    n = 0
    for k in range(left.shape[0]):
        if wanted[k] > 0 and left[k] > 0:
            n += 1
    rest_shape = np.empty(n)
    n = 0
    for k in range(left.shape[0]):
        if wanted[k] > 0 and left[k] > 0:
            rest_shape[n] = left[k] * alpha
            n += 1
    return at_word, at_dish, wanted, left, rest_shape


@njit(cache=True)
def _fill(loglik, likelihood, log_hidden, at_word, at_dish, log_new, log_rest, wanted):
    """Split every touched dish's hidden mass among its marked entries (log Gamma variates
    ``log_new``) and its words still hidden (``log_rest``, -inf where none is left)."""
    K = loglik.shape[1]
    top = log_rest.copy()
    for q in range(at_word.shape[0]):
        top[at_dish[q]] = max(top[at_dish[q]], log_new[q])
    total = np.zeros(K)
    for q in range(at_word.shape[0]):
        total[at_dish[q]] += math.exp(log_new[q] - top[at_dish[q]])
    for k in range(K):
        if wanted[k] > 0:
            total[k] = top[k] + math.log(total[k] + math.exp(log_rest[k] - top[k]))
    for q in range(at_word.shape[0]):
        k = at_dish[q]
        loglik[at_word[q], k] = log_hidden[k] + log_new[q] - total[k]
        if likelihood.shape[1] > 0:
            likelihood[at_word[q], k] = math.exp(loglik[at_word[q], k])
    for k in range(K):
        if wanted[k] > 0:
            log_hidden[k] += log_rest[k] - total[k]


@njit(cache=True)
def _prefix_pairs(reach_of_word, by_weight):
    """The pairs (w, by_weight[q]) for q < reach_of_word[w]."""
    words = np.empty(reach_of_word.sum(), dtype=np.int64)
    dishes = np.empty(words.shape[0], dtype=np.int64)
    c = 0
    for w in range(reach_of_word.shape[0]):
        for q in range(reach_of_word[w]):
            words[c] = w
            dishes[c] = by_weight[q]
            c += 1
    return words, dishes


@njit(cache=True)
def dish_step_reach(group_ptr, table_of, row_of, dish_slice, sorted_beta, n_rows):
    """Every row's (word's) longest reach among the occupied tables it sits at: the dish step
    reads ``loglik[w, by_weight[q]]`` for q below it only."""
    reach_of_word = np.zeros(n_rows, dtype=np.int64)
    for j in range(group_ptr.shape[0] - 1):
        for i in range(group_ptr[j], group_ptr[j + 1]):
            reach = _count_at_least(sorted_beta, dish_slice[j, table_of[i]])
            reach_of_word[row_of[i]] = max(reach_of_word[row_of[i]], reach)
    return reach_of_word


@njit(cache=True)
def customer_step_needs(group_ptr, row_of, table_of, table_dish, table_weight, n_tables,
                        table_slice, dish_slice, sorted_beta, n_rows):
    """What the informed customer step may read, no more: customer i reads its word under the
    dish of every occupied table above its slice, and under the first ``reach[t]`` dishes of
    ``by_weight`` for every table t above its slice that may be empty at its turn - one empty
    at the start, or one whose customers at the start all come no later than i (customers move
    in order, each leaving its table first; a table still holding one of them has kept its
    dish). Returns every word's longest such reach and the (word, dish) pairs of the occupied
    tables (some repeated)."""
    J = group_ptr.shape[0] - 1
    reach_of_word = np.zeros(n_rows, dtype=np.int64)
    n = 0
    for j in range(J):
        for i in range(group_ptr[j], group_ptr[j + 1]):
            for t in range(n_tables[j]):
                if table_weight[j, t] >= table_slice[i] and t < table_dish.shape[1] \
                        and table_dish[j, t] >= 0:
                    n += 1
    words = np.empty(n, dtype=np.int64)
    dishes = np.empty(n, dtype=np.int64)
    c = 0
    for j in range(J):
        T = n_tables[j]
        reach = np.empty(T, dtype=np.int64)
        last_member = np.full(T, -1, dtype=np.int64)
        for t in range(T):
            reach[t] = _count_at_least(sorted_beta, dish_slice[j, t])
        for i in range(group_ptr[j], group_ptr[j + 1]):
            last_member[table_of[i]] = i
        for i in range(group_ptr[j], group_ptr[j + 1]):
            longest = 0
            for t in range(T):
                if table_weight[j, t] < table_slice[i]:
                    continue
                occupied = t < table_dish.shape[1] and table_dish[j, t] >= 0
                if occupied:
                    words[c] = row_of[i]
                    dishes[c] = table_dish[j, t]
                    c += 1
                if not occupied or last_member[t] <= i:
                    longest = max(longest, reach[t])
            reach_of_word[row_of[i]] = max(reach_of_word[row_of[i]], longest)
    return reach_of_word, words, dishes


@njit(cache=True)
def customer_step_pairs(group_ptr, row_of, table_dish, table_weight, n_tables, table_slice):
    """The pairs the plain customer step reads: every customer's word under the dish of every
    table above its slice."""
    n = 0
    for j in range(group_ptr.shape[0] - 1):
        for i in range(group_ptr[j], group_ptr[j + 1]):
            for t in range(n_tables[j]):
                if table_weight[j, t] >= table_slice[i]:
                    n += 1
    words = np.empty(n, dtype=np.int64)
    dishes = np.empty(n, dtype=np.int64)
    c = 0
    for j in range(group_ptr.shape[0] - 1):
        for i in range(group_ptr[j], group_ptr[j + 1]):
            for t in range(n_tables[j]):
                if table_weight[j, t] >= table_slice[i]:
                    words[c] = row_of[i]
                    dishes[c] = table_dish[j, t]
                    c += 1
    return words, dishes


@njit(cache=True)
def customer_step_marks(group_ptr, row_of, table_of, table_dish, table_weight, n_tables,
                        table_slice, dish_slice, sorted_beta, by_weight, loglik, hidden, alpha):
    """:func:`customer_step_needs`, its prefix pairs (:func:`_prefix_pairs`) then its
    occupied tables' pairs, marked (:func:`_mark_hidden`): one call."""
    reach_of_word, words, dishes = customer_step_needs(
        group_ptr, row_of, table_of, table_dish, table_weight, n_tables, table_slice,
        dish_slice, sorted_beta, loglik.shape[0])
    prefix_words, prefix_dishes = _prefix_pairs(reach_of_word, by_weight)
    all_words = np.concatenate((prefix_words, words))
    all_dishes = np.concatenate((prefix_dishes, dishes))
    return _mark_hidden(loglik, all_words, all_dishes, hidden, alpha)


def _room(columns):
    """The columns to allocate for ``columns`` dishes: a quarter more and 64. The instantiated
    sticks vary around their first sweep's number (tweet 574-836 over 100 default sweeps from
    720 at the first, googlenews_t 1,255-1,896 from 1,590); the table is W x this, 8 bytes an
    entry (twice the first number took 210 MB on googlenews_t, this 133)."""
    return int(1.25 * columns) + 64


class Buffer:
    """The (W, capacity) tables of :class:`Atoms`, kept from sweep to sweep: NaN but where the
    last sweep wrote, which is reset entry by entry (a short text's atoms reveal a few percent
    of the table; filling it afresh every sweep cost more than the draws).

    ``likelihood=False`` keeps no table of the exponentials (only the informed customer step
    reads them): half the memory, which grows with the instantiated dishes (googlenews_t's
    short-text regime instantiates about 1,600 sticks at the start: 8,110 words x 2,051
    columns, 133 MB a table)."""

    def __init__(self, n_words, capacity, likelihood=True):
        self.loglik = np.full((n_words, capacity), np.nan)
        # NaN where hidden too; no columns when no step reads it
        self.likelihood = np.full((n_words, capacity if likelihood else 0), np.nan)
        self.written = []  # (words, dishes) arrays written since the last reset

    @property
    def capacity(self):
        return self.loglik.shape[1]

    def reset(self):
        for words, dishes in self.written:
            _forget(self.loglik, self.likelihood, words, dishes)
        self.written = []

    def grow(self, capacity):
        """At least ``capacity`` columns, the entries written kept."""
        if capacity <= self.capacity:
            return
        width = max(capacity, _room(self.capacity))
        loglik = np.full((self.loglik.shape[0], width), np.nan)
        loglik[:, : self.capacity] = self.loglik
        if self.likelihood.shape[1]:
            likelihood = np.full((self.loglik.shape[0], width), np.nan)
            likelihood[:, : self.capacity] = self.likelihood
            self.likelihood = likelihood
        self.loglik = loglik


class Atoms:
    """The log-likelihood lookup ``loglik[row, k]`` of the label steps under atoms drawn from
    their conditionals: lazily for the categorical kernel (module docstring), whole for the
    Gaussian one (its rows are the points: every entry is a different point's density)."""

    def __init__(self, data, dish_of, K, rng, buffer=None, likelihood=True):
        """``buffer``: a :class:`Buffer` to write the categorical atoms into (reset here),
        kept by the caller from sweep to sweep; None allocates one, with the exponentials'
        table if ``likelihood`` (:meth:`scaled_likelihood` needs it)."""
        self.data = data
        self.lazy = data.kernel == CATEGORICAL
        self.K = K
        if not self.lazy:
            self._loglik = lookup(data, draw_atoms(data, dish_of, K, rng))
            return
        W = data.n_words
        if buffer is None or (likelihood and not buffer.likelihood.shape[1]):
            buffer = Buffer(W, _room(K), likelihood)
        buffer.reset()
        buffer.grow(K)
        self.buffer = buffer
        alpha = float(data.word_prior)
        # columns from K on: prior atoms with nothing revealed (what extend makes)
        pair_dish, pair_word, used_shape, self._hidden, rest_shape = _used_pairs(
            dish_of, data.rows, W, K, buffer.capacity, alpha)
        buffer.written.append((pair_word, pair_dish))
        log_used = _log_gamma_variates(used_shape, rng)
        log_rest = _scatter_rest(self._hidden, K, _log_gamma_variates(rest_shape, rng), _NONE)
        self._log_hidden = _normalise_used(buffer.loglik, buffer.likelihood, K, pair_dish,
                                           pair_word, log_used, log_rest)

    @property
    def n_dishes(self):
        return self.K

    @property
    def table(self):
        """The log-likelihood lookup the kernels read, ``loglik`` or wider (columns from
        ``n_dishes`` on unused)."""
        return self.buffer.loglik if self.lazy else self._loglik

    @property
    def loglik(self):
        """``loglik[row, k]`` for the ``n_dishes`` dishes (NaN where hidden)."""
        return self.buffer.loglik[:, : self.K] if self.lazy else self._loglik

    @property
    def likelihood(self):
        return self.buffer.likelihood[:, : self.K]

    @property
    def hidden(self):
        """Every dish's number of words still hidden."""
        return self._hidden[: self.K]

    @property
    def log_hidden(self):
        return self._log_hidden[: self.K]

    def extend(self, K, rng):
        """Columns for new dishes ``n_dishes..K-1``, atoms from the prior (nobody eats them)."""
        have = self.n_dishes
        if K <= have:
            return
        self.K = K
        if self.lazy and K <= self.buffer.capacity:
            return  # the buffer's spare columns are prior atoms already
        if not self.lazy:
            d = self.data
            no_dish = np.zeros(0, dtype=np.int64)
            empty = GroupedData(GAUSSIAN, d.group_ptr, no_dish, d.points[:0], 0, 0.0,
                                d.prior_mean, d.prior_precision, d.observation_precision)
            fresh = lookup(d, draw_atoms(empty, no_dish, K - have, rng))
            self._loglik = np.ascontiguousarray(np.hstack([self._loglik, fresh]))
            return
        W = self.data.n_words
        before = self.buffer.capacity
        self.buffer.grow(K)
        more = self.buffer.capacity - before
        self._log_hidden = np.concatenate([self._log_hidden, np.zeros(more)])
        self._hidden = np.concatenate([self._hidden, np.full(more, W, dtype=np.int64)])

    def reveal_for_dish_step(self, table_of, dish_slice, sorted_beta, by_weight, rng):
        """Reveal every entry the dish step may read (:func:`dish_step_reach`)."""
        if self.lazy:
            d = self.data
            self.reveal_prefix(dish_step_reach(d.group_ptr, table_of, d.rows, dish_slice,
                                               sorted_beta, d.n_words), by_weight, rng)

    def reveal_for_customer_step(self, table_of, table_dish, table_weight, n_tables,
                                 table_slice, dish_slice, sorted_beta, by_weight, rng):
        """Reveal every entry the informed customer step may read (:func:`customer_step_needs`;
        ``table_dish`` -1 at the empty tables), in one reveal."""
        if self.lazy:
            d = self.data
            self._reveal_marked(*customer_step_marks(
                d.group_ptr, d.rows, table_of, table_dish, table_weight, n_tables, table_slice,
                dish_slice, sorted_beta, by_weight, self.buffer.loglik, self._hidden,
                float(d.word_prior)), rng)

    def reveal_for_plain_customer_step(self, table_dish, table_weight, n_tables, table_slice,
                                       rng):
        """Reveal every entry the plain customer step may read (:func:`customer_step_pairs`)."""
        if self.lazy:
            d = self.data
            self.reveal_pairs(*customer_step_pairs(d.group_ptr, d.rows, table_dish,
                                                   table_weight, n_tables, table_slice), rng)

    def reveal_prefix(self, reach_of_word, by_weight, rng):
        """Reveal ``loglik[w, by_weight[q]]`` for every q below ``reach_of_word[w]``."""
        if self.lazy:
            self.reveal_pairs(*_prefix_pairs(reach_of_word, by_weight), rng)

    def reveal_pairs(self, words, dishes, rng):
        """Reveal ``loglik[words[c], dishes[c]]`` for every c (module docstring, step 2)."""
        if not (self.lazy and words.size):
            return
        self._reveal_marked(*_mark_hidden(self.buffer.loglik, words, dishes, self._hidden,
                                          float(self.data.word_prior)), rng)

    def _reveal_marked(self, at_word, at_dish, wanted, left, rest_shape, rng):
        """The draws of :meth:`reveal_pairs` for the entries :func:`_mark_hidden` marked."""
        if not at_word.size:
            return
        alpha = float(self.data.word_prior)
        log_new = _log_gamma_variates(alpha, rng, at_word.size)
        log_rest = _scatter_rest(left, left.size, _log_gamma_variates(rest_shape, rng), wanted)
        _fill(self.buffer.loglik, self.buffer.likelihood, self._log_hidden, at_word, at_dish,
              log_new, log_rest, wanted)
        self.buffer.written.append((at_word, at_dish))
        self._hidden = left

    def scaled_likelihood(self):
        """``exp(loglik)`` times a constant of each row (a customer's candidates share its row,
        so any per-row scale gives the same draw): the row maximum for the Gaussian kernel,
        1 for the categorical one (log probabilities are at most 0), set only where revealed.
        """
        if not self.lazy:
            return np.exp(self._loglik - self._loglik.max(axis=1, keepdims=True))
        if not self.buffer.likelihood.shape[1]:
            raise RuntimeError("these atoms keep no likelihood table (Atoms(likelihood=False))")
        return self.buffer.likelihood
