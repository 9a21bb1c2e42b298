r"""Moves that restructure the tree sampler's state (:mod:`mixbayes.tree._sampler`), each a
Metropolis–Hastings move exact for the posterior, in numba.

The per-point moves change one point's path or component at a time, so a start keeps its
number of leaves and components (issue 22). The three moves here change many points at once:

1. **Split–merge of leaves** (:func:`leaf_split_merge`), components held fixed. A leaf's
   weights enter the joint only through :math:`\mathrm{Dir}(\beta_A;\gamma\beta_P)` and
   :math:`\prod_{n\in A}\beta_{A c_n}`; integrated out they give the Dirichlet–multinomial

   .. math:: D(A) = \frac{\Gamma(\gamma)}{\Gamma(\gamma + n_A)}\prod_k
             \frac{\Gamma(\gamma\beta_{Pk} + n_{Ak})}{\Gamma(\gamma\beta_{Pk})}

   (the remainder has no customers). Two points :math:`i` (uniform) and :math:`j` (uniform
   among the other points below :math:`i`'s leaf's parent :math:`P`) are drawn; in one leaf
   :math:`A`, a split into :math:`A_1\ni i` and a new sibling :math:`A_2\ni j` is proposed by
   sequential allocation (Dahl 2005) of the other points, in random order, each to side
   :math:`s` with probability :math:`\propto n_s(\gamma\beta_{Pc} + n_{sc})/(\gamma + n_s)`
   (the nCRP size times the Polya-urn predictive of its component, i.e. the target's
   conditional given the points already placed); in two leaves under :math:`P`, their merge.
   With :math:`q` the probability of the allocation, the split's acceptance ratio is

   .. math:: \frac{\alpha\,\Gamma(n_1)\Gamma(n_2)}{\Gamma(n_1 + n_2)}
             \frac{D(A_1)D(A_2)}{D(A)}\frac{1}{q}

   (the nCRP at :math:`P`; nodes above keep their sizes) and the merge's its inverse, with
   :math:`q` of the allocation that would give the two leaves. The pair's probability,
   :math:`1/(N(n_P - 1))`, is the same both ways. After an accepted move the leaves' weights
   are drawn from :math:`\mathrm{Dir}(\gamma\beta_P + n_{A})` (their exact conditional; the
   move never looked at them, so a rejection may keep them). Leaves under different parents
   are not merged here: :func:`regraft` first carries one under the other's parent.
2. **Split–merge of components** (:func:`component_split_merge`), means integrated out (the
   Normal–Normal marginal :math:`m(X_S)`), every node's weights kept. :math:`i, j` uniform;
   :math:`c_i = c_j = k` proposes a split into :math:`k_1\ni i, k_2\ni j` by sequential
   allocation with probability :math:`\propto n_s\,p(x\mid X_s)` (the collapsed predictive);
   :math:`c_i\ne c_j` their merge. Every node's weight splits as
   :math:`\beta_{zk_1} = u_z\beta_{zk}`, :math:`\beta_{zk_2} = (1 - u_z)\beta_{zk}` (Jacobian
   :math:`\prod_z\beta_{zk}`). The prior of the weights: :math:`\gamma_0^K\prod_k
   \beta_{z_0k}^{-1}\,\beta_{z_0}^{*\,\gamma_0 - 1}` at the root (the density whose
   conditional given table counts is the weight step's :math:`\mathrm{Dir}(T, \gamma_0)`) and
   :math:`\mathrm{Dir}(\beta_z;\gamma\beta_p)` below, whose ratio times the Jacobian is
   :math:`\gamma_0/(u_0(1 - u_0))` at the root and the density
   :math:`\mathrm{Beta}(u_z; a_z, b_z)`, :math:`a_z = \gamma\beta_{pk}u_p`,
   :math:`b_z = \gamma\beta_{pk}(1 - u_p)`, below (the DP's aggregation property). The
   points add :math:`\prod_{\text{leaves}}u_z^{n_{z1}}(1 - u_z)^{n_{z2}}`. The fractions are
   proposed top-down, :math:`u_z\sim\mathrm{Beta}(a_z + t_{z1}, b_z + t_{z2})` with
   :math:`t` the leaf's points in each part, or at an inner node the number of its
   children holding points of each part (a stand-in for its tables; the root:
   :math:`a = b = 0`); a node with no point of :math:`k` below draws from its prior, and
   its terms cancel. So the split's ratio is

   .. math:: \frac{m(X_1)m(X_2)}{m(X_1\cup X_2)}\,\frac{1}{q}\;
             \gamma_0\frac{B(t_1, t_2)}{u_0^{t_1}(1 - u_0)^{t_2}}
             \prod_{\text{inner } z}\frac{B(a_z + t_{z1}, b_z + t_{z2})}
             {B(a_z, b_z)\,u_z^{t_{z1}}(1 - u_z)^{t_{z2}}}
             \prod_{\text{leaves } z}\frac{B(a_z + n_{z1}, b_z + n_{z2})}{B(a_z, b_z)}

   over the nodes with points of :math:`k` below, and the merge's its inverse, evaluated
   at the state's fractions :math:`u_z = \beta_{zc_i}/(\beta_{zc_i} + \beta_{zc_j})`. Every
   term is computed as rising factorials :math:`\Gamma(a + t)/\Gamma(a)`, so tiny
   :math:`a` (sparse weights, :math:`\gamma = 0.01`) neither underflow nor cancel. After an
   accepted move the new components' means are drawn from their conjugate posterior. The
   partition, not the labels, is the state (every move treats labels alike).
3. **Regraft** (:func:`regraft`, depth :math:`\ge 2`): a node :math:`z` at a level
   :math:`l` uniform in :math:`2..L`, the level-:math:`l` node of a uniform point (so chosen
   with probability :math:`n_z/(N(L - 1))` both ways), and the subtree below it move under a
   level-:math:`(l - 1)` parent proposed by a walk down from the root that picks, uniformly at every
   level, one of the children holding other points or a new branch (below a new node, new
   nodes down to level :math:`l - 1`; the nested CRP's own walk, :math:`\propto n_c` and
   :math:`\alpha`, almost never opens a branch for a block); new nodes' weights come from
   their prior :math:`\mathrm{Dir}(\gamma\beta_{parent})`, which cancels the prior's term,
   as vacated nodes' do. For a leaf, with its weights integrated out, the ratio is

   .. math:: \frac{p_{\mathrm{nCRP}}(\mathbf V')}{p_{\mathrm{nCRP}}(\mathbf V)}
             \frac{D(z\mid P')}{D(z\mid P)}\frac{q(P\mid z)}{q(P'\mid z)},

   and its weights are then drawn from :math:`\mathrm{Dir}(\gamma\beta_{P'} + n_z)`; an
   inner node keeps its weights (its children's densities depend on them), and
   :math:`D(z\mid\cdot)` becomes :math:`\mathrm{Dir}(\beta_z;\gamma\beta_\cdot)`. (With
   sparse weights that density is sharp, so an inner node moves mostly under a parent
   whose weights are like its old parent's.)

Moves 1 and 3 change sibling sets and so the margin penalty :math:`e^{-2C\sum\xi}`; they do
not account for it and are switched off when :math:`C > 0` (:func:`mixbayes.tree._sampler.
sweep`). Move 2 changes neither paths nor discriminants and runs at any :math:`C`. Moves 1
and 3 read the components only through their labels, so they do not depend on the component
family; move 2's family term is :func:`_log_marginal` and the predictive in
:func:`_log_predictive`.
"""

