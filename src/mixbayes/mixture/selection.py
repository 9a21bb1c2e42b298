r"""Choosing the number of clusters of a Dirichlet–multinomial mixture: two criteria.

**ELBO + log K!.** The ELBO bounds :math:`\log p(y \mid K)`, but a mean-field posterior sits on
one of the :math:`K!` equivalent labellings of the clusters; the exact marginal likelihood
counts all of them, so K is ranked by :math:`\mathrm{ELBO}_K + \log K!`, as maptpx and stm do.
Where :math:`K_+ < K` clusters hold documents, the empty ones all sit at the prior, and
relabelling them among themselves gives the same posterior: only :math:`K!/(K - K_+)!`
labellings are distinct, and that is what is added (``log_k_factorial``; :math:`\log K!`
when every cluster holds a document, as maptpx and stm assume).
This is the evidence *under the model*: it can be trusted when documents really are drawn
from one multinomial per cluster. Real text is burstier than a multinomial (a word used once in
a document is likely used again), and the evidence then keeps paying for more clusters that
soak up the excess variation: on classic3 it climbs to K near 30 although the corpus holds
three collections.

**Held-out likelihood.** A share of the documents (``heldout``, 10% by default) is set aside;
every K is fitted to the rest, and the held-out documents are scored by their exact log
posterior predictive density (:meth:`DirichletMultinomialMixture.log_predictive_density`,
summed). Extra clusters that fit noise do not help predict unseen documents, so this curve
levels off or turns down where the evidence keeps rising; it measures prediction, not the
number of "true" groups, and with few held-out documents it is noisy. Its choice is therefore
the smallest K whose held-out likelihood lies within one standard error of the best (the
one-standard-error rule of cross-validation; the error is that of the per-document differences
to the best K, times the square root of their number).

Both curves are reported for every K; ``best_k`` follows the evidence and
``best_k_heldout`` the held-out likelihood. The final model is refitted to all documents at
``best_k``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.special import gammaln
from sklearn.base import clone

from .._progress import progress
from .._selection import format_table, still_rising
from .._validation import check_counts
from .dmm import DirichletMultinomialMixture

_COLUMNS = {"k": "d", "elbo": ".1f", "score": ".1f", "heldout_log_likelihood": ".1f",
            "heldout_standard_error": ".1f", "n_occupied": "d"}


@dataclass
class ClusterSelection:
    """Result of :func:`select_n_clusters`.

    Attributes
    ----------
    table : list of dict
        One row per candidate K: ``k``, ``elbo``, ``log_k_factorial``, ``score``
        (``elbo + log K!``), ``heldout_log_likelihood`` (summed over the held-out documents;
        None without a held-out share), ``heldout_standard_error`` (of its difference to the
        best K's), ``n_occupied`` (clusters holding at least one
        document), ``converged``; ``log_k_factorial`` is log K!/(K - K+)! with K+ =
        ``n_occupied``.
    best_k : int
        The candidate with the highest score (ELBO + log K!).
    best_model : DirichletMultinomialMixture
        The model fitted to all documents at ``best_k``.
    best_k_heldout : int or None
        The smallest candidate within one standard error of the highest held-out likelihood.
    n_heldout : int
        Documents held out (0: none).
    too_few_to_hold_out : int
        The documents, where a held-out share was asked of fewer than 50 and none was held
        out (0 otherwise): a note says so.
    """

    table: list
    best_k: int
    best_model: object = field(repr=False)
    best_k_heldout: int = None
    n_heldout: int = 0
    too_few_to_hold_out: int = 0

    def column(self, name):
        """One column of the table as an array."""
        return np.array([row[name] for row in self.table], dtype=float)

    @property
    def notes(self):
        """Plain-language warnings about the choice: a criterion still rising at the top of
        the range, an end of the range chosen, the two criteria disagreeing."""
        ks = [row["k"] for row in self.table]
        notes, rising = [], 0
        if self.too_few_to_hold_out:
            notes.append(f"no documents were held out: {self.too_few_to_hold_out} are fewer "
                         "than 50, too few to score K by held-out likelihood (the evidence, "
                         "ELBO + log K!, alone chooses)")
        curves = [("ELBO + log K!", "score", self.best_k)]
        if self.best_k_heldout is not None:
            curves.append(("held-out likelihood", "heldout_log_likelihood", self.best_k_heldout))
        for name, column, best in curves:
            if still_rising(ks, self.column(column)):
                rising += 1
                notes.append(f"{name} is still rising at the top of the range ({ks[0]}:{ks[-1]}) "
                             f"- it has not levelled off, so K = {best} is a lower bound; "
                             "widen the range")
            elif best == ks[-1] and len(ks) > 1:
                notes.append(f"{name} is best at the top of the range ({ks[0]}:{ks[-1]}); a "
                             "larger K may score higher - widen the range")
            elif best == ks[0] and ks[0] > 1:
                notes.append(f"{name} is best at the bottom of the range ({ks[0]}:{ks[-1]}); a "
                             "smaller K may score higher - widen the range down to 1")
        chosen = next(row for row in self.table if row["k"] == self.best_k)
        if chosen["n_occupied"] < chosen["k"]:
            notes.append(f"K = {self.best_k} leaves {chosen['k'] - chosen['n_occupied']} of its "
                         f"clusters empty: the documents fill {chosen['n_occupied']}, and more "
                         "labels for the same clusters still raise the evidence; read "
                         f"{chosen['n_occupied']} clusters")
        if rising == len(curves) == 2:
            notes.append("both criteria keep rising: more clusters keep describing and "
                         "predicting these documents better (usual for real text). Neither "
                         "counts 'true' groups here; choose K for the granularity you need")
        elif self.best_k_heldout is not None and self.best_k_heldout != self.best_k:
            notes.append(f"the criteria disagree: ELBO + log K! picks K = {self.best_k}, the "
                         f"held-out likelihood K = {self.best_k_heldout}. The evidence assumes "
                         "every cluster's documents are draws from one multinomial, which bursty "
                         "real text breaks (it then pays for extra clusters); the held-out "
                         "likelihood asks only what predicts unseen documents")
        return notes

    def __str__(self):
        lines = [format_table(self.table, _COLUMNS),
                 f"chosen K = {self.best_k} by ELBO + log K!"]
        if self.best_k_heldout is not None:
            top = max(self.table, key=lambda row: row["heldout_log_likelihood"])["k"]
            lines[-1] += (f"; K = {self.best_k_heldout} by held-out likelihood (the smallest K "
                          f"within one standard error of the best, K = {top}; "
                          f"{self.n_heldout} documents held out)")
            lines.append("(every K fitted to the other documents; the chosen K is then refitted "
                         "to all of them)")
        return "\n".join(lines + [f"note: {note}" for note in self.notes])

    def _repr_pretty_(self, printer, cycle):  # IPython shows the table too
        printer.text(str(self))

    def plot(self, ax=None):
        """Both criteria against K (see :func:`mixbayes.plotting.plot_selection`)."""
        from ..plotting import plot_selection

        return plot_selection(self, ax=ax)


def select_n_clusters(X, candidates, estimator=None, heldout=0.1, random_state=0, verbose=1):
    """Fit a Dirichlet–multinomial mixture for every K in ``candidates`` and rank them by
    ELBO + log K! and by held-out likelihood (see the module docstring for when to trust each).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_documents, n_terms)
        Word counts.
    candidates : iterable of int
        Numbers of clusters to try, each in [1, documents fitted].
    estimator : DirichletMultinomialMixture, optional
        Settings to use (cloned for every K); defaults to the class defaults.
    heldout : float in [0, 0.5], default=0.1
        Share of the documents held out to score every K; 0 fits every K to all documents
        and reports the evidence only. No documents are held out from fewer than 50.
    random_state : int, default=0
        Seeds the choice of held-out documents.
    verbose : int, default=1
        0: silent; 1: a progress bar over the candidates once the search has run a few
        seconds; 2: a bar from the start.

    Returns
    -------
    ClusterSelection
        ``print(selection)`` shows the table, the choices and any notes.
    """
    X = check_counts(X, "X")
    candidates = sorted({int(k) for k in candidates})
    if not candidates:
        raise ValueError("candidates must hold at least one number of clusters; got none.")
    if isinstance(heldout, bool) or not 0 <= heldout <= 0.5:
        raise ValueError(f"heldout must be a share in [0, 0.5]; got {heldout!r}.")
    n = X.shape[0]
    n_test = int(round(heldout * n)) if n >= 50 else 0
    rng = np.random.default_rng(random_state)
    test = np.sort(rng.choice(n, n_test, replace=False)) if n_test else np.empty(0, int)
    train = np.setdiff1d(np.arange(n), test)
    if candidates[0] < 1 or candidates[-1] > train.size:
        fitted = ("the number of documents fitted" if not n_test else
                  f"the documents fitted: {n_test} of the {n} ({heldout:.0%}) are held out to "
                  "score each K by held-out likelihood")
        raise ValueError(f"candidates must lie in [1, {train.size}] ({fitted}); got "
                         f"{candidates[0]}..{candidates[-1]}.")
    base = estimator if estimator is not None else DirichletMultinomialMixture()
    X_train, X_test = X[train], X[test]
    table, models, per_document = [], {}, {}
    with progress(len(candidates), verbose, "select K") as bar:
        for k in candidates:
            model = clone(base).set_params(n_components=k).fit(X_train)
            occupied = int(np.unique(model.labels_).size)
            correction = log_k_factorial(k, occupied)
            table.append(dict(
                k=k, elbo=model.elbo_, log_k_factorial=correction,
                score=model.elbo_ + correction,
                heldout_log_likelihood=None, heldout_standard_error=None,
                n_occupied=occupied, converged=model.converged_,
            ))
            models[k] = model
            if n_test:
                per_document[k] = model.log_predictive_density(X_test)
                table[-1]["heldout_log_likelihood"] = float(per_document[k].sum())
            bar.update()
    best = max(table, key=lambda row: row["score"])["k"]
    best_heldout = _one_standard_error_choice(table, per_document) if n_test else None
    final = models[best] if not n_test else clone(base).set_params(n_components=best).fit(X)
    return ClusterSelection(table=table, best_k=best, best_model=final,
                            best_k_heldout=best_heldout, n_heldout=n_test,
                            too_few_to_hold_out=n if heldout > 0 and n < 50 else 0)


def log_k_factorial(k, n_occupied=None):
    r"""The label-switching correction when comparing K by ELBO: :math:`\log K!`, or with
    ``n_occupied`` (:math:`K_+` clusters holding documents) :math:`\log K!/(K - K_+)!`, the
    distinct labellings (the module docstring)."""
    empty = 0 if n_occupied is None else int(k) - int(n_occupied)
    return float(gammaln(np.asarray(k) + 1.0) - gammaln(empty + 1.0))


def _one_standard_error_choice(table, per_document):
    """The smallest K whose held-out likelihood is within one standard error of the best;
    fills every row's ``heldout_standard_error`` (of its difference to the best K)."""
    best_row = max(table, key=lambda row: row["heldout_log_likelihood"])
    top, best_value = best_row["k"], best_row["heldout_log_likelihood"]
    chosen = None
    for row in table:
        difference = per_document[row["k"]] - per_document[top]
        error = (float(np.sqrt(difference.size) * difference.std(ddof=1))
                 if difference.size > 1 else 0.0)
        row["heldout_standard_error"] = error
        if chosen is None and row["heldout_log_likelihood"] >= best_value - error:
            chosen = row["k"]
    return chosen
