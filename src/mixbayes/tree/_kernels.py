r"""numba kernel of the tree sampler's per-point moves (steps 1 and 2 of
:mod:`mixbayes.tree._sampler`): for every point, its component taken out, a path proposed from
the nested CRP and accepted by Metropolis–Hastings, then its component drawn by Gibbs.

The same maths as the readable reference (``_steps.path_step_reference``), on plain arrays:
a node's children are the alive nodes whose parent it is (found by a scan, in index order), and
the kernel stops with a status when it needs room for more nodes or components; the caller
grows the arrays and calls again from the point it reached. Random draws come from numba's own
generator, seeded by the caller's stream at every call.

Components are (mean, precision) pairs. ``kind`` says which precisions: ``KNOWN`` (the shared
:math:`\sigma^{-2}`, ``obs_prec``), ``FULL`` (matrices in ``prec_mat`` (K, d, d)), ``DIAG`` and
``SPHERICAL`` (per-feature precisions in ``prec_vec`` (K, d), equal when spherical); the array a
kind does not use has a zero-length last axis, so every kind runs one compiled kernel.
"""

import numpy as np
from numba import njit

DONE, NEED_NODES, NEED_COMPONENTS = 0, 1, 2
KNOWN, FULL, DIAG, SPHERICAL = 0, 1, 2, 3
KINDS = {"known": KNOWN, "full": FULL, "diag": DIAG, "spherical": SPHERICAL}


@njit(cache=True)
def seed(value):
    """Seed numba's generator (the kernels' draws), for tests that call a kernel piece."""
    np.random.seed(value)


@njit(cache=True)
def _log_gamma(a):
    r""":math:`\log G`, :math:`G\sim\mathrm{Gamma}(a)`, without underflow for tiny :math:`a`."""
    a = max(a, 1e-300)
    return np.log(np.random.standard_gamma(a + 1.0)) + np.log(np.random.random()) / a


@njit(cache=True)
def _log_beta(a, b):
    ga = _log_gamma(a)
    gb = _log_gamma(b)
    total = np.logaddexp(ga, gb)
    return ga - total, gb - total


@njit(cache=True)
def _draw_node_weights(z, p, K, gamma, logw, logrest):
    r"""``z``'s weights :math:`\sim\mathrm{Dir}(\gamma\beta_p)` over K components and the rest."""
    top = -np.inf
    for k in range(K + 1):
        lp = logw[p, k] if k < K else logrest[p]
        if lp == -np.inf:
            g = -np.inf
        else:
            g = _log_gamma(gamma * np.exp(lp))
        if k < K:
            logw[z, k] = g
        else:
            logrest[z] = g
        top = max(top, g)
    total = 0.0
    for k in range(K):
        total += np.exp(logw[z, k] - top)
    total += np.exp(logrest[z] - top)
    log_total = np.log(total) + top
    for k in range(K):
        logw[z, k] -= log_total
    logrest[z] -= log_total


@njit(cache=True)
def _log_fit(n, leaf, K, logw, logrest, loglik, log_pred):
    top = logrest[leaf] + log_pred[n]
    for k in range(K):
        top = max(top, logw[leaf, k] + loglik[n, k])
    if top == -np.inf:
        return top
    total = np.exp(logrest[leaf] + log_pred[n] - top)
    for k in range(K):
        if logw[leaf, k] > -np.inf:  # most components are in other leaves: no exp for them
            total += np.exp(logw[leaf, k] + loglik[n, k] - top)
    return np.log(total) + top


@njit(cache=True)
def _slack(ext_m, path, parent, alive, intree, eta, margin):
    r""":math:`\xi` of a point with features ``ext_m`` on ``path`` in the tree of the nodes
    ``alive & intree``: the largest :math:`\varepsilon_0 - (\eta_v - \eta_z)^\top\tilde x`
    over levels and siblings, floored at 0."""
    xi = 0.0
    D = ext_m.shape[0]
    for lev in range(path.shape[0]):
        v = path[lev]
        p = parent[v]
        own = 0.0
        for j in range(D):
            own += ext_m[j] * eta[v, j]
        for c in range(parent.shape[0]):
            if c == v or not alive[c] or not intree[c] or parent[c] != p:
                continue
            score = 0.0
            for j in range(D):
                score += ext_m[j] * eta[c, j]
            xi = max(xi, margin - own + score)
    return xi