from math import lgamma

import numpy as np
from numba import njit

from ._kernels import _draw_node_weights, _log_beta, _log_gamma

_TINY = np.log(1e-8)  # below it, lgamma(a) is -log(a) to 1e-8 relative


@njit(cache=True)
def _log_rising(log_a, n):
    r""":math:`\log\Gamma(a + n) - \log\Gamma(a)` from :math:`\log a` (exact 0 for n = 0; for
    tiny :math:`a`, :math:`\log a + \log\Gamma(n)`, so that it neither underflows nor
    cancels)."""
    if n == 0:
        return 0.0
    if log_a < _TINY:
        return log_a + lgamma(n)
    a = np.exp(log_a)
    return lgamma(a + n) - lgamma(a)


@njit(cache=True)
def _log_dm(P, counts, total, K, log_gamma, gamma, logw):
    r"""The Dirichlet–multinomial :math:`\log D` of a leaf with component ``counts`` (total
    ``total``) under parent ``P``."""
    value = lgamma(gamma) - lgamma(gamma + total)
    for k in range(K):
        if counts[k]:
            value += _log_rising(log_gamma + logw[P, k], counts[k])
    return value


@njit(cache=True)
def _draw_weights(z, P, K, gamma, counts, logw, logrest):
    r"""``z``'s weights :math:`\sim\mathrm{Dir}(\gamma\beta_P + n_z)` over K components and the
    rest (the remainder has no customers)."""
    top = -np.inf
    for k in range(K):
        a = gamma * np.exp(logw[P, k]) + counts[k]
        logw[z, k] = _log_gamma(a) if a > 0 else -np.inf
        top = max(top, logw[z, k])
    logrest[z] = _log_gamma(gamma * np.exp(logrest[P]))
    top = max(top, logrest[z])
    total = np.exp(logrest[z] - top)
    for k in range(K):
        total += np.exp(logw[z, k] - top)
    log_total = np.log(total) + top
    for k in range(K):
        logw[z, k] -= log_total
    logrest[z] -= log_total


