"""Simulators that draw data from each model's own generative process, with the truth."""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._validation import Interval, Options, check_random_state, validate_params
from ..corpus import Corpus
from ..partition import majority_labels


@dataclass
class DMMTruth:
    """Parameters that generated a :func:`make_dmm_corpus` corpus."""

    weights: np.ndarray  # (K,) cluster weights lambda
    components: np.ndarray  # (K, p) word distributions beta_k
    labels: np.ndarray  # (n,) cluster of every document


@dataclass
class _DMMSettings:
    n_documents: int
    n_terms: int
    n_components: int
    mean_length: float
    weight_concentration: float
    word_concentration: float


_DOCUMENT_BLOCK = 4096  # documents drawn densely at a time


def make_dmm_corpus(n_documents=300, n_terms=200, n_components=3, mean_length=50.0,
                    weight_concentration=10.0, word_concentration=0.1, random_state=0):
    r"""Simulate a corpus from the Dirichlet–multinomial mixture of unigrams.

    .. math::

        \lambda \sim \mathrm{Dir}(a\mathbf 1_K),\ \beta_k \sim \mathrm{Dir}(\theta\mathbf 1_p),\
        z_i \sim \mathrm{Cat}(\lambda),\ m_i \sim 1 + \mathrm{Poisson}(\bar m - 1),\
        y_i \sim \mathrm{Mult}(m_i, \beta_{z_i}).

    Small ``word_concentration`` gives sparse, well-separated clusters.

    Returns
    -------
    corpus : Corpus
        Counts with the true clusters as ``labels``.
    truth : DMMTruth
    """
    settings = _DMMSettings(n_documents, n_terms, n_components, mean_length,
                            weight_concentration, word_concentration)
    validate_params(settings, {
        "n_documents": Interval("int", 1), "n_terms": Interval("int", 1),
        "n_components": Interval("int", 1), "mean_length": Interval("real", 1),
        "weight_concentration": Interval("real", 0, None, "neither"),
        "word_concentration": Interval("real", 0, None, "neither"),
    })
    rng = check_random_state(random_state)
    weights = rng.dirichlet(np.full(n_components, float(weight_concentration)))
    components = rng.dirichlet(np.full(n_terms, float(word_concentration)), size=n_components)
    labels = rng.choice(n_components, size=n_documents, p=weights)
    lengths = 1 + rng.poisson(mean_length - 1, size=n_documents)
    # drawn document by document and kept sparse a block at a time: a dense n x p array
    # would need 32 GB for a million documents over 2,000 terms
    blocks = []
    for lo in range(0, n_documents, _DOCUMENT_BLOCK):
        hi = min(lo + _DOCUMENT_BLOCK, n_documents)
        blocks.append(sp.csr_matrix(np.vstack([
            rng.multinomial(m, components[k]) for m, k in zip(lengths[lo:hi], labels[lo:hi])])))
    counts = sp.vstack(blocks, format="csr")
    vocabulary = [f"w{j}" for j in range(n_terms)]
    corpus = Corpus(counts, vocabulary, labels=labels)
    return corpus, DMMTruth(weights, components, labels)


@dataclass
class GaussianMixtureTruth:
    """Parameters that generated a :func:`make_gaussian_mixture` sample."""

    weights: np.ndarray  # (K,)
    means: np.ndarray  # (K, d)
    covariances: np.ndarray  # (K, d, d)
    labels: np.ndarray  # (n,)


@dataclass
class _GaussianSettings:
    n_samples: int
    n_features: int
    n_components: int
    separation: float
    weight_concentration: float


