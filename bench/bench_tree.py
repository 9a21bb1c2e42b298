"""Trees of clusters side by side in one process (issue 14): our tree model against the
agglomerative hierarchies a user would otherwise build.

* ``mixbayes depth L``  HierarchicalMixture(depth=L), defaults otherwise (``OURS`` below);
                        mean ± sd over ``--seeds`` chains (seeds 0, 1, ...)
* ``ward``, ``average`` scikit-learn AgglomerativeClustering, full merge tree
* ``genie``             genieclust.Genie (default Gini threshold 0.3), full merge tree
* Bayesian hierarchical clustering (Heller & Ghahramani 2005): no working package on PyPI,
  so no column; ``BHC_NOTE`` below says what was tried and why each one fails.

Data: the tables of ../shared/data/uci (columns standardised) and nested Gaussian hierarchies
from ``make_tree_data(kind="nested")`` (``SIMULATED``: depth 2 and 3, d = 2 and 10, siblings
close enough that Ward's tree is not already pure). Measures:

* dendrogram purity (Heller & Ghahramani 2005) against the classes (simulated: the true
  leaves). Peers: of their full binary merge tree (:func:`merge_tree_purity`). Ours: of
  ``paths_`` (:func:`mixbayes.metrics.dendrogram_purity`): a tree of ``depth`` levels whose
  leaves hold many points, so pairs in one leaf meet at that leaf.
* the same purity at equal shape: the peers' merge trees cut, level by level, into as many
  nodes as our tree has at that level (median seed's counts), scored like ours. A full
  binary tree can separate pairs that a depth-L tree must leave at one node; this table
  compares the hierarchies at the granularity ours chose.
* leaf ARI: ours, the leaves (``labels_``, as many as the model found); peers, their merge
  tree cut at the true number of classes (a flat clustering told K).
* seconds: ours, one fit (default sweeps, numba compiled beforehand); peers, building the
  full tree (the flat cut is read off it; Genie's comes from the same fit).

``--scaling`` (alone): seconds per sweep of the tree model on simulated data (d = 10,
depth 3) at N = 1,000 ... 100,000 and the log-log slope, and at N = 10,000 the ratio of a
sweep to one iteration of our VariationalGaussianMixture (default full covariances) with K =
the fitted tree's components; goal (issue 14): slope near 1, ratio at most 20. A sweep is
one turn of ``fit``'s loop: the sampler's sweep plus the RCDLL it records, timed by wrapping
those two functions (the estimator exposes no timings), median over ``SCALING_SWEEPS``
sweeps; the start (Ward's tree, the variance estimate) is reported apart. Each fit runs
under an address-space cap, so that one too large for the machine ends in a MemoryError
(reported) rather than the out-of-memory killer.

Run:  python bench/bench_tree.py [--seeds 5] [--quick] [--write docs/benchmarks.md]
      python bench/bench_tree.py --scaling [--quick] [--write docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import contextlib
import time
import warnings

import numpy as np
from sklearn.cluster import AgglomerativeClustering

import mixbayes as mb
from _report import machine, markdown_table, write_section
from bench_gmm import UCI, load_uci, seconds_per_iteration

# --- settings, in one place -------------------------------------------------------------
OURS = {}  # HierarchicalMixture keywords beyond depth and random_state: its defaults
UCI_DEPTHS = (2, 3, 4)
# make_tree_data(kind="nested"): sibling leaves 1.73 x 3 = 5.2 sigma apart and parents 8 apart;
# at the recovery tests' spacing (leaf_spread=4, parent_spread=15) Ward's tree is 0.98-1.0 pure
SPREADS = dict(parent_spread=8.0, leaf_spread=3.0)
SIMULATED = {  # name: (n_samples, depth, n_features, branching)
    "nested depth 2, d=2": (1200, 2, 2, (3, 3)),
    "nested depth 2, d=10": (1200, 2, 10, (3, 3)),
    "nested depth 3, d=2": (2700, 3, 2, (3, 3, 3)),
    "nested depth 3, d=10": (2700, 3, 10, (3, 3, 3)),
}
SCALING_N = (1_000, 3_000, 10_000, 30_000, 100_000)
SCALING_SWEEPS = 10
SCALING_DATA = dict(depth=3, n_features=10, branching=(3, 3, 3), **SPREADS)
VGM_N = 10_000  # where a sweep is compared with an iteration of VariationalGaussianMixture
QUICK = dict(uci=("iris", "wine", "glass"), sim_divisor=4, seeds=1,
             scaling_n=(1_000, 3_000), vgm_n=3_000)

BHC_NOTE = """No Bayesian hierarchical clustering column: no package on PyPI runs it on these data.
`bhc` 1.3 (like its re-uploads `ep-bhc` 1.6 and `pypi-bhc` 1.0) installs no code: its
setup.py passes `package=` where setuptools reads `packages=`, and its source archive holds
setup.py, setup.cfg and PKG-INFO only, so `pip install bhc` leaves metadata and nothing to
import. `BHCAA` 0.1 and `BHClustering` 0.0.3 import, but implement only the
Dirichlet-multinomial (counts) and Bernoulli-Beta likelihoods, not a Gaussian one, in
probability space (gamma(n) overflows past 171 points, the marginals underflow to 0), with
pure-Python pair loops that recompute every subtree. In a one-off check (2 cores) on 60
points of a shuffled iris (raw, non-negative) they took 19 s and 34-54 s (30 points: 0.9 s
and 3-5 s, so O(N^3) to O(N^4): iris' 150 points would take tens of minutes) and merged the
points into one chain (at 3 clusters: 58 points and two singletons, ARI 0.00). `bayesHC`
0.0.1 is a notebook cell (`%%cython`) saved as `__init__.py` and does not import."""

NOTES = """

Columns. *DP*: dendrogram purity against the classes (simulated sets: the true leaves), of the
peers' full binary merge trees and of our `paths_` (depth-L tree, many points per leaf).
*Leaf ARI*: ours, the model's leaves; peers, their tree cut at the true number of classes.
*Clusters*: ours, leaves / Gaussian components (median seed); peers, the cut. *Seconds*: one
fit (ours: default sweeps; peers: the full tree). Ours: mean ± sd over seeds; peers are
deterministic. The second table cuts the peers' trees to our tree's number of nodes per level
and scores them as ours.

""" + BHC_NOTE

SCALING_NOTES = """

A sweep: the sampler's sweep plus the RCDLL `fit` records after it (median over the fit's
sweeps). *Start*: the rest of the fit (Ward's tree on at most 2,000 points, the BIC cut, the
variance estimate taken from it, storing the result). The VGM iteration: (best of 3
25-iteration fits - best of 3 5-iteration fits) / 20, `tol=0`, full covariances (bench_gmm's
measure), K = the tree's components at that N. A sweep's path and component steps cost
O(N K); the start's leaf count (and so K) follows the data, not N. The regularised model
(C = 1) adds the discriminant step (every node's hinge pieces and moments over the points
below its parent) and the margin terms of the path moves."""


# --- binary merge trees ------------------------------------------------------------------
def merge_tree_purity(children, labels):
    """Dendrogram purity (Heller & Ghahramani, 2005) of a binary merge tree.

    Class counts are merged bottom-up: the same-class pairs whose lowest common ancestor is
    merge node v are ``counts[a] * counts[b]`` (one point under each child), and each scores
    the purity of v in its class, ``counts[v] / size(v)``. O(N C) for C classes.

    Parameters
    ----------
    children : array-like of int of shape (n_samples - 1, 2)
        scikit-learn's ``children_``: row i merges two nodes into node ``n_samples + i``
        (ids below ``n_samples`` are the points).
    labels : array-like of shape (n_samples,)
        Known classes.

    Returns
    -------
    float in (0, 1]
    """
    classes = np.unique(labels, return_inverse=True)[1].ravel()
    n = classes.size
    counts = np.zeros((2 * n - 1, classes.max() + 1), dtype=np.int64)
    counts[np.arange(n), classes] = 1
    total = 0.0
    for step, (a, b) in enumerate(np.asarray(children)):
        node = n + step
        counts[node] = counts[a] + counts[b]
        total += np.dot(counts[a] * counts[b], counts[node]) / counts[node].sum()
    per_class = np.bincount(classes)
    return float(total / (per_class * (per_class - 1) // 2).sum())


def merge_tree_cuts(children, n_clusters):
    """Flat labels of the points when a binary merge tree is cut into each of ``n_clusters``
    clusters (by merge order: k clusters remain after the first N - k merges, so cuts at
    fewer clusters are coarsenings of cuts at more).

    Returns
    -------
    list of ndarray of shape (n_samples,), labels 0.. in order of first appearance, one per
    entry of ``n_clusters``.
    """
    n = len(children) + 1
    node_of = np.arange(n)  # every point's current cluster (a merge-tree node id)
    members = {i: [i] for i in range(n)}
    wanted, cuts = set(n_clusters), {}
    for step, (a, b) in enumerate(np.asarray(children)):
        if n - step in wanted:
            cuts[n - step] = node_of.copy()
        merged = members.pop(a) + members.pop(b)
        node_of[merged] = n + step
        members[n + step] = merged
    cuts[1] = node_of
    return [np.unique(cuts[k], return_inverse=True)[1].ravel() for k in n_clusters]


def nodes_per_level(paths):
    """Number of distinct nodes (path prefixes) at levels 1..L of a tree given by paths."""
    return [len({tuple(row) for row in paths[:, :level]}) for level in range(1, paths.shape[1] + 1)]


def purity_at_shape(children, labels, counts):
    """Dendrogram purity of a merge tree cut into ``counts[l]`` nodes at level l + 1."""
    return mb.metrics.dendrogram_purity(np.column_stack(merge_tree_cuts(children, counts)),
                                        labels)


# --- the methods -------------------------------------------------------------------------
def peer_trees(X, n_classes):
    """Yield (name, full merge tree, flat labels at ``n_classes``, seconds) of each peer."""
    import genieclust

    for linkage in ("ward", "average"):
        start = time.perf_counter()
        children = AgglomerativeClustering(n_clusters=None, distance_threshold=0,
                                           linkage=linkage).fit(X).children_
        seconds = time.perf_counter() - start
        yield linkage, children, merge_tree_cuts(children, [n_classes])[0], seconds
    start = time.perf_counter()
    genie = genieclust.Genie(n_clusters=n_classes).fit(X)
    yield "genie", genie.children_, genie.labels_, time.perf_counter() - start


def fit_ours(X, depth, seed, **settings):
    """Our fitted tree and the seconds its fit took (warnings silenced: a short chain's
    diagnostics are not what this table measures)."""
    model = mb.HierarchicalMixture(depth, random_state=seed, **{**OURS, **settings})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        model.fit(X)
    return model, time.perf_counter() - start


def compile_ours(depths):
    """Compile (or load) the numba kernels outside every measurement."""
    X = np.random.default_rng(0).standard_normal((60, 3))
    for depth in depths:
        fit_ours(X, depth, 0, n_iter=3)


# --- the quality table -------------------------------------------------------------------
def data_sets(quick):
    """(name, X, classes, depths of ours) of every table and simulated hierarchy."""
    for name in (QUICK["uci"] if quick else UCI):
        yield (name, *load_uci(name), UCI_DEPTHS)
    for name, (n, depth, d, branching) in SIMULATED.items():
        if quick:
            n //= QUICK["sim_divisor"]
        X, truth = mb.datasets.make_tree_data(n, depth, n_features=d, branching=branching,
                                              random_state=0, **SPREADS)
        yield f"{name} ({n:,})", X, truth.labels, (depth,)


def compare(name, X, y, depths, seeds):
    """Rows of the main table and of the equal-shape table for one data set."""
    K = np.unique(y).size
    rows, shapes, peers = [], [], list(peer_trees(X, K))
    spread = np.std if seeds > 1 else (lambda values: np.nan)
    for depth in depths:
        fits = [fit_ours(X, depth, seed) for seed in range(seeds)]
        purity = [mb.metrics.dendrogram_purity(m.paths_, y) for m, _ in fits]
        aris = [mb.metrics.ari(y, m.labels_) for m, _ in fits]
        median = fits[int(np.argsort(purity)[len(purity) // 2])][0]
        leaves = np.median([np.unique(m.labels_).size for m, _ in fits])
        components = np.median([m.n_components_ for m, _ in fits])
        rows.append(dict(data=name, size=X.shape, K=K, method=f"mixbayes depth {depth}",
                         dp=np.mean(purity), dp_sd=spread(purity), ari=np.mean(aris),
                         ari_sd=spread(aris), clusters=f"{leaves:.0f} / {components:.0f}",
                         seconds=np.median([t for _, t in fits]), seeds=seeds))
        # equal shape: every seed's node counts per level, peers cut to each, averaged
        counts = [nodes_per_level(m.paths_) for m, _ in fits]
        shapes.append(dict(data=name, depth=depth, nodes=nodes_per_level(median.paths_),
                           ours=np.mean(purity), **{
                               peer: np.mean([purity_at_shape(children, y, c) for c in counts])
                               for peer, children, _, _ in peers}))
    for peer, children, flat, seconds in peers:
        rows.append(dict(data=name, size=X.shape, K=K, method=peer,
                         dp=merge_tree_purity(children, y), dp_sd=np.nan,
                         ari=mb.metrics.ari(y, flat), ari_sd=np.nan, clusters=str(K),
                         seconds=seconds, seeds="-"))
    for r in rows:
        print(f"  {name:28s} {r['method']:17s} DP {r['dp']:.3f}  leaf ARI {r['ari']:.3f}  "
              f"clusters {r['clusters']:>8s}  {r['seconds']:7.2f} s", flush=True)
    return rows, shapes


def plus_minus(mean, sd):
    """``mean ± sd``, or the mean alone where there is no spread (one seed, a peer)."""
    return f"{mean:.3f}" if np.isnan(sd) else f"{mean:.3f} ± {sd:.3f}"


def verdict(rows):
    """Where ours has the highest dendrogram purity, and where not (by how much): at each
    depth fixed over the tables (the simulated sets at their true depth), and at the better
    depth per set (chosen with the labels, which favours us)."""
    names = list(dict.fromkeys(r["data"] for r in rows))

    def count(pick):
        won, lost = [], []
        for name in names:
            mine = [r for r in rows if r["data"] == name]
            ours = pick([r for r in mine if r["method"].startswith("mixbayes")])
            best = max((r for r in mine if not r["method"].startswith("mixbayes")),
                       key=lambda r: r["dp"])
            if ours["dp"] >= best["dp"]:
                won.append(name)
            else:
                lost.append(f"{name} ({ours['dp']:.3f} against {best['method']}'s "
                            f"{best['dp']:.3f})")
        return won, lost

    lines = ["Goal (issue 14): the best dendrogram purity on most sets."]
    for depth in UCI_DEPTHS:
        won, _ = count(lambda mine: next((r for r in mine if r["method"].endswith(
            f"depth {depth}")), mine[0]))
        lines.append(f"mixbayes at depth {depth} on the tables has it on {len(won)} of "
                     f"{len(names)}.")
    won, lost = count(lambda mine: max(mine, key=lambda r: r["dp"]))
    lines.append(f"At its better depth per set (chosen with the labels) on {len(won)} of "
                 f"{len(names)}" + (f"; not on {', '.join(lost)}." if lost else "."))
    return " ".join(lines)


def quality(args):
    compile_ours(sorted(set(UCI_DEPTHS) | {depth for _, depth, _, _ in SIMULATED.values()}))
    rows, shapes = [], []
    for name, X, y, set_depths in data_sets(args.quick):
        print(f"\n{name}: {X.shape[0]} x {X.shape[1]}, {np.unique(y).size} classes", flush=True)
        more_rows, more_shapes = compare(name, X, y, set_depths, args.seeds)
        rows += more_rows
        shapes += more_shapes
    main = markdown_table(
        ["data", "N x d", "classes", "method", "seeds", "DP (full tree)", "leaf ARI",
         "clusters", "seconds"],
        [[r["data"], f"{r['size'][0]} x {r['size'][1]}", r["K"], r["method"], r["seeds"],
          plus_minus(r["dp"], r["dp_sd"]), plus_minus(r["ari"], r["ari_sd"]), r["clusters"],
          f"{r['seconds']:.3f}"] for r in rows])
    shape = markdown_table(
        ["data", "our depth", "our nodes per level (median seed)", "mixbayes", "ward cut",
         "average cut", "genie cut"],
        [[s["data"], s["depth"], ", ".join(map(str, s["nodes"])), f"{s['ours']:.3f}",
          f"{s['ward']:.3f}", f"{s['average']:.3f}", f"{s['genie']:.3f}"] for s in shapes])
    text = (f"{main}\n\nDendrogram purity at equal shape (peers' trees cut to our number of "
            f"nodes per level, mean over our seeds' shapes):\n\n{shape}\n\n{verdict(rows)}")
    print(f"\n{machine()}\n\n{text}\n\n{BHC_NOTE}")
    if args.write:
        import genieclust

        write_section(args.write, "## Trees of clusters (`python bench/bench_tree.py`)",
                      f", genieclust {genieclust.__version__}"
                      f"{' (--quick: smoke-test sizes)' if args.quick else ''}; UCI columns "
                      "standardised, simulated sets from `make_tree_data(kind=\"nested\", "
                      f"{', '.join(f'{k}={v:g}' for k, v in SPREADS.items())}, "
                      "random_state=0)`.", text + NOTES)


# --- the speed study ---------------------------------------------------------------------
@contextlib.contextmanager
def timed_calls(module, names):
    """Record the seconds of every call to ``module.<name>`` for each of ``names`` while the
    context is open (the estimator looks these functions up at each call)."""
    seconds = {name: [] for name in names}
    originals = {name: getattr(module, name) for name in names}

    def timer(name):
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return originals[name](*args, **kwargs)
            finally:
                seconds[name].append(time.perf_counter() - start)
        return timed

    for name in names:
        setattr(module, name, timer(name))
    try:
        yield seconds
    finally:
        for name, original in originals.items():
            setattr(module, name, original)


def _proc_kib(path, field):
    with open(path) as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


@contextlib.contextmanager
def memory_cap(share=0.8):
    """Cap the address space at what the process maps now plus ``share`` of the memory
    available, so that an allocation the machine cannot hold raises MemoryError instead of
    waking the out-of-memory killer on a shared machine (Linux; no cap elsewhere)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    try:
        cap = 1024 * (_proc_kib("/proc/self/status", "VmSize")
                      + int(share * _proc_kib("/proc/meminfo", "MemAvailable")))
    except (OSError, KeyError):
        yield
        return
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def time_sweeps(n, seed=0, margin_weight=0.0):
    """Fit the tree model (margin weight C = ``margin_weight``) with ``SCALING_SWEEPS`` sweeps
    on ``n`` simulated points: a dict of
    seconds per sweep, the start's seconds, the fit's seconds and the components; or None
    and the MemoryError's text."""
    from mixbayes.tree import _sampler

    X, _ = mb.datasets.make_tree_data(n, random_state=seed, **SCALING_DATA)
    try:
        with memory_cap(), timed_calls(_sampler, ("sweep", "rcdll")) as seconds:
            model, total = fit_ours(X, SCALING_DATA["depth"], seed, n_iter=SCALING_SWEEPS,
                                    margin_weight=margin_weight)
    except MemoryError as error:
        return None, f"MemoryError ({error})" if str(error) else "MemoryError"
    if not len(seconds["sweep"]) == len(seconds["rcdll"]) == SCALING_SWEEPS:
        raise RuntimeError("HierarchicalMixture.fit no longer calls mixbayes.tree._sampler's "
                           "sweep and rcdll once per sweep: update time_sweeps' targets.")
    per_sweep = np.add(seconds["sweep"], seconds["rcdll"])
    return dict(n=n, per_sweep=float(np.median(per_sweep)), start=total - per_sweep.sum(),
                total=total, components=model.n_components_, X=X), None


