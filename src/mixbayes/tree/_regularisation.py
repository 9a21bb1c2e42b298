r"""Max-margin posterior regularisation of the tree (Huang et al. 2021, §3), made exact.

Every node :math:`z` below the root carries a discriminant :math:`\eta_z \in \mathbb R^{d+1}`
acting on :math:`\tilde x = (x, 1)`, with prior :math:`\eta_z \sim N(0, \nu^2 I)`. For point
:math:`n`, level :math:`\ell` and every sibling :math:`z \in \mathcal S(v_{n\ell})` (the other
children of :math:`v_{n,\ell-1}`)

.. math::

    \rho_{n\ell z} = \varepsilon_0 - (\eta_{v_{n\ell}} - \eta_z)^\top \tilde x_n, \qquad
    \xi_n = \max\bigl(0, \max_{\ell, z \in \mathcal S(v_{n\ell})} \rho_{n\ell z}\bigr),

(:math:`\xi_n = 0` when no level has siblings), and the regularised posterior is the BHMC
posterior times :math:`\prod_z N(\eta_z; 0, \nu^2 I)\,\exp(-2C\sum_n \xi_n)`. The arg-max
:math:`s_n = (\ell, z)` is :func:`worst_violations`.

Huang et al. (2021) sample :math:`\eta` from a Gaussian given :math:`\lambda` *and* :math:`s`, but
:math:`s` is itself a function of :math:`\eta`, so that draw is not the conditional of
:math:`\eta` (which is piecewise Gaussian). Here :math:`\eta` is updated one node at a time, as
Zhu et al. (2014, JMLR, Gibbs max-margin topic models, multi-class case) do for Crammer–Singer
losses. With every other discriminant fixed, each point's slack is a hinge in
:math:`t_n = \eta_z^\top \tilde x_n`:

.. math::

    \xi_n = \max(a_n, B_n + \sigma_n t_n) = a_n + \max(0, r_n + \sigma_n t_n),\quad
    r_n = B_n - a_n,

where :math:`a_n \ge 0` is the largest of 0 and the terms without :math:`\eta_z`, and the terms
with :math:`\eta_z` are :math:`\varepsilon_0 - t_n + \max_{z' \ne z}\eta_{z'}^\top\tilde x_n`
(:math:`z` is the point's own node, :math:`\sigma_n = -1`) or
:math:`\varepsilon_0 - \eta_{v}^\top\tilde x_n + t_n` (:math:`z` is a sibling of its node
:math:`v`, :math:`\sigma_n = +1`). Polson & Scott's identity

.. math::

    e^{-2C\max(0, \rho)} = \int_0^\infty (2\pi\lambda)^{-1/2}
        \exp\Bigl(-\frac{(\lambda + C\rho)^2}{2\lambda}\Bigr)\,d\lambda

then gives a two-block Gibbs step on :math:`(\lambda, \eta_z)` that keeps the conditional of
:math:`\eta_z` exactly: :math:`\lambda_n \mid \rho_n \sim \mathrm{GIG}(\tfrac12, 1, C^2\rho_n^2)`,
i.e. :math:`1/\lambda_n \sim \mathrm{Wald}(1/(C|\rho_n|), 1)` (:func:`draw_lambda`), with
:math:`\rho_n = r_n + \sigma_n t_n`; and :math:`\eta_z \mid \lambda \sim N(P^{-1}b, P^{-1})`,

.. math::

    P = \nu^{-2} I + C^2 \sum_n \tilde x_n\tilde x_n^\top/\lambda_n, \qquad
    b = -C\sum_n \sigma_n (\lambda_n + C r_n)\,\tilde x_n/\lambda_n

(:func:`discriminant_conditional`), the sums over the points below :math:`z`'s parent. A node
without siblings enters no margin and is drawn from its prior. The :math:`\lambda` are
auxiliary to each node's step and are not kept.
"""

import numpy as np

__all__ = ["worst_violations", "draw_lambda", "discriminant_conditional", "update_discriminants"]