@njit(cache=True)
def _drop(z, alive, parent, count, logw):
    alive[z] = False
    parent[z] = -1
    count[z] = 0
    for k in range(logw.shape[1]):
        logw[z, k] = -np.inf


@njit(cache=True)
def _free_node(alive):
    z = 1
    while alive[z]:
        z += 1
    return z


# -------------------------------------------------------------------- 1: leaves
@njit(cache=True)
def leaf_split_merge(tries, paths, comp, parent, level, count, alive, logw, logrest, K, alpha,
                     gamma, seed):
    """``tries`` split–merge proposals of leaves (module docstring, move 1); needs ``tries``
    free node slots. Returns (proposals, accepted)."""
    np.random.seed(seed)
    N, L = paths.shape
    log_gamma = np.log(gamma)
    members = np.empty(N, dtype=np.int64)
    side = np.empty(N, dtype=np.int64)
    n1k = np.zeros(K, dtype=np.int64)
    n2k = np.zeros(K, dtype=np.int64)
    both = np.zeros(K, dtype=np.int64)
    proposed = 0
    accepted = 0
    for _ in range(tries):
        i = np.random.randint(N)
        A = paths[i, L - 1]
        P = parent[A]
        if count[P] < 2:
            continue
        r = np.random.randint(count[P] - 1)  # j: uniform over the others below P
        j = -1
        for m in range(N):
            if m != i and (L == 1 or paths[m, L - 2] == P):
                if r == 0:
                    j = m
                    break
                r -= 1
        B = paths[j, L - 1]
        split = A == B
        n_members = 0
        for m in range(N):
            leaf = paths[m, L - 1]
            if (leaf == A or leaf == B) and m != i and m != j:
                members[n_members] = m
                side[n_members] = 1 if leaf == B and not split else 0
                n_members += 1
        order = np.random.permutation(n_members)
        n1k[:] = 0
        n2k[:] = 0
        n1k[comp[i]] += 1
        n2k[comp[j]] += 1
        n1 = 1
        n2 = 1
        log_q = 0.0
        for o in range(n_members):
            t = order[o]
            k = comp[members[t]]
            lb = log_gamma + logw[P, k]
            l1 = np.log(n1) + np.logaddexp(lb, np.log(n1k[k])) - np.log(gamma + n1)
            l2 = np.log(n2) + np.logaddexp(lb, np.log(n2k[k])) - np.log(gamma + n2)
            top = np.logaddexp(l1, l2)
            if split:
                side[t] = 0 if np.log(np.random.random()) < l1 - top else 1
            if side[t] == 0:
                log_q += l1 - top
                n1k[k] += 1
                n1 += 1
            else:
                log_q += l2 - top
                n2k[k] += 1
                n2 += 1
        for k in range(K):
            both[k] = n1k[k] + n2k[k]
        log_target = (np.log(alpha) + lgamma(n1) + lgamma(n2) - lgamma(n1 + n2)
                      + _log_dm(P, n1k, n1, K, log_gamma, gamma, logw)
                      + _log_dm(P, n2k, n2, K, log_gamma, gamma, logw)
                      - _log_dm(P, both, n1 + n2, K, log_gamma, gamma, logw))
        log_ratio = log_target - log_q if split else log_q - log_target
        proposed += 1
        if not np.log(np.random.random()) < log_ratio:  # (NaN rejects)
            continue
        accepted += 1
        if split:
            z = _free_node(alive)
            alive[z] = True
            parent[z] = P
            level[z] = L
            count[z] = n2
            count[A] = n1
            paths[j, L - 1] = z
            for t in range(n_members):
                if side[t] == 1:
                    paths[members[t], L - 1] = z
            _draw_weights(A, P, K, gamma, n1k, logw, logrest)
            _draw_weights(z, P, K, gamma, n2k, logw, logrest)
        else:
            for t in range(n_members):
                paths[members[t], L - 1] = A
            paths[j, L - 1] = A
            count[A] = n1 + n2
            _drop(B, alive, parent, count, logw)
            _draw_weights(A, P, K, gamma, both, logw, logrest)
    return proposed, accepted


