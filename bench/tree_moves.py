"""Issue 22: what the restructuring moves do to the tree model's kept state on the UCI tables
(quality only, one seed): components and leaves of the start (Ward's tree cut by BIC, or one
path) and of the kept state, and the dendrogram purity of their paths against the classes,
with every move (``moves="all"``, the default) and with the per-point moves only ("path").

Run:  python bench/tree_moves.py [--depth 2] [--n-iter 100] [--init ward|single]

Measured (depth 2, 100 sweeps, seed 0; K / level-1 nodes / leaves of the kept state, purity
of ``paths_``):

| table | start: leaves = K, purity | path | path purity | all | all purity |
|---|---|---|---|---|---|
| iris | Ward 11, 0.734 | 11 / 3 / 13 | 0.788 | 11 / 9 / 12 | 0.552 |
| wine | Ward 9, 0.865 | 9 / 3 / 9 | 0.875 | 9 / 7 / 10 | 0.663 |
| glass | Ward 41, 0.435 | 41 / 6 / 42 | 0.430 | 38 / 8 / 29 | 0.400 |
| wdbc | Ward 39, 0.684 | 39 / 6 / 39 | 0.688 | 41 / 8 / 36 | 0.645 |
| ecoli | Ward 13, 0.798 | 13 / 4 / 13 | 0.785 | 13 / 6 / 13 | 0.621 |
| yeast | Ward 33, 0.329 | 33 / 6 / 34 | 0.331 | 33 / 9 / 29 | 0.322 |
| iris | one path, 0.333 | 3 / 3 / 4 | 0.720 | 10 / 5 / 10 | 0.520 |
| wine | one path, 0.350 | 3 / 3 / 3 | 0.915 | 10 / 8 / 12 | 0.622 |
| glass | one path, 0.317 | 7 / 6 / 10 | 0.363 | 34 / 6 / 29 | 0.372 |
| wdbc | one path, 0.561 | 2 / 2 / 2 | 0.569 | 28 / 8 / 23 | 0.618 |
| ecoli | one path, 0.347 | 3 / 2 / 3 | 0.681 | 13 / 7 / 12 | 0.632 |
| yeast | one path, 0.271 | 2 / 2 / 2 | 0.271 | 26 / 10 / 19 | 0.293 |

With every move the two starts end near each other (components 10-34 from one path against
9-41 from Ward's), where the per-point moves keep the start's components; the purity falls
because the posterior's level 1 is flat (about one parent per leaf or two: leaves of
distinct components pay about gamma to share a parent), so pairs in different leaves meet
at the root.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

import mixbayes as mb
from bench_gmm import UCI, load_uci
from mixbayes._validation import check_random_state
from mixbayes.tree._start import ward_start


def row(name, depth, n_iter, init, seed=0):
    X, y = load_uci(name)
    start = ward_start(X, depth, check_random_state(seed).spawn(1)[0])  # fit's own start
    if init == "single":
        start_paths = np.zeros((X.shape[0], depth), dtype=np.int64)
    else:
        start_paths = start.paths
    out = dict(table=name, n=X.shape[0], start_leaves=np.unique(start_paths[:, -1]).size,
               start_purity=mb.metrics.dendrogram_purity(start_paths, y))
    for moves in ("path", "all"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted = mb.HierarchicalMixture(depth, n_iter=n_iter, init=init, moves=moves,
                                            random_state=seed).fit(X)
        out[f"{moves}_K"] = fitted.n_components_
        out[f"{moves}_leaves"] = np.unique(fitted.paths_[:, -1]).size
        out[f"{moves}_level1"] = np.unique(fitted.paths_[:, 0]).size
        out[f"{moves}_purity"] = mb.metrics.dendrogram_purity(fitted.paths_, y)
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--depth", type=int, default=2)
    parser.add_argument("--n-iter", type=int, default=100)
    parser.add_argument("--init", default="ward")
    args = parser.parse_args()
    print("| table | n | start leaves (= components) | start purity | path: K / level-1 / leaves"
          " | path purity | all: K / level-1 / leaves | all purity |")
    print("|---|---|---|---|---|---|---|---|")
    for name in UCI:
        r = row(name, args.depth, args.n_iter, args.init)
        print(f"| {name} | {r['n']} | {r['start_leaves']} | {r['start_purity']:.3f} | "
              f"{r['path_K']} / {r['path_level1']} / {r['path_leaves']} | "
              f"{r['path_purity']:.3f} | {r['all_K']} / {r['all_level1']} / "
              f"{r['all_leaves']} | {r['all_purity']:.3f} |", flush=True)


if __name__ == "__main__":
    main()