def make_gaussian_mixture(n_samples=500, n_features=2, n_components=3, separation=4.0,
                          weight_concentration=10.0, random_state=0):
    r"""Simulate points from a Gaussian mixture drawn from a conjugate-style prior.

    .. math::

        \lambda \sim \mathrm{Dir}(a\mathbf 1_K),\ \Sigma_k \sim \mathcal W^{-1}(I, d + 2),\
        \mu_k \sim \mathcal N(0, s^2 I),\ z_i \sim \mathrm{Cat}(\lambda),\
        x_i \sim \mathcal N(\mu_{z_i}, \Sigma_{z_i}),

    with :math:`s` = ``separation`` (larger is easier).

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    truth : GaussianMixtureTruth
    """
    from scipy import stats

    settings = _GaussianSettings(n_samples, n_features, n_components, separation,
                                 weight_concentration)
    validate_params(settings, {
        "n_samples": Interval("int", 1), "n_features": Interval("int", 1),
        "n_components": Interval("int", 1), "separation": Interval("real", 0),
        "weight_concentration": Interval("real", 0, None, "neither"),
    })
    rng = check_random_state(random_state)
    d = n_features
    weights = rng.dirichlet(np.full(n_components, float(weight_concentration)))
    covariances = stats.invwishart(df=d + 2, scale=np.eye(d)).rvs(
        size=n_components, random_state=rng).reshape(n_components, d, d)
    means = rng.normal(0.0, separation, size=(n_components, d))
    labels = rng.choice(n_components, size=n_samples, p=weights)
    chol = np.linalg.cholesky(covariances)
    X = means[labels] + np.einsum("nij,nj->ni", chol[labels], rng.standard_normal((n_samples, d)))
    return X, GaussianMixtureTruth(weights, means, covariances, labels)


@dataclass
class TopicTruth:
    """Parameters that generated a :func:`make_topic_corpus` corpus."""

    topics: np.ndarray  # (K, p) theta_k
    weights: np.ndarray  # (n, K) omega_i


@dataclass
class _TopicSettings:
    n_documents: int
    n_terms: int
    n_components: int
    mean_length: float
    topic_concentration: float | None
    weight_concentration: float | None


def make_topic_corpus(n_documents=500, n_terms=1000, n_components=10, mean_length=200.0,
                      topic_concentration=None, weight_concentration=None, random_state=0):
    r"""Simulate a corpus from the topic model of Taddy (2012, §5.1).

    .. math::

        \theta_k \sim \mathrm{Dir}(a_\theta), \quad \omega_i \sim \mathrm{Dir}(a_\omega), \quad
        m_i \sim \mathrm{Poisson}(M), \quad x_i \sim \mathrm{Mult}(m_i, \Theta^\top\omega_i),

    with Taddy's defaults :math:`a_\theta = a_\omega = 1/K`. Documents may be empty
    (:math:`m_i = 0`) when ``mean_length`` is small, as under the model.

    Returns
    -------
    corpus : Corpus
        Counts (terms named ``w0``, ``w1``, ...), labels = each document's largest weight.
    truth : TopicTruth
    """
    settings = _TopicSettings(n_documents, n_terms, n_components, mean_length,
                              topic_concentration, weight_concentration)
    validate_params(settings, {
        "n_documents": Interval("int", 1), "n_terms": Interval("int", 2),
        "n_components": Interval("int", 1), "mean_length": Interval("real", 0, None, "neither"),
        "topic_concentration": Interval("real", 0, None, "neither", allow_none=True),
        "weight_concentration": Interval("real", 0, None, "neither", allow_none=True),
    })
    rng = check_random_state(random_state)
    a_theta = 1.0 / n_components if topic_concentration is None else topic_concentration
    a_omega = 1.0 / n_components if weight_concentration is None else weight_concentration
    topics = rng.dirichlet(np.full(n_terms, float(a_theta)), size=n_components)
    weights = rng.dirichlet(np.full(n_components, float(a_omega)), size=n_documents)
    lengths = rng.poisson(mean_length, size=n_documents)
    # row by row, kept sparse: the dense n x p matrix of a large corpus would not fit
    rows, columns, values = [], [], []
    for i, m in enumerate(lengths):
        q = weights[i] @ topics
        x = rng.multinomial(m, q / q.sum())
        (nonzero,) = np.nonzero(x)
        rows.append(np.full(nonzero.size, i))
        columns.append(nonzero)
        values.append(x[nonzero])
    counts = sp.csr_matrix(
        (np.concatenate(values), (np.concatenate(rows), np.concatenate(columns))),
        shape=(n_documents, n_terms), dtype=np.int64,
    )
    vocabulary = [f"w{j}" for j in range(n_terms)]
    corpus = Corpus(counts, vocabulary, labels=weights.argmax(axis=1))
    return corpus, TopicTruth(topics, weights)


@dataclass
class HDPTruth:
    """What generated a :func:`make_hdp_data` sample.

    ``labels`` are the dishes of the observations in the order :class:`~mixbayes.HDPMixture`
    uses (tokens: document by document, then by term), ``tables`` their tables within groups.
    """

    labels: np.ndarray
    tables: np.ndarray
    groups: np.ndarray
    group_labels: np.ndarray  # majority dish of every group
    atoms: np.ndarray  # (n_dishes, W) word distributions or (n_dishes, d) means
    n_dishes: int


