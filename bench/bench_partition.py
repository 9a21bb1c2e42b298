"""Partition posteriors (issue 26): is the least-expected-VI partition a better answer than the
one state a sampler keeps, and does the summary scale?

Usefulness. On data with known truth, every sampler's draws (or a variational fit's draws from
its responsibilities) are summarised by ``mb.partition``; each candidate answer is scored by
its VI (bits) and ARI to the truth:

* ``min VI``: ``mb.partition.point_estimate(draws)`` (least posterior expected VI; what
  ``point_estimate="vi"`` stores as ``point_labels_``);
* ``kept state``: what the model reports today (``labels_``): the DMM Gibbs chain's highest
  log joint state (its MAP among the visited states), the tree's highest RCDLL state, the VB
  argmax for the Gaussian mixture set;
* ``Dahl LS``: Dahl's (2006) least-squares draw, the draw closest to the similarity matrix
  (least expected Binder loss among the draws);
* ``min Binder``: ``point_estimate(draws, loss="binder")``;
* ``VB argmax``: the variational fit of the same data (the DMM's CAVI for documents, the
  Gaussian mixture for points, the same number of components, default settings), its
  ``labels_``.

Data: DMM corpora simulated by the model (well separated and overlapping), the shared labelled
corpora classic3, dblp3 and tweet (``../shared/data``, K = the number of classes; DMM Gibbs),
a Gaussian mixture (VB draws), nested tree data from ``make_tree_data`` and the six shared UCI
tables (standardised; the tree's sampler, depth 2, its default settings).

Scale. ``point_estimate`` + ``credible_ball`` of draws that agree with a 10-cluster truth on
90% of the items, at 2,000, 20,000 and 200,000 items (100 draws, 4 runs: the growth) and
20,000 items x 500 draws with the default 16 runs (the goal: under 2 minutes on 2 cores), with
the peak memory numpy allocates in the summary (``tracemalloc``: the checked int64 copy of
the draws and the losses; the search kernel's own tables, draws x clusters x labels, do not
grow with the items) beside the draws' own int32 size.

Run:  python bench/bench_partition.py [--quick] [--write docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import os
import time
import tracemalloc
import warnings

import numpy as np

import mixbayes as mb
from _report import machine, markdown_table, write_section
from bench_dmm import load as load_corpus
from bench_gmm import UCI, load_uci

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data")
SCALE_N = (2_000, 20_000, 200_000)
QUICK = dict(scale_n=(2_000, 20_000), sweeps=60, goal_draws=100, uci=("iris", "wine"))
COLUMNS = ("min VI", "kept state", "Dahl LS", "min Binder", "VB argmax")


def dahl_least_squares(draws):
    """The draw of least expected Binder loss against all draws (Dahl 2006)."""
    losses = [mb.partition.expected_loss(d, draws, "binder") for d in draws]
    return draws[int(np.argmin(losses))]


def score(truth, labels):
    codes = np.unique(np.asarray(truth), return_inverse=True)[1].ravel()  # names -> 0..
    vi = mb.partition.loss_to_draws(labels, codes[None, :], "vi")[0]
    return vi, mb.metrics.ari(truth, labels)


def candidates(draws, kept, vb):
    return {"min VI": mb.partition.point_estimate(draws).labels,
            "kept state": kept,
            "Dahl LS": dahl_least_squares(draws),
            "min Binder": mb.partition.point_estimate(draws, loss="binder").labels,
            "VB argmax": vb}


def sets(quick):
    """(name, model kind, data, truth) of every set."""
    sweeps = QUICK["sweeps"] if quick else 200
    for name, settings in (("DMM separated", dict(word_concentration=0.1, mean_length=40)),
                           ("DMM overlapping", dict(word_concentration=1.0, mean_length=15))):
        corpus, truth = mb.datasets.make_dmm_corpus(400, 200, 5, random_state=0, **settings)
        yield name, "dmm", (corpus.counts, 5, sweeps), truth.labels
    for name in ("classic3", "dblp3", "tweet"):
        folder = os.path.join(DATA, name)
        if os.path.isdir(folder):
            corpus = load_corpus(name)
            counts, labels = corpus.counts, np.asarray(corpus.labels)
            if quick and counts.shape[0] > 600:
                keep = np.random.default_rng(0).choice(counts.shape[0], 600, False)
                counts, labels = counts[keep], labels[keep]
            yield name, "dmm", (counts, np.unique(labels).size, sweeps), labels
    X, truth = mb.datasets.make_gaussian_mixture(600, 2, 4, separation=2.5, random_state=0)
    yield "Gaussian mixture (VB)", "gmm", (X, 4), truth.labels
    X, truth = mb.datasets.make_tree_data(300, 2, "nested", branching=(3, 3), random_state=0)
    yield "tree, nested 3 x 3", "tree", (X, 9, sweeps), truth.labels
    if os.path.isdir(os.path.join(DATA, "uci")):
        for name in (QUICK["uci"] if quick else UCI):
            X, y = load_uci(name)
            yield f"{name} (tree)", "tree", (X, np.unique(y).size, sweeps), y


def _fit(kind, args):
    """(draws, kept state, VB argmax) of one set."""
    if kind == "dmm":
        counts, K, sweeps = args
        model = mb.DirichletMultinomialMixture(K, inference="gibbs", n_sweeps=sweeps,
                                               max_samples=200).fit(counts)
        vb = mb.DirichletMultinomialMixture(K).fit(counts).labels_
        return model.label_samples_, model.labels_, vb
    if kind == "gmm":
        X, K = args
        model = mb.VariationalGaussianMixture(K).fit(X)
        draws = mb.partition.draws_from_responsibilities(model.predict_proba(X), 200)
        return draws, model.labels_, model.labels_
    X, K, sweeps = args
    model = mb.HierarchicalMixture(2, n_iter=sweeps, max_samples=200).fit(X)
    vb = mb.VariationalGaussianMixture(K).fit(X).labels_
    return model.level_samples_[:, -1], model.labels_, vb


def usefulness(quick):
    rows, wins, own = [], {k: 0 for k in COLUMNS}, {k: 0 for k in COLUMNS[:4]}
    for name, kind, args, truth in sets(quick):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            draws, kept, vb = _fit(kind, args)
        fit = time.perf_counter() - start
        start = time.perf_counter()
        answers = candidates(draws, kept, vb)
        seconds = time.perf_counter() - start
        scored = {k: score(truth, v) for k, v in answers.items()}
        least = min(v[0] for v in scored.values())
        best = [k for k in answers if scored[k][0] <= least + 1e-9]
        for k in best:
            wins[k] += 1
        least_own = min(scored[k][0] for k in own)  # among the answers of one posterior
        for k in own:
            own[k] += scored[k][0] <= least_own + 1e-9
        rows.append([name, f"{len(truth):,}", draws.shape[0]]
                    + [f"{scored[k][0]:.3f} / {scored[k][1]:.3f}" for k in answers]
                    + [", ".join(best), f"{fit:.1f}", f"{seconds:.1f}"])
        print("  " + " | ".join(map(str, rows[-1])), flush=True)
    table = markdown_table(["data", "items", "draws"] + [f"{c}: VI / ARI" if c == "min VI"
                                                         else c for c in COLUMNS]
                           + ["closest to truth (VI)", "fit s", "summary s"], rows)
    tally = ", ".join(f"{k} {v}" for k, v in wins.items())
    tally_own = ", ".join(f"{k} {v}" for k, v in own.items())
    return (table + f"\n\nSets on which each answer is closest to the truth in VI (ties count "
            f"for each): {tally}, of {len(rows)}; among the four answers of the sampler's "
            f"own posterior: {tally_own}. The first four columns are answers of one "
            "posterior (the same draws); *VB argmax* is another fit: on the tree sets a "
            "VariationalGaussianMixture with K = the number of classes, where the tree picks "
            "its own leaves (many more than the classes), so there it compares models, not "
            "answers. VI can favour a coarse partition that ARI does not (read both numbers).")


def scale(quick):
    rng = np.random.default_rng(0)
    rows = []
    for n in (QUICK["scale_n"] if quick else SCALE_N):
        rows.append(_timed(rng, n, 100, 4))
    goal = _timed(rng, 20_000, QUICK["goal_draws"] if quick else 500, 16)
    growth = ""
    if len(rows) >= 2:
        slope = np.polyfit(np.log([r[0] for r in rows]), np.log([r[2] for r in rows]), 1)[0]
        growth = (f"\n\nLog-log slope of the search's seconds against items "
                  f"({rows[0][0]:,}-{rows[-1][0]:,}, 100 draws): {slope:.2f} (n log n is about "
                  "1.1 over this range).")
    table = markdown_table(["items", "draws", "search s (runs)", "ball s", "clusters",
                            "ARI to truth", "peak memory / draws' int32 size"],
                           [[f"{n:,}", t, f"{s:.1f} ({r})", f"{b:.1f}", k, f"{a:.3f}",
                             f"{m:.1f}x"]
                            for n, t, s, b, k, a, r, m in rows + [goal]])
    return table + growth + (f"\n\nGoal: 20,000 items x {goal[1]} draws summarised in under "
                             f"2 minutes: {goal[2] + goal[3]:.0f} s.")


def _timed(rng, n, n_draws, runs):
    truth = rng.integers(0, 10, n)
    draws = np.where(rng.random((n_draws, n)) < 0.9, truth,
                     rng.integers(0, 12, (n_draws, n))).astype(np.int32)
    tracemalloc.start()
    start = time.perf_counter()
    estimate = mb.partition.point_estimate(draws, n_runs=runs)
    search = time.perf_counter() - start
    start = time.perf_counter()
    mb.partition.credible_ball(draws, estimate)
    ball = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"  {n:,} x {n_draws}: search {search:.1f} s, ball {ball:.1f} s, peak "
          f"{peak / 2**20:.0f} MiB", flush=True)
    return (n, n_draws, search, ball, estimate.n_clusters, mb.metrics.ari(truth, estimate.labels),
            runs, peak / draws.nbytes)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sets and sizes")
    parser.add_argument("--write", default=None, help="markdown file to put the section in")
    args = parser.parse_args()
    mb.partition.point_estimate(np.zeros((2, 3), dtype=int))  # compile outside the timings
    load = os.getloadavg()[0]
    text = (f"{usefulness(args.quick)}\n\nEach cell: VI (bits) / ARI to the truth.\n\n"
            f"{scale(args.quick)}")
    intro = (f"{' (--quick)' if args.quick else ''}; load average {load:.1f} at the start, "
             f"{os.getloadavg()[0]:.1f} at the end (other processes on the 2 cores)")
    print(f"\n{machine()}{intro}\n\n{text}")
    if args.write:
        write_section(args.write, "## Partition posteriors (`python bench/bench_partition.py`)",
                      intro, text)


if __name__ == "__main__":
    main()
