"""The HDP document's simulation study (its Figure 2): NMI against the true labels per sweep.

Data from ``make_hdp_data`` with γ0 = 3, α0 = 1, α_w = 1/W, J = W ∈ {10, 20, 50} groups and
words, n ∈ {30, 100, 300} observations per group; our sampler from its default start (one pass
of the Chinese restaurant franchise) with its default moves and without the collapsed Gibbs pass
(label moves only), and — for comparison with the document's runs — the document's updates
alone from the all-ones start. Prints NMI at sweeps
1, 10, 20, 60 and the last, mean over seeds, and draws one panel per (J, n).

Run:  python bench/hdp_simulation.py [--sweeps 60] [--seeds 3] [--figure docs/hdp_simulation.png]
                                     [--runs crf,labels,document,wpp]  (wpp: the first, with
                                     the word prior resampled from its start 1/W; not by default)
      python bench/hdp_simulation.py --posterior-level   (the level chains started at the truth hold)
"""

from __future__ import annotations

import argparse

import numpy as np

import mixbayes as mb

RUNS = {"ours (CRF start, default moves)": dict(init="crf", moves="crf"),
        "ours without the collapsed pass": dict(init="crf", moves="labels"),
        "document's updates, all-ones start": dict(init="ones", moves="none"),
        "ours, word prior resampled (Gamma(1, 1))": dict(init="crf", moves="crf",
                                                         word_prior_prior=(1.0, 1.0))}
SHORT = dict(zip(("crf", "labels", "document", "wpp"), RUNS))  # --runs names


NOTES = """

Notes. Goal (issue 5): a plateau within 20 sweeps, at least the published code's (J = W = 20,
n = 100: 0.66 by sweep 60). There ours is at 0.66 by sweep 20 and 0.70 by sweep 60, still
rising slowly towards the posterior's own level, so the plateau-by-20 goal is not met. Over
sweeps 101-300 (6 seeds, `python bench/hdp_simulation.py --posterior-level --seeds 6`) chains
from our default start average 0.745 and chains started at the true seating 0.776: on two seeds
of six those still sit above ours after 300 sweeps, so the sampler's mixing time on this problem
is of the order of a hundred sweeps, and a curve flat at sweep 20 would mean a stuck chain.
The same command prints what relaxes slowly: our chains reach the typical set's log joint
density by sweeps 21-60 (mean -4295, against -4306 for chains from the truth over the same
sweeps and -4247 to -4273 over sweeps 101-300), but carry extra dishes (13.9 over sweeps 21-60,
12.8 over 101-300, 12.3 from the truth) that go one at a time, and NMI follows them (0.712,
0.745, 0.776). Measured and not kept (throwaway scripts): two collapsed passes per sweep (0.66
at sweep 20, no gain per sweep), `moves="all"` (0.63), a start seeded from a quick finite fit
(our topic model, K = 10: 0.62 at sweep 1 but 0.67 at sweep 20, the same curve from there),
starts with fewer dishes (8 seeds; the franchise pass at gamma0 = 0.3: 0.61-0.62 at sweep 20
against 0.65 and 0.72 over sweeps 61-150 against 0.71; the all-ones start with our moves: 0.55
and 0.70), and
a sequentially allocated split-merge of the tables' dishes (Dahl 2005; 30 proposals before
every sweep, 6 seeds, 200 sweeps: 0.62 at sweep 20 against 0.67 and 0.74 over sweeps 61-200
against 0.74; 0.9% of merges and 4.7% of splits proposed were accepted, and the early splits
raised the dishes to 17.7 at sweep 20), and a collapsed Gibbs scan over every table's dish
(the franchise's table step, sticks and atoms integrated out; 1 or 3 scans before every sweep,
6 seeds, 100 sweeps: 0.60 at sweep 20 against 0.67, with 22 and 18 dishes there: tables leave
for new dishes at once, and the extra dishes then go as slowly). The collapsed pass is the default's largest gain where
there are many groups (J = 20, 50: +0.035 to +0.12 at sweeps 20 and 60 in every panel); with
J = W = 10 both settings level off at 0.54-0.58. Between random streams of the same sampler the
3-seed means move by about 0.03. The document's updates alone from its all-ones start reach
0.23 by sweep 60 in our implementation of them; its reported 0.66 came from code that is not
exact (module docstring of `mixbayes/hdp/_sampler.py`)."""


def nmi_per_sweep(J, n, seed, sweeps, **options):
    corpus, truth = mb.datasets.make_hdp_data(J, n, n_words=J, random_state=seed)
    scores = []
    model = mb.HDPMixture(top_concentration=3.0, group_concentration=1.0, n_iter=sweeps,
                          word_prior=1.0 / J,  # the simulation's own prior
                          random_state=seed, **options)
    model.fit(corpus.counts,
              callback=lambda chain, sweep, info: scores.append(
                  mb.metrics.nmi(truth.labels, info["labels"])))
    return np.asarray(scores)


