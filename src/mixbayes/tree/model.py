r"""``HierarchicalMixture``: Bayesian hierarchical mixture clustering (BHMC) with max-margin
posterior regularisation (document 5), fitted by MCMC (:mod:`mixbayes.tree._sampler`)."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils.validation import check_is_fitted

from .._progress import progress
from .._validation import (
    Interval,
    Options,
    RandomState,
    check_n_features,
    check_points,
    check_random_state,
    validate_params,
)
from ..diagnostics import effective_sample_size, split_rhat
from ..families.gaussian import column_variances, data_scale
from ..hdp._sampler import lookup
from . import _regularisation as reg
from . import _sampler
from ._start import ward_start
from ._tree import Tree, simplify


class HierarchicalMixture(ClusterMixin, BaseEstimator):
    r"""A tree of clusters: nested-CRP paths, multilevel HDP weights, Gaussian components.

    .. math::

        \boldsymbol v_n \sim \mathrm{nCRP}(\alpha),\quad
        \beta_{z_0} \sim \mathrm{GEM}(\gamma_0),\quad
        \beta_{z'} \sim \mathrm{DP}(\gamma, \beta_z),\quad
        c_n \sim \beta_{v_{nL}},\quad \mu_k \sim N(m_0, s_0^2 I),\quad
        x_n \sim N(\mu_{c_n}, \sigma^2 I),

    and, for :math:`C > 0`, the posterior regularised by
    :math:`\prod_z N(\eta_z; 0, \nu^2 I)\,\exp(-2C\sum_n\xi_n)` with
    :math:`\xi_n = \max(0, \max_{\ell, z\in\mathcal S(v_{n\ell})}
    \varepsilon_0 - (\eta_{v_{n\ell}} - \eta_z)^\top(x_n, 1))`: every point's node should beat
    each of its siblings by the margin :math:`\varepsilon_0` at every level.

    Parameters
    ----------
    depth : int, default=2
        :math:`L`, the number of levels below the root (leaves are at level L).
    top_concentration : float, default=1.0
        :math:`\gamma_0`, concentration of the root's weights.
    branch_concentration : float, default=0.01
        :math:`\gamma`, concentration of every child's weights around its parent's. Small
        values make a node's weights sparse: each leaf mostly one component, a parent the
        components of its children. Whether two clusters of points under one parent form two
        leaves or one leaf of two components is, to first order, a bet at odds
        :math:`\alpha/\gamma` (the nested CRP charges :math:`\alpha\,\Gamma(n_1)\Gamma(n_2)
        /\Gamma(n)` for the split, the leaves' Dirichlet weights repay about
        :math:`\Gamma(n)/(\gamma\,\Gamma(n_1)\Gamma(n_2))`), so :math:`\gamma` well below
        :math:`\alpha` keeps clusters in leaves of their own. (Two Gaussians 8 sd apart, 30
        points each, 4 data and 5 chain seeds: 20 of 20 fits split them with 0.01, 12 of 20
        with 0.1. With 1.0, on the well-separated hierarchies of the recovery test, leaves held
        several components each: leaf NMI 0.88-0.92, purity 0.81-0.88, against 0.98-1.0 and
        0.98-1.0 with 0.01; means over data seeds 0-5, C = 0.)
    path_concentration : float, default=0.1
        :math:`\alpha` of the nested CRP: larger opens more branches. (With 1.0 and :math:`\gamma = 0.1` points stood
        alone on new branches often enough to split the two Gaussians above into fragments in
        19 of 20 fits; on the recovery test's hierarchies with :math:`\gamma = 1` the kept
        state held 12-33 leaves for 9-12 clusters.)
    margin_weight : float, default=0.0
        :math:`C`; 0 is plain BHMC.
    margin : float, default=1.0
        :math:`\varepsilon_0`, the margin each node must keep from its siblings.
    discriminant_variance : float, default=1.0
        :math:`\nu^2`, prior variance of every discriminant :math:`\eta_z`.
    observation_variance : float or None, default=None
        :math:`\sigma^2`, the components' known variance; None estimates it from the points:
        the pooled within-cluster variance, averaged over features, of the starting state's
        leaves (Ward's hierarchy cut where a BIC is lowest, :mod:`mixbayes.tree._start`) -
        the spread of one component as the data show it. (A tenth of the overall variance,
        the first default, made components span several clusters: on
        ``make_tree_data(kind="nested")`` the components fell from 10 to 3 over 100 sweeps
        and the leaf NMI to 0.40.)
    mean_prior_variance : float or None, default=None
        :math:`s_0^2`; None means the mean per-feature variance. The prior mean :math:`m_0` is
        the points' mean.
    n_iter : int, default=100
        Sweeps per chain.
    burn_in : int or None, default=None
        Sweeps before the kept state may be chosen and left out of R-hat/ESS; None means
        ``n_iter // 2``.
    n_chains : int, default=1
    init : {"ward", "single"}, default="ward"
        Starting state: Ward's agglomerative hierarchy (of a random 2,000 points when there
        are more) cut where a BIC is lowest into :math:`k` leaves (used as components) and at
        :math:`k^{\ell/L}` nodes at level :math:`\ell` (:mod:`mixbayes.tree._start`), or
        every point on one path in one component (from which the restructuring moves grow
        the tree; the path moves alone, proposed from the prior, open branches slowly).
    moves : {"all", "path"}, default="all"
        The sampler's moves (:func:`mixbayes.tree._sampler.sweep`). "path": every point's
        path and component (steps 1-2 of :mod:`mixbayes.tree._sampler`) and the Gibbs steps
        of weights and means, which keep the start's numbers of leaves and components. "all"
        adds the moves that restructure the tree (:mod:`mixbayes.tree._moves`, each exact for
        the posterior): split-merge of leaves, split-merge of components, and regraft of a
        node and its subtree under another parent; the first and last are skipped when
        ``margin_weight > 0`` (they do not account for the margin penalty). (With them the
        chain reaches the posterior's trees, which at the default concentrations are flatter
        than a nested truth of well-separated leaves: leaves of distinct components cost
        about :math:`\gamma` each to share a parent, so the posterior gives most of them
        parents of their own, and two sibling leaves merge at odds about
        :math:`\gamma/\alpha`.)
    random_state : int, Generator or None, default=0
    verbose : int, default=0

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Leaf of every point in the kept state (node numbers of :attr:`tree_`).
    paths_ : ndarray of shape (n_samples, depth)
        Node of every point at levels 1..L (node numbers of :attr:`tree_`, repeated where a
        node without siblings was merged into its parent).
    tree_ : Tree
        The kept state simplified (built from ``node_parent_``, ``node_level_``,
        ``node_size_``, ``node_weights_`` and ``means_``).
    n_components_ : int
    trace_ : structured ndarray of shape (n_chains, n_iter)
        Per sweep: ``rcdll`` (:func:`mixbayes.tree._sampler.rcdll`), ``n_components``,
        ``acceptance`` (share of path proposals accepted), ``nodes`` (occupied nodes per
        level, L values), and the share of proposals accepted of each restructuring move,
        ``split_merge``, ``components`` and ``regraft`` (NaN in a sweep without a proposal
        of it, or with ``moves="path"``).
    rhat_, ess_ : dict
        Split R-hat and ESS of ``rcdll`` and ``n_components`` over the sweeps after burn-in.
    best_rcdll_ : float
        RCDLL of the kept state: the highest over every chain's sweeps after burn-in.
    margins_ : ndarray of shape (n_samples,)
        Every training point's smallest lead of its own node over a sibling, over the levels:
        :math:`\min_{\ell, z\in\mathcal S(v_{n\ell})}(\eta_{v_{n\ell}} - \eta_z)^\top
        \tilde x_n` under the kept state (+inf where no level has siblings). The constraint
        holds where it is at least ``margin``; the slack is ``max(0, margin - margins_)``.
        With ``margin_weight=0`` the discriminants follow their prior and so do these.
    """

    _parameter_rules = {
        "depth": Interval("int", 1),
        "top_concentration": Interval("real", 0, None, "neither"),
        "branch_concentration": Interval("real", 0, None, "neither"),
        "path_concentration": Interval("real", 0, None, "neither"),
        "margin_weight": Interval("real", 0),
        "margin": Interval("real", 0),
        "discriminant_variance": Interval("real", 0, None, "neither"),
        "observation_variance": Interval("real", 0, None, "neither", allow_none=True),
        "mean_prior_variance": Interval("real", 0, None, "neither", allow_none=True),
        "n_iter": Interval("int", 1),
        "burn_in": Interval("int", 0, allow_none=True),
        "n_chains": Interval("int", 1),
        "random_state": RandomState(),
        "verbose": Interval("int", 0),
        "init": Options(("ward", "single")),
        "moves": Options(("all", "path")),
    }

    def __init__(self, depth=2, *, top_concentration=1.0, branch_concentration=0.01,
                 path_concentration=0.1, margin_weight=0.0, margin=1.0,
                 discriminant_variance=1.0, observation_variance=None, mean_prior_variance=None,
                 n_iter=100, burn_in=None, n_chains=1, init="ward", moves="all",
                 random_state=0, verbose=0):
        self.depth = depth
        self.top_concentration = top_concentration
        self.branch_concentration = branch_concentration
        self.path_concentration = path_concentration
        self.margin_weight = margin_weight
        self.margin = margin
        self.discriminant_variance = discriminant_variance
        self.observation_variance = observation_variance
        self.mean_prior_variance = mean_prior_variance
        self.n_iter = n_iter
        self.burn_in = burn_in
        self.n_chains = n_chains
        self.init = init
        self.moves = moves
        self.random_state = random_state
        self.verbose = verbose

    def _data(self, X):
        """The sampler's fixed settings and the Ward start (:mod:`mixbayes.tree._start`),
        which also gives the default observation variance."""
        validate_params(self, self._parameter_rules)
        if self.burn_in is not None and self.burn_in >= self.n_iter:
            raise ValueError(f"burn_in must be below n_iter={self.n_iter}; got {self.burn_in}.")
        X = check_points(X, "X", min_samples=2)
        if self.depth > X.shape[0]:
            raise ValueError(f"depth must be at most the number of points ({X.shape[0]}); got "
                             f"{self.depth}.")
        scale = data_scale(column_variances(X))
        start = None  # the Ward start, built only when the start or sigma^2 needs it
        if self.init == "ward" or self.observation_variance is None:
            start_rng = check_random_state(self.random_state).spawn(1)[0]
            start = ward_start(X, self.depth, start_rng)
        if self.observation_variance is None:
            within = start.within_variance
            observation_variance = within if within > 0 else 0.1 * scale
        else:
            observation_variance = float(self.observation_variance)
        data = _sampler.TreeData(
            X, self.depth, float(self.top_concentration), float(self.branch_concentration),
            float(self.path_concentration),
            observation_variance,
            X.mean(axis=0),
            scale if self.mean_prior_variance is None else float(self.mean_prior_variance),
            float(self.margin_weight), float(self.margin), float(self.discriminant_variance))
        return data, start

    def fit(self, X, y=None):
        """Run the chains and keep the state with the highest RCDLL after burn-in."""
        data, start = self._data(X)
        burn_in = self.n_iter // 2 if self.burn_in is None else self.burn_in
        trace = np.zeros((self.n_chains, self.n_iter), dtype=self._trace_dtype())
        best, best_value = None, -np.inf
        streams = check_random_state(self.random_state).spawn(self.n_chains + 1)[1:]
        moves = _sampler.MOVES if self.moves == "all" else _sampler.PLAIN
        start = (None, None) if self.init == "single" else (start.paths, start.paths[:, -1])
        for chain, stream in enumerate(streams):
            rng, reg_rng = stream.spawn(2)
            state = _sampler.initial_state(data, rng, reg_rng, *start)
            with progress(self.n_iter, self.verbose, f"tree chain {chain + 1}") as bar:
                for sweep in range(self.n_iter):
                    stats = dict.fromkeys(_sampler.RESTRUCTURING, np.nan)
                    rate = _sampler.sweep(data, state, rng, reg_rng, moves=moves,
                                          stats=stats)
                    value = _sampler.rcdll(data, state)
                    trace[chain, sweep] = (value, state.K, rate, state.nodes_per_level(),
                                           *(stats[m] for m in _sampler.RESTRUCTURING))
                    if sweep >= burn_in and value > best_value:
                        best, best_value = state.copy(), value
                    bar.update()
        self._store(data, best, best_value, trace, burn_in)
        return self

    def _trace_dtype(self):
        """The fields of :attr:`trace_` (``nodes`` holds one count per level)."""
        return np.dtype([("rcdll", float), ("n_components", np.int64), ("acceptance", float),
                         ("nodes", np.int64, (self.depth,))]
                        + [(move, float) for move in _sampler.RESTRUCTURING])

    def _store(self, data, state, value, trace, burn_in):
        K = state.K
        parent, level, size, weights, paths = simplify(
            state.parent, state.level, state.count, state.alive, state.paths, state.logw, K)
        self.node_parent_, self.node_level_, self.node_size_ = parent, level, size
        self.node_weights_ = weights
        self.means_ = state.means[:K].copy()
        self.paths_ = paths
        self.labels_ = paths[:, -1].copy()
        self.n_components_ = int(K)
        self.best_rcdll_ = float(value)
        self.trace_ = trace
        kept = trace[:, burn_in:]
        self.rhat_, self.ess_ = {}, {}
        for name in ("rcdll", "n_components"):
            draws = kept[name].astype(float)
            ok = draws.shape[1] >= 4
            self.rhat_[name] = split_rhat(draws) if ok else float("nan")
            self.ess_[name] = effective_sample_size(draws) if ok else float("nan")
        # what predict needs of the raw kept state, as plain arrays (occupied nodes only)
        occupied = np.flatnonzero(state.alive & ((state.count > 0) | (np.arange(
            state.alive.size) == 0)))
        index = np.full(state.alive.size, -1, dtype=np.int64)
        index[occupied] = np.arange(occupied.size)
        self.state_parent_ = np.where(occupied == 0, -1, index[state.parent[occupied]])
        self.state_count_ = state.count[occupied].copy()
        self.state_level_ = state.level[occupied].copy()
        self.state_log_weights_ = np.column_stack([state.logw[occupied, :K],
                                                   state.logrest[occupied]])
        self.state_discriminants_ = state.eta[occupied].copy()
        # each point's smallest lead of its node over a sibling, at any level (+inf where no
        # level has siblings): the margin constraint holds when it is at least `margin`
        extended = np.hstack([data.points, np.ones((data.points.shape[0], 1))])
        rho = reg.worst_violations(extended, state.paths, state.children, state.eta,
                                   float(self.margin))[0]
        self.margins_ = float(self.margin) - rho
        new_id = np.full(occupied.size, -1, dtype=np.int64)
        for raw, mapped in zip(state.paths.ravel(), paths.ravel()):
            new_id[index[raw]] = mapped
        self.state_to_node_ = new_id
        self.prior_mean_ = data.grouped.prior_mean.copy()
        self.observation_variance_ = float(data.observation_variance)
        self.mean_prior_variance_ = float(data.mean_prior_variance)
        self.n_features_in_ = data.points.shape[1]

    @property
    def tree_(self):
        check_is_fitted(self, "labels_")
        return Tree(self.node_parent_, self.node_level_, self.node_size_, self.node_weights_,
                    self.means_)

    def cut(self, level):
        """Flat labels at ``level`` (1..depth), numbered 0.. in order of first appearance."""
        check_is_fitted(self, "labels_")
        rule = Interval("int", 1, self.depth)
        if not rule.accepts(level):
            raise ValueError(f"level must be {rule.describe()}; got {level!r}.")
        return np.unique(self.paths_[:, level - 1], return_inverse=True)[1].ravel()

    def predict(self, X):
        """Leaf (node of :attr:`tree_`) of the most probable existing path of every point
        under the kept state: nested-CRP path probability times
        :math:`\\sum_k\\beta_{v_L k}f(x\\mid\\mu_k) + \\beta^*_{v_L}m(x)`, times the margin
        factor :math:`e^{-2C\\xi}` when :math:`C > 0`."""
        check_is_fitted(self, "labels_")
        X = check_points(X, "X")
        check_n_features(X, self)
        data = _sampler.TreeData(X, self.depth, 1.0, 1.0, 1.0, self.observation_variance_,
                                 self.prior_mean_, self.mean_prior_variance_)
        loglik = np.hstack([lookup(data.grouped, self.means_), data.log_predictive[:, None]])
        parent, count, level = self.state_parent_, self.state_count_, self.state_level_
        leaves = np.flatnonzero(level == self.depth)
        alpha = float(self.path_concentration)
        leaf_paths = np.zeros((leaves.size, self.depth), dtype=np.int64)
        log_prior = np.zeros(leaves.size)
        for i, leaf in enumerate(leaves):
            z = leaf
            while z > 0:
                leaf_paths[i, level[z] - 1] = z
                log_prior[i] += np.log(count[z] / (count[parent[z]] + alpha))
                z = parent[z]
        lw = self.state_log_weights_[leaves]  # (leaves, K + 1)
        scores = np.logaddexp.reduce(loglik[:, None, :] + lw[None, :, :], axis=2) + log_prior
        if self.margin_weight > 0:
            children = [np.flatnonzero(parent == z).tolist() for z in range(parent.size)]
            extended = np.hstack([X, np.ones((X.shape[0], 1))])
            for i in range(leaves.size):
                paths = np.broadcast_to(leaf_paths[i], (X.shape[0], self.depth))
                scores[:, i] -= 2.0 * self.margin_weight * reg.slack(
                    extended, paths, children, self.state_discriminants_, float(self.margin))
        return self.state_to_node_[leaves[scores.argmax(axis=1)]]

    def to_newick(self):
        return self.tree_.to_newick()

    def to_json(self, **kwargs):
        return self.tree_.to_json(**kwargs)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags
