"""HDP mixtures side by side in one process: our exact slice sampler against tomotopy and gensim.

* ``mixbayes``  HDPMixture (categorical kernel), one chain, default moves ("crf")
* ``tomotopy``  HDPModel, collapsed Gibbs on the Chinese restaurant franchise (C++, 1 worker so
                that runs are reproducible; it is this fast on one thread)
* ``gensim``    HdpModel, online variational inference (one "sweep" = one pass over the corpus)

Data: ../shared/data/dblp3 (γ0 = 2, α0 = 1, α_w = 1/W, as the document) and a simulated
10,000-document corpus from ``make_hdp_data`` (γ0 = 3, α0 = 1, 50 tokens per document,
W = 500, α_w = 1/W). Every method gets the same wall-time budget (``--seconds``); we record
after every sweep the elapsed time and the geometric NMI of the documents' majority cluster
(tomotopy: majority of its word topics, scored at sweeps 1-20 and every 25th as reading them back
costs more than a sweep; gensim: the document's heaviest topic, as it keeps no word assignments,
scored at passes 1-10 and every 10th)
against the known labels. "clusters": dishes in use (ours), live topics (tomotopy), distinct
heaviest topics (gensim).

Run:  python bench/bench_hdp.py [--seconds 10] [--sim-seconds 60] [--write docs/benchmarks.md]
      python bench/bench_hdp.py --breakdown   (only: where a sweep's time goes on dblp3)
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

import mixbayes as mb
from _report import markdown_table, write_section

NOTES = """

