"""mb.partition: the search for the least expected loss against brute force over every
partition, the credible ball against its definition, the similarities against the matrix."""

import numpy as np
import pytest
from scipy.special import gammaln

import mixbayes as mb
from mixbayes.families.gaussian import GaussianStats, known_variance_log_marginal
from mixbayes.partition import majority_labels


def _partitions(n):
    """Every partition of range(n) as a label array (restricted growth strings)."""
    def grow(prefix, top):
        if len(prefix) == n:
            yield np.array(prefix)
            return
        for label in range(top + 2):
            yield from grow(prefix + [label], max(top, label))
    yield from grow([0], 0)


def _posterior_draws(X, n_draws, rng, alpha=1.0, variance=0.5, prior_variance=4.0):
    """Draws from the exact posterior of a tiny Dirichlet-process Gaussian mixture (CRP prior,
    known variance, the means integrated out) over every partition of X's rows (1-D)."""
    parts = np.array(list(_partitions(len(X))))
    onehot = parts[:, :, None] == np.arange(len(X))  # (B, n, labels)
    sizes = onehot.sum(axis=1).astype(float)
    sums = np.einsum("bnk,n->bk", onehot, X[:, 0])
    squares = np.einsum("bnk,n->bk", onehot, X[:, 0] ** 2)
    used = sizes > 0
    stats = GaussianStats(sizes.ravel(), sums.reshape(-1, 1), squares.reshape(-1, 1))
    marginal = known_variance_log_marginal(stats, variance, prior_variance).reshape(sizes.shape)
    log_post = (used.sum(axis=1) * np.log(alpha) + np.where(used, gammaln(np.where(
        used, sizes, 1.0)) + marginal, 0.0).sum(axis=1))
    p = np.exp(log_post - log_post.max())
    return parts[rng.choice(len(parts), size=n_draws, p=p / p.sum())], parts


def _brute_force_losses(parts, draws, loss):
    """Expected loss of every partition (rows of ``parts``) by the definitions, vectorised
    over the partitions and weighted over the distinct draws."""
    n = parts.shape[1]
    unique, weight = np.unique(draws, axis=0, return_counts=True)

    table = np.concatenate([[0.0], np.arange(1, n + 1) * np.log2(np.arange(1, n + 1))])

    def xlogx(c):  # c log2 c of counts 0..n, by lookup
        return table[c]

    def pairs(c):
        return c * (c - 1) / 2

    B = parts.shape[0]
    rows = np.arange(B)[:, None]

    def counts(codes, width):  # per row of codes, how often each value below width occurs
        return np.bincount((codes + rows * width).ravel(), minlength=B * width).reshape(B, width)

    own = counts(parts, n)
    total = np.zeros(B)
    for d, w in zip(unique, weight):
        joint = counts(parts * n + d, n * n)
        theirs = np.bincount(d, minlength=n)
        if loss == "vi":
            value = (xlogx(own).sum(1) + xlogx(theirs).sum() - 2 * xlogx(joint).sum(1)) / n
        else:
            value = (pairs(own).sum(1) + pairs(theirs).sum() - 2 * pairs(joint).sum(1)) / pairs(n)
        total += w * value
    return total / weight.sum()


def _same_partition(a, b):
    return mb.metrics.ari(a, b) == 1.0


