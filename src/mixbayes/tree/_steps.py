r"""The steps of one sweep of the tree sampler (:mod:`mixbayes.tree._sampler`, steps 1-5):
paths with their components (in numba, :func:`path_step`, and in plain Python,
:func:`path_step_reference`), weights by table counts, means, discriminants.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..families.atoms import draw_atoms
from ..families.draws import antoniak, log_beta, log_dirichlet
from . import _kernels
from . import _regularisation as reg
from ._state import _log_fit, state_loglik


# -------------------------------------------------------------------- step 1: paths
def _draw_node_weights(data, state, z, rng):
    p = state.parent[z]
    K = state.K
    log_alpha = np.log(data.branch_concentration) + np.append(state.logw[p, :K],
                                                              state.logrest[p])
    draw = log_dirichlet(log_alpha, rng)
    state.logw[z, :K] = draw[:K]
    state.logrest[z] = draw[K]


def path_step(data, state, loglik, rng, reg_rng=None):
    """One Metropolis–Hastings move per point (module docstring, step 1), each followed by the
    Gibbs draw of the point's component (step 2), by the numba kernel
    :func:`mixbayes.tree._kernels.path_pass` (the maths of :func:`path_step_reference`).
    Returns the likelihood table (compacted as components open and close, with a column per
    component slot) and the share of proposals accepted. New nodes' discriminants are drawn
    from their prior inside the kernel when C > 0 (with C = 0 they enter nothing, and the
    discriminant step draws them from ``reg_rng``)."""
    N = data.n_points
    table = np.zeros((N, state.logw.shape[1]))
    table[:, : state.K] = loglik[:, : state.K]
    grouped = data.grouped
    start, accepted = 0, 0
    while True:
        status, start, K, done = _kernels.path_pass(
            start, state.K, data.points, data.extended, table, data.log_predictive,
            state.paths, state.comp, state.comp_count, state.parent, state.level, state.count,
            state.alive, state.logw, state.logrest, state.means, state.eta,
            data.path_concentration, data.branch_concentration, data.top_concentration,
            data.margin_weight, data.margin, np.sqrt(data.discriminant_variance),
            grouped.prior_mean, grouped.prior_precision, grouped.observation_precision,
            int(rng.integers(2**32)), *data.kernel_prior, state.prec_vec, state.prec_mat)
        state.K = int(K)
        accepted += done
        if status == _kernels.DONE:
            break
        if status == _kernels.NEED_NODES:
            state._grow_nodes()
        else:
            state.ensure_components(state.K + 1)
            table = np.hstack([table, np.zeros((N, state.logw.shape[1] - table.shape[1]))])
    state.rebuild_children()
    return table, accepted / N


def path_step_reference(data, state, loglik, rng, reg_rng=None):
    """One Metropolis–Hastings move per point (module docstring, step 1), each followed by the
    Gibbs draw of the point's component (step 2), in plain Python: the readable reference of
    the kernel. Returns the likelihood table (extended and compacted as components open and
    close) and the share of proposals accepted."""
    accepted = 0
    for n in range(data.n_points):
        loglik = _unseat(state, loglik, n)
        _move_path(data, state, loglik, n, rng, reg_rng)
        accepted += state.last_accepted
        loglik = _seat(data, state, loglik, n, rng)
    return loglik, accepted / data.n_points


def _move_path(data, state, loglik, n, rng, reg_rng):
    L = state.depth
    alpha = data.path_concentration
    C = data.margin_weight
    regularised = reg_rng is not None
    if True:
        state.last_accepted = 0
        old = state.paths[n].copy()
        state.count[old] -= 1
        state.count[0] -= 1
        # propose from the nCRP given the other points
        new, created, z = [], [], 0
        for _ in range(L):
            if not created:
                kids = [c for c in state.children[z] if state.count[c] > 0]
                sizes = state.count[kids].astype(float)
                total = sizes.sum() + alpha
                u = rng.random() * total
                pick = np.searchsorted(np.cumsum(sizes), u, side="right")
                if pick < len(kids):
                    z = kids[pick]
                    new.append(z)
                    continue
            z = state.new_node(z)
            _draw_node_weights(data, state, z, rng)
            if regularised:
                state.eta[z] = np.sqrt(data.discriminant_variance) * reg_rng.standard_normal(
                    state.eta.shape[1])
            created.append(z)
            new.append(z)
        new = np.asarray(new, dtype=np.int64)
        if not created and np.array_equal(new, old):
            state.count[old] += 1
            state.count[0] += 1
            state.last_accepted = 1
            return
        log_ratio = _log_fit(data, state, loglik, n, new[-1]) - _log_fit(data, state, loglik,
                                                                           n, old[-1])
        vacated = [z for z in old if state.count[z] == 0]
        if C > 0 or regularised:
            log_ratio += _penalty_change(data, state, n, old, new, created, vacated)
        if np.log(rng.random()) < log_ratio:
            state.paths[n] = new
            state.count[new] += 1
            for z in reversed(vacated):
                state.drop_node(z)
            state.last_accepted = 1
        else:
            for z in reversed(created):
                state.drop_node(z)
            state.count[old] += 1
        state.count[0] += 1


def _penalty_change(data, state, n, old, new, created, vacated):
    r""":math:`-2C(\sum_m\xi_m^{new} - \sum_m\xi_m^{old})` over the points whose slack the move
    can change: the point itself and those below a parent that gains or loses a child."""
    C = data.margin_weight
    if C == 0:
        return 0.0
    affected = [np.array([n])]
    for nodes in (created, vacated):
        if nodes:
            top = nodes[0]
            parent = state.parent[top]
            affected.append(reg.points_under(state.paths, parent, state.level[parent]))
    points = np.unique(np.concatenate(affected))
    # "before": the new nodes are not yet in the tree
    for z in created:
        state.children[state.parent[z]].remove(z)
    before = reg.slack(data.extended, state.paths, state.children, state.eta, data.margin,
                       points).sum()
    for z in created:
        state.children[state.parent[z]].append(z)
    for z in vacated:
        state.children[state.parent[z]].remove(z)
    state.paths[n] = new
    after = reg.slack(data.extended, state.paths, state.children, state.eta, data.margin,
                      points).sum()
    state.paths[n] = old
    for z in vacated:
        state.children[state.parent[z]].append(z)
    return -2.0 * C * (after - before)



# -------------------------------------------------------------------- step 2: components
def _open_component(data, state, n, rng):
    """Split a new component off every node's remainder (module docstring, step 2) and draw
    its mean given ``x_n``; returns its index."""
    K = state.K
    state.ensure_components(K + 1)
    on_path = set(state.paths[n].tolist())
    gamma = data.branch_concentration
    log_frac = {}
    old_rest = state.logrest.copy()
    order = [0]
    for z in order:  # breadth first: parents before children
        order.extend(state.children[z])
    for z in order:
        if z == 0:
            lw, l1w = log_beta(1.0, data.top_concentration, rng)
        else:
            p = state.parent[z]
            a = gamma * np.exp(old_rest[p])
            wp = np.exp(log_frac[p])
            lw, l1w = log_beta(a * wp + (1.0 if z in on_path else 0.0), a * (1.0 - wp), rng)
        log_frac[z] = lw
        state.logw[z, K] = state.logrest[z] + lw
        state.logrest[z] = state.logrest[z] + l1w
    if data.family is None:
        single = dataclasses.replace(data.grouped, group_ptr=np.array([0, 1]),
                                     rows=np.zeros(1, dtype=np.int64),
                                     points=data.points[n:n + 1])
        state.means[K] = draw_atoms(single, np.zeros(1, dtype=np.int64), 1, rng)[0]
    else:  # mean and precision from the conjugate posterior given x_n
        family = data.family
        stats = family.label_statistics(family.prepare(data.points[n:n + 1]),
                                        np.zeros(1, dtype=np.int64), 1)
        means, precisions = family.draw(family.posterior(stats), rng)
        state.means[K] = means[0, 0]
        state.set_precisions(K, precisions[0])
    state.comp_count[K] = 0
    state.K = K + 1
    return K


def _unseat(state, loglik, n):
    """Take point ``n`` out of its component; a component it held alone is merged back into
    every node's remainder at once (the conditionals that follow treat every instantiated
    component as one the other points use). Returns the likelihood table."""
    k = state.comp[n]
    state.comp_count[k] -= 1
    state.comp[n] = -1
    if state.comp_count[k] > 0:
        return loglik
    last = state.K - 1
    alive = state.alive
    state.logrest[alive] = np.logaddexp(state.logrest[alive], state.logw[alive, k])
    if k != last:  # the last component takes the freed index
        state.logw[:, k] = state.logw[:, last]
        state.means[k] = state.means[last]
        state.prec_vec[k] = state.prec_vec[last]
        state.prec_mat[k] = state.prec_mat[last]
        state.comp_count[k] = state.comp_count[last]
        state.comp[state.comp == last] = k
        loglik[:, k] = loglik[:, last]
    state.logw[:, last] = -np.inf
    state.comp_count[last] = 0
    state.K = last
    return loglik


def _seat(data, state, loglik, n, rng):
    """Gibbs draw of point ``n``'s component given its leaf (module docstring, step 2)."""
    leaf = state.paths[n, -1]
    K = state.K
    logp = np.append(state.logw[leaf, :K] + loglik[n, :K],
                     state.logrest[leaf] + data.log_predictive[n])
    p = np.exp(logp - logp.max())
    k = min(int(np.searchsorted(np.cumsum(p), rng.random() * p.sum(), side="right")), K)
    if k == K:
        k = _open_component(data, state, n, rng)
        if loglik.shape[1] <= k:
            loglik = np.hstack([loglik, np.zeros((loglik.shape[0], loglik.shape[1] + 8))])
        loglik[:, k] = state_loglik(data, state, k, k + 1)[:, 0]
    state.comp[n] = k
    state.comp_count[k] += 1
    return loglik