@dataclass
class _HDPSettings:
    n_groups: int
    group_size: int
    top_concentration: float
    group_concentration: float
    n_words: int
    word_prior: float | None
    n_features: int
    prior_precision: float
    observation_precision: float


def _franchise(J, n, gamma0, alpha0, rng):
    """Dishes and tables of ``n`` customers in each of ``J`` restaurants, seated one after
    another by the Chinese restaurant franchise (no truncation)."""
    dishes, tables = np.empty(J * n, dtype=np.int64), np.empty(J * n, dtype=np.int64)
    tables_per_dish = []
    for j in range(J):
        sizes, table_dish = [], []
        for i in range(n):
            t = rng.choice(len(sizes) + 1, p=np.append(sizes, alpha0) / (i + alpha0))
            if t == len(sizes):
                weights = np.append(tables_per_dish, gamma0)
                k = rng.choice(weights.size, p=weights / weights.sum())
                if k == len(tables_per_dish):
                    tables_per_dish.append(0)
                tables_per_dish[k] += 1
                sizes.append(0)
                table_dish.append(k)
            sizes[t] += 1
            dishes[j * n + i], tables[j * n + i] = table_dish[t], t
    return dishes, tables, len(tables_per_dish)


def make_hdp_data(n_groups=20, group_size=100, kernel="categorical", *, top_concentration=3.0,
                  group_concentration=1.0, n_words=20, word_prior=None, n_features=2,
                  prior_precision=0.1, observation_precision=1.0, random_state=0):
    r"""Simulate grouped data from the HDP mixture (the simulation of Amini et al. 2019 by default).

    Customers are seated by the Chinese restaurant franchise (:math:`\gamma_0`, :math:`\alpha_0`),
    which is the HDP with its weights integrated out; every dish gets an atom
    :math:`\phi_k \sim \mathrm{Dir}(\alpha_w)` (categorical, default :math:`\alpha_w = 1/W`) or
    :math:`N(0, I/\tau_\phi)` (Gaussian), and every observation is drawn from its dish's kernel.
    The document's settings: :math:`\gamma_0 = 3`, :math:`\alpha_0 = 1`, J = W.

    Returns
    -------
    Categorical: ``(corpus, truth)``, a :class:`~mixbayes.Corpus` of J documents (labels: each
    document's majority dish) and :class:`HDPTruth`. Gaussian: ``(points, groups, truth)``.
    """
    settings = _HDPSettings(n_groups, group_size, top_concentration, group_concentration,
                            n_words, word_prior, n_features, prior_precision,
                            observation_precision)
    validate_params(settings, {
        "n_groups": Interval("int", 1), "group_size": Interval("int", 1),
        "top_concentration": Interval("real", 0, None, "neither"),
        "group_concentration": Interval("real", 0, None, "neither"),
        "n_words": Interval("int", 1),
        "word_prior": Interval("real", 0, None, "neither", allow_none=True),
        "n_features": Interval("int", 1),
        "prior_precision": Interval("real", 0, None, "neither"),
        "observation_precision": Interval("real", 0, None, "neither"),
    })
    if kernel not in ("categorical", "gaussian"):
        raise ValueError(f"kernel must be 'categorical' or 'gaussian'; got {kernel!r}.")
    rng = check_random_state(random_state)
    J, n = n_groups, group_size
    dishes, tables, K = _franchise(J, n, float(top_concentration), float(group_concentration),
                                   rng)
    groups = np.repeat(np.arange(J), n)
    if kernel == "categorical":
        W = n_words
        a = 1.0 / W if word_prior is None else float(word_prior)
        atoms = rng.dirichlet(np.full(W, a), size=K)
        # Dirichlet draws with tiny a can underflow to all-zero rows in numpy: renormalise safely
        atoms = np.where(atoms.sum(axis=1, keepdims=True) > 0, atoms, 1.0 / W)
        words = np.array([rng.choice(W, p=atoms[k] / atoms[k].sum()) for k in dishes])
        # tokens in HDPMixture's order: document by document, then by term
        order = np.lexsort((words, groups))
        dishes, tables, words = dishes[order], tables[order], words[order]
        counts = sp.csr_matrix((np.ones(J * n, dtype=np.int64), (groups, words)), shape=(J, W))
        counts.sum_duplicates()
        truth = HDPTruth(dishes, tables, groups, majority_labels(dishes, groups, J), atoms, K)
        corpus = Corpus(counts, [f"w{w}" for w in range(W)], labels=truth.group_labels)
        return corpus, truth
    atoms = rng.standard_normal((K, n_features)) / np.sqrt(prior_precision)
    points = atoms[dishes] + rng.standard_normal((J * n, n_features)) / np.sqrt(
        observation_precision)
    truth = HDPTruth(dishes, tables, groups, majority_labels(dishes, groups, J), atoms, K)
    return points, groups, truth


