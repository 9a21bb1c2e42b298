"""Document clustering, side by side in one process: our DMM (VB and Gibbs) against scikit-learn.

For each corpus (classic3, dblp3, tweet, googlenews_t from ../shared/data) with K = the number of
known classes, every method runs once per seed (10 seeds, single start each):

* ``dmm-vb``   DirichletMultinomialMixture, CAVI, n_init=1
* ``dmm-gibbs`` the same model by collapsed Gibbs sampling (``--sweeps`` sweeps)
* ``kmeans``   scikit-learn KMeans on L2-normalised tf-idf (n_init=1)
* ``lda``      scikit-learn LatentDirichletAllocation (batch), each document's argmax topic

and we report NMI (arithmetic) mean ± sd over the seeds, the NMI of the run its own objective
prefers (best ELBO / log joint / inertia / LDA bound), and the median wall time of one fit.
It also measures the VB cost per CAVI iteration against one scipy sparse product
``X @ E[log beta].T`` in the same process (the goal's yardstick: a sweep needs two such
products), and a floor for any implementation: the special-function calls no iteration avoids
(``special_function_floor``) plus the arithmetic of two products (the product's time less
scipy's fixed cost per call). On a tiny corpus the special functions, not the products, dominate.

Run:  python bench/bench_dmm.py [--seeds 10] [--sets classic3,dblp3,tweet,googlenews_t]
      [--write docs/benchmarks.md]

``--simulated NxPxK`` (issue 13) instead times the *default* fit,
``DirichletMultinomialMixture(K, random_state=seed)``, against scikit-learn's KMeans(K, n_init=1)
on L2-normalised tf-idf (the tf-idf transform included in k-means's time, as a user pays it) on
a corpus from ``make_dmm_corpus(N, P, K, mean_length=--mean-length)``, in one process with the
two methods interleaved over ``--seeds`` seeds (3 by default here); it prints both times, their
ratio and both NMIs per seed and the medians. ``--real classic3,dblp3,tweet`` does the same on
real corpora (K = the number of known classes).

      python bench/bench_dmm.py --simulated 20000x5000x20 [--mean-length 60] [--seeds 3]
          [--real classic3,dblp3,tweet] [--every-start] [--kmeans-start]

``--kmeans-start`` adds ``init="kmeans++"`` (the default start before issue 25's random rival)
to the same loop. ``--every-start`` adds the default with every start run to convergence
(``n_keep=None``, the only strategy before issue 13).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time
import warnings

import numpy as np
import scipy.sparse as sp
from numba import njit
from sklearn.cluster import KMeans
from sklearn.decomposition import LatentDirichletAllocation
from sklearn.feature_extraction.text import TfidfTransformer

import mixbayes as mb
from mixbayes.families._count_kernels import _TAYLOR_BELOW, digamma
from mixbayes._kernel_tools import NEGLIGIBLE
from _report import markdown_table, write_section

DATA = os.environ.get(
    "MIXBAYES_DATA", os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data")
)


def load(name):
    folder = os.path.join(DATA, name)
    if name in ("tweet", "googlenews_t"):
        return mb.read_corpus(os.path.join(folder, "docs.txt.gz"), token_pattern=r"\S+")
    return mb.read_corpus(folder)


def run_vb(X, K, seed):
    model = mb.DirichletMultinomialMixture(K, n_init=1, random_state=seed).fit(X)
    return model.labels_, model.elbo_


def run_gibbs(X, K, seed, sweeps):
    model = mb.DirichletMultinomialMixture(
        K, inference="gibbs", n_init=1, n_sweeps=sweeps, random_state=seed
    ).fit(X)
    return model.labels_, model.log_joint_trace_.max()


def run_kmeans(T, K, seed):
    km = KMeans(K, n_init=1, random_state=seed).fit(T)
    return km.labels_, -km.inertia_


def run_lda(X, K, seed):
    lda = LatentDirichletAllocation(K, learning_method="batch", random_state=seed)
    theta = lda.fit_transform(X)
    return theta.argmax(axis=1), lda.score(X)


def time_per_iteration(X, model, repeats=30):
    """Median seconds of one CAVI iteration (the loop body of ``_fit_single``, run at the state
    of the fitted ``model``), of one scipy product ``X @ E[log beta].T``, and of scipy's fixed
    cost of that call (the same product without non-zeros)."""
    from mixbayes.families.multinomial import MultinomialFamily

    family = MultinomialFamily(model.word_prior_, reuse_buffers=True)  # as in the fit loop
    data = family.prepare(model._check_X(X, reset=False))
    state = model._global_step(data, model.predict_proba(X), family, model.weight_prior_)
    constant = float(family.log_base_measure(data).sum())

    def iteration():
        resp, log_norm, counts = family.responsibilities(
            data, state.family_expectations, state.expected_log_weights
        )
        constant + float(log_norm.sum()) + model._global_terms(state, family)
        model._global_step(data, resp, family, state.weight_prior, False, counts)

    Xf = X.astype(np.float64)
    E = np.log(model.components_)

    def median_seconds(fn):
        fn()
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        return float(np.median(times))

    # in separate blocks: numba's OpenMP threads spin for a while after a parallel region,
    # which would slow a single-threaded product measured right after it
    product = median_seconds(lambda: Xf @ E.T)
    # scipy's fixed cost per call: the same product with no non-zeros
    empty = sp.csr_matrix(Xf.shape)
    overhead = median_seconds(lambda: empty @ E.T)
    return median_seconds(iteration), product, overhead


@njit
def _special_calls(exp_args, log_args, dirichlet_args, repeats):
    """The calls alone, ``repeats`` times: exp, log, and digamma + log-gamma pairs (scalar libm
    and our digamma: numba has no vector maths library without Intel's SVML)."""
    total = 0.0
    for _ in range(repeats):
        for x in exp_args:
            total += math.exp(x)
        for x in log_args:
            total += math.log(x)
        for x in dirichlet_args:
            total += digamma(x) + math.lgamma(x)
    return total


def special_function_floor(X, model, repeats=200):
    """Seconds per CAVI iteration spent in the special functions every implementation must call
    (the rest of a perfect iteration is the arithmetic of two products), counted at the fitted
    state: one exp per document and cluster that is neither the row's maximum nor negligible
    (gap below ``NEGLIGIBLE``), one log per document (its normaliser), and a digamma
    (``E[log beta]``) and a log-gamma (the KL term) per word and cluster whose statistic is not
    in the Taylor regime. Also returns the three counts of calls."""
    resp = model.predict_proba(X)
    with np.errstate(divide="ignore"):
        gaps = np.log(resp) - np.log(resp.max(axis=1, keepdims=True))
    exp_args = gaps[(gaps > NEGLIGIBLE) & (gaps < 0)]
    log_args = 1.0 + np.random.default_rng(0).random(X.shape[0])
    theta = model.word_prior_
    stats = model.word_concentration_ - theta
    dirichlet_args = theta + stats[np.abs(stats) >= _TAYLOR_BELOW * theta].ravel()
    _special_calls(exp_args[:1], log_args[:1], dirichlet_args[:1], 1)  # compile
    start = time.perf_counter()
    _special_calls(exp_args, log_args, dirichlet_args, repeats)
    seconds = (time.perf_counter() - start) / repeats
    return seconds, (exp_args.size, log_args.size, dirichlet_args.size)


def summarise(name, results, truth):
    nmis = [mb.metrics.nmi(truth, labels) for labels, _, _ in results]
    best = max(range(len(results)), key=lambda i: results[i][1])
    times = [t for _, _, t in results]
    return dict(method=name, nmi_mean=float(np.mean(nmis)), nmi_sd=float(np.std(nmis, ddof=1))
                if len(nmis) > 1 else 0.0, nmi_best=nmis[best], seconds=statistics.median(times))


def timed(fn, *args):
    start = time.perf_counter()
    labels, objective = fn(*args)
    return labels, objective, time.perf_counter() - start


def default_vs_kmeans(X, truth, K, seeds, every_start=False, kmeans_start=False):
    """Interleaved timings of the default DMM fit and tf-idf + KMeans (and, with
    ``every_start``, of the default with every start run to convergence, ``n_keep=None``, the
    strategy before issue 13; with ``kmeans_start``, of ``init="kmeans++"``, the start before
    issue 25's random rival); the medians over the seeds."""
    rows = []

    def dmm(seed, **kwargs):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = mb.DirichletMultinomialMixture(K, random_state=seed, **kwargs).fit(X)
        return model, time.perf_counter() - start

    for seed in seeds:
        if every_start:
            every, every_s = dmm(seed, n_keep=None)
        if kmeans_start:
            alone, alone_s = dmm(seed, init="kmeans++")
        model, ours = dmm(seed)
        start = time.perf_counter()
        T = TfidfTransformer().fit_transform(X)
        km = KMeans(K, n_init=1, random_state=seed).fit(T)
        theirs = time.perf_counter() - start
        rows.append(dict(seed=seed, ours=ours, kmeans=theirs, ratio=ours / theirs,
                         nmi_ours=mb.metrics.nmi(truth, model.labels_),
                         nmi_kmeans=mb.metrics.nmi(truth, km.labels_),
                         elbo=model.elbo_, n_iter=model.n_iter_))
        r = rows[-1]
        if every_start:
            r.update(every=every_s, every_ratio=every_s / theirs, nmi_every=mb.metrics.nmi(
                truth, every.labels_), elbo_every=every.elbo_)
            print(f"  seed {seed}: every start run (n_keep=None) {every_s:.2f} s, ratio "
                  f"{r['every_ratio']:.2f}, ELBO {every.elbo_:.1f}, NMI {r['nmi_every']:.3f}")
        if kmeans_start:
            r.update(alone=alone_s, alone_ratio=alone_s / theirs, nmi_alone=mb.metrics.nmi(
                truth, alone.labels_))
            print(f"  seed {seed}: init='kmeans++' {alone_s:.2f} s, ratio "
                  f"{r['alone_ratio']:.2f}, ELBO {alone.elbo_:.1f}, NMI {r['nmi_alone']:.3f}")
        print(f"  seed {seed}: ours {r['ours']:.2f} s ({r['n_iter']} it, ELBO {r['elbo']:.1f}), "
              f"k-means {r['kmeans']:.2f} s, ratio {r['ratio']:.2f}; NMI ours "
              f"{r['nmi_ours']:.3f}, k-means {r['nmi_kmeans']:.3f}", flush=True)
    keys = ["ours", "kmeans", "ratio", "nmi_ours", "nmi_kmeans"]
    keys += ["every", "every_ratio", "nmi_every"] if every_start else []
    keys += ["alone", "alone_ratio", "nmi_alone"] if kmeans_start else []
    med = {key: statistics.median(r[key] for r in rows) for key in keys}
    print(f"  median: ours {med['ours']:.2f} s, k-means {med['kmeans']:.2f} s, ratio "
          f"{med['ratio']:.2f}; NMI ours {med['nmi_ours']:.3f}, k-means {med['nmi_kmeans']:.3f}",
          flush=True)
    if kmeans_start:
        print(f"  median init='kmeans++': {med['alone']:.2f} s, ratio {med['alone_ratio']:.2f}, "
              f"NMI {med['nmi_alone']:.3f}", flush=True)
    return med


def simulated_mode(args):
    """Issue 13: the default fit against tf-idf + KMeans on a simulated corpus and real ones."""
    results = []
    K0 = None
    if args.simulated:
        n, p, K0 = (int(v) for v in args.simulated.lower().split("x"))
        corpus, truth = mb.datasets.make_dmm_corpus(n, p, K0, mean_length=args.mean_length,
                                                    random_state=0)
        X = corpus.counts
        print(f"simulated {n} x {p}, K={K0}, mean length {args.mean_length:g}: {X.nnz} "
              f"non-zeros, {int(X.sum())} tokens", flush=True)
        mb.DirichletMultinomialMixture(K0, n_init=1, max_iter=2).fit(X[:200])  # compile
        name = f"simulated {n} x {p} (mean length {args.mean_length:g})"
        results.append((name, K0, default_vs_kmeans(X, truth.labels, K0, range(args.seeds),
                                                    args.every_start, args.kmeans_start)))
    for name in filter(None, (args.real or "").split(",")):
        corpus = load(name)
        K = len(np.unique(corpus.labels))
        print(f"{name}: {corpus.counts.shape[0]} docs, K={K}", flush=True)
        results.append((name, K, default_vs_kmeans(corpus.counts, corpus.labels, K,
                                                   range(args.seeds), args.every_start,
                                                   args.kmeans_start)))
    header = ["corpus", "K", "ours s (default fit)", "k-means s (tf-idf + fit)", "ratio",
              "NMI ours", "NMI k-means"]
    if args.every_start:
        header += ["every start run (n_keep=None) s", "its ratio", "its NMI"]
    rows = []
    for name, K, m in results:
        rows.append([name, K, f"{m['ours']:.2f}", f"{m['kmeans']:.2f}", f"{m['ratio']:.2f}",
                     f"{m['nmi_ours']:.3f}", f"{m['nmi_kmeans']:.3f}"])
        if args.every_start:
            rows[-1] += [f"{m['every']:.2f}", f"{m['every_ratio']:.2f}", f"{m['nmi_every']:.3f}"]
    text = markdown_table(header, rows)
    print(f"\nmedians over {args.seeds} seeds")
    print("\n" + text)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--sweeps", type=int, default=50)
    parser.add_argument("--sets", default="classic3,dblp3,tweet,googlenews_t")
    parser.add_argument("--methods", default="dmm-vb,dmm-gibbs,kmeans,lda")
    parser.add_argument("--write", default=None, help="markdown file to write the tables into")
    parser.add_argument("--simulated", default=None, metavar="NxPxK",
                        help="time the default fit against tf-idf + KMeans on make_dmm_corpus")
    parser.add_argument("--mean-length", type=float, default=60.0)
    parser.add_argument("--real", default=None,
                        help="with --simulated (or alone): the same comparison on these corpora")
    parser.add_argument("--kmeans-start", action="store_true",
                        help="also time init='kmeans++' (the start before issue 25)")
    parser.add_argument("--every-start", action="store_true",
                        help="also time the default with every start run (n_keep=None)")
    args = parser.parse_args()
    if args.simulated or args.real:
        if args.seeds == 10:
            args.seeds = 3
        return simulated_mode(args)
    methods = args.methods.split(",")
    rows, speed = [], []
    for name in args.sets.split(","):
        corpus = load(name)
        X, truth = corpus.counts, corpus.labels
        K = len(np.unique(truth))
        print(f"\n{name}: {X.shape[0]} docs x {X.shape[1]} terms, {X.nnz} non-zeros, K={K}",
              flush=True)
        T = TfidfTransformer().fit_transform(X)
        runners = {
            "dmm-vb": lambda s: timed(run_vb, X, K, s),
            "dmm-gibbs": lambda s: timed(run_gibbs, X, K, s, args.sweeps),
            "kmeans": lambda s: timed(run_kmeans, T, K, s),
            "lda": lambda s: timed(run_lda, X, K, s),
        }
        runners["dmm-vb"](0)  # numba compilation is not part of any measurement
        runners["dmm-gibbs"](0) if "dmm-gibbs" in methods else None
        # timed before the peers run, so that no thread pool of theirs is still spinning
        fitted = mb.DirichletMultinomialMixture(K, n_init=1, random_state=0).fit(X)
        per_iter, product, overhead = time_per_iteration(X, fitted)
        special, calls = special_function_floor(X, fitted)
        # a perfect iteration: the special functions plus the arithmetic of two products
        passes = 2 * (product - overhead)
        floor = special + passes
        speed.append(dict(dataset=name, K=K, per_iter=per_iter, product=product, floor=floor,
                          calls=calls))
        for method in methods:
            results = [runners[method](seed) for seed in range(args.seeds)]
            row = dict(dataset=name, K=K, **summarise(method, results, truth))
            rows.append(row)
            print(f"  {method:10s} NMI {row['nmi_mean']:.3f} ± {row['nmi_sd']:.3f}  "
                  f"best-objective {row['nmi_best']:.3f}  {row['seconds']:.2f} s/fit", flush=True)
        print(f"  VB {per_iter * 1e3:.2f} ms/iteration; scipy X @ E.T {product * 1e3:.2f} ms; "
              f"ratio {per_iter / product:.2f}; floor {floor * 1e3:.3f} ms = "
              f"{floor / product:.2f}x the product (special functions {special * 1e3:.3f} ms: "
              f"{calls[0]} exp, {calls[1]} log, {calls[2]} digamma + log-gamma; the arithmetic "
              f"of two products {passes * 1e3:.3f} ms)", flush=True)

    text = markdown_table(
        ["data set", "K", "method", f"NMI mean ± sd ({args.seeds} seeds)", "NMI of best-objective run",
         "s per fit"],
        [[r["dataset"], r["K"], r["method"], f"{r['nmi_mean']:.3f} ± {r['nmi_sd']:.3f}",
          f"{r['nmi_best']:.3f}", f"{r['seconds']:.2f}"] for r in rows],
    ) + "\n\n" + markdown_table(
        ["data set", "K", "VB ms per CAVI iteration", "scipy `X @ E[log β]ᵀ` ms", "ratio",
         "single-thread floor ms (x product)"],
        [[s["dataset"], s["K"], f"{s['per_iter'] * 1e3:.3f}", f"{s['product'] * 1e3:.3f}",
          f"{s['per_iter'] / s['product']:.2f}",
          f"{s['floor'] * 1e3:.3f} ({s['floor'] / s['product']:.2f}x)"] for s in speed],
    )
    print("\n" + text)
    if args.write:
        write_section(args.write, "## Document clustering (`python bench/bench_dmm.py`)", ".",
                      text)


if __name__ == "__main__":
    main()