# -------------------------------------------------------------------- step 3: weights
def weight_step(data, state, rng):
    """Every node's weights from the table-augmented conditional (module docstring, step 3)."""
    K, L = state.K, state.depth
    gamma = data.branch_concentration
    customers = np.zeros((state.alive.size, K), dtype=np.int64)
    np.add.at(customers, (state.paths[:, -1], state.comp), 1)
    for level in range(L, 0, -1):
        nodes = state.nodes_at(level)
        parents = state.parent[nodes]
        tables = antoniak(customers[nodes], gamma * np.exp(state.logw[parents, :K]), rng)
        np.add.at(customers, parents, tables.reshape(nodes.size, K))
    root = np.log(np.append(customers[0].astype(float), data.top_concentration))
    draw = log_dirichlet(root, rng)
    state.logw[0, :K], state.logrest[0] = draw[:K], draw[K]
    for level in range(1, L + 1):  # a level's nodes at once, given their parents' new weights
        nodes = state.nodes_at(level)
        parents = state.parent[nodes]
        prior = gamma * np.exp(np.column_stack([state.logw[parents, :K], state.logrest[parents]]))
        counts = np.column_stack([customers[nodes], np.zeros(nodes.size)])
        with np.errstate(divide="ignore"):
            draw = log_dirichlet(np.log(prior + counts), rng)
        state.logw[nodes, :K], state.logrest[nodes] = draw[:, :K], draw[:, K]


# -------------------------------------------------------------------- step 4 and 5
def mean_step(data, state, rng):
    """Every component's mean (and precision) from its conjugate posterior (step 4)."""
    if data.family is None:
        state.means[: state.K] = draw_atoms(data.grouped, state.comp, state.K, rng)
        return
    family = data.family
    stats = family.label_statistics(data.centred, state.comp, state.K)
    means, precisions = family.draw(family.posterior(stats), rng)
    state.means[: state.K] = means[0]
    state.set_precisions(0, precisions[0])


def discriminant_step(data, state, rng):
    nodes = np.flatnonzero(state.alive & (state.level > 0))
    reg.update_discriminants(data.extended, state.paths, state.children, state.eta, nodes,
                             state.level[nodes], state.parent[nodes], data.margin_weight,
                             data.margin, data.discriminant_variance, rng)
