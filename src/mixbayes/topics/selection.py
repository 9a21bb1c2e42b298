r"""Choosing the number of topics: fit K upward and compare the evidence.

For each candidate K (ascending) a :class:`~mixbayes.topics.TopicModel` is fitted from its own
start, or with ``warm_start=True`` — after the first — from the previous fit's topics plus new
ones seeded from its residuals (:func:`~mixbayes.topics.starts.grow_topics`, the reference's
warm start, slower to a lower mode on 20 Newsgroups). Each fit's
:func:`~mixbayes.topics.evidence.topic_evidence` gives the log Bayes factor against one topic and
the residual dispersion. The scan stops after ``stop_after`` consecutive decreases of the log
Bayes factor unless ``scan_all``; the best K is the one with the largest log Bayes factor.

Coarse, then fine. Every K is first fitted to a loose tolerance (``scan_tol``, a gain of 1e-4
nats per word), which ranks the candidates: between neighbouring K the log Bayes factor differs
by far more than it moves when a fit goes on to the evidence's tolerance. Then the best K is
continued from its topics to the estimator's tolerance, and so is every other K whose coarse
log Bayes factor comes within twice the largest move seen of the refined best (repeated until
none does): the choice is the one a scan at the fine tolerance would make, unless a K's
evidence moves by more than twice what the refined ones moved.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np
from sklearn.base import clone

from .. import _engines, metrics
from .._progress import progress
from .._selection import format_table, still_rising
from .._validation import plural, validate_params
from . import blocks, starts
from .model import OneCorpus, TopicModel

DISPERSION_LEVEL = 0.05  # the dispersion test's level for "no extra-multinomial variation left"
# The fits' stopping rule when no estimator is given: a gain of at most 3e-6 nats per word, a
# closer MAP than TopicModel's default 1e-5 asks for, since the evidence reads the curvature at
# the mode: on Taddy's (2012) §5.1 design (100k words) the log Bayes factors move by 600-1,100
# nats from 1e-5 to 3e-6 (the choice of K does not), and the residual dispersion one topic below
# the truth, 1.0017 at 3e-6, falls to 0.9996 at 1e-5 on one of five seeds. On 20 Newsgroups
# (K = 20) 3e-6 cost 10% more iterations than 1e-5 (279 against 253) before the SQUAREM step;
# with it, 254 against 119 on the train split (clusters start, seed 0; 135 against 123 on a
# 2,000-document sample): the tolerance is now the larger part of the scan's cost per K.
SELECTION_TOL = 3e-6
# The coarse pass's stopping rule (nats per word). On a 3,000-document sample of 20 Newsgroups
# (375k words; clusters start, seed 0) fits stopped at 1e-4 took 13, 39 and 23 iterations at
# K = 5, 10, 20 against 95, 188 and 183 at 3e-6, and their log Bayes factors stood 6,364, 3,201
# and 14,613 nats above the refined ones, while K = 5, 10, 20 lie 340,000 and 800,000 apart;
# on 20 Newsgroups' train split (1.5M words) the scan at 3e-6 spent 42 K = 20 fits' time.
SCAN_TOL = 1e-4


@dataclass
class TopicSelection:
    """Result of :func:`select_n_topics`.

    Attributes
    ----------
    table : list of dict
        One row per K fitted: ``k``, ``log_bayes_factor``, ``log_marginal_likelihood``,
        ``dispersion``, ``df``, ``p_value``, ``log_posterior``, ``n_iter``, ``seconds``,
        ``tol`` (the tolerance the row's fit stopped at: the coarse pass's, or the estimator's
        for the K refined), ``coarse_log_bayes_factor`` (the coarse pass's value, also for
        the K refined), and ``coherence`` (the mean over topics) when :func:`select_n_topics`
        was asked for it.
    best_k : int
        The K with the largest log Bayes factor.
    best_model : TopicModel
        The model fitted at ``best_k``.
    dispersion_k : int or None
        The smallest K whose residual dispersion is consistent with the multinomial
        (``p_value >= 0.05``: no extra-multinomial variation left for more topics to explain),
        None when no K fitted is; see :attr:`notes` when it differs from ``best_k``.
    coherence : str or None
        The coherence measure of the table's ``coherence`` column, None without one.
    candidates : list of int or None
        Every K the search was asked to try (the table holds those fitted: fewer when it
        stopped after ``stop_after`` decreases of the log Bayes factor, which :attr:`notes`
        says).
    stop_after : int
    """

    table: list
    best_k: int
    best_model: object = field(repr=False)
    coherence: str = None
    candidates: list = None
    stop_after: int = 2
    scan_tol: float = None  # the coarse pass's tolerance; None: every K at the estimator's

    def column(self, name):
        """One column of the table as an array."""
        return np.array([row[name] for row in self.table])

    @property
    def dispersion_k(self):
        adequate = [row["k"] for row in self.table if row["p_value"] >= DISPERSION_LEVEL]
        return min(adequate) if adequate else None

    @property
    def notes(self):
        """Plain-language warnings about the choice: the log Bayes factor still rising at the
        top of the range, or the choice at an end of it (K = 2, the smallest K the Bayes factor
        against one topic allows, is not an edge to widen past)."""
        ks = [row["k"] for row in self.table]
        notes = []
        left = [k for k in (self.candidates or ()) if k > ks[-1]]
        if left:
            notes.append(f"the search stopped at K = {ks[-1]}, after "
                         f"{plural(self.stop_after, 'decrease')} in a row of the log Bayes "
                         f"factor; K = {_ks_text(left)} of the range were not fitted (a "
                         "later rise is possible: scan_all=True fits every K)")
        if still_rising(ks, self.column("log_bayes_factor")):
            notes.append(f"the log Bayes factor is still rising at the top of the range "
                         f"({ks[0]}:{ks[-1]}) - it has not levelled off, so K = {self.best_k} is "
                         "a lower bound; widen the range")
        elif self.best_k == ks[-1] and len(ks) > 1:
            notes.append(f"K = {self.best_k} is the top of the range searched ({ks[0]}:{ks[-1]}); "
                         "a larger K may score higher - widen the range")
        elif self.best_k == ks[0] and ks[0] > 2:
            notes.append(f"K = {self.best_k} is the bottom of the range searched "
                         f"({ks[0]}:{ks[-1]}); a smaller K may score higher - widen the range "
                         "down to 2")
        elif self.best_k == 2 and len(ks) > 1:
            notes.append("K = 2 is the smallest K the search allows (the Bayes factor is "
                         "against one topic); the data may hold no more than two topics")
        refined = ([] if self.scan_tol is None else
                   [row for row in self.table if row["tol"] != self.scan_tol])
        if refined:
            moved = max(abs(row["coarse_log_bayes_factor"] - row["log_bayes_factor"])
                        for row in refined)
            notes.append(f"every K was fitted to {self.scan_tol:g} nats a word, then K = "
                         f"{', '.join(str(row['k']) for row in refined)} continued to "
                         f"{refined[0]['tol']:g} (log Bayes factor moved by at most "
                         f"{moved:.0f} nats; the other K lie more than twice that below)")
        k_disp = self.dispersion_k
        if k_disp is not None and k_disp < self.best_k:
            bf = dict(zip(ks, self.column("log_bayes_factor")))
            # the gain below k_disp is a comparison only where the range starts below it
            before = (f", against {bf[k_disp] - bf[ks[0]]:.0f} from K = {ks[0]} to {k_disp}"
                      if k_disp > ks[0] else "")
            notes.append(
                f"the residual dispersion is already consistent with the multinomial at K = "
                f"{k_disp} (p >= {DISPERSION_LEVEL:g}): the {self.best_k - k_disp} topic(s) the "
                f"Bayes factor adds beyond it gain {bf[self.best_k] - bf[k_disp]:.0f} nats"
                f"{before}. On small corpora the Laplace Bayes factor can favour too many "
                f"topics (the guide shows a case); consider K = {k_disp}")
        return notes

    def __str__(self):
        columns = {"k": "d", "log_bayes_factor": ".1f", "dispersion": ".3g", "p_value": ".3g",
                   "n_iter": "d"}
        if self.coherence is not None:
            columns["coherence"] = ".3g"
        lines = [format_table(self.table, columns),
                 f"chosen K = {self.best_k} by the log Bayes factor against one topic"
                 + ("" if self.dispersion_k is None else
                    f"; the residual dispersion first fits at K = {self.dispersion_k}")]
        return "\n".join(lines + [f"note: {note}" for note in self.notes])

    def _repr_pretty_(self, printer, cycle):  # IPython shows the table too
        printer.text(str(self))

    def plot(self, ax=None):
        """Log Bayes factor and dispersion against K (see
        :func:`mixbayes.plotting.plot_topic_selection`)."""
        from ..plotting import plot_topic_selection

        return plot_topic_selection(self, ax=ax)


def _ks_text(ks):
    """``9..12`` for Ks one apart, ``10..40 (every 10)`` for an even step, else a list."""
    steps = set(np.diff(ks).tolist())
    if len(ks) < 3 or len(steps) > 1:
        return ", ".join(map(str, ks))
    return f"{ks[0]}..{ks[-1]}" + ("" if steps == {1} else f" (every {steps.pop()})")


def _warm_topics(previous, X, n_components):
    """The previous fit's topics plus residual topics, as a (K, n_features) array."""
    counts, theta, omega = _training_counts(previous, X)
    alpha_for, c_for = previous._prior_for(theta.shape[0])
    docs = blocks.Documents(blocks.with_weights(counts, omega))
    grown = starts.grow_topics(docs, theta, n_components, alpha_for, c_for)
    topics = np.zeros((n_components, previous.n_features_in_))
    topics[:, previous._used_terms] = grown.T
    return topics


