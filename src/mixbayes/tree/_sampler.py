r"""The MCMC sampler of BHMC with max-margin posterior regularisation (Huang et al. 2021, Algorithm 2).

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
   :math:`\mathrm{Beta}(\gamma\beta^*_p w_p, \gamma\beta^*_p(1 - w_p))` elsewhere (Huang et al.'s
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
N = 10,000, d = 10, C = 0); :func:`mixbayes.tree._steps.path_step_reference` is the same maths in plain Python, and
the enumeration test runs both.

5. **Discriminants** (:math:`C > 0`) node by node (:mod:`mixbayes.tree._regularisation`), from a
   random stream of their own, so that :math:`C = 0` leaves the BHMC chain untouched.

Steps 1-4 keep the start's numbers of leaves and components; the moves that restructure the
tree (split-merge of leaves and of components, regraft of subtrees;
:mod:`mixbayes.tree._moves`) run after step 4 when :func:`sweep` is asked for them.
"""

from __future__ import annotations

import numpy as np

from . import _moves
from ._state import TreeState, state_loglik
from ._steps import discriminant_step, mean_step, path_step, path_step_reference, weight_step


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
