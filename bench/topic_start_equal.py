"""The topic model's cluster start with equal topics, before and after they are grown from the
residuals (issue 25): on a corpus where the start's mixture leaves clusters empty (tweet, K = 89),
how many of the start's topics are equal, and the fit's iterations, seconds and log posterior
from the old start (the equal topics kept) and the new one, seed by seed, one process.

    python bench/topic_start_equal.py [--corpus tweet] [--k 89] [--seeds 0,1,2,3]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import scipy.sparse as sp

import mixbayes as mb
from _real_corpora import load
from mixbayes.topics import starts


def equal_topics(topics):
    """How many topics (columns) equal an earlier one."""
    return topics.shape[1] - np.unique(topics, axis=1).shape[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="tweet")
    parser.add_argument("--k", type=int, default=89)
    parser.add_argument("--seeds", default="0,1,2,3")
    args = parser.parse_args()
    corpus, _ = load(args.corpus)
    X = sp.csr_matrix(corpus.counts)
    X = X[np.diff(X.indptr) > 0]
    X = X[:, np.asarray(X.sum(axis=0)).ravel() > 0]
    K = args.k
    print(f"{args.corpus}: {X.shape[0]} documents, {X.shape[1]} terms, {int(X.sum())} words, "
          f"K = {K}")
    mb.TopicModel(K, max_iter=2, random_state=0).fit(X[:max(200, K + 1)])  # compile
    grown = starts.from_clusters
    rules = {"old": lambda X, K, seed, **_: grown(X, K, seed), "new": grown}
    print("| seed | start | equal start topics | iterations | s | log posterior |")
    print("|---|---|---|---|---|---|")
    for seed in [int(s) for s in args.seeds.split(",")]:
        for name, start in rules.items():
            seen = []

            def spy(*a, start=start, **kw):
                topics = start(*a, **kw)
                seen.append(equal_topics(topics))
                return topics

            starts.from_clusters = spy
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    began = time.perf_counter()
                    model = mb.TopicModel(K, random_state=seed).fit(X)
                    seconds = time.perf_counter() - began
            finally:
                starts.from_clusters = grown
            print(f"| {seed} | {name} | {seen[0]} | {model.n_iter_} | {seconds:.2f} | "
                  f"{model.log_posterior_:.1f} |", flush=True)


if __name__ == "__main__":
    main()
