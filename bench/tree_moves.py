"""Issue 22: does the tree model's chain leave its start, and is its kept state better than the
start? On the real tables of ``bench_tree.py`` (standardised columns), for each start (the
fit's own Ward start, ``init="ward"``, and every point on one path, ``init="single"``) and each
set of moves (the per-point moves, ``moves="path"``, the default; every move, ``moves="all"``;
every move during burn-in and the per-point moves after it, ``moves="burn-in"``), over chain
seeds: the start's leaves (its components) and the kept state's
components and leaves; dendrogram purity against the classes of the start's paths, of the kept
state's paths (``paths_``) and of its full dendrogram (``linkage_``).

The start is the one ``fit`` draws (``bench_tree.start_of``: for the tied default, Ward's tree
of the points whitened by the first Ward start's leaves, cut by BIC). The kept state is the
sweep of highest RCDLL after burn-in; with "path" (and "burn-in") the burn-in also regroups the
leaves (``HierarchicalMixture``'s ``init``), so its leaves are the chain's and its upper levels
Ward's merges of them.

Run:  python bench/tree_moves.py [--seeds 3] [--depth 2] [--write docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

import mixbayes as mb
from _report import machine, markdown_table, write_section
from bench_tree import compile_ours, data_sets, start_of

HEADING = "## Tree model: the chain against its start (`python bench/tree_moves.py`)"
NOTES = """

Columns: means over the chain seeds. *Start*: leaves (= components) and the dendrogram purity
of the start's depth-L paths (one path: 1 leaf, and the purity of a single cluster, the share
of pairs in one class). *K / leaves*: the kept state's components and leaves. *Paths*: purity of
its depth-L tree `paths_`, comparable with the start's; *full*: of its dendrogram `linkage_`.

What it shows (2026-12-06, the table above, after the tied Sigma's point-mass floor). From the
Ward start the per-point moves (the default) keep about the start's components (a component is
left only when all its points leave it: iris 10 -> 9.7, crabs 12 -> 10.7, the others within
1) and move points between them; the kept paths are purer than the start's on 8 of the 11
tables (iris +0.09, wine +0.08, crabs +0.05, penguins +0.04, digits +0.01, ecoli +0.01, glass
and yeast +0.001) and less pure on 3 (wdbc -0.03, olive and diabetes -0.005); the full
dendrogram is above the start's paths on all 11. Every move (`moves="all"`) changes the
number of components on 9 of 11 from the Ward start (iris 10 -> 8.7, glass 37 -> 33.3, digits
67 -> 81.3; yeast and penguins stay) and grows 6-66 from one path, where the per-point moves
open 2-5; but its full dendrogram is less pure than the default's on all 11: the posterior's
upper levels are flat (leaves of distinct components pay about gamma to share a parent), so
it loses the Ward grouping of leaves that the default's burn-in regroup keeps. Every move
during burn-in and the per-point moves after it (`moves="burn-in"`, its regroups cutting Ward's
merges of the leaves at their gaps since 2026-12-06) changes the components from the Ward
start by one or more on 7 tables (iris 10 -> 6.3, crabs 12 -> 6, glass 37 -> 32.7, diabetes
13 -> 9.7, digits 67 -> 78.3; wdbc, ecoli, yeast and penguins stay) and its kept paths are
purer than the start's on 7 of 11 (not glass, wdbc, ecoli, olive); from one path it grows 4-52
components, and its full dendrogram is above, or within 0.02 of, the default's from the Ward
start on 6 of 11 (wine 0.945 against 0.919, diabetes 0.770 / 0.738, wdbc, ecoli, yeast,
penguins; not iris 0.838 / 0.890, glass 0.459 / 0.496, crabs 0.362 / 0.406, olive 0.891 /
0.930, digits 0.762 / 0.833). From the Ward start its full dendrogram beats the default's on
iris (0.905 against 0.890) and diabetes (0.775 / 0.738) and loses on digits (0.699).
"""


def rows_for(name, X, y, depth, seeds):
    """One row per (start, moves) of table ``name``: means over ``seeds`` chains."""
    out = []
    for init in ("ward", "single"):
        for moves in ("path", "all", "burn-in"):
            cells = []
            for seed in range(seeds):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    fitted = mb.HierarchicalMixture(depth, init=init, moves=moves,
                                                    random_state=seed).fit(X)
                start = (start_of(fitted, X, seed) if init == "ward"
                         else np.zeros((X.shape[0], depth), dtype=np.int64))
                cells.append((np.unique(start[:, -1]).size,
                              mb.metrics.dendrogram_purity(start, y), fitted.n_components_,
                              np.unique(fitted.labels_).size,
                              mb.metrics.dendrogram_purity(fitted.paths_, y),
                              mb.metrics.dendrogram_purity(fitted.linkage_, y)))
            m = np.mean(cells, axis=0)
            out.append([name, init, moves, f"{m[0]:.1f}", f"{m[1]:.3f}",
                        f"{m[2]:.1f} / {m[3]:.1f}", f"{m[4]:.3f}", f"{m[5]:.3f}"])
            print(" | ".join(out[-1]), flush=True)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--depth", type=int, default=2)
    parser.add_argument("--write", default=None, help="markdown file to put the section in")
    args = parser.parse_args()
    compile_ours()
    rows = []
    for name, X, y in data_sets(False):
        if not name.startswith("nested"):  # the real tables only
            rows += rows_for(name, X, y, args.depth, args.seeds)
    text = markdown_table(["table", "init", "moves", "start leaves", "start: paths purity",
                           "kept K / leaves", "kept: paths purity", "kept: full purity"],
                          rows)
    print(f"\n{machine()}\n\n{text}")
    if args.write:
        write_section(args.write, HEADING,
                      f"; depth {args.depth}, chain seeds 0-{args.seeds - 1}, defaults "
                      "otherwise (100 sweeps).", text + NOTES)


if __name__ == "__main__":
    main()
