"""Where the topic model's coherence gap on 20 Newsgroups comes from (issue 25): NPMI and
held-out log-likelihood per word of several seeds of ours and of tomotopy's LDA, and our fit
started from tomotopy's topics.

The real-corpora table (``bench_text_real.py``) fits one seed of each model; its 20 Newsgroups
rows read NPMI 0.285 for ours against 0.320 for tomotopy. This script asks whether that gap is
the seeds', the start's or the model's:

* ``ours``: ``TopicModel(20)`` defaults at ``--seeds`` (train split, as the table fits it):
  NPMI of the top 10 words (training documents as reference), document-completion held-out
  log-likelihood per word on the test split, iterations, and the log posterior of the fit;
* ``tomotopy``: ``LDAModel(k=20, alpha=eta=1/20)``, 500 sweeps, 2 workers, at
  ``--tomotopy-seeds`` (the table's settings);
* ``from tomotopy``: our fit started from the topics of tomotopy's first seed (``init=`` an
  array), which says whether our objective keeps tomotopy's topics (their log posterior under
  our model against our default fit's);
* ``background start`` (``--background``): our fit started from the DMM clusters of ``K - 1``
  clusters plus one topic at the corpus' word frequencies (a background topic for the common
  words; not the default, see the notes).

Run:  python bench/topics_20ng_coherence.py [--seeds 0,1,2] [--tomotopy-seeds 0,1,2]
                                            [--background] [--write docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import os
import warnings

import numpy as np

import mixbayes as mb
from _real_corpora import available, completion, load
from _report import markdown_table, write_section
from mixbayes.topics import starts

K = 20


def _scores(topics, train, observed, held_out):
    return (float(mb.metrics.coherence(topics, train, "npmi").mean),
            mb.topics.completion_log_likelihood(topics, observed, held_out))


def fit_ours(train, seed, init="clusters"):
    model = mb.TopicModel(K, random_state=seed, init=init)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(train)
    return model


def fit_tomotopy(train, seed, sweeps=500, workers=2):
    import tomotopy as tp

    model = tp.LDAModel(k=K, alpha=1.0 / K, eta=1.0 / K, seed=seed)
    for row in train:
        model.add_doc(np.repeat([f"w{j}" for j in row.indices],
                                row.data.astype(int)).tolist() or ["w0"])
    model.train(sweeps, workers=workers)
    topics = np.zeros((K, train.shape[1]))
    columns = [int(word[1:]) for word in model.used_vocabs]
    for k in range(K):
        topics[k, columns] = model.get_topic_word_dist(k)
    return topics / topics.sum(axis=1, keepdims=True)


def background_start(train, seed):
    """``K - 1`` topics from the DMM clusters and one at the corpus' word frequencies."""
    clusters = starts.from_clusters(train, K - 1, seed)  # (p, K - 1)
    frequencies = np.asarray(train.sum(axis=0)).ravel() + 1.0 / train.shape[1]
    return np.column_stack([clusters, frequencies / frequencies.sum()]).T


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--tomotopy-seeds", default="0,1,2")
    parser.add_argument("--background", action="store_true")
    parser.add_argument("--write", default=None)
    args = parser.parse_args()
    if not available("twenty_newsgroups"):
        raise SystemExit("../shared/data/twenty_newsgroups is not here")
    corpus, split = load("twenty_newsgroups")
    train, observed, held_out, _ = completion(corpus.counts, split)
    rows = []

    def add(run, seed, npmi, ll, n_iter="", log_posterior=None):
        row = [run, seed, f"{npmi:.3f}", f"{ll:.4f}", n_iter,
               "" if log_posterior is None else f"{log_posterior:.0f}",
               f"{os.getloadavg()[0]:.1f}"]
        rows.append(row)
        print(" | ".join(str(c) for c in row), flush=True)

    for seed in (int(s) for s in args.seeds.split(",")):
        model = fit_ours(train, seed)
        add("ours", seed, *_scores(model.topics_, train, observed, held_out), model.n_iter_,
            model.log_posterior_)
    first = None
    for seed in (int(s) for s in args.tomotopy_seeds.split(",")):
        topics = fit_tomotopy(train, seed)
        first = topics if first is None else first
        add("tomotopy", seed, *_scores(topics, train, observed, held_out))
    if first is not None:
        # tomotopy's topics as our start (smoothed: our topics have no exact zeros)
        start = first + 1e-9
        model = fit_ours(train, 0, init=start / start.sum(axis=1, keepdims=True))
        add("ours from tomotopy's first seed", 0,
            *_scores(model.topics_, train, observed, held_out), model.n_iter_,
            model.log_posterior_)
    if args.background:
        for seed in (int(s) for s in args.seeds.split(",")):
            model = fit_ours(train, seed, init=background_start(train, seed))
            add("ours, background start", seed,
                *_scores(model.topics_, train, observed, held_out), model.n_iter_,
                model.log_posterior_)
    table = markdown_table(["run", "seed", "NPMI", "held-out ll/word", "iterations",
                            "log posterior", "load"], rows)
    print(table)
    if args.write:
        write_section(args.write, "## Topic coherence on 20 Newsgroups by seed "
                      "(`python bench/topics_20ng_coherence.py`)",
                      "; K = 20, train split fitted, NPMI of the top 10 words against the "
                      "training documents, held-out by document completion on the test split.",
                      table + NOTES)