def points_under(paths, node, level):
    """Indices of the points whose path passes through ``node`` (at ``level``; 0 = root)."""
    if level == 0:
        return np.arange(paths.shape[0])
    return np.flatnonzero(paths[:, level - 1] == node)


def _level_scores(extended, paths, children, eta, margin, points, level):
    """For ``points`` at ``level`` (1-based): the largest margin violation among their node's
    siblings (-inf without siblings), the sibling attaining it, and the scores."""
    parents = np.zeros(points.size, dtype=np.int64) if level == 1 else paths[points, level - 2]
    own = paths[points, level - 1]
    rho = np.full(points.size, -np.inf)
    worst = np.full(points.size, -1, dtype=np.int64)
    for p in np.unique(parents):
        kids = np.asarray(children[p], dtype=np.int64)
        if kids.size < 2:
            continue
        rows = np.flatnonzero(parents == p)
        scores = extended[points[rows]] @ eta[kids].T  # (m, |kids|)
        mine = own[rows][:, None] == kids[None, :]
        own_score = scores[mine]
        terms = np.where(mine, -np.inf, margin - own_score[:, None] + scores)
        best = terms.argmax(axis=1)
        rho[rows] = terms[np.arange(rows.size), best]
        worst[rows] = kids[best]
    return rho, worst


def worst_violations(extended, paths, children, eta, margin, points=None):
    r""":math:`\max_{\ell, z} \rho_{n\ell z}` of every point (``-inf`` when no level has
    siblings) and its arg-max :math:`s_n` as (level, node) (``(0, -1)`` without siblings).

    ``extended`` holds :math:`\tilde x = (x, 1)`, ``paths`` the nodes at levels 1..L,
    ``children[p]`` the child nodes of ``p`` in the tree.
    """
    if points is None:
        points = np.arange(paths.shape[0])
    points = np.asarray(points, dtype=np.int64)
    best = np.full(points.size, -np.inf)
    s_level = np.zeros(points.size, dtype=np.int64)
    s_node = np.full(points.size, -1, dtype=np.int64)
    for level in range(1, paths.shape[1] + 1):
        rho, worst = _level_scores(extended, paths, children, eta, margin, points, level)
        better = rho > best
        best[better], s_level[better], s_node[better] = rho[better], level, worst[better]
    return best, s_level, s_node


def slack(extended, paths, children, eta, margin, points=None):
    r""":math:`\xi_n = \max(0, \rho_{n s_n})` of every point (or of ``points``)."""
    rho = worst_violations(extended, paths, children, eta, margin, points)[0]
    return np.maximum(rho, 0.0)


def draw_lambda(rho, C, rng):
    r""":math:`\lambda \sim \mathrm{GIG}(\tfrac12, 1, C^2\rho^2)` for every :math:`\rho`, via
    :math:`1/\lambda \sim \mathrm{Wald}(\text{mean } 1/(C|\rho|), \text{shape } 1)`; at
    :math:`\rho = 0` the GIG is :math:`\mathrm{Gamma}(\tfrac12, \text{rate } \tfrac12)`."""
    rho = np.abs(np.asarray(rho, dtype=float)) * C
    out = np.empty(rho.shape)
    positive = rho > 1e-300
    out[positive] = 1.0 / rng.wald(1.0 / rho[positive], 1.0)
    out[~positive] = rng.gamma(0.5, 2.0, size=int((~positive).sum()))
    return out


def discriminant_conditional(extended, sign, offset, lam, C, prior_variance):
    r"""Mean and covariance of :math:`\eta_z` given the :math:`\lambda` of the points below
    its parent (module docstring): ``sign`` :math:`\sigma_n`, ``offset`` :math:`r_n`."""
    weighted = extended / lam[:, None]
    return _gaussian_from_moments(extended.T @ weighted,
                                  weighted.T @ (sign * (lam + C * offset)), C, prior_variance)


