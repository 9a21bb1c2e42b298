"""Gaussian mixtures side by side in one process: ours against scikit-learn's two.

* ``vgm``  VariationalGaussianMixture (full covariances, K = the number of known classes)
* ``bgm``  scikit-learn BayesianGaussianMixture (finite Dirichlet weights, full covariances)
* ``gmm``  scikit-learn GaussianMixture (EM, full covariances)

On the UCI tables of ../shared/data/uci (standardised columns; 50 seeds, as a fit takes
milliseconds and single-start ARIs vary by 0.01-0.05) and on a simulated 100,000 x 10 sample
with K = 10 (5 seeds): ARI mean ± standard error over seeds (single start each), seconds per fit,
and seconds per iteration, measured as the difference between a 25-iteration and a
5-iteration fit divided by the extra iterations actually run (so set-up and start are excluded).
scikit-learn runs with OpenBLAS at 1 and at 2 threads and keeps the faster (two threads slow
its mixtures on this machine).

Run:  python bench/bench_gmm.py [--seeds 50] [--sim-seeds 5] [--write docs/benchmarks.md]
      python bench/bench_gmm.py --merge-study    (merge_moves against none, printed only)
"""

from __future__ import annotations

import argparse
import gzip
import os
import time
import warnings

import numpy as np
from sklearn.mixture import BayesianGaussianMixture, GaussianMixture
from threadpoolctl import threadpool_limits

import mixbayes as mb
from _report import markdown_table, write_section

DATA = os.environ.get(
    "MIXBAYES_DATA", os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data")
)
UCI = ["iris", "wine", "glass", "wdbc", "ecoli", "yeast"]


def load_uci(name):
    with gzip.open(os.path.join(DATA, "uci", f"{name}.data.gz"), "rt") as handle:
        X = np.loadtxt(handle, ndmin=2)
    with gzip.open(os.path.join(DATA, "uci", f"{name}.labels0.gz"), "rt") as handle:
        y = np.loadtxt(handle, dtype=int)
    return standardised(X), y


def standardised(X):
    """Columns centred and scaled to unit variance, constant ones dropped."""
    X = np.asarray(X, dtype=float)
    X = X[:, X.std(axis=0) > 0]
    return (X - X.mean(axis=0)) / X.std(axis=0)


def make(method, K, seed, max_iter=500, tol=1e-3):
    if method == "vgm":
        return mb.VariationalGaussianMixture(K, max_iter=max_iter, tol=tol, random_state=seed)
    if method == "bgm":
        return BayesianGaussianMixture(
            n_components=K, weight_concentration_prior_type="dirichlet_distribution",
            max_iter=max_iter, tol=tol, random_state=seed)
    return GaussianMixture(K, max_iter=max_iter, tol=tol, random_state=seed)


def fit(method, X, K, seed, threads=None, **kw):
    model = make(method, K, seed, **kw)
    with warnings.catch_warnings(), threadpool_limits(limits=threads, user_api="blas"):
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        model.fit(X)
        return model, time.perf_counter() - start


def seconds_per_iteration(method, X, K, threads=None, repeats=3):
    """(best 25-iteration fit - best 5-iteration fit) / extra iterations; NaN when the fit
    stops (an exact fixed point) before the 25th iteration and the difference is meaningless."""
    runs = {}
    for iters in (5, 25):
        fits = [fit(method, X, K, 0, threads, max_iter=iters, tol=0.0) for _ in range(repeats)]
        runs[iters] = (fits[0][0].n_iter_, min(t for _, t in fits))
    extra = runs[25][0] - runs[5][0]
    return (runs[25][1] - runs[5][1]) / extra if extra >= 10 else float("nan")


def best_threads(method, X, K):
    if method == "vgm":
        return None
    return min((1, 2), key=lambda t: seconds_per_iteration(method, X, K, t))


