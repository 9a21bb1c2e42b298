"""The document mixture on a dask cluster: seconds per iteration, speed-up, memory, bytes moved.

A corpus simulated from the Dirichlet-multinomial mixture (``--docs`` documents, default
1,000,000; ``--terms`` words, ``--clusters`` clusters, Poisson lengths of mean
``--mean-length``) is generated *on the workers*: a dask array of CSR chunks of ``--chunk``
documents, each drawn by a task from its own seeded stream (the true clusters are drawn from
the seed in every task, so no array travels in the graph), so the client never holds it and a
lost chunk is drawn again. It is fitted (``DirichletMultinomialMixture``, one start, exactly
``--iterations`` CAVI iterations: ``tol=0``) on a ``LocalCluster`` of 1 and of 2 worker
processes of one thread each (numba, BLAS and OpenMP at one thread, so that a worker is one
core). Measured per setting:

* seconds per CAVI iteration: between the first and the last tick of the client's progress
  bar, over the iterations between (the start, the loading and the first iteration excluded);
* the client's global step per iteration (its share of that time, which no worker speeds up);
* peak memory of every worker process (``ru_maxrss``) and of the client;
* bytes moved per iteration: all traffic on the loopback interface (client, scheduler and
  workers talk over TCP on this machine; other traffic there counts too, so run it on a quiet
  machine) and the results the workers sent to each other and to the client (dask's transfer
  counters), with the sizes of what one iteration sends: the globals scattered to every worker
  and one shard's statistics (pickled).

Then the same fit in this process (one numba thread) on the largest corpus it can hold
(``--inprocess-docs``, by default the largest of D, D/2, D/4, ... whose CSR counts take at most a
quarter of the memory available), for the overhead of the cluster against in-process.

From these it writes a model of the time per iteration on N machines, and the corpus size at
which 8 and 64 machines pay (run at half the ideal speed-up or better):
``T(N, D) = c D / N + o + g + (N G + N S) / B`` with c the compute per document (from the
1-worker run), o the round-trip overhead per iteration (measured on a small corpus), g the
client's global step, G and S the globals' and one shard's statistics' sizes, and B the network
bandwidth (``--bandwidth``, an assumption: one machine has no network to measure).

Then the topic model (``TopicModel``, K = ``--clusters``, the build-up start, exactly
``--iterations`` MAP iterations) on the first ``--topics-docs`` documents (default 100,000) on
the same clusters and in process: seconds per iteration, speed-up, memory and bytes moved.

Run:  python bench/bench_distributed.py [--docs 1000000] [--write docs/benchmarks.md]
      python bench/bench_distributed.py --docs 20000 --chunk 5000   (a quick check)
"""

from __future__ import annotations

import argparse
import os
import pickle
import resource
import time
import warnings

# one core per worker process, and the in-process fit on one core too (set before numba loads)
for _name in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

import mixbayes as mb  # noqa: E402
from _report import markdown_table, write_section  # noqa: E402