def _training_counts(model, X):
    counts = blocks.CountsCSR.from_matrix(X[model._used_docs][:, model._used_terms])
    theta = np.ascontiguousarray(model.topics_[:, model._used_terms].T)
    omega = np.ascontiguousarray(model.doc_topic_[model._used_docs])
    return counts, theta, omega


def select_n_topics(X, candidates=range(2, 31), estimator=None, scan_all=False, stop_after=2,
                    verbose=1, coherence=None, warm_start=False, scan_tol=SCAN_TOL,
                    random_state=None):
    r"""Fit topic models for increasing K and choose K by the Laplace marginal likelihood.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_documents, n_terms)
        Word counts; a dask array (or a :class:`~mixbayes.distributed.ShardedCorpus`) is
        searched on the running dask cluster, its documents staying there (the same scan, its
        evidence summed over the shards).
    candidates : iterable of int, default=range(2, 31)
        Numbers of topics, each at least 2 (the Bayes factor is against K = 1).
    estimator : TopicModel, optional
        Settings for every fit (cloned; ``n_components`` is set here, and the start with
        ``warm_start``). Default:
        ``TopicModel(tol=3e-6)``, every fit stopped when an iteration gains at most 3e-6 nats
        per word (the evidence needs a closer mode than prediction; see ``SELECTION_TOL``).
        Until version 0.2 every fit stopped by maptpx's absolute rule (gain and
        :math:`\sum|\Delta\theta|` below 0.1), which asks ever more iterations of larger
        corpora at every K.
    scan_all : bool, default=False
        Fit every candidate instead of stopping after ``stop_after`` consecutive decreases.
    stop_after : int, default=2
    verbose : int, default=1
        0: silent; 1: a progress bar over the candidates once the search has run a few
        seconds; 2: a bar from the start.
    coherence : {"umass", "npmi", "c_v"}, optional
        Add a ``coherence`` column: each fit's mean topic coherence over its 10 top words on
        ``X`` (:func:`mixbayes.metrics.coherence`), shown beside the Bayes factor. It plays no
        part in the choice of K. Off by default; it costs about one sparse product per topic.
        A row left at the coarse tolerance (``scan_tol``) has its coarse fit's coherence: on 20
        Newsgroups 0.000-0.014 below the fine fit's (K = 20: 0.272 against 0.286).
    warm_start : bool, default=False
        Start each fit after the first from the previous fit's topics plus residual topics
        (:func:`~mixbayes.topics.starts.grow_topics`, the reference's warm start) instead of
        the estimator's own start (by default ``init="clusters"``: every K fitted as
        ``TopicModel(K).fit(X)`` would be). Until version 0.3 the scan always warm-started;
        on a 2,000-document sample of 20 Newsgroups the warm start from K = 10 needed 451
        iterations to K = 15's mode against 222 from the clusters start, and ended 0.023 nats
        per word lower (log Bayes factor 2,700 lower): the residual topics start the search in
        a worse basin, and slower.
    scan_tol : float or None, default=1e-4
        The coarse pass's stopping rule, nats per word (module docstring): every K is fitted
        to ``max(scan_tol, estimator.tol)``, and the best K and any K close to it are then
        continued to the estimator's tolerance. None fits every K to the estimator's
        tolerance (before version 0.4: on 20 Newsgroups' train split, K = 5..50, 42 times
        one K = 20 fit).
    random_state : int, Generator or None, default=None
        The starts' seed for every fit (the estimator's ``random_state`` set to it, as
        :func:`~mixbayes.select_n_clusters` has one); None keeps the estimator's own (the
        default estimator's is 0).

    Returns
    -------
    TopicSelection
        ``print(selection)`` shows the table, the choice and any notes.
    """
    if random_state is not None:
        estimator = clone(estimator if estimator is not None else TopicModel(
            tol=SELECTION_TOL)).set_params(random_state=random_state)
    engine = _engines.engine_for(X)
    corpus = OneCorpus(X) if engine.in_process else engine.corpus(X)
    candidates = check_candidates(candidates, corpus.n_used_total, stop_after, coherence)
    scan_tol = check_scan_tol(scan_tol)
    corpus.note_unused_terms()
    fitted = {}  # K -> the documents holding its fit's weights (the last one only)
    said = []  # the first fit says which terms X never uses; the scan's others need not

    def fit(model, previous, warm=None):
        if warm is None and previous is not None and warm_start:
            alpha_for, c_for = previous._prior_for(corpus.used_terms.size)
            warm = corpus.warm_topics(previous, fitted.pop(previous.n_components),
                                      model.n_components, alpha_for, c_for)
        validate_params(model, model._parameter_rules)
        with corpus.fitting(), warnings.catch_warnings():
            if said:
                warnings.filterwarnings("ignore", message=r".* of X never occur",
                                        category=UserWarning)
            docs = model._fit_corpus(corpus, warm)
        said.append(True)
        fitted.clear()
        fitted[model.n_components] = docs

    def evidence(model):
        return corpus.evidence(model, fitted[model.n_components])

    def coherence_of(model):
        return metrics.coherence(model, corpus.reference, coherence).mean

    return scan(candidates, estimator, fit, evidence, coherence_of if coherence else None,
                scan_all, stop_after, verbose, coherence, scan_tol)