Notes. Goals (issue 5): higher NMI at equal wall time than both peers, seconds per sweep within
2x of tomotopy's. Ours has the highest NMI at equal time on both sets. A sweep of ours is the
slice sweep plus one pass of the franchise's collapsed Gibbs sampler (the default moves; the
pass alone is about 45 ms on the 10,000-document corpus, as fast as tomotopy's whole sweep,
which is that same sampler in C++). Per sweep ours is 1.6x tomotopy's on the 10,000-document
corpus (500,000 tokens: 113 against 71 ms; an earlier run on a busier machine gave 149 ms, 2.1x),
within the goal, and about 8x on dblp3 (4,253 tokens: 5.2 against 0.6 ms, serial kernels),
where fixed costs dominate: the numpy calls between the numba kernels take about 2 ms. There
the goal is out of reach of this sampler however it is coded: `python bench/bench_hdp.py
--breakdown` (seed 0, after 200 sweeps) gives ours 4.09 ms per sweep with 26 dishes in use, of
which the collapsed pass alone takes 0.59 ms and the atoms' Dirichlet draws (at least 30 dishes x
189 words) 0.29 ms, against tomotopy's 0.39 ms per sweep with 2 live topics (it has collapsed
dblp3 onto two topics, NMI 0.07): those two parts alone, 0.88 ms, exceed twice its sweep
(0.77 ms). So the per-sweep goal holds on the large corpus and not on dblp3.
dblp3's NMI goal (>= 0.40, mean of 5 seeds) holds at the budget (about 1,950 sweeps); at sweep
100 the mean is 0.397 (the document's own code: 0.35-0.40 after about 100 sweeps; tomotopy
0.07), and chains of 1,000 sweeps average 0.41 over their second half, the posterior's level.
On the simulated corpus one seed's chain can lock onto the true structure within the budget
(NMI 0.997 in one earlier run) while others have not yet: hence three seeds there. tomotopy's
HDP collapses dblp3 onto 4-6 topics that do not follow the three subjects; gensim's online HDP
keeps its 150-topic truncation (135 of them some document's heaviest)."""

DATA = os.environ.get(
    "MIXBAYES_DATA", os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data")
)


def majority(labels, group_of, n_groups):
    names, index = np.unique(labels, return_inverse=True)
    counts = np.zeros((n_groups, names.size), dtype=np.int64)
    np.add.at(counts, (group_of, index), 1)
    return counts.argmax(axis=1)


def run_ours(X, y, gamma0, seconds, seed):
    group_of = np.repeat(np.arange(X.shape[0]), np.asarray(X.sum(axis=1)).ravel())
    times, scores = [], []
    start = time.perf_counter()

    excluded = [0.0]  # time spent on our NMI bookkeeping, not the sampler's

    def record(chain, sweep, info):
        now = time.perf_counter()
        times.append(now - start - excluded[0])
        scores.append(mb.metrics.nmi(y, majority(info["labels"], group_of, X.shape[0]),
                                     "geometric"))
        excluded[0] += time.perf_counter() - now
        return times[-1] < seconds

    model = mb.HDPMixture(top_concentration=gamma0, group_concentration=1.0, n_iter=100_000,
                          random_state=seed)
    model.fit(X, callback=record)
    return (np.asarray(times), np.asarray(scores), model.trace_["n_dishes"][0, -1],
            len(times), np.arange(1, len(times) + 1))


def run_tomotopy(X, y, gamma0, seconds, seed):
    import tomotopy as tp

    model = tp.HDPModel(min_cf=0, initial_k=2, alpha=1.0, eta=1.0 / X.shape[1], gamma=gamma0,
                        seed=seed)
    for row in X:
        model.add_doc(np.repeat([f"w{j}" for j in row.indices], row.data).tolist())
    times, scores, elapsed, sweep, recorded = [], [], 0.0, 0, []
    while elapsed < seconds:
        start = time.perf_counter()
        model.train(1, workers=1)
        elapsed += time.perf_counter() - start
        sweep += 1
        # reading the word topics back costs far more than a sweep: score the first 20 sweeps,
        # then every 25th, and the one that ends the budget
        if sweep <= 20 or sweep % 25 == 0 or elapsed >= seconds:
            labels = [np.bincount(doc.topics).argmax() for doc in model.docs]
            recorded.append(sweep)
            times.append(elapsed)
            scores.append(mb.metrics.nmi(y, labels, "geometric"))
    sweeps_done = sweep
    return np.asarray(times), np.asarray(scores), model.live_k, sweeps_done, np.asarray(recorded)


def run_gensim(X, y, gamma0, seconds, seed):
    from gensim.models import HdpModel

    corpus = [list(zip(row.indices.tolist(), row.data.tolist())) for row in X]
    vocabulary = {j: str(j) for j in range(X.shape[1])}
    times, scores, elapsed, passes, recorded = [], [], 0.0, 0, []
    model = None
    while elapsed < seconds:
        start = time.perf_counter()
        if model is None:
            model = HdpModel(corpus, vocabulary, alpha=1.0, gamma=gamma0, eta=1.0 / X.shape[1],
                             random_state=seed)
        else:
            model.update(corpus)
        elapsed += time.perf_counter() - start
        passes += 1
        # inferring every document's weights costs several passes: score passes 1-10 and
        # every 10th, and always the one that ends the budget
        if passes <= 10 or passes % 10 == 0 or elapsed >= seconds:
            labels = [max(model[doc], key=lambda pair: pair[1], default=(0, 0))[0]
                      for doc in corpus]
            recorded.append(passes)
            times.append(elapsed)
            scores.append(mb.metrics.nmi(y, labels, "geometric"))
    # gensim keeps T = 150 topics alive: count those that are some document's heaviest
    return np.asarray(times), np.asarray(scores), len(set(labels)), passes, np.asarray(recorded)


def compare(name, X, y, gamma0, seconds, seeds):
    rows = []
    for method, runner in (("mixbayes", run_ours), ("tomotopy", run_tomotopy),
                           ("gensim", run_gensim)):
        finals, per_sweep, sweeps, clusters, at_ten, at_hundred = [], [], [], [], [], []
        for seed in range(seeds):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                times, scores, k, n_sweeps, recorded = runner(X, y, gamma0, seconds, seed)
            # the score of the sweep that used up the budget (all runners stop right after it)
            finals.append(scores[-1])
            per_sweep.append(times[-1] / n_sweeps)
            sweeps.append(n_sweeps)
            clusters.append(int(k))
            at_ten.append(scores[min(9, len(scores) - 1)])
            if 100 in recorded:
                at_hundred.append(scores[list(recorded).index(100)])
        row = dict(data=name, method=method, seconds=seconds, seeds=seeds,
                   per_sweep=np.median(per_sweep), sweeps=int(np.median(sweeps)),
                   nmi=np.mean(finals), nmi_sd=np.std(finals), nmi10=np.mean(at_ten),
                   nmi100=np.mean(at_hundred) if len(at_hundred) == seeds else np.nan,
                   clusters=int(np.median(clusters)))
        rows.append(row)
        print(f"  {name} {method:9s} {row['per_sweep'] * 1e3:8.2f} ms/sweep  {row['sweeps']:5d} "
              f"sweeps in {seconds:.0f} s  NMI {row['nmi']:.3f} ± {row['nmi_sd']:.3f} "
              f"(sweep 10: {row['nmi10']:.3f}, 100: {row['nmi100']:.3f})  "
              f"clusters {row['clusters']}", flush=True)
    return rows


def median_ms(fn, repeats=200):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * float(np.median(times))


def breakdown(X, gamma0, burn_in=200):
    """Where a sweep's time goes on ``X`` after ``burn_in`` sweeps, beside tomotopy's sweep at
    the same point: our whole sweep, its collapsed franchise pass alone (the algorithm tomotopy
    runs), and the atoms' draw alone (one Dirichlet over the vocabulary per instantiated dish:
    the slice sampler cannot avoid it)."""
    import tomotopy as tp

    from mixbayes.hdp import _sampler

    data = mb.HDPMixture()._grouped_tokens(X, None)[0]
    rng = np.random.default_rng(0)
    state = _sampler.initial_state(data, gamma0, 1.0, rng)
    for _ in range(burn_in):
        _sampler.sweep(data, state, gamma0, 1.0, rng)
    sweep = median_ms(lambda: _sampler.sweep(data, state, gamma0, 1.0, rng))
    collapsed = median_ms(lambda: _sampler._crf_pass(data, state, gamma0, 1.0, rng))
    _sampler.sweep(data, state, gamma0, 1.0, rng)
    dish_of = state.dish_of(data)
    # the sticks a sweep instantiates span at least the labels in use (with the gaps the label
    # redraw leaves between them)
    instantiated = int(state.table_dish.max()) + 1
    atoms = median_ms(lambda: _sampler.lookup(data, _sampler.draw_atoms(data, dish_of,
                                                                        instantiated, rng)))
    model = tp.HDPModel(min_cf=0, initial_k=2, alpha=1.0, eta=1.0 / X.shape[1], gamma=gamma0,
                        seed=0)
    for row in X:
        model.add_doc(np.repeat([f"w{j}" for j in row.indices], row.data).tolist())
    model.train(burn_in, workers=1)
    theirs = median_ms(lambda: model.train(1, workers=1))
    print(f"  after {burn_in} sweeps: ours {sweep:.2f} ms/sweep ({len(np.unique(dish_of))} "
          f"dishes in use), of which the collapsed pass alone {collapsed:.2f} ms and the atoms "
          f"(at least {instantiated} dishes x {X.shape[1]} words) {atoms:.2f} ms; tomotopy "
          f"{theirs:.2f} ms/sweep ({model.live_k} live topics); 2x tomotopy = "
          f"{2 * theirs:.2f} ms", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=10.0, help="budget on dblp3")
    parser.add_argument("--sim-seconds", type=float, default=60.0, help="budget, simulation")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--sim-seeds", type=int, default=3)
    parser.add_argument("--write", default=None)
    parser.add_argument("--breakdown", action="store_true",
                        help="only: where a sweep's time goes on dblp3, beside tomotopy's")
    args = parser.parse_args()
    corpus = mb.read_corpus(os.path.join(DATA, "dblp3"))
    keep = np.asarray(corpus.counts.sum(axis=1)).ravel() > 0
    X, y = corpus.counts[keep], np.asarray(corpus.labels)[keep]
    mb.HDPMixture(n_iter=3).fit(X)  # compile (or load) our kernels outside the timing
    if args.breakdown:
        breakdown(X, 2.0)
        return
    rows = compare("dblp3", X, y, 2.0, args.seconds, args.seeds)
    simulated, truth = mb.datasets.make_hdp_data(10_000, 50, n_words=500, random_state=0)
    mb.HDPMixture(n_iter=2).fit(simulated.counts[:2000])  # the parallel build, compiled
    rows += compare("simulated 10k docs", simulated.counts, truth.group_labels, 3.0,
                    args.sim_seconds, args.sim_seeds)
    text = markdown_table(
        ["data", "method", "budget s", "seeds", "ms per sweep", "sweeps in budget",
         "NMI at budget (mean ± sd)", "NMI at sweep 10", "NMI at sweep 100", "clusters"],
        [[r["data"], r["method"], f"{r['seconds']:.0f}", r["seeds"],
          f"{r['per_sweep'] * 1e3:.2f}", r["sweeps"], f"{r['nmi']:.3f} ± {r['nmi_sd']:.3f}",
          f"{r['nmi10']:.3f}", "-" if np.isnan(r["nmi100"]) else f"{r['nmi100']:.3f}",
          r["clusters"]] for r in rows])
    print("\n" + text)
    text += NOTES
    if args.write:
        write_section(args.write, "## HDP mixtures (`python bench/bench_hdp.py`)",
                      "; geometric NMI of each document's majority cluster against its label, "
                      "after equal wall time.", text)


if __name__ == "__main__":
    main()
