r"""Convergence diagnostics of MCMC output: split :math:`\hat R` and effective sample size.

Both take draws of one scalar shaped (chains, draws). Split :math:`\hat R` halves every chain and
compares between- and within-half variances (Gelman et al., *Bayesian Data Analysis*, 3rd ed.,
§11.4): values near 1 (below about 1.01-1.05) say the chains agree. The effective sample size
sums the chains' pooled autocorrelations over Geyer's initial positive sequence (pairs of lags
summed while positive), :math:`\mathrm{ESS} = MN/(1 + 2\sum_t\rho_t)`.
"""

import numpy as np

__all__ = ["split_rhat", "effective_sample_size"]


def _as_chains(draws):
    draws = np.asarray(draws, dtype=float)
    if draws.ndim == 1:
        draws = draws[None, :]
    if draws.ndim != 2 or draws.shape[1] < 4:
        raise ValueError(f"draws must have shape (chains, draws) with at least 4 draws; got "
                         f"{draws.shape}.")
    if not np.all(np.isfinite(draws)):
        raise ValueError("draws contain NaN or infinite values.")
    return draws


def split_rhat(draws):
    r"""Split :math:`\hat R` of draws shaped (chains, draws); NaN when every draw is equal."""
    draws = _as_chains(draws)
    half = draws.shape[1] // 2
    halves = np.vstack([draws[:, :half], draws[:, -half:]])
    within = halves.var(axis=1, ddof=1).mean()
    between = half * halves.mean(axis=1).var(ddof=1)
    if within == 0:
        return float("nan") if between == 0 else float("inf")
    pooled = (half - 1) / half * within + between / half
    return float(np.sqrt(pooled / within))


def effective_sample_size(draws):
    """Effective number of independent draws in draws shaped (chains, draws)."""
    draws = _as_chains(draws)
    M, N = draws.shape
    centred = draws - draws.mean(axis=1, keepdims=True)
    variance = (centred**2).mean(axis=1)
    if np.all(variance == 0):
        return float("nan")
    # autocovariance of every chain by FFT, pooled over chains
    size = 2 ** int(np.ceil(np.log2(2 * N)))
    spectrum = np.fft.rfft(centred, n=size, axis=1)
    autocovariance = np.fft.irfft(spectrum * np.conj(spectrum), n=size, axis=1)[:, :N] / N
    within = draws.var(axis=1, ddof=1).mean()
    pooled = (N - 1) / N * within + (draws.mean(axis=1).var(ddof=1) if M > 1 else 0.0)
    rho = 1.0 - (within - autocovariance.mean(axis=0)) / pooled
    rho[0] = 1.0
    total = 0.0
    for t in range(0, N - 1, 2):
        pair = rho[t] + rho[t + 1]
        if pair < 0:
            break
        total += pair
    tau = max(2.0 * total - 1.0, 1.0 / np.log10(max(M * N, 10)))
    return float(M * N / tau)