def traces_from(start, J, n, seed, sweeps):
    """Per sweep NMI against the truth, dishes in use and log joint density (rows) of one chain
    with the default moves, started at the true seating (``start="truth"``, one table per true
    table) or at our default start (``"default"``)."""
    from mixbayes.hdp import _sampler

    corpus, truth = mb.datasets.make_hdp_data(J, n, n_words=J, random_state=seed)
    rows = []
    if start == "default":
        model = mb.HDPMixture(top_concentration=3.0, group_concentration=1.0, n_iter=sweeps,
                              word_prior=1.0 / J, random_state=seed)
        model.fit(corpus.counts, callback=lambda chain, sweep, info: rows.append(
            (mb.metrics.nmi(truth.labels, info["labels"]), info["n_dishes"],
             info["log_joint"])))
        return np.asarray(rows)
    data = mb.HDPMixture(word_prior=1.0 / J)._grouped_tokens(corpus.counts, None)[0]
    table_of = np.empty(data.n_observations, dtype=np.int64)
    table_dish = np.full((data.n_groups, n), -1, dtype=np.int64)
    for j in range(data.n_groups):
        span = slice(data.group_ptr[j], data.group_ptr[j + 1])
        tables, table_of[span] = np.unique(truth.tables[span], return_inverse=True)
        table_dish[j, table_of[span]] = truth.labels[span]
    state = _sampler.SliceState(table_of, table_dish)
    rng = np.random.default_rng(seed)
    for _ in range(sweeps):
        counts = _sampler.sweep(data, state, 3.0, 1.0, rng)
        dishes = state.dish_of(data)
        rows.append((mb.metrics.nmi(truth.labels, dishes), np.unique(dishes).size,
                     _sampler.log_joint(data, state, 3.0, 1.0, counts=counts)))
    return np.asarray(rows)


def posterior_level(seeds, sweeps=300):
    """Chains from the true seating and from our default start side by side (J = W = 20,
    n = 100): mean NMI, dishes and log joint over sweeps 1-20, 21-60 and 101-300, over seeds.
    Where the two agree, both sit at the posterior's level; where the truth's is higher, those
    chains still remember it. The log joint shows when a chain has reached the typical set."""
    windows = ((0, 20), (20, 60), (100, sweeps))
    for start in ("truth", "default"):
        runs = np.array([traces_from(start, 20, 100, seed, sweeps) for seed in range(seeds)])
        per_seed = runs[:, 100:, 0].mean(axis=1)
        name = "the true seating" if start == "truth" else "our default start"
        print(f"J=W=20 n=100, chains from {name}"
              f", mean NMI over sweeps 101-{sweeps}: " + " ".join(f"{v:.3f}" for v in per_seed)
              + f"  (mean {per_seed.mean():.3f})")
        for a, b in windows:
            nmi, dishes, log_joint = runs[:, a:b].mean(axis=(0, 1))
            print(f"    sweeps {a + 1}-{b}: NMI {nmi:.3f}, dishes {dishes:.1f}, "
                  f"log joint {log_joint:.0f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sweeps", type=int, default=60)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--figure", default=None)
    parser.add_argument("--runs", default="crf,labels,document", help=", ".join(SHORT))
    parser.add_argument("--write", default=None, help="markdown file for the table")
    parser.add_argument("--posterior-level", action="store_true",
                        help="only: chains started at the truth and at our default start, "
                        "300 sweeps (J = W = 20, n = 100): NMI, dishes and log joint")
    args = parser.parse_args()
    if args.posterior_level:
        posterior_level(args.seeds)
        return
    sizes, lengths = (10, 20, 50), (30, 100, 300)
    curves, rows = {}, []
    runs_wanted = {SHORT[key]: RUNS[SHORT[key]] for key in args.runs.split(",")}
    for J in sizes:
        for n in lengths:
            for name, options in runs_wanted.items():
                runs = np.array([nmi_per_sweep(J, n, seed, args.sweeps, **options)
                                 for seed in range(args.seeds)])
                curves[J, n, name] = runs
                mean = runs.mean(axis=0)
                marks = [0, 9, 19, min(59, args.sweeps - 1), args.sweeps - 1]
                print(f"J=W={J:3d} n={n:3d} {name:36s} NMI at sweeps 1/10/20/60/last: "
                      + " ".join(f"{mean[m]:.3f}" for m in marks), flush=True)
                rows.append([J, n, name] + [f"{mean[m]:.3f}" for m in marks])
    if args.write:
        import sys

        sys.path.insert(0, __import__("os").path.dirname(__file__))
        from _report import markdown_table, write_section

        text = markdown_table(["J = W", "n", "run", "sweep 1", "10", "20", "60",
                               f"last ({args.sweeps})"], rows)
        write_section(args.write, "## HDP simulation study (`python bench/hdp_simulation.py`)",
                      f"; NMI of the observations' clusters against the truth, mean of "
                      f"{args.seeds} seeds; figure: docs/hdp_simulation.png.", text + NOTES)
    if args.figure:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(len(sizes), len(lengths), figsize=(11, 8.5), sharex=True,
                                 sharey=True)
        for a, J in enumerate(sizes):
            for b, n in enumerate(lengths):
                axis = axes[a, b]
                for c, name in enumerate(runs_wanted):
                    for r, run in enumerate(curves[J, n, name]):
                        axis.plot(np.arange(1, len(run) + 1), run, color=f"C{c}", lw=0.8,
                                  alpha=0.7, label=name if r == 0 else None)
                axis.set_title(f"J = W = {J}, n = {n}", fontsize=9)
                axis.grid(alpha=0.3)
                if a == len(sizes) - 1:
                    axis.set_xlabel("sweep")
                if b == 0:
                    axis.set_ylabel("NMI")
        axes[0, 0].legend(fontsize=7, loc="lower right")
        fig.tight_layout()
        fig.savefig(args.figure, dpi=110)


if __name__ == "__main__":
    main()
