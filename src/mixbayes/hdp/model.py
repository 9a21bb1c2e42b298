r"""``HDPMixture``: a hierarchical Dirichlet process mixture over groups, by exact slice sampling.

Groups share an unbounded set of clusters ("dishes"); how many the data support is part of the
posterior. ``fit(counts)`` treats each document as a group and each token as an observation
(categorical kernel); ``fit(points, groups=g)`` clusters points of many groups (Gaussian kernel).
The sampler is :mod:`mixbayes.hdp._sampler`.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils.validation import check_is_fitted

from .. import _engines
from .._kernel_tools import threads
from .._progress import progress
from .._schema import Schema
from .._terms import top_terms
from .._validation import (
    Either,
    Interval,
    NJobs,
    Options,
    RandomState,
    check_counts,
    check_points,
    check_random_state,
    plural,
    validate_params,
)
from ..diagnostics import effective_sample_size, geweke_z, split_rhat
from ..exceptions import ConvergenceWarning
from ..families.gaussian import column_variances, data_scale
from ..partition import point_labels
from . import _kernels, _sampler
from ._concentrations import check_gamma_prior, resample_concentrations
from ._word_prior import resample_word_prior, word_count_histograms

TRACED = ("n_dishes", "n_tables", "log_joint", "top_concentration", "group_concentration")
_TRACE_DTYPE = np.dtype([("n_dishes", np.int64), ("n_tables", np.int64), ("log_joint", float),
                         ("top_concentration", float), ("group_concentration", float)])
_MAX_STORED_LABELS = 10_000_000
DEFAULT_WORD_PRIOR = 0.03
DEFAULT_TOP_PRIOR = (1.0, 0.1)  # Teh et al. (2006)
DEFAULT_GROUP_PRIOR = (1.0, 1.0)
# the short-group regime (categorical kernel; the class docstring, docs/benchmarks.md "HDP: a
# short-text regime"): groups of fewer tokens than this on average are taken as one topic each
SHORT_GROUP_TOKENS = 20
SHORT_WORD_PRIOR = 0.05
SHORT_GROUP_START = 0.1  # alpha0's start there (under its prior): about one table a group
AUTO = "auto"
_MAX_TOKENS = 2**31 - 1  # stored labels are int32; each token costs about 50 bytes of state
_MOVES = ("crf", "labels", "all", "collapsed", "none")


class HDPMixture(ClusterMixin, BaseEstimator):
    r"""HDP mixture of categorical tokens or Gaussian points, fitted by an exact slice sampler.

    Parameters
    ----------
    kernel : {"categorical", "gaussian"}, default="categorical"
        Observation model. Categorical: tokens :math:`y \in [W]`,
        :math:`\phi_k \sim \mathrm{Dir}(\alpha_w)`. Gaussian:
        :math:`y \sim N(\phi_k, I/\tau_y)`, :math:`\phi_k \sim N(\mu_0, I/\tau_\phi)`.
    top_concentration : float or "auto", default="auto"
        :math:`\gamma_0`, concentration of the shared dish weights :math:`\beta`: its start
        when it has a prior, its value when the (resolved) ``top_concentration_prior`` is
        None. ``"auto"``: :math:`\sqrt{J}` for short groups (:math:`J` groups; see
        "Defaults chosen from the data" below), 1.0 otherwise.
    group_concentration : float or "auto", default="auto"
        :math:`\alpha_0`, concentration of every group's table weights: its start, or its
        value when ``group_concentration_prior`` is None. ``"auto"``: 0.1 for short groups,
        1.0 otherwise.
    top_concentration_prior : (shape, rate), None or "auto", default="auto"
    group_concentration_prior : (shape, rate) or None, default=(1.0, 1.0)
        A Gamma prior on :math:`\gamma_0` (resp. :math:`\alpha_0`): the concentration is
        redrawn after every sweep from its exact conditional given the seating (Escobar & West's
        auxiliary variables, :mod:`mixbayes.hdp._concentrations`), starting from
        ``top_concentration`` (resp. ``group_concentration``); None keeps it fixed.
        ``"auto"``: None (:math:`\gamma_0` fixed) for short groups, Teh et al.'s (2006)
        Gamma(1, 0.1) otherwise; :math:`\alpha_0`'s default is their Gamma(1, 1) in both
        regimes. Until issue 25 both
        were None (fixed at 1): on short texts, where a document is about one topic, the data
        want :math:`\alpha_0` near 0.1 (one table a document) and :math:`\gamma_0` near 10-20
        (many dishes), and the fixed values opened 25 clusters for tweet's 89 queries and 22 for
        googlenews_t's 152 stories (NMI 0.62, 0.51); see ``word_prior`` for the figures of the
        new defaults, ``bench/hdp_defaults.py`` for the grid.
    n_iter : int, default=100
        Sweeps per chain.
    burn_in : int or None, default=None
        Sweeps left out of the posterior summaries and diagnostics; None means ``n_iter // 2``.
    n_chains : int, default=1
        Independent chains (each from its own start); with two or more, ``rhat_`` compares them.
    init : {"crf", "ones"}, default="crf"
        Start: one sequential pass of the Chinese restaurant franchise with the atoms integrated
        out (a valid state that already reflects the data), or Amini et al.'s all-at-one-table
        start, from which an exact slice sampler barely moves (kept for comparison).
    moves : {"auto", "crf", "labels", "all", "collapsed", "none"}, default="auto"
        Exact additions to the updates of Amini et al. (2019). ``"auto"``: ``"collapsed"`` for
        short groups, ``"all"`` otherwise (the class's Notes). ``"labels"``: the dish labels and
        every group's table labels redrawn each sweep from their exact conditional given the
        partitions (a size-biased order: big clusters on early sticks), and a customer step in
        which an empty table's dish is integrated out, so a customer opening a table picks the
        dish that fits among those its slice allows instead of one drawn blindly from
        :math:`\beta`. ``"crf"``: also, at the start of every sweep, one pass of the
        franchise's collapsed Gibbs sampler (sticks and atoms integrated out, every table and
        dish open to every customer; serial). ``"all"``: also a redraw of every occupied
        table's dish with the atoms integrated out given :math:`\beta` and no dish slice,
        in place of the slice sampler's dish step (the same dishes, redrawn from a
        conditional with fewer variables fixed; since issue 25, for the sweep's cost).
        ``"collapsed"``: the two collapsed moves (the franchise's pass and the table-level dish
        redraw) and the label redraw, with the slice sampler's own customer step (an empty
        table's dish drawn from :math:`\beta`, not integrated out).
        ``"none"``: their updates alone. Measured effect (docs/benchmarks.md): on Amini
        et al.'s simulation (J = W = 20, n = 100, 3 seeds) NMI at sweeps 20 / 60 is
        0.66 / 0.70 with ``"crf"`` and 0.57 / 0.65 with ``"labels"``; on dblp3 (5 seeds) 0.40
        after 100 sweeps with ``"crf"``, 0.30 with ``"labels"``. The default was ``"crf"``
        until issue 25: the table-level dish redraw of ``"all"`` moves a whole short document
        to another or a new dish at once, which one customer at a time rarely does when
        :math:`\alpha_0` is small (seed 0, 100 sweeps, the default Gamma priors, word prior
        0.1; ``bench/hdp_defaults.py``): NMI 0.73 against 0.57 with ``"crf"`` on tweet, 0.79
        against 0.52 on 2,000 simulated short texts, 0.97 against 0.20 (two clusters) on 1,000
        simulated documents of 50 tokens with 15 dishes.
    word_prior : float or None, default=None
        :math:`\alpha_w` (categorical); None means 0.05 per term for short groups, 0.03
        otherwise (the figures below are for 0.03 on every corpus, before the regimes). It sets what a cluster pays for a word none of its tokens has used yet,
        :math:`\alpha_w / (n_k + W\alpha_w)` against :math:`1/W` in a new cluster: with
        :math:`\alpha_w = 1/W` (this class's earlier default) a cluster of 100 tokens pays a
        factor of about 100 per unseen word, so short texts with rare words open clusters of their
        own (2,472 tweets: 497 clusters after 200 sweeps and still climbing; 30 with 0.1, for 89
        queries). On dblp3 the mean NMI over 3 seeds after 200 sweeps is 0.39 with 1/W, 0.52 with
        0.1. The default was 0.1 (GSDMM's choice) until issue 25: with the sparse
        :math:`\alpha_0` the Gamma priors find, 0.1 opens too few clusters on short texts. With
        this class's other defaults (seed 0, 100 sweeps; ``bench/hdp_defaults.py``) 0.03 gives
        112 clusters and NMI 0.80 on tweet (89 queries), 75 and 0.75 on googlenews_t (152
        stories), where 0.05 gives 58 / 0.81 and 45 / 0.72 and the old defaults 25 / 0.62 and
        22 / 0.51; on simulated corpora 0.03 (0.05) gives NMI 0.86 (0.84) on 2,000 short texts
        of 60 clusters, 0.76 (0.80) on the HDP document's J = W = 50 and 0.92 (0.99) on 1,000
        mixed documents of 50 tokens, against 0.46, 0.70 and 0.12 with the old defaults.
        **Longer documents of one topic each want a larger value.** The Gamma priors then
        take :math:`\alpha_0` to about one table a document, and a document of tens of
        tokens pays the unseen-word factor for many of its words in any other cluster, so
        0.03 splits such a corpus finely: classic3's abstracts (66 tokens a document,
        4,303 terms, 3 collections; 100 sweeps, seed 0) got 390 clusters (documents' majority
        dishes), NMI 0.35, from the defaults; on 600 of them 170 clusters (NMI 0.37), and 66 / 25 / 6 clusters (NMI 0.47 /
        0.66 / 0.88) with ``word_prior`` 0.1 / 0.3 / 1.0 (2026-12-04). No single value fits
        both kinds of corpus, and resampling it (``word_prior_prior``) does not find one
        either (270 clusters on the 600): set ``word_prior`` near 1 for documents of tens of
        tokens that each hold one topic.
    word_prior_prior : (shape, rate) or None, default=None
        A Gamma prior on :math:`\alpha_w` (categorical kernel; ignored by the Gaussian one):
        :math:`\alpha_w` is redrawn after every sweep, starting from ``word_prior``, by one
        slice-sampling step on :math:`\log\alpha_w` that keeps its exact conditional given
        the seating, :math:`p(\alpha_w)\prod_k \frac{\Gamma(W\alpha_w)}{\Gamma(n_k +
        W\alpha_w)}\prod_w\frac{\Gamma(n_{kw} + \alpha_w)}{\Gamma(\alpha_w)}` over the
        dishes in use (:mod:`mixbayes.hdp._word_prior`); None keeps it fixed. Not the
        default (issue 25; docs/benchmarks.md, "HDP word prior resampled"): on HDP-simulated
        corpora it finds the simulation's value, but on short texts the word prior and the
        partition pull each other along (finer clusters want a smaller prior, which opens
        more) and the data swamp any Gamma prior: with Gamma(1, 1), 100 sweeps, seeds 1-3, it
        went to about 0.01 and opened 284-323 clusters for tweet's 89 queries (NMI 0.79, the
        default 0.78-0.82) and 182-205 for googlenews_t's 152 stories (NMI 0.76-0.78, the
        default 74-88 clusters and 0.74-0.77), and to 0.09-0.14 on 2,000 simulated short
        texts (NMI 0.65-0.73 against 0.85-0.87).
    prior_mean : array-like of shape (n_features,) or None, default=None
        :math:`\mu_0` (Gaussian); None means the mean of the points.
    prior_precision : float or None, default=None
        :math:`\tau_\phi` (Gaussian); None means 1 / (mean per-feature variance of the points),
        so atoms spread like the data. Constant columns count 0 in that mean (exactly, not their
        rounding noise); when every column is constant the variance is taken as 1.
    observation_precision : float or None, default=None
        :math:`\tau_y` (Gaussian, known); None means 10 / (mean per-feature variance), i.e.
        clusters a tenth as wide (in variance) as the whole sample. Set it when the noise level
        is known: it decides how finely the points are split.
    point_estimate : {None, "vi", "binder"}, default=None
        Also store :attr:`point_labels_`: the groups' partition of least posterior expected
        VI (or Binder's loss) over the kept sweeps (:func:`mixbayes.partition.point_estimate`
        of ``group_label_samples_``), an answer that weighs every kept sweep rather than the
        last; ``group_labels_`` stays the last sweep's majority dishes.
    initial_table_cap : int, default=20
        Initial allocation of table sticks per group; it grows as the slices demand and does not
        change the posterior (see :mod:`mixbayes.hdp._sampler`).
    random_state : int, Generator or None, default=0
    n_jobs : int or None, default=None
        Threads the fit's numba kernels may use (scikit-learn's convention): None, the
        library's policy (every core, for problems of at least 50,000 observations;
        smaller ones run serially); 1 serial; -1 every core; n that many. Results do not depend
        on it. BLAS runs on one thread inside a fit whatever it is (see
        :mod:`mixbayes._kernel_tools`).
    verbose : int, default=0
        Progress bar over sweeps.

    Attributes
    ----------
    labels_ : ndarray of shape (n_observations,)
        Dish of every observation in the last sweep of the first chain, numbered 0.. in order
        of size (tokens are ordered document by document, then by term, each repeated by count).
    group_labels_ : ndarray of shape (n_groups,)
        Majority dish of every group (ties to the larger dish).
    n_components_ : int
        Dishes in use in that state.
    components_ : ndarray of shape (n_components_, n_features)
        Posterior mean atoms of those dishes given the state: word distributions or means.
    trace_ : structured ndarray of shape (n_chains, n_iter)
        Per sweep: ``n_dishes`` and ``n_tables`` in use, ``top_concentration`` and
        ``group_concentration`` (after the sweep's update when they have priors), and
        ``log_joint``, the log density of the data and the seating given them, with sticks and
        atoms integrated out.
    rhat_, ess_ : structured ndarray of shape ()
        Split R-hat (NaN for one chain unless its halves differ) and effective sample size of
        every traced scalar over the sweeps after burn-in, all chains pooled (NaN for a fixed
        concentration).
    group_label_samples_ : ndarray of shape (n_kept, n_groups)
        Majority dish of every group in every kept sweep of every chain (labels of one sweep
        are numbered within that sweep).
    label_samples_ : ndarray of shape (n_kept, n_observations) or None
        Observation dishes per kept sweep; None when larger than 10 million entries.
    point_labels_ : ndarray of shape (n_groups,)
        With ``point_estimate`` set: the least expected-loss partition of the groups,
        clusters numbered 0.. by decreasing size (not dish numbers).
    term_frequency_ : ndarray of shape (n_features,)
        Corpus frequency of every term (categorical kernel; the denominator of lift).
    convergence_warnings_ : list of str
        What the trace says against trusting the fit, each also issued as a
        :class:`~mixbayes.ConvergenceWarning`: the number of clusters or the log joint still
        trending over the sweeps after burn-in (Geweke's :math:`|z| > 3` between their first
        10% (at least 4 sweeps) and last 50%, any chain; with fewer than 16 kept sweeps a
        warning says they are too few to check), or chains that disagree (split R-hat above
        1.1).
    word_prior_ : float
        Categorical kernel: the :math:`\alpha_w` of ``components_``, that of the first chain's
        last sweep (the setting when ``word_prior_prior`` is None).
    top_concentration_, group_concentration_ : float
        Posterior means of :math:`\gamma_0` and :math:`\alpha_0` over the sweeps after burn-in,
        all chains pooled (the fixed values when they have no prior).
    top_concentration_prior_ : (shape, rate) or None
        The prior on :math:`\gamma_0` the fit used (``top_concentration_prior`` resolved:
        None where :math:`\gamma_0` was fixed).
    short_groups_ : bool
        Whether the groups counted as short (categorical kernel, fewer than
        ``SHORT_GROUP_TOKENS`` = 20 tokens a group on average), which chose the ``"auto"`` and
        None defaults; always False for the Gaussian kernel.
    n_groups_, n_features_in_ : int

    Notes
    -----
    **Defaults chosen from the data** (issue 25). With the categorical kernel, when the
    groups hold fewer than ``SHORT_GROUP_TOKENS`` = 20 tokens on average (tweets, titles:
    a group is about one topic), the defaults are the short-text regime: :math:`\gamma_0`
    fixed at :math:`\sqrt{J}`, :math:`\alpha_0` from 0.1 under its Gamma(1, 1) prior and
    :math:`\alpha_w = 0.05`. Otherwise (longer groups that mix dishes, and every Gaussian fit)
    they are :math:`\gamma_0` from 1 under Gamma(1, 0.1), :math:`\alpha_0` from 1 under
    Gamma(1, 1), :math:`\alpha_w = 0.03`, as before. A value given for a parameter is used
    for that parameter whatever the regime (a ``top_concentration_prior`` given with
    ``top_concentration="auto"`` starts from the regime's :math:`\gamma_0`; a
    ``top_concentration`` given with the prior left to ``"auto"`` is fixed for short groups and
    a start otherwise).

    Why: a DP's number of clusters grows like :math:`\gamma_0\log(1 + J/\gamma_0)`, so
    holding :math:`\gamma_0` at :math:`\sqrt{J}` lets the number of dishes grow with the
    corpus (GSDMM's setting, K = 500 clusters at :math:`\alpha = 0.1`, is a Dirichlet of total
    mass 50); under its Gamma(1, 0.1) prior :math:`\gamma_0` falls to 10-25 on short texts
    (few dishes make a small :math:`\gamma_0` likely, which opens fewer dishes). Measured
    (docs/benchmarks.md, "HDP: a short-text regime"; 100 sweeps, seeds 0 and 1): on tweet
    (8.6 tokens a document, 89 queries) the regime opens 89 and 97 clusters, NMI 0.84 and 0.83
    (the long-group values: 106 and 110, 0.77 and 0.81); on googlenews_t (6 tokens, 152
    stories) 105 and 117, NMI 0.83 and 0.83 (67 and 88, 0.76 and 0.75) - issue 25's goals (a
    count within 1.5x of the classes, NMI >= 0.8); on 2,000 simulated short texts (8 tokens,
    60 clusters) NMI 0.91 (0.88). Starting :math:`\alpha_0` at 1 instead of 0.1 lost
    googlenews_t's NMI (0.79). On groups that mix dishes the regime is worse, which is why it
    is kept to short groups: the HDP document's simulation with 100 tokens a group, NMI 0.70-0.73
    against 0.78, and 1,000 documents of 50 tokens with 15 dishes, 20-22 clusters and NMI
    0.75-0.76 against 14-15 and 0.99 with the long-group values.

    Short groups also get their own moves, ``"collapsed"`` (``moves="auto"``): the two
    collapsed moves and the label redraw, with the slice sampler's own customer step. The
    informed step of ``"all"`` reads, for the last customer of every table, its word under
    every dish above the table's slice (about 70,000 lazy atom entries a sweep on tweet, a
    third of the sweep), and with the table-level dish move on, short texts do not need it:
    100 sweeps, seeds 0 and 1, tweet 81 and 89 clusters, NMI 0.84 and 0.83 (``"all"``: 86 and
    80, 0.84 and 0.85), googlenews_t 104 and 109, 0.82 and 0.81 (117 and 113, 0.83 and 0.81),
    the simulated short texts 0.92 and 0.91 (0.91 and 0.92), at 9 ms a sweep on tweet against
    14 (docs/benchmarks.md, "HDP sweep cost on short texts").
    """

    _parameter_rules = {
        "top_concentration": Either((Options((AUTO,)), Interval("real", 0, None, "neither"))),
        "group_concentration": Either((Options((AUTO,)), Interval("real", 0, None, "neither"))),
        "n_iter": Interval("int", 1),
        "burn_in": Interval("int", 0, allow_none=True),
        "n_chains": Interval("int", 1),
        "word_prior": Interval("real", 0, None, "neither", allow_none=True),
        "prior_precision": Interval("real", 0, None, "neither", allow_none=True),
        "observation_precision": Interval("real", 0, None, "neither", allow_none=True),
        "initial_table_cap": Interval("int", 1),
        "point_estimate": Options((None, "vi", "binder")),
        "random_state": RandomState(),
        "n_jobs": NJobs(),
        "verbose": Interval("int", 0),
    }

    # parameters stored as JSON lists that load as tuples (mixbayes.persist)
    _tuple_params = ("top_concentration_prior", "group_concentration_prior")

    def __init__(self, kernel="categorical", *, top_concentration=AUTO,
                 group_concentration=AUTO, top_concentration_prior=AUTO,
                 group_concentration_prior=DEFAULT_GROUP_PRIOR,
                 n_iter=100, burn_in=None, n_chains=1, init="crf", moves=AUTO, word_prior=None,
                 word_prior_prior=None, prior_mean=None, prior_precision=None, observation_precision=None,
                 initial_table_cap=20, point_estimate=None, random_state=0, n_jobs=None,
                 verbose=0):
        self.kernel = kernel
        self.top_concentration = top_concentration
        self.group_concentration = group_concentration
        self.top_concentration_prior = top_concentration_prior
        self.group_concentration_prior = group_concentration_prior
        self.n_iter = n_iter
        self.burn_in = burn_in
        self.n_chains = n_chains
        self.init = init
        self.moves = moves
        self.word_prior = word_prior
        self.word_prior_prior = word_prior_prior
        self.prior_mean = prior_mean
        self.prior_precision = prior_precision
        self.observation_precision = observation_precision
        self.initial_table_cap = initial_table_cap
        self.point_estimate = point_estimate
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    # ------------------------------------------------------------------ what services read
    @property
    def _report_kind(self):
        """Its report page (words, or points for the Gaussian kernel) and view (mixbayes.report)."""
        return ("terms" if self.kernel == "categorical" else "gaussian", "sampled")

    def _kept_partitions(self):
        """Every document's (group's) majority cluster over the kept sweeps."""
        return getattr(self, "group_label_samples_", None)

    def _persist_schema(self, scalars):
        """The fitted attributes :mod:`mixbayes.persist` stores (no probe: the sampler's
        state is its draws); ``word_prior_`` where stored (files written before it existed
        read the setting instead, :func:`fitted_word_prior`)."""
        stored = [name for name in ("word_prior_", "short_groups_", "top_concentration_prior_")
                  if name in scalars]  # files written before issue 25's regimes lack the last two
        arrays = {"labels_": (("*",), "label"), "group_labels_": (("G",), "label"),
                  "components_": (("K", "p"), "f"), "trace_": (("*", "*"), "trace"),
                  "rhat_": ((), "stats"), "ess_": ((), "stats"),
                  "group_label_samples_": (("*", "G"), "int"),
                  "label_samples_": (("*", "*"), "int", "optional"),
                  "point_labels_": (("G",), "int", "optional")}
        if self.kernel == "categorical":
            arrays["term_frequency_"] = (("p",), ">=0")
        scalars = {"n_components_": "count", "n_groups_": "count", "n_features_in_": "count",
                   "top_concentration_": "+", "group_concentration_": "+",
                   "label_samples_": "none", "convergence_warnings_": "strings"}
        rules = {"word_prior_": "+", "short_groups_": "bool", "top_concentration_prior_": "prior"}
        scalars.update({name: rules[name] for name in stored})
        stats = np.dtype([(name, float) for name in TRACED])
        return Schema(arrays, scalars, dtypes=dict(trace=lambda: _TRACE_DTYPE,
                                                   stats=lambda: stats),
                      array_or_none=("label_samples_",), check_params=self._check_params)

    # ------------------------------------------------------------------ data
    def _check_params(self):
        validate_params(self, self._parameter_rules)
        if self.kernel not in ("categorical", "gaussian"):
            raise ValueError(f"kernel must be 'categorical' or 'gaussian'; got {self.kernel!r}.")
        if self.moves not in _MOVES + (AUTO,):
            raise ValueError(f"moves must be one of {', '.join(map(repr, _MOVES + (AUTO,)))}; "
                             f"got {self.moves!r}.")
        if self.init not in ("crf", "ones"):
            raise ValueError(f"init must be 'crf' or 'ones'; got {self.init!r}.")
        if self.burn_in is not None and self.burn_in >= self.n_iter:
            raise ValueError(f"burn_in must be below n_iter={self.n_iter}; got {self.burn_in}.")
        word = check_gamma_prior(self.word_prior_prior, "word_prior_prior")
        top = self.top_concentration_prior
        return (top if isinstance(top, str) and top == AUTO
                else check_gamma_prior(top, "top_concentration_prior"),
                check_gamma_prior(self.group_concentration_prior, "group_concentration_prior"),
                word if self.kernel == "categorical" else None)

    def _grouped_tokens(self, X, groups):
        if groups is not None:
            raise ValueError("groups must be None for the categorical kernel: every document "
                             "(row of the counts) is a group; for grouped points (real "
                             "values) use kernel='gaussian'.")
        X = check_counts(X, "X")
        empty = np.flatnonzero(np.asarray(X.sum(axis=1)).ravel() == 0)
        if empty.size:
            raise ValueError(
                f"X has {plural(empty.size, 'empty document')} (e.g. row {empty[0]}): a group "
                "needs at "
                "least one observation; drop them first (X[X.sum(axis=1).A1 > 0])."
            )
        W = X.shape[1]
        n_tokens = int(X.sum())
        if n_tokens > _MAX_TOKENS:
            raise ValueError(
                f"X holds {n_tokens} tokens (the sum of its counts); the categorical kernel keeps "
                f"one state per token and takes at most {_MAX_TOKENS}."
            )
        try:
            tokens = np.repeat(X.indices.astype(np.int64), X.data)
        except MemoryError:
            raise ValueError(f"X holds {n_tokens} tokens (the sum of its counts), more than this "
                             "machine can hold one state each for.") from None
        group_ptr = np.concatenate([[0], np.cumsum(np.asarray(X.sum(axis=1)).ravel())])
        prior = word_prior_value(self.word_prior, short_groups(n_tokens, X.shape[0], self.kernel))
        data = _sampler.GroupedData(_sampler.CATEGORICAL, group_ptr.astype(np.int64), tokens,
                                    np.zeros((0, 0)), W, prior)
        return data, np.arange(tokens.size), W

    def _grouped_points(self, X, groups):
        if sp.issparse(X):
            raise TypeError("X must be a dense array of points for the Gaussian kernel.")
        X = check_points(X, "X", min_samples=2)
        if groups is None:
            raise ValueError("groups is required for the Gaussian kernel: one group label per "
                             "point (use np.zeros(len(X)) for a single group).")
        groups = np.asarray(groups)
        if groups.shape != (X.shape[0],):
            raise ValueError(f"groups must have one label per point ({X.shape[0]}); got shape "
                             f"{groups.shape}.")
        try:
            _, group_index = np.unique(groups, return_inverse=True)
        except TypeError:  # labels that cannot be ordered, e.g. numbers mixed with strings
            raise TypeError("groups must be labels of one kind (all numbers or all strings); "
                            f"got {groups[:5].tolist()!r}...") from None
        group_index = group_index.ravel()
        order = np.argsort(group_index, kind="stable")
        sizes = np.bincount(group_index)
        # the mean per-feature variance, a constant column counting 0 (np.var of a column of
        # 1/3 is rounding noise ~1e-33, which made the precisions ~1e34 and split identical
        # points); 1 when every column is constant. A constant column or d > n is harmless here:
        # the kernel is isotropic and needs only this one positive number.
        variance = data_scale(column_variances(X))
        mean = X.mean(axis=0) if self.prior_mean is None else np.asarray(self.prior_mean, float)
        if mean.shape != (X.shape[1],) or not np.all(np.isfinite(mean)):
            raise ValueError(f"prior_mean must be {X.shape[1]} finite numbers; got {mean!r}.")
        data = _sampler.GroupedData(
            _sampler.GAUSSIAN, np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
            np.arange(X.shape[0], dtype=np.int64), np.ascontiguousarray(X[order]), 0, 0.0, mean,
            1.0 / variance if self.prior_precision is None else float(self.prior_precision),
            10.0 / variance if self.observation_precision is None
            else float(self.observation_precision),
        )
        return data, order, X.shape[1]

    # ------------------------------------------------------------------ fitting
    def fit(self, X, y=None, groups=None, callback=None):
        """Run the chains.

        Parameters
        ----------
        X : counts (n_documents, n_terms) for the categorical kernel, points (n, d) for the
            Gaussian one.
        groups : array-like of shape (n,), Gaussian kernel only
            Group of every point.
        callback : callable, optional
            Called after every sweep as ``callback(chain, sweep, info)`` with ``info`` a dict
            of ``n_dishes``, ``n_tables``, ``log_joint`` and ``labels`` (the observations'
            dishes, in the order of :attr:`labels_`); returning ``False`` stops that chain.

        The group loops use at most ``n_jobs`` threads (:func:`mixbayes._kernel_tools.threads`).
        """
        top_prior, group_prior, word_prior = self._check_params()
        _engines.runs_here("HDPMixture")
        with threads(self.n_jobs):
            return self._fit(X, groups, callback, top_prior, group_prior, word_prior)

    def _burn_in(self):
        """The sweeps left out of every chain: ``burn_in``, or half of ``n_iter`` when None."""
        return self.n_iter // 2 if self.burn_in is None else int(self.burn_in)

    def _fit(self, X, groups, callback, top_prior, group_prior, word_prior):
        if self.kernel == "categorical":
            data, order, n_features = self._grouped_tokens(X, groups)
        else:
            data, order, n_features = self._grouped_points(X, groups)
        short = short_groups(data.n_observations, data.n_groups, self.kernel)
        start = resolve_defaults(self.get_params(deep=False), short, data.n_groups)
        if isinstance(top_prior, str):  # "auto", resolved
            top_prior = start["top_concentration_prior"]
        move_flags = _move_flags(start["moves"])
        rng = check_random_state(self.random_state)
        burn_in = self._burn_in()
        inverse = np.empty_like(order)
        inverse[order] = np.arange(order.size)  # sorted position of every original observation
        in_order = bool((order == np.arange(order.size)).all())  # tokens: already in order
        trace = np.zeros((self.n_chains, self.n_iter), dtype=_TRACE_DTYPE)
        keep_labels = (self.n_iter - burn_in) * self.n_chains * data.n_observations
        keep_labels = keep_labels <= _MAX_STORED_LABELS
        group_samples, label_samples, first_state = [], [], None
        stopped, first_word_prior = False, data.word_prior
        for chain in range(self.n_chains):
            gamma0 = start["top_concentration"]
            alpha0 = start["group_concentration"]
            data.word_prior = start["word_prior"] if word_prior else data.word_prior
            state = _sampler.initial_state(data, gamma0, alpha0, rng, self.init,
                                           self.initial_table_cap)
            with progress(self.n_iter, self.verbose, f"HDP chain {chain + 1}") as bar:
                for sweep in range(self.n_iter):
                    counts = _sampler.sweep(data, state, gamma0, alpha0, rng, **move_flags)
                    dishes = state.dish_of(data)
                    n_dishes, n_tables = _kernels.seating_size(counts, state.table_dish)
                    gamma0, alpha0 = resample_concentrations(
                        gamma0, alpha0, counts, state.table_dish, top_prior, group_prior, rng)
                    if word_prior is not None:
                        data.word_prior = resample_word_prior(
                            data.word_prior, word_count_histograms(dishes, data.rows,
                                                                   data.n_words),
                            data.n_words, word_prior, rng)
                    row = (n_dishes, n_tables,
                           _sampler.log_joint(data, state, gamma0, alpha0, counts, dishes),
                           gamma0, alpha0)
                    trace[chain, sweep] = row
                    bar.update()
                    labels = None
                    if sweep >= burn_in or callback:
                        labels = dishes if in_order else dishes[inverse]
                    if sweep >= burn_in:
                        group_samples.append(_majority(dishes, data))
                        if keep_labels:
                            label_samples.append(labels.astype(np.int32))
                    if callback is not None:
                        info = dict(zip(TRACED, row), labels=labels)
                        if data.kernel == _sampler.CATEGORICAL:
                            info["word_prior"] = data.word_prior
                        if callback(chain, sweep, info) is False:
                            # stopping ends the fit: keep the chains and sweeps run so far
                            trace = trace[: chain + 1, : sweep + 1]
                            stopped = True
                            break
            if chain == 0:
                first_state, first_word_prior = state, data.word_prior
            if stopped:
                break
        data.word_prior = first_word_prior  # the atoms of the first chain's last state
        self._store(data, first_state, order, inverse, trace, burn_in, group_samples,
                    label_samples if keep_labels else None, n_features, start, short)
        return self

    def _store(self, data, state, order, inverse, trace, burn_in, group_samples, label_samples,
               n_features, start, short):
        dishes = state.dish_of(data)
        names, relabelled, sizes = np.unique(dishes, return_inverse=True, return_counts=True)
        rank = np.empty(names.size, dtype=np.int64)
        rank[np.argsort(-sizes, kind="stable")] = np.arange(names.size)
        relabelled = rank[relabelled]
        self.labels_ = relabelled[inverse]
        self.group_labels_ = _majority(relabelled, data)
        self.n_components_ = int(names.size)
        self.components_ = _posterior_mean_atoms(data, relabelled, names.size)
        self.trace_ = trace
        kept = trace[:, min(burn_in, trace.shape[1] - 1):]
        self.short_groups_ = bool(short)
        self.top_concentration_prior_ = start["top_concentration_prior"]
        for name in ("top_concentration", "group_concentration"):
            fixed = start[name + "_prior"] is None
            setattr(self, name + "_", float(start[name] if fixed else kept[name].mean()))
        stats = np.zeros((), dtype=[(name, float) for name in TRACED])
        self.rhat_, self.ess_ = stats.copy(), stats.copy()
        for name in TRACED:
            draws = kept[name].astype(float)
            enough = draws.shape[1] >= 4
            self.rhat_[name] = split_rhat(draws) if enough else np.nan
            self.ess_[name] = effective_sample_size(draws) if enough else np.nan
        self.group_label_samples_ = (np.asarray(group_samples) if group_samples
                                     else np.zeros((0, data.n_groups), dtype=np.int64))
        self.label_samples_ = np.asarray(label_samples) if label_samples else None
        if self.point_estimate is not None:
            self.point_labels_ = point_labels(self.group_label_samples_, self.point_estimate,
                                              "n_iter or burn_in")
        self.n_groups_ = data.n_groups
        self.n_features_in_ = n_features
        self.convergence_warnings_ = _convergence_warnings(kept, self.rhat_)
        for message in self.convergence_warnings_:
            warnings.warn(message, ConvergenceWarning, stacklevel=3)
        if data.kernel == _sampler.CATEGORICAL:
            self.word_prior_ = float(data.word_prior)
            frequency = np.bincount(data.rows, minlength=data.n_words).astype(float)
            self.term_frequency_ = frequency / frequency.sum()

    # ------------------------------------------------------------------ summaries
    def partition_summary(self, level="groups", loss="vi", credible_level=0.95,
                          random_state=0):
        """The posterior of the groups' (or observations') partition over the kept sweeps
        (:func:`mixbayes.partition.summarise`): the partition of least expected ``loss``, its
        credible ball at ``credible_level`` and the posterior of the number of clusters."""
        from .. import partition

        return partition.summarise(self._samples(level), loss=loss, level=credible_level,
                                   random_state=random_state)

    def _samples(self, level):
        check_is_fitted(self, "labels_")
        if level == "groups":
            samples = self.group_label_samples_
        elif level == "observations":
            if self.label_samples_ is None:
                raise ValueError("label samples were not stored (too many observations x "
                                 "sweeps); use level='groups'.")
            samples = self.label_samples_
        else:
            raise ValueError(f"level must be 'groups' or 'observations'; got {level!r}.")
        if samples.shape[0] == 0:
            raise ValueError("no sweeps were kept after burn-in.")
        return samples

    def coclustering(self, level="groups"):
        """Posterior probability that two groups (or observations) share a dish, over the kept
        sweeps: (n_groups, n_groups) or (n_observations, n_observations)."""
        samples = self._samples(level)
        together = np.zeros((samples.shape[1], samples.shape[1]))
        for labels in samples:
            together += labels[:, None] == labels[None, :]
        return together / samples.shape[0]

    def top_words(self, vocabulary, n=10, by="probability"):
        """The ``n`` top terms of every cluster (categorical kernel), by posterior mean
        probability or by lift (probability over the term's corpus frequency). Only terms the
        cluster's tokens use are listed: a cluster with fewer than ``n`` distinct terms lists
        fewer."""
        check_is_fitted(self, "labels_")
        if self.kernel != "categorical":
            raise ValueError("top_words is for the categorical kernel.")
        # a term no token of cluster k uses has the posterior mean a / (n_k + W a) exactly;
        # one used c >= 1 times has (c + a) / (n_k + W a)
        W = self.components_.shape[1]
        a = fitted_word_prior(self)
        sizes = np.bincount(self.labels_, minlength=self.n_components_)
        used = self.components_ * (sizes + W * a)[:, None] - a > 0.5
        return top_terms(self.components_, vocabulary, n, by, self.term_frequency_, used)

    def fit_predict(self, X, y=None, groups=None, callback=None):
        """Fit and return ``group_labels_`` for counts (one label per document), ``labels_``
        for points."""
        self.fit(X, groups=groups, callback=callback)
        return self.group_labels_ if self.kernel == "categorical" else self.labels_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags


def _majority(dishes, data):
    """Most frequent dish of every group (:func:`mixbayes.partition.majority_labels`: a tie to
    the tied dish whose first observation comes first)."""
    return _kernels.group_majority(data.group_ptr, dishes)


def _posterior_mean_atoms(data, labels, K):
    if data.kernel == _sampler.CATEGORICAL:
        W = data.n_words
        counts = np.bincount(labels * W + data.rows, minlength=K * W).reshape(K, W)
        mean = counts + data.word_prior
        return mean / mean.sum(axis=1, keepdims=True)
    n = np.bincount(labels, minlength=K).astype(float)
    sums = np.zeros((K, data.points.shape[1]))
    np.add.at(sums, labels, data.points)
    precision = data.prior_precision + n * data.observation_precision
    return ((data.prior_precision * data.prior_mean + data.observation_precision * sums)
            / precision[:, None])


def short_groups(n_observations, n_groups, kernel="categorical"):
    """Whether groups of ``n_observations`` in all count as short: categorical kernel and
    fewer than :data:`SHORT_GROUP_TOKENS` tokens a group on average (every group holds one)."""
    return kernel == "categorical" and n_observations < SHORT_GROUP_TOKENS * n_groups


def resolve_defaults(params, short, n_groups):
    """The starts and priors a fit uses, from an :class:`HDPMixture`'s ``params``: every
    ``"auto"`` (and the word prior's None) by the regime (the class's Notes), every value
    given as it is. Returns a dict of ``top_concentration``, ``group_concentration`` (floats),
    ``top_concentration_prior``, ``group_concentration_prior`` ((shape, rate) or None),
    ``word_prior`` (float; for the Gaussian kernel, unused) and ``moves``."""
    def given(name):
        value = params[name]
        return None if isinstance(value, str) and value == AUTO else value

    top, group, top_prior = (given(name) for name in (
        "top_concentration", "group_concentration", "top_concentration_prior"))
    if params["top_concentration_prior"] is None:
        top_prior = None
    elif top_prior is None:  # "auto"
        top_prior = None if short else DEFAULT_TOP_PRIOR
    else:
        top_prior = check_gamma_prior(top_prior, "top_concentration_prior")
    group_prior = params["group_concentration_prior"]
    return dict(
        top_concentration=float(np.sqrt(n_groups) if short else 1.0) if top is None
        else float(top),
        group_concentration=(SHORT_GROUP_START if short else 1.0) if group is None
        else float(group),
        top_concentration_prior=top_prior,
        group_concentration_prior=None if group_prior is None
        else check_gamma_prior(group_prior, "group_concentration_prior"),
        word_prior=word_prior_value(params.get("word_prior"), short),
        moves=("collapsed" if short else "all") if given("moves") is None else params["moves"])


def _move_flags(moves):
    """The :func:`~mixbayes.hdp._sampler.sweep` flags of a ``moves`` setting (resolved)."""
    return dict(collapsed=moves in ("all", "collapsed"), relabel=moves != "none",
                informed=moves in ("labels", "crf", "all"),
                crf=moves in ("crf", "all", "collapsed"))


def fitted_defaults(model):
    """:func:`resolve_defaults` for a fitted model (a model saved before the regimes has no
    ``short_groups_``: its groups count as long, whose values were then every fit's)."""
    return resolve_defaults(model.get_params(deep=False), getattr(model, "short_groups_", False),
                            model.n_groups_)


def word_prior_value(word_prior, short=False):
    """:math:`\alpha_w`: the given value, or the default, 0.05 for short groups and 0.03
    otherwise (see the class docstring)."""
    if word_prior is not None:
        return float(word_prior)
    return SHORT_WORD_PRIOR if short else DEFAULT_WORD_PRIOR


def fitted_word_prior(model):
    """The :math:`\alpha_w` of a fitted model's ``components_``: ``word_prior_`` (the last
    sweep's value when it is resampled), or the setting for a model saved before it existed."""
    value = getattr(model, "word_prior_", None)
    if value is None:
        return word_prior_value(model.word_prior, getattr(model, "short_groups_", False))
    return float(value)


_WATCHED = (("n_dishes", "the number of clusters"), ("log_joint", "the log joint density"))


def _convergence_warnings(kept, rhat):
    """Warnings from the kept sweeps (chains x sweeps): a trend in the cluster count or the log
    joint within any chain, and chains that disagree."""
    messages = []
    if kept.shape[1] < 16:
        messages.append(f"HDP: only {plural(kept.shape[1], 'sweep')} after burn-in, too few to "
                        "check "
                        "that the chain has settled; raise n_iter (32 or more)")
    else:  # Geweke's windows need a few draws each
        first = max(0.1, 4 / kept.shape[1])  # the first 10%, and at least 4 sweeps
        for name, what in _WATCHED:
            for chain, draws in enumerate(kept[name].astype(float)):
                z = geweke_z(draws, first=first)
                if abs(z) > 3:
                    n_a, n_b = int(first * draws.size), int(0.5 * draws.size)
                    messages.append(
                        f"HDP chain {chain + 1}: {what} is still trending after burn-in "
                        f"(mean {draws[:n_a].mean():.6g} over the first {n_a} of the "
                        f"{draws.size} kept sweeps, {draws[-n_b:].mean():.6g} over the last "
                        f"half; Geweke z = {z:.1f}); raise n_iter before trusting the clusters")
                    break
    if kept.shape[0] > 1:
        for name, what in _WATCHED:
            if np.isfinite(rhat[name]) and rhat[name] > 1.1:
                messages.append(f"HDP chains disagree on {what} (split R-hat {rhat[name]:.2f} "
                                "> 1.1); raise n_iter")
    return messages