def scaling(args):
    sizes = QUICK["scaling_n"] if args.quick else SCALING_N
    reference = QUICK["vgm_n"] if args.quick else VGM_N
    compile_ours([SCALING_DATA["depth"]])
    with warnings.catch_warnings():  # and our Gaussian mixture's, which stops unconverged
        warnings.simplefilter("ignore")
        mb.VariationalGaussianMixture(3, max_iter=3).fit(
            np.random.default_rng(0).standard_normal((60, 3)))
    rows, failed, ratio_text = [], {}, ""
    for n in sizes:
        row, error = time_sweeps(n)
        if row is None:
            failed[n] = error
            print(f"  N={n:>7,}: {error}", flush=True)
            continue
        rows.append(row)
        print(f"  N={n:>7,}: {row['per_sweep']:.4f} s/sweep, start {row['start']:.2f} s, "
              f"fit {row['total']:.2f} s, {row['components']} components", flush=True)
        if n == reference:
            vgm = seconds_per_iteration("vgm", row["X"], row["components"])
            regularised, _ = time_sweeps(n, margin_weight=1.0)
            ratio_text = (f"At N = {n:,}: a sweep {row['per_sweep']:.4f} s (C = 0, the "
                          f"default) and {regularised['per_sweep']:.4f} s (C = 1), one "
                          f"VariationalGaussianMixture iteration (K = {row['components']}, "
                          f"full covariances) {vgm:.4f} s: a sweep costs "
                          f"{row['per_sweep'] / vgm:.2f} and "
                          f"{regularised['per_sweep'] / vgm:.2f} iterations (goal: at most "
                          "20).")
        row.pop("X")
    table = markdown_table(
        ["N", "s per sweep", "start s", f"fit s ({SCALING_SWEEPS} sweeps)", "components"],
        [[f"{r['n']:,}", f"{r['per_sweep']:.4f}", f"{r['start']:.2f}", f"{r['total']:.2f}",
          r["components"]] for r in rows]
        + [[f"{n:,}", error, "", "", ""] for n, error in failed.items()])
    if len(rows) >= 2:
        slope = np.polyfit(np.log([r["n"] for r in rows]),
                           np.log([r["per_sweep"] for r in rows]), 1)[0]
        table += (f"\n\nLog-log slope of seconds per sweep against N over "
                  f"{rows[0]['n']:,}-{rows[-1]['n']:,}: {slope:.2f} (goal: linear, 1).")
    if ratio_text:
        table += "\n\n" + ratio_text
    print(f"\n{machine()}\n\n{table}")
    if args.write:
        write_section(args.write, "## Tree model speed (`python bench/bench_tree.py --scaling`)",
                      f"{' (--quick: smoke-test sizes)' if args.quick else ''}; "
                      "`make_tree_data(N, depth=3, n_features=10, branching=(3, 3, 3), "
                      f"{', '.join(f'{k}={v:g}' for k, v in SPREADS.items())})`, "
                      f"`HierarchicalMixture(3, n_iter={SCALING_SWEEPS})`, one fit per N.",
                      table + SCALING_NOTES)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=None,
                        help="chains of ours per data set (default 5; 1 with --quick)")
    parser.add_argument("--scaling", action="store_true",
                        help="only: seconds per sweep against N, and against a VGM iteration")
    parser.add_argument("--quick", action="store_true",
                        help="smoke test: three tables, smaller simulations, two sizes")
    parser.add_argument("--write", default=None, help="markdown file to put the section in")
    args = parser.parse_args()
    if args.seeds is None:
        args.seeds = QUICK["seeds"] if args.quick else 5
    if args.scaling:
        scaling(args)
    else:
        quality(args)


if __name__ == "__main__":
    main()
