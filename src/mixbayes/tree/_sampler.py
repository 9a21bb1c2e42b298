r"""The MCMC sampler of BHMC with max-margin posterior regularisation (document 5, Algorithm 2).

Model (depth :math:`L`; node :math:`z_0` is the root):

.. math::

    \boldsymbol v_n &\sim \mathrm{nCRP}(\alpha) \text{ (a path } v_{n1},\dots,v_{nL}), \qquad
    \beta_{z_0} \sim \mathrm{GEM}(\gamma_0), \qquad
    \beta_{z'} \mid \beta_z \sim \mathrm{DP}(\gamma, \beta_z) \text{ for every edge } (z, z'),\\
    c_n &\sim \beta_{v_{nL}}, \qquad \mu_k \sim N(m_0, s_0^2 I), \qquad
    x_n \sim N(\mu_{c_n}, \sigma^2 I),

or, with unknown per-component covariances (``TreeData.family`` set), components
:math:`(\mu_k, \Lambda_k)` from the conjugate Normal–Wishart / Normal–Gamma prior of
:class:`mixbayes.families.gaussian.GaussianFamily` and :math:`x_n \sim
N(\mu_{c_n}, \Lambda_{c_n}^{-1})`; the steps below are the same with :math:`f(x\mid\mu_k)`
read as :math:`N(x\mid\mu_k, \Lambda_k^{-1})` and :math:`m` as the family's prior predictive
(a Student-t). Always
times the regularisation factor of :mod:`mixbayes.tree._regularisation` when :math:`C > 0`.
Every node's weights are instantiated over the :math:`K` components in use plus a remainder
:math:`\beta^*_z`, in log space (Dirichlet draws with small parameters underflow).

One sweep, each step exact for its conditional target:

1. **Paths** (Neal's 2000 algorithm 5 on the nested CRP): for every point, a path is proposed
   from the nCRP given the other points' paths (a new branch at any level with probability
   :math:`\alpha/(n_z + \alpha)`); new nodes get weights :math:`\mathrm{Dir}(\gamma\beta_{parent})`
   and discriminants from their priors. With :math:`c_n` integrated out, the acceptance
   probability is :math:`\min(1, p(x_n\mid v')/p(x_n\mid v)\cdot e^{-2C\Delta\sum_m\xi_m})`,
   :math:`p(x_n\mid v) = \sum_k \beta_{v_L k} f(x_n\mid\mu_k) + \beta^*_{v_L} m(x_n)` with
   :math:`m` the prior predictive :math:`N(m_0, (\sigma^2 + s_0^2) I)`, and
   :math:`\Delta\sum\xi` over every point whose sibling sets the move changes. (Proposal and
   prior terms of new and vacated nodes cancel; :math:`c_n` is redrawn by step 2.)
2. **Components** by Gibbs, each point's right after its path move (the point is first
   taken out of its component; one it held alone is merged back into the remainders at once): :math:`p(c_n = k) \propto \beta_{v_{nL}k} f(x_n\mid\mu_k)`, a new one
   :math:`\propto \beta^*_{v_{nL}} m(x_n)`. A new component's weights are split off every node's
   remainder, top-down, with the law of an atom the point has *drawn*: the fraction
   :math:`w_z` of :math:`\beta^*_z` is :math:`\mathrm{Beta}(1, \gamma_0)` at the root,
   :math:`\mathrm{Beta}(\gamma\beta^*_p w_p + 1, \gamma\beta^*_p(1 - w_p))` on the point's path
   (size-biased: each ancestor has seen the draw) and
   :math:`\mathrm{Beta}(\gamma\beta^*_p w_p, \gamma\beta^*_p(1 - w_p))` elsewhere (the document's
   rule, which is the prior's and holds only off the path); its mean (and precision) is drawn
   given :math:`x_n`. Components left empty are merged back into the remainders.
3. **Weights** by auxiliary table counts (Teh et al. 2006), leaves to root: a leaf's customers
   are its points' components, an inner node's customers are its children's tables;
   :math:`m_{zk} \sim \mathrm{Antoniak}(n_{zk}, \gamma\beta_{parent(z),k})`. Then top-down,
   :math:`(\beta_{z_0 1..K}, \beta^*_{z_0}) \sim \mathrm{Dir}(T_1, \dots, T_K, \gamma_0)` with
   :math:`T` the tables of the root's children, and
   :math:`\beta_z \sim \mathrm{Dir}(\gamma\beta_{parent(z)} + n_z)`. Both blocks are exact draws
   of the table-augmented target (lower weights integrated out where the tables are drawn).
4. **Means** from their conjugate Normal (:func:`mixbayes.families.atoms.draw_atoms`), or means
   and precisions from their conjugate posterior (``GaussianFamily.posterior`` and ``draw``).
Steps 1-2 run in the numba kernel :mod:`mixbayes.tree._kernels` (about 10 us a point at
N = 10,000, d = 10, C = 0); :func:`path_step_reference` is the same maths in plain Python, and
the enumeration test runs both.

5. **Discriminants** (:math:`C > 0`) node by node (:mod:`mixbayes.tree._regularisation`), from a
   random stream of their own, so that :math:`C = 0` leaves the BHMC chain untouched.

Steps 1-4 keep the start's numbers of leaves and components; the moves that restructure the
tree (split-merge of leaves and of components, regraft of subtrees;
:mod:`mixbayes.tree._moves`) run after step 4 when :func:`sweep` is asked for them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from ..families.gaussian import GaussianFamily
from ..families.atoms import GAUSSIAN, GroupedData, draw_atoms, lookup
from . import _kernels, _moves
from . import _regularisation as reg


@dataclass
class TreeData:
    """Points and every fixed setting of the sampler."""

    points: np.ndarray  # (N, d)
    depth: int
    top_concentration: float  # gamma_0
    branch_concentration: float  # gamma
    path_concentration: float  # alpha (nCRP)
    observation_variance: float  # sigma^2
    mean_prior: np.ndarray  # m_0 (d,)
    mean_prior_variance: float  # s_0^2
    margin_weight: float = 0.0  # C
    margin: float = 1.0  # epsilon_0
    discriminant_variance: float = 1.0  # nu^2
    # the conjugate prior of per-component (mean, precision); None: the known sigma^2 above
    family: GaussianFamily | None = None

    def __post_init__(self):
        X = np.ascontiguousarray(self.points, dtype=float)
        self.points = X
        n, d = X.shape
        self.extended = np.hstack([X, np.ones((n, 1))])
        self.grouped = GroupedData(GAUSSIAN, np.array([0, n]), np.arange(n), X, 0, 0.0,
                                   np.asarray(self.mean_prior, float),
                                   1.0 / self.mean_prior_variance,
                                   1.0 / self.observation_variance)
        # m(x) = N(x; m_0, (sigma^2 + s_0^2) I): the kernel's log density at the prior mean
        predictive = dataclasses.replace(
            self.grouped, observation_precision=1.0 / (self.observation_variance
                                                       + self.mean_prior_variance))
        if self.family is None:
            self.log_predictive = lookup(predictive, self.grouped.prior_mean[None, :])[:, 0]
            self.kernel_prior = (_kernels.KNOWN, 1.0, 1.0, np.zeros((1, 1)))
            return
        family = self.family
        self.centred = family.prepare(X)
        prior = family.posterior(family.prior_statistics())
        # m(x): the Student-t prior predictive
        self.log_predictive = np.ascontiguousarray(family.log_predictive(self.centred, prior)[:, 0])
        # what the kernel's new-component draw needs: kind, kappa_0, nu_0 (full) or a_0, and
        # W_0^{-1} (d, d) or the Gamma rates b_0 as one row (diag) or one number (spherical)
        scale = np.atleast_2d(family.covariance_prior.astype(float))
        if family.covariance_type != "full":
            scale = 0.5 * scale.reshape(1, -1)
        dof = family.degrees_of_freedom_prior * (1.0 if family.covariance_type == "full" else 0.5)
        self.kernel_prior = (_kernels.KINDS[family.covariance_type], family.mean_precision_prior,
                             dof, np.ascontiguousarray(scale))

    @property
    def n_points(self):
        return self.points.shape[0]

    @property
    def covariance_type(self):
        return "known" if self.family is None else self.family.covariance_type


class TreeState:
    """Paths, nodes (with weights and discriminants), components and means.

    Node 0 is the root. ``children[z]`` lists the nodes below ``z``; every listed node is on
    some point's path (empty nodes are removed at once).
    """

    def __init__(self, n_points, depth, n_features, covariance_type="known", node_cap=16,
                 comp_cap=8):
        self.depth = depth
        self.covariance_type = covariance_type
        self.parent = np.full(node_cap, -1, dtype=np.int64)
        self.level = np.zeros(node_cap, dtype=np.int64)
        self.count = np.zeros(node_cap, dtype=np.int64)
        self.alive = np.zeros(node_cap, dtype=bool)
        self.children = [[] for _ in range(node_cap)]
        self.logw = np.full((node_cap, comp_cap), -np.inf)
        self.logrest = np.zeros(node_cap)
        self.eta = np.zeros((node_cap, n_features + 1))
        self.paths = np.zeros((n_points, depth), dtype=np.int64)
        self.comp = np.zeros(n_points, dtype=np.int64)
        self.K = 0
        self.means = np.zeros((comp_cap, n_features))
        # precisions as the kernel holds them (module _kernels): matrices when full, per-feature
        # values when diag or spherical; the array a type does not use has no columns
        full = covariance_type == "full"
        vector = covariance_type in ("diag", "spherical")
        self.prec_vec = np.zeros((comp_cap, n_features if vector else 0))
        self.prec_mat = np.zeros((comp_cap,) + ((n_features,) * 2 if full else (0, 0)))
        self.comp_count = np.zeros(comp_cap, dtype=np.int64)
        self.alive[0] = True

    # ---------------------------------------------------------------- storage
    def copy(self):
        other = TreeState.__new__(TreeState)
        for name, value in vars(self).items():
            setattr(other, name, value.copy() if isinstance(value, np.ndarray) else value)
        other.children = [list(c) for c in self.children]
        return other

    def new_node(self, parent):
        free = np.flatnonzero(~self.alive)
        if free.size == 0:
            self._grow_nodes()
            free = np.flatnonzero(~self.alive)
        z = int(free[0])
        self.alive[z] = True
        self.parent[z] = parent
        self.level[z] = self.level[parent] + 1
        self.count[z] = 0
        self.children[z] = []
        self.children[parent].append(z)
        return z

    def drop_node(self, z):
        self.alive[z] = False
        self.children[self.parent[z]].remove(z)
        self.children[z] = []
        self.logw[z] = -np.inf

    def _grow_nodes(self):
        cap = self.parent.size
        grow = max(cap, 8)
        self.parent = np.concatenate([self.parent, np.full(grow, -1, dtype=np.int64)])
        self.level = np.concatenate([self.level, np.zeros(grow, dtype=np.int64)])
        self.count = np.concatenate([self.count, np.zeros(grow, dtype=np.int64)])
        self.alive = np.concatenate([self.alive, np.zeros(grow, dtype=bool)])
        self.children.extend([] for _ in range(grow))
        self.logw = np.vstack([self.logw, np.full((grow, self.logw.shape[1]), -np.inf)])
        self.logrest = np.concatenate([self.logrest, np.zeros(grow)])
        self.eta = np.vstack([self.eta, np.zeros((grow, self.eta.shape[1]))])

    def ensure_components(self, K):
        cap = self.logw.shape[1]
        if K <= cap:
            return
        grow = max(cap, K - cap)
        self.logw = np.hstack([self.logw, np.full((self.logw.shape[0], grow), -np.inf)])
        self.means = np.vstack([self.means, np.zeros((grow, self.means.shape[1]))])
        self.prec_vec = np.concatenate([self.prec_vec, np.zeros((grow,) + self.prec_vec.shape[1:])])
        self.prec_mat = np.concatenate([self.prec_mat, np.zeros((grow,) + self.prec_mat.shape[1:])])
        self.comp_count = np.concatenate([self.comp_count, np.zeros(grow, dtype=np.int64)])

    def rebuild_children(self):
        """``children`` from ``parent`` and ``alive`` (after the kernel changed the tree)."""
        self.children = [[] for _ in range(self.alive.size)]
        for z in np.flatnonzero(self.alive):
            if z:
                self.children[self.parent[z]].append(int(z))

    def precisions(self, lo=0, hi=None):
        """Precisions of components ``lo..hi-1`` in the family's shapes (``GaussianFamily.draw``):
        (k, d, d) full, (k, d) diag, (k,) spherical; None for the known shared variance."""
        hi = self.K if hi is None else hi
        if self.covariance_type == "known":
            return None
        if self.covariance_type == "full":
            return self.prec_mat[lo:hi]
        if self.covariance_type == "diag":
            return self.prec_vec[lo:hi]
        return self.prec_vec[lo:hi, 0]

    def set_precisions(self, lo, values):
        """Store family-shaped precisions (as :meth:`precisions` gives them) from index ``lo``."""
        hi = lo + values.shape[0]
        if self.covariance_type == "full":
            self.prec_mat[lo:hi] = values
        elif self.covariance_type == "diag":
            self.prec_vec[lo:hi] = values
        else:
            self.prec_vec[lo:hi] = values[:, None]

    # ---------------------------------------------------------------- summaries
    def nodes_at(self, level):
        return np.flatnonzero(self.alive & (self.level == level))

    def nodes_per_level(self):
        return np.array([self.nodes_at(lev).size for lev in range(1, self.depth + 1)])


def logsumexp(a, axis=None):
    """``log(sum(exp(a)))`` (scipy's costs ~0.3 ms a call, too much inside per-point loops);
    -inf where every term is -inf."""
    a = np.asarray(a, dtype=float)
    top = np.max(a, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(a - top), axis=axis, keepdims=True)) + top
    return out.item() if axis is None else np.squeeze(out, axis=axis)


# -------------------------------------------------------------------- random draws
def log_gamma_draws(shape, rng):
    r""":math:`\log G`, :math:`G \sim \mathrm{Gamma}(a)`, without underflow for tiny :math:`a`:
    :math:`G = G' U^{1/a}` with :math:`G' \sim \mathrm{Gamma}(a + 1)`."""
    shape = np.maximum(shape, 1e-300)  # a shape that underflowed to 0 (or a denormal): G ~ 0
    return np.log(rng.standard_gamma(shape + 1.0)) + np.log(rng.random(shape.shape)) / shape


def log_dirichlet(log_alpha, rng):
    """Log of a Dirichlet draw with parameters ``exp(log_alpha)`` (zeros stay -inf)."""
    alpha = np.exp(log_alpha)
    out = np.full(alpha.shape, -np.inf)
    positive = alpha > 0
    g = log_gamma_draws(alpha[positive], rng)
    out[positive] = g - np.logaddexp.reduce(g)
    return out


def log_beta(a, b, rng):
    r""":math:`(\log w, \log(1 - w))` for :math:`w \sim \mathrm{Beta}(a, b)`, in log space."""
    ga, gb = log_gamma_draws(np.array([a, b]), rng)
    total = np.logaddexp(ga, gb)
    return ga - total, gb - total


def antoniak(customers, concentration, rng):
    r"""Tables of a Chinese restaurant with ``customers`` :math:`n` and ``concentration``
    :math:`a` (elementwise): :math:`1 + \sum_{i=1}^{n-1}\mathrm{Bernoulli}(a/(a + i))` for
    :math:`n \ge 1`, 0 for :math:`n = 0`."""
    customers = np.asarray(customers, dtype=np.int64)
    concentration = np.broadcast_to(np.asarray(concentration, float), customers.shape).ravel()
    customers = customers.ravel()
    tables = (customers > 0).astype(np.int64)
    extra = np.maximum(customers - 1, 0)
    total = int(extra.sum())
    if total:
        owner = np.repeat(np.arange(customers.size), extra)
        start = np.cumsum(extra) - extra
        i = np.arange(total) - np.repeat(start, extra) + 1.0
        a = concentration[owner]
        joins = rng.random(total) * (a + i) < a
        tables += np.bincount(owner[joins], minlength=customers.size)
    return tables


# -------------------------------------------------------------------- the state's densities
def component_loglik(data, means, precisions=None):
    r"""``loglik[n, k]`` :math:`= \log N(x_n\mid\mu_k, \Lambda_k^{-1})` (the known
    :math:`\sigma^2 I` when ``data.family`` is None; else ``precisions`` as the family's
    ``draw`` gives them)."""
    if data.family is None:
        return lookup(data.grouped, means)
    return np.ascontiguousarray(data.family.log_density(data.points, means, precisions))


def state_loglik(data, state, lo=0, hi=None):
    """:func:`component_loglik` of the state's components ``lo..hi-1``."""
    hi = state.K if hi is None else hi
    return component_loglik(data, state.means[lo:hi], state.precisions(lo, hi))


def _log_fit(data, state, loglik, n, leaf):
    r""":math:`\log p(x_n \mid v_{nL} = \text{leaf})` with :math:`c_n` summed out."""
    K = state.K
    return np.logaddexp(np.logaddexp.reduce(state.logw[leaf, :K] + loglik[n, :K]),
                        state.logrest[leaf] + data.log_predictive[n])


def log_ncrp(state, alpha):
    r""":math:`\log p(\mathbf V)` under the nested CRP: at every inner node with child sizes
    :math:`n_1..n_m`, :math:`m\log\alpha + \log\Gamma(\alpha) - \log\Gamma(\alpha + n)
    + \sum\log\Gamma(n_i)`."""
    total = 0.0
    for z in np.flatnonzero(state.alive & (state.level < state.depth)):
        sizes = state.count[state.children[z]]
        if sizes.size:
            total += (sizes.size * np.log(alpha) + gammaln(alpha) - gammaln(alpha + sizes.sum())
                      + gammaln(sizes).sum())
    return total



def rcdll(data, state, loglik=None):
    r"""The regularised complete-data log-likelihood of the state,

    .. math:: \sum_n [\log f(x_n\mid\mu_{c_n}) + \log\beta_{v_{nL}c_n}] + \log p(\mathbf V)
              - 2C\sum_n\xi_n,

    :math:`p(\mathbf V)` the nested CRP (the choice of terms is ours: the document's formula is
    lost in its text)."""
    if loglik is None:
        loglik = state_loglik(data, state)
    n = np.arange(data.n_points)
    value = (loglik[n, state.comp].sum() + state.logw[state.paths[:, -1], state.comp].sum()
             + log_ncrp(state, data.path_concentration))
    if data.margin_weight > 0:
        value -= 2.0 * data.margin_weight * reg.slack(
            data.extended, state.paths, state.children, state.eta, data.margin).sum()
    return float(value)


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
    for level in range(1, L + 1):
        for z in state.nodes_at(level):
            p = state.parent[z]
            prior = gamma * np.exp(np.append(state.logw[p, :K], state.logrest[p]))
            counts = np.append(customers[z], 0)
            with np.errstate(divide="ignore"):
                draw = log_dirichlet(np.log(prior + counts), rng)
            state.logw[z, :K], state.logrest[z] = draw[:K], draw[K]


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


PLAIN = ("path",)
MOVES = ("path", "split_merge", "components", "regraft")
RESTRUCTURING = MOVES[1:]


def sweep(data, state, rng, reg_rng=None, reference=False, moves=PLAIN, stats=None):
    """One sweep (module docstring); ``reg_rng`` None switches the regularisation steps off
    (only allowed with C = 0); ``reference`` runs steps 1-2 in plain Python. ``moves`` picks
    the per-point moves ("path": steps 1-2) and the restructuring moves of
    :mod:`mixbayes.tree._moves` ("split_merge" of leaves, "components" split-merge,
    "regraft" of a subtree under another parent), which run after step 4; "split_merge" and
    "regraft" do not account for the margin penalty and are skipped when C > 0; "components"
    integrates the means out under the known variance and is skipped for the unknown
    covariance types (``data.family`` set). Returns the
    path acceptance rate (NaN without "path"); ``stats``, a dict, receives every
    restructuring move's share of proposals accepted (NaN when none was proposed)."""
    if reg_rng is None and data.margin_weight > 0:
        raise ValueError("the regularisation steps need their random stream when C > 0")
    rate = float("nan")
    if "path" in moves:
        loglik = state_loglik(data, state)
        step = path_step_reference if reference else path_step
        loglik, rate = step(data, state, loglik, rng, reg_rng)  # reseats every component
    weight_step(data, state, rng)
    mean_step(data, state, rng)
    for move in RESTRUCTURING:
        if move not in moves or (move != "components" and data.margin_weight > 0):
            continue
        if move == "components" and data.family is not None:
            continue  # its ratio integrates the means out under the known variance only
        proposed, accepted = _moves.run(data, state, rng, move)
        if stats is not None:
            stats[move] = accepted / proposed if proposed else float("nan")
    if reg_rng is not None:
        discriminant_step(data, state, reg_rng)
    return rate


# -------------------------------------------------------------------- starting states
def initial_state(data, rng, reg_rng=None, paths=None, comp=None):
    """A state with the given paths (as labels per level, shape (N, L); default: all points
    on one path) and components (default: one), weights and means drawn from their
    conditionals, discriminants from their prior."""
    N, d = data.points.shape
    L = data.depth
    state = TreeState(N, L, d, data.covariance_type)
    if paths is None:
        paths = np.zeros((N, L), dtype=np.int64)
    above = np.zeros(N, dtype=np.int64)  # every point's node one level up (the root first)
    for level in range(L):
        # one node per distinct path prefix, in order of first appearance
        _, first, inverse = np.unique(paths[:, : level + 1], axis=0, return_index=True,
                                      return_inverse=True)
        inverse = inverse.ravel()
        node_of = np.empty(first.size, dtype=np.int64)
        for key in np.argsort(first):
            node_of[key] = state.new_node(int(above[first[key]]))
        state.paths[:, level] = above = node_of[inverse]
    np.add.at(state.count, state.paths.ravel(), 1)
    state.count[0] = N
    comp = np.zeros(N, dtype=np.int64) if comp is None else np.unique(comp, return_inverse=True)[1]
    state.K = int(comp.max()) + 1
    state.ensure_components(state.K)
    state.comp = comp.astype(np.int64)
    state.comp_count[: state.K] = np.bincount(comp, minlength=state.K)
    # weights: a prior-like start (root uniform over components), then the exact step
    state.logw[0, : state.K] = np.log(1.0 / (state.K + 1))
    state.logrest[0] = np.log(1.0 / (state.K + 1))
    for level in range(1, L + 1):
        for z in state.nodes_at(level):
            state.logw[z, : state.K] = state.logw[0, : state.K]
            state.logrest[z] = state.logrest[0]
    weight_step(data, state, rng)
    mean_step(data, state, rng)
    if reg_rng is not None:
        nodes = np.flatnonzero(state.alive & (state.level > 0))
        state.eta[nodes] = np.sqrt(data.discriminant_variance) * reg_rng.standard_normal(
            (nodes.size, d + 1))
    return state
