r"""``HierarchicalMixture``: Bayesian hierarchical mixture clustering (BHMC) with max-margin
posterior regularisation (Huang et al. 2021), fitted by MCMC (:mod:`mixbayes.tree._sampler`)."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin, clone
from sklearn.utils.validation import check_is_fitted

from .. import _engines
from .._kernel_tools import threads
from .._progress import progress
from .._schema import Schema
from .._validation import (
    Either,
    Interval,
    Options,
    RandomState,
    check_n_features,
    check_points,
    check_random_state,
    gathered,
    is_distributed_input,
    validate_params,
)
from ..diagnostics import effective_sample_size, split_rhat
from ..partition import kept_sweeps
from ..families.gaussian import (GaussianFamily, KnownVarianceMarginal, Whitening,
                                  column_variances, data_scale, pooled_within_covariance,
                                  scaled_prior)
from . import _regularisation as reg
from . import _sampler, _state
from ._linkage import tree_linkage
from ._start import regroup, ward_start
from ._tree import Tree, linkage_to_newick, simplify


AUTO_DEPTHS = (1, 2, 3, 4, 5)  # the depths depth="auto" compares
COVARIANCE_TYPES = ("known", "tied", "full", "diag", "spherical")
SHARED = ("known", "tied")  # the types with one covariance for every component, fixed
REGROUP_AT = (0.2, 0.4, 0.6, 0.8)  # shares of the burn-in after which init="ward" regroups


class HierarchicalMixture(ClusterMixin, BaseEstimator):
    r"""A tree of clusters: nested-CRP paths, multilevel HDP weights, Gaussian components.

    .. math::

        \boldsymbol v_n \sim \mathrm{nCRP}(\alpha),\quad
        \beta_{z_0} \sim \mathrm{GEM}(\gamma_0),\quad
        \beta_{z'} \sim \mathrm{DP}(\gamma, \beta_z),\quad
        c_n \sim \beta_{v_{nL}},\quad \mu_k \sim N(m_0, s_0^2 I),\quad
        x_n \sim N(\mu_{c_n}, \sigma^2 I),

    with ``covariance_type="known"``; otherwise every component has a precision of its own,
    :math:`x_n \sim N(\mu_{c_n}, \Lambda_{c_n}^{-1})`, from the conjugate prior of
    :class:`~mixbayes.families.gaussian.GaussianFamily` (``covariance_type`` below); and,
    for :math:`C > 0`, the posterior regularised by
    :math:`\prod_z N(\eta_z; 0, \nu^2 I)\,\exp(-2C\sum_n\xi_n)` with
    :math:`\xi_n = \max(0, \max_{\ell, z\in\mathcal S(v_{n\ell})}
    \varepsilon_0 - (\eta_{v_{n\ell}} - \eta_z)^\top(x_n, 1))`: every point's node should beat
    each of its siblings by the margin :math:`\varepsilon_0` at every level.

    Parameters
    ----------
    depth : int or "auto", default=2
        :math:`L`, the number of levels below the root (leaves are at level L). ``"auto"``
        fits every depth of ``AUTO_DEPTHS`` (1-5, at most the number of points; five fits'
        time) and keeps the one whose full dendrogram has the highest evidence
        :attr:`log_evidence_`; :attr:`depth_` and :attr:`depth_scores_` say which and why.
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
    covariance_type : {"tied", "known", "full", "diag", "spherical"}, default="tied"
        The components' covariances. ``"known"``: one shared :math:`\sigma^2 I`
        (``observation_variance``). ``"tied"``: one shared :math:`\sigma^2\Sigma`, with
        :math:`\Sigma` the pooled within-leaf covariance of the Ward start's leaves, shrunk
        by ``mixbayes.families.gaussian.TIED_SHRINKAGE`` (0.1) towards its diagonal, a
        column holding one value in more than half its rows (a flag, counts mostly 0) kept
        at half its variance at least
        (:func:`mixbayes.families.gaussian.pooled_within_covariance`): the known model run on
        the points whitened by :math:`\Sigma` (:class:`~mixbayes.families.gaussian.Whitening`;
        the means' prior variance :math:`s_0^2` and :math:`\sigma^2` in its units), so
        features in other units or correlated within the clusters weigh as much as the
        others. At every burn-in regroup (``init``) :math:`\Sigma` is re-estimated from the
        chain's own leaves (its components with ``moves="burn-in"``), :math:`\sigma^2` kept
        in its units; after burn-in it is fixed, so the kept chain is exact for the model with
        that :math:`\Sigma` (an empirical-Bayes plug-in, as the known :math:`\sigma^2` is).
        :attr:`means_` and :attr:`covariances_` (``(K, d, d)``, all equal) are in the points'
        units,
        :attr:`log_evidence_` and :attr:`best_rcdll_` include the whitening's Jacobian, and
        :attr:`whitening_` and :attr:`whitening_centre_` hold the map. With
        ``margin_weight > 0`` (no regroups) :math:`\Sigma` stays the start's. The others are
        unknown, one per component, with conjugate
        priors scaled from the data (:func:`mixbayes.families.gaussian.scaled_prior`): the
        prior mean covariance :math:`\bar\Sigma` is the points' covariance (plus
        :math:`10^{-6}` times each column's variance on the diagonal, for collinear or
        constant columns), :math:`m_0` the points' mean and :math:`\kappa_0 =
        \operatorname{tr}\bar\Sigma/(d\,s_0^2)` (1 by default: a mean's prior spread
        :math:`s_0^2` at the prior covariance, as in the known model); ``"full"``
        Normal–Wishart, :math:`\Lambda_k \sim \mathcal W(\bar\Sigma^{-1}, d + 2)` (the
        fewest degrees of freedom with a prior mean: :math:`E[\Lambda_k^{-1}] =
        \bar\Sigma`); ``"diag"`` Normal–Gamma per feature, :math:`\tau_{kj} \sim
        \mathrm{Gamma}(3/2, \bar\Sigma_{jj}/2)`; ``"spherical"`` one such precision per
        component, rate :math:`\operatorname{tr}\bar\Sigma/(2d)`; and
        :math:`\mu_k\mid\Lambda_k \sim N(m_0, (\kappa_0\Lambda_k)^{-1})`. The Ward start
        is then cut where the conjugate marginal likelihood is highest
        (:mod:`mixbayes.tree._start`). Names as in
        :class:`~mixbayes.VariationalGaussianMixture`. (The within-leaf spread of the Ward
        start, the known model's :math:`\sigma^2`, as :math:`\bar\Sigma` gave the
        components little room to stretch: on three elongated 2-D classes the full model then
        kept 12 leaves, leaf ARI 0.40, against 3 leaves and 0.98 with the points'
        covariance; on the UCI tables below the two scales gave close leaf ARIs but for
        ecoli with full, 0.40 against 0.61, and iris with diag, 0.47 against 0.64.)
        Why ``"tied"`` is the default (2026-12-04, ``bench/bench_tree.py``'s 15 sets, chain
        seeds 0-2, dendrogram purity of :attr:`linkage_`): within 0.01 of the best of Ward,
        average, genie and the Normal-inverse-Wishart BHC on 10, 10 and 11 of 15 sets against
        8, 6 and 8 for ``"known"``, the mean gap to the best peer -0.005 against -0.018 (iris
        0.890 against 0.800, crabs 0.406 against 0.351, diabetes 0.738 against 0.747, yeast
        0.361 against 0.389; bench/bench_tree.py's table has every set). Re-estimating
        :math:`\sigma^2` from the chain's leaves at each regroup gave 9, 8 and 10. With the
        point-mass floor on :math:`\Sigma` (2026-12-06; a column holding one value in more
        than half its rows, constant inside most leaves, was stretched by the whitening) 12,
        13 and 12 of 15, 14 of 15 at the seeds' means (glass 0.458 -> 0.496, yeast 0.361 ->
        0.386, digits 0.750 -> 0.833; diabetes, 0.738 against the BHC's 0.838, the one lost).

        Before ``"tied"`` the default was ``"known"``: dendrogram purity of ``paths_`` / leaf ARI
        on the six standardised UCI tables (one seed, other settings default, 100 sweeps):

        ========  ===========  ===========  ===========  ===========
        table     known        spherical    diag         full
        ========  ===========  ===========  ===========  ===========
        iris      .788 / .320  .729 / .464  .774 / .640  .660 / .561
        wine      .875 / .509  .851 / .524  .819 / .482  .593 / .477
        glass     .430 / .132  .438 / .164  .433 / .211  .429 / .180
        ecoli     .785 / .408  .746 / .425  .770 / .687  .683 / .606
        wdbc      .688 / .077  .694 / .041  .685 / .088  .774 / .371
        yeast     .331 / .094  .327 / .069  .274 / .012  .274 / .012
        ========  ===========  ===========  ===========  ===========

        ``"known"`` had the best purity on four tables (diag's is lower on five); the best
        leaf ARI is diag's on three, spherical's, full's and known's on one each; no type is
        better on most tables by both measures. Full and diag fit fewer leaves than known
        (ecoli: 6 and 6 against 13; wdbc with full: 6 against 39); on yeast, whose columns
        5 and 6 hold one value in all but 14 and 15 of 1,484 rows, they cut 3 leaves: the few
        other rows apart, so that the rest has no spread there (a continuous model of
        near-constant columns).
    observation_variance : float or None, default=None
        :math:`\sigma^2`, the components' known variance (``covariance_type="known"`` only;
        with another type it is an error); None estimates it from the points:
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
        With "ward", ``moves="path"``, depth > 1 and :math:`C = 0` (or ``moves="burn-in"``
        from either start, then also after the last burn-in sweep) the chain is restarted
        during burn-in, after the sweeps at the shares ``REGROUP_AT`` (0.2, 0.4, 0.6, 0.8)
        of ``burn_in``, from its own leaves and components grouped above by Ward's merges
        of the leaves
        (:func:`mixbayes.tree._start.regroup`, the start's :math:`k^{\ell/L}` rule): the
        path moves never carry a leaf to another parent, so without it the upper levels stay
        those of Ward's tree of the points before the chain refined the leaves. Burn-in
        only, so the kept sweeps are the same exact chain from a later start. Dendrogram
        purity of :attr:`linkage_` (``bench/bench_tree.py``'s 15 sets, mean over them of
        ours minus the best peer), over six chains (seeds 0-2 before and after the weight
        step's draws were reordered): -0.017 against -0.020 without, best or within 0.01 of
        the best peer on 48 of 90 set-chains against 43 — a small gain, of the order of the
        spread between chains (0.005). It is steady on wdbc (0.874-0.898 on five chains of
        six, against 0.823-0.833) and costs iris and wine about 0.02.
        Once, at half the burn-in, gave -0.018 / -0.011; after every tenth, -0.019 / -0.017.
        (With :math:`C > 0` a restart would also redraw the discriminants from their prior:
        on the overlapping siblings of the margin test the tree then kept one branch.)
    moves : {"path", "all", "burn-in"}, default="path"
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
        :math:`\gamma/\alpha`.) The default is "path", chosen by ``bench/bench_tree.py``:
        the full dendrogram (:attr:`linkage_`) of the "path" chain, which keeps the Ward
        start's geometric grouping of leaves, has the higher purity on all six UCI tables
        (iris 0.840 against 0.808, wine 0.893 / 0.741, glass 0.471 / 0.439, wdbc 0.833 /
        0.831, ecoli 0.835 / 0.764, yeast 0.385 / 0.371; seed 0, before the burn-in
        regroup of ``init``): the posterior's upper levels carry little of the geometry.
        "all" is the choice for exploring the posterior. "burn-in": every move during
        burn-in, the per-point moves after it, for starts far from the data's tree
        (``init="single"``): the restructuring moves find the leaves and components, the
        burn-in regroups (``init``; here also after the last burn-in sweep, and with
        ``"tied"`` :math:`\Sigma` re-estimated from the components, since a leaf may then
        hold several) group the leaves above by Ward's merges, cut where a merge costs most
        more than the one before (:func:`mixbayes.tree._start.regroup`'s ``cut="gaps"``:
        the leaves the moves find are not the start's, whose count the BIC chose), and the
        kept sweeps are the exact per-point chain from there. From one path, on the recovery
        test's well-separated hierarchies (``tests/tree/test_model.py``, data seeds 0-2, 60
        sweeps, level-wise NMI, means): depth 2 0.98 / 0.98 (d = 2) and 0.97 / 0.95 (d = 10);
        depth 3 (200 sweeps) 1.0 / 1.0 / 0.98 at d = 2 and 10, and from 30 random leaves or
        2 0.94-1.0 at every level (``tests/tree/test_moves.py``); with 60 sweeps and the
        start's equal-branching cut depth 3 gave 0.93 / 0.88 / 0.97 and 0.93 / 0.91 / 0.96.
        "all" gives 0.59 / 0.97, 0.58 / 0.97, 0.24 / 0.55 / 0.98 and 0.20 / 0.36 / 0.95, and "path" from one
        path stays near it (2-7 leaves on the UCI tables); from the Ward start "burn-in" is
        within 0.01 of the best peer on 10 of ``bench/bench_tree.py``'s 15 sets (means of
        chain seeds 0-2, 2026-12-06, against 14 for "path": digits 0.70, glass 0.47), so it
        is not the default.
    max_samples : int, default=200
        Most sweeps after burn-in whose paths are kept, over all chains and evenly spaced
        (``level_samples_``, int32, depth x n_samples each; :meth:`partition_summary` reads
        them); 0 keeps none.
    point_estimate : {None, "vi", "binder"}, default=None
        Also store :attr:`point_labels_`: the leaves' partition of least posterior expected
        VI (or Binder's loss) over the kept sweeps (:func:`mixbayes.partition.point_estimate`
        of the leaves of ``level_samples_``), an answer that weighs every kept sweep rather
        than the one state of highest RCDLL; ``labels_``, ``paths_`` and ``tree_`` stay that
        state's.
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
        ``node_size_``, ``node_weights_``, ``means_`` and ``covariances_``).
    means_ : ndarray of shape (n_components, n_features)
    precisions_, covariances_ : ndarray
        Every component's precision and its inverse in the kept state, shaped as
        :class:`~mixbayes.VariationalGaussianMixture`'s: (n_components, n_features,
        n_features) full, (n_components, n_features) diag, (n_components,) spherical and
        known (:math:`\sigma^{-2}` and :math:`\sigma^2` repeated).
    mean_precision_prior_, degrees_of_freedom_prior_, covariance_prior_
        :math:`\kappa_0`, :math:`\nu_0` and the prior scale (not with ``"known"``), as
        :class:`~mixbayes.families.gaussian.GaussianFamily` takes them.
    n_components_ : int
    trace_ : structured ndarray of shape (n_chains, n_iter)
        Per sweep: ``rcdll`` (:func:`mixbayes.tree._state.rcdll`), ``n_components``,
        ``acceptance`` (share of path proposals accepted), ``nodes`` (occupied nodes per
        level, L values), and the share of proposals accepted of each restructuring move,
        ``split_merge``, ``components`` and ``regraft`` (NaN in a sweep without a proposal
        of it, or with ``moves="path"``).
    rhat_, ess_ : dict
        Split R-hat and ESS of ``rcdll`` and ``n_components`` over the sweeps after burn-in.
    best_rcdll_ : float
        RCDLL of the kept state: the highest over every chain's sweeps after burn-in.
    linkage_ : ndarray of shape (n_samples - 1, 4)
        The full binary dendrogram in scipy's linkage format (``scipy.cluster.hierarchy
        .dendrogram(model.linkage_)`` and ``fcluster`` read it): inside every component,
        leaf and inner node of the kept tree, the parts are joined by greedy merges scored
        with the components' own marginal likelihood (within leaves Bayesian hierarchical
        clustering's, Heller & Ghahramani 2005; above them the Bayes factor of one component
        against two), so every node of :attr:`tree_` is a subtree of it
        (:mod:`mixbayes.tree._linkage`); heights rise stage by stage (points in a component
        below 1, components in a leaf below 2, then a unit per level of inner nodes), so
        ``fcluster(linkage_, k, "maxclust")`` cuts the sampled tree's upper levels first.
        Dendrogram purity of it is higher than of the depth-L :attr:`paths_` (whose pairs in a
        multi-way node all meet there).
    level_samples_ : ndarray of shape (n_kept, depth, n_samples)
        Every point's node at every level in up to ``max_samples`` sweeps after burn-in
        (raw node numbers of each sweep's state: only which points share one matters).
    point_labels_ : ndarray of shape (n_samples,)
        With ``point_estimate`` set: the least expected-loss partition of the points into
        leaves, clusters numbered 0.. by decreasing size (not node numbers of ``tree_``).
    log_evidence_ : float
        :math:`\log p(X\mid T)` of :attr:`linkage_`'s root: Bayesian hierarchical clustering's
        marginal likelihood of the points under a Dirichlet-process mixture of the
        components' family, summed over the partitions consistent with the dendrogram.
    depth_ : int
        The depth fitted (``depth``, or the one ``"auto"`` chose).
    depth_scores_ : structured ndarray of shape (n_depths,)
        With ``depth="auto"`` only: ``depth``, ``log_evidence``, ``best_rcdll`` and
        ``n_leaves`` of the fit at every depth compared.
    margins_ : ndarray of shape (n_samples,)
        Every training point's smallest lead of its own node over a sibling, over the levels:
        :math:`\min_{\ell, z\in\mathcal S(v_{n\ell})}(\eta_{v_{n\ell}} - \eta_z)^\top
        \tilde x_n` under the kept state (+inf where no level has siblings). The constraint
        holds where it is at least ``margin``; the slack is ``max(0, margin - margins_)``.
        With ``margin_weight=0`` the discriminants follow their prior and so do these.
    """

    _parameter_rules = {
        "depth": Either((Interval("int", 1), Options(("auto",)))),
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
        "max_samples": Interval("int", 0),
        "covariance_type": Options(COVARIANCE_TYPES),
        "moves": Options(("path", "all", "burn-in")),
        "point_estimate": Options((None, "vi", "binder")),
    }

    def __init__(self, depth=2, *, top_concentration=1.0, branch_concentration=0.01,
                 path_concentration=0.1, margin_weight=0.0, margin=1.0,
                 discriminant_variance=1.0, covariance_type="tied", observation_variance=None,
                 mean_prior_variance=None, n_iter=100, burn_in=None, n_chains=1, init="ward",
                 moves="path", max_samples=200, point_estimate=None, random_state=0,
                 verbose=0):
        self.depth = depth
        self.top_concentration = top_concentration
        self.branch_concentration = branch_concentration
        self.path_concentration = path_concentration
        self.margin_weight = margin_weight
        self.margin = margin
        self.discriminant_variance = discriminant_variance
        self.covariance_type = covariance_type
        self.observation_variance = observation_variance
        self.mean_prior_variance = mean_prior_variance
        self.n_iter = n_iter
        self.burn_in = burn_in
        self.n_chains = n_chains
        self.init = init
        self.max_samples = max_samples
        self.moves = moves
        self.point_estimate = point_estimate
        self.random_state = random_state
        self.verbose = verbose

    def _data(self, X):
        """The sampler's fixed settings and the Ward start (:mod:`mixbayes.tree._start`),
        which also gives the default observation variance."""
        validate_params(self, self._parameter_rules)
        if self.burn_in is not None and self.burn_in >= self.n_iter:
            raise ValueError(f"burn_in must be below n_iter={self.n_iter}; got {self.burn_in}.")
        if self.depth_ > X.shape[0]:  # X is checked by fit
            raise ValueError(f"depth must be at most the number of points ({X.shape[0]}); got "
                             f"{self.depth_}.")
        known = self.covariance_type == "known"
        if not known and self.observation_variance is not None:
            raise ValueError(
                f"observation_variance applies only to covariance_type='known' (the shared "
                f"sigma^2); got observation_variance={self.observation_variance!r} with "
                f"covariance_type={self.covariance_type!r}: leave it None (the covariances' "
                f"prior is scaled from the data) or use covariance_type='known'.")
        # the start's stream, drawn only where a start is built (a Generator passed as
        # random_state then gives the chains the streams it gave them before "tied" existed)
        start_rng = (check_random_state(self.random_state).spawn(1)[0]
                     if self.init == "ward" or self.observation_variance is None else None)
        self._whitening = None
        if self.covariance_type == "tied":
            # Sigma from the leaves of a Ward start on the points as they are, the chain's
            # start Ward's tree of the whitened points; the chain re-estimates Sigma from its
            # own leaves at every burn-in regroup (crabs, 3 seeds: dendrogram purity 0.421
            # against 0.381 starting from the first Ward start, 0.351 for "known")
            first = ward_start(X, self.depth_, start_rng)
            return self._shared_data(self._whiten(X, first.paths[:, -1]), start_rng)
        if not known:
            variances = column_variances(X)
            scale, s02 = self._scales(X)
            # the floor keeps the prior scale positive definite on collinear or constant columns
            floor = np.diag(1e-6 * np.where(variances > 0, variances, scale))
            covariance = np.atleast_2d(np.cov(X.T, bias=True)) * (variances > 0) + floor
            family = scaled_prior(self.covariance_type, X.mean(axis=0), covariance, s02)
            start = ward_start(X, self.depth_, start_rng, family=family)
            within = start.within_variance  # unused by the families' kernels, kept as before
            return self._tree_data(X, within if within > 0 else 0.1 * scale, s02, family), start
        return self._shared_data(X, start_rng)

    def _scales(self, X):
        """``(scale, s_0^2)``: the points' scale, and the means' prior variance (that scale
        unless ``mean_prior_variance`` is given)."""
        scale = data_scale(column_variances(X))
        return scale, scale if self.mean_prior_variance is None else float(self.mean_prior_variance)

    def _shared_data(self, X, start_rng):
        """The data of the known sigma^2 I (or of the tied model, ``X`` whitened) and the Ward
        start, or None where neither the start nor sigma^2 needs it."""
        scale, s02 = self._scales(X)
        start = None  # the Ward start, built only when the start or sigma^2 needs it
        if self.init == "ward" or self.observation_variance is None:
            start = ward_start(X, self.depth_, start_rng)
        if self.observation_variance is None:
            within = start.within_variance
            observation_variance = within if within > 0 else 0.1 * scale
        else:
            observation_variance = float(self.observation_variance)
        return self._tree_data(X, observation_variance, s02, None), start

    def _tree_data(self, X, observation_variance, s02, family):
        """:class:`~mixbayes.tree._state.TreeData` of the points ``X`` with these settings."""
        return _state.TreeData(
            X, self.depth_, float(self.top_concentration), float(self.branch_concentration),
            float(self.path_concentration),
            observation_variance,
            X.mean(axis=0),
            s02,
            float(self.margin_weight), float(self.margin), float(self.discriminant_variance),
            family)

    def _log_jacobian(self):
        """log |det A| of the tied model's whitening (0 for every other type)."""
        return 0.0 if self._whitening is None else self._whitening.log_det

    def _whiten(self, X, leaves):
        r"""The points ``X`` whitened by :math:`\Sigma`, their pooled within-leaf covariance
        under ``leaves`` (:func:`~mixbayes.families.gaussian.pooled_within_covariance`); the
        map is kept as ``self._whitening``."""
        self._whitening = Whitening.of_covariance(X.mean(axis=0),
                                                  pooled_within_covariance(X, leaves))
        return self._whitening.apply(X)

    def fit(self, X, y=None):
        """Run the chains and keep the state with the highest RCDLL after burn-in (with
        ``depth="auto"``: at every depth of ``AUTO_DEPTHS``, keeping the fit whose full
        dendrogram has the highest evidence, :attr:`log_evidence_`).

        The sampler has no parallel kernels, and BLAS runs on one thread inside a fit (the
        package's policy, :func:`mixbayes._kernel_tools.threads`): the fit is serial, so the
        model has no ``n_jobs``."""
        validate_params(self, self._parameter_rules)
        _engines.runs_here("HierarchicalMixture")
        # the points as every step reads them (a 1-D array is one feature): the burn-in
        # regroups whiten fit's own X again; dask data are gathered here, and said
        if is_distributed_input(X):
            X = gathered(X, "X")
        X = check_points(X, "X", min_samples=2)
        with threads(1):
            return self._fit(X)

    def _burn_in(self):
        """The sweeps left out of every chain: ``burn_in``, or half of ``n_iter`` when None."""
        return self.n_iter // 2 if self.burn_in is None else int(self.burn_in)

    def _fit(self, X):
        if self.depth == "auto":
            return self._fit_auto(X)
        self.depth_ = int(self.depth)
        data, start = self._data(X)
        burn_in = self._burn_in()
        trace = np.zeros((self.n_chains, self.n_iter), dtype=self._trace_dtype())
        best, best_value = None, -np.inf
        streams = check_random_state(self.random_state).spawn(self.n_chains + 1)[1:]
        moves = _sampler.MOVES if self.moves == "all" else _sampler.PLAIN
        burn_moves = _sampler.MOVES if self.moves in ("all", "burn-in") else _sampler.PLAIN
        start = (None, None) if self.init == "single" else (start.paths, start.paths[:, -1])
        # at most max_samples over the chains: a share of them from every chain
        keep = kept_sweeps(burn_in, self.n_iter, self.max_samples // self.n_chains)
        samples = []
        regroup_at = set()  # sweeps after which the leaves are regrouped (init docstring)
        if (self.init == "ward" and self.moves == "path" and self.depth_ > 1
                and self.margin_weight == 0):
            regroup_at = {int(f * burn_in) for f in REGROUP_AT} - {burn_in}
        if self.moves == "burn-in" and self.depth_ > 1 and self.margin_weight == 0 and burn_in:
            # and once more after the last burn-in sweep: the kept sweeps' per-point moves
            # start from the restructured leaves grouped by Ward's merges (moves docstring)
            regroup_at = {int(f * burn_in) for f in REGROUP_AT} | {burn_in - 1}
        first_data, first_whitening = data, self._whitening
        best_data, best_whitening = data, self._whitening
        for chain, stream in enumerate(streams):
            rng, reg_rng = stream.spawn(2)
            data, self._whitening = first_data, first_whitening
            state = _sampler.initial_state(data, rng, reg_rng, *start)
            with progress(self.n_iter, self.verbose, f"tree chain {chain + 1}") as bar:
                for sweep in range(self.n_iter):
                    stats = dict.fromkeys(_sampler.RESTRUCTURING, np.nan)
                    rate = _sampler.sweep(data, state, rng, reg_rng,
                                          moves=burn_moves if sweep < burn_in else moves,
                                          stats=stats)
                    if sweep in regroup_at:  # burn-in only: a new start, kept leaves
                        if self._whitening is not None:  # and a tied Sigma from them
                            # (sigma^2, in units of Sigma, kept: the start's ratio of a
                            # cluster's spread to the leaves' pooled one; bench/bench_tree.py,
                            # 3 seeds: 10-11 of 15 sets within 0.01 of the best peer, 8-10
                            # re-estimating it from the leaves too)
                            # (from the components where the restructuring moves ran:
                            # pooled over leaves of several components, Sigma took in the
                            # spread between them and the components merged, 24 -> 18 on a
                            # depth-3 hierarchy of 27 from one path; "path" keeps the
                            # leaves' pooled Sigma it was benchmarked with, 11 of 15 sets
                            # against 11 with fewer per seed from the components)
                            points = self._whiten(X, state.comp if self.moves == "burn-in"
                                                  else state.paths[:, -1])
                            data = self._tree_data(points, data.observation_variance,
                                                   self._scales(points)[1], None)
                        state = _sampler.initial_state(
                            data, rng, reg_rng,
                            regroup(data.points, state.paths[:, -1], self.depth_,
                                    cut="gaps" if self.moves == "burn-in" else "branching"),
                            state.comp)
                    # a tied fit's RCDLL in the units of the points (its whitening's Jacobian),
                    # comparable between chains whose Sigma differ
                    value = _state.rcdll(data, state) + data.n_points * self._log_jacobian()
                    trace[chain, sweep] = (value, state.K, rate, state.nodes_per_level(),
                                           *(stats[m] for m in _sampler.RESTRUCTURING))
                    if sweep >= burn_in and value > best_value:
                        best, best_value = state.copy(), value
                        best_data, best_whitening = data, self._whitening
                    if sweep in keep:
                        samples.append(state.paths.T.astype(np.int32))
                    bar.update()
        self._whitening = best_whitening
        self._store(best_data, best, best_value, trace, burn_in)
        self.level_samples_ = (np.array(samples, dtype=np.int32) if samples else
                               np.zeros((0, self.depth_, data.n_points), dtype=np.int32))
        if self.point_estimate is not None:
            from ..partition import point_labels

            self.point_labels_ = point_labels(self.level_samples_[:, -1], self.point_estimate,
                                              "max_samples, n_iter or burn_in")
        return self

    def partition_summary(self, level=None, loss="vi", credible_level=0.95, random_state=0):
        """The posterior of the partition at ``level`` (1..depth; default the leaves) over the
        kept sweeps (``level_samples_``; :func:`mixbayes.partition.summarise`): the partition
        of least expected ``loss``, its credible ball at ``credible_level`` and the posterior
        of the number of clusters."""
        from .. import partition

        check_is_fitted(self, "labels_")
        level = self.depth_ if level is None else level
        rule = Interval("int", 1, self.depth_)
        if not rule.accepts(level):
            raise ValueError(f"level must be {rule.describe()}; got {level!r}.")
        if self.level_samples_.shape[0] < 2:
            raise ValueError("fewer than 2 sweeps were kept (max_samples, n_iter or burn_in "
                             "too small): nothing to summarise.")
        return partition.summarise(self.level_samples_[:, level - 1], loss=loss,
                                   level=credible_level, random_state=random_state)

    def _fit_auto(self, X):
        """``depth="auto"``: a fit at every depth of ``AUTO_DEPTHS`` (up to the number of
        points), the one of highest :attr:`log_evidence_` kept; :attr:`depth_scores_` holds
        every depth's evidence, RCDLL and leaves (``X`` checked by fit)."""
        depths = [L for L in AUTO_DEPTHS if L <= X.shape[0]]
        fits = [clone(self).set_params(depth=L).fit(X) for L in depths]
        best = max(fits, key=lambda model: model.log_evidence_)
        for name, value in vars(best).items():
            if name.endswith("_") and not name.startswith("_"):
                setattr(self, name, value)
        self.depth_scores_ = np.array(
            [(m.depth_, m.log_evidence_, m.best_rcdll_, np.unique(m.labels_).size)
             for m in fits], dtype=[("depth", np.int64), ("log_evidence", float),
                                    ("best_rcdll", float), ("n_leaves", np.int64)])
        return self

    _report_kind = ("tree", "tree")  # its page and view (mixbayes.report)

    def _kept_partitions(self):
        """The leaves over the kept sweeps."""
        levels = getattr(self, "level_samples_", None)
        return None if levels is None else levels[:, -1]

    def _persist_schema(self, scalars):
        """The fitted attributes :mod:`mixbayes.persist` stores: nodes of the simplified tree
        (N) and of the raw kept state predict uses (M)."""
        arrays = {"labels_": (("n",), "node"), "paths_": (("n", "L"), "node"),
                  "means_": (("K", "p"), "f"), "node_parent_": (("N",), "parent"),
                  "node_level_": (("N",), "int"), "node_size_": (("N",), "int"),
                  "node_weights_": (("N", "K"), ">=0"), "trace_": (("*", "*"), "tree_trace"),
                  "state_parent_": (("M",), "state"), "state_count_": (("M",), "int"),
                  "state_level_": (("M",), "int"), "state_log_weights_": (("M", "K+1"), "real"),
                  "state_discriminants_": (("M", "*"), "f"), "state_to_node_": (("M",), "parent"),
                  "prior_mean_": (("p",), "f"), "margins_": (("n",), "margin"),
                  "linkage_": (("*", 4), "linkage"),
                  "depth_scores_": (("*",), "depth_scores", "optional"),
                  "level_samples_": (("*", "L", "n"), "int", "optional"),
                  "point_labels_": (("n",), "int", "optional")}
        kind = self.covariance_type
        matrices = kind in ("full", "tied")
        shape = ("K", "p", "p") if matrices else {"diag": ("K", "p")}.get(kind, ("K",))
        rule = "f" if matrices else "+"
        # optional for "known": files saved before the tree had covariances lack them
        extra = ("optional",) if kind == "known" else ()
        arrays.update(precisions_=(shape, rule) + extra, covariances_=(shape, rule) + extra)
        if kind == "tied":
            arrays.update(whitening_=(("p", "p"), "f"), whitening_centre_=(("p",), "f"))
        elif kind != "known":
            arrays["covariance_prior_"] = (shape[1:], "f")
        saved = {"n_components_": "count", "n_features_in_": "count", "best_rcdll_": "real",
                 "depth_": "count", "log_evidence_": "real",
                 "observation_variance_": "+", "mean_prior_variance_": "+",
                 "rhat_": "figures", "ess_": "figures"}
        if kind not in SHARED:
            saved.update(mean_precision_prior_="+", degrees_of_freedom_prior_="+")

        def sizes(scalars, arrays):
            return {"L": scalars["depth_"], "N": arrays["node_parent_"].shape[0],
                    "M": arrays["state_parent_"].shape[0],
                    "K+1": scalars.get("n_components_") + 1}

        def trace_dtype():  # a tree of the stored depth's
            probe = type(self)()
            probe.depth_ = scalars["depth_"]
            return probe._trace_dtype()

        depth_scores = np.dtype([("depth", np.int64), ("log_evidence", float),
                                 ("best_rcdll", float), ("n_leaves", np.int64)])
        return Schema(arrays, saved, sizes=sizes,
                      dtypes=dict(tree_trace=trace_dtype, depth_scores=lambda: depth_scores),
                      positive_definite=(("precisions_", "covariance_prior_") if kind == "full"
                                         else ("precisions_",) if kind == "tied" else ()),
                      probe=self._probe)

    def _probe(self):
        """Predict the first component's mean: a node of the tree, or the file is refused."""
        leaf = self.predict(self.means_[:1])
        if not (leaf.shape == (1,) and 0 <= leaf[0] < self.node_parent_.size):
            raise ValueError(f"it predicts node {leaf} outside the tree")

    def _trace_dtype(self):
        """The fields of :attr:`trace_` (``nodes`` holds one count per level)."""
        return np.dtype([("rcdll", float), ("n_components", np.int64), ("acceptance", float),
                         ("nodes", np.int64, (self.depth_,))]
                        + [(move, float) for move in _sampler.RESTRUCTURING])

    def _store(self, data, state, value, trace, burn_in):
        K = state.K
        parent, level, size, weights, paths = simplify(
            state.parent, state.level, state.count, state.alive, state.paths, state.logw, K)
        self.node_parent_, self.node_level_, self.node_size_ = parent, level, size
        self.node_weights_ = weights
        self.means_ = state.means[:K].copy()
        whitening = self._whitening
        if whitening is not None:  # tied: sigma^2 Sigma, the means in the points' units
            self.means_ = whitening.restore(self.means_)
            covariance = data.observation_variance * whitening.covariance
            self.covariances_ = np.repeat(covariance[None], K, axis=0)
            self.precisions_ = np.repeat(np.linalg.inv(covariance)[None], K, axis=0)
            self.whitening_ = whitening.transform.copy()
            self.whitening_centre_ = whitening.centre.copy()
        elif data.family is None:
            self.precisions_ = np.full(K, 1.0 / data.observation_variance)
            self.covariances_ = np.full(K, float(data.observation_variance))
        else:
            self.precisions_ = state.precisions(0, K).copy()
            self.covariances_ = (np.linalg.inv(self.precisions_) if self.precisions_.ndim == 3
                                 else 1.0 / self.precisions_)
            self.mean_precision_prior_ = float(data.family.mean_precision_prior)
            self.degrees_of_freedom_prior_ = float(data.family.degrees_of_freedom_prior)
            self.covariance_prior_ = data.family.covariance_prior.copy()
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
        self.linkage_ = self._linkage(data, state)

    def _linkage(self, data, state):
        """The full dendrogram of :mod:`mixbayes.tree._linkage` (BHC merges with the
        components' marginal likelihood, inside every node of the kept tree)."""
        if data.family is None:
            log_marginal = KnownVarianceMarginal(data.observation_variance,
                                                 data.mean_prior_variance)
        else:  # the components' own conjugate marginal (statistics centred at m_0 alike)
            log_marginal = data.family.log_marginal_likelihood
        Z, log_evidence = tree_linkage(
            data.points - data.grouped.prior_mean, self.labels_, state.comp, self.node_parent_,
            self.node_level_, log_marginal, float(self.top_concentration),
            full=data.covariance_type == "full")
        # tied: the whitened points' evidence times the Jacobian, a density of the points
        self.log_evidence_ = log_evidence + data.n_points * self._log_jacobian()
        return Z

    @property
    def tree_(self):
        check_is_fitted(self, "labels_")
        covariances = getattr(self, "covariances_", None)  # absent from files saved before it
        return Tree(self.node_parent_, self.node_level_, self.node_size_, self.node_weights_,
                    self.means_, covariances)

    def covariance_matrix(self, k):
        """Component ``k``'s covariance as a (d, d) matrix, whatever ``covariance_type`` (as
        :meth:`VariationalGaussianMixture.covariance_matrix`)."""
        check_is_fitted(self, "labels_")
        covariances = getattr(self, "covariances_", None)  # absent from files saved before it
        if covariances is None:
            return self.observation_variance_ * np.eye(self.n_features_in_)
        if covariances.ndim == 3:
            return covariances[k]
        if covariances.ndim == 2:
            return np.diag(covariances[k])
        return covariances[k] * np.eye(self.n_features_in_)

    def cut(self, level):
        """Flat labels at ``level`` (1..depth), numbered 0.. in order of first appearance."""
        check_is_fitted(self, "labels_")
        rule = Interval("int", 1, self.depth_)
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
        family = None
        means = self.means_
        if self.covariance_type == "tied":  # the sampler's units: the whitened points
            X, means = ((Z - self.whitening_centre_) @ self.whitening_ for Z in (X, means))
        elif self.covariance_type != "known":
            family = GaussianFamily(self.covariance_type, self.prior_mean_,
                                    self.mean_precision_prior_, self.degrees_of_freedom_prior_,
                                    self.covariance_prior_)
        data = _state.TreeData(X, self.depth_, 1.0, 1.0, 1.0, self.observation_variance_,
                                 self.prior_mean_, self.mean_prior_variance_, family=family)
        precisions = None if family is None else self.precisions_
        loglik = np.hstack([_state.component_loglik(data, means, precisions),
                            data.log_predictive[:, None]])
        parent, count, level = self.state_parent_, self.state_count_, self.state_level_
        leaves = np.flatnonzero(level == self.depth_)
        alpha = float(self.path_concentration)
        leaf_paths = np.zeros((leaves.size, self.depth_), dtype=np.int64)
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
                paths = np.broadcast_to(leaf_paths[i], (X.shape[0], self.depth_))
                scores[:, i] -= 2.0 * self.margin_weight * reg.slack(
                    extended, paths, children, self.state_discriminants_, float(self.margin))
        return self.state_to_node_[leaves[scores.argmax(axis=1)]]

    def to_newick(self, full=False):
        """Newick string of the sampled tree (:attr:`tree_`, nodes ``n<id>``), or with
        ``full=True`` of the binary dendrogram :attr:`linkage_` (points ``p<i>``, branch
        lengths the heights they span)."""
        if full:
            check_is_fitted(self, "linkage_")
            return linkage_to_newick(self.linkage_)
        return self.tree_.to_newick()

    def to_json(self, **kwargs):
        return self.tree_.to_json(**kwargs)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags
