r"""Dirichlet–multinomial mixture of unigrams for document clustering (Bilancia et al. 2023).

.. math::

    \lambda \sim \mathrm{Dir}(\alpha\mathbf 1_K),\quad
    \beta_k \sim \mathrm{Dir}(\theta\mathbf 1_p),\quad
    z_i \sim \mathrm{Cat}(\lambda),\quad
    y_i \mid z_i = k \sim \mathrm{Mult}(y_{i+}, \beta_k).

Every document belongs to one cluster. Two engines fit the same model:

* ``inference="vb"``: coordinate-ascent variational Bayes (:mod:`mixbayes.mixture._base`) with
  :math:`\gamma_{ik} \propto \exp(\sum_l y_{il}E[\log\beta_{kl}] + E[\log\lambda_k])`,
  :math:`\eta_k = \alpha + \sum_i\gamma_{ik}`, :math:`\phi_{kl} = \theta + \sum_i y_{il}\gamma_{ik}`;
* ``inference="gibbs"``: the collapsed Gibbs sampler of :mod:`mixbayes.mixture._gibbs`.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.special import gammaln
from sklearn.utils.validation import check_is_fitted

from .. import _engines
from .._progress import progress
from .._terms import top_terms
from .._validation import Either, Interval, NJobs, Options, RandomState, check_counts
from ..diagnostics import split_rhat
from ..exceptions import ConvergenceWarning
from ..families.multinomial import MultinomialFamily, WordStats, log_multinomial_coefficient
from ..partition import kept_sweeps, point_labels
from ._base import MixtureState, VariationalMixture
from ._gibbs import count_tables, gibbs_sweeps
from ._kmeans import spherical_kmeans_labels, tfidf_rows


AUTO_SWEEPS = 200  # the most warm-up sweeps init_sweeps="auto" runs
AUTO_PATIENCE = 10  # ... which stop after 10 sweeps without a new high of the log joint
AUTO_WAIT_SHARE = 0.5  # ... or, after a long climb, half as many sweeps as the climb took
AUTO_RIVAL_PATIENCE = 5  # the random rival, while below the kept start, after 5 sweeps


class DirichletMultinomialMixture(VariationalMixture):
    r"""Bayesian mixture of unigrams: cluster documents given their word counts.

    Parameters
    ----------
    n_components : int, default=10
        Number of clusters :math:`K` (at most the number of documents).
    weight_concentration_prior : float or None, default=None
        Symmetric Dirichlet concentration :math:`\alpha` on the cluster weights; None means 1.
    word_concentration_prior : float, default=0.1
        Symmetric Dirichlet concentration :math:`\theta` on each cluster's word distribution
        (0.1 beat :math:`1/p` on every K tried on the dblp3 data).
    fit_priors : bool, default=False
        Fit :math:`\alpha` and :math:`\theta` by empirical Bayes (each update maximises the ELBO,
        so the bound stays monotone). VB only.
    inference : {"vb", "gibbs"}, default="vb"
        Coordinate-ascent variational Bayes, or the collapsed Gibbs sampler.
    init : {"auto", "kmeans++", "random"}, default="auto"
        Starting assignment: spherical k-means++ on tf-idf rows refined by a few spherical
        k-means steps (``"kmeans++"``), or rows drawn from a flat Dirichlet (``"random"``, a
        uniform-random start). ``"auto"`` (VB): the k-means++ starts are screened as with
        ``"kmeans++"``, and every kept one meets a rival, a uniform-random assignment drawn
        from the same run's stream; both are warmed up (``init_sweeps``) and the one whose
        sweeps reach the higher collapsed log joint :math:`\log p(y, z)` goes on to CAVI (a
        Gibbs fit starts its chains from k-means++). Until version 0.2 the default was
        ``"kmeans++"``: on short documents in a few large, overlapping clusters, k-means on
        tf-idf (NMI 0.02 to the truth on the corpus below) puts most documents in one cluster
        that sweeps empty only slowly, while the sweeps from a random assignment separate the
        clusters in 100-200 sweeps. On 12,000 simulated documents of 7 words in 8 clusters
        (word concentration 0.5, seeds 0-2) the k-means++ start ended 1,300-2,000 nats of ELBO
        below the 200-sweep Gibbs chains from k-means++ (NMI 0.17-0.38 against 0.30-0.51), the
        rival 1,600-3,800 above them (NMI 0.56-0.57); on issue 13's 20,000-document corpus,
        classic3 and dblp3 the k-means++ start wins or ties, and the rival costs its sweeps (on
        issue 13's corpus 10-25 % on top of the k-means++ start alone;
        ``bench/bench_dmm_start.py``).
    init_sweeps : "auto" or int, default="auto"
        Collapsed Gibbs sweeps applied to every kept start (and every Gibbs chain's start)
        before CAVI begins. CAVI moves a document only when another cluster, still holding
        that document, explains it better, and so stalls near its start; collapsed sweeps (each
        document removed, then re-drawn) escape such starts. ``"auto"`` sweeps until ten pass
        without a new high of the collapsed log joint (by more than ``tol`` per document), or
        half as many as the climb to the last high took when that is more, at most 200 (per
        start), and starts CAVI from the highest state seen; an integer runs exactly that
        many (0 turns the warm-up off). The half-the-climb wait is new in version 0.2 too:
        from a random start on overlapping clusters the chain climbs for 100-200 sweeps with
        pauses longer than ten (on the corpus of ``init``, seed 2, ten stopped the rival at 58
        sweeps, 1,600 nats of ELBO below where the longer wait ends); where the climb ends in
        under 20 sweeps (issue 13's corpus, classic3, dblp3) the rule is the ten sweeps it was.
        Until version 0.2 the default was 5, tuned on tweet and googlenews_t (K = 89 and 152,
        where five sweeps raise the final ELBO by about 3,500 and 11,000 nats); with few large
        clusters five sweeps stop far from where the chain is heading: on 12,000 simulated
        documents of 7 words in 8 overlapping clusters the fit ended 1,600 nats of ELBO below
        200 Gibbs sweeps (NMI 0.10 against 0.30); the automatic warm-up ends 1,400-1,700 nats
        above the old start, but from k-means++ alone still below the 200 sweeps on some
        seeds (see ``init``).
    n_init : int, default=5
        Starts (VB) or chains (Gibbs). VB scores every start by its ELBO after one CAVI
        iteration (``start_elbos_``) and runs only the ``n_keep`` best to convergence (their
        warm-up sweeps first); the run with the highest final ELBO is kept. Gibbs runs every
        chain and keeps the one with the highest log joint density.
    n_keep : int or None, default=1
        VB only: how many of the ``n_init`` screened starts are warmed up and run to
        convergence; None runs all of them (the only strategy before version 0.2, ``n_init``
        times the cost). A start's ELBO after one iteration mostly ranks the starts as their
        final ELBOs do: on the simulated 20,000-document corpus of ``bench/bench_dmm.py
        --simulated`` (K = 20) the screen kept the best of the five runs on each of 3 seeds,
        at a quarter to a third of the time; on dblp3 and tweet it sometimes keeps a start
        that ends some nats below the best (NMI unchanged within the seeds' spread).
    max_iter : int, default=500
        Maximum CAVI iterations per restart.
    tol : float, default=1e-3
        Stop when the change of the ELBO between iterations, per sample, is at most ``tol``
        (:math:`|\Delta\mathrm{ELBO}| \le \mathrm{tol}\cdot n`, scikit-learn's convention;
        ``converged_`` says whether it was met). Per sample, so a large corpus does not chase
        the last few nats: on 20,000 documents the slow tail of a fit in a poorer mode
        (documents trickling between two clusters, 0.1-30 nats per iteration) took 41
        iterations at an absolute 1e-3 and takes 8 now, 3e-5 of the ELBO and 0.0006 NMI away.
    n_sweeps : int, default=200
        Gibbs sweeps per chain (``inference="gibbs"`` only).
    max_samples : int, default=500
        Gibbs only: most draws of the partition kept from the kept chain's second half
        (thinned evenly; ``label_samples_``, int32, n_samples each); 0 keeps none.
    point_estimate : {None, "vi", "binder"}, default=None
        Gibbs only: also store :attr:`point_labels_`, the partition of the kept draws of least
        posterior expected VI (or Binder's loss; :func:`mixbayes.partition.point_estimate`),
        an answer that weighs every kept draw rather than one state. ``labels_`` stays the
        highest log joint state (``bench/bench_partition.py`` compares the two: neither is
        closer to the truth on every set).
    random_state : int, Generator or None, default=0
        Seed; every restart and chain gets its own independent stream.
    n_jobs : int or None, default=None
        Threads the fit's numba kernels may use (scikit-learn's convention): None, the
        library's policy (every core, for kernel calls of at least 5 million multiply-adds;
        smaller ones run serially); 1 serial; -1 every core; n that many. Results do not depend
        on it. BLAS runs on one thread inside a fit whatever it is (see
        :mod:`mixbayes._kernel_tools`).
    verbose : int, default=0
        0: silent; 1: a progress bar for runs that take over a second; 2: always a bar.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster of every training document (argmax of the final responsibilities).
    weights_ : ndarray of shape (n_components,)
        Posterior mean cluster weights :math:`E[\lambda]`.
    weight_concentration_ : ndarray of shape (n_components,)
        :math:`\eta`, the Dirichlet parameters of :math:`q(\lambda)`.
    word_concentration_ : ndarray of shape (n_components, n_features)
        :math:`\phi`, the Dirichlet parameters of each :math:`q(\beta_k)`.
    components_ : ndarray of shape (n_components, n_features)
        Posterior mean word distributions :math:`E[\beta_k]` (rows sum to one).
    weight_prior_, word_prior_ : float
        The priors :math:`\alpha, \theta` in force at the end (fitted when ``fit_priors``).
    elbo_trace_ : ndarray
        ELBO after every CAVI iteration of the kept run; a true lower bound on
        :math:`\log p(y)` (the multinomial coefficient is included). For Gibbs, the single
        ELBO of the variational state built from the kept sample.
    elbo_ : float
        Last value of ``elbo_trace_``.
    log_joint_trace_ : ndarray of shape (n_sweeps,)
        Gibbs only: exact :math:`\log p(y, z)` after every sweep of the kept chain.
    label_samples_ : ndarray of shape (n_kept, n_samples)
        Gibbs only: the kept chain's partitions over its second half, thinned to at most
        ``max_samples`` (:meth:`partition_summary` reads them).
    point_labels_ : ndarray of shape (n_samples,)
        With ``point_estimate`` set: the least expected-loss partition of ``label_samples_``,
        clusters numbered 0.. by decreasing size (not the components' numbers: ``predict``
        and ``components_`` follow ``labels_``).
    n_iter_ : int
        Iterations (VB) or sweeps (Gibbs) of the kept run.
    converged_ : bool
        VB: whether the kept run met ``tol``. Gibbs: whether the kept chain's log joint density
        looks stationary over the second half of its sweeps: the split :math:`\hat R`
        (:func:`~mixbayes.diagnostics.split_rhat`) of those draws is at most 1.1, or undefined
        because they are all equal (the chain sits in one state). Fewer than 8 sweeps are too
        few to judge and count as not converged. When not converged a ``ConvergenceWarning``
        is raised (increase ``n_sweeps``).
    start_elbos_ : ndarray of shape (n_init,)
        VB: the ELBO after one CAVI iteration from every start, as screened (empty when every
        start is run, ``n_keep=None`` or ``n_keep >= n_init``).
    n_features_in_ : int

    Notes
    -----
    Empty documents are allowed: their responsibilities follow the cluster weights alone
    (:math:`\gamma_{ik}\propto\exp E[\log\lambda_k]`), which is what the model implies.
    Terms that no document uses keep the prior :math:`\theta` in every cluster.
    """

    _parameter_rules = {
        "n_components": Interval("int", 1),
        "weight_concentration_prior": Interval("real", 0, None, "neither", allow_none=True),
        "word_concentration_prior": Interval("real", 0, None, "neither"),
        "fit_priors": Options((False, True)),
        "inference": Options(("vb", "gibbs")),
        "init": Options(("auto", "kmeans++", "random")),
        "init_sweeps": Either((Options(("auto",)), Interval("int", 0))),
        "n_init": Interval("int", 1),
        "n_keep": Interval("int", 1, allow_none=True),
        "max_iter": Interval("int", 1),
        "tol": Interval("real", 0),
        "n_sweeps": Interval("int", 1),
        "max_samples": Interval("int", 0),
        "point_estimate": Options((None, "vi", "binder")),
        "random_state": RandomState(),
        "n_jobs": NJobs(),
        "verbose": Interval("int", 0),
    }

    def __init__(
        self,
        n_components=10,
        *,
        weight_concentration_prior=None,
        word_concentration_prior=0.1,
        fit_priors=False,
        inference="vb",
        init="auto",
        init_sweeps="auto",
        n_init=5,
        n_keep=1,
        max_iter=500,
        tol=1e-3,
        n_sweeps=200,
        max_samples=500,
        point_estimate=None,
        random_state=0,
        n_jobs=None,
        verbose=0,
    ):
        self.n_components = n_components
        self.weight_concentration_prior = weight_concentration_prior
        self.word_concentration_prior = word_concentration_prior
        self.fit_priors = fit_priors
        self.inference = inference
        self.init = init
        self.init_sweeps = init_sweeps
        self.n_init = n_init
        self.n_keep = n_keep
        self.max_iter = max_iter
        self.tol = tol
        self.n_sweeps = n_sweeps
        self.max_samples = max_samples
        self.point_estimate = point_estimate
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    # ------------------------------------------------------------------ hooks of the loop
    @staticmethod
    def _check_values(X):
        return check_counts(X, "X")

    def _make_family(self, X):
        return MultinomialFamily(self.word_concentration_prior)

    def _starts(self, X, family, rngs):
        """Starting responsibilities of every run (one-hot for the k-means++ start, whose
        tf-idf rows are computed once for all runs)."""
        if self.init == "random":
            yield from super()._starts(X, family, rngs)
            return
        tfidf = tfidf_rows(X)
        for rng in rngs:
            yield np.eye(self.n_components)[
                spherical_kmeans_labels(X, self.n_components, rng, tfidf=tfidf)]

    def _warm_up(self, X, resp, rng):
        """Collapsed Gibbs sweeps from the hard assignment of ``resp`` (:meth:`_sweep_from`);
        with ``init="auto"`` (VB) a uniform-random assignment drawn from ``rng`` is swept the
        same way, and the one whose sweeps reached the higher collapsed log joint is kept."""
        if self.init_sweeps == 0:
            return resp
        best, best_lj, sweeps = self._sweep_from(X, resp.argmax(axis=1), rng)
        self._warm_up_start = "kmeans++" if self.init != "random" else "random"
        if self.init == "auto" and self.inference == "vb":
            rival, rival_lj, more = self._sweep_from(
                X, rng.integers(0, self.n_components, X.shape[0]), rng, behind=best_lj)
            sweeps += more
            if rival_lj > best_lj:
                best, best_lj, self._warm_up_start = rival, rival_lj, "random"
        self._warm_up_sweeps = sweeps
        return np.eye(self.n_components)[best]

    def _sweep_from(self, X, z, rng, behind=-np.inf):
        """``(z, log joint, sweeps)``: ``init_sweeps`` collapsed Gibbs sweeps from ``z`` (the
        last state), or with ``"auto"`` sweeps until ``AUTO_PATIENCE`` pass without a new high
        of the log joint by more than ``tol`` per document, or ``AUTO_WAIT_SHARE`` times the
        sweeps up to the last such high when that is more (at most ``AUTO_SWEEPS``; the
        highest state). While the highest log joint is below ``behind`` (the rival's: the kept
        start's), ``AUTO_RIVAL_PATIENCE`` sweeps without a new high stop it: a random start
        that stalls below the k-means++ one is not followed further (on issue 13's corpus it
        was 80,000-220,000 nats below from its third sweep on, and took 12-15 sweeps to stop,
        40 % of the default fit's time on top of the k-means++ start alone), while one on its
        way past it sets a new high nearly every sweep (the overlapping corpus of ``init``: at
        most two sweeps in a row without one before it passed)."""
        auto = self.init_sweeps == "auto"
        sweeps = AUTO_SWEEPS if auto else self.init_sweeps
        threshold = self.tol * X.shape[0]
        best, best_lj, record, n = z, -np.inf, 0, 0
        for z, log_joint in gibbs_sweeps(X, z, self.n_components, self._weight_prior(),
                                         self.word_concentration_prior, sweeps, rng):
            n += 1
            if not auto:
                best, best_lj = z, log_joint
                continue
            if log_joint > best_lj + threshold:  # a new record, by more than tol per document
                record = n
            if log_joint > best_lj:
                best, best_lj = z, log_joint
            if n - record >= max(AUTO_PATIENCE, int(AUTO_WAIT_SHARE * record)) or (
                    best_lj < behind and n - record >= AUTO_RIVAL_PATIENCE):
                break
        return best, best_lj, n

    _tol_unit = " per document"

    def _tol_scale(self, n_samples):
        """``tol`` per document: the same setting means the same precision on 200 documents
        and on 2 million, and the slow tail of a large fit (a few documents changing cluster
        per iteration, each a few nats) is not chased. (The Gaussian mixture keeps an absolute
        ``tol``: its superfluous components empty by a slow drift that a per-sample threshold
        cuts short.)"""
        return float(max(n_samples, 1))

    def _n_kept(self):
        return self.n_init if self.n_keep is None else self.n_keep

    def _store_state(self, state):
        super()._store_state(state)
        family = MultinomialFamily(state.family_prior)
        self.word_concentration_ = family.concentration_of(state.family_posterior)
        self.word_prior_ = float(state.family_prior)
        self.components_ = family.point_estimate(state.family_posterior)

    _report_kind = ("terms", "clusters")

    def _persist_schema(self, scalars):
        schema = super()._persist_schema(scalars)
        schema.arrays.update({
            "weight_concentration_": (("K",), "+"), "word_concentration_": (("K", "p"), "+"),
            "components_": (("K", "p"), ">=0"), "log_joint_trace_": (("*",), "real", "optional"),
            "label_samples_": (("*", "*"), "label", "optional"),
            "point_labels_": (("n",), "int", "optional")})
        schema.scalars["word_prior_"] = "+"
        return schema

    def _restore_state(self):
        family = MultinomialFamily(self.word_prior_)
        posterior = family.posterior_from_concentration(self.word_concentration_)
        state = MixtureState(
            self.weight_concentration_, posterior,
            self._weight_expectations(), family.expectations(posterior),
            self.weight_prior_, self.word_prior_,
        )
        return state, family

    # ------------------------------------------------------------------ the Gibbs engine
    def _fit_labels(self, X):
        if self.point_estimate is not None and self.inference != "gibbs":
            raise ValueError(
                f"point_estimate={self.point_estimate!r} needs inference='gibbs' (the kept "
                "draws); a variational fit's partition posterior is "
                "partition_summary(X).estimate.")
        if self.inference == "vb" or not _engines.engine_for(X).in_process:
            return super()._fit_labels(X)  # an engine elsewhere refuses Gibbs, below
        return self._fit_gibbs(X)

    def _check_engine(self, engine):
        if self.inference != "vb" and not engine.in_process:
            raise ValueError(
                f"inference: a distributed fit runs variational Bayes (inference='vb'); got "
                f"{self.inference!r} (the collapsed Gibbs sampler is sequential over documents)."
            )

    def _fit_gibbs(self, X):
        X, rngs = self._begin_fit(X)
        alpha, theta = float(self._weight_prior()), float(self.word_concentration_prior)
        family = MultinomialFamily(theta)
        log_base_total = float(log_multinomial_coefficient(X).sum())
        best = None
        for chain, (rng, start) in enumerate(zip(rngs, self._starts(X, family, rngs))):
            z0 = self._warm_up(X, start, rng).argmax(axis=1)
            trace, best_z, best_lj, samples = [], z0, -np.inf, []
            keep = kept_sweeps(self.n_sweeps // 2, self.n_sweeps, self.max_samples)
            with progress(self.n_sweeps, self.verbose, f"Gibbs chain {chain + 1}") as bar:
                for sweep, (z, log_joint) in enumerate(gibbs_sweeps(
                    X, z0, self.n_components, alpha, theta, self.n_sweeps, rng, log_base_total
                )):
                    trace.append(log_joint)
                    if log_joint > best_lj:
                        best_z, best_lj = z, log_joint
                    if sweep in keep:
                        samples.append(z.astype(np.int32))
                    bar.update()
            if best is None or best_lj > best[1]:
                best = (best_z, best_lj, np.asarray(trace), samples)
        z, _, trace, samples = best
        self.label_samples_ = (np.array(samples, dtype=np.int32) if samples
                               else np.zeros((0, X.shape[0]), dtype=np.int32))
        if self.point_estimate is not None:
            self.point_labels_ = point_labels(self.label_samples_, self.point_estimate,
                                              "max_samples or n_sweeps")
        # judged on the kept chain alone: the chains are restarts (the best one is kept), and
        # restarts that end in different modes are what n_init is for
        converged, rhat = _stationary(trace[None, self.n_sweeps // 2:])
        if not converged:
            why = (f"split R-hat of its log joint over the second half {rhat:.3g} > "
                   f"{_RHAT_CEILING}" if self.n_sweeps >= 8 else "too few sweeps to judge")
            warnings.warn(
                f"{type(self).__name__}: the kept Gibbs chain did not settle in n_sweeps="
                f"{self.n_sweeps} sweeps ({why}). Increase n_sweeps.",
                ConvergenceWarning,
                stacklevel=3,
            )
        state, elbo = self._one_hot_state(X, z, family, alpha, log_base_total)
        self.log_joint_trace_ = trace
        self._set_fitted(dict(
            trace=np.array([elbo]), elbo=elbo, state=state, labels=z, converged=converged,
        ))
        self.n_iter_ = self.n_sweeps
        return z

    def _one_hot_state(self, X, z, family, alpha, log_base_total):
        r"""The global factors and the ELBO at the hard assignment ``z``.

        The posterior of (lambda, beta) given a sample is exactly the CAVI global step with
        one-hot responsibilities (so prediction shares the VB code path); its statistics are
        the sample's count tables, and with one-hot responsibilities the ELBO's data term is
        :math:`\sum_k m_k E[\log\lambda_k] + \sum_{kl} n_{kl} E[\log\beta_{kl}]` (no
        entropy), which needs no (n, K) array.
        """
        docs_K, words_KP, tokens_K = count_tables(X, z, self.n_components)
        stats = WordStats(np.ascontiguousarray(words_KP.T, dtype=np.float64),
                          tokens_K.astype(np.float64))
        state = self._global_from_stats(stats, docs_K.astype(np.float64), family, alpha)
        data_term = float(docs_K @ state.expected_log_weights) + float(
            np.sum(stats.counts_PK * state.family_expectations.expected_log_PK))
        return state, log_base_total + data_term + self._global_terms(state, family)

    def _partition_draws(self, X, n_draws, random_state):
        """Gibbs (without ``X``): the kept draws; else the mean-field draws of the base."""
        if self.inference == "gibbs" and X is None:
            check_is_fitted(self, "labels_")
            if self.label_samples_.shape[0] < 2:
                raise ValueError("fewer than 2 partitions were kept (max_samples or n_sweeps "
                                 "too small): nothing to summarise.")
            return self.label_samples_
        return super()._partition_draws(X, n_draws, random_state)

    # ------------------------------------------------------------------ interpretation
    def top_words(self, vocabulary, n=10, by="probability"):
        """Return the ``n`` most characteristic words of every cluster.

        Parameters
        ----------
        vocabulary : sequence of str of length n_features
        n : int, default=10
        by : {"probability", "lift"}
            Rank by posterior mean probability :math:`E[\\beta_{kl}]`, or by lift
            :math:`E[\\beta_{kl}] / \\bar\\beta_l` (probability relative to the average cluster).

        Returns
        -------
        list of lists of str, one list per cluster. Only words the cluster is expected to
        use at least half a time (:math:`s_{kl} \\ge 1/2`) are listed, so a small cluster may
        list fewer than ``n``: the others sit at the prior's floor, and by lift the rarest of
        them would outrank the cluster's own words.
        """
        check_is_fitted(self)
        evidence = self.word_concentration_ - self.word_prior_ >= 0.5
        return top_terms(self.components_, vocabulary, n, by, self.weights_ @ self.components_,
                         evidence)

    def log_predictive_density(self, X):
        r"""Exact log posterior predictive density of every document of ``X`` under the fitted
        variational posterior, in nats:

        .. math::

            \log p(y_i \mid \text{training data}) = \log \sum_k E[\lambda_k]\,
            \binom{y_{i+}}{y_i}\frac{B(\phi_k + y_i)}{B(\phi_k)},

        a mixture of Dirichlet–multinomials (the words' Dirichlet factors integrated out,
        :math:`B` the multivariate Beta function). Unlike :meth:`score_samples` it is not a
        bound, so it compares numbers of clusters fairly on held-out documents.

        Returns
        -------
        ndarray of shape (n_documents,)
        """
        from scipy.special import logsumexp

        check_is_fitted(self)
        X = self._check_X(X, reset=False)
        X = X.astype(np.float64)
        lengths = np.asarray(X.sum(axis=1)).ravel()
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        phi = self.word_concentration_
        totals = phi.sum(axis=1)
        log_terms = np.empty((X.shape[0], phi.shape[0]))
        for k in range(phi.shape[0]):
            at = phi[k, X.indices]
            per_entry = gammaln(X.data + at) - gammaln(at)
            log_terms[:, k] = (np.bincount(rows, per_entry, minlength=X.shape[0])
                               - gammaln(lengths + totals[k]) + gammaln(totals[k]))
        log_terms += np.log(self.weights_)
        density = log_multinomial_coefficient(X) + logsumexp(log_terms, axis=1)
        # an empty document has probability 1 under every cluster: exactly 0, where the sum
        # of the weights read log(1 + 1e-16)
        density[lengths == 0] = 0.0
        return density

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.positive_only = True
        return tags


_RHAT_CEILING = 1.1


def _stationary(draws):
    """``(converged, split R-hat)`` of log joint draws shaped (chains, sweeps): at least 4
    sweeps, and an R-hat at most the ceiling or undefined (every draw equal: the chain sits in
    one state, which is as settled as it can be)."""
    if draws.shape[1] < 4:
        return False, float("nan")
    rhat = split_rhat(draws)
    return bool(not rhat > _RHAT_CEILING), rhat
