"""HierarchicalMixture's sampler against exact answers.

False-alarm budget: every statistical test here fails by chance with probability at most 1e-3
(p-values against P_FLOOR = 1e-3, two-sided z-tests against Z_CEILING = 3.3, KS at 1e-3), and
there are 81 such checks in this file (the Geweke tests count one per statistic), so the file
fails by chance with probability at most about 8.1%.
"""

import numpy as np
import pytest
from scipy import stats
from scipy.special import gammaln

from _support.helpers import chi_square_p, geweke_z_scores
from mixbayes.datasets import make_tree_data
from mixbayes.diagnostics import effective_sample_size
from mixbayes.families.gaussian import scaled_prior
from mixbayes.tree import _regularisation as reg
from mixbayes.families import draws
from mixbayes.tree import _sampler, _state, _steps

P_FLOOR, Z_CEILING = 1e-3, 3.3


# ------------------------------------------------------------------ Geweke, C = 0
def _summaries(paths, comp, means_of_points, X):
    """Nodes at level 1 and at the leaves, components, the mean of the points' component
    means, the data's second moment, points 0 and 1 in one component; at depth 3 also the
    nodes at level 2."""
    middle = (np.unique(paths[:, 1]).size,) if paths.shape[1] == 3 else ()
    return (np.unique(paths[:, 0]).size, np.unique(paths[:, -1]).size, np.unique(comp).size,
            means_of_points.mean(), (X ** 2).mean(), float(comp[0] == comp[1])) + middle


@pytest.mark.parametrize("d, branch, path, moves, L", [
    (1, 1.0, 1.0, _sampler.PLAIN, 2), (2, 1.0, 1.0, _sampler.PLAIN, 2),
    (1, 0.01, 0.1, _sampler.PLAIN, 2), (1, 0.01, 0.1, _sampler.MOVES, 2),
    (1, 1.0, 1.0, _sampler.RESTRUCTURING, 3), (1, 1.0, 1.0, ("path", "split_merge"), 3),
    (1, 1.0, 1.0, ("path", "components"), 3), (1, 1.0, 1.0, ("path", "regraft"), 3)])
def test_geweke_joint_distribution(d, branch, path, moves, L):
    """Forward draws of (tree, components, means, data) from make_tree_data(kind="model"),
    which seats points by the multilevel Chinese restaurant franchise (no code shared with the
    sampler), against a successive-conditional chain (a sweep given the data, then the data
    given the components and means). Six statistics: level-1 nodes, leaves, components, the
    mean of the points' component means, the data's second moment and whether points 0 and 1
    share a component (at depth 3 also the level-2 nodes). Branch and path concentrations 1,
    and the estimator's defaults 0.01 and 0.1 (sparse node weights: Gamma draws with tiny
    shapes); the per-point moves alone,
    with the restructuring moves of mixbayes.tree._moves, those moves together without the
    per-point moves, and each of them alone beside the per-point moves, at depth 3 (where the
    regraft's walk has two levels and its proposal ratio is not 1).

    Power, measured while writing the sampler: with the document's stick extension (no
    size-biased +1 on the point's path) and with empty components kept through the Gibbs pass
    (two real bugs of the first draft), the number of components gave |z| = 4.5-5.4 at these
    sizes or smaller ones."""
    N = 4
    settings = dict(top_concentration=1.0, branch_concentration=branch,
                    path_concentration=path, observation_variance=1.0, mean_prior_variance=1.0)
    rng = np.random.default_rng(10 + d + int(branch < 1))
    forward = []
    for _ in range(800):
        X, truth = make_tree_data(N, L, "model", n_features=d, random_state=rng, **settings)
        forward.append(_summaries(truth.paths, truth.components,
                                  truth.means[truth.components], X))
    X, truth = make_tree_data(N, L, "model", n_features=d, random_state=rng, **settings)

    def tree_data(X):
        return _state.TreeData(X, L, 1.0, branch, path, 1.0, np.zeros(d), 1.0)

    data = tree_data(X)
    state = _sampler.initial_state(data, rng, paths=truth.paths, comp=truth.components)
    successive = []
    for _ in range(1500):
        _sampler.sweep(data, state, rng, moves=moves)
        means = state.means[state.comp]
        X = means + rng.standard_normal(X.shape)
        successive.append(_summaries(state.paths, state.comp, means, X))
        data = tree_data(X)
    z = geweke_z_scores(forward, successive)
    assert np.all(np.abs(z) < Z_CEILING), z


def _heavy_tailed_summaries(paths, comp, means_of_points, X, log_det_precisions):
    """:func:`_summaries` with log(1 + x^2) for x^2 (under the weakest Wishart prior,
    nu_0 = d + 2, x^2 has a mean but no variance: its z-score would not be normal) and the
    mean log-determinant of the points' component precisions."""
    base = _summaries(paths, comp, means_of_points, X)
    return base[:4] + (np.log1p(X**2).mean(),) + base[5:] + (log_det_precisions.mean(),)


