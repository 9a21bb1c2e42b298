"""The DMM's collapsed Gibbs sampler at GSDMM's scale, before and after issue 25, in one process.

GSDMM's settings (Yin & Wang 2014): K = 500 clusters, alpha = beta = 0.1, 30 sweeps from a
uniformly random start, on googlenews_t (11,109 titles, 152 stories). ``reference`` is the
sampler as it was (every cluster's conditional computed for every document, the exact log joint
recomputed after every sweep: ``gibbs_sweeps(..., reference=True)``; the final plug-in
posterior and ELBO from (n, K) one-hot responsibilities); ``new`` is the default
(empty clusters' common conditional computed once and drawn as one entry, the log joint updated
from the moves, the final step from the count tables). The two are different chains with the
same moves between partitions, so NMI is compared over seeds. k-means on tf-idf (K = 152) is timed beside them for scale.

Run:  python bench/bench_gibbs_scale.py [--seeds 3] [--sweeps 30] [--write docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import functools
import os
import time
import warnings

import numpy as np

import mixbayes as mb
from mixbayes.mixture import _gibbs, dmm
from _real_corpora import load
from _report import markdown_table, write_section


def old_final_step(self, X, z, family, alpha, log_base_total):
    """The Gibbs fit's last step before issue 25: the generic CAVI global step and ELBO on
    (n, K) one-hot responsibilities."""
    resp = np.eye(self.n_components)[z]
    data = family.prepare(X)
    state = self._global_step(data, resp, family, alpha)
    return state, self._elbo(data, resp, state, family)


def fit(X, seed, sweeps, reference):
    original, original_final = dmm.gibbs_sweeps, dmm.DirichletMultinomialMixture._one_hot_state
    if reference:
        dmm.gibbs_sweeps = functools.partial(_gibbs.gibbs_sweeps, reference=True)
        dmm.DirichletMultinomialMixture._one_hot_state = old_final_step
    try:
        model = mb.DirichletMultinomialMixture(
            500, weight_concentration_prior=0.1, word_concentration_prior=0.1,
            inference="gibbs", n_sweeps=sweeps, n_init=1, init="random", init_sweeps=0,
            random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mb.ConvergenceWarning)
            start = time.perf_counter()
            model.fit(X)
            return model, time.perf_counter() - start
    finally:
        dmm.gibbs_sweeps = original
        dmm.DirichletMultinomialMixture._one_hot_state = original_final


def kmeans_seconds(X, K, seed):
    from sklearn.cluster import KMeans
    from sklearn.feature_extraction.text import TfidfTransformer

    start = time.perf_counter()
    tfidf = TfidfTransformer().fit_transform(X)
    labels = KMeans(K, n_init=1, random_state=seed).fit_predict(tfidf)
    return time.perf_counter() - start, labels


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--sweeps", type=int, default=30)
    parser.add_argument("--write", default=None)
    args = parser.parse_args()
    corpus, _ = load("googlenews_t")
    X, labels = corpus.counts, corpus.labels
    fit(X[:600], 0, 2, True), fit(X[:600], 0, 2, False)  # compile both kernels
    rows = []
    print(f"load average {os.getloadavg()}", flush=True)
    for seed in range(args.seeds):
        old, old_s = fit(X, seed, args.sweeps, True)
        new, new_s = fit(X, seed, args.sweeps, False)
        km_s, km_labels = kmeans_seconds(X, 152, seed)
        nmi = mb.metrics.nmi(labels, new.labels_)
        row = dict(seed=seed, old=old_s, new=new_s, kmeans=km_s,
                   nmi=nmi, nmi_old=mb.metrics.nmi(labels, old.labels_),
                   clusters=len(np.unique(new.labels_)), kmeans_nmi=mb.metrics.nmi(labels,
                                                                                   km_labels),
                   load=os.getloadavg()[0])
        rows.append(row)
        print(f"seed {seed}: reference {old_s:.2f} s, new {new_s:.2f} s, ratio "
              f"{old_s / new_s:.2f}x; k-means {km_s:.2f} s; NMI "
              f"{nmi:.4f} (reference {row['nmi_old']:.4f}), {row['clusters']} clusters; "
              f"load {row['load']:.2f}", flush=True)
    best_old, best_new = min(r["old"] for r in rows), min(r["new"] for r in rows)
    nmi_old = np.array([r["nmi_old"] for r in rows])
    nmi_new = np.array([r["nmi"] for r in rows])
    summary = (f"best of {len(rows)}: reference {best_old:.2f} s, new {best_new:.2f} s, ratio "
               f"{best_old / best_new:.2f}x; NMI reference {nmi_old.mean():.4f} ± "
               f"{nmi_old.std():.4f}, new {nmi_new.mean():.4f} ± {nmi_new.std():.4f}")
    print(summary, flush=True)
    if args.write:
        table = [[r["seed"], f"{r['old']:.2f}", f"{r['new']:.2f}", f"{r['old'] / r['new']:.2f}",
                  f"{r['kmeans']:.2f}", f"{r['nmi_old']:.4f}", f"{r['nmi']:.4f}",
                  r["clusters"], f"{r['load']:.1f}"] for r in rows]
        write_section(
            args.write, "## DMM collapsed Gibbs at GSDMM's scale",
            f" (a loaded machine shared with other sessions; the ratio within one process is "
            f"what counts). googlenews_t, K = 500, alpha = beta = 0.1, {args.sweeps} sweeps "
            "from a random start; reference = the sampler before issue 25 (every cluster "
            "scored, exact log joint after every sweep, final step on dense one-hot "
            "responsibilities), new = the default. " + summary + ". `python bench/bench_gibbs_scale.py --write "
            "docs/benchmarks.md`",
            markdown_table(["seed", "reference s", "new s", "ratio", "k-means s (K=152)",
                            "NMI reference", "NMI new", "clusters (new)", "load"], table))


if __name__ == "__main__":
    main()
