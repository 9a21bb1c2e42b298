"""What the report's pages share, as plain JSON-ready data: the convergence traces, the
posterior of the partition (for a model that keeps draws of it), the selection curve, and the
points' subsample, jitter and axis names. Each kind of page has its own module:
:mod:`._term_page`, :mod:`._gaussian_page`, :mod:`._tree_page`; :mod:`mixbayes.report`
assembles the page.
"""

from __future__ import annotations

import numpy as np

from .._validation import plural

MAX_POINTS = 3000  # points drawn in a projection (a fixed random subsample beyond)
MAX_TRACE = 2000  # points of a trace line (every k-th beyond)
JITTER = 1.0  # one feature: points spread over [-JITTER, JITTER] vertically


def partition_payload(model, names=None, shown=10):
    """The posterior of the partition, for a model that keeps draws of it (a Gibbs-fitted
    DMM's ``label_samples_``, the HDP's groups over its kept sweeps, the tree's leaves): the
    least-expected-VI partition's clusters (sizes), the block-averaged posterior similarity
    between and within them, the credible ball, the posterior of the number of clusters,
    and the ``shown`` least certain items (mean similarity to the rest of their cluster).
    None for a model without draws."""
    from .. import partition

    draws = _partition_draws(model)
    if draws is None or draws.shape[0] < 2:
        return None
    summary = partition.summarise(draws)
    estimate, ball = summary.estimate, summary.ball
    blocks, certainty = partition.block_similarity(draws, estimate.labels)
    if names is None or len(names) != draws.shape[1]:  # (a sample of the documents: rows)
        names = [str(i) for i in range(draws.shape[1])]
    names = list(names)
    order = np.argsort(certainty, kind="stable")[:shown]
    return dict(
        sizes=np.bincount(estimate.labels).tolist(),
        blocks=[[_round(v, 3) for v in row] for row in blocks],
        least_certain=[dict(id=names[i], cluster=int(estimate.labels[i]),
                            certainty=_round(certainty[i], 3)) for i in order],
        note=(f"from {plural(summary.n_draws, 'draw')}: least expected VI "
              f"{estimate.expected_loss:.3f} bits with {plural(estimate.n_clusters, 'cluster')}"
              f"; {ball.level:.0%} credible ball of radius {ball.radius:.3f} bits, "
              f"{int(ball.upper.max()) + 1} to {int(ball.lower.max()) + 1} clusters; "
              "P(clusters) " + ", ".join(f"{k}: {p:.2f}" for k, p in sorted(
                  summary.n_clusters.items(), key=lambda kv: -kv[1])[:4])))


def _partition_draws(model):
    """The partitions a sampler kept (the model's declared ``_kept_partitions``), or None."""
    kept = getattr(model, "_kept_partitions", None)
    return None if kept is None else kept()


def _hdp_traces(model):
    chains = model.trace_.shape[0]
    return [_trace("log p(y, seating) per sweep", "sweep", "nats",
                   [(f"chain {c + 1}", model.trace_["log_joint"][c]) for c in range(chains)]),
            _trace("clusters in use per sweep", "sweep", "clusters",
                   [(f"chain {c + 1}", model.trace_["n_dishes"][c]) for c in range(chains)])]


def _trace(title, xlabel, ylabel, series, first=1):
    """One convergence panel: named lines over ``first``, ``first + 1``, ... (every k-th point
    of a long one); ``first`` 0 for a trace that starts with the starting value."""
    lines = []
    for name, values in series:
        values = np.asarray(values, dtype=float)
        step = max(1, int(np.ceil(values.size / MAX_TRACE)))
        x = np.arange(first, first + values.size)[::step]
        # five significant digits of the trace's own span, not of its values: an ELBO of
        # -929,100 moving by 57 nats was drawn as a staircase of tens
        finite = values[np.isfinite(values)]
        span = float(np.ptp(finite)) if finite.size else 0.0
        top = float(np.abs(finite).max()) if finite.size else 0.0
        digits = 5 if span <= 0 or top <= 0 else min(15, 5 + max(0, int(np.ceil(
            np.log10(top / span)))))
        lines.append(dict(name=name, x=x.tolist(),
                          y=[_round(v, digits) if np.isfinite(v) else None
                             for v in values[::step]]))
    return dict(title=title, xlabel=xlabel, ylabel=ylabel, series=lines)


def selection_payload(rows, chosen):
    """The selection curve from a selection table (rows of dicts, as
    ``select_n_topics(...).table``, ``select_n_clusters(...).table`` or their CSV files hold):
    the criterion on the left axis, its companion (dispersion, held-out likelihood) on the
    right, the chosen K marked."""
    def column(name):
        values = []
        for row in rows:
            value = row.get(name)
            try:
                value = float(value)
            except (TypeError, ValueError):
                value = float("nan")
            values.append(_round(value) if np.isfinite(value) else None)
        return values

    ks = [int(float(row["k"])) for row in rows]
    if "log_bayes_factor" in rows[0]:
        series = [dict(name="log Bayes factor vs K = 1", y=column("log_bayes_factor"),
                       axis="left"),
                  dict(name="residual dispersion", y=column("dispersion"), axis="right")]
        xlabel, ylabel = "number of topics K", "log Bayes factor (nats)"
    else:
        series = [dict(name="ELBO + log K!", y=column("score"), axis="left")]
        held = column("heldout_log_likelihood")
        if any(v is not None for v in held):
            series.append(dict(name="held-out log likelihood", y=held, axis="right"))
        xlabel, ylabel = "number of clusters K", "ELBO + log K! (nats)"
    return dict(x=ks, series=series, chosen=int(chosen), xlabel=xlabel, ylabel=ylabel)


def _subsample(n):
    if n <= MAX_POINTS:
        return np.arange(n)
    return np.sort(np.random.default_rng(0).choice(n, MAX_POINTS, replace=False))


def _points_note(n, shown):
    return (f"all {plural(n, 'point')}" if shown == n else
            f"{shown:,} of {n:,} points (a random subsample)")


def _jitter(xy, d):
    """One feature: spread the points up and down at random (the height means nothing), so
    that they do not hide one another on a line."""
    if d == 1:
        xy = xy.copy()
        xy[:, 1] = np.random.default_rng(0).uniform(-JITTER, JITTER, xy.shape[0])
    return xy


def _axis_names(names, d):
    if d == 1:
        return [names[0], "(random jitter)"]
    if d == 2:
        return list(names)
    return ["principal component 1", "principal component 2"]


def _round(value, digits=5):
    """A float with ``digits`` significant digits: the page needs no more, and the file
    shrinks by half."""
    value = float(value)
    return float(f"{value:.{digits}g}")