NOTES = """

What it says (issue 25's coherence goal, NPMI at least the best peer's; run with `--seeds
0,1,2,3,4,5 --background`, a helper's one-core runs the same day gave the same figures):

* **The gap is not one seed's.** Ours 0.245-0.303 over seeds 0-5 (mean 0.274), tomotopy
  0.292-0.320 over seeds 0-2 (mean 0.310; with 1 worker instead of 2 a helper measured
  0.275-0.306 over seeds 0-5, mean 0.294). The table's seed 0 (0.285 against 0.320) is a fair
  sample of a gap of 0.025-0.035.
* **Coherence follows our fit's log posterior**: across our six seeds the correlation of NPMI
  with the log posterior is 0.90 (0.75 over all 13 fits of ours here); the highest posterior of
  the six (seed 5) has NPMI 0.303, the lowest (seed 2) 0.256. The joint MAP fit ends in local
  optima 27,000 nats apart, and which one depends on the start's clusters (a generic topic for
  the common words, weight 0.12-0.13, in the better ones; none in seeds 2-4).
* **Our objective moves away from tomotopy's topics**: started from them (NPMI 0.320) our fit
  climbs 7,200 nats above our seed 0's optimum (above all six of our default fits) and ends at
  NPMI 0.305, held out -8.0826: it pulls the common words out of the generic topic into every
  topic (the 200 most frequent words in about 5.8 topics each, tomotopy's 4.4-5.4), which the
  held-out likelihood rewards and NPMI penalises. So even at a better optimum the model's own
  preference costs about 0.015 of NPMI.
* **A background-topic start** (K - 1 DMM clusters plus the corpus' word frequencies) gives
  every seed the generic topic: mean NPMI 0.295 (0.278-0.305) for 0.274, mean held-out -8.0888
  for -8.0892, the same iterations on average. Not made the default: at seed 0 it gains only
  0.009 and loses 0.009 held out, it is below tomotopy's held-out score on 3 of 6 seeds, and on
  tweet (K = 89) it lowers NPMI from 0.089 to 0.054 and held out from -5.920 to -5.981 (a
  helper's runs); it does not reach 0.320 either.
* Also tried by that helper, none consistently better: the document-weight prior c from 0.001
  to 1 (NPMI 0.265-0.283 at seed 0), topic_prior 0.01-0.5 (0.253-0.295; 0.2 raises held out to
  -8.064 to -8.084), 20 or 60 warm-up sweeps in the start (0.285, 0.281), 40 DMM clusters
  merged down to 20 (0.254-0.295), and a longer fit (NPMI peaks at 0.287 near iteration 100
  and falls to 0.276 by 400).

So issue 25's NPMI goal is not met: reaching it would need several starts (each fit costs
about the fastest peer's whole time, so the time goal forbids it) and a model that keeps
common words in fewer topics, which would give up the held-out lead; the second is a decision
about the model, not a fitting fix."""

if __name__ == "__main__":
    main()