@dataclass
class TreeTruth:
    """What generated a :func:`make_tree_data` sample.

    ``paths[n, l]`` is the node of point n at level l + 1, numbered 0.. within each level
    (so ``paths[:, l]`` are the true flat labels at that level); ``labels`` are the leaves
    (``paths[:, -1]``) and ``components`` the Gaussian component of every point.
    """

    paths: np.ndarray  # (n, depth)
    labels: np.ndarray  # (n,)
    components: np.ndarray  # (n,)
    means: np.ndarray  # (n_components, d)
    covariances: np.ndarray | None = None  # (n_components, d, d)


@dataclass
class _TreeSettings:
    n_samples: int
    depth: int
    n_features: int
    top_concentration: float
    branch_concentration: float
    path_concentration: float
    observation_variance: float
    mean_prior_variance: float
    leaf_spread: float
    parent_spread: float
    min_parent_distance: float
    covariance_type: str


def _ncrp_paths(n, depth, alpha, rng):
    """Paths of ``n`` points drawn one after another by the nested CRP, as node keys per level
    (tuples of child indices from the root)."""
    children = {(): []}  # node key -> sizes of its children
    paths = []
    for _ in range(n):
        key, path = (), []
        for _ in range(depth):
            sizes = children[key]
            weights = np.append(sizes, alpha)
            child = rng.choice(weights.size, p=weights / weights.sum())
            if child == len(sizes):
                sizes.append(0)
                children[key + (child,)] = []
            sizes[child] += 1
            key = key + (child,)
            path.append(key)
        paths.append(path)
    return paths


def _nested_centres(n_samples, depth, d, branching, leaf_spread, parent_spread,
                    min_parent_distance, rng):
    """Leaf centres of ``make_tree_data(kind="nested")`` and each leaf's node at every level
    (ids unique per level), shape (n_leaves, depth)."""
    if depth < 2:
        raise ValueError(f"depth must be at least 2 for kind='nested'; got {depth!r}.")
    branching = tuple(int(b) for b in np.ravel(branching))
    n_parents = branching[0] if branching else 0
    if depth == 2 and len(branching) == n_parents + 1 and n_parents != 1:
        per_parent = [np.asarray(branching[1:], dtype=np.int64)]
    elif len(branching) == depth:
        per_parent = [np.full(branching[0], branching[1], dtype=np.int64)] + list(branching[2:])
    else:
        per_parent = None
    if (per_parent is None or n_parents < 1 or np.any(per_parent[0] < 1)
            or any(b < 1 for b in per_parent[1:])):
        raise ValueError("branching must be one number of children per level (depth numbers), or "
                         "for depth 2 (n_parents, leaves of parent 1, ..., leaves of parent n); "
                         f"got {branching!r}.")
    for _ in range(1000):
        centres = parent_spread * rng.standard_normal((n_parents, d))
        gaps = np.linalg.norm(centres[:, None] - centres[None], axis=2)
        if n_parents < 2 or gaps[np.triu_indices(n_parents, 1)].min() >= min_parent_distance:
            break
    else:
        raise ValueError(f"min_parent_distance={min_parent_distance} is out of reach for "
                         f"{n_parents} centres drawn at parent_spread={parent_spread}.")
    radii = [leaf_spread * (parent_spread / leaf_spread) ** ((depth - lev) / (depth - 1))
             if leaf_spread > 0 else 0.0 for lev in range(2, depth + 1)]
    paths = [[p] for p in range(n_parents)]
    counter = [n_parents] + [0] * (depth - 1)
    for lev in range(2, depth + 1):
        new_centres, new_paths = [], []
        for i, (centre, path) in enumerate(zip(centres, paths)):
            b = int(per_parent[0][i]) if lev == 2 else int(per_parent[lev - 2])
            angles = 2 * np.pi * (np.arange(b) / b + rng.random())
            offsets = np.zeros((b, d))
            offsets[:, 0] = np.cos(angles)
            if d > 1:
                offsets[:, 1] = np.sin(angles)
            new_centres.append(centre + radii[lev - 2] * offsets)
            for _ in range(b):
                new_paths.append(path + [counter[lev - 1]])
                counter[lev - 1] += 1
        centres, paths = np.vstack(new_centres), new_paths
    return centres, np.asarray(paths, dtype=np.int64)