# -------------------------------------------------------------------- 2: components
@njit(cache=True)
def _log_marginal(n, total, sumsq, prior_mean, prior_prec, obs_prec):
    r""":math:`\log m(X_S)`, the points' density with their common mean integrated out:
    :math:`\sum_j[\tfrac12\log(\tau_0/\tau_n) - \tfrac\tau2\sum x^2 - \tfrac{\tau_0}2 m_0^2
    + (\tau_0m_0 + \tau s)^2/(2\tau_n)] + \tfrac{nd}2\log(\tau/2\pi)`,
    :math:`\tau_n = \tau_0 + n\tau`."""
    d = total.shape[0]
    precision = prior_prec + n * obs_prec
    value = 0.5 * n * d * np.log(obs_prec / (2.0 * np.pi)) + 0.5 * d * np.log(
        prior_prec / precision) - 0.5 * obs_prec * sumsq
    for a in range(d):
        b = prior_prec * prior_mean[a] + obs_prec * total[a]
        value += b * b / (2.0 * precision) - 0.5 * prior_prec * prior_mean[a] ** 2
    return value


@njit(cache=True)
def _log_predictive(x, n, total, prior_mean, prior_prec, obs_prec):
    r""":math:`\log p(x\mid X_S)`: :math:`N(x; (\tau_0m_0 + \tau s)/\tau_n,
    (1/\tau_n + 1/\tau) I)`."""
    d = x.shape[0]
    precision = prior_prec + n * obs_prec
    var = 1.0 / precision + 1.0 / obs_prec
    sq = 0.0
    for a in range(d):
        diff = x[a] - (prior_prec * prior_mean[a] + obs_prec * total[a]) / precision
        sq += diff * diff
    return -0.5 * d * np.log(2.0 * np.pi * var) - 0.5 * sq / var


