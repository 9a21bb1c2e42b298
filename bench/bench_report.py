"""How long the HTML report takes to build, and how large it is, at 20,000 documents and K = 50.

A corpus is simulated by ``make_topic_corpus(N, P, K)`` (default 20,000 documents over 10,000
terms, K = 50, 100 tokens per document); a Dirichlet-multinomial mixture and a topic model
with K components are fitted to it (not timed), then ``build_report(model, corpus)`` is timed
(best of ``--repeat``): the map (Jensen-Shannon distances over all terms, MDS), the relevance
candidates, the example documents (the DMM's predict_proba over every document) and the page.
The goal (issue 16): under 5 s and under 5 MB.

Run:  python bench/bench_report.py [--size 20000x10000x50] [--repeat 3] [--write docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main(argv=None):
    import mixbayes as mb
    from mixbayes.report import build_report

    from _report import markdown_table, write_section

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="20000x10000x50", metavar="NxPxK")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--write", default=None, metavar="FILE")
    args = parser.parse_args(argv)
    n, p, k = (int(v) for v in args.size.split("x"))
    counts, _ = mb.datasets.make_topic_corpus(n, p, k, mean_length=100.0, random_state=0)
    corpus = mb.Corpus(counts, [f"w{j}" for j in range(p)])
    rows = []
    for name, estimator in (
            ("DirichletMultinomialMixture", mb.DirichletMultinomialMixture(k, n_init=1,
                                                                          random_state=0)),
            ("TopicModel", mb.TopicModel(k, max_iter=30, random_state=0))):
        start = time.perf_counter()
        model = estimator.fit(corpus.counts)
        fit = time.perf_counter() - start
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            page = build_report(model, corpus)
            times.append(time.perf_counter() - start)
        size = len(page.encode("utf-8"))
        rows.append([name, f"{min(times):.2f} s", f"{size / 1e6:.2f} MB", f"{fit:.0f} s"])
        print(f"{name}: report built in {min(times):.2f} s (best of {args.repeat}), "
              f"{size / 1e6:.2f} MB; the fit took {fit:.0f} s", flush=True)
    table = markdown_table(["model", "report build (best of %d)" % args.repeat, "file size",
                            "fit (not part of the report)"], rows)
    if args.write:
        write_section(args.write, f"## Interactive report (`python bench/bench_report.py "
                                  f"--size {args.size}`)",
                      f"; a corpus of {n:,} documents over {p:,} terms from "
                      f"make_topic_corpus, K = {k}. Goal: under 5 s and 5 MB.", table)


if __name__ == "__main__":
    main()
