r"""The tree sampler's data and state: the fixed settings and points (:class:`TreeData`), the
chain's state (:class:`TreeState`), and the densities its steps and the fit read (the
likelihood table, the nested CRP's law, the RCDLL). The model is in :mod:`mixbayes.tree._sampler`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from ..families.gaussian import GaussianFamily
from ..families.atoms import GAUSSIAN, GroupedData, lookup
from . import _kernels
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

    :math:`p(\mathbf V)` the nested CRP (the choice of terms is ours: Huang et al.'s formula is
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
