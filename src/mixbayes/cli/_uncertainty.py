"""``--uncertainty``: the posterior of the partition of a run (:mod:`mixbayes.partition`).

Writes ``partition.json`` (the least-expected-VI partition's loss and size, the 95% credible
ball's radius and bounds, the posterior of the number of clusters), adds each item's
point-estimate cluster and its certainty (mean posterior similarity to the rest of its
cluster) to ``assignments.csv``, draws ``similarity.png`` (the posterior similarity between
and within the estimate's clusters, blocks as wide as the clusters: readable at any number of
items) and prints one paragraph.
"""

from __future__ import annotations

import csv

import numpy as np

from .._validation import plural
from ._outputs import save_figure, write_json

LEVEL = 0.95


def write_uncertainty(out, draws, stream, note=None):
    """Everything of the module docstring, from the run's ``draws`` (n_draws, n_items)."""
    from .. import partition, plotting

    summary = partition.summarise(draws, level=LEVEL)
    estimate, ball = summary.estimate, summary.ball
    blocks, certainty = partition.block_similarity(draws, estimate.labels)
    write_json(out.file("partition.json"), dict(
        loss="vi (bits)", expected_loss=estimate.expected_loss,
        n_clusters=estimate.n_clusters, n_draws=summary.n_draws,
        credible_ball=dict(level=ball.level, radius=ball.radius, mass=ball.mass,
                           upper_bound=dict(n_clusters=int(ball.upper.max()) + 1,
                                            distance=ball.upper_distance),
                           lower_bound=dict(n_clusters=int(ball.lower.max()) + 1,
                                            distance=ball.lower_distance),
                           horizontal_bound=dict(n_clusters=int(ball.horizontal.max()) + 1,
                                                 distance=ball.horizontal_distance)),
        n_clusters_posterior={str(k): p for k, p in summary.n_clusters.items()},
        cluster_sizes=np.bincount(estimate.labels).tolist(),
        note=note))
    _append_columns(out.file("assignments.csv"), ["point_estimate", "certainty"],
                    [estimate.labels.tolist(), [f"{c:.4f}" for c in certainty]])
    save_figure(plotting.plot_similarity_blocks(blocks, np.bincount(estimate.labels)),
                out.file("similarity.png"))
    posterior = ", ".join(f"{k}: {p:.2f}" for k, p in sorted(summary.n_clusters.items(),
                                                             key=lambda kv: -kv[1])[:5])
    print(f"partition (from {plural(summary.n_draws, 'draw')}): least expected VI "
          f"{estimate.expected_loss:.3f} bits with {plural(estimate.n_clusters, 'cluster')}; "
          f"{LEVEL:.0%} credible ball of radius {ball.radius:.3f} bits, from "
          f"{int(ball.upper.max()) + 1} to {int(ball.lower.max()) + 1} clusters; "
          f"P(clusters) {posterior}" + (f" ({note})" if note else "")
          + "; partition.json, similarity.png", file=stream)


def _append_columns(path, names, columns):
    """Add columns to a CSV written by this run (a row per item, in order)."""
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    if len(rows) - 1 != len(columns[0]):
        raise RuntimeError(f"{path}: {len(rows) - 1} rows for {len(columns[0])} items")
    rows[0] += names
    for i, row in enumerate(rows[1:]):
        row += [column[i] for column in columns]
    with open(path, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