def _level_labels(paths, depth):
    out = np.empty((len(paths), depth), dtype=np.int64)
    for level in range(depth):
        names = {}
        for n, path in enumerate(paths):
            out[n, level] = names.setdefault(path[level], len(names))
    return out


def _franchise_components(paths, gamma0, gamma, rng):
    r"""Components of points at the leaves of ``paths`` drawn by the multilevel Chinese
    restaurant franchise: the node weights integrated out, a customer of node :math:`z` sits at
    a table :math:`\propto` its size or opens one :math:`\propto \gamma`, whose component is
    a draw from the parent node; at the root a component is picked :math:`\propto` the number
    of its root customers or a new one :math:`\propto \gamma_0`."""
    tables = {}  # node key -> list of [size, component]
    root_counts = []

    def draw(key):
        if key == ():
            weights = np.append(root_counts, gamma0)
            k = rng.choice(weights.size, p=weights / weights.sum())
            if k == len(root_counts):
                root_counts.append(0)
            root_counts[k] += 1
            return k
        seats = tables.setdefault(key, [])
        weights = np.append([s for s, _ in seats], gamma)
        t = rng.choice(weights.size, p=weights / weights.sum())
        if t == len(seats):
            seats.append([0, draw(key[:-1])])
        seats[t][0] += 1
        return seats[t][1]

    return np.array([draw(path[-1]) for path in paths], dtype=np.int64)


