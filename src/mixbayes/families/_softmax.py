"""The row softmax shared by the fused local-step kernels."""

import math

from numba import njit

# exp(-50) = 2e-22: a term this far below the row maximum cannot change the normaliser (>= 1)
# in double precision, even summed over thousands of components, so its exp is skipped and its
# responsibility is an exact zero (which also keeps the word statistics sparse)
NEGLIGIBLE = -50.0


@njit(cache=True, inline="always")
def softmax_row(row, sizes):
    """Turn log-weights ``row`` into probabilities in place, add them to ``sizes``, and return
    the log normaliser."""
    K = row.shape[0]
    top = row[0]
    for k in range(1, K):
        if row[k] > top:
            top = row[k]
    total = 0.0
    for k in range(K):
        gap = row[k] - top
        if gap > NEGLIGIBLE:
            row[k] = math.exp(gap)
            total += row[k]
        else:
            row[k] = 0.0
    inv = 1.0 / total
    for k in range(K):
        row[k] *= inv
        sizes[k] += row[k]
    return top + math.log(total)