@njit(cache=True)
def _draw_mean(k, n, total, means, prior_mean, prior_prec, obs_prec):
    precision = prior_prec + n * obs_prec
    for a in range(total.shape[0]):
        means[k, a] = ((prior_prec * prior_mean[a] + obs_prec * total[a]) / precision
                       + np.random.standard_normal() / np.sqrt(precision))


@njit(cache=True)
def component_split_merge(tries, X, paths, comp, comp_count, parent, level, alive, logw,
                          logrest, means, K, gamma0, gamma, prior_mean, prior_prec, obs_prec,
                          seed):
    """``tries`` split–merge proposals of components (module docstring, move 2); needs room
    for ``tries`` more components. Returns (K, proposals, accepted)."""
    np.random.seed(seed)
    N, L = paths.shape
    d = X.shape[1]
    n_nodes = alive.shape[0]
    log_gamma = np.log(gamma)
    members = np.empty(N, dtype=np.int64)
    side = np.empty(N, dtype=np.int64)
    below = np.zeros((n_nodes, 2), dtype=np.int64)  # points of each part below a node
    kids = np.zeros((n_nodes, 2), dtype=np.int64)  # children holding points of each part
    lu = np.zeros((n_nodes, 2))  # log u_z, log(1 - u_z)
    sums = np.zeros((2, d))
    sumsq = np.zeros(2)
    sizes = np.zeros(2, dtype=np.int64)
    proposed = 0
    accepted = 0
    for _ in range(tries):
        i = np.random.randint(N)
        j = np.random.randint(N - 1)
        if j >= i:
            j += 1
        ki = comp[i]
        kj = comp[j]
        split = ki == kj
        n_members = 0
        for m in range(N):
            if (comp[m] == ki or comp[m] == kj) and m != i and m != j:
                members[n_members] = m
                side[n_members] = 1 if comp[m] == kj and not split else 0
                n_members += 1
        order = np.random.permutation(n_members)
        sizes[:] = 1
        for a in range(d):
            sums[0, a] = X[i, a]
            sums[1, a] = X[j, a]
        sumsq[0] = np.sum(X[i] ** 2)
        sumsq[1] = np.sum(X[j] ** 2)
        log_q = 0.0
        for o in range(n_members):
            t = order[o]
            x = X[members[t]]
            l0 = np.log(sizes[0]) + _log_predictive(x, sizes[0], sums[0], prior_mean,
                                                    prior_prec, obs_prec)
            l1 = np.log(sizes[1]) + _log_predictive(x, sizes[1], sums[1], prior_mean,
                                                    prior_prec, obs_prec)
            top = np.logaddexp(l0, l1)
            if split:
                side[t] = 0 if np.log(np.random.random()) < l0 - top else 1
            s = side[t]
            log_q += (l0 if s == 0 else l1) - top
            sizes[s] += 1
            sumsq[s] += np.sum(x ** 2)
            for a in range(d):
                sums[s, a] += x[a]
        log_ratio = (_log_marginal(sizes[0], sums[0], sumsq[0], prior_mean, prior_prec,
                                   obs_prec)
                     + _log_marginal(sizes[1], sums[1], sumsq[1], prior_mean, prior_prec,
                                     obs_prec)
                     - _log_marginal(sizes[0] + sizes[1], sums[0] + sums[1],
                                     sumsq[0] + sumsq[1], prior_mean, prior_prec, obs_prec)
                     - log_q)
        # the weights: points and children of each part below every node
        below[:] = 0
        kids[:] = 0
        for lev in range(L):
            below[paths[i, lev], 0] += 1
            below[paths[j, lev], 1] += 1
            for t in range(n_members):
                below[paths[members[t], lev], side[t]] += 1
        for z in range(1, n_nodes):
            if alive[z]:
                for s in range(2):
                    if below[z, s] > 0:
                        kids[parent[z], s] += 1
        for lev in range(L + 1):
            for z in range(n_nodes):
                if not alive[z] or level[z] != lev:
                    continue
                t1 = kids[z, 0] if lev < L else below[z, 0]
                t2 = kids[z, 1] if lev < L else below[z, 1]
                if not split:  # the state's fractions
                    total = np.logaddexp(logw[z, ki], logw[z, kj])
                    lu[z, 0] = logw[z, ki] - total
                    lu[z, 1] = logw[z, kj] - total
                if z == 0:
                    if split:
                        lu[0, 0], lu[0, 1] = _log_beta(float(t1), float(t2))
                    log_ratio += (np.log(gamma0) + lgamma(t1) + lgamma(t2) - lgamma(t1 + t2)
                                  - t1 * lu[0, 0] - t2 * lu[0, 1])
                    continue
                p = parent[z]
                la = log_gamma + logw[p, ki] + (lu[p, 0] if split else 0.0)
                lb = log_gamma + (logw[p, ki] + lu[p, 1] if split else logw[p, kj])
                if split:
                    lu[z, 0], lu[z, 1] = _log_beta(np.exp(la) + t1, np.exp(lb) + t2)
                if t1 == 0 and t2 == 0:  # proposed from the prior: its terms cancel
                    continue
                log_ratio += (_log_rising(la, t1) + _log_rising(lb, t2)
                              - _log_rising(np.logaddexp(la, lb), t1 + t2))
                if lev < L:  # (a part without points here leaves no term: never 0 * -inf)
                    if t1:
                        log_ratio -= t1 * lu[z, 0]
                    if t2:
                        log_ratio -= t2 * lu[z, 1]
        if not split:
            log_ratio = -log_ratio
        proposed += 1
        if not np.log(np.random.random()) < log_ratio:  # (NaN rejects)
            continue
        accepted += 1
        if split:
            for z in range(n_nodes):
                if alive[z]:
                    logw[z, K] = logw[z, ki] + lu[z, 1]
                    logw[z, ki] = logw[z, ki] + lu[z, 0]
            comp[j] = K
            for t in range(n_members):
                if side[t] == 1:
                    comp[members[t]] = K
            comp_count[ki] = sizes[0]
            comp_count[K] = sizes[1]
            _draw_mean(ki, sizes[0], sums[0], means, prior_mean, prior_prec, obs_prec)
            _draw_mean(K, sizes[1], sums[1], means, prior_mean, prior_prec, obs_prec)
            K += 1
        else:
            for z in range(n_nodes):
                if alive[z]:
                    logw[z, ki] = np.logaddexp(logw[z, ki], logw[z, kj])
            comp[j] = ki
            for t in range(n_members):
                comp[members[t]] = ki
            comp_count[ki] = sizes[0] + sizes[1]
            _draw_mean(ki, sizes[0] + sizes[1], sums[0] + sums[1], means, prior_mean,
                       prior_prec, obs_prec)
            last = K - 1  # the last component takes the freed index
            if kj != last:
                for z in range(n_nodes):
                    logw[z, kj] = logw[z, last]
                means[kj] = means[last]
                comp_count[kj] = comp_count[last]
                for m in range(N):
                    if comp[m] == last:
                        comp[m] = kj
            for z in range(n_nodes):
                logw[z, last] = -np.inf
            comp_count[last] = 0
            K = last
    return K, proposed, accepted