@pytest.mark.parametrize("covariance_type, d", [("full", 2), ("spherical", 2)])
def test_geweke_with_unknown_covariances(covariance_type, d):
    """The Geweke test above for per-component covariances: forward draws from
    make_tree_data(kind="model", covariance_type=...), whose covariances come from scipy's
    inverse Wishart / numpy's Gamma with the means given them, against the chain (step 4
    draws means and precisions, the kernel a new component's given its point), with the
    statistics of :func:`_heavy_tailed_summaries`."""
    N, L, sigma2, s02 = 4, 2, 1.0, 1.0
    settings = dict(top_concentration=1.0, branch_concentration=1.0, path_concentration=1.0,
                    observation_variance=sigma2, mean_prior_variance=s02,
                    covariance_type=covariance_type)
    rng = np.random.default_rng(20 + d + len(covariance_type))
    forward = []
    for _ in range(700):
        X, truth = make_tree_data(N, L, "model", n_features=d, random_state=rng, **settings)
        c = truth.components
        forward.append(_heavy_tailed_summaries(truth.paths, c,
                                               truth.means[c], X,
                                               -np.linalg.slogdet(truth.covariances[c])[1]))
    X, truth = make_tree_data(N, L, "model", n_features=d, random_state=rng, **settings)
    family = scaled_prior(covariance_type, np.zeros(d), sigma2 * np.eye(d), s02)

    def tree_data(X):
        return _state.TreeData(X, L, 1.0, 1.0, 1.0, sigma2, np.zeros(d), s02, family=family)

    data = tree_data(X)
    state = _sampler.initial_state(data, rng, paths=truth.paths, comp=truth.components)
    successive = []
    for _ in range(1200):
        _sampler.sweep(data, state, rng)
        precisions = state.precisions()[state.comp]
        if precisions.ndim == 1:
            precisions = precisions[:, None, None] * np.eye(d)
        roots = np.linalg.cholesky(np.linalg.inv(precisions))
        means = state.means[state.comp]
        X = means + np.einsum("nij,nj->ni", roots, rng.standard_normal(X.shape))
        successive.append(_heavy_tailed_summaries(state.paths,
                                                  state.comp, means, X,
                                                  np.linalg.slogdet(precisions)[1]))
        data = tree_data(X)
    z = geweke_z_scores(forward, successive)
    assert np.all(np.abs(z) < Z_CEILING), z


# ------------------------------------------------------------------ enumeration, C = 0
def _set_partitions(items):
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for partition in _set_partitions(rest):
        for b in range(len(partition)):
            yield partition[:b] + [[first] + partition[b]] + partition[b + 1:]
        yield [[first]] + partition


def _crp_log(sizes, concentration):
    n = sum(sizes)
    return (len(sizes) * np.log(concentration) + gammaln(concentration)
            - gammaln(concentration + n) + sum(gammaln(s) for s in sizes))


def _component_partitions(leaf_of, gamma0, gamma):
    """{canonical component labels: probability} under the two-level franchise below the
    root (leaves under level-1 nodes), by enumerating every seating choice point by point."""
    out = {}

    def visit(n, tables, root, labels, logp):
        if n == len(leaf_of):
            names = {}
            key = tuple(names.setdefault(k, len(names)) for k in labels)
            out[key] = np.logaddexp(out.get(key, -np.inf), logp)
            return
        for dish_choice, lp, new_tables, new_root in _draws(leaf_of[n], tables, root, gamma0,
                                                            gamma):
            visit(n + 1, new_tables, new_root, labels + [dish_choice], logp + lp)

    visit(0, {}, (), [], 0.0)
    return {k: float(np.exp(v)) for k, v in out.items()}


def _draws(key, tables, root, gamma0, gamma):
    """Every outcome of one draw from node ``key`` (a tuple path) of the franchise, with its
    log probability and the updated seating (tables: node -> tuple of (size, dish))."""
    if key == ():
        total = sum(root) + gamma0
        for k, m in enumerate(root):
            yield k, np.log(m / total), tables, root[:k] + (m + 1,) + root[k + 1:]
        yield len(root), np.log(gamma0 / total), tables, root + (1,)
        return
    seats = tables.get(key, ())
    total = sum(s for s, _ in seats) + gamma
    for t, (size, dish) in enumerate(seats):
        grown = dict(tables)
        grown[key] = seats[:t] + ((size + 1, dish),) + seats[t + 1:]
        yield dish, np.log(size / total), grown, root
    for dish, lp, upper, new_root in _draws(key[:-1], tables, root, gamma0, gamma):
        grown = dict(upper)
        grown[key] = seats + ((1, dish),)
        yield dish, np.log(gamma / total) + lp, grown, new_root


def _log_marginal(points, sigma2, s02):
    """log p(points | same component), mean integrated, by the chain rule (1-D)."""
    total, precision, mean = 0.0, 1.0 / s02, 0.0
    for x in points:
        total += stats.norm.logpdf(x, mean, np.sqrt(1.0 / precision + sigma2))
        mean = (precision * mean + x / sigma2) / (precision + 1.0 / sigma2)
        precision += 1.0 / sigma2
    return total


def _log_marginal_normal_gamma(points, k0, a0, b0):
    """log p(points | same component), mean and precision integrated out (1-D Normal-Gamma,
    prior mean 0), in closed form: Gamma(a_n) b_0^a_0 / (Gamma(a_0) b_n^a_n)
    (k_0/k_n)^(1/2) (2 pi)^(-n/2)."""
    x = np.asarray(points, dtype=float)
    n, xbar = x.size, x.mean()
    kn, an = k0 + n, a0 + 0.5 * n
    bn = b0 + 0.5 * ((x - xbar) ** 2).sum() + k0 * n * xbar**2 / (2 * kn)
    return (gammaln(an) - gammaln(a0) + a0 * np.log(b0) - an * np.log(bn)
            + 0.5 * np.log(k0 / kn) - 0.5 * n * np.log(2 * np.pi))