@njit(cache=True)
def _penalty_change(n, old, new, created, n_created, vacated, n_vacated, paths, ext, parent,
                    level, alive, eta, C, margin):
    r""":math:`-2C(\sum_m\xi_m^{new} - \sum_m\xi_m^{old})` over the point and the points below a
    parent that gains or loses a child."""
    N = paths.shape[0]
    in_before = np.ones(parent.shape[0], dtype=np.bool_)
    in_after = np.ones(parent.shape[0], dtype=np.bool_)
    for i in range(n_created):
        in_before[created[i]] = False
    for i in range(n_vacated):
        in_after[vacated[i]] = False
    if n_created == 0 and n_vacated == 0:  # no sibling set changes: only the point's own slack
        return -2.0 * C * (_slack(ext[n], new, parent, alive, in_after, eta, margin)
                           - _slack(ext[n], old, parent, alive, in_before, eta, margin))
    tops = np.full(2, -1, dtype=np.int64)
    if n_created:
        tops[0] = parent[created[0]]
    if n_vacated:
        tops[1] = parent[vacated[0]]
    change = 0.0
    for m in range(N):
        hit = m == n
        for t in range(2):
            z = tops[t]
            if z == 0 or (z > 0 and paths[m, level[z] - 1] == z):
                hit = True
        if not hit:
            continue
        before_path = old if m == n else paths[m]
        after_path = new if m == n else paths[m]
        change += (_slack(ext[m], after_path, parent, alive, in_after, eta, margin)
                   - _slack(ext[m], before_path, parent, alive, in_before, eta, margin))
    return -2.0 * C * change


@njit(cache=True)
def _unseat(n, K, comp, comp_count, alive, logw, logrest, means, prec_vec, prec_mat, loglik):
    """Take point ``n`` out of its component (a component it held alone goes back into every
    node's remainder; the last component takes its index). Returns the new K."""
    k = comp[n]
    comp_count[k] -= 1
    comp[n] = -1
    if comp_count[k] > 0:
        return K
    last = K - 1
    for z in range(alive.shape[0]):
        if alive[z]:
            logrest[z] = np.logaddexp(logrest[z], logw[z, k])
    if k != last:
        for z in range(logw.shape[0]):
            logw[z, k] = logw[z, last]
        means[k] = means[last]
        prec_vec[k] = prec_vec[last]
        prec_mat[k] = prec_mat[last]
        comp_count[k] = comp_count[last]
        for m in range(comp.shape[0]):
            if comp[m] == last:
                comp[m] = k
        for m in range(loglik.shape[0]):
            loglik[m, k] = loglik[m, last]
    for z in range(logw.shape[0]):
        logw[z, last] = -np.inf
    comp_count[last] = 0
    return last


