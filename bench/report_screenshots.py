"""Screenshots of one report of each kind for docs/: DMM, Gaussian mixture, topic model, HDP
and tree model, each fitted to data the package ships or simulates.

    python bench/report_screenshots.py [--out docs] [--keep-html DIR]

Needs a Chromium binary (Debian: apt-get install chromium); the page is driven through the
DevTools protocol by tools/cdp.py and captured whole. Takes about a minute.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))


def reports():
    """(name, model, data, options) of every report drawn."""
    import numpy as np

    import mixbayes as mb

    classic3 = mb.datasets.load_classic3()
    yield "dmm", mb.DirichletMultinomialMixture(3, random_state=0).fit(classic3.counts), \
        classic3, {}

    points, _ = mb.datasets.make_gaussian_mixture(600, 4, 4, separation=3.0, random_state=1)
    gmm = mb.VariationalGaussianMixture(8, random_state=0).fit(points)
    yield "gmm", gmm, points, {}

    selection = mb.select_n_topics(classic3.counts, range(2, 9), verbose=0)
    yield "topics", selection.best_model, classic3, dict(selection=selection)

    rng = np.random.default_rng(0)
    rows = np.sort(rng.choice(classic3.n_documents, 600, replace=False))
    small = mb.Corpus(classic3.counts[rows], classic3.vocabulary, classic3.doc_ids[rows])
    keep = np.asarray(small.counts.sum(axis=0)).ravel() > 0
    small = mb.Corpus(small.counts[:, keep], small.vocabulary[keep], small.doc_ids)
    with warnings.catch_warnings():  # a picture, not a study: 100 sweeps are enough to show
        warnings.simplefilter("ignore", mb.ConvergenceWarning)
        # abstracts of 66 tokens, one topic each: the word prior HDPMixture's docstring gives
        # for such documents (its short-text default, 0.03, splits these 600 into 170 clusters)
        hdp = mb.HDPMixture(n_iter=100, word_prior=1.0, random_state=0).fit(small.counts)
    yield "hdp", hdp, small, {}

    X, _ = mb.datasets.make_tree_data(300, depth=2, random_state=0)
    tree = mb.HierarchicalMixture(depth=2, n_iter=60, random_state=0).fit(X)
    yield "tree", tree, X, {}


def main(argv=None):
    from cdp import Browser, find_chromium

    from mixbayes.report import write_report

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(HERE, "..", "docs"))
    parser.add_argument("--keep-html", default=None, metavar="DIR")
    args = parser.parse_args(argv)
    binary = find_chromium()
    if binary is None:
        sys.exit("no chromium binary found (Debian: apt-get install chromium)")
    folder = args.keep_html or tempfile.mkdtemp()
    os.makedirs(folder, exist_ok=True)
    with Browser(binary, width=1200, height=900) as browser:
        for name, model, data, options in reports():
            start = time.perf_counter()
            page = write_report(model, os.path.join(folder, f"report_{name}.html"), data,
                                **options)
            browser.open(page)
            if browser.errors:
                sys.exit(f"{name}: errors in the page: {browser.errors}")
            target = os.path.join(args.out, f"report_{name}.png")
            with open(target, "wb") as handle:
                handle.write(browser.screenshot(full_page=True))
            print(f"{name}: {target} ({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()
