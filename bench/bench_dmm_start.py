"""The DMM's default start on corpora with few large clusters (issue 25), in one process.

For each corpus: the default VB fit (``init_sweeps="auto"``: collapsed Gibbs warm-up sweeps
until ten pass without a new high of the log joint, by more than ``tol`` per document), the
start before issue 25 (``init_sweeps=5``), and collapsed Gibbs run 200 sweeps from a k-means++
start (``inference="gibbs", n_init=1, init_sweeps=0``; its ELBO is the one at the plug-in
posterior of its best sample). Seconds, the ELBO, NMI, and the warm-up sweeps run; k-means on
tf-idf (true K) timed beside them, so the 20,000 x 5,000 corpus of issue 13 gives the default's
ratio to it.

Corpora: classic3, dblp3 (../shared/data), simulated K = 8, 12,000 documents of about 7 words
(word concentration 0.1 and 0.5: sparse and overlapping clusters), and issue 13's 20,000 x 5,000,
K = 20, 60 words a document.

Run:  python bench/bench_dmm_start.py [--seeds 3] [--write docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

import mixbayes as mb
from _real_corpora import available, load
from _report import markdown_table, write_section


def corpora():
    for name in ("classic3", "dblp3"):
        if available(name):
            corpus, _ = load(name)
            yield name, corpus.counts, np.asarray(corpus.labels), 3
    for concentration in (0.1, 0.5):
        corpus, truth = mb.datasets.make_dmm_corpus(12_000, 5_000, 8, mean_length=7,
                                                    word_concentration=concentration,
                                                    random_state=0)
        yield (f"simulated K=8, 12,000 x 5,000, 7 words, word conc. {concentration:g}",
               corpus.counts, truth.labels, 8)
    corpus, truth = mb.datasets.make_dmm_corpus(20_000, 5_000, 20, mean_length=60,
                                                random_state=0)
    yield "simulated K=20, 20,000 x 5,000, 60 words (issue 13)", corpus.counts, truth.labels, 20


def timed(make, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mb.ConvergenceWarning)
        start = time.perf_counter()
        model = make().fit(X)
        return model, time.perf_counter() - start


def kmeans(X, K, seed):
    from sklearn.cluster import KMeans
    from sklearn.feature_extraction.text import TfidfTransformer

    start = time.perf_counter()
    labels = KMeans(K, n_init=1, random_state=seed).fit_predict(
        TfidfTransformer().fit_transform(X))
    return time.perf_counter() - start, labels


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--write", default=None)
    args = parser.parse_args()
    mb.DirichletMultinomialMixture(3, n_init=1).fit(mb.datasets.load_classic3().counts[:300])
    fits = {
        "default (auto warm-up)": lambda K, s: mb.DirichletMultinomialMixture(K, random_state=s),
        "init_sweeps=5 (before)": lambda K, s: mb.DirichletMultinomialMixture(
            K, init_sweeps=5, random_state=s),
        "Gibbs 200 sweeps": lambda K, s: mb.DirichletMultinomialMixture(
            K, inference="gibbs", n_sweeps=200, n_init=1, init_sweeps=0, random_state=s),
    }
    rows = []
    print(f"load average {os.getloadavg()}", flush=True)
    for name, X, labels, K in corpora():
        for seed in range(args.seeds):
            km_s, km_labels = kmeans(X, K, seed)
            results = {}
            for label, make in fits.items():
                model, seconds = timed(lambda: make(K, seed), X)
                results[label] = (model, seconds)
                print(f"{name} seed {seed} {label:24s} {seconds:7.2f} s (k-means {km_s:.2f} s, "
                      f"ratio {seconds / km_s:.2f})  ELBO {model.elbo_:.1f}  NMI "
                      f"{mb.metrics.nmi(labels, model.labels_):.4f}  warm-up "
                      f"{getattr(model, '_warm_up_sweeps', '-')}", flush=True)
                rows.append([name, seed, label, f"{seconds:.2f}", f"{seconds / km_s:.2f}",
                             f"{model.elbo_:.1f}", f"{mb.metrics.nmi(labels, model.labels_):.4f}",
                             getattr(model, "_warm_up_sweeps", "-"),
                             f"{os.getloadavg()[0]:.1f}"])
            print(f"  k-means NMI {mb.metrics.nmi(labels, km_labels):.4f}", flush=True)
    if args.write:
        write_section(
            args.write, "## DMM default start on few-large-cluster corpora",
            " (a loaded machine shared with other sessions: compare within a row group). "
            "`python bench/bench_dmm_start.py --write docs/benchmarks.md`; the ratio is to "
            "k-means on tf-idf (true K) in the same process; 'warm-up' counts the Gibbs "
            "sweeps before CAVI.",
            markdown_table(["corpus", "seed", "fit", "s", "ratio to k-means", "ELBO", "NMI",
                            "warm-up sweeps", "load"], rows))


if __name__ == "__main__":
    main()