@pytest.mark.parametrize("n, seed", [(6, 0), (7, 1), (9, 2)])
@pytest.mark.parametrize("loss", ["vi", "binder"])
def test_the_search_finds_the_brute_force_minimiser(n, seed, loss):
    """Draws of an exact posterior (a tiny Gaussian DP mixture, every partition enumerated:
    Bell(9) = 21,147); the search's estimate has the least expected loss of all partitions
    (ties: any of the minimisers), and its reported loss is that minimum."""
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.normal(0, 1, (n // 2, 1)), rng.normal(2.5, 1, (n - n // 2, 1))])
    draws, parts = _posterior_draws(X, 200, rng)
    losses = _brute_force_losses(parts, draws, loss)
    estimate = mb.partition.point_estimate(draws, loss=loss, n_runs=8, random_state=seed)
    assert estimate.expected_loss == pytest.approx(losses.min(), abs=1e-12)
    assert any(_same_partition(estimate.labels, parts[i])
               for i in np.flatnonzero(losses <= losses.min() + 1e-12))
    sizes = np.bincount(estimate.labels)
    assert np.all(np.diff(sizes) <= 0) and estimate.n_clusters == sizes.size


def test_losses_by_their_definitions():
    """VI in bits from the entropies and mutual information; Binder's share of pairs by
    counting them."""
    rng = np.random.default_rng(3)
    a = rng.integers(0, 3, 30)
    draws = rng.integers(0, 4, (5, 30))

    def entropy(labels):
        p = np.bincount(labels) / labels.size
        p = p[p > 0]
        return -(p * np.log2(p)).sum()

    for t, b in enumerate(draws):
        joint = entropy(a * 10 + b)
        vi = 2 * joint - entropy(a) - entropy(b)
        assert mb.partition.loss_to_draws(a, draws, "vi")[t] == pytest.approx(vi, abs=1e-12)
        same_a, same_b = a[:, None] == a[None, :], b[:, None] == b[None, :]
        upper = np.triu_indices(30, 1)
        binder = np.mean(same_a[upper] != same_b[upper])
        assert mb.partition.loss_to_draws(a, draws, "binder")[t] == pytest.approx(binder)


def test_credible_ball_by_its_definition():
    """The radius is the smallest VI holding at least `level` of the draws; the bounds are
    the draws inside with the fewest clusters (upper) and the most (lower), the farthest of
    each, and the farthest draw inside (horizontal)."""
    rng = np.random.default_rng(4)
    X = np.concatenate([rng.normal(0, 1, (4, 1)), rng.normal(2.0, 1, (4, 1))])
    draws, _ = _posterior_draws(X, 300, rng)
    estimate = mb.partition.point_estimate(draws, random_state=0)
    ball = mb.partition.credible_ball(draws, estimate, level=0.915)
    distance = mb.partition.loss_to_draws(estimate.labels, draws)
    candidates = np.unique(distance)
    radius = candidates[np.argmax([np.mean(distance <= c + 1e-12) >= 0.915 for c in candidates])]
    assert ball.radius == pytest.approx(radius) and ball.mass >= 0.915
    assert np.mean(distance < radius - 1e-12) < 0.915
    inside = distance <= radius + 1e-12
    k = draws.max(axis=1) + 1
    fewest = inside & (k == k[inside].min())
    assert ball.upper_distance == pytest.approx(distance[fewest].max())
    assert np.unique(ball.upper).size == k[inside].min()
    assert np.unique(ball.lower).size == k[inside].max()
    assert ball.horizontal_distance == pytest.approx(distance[inside].max())


def test_credible_ball_of_hand_made_draws_with_distances_by_hand():
    """Four items, estimate {01}{23}, seven draws whose VIs from it are worked out by hand in
    bits (H(draw | estimate) + H(estimate | draw)): {01}{23} three times (0), {01}{2}{3} (0.5),
    {0}{12}{3} (1.5), {0123} (1), {02}{13} (2). At level 0.8 the radius is the 6th smallest,
    1.5, leaving {02}{13} out; the upper bound is the one draw of 1 cluster, the lower bound the
    farther of the two of 3 clusters (not the first of them), the horizontal bound that one."""
    draws = np.array([[0, 0, 1, 1], [0, 0, 1, 2], [1, 1, 0, 0], [0, 1, 1, 2], [0, 0, 0, 0],
                      [0, 1, 0, 1], [0, 0, 1, 1]])
    np.testing.assert_allclose(mb.partition.loss_to_draws([0, 0, 1, 1], draws),
                               [0, 0.5, 0, 1.5, 1, 2, 0], atol=1e-12)
    ball = mb.partition.credible_ball(draws, [0, 0, 1, 1], level=0.8)

    def same_partition(a, b):
        a, b = np.asarray(a), np.asarray(b)
        return np.array_equal(a[:, None] == a[None, :], b[:, None] == b[None, :])

    assert ball.radius == pytest.approx(1.5) and ball.mass == pytest.approx(6 / 7)
    assert ball.upper_distance == pytest.approx(1.0) and same_partition(ball.upper, [0, 0, 0, 0])
    assert ball.lower_distance == pytest.approx(1.5) and same_partition(ball.lower, [0, 1, 1, 2])
    assert ball.horizontal_distance == pytest.approx(1.5)
    assert same_partition(ball.horizontal, [0, 1, 1, 2])


def test_similarities_and_certainty():
    """The dense matrix is the share of draws sharing a cluster; the block summary and every
    item's certainty are its means over the estimate's clusters."""
    rng = np.random.default_rng(5)
    draws = rng.integers(0, 3, (40, 12))
    psm = mb.partition.similarity(draws)
    naive = np.mean([d[:, None] == d[None, :] for d in draws], axis=0)
    np.testing.assert_allclose(psm, naive)
    labels = np.array([0] * 5 + [1] * 6 + [2])
    blocks, certainty = mb.partition.block_similarity(draws, labels)
    for a in range(3):
        for b in range(3):
            cell = psm[np.ix_(labels == a, labels == b)]
            if a == b:
                cell = cell[~np.eye(cell.shape[0], dtype=bool)]
            assert blocks[a, b] == pytest.approx(cell.mean() if cell.size else 1.0)
    for i in range(12):
        mates = (labels == labels[i]) & (np.arange(12) != i)
        assert certainty[i] == pytest.approx(psm[i, mates].mean() if mates.any() else 1.0)
    post = mb.partition.n_clusters_posterior(draws)
    assert sum(post.values()) == pytest.approx(1.0) and set(post) <= {1, 2, 3}


@pytest.mark.parametrize("n, top, block_size", [(12, 3, None), (30, 5, 7), (9, 8, 4),
                                                (10, 20, 3)])
def test_similarity_for_large_n_matches_the_dense_matrix(n, top, block_size):
    """The rows block by block equal the dense matrix's; the sparse top neighbours hold each
    row's largest off-diagonal similarities (their values are the dense row's sorted top,
    ties to the lower index), zeros left out; the dense form is refused above max_dense,
    the sparse one is not."""
    rng = np.random.default_rng(n)
    draws = rng.integers(0, 4, (25, n))
    draws[:, 1] = draws[:, 0]  # a pair always together, and ties
    draws[:3, 2] = 7  # an item that sometimes sits alone
    dense = mb.partition.similarity(draws)
    blocks = list(mb.partition.similarity_blocks(draws, block_size))
    assert all(b.shape[0] <= (block_size or n) and b.shape[1] == n for _, b in blocks)
    np.testing.assert_allclose(np.vstack([b for _, b in blocks]), dense)
    assert [start for start, _ in blocks] == list(range(0, n, block_size or n))
    sparse = mb.partition.similarity(draws, max_dense=2, top=top, block_size=block_size)
    assert sparse.shape == (n, n)
    off = dense - 2 * np.eye(n)  # the diagonal below every similarity
    m = min(top, n - 1)
    for i in range(n):
        row = sparse[[i]].toarray().ravel()
        order = np.lexsort((np.arange(n), -off[i]))[:m]  # by value, ties to the lower index
        want = np.zeros(n)
        want[order] = np.maximum(off[i, order], 0)
        np.testing.assert_allclose(row, want)
    assert sparse[[0]].toarray()[0, 1] == 1.0
    with pytest.raises(ValueError, match="top must be an integer"):
        mb.partition.similarity(draws, top=0)
    with pytest.raises(ValueError, match="block_size must be"):
        list(mb.partition.similarity_blocks(draws, block_size=0))


def test_chain_diagnostics():
    rng = np.random.default_rng(6)
    chains = [rng.integers(0, 3, (20, 10)) for _ in range(2)]
    out = mb.partition.chain_diagnostics(chains)
    assert len(out["successive_vi"]) == 2 and out["successive_vi"][0].shape == (19,)
    same = mb.partition.chain_diagnostics(np.tile(chains[0][:1], (8, 1)))
    assert np.all(same["successive_vi"][0] == 0)


@pytest.mark.parametrize("draws, error, match", [
    (np.zeros((1, 5), dtype=int), ValueError, "at least 2 draws"),
    (np.zeros(5, dtype=int), ValueError, "must be 2-D"),
    (np.array([[0, 1.5], [0, 1]]), TypeError, "integer cluster labels"),
    (np.array([[0, np.nan], [0, 1]]), ValueError, "NaN"),
    (np.array([["a", "b"], ["a", "a"]]), TypeError, "integer cluster labels"),
])
def test_bad_draws(draws, error, match):
    with pytest.raises(error, match=match):
        mb.partition.point_estimate(draws)


def test_ragged_draws_and_one_dimensional_chain_are_named():
    """Ragged draws raised numpy's "inhomogeneous shape"; a 1-D chain was iterated item by
    item and refused as 'shape ()' instead of its own shape."""
    with pytest.raises(ValueError, match="draws must be 2-D .*rows of different lengths"):
        mb.partition.point_estimate([[0, 1], [0, 1, 2]])
    with pytest.raises(ValueError, match=r"chains must be 2-D .*got shape \(6,\)"):
        mb.partition.chain_diagnostics(np.zeros(6, dtype=int))


def test_bad_arguments():
    draws = np.zeros((3, 4), dtype=int)
    with pytest.raises(ValueError, match="estimate must label the draws' 4 items"):
        mb.partition.credible_ball(draws, np.zeros(5, dtype=int))
    with pytest.raises(ValueError, match="level must be"):
        mb.partition.credible_ball(draws, np.zeros(4, dtype=int), level=1.5)
    with pytest.raises(ValueError, match="loss must be one of"):
        mb.partition.point_estimate(draws, loss="l2")
    with pytest.raises(ValueError, match="max_dense=3 items.*top=m"):
        mb.partition.similarity(draws, max_dense=3)


def test_models_summarise_their_partition():
    """The DMM's Gibbs fit keeps thinned draws of its second half and summarises them; its
    VB fit draws partitions from the responsibilities; the HDP summarises its kept sweeps.
    On well-separated clusters the estimate is the truth and the ball is small."""
    corpus, truth = mb.datasets.make_dmm_corpus(90, 40, 3, mean_length=30, random_state=0)
    gibbs = mb.DirichletMultinomialMixture(3, inference="gibbs", n_sweeps=40,
                                           max_samples=10).fit(corpus.counts)
    assert gibbs.label_samples_.shape == (10, 90) and gibbs.label_samples_.dtype == np.int32
    summary = gibbs.partition_summary()
    assert summary.n_draws == 10 and mb.metrics.ari(truth.labels, summary.estimate.labels) > 0.9
    assert summary.ball.radius < 0.5 and sum(summary.n_clusters.values()) == pytest.approx(1)
    vb = mb.DirichletMultinomialMixture(3).fit(corpus.counts)
    drawn = vb.partition_summary(corpus.counts, n_draws=20)
    assert drawn.n_draws == 20 and mb.metrics.ari(vb.labels_, drawn.estimate.labels) > 0.9
    with pytest.raises(ValueError, match="X: a variational fit keeps no draws"):
        vb.partition_summary()
    hdp = mb.HDPMixture(n_iter=12).fit(corpus.counts)
    assert hdp.partition_summary().estimate.labels.shape == (90,)


def test_the_gaussian_mixture_summarises_draws_of_its_responsibilities():
    X, truth = mb.datasets.make_gaussian_mixture(120, 2, 3, random_state=0)
    model = mb.VariationalGaussianMixture(3).fit(X)
    summary = model.partition_summary(X, n_draws=30)
    assert summary.n_draws == 30 and mb.metrics.ari(model.labels_, summary.estimate.labels) > 0.9


def test_the_tree_summarises_every_level():
    """The tree keeps its sweeps' paths after burn-in (at most max_samples) and summarises the
    partition at any level; on well-separated nested data the leaves' estimate is near the truth
    and the kept state."""
    X, truth = mb.datasets.make_tree_data(60, 2, "nested", branching=(2, 2), leaf_spread=8.0,
                                          parent_spread=30.0, random_state=0)
    tree = mb.HierarchicalMixture(2, n_iter=20, max_samples=6, random_state=0).fit(X)
    assert tree.level_samples_.shape == (6, 2, 60)
    leaves = tree.partition_summary()
    assert mb.metrics.ari(truth.paths[:, 1], leaves.estimate.labels) > 0.85
    assert mb.metrics.ari(tree.labels_, leaves.estimate.labels) > 0.9
    assert tree.partition_summary(level=1).estimate.labels.shape == (60,)
    with pytest.raises(ValueError, match="level must be"):
        tree.partition_summary(level=3)


def test_samplers_store_the_point_estimate_as_an_answer(tmp_path):
    """point_estimate="vi" (or "binder") stores point_labels_, the search's answer on the kept
    draws (the same labels as mb.partition.point_estimate of them), beside an unchanged
    labels_; it survives save -> load; a variational DMM, or too few kept draws, is refused."""
    corpus, _ = mb.datasets.make_dmm_corpus(60, 30, 3, mean_length=6, word_concentration=1.0,
                                            random_state=1)
    plain = mb.DirichletMultinomialMixture(3, inference="gibbs", n_sweeps=30, max_samples=10,
                                           n_init=1).fit(corpus.counts)
    dmm = mb.DirichletMultinomialMixture(3, inference="gibbs", n_sweeps=30, max_samples=10,
                                         n_init=1, point_estimate="binder").fit(corpus.counts)
    np.testing.assert_array_equal(dmm.labels_, plain.labels_)
    want = mb.partition.point_estimate(dmm.label_samples_, loss="binder").labels
    np.testing.assert_array_equal(dmm.point_labels_, want)
    assert not hasattr(plain, "point_labels_")
    hdp = mb.HDPMixture(n_iter=12, point_estimate="vi").fit(corpus.counts)
    np.testing.assert_array_equal(
        hdp.point_labels_, mb.partition.point_estimate(hdp.group_label_samples_).labels)
    X, _ = mb.datasets.make_tree_data(40, 2, "nested", branching=(2, 2), random_state=0)
    tree = mb.HierarchicalMixture(2, n_iter=12, max_samples=6, point_estimate="vi").fit(X)
    np.testing.assert_array_equal(
        tree.point_labels_, mb.partition.point_estimate(tree.level_samples_[:, -1]).labels)
    for model in (dmm, hdp, tree):
        mb.save(model, tmp_path / "m.npz")
        np.testing.assert_array_equal(mb.load(tmp_path / "m.npz").point_labels_,
                                      model.point_labels_)
    with pytest.raises(ValueError, match="needs inference='gibbs'"):
        mb.DirichletMultinomialMixture(3, point_estimate="vi").fit(corpus.counts)
    with pytest.raises(ValueError, match="point_estimate must be"):
        mb.DirichletMultinomialMixture(3, inference="gibbs", point_estimate="l2").fit(
            corpus.counts)
    with pytest.raises(ValueError, match="at least 2 kept draws; 1 were kept"):
        mb.DirichletMultinomialMixture(3, inference="gibbs", n_sweeps=10, max_samples=1,
                                       point_estimate="vi").fit(corpus.counts)


def test_majority_labels_break_ties_by_the_partition_not_the_numbering():
    """Each group's most frequent label; a tie goes to the tied label seen first in the group,
    so relabelling the items' clusters relabels the answer and changes nothing else (a tie
    toward the smaller label number would pick another block after relabelling)."""
    labels = np.array([2, 0, 0, 2, 1, 3, 3, 3, 5, 4, 4])
    groups = np.array([0, 0, 0, 0, 1, 1, 1, 1, 2, 3, 3])
    np.testing.assert_array_equal(majority_labels(labels, groups, 5), [2, 3, 5, 4, 0])
    relabel = np.array([4, 5, 0, 1, 2, 3])  # a permutation of the cluster numbers
    np.testing.assert_array_equal(majority_labels(relabel[labels], groups, 5),
                                  relabel[[2, 3, 5, 4, 0]][:4].tolist() + [0])


def test_losses_are_never_below_zero():
    """VI and Binder's loss are distances; the kernel's sums round below 0 between equal
    partitions of unequal blocks (a certain fit's 'least expected VI -0.000 bits'), and the
    losses are floored at 0 where they are made, for the library as for the CLI."""
    corpus, _ = mb.datasets.make_dmm_corpus(300, 200, 4, random_state=0)
    labels = mb.DirichletMultinomialMixture(4, random_state=0).fit(corpus.counts).labels_
    draws = np.tile(labels, (5, 1))  # (the search's relabelling summed to -2.2e-15 here)
    for loss in ("vi", "binder"):
        assert np.all(mb.partition.loss_to_draws(labels, draws, loss) == 0.0)
    assert mb.partition.point_estimate(draws, n_runs=2).expected_loss == 0.0