# -------------------------------------------------------------------- 3: regraft
@njit(cache=True)
def _log_ncrp(parent, count, alive, alpha):
    r""":math:`\log p_{\mathrm{nCRP}}(\mathbf V)` over the occupied nodes (see
    :func:`mixbayes.tree._state.log_ncrp`)."""
    n_nodes = alive.shape[0]
    kids = np.zeros(n_nodes, dtype=np.int64)
    value = 0.0
    for c in range(1, n_nodes):
        if alive[c] and count[c] > 0:
            kids[parent[c]] += 1
            value += lgamma(count[c])
    for z in range(n_nodes):
        if alive[z] and kids[z] > 0:
            value += kids[z] * np.log(alpha) + lgamma(alpha) - lgamma(alpha + count[z])
    return value


@njit(cache=True)
def _options(node, parent, count, alive):
    """The choices of the regraft walk at ``node``: its children holding other points, and a
    new branch."""
    options = 1
    for c in range(1, alive.shape[0]):
        if alive[c] and parent[c] == node and count[c] > 0:
            options += 1
    return options


@njit(cache=True)
def _lgamma_of_log(log_a):
    r""":math:`\log\Gamma(a)` from :math:`\log a` (:math:`-\log a` below 1e-8)."""
    return -log_a if log_a < _TINY else lgamma(np.exp(log_a))


