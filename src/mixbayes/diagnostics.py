r"""Convergence diagnostics of MCMC output: split :math:`\hat R`, effective sample size and
Geweke's trend test.

Both take draws of one scalar shaped (chains, draws). Split :math:`\hat R` halves every chain and
compares between- and within-half variances (Gelman et al., *Bayesian Data Analysis*, 3rd ed.,
§11.4): values near 1 (below about 1.01-1.05) say the chains agree. The effective sample size
sums the chains' pooled autocorrelations over Geyer's initial positive sequence (pairs of lags
summed while positive), :math:`\mathrm{ESS} = MN/(1 + 2\sum_t\rho_t)`.
"""

import numpy as np

__all__ = ["split_rhat", "effective_sample_size", "geweke_z"]


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


def geweke_z(draws, first=0.1, last=0.5):
    r"""Geweke's z-score of one chain: does its start drift away from its end?

    .. math:: z = (\bar x_A - \bar x_B) / \sqrt{s_A^2/\mathrm{ESS}_A + s_B^2/\mathrm{ESS}_B},

    with :math:`A` the first ``first`` share of the draws and :math:`B` the last ``last``
    share. Geweke (1992) estimates each window's variance of the mean from its spectral density
    at zero; here each window's effective size is its length over the autocorrelation time of
    the whole chain less its straight-line trend (:func:`effective_sample_size` of the
    residuals). That is steadier than a time estimated from a short window alone (which
    underestimates the autocorrelation and inflates z), and a trend, read as autocorrelation,
    would otherwise hide itself. A chain that
    has settled gives :math:`z \approx N(0, 1)`; one still trending gives large :math:`|z|`.
    Returns 0 when both windows are constant and equal, and +-inf when they are constant and
    differ.
    """
    draws = np.asarray(draws, dtype=float).ravel()
    if not 0 < first < 1 or not 0 < last < 1 or first + last > 1:
        raise ValueError(f"first and last must be shares in (0, 1) adding to at most 1; got "
                         f"{first!r} and {last!r}.")
    n_a, n_b = int(first * draws.size), int(last * draws.size)
    if min(n_a, n_b) < 4:
        raise ValueError(f"draws must hold enough values for both windows (at least 4 each); "
                         f"got {draws.size}.")
    a, b = draws[:n_a], draws[-n_b:]
    steps = np.arange(draws.size, dtype=float)
    residuals = draws - np.polyval(np.polyfit(steps, draws, 1), steps)
    time = (draws.size / effective_sample_size(residuals)
            if residuals.var() > 1e-12 * max(draws.var(), 1e-300) else 1.0)
    variance = time * (a.var(ddof=1) / n_a + b.var(ddof=1) / n_b)
    difference = a.mean() - b.mean()
    if variance == 0:
        return 0.0 if difference == 0 else float(np.copysign(np.inf, difference))
    return float(difference / np.sqrt(variance))
