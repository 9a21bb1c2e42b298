"""The tree model's max-margin regularisation at work (issue 14): margins and NMI against C.

Two simulated hierarchies from ``make_tree_data(kind="nested")``, depth 2: *overlapping*
siblings (parents 4 apart, leaves 3 around them) and *well separated* ones (the defaults:
parents 15 apart, leaves 4). For every margin weight C the default fit runs on each of the
seeds; we report the share of points violating their margin (``margins_ < margin``), the 10%
quantile of the margins, the number of top-level branches and leaves, and the level-wise NMI
against the true hierarchy (mean over seeds), and draw them against C.

Run:  python bench/tree_margins.py [--seeds 3] [--sweeps 60] [--figure docs/tree_margins.png]
"""

from __future__ import annotations

import argparse

import numpy as np

import mixbayes as mb

SETTINGS = {"overlapping siblings": dict(parent_spread=4.0, leaf_spread=3.0),
            "well-separated siblings": dict()}
WEIGHTS = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0)


def study(seeds, sweeps, n=150):
    rows = []
    for name, spreads in SETTINGS.items():
        for C in WEIGHTS:
            figures = []
            for seed in range(seeds):
                X, truth = mb.datasets.make_tree_data(n, kind="nested", random_state=seed,
                                                      **spreads)
                model = mb.HierarchicalMixture(2, margin_weight=C, n_iter=sweeps,
                                               random_state=seed).fit(X)
                margins = model.margins_[np.isfinite(model.margins_)]
                figures.append((
                    np.mean(margins < model.margin) if margins.size else 0.0,
                    np.quantile(margins, 0.1) if margins.size else np.nan,
                    np.unique(model.cut(1)).size, np.unique(model.labels_).size,
                    *mb.metrics.levelwise_scores(model.paths_, truth.paths)))
            mean = np.nanmean(np.array(figures, dtype=float), axis=0)
            rows.append(dict(setting=name, C=C, violations=mean[0], q10=mean[1],
                             top=mean[2], leaves=mean[3], nmi1=mean[4], nmi2=mean[5]))
            r = rows[-1]
            print(f"{name:>24}  C={C:<5g} violations {r['violations']:.3f}  10% margin "
                  f"{r['q10']:7.2f}  top {r['top']:.1f}  leaves {r['leaves']:.1f}  NMI "
                  f"{r['nmi1']:.3f} / {r['nmi2']:.3f}", flush=True)
    return rows


def figure(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 4.2))
    for k, name in enumerate(SETTINGS):
        mine = [r for r in rows if r["setting"] == name]
        C = np.array([r["C"] for r in mine])
        x = np.arange(C.size)
        axes[0].plot(x, [r["violations"] for r in mine], "o-", color=f"C{k}", label=name)
        axes[1].plot(x, [r["q10"] for r in mine], "o-", color=f"C{k}", label=name)
        axes[2].plot(x, [r["nmi1"] for r in mine], "o-", color=f"C{k}", label=f"{name}, level 1")
        axes[2].plot(x, [r["nmi2"] for r in mine], "s--", color=f"C{k}",
                     label=f"{name}, leaves")
    titles = ("share of points violating their margin", "10% quantile of the margins",
              "level-wise NMI against the truth")
    for axis, title in zip(axes, titles):
        axis.set_xticks(np.arange(len(WEIGHTS)), [f"{c:g}" for c in WEIGHTS])
        axis.set_xlabel("margin weight C")
        axis.set_title(title, fontsize=10)
        axis.grid(alpha=0.3)
    axes[0].set_ylabel("share")
    axes[1].set_ylabel("margin (symmetric log scale)")
    axes[2].set_ylabel("NMI")
    axes[1].axhline(1.0, color="0.5", lw=0.8, ls=":")  # the default margin
    axes[1].set_yscale("symlog", linthresh=2.0)  # C = 0's margins are tens below zero
    axes[0].legend(fontsize=8)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    axes[2].legend(fontsize=7, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.22))
    fig.savefig(path, dpi=110)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--sweeps", type=int, default=60)
    parser.add_argument("--figure", default=None)
    args = parser.parse_args()
    rows = study(args.seeds, args.sweeps)
    if args.figure:
        figure(rows, args.figure)


if __name__ == "__main__":
    main()