@njit(cache=True)
def _open_component(n, K, paths, parent, level, alive, logw, logrest, means, X, loglik,
                    gamma0, gamma, prior_mean, prior_prec, obs_prec, depth, kind, kappa0, dof0,
                    scale0, prec_vec, prec_mat):
    """A new component split off every node's remainder, top-down (size-biased on ``n``'s
    path), its mean (and precision, :func:`_draw_given_point`) drawn given ``x_n`` and its
    likelihood column filled in."""
    n_nodes = alive.shape[0]
    old_rest = logrest.copy()
    log_frac = np.zeros(n_nodes)
    for lev in range(depth + 1):
        for z in range(n_nodes):
            if not alive[z] or level[z] != lev:
                continue
            if z == 0:
                lw, l1w = _log_beta(1.0, gamma0)
            else:
                p = parent[z]
                a = gamma * np.exp(old_rest[p])
                wp = np.exp(log_frac[p])
                on_path = 1.0 if paths[n, lev - 1] == z else 0.0
                lw, l1w = _log_beta(a * wp + on_path, a * (1.0 - wp))
            log_frac[z] = lw
            logw[z, K] = logrest[z] + lw
            logrest[z] = logrest[z] + l1w
    if kind != KNOWN:
        _draw_given_point(n, K, X, loglik, prior_mean, kind, kappa0, dof0, scale0, means,
                          prec_vec, prec_mat)
        return K + 1
    d = X.shape[1]
    precision = prior_prec + obs_prec
    for j in range(d):
        means[K, j] = ((prior_prec * prior_mean[j] + obs_prec * X[n, j]) / precision
                       + np.random.standard_normal() / np.sqrt(precision))
    constant = 0.5 * d * np.log(obs_prec / (2.0 * np.pi))
    for m in range(X.shape[0]):
        sq = 0.0
        for j in range(d):
            diff = X[m, j] - means[K, j]
            sq += diff * diff
        loglik[m, K] = constant - 0.5 * obs_prec * sq
    return K + 1


@njit(cache=True)
def _cholesky(S):
    """Lower-triangular ``R`` with ``R R^T = S`` (S symmetric positive definite)."""
    d = S.shape[0]
    R = np.zeros((d, d))
    for i in range(d):
        for j in range(i + 1):
            total = S[i, j]
            for k in range(j):
                total -= R[i, k] * R[j, k]
            R[i, j] = np.sqrt(total) if i == j else total / R[j, j]
    return R