def make_tree_data(n_samples=200, depth=2, kind="nested", *, n_features=2, branching=(3, 3),
                   top_concentration=1.0, branch_concentration=1.0, path_concentration=1.0,
                   observation_variance=1.0, mean_prior_variance=25.0, leaf_spread=4.0,
                   parent_spread=15.0, min_parent_distance=0.0, covariance_type="known",
                   random_state=0):
    r"""Simulate points with a known hierarchy.

    ``kind="model"``: the generative process of BHMC (Huang et al. 2021) with the node weights
    integrated out: paths by the nested CRP (:math:`\alpha` = ``path_concentration``),
    components by the multilevel Chinese restaurant franchise (:math:`\gamma_0`, :math:`\gamma`),
    :math:`\mu_k \sim N(0, s_0^2 I)` (:math:`s_0^2` = ``mean_prior_variance``) and
    :math:`x_n \sim N(\mu_{c_n}, \sigma^2 I)` (:math:`\sigma^2` = ``observation_variance``).

    ``kind="nested"``: a nested Gaussian hierarchy like Figure 2 of Huang et al. (2021):
    ``branching[0]`` top-level nodes with centres :math:`N(0, \text{parent\_spread}^2 I)`
    (redrawn until every two are at least ``min_parent_distance`` apart), each with
    ``branching[1]`` children, and so on down to the leaves (depth 2 only: a sequence
    ``branching[1:]`` of one number per parent gives every parent its own number of leaves).
    A node's children have centres at radius :math:`r_\ell` around their parent's, evenly
    spread on a circle in the first two features (turned at random), with
    :math:`r_L` = ``leaf_spread`` and radii geometric between ``parent_spread`` and
    ``leaf_spread`` above (:math:`r_\ell = r_L (\text{parent\_spread}/r_L)^{(L-\ell)/(L-1)}`);
    every leaf is one Gaussian component :math:`N(\text{centre}, \sigma^2 I)`, and the points are
    spread evenly over the leaves.

    ``covariance_type`` other than ``"known"`` gives every component a covariance of its own,
    drawn from the conjugate prior :class:`~mixbayes.HierarchicalMixture` uses
    (:func:`mixbayes.families.gaussian.scaled_prior` with prior mean covariance
    :math:`\sigma^2 I`): ``"full"`` :math:`\Sigma_k \sim \mathcal W^{-1}(\sigma^2 I, d + 2)`,
    ``"diag"`` independent precisions :math:`\tau_{kj} \sim \mathrm{Gamma}(3/2,
    \sigma^2/2)`, ``"spherical"`` one such :math:`\tau_k` for all features; and
    :math:`x_n \sim N(\mu_{c_n}, \Sigma_{c_n})`. With ``kind="model"`` the means are drawn
    given them, :math:`\mu_k \sim N(0, \Sigma_k/\kappa_0)`, :math:`\kappa_0 = \sigma^2/s_0^2`
    (the joint prior of the model); with ``kind="nested"`` the leaves keep their centres.

    *Well separated*, as the recovery tests use the word: sibling leaves at least
    :math:`6\sigma` apart (:math:`2 r_L \sin(\pi/b_L) \ge 6\sigma`), siblings at every level
    above at least twice as far apart as the radius of their own subtree, and top-level centres
    ``min_parent_distance`` apart, at least twice the radius of a top-level subtree
    (:math:`\sum_{\ell\ge2} r_\ell + 3\sigma`).

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    truth : TreeTruth
    """
    settings = _TreeSettings(n_samples, depth, n_features, top_concentration,
                             branch_concentration, path_concentration, observation_variance,
                             mean_prior_variance, leaf_spread, parent_spread,
                             min_parent_distance, covariance_type)
    validate_params(settings, {
        "n_samples": Interval("int", 1), "depth": Interval("int", 1),
        "n_features": Interval("int", 1),
        "top_concentration": Interval("real", 0, None, "neither"),
        "branch_concentration": Interval("real", 0, None, "neither"),
        "path_concentration": Interval("real", 0, None, "neither"),
        "observation_variance": Interval("real", 0, None, "neither"),
        "mean_prior_variance": Interval("real", 0, None, "neither"),
        "leaf_spread": Interval("real", 0), "parent_spread": Interval("real", 0),
        "min_parent_distance": Interval("real", 0),
        "covariance_type": Options(("known", "full", "diag", "spherical")),
    })
    rng = check_random_state(random_state)
    d = n_features
    if kind == "model":
        keys = _ncrp_paths(n_samples, depth, float(path_concentration), rng)
        paths = _level_labels(keys, depth)
        components = _franchise_components(keys, float(top_concentration),
                                           float(branch_concentration), rng)
        K = components.max() + 1
        if covariance_type == "known":
            means = np.sqrt(mean_prior_variance) * rng.standard_normal((K, d))
        else:
            covariances = _prior_covariances(covariance_type, K, d, observation_variance, rng)
            kappa0 = observation_variance / mean_prior_variance
            means = np.stack([rng.multivariate_normal(np.zeros(d), c / kappa0)
                              for c in covariances])
    elif kind == "nested":
        means, paths = _nested_centres(n_samples, depth, d, branching, float(leaf_spread),
                                       float(parent_spread), float(min_parent_distance), rng)
        components = np.arange(n_samples) % means.shape[0]
        rng.shuffle(components)
        paths = paths[components]
        if covariance_type != "known":
            covariances = _prior_covariances(covariance_type, means.shape[0], d,
                                             observation_variance, rng)
    else:
        raise ValueError(f"kind must be 'model' or 'nested'; got {kind!r}.")
    if covariance_type == "known":
        X = means[components] + np.sqrt(observation_variance) * rng.standard_normal((n_samples, d))
        covariances = np.broadcast_to(observation_variance * np.eye(d),
                                      (means.shape[0], d, d)).copy()
    else:
        roots = np.linalg.cholesky(covariances)
        X = means[components] + np.einsum("nij,nj->ni", roots[components],
                                          rng.standard_normal((n_samples, d)))
    return X, TreeTruth(paths, paths[:, -1].copy(), components, means, covariances)


def _prior_covariances(covariance_type, K, d, variance, rng):
    """``K`` covariances (K, d, d) from the prior of :func:`make_tree_data` (drawn here with
    scipy's inverse Wishart and numpy's Gamma, no code shared with the sampler's draws)."""
    from scipy import stats

    from ..families.gaussian import scaled_prior

    prior = scaled_prior(covariance_type, np.zeros(d), variance * np.eye(d), 1.0)
    if covariance_type == "full":
        draws = stats.invwishart(df=prior.degrees_of_freedom_prior,
                                 scale=prior.covariance_prior).rvs(size=K, random_state=rng)
        return np.asarray(draws).reshape(K, d, d)
    shape, rate = 0.5 * prior.degrees_of_freedom_prior, 0.5 * prior.covariance_prior
    size = (K, d) if covariance_type == "diag" else (K, 1)
    tau = np.broadcast_to(rng.gamma(shape, 1.0 / rate, size=size), (K, d))
    return np.einsum("kj,ij->kij", 1.0 / tau, np.eye(d))
