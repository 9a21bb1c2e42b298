"""Partition posteriors (issue 26): is the least-expected-VI partition a better answer than the
one state a sampler keeps, and does the summary scale?

Usefulness. On data with known truth, every sampler's draws (or a variational fit's draws from
its responsibilities) are summarised by ``mb.partition``; each candidate answer is scored by
its VI (bits) and ARI to the truth:

* ``min VI``: ``mb.partition.point_estimate(draws)`` (least posterior expected VI);
* ``kept state``: what the model reports today (``labels_``: the DMM Gibbs chain's highest
  log joint state, the VB argmax, the HDP's majority groups of the last sweep);
* ``Dahl LS``: Dahl's (2006) least-squares draw, the draw closest to the similarity matrix
  (least expected Binder loss among the draws);
* ``min Binder``: ``point_estimate(draws, loss="binder")``.

Data: DMM corpora simulated by the model (well separated and overlapping), classic3 and dblp3
(``../shared/data``), a Gaussian mixture (VB draws), an HDP of Gaussian groups (group labels).

Scale. ``point_estimate`` + ``credible_ball`` of draws that agree with a 10-cluster truth on
90% of the items, at 2,000, 20,000 and 200,000 items (100 draws, 4 runs: the growth) and
20,000 items x 500 draws with the default 16 runs (the goal: under 2 minutes on 2 cores).

Run:  python bench/bench_partition.py [--quick] [--write docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

import mixbayes as mb
from _report import machine, markdown_table, write_section

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data")
SCALE_N = (2_000, 20_000, 200_000)
QUICK = dict(scale_n=(2_000, 20_000), sweeps=60, goal_draws=100)


def dahl_least_squares(draws):
    """The draw of least expected Binder loss against all draws (Dahl 2006)."""
    losses = [mb.partition.expected_loss(d, draws, "binder") for d in draws]
    return draws[int(np.argmin(losses))]


def score(truth, labels):
    codes = np.unique(np.asarray(truth), return_inverse=True)[1].ravel()  # names -> 0..
    vi = mb.partition.loss_to_draws(labels, codes[None, :], "vi")[0]
    return vi, mb.metrics.ari(truth, labels)


def candidates(model, draws, kept):
    return {"min VI": mb.partition.point_estimate(draws).labels,
            "kept state": kept,
            "Dahl LS": dahl_least_squares(draws),
            "min Binder": mb.partition.point_estimate(draws, loss="binder").labels}


def sets(quick):
    """(name, model kind, data, truth) of every set."""
    sweeps = QUICK["sweeps"] if quick else 200
    for name, settings in (("DMM separated", dict(word_concentration=0.1, mean_length=40)),
                           ("DMM overlapping", dict(word_concentration=1.0, mean_length=15))):
        corpus, truth = mb.datasets.make_dmm_corpus(400, 200, 5, random_state=0, **settings)
        yield name, "dmm", (corpus.counts, 5, sweeps), truth.labels
    for name in ("classic3", "dblp3"):
        folder = os.path.join(DATA, name)
        if os.path.isdir(folder):
            corpus = mb.read_corpus(folder)
            if quick:
                keep = np.random.default_rng(0).choice(corpus.counts.shape[0], 600, False)
                counts, labels = corpus.counts[keep], np.asarray(corpus.labels)[keep]
            else:
                counts, labels = corpus.counts, np.asarray(corpus.labels)
            yield name, "dmm", (counts, 3, sweeps), labels
    X, truth = mb.datasets.make_gaussian_mixture(600, 2, 4, separation=2.5, random_state=0)
    yield "Gaussian mixture (VB)", "gmm", (X, 4), truth.labels


def usefulness(quick):
    rows = []
    for name, kind, args, truth in sets(quick):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if kind == "dmm":
                counts, K, sweeps = args
                model = mb.DirichletMultinomialMixture(K, inference="gibbs", n_sweeps=sweeps,
                                                       max_samples=200).fit(counts)
                draws = model.label_samples_
            else:
                X, K = args
                model = mb.VariationalGaussianMixture(K).fit(X)
                draws = mb.partition.draws_from_responsibilities(model.predict_proba(X), 200)
        fit = time.perf_counter() - start
        start = time.perf_counter()
        answers = candidates(model, draws, model.labels_)
        seconds = time.perf_counter() - start
        scored = {k: score(truth, v) for k, v in answers.items()}
        best = min(scored, key=lambda k: scored[k][0])
        rows.append([name, f"{len(truth):,}", draws.shape[0]]
                    + [f"{scored[k][0]:.3f} / {scored[k][1]:.3f}" for k in answers]
                    + [best, f"{fit:.1f}", f"{seconds:.1f}"])
        print("  " + " | ".join(map(str, rows[-1])), flush=True)
    return markdown_table(["data", "items", "draws", "min VI: VI / ARI", "kept state",
                           "Dahl LS", "min Binder", "closest to truth", "fit s",
                           "summary s"], rows)


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
                            "ARI to truth"],
                           [[f"{n:,}", t, f"{s:.1f} ({r})", f"{b:.1f}", k, f"{a:.3f}"]
                            for n, t, s, b, k, a, r in rows + [goal]])
    return table + growth + (f"\n\nGoal: 20,000 items x {goal[1]} draws summarised in under "
                             f"2 minutes: {goal[2] + goal[3]:.0f} s.")


def _timed(rng, n, n_draws, runs):
    truth = rng.integers(0, 10, n)
    draws = np.where(rng.random((n_draws, n)) < 0.9, truth, rng.integers(0, 12, (n_draws, n)))
    start = time.perf_counter()
    estimate = mb.partition.point_estimate(draws, n_runs=runs)
    search = time.perf_counter() - start
    start = time.perf_counter()
    mb.partition.credible_ball(draws, estimate)
    ball = time.perf_counter() - start
    print(f"  {n:,} x {n_draws}: search {search:.1f} s, ball {ball:.1f} s", flush=True)
    return (n, n_draws, search, ball, estimate.n_clusters, mb.metrics.ari(truth, estimate.labels),
            runs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sets and sizes")
    parser.add_argument("--write", default=None, help="markdown file to put the section in")
    args = parser.parse_args()
    mb.partition.point_estimate(np.zeros((2, 3), dtype=int))  # compile outside the timings
    text = (f"{usefulness(args.quick)}\n\nEach cell: VI (bits) / ARI to the truth.\n\n"
            f"{scale(args.quick)}")
    print(f"\n{machine()}\n\n{text}")
    if args.write:
        write_section(args.write, "## Partition posteriors (`python bench/bench_partition.py`)",
                      " (--quick)" if args.quick else "", text)


if __name__ == "__main__":
    main()
