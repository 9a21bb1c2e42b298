r"""Gaussian observations with conjugate Normal–Wishart / Normal–Gamma priors.

For component :math:`k` with precision :math:`\Lambda_k`:

* ``"full"``: :math:`\Lambda_k \sim \mathcal W(W_0, \nu_0)`,
  :math:`\mu_k \mid \Lambda_k \sim \mathcal N(m_0, (\kappa_0\Lambda_k)^{-1})`;
* ``"diag"``: independent :math:`\tau_{kj} \sim \mathrm{Gamma}(a_0, b_{0j})` per dimension
  (shape, rate), :math:`\mu_{kj} \mid \tau_{kj} \sim \mathcal N(m_{0j}, (\kappa_0\tau_{kj})^{-1})`;
  one-dimensional data are this case;
* ``"spherical"``: one :math:`\tau_k \sim \mathrm{Gamma}(a_0, b_0)` shared by all dimensions.

Given responsibilities, with :math:`N_k = \sum_i r_{ik}`, :math:`s_k = \sum_i r_{ik} x_i` and
:math:`S_k = \sum_i r_{ik} x_i x_i^\top` computed on data centred at :math:`m_0` (so that
:math:`m_0 = 0` below and the statistics add over disjoint sets of points), the conjugate
updates (Bishop, PRML §10.2; the source document's last updates are wrong) are

.. math::

    \kappa_k = \kappa_0 + N_k,\quad m_k = s_k/\kappa_k,\quad
    \nu_k = \nu_0 + N_k,\quad W_k^{-1} = W_0^{-1} + S_k - \kappa_k m_k m_k^\top

and in the Gamma cases :math:`a_k = a_0 + N_k/2` (times :math:`d` when spherical),
:math:`b_k = b_0 + \tfrac12(\operatorname{diag}S_k - \kappa_k m_k^2)` (summed over dimensions
when spherical). The term added to the prior scale is a weighted scatter about :math:`m_k`
plus a shrinkage term, positive semi-definite, so :math:`W_k^{-1} \succeq W_0^{-1}` and
:math:`b_k \ge b_0` exactly; computed as a difference of large numbers it can fall below by
rounding (by enough to fail a Cholesky on collinear columns), so the computed scale is put back
above that bound: eigenvalues clipped at :math:`\lambda_{\min}(W_0^{-1})` (full, only where the
Cholesky fails) or :math:`b_k \leftarrow \max(b_k, b_0)`. This moves only rounding error, so the
updates stay the coordinate maxima and the ELBO, computed for the scale actually kept, stays
monotone. The prior scale itself must be positive definite: the estimator adds its
``reg_covar`` floor to it. The expected log-density of a point is

.. math::

    E[\log\mathcal N(x\mid\mu_k,\Lambda_k^{-1})] = \tfrac12 E[\log|\Lambda_k|]
      - \tfrac d2\log 2\pi - \tfrac12\big(d/\kappa_k + E[(x-m_k)^\top\Lambda_k(x-m_k)]\big),

with :math:`E[\log|\Lambda|] = \sum_{i=1}^d\psi(\tfrac{\nu+1-i}2) + d\log 2 + \log|W|` and
:math:`E[\Lambda] = \nu W` (Wishart), :math:`E[\log\tau] = \psi(a) - \log b`,
:math:`E[\tau] = a/b` (Gamma).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import solve_triangular
from scipy.special import digamma, gammaln

from .._sizes import Sized
from ._gaussian_kernels import full_responsibilities, inverse_lower, weighted_moments

LOG_2PI = np.log(2.0 * np.pi)


@dataclass
class GaussianData(Sized):
    """Points centred at the prior mean, prepared once per fit."""

    centred: np.ndarray  # (n, d)

    @property
    def shape(self):
        return self.centred.shape


@dataclass
class GaussianStats(Sized):
    """Additive statistics: weights, weighted sums and weighted second moments."""

    counts: np.ndarray  # (K,)
    sums: np.ndarray  # (K, d)
    squares: np.ndarray  # (K, d, d) for "full", (K, d) otherwise

    def __add__(self, other):
        return GaussianStats(self.counts + other.counts, self.sums + other.sums,
                             self.squares + other.squares)

    def merged(self, keep, drop):
        """The statistics of component ``drop``'s responsibilities moved to ``keep`` (they are
        sums over points, so a merge adds them; ``drop`` is left empty)."""
        merged = GaussianStats(self.counts.copy(), self.sums.copy(), self.squares.copy())
        for array in (merged.counts, merged.sums, merged.squares):
            array[keep] += array[drop]
            array[drop] = 0.0
        return merged


@dataclass
class GaussianPosterior:
    """Normal–Wishart (``full``) or Normal–Gamma (``diag``/``spherical``) factors, centred."""

    mean_precision: np.ndarray  # kappa (K,)
    means: np.ndarray  # m (K, d), centred at the prior mean
    dof: np.ndarray  # nu (K,) for full; Gamma shape a (K,) otherwise
    scale: np.ndarray  # W^{-1} (K, d, d) for full; Gamma rate b (K, d) diag / (K,) spherical


@dataclass
class GaussianExpectations:
    """What the local step and the ELBO need: E[log |Lambda|], the means and precision factor."""

    expected_log_det: np.ndarray  # (K,)
    precision_factor: np.ndarray  # full: chol of W^{-1} (K, d, d); diag: a/b (K, d); sph: (K,)
    mean_precision: np.ndarray  # kappa (K,)
    means: np.ndarray  # (K, d), centred
    dof: np.ndarray  # nu (full) or Gamma shape
    neg_kl: float


class GaussianFamily:
    r"""Conjugate Gaussian family for the CAVI loop (see the module docstring).

    Parameters
    ----------
    covariance_type : {"full", "diag", "spherical"}
    mean_prior : ndarray of shape (d,)
    mean_precision_prior : float
        :math:`\kappa_0`.
    degrees_of_freedom_prior : float
        :math:`\nu_0` (full); the Gamma shape is :math:`a_0 = \nu_0/2` otherwise, the marginal
        of a Wishart's diagonal.
    covariance_prior : ndarray
        :math:`W_0^{-1}` (d, d) for full; the Gamma rate is :math:`b_0 = ` ``covariance_prior``/2,
        of shape (d,) for diag and () for spherical.
    """

    def __init__(self, covariance_type, mean_prior, mean_precision_prior,
                 degrees_of_freedom_prior, covariance_prior):
        self.covariance_type = covariance_type
        self.mean_prior = np.asarray(mean_prior, dtype=float)
        self.mean_precision_prior = float(mean_precision_prior)
        self.degrees_of_freedom_prior = float(degrees_of_freedom_prior)
        self.covariance_prior = np.asarray(covariance_prior, dtype=float)
        # the exact lower bound of every posterior scale (see the module docstring)
        if covariance_type == "full":
            self._scale_floor = float(np.linalg.eigvalsh(self.covariance_prior)[0])
        else:
            self._scale_floor = 0.5 * self.covariance_prior
        self.reuse_buffers = False  # part of the family protocol; nothing here is worth reusing

    @property
    def prior(self):
        """Nothing to record: the Gaussian hyperparameters are fixed, never fitted."""
        return None

    # -- data ------------------------------------------------------------------------------
    def prepare(self, X):
        return GaussianData(np.ascontiguousarray(X - self.mean_prior, dtype=np.float64))

    @staticmethod
    def log_base_measure(data):
        return np.zeros(data.shape[0])

    # -- global step ----------------------------------------------------------------------
    def sufficient_statistics(self, data, resp):
        X = data.centred
        counts = resp.sum(axis=0)
        if self.covariance_type == "full":
            sums, squares = weighted_moments(X, np.ascontiguousarray(resp),
                                             work=X.size * X.shape[1] * resp.shape[1])
        else:
            sums = resp.T @ X
            squares = resp.T @ (X * X)
        return GaussianStats(counts, sums, squares)

    def label_statistics(self, data, labels, K):
        """:meth:`sufficient_statistics` of hard assignments (``labels`` in 0..K-1, one
        component a point), without the (n, K) responsibilities: one GEMM per component for
        the full second moments (the weighted kernel reads every point for every component:
        K times the work, most of a tree sweep's time on wdbc's 30 features)."""
        X = data.centred
        n, d = X.shape
        counts = np.bincount(labels, minlength=K).astype(float)
        sums = np.zeros((K, d))
        np.add.at(sums, labels, X)
        if self.covariance_type == "full":
            squares = np.zeros((K, d, d))
            order = np.argsort(labels, kind="stable")
            bounds = np.concatenate([[0], np.cumsum(np.bincount(labels, minlength=K))])
            for k in range(K):
                Y = X[order[bounds[k]:bounds[k + 1]]]
                squares[k] = Y.T @ Y
        else:
            squares = np.zeros((K, d))
            np.add.at(squares, labels, X * X)
        return GaussianStats(counts, sums, squares)

    def posterior(self, stats):
        kappa = self.mean_precision_prior + stats.counts
        means = stats.sums / kappa[:, None]
        d = means.shape[1]
        if self.covariance_type == "full":
            dof = self.degrees_of_freedom_prior + stats.counts
            scale = self.covariance_prior + stats.squares - kappa[:, None, None] * np.einsum(
                "ki,kj->kij", means, means)
            scale = 0.5 * (scale + np.swapaxes(scale, 1, 2))  # keep it exactly symmetric
            scale = _clip_below(scale, self._scale_floor)
        elif self.covariance_type == "diag":
            dof = 0.5 * self.degrees_of_freedom_prior + 0.5 * stats.counts
            scale = 0.5 * self.covariance_prior + 0.5 * (stats.squares - kappa[:, None] * means**2)
            scale = np.maximum(scale, self._scale_floor)  # b_k >= b_0 exactly; undo rounding
        else:
            dof = 0.5 * self.degrees_of_freedom_prior + 0.5 * d * stats.counts
            scale = 0.5 * self.covariance_prior + 0.5 * (
                stats.squares.sum(axis=1) - kappa * np.sum(means**2, axis=1))
            scale = np.maximum(scale, self._scale_floor)
        return GaussianPosterior(kappa, means, dof, scale)

    def expectations(self, posterior):
        kappa, means, dof, scale = (posterior.mean_precision, posterior.means, posterior.dof,
                                    posterior.scale)
        K, d = means.shape
        k0 = self.mean_precision_prior
        if self.covariance_type == "full":
            chol = np.linalg.cholesky(scale)  # W^{-1} = L L^T
            log_det_scale = 2.0 * np.log(np.diagonal(chol, axis1=1, axis2=2)).sum(axis=1)
            e_log_det = (digamma(0.5 * (dof[:, None] - np.arange(d))).sum(axis=1)
                         + d * np.log(2.0) - log_det_scale)
            # KL of the Wishart factors
            nu0, prior_scale = self.degrees_of_freedom_prior, self.covariance_prior
            prior_log_det = np.linalg.slogdet(prior_scale)[1]
            # tr(W0^{-1} W_k) = tr(W0^{-1} (L L^T)^{-1})
            inv_chol = np.linalg.inv(chol)
            W = np.einsum("kji,kjl->kil", inv_chol, inv_chol)
            trace = np.einsum("ij,kji->k", prior_scale, W)
            log_z_q = -0.5 * dof * log_det_scale + 0.5 * dof * d * np.log(2) + log_multivariate_gamma(
                0.5 * dof, d)
            log_z_p = -0.5 * nu0 * prior_log_det + 0.5 * nu0 * d * np.log(2) + log_multivariate_gamma(
                0.5 * nu0, d)
            kl_precision = (0.5 * (dof - nu0) * e_log_det - 0.5 * dof * d + 0.5 * dof * trace
                            - log_z_q + log_z_p)
            quad = dof * np.einsum("ki,kij,kj->k", means, W, means)  # E[m^T Lambda m]
            factor = chol
        else:
            a0, b0 = 0.5 * self.degrees_of_freedom_prior, 0.5 * self.covariance_prior
            shape = dof[:, None] if scale.ndim == 2 else dof
            e_log_tau = digamma(shape) - np.log(scale)
            e_tau = shape / scale
            kl_precision = _gamma_kl(dof, scale, a0, b0)
            if self.covariance_type == "diag":
                e_log_det = e_log_tau.sum(axis=1)
                quad = np.sum(e_tau * means**2, axis=1)
            else:
                e_log_det = d * e_log_tau
                quad = e_tau * np.sum(means**2, axis=1)
            factor = e_tau
        # E_q(Lambda) KL(N(m, (kappa Lambda)^-1) || N(m0 = 0, (kappa0 Lambda)^-1))
        kl_mean = 0.5 * (d * k0 / kappa - d + d * np.log(kappa / k0) + k0 * quad)
        neg_kl = -float(np.sum(kl_precision) + np.sum(kl_mean))
        return GaussianExpectations(e_log_det, factor, kappa, means, dof, neg_kl)

    @staticmethod
    def neg_kl(posterior, expectations):
        return expectations.neg_kl

    def fit_prior(self, stats):  # pragma: no cover - the Gaussian priors are not fitted
        raise NotImplementedError("empirical Bayes is not offered for the Gaussian family")

    # -- local step -----------------------------------------------------------------------
    def expected_log_likelihood(self, data, expectations):
        r"""Return the (n, K) array of :math:`E[\log\mathcal N(x_i\mid\mu_k,\Lambda_k^{-1})]`."""
        X = data.centred
        n, d = X.shape
        kappa, means = expectations.mean_precision, expectations.means
        if self.covariance_type == "full":
            chol, dof = expectations.precision_factor, expectations.dof
            maha = np.empty((n, means.shape[0]))
            eye = np.eye(d)
            for k in range(means.shape[0]):
                # (x - m)^T W (x - m) = |L^{-1}(x - m)|^2 with W^{-1} = L L^T: one GEMM per k
                inv_chol = solve_triangular(chol[k], eye, lower=True)
                y = X @ inv_chol.T - inv_chol @ means[k]
                maha[:, k] = dof[k] * np.einsum("ij,ij->i", y, y)
        elif self.covariance_type == "diag":
            e_tau = expectations.precision_factor
            maha = (X * X) @ e_tau.T - 2.0 * X @ (e_tau * means).T + np.sum(e_tau * means**2, axis=1)
        else:
            e_tau = expectations.precision_factor
            maha = e_tau * (np.sum(X * X, axis=1)[:, None] - 2.0 * X @ means.T
                            + np.sum(means**2, axis=1))
        return 0.5 * (expectations.expected_log_det - d * LOG_2PI - d / kappa - maha)

    # -- posterior predictive and draws ---------------------------------------------------
    def log_predictive(self, data, posterior):
        r"""Log posterior predictive density of every point under every component, (n, K).

        Integrating :math:`(\mu_k, \Lambda_k)` out of the Gaussian gives a Student-t:
        ``full``: :math:`\mathrm{St}(x \mid m_k, \tfrac{(\nu_k+1-d)\kappa_k}{1+\kappa_k}W_k,
        \nu_k+1-d)` (Bishop 10.81); ``diag``: a product of univariate
        :math:`\mathrm{St}(x_j \mid m_{kj}, \tfrac{a_k\kappa_k}{b_{kj}(1+\kappa_k)}, 2a_k)`;
        ``spherical``: the isotropic multivariate t with :math:`2a_k` degrees of freedom and
        scale :math:`\tfrac{b_k(1+\kappa_k)}{a_k\kappa_k}I`.
        """
        X = data.centred
        n, d = X.shape
        kappa, means, dof, scale = (posterior.mean_precision, posterior.means, posterior.dof,
                                    posterior.scale)
        out = np.empty((n, means.shape[0]))
        for k in range(means.shape[0]):
            diff = X - means[k]
            if self.covariance_type == "full":
                nu = dof[k] + 1.0 - d
                # shape matrix Sigma = (1 + kappa) / (kappa nu) W^{-1}
                chol = np.linalg.cholesky(scale[k] * (1.0 + kappa[k]) / (kappa[k] * nu))
                y = np.linalg.solve(chol, diff.T)
                maha = np.sum(y * y, axis=0)
                log_det = 2.0 * np.log(np.diag(chol)).sum()
                out[:, k] = _log_student(maha, nu, d, log_det)
            elif self.covariance_type == "diag":
                nu = 2.0 * dof[k]
                var = scale[k] * (1.0 + kappa[k]) / (dof[k] * kappa[k])
                out[:, k] = _log_student(diff**2 / var, nu, 1, np.log(var)).sum(axis=1)
            else:
                nu = 2.0 * dof[k]
                var = scale[k] * (1.0 + kappa[k]) / (dof[k] * kappa[k])
                out[:, k] = _log_student(np.sum(diff**2, axis=1) / var, nu, d, d * np.log(var))
        return out

    def log_marginal_likelihood(self, stats):
        r"""Log marginal likelihood :math:`\log p(D_k)` of every component's points, with the
        mean and precision integrated out under the prior (``stats`` centred at :math:`m_0`).

        ``full`` (Normal–Wishart, :math:`\Psi = W^{-1}`):

        .. math::

            -\tfrac{nd}2\log\pi + \log\Gamma_d(\tfrac{\nu_k}2) - \log\Gamma_d(\tfrac{\nu_0}2)
            + \tfrac{\nu_0}2\log|\Psi_0| - \tfrac{\nu_k}2\log|\Psi_k|
            + \tfrac d2\log\tfrac{\kappa_0}{\kappa_k};

        ``diag``: :math:`\sum_j [\log\Gamma(a_k) - \log\Gamma(a_0) + a_0\log b_{0j}
        - a_k\log b_{kj}] + \tfrac d2\log\tfrac{\kappa_0}{\kappa_k} - \tfrac{nd}2\log 2\pi`;
        ``spherical``: the same with one Gamma factor (:math:`a_k = a_0 + nd/2`).
        """
        posterior = self.posterior(stats)
        n = np.asarray(stats.counts, dtype=float)
        d = posterior.means.shape[1]
        k0, nu0 = self.mean_precision_prior, self.degrees_of_freedom_prior
        shrink = 0.5 * d * (np.log(k0) - np.log(posterior.mean_precision))
        if self.covariance_type == "full":
            log_det_prior = np.linalg.slogdet(self.covariance_prior)[1]
            log_det = np.linalg.slogdet(posterior.scale)[1]
            return (-0.5 * n * d * np.log(np.pi) + log_multivariate_gamma(0.5 * posterior.dof, d)
                    - log_multivariate_gamma(0.5 * nu0, d) + 0.5 * nu0 * log_det_prior
                    - 0.5 * posterior.dof * log_det + shrink)
        a0, b0 = 0.5 * nu0, 0.5 * self.covariance_prior
        a, b = posterior.dof, posterior.scale
        if self.covariance_type == "diag":
            gamma_terms = (d * (gammaln(a) - gammaln(a0)) + a0 * np.log(b0).sum()
                           - a * np.log(b).sum(axis=1))
        else:
            gamma_terms = gammaln(a) - gammaln(a0) + a0 * np.log(b0) - a * np.log(b)
        return gamma_terms + shrink - 0.5 * n * d * LOG_2PI

    def draw(self, posterior, rng, size=1):
        """``size`` draws of every component's mean and precision from the posterior factors.

        Returns ``(means, precisions)``: means (size, K, d) on the original (uncentred) scale,
        precisions (size, K, d, d) full, (size, K, d) diag, (size, K) spherical.
        """
        kappa, m, dof, scale = (posterior.mean_precision, posterior.means, posterior.dof,
                                posterior.scale)
        K, d = m.shape
        z = rng.standard_normal((size, K, d))
        if self.covariance_type == "full":
            # Bartlett: with W = F F^T (Cholesky) and A lower triangular, A_ii^2 ~ chi^2(nu - i)
            # (i = 0..d-1), A_ij ~ N(0, 1) below the diagonal, Lambda = (F A)(F A)^T is
            # W(W, nu), and F A is its Cholesky factor (vectorised over draws and components;
            # scipy's wishart is built anew per component, ~0.2 ms each, inside samplers' sweeps)
            root = np.linalg.cholesky(np.linalg.inv(scale))
            A = np.tril(rng.standard_normal((size, K, d, d)), -1)
            i = np.arange(d)
            A[..., i, i] = np.sqrt(rng.chisquare(dof[None, :, None] - i, size=(size, K, d)))
            factor = root @ A
            precisions = factor @ np.swapaxes(factor, -1, -2)
            # mu = m + U^{-1} z with kappa Lambda = U^T U (U = sqrt(kappa) (F A)^T, upper)
            upper = np.sqrt(kappa)[None, :, None, None] * np.swapaxes(factor, -1, -2)
            means = m + np.linalg.solve(upper, z[..., None])[..., 0]
        else:
            shape = dof if scale.ndim == 1 else dof[:, None]
            precisions = rng.gamma(shape, 1.0 / scale, size=(size,) + scale.shape)
            tau = precisions if scale.ndim == 2 else precisions[..., None]
            means = m + z / np.sqrt(kappa[:, None] * tau)
        return means + self.mean_prior, precisions

    def log_density(self, X, means, precisions):
        r"""``out[i, k]`` :math:`= \log\mathcal N(x_i\mid\mu_k,\Lambda_k^{-1})` for points
        ``X`` (n, d) and components as :meth:`draw` gives them (uncentred means (K, d);
        precisions (K, d, d) full, (K, d) diag, (K,) spherical)."""
        X = np.asarray(X, dtype=float)
        n, d = X.shape
        K = means.shape[0]
        if self.covariance_type == "full":
            out = np.empty((n, K))
            for k in range(K):
                chol = np.linalg.cholesky(precisions[k])  # Lambda = L L^T
                y = (X - means[k]) @ chol
                out[:, k] = (np.log(np.diagonal(chol)).sum() - 0.5 * d * LOG_2PI
                             - 0.5 * np.einsum("ij,ij->i", y, y))
            return out
        tau = precisions if precisions.ndim == 2 else np.repeat(precisions[:, None], d, axis=1)
        maha = ((X * X) @ tau.T - 2.0 * X @ (tau * means).T
                + np.sum(tau * means**2, axis=1))
        return 0.5 * (np.log(tau).sum(axis=1) - d * LOG_2PI - np.maximum(maha, 0.0))

    def prior_statistics(self, K=1):
        """Statistics of no points for ``K`` components: ``posterior`` of them is the prior."""
        d = self.mean_prior.size
        squares = np.zeros((K, d, d) if self.covariance_type == "full" else (K, d))
        return GaussianStats(np.zeros(K), np.zeros((K, d)), squares)

    def responsibilities(self, data, expectations, expected_log_weights):
        """Row softmax of ``E[log lambda] + E[log N]``, its log normaliser and column sums."""
        if self.covariance_type == "full":
            X = data.centred
            d = X.shape[1]
            inv_chol = inverse_lower(np.ascontiguousarray(expectations.precision_factor))
            offset = expected_log_weights + 0.5 * (
                expectations.expected_log_det - d * LOG_2PI - d / expectations.mean_precision)
            resp, log_norm = np.empty((X.shape[0], offset.size)), np.empty(X.shape[0])
            counts = full_responsibilities(X, inv_chol, expectations.means, expectations.dof,
                                           offset, resp, log_norm,
                                           work=X.size * d * offset.size)
            return resp, log_norm, counts
        L = expected_log_weights + self.expected_log_likelihood(data, expectations)
        shift = L.max(axis=1, keepdims=True)
        resp = np.exp(L - shift)  # exponents <= 0: no overflow
        total = resp.sum(axis=1, keepdims=True)
        resp /= total
        return resp, (shift + np.log(total)).ravel(), resp.sum(axis=0)


def scaled_prior(covariance_type, mean_prior, covariance, mean_variance):
    r"""The weakest conjugate prior whose covariance has prior mean ``covariance``
    :math:`\bar\Sigma` (d, d), as a :class:`GaussianFamily`: :math:`\nu_0 = d + 2` and
    :math:`W_0^{-1} = \bar\Sigma` (full; :math:`E[\Lambda^{-1}] = W_0^{-1}/(\nu_0 - d - 1)`),
    Gamma shape :math:`a_0 = 3/2` and rate :math:`b_{0j} = \bar\Sigma_{jj}/2` (diag) or
    :math:`\operatorname{tr}\bar\Sigma/(2d)` (spherical), so that :math:`E[1/\tau] =
    b_0/(a_0 - 1)` is the variance; and :math:`\kappa_0 = \operatorname{tr}\bar\Sigma/
    (d\,s_0^2)` with :math:`s_0^2` = ``mean_variance``, so that at the prior's covariance a
    mean spreads about :math:`m_0` by :math:`s_0^2` per feature, as in the known-variance
    model :math:`\mu \sim N(m_0, s_0^2 I)`."""
    covariance = np.atleast_2d(np.asarray(covariance, dtype=float))
    d = covariance.shape[0]
    variance = float(np.trace(covariance)) / d
    kappa0 = variance / float(mean_variance)
    if covariance_type == "full":
        return GaussianFamily("full", mean_prior, kappa0, d + 2.0, covariance)
    scale = np.diagonal(covariance).copy() if covariance_type == "diag" else np.asarray(variance)
    return GaussianFamily(covariance_type, mean_prior, kappa0, 3.0, scale)


def _clip_below(scale, floor):
    """Raise the eigenvalues of the (K, d, d) ``scale`` matrices to at least ``floor`` where a
    Cholesky factorisation fails (rounding only: the exact matrices are above the floor).

    A floor tiny against the largest eigenvalue (a user prior with ``reg_covar=0``) cannot make
    the factorisation succeed, so the floor is also at least ``1e3 * d * eps`` times the largest
    eigenvalue, about the rounding error of the update that computed the matrix.
    """
    try:
        np.linalg.cholesky(scale)
        return scale
    except np.linalg.LinAlgError:
        pass
    scale = scale.copy()
    d = scale.shape[1]
    for k in range(scale.shape[0]):
        values, vectors = np.linalg.eigh(scale[k])
        lowest = max(floor, 1e3 * d * np.finfo(float).eps * abs(values[-1]))
        if values[0] < lowest:
            scale[k] = (vectors * np.maximum(values, lowest)) @ vectors.T
            scale[k] = 0.5 * (scale[k] + scale[k].T)
    return scale


@dataclass(frozen=True)
class KnownVarianceMarginal:
    """:func:`known_variance_log_marginal` at fixed variances, as a callable (a search that
    knows this family may run it in a compiled kernel)."""

    variance: float
    prior_variance: float

    def __call__(self, stats):
        return known_variance_log_marginal(stats, self.variance, self.prior_variance)


def known_variance_log_marginal(stats, variance, prior_variance):
    r"""Log marginal likelihood of every cluster's points under
    :math:`x_i \sim N(\mu, \sigma^2 I)`, :math:`\mu \sim N(m_0, s_0^2 I)` (the variance known,
    the mean integrated out), from :class:`GaussianStats` centred at :math:`m_0` (``squares``
    of shape (K, d): per-dimension sums of squares). Per dimension the points are jointly
    :math:`N(m_0 \mathbf 1, \sigma^2 I + s_0^2 \mathbf 1\mathbf 1^\top)`, so

    .. math::

        \log p(D) = -\tfrac{nd}2\log 2\pi\sigma^2 - \tfrac d2\log(1 + n s_0^2/\sigma^2)
        - \frac1{2\sigma^2}\Big(\sum_i\lVert y_i\rVert^2
        - \frac{s_0^2\lVert\sum_i y_i\rVert^2}{\sigma^2 + n s_0^2}\Big),
        \qquad y_i = x_i - m_0.
    """
    n = np.asarray(stats.counts, dtype=float)
    d = stats.sums.shape[1]
    total_squares = stats.squares.reshape(n.size, -1).sum(axis=1)
    quadratic = total_squares - prior_variance * np.sum(stats.sums**2, axis=1) / (
        variance + n * prior_variance)
    return (-0.5 * n * d * np.log(2.0 * np.pi * variance)
            - 0.5 * d * np.log1p(n * prior_variance / variance) - 0.5 * quadratic / variance)


# the pooled within-cluster covariance of a tied model is shrunk this far towards its
# diagonal: a table with few points per cluster (digits: 61 columns, some almost constant)
# otherwise gives near-singular directions that whitening would blow up
TIED_SHRINKAGE = 0.1


@dataclass(frozen=True)
class Whitening:
    r"""The map :math:`x \mapsto (x - c)A` under which a shared covariance :math:`\Sigma`
    becomes the identity: :math:`\Sigma = V\Lambda V^\top`, :math:`A = V\Lambda^{-1/2}`, so
    :math:`A^\top\Sigma A = I` and :math:`A^{-\top}A^{-1} = \Sigma`. A Gaussian density of
    the whitened points is one of the points times :math:`|\det A|`: ``log_det`` is
    :math:`\log|\det A| = -\tfrac12\log|\Sigma|`, what a log-likelihood of ``n`` whitened
    points needs ``n`` times to be one of the points themselves."""

    centre: np.ndarray  # c (d,)
    transform: np.ndarray  # A (d, d)
    inverse: np.ndarray  # A^{-1} (d, d)
    log_det: float  # log |det A|

    @classmethod
    def of_covariance(cls, centre, covariance):
        """The whitening of ``covariance`` (symmetric, positive semi-definite) about
        ``centre``; directions of (almost) no variance - below 1e-6 of the largest, a constant
        column - get that floor, and a covariance of no variance at all the identity."""
        values, vectors = np.linalg.eigh(np.atleast_2d(covariance))
        top = float(values.max(initial=0.0))
        if not top > 0.0:
            values, vectors = np.ones_like(values), np.eye(values.size)
        else:
            values = np.maximum(values, 1e-6 * top)
        root = np.sqrt(values)
        return cls(np.asarray(centre, float).copy(), vectors / root, (vectors * root).T,
                   float(-np.log(root).sum()))

    def apply(self, X):
        """The whitened points :math:`(x - c)A`."""
        return (np.asarray(X, float) - self.centre) @ self.transform

    def restore(self, Y):
        """Points of the whitened space back in the original one, :math:`yA^{-1} + c`."""
        return np.asarray(Y, float) @ self.inverse + self.centre

    @property
    def covariance(self):
        r""":math:`\Sigma = A^{-\top}A^{-1}`, the covariance whitened to the identity."""
        return self.inverse.T @ self.inverse


# a column of which more than half the values are one value (a flag, a count that is mostly
# 0, a blank pixel) keeps at least this share of its variance in a pooled within-cluster
# covariance (``point_mass_columns``, ``pooled_within_covariance``)
POINT_MASS_FLOOR = 0.5


def point_mass_columns(X):
    """Which columns of ``X`` hold one value in more than half their rows (that value is then
    the column's median, and its median absolute deviation is 0): a point mass that no
    Gaussian cluster describes. A constant column is one."""
    X = np.asarray(X, float)
    if X.shape[0] == 0:
        return np.zeros(X.shape[1], bool)
    median = np.partition(X, X.shape[0] // 2, axis=0)[X.shape[0] // 2]
    return np.count_nonzero(X == median, axis=0) > X.shape[0] / 2


def pooled_within_covariance(X, labels, shrinkage=TIED_SHRINKAGE,
                             point_mass_floor=POINT_MASS_FLOOR):
    r"""The clusters' shared covariance: the within-cluster scatter of ``X`` (rows grouped by
    ``labels``) over :math:`n - k` (:math:`k` clusters; at least 1), shrunk by ``shrinkage``
    towards its own diagonal, :math:`(1 - \lambda) W + \lambda\,\operatorname{diag} W`;
    then every point-mass column :math:`j` (:func:`point_mass_columns`) whose entry is below
    ``point_mass_floor`` times its variance :math:`v_j` over all rows is raised to it, row
    and column :math:`j` scaled by :math:`\sqrt{f v_j / W_{jj}}` (its correlations kept).

    Why the floor: such a column is constant inside most clusters (yeast's erl and pox, 99%
    one value; glass' Ba and Fe, 82% and 67% zeros; 24 of digits' 61 pixels), so its pooled
    within variance is that of the few clusters where it varies, often almost 0, and a
    whitening by :math:`W` stretches its rare values into separations that outweigh every
    other column. Measured on the tree model's benchmark (``bench/bench_tree.py``, the tied
    default, chain seeds 0-5, dendrogram purity): glass 0.454 -> 0.505, yeast 0.364 -> 0.388,
    digits 0.757 -> 0.835 (the best peers: Ward 0.504 and 0.391, genie 0.827); ecoli 0.857 ->
    0.849; the other eleven sets have no such column. Floors of 0.3-1.0 all lifted the three;
    0.5 was the steadiest over the seeds. Continuous columns are left as they are: a floor on
    every column (30% of its variance) lowered a simulated hierarchy with d = 10 from 0.91 to
    0.77."""
    X = np.asarray(X, float)
    _, cluster = np.unique(labels, return_inverse=True)
    k = int(cluster.max(initial=-1)) + 1
    centres = np.zeros((k, X.shape[1]))
    np.add.at(centres, cluster, X)
    centres /= np.bincount(cluster, minlength=k)[:, None]
    residuals = X - centres[cluster]
    within = residuals.T @ residuals / max(X.shape[0] - k, 1)
    within = (1.0 - shrinkage) * within + shrinkage * np.diag(np.diag(within))
    diagonal = np.diag(within)
    floor = point_mass_floor * column_variances(X)
    raise_ = point_mass_columns(X) & (diagonal < floor)
    if raise_.any():
        # a column with no within variance at all has no correlations to keep: its floor alone
        scale = np.ones_like(diagonal)
        varies = raise_ & (diagonal > 0)
        scale[varies] = np.sqrt(floor[varies] / diagonal[varies])
        within = within * scale[:, None] * scale[None, :]
        dead = raise_ & ~(diagonal > 0)
        within[dead, dead] = floor[dead]
    return within


def column_variances(X, ddof=0):
    """Per-column variances of ``X``, exactly 0 for a constant column.

    ``np.var`` of a constant column whose value is not exactly representable after the mean's
    rounding (1/3, say) is about ``(eps * value)**2``, not 0; a scale built from it would be
    rounding noise.
    """
    variances = X.var(axis=0, ddof=ddof)
    variances[np.ptp(X, axis=0) == 0] = 0.0
    return variances


@dataclass
class PointMoments(Sized):
    r"""Column moments of a set of points about a fixed centre :math:`c`: their number,
    :math:`\sum_i (x_i - c)`, :math:`\sum_i (x_i - c)(x_i - c)^\top` (``full``; else its diagonal)
    and the columns' least and greatest values. They add over disjoint sets of points (the
    extremes by min and max), so a cluster sums them over its shards; with :math:`c` near the
    mean (the client's sample mean) the centred moments lose nothing to cancellation."""

    n: int
    centre: np.ndarray  # (d,)
    sums: np.ndarray  # (d,)
    squares: np.ndarray  # (d, d) or (d,)
    low: np.ndarray  # (d,)
    high: np.ndarray  # (d,)

    @classmethod
    def of(cls, X, centre, full):
        Y = X - centre
        return cls(X.shape[0], centre, Y.sum(axis=0), Y.T @ Y if full else np.sum(Y * Y, axis=0),
                   X.min(axis=0), X.max(axis=0))

    def __add__(self, other):
        return PointMoments(self.n + other.n, self.centre, self.sums + other.sums,
                            self.squares + other.squares, np.minimum(self.low, other.low),
                            np.maximum(self.high, other.high))

    def summary(self):
        """``(mean, variances, covariance)`` as :func:`point_summary` gives them (the sample
        variances and covariance, ``ddof=1``; covariance None unless ``full``)."""
        shift = self.sums / self.n
        scatter = self.squares - self.n * (np.outer(shift, shift) if self.squares.ndim == 2
                                           else shift * shift)
        scatter = scatter / max(self.n - 1, 1)
        variances = np.diagonal(scatter).copy() if scatter.ndim == 2 else scatter
        variances[self.high == self.low] = 0.0
        return self.centre + shift, variances, scatter if scatter.ndim == 2 else None


def point_summary(X, full):
    """``(mean, variances, covariance)`` of points ``X``: the column means, the sample
    variances (``ddof=1``, exactly 0 for a constant column) and, when ``full``, the sample
    covariance (None otherwise). What a Gaussian model scales its priors by."""
    covariance = np.atleast_2d(np.cov(X.T)) if full else None
    return X.mean(axis=0), column_variances(X, ddof=1), covariance


def data_scale(variances):
    """The points' scale: the mean variance of the columns that vary, or 1 when every column is
    constant (points with no spread have no scale of their own). A constant column has no
    scale to average in: counting it as 0 shrank the scale by a share per such column, and
    with it every prior set from it (two blobs beside a column of 7s: the tree's leaves went
    from 2 to 5-8)."""
    variances = np.asarray(variances, float)
    varying = variances[variances > 0]
    return float(varying.mean()) if varying.size else 1.0


def _log_student(maha, nu, d, log_det_shape):
    """Log density of a d-variate Student-t with ``nu`` dof at squared Mahalanobis ``maha``."""
    return (gammaln(0.5 * (nu + d)) - gammaln(0.5 * nu) - 0.5 * d * np.log(nu * np.pi)
            - 0.5 * log_det_shape - 0.5 * (nu + d) * np.log1p(maha / nu))


def log_multivariate_gamma(a, d):
    r""":math:`\log\Gamma_d(a) = \tfrac{d(d-1)}4\log\pi + \sum_{j=0}^{d-1}\log\Gamma(a - j/2)`,
    elementwise over an array ``a`` (scipy's ``multigammaln`` takes a scalar only)."""
    a = np.asarray(a, dtype=float)
    return 0.25 * d * (d - 1) * np.log(np.pi) + gammaln(a[..., None] - 0.5 * np.arange(d)).sum(-1)


def _gamma_kl(shape, rate, shape0, rate0):
    r"""KL(Gamma(a, b) || Gamma(a0, b0)) (shape, rate), broadcast over ``rate``'s shape.

    .. math:: (a - a_0)\psi(a) - \log\Gamma(a) + \log\Gamma(a_0) + a_0(\log b - \log b_0)
              + a\,(b_0 - b)/b.
    """
    a = shape if np.ndim(rate) == 1 else shape[:, None]
    return ((a - shape0) * digamma(a) - gammaln(a) + gammaln(shape0)
            + shape0 * (np.log(rate) - np.log(rate0)) + a * (rate0 - rate) / rate)