def merge_study(seeds=40):
    """``merge_moves`` against none, and scikit-learn's BayesianGaussianMixture, on three
    clusters simulated at each data seed (150 x 3 and 1,000 x 5, ``n_components=10``):
    how often 3 components are found, the mean ARI, and on how many seeds merges changed the
    ELBO (up, down)."""
    for n, d in ((150, 3), (1000, 5)):
        rows = {False: [], True: []}
        for seed in range(seeds):
            X, truth = mb.datasets.make_gaussian_mixture(n, d, 3, random_state=seed)
            for merges in rows:
                model = mb.VariationalGaussianMixture(10, merge_moves=merges).fit(X)
                rows[merges].append((model.n_effective_components_ == 3,
                                     mb.metrics.ari(truth.labels, model.labels_), model.elbo_))
        plain, merged = (np.array(rows[m]) for m in (False, True))
        change = merged[:, 2] - plain[:, 2]
        for name, result in (("merge_moves=False", plain), ("merge_moves=True", merged)):
            print(f"{n} x {d}, {seeds} seeds, {name}: 3 components {int(result[:, 0].sum())}, "
                  f"mean ARI {result[:, 1].mean():.3f}")
        print(f"  ELBO changed on {int((np.abs(change) > 1e-6).sum())} seeds: "
              f"{int((change > 1e-6).sum())} up, {int((change < -1e-6).sum())} down")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=50, help="seeds per UCI table")
    parser.add_argument("--sim-seeds", type=int, default=5, help="seeds for the simulated set")
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--write", default=None)
    parser.add_argument("--merge-study", action="store_true",
                        help="only the merge moves against none (merge_study)")
    args = parser.parse_args()
    if args.merge_study:
        return merge_study()
    sets = [(name, *load_uci(name), args.seeds) for name in UCI]
    X, truth = mb.datasets.make_gaussian_mixture(args.n, 10, 10, separation=3.0, random_state=0)
    sets.append((f"simulated {args.n // 1000}k x 10", X, truth.labels, args.sim_seeds))
    fit("vgm", sets[0][1], 3, 0)  # compile the kernels outside any measurement
    rows = []
    for name, X, y, n_seeds in sets:
        K = len(np.unique(y))
        print(f"\n{name}: {X.shape[0]} x {X.shape[1]}, K={K}", flush=True)
        for method in ("vgm", "bgm", "gmm"):
            threads = best_threads(method, X, K)
            results = [fit(method, X, K, seed, threads) for seed in range(n_seeds)]
            aris = [mb.metrics.ari(y, m.predict(X)) for m, _ in results]
            per_iter = seconds_per_iteration(method, X, K, threads)
            row = dict(data=name, K=K, method=method, ari=np.mean(aris),
                       se=np.std(aris, ddof=1) / np.sqrt(n_seeds), seeds=n_seeds,
                       seconds=np.median([t for _, t in results]),
                       iters=np.median([m.n_iter_ for m, _ in results]), per_iter=per_iter,
                       threads=threads or 2)
            rows.append(row)
            print(f"  {method}: ARI {row['ari']:.3f} ± {row['se']:.3f}  {row['seconds']:.2f} s/fit "
                  f"({row['iters']:.0f} it)  {per_iter * 1e3:.1f} ms/iteration "
                  f"[BLAS threads {row['threads']}]", flush=True)
    text = markdown_table(
        ["data", "K", "method", "seeds", "ARI mean ± se", "s per fit", "iterations", "ms per iteration"],
        [[r["data"], r["K"], r["method"], r["seeds"], f"{r['ari']:.3f} ± {r['se']:.3f}", f"{r['seconds']:.2f}",
          f"{r['iters']:.0f}", f"{r['per_iter'] * 1e3:.1f}"] for r in rows],
    )
    print("\n" + text)
    if args.write:
        write_section(args.write, "## Gaussian mixtures (`python bench/bench_gmm.py`)",
                      "; full covariances, UCI columns standardised.", text)


if __name__ == "__main__":
    main()