def _gaussian_from_moments(xx, xb, C, prior_variance):
    r""":math:`N(P^{-1}b, P^{-1})` from :math:`\sum\tilde x\tilde x^\top/\lambda` and
    :math:`\sum\sigma(\lambda + Cr)\tilde x/\lambda`: :math:`P = \nu^{-2}I + C^2\,xx`,
    :math:`b = -C\,xb`."""
    precision = np.eye(xx.shape[0]) / prior_variance + C * C * xx
    covariance = np.linalg.inv(precision)
    covariance = 0.5 * (covariance + covariance.T)
    return covariance @ (-C * xb), covariance


def _hinge_pieces(extended, paths, children, eta, margin, node, level, parent, points):
    """:math:`\\sigma_n` and :math:`r_n` of the points below ``parent`` for ``node``'s step."""
    L = paths.shape[1]
    others = np.full(points.size, -np.inf)  # terms without eta_node, other levels
    for lev in range(1, L + 1):
        if lev != level:
            others = np.maximum(others, _level_scores(extended, paths, children, eta, margin,
                                                      points, lev)[0])
    kids = np.asarray(children[parent], dtype=np.int64)
    scores = extended[points] @ eta[kids].T
    own = paths[points, level - 1]
    mine = own[:, None] == kids[None, :]
    own_score = scores[mine]
    at_node = kids == node
    sign = np.where(own == node, -1.0, 1.0)
    # z is the point's own node: its terms are eps - t + max over the other children
    rest = np.where(at_node[None, :], -np.inf, scores)
    b_own = margin + rest.max(axis=1)
    # z is a sibling: its term is eps - own score + t; the other siblings' terms lack eta_z
    b_sib = margin - own_score
    other_sibs = np.where(mine | at_node[None, :], -np.inf, scores)
    level_others = np.where(own == node, -np.inf, margin - own_score + other_sibs.max(axis=1))
    B = np.where(own == node, b_own, b_sib)
    a = np.maximum(0.0, np.maximum(others, level_others))
    return sign, B - a


def update_discriminants(extended, paths, children, eta, nodes, levels, parents, C, margin,
                         prior_variance, rng):
    r"""One exact Gibbs pass over the discriminants of ``nodes`` (module docstring), in order;
    ``eta`` is updated in place. The hinge pieces come from the numba kernel
    :func:`mixbayes.tree._kernels.hinge_pieces` (the maths of :func:`_hinge_pieces`) on a
    table of every point's score under every node, updated one column per node drawn."""
    from ._kernels import discriminant_moments, hinge_pieces

    D = extended.shape[1]
    sd = np.sqrt(prior_variance)
    nodes = np.asarray(nodes, dtype=np.int64)
    if C == 0:  # the prior, node by node in order (one call draws the same stream)
        eta[nodes] = sd * rng.standard_normal((nodes.size, D))
        return
    scores = extended @ eta.T  # (N, nodes)
    child_ptr = np.zeros(len(children) + 1, dtype=np.int64)
    child_ptr[1:] = np.cumsum([len(c) for c in children])
    child_idx = np.array([z for c in children for z in c], dtype=np.int64)
    node_parent = np.full(len(children), -1, dtype=np.int64)
    node_parent[child_idx] = np.repeat(np.arange(len(children)), np.diff(child_ptr))
    for node, level, parent in zip(nodes, levels, parents):
        if C == 0 or len(children[parent]) < 2:
            eta[node] = sd * rng.standard_normal(D)
        else:
            points = points_under(paths, parent, level - 1)
            sign, offset = hinge_pieces(scores, paths, points, child_ptr, child_idx,
                                        node_parent, int(node), int(level), float(margin))
            lam = draw_lambda(offset + sign * scores[points, node], C, rng)
            xx, xb = discriminant_moments(extended, points, lam, sign * (lam + C * offset))
            mean, covariance = _gaussian_from_moments(xx, xb, C, prior_variance)
            eta[node] = mean + np.linalg.cholesky(covariance) @ rng.standard_normal(D)
        scores[:, node] = extended @ eta[node]