def _exact_tree_posterior(X, alpha, gamma0, gamma, sigma2, s02, log_marginal=None):
    """{(level-1 partition, leaf partition) canonical labels: posterior probability}, depth 2
    (``log_marginal(points)`` of a component's points: by default the known sigma^2's)."""
    if log_marginal is None:
        def log_marginal(points):
            return _log_marginal(points, sigma2, s02)
    n = len(X)
    logs = {}
    for top in _set_partitions(list(range(n))):
        for refinements in _product([list(_set_partitions(block)) for block in top]):
            leaves = [leaf for part in refinements for leaf in part]
            log_paths = _crp_log([len(b) for b in top], alpha) + sum(
                _crp_log([len(leaf) for leaf in part], alpha) for part in refinements)
            leaf_key = [None] * n
            level1 = [None] * n
            for i, block in enumerate(top):
                for point in block:
                    level1[point] = i
            for j, leaf in enumerate(leaves):
                for point in leaf:
                    leaf_key[point] = (level1[point], j)
            likelihood = -np.inf
            for comps, p in _component_partitions(leaf_key, gamma0, gamma).items():
                blocks = {}
                for point, k in enumerate(comps):
                    blocks.setdefault(k, []).append(X[point])
                likelihood = np.logaddexp(likelihood, np.log(p) + sum(
                    log_marginal(b) for b in blocks.values()))
            key = (_canonical(level1), _canonical(leaf_key))
            logs[key] = np.logaddexp(logs.get(key, -np.inf), log_paths + likelihood)
    total = np.logaddexp.reduce(list(logs.values()))
    return {k: float(np.exp(v - total)) for k, v in logs.items()}


def _product(lists):
    if not lists:
        yield []
        return
    for head in lists[0]:
        for tail in _product(lists[1:]):
            yield [head] + tail


def _canonical(labels):
    names = {}
    return tuple(names.setdefault(label, len(names)) for label in labels)


@pytest.mark.parametrize("reference, covariance_type, moves, alpha, gamma0", [
    (False, "known", _sampler.PLAIN, 1.0, 1.0), (True, "known", _sampler.PLAIN, 1.0, 1.0),
    (False, "full", _sampler.PLAIN, 1.0, 1.0), (False, "diag", _sampler.PLAIN, 1.0, 1.0),
    (True, "spherical", _sampler.PLAIN, 1.0, 1.0),
    (False, "known", _sampler.MOVES, 0.4, 3.0),
    (False, "known", ("path", "split_merge"), 0.4, 3.0),
    (False, "known", ("path", "components"), 0.4, 3.0),
    (False, "known", ("path", "regraft"), 0.4, 3.0),
    (False, "known", _sampler.RESTRUCTURING, 0.4, 3.0),
    (False, "full", ("path", "split_merge", "regraft"), 0.4, 3.0)])
def test_tree_posterior_matches_enumeration(reference, covariance_type, moves, alpha, gamma0):
    """Three 1-D points, depth 2: the sampler's frequencies of the nested partition (level-1
    and leaf) against the exact posterior, which sums the nested CRP over every tree, the
    multilevel franchise over every seating and the conjugate marginal likelihood over every
    component partition (all weights, means and precisions integrated out). Draws are every
    2nd sweep; chi-square over the 12 trees, cells with expected count below 5 pooled. Both
    the numba kernel of the per-point moves and its plain-Python reference; the known
    variance, and an unknown one (in 1-D full, diag and spherical are one Normal-Gamma model,
    a_0 = 3/2, b_0 = sigma^2/2, kappa_0 = sigma^2/s_0^2, each run through its own code: the
    kernel's Bartlett and Gamma draws, the reference's scipy draws). The restructuring moves
    (mixbayes.tree._moves) all together, each alone beside the per-point moves, and the three
    without them (the chain then restructures by these moves alone: the strictest check), at
    concentrations alpha = 0.4 and gamma_0 = 3, so that no term of theirs is a log 1; the
    leaf moves, which read the components only through their labels, with a full covariance
    too."""
    X = np.array([[-1.0], [-0.6], [1.2]])
    gamma, sigma2, s02 = 1.5, 0.5, 2.0
    family, log_marginal = None, None
    if covariance_type != "known":
        family = scaled_prior(covariance_type, np.zeros(1), [[sigma2]], s02)
        assert family.degrees_of_freedom_prior == 3.0

        def log_marginal(points):
            return _log_marginal_normal_gamma(points, sigma2 / s02, 1.5, sigma2 / 2)
    exact = _exact_tree_posterior(X[:, 0], alpha, gamma0, gamma, sigma2, s02, log_marginal)
    assert len(exact) == 12 and abs(sum(exact.values()) - 1) < 1e-12
    data = _state.TreeData(X, 2, gamma0, gamma, alpha, sigma2, np.zeros(1), s02,
                             family=family)
    rng = np.random.default_rng(7)
    state = _sampler.initial_state(data, rng)
    counts, n, thin = dict.fromkeys(exact, 0), 900, 2
    for sweep in range(50 + n * thin):
        _sampler.sweep(data, state, rng, reference=reference, moves=moves)
        if sweep >= 50 and (sweep - 50) % thin == 0:
            counts[(_canonical(state.paths[:, 0]), _canonical(state.paths[:, 1]))] += 1
    assert chi_square_p(exact, counts, n) > P_FLOOR