@njit(cache=True)
def _log_dirichlet_ratio(z, Q, P, K, gamma, logw, logrest):
    r""":math:`\log\mathrm{Dir}(\beta_z;\gamma\beta_Q) - \log\mathrm{Dir}(\beta_z;
    \gamma\beta_P)` over the K components and the remainder: :math:`\sum_k
    \log\Gamma(\gamma\beta_{Pk}) - \log\Gamma(\gamma\beta_{Qk})
    + \gamma(\beta_{Qk} - \beta_{Pk})\log\beta_{zk}` (a coordinate where both parents
    carry the same weight adds nothing: never 0 * -inf)."""
    log_gamma = np.log(gamma)
    value = 0.0
    for k in range(K + 1):
        lq = logw[Q, k] if k < K else logrest[Q]
        lp = logw[P, k] if k < K else logrest[P]
        if lq == lp:
            continue
        lz = logw[z, k] if k < K else logrest[z]
        value += (_lgamma_of_log(log_gamma + lp) - _lgamma_of_log(log_gamma + lq)
                  + gamma * (np.exp(lq) - np.exp(lp)) * lz)
    return value


@njit(cache=True)
def regraft(tries, paths, comp, parent, level, count, alive, logw, logrest, K, alpha, gamma,
            seed):
    """``tries`` regraft proposals of nodes at levels 2..L (module docstring, move 3; depth
    >= 2); needs ``tries * (L - 1)`` free node slots. Returns (proposals, accepted)."""
    np.random.seed(seed)
    N, L = paths.shape
    n_nodes = alive.shape[0]
    log_gamma = np.log(gamma)
    nzk = np.zeros(K, dtype=np.int64)
    old = np.empty(L - 1, dtype=np.int64)
    new = np.empty(L - 1, dtype=np.int64)
    created = np.empty(L - 1, dtype=np.int64)
    proposed = 0
    accepted = 0
    for _ in range(tries):
        i = np.random.randint(N)
        l = 2 + np.random.randint(L - 1)  # z's level; its new parent is at level l - 1
        z = paths[i, l - 1]
        nz = count[z]
        for lev in range(l - 1):
            old[lev] = paths[i, lev]
        before = _log_ncrp(parent, count, alive, alpha)
        count[0] -= nz  # the other points' sizes: the walks' weights
        for lev in range(l - 1):
            count[old[lev]] -= nz
        # the reverse walk: the probability of the old prefix
        log_back = 0.0
        node = 0
        for lev in range(l - 1):
            c = old[lev]
            log_back -= np.log(_options(node, parent, count, alive))
            if count[c] == 0:
                break
            node = c
        # the forward walk
        log_forward = 0.0
        n_created = 0
        node = 0
        for lev in range(l - 1):
            if n_created == 0:
                options = _options(node, parent, count, alive)
                log_forward -= np.log(options)
                pick = np.random.randint(options)  # the last option: a new branch
                picked = -1
                for c in range(1, n_nodes):
                    if alive[c] and parent[c] == node and count[c] > 0:
                        if pick == 0:
                            picked = c
                            break
                        pick -= 1
                if picked >= 0:
                    node = picked
                    new[lev] = node
                    continue
            c = _free_node(alive)
            alive[c] = True
            parent[c] = node
            level[c] = lev + 1
            count[c] = 0
            _draw_node_weights(c, node, K, gamma, logw, logrest)
            created[n_created] = c
            n_created += 1
            node = c
            new[lev] = node
        P = old[l - 2]
        Q = new[l - 2]
        if Q == P:  # the same parent: no move
            count[0] += nz
            for lev in range(l - 1):
                count[old[lev]] += nz
            continue
        count[0] += nz
        for lev in range(l - 1):
            count[new[lev]] += nz
        parent[z] = Q
        after = _log_ncrp(parent, count, alive, alpha)
        log_ratio = after - before + log_back - log_forward
        if l == L:  # a leaf: its weights integrated out
            nzk[:] = 0
            for m in range(N):
                if paths[m, L - 1] == z:
                    nzk[comp[m]] += 1
            log_ratio += (_log_dm(Q, nzk, nz, K, log_gamma, gamma, logw)
                          - _log_dm(P, nzk, nz, K, log_gamma, gamma, logw))
        else:  # an inner node keeps its weights: their density under each parent
            log_ratio += _log_dirichlet_ratio(z, Q, P, K, gamma, logw, logrest)
        proposed += 1
        if np.log(np.random.random()) < log_ratio:
            accepted += 1
            for m in range(N):
                if paths[m, l - 1] == z:
                    for lev in range(l - 1):
                        paths[m, lev] = new[lev]
            for lev in range(l - 1):
                if count[old[lev]] == 0:
                    _drop(old[lev], alive, parent, count, logw)
            if l == L:
                _draw_weights(z, Q, K, gamma, nzk, logw, logrest)
        else:
            parent[z] = P
            for lev in range(l - 1):
                count[new[lev]] -= nz
                count[old[lev]] += nz
            for t in range(n_created):
                _drop(created[t], alive, parent, count, logw)
    return proposed, accepted


