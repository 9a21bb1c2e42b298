"""The DMM's default start on corpora with few large clusters (issue 25), in one process.

For each corpus: the default VB fit (``init="auto"``: the screened k-means++ start and a
uniform-random rival, each warmed up by collapsed Gibbs sweeps until ten pass without a new high
of the log joint by more than ``tol`` per document, the higher log joint kept), the start
before (``init="kmeans++"``: the k-means++ start alone, its warm-up stopped ten sweeps after
the last record; ``--old-warm-up`` adds the one before issue 25, 5 sweeps), and collapsed Gibbs run 200 sweeps from a k-means++ start
(``inference="gibbs", n_init=1, init_sweeps=0``; its ELBO is the one at the plug-in posterior
of its best sample). Seconds, the ELBO, NMI, and the warm-up sweeps run; k-means on
tf-idf (true K) timed beside them, so the 20,000 x 5,000 corpus of issue 13 gives the default's
ratio to it.

Corpora: classic3, dblp3 (../shared/data), simulated K = 8, 12,000 documents of about 7 words
(word concentration 0.1 and 0.5: sparse and overlapping clusters), and issue 13's 20,000 x 5,000,
K = 20, 60 words a document.

Run:  python bench/bench_dmm_start.py [--seeds 3] [--only TEXT] [--write docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

import mixbayes as mb
from mixbayes.mixture import dmm
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


def timed(make, X, wait_share=None):
    """Fit ``make()`` on ``X``; ``wait_share`` replaces the warm-up's ``AUTO_WAIT_SHARE`` for
    the fit (0: ten sweeps without a record, the rule before)."""
    saved = dmm.AUTO_WAIT_SHARE
    if wait_share is not None:
        dmm.AUTO_WAIT_SHARE = wait_share
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mb.ConvergenceWarning)
            start = time.perf_counter()
            model = make().fit(X)
            return model, time.perf_counter() - start
    finally:
        dmm.AUTO_WAIT_SHARE = saved


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
    parser.add_argument("--old-warm-up", action="store_true",
                        help="also the start before the automatic warm-up (5 sweeps)")
    parser.add_argument("--only", default=None,
                        help="run only the corpora whose name contains this text "
                             "(e.g. 'conc. 0.5', 'issue 13', 'dblp3')")
    args = parser.parse_args()
    mb.DirichletMultinomialMixture(3, n_init=1).fit(mb.datasets.load_classic3().counts[:300])
    fits = {  # label: (model, the warm-up's wait share: None the default)
        "default (init auto)": (lambda K, s: mb.DirichletMultinomialMixture(K, random_state=s),
                                None),
        "before (init=kmeans++, wait 10)": (lambda K, s: mb.DirichletMultinomialMixture(
            K, init="kmeans++", random_state=s), 0.0),
        "Gibbs 200 sweeps": (lambda K, s: mb.DirichletMultinomialMixture(
            K, inference="gibbs", init="kmeans++", n_sweeps=200, n_init=1, init_sweeps=0,
            random_state=s), None),
    }
    if args.old_warm_up:
        fits["init=kmeans++, init_sweeps=5"] = (lambda K, s: mb.DirichletMultinomialMixture(
            K, init="kmeans++", init_sweeps=5, random_state=s), None)
    rows = []
    print(f"load average {os.getloadavg()}", flush=True)
    for name, X, labels, K in corpora():
        if args.only and args.only not in name:
            continue
        for seed in range(args.seeds):
            km_s, km_labels = kmeans(X, K, seed)
            results = {}
            for label, (make, wait_share) in fits.items():
                model, seconds = timed(lambda: make(K, seed), X, wait_share)
                results[label] = (model, seconds)
                print(f"{name} seed {seed} {label:32s} {seconds:7.2f} s (k-means {km_s:.2f} s, "
                      f"ratio {seconds / km_s:.2f})  ELBO {model.elbo_:.1f}  NMI "
                      f"{mb.metrics.nmi(labels, model.labels_):.4f}  warm-up "
                      f"{getattr(model, '_warm_up_sweeps', '-')} "
                      f"{getattr(model, '_warm_up_start', '') if model.inference == 'vb' else ''}",
                      flush=True)
                rows.append([name, seed, label, f"{seconds:.2f}", f"{seconds / km_s:.2f}",
                             f"{model.elbo_:.1f}", f"{mb.metrics.nmi(labels, model.labels_):.4f}",
                             getattr(model, "_warm_up_sweeps", "-"),
                             getattr(model, "_warm_up_start", "-") if model.inference == "vb"
                             else "-", f"{os.getloadavg()[0]:.1f}"])
            print(f"  k-means NMI {mb.metrics.nmi(labels, km_labels):.4f}", flush=True)
    if args.write:
        write_section(
            args.write, "## DMM default start on few-large-cluster corpora",
            " (a loaded machine shared with other sessions: compare within a row group). "
            "`python bench/bench_dmm_start.py --write docs/benchmarks.md`; the ratio is to "
            "k-means on tf-idf (true K) in the same process; 'warm-up' counts the Gibbs "
            "sweeps before CAVI (both starts' with init auto), 'start kept' the start that "
            "won (k-means++ or the uniform-random rival).",
            markdown_table(["corpus", "seed", "fit", "s", "ratio to k-means", "ELBO", "NMI",
                            "warm-up sweeps", "start kept", "load"], rows))


if __name__ == "__main__":
    main()