def test_the_plain_posterior_prefers_a_flat_tree_to_the_true_nesting():
    """Why ``moves="path"`` is the default and the upper levels come from the start (issue
    22): the BHMC posterior (C = 0) has no term that groups nearby leaves under one parent.
    Four 1-D points in two well-separated pairs, one component each (sigma^2 = 0.1), the
    default concentrations: by exact enumeration the flat tree (a parent per leaf) holds 0.83
    of the posterior, the true nesting 1.8e-4, a wrong nesting (each pair split across the
    parents) 6.7e-5 - the nesting is told from a wrong one only through components that
    sibling leaves could share (here e^-10 apart), not by where the leaves lie."""
    X = np.array([-11.0, -9.0, 9.0, 11.0])
    exact = _exact_tree_posterior(X, alpha=0.1, gamma0=1.0, gamma=0.01, sigma2=0.1, s02=100.0)
    singletons = (0, 1, 2, 3)
    flat = exact[((0, 1, 2, 3), singletons)]
    true = exact[((0, 0, 1, 1), singletons)]
    wrong = exact[((0, 1, 0, 1), singletons)]
    assert max(exact, key=exact.get) == ((0, 1, 2, 3), singletons)
    assert flat == pytest.approx(0.8318, abs=1e-3)
    assert true == pytest.approx(1.814e-4, rel=1e-2)
    assert wrong == pytest.approx(6.739e-5, rel=1e-2)


@pytest.mark.parametrize("covariance_type", ["full", "diag", "spherical"])
def test_prior_predictive_is_the_marginal_likelihood_of_one_point(covariance_type):
    """m(x_n) of a new component (the Student-t prior predictive of TreeData) against the
    family's closed-form marginal likelihood of the one point x_n. (The sampler's tests did
    not see an m computed from a posterior with one pseudo-point too many.)"""
    d = 3
    rng = np.random.default_rng(21)
    X = rng.normal(size=(5, d)) * [1.0, 2.0, 0.5]
    family = scaled_prior(covariance_type, np.array([0.3, -0.2, 0.1]), np.diag([1.0, 3.0, 0.5]),
                          0.7)
    data = _state.TreeData(X, 2, 1.0, 1.0, 1.0, 1.0, family.mean_prior, 0.7, family=family)
    one_hot = np.eye(5)
    single = family.log_marginal_likelihood(family.sufficient_statistics(family.prepare(X),
                                                                          one_hot))
    np.testing.assert_allclose(data.log_predictive, single, rtol=1e-10)


@pytest.mark.parametrize("reference", [False, True])
@pytest.mark.parametrize("covariance_type", ["full", "diag", "spherical"])
def test_draw_given_one_point_is_the_conjugate_posterior(covariance_type, reference):
    """A new component's (mean, precision) drawn given its one point x_n, by the kernel and
    by the plain-Python reference, against GaussianFamily.posterior given x_n: E[Lambda]
    (nu W, or a/b), and kappa (mu - m)' Lambda (mu - m) ~ chi^2_d (z-tests on 3,000 and
    1,500 draws); the kernel's likelihood column is the family's log density at the drawn
    parameters. (The sampler's tests at 3-4 points do not see a wrong draw here: a planted
    1/kappa dropped from the kernel's mean, nu_0 for nu_0 + 1, or the reference drawing
    from the prior passed them.)"""
    from mixbayes.tree import _kernels

    d = 3
    rng = np.random.default_rng(18)
    X = rng.normal(size=(4, d)) * [1.0, 2.0, 0.5]
    A = rng.standard_normal((d, d))
    family = scaled_prior(covariance_type, np.array([0.3, -0.2, 0.1]), A @ A.T + np.eye(d), 0.7)
    data = _state.TreeData(X, 2, 1.0, 1.0, 1.0, 1.0, family.mean_prior, 0.7, family=family)
    kind, kappa0, dof0, scale0 = data.kernel_prior
    n = 2
    post = family.posterior(family.sufficient_statistics(family.prepare(X[n:n + 1]),
                                                         np.ones((1, 1))))
    if reference:
        state = _sampler.initial_state(data, rng)
        state.ensure_components(state.K + 1)
        logw, logrest = state.logw.copy(), state.logrest.copy()
    else:
        state = _state.TreeState(4, 2, d, covariance_type, comp_cap=1)
        loglik = np.zeros((4, 1))
        _kernels.seed(19)
    draws = 1500 if reference else 3000
    quad, precisions = [], []
    for t in range(draws):
        if reference:
            k = _steps._open_component(data, state, n, rng)
            state.K, state.logw[:], state.logrest[:] = k, logw, logrest  # undo the weights
        else:
            k = 0
            _kernels._draw_given_point(n, 0, X, loglik, family.mean_prior, kind, kappa0, dof0,
                                       scale0, state.means, state.prec_vec, state.prec_mat)
        P = state.precisions(k, k + 1)[0].copy()
        if t < 3 and not reference:
            np.testing.assert_allclose(loglik[:, 0], family.log_density(
                X, state.means[:1], state.precisions(0, 1))[:, 0], rtol=1e-10)
        full = P if P.ndim == 2 else np.diag(np.broadcast_to(P, (d,)))
        diff = state.means[k] - family.mean_prior - post.means[0]
        quad.append(post.mean_precision[0] * diff @ full @ diff)
        precisions.append(P)
    precisions = np.array(precisions)
    if covariance_type == "full":
        expected = post.dof[0] * np.linalg.inv(post.scale[0])
    else:
        expected = post.dof[0] / post.scale[0]
    se = precisions.std(axis=0) / np.sqrt(draws)
    assert np.all(np.abs(precisions.mean(axis=0) - expected) < Z_CEILING * se)
    quad = np.array(quad)
    assert abs(quad.mean() - d) < Z_CEILING * np.sqrt(2 * d / draws)


