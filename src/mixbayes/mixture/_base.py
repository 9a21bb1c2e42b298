r"""The coordinate-ascent variational Bayes loop for finite mixtures, written once.

A finite Bayesian mixture with Dirichlet weights,

.. math::

    \lambda \sim \mathrm{Dir}(\alpha\mathbf 1_K),\quad z_i \sim \mathrm{Cat}(\lambda),\quad
    x_i \mid z_i = k \sim f(\cdot \mid \beta_k),\quad \beta_k \sim G_0,

is fitted under the mean-field family :math:`q(\lambda)\prod_k q(\beta_k)\prod_i q(z_i)` by
alternating two blocks, each an exact coordinate maximum of the ELBO:

* local: :math:`r_{ik} \propto \exp\{E[\log\lambda_k] + E[\log f(x_i \mid \beta_k)]\}`;
* global: :math:`q(\lambda) = \mathrm{Dir}(\alpha + N)`, :math:`N_k = \sum_i r_{ik}`, and
  :math:`q(\beta_k)` the conjugate posterior given the weighted sufficient statistics;
  optionally followed by empirical-Bayes updates of the prior hyperparameters.

With :math:`L_{ik} = E[\log\lambda_k] + E[\log f(x_i\mid\beta_k)]` and :math:`r_i = \mathrm{softmax}(L_i)`,

.. math::

    \mathrm{ELBO} = \sum_i \big(\log h(x_i) + \operatorname{logsumexp}_k L_{ik}\big)
        - \mathrm{KL}(q(\lambda)\,\|\,p(\lambda)) - \sum_k \mathrm{KL}(q(\beta_k)\,\|\,p(\beta_k)),

where :math:`h` is the family's base measure (for documents, the multinomial coefficient), so
the ELBO bounds :math:`\log p(x)` with every constant included. It is evaluated right after the
local step, where it costs nothing extra. A *family* (see :mod:`mixbayes.families`) supplies
the observation maths; this module owns restarts, convergence, warnings and the final E-step.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils.validation import check_is_fitted

from .. import _engines
from .._kernel_tools import threads
from .._progress import progress
from .._schema import Schema
from .._validation import (
    check_n_components,
    check_n_features,
    check_random_state,
    plural,
    validate_params,
)
from ..exceptions import ConvergenceWarning
from ..families.dirichlet import fit_polya_concentration
from ._weights import DirichletWeights


@dataclass
class MixtureState:
    """The global variational factors of a finite mixture and their expectations."""

    weight_concentration: np.ndarray  # parameters of q(lambda): (K,) Dirichlet, (K, 2) sticks
    family_posterior: object  # family-specific posterior of the component parameters
    expected_log_weights: np.ndarray  # (K,) E[log lambda]
    family_expectations: object  # family-specific expectations used by the local step and KL
    weight_prior: float  # alpha (may be fitted)
    family_prior: object  # the family's prior hyperparameter(s) (may be fitted)


@_engines.runs_anywhere
class VariationalMixture(ClusterMixin, BaseEstimator):
    """Base class: restarts, CAVI iterations, convergence, ``predict``/``score``.

    Subclasses implement ``_check_values(X)`` and ``_make_family(X)`` and may override
    ``_family_factory`` (a family scaled by the whole data set in a distributed fit),
    ``_initial_responsibilities(X, family, rng)``, ``_starts`` (all starts at once, e.g. to
    share work between them), ``_warm_up`` (a move applied to a kept start before CAVI) and
    ``_n_kept`` (how many of the ``n_init`` starts are run to convergence; the others are
    screened out by their ELBO after one CAVI iteration).
    """

    # ---------------------------------------------------------------- subclass hooks
    @staticmethod
    def _check_values(X):  # pragma: no cover - abstract
        """Validate the data's values and return them in the family's input form."""
        raise NotImplementedError

    def _check_X(self, X, reset):
        """Check values; remember the width in ``fit``, insist on it afterwards."""
        X = self._check_values(X)
        if reset:
            self.n_features_in_ = X.shape[1]
        else:
            check_n_features(X, self)
        return X

    def _fit_values(self, X):
        """The data's values checked for a fit (what the engine's rows are made of)."""
        return self._check_X(X, reset=True)

    def _make_family(self, X):  # pragma: no cover - abstract
        raise NotImplementedError

    def _family_factory(self, sample, rows):
        """A function returning a fresh family for the whole data set ``rows`` (an
        :class:`~mixbayes._engines.Rows`), of which ``sample`` is held here; a family scaled
        by the data reads ``rows.summary``. Here the family depends on the parameters alone."""
        return lambda: self._make_family(sample)

    def _initial_responsibilities(self, X, family, rng):
        """Random responsibilities, each row drawn from a flat Dirichlet."""
        return rng.dirichlet(np.ones(self.n_components), size=X.shape[0])

    def _starts(self, X, family, rngs):
        """Yield the starting responsibilities of every run, in order, one at a time (so that
        only the starts kept by the screen stay in memory)."""
        for rng in rngs:
            yield self._initial_responsibilities(X, family, rng)

    def _warm_up(self, X, resp, rng):
        """Move a kept start before CAVI begins (nothing here)."""
        return resp

    _tol_unit = ""  # what tol is measured in, for the convergence warning

    def _tol_scale(self, n_samples):
        """``tol`` is compared with the ELBO change divided by this (1: an absolute change)."""
        return 1.0

    def _n_kept(self):
        """How many starts run to convergence: all of them here."""
        return self.n_init

    # ---------------------------------------------------------------- the two blocks
    def _global_step(self, data, resp, family, weight_prior, fit_priors=False, counts=None):
        """Update q(lambda), q(beta) from responsibilities (and the priors when ``fit_priors``).

        With ``fit_priors`` each prior is first set to the exact maximiser of the ELBO over
        (prior, posterior) given the statistics (see
        :func:`~mixbayes.families.dirichlet.fit_polya_concentration`), then the posteriors are
        the conjugate updates under the new priors: one exact block step, so the ELBO cannot
        decrease.
        """
        if counts is None:
            counts = resp.sum(axis=0)
        stats = family.sufficient_statistics(data, resp)
        return self._global_from_stats(stats, counts, family, weight_prior, fit_priors)

    def _global_from_stats(self, stats, counts, family, weight_prior, fit_priors=False):
        """The global step from the additive statistics alone: the family's ``stats`` and the
        expected cluster sizes ``counts``. Statistics of disjoint shards add, so a distributed
        fit (:mod:`mixbayes.distributed`) calls this with their sums."""
        if fit_priors:
            weight_prior = fit_polya_concentration(
                counts, counts.sum(keepdims=True), self.n_components, weight_prior
            )
            family.fit_prior(stats)
        weights = self._weights(weight_prior)
        weight_concentration = weights.posterior(counts)
        posterior = family.posterior(stats)
        expectations = family.expectations(posterior)
        return MixtureState(
            weight_concentration, posterior, weights.expected_log(weight_concentration),
            expectations, weight_prior, family.prior,
        )

    def _joint_log_evidence(self, data, state, family):
        """Return ``L`` of shape (n, K): E[log lambda_k] + E[log f(x_i | beta_k)]."""
        return state.expected_log_weights + family.expected_log_likelihood(
            data, state.family_expectations
        )

    def _global_terms(self, state, family):
        """The KL terms of the ELBO for the global factors (negated)."""
        return self._weights(state.weight_prior).neg_kl(
            state.weight_concentration, state.expected_log_weights
        ) + family.neg_kl(state.family_posterior, state.family_expectations)

    def _elbo(self, data, resp, state, family):
        """The ELBO at arbitrary responsibilities ``resp`` and global ``state``, term by term.

        Used by tests to check that each block update is a coordinate maximum.
        """
        log_base = family.log_base_measure(data)
        L = self._joint_log_evidence(data, state, family)
        with np.errstate(divide="ignore", invalid="ignore"):
            entropy = -np.sum(np.where(resp > 0, resp * np.log(resp), 0.0))
        return float(log_base.sum() + np.sum(resp * L) + entropy + self._global_terms(state, family))

    # ---------------------------------------------------------------- fitting
    def _check_params(self, n_samples):
        check_n_components(self.n_components, n_samples)

    def fit(self, X, y=None):
        """Fit the mixture by CAVI, keeping the best of ``n_init`` restarts.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        self.fit_predict(X)
        return self

    def _begin_fit(self, X, checked=False):
        """Check parameters and data (``checked``: the data are checked already, the
        parameters too); return the data and one independent generator per run."""
        if checked:
            self.n_features_in_ = X.shape[1]
        else:
            validate_params(self, self._parameter_rules)
            X = self._check_X(X, reset=True)
            self._check_params(X.shape[0])
        seeds = np.random.SeedSequence(
            check_random_state(self.random_state).integers(2**63)
        ).spawn(self.n_init)
        return X, [np.random.default_rng(seed) for seed in seeds]

    def fit_predict(self, X, y=None):
        """Fit and return the cluster of every sample (same as ``fit(X).predict(X)``).

        The rows are wherever ``X`` keeps them (:func:`mixbayes._engines.engine_for`): a dask
        array (or a :class:`~mixbayes.distributed.ShardedCorpus`) is fitted on the running
        ``dask.distributed`` client, and ``labels_`` is then a dask array. The start runs on
        at most :func:`~mixbayes._engines.start_sample` evenly spaced rows, here, whatever the
        engine; every CAVI iteration then reads all rows. The kernels use at most ``n_jobs``
        threads (:func:`mixbayes._kernel_tools.threads`).
        """
        validate_params(self, self._parameter_rules)
        with threads(self.n_jobs):
            return self._fit_labels(X)

    def _fit_labels(self, X):
        """The fit (parameters validated), under the threads of ``n_jobs``; the labels."""
        self._check_engine(_engines.engine_for(X))
        rows = _engines.engine_for(X).rows(X, self._fit_values, self._points)
        self._check_params(rows.n)
        sample, rngs = self._begin_fit(
            rows.sample(max(_engines.start_sample(), self.n_components, 2)), checked=True)
        make_family = self._family_factory(sample, rows)
        family = make_family()
        data = family.prepare(sample)
        rows.prepare(family, sample, data)
        self._fit_starts(sample, family, data, rngs, lambda run, resp: self._fit_single(
            sample, data, rngs[run], run, resp, rows=rows, make_family=make_family),
            make_family)
        return self.labels_

    _points = False  # whether a 1-D input is one feature (points), for the engine's rows

    def _check_engine(self, engine):
        """Refuse an engine the settings cannot run on (every engine runs CAVI)."""

    def _fit_starts(self, X, family, data, rngs, fit_one, make_family=None):
        """Screen the starts drawn from the sample ``X`` (prepared as ``data`` by ``family``;
        ``make_family()`` a fresh family), run the kept ones by ``fit_one(run, resp)`` (a dict
        as :meth:`_fit_single` returns) and keep the best: the restarts, written once."""
        starts = enumerate(self._starts(X, family, rngs))
        n_kept = min(self._n_kept(), self.n_init)
        self.start_elbos_ = np.empty(0)
        if n_kept < self.n_init:
            starts = self._screen(X, data, starts, n_kept, make_family)
        best = None
        for run, resp in starts:
            result = fit_one(run, resp)
            if best is None or result["elbo"] > best["elbo"]:
                best = result
        if not best["converged"]:
            warnings.warn(
                f"{type(self).__name__}: the best of {plural(n_kept, 'run')} did not converge in "
                f"max_iter={self.max_iter} iterations (last ELBO change{self._tol_unit} "
                f"{best['last_change']:.3g} > tol={self.tol}). Increase max_iter or tol.",
                ConvergenceWarning,
                stacklevel=3,
            )
        self._set_fitted(best)

    def _screen(self, X, data, starts, n_kept, make_family=None):
        """Score every start by the ELBO after one CAVI iteration from it (a global step, then
        the local step), record the scores as ``start_elbos_`` and return the ``n_kept``
        best ``(run, resp)`` pairs, best first (ties to the earlier run)."""
        fit_priors = bool(getattr(self, "fit_priors", False))
        kept, scores = [], []
        make_family = make_family or (lambda: self._make_family(X))
        for run, resp in starts:
            family = make_family()  # fresh: empirical Bayes changes the prior
            state = self._global_step(data, resp, family, float(self._weight_prior()), fit_priors)
            log_norm = family.responsibilities(
                data, state.family_expectations, state.expected_log_weights
            )[1]
            scores.append(float(family.log_base_measure(data).sum()) + float(log_norm.sum())
                          + self._global_terms(state, family))
            kept.append((scores[-1], run, resp))
            kept.sort(key=lambda item: (-item[0], item[1]))
            del kept[n_kept:]  # the starts screened out are not kept in memory
        self.start_elbos_ = np.asarray(scores)
        return [(run, resp) for _, run, resp in kept]

    def _fit_single(self, X, data, rng, run, resp, rows=None, make_family=None):
        """One run of CAVI from the start ``resp`` of the sample ``X`` (prepared as ``data``)
        over ``rows`` (by default ``X`` itself, one block here); a dict of its ELBO, trace,
        state, labels and convergence."""
        if rows is None:
            rows = _engines.OneBlock(X)
            rows.prepare(self._make_family(X), X, data)
        # a fresh family per run: empirical Bayes changes its prior, and its reused buffers
        # must not overwrite the state kept from an earlier run
        family = (make_family or (lambda: self._make_family(X)))()
        family.reuse_buffers = rows.reuses_buffers
        fit_priors = bool(getattr(self, "fit_priors", False))

        # buffer order: the local step overwrites the previous responsibilities (used up by the
        # last global step) and the global step overwrites the previous statistics and
        # expectations (used up by this local step), so the state returned - the one that
        # produced the last responsibilities - is intact whichever way the loop ends
        def global_step(local, state):
            stats, counts = rows.statistics(family, local)
            return self._global_from_stats(stats, counts, family, state.weight_prior, fit_priors)

        def local_step(state):
            return rows.local_step(family, state)

        state = self._start_state(X, data, family, rng, resp)
        result = self._cavi(run, rows.n, family, state, local_step, global_step)
        if self._merge_trials:
            result = self._merge_moves(run, rows, family, result, local_step, global_step,
                                       fit_priors)
        result["labels"] = rows.labels(result.pop("local"))
        return result

    def _merge_round(self, run, rows, family, result, local_step, global_step, fit_priors,
                     max_iter, better_than):
        """The first of the candidate merges of the converged ``result`` whose proposal and
        whose CAVI run from it both end above ``better_than``: that run, or None."""
        state = result["state"]
        stats, counts = rows.statistics(family, result["local"])
        for keep, drop in self._merge_candidates(state, counts)[:self._merge_trials]:
            merged_counts = counts.copy()
            merged_counts[keep] += merged_counts[drop]
            merged_counts[drop] = 0.0
            trial = self._global_from_stats(stats.merged(keep, drop), merged_counts, family,
                                            state.weight_prior, fit_priors)
            if local_step(trial)[1] + self._global_terms(trial, family) <= better_than:
                continue
            # the run is checked too: where rounding makes the posterior scale indefinite
            # (no floor, a duplicated column) the proposal's ELBO can read high
            run_from = self._cavi(run, rows.n, family, trial, local_step, global_step, max_iter)
            if run_from["elbo"] > better_than:
                return run_from
        return None

    # merge moves after CAVI: how many candidate pairs a round tries (0: no merge moves)
    _merge_trials = 0

    def _merge_candidates(self, state, counts):  # pragma: no cover - abstract
        """Pairs ``(keep, drop)`` of components in use, the likeliest merges first."""
        raise NotImplementedError

    def _merge_moves(self, run, rows, family, result, local_step, global_step, fit_priors):
        r"""Merge moves (Hughes & Sudderth 2013) after CAVI has converged, until none helps.

        CAVI only ever moves responsibility a little at a time, so where a start splits one
        cluster between two components both keep their half: each half explains its points
        better than the whole would, and emptying one takes many iterations of lower ELBO. A
        merge proposes the jump: component ``drop``'s responsibilities given to ``keep``.
        The statistics are sums over points, so the merged global factors come from the
        current statistics without a pass over the data; one local step then gives the ELBO
        of the proposal (coordinate optimal in the local factors). Where that is higher than
        the converged ELBO by more than ``tol``, CAVI goes on from it, and its run is kept if
        it ends higher too (:meth:`_merge_round`). The trace rises through a kept merge;
        each round tries :attr:`_merge_trials` pairs (:meth:`_merge_candidates`) at one
        data pass each. A rejected proposal's local step must not overwrite the kept local
        state: the families that reuse their buffers (the documents') have no merge moves.
        """
        scale = self._tol_scale(rows.n)
        for _ in range(self.n_components - 1):  # each merge kept empties a component
            left = self.max_iter - result["trace"].size  # max_iter counts every iteration
            if not result["converged"] or left < 1:
                break
            merged = self._merge_round(run, rows, family, result, local_step, global_step,
                                       fit_priors, left, result["elbo"] + self.tol * scale)
            if merged is None:
                break
            merged["trace"] = np.concatenate([result["trace"], merged["trace"]])
            result = merged
        return result

    def _start_state(self, X, data, family, rng, resp):
        """The global factors a run starts from: the warm-up move, then one global step."""
        resp = self._warm_up(X, resp, rng)
        fit_priors = bool(getattr(self, "fit_priors", False))
        return self._global_step(data, resp, family, float(self._weight_prior()), fit_priors)

    def _cavi(self, run, n_samples, family, state, local_step, global_step, max_iter=None):
        r"""Alternate ``local_step(state) -> (local, evidence)`` and ``global_step(local, state)
        -> state`` until the ELBO settles; ``evidence`` is the data's part of the ELBO
        (:math:`\sum_i \log h(x_i) + \operatorname{logsumexp}_k L_{ik}`). In process the
        local result is the responsibilities; in a distributed fit, futures of the shards'
        statistics. ``local`` in the result is the local step under the returned ``state``.
        At most ``max_iter`` iterations (None: the model's ``max_iter``)."""
        trace = []
        converged, last_change = False, np.inf
        scale = self._tol_scale(n_samples)
        max_iter = self.max_iter if max_iter is None else max_iter
        with progress(max_iter, self.verbose, f"CAVI run {run + 1}/{self.n_init}",
                      upper_bound=True) as bar:
            for _ in range(max_iter):
                local, evidence = local_step(state)
                trace.append(evidence + self._global_terms(state, family))
                bar.update()
                if len(trace) > 1:
                    last_change = trace[-1] - trace[-2]
                    bar.set_postfix_str(f"ELBO {trace[-1]:.6g}", refresh=False)
                    if abs(last_change) / scale <= self.tol:
                        converged = True
                        break
                state = global_step(local, state)
        if not converged:
            # the loop ended on a global step: one more local step, so that labels_ are what
            # predict(X) gives under the kept state
            local = local_step(state)[0]
        return dict(
            elbo=trace[-1], trace=np.asarray(trace), state=state, local=local,
            converged=converged, last_change=abs(last_change) / scale,
        )

    def _set_fitted(self, best):
        state = best["state"]
        self.elbo_trace_ = best["trace"]
        self.elbo_ = float(best["elbo"])
        self.n_iter_ = len(best["trace"])
        self.converged_ = bool(best["converged"])
        self.labels_ = best["labels"]
        self._store_state(state)

    def _store_state(self, state):
        """Expose the global factors as public fitted attributes (``*_``)."""
        self.weight_concentration_ = state.weight_concentration
        self.weights_ = self._weights(state.weight_prior).mean(state.weight_concentration)
        self.weight_prior_ = state.weight_prior

    # ---------------------------------------------------------------- what the report shows
    _report_kind = ("gaussian", "clusters")  # its page and view (mixbayes.report)

    def _kept_partitions(self):
        """The partitions a sampler kept (a Gibbs fit's), or None."""
        return getattr(self, "label_samples_", None)

    # ---------------------------------------------------------------- what persist stores
    _SAVED_ARRAYS = {
        "elbo_trace_": (("*",), "real"), "labels_": (("n",), "label"),
        "weights_": (("K",), ">=0"), "start_elbos_": (("*",), "real", "optional"),
    }
    _SAVED_SCALARS = {"n_features_in_": "count", "n_iter_": "int", "converged_": "bool",
                      "elbo_": "real", "weight_prior_": "+"}

    def _persist_schema(self, scalars):
        """The fitted attributes :mod:`mixbayes.persist` stores (a
        :class:`~mixbayes._schema.Schema`); subclasses add their own."""
        return Schema(dict(self._SAVED_ARRAYS), dict(self._SAVED_SCALARS), probe=self._probe)

    def _probe(self):
        """The probabilities of one sample: a broken loaded model fails on them."""
        return self.predict_proba(np.ones((1, self.n_features_in_), dtype=np.int64))

    def _restore_state(self):  # pragma: no cover - abstract
        """Rebuild ``(state, family)`` from the public fitted attributes."""
        raise NotImplementedError

    # ---------------------------------------------------------------- prediction
    def _weight_prior(self):
        return 1.0 if self.weight_concentration_prior is None else self.weight_concentration_prior

    def _weights(self, prior):
        """The prior on the mixture weights (finite Dirichlet unless a subclass offers more)."""
        return DirichletWeights(prior)

    def _weight_expectations(self):
        """E[log lambda] under the fitted q(lambda)."""
        return self._weights(self.weight_prior_).expected_log(self.weight_concentration_)

    def _local(self, X):
        """Responsibilities and log normalisers of new data under the fitted factors."""
        check_is_fitted(self)
        X = self._check_X(X, reset=False)
        state, family = self._restore_state()
        data = family.prepare(X)
        resp, log_norm, _ = family.responsibilities(
            data, state.family_expectations, state.expected_log_weights
        )
        return resp, family.log_base_measure(data) + np.ravel(log_norm)

    def partition_summary(self, X=None, loss="vi", level=0.95, n_draws=200, random_state=0):
        """The posterior of the partition (:func:`mixbayes.partition.summarise`): the
        partition of least expected ``loss``, its credible ball at ``level`` and the posterior
        of the number of clusters, from ``n_draws`` partitions drawn from the
        responsibilities of ``X`` (the training points or documents). A mean-field posterior
        ignores the dependence between assignments, so its ball is narrower than the exact
        posterior's. (A Gibbs-fitted DMM reads its kept draws instead; ``X`` not needed.)"""
        from .. import partition

        draws = self._partition_draws(X, n_draws, random_state)
        return partition.summarise(draws, loss=loss, level=level, random_state=random_state)

    def _partition_draws(self, X, n_draws, random_state):
        from .. import partition

        check_is_fitted(self, "labels_")
        if X is None:
            raise ValueError("X: a variational fit keeps no draws; pass the training data to "
                             "draw partitions from its responsibilities.")
        return partition.draws_from_responsibilities(self.predict_proba(X), n_draws,
                                                     random_state)

    def predict_proba(self, X):
        """Posterior probabilities q(z_i = k) of every sample under the fitted global factors.

        Returns
        -------
        ndarray of shape (n_samples, n_components)
            A dask array chunked like the rows when ``X`` is dask data: each chunk is computed
            on its worker (:func:`mixbayes._engines.map_rows`).
        """
        check_is_fitted(self)
        return _engines.map_rows(X, self._proba, self.n_components)

    def _proba(self, X):
        return self._local(X)[0]

    def predict(self, X):
        """Most probable component of every sample (a dask array for dask data)."""
        check_is_fitted(self)
        return _engines.map_rows(X, self._predict, dtype=np.intp)

    def _predict(self, X):
        return self._local(X)[0].argmax(axis=1)

    def score_samples(self, X):
        r"""Per-sample lower bound on :math:`\log p(x_i \mid \text{training data})`.

        :math:`\log h(x_i) + \operatorname{logsumexp}_k (E[\log\lambda_k] + E[\log f(x_i\mid\beta_k)])`,
        a bound by Jensen's inequality on the log posterior predictive density (a dask array
        for dask data).
        """
        check_is_fitted(self)
        return _engines.map_rows(X, self._score_samples)

    def _score_samples(self, X):
        return self._local(X)[1]

    def score(self, X, y=None):
        """Mean of :meth:`score_samples` over the samples of ``X`` (higher is better)."""
        samples = self.score_samples(X)
        return float(samples.mean().compute() if hasattr(samples, "compute")
                     else np.mean(samples))
