r"""``TopicModel``: the K-topic admixture fitted by joint MAP (Taddy 2012; R package maptpx).

.. math::

    x_i \sim \mathrm{Mult}\Big(m_i, \sum_k \omega_{ik}\theta_k\Big), \qquad
    \theta_k \sim \mathrm{Dir}(\alpha), \qquad \omega_i \sim \mathrm{Dir}(1/K).

Topics and weights are estimated jointly at the posterior mode in their natural (logit)
parameterisation; see :mod:`mixbayes.topics._fit` for the algorithm and
:mod:`mixbayes.topics.evidence` for the marginal likelihood used to choose K.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._progress import progress
from .._terms import top_terms
from .._validation import (
    Interval,
    NJobs,
    Options,
    RandomState,
    check_counts,
    check_n_features,
    plural,
    validate_params,
)
from .. import _engines
from .._kernel_tools import threads
from .._schema import Schema
from ..exceptions import ConvergenceWarning
from . import _fit, blocks, starts


@_engines.runs_anywhere
class TopicModel(TransformerMixin, BaseEstimator):
    r"""Topic model (mixed-membership multinomial) fitted by joint MAP.

    Parameters
    ----------
    n_components : int, default=10
        Number of topics K.
    topic_prior : float or None, default=None
        Dirichlet concentration :math:`\alpha` of every topic; None means :math:`1/(Kp)` with
        p the number of terms used in the corpus (the reference's default).
    tol : float, default=1e-5
        Stop when an iteration raises the log posterior by at most ``tol`` nats per word of the
        training corpus (:math:`\Delta L \le \mathrm{tol}\sum_i m_i`). Until version 0.2 the
        rule was the reference's (maptpx): both the gain and :math:`\sum|\Delta\theta|` below
        an absolute 0.1. Absolute, the same setting asks ever more of a larger corpus: on BBC
        news (228k words) it meant 4e-7 nats per word and 485 iterations, on 20 Newsgroups
        (1.4M words) more than 1,000, while the held-out likelihood and coherence had settled
        long before. Per word, 1e-5 stops classic3 (K = 20) after 171 iterations instead of 348
        and 20 Newsgroups after 253 (held-out completion log-likelihood per word within 0.003
        of the longest fit, NPMI within 0.001; ``bench/topic_tolerance.py``); larger values
        stopped 20 Newsgroups where the topics were still less coherent (NPMI 0.254 at 3e-5
        against 0.268). :func:`~mixbayes.select_n_topics` fits every K under the same rule.
    max_iter : int, default=1000
        Maximum number of iterations (each: weight solve, EM step, optional quasi-Newton step).
    weight_tol : float, default=1e-4
        L1 change of a document's weights at which its SQP stops.
    weight_max_steps : int, default=20
        Newton steps per document in a solve to ``weight_tol``: in the first three iterations,
        in ``transform`` and for the weights of the returned fit. The iterations after the
        third take one Newton step a document from its previous solution (the same fixed
        point at about 30% less time on 20 Newsgroups; see :mod:`mixbayes.topics._fit`).
    qn_below : float or None, default=None
        The quasi-Newton (SQUAREM) extrapolation is tried once the gain per iteration is below
        this many nats; None tries it from the first iteration (each try that would lower the
        log posterior is shortened, then dropped); 0 turns it off. Until version 0.2 it was
        the reference's absolute 100 nats, which on 20 Newsgroups (1.3M words) left the first
        hundred iterations unaccelerated.
    init : {"clusters", "buildup"} or array of shape (n_components, n_features), default="clusters"
        Starting topics. ``"clusters"``: the word distributions of a Dirichlet–multinomial
        mixture of the documents (one VB run seeded by ``random_state``); under the sparse
        weights topic models are used for, most documents are dominated by one topic, and these
        clusters start the MAP search in the right basin; clusters the mixture leaves empty
        (equal topics, which the MAP iterations would keep equal) are replaced by topics grown
        from the residuals, as the build-up grows them. ``"buildup"``: the reference's
        deterministic scheme, topics grown one at a time from residuals on a subset of documents
        (see :mod:`mixbayes.topics.starts`); on the 20,000-document simulation of the benchmark it
        ends in a local optimum (log posterior 2e4 lower, topic MSE 40x higher). Or given topics.
    n_init : int, default=1
        Number of ``"clusters"`` starts (each with its own seed); the fit with the highest log
        posterior is kept. A single start lands in a local optimum now and then (1 of 6 seeds of
        Taddy's (2012) §5.1 simulation: two true topics shared between three fitted ones);
        ``n_init=3`` costs three fits. Ignored for other starts, which are deterministic.
    random_state : int, Generator or None, default=0
        Seed of the ``"clusters"`` start (the fit itself is deterministic).
    n_jobs : int or None, default=None
        Threads the fit's numba kernels may use, as for
        :class:`~mixbayes.DirichletMultinomialMixture` (results do not depend on it).
    verbose : int, default=0
        Progress bar over iterations.

    Attributes
    ----------
    topics_ : ndarray of shape (n_components, n_features)
        MAP topics, rows on the simplex; terms unused in the training corpus have probability 0.
    components_ : ndarray
        The same array (the name scikit-learn's decompositions use).
    doc_topic_ : ndarray of shape (n_documents, n_components)
        MAP weights of the training documents (uniform for empty documents).
    usage_ : ndarray of shape (n_components,)
        Mean weight of every topic over the non-empty training documents.
    term_frequency_ : ndarray of shape (n_features,)
        Empirical term probabilities of the training corpus (the denominator of lift).
    log_posterior_ : float
        The objective at the returned estimate (see :mod:`mixbayes.topics._fit`).
    log_posterior_trace_ : ndarray
        The objective after every iteration (starting value first); it never decreases.
    n_iter_ : int
    converged_ : bool
    topic_prior_ : float
        The :math:`\alpha` used.
    dropped_terms_ : ndarray of int
        Columns with no counts, left out of the fit.

    Notes
    -----
    Empty documents carry no information about the topics; they are left out of the fit and get
    the prior mode, uniform weights. Unused terms are left out too (with a warning) and get
    probability 0 in every topic.
    """

    _parameter_rules = {
        "n_components": Interval("int", 1),
        "topic_prior": Interval("real", 0, None, "neither", allow_none=True),
        "tol": Interval("real", 0, None, "left"),
        "max_iter": Interval("int", 1),
        "weight_tol": Interval("real", 0, None, "neither"),
        "weight_max_steps": Interval("int", 1),
        "qn_below": Interval("real", 0, allow_none=True),
        "n_init": Interval("int", 1),
        "verbose": Interval("int", 0),
        "random_state": RandomState(),
        "n_jobs": NJobs(),
    }

    def __init__(self, n_components=10, *, topic_prior=None, tol=1e-5, max_iter=1000,
                 weight_tol=1e-4, weight_max_steps=20, qn_below=None, init="clusters",
                 n_init=1, random_state=0, n_jobs=None, verbose=0):
        self.n_components = n_components
        self.topic_prior = topic_prior
        self.tol = tol
        self.max_iter = max_iter
        self.weight_tol = weight_tol
        self.weight_max_steps = weight_max_steps
        self.qn_below = qn_below
        self.init = init
        self.n_init = n_init
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    # ------------------------------------------------------------------ set-up
    def _prior_for(self, n_used_terms):
        """Functions K -> alpha and K -> c for this model's settings."""
        if self.topic_prior is None:
            return (lambda K: 1.0 / (K * n_used_terms)), (lambda K: 1.0 / K)
        return (lambda K: float(self.topic_prior)), (lambda K: 1.0 / K)

    def _check_init(self, n_features):
        if isinstance(self.init, str):
            validate_params(self, {"init": Options(("clusters", "buildup"))})
            return None
        topics = np.asarray(self.init, dtype=float)
        if topics.shape != (self.n_components, n_features):
            raise ValueError(
                f"init must be 'buildup' or an array of shape (n_components, n_features) = "
                f"({self.n_components}, {n_features}); got shape {topics.shape}."
            )
        if not np.all(np.isfinite(topics)) or np.any(topics < 0) or np.any(topics.sum(1) <= 0):
            raise ValueError("init topics must be finite, non-negative, with positive row sums.")
        return topics

    def _check_corpus(self, n, n_used_docs, column_totals):
        """The checks of a corpus of ``n`` documents, ``n_used_docs`` of them not empty, with
        word totals ``column_totals``; returns the used terms (with a warning when some are
        not)."""
        p = column_totals.size
        if self.n_components > n:
            raise ValueError(
                f"n_components must be an integer in [1, {n}] (at most n_samples={n}); "
                f"got {self.n_components}."
            )
        if n_used_docs == 0:
            raise ValueError("X has no words: every document is empty.")
        if isinstance(self.init, str) and self.init == "clusters" \
                and self.n_components > n_used_docs:
            # the "clusters" start clusters the non-empty documents into K groups
            raise ValueError(
                f"n_components must be at most the number of non-empty documents of X "
                f"({n_used_docs}) for init='clusters'; got {self.n_components}."
            )
        used_terms = np.flatnonzero(column_totals > 0)
        if used_terms.size < p:
            warnings.warn(
                f"{plural(p - used_terms.size, 'term')} of X never occur; they are left out of "
                "the fit and get probability 0 in every topic (see dropped_terms_).",
                UserWarning, stacklevel=5,
            )
        return used_terms

    # ------------------------------------------------------------------ fitting
    def fit(self, X, y=None):
        """Fit topics and weights to the counts ``X`` (n_documents, n_terms).

        The documents stay wherever ``X`` keeps them (:func:`mixbayes._engines.engine_for`): a
        dask array (or a :class:`~mixbayes.distributed.ShardedCorpus`) is fitted on the running
        ``dask.distributed`` client, and ``doc_topic_`` is then a dask array.
        """
        self._fit(X)
        return self

    def fit_transform(self, X, y=None):
        """Fit and return ``doc_topic_``."""
        return self.fit(X).doc_topic_

    def _fit(self, X, warm_topics=None):
        """Fit to ``X`` from ``warm_topics`` (K, p) when given; return the documents holding
        the weights (a :class:`~mixbayes._engines.Documents`)."""
        validate_params(self, self._parameter_rules)
        engine = _engines.engine_for(X)
        corpus = OneCorpus(X) if engine.in_process else engine.corpus(X)
        return self._fit_corpus(corpus, warm_topics)

    def _fit_corpus(self, corpus, warm_topics=None):
        """The fit, written once against a corpus (:class:`OneCorpus` here, its shards on a
        cluster): checks, starts, the MAP runs, the fitted attributes; the kernels on at most
        ``n_jobs`` threads (:func:`mixbayes._kernel_tools.threads`)."""
        with threads(self.n_jobs):
            return self._fit_corpus_threads(corpus, warm_topics)

    def _fit_corpus_threads(self, corpus, warm_topics):
        K = self.n_components
        p = corpus.column_totals.size
        used_terms = self._check_corpus(corpus.n, corpus.n_used_total, corpus.column_totals)
        alpha_for, c_for = self._prior_for(used_terms.size)

        def build_up():
            rows = corpus.rows_of(starts.build_up_rows(corpus.n_used_total, K))
            return starts.build_up_from(rows, K, alpha_for, c_for)

        start_topics = self._start_topics(
            p, used_terms, warm_topics,
            lambda seed: starts.from_clusters(corpus.used_array(), K, seed,
                                             alpha_for=alpha_for, c_for=c_for), build_up)
        docs = self._fit_starts(start_topics, corpus.documents, alpha_for(K), c_for(K))
        self.doc_topic_ = corpus.doc_topic(docs, K)
        self._set_fitted(docs, p, used_terms, corpus.column_totals, corpus.n_used_total)
        self._used_docs = corpus.used_docs  # None on a cluster: the documents stay there
        return docs

    def _start_topics(self, p, used_terms, warm_topics, clusters, build_up):
        """The starting topics (p_used, K) of every run: ``warm_topics`` (K, p) when given,
        else the init array, else ``clusters(seed)`` for each of the ``n_init`` seeds, else
        ``build_up()``."""
        given = self._check_init(p)
        if warm_topics is not None:
            return [np.ascontiguousarray(warm_topics[:, used_terms].T)]
        if given is not None:
            return [np.ascontiguousarray(given[:, used_terms].T) + 1e-12]
        if self.init == "buildup":
            return [build_up()]
        return [clusters(seed) for seed in [self.random_state]
                + self._extra_seeds(self.n_init - 1)]

    def _fit_starts(self, starts, documents, alpha, c):
        """Run the MAP fit from every start topics (``documents(theta)`` gives the documents
        with their start weights), keep the highest log posterior, and end with the exact
        conditional MAP weights under its topics; return those documents (the fitted state
        is kept in ``self._result``)."""
        K = self.n_components
        settings = _fit.FitSettings(alpha, c, self.tol, self.max_iter, self.weight_tol,
                                    self.weight_max_steps,
                                    np.inf if self.qn_below is None else self.qn_below)
        result = best = None
        for number, theta in enumerate(starts):
            theta = theta / theta.sum(axis=0)
            docs = documents(theta)
            label = f"topics K={K}" + (f" start {number + 1}" if len(starts) > 1 else "")
            with progress(self.max_iter, self.verbose, label, upper_bound=True) as bar:
                def tick(iteration, L, theta):
                    bar.update()
                    bar.set_postfix_str(f"log posterior {L:.6g}", refresh=False)

                run = _fit.fit_map(docs, theta, settings, callback=tick)
            if result is None or run.state.log_posterior > result.state.log_posterior:
                result, best = run, docs
        if not result.converged:
            warnings.warn(
                f"TopicModel(K={K}) did not converge in max_iter={self.max_iter} iterations; "
                "increase max_iter or tol.", ConvergenceWarning, stacklevel=4,
            )
        # final weights: the exact conditional MAP under the returned topics
        best.update(blocks.solve, result.state.theta_PK, c, self.weight_tol,
                    self.weight_max_steps)
        self._result, self._settings = result, settings
        return best

    def _set_fitted(self, docs, p, used_terms, column_totals, n_used_docs):
        """The fitted attributes but ``doc_topic_``, from the documents ``_fit_starts`` left."""
        result, s = self._result, self._settings
        del self._result, self._settings
        theta = result.state.theta_PK
        topics = np.zeros((self.n_components, p))
        topics[:, used_terms] = theta.T
        self.topics_ = topics
        self.usage_ = docs.sum(blocks.weight_sums) / n_used_docs
        self.term_frequency_ = column_totals / column_totals.sum()
        self.topic_prior_ = s.alpha
        self.log_posterior_ = docs.sum(blocks.objective, theta, s.c) + s.alpha * float(
            np.log(theta).sum())
        self.log_posterior_trace_ = np.asarray(result.trace)
        self.n_iter_ = result.n_iter
        self.converged_ = result.converged
        self.n_quasi_newton_ = result.qn_accepted
        self.dropped_terms_ = np.setdiff1d(np.arange(p), used_terms)
        self.n_features_in_ = p
        self._used_terms = used_terms

    _report_kind = ("terms", "topics")  # its page and view (mixbayes.report)

    def _persist_schema(self, scalars):
        """The fitted attributes :mod:`mixbayes.persist` stores."""
        return Schema(
            arrays={"topics_": (("K", "p"), ">=0"), "doc_topic_": (("n", "K"), ">=0"),
                    "usage_": (("K",), ">=0"), "term_frequency_": (("p",), ">=0"),
                    "log_posterior_trace_": (("*",), "real"),
                    "dropped_terms_": (("*",), "feature")},
            scalars={"n_features_in_": "count", "n_iter_": "int", "converged_": "bool",
                     "topic_prior_": "+", "log_posterior_": "real", "n_quasi_newton_": "int"},
            probe=lambda: self.transform(np.ones((1, self.n_features_in_), dtype=np.int64)))

    @property
    def components_(self):
        check_is_fitted(self, "topics_")
        return self.topics_

    def _extra_seeds(self, count):
        """Seeds of the starts after the first (which uses ``random_state`` itself)."""
        if isinstance(self.random_state, np.random.Generator):
            return [self.random_state] * count  # each start advances the same generator
        if self.random_state is None:
            return [None] * count
        base = int(self.random_state)
        return [np.random.default_rng([base, number]) for number in range(1, count + 1)]

    # ------------------------------------------------------------------ new documents
    def _weights_of(self, X, tol=1e-6, max_steps=1000):
        """MAP weights of the documents of ``X`` with the topics fixed, and the counts of the
        words the model can place (terms unused in training are left out)."""
        check_is_fitted(self, "topics_")
        X = check_counts(X, "X")
        check_n_features(X, self)
        used = np.setdiff1d(np.arange(self.n_features_in_), self.dropped_terms_)
        X_used = X[:, used]
        dropped = X.sum() - X_used.sum()
        if dropped > 0:
            warnings.warn(
                f"{plural(int(dropped), 'word')} of X belong to terms unused in training "
                "(probability 0 under every topic); they are left out.", UserWarning, stacklevel=3,
            )
        counts = blocks.CountsCSR.from_matrix(X_used)
        theta = np.ascontiguousarray(self.topics_[:, used].T)
        K = self.n_components
        omega = np.full((X.shape[0], K), 1.0 / K)
        if K > 1:
            blocks.solve_weights(counts, theta, omega, 1.0 / K, tol, max_steps)
        return omega, counts, theta

    def transform(self, X):
        """MAP topic weights of every document of ``X`` given the fitted topics.

        Returns
        -------
        ndarray of shape (n_documents, n_components), rows on the simplex
            A dask array chunked like the rows when ``X`` is dask data: each chunk is solved
            on its worker (:mod:`mixbayes.distributed._blockwise`).
        """
        check_is_fitted(self, "topics_")
        return _engines.map_rows(X, self._transform, self.n_components)

    def _transform(self, X):
        return self._weights_of(X)[0]

    def score(self, X, y=None):
        r"""Total log-likelihood :math:`\sum_{ij} x_{ij}\log\sum_k\omega_{ik}\theta_{kj}` of the
        words of ``X``, with each document's weights from :meth:`transform` (higher is better;
        summed on the workers for dask data)."""
        check_is_fitted(self, "topics_")
        return float(_engines.sum_rows(X, self._score))

    def _score(self, X):
        from ._kernels import log_likelihood

        omega, counts, theta = self._weights_of(X)
        return float(log_likelihood(counts.indptr, counts.indices, counts.data, theta, omega))

    def top_words(self, vocabulary, n=10, by="probability"):
        r"""The ``n`` top terms of every topic.

        Parameters
        ----------
        vocabulary : sequence of str of length n_features
        n : int, default=10
        by : {"probability", "lift"}
            Rank by :math:`\theta_{kj}`, or by lift :math:`\theta_{kj}/\hat p_j` with
            :math:`\hat p_j` the term's empirical probability (Taddy 2012, §5.2).

        Returns
        -------
        list of lists of str, one per topic
        """
        check_is_fitted(self, "topics_")
        return top_terms(self.topics_, vocabulary, n, by, self.term_frequency_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.positive_only = True
        return tags


class OneCorpus:
    """The counts of a topic fit held here, as one block: the in-process engine's corpus (a
    cluster's holds the same figures over shards, :mod:`mixbayes.distributed._topics`).

    ``n`` documents, ``n_used_total`` of them not empty (``used_docs``), word totals
    ``column_totals``; the non-empty documents on the used terms are cut out when first asked
    for (after the model's checks).
    """

    def __init__(self, X):
        self.X = check_counts(X, "X")
        self.n = self.X.shape[0]
        self.column_totals = np.asarray(self.X.sum(axis=0)).ravel()
        self.used_docs = np.flatnonzero(np.diff(self.X.indptr) > 0)
        self.n_used_total = self.used_docs.size
        self.used_terms = np.flatnonzero(self.column_totals > 0)
        self._used, self._counts = None, None

    def used_array(self):
        """The non-empty documents on the used terms (for the mixture start)."""
        if self._used is None:
            self._used = self.X[self.used_docs][:, self.used_terms]
        return self._used

    def rows_of(self, rows):
        """The non-empty documents numbered ``rows`` (among them)."""
        return self.used_array()[rows]

    def documents(self, theta_PK):
        """The non-empty documents with their start weights under ``theta_PK``."""
        if self._counts is None:
            self._counts = blocks.CountsCSR.from_matrix(self.used_array())
        return blocks.Documents(blocks.start(self._counts, theta_PK))

    def doc_topic(self, docs, K):
        """Every document's weights, uniform for the empty ones."""
        doc_topic = np.full((self.n, K), 1.0 / K)
        doc_topic[self.used_docs] = docs.omega
        return doc_topic

    # ---------------------------------------------------------------- for select_n_topics
    @property
    def reference(self):
        """The counts coherence is measured on."""
        return self.X

    def note_unused_terms(self):
        """Nothing here: every fit says which terms it leaves out."""

    def fitting(self):
        """The context of every fit of the scan (nothing here)."""
        import contextlib

        return contextlib.nullcontext()

    def warm_topics(self, previous, docs, n_components, alpha_for, c_for):
        """The previous fit's topics plus residual topics, as a (K, n_features) array."""
        from .selection import _warm_topics

        return _warm_topics(previous, self.X, n_components)

    def evidence(self, model, docs):
        """The Laplace evidence of ``model`` fitted to these counts."""
        from .evidence import topic_evidence

        return topic_evidence(model, self.X)


def main_topics(weights):
    """Every document's topic of largest weight in ``weights`` (documents x topics), -1 where
    that weight is shared: a document without a word of the model's vocabulary has the
    prior's equal weights, and no topic is its main one (argmax would name topic 0)."""
    weights = np.asarray(weights)
    largest = weights.max(axis=1, keepdims=True)
    return np.where((weights == largest).sum(axis=1) > 1, -1, weights.argmax(axis=1))