@njit(cache=True)
def _draw_given_point(n, K, X, loglik, prior_mean, kind, kappa0, dof0, scale0, means, prec_vec,
                      prec_mat):
    r"""Component ``K``'s mean and precision from the conjugate posterior given ``x_n`` alone
    (the updates of :mod:`mixbayes.families.gaussian` with one point: for
    :math:`x = x_n - m_0`, :math:`\kappa = \kappa_0 + 1`, mean :math:`m_0 + x/\kappa`, and
    :math:`W^{-1} = W_0^{-1} + \tfrac{\kappa_0}{\kappa}xx^\top`, :math:`\nu = \nu_0 + 1`
    (full) or :math:`b_j = b_{0j} + \tfrac{\kappa_0}{2\kappa}x_j^2`, :math:`a = a_0 + 1/2`
    (diag; summed over features and :math:`a_0 + d/2` when spherical)), then its column of
    :math:`\log N(x_m\mid\mu, \Lambda^{-1})`.

    The Wishart draw is Bartlett's: with :math:`W^{-1} = RR^\top` (Cholesky) and :math:`A`
    lower triangular, :math:`A_{ii}^2\sim\chi^2_{\nu - i}` (i = 0..d-1),
    :math:`A_{ij}\sim N(0, 1)` below the diagonal, :math:`\Lambda = GG^\top` with
    :math:`G = R^{-\top}A` is :math:`\mathcal W(W, \nu)` (any square root of :math:`W`
    serves, and :math:`R^{-\top}` is one). Then :math:`\mu = m + R A^{-\top}z/\sqrt\kappa`,
    since :math:`(GG^\top)^{-1} = (RA^{-\top})(RA^{-\top})^\top`, and the quadratic form is
    :math:`\lVert A^\top R^{-1}(x - \mu)\rVert^2`, :math:`\log|\Lambda| =
    2\sum_i(\log A_{ii} - \log R_{ii})`."""
    d = X.shape[1]
    x = X[n] - prior_mean
    kappa = kappa0 + 1.0
    shrink = kappa0 / kappa
    N = X.shape[0]
    if kind == FULL:
        S = scale0.copy()
        for i in range(d):
            for j in range(d):
                S[i, j] += shrink * x[i] * x[j]
        R = _cholesky(S)
        nu = dof0 + 1.0
        A = np.zeros((d, d))
        for i in range(d):
            A[i, i] = np.sqrt(2.0 * np.random.standard_gamma(0.5 * (nu - i)))
            for j in range(i):
                A[i, j] = np.random.standard_normal()
        # M = A^T R^{-1}: M^T M = Lambda; R^{-1} by forward substitution, column by column
        Rinv = np.zeros((d, d))
        for c in range(d):
            for i in range(c, d):
                total = 1.0 if i == c else 0.0
                for k in range(c, i):
                    total -= R[i, k] * Rinv[k, c]
                Rinv[i, c] = total / R[i, i]
        M = np.zeros((d, d))
        for i in range(d):
            for j in range(d):
                total = 0.0
                for k in range(i, d):  # A^T is upper triangular: (A^T)_{ik} = A_{ki}, k >= i
                    total += A[k, i] * Rinv[k, j]
                M[i, j] = total
        for i in range(d):
            for j in range(d):
                total = 0.0
                for k in range(d):
                    total += M[k, i] * M[k, j]
                prec_mat[K, i, j] = total
        # mu = m0 + x / kappa + R y / sqrt(kappa), A^T y = z (back substitution)
        y = np.zeros(d)
        for i in range(d - 1, -1, -1):
            total = np.random.standard_normal()
            for k in range(i + 1, d):
                total -= A[k, i] * y[k]
            y[i] = total / A[i, i]
        log_det = 0.0
        for i in range(d):
            offset = 0.0
            for k in range(i + 1):
                offset += R[i, k] * y[k]
            means[K, i] = prior_mean[i] + x[i] / kappa + offset / np.sqrt(kappa)
            log_det += 2.0 * (np.log(A[i, i]) - np.log(R[i, i]))
        constant = 0.5 * log_det - 0.5 * d * np.log(2.0 * np.pi)
        diff = np.empty(d)
        for m in range(N):
            for j in range(d):
                diff[j] = X[m, j] - means[K, j]
            sq = 0.0
            for i in range(d):
                total = 0.0
                for j in range(d):
                    total += M[i, j] * diff[j]
                sq += total * total
            loglik[m, K] = constant - 0.5 * sq
        return
    if kind == DIAG:
        shape = dof0 + 0.5
        for j in range(d):
            rate = scale0[0, j] + 0.5 * shrink * x[j] * x[j]
            prec_vec[K, j] = np.random.standard_gamma(shape) / rate
    else:
        shape = dof0 + 0.5 * d
        rate = scale0[0, 0]
        for j in range(d):
            rate += 0.5 * shrink * x[j] * x[j]
        tau = np.random.standard_gamma(shape) / rate
        for j in range(d):
            prec_vec[K, j] = tau
    constant = -0.5 * d * np.log(2.0 * np.pi)
    for j in range(d):
        means[K, j] = (prior_mean[j] + x[j] / kappa
                       + np.random.standard_normal() / np.sqrt(kappa * prec_vec[K, j]))
        constant += 0.5 * np.log(prec_vec[K, j])
    for m in range(N):
        sq = 0.0
        for j in range(d):
            diff = X[m, j] - means[K, j]
            sq += prec_vec[K, j] * diff * diff
        loglik[m, K] = constant - 0.5 * sq


@njit(cache=True)
def _seat(n, K, paths, comp, comp_count, parent, level, alive, logw, logrest, means, X, loglik,
          log_pred, gamma0, gamma, prior_mean, prior_prec, obs_prec, kind, kappa0, dof0, scale0,
          prec_vec, prec_mat):
    L = paths.shape[1]
    leaf = paths[n, L - 1]
    logp = np.empty(K + 1)
    top = -np.inf
    for k in range(K):
        logp[k] = logw[leaf, k] + loglik[n, k]
        top = max(top, logp[k])
    logp[K] = logrest[leaf] + log_pred[n]
    top = max(top, logp[K])
    total = 0.0
    for k in range(K + 1):
        logp[k] = np.exp(logp[k] - top) if logp[k] > -np.inf else 0.0
        total += logp[k]
    u = np.random.random() * total
    k = 0
    acc = logp[0]
    while acc <= u and k < K:
        k += 1
        acc += logp[k]
    if k == K:
        K = _open_component(n, K, paths, parent, level, alive, logw, logrest, means, X, loglik,
                            gamma0, gamma, prior_mean, prior_prec, obs_prec, L, kind, kappa0,
                            dof0, scale0, prec_vec, prec_mat)
    comp[n] = k
    comp_count[k] += 1
    return K


