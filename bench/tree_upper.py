"""How the default tree groups its leaves above the leaf level (issue 22): per table, the
dendrogram purity of the DEFAULT ``HierarchicalMixture()``'s ``linkage_`` at one seed beside
the best peer of ``bench_tree.py`` (Ward, average, genie, Gaussian BHC), the gap, and on how
many tables it is best or within 0.01 of the best peer.

The peers' purities are cached in ``bench/.cache/tree_upper_peers.json`` (deterministic: they
depend on the data only), and every fit's kept state (points' leaves, components and the
simplified tree) in ``bench/.cache/tree_upper_<seed>_<tag>.pkl`` so that ``--linkage`` variants
(other ways of joining the kept leaves) are scored without refitting.

Run:  python bench/tree_upper.py [--seed 0] [--tag default] [--refit] [--linkage NAME]
      python bench/tree_upper.py --versus current,installed --seeds 0,1,2,3,4,5,6
(``current``: the merges above the leaves by BHC's r_k, as before issue 22's Bayes-factor
merges; ``installed``: the package's ``tree_linkage`` as it is.)
"""

from __future__ import annotations

import argparse
import json
import pickle
import time
import warnings
from pathlib import Path

import numpy as np

import mixbayes as mb
from bench_tree import data_sets, fit_ours, peer_trees

CACHE = Path(__file__).with_name(".cache")


def peers(name, X, y):
    """{peer: purity} of the table, from the cache when there."""
    path = CACHE / "tree_upper_peers.json"
    table = json.loads(path.read_text()) if path.exists() else {}
    if name not in table:
        table[name] = {peer: float(mb.metrics.dendrogram_purity(Z, y))
                       for peer, Z, _, _ in peer_trees(X, np.unique(y).size)}
        CACHE.mkdir(exist_ok=True)
        path.write_text(json.dumps(table, indent=1))
    return table[name]


def _recording_linkage():
    """Make ``HierarchicalMixture`` keep its kept state's components (``_bench_comp``), which
    a linkage variant needs and the estimator does not store."""
    from mixbayes.tree.model import HierarchicalMixture

    original = HierarchicalMixture._linkage
    if getattr(original, "recording", False):
        return

    def _linkage(self, data, state):
        self._bench_comp = np.asarray(state.comp).copy()
        return original(self, data, state)

    _linkage.recording = True
    HierarchicalMixture._linkage = _linkage


def fitted(name, X, seed, tag, refit):
    """The fit's linkage and what a linkage variant needs, cached per (seed, tag, table)."""
    path = CACHE / f"tree_upper_{seed}_{tag}.pkl"
    store = pickle.loads(path.read_bytes()) if path.exists() else {}
    if refit or name not in store:
        _recording_linkage()
        start = time.perf_counter()
        model, _ = fit_ours(X, seed)
        store[name] = dict(model=model, seconds=time.perf_counter() - start)
        CACHE.mkdir(exist_ok=True)
        path.write_bytes(pickle.dumps(store))
    return store[name]


def versus(args):
    """Per table, the mean over ``--seeds`` of two linkages of the same cached fits (``before``
    and ``after``, names in tree_upper_variants), and per seed the sets within 0.01."""
    import tree_upper_variants

    names = args.versus.split(",")
    seeds = [int(s) for s in args.seeds.split(",")]
    rows, hits, gaps = {}, {n: [0] * len(seeds) for n in names}, {n: [[] for _ in seeds]
                                                                    for n in names}
    for name, X, y in data_sets(False):
        scores = peers(name, X, y)
        best = max(scores.values())
        rows[name] = {n: [] for n in names}
        for i, seed in enumerate(seeds):
            model = fitted(name, X, seed, args.tag, False)["model"]
            for n in names:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    Z = getattr(tree_upper_variants, n)(model, X)
                gap = mb.metrics.dendrogram_purity(Z, y) - best
                rows[name][n].append(gap)
                hits[n][i] += gap >= -0.01
                gaps[n][i].append(gap)
        print(f"{name:28s} best {best:.3f}  " + "  ".join(
            f"{n} {np.mean(rows[name][n]):+.3f}" for n in names), flush=True)
    for n in names:
        print(f"{n}: within 0.01 per seed {hits[n]} (sum {sum(hits[n])} of "
              f"{len(seeds) * len(rows)}), mean gap per seed "
              f"{[round(float(np.mean(g)), 4) for g in gaps[n]]}, "
              f"overall {np.mean([np.mean(g) for g in gaps[n]]):+.4f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tag", default="default", help="name of the cached fits")
    parser.add_argument("--refit", action="store_true")
    parser.add_argument("--linkage", default=None,
                        help="a function name in tree_upper_variants: relink the kept state")
    parser.add_argument("--power", type=float, default=None,
                        help="the burn-in regroup's level exponent p (k^(l p) groups at level "
                             "l; the estimator's is 1/L); give a --tag of its own")
    parser.add_argument("--versus", default=None,
                        help="comma-separated linkage variants compared over --seeds")
    parser.add_argument("--seeds", default="0", help="comma-separated seeds for --versus")
    parser.add_argument("--only", default=None, help="comma-separated table names (prefixes)")
    args = parser.parse_args()
    from bench_tree import compile_ours

    if args.power is not None:
        import functools

        from mixbayes.tree import _start, model as tree_model

        tree_model.regroup = functools.partial(_start.regroup, power=args.power)
    compile_ours()
    if args.versus:
        return versus(args)
    relink = None
    if args.linkage:
        import tree_upper_variants

        relink = getattr(tree_upper_variants, args.linkage)
    hits, gaps, n = 0, [], 0
    print(f"{'table':28s} {'ours':>6s} {'best peer':>15s} {'gap':>7s}  s")
    for name, X, y in data_sets(False):
        if args.only and not any(name.startswith(p) for p in args.only.split(",")):
            continue
        scores = peers(name, X, y)
        fit = fitted(name, X, args.seed, args.tag, args.refit)
        model = fit["model"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            Z = model.linkage_ if relink is None else relink(model, X)
        ours = mb.metrics.dendrogram_purity(Z, y)
        peer, best = max(scores.items(), key=lambda item: item[1])
        gap = ours - best
        hits += gap >= -0.01
        gaps.append(gap)
        n += 1
        print(f"{name:28s} {ours:6.3f} {peer:>9s} {best:.3f} {gap:+7.3f}  "
              f"{fit['seconds']:.1f}", flush=True)
    print(f"within 0.01 of the best peer: {hits} of {n}; mean gap {np.mean(gaps):+.4f}")


if __name__ == "__main__":
    main()