def check_candidates(candidates, n_docs, stop_after, coherence):
    """The candidates sorted, after the checks of :func:`select_n_topics`'s arguments
    (``n_docs``: the non-empty documents)."""
    if coherence is not None and coherence not in ("umass", "npmi", "c_v"):
        raise ValueError(f"coherence must be one of 'umass', 'npmi', 'c_v' or None; got "
                         f"{coherence!r}.")
    candidates = sorted({int(k) for k in candidates})
    if not candidates:
        raise ValueError("candidates must hold at least one number of topics; got none.")
    if candidates[0] < 2 or candidates[-1] > n_docs:
        raise ValueError(
            f"candidates must lie in [2, {n_docs}] (the Bayes factor is against one topic, and "
            f"K cannot exceed the {n_docs} non-empty documents); got "
            f"{candidates[0]}..{candidates[-1]}."
        )
    if int(stop_after) < 1:
        raise ValueError(f"stop_after must be an integer >= 1; got {stop_after!r}.")
    return candidates


def check_scan_tol(scan_tol):
    """``scan_tol`` as a float, or None; a clear error otherwise."""
    if scan_tol is None:
        return None
    if (isinstance(scan_tol, bool) or not isinstance(scan_tol, (int, float, np.floating))
            or not np.isfinite(scan_tol) or scan_tol <= 0):
        raise ValueError(f"scan_tol must be a positive number of nats per word or None; got "
                         f"{scan_tol!r}.")
    return float(scan_tol)


