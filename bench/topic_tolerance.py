"""Choosing TopicModel's stopping rule on real corpora (issue 25).

The MAP path does not depend on the stopping rule, so one long fit per corpus (``tol=0``, a cap
on the iterations) shows where every rule would stop: the iteration, the seconds to it, and the
held-out log-likelihood per word (document completion on the test documents) and NPMI of the
topics there. Rules: the reference's absolute one (maptpx: |gain| < 0.1 nats and
sum|Δθ| < 0.1) and a gain per word at most ``tol`` for several ``tol``.

Run:  python bench/topic_tolerance.py [--corpora classic3,twenty_newsgroups,...] [--k 20]
                                      [--cap 400] [--write docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

import mixbayes as mb
from mixbayes.topics import _fit, model as topic_model
from _real_corpora import available, completion, load
from _report import markdown_table, write_section

TOLERANCES = (1e-4, 3e-5, 1e-5, 3e-6, 1e-6)
OLD = "maptpx |gain| < 0.1, sum|Δθ| < 0.1"


def trajectory(train, K, cap, seed=0):
    """Fit with tol=0 up to ``cap`` iterations; the topics (K, p) and seconds at the first
    iteration where each rule holds."""
    words = float(train.sum())
    snapshots, state = {}, dict(L=None, theta=None)
    original = _fit.fit_map

    def recording(docs, theta, settings, callback=None):
        start = time.perf_counter()

        def chained(iteration, L, theta):
            if callback is not None:
                callback(iteration, L, theta)
            gain = np.inf if state["L"] is None else L - state["L"]
            change = np.inf if state["theta"] is None else np.abs(theta - state["theta"]).sum()
            now = time.perf_counter() - start
            rules = [(tol, gain <= tol * words) for tol in TOLERANCES]
            rules.append((OLD, abs(gain) < 0.1 and change < 0.1))
            for rule, met in rules:
                if met and rule not in snapshots:
                    snapshots[rule] = (iteration, now, theta.T.copy(), gain / words)
            state["L"], state["theta"] = L, theta.copy()
            snapshots["last"] = (iteration, now, theta.T.copy(), gain / words)

        return original(docs, theta, settings, chained)

    topic_model._fit.fit_map = recording
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mb.ConvergenceWarning)
            start = time.perf_counter()
            model = mb.TopicModel(K, tol=0.0, max_iter=cap, random_state=seed).fit(train)
            total = time.perf_counter() - start
    finally:
        topic_model._fit.fit_map = original
    return snapshots, total, model


def run(name, K, cap):
    corpus, split = load(name)
    train, observed, held_out, columns = completion(corpus.counts, split)
    print(f"{name}: train {train.shape}, {int(train.sum()):,} words; K = {K}, cap {cap}",
          flush=True)
    snapshots, total, model = trajectory(train, K, cap)
    start_seconds = total - snapshots["last"][1]
    rows = []
    for rule in (OLD,) + TOLERANCES + ("last",):
        if rule not in snapshots:
            rows.append(dict(rule=rule, reached=False))
            continue
        iteration, seconds, topics, gain = snapshots[rule]
        full = np.zeros((K, corpus.counts.shape[1]))
        full[:, columns] = topics
        ll = mb.topics.completion_log_likelihood(topics, observed, held_out)
        npmi = mb.metrics.coherence(full, corpus.counts, "npmi").mean
        rows.append(dict(rule=rule, reached=True, iteration=iteration,
                         seconds=seconds + start_seconds, ll=ll, npmi=npmi, gain=gain))
        print(f"  {str(rule):36s} it {iteration:4d}  {seconds + start_seconds:7.1f} s  "
              f"ll/word {ll:.4f}  NPMI {npmi:.4f}  (gain/word {gain:.2e})", flush=True)
    return dict(name=name, K=K, cap=cap, rows=rows, start=start_seconds,
                load=os.getloadavg()[0])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpora", default="classic3,twenty_newsgroups")
    parser.add_argument("--k", type=int, default=20)
    parser.add_argument("--cap", type=int, default=400)
    parser.add_argument("--write", default=None)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()}", flush=True)
    results = [run(name, args.k, args.cap) for name in args.corpora.split(",")
               if available(name)]
    if args.write:
        table = []
        for result in results:
            for row in result["rows"]:
                rule = row["rule"]
                label = ("the cap" if rule == "last" else rule if isinstance(rule, str)
                         else f"gain/word ≤ {rule:g}")
                if not row["reached"]:
                    table.append([result["name"], label, f"not met in {result['cap']}", "", "",
                                  ""])
                    continue
                table.append([result["name"], label, row["iteration"],
                              f"{row['seconds']:.1f}", f"{row['ll']:.4f}", f"{row['npmi']:.4f}"])
        loads = ", ".join(f"{r['name']} {r['load']:.1f}" for r in results)
        write_section(
            args.write, "## TopicModel stopping rule on real corpora",
            f"; load average at the end of each corpus: {loads} (a loaded machine shared with "
            "other sessions: seconds are comparable within a corpus only). One fit per corpus "
            f"with tol=0 (K = {args.k}, the default start); each row is where that rule would "
            "have stopped it. `python bench/topic_tolerance.py --corpora ... --write ...`",
            markdown_table(["corpus", "rule", "iterations", "seconds", "held-out ll/word",
                            "NPMI"], table))


if __name__ == "__main__":
    main()
