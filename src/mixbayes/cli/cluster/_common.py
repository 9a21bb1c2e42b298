"""What every model's run of ``mixbayes cluster`` shares: the scores against known labels and
the notes on the points read."""

from __future__ import annotations


def scores(summary, known, predicted):
    from ... import metrics

    if known is not None:
        summary["scores"] = metrics.clustering_report(known, predicted)


def print_scores(summary, stream, what=""):
    if "scores" in summary:
        s = summary["scores"]
        print(f"against known labels{what}: NMI {s['nmi']:.3f}  ARI {s['ari']:.3f}  "
              f"purity {s['purity']:.3f}", file=stream)


def note_points(notes, stream):
    for note in notes:
        print(f"note: {note}", file=stream)