def scan(candidates, estimator, fit, evidence, coherence_of, scan_all, stop_after, verbose,
         coherence, scan_tol=None):
    """The search of :func:`select_n_topics` given how to fit a model (``fit(model, previous,
    warm)``: from the topics ``warm`` when given, else warm from the previous fit when there is
    one), its evidence and coherence; the same loop in process and on a cluster. With
    ``scan_tol`` below the estimator's tolerance, the coarse pass and refinement of the module
    docstring."""
    base = estimator if estimator is not None else TopicModel(tol=SELECTION_TOL)
    fine_tol = base.tol
    coarse_tol = None if scan_tol is None or scan_tol <= fine_tol else scan_tol
    table, models, previous = [], {}, None

    def row_of(model, start):
        evidence_k = evidence(model)
        row = dict(
            k=model.n_components, log_bayes_factor=evidence_k.log_bayes_factor,
            log_marginal_likelihood=evidence_k.log_marginal_likelihood,
            dispersion=evidence_k.dispersion, df=evidence_k.degrees_of_freedom,
            p_value=evidence_k.p_value, log_posterior=model.log_posterior_,
            n_iter=model.n_iter_, seconds=time.perf_counter() - start, tol=model.tol,
            coarse_log_bayes_factor=evidence_k.log_bayes_factor,
        )
        if coherence is not None:
            row["coherence"] = coherence_of(model)
        return row

    with progress(len(candidates), verbose, "select K") as bar:
        for k in candidates:
            start = time.perf_counter()
            model = clone(base).set_params(n_components=k)
            if coarse_tol is not None:
                model.set_params(tol=coarse_tol)
            fit(model, previous)
            table.append(row_of(model, start))
            models[k] = model
            previous = model
            bar.update()
            bf = [row["log_bayes_factor"] for row in table]
            if (not scan_all and len(bf) > stop_after
                    and all(bf[-i] < bf[-i - 1] for i in range(1, stop_after + 1))):
                break
        if coarse_tol is not None:
            _refine(table, models, fit, row_of, fine_tol)
    best = max(table, key=lambda row: row["log_bayes_factor"])["k"]
    return TopicSelection(table, best, models[best], coherence, list(candidates),
                          int(stop_after), coarse_tol)


def _refine(table, models, fit, row_of, fine_tol):
    """Continue coarse fits to ``fine_tol`` from their topics, best first, until every K left
    coarse lies more than twice the largest move of a refined log Bayes factor below the
    refined best (module docstring); the rows and models of the K refined are replaced."""
    largest_move = 0.0
    while True:
        rows = sorted(table, key=lambda row: -row["log_bayes_factor"])
        best = next((row for row in rows if row["tol"] == fine_tol), None)
        coarse = [row for row in rows if row["tol"] != fine_tol]
        if not coarse or (best is not None and coarse[0]["log_bayes_factor"]
                          < best["log_bayes_factor"] - 2.0 * largest_move):
            return
        row = coarse[0]
        start = time.perf_counter() - row["seconds"]
        model = clone(models[row["k"]]).set_params(tol=fine_tol)
        fit(model, None, models[row["k"]].topics_)
        refined = row_of(model, start)
        refined["n_iter"] += row["n_iter"]
        refined["coarse_log_bayes_factor"] = row["coarse_log_bayes_factor"]
        largest_move = max(largest_move, abs(refined["log_bayes_factor"]
                                             - row["log_bayes_factor"]))
        table[table.index(row)] = refined
        models[row["k"]] = model
