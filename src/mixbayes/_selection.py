"""What every choice of K shares: a readable table of the curve and the "still rising" test."""

from __future__ import annotations

import math

import numpy as np


def still_rising(ks, values):
    """Whether a criterion (higher is better) has not levelled off at the top of the range.

    The top quarter of the range (at least two K) is compared with everything below it: the
    curve is still rising when the best value up there beats the best below by more than
    2 nats and by more than 2% of the curve's whole span, and the last value has not fallen
    from the best by more than that margin. A curve that peaked inside the range (in its top
    quarter too: on a short range the top quarter is most of it), or that is flat at the top,
    is not.
    """
    values = np.asarray(values, dtype=float)
    if values.size < 3 or not np.all(np.isfinite(values)):
        return False
    top = max(2, math.ceil(values.size / 4))
    if top >= values.size:
        top = values.size - 1
    margin = max(2.0, 0.02 * (values.max() - values.min()))
    gain = values[-top:].max() - values[:-top].max()
    fallen = values.max() - values[-1]
    return bool(gain > margin and fallen <= margin)


def format_table(rows, columns):
    """Rows of dicts as a fixed-width text table of ``columns`` (name -> format spec)."""
    cells = [[format(row[name], spec) if row.get(name) is not None else "-"
              for name, spec in columns.items()] for row in rows]
    widths = [max(len(name), *(len(c[i]) for c in cells)) for i, name in enumerate(columns)]
    lines = ["  ".join(name.rjust(w) for name, w in zip(columns, widths))]
    lines += ["  ".join(cell.rjust(w) for cell, w in zip(row, widths)) for row in cells]
    return "\n".join(lines)
