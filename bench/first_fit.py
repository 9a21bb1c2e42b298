"""First-fit (cold cache) time of every model: what a new user waits for on the first run.

Each model is fitted in a fresh Python process whose numba cache folder is new and empty
(``NUMBA_CACHE_DIR``), so the time includes importing mixbayes and compiling every kernel the
fit needs; a second fit in the same process shows the warm time. A third process reusing the
now-filled cache shows what every later run pays.

    python bench/first_fit.py [--write docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

FITS = {
    "DirichletMultinomialMixture (vb)":
        "c, _ = mb.datasets.make_dmm_corpus(500, 200, 4, random_state=0); X = c.counts\n"
        "fit = lambda: mb.DirichletMultinomialMixture(4).fit(X)",
    "DirichletMultinomialMixture (gibbs)":
        "c, _ = mb.datasets.make_dmm_corpus(500, 200, 4, random_state=0); X = c.counts\n"
        "fit = lambda: mb.DirichletMultinomialMixture(4, inference='gibbs', n_sweeps=50).fit(X)",
    "VariationalGaussianMixture":
        "X, _ = mb.datasets.make_gaussian_mixture(1000, 3, 4, random_state=0)\n"
        "fit = lambda: mb.VariationalGaussianMixture(8).fit(X)",
    "TopicModel":
        "c, _ = mb.datasets.make_topic_corpus(300, 200, 5, 80, random_state=0); X = c.counts\n"
        "fit = lambda: mb.TopicModel(5).fit(X)",
    "HDPMixture (categorical)":
        "c, _ = mb.datasets.make_hdp_data(50, 60, n_words=40, random_state=0); X = c.counts\n"
        "fit = lambda: mb.HDPMixture(n_iter=50).fit(X)",
    "HDPMixture (gaussian)":
        "import numpy as np\n"
        "X, _ = mb.datasets.make_gaussian_mixture(600, 2, 3, random_state=0)\n"
        "g = np.arange(600) % 12\n"
        "fit = lambda: mb.HDPMixture('gaussian', n_iter=50).fit(X, groups=g)",
}

_SCRIPT = """
import time, warnings
start = time.perf_counter()
import mixbayes as mb
warnings.simplefilter("ignore")
imported = time.perf_counter() - start
{setup}
t = time.perf_counter(); fit(); first = time.perf_counter() - t
t = time.perf_counter(); fit(); second = time.perf_counter() - t
print(__import__("json").dumps(dict(imported=imported, first=first, second=second)))
"""


def measure(setup, cache):
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    out = subprocess.run([sys.executable, "-c", _SCRIPT.format(setup=setup)], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", help="replace the first-fit table in this markdown file")
    args = parser.parse_args()
    rows = []
    for name, setup in FITS.items():
        with tempfile.TemporaryDirectory() as cache:
            cold = measure(setup, cache)
            cached = measure(setup, cache)
        rows.append((name, cold["imported"], cold["first"], cold["second"], cached["first"]))
        print(f"{name:38s} import {cold['imported']:5.2f} s  first fit (cold cache) "
              f"{cold['first']:6.2f} s  again {cold['second']:6.2f} s  first fit (cached) "
              f"{cached['first']:6.2f} s", flush=True)
    if args.write:
        from _report import markdown_table, write_section

        table = markdown_table(
            ["model (small problem)", "import s", "first fit, cold cache s", "same fit again s",
             "first fit, filled cache s"],
            [(n, f"{i:.2f}", f"{f:.2f}", f"{s:.2f}", f"{c:.2f}") for n, i, f, s, c in rows])
        write_section(args.write, "## First fit (cold numba cache)",
                      " (`python bench/first_fit.py`; each model in a fresh process with an empty "
                      "numba cache, then again with the cache it filled)", table)


if __name__ == "__main__":
    main()
