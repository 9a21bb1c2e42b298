"""Speed beside busy processes (issue 23): default fits run quiet and beside K busy
single-threaded processes, each the median of ``--repeats`` runs, as a ratio to quiet.

Fits: ``VariationalGaussianMixture(3, n_init=5)`` on wdbc (569 x 30, standardised),
``DirichletMultinomialMixture(3)`` on classic3, ``DirichletMultinomialMixture(20)`` on a
simulated 20,000 x 5,000 corpus (issue 13's), ``TopicModel(3)`` on classic3. A busy process
is ``while True: pass`` in its own interpreter. Goals: beside one, no fit slower than 2x its
quiet time; beside three, none slower than 1.25 x a fair share, (K + 2) / 2 = 2.5x.

Run:  python bench/bench_busy.py [--repeats 3] [--quick] [--write docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import warnings

import numpy as np

import mixbayes as mb
from _report import machine, markdown_table, write_section
from bench_gmm import load_uci

BUSY = (0, 1, 3)


def fits(quick):
    X, _ = load_uci("wdbc")
    classic3 = mb.datasets.load_classic3().counts
    yield "VGM(3, n_init=5), wdbc", lambda: mb.VariationalGaussianMixture(3, n_init=5).fit(X)
    yield "DMM(3), classic3", lambda: mb.DirichletMultinomialMixture(3).fit(classic3)
    if not quick:
        big, _ = mb.datasets.make_dmm_corpus(20_000, 5_000, 20, mean_length=30,
                                             random_state=0)
        yield "DMM(20), 20,000 x 5,000", lambda: mb.DirichletMultinomialMixture(20).fit(
            big.counts)
    yield "TopicModel(3), classic3", lambda: mb.TopicModel(3).fit(classic3)


def timed(fit, repeats):
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        fit()
        seconds.append(time.perf_counter() - start)
    return float(np.median(seconds))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="leave out the large corpus")
    parser.add_argument("--write", default=None, help="markdown file to put the section in")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    rows = []
    for name, fit in fits(args.quick):
        fit()  # compile and warm
        times = {}
        for k in BUSY:
            busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                    for _ in range(k)]
            try:
                time.sleep(0.5 if k else 0.0)
                times[k] = timed(fit, args.repeats)
            finally:
                for process in busy:
                    process.kill()
                    process.wait()
        one, three = times[1] / times[0], times[3] / times[0]
        rows.append([name, f"{times[0]:.3f}", f"{one:.2f}x", f"{three:.2f}x",
                     "yes" if one <= 2.0 and three <= 1.25 * 2.5 else "no"])
        print("  " + " | ".join(rows[-1]), flush=True)
    table = markdown_table(["fit", "quiet s", "beside 1 busy", "beside 3 busy",
                            "goals met (2x; 3.1x)"], rows)
    print(f"\n{machine()}\n\n{table}")
    if args.write:
        write_section(args.write, "## Speed beside busy processes (`python bench/bench_busy.py`)",
                      f"; medians of {args.repeats} runs" + (" (--quick)" if args.quick else ""),
                      table + "\n\nThe kernels' policy: one serial/parallel threshold "
                      "(`_kernel_tools._PARALLEL_FROM`, 5 million multiply-adds a "
                      "call) for the families' and the topic model's fit-loop kernels, the "
                      "OpenMP layer numba picks; beside busy processes a spinning parallel "
                      "region is descheduled and stalls, so small fits run serially.")


if __name__ == "__main__":
    main()