HEADING = "## Distributed document mixture (`python bench/bench_distributed.py`)"
ONE_CORE = {name: "1" for name in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS",
                                   "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}


# ---------------------------------------------------------------------- the corpus
def truth(seed, n_terms, n_clusters):
    """Cluster weights (K,) and the clusters' word distributions as cumulative rows (K, p)."""
    rng = np.random.default_rng([seed, 0])
    weights = rng.dirichlet(np.full(n_clusters, 10.0))
    cdf = np.cumsum(rng.dirichlet(np.full(n_terms, 0.1), size=n_clusters), axis=1)
    cdf[:, -1] = 1.0
    return weights, cdf


def simulate_chunk(index, n_docs, seed, n_terms, n_clusters, mean_length):
    """Documents of chunk ``index`` as CSR counts, from the chunk's own stream."""
    weights, cdf = truth(seed, n_terms, n_clusters)
    rng = np.random.default_rng([seed, 1, index])
    labels = rng.choice(n_clusters, size=n_docs, p=weights)
    lengths = 1 + rng.poisson(mean_length - 1, size=n_docs)
    doc = np.repeat(np.arange(n_docs), lengths)
    cluster = labels[doc]
    # every token's word by the inverse CDF of its cluster: the rows laid end to end, row k
    # shifted by k, searched once for all tokens
    shifted = (cdf + np.arange(n_clusters)[:, None]).ravel()
    word = np.searchsorted(shifted, rng.random(doc.size) + cluster) - cluster * n_terms
    np.minimum(word, n_terms - 1, out=word)
    counts = sp.csr_matrix((np.ones(doc.size, np.int64), (doc, word)), shape=(n_docs, n_terms))
    counts.sum_duplicates()
    return counts


def chunk_sizes(n_docs, chunk):
    """Shard sizes: ``chunk`` documents each, the last one smaller."""
    return [min(chunk, n_docs - start) for start in range(0, n_docs, chunk)]


def dask_corpus(args, n_docs, chunk):
    """The corpus as a dask array whose chunks are drawn by the workers."""
    import dask
    import dask.array as da

    draw = dask.delayed(simulate_chunk, pure=True)
    meta = sp.csr_matrix((0, args.terms), dtype=np.int64)
    return da.concatenate([
        da.from_delayed(draw(i, size, args.seed, args.terms, args.clusters, args.mean_length),
                        shape=(size, args.terms), dtype=np.int64, meta=meta)
        for i, size in enumerate(chunk_sizes(n_docs, chunk))])


def local_corpus(args, n_docs, chunk=None):
    """The corpus :func:`dask_corpus` draws, drawn here (the same chunks: the same documents)."""
    return sp.vstack([simulate_chunk(i, size, args.seed, args.terms, args.clusters,
                                     args.mean_length)
                      for i, size in enumerate(chunk_sizes(n_docs, chunk or args.chunk))],
                     format="csr")


# ---------------------------------------------------------------------- measuring a fit
class Probe:
    """Timestamps of the client's progress ticks (one per CAVI iteration), the loopback bytes
    at each, the bytes the workers served (``served()``: read at the first tick before its
    timestamp, at every later one after it, the time reading takes left out of the
    iterations) and the client's time in the global step."""

    def __init__(self, served=None):
        self.ticks, self.loopback, self.global_steps = [], [], []
        self.served, self.served_at, self.pauses = served, [], []

    def install(self, model):
        from contextlib import contextmanager

        from mixbayes.mixture import _base
        from mixbayes.topics import model as topic_model

        probe = self

        class Bar:
            def update(self, n=1):
                first = not probe.ticks
                if probe.served and first:
                    probe.served_at.append(probe.served())
                probe.ticks.append(time.perf_counter())
                probe.loopback.append(loopback_bytes())
                if probe.served and not first:
                    probe.served_at.append(probe.served())
                probe.pauses.append(time.perf_counter() - probe.ticks[-1])

            def set_postfix_str(self, text, refresh=True):
                pass

        @contextmanager
        def progress(total, verbose, desc, upper_bound=False):
            yield Bar()

        _base.progress = topic_model.progress = progress
        if not hasattr(model, "_global_from_stats"):
            self.global_steps.append(float("nan"))  # the topic model's: not separated out
            return
        # wrapped on the class that defines the step (mixbayes's VariationalMixture), not on
        # the instance nor on this script's subclass: the engine ships the model to the
        # workers, and cloudpickle sends a class defined in __main__ by value, with its
        # attributes; when such a copy is unpickled here again, cloudpickle finds the class it
        # came from and sets those attributes back on it, so a wrapper set there is replaced by
        # a copy holding a copy of this probe, which then records every global step (the
        # cluster runs' NaN). A mixbayes class goes by reference: its wrapper stays put and is
        # never pickled.
        cls = next(c for c in type(model).__mro__ if "_global_from_stats" in c.__dict__)
        global_step = cls.__dict__.get("_untimed_global_from_stats", cls._global_from_stats)
        cls._untimed_global_from_stats = global_step

        def timed(self, *args, **kwargs):
            start = time.perf_counter()
            try:
                return global_step(self, *args, **kwargs)
            finally:
                probe.global_steps.append(time.perf_counter() - start)

        cls._global_from_stats = timed

    def per_iteration(self):
        """Seconds, loopback bytes and bytes served by the workers per iteration after the
        first, and the median global step (the start's, on the client's sample, among them)."""
        steps = len(self.ticks) - 1
        served = (self.served_at[-1] - self.served_at[0]) / steps if self.served else 0.0
        seconds = self.ticks[-1] - self.ticks[0] - sum(self.pauses[:-1])
        return (seconds / steps, (self.loopback[-1] - self.loopback[0]) / steps, served,
                float(np.median(self.global_steps)))


def loopback_bytes():
    try:
        import psutil

        return psutil.net_io_counters(pernic=True)["lo"].bytes_sent
    except (ImportError, KeyError):
        return float("nan")


def peak_rss():
    """Peak resident memory of this process, in bytes (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def served_total(dask_worker):
    """Bytes this worker has sent of its results, to other workers and to the client."""
    return getattr(dask_worker, "transfer_outgoing_bytes_total", 0)


class EveryIteration(mb.DirichletMultinomialMixture):
    """The document mixture, run for exactly ``max_iter`` iterations: the simulated clusters
    lie so far apart that the responsibilities are 0 or 1 to the last bit by the third
    iteration and the ELBO stops changing, which even ``tol=0`` takes for convergence; an
    iteration costs the same converged or not."""

    def _tol_scale(self, n_samples):
        return float("nan")  # |ELBO change| / nan <= tol is never true


def model_for(args):
    return EveryIteration(args.clusters, n_init=1, max_iter=args.iterations, tol=0.0,
                          random_state=0, verbose=1)


def one_core_cluster(n_workers):
    """A fresh LocalCluster of ``n_workers`` worker processes of one core each, quiet."""
    import distributed

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1,
                                        processes=True, dashboard_address=None,
                                        silence_logs=40, env=ONE_CORE)


def fit_on_cluster(args, n_workers, n_docs, chunk=None):
    """Fit on a fresh LocalCluster of ``n_workers`` one-core worker processes."""
    chunk = chunk or args.chunk
    import distributed

    from mixbayes.distributed import fit

    cluster = one_core_cluster(n_workers)
    with cluster, distributed.Client(cluster) as client:
        model = model_for(args)
        probe = Probe(lambda: sum(client.run(served_total).values()))
        probe.install(model)
        with warnings.catch_warnings(), distributed.get_task_stream(client) as stream:
            warnings.simplefilter("ignore")  # tol=0: never "converged"
            fit(model, dask_corpus(args, n_docs, chunk), client=client)
        seconds, loopback, served, global_seconds = probe.per_iteration()
        # one shard's local step as the worker ran it: with every core busy it takes longer
        # (memory bandwidth, and here the client and the scheduler share the cores)
        step = float(np.median([
            span["stop"] - span["start"] for task in stream.data
            if str(task["key"]).startswith("_local_step")
            for span in task["startstops"] if span["action"] == "compute"]))
        memory = sorted(client.run(peak_rss).values())
        state, family = model._restore_state()
        globals_size = len(pickle.dumps((family, state.family_expectations,
                                         state.expected_log_weights)))
        stats_size = len(pickle.dumps(family.sufficient_statistics(
            family.prepare(sp.csr_matrix((1, args.terms), dtype=np.int64)),
            np.ones((1, args.clusters)))))
    return dict(step=step, setting=f"{n_workers} worker process{'es' if n_workers > 1 else ''}",
                workers=n_workers, docs=n_docs, shards=len(chunk_sizes(n_docs, chunk)),
                seconds=seconds, global_seconds=global_seconds, loopback=loopback,
                served=served, memory=memory, globals=globals_size, stats=stats_size,
                iterations=model.n_iter_)


def fit_in_process(args, n_docs):
    X = local_corpus(args, n_docs)
    model, probe = model_for(args), Probe()
    probe.install(model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X)
    seconds, _, _, global_seconds = probe.per_iteration()
    return dict(setting="in process (1 thread)", workers=0, docs=n_docs, shards=1,
                seconds=seconds, global_seconds=global_seconds, loopback=0.0, served=0.0,
                memory=[peak_rss()], iterations=model.n_iter_)


def inprocess_size(args):
    """The largest D / 2^j whose CSR counts (from a sample chunk) take at most a quarter of the
    available memory."""
    if args.inprocess_docs:
        return args.inprocess_docs
    sample = simulate_chunk(0, min(args.chunk, args.docs), args.seed, args.terms,
                            args.clusters, args.mean_length)
    per_doc = (sample.data.nbytes * 2 + sample.indices.nbytes * 2) / sample.shape[0]
    try:
        import psutil

        available = psutil.virtual_memory().available
    except ImportError:
        available = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
    n_docs = args.docs
    while n_docs > args.chunk and n_docs * per_doc > available / 4:
        n_docs //= 2
    return n_docs


# ---------------------------------------------------------------------- the topic model
def topic_model_for(args):
    # the build-up start (an evenly spaced subset of documents, gathered), so that the run's
    # time goes to the MAP iterations; tol=0: |gain| < 0 never holds, every run lasts
    # --iterations
    return mb.TopicModel(args.clusters, init="buildup", tol=0.0, max_iter=args.iterations,
                         random_state=0, verbose=1)


def fit_topics(args, n_workers, n_docs):
    """The topic model on ``n_workers`` one-core worker processes (0: in this process)."""
    import distributed

    from mixbayes.distributed import fit

    model = topic_model_for(args)
    if not n_workers:
        probe = Probe()
        probe.install(model)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(local_corpus(args, n_docs, args.topics_chunk))
        memory = [peak_rss()]
    else:
        cluster = one_core_cluster(n_workers)
        with cluster, distributed.Client(cluster) as client:
            probe = Probe(lambda: sum(client.run(served_total).values()))
            probe.install(model)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fit(model, dask_corpus(args, n_docs, args.topics_chunk), client=client)
            memory = sorted(client.run(peak_rss).values())
    seconds, loopback, served, _ = probe.per_iteration()
    setting = ("in process (1 thread)" if not n_workers else
               f"{n_workers} worker process{'es' if n_workers > 1 else ''}")
    return dict(setting=setting, workers=n_workers, docs=n_docs,
                shards=len(chunk_sizes(n_docs, args.topics_chunk)) if n_workers else 1,
                seconds=seconds, loopback=loopback, served=served, memory=memory,
                iterations=model.n_iter_, topics_size=model.topics_.nbytes)


def report_topics_run(args, n_workers):
    start = time.perf_counter()
    r = fit_topics(args, n_workers, args.topics_docs)
    print(f"topics, {r['setting']}: {r['seconds']:.3f} s/iteration over "
          f"{r['iterations'] - 1} iterations, peak memory "
          f"{[round(m / 2**20) for m in r['memory']]} MiB, served by workers "
          f"{r['served'] / 2**20:.2f} MiB/iteration ({time.perf_counter() - start:.0f} s in all)",
          flush=True)
    return r


def topics_report(rows):
    one = next(r for r in rows if r["workers"] == 1)
    return markdown_table(
        ["setting", "documents", "shards", "s per iteration", "speed-up vs 1 worker",
         "peak memory per process MiB", "loopback MiB per iteration",
         "served by workers MiB per iteration"],
        [[r["setting"], f"{r['docs']:,}", r["shards"], f"{r['seconds']:.3f}",
          f"{one['seconds'] / r['seconds']:.2f}", " / ".join(f"{m / 2**20:.0f}"
                                                             for m in r["memory"]),
          "" if not r["workers"] else f"{r['loopback'] / 2**20:.2f}",
          "" if not r["workers"] else f"{r['served'] / 2**20:.2f}"] for r in rows])


# ---------------------------------------------------------------------- the model
def scaling_model(rows, small, bandwidth):
    """Fit ``T(N, D) = c D / N + o + g + N (G + S) / B`` to the runs and say where 8 and 64
    machines pay (parallel efficiency T(1) / (N T(N)) of one half or more)."""
    one = next(r for r in rows if r["workers"] == 1)
    # a cluster run's global step, where its probe timed none (NaN): the same step
    # timed in process (the same K x p arrays on the client)
    in_process = next((r["global_seconds"] for r in rows if not r["workers"]), float("nan"))
    g, gs = (value if np.isfinite(value) else in_process
             for value in (one["global_seconds"], small["global_seconds"]))
    # T1 = c D + o + g on one worker, Ts = c Ds / 2 + o + gs for the small run on two
    small_share = small["docs"] / small["workers"]
    c = max((one["seconds"] - g) - (small["seconds"] - gs), 1e-12) / max(
        one["docs"] - small_share, 1)
    overhead = max(small["seconds"] - gs - c * small_share, 0.0)
    G, S = one["globals"], one["stats"]

    def T(N, D):
        return c * D / N + overhead + g + N * (G + S) / bandwidth

    def pays(N):
        # efficiency >= 1/2: T(1, D) >= N T(N, D) / 2, linear in D
        fixed_one, fixed_n = overhead + g + (G + S) / bandwidth, overhead + g + N * (G + S) / bandwidth
        return max(0.0, (N * fixed_n - 2 * fixed_one) / c)

    return dict(c=c, overhead=overhead, g=g, G=G, S=S, T=T, pays={N: pays(N) for N in (8, 64)})


def report(args, rows, small, model):
    one = next(r for r in rows if r["workers"] == 1)
    table_rows = []
    for r in rows:
        speedup = (one["seconds"] * r["docs"] / one["docs"]) / r["seconds"] if r["workers"] \
            else float("nan")
        table_rows.append([
            r["setting"], f"{r['docs']:,}", r["shards"], f"{r['seconds']:.3f}",
            "" if not r["workers"] else f"{speedup:.2f}",
            "" if not r["workers"] else f"{r['step'] * 1e3:.0f}",
            f"{r['global_seconds'] * 1e3:.1f}",
            " / ".join(f"{m / 2**20:.0f}" for m in r["memory"]),
            "" if not r["workers"] else f"{r['loopback'] / 2**20:.2f}",
            "" if not r["workers"] else f"{r['served'] / 2**20:.2f}"])
    table = markdown_table(
        ["setting", "documents", "shards", "s per iteration", "speed-up vs 1 worker",
         "one shard's local step ms", "client global step ms", "peak memory per process MiB",
         "loopback MiB per iteration", "served by workers MiB per iteration"], table_rows)
    inproc = next((r for r in rows if not r["workers"]), None)
    lines = [table, ""]
    if inproc is not None:
        ratio = (one["seconds"] / one["docs"]) / (inproc["seconds"] / inproc["docs"])
        lines.append(f"Cluster overhead: one worker takes {ratio:.2f}x the in-process time per "
                     f"document per iteration ({one['seconds']:.3f} s on {one['docs']:,} "
                     f"documents against {inproc['seconds']:.3f} s on {inproc['docs']:,} in "
                     "process, the largest corpus this process holds comfortably).")
    two = next((r for r in rows if r["workers"] == 2), None)
    if two is not None:
        lines += ["", (
            f"On {os.cpu_count()} cores the worker processes share them with the client and the "
            f"scheduler: one shard's local step took {two['step'] * 1e3:.0f} ms with 2 workers "
            f"against {one['step'] * 1e3:.0f} ms with 1 (dask's task stream), so the speed-up "
            "measured here understates what separate machines give. The model below takes its "
            "compute per document from the 1-worker run.")]
    m = model
    B = args.bandwidth
    lines += [
        "",
        "**Scaling model** (computed by the script from the runs above):",
        "",
        f"T(N, D) = c D / N + o + g + N (G + S) / B, with c = {m['c'] * 1e6:.3f} µs per "
        f"document per iteration (the 1-worker run less o and g), o = {m['overhead'] * 1e3:.1f} ms "
        f"per iteration of scheduler round trips (from a {small['docs']:,}-document run on 2 "
        "workers),"
        f" g = {m['g'] * 1e3:.1f} ms for the client's global step (K x p = "
        f"{args.clusters} x {args.terms}), G = {m['G'] / 2**20:.2f} MiB of globals scattered to "
        f"every machine and S = {m['S'] / 2**20:.2f} MiB of statistics from each (the reduce "
        f"moves N of them), over B = {B / 1e9:.2f} GB/s (assumed: 10 Gbit/s Ethernet; one "
        "machine has no network to measure). Compute shrinks as 1/N; o, g and the reduce do "
        "not, and the traffic grows with N.",
        "",
        markdown_table(["machines N", "T(N) at 1M docs s", "T(N) at 10M docs s",
                        "T(N) at 100M docs s", "corpus at which N machines pay"],
                       [[N, f"{m['T'](N, 1e6):.3f}", f"{m['T'](N, 1e7):.3f}",
                         f"{m['T'](N, 1e8):.3f}",
                         f"{m['pays'][N]:,.0f}" if N in m["pays"] else ""]
                        for N in (1, 2, 8, 64)]),
        "",
        "\"Pays\" means a parallel efficiency T(1) / (N T(N)) of one half or more: below that "
        "corpus size half of every added machine's time goes to the fixed per-iteration costs. "
        f"On these numbers 8 machines pay from {m['pays'][8]:,.0f} documents and 64 from "
        f"{m['pays'][64]:,.0f}; above the size one machine can hold, distributing is the only "
        "option whatever the efficiency.",
    ]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--terms", type=int, default=5000)
    parser.add_argument("--clusters", type=int, default=20)
    parser.add_argument("--mean-length", type=float, default=60.0)
    parser.add_argument("--chunk", type=int, default=50_000, help="documents per shard")
    parser.add_argument("--iterations", type=int, default=8)
    parser.add_argument("--workers", default="1,2",
                        help="worker processes to try (1 among them: the model is fitted to it)")
    parser.add_argument("--inprocess-docs", type=int, default=None,
                        help="corpus of the in-process fit (default: the largest D / 2^j that "
                        "fits in a quarter of the available memory); 0 skips it")
    parser.add_argument("--small-docs", type=int, default=2000,
                        help="corpus of the overhead run (two shards, on 2 workers)")
    parser.add_argument("--bandwidth", type=float, default=1.25e9, help="bytes/s, assumed")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--topics-docs", type=int, default=100_000,
                        help="documents for the topic model's runs (0: none)")
    parser.add_argument("--topics-chunk", type=int, default=10_000,
                        help="documents per shard in the topic model's runs")
    parser.add_argument("--write", default=None)
    args = parser.parse_args()
    if 1 not in [int(n) for n in args.workers.split(",")]:
        parser.error("--workers must include 1: the scaling model is fitted to the 1-worker run")
    if args.iterations < 3:
        parser.error("--iterations must be 3 or more (the first is not timed)")
    print(f"corpus: {args.docs:,} documents x {args.terms} terms, K = {args.clusters}, mean "
          f"length {args.mean_length:g}, chunks of {args.chunk:,}", flush=True)
    rows = []
    for n_workers in (int(w) for w in args.workers.split(",")):
        start = time.perf_counter()
        rows.append(fit_on_cluster(args, n_workers, args.docs))
        r = rows[-1]
        print(f"{r['setting']}: {r['seconds']:.3f} s/iteration over {r['iterations'] - 1} "
              f"iterations, global step "
              f"{r['global_seconds'] * 1e3:.1f} ms, peak memory "
              f"{[round(m / 2**20) for m in r['memory']]} MiB, loopback "
              f"{r['loopback'] / 2**20:.2f} MiB/iteration, served by workers "
              f"{r['served'] / 2**20:.2f} MiB/iteration "
              f"({time.perf_counter() - start:.0f} s in all)", flush=True)
    small_docs = min(args.small_docs, args.docs)
    small = fit_on_cluster(args, 2, small_docs, chunk=max(small_docs // 2, 1))
    print(f"overhead run ({small_docs:,} documents, 2 workers): {small['seconds']:.3f} "
          "s/iteration", flush=True)
    # every cluster run before the in-process ones: worker processes forked from this one
    # would report its peak memory (ru_maxrss passes to a fork) once it has held a corpus
    topic_settings = ([int(w) for w in args.workers.split(",")] + [0]) if args.topics_docs else []
    topic_rows = []
    for n_workers in topic_settings[:-1]:
        topic_rows.append(report_topics_run(args, n_workers))
    n_inprocess = inprocess_size(args) if args.inprocess_docs != 0 else 0
    if n_inprocess:
        rows.append(fit_in_process(args, n_inprocess))
        print(f"in process: {rows[-1]['seconds']:.3f} s/iteration on {n_inprocess:,} "
              "documents", flush=True)
    if topic_settings:
        topic_rows.append(report_topics_run(args, 0))
    model = scaling_model(rows, small, args.bandwidth)
    text = report(args, rows, small, model)
    if topic_rows:
        text += (
            f"\n\n**The topic model** (`TopicModel`, K = {args.clusters}, the build-up start, "
            f"{args.iterations} MAP iterations, the first untimed) on the first "
            f"{args.topics_docs:,} of these documents, in shards of {args.topics_chunk:,}. An "
            "iteration maps several steps over the shards (the weight solve and EM step, the log "
            "posterior, the secant step's shares), each with its round trip; what travels is the "
            f"topics scattered ({topic_rows[0]['topics_size'] / 2**20:.2f} MiB, p x K) and each "
            "shard's p x K word counts, never a shard's documents or weights.\n\n"
            + topics_report(topic_rows))
    print("\n" + text)
    if args.write:
        write_section(args.write, HEADING,
                      f"; {args.docs:,} simulated documents x {args.terms} terms, K = "
                      f"{args.clusters}, mean length {args.mean_length:g}, {args.iterations} "
                      f"CAVI iterations (the first untimed), shards of {args.chunk:,} "
                      "documents generated on the workers.", text)


if __name__ == "__main__":
    main()
