"""Fill the numba cache before the test suite runs (``make test`` calls this first).

The suite runs in two pytest-xdist workers, and a kernel's first call compiles it in whichever
worker gets there first - often both at once, each paying tens of seconds for the same machine
code. Here every model fits a tiny problem once, the models split between two processes, so
that each kernel is compiled once and the workers load it from the cache, serial and parallel
builds alike. Kernels the fits below do not reach still compile on demand.

    python tests/compile_kernels.py        # both halves, in parallel
    python tests/compile_kernels.py a|b    # one half
"""

import subprocess
import sys
import time
import warnings


def tree_moves():
    """The tree sampler's restructuring kernels, alone (15-30 s of compiling, here rather
    than in the other half, which compiles the tree's per-point kernels and reaches its tree
    fits after this has filled the cache)."""
    import numpy as np

    import mixbayes as mb
    from mixbayes.tree import _moves, _sampler

    X, _ = mb.datasets.make_tree_data(40, random_state=0)
    data = _sampler.TreeData(X, 2, 1.0, 0.01, 0.1, 1.0, X.mean(axis=0), 10.0)
    rng = np.random.default_rng(0)
    state = _sampler.initial_state(data, rng)
    for move in _sampler.RESTRUCTURING:
        _moves.run(data, state, rng, move)


def documents_and_points():
    import numpy as np

    import mixbayes as mb
    from mixbayes import _kernel_tools

    tree_moves()

    docs, _ = mb.datasets.make_topic_corpus(60, 40, 3, 30, random_state=0)
    X, _ = mb.datasets.make_gaussian_mixture(100, 2, 3, random_state=0)
    threshold = _kernel_tools._PARALLEL_FROM
    for parallel_from in (threshold, 0):  # the serial builds, then the parallel ones
        _kernel_tools._PARALLEL_FROM = parallel_from
        mb.DirichletMultinomialMixture(3).fit(docs.counts)
        mb.VariationalGaussianMixture(3).fit(X)
        mb.TopicModel(3).fit(docs.counts)
    _kernel_tools._PARALLEL_FROM = threshold
    draws = np.random.default_rng(0).integers(0, 3, (4, 10))  # the partition summaries
    estimate = mb.partition.point_estimate(draws, n_runs=1)
    mb.partition.point_estimate(draws, loss="binder", n_runs=1)
    mb.partition.credible_ball(draws, estimate)
    mb.DirichletMultinomialMixture(3, inference="gibbs", n_sweeps=5).fit(docs.counts)
    mb.select_n_topics(docs.counts, range(2, 4), verbose=0)


def samplers():
    import numpy as np

    import mixbayes as mb

    from mixbayes import _kernel_tools

    corpus, _ = mb.datasets.make_hdp_data(10, 20, n_words=20, random_state=0)
    mb.HDPMixture(n_iter=5).fit(corpus.counts)
    threshold = _kernel_tools._PARALLEL_FROM
    _kernel_tools._PARALLEL_FROM = 0  # the group loops' parallel builds
    mb.HDPMixture(n_iter=2).fit(corpus.counts)
    _kernel_tools._PARALLEL_FROM = threshold
    X, _ = mb.datasets.make_gaussian_mixture(120, 2, 3, random_state=0)
    mb.HDPMixture("gaussian", n_iter=5).fit(X, groups=np.arange(120) % 4)
    points, _ = mb.datasets.make_tree_data(60, random_state=0)
    mb.HierarchicalMixture(2, n_iter=3, margin_weight=1.0).fit(points)
    # (the unknown covariance types run the same build of the tree kernel: one signature);
    # the exactness tests also call two of its pieces directly, each its own entry point
    from mixbayes.tree import _kernels as tree_kernels

    tree_kernels.seed(0)
    d = 2
    tree_kernels._draw_given_point(0, 0, points[:4], np.zeros((4, 1)), np.zeros(d),
                                   tree_kernels.FULL, 1.0, d + 2.0, np.eye(d), np.zeros((1, d)),
                                   np.zeros((1, 0)), np.zeros((1, d, d)))


HALVES = {"a": documents_and_points, "b": samplers}


def main(argv):
    if argv:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            HALVES[argv[0]]()
        return 0
    start = time.perf_counter()
    children = [subprocess.Popen([sys.executable, __file__, half]) for half in HALVES]
    status = max(child.wait() for child in children)
    print(f"numba kernels compiled in {time.perf_counter() - start:.0f} s", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
