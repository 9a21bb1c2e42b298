r"""Variational Bayes Gaussian mixture: the Gaussian family on the shared CAVI loop.

.. math::

    \lambda \sim \mathrm{Dir}(\alpha\mathbf 1_K),\quad z_i \sim \mathrm{Cat}(\lambda),\quad
    x_i \mid z_i = k \sim \mathcal N(\mu_k, \Lambda_k^{-1}),\quad
    (\mu_k, \Lambda_k) \sim \text{Normal–Wishart or Normal–Gamma}

(see :mod:`mixbayes.families.gaussian` for the priors and updates). Components that the data do
not need keep only their prior weight :math:`\alpha`, which is small by default (:math:`1/K`),
so they switch themselves off.
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import replace

import numpy as np
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted

from .. import _engines
from .._validation import Interval, NJobs, Options, RandomState, check_points
from ..families.gaussian import GaussianFamily, GaussianPosterior, data_scale
from ._base import MixtureState, VariationalMixture
from ._weights import DirichletWeights, StickBreakingWeights


class VariationalGaussianMixture(VariationalMixture):
    r"""Bayesian Gaussian mixture fitted by coordinate-ascent variational Bayes.

    Parameters
    ----------
    n_components : int, default=5
        Upper bound :math:`K` on the number of components; unneeded ones switch off.
    covariance_type : {"full", "diag", "spherical"}, default="full"
    weight_concentration_prior_type : {"dirichlet_distribution", "dirichlet_process"}
        Finite symmetric Dirichlet weights (default), or a stick-breaking prior truncated at
        ``n_components`` sticks (scikit-learn's names).
    weight_concentration_prior : float or None, default=None
        :math:`\alpha` of the Dirichlet, or :math:`\gamma` of the sticks' Beta(1, gamma);
        None means :math:`1/K`.
    mean_precision_prior : float or None, default=None
        :math:`\kappa_0`; None means 1.
    mean_prior : array-like of shape (n_features,) or None, default=None
        :math:`m_0`; None means the data mean.
    degrees_of_freedom_prior : float or None, default=None
        :math:`\nu_0`; None means ``n_features`` (full) or 1 (diag, spherical: a Gamma shape of
        1/2, which in one dimension is scikit-learn's default written as a Normal–Gamma).
    covariance_prior : float or array-like or None, default=None
        :math:`W_0^{-1}` before the floor below; None means the data covariance (full), the
        per-column variances (diag) or their mean (spherical). The Gamma rate is half of it.
    reg_covar : float, default=1e-6
        Covariance floor :math:`\epsilon \ge 0`, scikit-learn's name: the prior scale used is
        :math:`W_0^{-1} + \epsilon\,\mathrm{diag}(v)`, with :math:`v_j` the variance of column
        :math:`j` (the mean column variance for a constant column, 1 if all are constant); diag
        adds :math:`\epsilon v`, spherical :math:`\epsilon\bar v`. Relative to each column, so
        rescaling a column rescales the fit; on standardised columns it is scikit-learn's
        absolute ``reg_covar``. It is part of the prior, so every posterior scale is at least
        as large (:math:`W_k^{-1} \succeq W_0^{-1}`) and the ELBO is that of the floored model:
        duplicated, collinear or constant columns and ``n_features >= n_samples`` then fit.
        With 0 the data-scaled default must be positive definite.
    init : {"kmeans++", "random"}, default="kmeans++"
        Starting responsibilities: one k-means++ clustering (hard), or flat-Dirichlet rows.
    tol : float, default=1e-3
        Stop when the absolute change of the ELBO between iterations is at most ``tol``
        (absolute, unlike the document mixture's per-document ``tol``: superfluous components
        empty by a slow drift of a fraction of a nat per iteration, and a per-sample threshold
        stops Old Faithful with three components instead of two).
    merge_moves : bool, default=False
        After CAVI converges, try merging pairs of components (the closest first), keeping a
        merge where the ELBO CAVI reaches from it is higher (Hughes & Sudderth 2013; see
        ``VariationalMixture._merge_moves``). Under CAVI alone a cluster that the start split
        between two components stays split: on three well-separated clusters (150 points, 3
        features, ``n_components=10``, data seeds 0-39) the default finds 3 components for 30
        of the 40 seeds (mean ARI 0.947), with merges 37 (0.955), at a higher ELBO on every
        seed it changes and about the same time (``bench/bench_gmm.py --merge-study``). Not
        the default: where ``n_components`` is
        the number of known classes the higher ELBO is often fewer clusters than classes
        (``bench/bench_gmm.py`` with merges, 20 seeds, against its table's 50 without: ARI
        0.568 against 0.673 on iris, 0.502 against 0.933 on wine, 0.375 against 0.662 on
        ecoli), so merges are for letting the data choose the number of
        clusters under a generous ``n_components``. Left out where the prior scale is
        degenerate (``_degenerate_prior``: a constant or, with full covariances, a collinear
        column, or ``reg_covar=0``).
    n_init, max_iter, random_state, n_jobs, verbose
        As for :class:`~mixbayes.DirichletMultinomialMixture`.

    Attributes
    ----------
    weights_ : ndarray of shape (n_components,)
    means_ : ndarray of shape (n_components, n_features)
        Posterior means :math:`m_k`.
    precisions_ : ndarray
        :math:`E[\Lambda_k]`: (K, d, d) full, (K, d) diag, (K,) spherical.
    covariances_ : ndarray
        The inverse of ``precisions_`` (scikit-learn's convention).
    mean_precision_, degrees_of_freedom_ : ndarray of shape (n_components,)
        :math:`\kappa_k` and :math:`\nu_k` (full) or the Gamma shape :math:`a_k`.
    scale_ : ndarray
        :math:`W_k^{-1}` (full) or the Gamma rates :math:`b_k`.
    covariance_prior_ : ndarray
        The prior scale used, floor included.
    covariance_floor_ : ndarray of shape (n_features,)
        :math:`\epsilon v`, what ``reg_covar`` added to the diagonal.
    n_effective_components_ : int
        Components holding at least half a point's worth of responsibility (the expected
        count under the weights' posterior).
    labels_, elbo_trace_, elbo_, n_iter_, converged_, n_features_in_
    """

    _parameter_rules = {
        "n_components": Interval("int", 1),
        "covariance_type": Options(("full", "diag", "spherical")),
        "weight_concentration_prior_type": Options(("dirichlet_distribution", "dirichlet_process")),
        "weight_concentration_prior": Interval("real", 0, None, "neither", allow_none=True),
        "mean_precision_prior": Interval("real", 0, None, "neither", allow_none=True),
        "degrees_of_freedom_prior": Interval("real", 0, None, "neither", allow_none=True),
        "reg_covar": Interval("real", 0),
        "init": Options(("kmeans++", "random")),
        "n_init": Interval("int", 1),
        "max_iter": Interval("int", 1),
        "tol": Interval("real", 0),
        "random_state": RandomState(),
        "n_jobs": NJobs(),
        "verbose": Interval("int", 0),
        "merge_moves": Options((False, True)),
    }

    def __init__(self, n_components=5, *, covariance_type="full",
                 weight_concentration_prior_type="dirichlet_distribution",
                 weight_concentration_prior=None,
                 mean_precision_prior=None, mean_prior=None, degrees_of_freedom_prior=None,
                 covariance_prior=None, reg_covar=1e-6, init="kmeans++", n_init=1, max_iter=500,
                 tol=1e-3, merge_moves=False, random_state=0, n_jobs=None, verbose=0):
        self.n_components = n_components
        self.covariance_type = covariance_type
        self.weight_concentration_prior_type = weight_concentration_prior_type
        self.weight_concentration_prior = weight_concentration_prior
        self.mean_precision_prior = mean_precision_prior
        self.mean_prior = mean_prior
        self.degrees_of_freedom_prior = degrees_of_freedom_prior
        self.covariance_prior = covariance_prior
        self.reg_covar = reg_covar
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.merge_moves = merge_moves
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    # ------------------------------------------------------------------ hooks of the loop
    def _weight_prior(self):
        if self.weight_concentration_prior is None:
            return 1.0 / self.n_components
        return self.weight_concentration_prior

    @staticmethod
    def _check_values(X):
        return check_points(X, "X")

    def _weights(self, prior):
        if self.weight_concentration_prior_type == "dirichlet_process":
            return StickBreakingWeights(prior)
        return DirichletWeights(prior)

    def _check_params(self, n_samples):
        super()._check_params(n_samples)
        if n_samples < 2:
            raise ValueError(
                "X has 1 sample (n_samples=1); at least 2 are needed to scale the priors."
            )

    _points = True

    @property
    def _merge_trials(self):
        """Candidate merges a round tries (:meth:`VariationalMixture._merge_moves`)."""
        return 8 if self.merge_moves else 0

    def _merge_candidates(self, state, counts):
        """Pairs of components holding at least half a point each, closest first by the
        squared Mahalanobis distance of their means under their mean expected covariance;
        the larger of a pair is kept. None where the prior scale is degenerate
        (:meth:`_degenerate_prior`)."""
        if self._degenerate_prior():
            return []
        post = state.family_posterior
        used = np.flatnonzero(counts >= 0.5)
        if self.covariance_type == "full":
            covariances = post.scale / post.dof[:, None, None]
        else:
            variances = post.scale / post.dof[:, None] if self.covariance_type == "diag" \
                else (post.scale / post.dof)[:, None] * np.ones(post.means.shape[1])
            covariances = variances[:, :, None] * np.eye(post.means.shape[1])
        pairs = []
        for a, i in enumerate(used):
            for j in used[a + 1:]:
                gap = post.means[i] - post.means[j]
                # pinv: without reg_covar a component's covariance may be singular
                distance = gap @ np.linalg.pinv(0.5 * (covariances[i] + covariances[j])) @ gap
                keep, drop = (i, j) if counts[i] >= counts[j] else (j, i)
                pairs.append((distance, int(keep), int(drop)))
        pairs.sort()
        return [(keep, drop) for _, keep, drop in pairs]

    def _make_family(self, X):
        return self._family_factory(X, _engines.OneBlock(X))()

    def _family_factory(self, sample, rows):
        """The priors are scaled by the whole data set's column summary (``rows.summary``:
        on a cluster the column moments summed on the workers), not by the sample's."""
        n, *summary = rows.summary(self._needs_covariance())

        def make():
            self._set_priors(n, *summary)
            return self._family()

        return make

    def _in_use(self):
        """Which components hold at least half a point's worth of responsibility (the expected
        count under the weights' posterior): the effective ones. Half a point, not one: three
        points in three components hold 0.98-1.01 each (the weight prior's pull), and all
        three are clusters of a point (``labels_``)."""
        counts = self._weights(self.weight_prior_).counts(self.weight_concentration_)
        return counts >= 0.5

    def _degenerate_prior(self):
        """Whether the prior scale :math:`W_0^{-1}` is the covariance floor alone in some
        direction (a constant column; with ``"full"``, collinear columns), or there is no
        floor. The data then lie in a subspace, every component's density along the rest is
        as sharp as the floor lets it be, and the ELBOs of different partitions differ by
        what the floor sets rather than by the clusters: on three clusters with a duplicated
        and a constant column, one component scored 34 nats above the three (ARI 1 with
        either column alone). Without a floor (``reg_covar=0``) a component spanning
        far-apart clusters of collinear columns has a posterior scale that rounding leaves
        singular, and its ELBO reads hundreds of nats high. Merge moves are left out there."""
        floor = self.covariance_floor_
        if not np.all(floor > 0):
            return True
        prior = np.asarray(self.covariance_prior_, dtype=float)
        if prior.ndim == 2:
            scaled = prior / np.sqrt(np.outer(floor, floor))
            return bool(np.linalg.eigvalsh(scaled)[0] <= 2.0)
        return bool(np.any(prior <= 2.0 * (floor if prior.ndim == 1 else floor.mean())))

    def _needs_covariance(self):
        """Whether the priors read the data's covariance matrix (not only its variances)."""
        return self.covariance_type == "full" and self.covariance_prior is None

    def _set_priors(self, n, mean, variances, covariance):
        """Set the priors from the data's size and ``point_summary``."""
        d = mean.shape[0]
        self.mean_prior_ = _vector(self.mean_prior, mean, d, "mean_prior")
        self.mean_precision_prior_ = (
            1.0 if self.mean_precision_prior is None else float(self.mean_precision_prior))
        full = self.covariance_type == "full"
        self.degrees_of_freedom_prior_ = float(
            self.degrees_of_freedom_prior if self.degrees_of_freedom_prior is not None
            else (d if full else 1.0))
        if full and self.degrees_of_freedom_prior_ <= d - 1:
            raise ValueError(
                f"degrees_of_freedom_prior must be > n_features - 1 = {d - 1} for a Wishart; "
                f"got {self.degrees_of_freedom_prior_}."
            )
        # relative to each column's variance, like the other data-scaled priors, so that
        # rescaling a column rescales the fit; on standardised columns it is scikit-learn's
        # absolute reg_covar. A constant column takes the data's mean variance as its scale.
        self.covariance_floor_ = float(self.reg_covar) * np.where(
            variances > 0, variances, data_scale(variances))
        prior = _covariance_prior(self.covariance_prior, n, covariance, self.covariance_type,
                                  variances, self.reg_covar)
        if self.covariance_type == "full":
            prior = prior + np.diag(self.covariance_floor_)
        elif self.covariance_type == "diag":
            prior = prior + self.covariance_floor_
        else:
            prior = np.asarray(prior + self.covariance_floor_.mean())  # 0-d, as before
        self.covariance_prior_ = prior

    def _family(self):
        return GaussianFamily(self.covariance_type, self.mean_prior_, self.mean_precision_prior_,
                              self.degrees_of_freedom_prior_, self.covariance_prior_)

    def _initial_responsibilities(self, X, family, rng):
        if self.init == "random":
            return super()._initial_responsibilities(X, family, rng)
        with warnings.catch_warnings():
            # fewer distinct points than components (constant data): k-means says so in its own
            # words; the start is still valid, and the fit's components say how many are used
            warnings.filterwarnings("ignore", message="Number of distinct clusters",
                                    category=ConvergenceWarning)
            labels = KMeans(self.n_components, n_init=1, init="k-means++",
                            random_state=int(rng.integers(2**31 - 1))).fit(X).labels_
        return np.eye(self.n_components)[labels]

    def _store_state(self, state):
        super()._store_state(state)
        post = state.family_posterior
        self.mean_precision_ = post.mean_precision
        self.means_ = post.means + self.mean_prior_
        self.degrees_of_freedom_ = post.dof
        self.scale_ = post.scale
        if self.covariance_type == "full":
            self.covariances_ = post.scale / post.dof[:, None, None]
            self.precisions_ = np.linalg.inv(self.covariances_)
        elif self.covariance_type == "diag":
            self.precisions_ = post.dof[:, None] / post.scale
            self.covariances_ = 1.0 / self.precisions_
        else:
            self.precisions_ = post.dof / post.scale
            self.covariances_ = 1.0 / self.precisions_
        self.n_effective_components_ = int(np.sum(self._in_use()))

    def _persist_schema(self, scalars):
        schema = super()._persist_schema(scalars)
        shape = {"full": ("K", "p", "p"), "diag": ("K", "p"), "spherical": ("K",)}[
            self.covariance_type]
        weights = ("K", 2) if self.weight_concentration_prior_type == "dirichlet_process" \
            else ("K",)
        schema.arrays.update({
            "weight_concentration_": (weights, "+"), "mean_precision_": (("K",), "+"),
            "means_": (("K", "p"), "f"), "degrees_of_freedom_": (("K",), "+"),
            "scale_": (shape, "f"), "covariances_": (shape, "f"), "precisions_": (shape, "f"),
            "mean_prior_": (("p",), "f"), "covariance_prior_": (shape[1:], "f"),
            "covariance_floor_": (("p",), ">=0")})
        schema.scalars.update(mean_precision_prior_="+", degrees_of_freedom_prior_="+",
                              n_effective_components_="int")
        full = ("scale_", "precisions_", "covariance_prior_")
        return replace(schema, positive_definite=full if self.covariance_type == "full" else ())

    def _probe(self):
        return self.predict_proba(self.means_[:1])

    def _restore_state(self):
        family = self._family()
        posterior = GaussianPosterior(self.mean_precision_, self.means_ - self.mean_prior_,
                                      self.degrees_of_freedom_, self.scale_)
        state = MixtureState(
            self.weight_concentration_, posterior,
            self._weight_expectations(), family.expectations(posterior),
            self.weight_prior_, None,
        )
        return state, family

    def log_predictive_density(self, X):
        r"""Log posterior predictive density :math:`\log\sum_k E[\lambda_k]\,\mathrm{St}_k(x)`.

        Each component's parameters are integrated out exactly (a Student-t, see
        :meth:`~mixbayes.families.gaussian.GaussianFamily.log_predictive`); the weights enter
        through their posterior mean.
        """
        from scipy.special import logsumexp

        check_is_fitted(self)
        X = self._check_X(X, reset=False)
        state, family = self._restore_state()
        log_t = family.log_predictive(family.prepare(X), state.family_posterior)
        with np.errstate(divide="ignore"):
            return logsumexp(log_t + np.log(self.weights_), axis=1)

    # ------------------------------------------------------------------ sampling
    def sample(self, n_samples=1, random_state=None):
        """Draw points from the fitted mixture (posterior-mean weights, means and covariances).

        Returns
        -------
        X : ndarray of shape (n_samples, n_features)
        labels : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        if not isinstance(n_samples, numbers.Integral) or n_samples < 1:
            raise ValueError(f"n_samples must be an integer >= 1; got {n_samples!r}.")
        rng = np.random.default_rng(random_state)
        labels = rng.choice(self.n_components, size=n_samples, p=self.weights_)
        d = self.n_features_in_
        X = np.empty((n_samples, d))
        for k in np.unique(labels):
            idx = labels == k
            X[idx] = rng.multivariate_normal(self.means_[k], self.covariance_matrix(k),
                                             size=int(idx.sum()))
        return X, labels

    def covariance_matrix(self, k):
        """Component ``k``'s covariance as a (d, d) matrix, whatever ``covariance_type``."""
        check_is_fitted(self)
        if self.covariance_type == "full":
            return self.covariances_[k]
        if self.covariance_type == "diag":
            return np.diag(self.covariances_[k])
        return self.covariances_[k] * np.eye(self.n_features_in_)


def _vector(value, default, d, name):
    if value is None:
        return default
    value = np.asarray(value, dtype=float)
    if value.shape != (d,) or not np.all(np.isfinite(value)):
        raise ValueError(f"{name} must be a finite vector of length n_features={d}.")
    return value


def _covariance_prior(value, n, covariance, covariance_type, variances, reg_covar):
    """The data-scaled default (from the ``n`` points' sample ``covariance`` and ``variances``)
    or a checked user value, in the shape the family expects, before the ``reg_covar`` floor;
    with ``reg_covar=0`` the default must be positive definite."""
    d = variances.shape[0]
    if value is None:
        if covariance_type == "full":
            value = covariance.copy()
            constant = variances == 0  # np.cov leaves rounding noise there; the floor is the scale
            value[constant, :] = 0.0
            value[:, constant] = 0.0
        else:
            value = variances if covariance_type == "diag" else np.asarray(variances.mean())
        if reg_covar == 0:
            flat = np.flatnonzero(variances <= 0)
            if flat.size:
                one = flat.size == 1
                raise ValueError(
                    f"X has {'a zero-variance column' if one else 'zero-variance columns'} "
                    f"{flat.tolist()}: the data-scaled covariance_prior would be singular; use "
                    "reg_covar > 0 (the default 1e-6 floors it), drop "
                    f"{'it' if one else 'them'} or pass covariance_prior."
                )
            if covariance_type == "full" and not _positive_definite(value):
                raise ValueError(
                    "X's covariance is singular (collinear or duplicated columns, or "
                    f"n_features > n_samples - 1 = {n - 1}): the data-scaled "
                    "covariance_prior would be singular; use reg_covar > 0 (the default 1e-6 "
                    "floors it) or pass covariance_prior."
                )
        return value
    value = np.asarray(value, dtype=float)
    expected = {"full": (d, d), "diag": (d,), "spherical": ()}[covariance_type]
    if value.shape != expected:
        raise ValueError(
            f"covariance_prior must have shape {expected} for covariance_type="
            f"{covariance_type!r}; got {value.shape}."
        )
    if covariance_type == "full":
        ok = np.allclose(value, value.T) and _positive_definite(value)
    else:
        ok = np.all(value > 0)
    if not ok or not np.all(np.isfinite(value)):
        raise ValueError("covariance_prior must be positive (definite for 'full').")
    return value


def _positive_definite(matrix):
    try:
        np.linalg.cholesky(matrix)
    except np.linalg.LinAlgError:
        return False
    return True