def _exact_depth3_given_leaves(comp, alpha, gamma0, gamma):
    """{(level-1, level-2 canonical labels): probability} of depth-3 trees whose leaves are
    the points alone, given their components: the nested CRP times the franchise's
    probability of the labels ``comp`` (weights integrated out)."""
    n = len(comp)
    logs = {}
    for level2 in _set_partitions(list(range(n))):
        for level1 in _set_partitions(list(range(len(level2)))):
            log_paths = _crp_log([sum(len(level2[b]) for b in top) for top in level1], alpha)
            log_paths += sum(_crp_log([len(level2[b]) for b in top], alpha) for top in level1)
            log_paths += sum(_crp_log([1] * len(block), alpha) for block in level2)
            key1, key2 = [None] * n, [None] * n
            for a, top in enumerate(level1):
                for b in top:
                    for point in level2[b]:
                        key1[point], key2[point] = a, b
            leaf_key = [(key1[m], key2[m], m) for m in range(n)]
            p = _component_partitions(leaf_key, gamma0, gamma)[_canonical(comp)]
            logs[(_canonical(key1), _canonical(key2))] = log_paths + np.log(p)
    total = np.logaddexp.reduce(list(logs.values()))
    return {k: float(np.exp(v - total)) for k, v in logs.items()}


def test_regraft_keeps_the_depth3_tree_posterior():
    """Depth 3, four points each alone in a leaf, components fixed (0, 0, 1, 1): the regraft
    alone (beside the weight and mean steps of every sweep) carries leaves between level-2
    nodes and level-2 nodes, with their leaves, between level-1 nodes (or onto new branches);
    its frequencies of the 60 trees against their exact probabilities given the components
    (the nested CRP times the franchise, every weight integrated out). The inner nodes' moves
    are the ones whose weights stay instantiated (their Dirichlet density under each
    parent); draws every sweep, chi-square with small cells pooled. Power: without that
    density (the planted bug of issue 22) p was 1e-18 to 1e-30 on four seeds, where the
    depth-3 Geweke check gave |z| of 2.3-3.6. (Seed 22: with the weights of a level drawn
    together, seed 21's 500 draws gave p = 8e-4, a chance failure the file's budget allows; at
    2,000 draws seeds 21, 1, 2, 3 gave p = 0.011, 0.076, 0.39, 0.78.)"""
    comp = np.array([0, 0, 1, 1])
    alpha, gamma0, gamma = 0.5, 1.0, 1.0
    exact = _exact_depth3_given_leaves(comp, alpha, gamma0, gamma)
    assert len(exact) == 60 and abs(sum(exact.values()) - 1) < 1e-12
    X = np.array([[-1.0], [-0.6], [1.2], [0.3]])
    data = _state.TreeData(X, 3, gamma0, gamma, alpha, 0.5, np.zeros(1), 2.0)
    rng = np.random.default_rng(22)
    state = _sampler.initial_state(data, rng, paths=np.array([[0, 0, m] for m in range(4)]),
                                   comp=comp)
    counts, n, thin = dict.fromkeys(exact, 0), 500, 1  # (20 proposals a sweep: near independent)
    for sweep in range(20 + n * thin):
        _sampler.sweep(data, state, rng, moves=("regraft",))
        if sweep >= 20 and (sweep - 20) % thin == 0:
            counts[(_canonical(state.paths[:, 0]), _canonical(state.paths[:, 1]))] += 1
    assert chi_square_p(exact, counts, n) > P_FLOOR


# ------------------------------------------------------------------ C > 0: the conditionals
@pytest.mark.parametrize("rho, C", [(0.3, 2.0), (-1.5, 0.7)])
def test_lambda_is_gig(rho, C):
    r"""1/lambda ~ Wald gives lambda ~ GIG(1/2, a=1, b=C^2 rho^2): scipy's geninvgauss(p, b')
    has density ~ x^(p-1) exp(-b'(x + 1/x)/2), so lambda = |C rho| Y with
    Y ~ geninvgauss(1/2, |C rho|). KS at 1e-3 on 4000 draws."""
    rng = np.random.default_rng(3)
    draws = reg.draw_lambda(np.full(4000, rho), C, rng)
    scale = abs(C * rho)
    p = stats.kstest(draws, stats.geninvgauss(0.5, scale, scale=scale).cdf).pvalue
    assert p > P_FLOOR


def test_lambda_at_zero_margin_is_its_limit():
    """At rho = 0 the GIG(1/2, 1, 0) is Gamma(1/2, rate 1/2), i.e. chi-square with 1 dof."""
    draws = reg.draw_lambda(np.zeros(4000), 1.0, np.random.default_rng(4))
    assert stats.kstest(draws, stats.chi2(1).cdf).pvalue > P_FLOOR