@njit(cache=True)
def _move_path(n, K, paths, parent, level, count, alive, logw, logrest, eta, loglik, log_pred,
               ext, alpha, gamma, C, margin, eta_sd):
    """Metropolis–Hastings move of point ``n``'s path, proposed from the nested CRP given the
    other points. Returns 1 when accepted (or the proposal is the current path)."""
    L = paths.shape[1]
    n_nodes = alive.shape[0]
    old = paths[n].copy()
    for lev in range(L):
        count[old[lev]] -= 1
    count[0] -= 1
    new = np.empty(L, dtype=np.int64)
    created = np.empty(L, dtype=np.int64)
    n_created = 0
    z = 0
    for lev in range(L):
        if n_created == 0:
            total = alpha
            for c in range(n_nodes):
                if alive[c] and parent[c] == z and c != 0 and count[c] > 0:
                    total += count[c]
            u = np.random.random() * total
            picked = -1
            acc = 0.0
            for c in range(n_nodes):
                if alive[c] and parent[c] == z and c != 0 and count[c] > 0:
                    acc += count[c]
                    if u < acc:
                        picked = c
                        break
            if picked >= 0:
                z = picked
                new[lev] = z
                continue
        free = 1
        while alive[free]:
            free += 1
        alive[free] = True
        parent[free] = z
        level[free] = lev + 1
        count[free] = 0
        _draw_node_weights(free, z, K, gamma, logw, logrest)
        if C > 0:
            for j in range(eta.shape[1]):
                eta[free, j] = eta_sd * np.random.standard_normal()
        created[n_created] = free
        n_created += 1
        z = free
        new[lev] = z
    same = n_created == 0
    for lev in range(L):
        if new[lev] != old[lev]:
            same = False
    if same:
        for lev in range(L):
            count[old[lev]] += 1
        count[0] += 1
        return 1
    log_ratio = (_log_fit(n, new[L - 1], K, logw, logrest, loglik, log_pred)
                 - _log_fit(n, old[L - 1], K, logw, logrest, loglik, log_pred))
    vacated = np.empty(L, dtype=np.int64)
    n_vacated = 0
    for lev in range(L):
        if count[old[lev]] == 0:
            vacated[n_vacated] = old[lev]
            n_vacated += 1
    if C > 0:
        log_ratio += _penalty_change(n, old, new, created, n_created, vacated, n_vacated, paths,
                                     ext, parent, level, alive, eta, C, margin)
    if np.log(np.random.random()) < log_ratio:
        for lev in range(L):
            paths[n, lev] = new[lev]
            count[new[lev]] += 1
        gone = vacated
        n_gone = n_vacated
        accepted = 1
    else:
        for lev in range(L):
            count[old[lev]] += 1
        gone = created
        n_gone = n_created
        accepted = 0
    for i in range(n_gone):
        z = gone[i]
        alive[z] = False
        parent[z] = -1
        for k in range(logw.shape[1]):
            logw[z, k] = -np.inf
    count[0] += 1
    return accepted