# -------------------------------------------------------------------- drivers
TRIES = {"split_merge": 40, "components": 40, "regraft": 20}  # proposals per sweep


def _room_for_nodes(state, free):
    while np.count_nonzero(~state.alive) < free:
        state._grow_nodes()


def run(data, state, rng, move, tries=None):
    """``tries`` proposals (default :data:`TRIES`) of ``move`` ("split_merge", "components"
    or "regraft") on ``state``; returns (proposals, accepted). Each draws the seed of
    numba's generator from ``rng``."""
    tries = TRIES[move] if tries is None else tries
    L = state.depth
    seed = int(rng.integers(2**32))
    gamma = data.branch_concentration
    if move == "components":
        state.ensure_components(state.K + tries)
        g = data.grouped
        K, proposed, accepted = component_split_merge(
            tries, data.points, state.paths, state.comp, state.comp_count, state.parent,
            state.level, state.alive, state.logw, state.logrest, state.means, state.K,
            data.top_concentration, gamma, g.prior_mean, g.prior_precision,
            g.observation_precision, seed)
        state.K = int(K)
        return proposed, accepted
    if move == "split_merge":
        _room_for_nodes(state, tries + 1)
        out = leaf_split_merge(tries, state.paths, state.comp, state.parent, state.level,
                               state.count, state.alive, state.logw, state.logrest, state.K,
                               data.path_concentration, gamma, seed)
    elif move == "regraft":
        if L < 2:
            return 0, 0
        _room_for_nodes(state, tries * (L - 1) + 1)
        out = regraft(tries, state.paths, state.comp, state.parent, state.level, state.count,
                      state.alive, state.logw, state.logrest, state.K,
                      data.path_concentration, gamma, seed)
    else:
        raise ValueError(f"move must be 'split_merge', 'components' or 'regraft'; got {move!r}")
    state.rebuild_children()
    return out