def test_discriminant_conditional_is_the_gaussian_of_the_augmented_density():
    """Mean and covariance against the log density itself,
    -|eta|^2/(2 nu^2) - sum (lambda + C(r + sigma x'eta))^2/(2 lambda), a quadratic whose
    Hessian and stationary point are read off by finite differences (exact for a quadratic)."""
    rng = np.random.default_rng(5)
    x = np.hstack([rng.standard_normal((7, 2)), np.ones((7, 1))])
    sign = rng.choice([-1.0, 1.0], 7)
    offset = rng.standard_normal(7)
    lam = rng.gamma(1.0, 1.0, 7)
    C, nu2 = 1.3, 0.8

    def log_density(eta):
        rho = offset + sign * (x @ eta)
        return -eta @ eta / (2 * nu2) - np.sum((lam + C * rho) ** 2 / (2 * lam))

    h, D = 0.5, 3
    E = np.eye(D) * h
    f0 = log_density(np.zeros(D))
    hessian = np.array([[(log_density(E[i] + E[j]) - log_density(E[i]) - log_density(E[j])
                          + f0) / h**2 for j in range(D)] for i in range(D)])
    gradient = np.array([(log_density(E[i]) - log_density(-E[i])) / (2 * h) for i in range(D)])
    mean, covariance = reg.discriminant_conditional(x, sign, offset, lam, C, nu2)
    np.testing.assert_allclose(np.linalg.inv(covariance), -hessian, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(mean, np.linalg.solve(-hessian, gradient), rtol=1e-8, atol=1e-8)


def _small_tree():
    """Depth 2: root -> {1, 2}; 1 -> {3, 4}; 2 -> {5}; five 1-D points."""
    children = [[1, 2], [3, 4], [5], [], [], []]
    paths = np.array([[1, 3], [1, 3], [1, 4], [2, 5], [2, 5]])
    x = np.array([[-2.0], [-1.5], [-0.2], [1.0], [2.5]])
    extended = np.hstack([x, np.ones((5, 1))])
    return children, paths, extended


def test_kernel_slack_and_penalty_match_the_reference():
    """The kernel's slack of every point, and its change of the summed slack for a path move
    that opens a branch and empties another, against the reference (module
    mixbayes.tree._regularisation and _steps._penalty_change) on a random tree."""
    from mixbayes.tree import _kernels

    X, _ = make_tree_data(40, 2, "nested", branching=(3, 2), random_state=3)
    data = _state.TreeData(X, 2, 1.0, 1.0, 1.0, 1.0, X.mean(axis=0), 25.0, margin_weight=0.7,
                             margin=0.5)
    rng = np.random.default_rng(15)
    paths = np.column_stack([np.arange(40) % 3, np.arange(40) % 6])
    paths[0] = [3, 7]  # point 0 alone on its own branch
    state = _sampler.initial_state(data, rng, np.random.default_rng(16), paths=paths)
    eta, ext = state.eta, data.extended
    everything = np.ones(state.alive.size, dtype=bool)
    for m in range(40):
        assert _kernels._slack(ext[m], state.paths[m], state.parent, state.alive, everything,
                               eta, data.margin) == pytest.approx(reg.slack(
                                   ext, state.paths, state.children, eta, data.margin, [m])[0])
    # point 0 leaves its branch (both nodes vacated) for a new leaf under point 1's parent
    old = state.paths[0].copy()
    top = state.paths[1, 0]
    state.count[old] -= 1
    state.count[0] -= 1
    leaf = state.new_node(top)
    state.eta[leaf] = rng.standard_normal(eta.shape[1])
    new = np.array([top, leaf])
    created, vacated = [leaf], [int(z) for z in old]
    expected = _steps._penalty_change(data, state, 0, old, new, created, vacated)
    got = _kernels._penalty_change(0, old, new, np.array(created), 1, np.array(vacated), 2,
                                   state.paths, ext, state.parent, state.level, state.alive,
                                   state.eta, data.margin_weight, data.margin)
    assert expected != 0 and got == pytest.approx(expected)


def test_worst_violation_is_the_arg_max():
    """s_n and max rho against a plain loop over every level and sibling."""
    children, paths, extended = _small_tree()
    eta = np.random.default_rng(6).standard_normal((6, 2))
    rho, level, node = reg.worst_violations(extended, paths, children, eta, 0.7)
    parent = {1: 0, 2: 0, 3: 1, 4: 1, 5: 2}
    for n in range(5):
        best = (-np.inf, 0, -1)
        for lev in (1, 2):
            own = paths[n, lev - 1]
            for z in children[parent[own]]:
                if z != own:
                    value = 0.7 - (eta[own] - eta[z]) @ extended[n]
                    if value > best[0]:
                        best = (value, lev, z)
        assert (rho[n], level[n], node[n]) == pytest.approx(best)


def test_node_update_keeps_the_exact_conditional_of_a_discriminant():
    """The node-by-node step (lambda, then eta given lambda) run as a chain on eta_3 alone
    against the exact conditional density N(eta; 0, nu^2 I) exp(-2C sum xi_n), integrated on
    a grid: posterior mean of both coordinates, z-tests with the chain's effective size."""
    children, paths, extended = _small_tree()
    C, margin, nu2 = 1.5, 0.5, 1.0
    eta = np.random.default_rng(8).standard_normal((6, 2))
    grid = np.linspace(-6, 6, 601)
    A, B = np.meshgrid(grid, grid, indexing="ij")
    logp = -(A**2 + B**2) / (2 * nu2)
    # eta_3 enters only the level-2 terms of points 0-2 (below node 1, children 3 and 4);
    # their level-1 terms (node 1 against node 2) are constants here
    for n in range(3):
        x = extended[n]
        level1 = margin - (eta[1] - eta[2]) @ x
        t3 = A * x[0] + B * x[1]
        level2 = margin - (t3 - eta[4] @ x) if paths[n, 1] == 3 else margin - (eta[4] @ x - t3)
        logp -= 2 * C * np.maximum(0.0, np.maximum(level1, level2))
    weights = np.exp(logp - logp.max())
    weights /= weights.sum()
    exact = np.array([(weights * A).sum(), (weights * B).sum()])
    rng = np.random.default_rng(9)
    draws = np.empty((4000, 2))
    for t in range(draws.shape[0]):
        reg.update_discriminants(extended, paths, children, eta, [3], [2], [1], C, margin, nu2,
                                 rng)
        draws[t] = eta[3]
    for coordinate in range(2):
        chain = draws[:, coordinate]
        se = chain.std() / np.sqrt(effective_sample_size(chain))
        assert abs(chain.mean() - exact[coordinate]) < Z_CEILING * se


@pytest.mark.parametrize("moves", [_sampler.PLAIN, _sampler.MOVES])
def test_zero_margin_weight_is_the_plain_chain(moves):
    """With C = 0, running the regularisation steps (from their own stream) leaves the BHMC
    chain bit for bit what it is with those steps switched off, with the per-point moves and
    with the restructuring moves too."""
    X, _ = make_tree_data(30, 2, "nested", branching=(2, 2), random_state=1)
    data = _state.TreeData(X, 2, 1.0, 1.0, 1.0, 1.0, X.mean(axis=0), 25.0)
    runs = []
    for regularised in (False, True):
        rng = np.random.default_rng(12)
        reg_rng = np.random.default_rng(13) if regularised else None
        state = _sampler.initial_state(data, rng, reg_rng)
        for _ in range(15):
            _sampler.sweep(data, state, rng, reg_rng, moves=moves)
        runs.append(state)
    plain, regularised = runs
    assert np.array_equal(plain.paths, regularised.paths)
    assert np.array_equal(plain.comp, regularised.comp)
    K = plain.K
    assert K == regularised.K and np.array_equal(plain.means[:K], regularised.means[:K])
    alive = plain.alive
    assert np.array_equal(alive, regularised.alive)
    assert np.array_equal(plain.logw[alive, :K], regularised.logw[alive, :K])
    assert np.any(regularised.eta[alive] != 0)  # the discriminants were sampled
    assert len(np.unique(plain.paths[:, 0])) > 1  # the chain moved


def test_antoniak_table_counts():
    """Tables of n customers at concentration a: mean sum_i a/(a+i), i = 0..n-1."""
    rng = np.random.default_rng(14)
    n, a = 7, 0.8
    tables = draws.antoniak(np.full(20000, n), a, rng)
    exact = sum(a / (a + i) for i in range(n))
    assert abs(tables.mean() - exact) < Z_CEILING * tables.std() / np.sqrt(tables.size)
    assert draws.antoniak(np.array([0, 1]), a, rng).tolist() == [0, 1]


def test_hinge_kernel_matches_the_reference():
    """The numba hinge pieces (sign, offset) of every node's step equal the readable
    reference's on a random three-level tree with single-child and many-child nodes; so do
    the step's weighted moments."""
    from mixbayes.tree import _kernels

    rng = np.random.default_rng(17)
    children = [[1, 2, 3], [4, 5], [6], [7, 8, 9], [10, 11], [12], [13], [14], [15], [16],
                [], [], [], [], [], [], []]
    leaves_of = {4: [10, 11], 5: [12], 6: [13], 7: [14], 8: [15], 9: [16]}
    parent = {c: p for p, kids in enumerate(children) for c in kids}
    rows = [[parent[v], v, leaf] for v, leaves in leaves_of.items() for leaf in leaves]
    paths = np.array([rows[i % len(rows)] for i in range(50)])
    extended = np.hstack([rng.standard_normal((50, 2)), np.ones((50, 1))])
    eta = rng.standard_normal((len(children), 3))
    child_ptr = np.concatenate([[0], np.cumsum([len(c) for c in children])])
    child_idx = np.array([z for c in children for z in c])
    node_parent = np.full(len(children), -1)
    node_parent[child_idx] = np.repeat(np.arange(len(children)), np.diff(child_ptr))
    scores = extended @ eta.T
    checked = 0
    for node in range(1, len(children)):
        level = 1 + (node > 3) + (node > 9)
        p = parent[node]
        if len(children[p]) < 2:
            continue
        points = reg.points_under(paths, p, level - 1)
        expected = reg._hinge_pieces(extended, paths, children, eta, 0.4, node, level, p,
                                     points)
        got = _kernels.hinge_pieces(scores, paths, points, child_ptr, child_idx, node_parent,
                                    node, level, 0.4)
        np.testing.assert_allclose(got[0], expected[0])
        np.testing.assert_allclose(got[1], expected[1], rtol=1e-12, atol=1e-12)
        checked += 1
    assert checked == 10
    # the one-pass moments of the eta step against numpy's
    points = np.arange(5, 40)
    lam, coef = rng.gamma(1.0, 1.0, points.size), rng.standard_normal(points.size)
    xx, xb = _kernels.discriminant_moments(extended, points, lam, coef)
    x = extended[points]
    np.testing.assert_allclose(xx, x.T @ (x / lam[:, None]), rtol=1e-12)
    np.testing.assert_allclose(xb, (x / lam[:, None]).T @ coef, rtol=1e-12)


def test_weight_step_keeps_the_exact_posterior_of_a_one_leaf_tree():
    """Depth 1, one leaf holding four points all in one component: the weight step (tables
    by Antoniak with concentration gamma * beta_root, then Dirichlet draws) run as a chain
    keeps p(b | data) ~ (1 - b)^(gamma0 - 1) Gamma(gamma b + N) / (b Gamma(gamma b)) for the
    root's weight b of the component (the franchise's marginal with the tables summed out)
    and leaf weight pi | b ~ Beta(gamma b + N, gamma (1 - b)); posterior means by quadrature,
    z-tests with the chain's effective size. (A planted Antoniak concentration of beta_root
    for gamma * beta_root passed every Geweke and enumeration test, whose gamma is 1 or
    whose statistics do not see the weights.)"""
    from scipy import integrate

    X = np.array([[0.1], [0.2], [-0.1], [0.05]])
    gamma0, gamma, N = 1.0, 5.0, 4
    data = _state.TreeData(X, 1, gamma0, gamma, 1.0, 1.0, np.zeros(1), 1.0)
    rng = np.random.default_rng(20)
    state = _sampler.initial_state(data, rng, paths=np.ones((N, 1), dtype=np.int64),
                                   comp=np.zeros(N, dtype=np.int64))
    assert state.K == 1 and state.children[0] == [1]
    draws = np.empty((20000, 2))
    for t in range(draws.shape[0]):
        _steps.weight_step(data, state, rng)
        draws[t] = np.exp([state.logw[0, 0], state.logw[1, 0]])

    def density(b):
        return np.exp((gamma0 - 1) * np.log1p(-b) + gammaln(gamma * b + N)
                      - gammaln(gamma * b) - np.log(b))

    norm = integrate.quad(density, 0, 1)[0]
    exact = [integrate.quad(lambda b: b * density(b), 0, 1)[0] / norm,
             integrate.quad(lambda b: (gamma * b + N) / (gamma + N) * density(b), 0, 1)[0]
             / norm]
    for chain, value in zip(draws.T, exact):
        se = chain.std() / np.sqrt(effective_sample_size(chain))
        assert abs(chain.mean() - value) < Z_CEILING * se, (chain.mean(), value, se)


def test_known_variance_draw_given_one_point_is_the_conjugate_posterior():
    """The kernel's new component under a known variance (the default model): its mean given
    x_n is N((tau_0 m_0 + tau x_n) / (tau_0 + tau), 1 / (tau_0 + tau)) per coordinate, so
    (tau_0 + tau) |mu - mean|^2 ~ chi^2_d (z-tests on 3,000 draws), and its likelihood column
    is N(x_m; mu, sigma^2 I) at the drawn mu. (The covariance families have their test above;
    a planted standard deviation 1 / (tau_0 + tau) for 1 / sqrt(tau_0 + tau) here passed every
    other test of the tree.)"""
    from mixbayes.tree import _kernels

    rng = np.random.default_rng(21)
    X = rng.normal(size=(5, 2))
    m0, sigma2, s02 = np.array([0.3, -0.4]), 0.5, 4.0
    data = _state.TreeData(X, 2, 1.0, 1.0, 1.0, sigma2, m0, s02)
    kind, kappa0, dof0, scale0 = data.kernel_prior
    assert kind == _kernels.KNOWN
    state = _sampler.initial_state(data, rng)
    state.ensure_components(state.K + 1)
    K, g = state.K, data.grouped
    logw, logrest = state.logw.copy(), state.logrest.copy()
    loglik = np.zeros((5, state.logw.shape[1]))
    _kernels.seed(22)
    n, draws = 3, 3000
    precision = 1 / s02 + 1 / sigma2
    mean = (m0 / s02 + X[n] / sigma2) / precision
    quad = np.empty(draws)
    for t in range(draws):
        state.logw[:], state.logrest[:] = logw, logrest  # undo the weights
        assert _kernels._open_component(
            n, K, state.paths, state.parent, state.level, state.alive, state.logw,
            state.logrest, state.means, X, loglik, data.top_concentration,
            data.branch_concentration, g.prior_mean, g.prior_precision,
            g.observation_precision, state.depth, kind, kappa0, dof0, scale0, state.prec_vec,
            state.prec_mat) == K + 1
        mu = state.means[K]
        quad[t] = precision * np.sum((mu - mean) ** 2)
        if t < 3:
            expected = stats.multivariate_normal(mu, sigma2 * np.eye(2)).logpdf(X)
            np.testing.assert_allclose(loglik[:, K], expected, rtol=1e-10)
    d = X.shape[1]
    assert abs(quad.mean() - d) < Z_CEILING * np.sqrt(2 * d / draws)