@njit(cache=True)
def path_pass(start, K, X, ext, loglik, log_pred, paths, comp, comp_count, parent, level, count,
              alive, logw, logrest, means, eta, alpha, gamma, gamma0, C, margin, eta_sd,
              prior_mean, prior_prec, obs_prec, seed, kind, kappa0, dof0, scale0, prec_vec,
              prec_mat):
    """Every point from ``start`` on: unseat, path move, seat. Returns (status, the point to
    resume from, K, paths accepted); status ``NEED_NODES`` / ``NEED_COMPONENTS`` asks for room
    (at least L free nodes and one free component before a point is touched)."""
    np.random.seed(seed)
    N, L = paths.shape
    accepted = 0
    for n in range(start, N):
        free_nodes = 0
        for z in range(alive.shape[0]):
            if not alive[z]:
                free_nodes += 1
        if free_nodes < L:
            return NEED_NODES, n, K, accepted
        if K + 1 > logw.shape[1]:
            return NEED_COMPONENTS, n, K, accepted
        K = _unseat(n, K, comp, comp_count, alive, logw, logrest, means, prec_vec, prec_mat,
                    loglik)
        accepted += _move_path(n, K, paths, parent, level, count, alive, logw, logrest, eta,
                               loglik, log_pred, ext, alpha, gamma, C, margin, eta_sd)
        K = _seat(n, K, paths, comp, comp_count, parent, level, alive, logw, logrest, means, X,
                  loglik, log_pred, gamma0, gamma, prior_mean, prior_prec, obs_prec, kind, kappa0,
                  dof0, scale0, prec_vec, prec_mat)
    return DONE, N, K, accepted


@njit(cache=True)
def _worst_at_level(m, lev, scores, paths, child_ptr, child_idx, node_parent, margin, skip):
    r""":math:`\max_z \varepsilon_0 - s_{m v} + s_{m z}` over the siblings :math:`z \ne` ``skip``
    of point ``m``'s node :math:`v` at level ``lev`` (1-based), -inf without any."""
    v = paths[m, lev - 1]
    p = node_parent[v]
    best = -np.inf
    for i in range(child_ptr[p], child_ptr[p + 1]):
        z = child_idx[i]
        if z != v and z != skip:
            best = max(best, margin - scores[m, v] + scores[m, z])
    return best


@njit(cache=True)
def hinge_pieces(scores, paths, points, child_ptr, child_idx, node_parent, node, level, margin):
    """:math:`\\sigma_n` and :math:`r_n` of ``points`` (those below ``node``'s parent) for the
    discriminant step of ``node`` at ``level``: the maths of
    :func:`mixbayes.tree._regularisation._hinge_pieces`, from the table ``scores`` of
    :math:`\\eta_z^\\top\\tilde x_n` (points by nodes) and the tree as child lists in CSR form."""
    L = paths.shape[1]
    p = node_parent[node]
    sign = np.empty(points.size)
    offset = np.empty(points.size)
    for i in range(points.size):
        m = points[i]
        others = -np.inf  # the terms without eta_node: other levels ...
        for lev in range(1, L + 1):
            if lev != level:
                others = max(others, _worst_at_level(m, lev, scores, paths, child_ptr,
                                                     child_idx, node_parent, margin, -1))
        own = paths[m, level - 1]
        if own == node:  # eps - t + the best other child
            rest = -np.inf
            for j in range(child_ptr[p], child_ptr[p + 1]):
                if child_idx[j] != node:
                    rest = max(rest, scores[m, child_idx[j]])
            sign[i] = -1.0
            b = margin + rest
        else:  # eps - own score + t; ... and this level's other siblings
            sign[i] = 1.0
            b = margin - scores[m, own]
            others = max(others, _worst_at_level(m, level, scores, paths, child_ptr, child_idx,
                                                 node_parent, margin, node))
        offset[i] = b - max(0.0, others)
    return sign, offset


@njit(cache=True)
def discriminant_moments(ext, points, lam, coef):
    r""":math:`\sum_n \tilde x_n\tilde x_n^\top/\lambda_n` and
    :math:`\sum_n c_n\tilde x_n/\lambda_n` over ``points`` (one pass, no gathered copy)."""
    D = ext.shape[1]
    xx = np.zeros((D, D))
    xb = np.zeros(D)
    for i in range(points.size):
        m = points[i]
        w = 1.0 / lam[i]
        for a in range(D):
            wa = w * ext[m, a]
            xb[a] += coef[i] * wa
            for b in range(a, D):
                xx[a, b] += wa * ext[m, b]
    for a in range(D):
        for b in range(a):
            xx[a, b] = xx[b, a]
    return xx, xb
