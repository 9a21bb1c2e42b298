"""numba kernels for the full-covariance Gaussian family's local step and second moments.

Both pass over the points once, in 64 fixed chunks whose partial results are added in order,
so results do not depend on the number of threads.
"""

import numpy as np
from numba import njit, prange

from .._kernel_tools import softmax_row, twice

_N_CHUNKS = 64


def _full_responsibilities(X, inv_chol_KDD, means_KD, scale_K, offset_K, resp, log_norm):
    r"""Row softmax of :math:`L_{ik} = c_k - \tfrac12 s_k\,|P_k(x_i - m_k)|^2`.

    ``inv_chol_KDD`` holds :math:`P_k = L_k^{-1}` with :math:`W_k^{-1} = L_kL_k^\top`, ``scale_K``
    the :math:`\nu_k`, ``offset_K`` everything that does not depend on the point. Writes
    ``resp`` (n, K) and ``log_norm`` (n,); returns the column sums of ``resp``.
    """
    n, d = X.shape
    K = means_KD.shape[0]
    size = (n + _N_CHUNKS - 1) // _N_CHUNKS
    partial = np.zeros((_N_CHUNKS, K))
    for c in prange(_N_CHUNKS):
        diff = np.empty(d)
        for i in range(c * size, min((c + 1) * size, n)):
            row = resp[i]
            for k in range(K):
                for j in range(d):
                    diff[j] = X[i, j] - means_KD[k, j]
                maha = 0.0
                for a in range(d):
                    acc = 0.0
                    for b in range(a + 1):  # P is lower triangular
                        acc += inv_chol_KDD[k, a, b] * diff[b]
                    maha += acc * acc
                row[k] = offset_K[k] - 0.5 * scale_K[k] * maha
            log_norm[i] = softmax_row(row, partial[c])
    counts = np.zeros(K)
    for c in range(_N_CHUNKS):
        for k in range(K):
            counts[k] += partial[c, k]
    return counts


def _weighted_moments(X, resp):
    r"""Return :math:`\sum_i r_{ik} x_i` (K, d) and :math:`\sum_i r_{ik} x_i x_i^\top` (K, d, d)."""
    n, d = X.shape
    K = resp.shape[1]
    size = (n + _N_CHUNKS - 1) // _N_CHUNKS
    sums = np.zeros((_N_CHUNKS, K, d))
    squares = np.zeros((_N_CHUNKS, K, d, d))
    for c in prange(_N_CHUNKS):
        for i in range(c * size, min((c + 1) * size, n)):
            for k in range(K):
                r = resp[i, k]
                if r == 0.0:
                    continue
                for a in range(d):
                    ra = r * X[i, a]
                    sums[c, k, a] += ra
                    for b in range(a + 1):  # the lower triangle; mirrored at the end
                        squares[c, k, a, b] += ra * X[i, b]
    total_sums = np.zeros((K, d))
    total_squares = np.zeros((K, d, d))
    for c in range(_N_CHUNKS):
        total_sums += sums[c]
        total_squares += squares[c]
    for k in range(K):  # fill the upper triangle
        for a in range(d):
            for b in range(a + 1, d):
                total_squares[k, a, b] = total_squares[k, b, a]
    return total_sums, total_squares


@njit(cache=True)
def inverse_lower(L_KDD):
    """Inverses of lower-triangular matrices by forward substitution (no LAPACK call: a BLAS
    thread pool woken between numba regions fights their threads for the cores)."""
    K, d, _ = L_KDD.shape
    out = np.zeros((K, d, d))
    for k in range(K):
        for col in range(d):
            out[k, col, col] = 1.0 / L_KDD[k, col, col]
            for row in range(col + 1, d):
                acc = 0.0
                for j in range(col, row):
                    acc += L_KDD[k, row, j] * out[k, j, col]
                out[k, row, col] = -acc / L_KDD[k, row, row]
    return out


full_responsibilities = twice(_full_responsibilities)
weighted_moments = twice(_weighted_moments)
