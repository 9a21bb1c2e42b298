"""The one start rule (issue 24): a start on a sample against a start on every row.

Every engine starts a fit (k-means++ seeds, the restarts' screening, the warm-up sweeps) on
at most ``START_SAMPLE`` evenly spaced rows (``mixbayes._engines``), then runs CAVI on all of
them. This measures what the sample costs: a ``DirichletMultinomialMixture(K)`` with default
settings, in process, on corpora simulated from the model (``make_dmm_corpus``: ``--terms``
words, K clusters, Poisson lengths of mean ``--mean-length``) of 30,000, 100,000 and
1,000,000 documents (``--docs``), once with the default start sample and once with the
start on every document (``mixbayes._engines.use(start_sample=N)``), at fit seeds
0..``--seeds``-1 (the corpus is seed 0's). Reported per corpus: at how many seeds the
sampled start ends at a higher, the same (1e-9 nats a document) or a lower ELBO than the
full one, the mean, least and most of the difference per document, the NMI of each to the
true clusters, and the median seconds. A VB fit ends in a local optimum that depends on its
start, so single seeds differ both ways; the question is whether the sample is worse on
average.

Run:  python bench/bench_start_sample.py [--docs 30000,100000,1000000] [--write docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
from sklearn.metrics import normalized_mutual_info_score as nmi

import mixbayes as mb
from _report import markdown_table, write_section
from mixbayes import _engines


def fit(counts, k, start_sample, seed):
    model = mb.DirichletMultinomialMixture(k, random_state=seed)
    with warnings.catch_warnings(), _engines.use(None, start_sample):
        warnings.simplefilter("ignore")
        began = time.perf_counter()
        model.fit(counts)
    return model, time.perf_counter() - began


def run(n, seeds, args):
    """Both fits at every seed on one corpus of ``n`` documents: the summary row."""
    corpus, simulated = mb.datasets.make_dmm_corpus(n, args.terms, args.clusters,
                                                    mean_length=args.mean_length,
                                                    random_state=0)
    truth, counts = simulated.labels, corpus.counts
    gaps, nmis, seconds = [], [], []
    for seed in range(seeds):
        sampled, sampled_s = fit(counts, args.clusters, _engines.START_SAMPLE, seed)
        full, full_s = fit(counts, args.clusters, n, seed)
        gaps.append((sampled.elbo_ - full.elbo_) / n)
        nmis.append((nmi(truth, sampled.labels_), nmi(truth, full.labels_)))
        seconds.append((sampled_s, full_s))
        print(f"{n:,} seed {seed}: sampled - full {gaps[-1]:+.3e} nats a document, NMI "
              f"{nmis[-1][0]:.4f} / {nmis[-1][1]:.4f}, {sampled_s:.1f} / {full_s:.1f} s",
              flush=True)
    gaps, nmis, seconds = np.array(gaps), np.array(nmis), np.array(seconds)
    tie = 1e-9  # nats a document: the same optimum, reached by another path
    return [f"{n:,}", f"{min(n, _engines.START_SAMPLE):,}", str(seeds),
            f"{np.sum(gaps > tie)} / {np.sum(np.abs(gaps) <= tie)} / {np.sum(gaps < -tie)}",
            f"{gaps.mean():+.3f}", f"{gaps.min():+.2f} / {gaps.max():+.2f}",
            f"{nmis[:, 0].mean():.4f} / {nmis[:, 1].mean():.4f}",
            f"{np.median(seconds[:, 0]):.1f} / {np.median(seconds[:, 1]):.1f}",
            f"{os.getloadavg()[0]:.1f}"]


HEADER = ["documents", "start sample", "seeds", "sampled start better / same / worse",
          "mean (sampled - full) ELBO, nats a document", "least / most",
          "NMI to truth, mean (sampled / full)", "median seconds (sampled / full)", "load"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", default="30000,100000,1000000")
    parser.add_argument("--terms", type=int, default=2_000)
    parser.add_argument("--clusters", type=int, default=10)
    parser.add_argument("--mean-length", type=float, default=30.0)
    parser.add_argument("--seeds", type=int, default=15, help="fit seeds 0..SEEDS-1")
    parser.add_argument("--write", metavar="MARKDOWN")
    args = parser.parse_args()
    rows = [run(int(value), args.seeds, args) for value in args.docs.split(",")]
    table = markdown_table(HEADER, rows)
    print(table)
    if args.write:
        intro = (f"; `python bench/bench_start_sample.py --docs {args.docs} --seeds {args.seeds}`; "
                f"`make_dmm_corpus(N, {args.terms}, {args.clusters}, mean_length="
                f"{args.mean_length:g}, random_state=0)`, `DirichletMultinomialMixture("
                f"{args.clusters}, random_state=seed)` defaults, in process; 'load' is the "
                f"1-minute load average after the row (seconds are comparable within a row).")
        write_section(args.write, "## The one start rule: a sampled start against a full one "
                      "(`python bench/bench_start_sample.py`)", intro, table)


if __name__ == "__main__":
    main()
