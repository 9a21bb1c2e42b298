"""The numba kernels' shared pieces: the one threading policy of every fit, ``n_jobs``, and
the row softmax.

The policy (issue 23: speed that survives a busy machine)
---------------------------------------------------------
* **Serial below a work threshold.** Every kernel with a parallel loop is built twice
  (:func:`twice`) and runs its parallel build only from :data:`_PARALLEL_FROM` multiply-adds a
  call, and only when the fit may use more than one thread (:func:`runs_parallel`: the HDP
  sampler's group loops ask it too). A parallel region costs tens of microseconds to launch,
  more than a small corpus's whole pass, and on a machine whose other core is busy its
  threads are descheduled and the region stalls for milliseconds.
* **BLAS (and scikit-learn's OpenMP) single-threaded inside a fit.** Every BLAS call of a
  fit loop is a small dense product (K x K, d x d, the topic model's secant dot products); the
  large products are numba kernels; the Gaussian mixture's k-means start runs on at most
  10,000 rows (five k-means fits on wdbc: 5 ms on one thread, 84-925 ms on two under load). An OpenBLAS pool woken between two numba regions spins and fights their threads
  for the cores, and OpenBLAS splits a long dot product between its threads, so its sum would
  depend on the thread count: with one BLAS thread a fit's answer does not depend on
  ``n_jobs`` (every numba kernel reduces in a fixed order).
* **``n_jobs``**, scikit-learn's: the most threads a fit's numba kernels use (:func:`threads`,
  around every fit; None: the enclosing :func:`threads` block's, else every core; -1 every
  core; a negative n: cores + 1 + n; 1: the serial builds everywhere). Results are identical
  whatever it is.
* **The threading layer**: numba's default, OpenMP here (GNU libgomp), loaded with passive
  waiting (:func:`load_layer`): libgomp's threads otherwise spin after every region, and
  beside busy processes a spinning thread holds the core its region's partner waits for (the
  DMM start's assignment kernel, 0.35 ms a call quiet, took 24 ms beside one busy process;
  passive, 0.7 ms). ``workqueue`` is always available but not thread-safe: two threads
  launching parallel regions at once (the in-process Dask workers of a distributed fit, a
  user's thread pool) abort the process; TBB would be a new dependency for what passive
  OpenMP already gives.

Figures of the benchmark beside busy processes: ``docs/benchmarks.md``, "Speed beside busy
processes" (``bench/bench_busy.py``).
"""

import contextlib
import contextvars
import math
import os
import types

import numba
import numpy as np
from numba import njit
from threadpoolctl import threadpool_limits

from ._validation import NJobs, check_param

# exp(-50) = 2e-22: a term this far below the row maximum cannot change the normaliser (>= 1)
# in double precision, even summed over thousands of components, so its exp is skipped and its
# responsibility is an exact zero (which also keeps the word statistics sparse)
NEGLIGIBLE = -50.0


@njit(cache=True)
def counting_order(keys, n_keys, items):
    """``items`` stably sorted by ``keys[items]`` (integers in ``0..n_keys - 1``): a counting
    sort (a histogram, its prefix sums, a scatter), O(len(items) + n_keys)."""
    fill = np.zeros(n_keys + 1, dtype=np.int64)
    for c in range(items.shape[0]):
        fill[keys[items[c]] + 1] += 1
    for k in range(n_keys):
        fill[k + 1] += fill[k]
    order = np.empty(items.shape[0], dtype=np.int64)
    for c in range(items.shape[0]):
        k = keys[items[c]]
        order[fill[k]] = items[c]
        fill[k] += 1
    return order


@njit(cache=True, inline="always")
def softmax_row(row, sizes):
    """Turn log-weights ``row`` into probabilities in place, add them to ``sizes``, and return
    the log normaliser."""
    K = row.shape[0]
    top = row[0]
    for k in range(1, K):
        if row[k] > top:
            top = row[k]
    total = 0.0
    for k in range(K):
        gap = row[k] - top
        if gap > NEGLIGIBLE:
            row[k] = math.exp(gap)
            total += row[k]
        else:
            row[k] = 0.0
    inv = 1.0 / total
    for k in range(K):
        row[k] *= inv
        sizes[k] += row[k]
    return top + math.log(total)


@njit(cache=True, inline="always")
def ordered_sum(values):
    """``values.sum()`` of a 1-D array, added in index order. In a ``parallel=True`` build
    numba turns ``values.sum()`` into a parallel reduction whose order, and so whose last bits,
    depend on the thread count; a plain loop stays one serial pass."""
    total = 0.0
    for i in range(values.shape[0]):
        total += values[i]
    return total


def renamed(py_func, suffix):
    """A copy of ``py_func`` whose name ends in ``suffix``, for a second numba build.

    numba's on-disk cache files an entry under the function's name and signature, not its
    compile options: the serial and the parallel build of one function would overwrite, and
    then load, each other's code (a "serial" kernel that launches parallel regions). A copy
    with its own name gets its own cache file.
    """
    twin = types.FunctionType(py_func.__code__, py_func.__globals__, py_func.__name__ + suffix,
                              py_func.__defaults__, py_func.__closure__)
    twin.__qualname__ = py_func.__qualname__ + suffix
    twin.__doc__ = py_func.__doc__
    return twin


def twice(py_func):
    """Compile ``py_func`` serially and in parallel (its ``prange`` loops); pick by work size.

    ``dispatch(*args, work=n)`` runs the parallel build when :func:`runs_parallel` says so for
    ``n`` multiply-adds; results are identical either way (each output row is summed in order).
    """
    serial = njit(cache=True)(py_func)
    parallel = njit(cache=True, parallel=True)(renamed(py_func, "_parallel"))

    def dispatch(*args, work):
        return (parallel if runs_parallel(work) else serial)(*args)

    dispatch.__doc__ = py_func.__doc__
    dispatch.__name__ = py_func.__name__
    dispatch.serial, dispatch.parallel = serial, parallel
    return dispatch


def runs_parallel(work):
    """Whether a kernel call of ``work`` multiply-adds runs its parallel build: from
    :data:`_PARALLEL_FROM`, and only where more than one thread is allowed (:func:`threads`)."""
    return work >= _PARALLEL_FROM and _num_threads() > 1


# ---------------------------------------------------------------------- the threading layer
_WAIT_POLICY = "OMP_WAIT_POLICY"
_layer_loaded = False


def _num_threads():
    """numba's thread count for this thread, its threading layer loaded with passive waiting
    the first time (:func:`load_layer`)."""
    if not _layer_loaded:
        load_layer()
    return numba.get_num_threads()


def load_layer():
    """Load numba's threading layer (numba does on its first parallel call, or its first
    thread-count call) with OpenMP's passive wait, unless ``OMP_WAIT_POLICY`` is set already.

    GNU libgomp reads ``OMP_WAIT_POLICY`` once, when it is loaded; by default its threads spin
    after a parallel region before they sleep. Beside busy processes those spinning threads
    hold cores the region's other threads wait for: the DMM start's assignment kernel
    (classic3, K = 3) took 0.35 ms a call quiet in its parallel build, 24 ms beside one busy
    process and 40 ms beside three; loaded passive, 0.65-0.69 ms in all three (its serial
    build: 0.7 ms). The variable is set only while the layer loads, then restored, so other
    OpenMP libraries the process loads later keep their own default. (A process that ran a
    numba parallel region before it imported mixbayes keeps the policy it loaded with.)
    """
    global _layer_loaded
    given = os.environ.get(_WAIT_POLICY)
    if given is None:
        os.environ[_WAIT_POLICY] = "PASSIVE"
    try:
        numba.get_num_threads()  # loads the layer (and libgomp, reading the variable)
    finally:
        if given is None:
            os.environ.pop(_WAIT_POLICY, None)
    _layer_loaded = True


# multiply-adds per call from which the parallel build runs. A parallel region's threads wait
# for work by spinning; on a machine whose other core is busy they are descheduled and a
# region stalls for milliseconds (issue 23). At 200,000 a VariationalGaussianMixture(3,
# n_init=5) on wdbc (569 x 30, full: 1.5 million a call) ran 0.42 s quiet, 4.2x that beside
# one busy process and 11.7x beside three; serial below 5 million it runs 0.28 s quiet, 1.2x
# and 2.7x (a fair share beside three is 2.5x). Large fits (a DMM of 20,000 x 5,000 at K = 20,
# 40 million a call) still run in parallel.
_PARALLEL_FROM = 5_000_000


# ---------------------------------------------------------------------- n_jobs
_ENCLOSING = contextvars.ContextVar("mixbayes_n_threads", default=None)


def all_cores():
    """The threads numba's pool has: every core unless ``NUMBA_NUM_THREADS`` says fewer."""
    return int(numba.config.NUMBA_NUM_THREADS)


def thread_count(n_jobs):
    """The threads ``n_jobs`` allows (scikit-learn's convention; validated by
    :class:`mixbayes._validation.NJobs`): None, the enclosing :func:`threads` block's count,
    else every core; -1 every core; a negative n, cores + 1 + n (at least 1); a positive n, n
    (at most every core: numba's pool has no more threads)."""
    cores = all_cores()
    if n_jobs is None:
        enclosing = _ENCLOSING.get()
        return cores if enclosing is None else enclosing
    n_jobs = int(n_jobs)
    if n_jobs < 0:
        return max(cores + 1 + n_jobs, 1)
    return min(n_jobs, cores)


@contextlib.contextmanager
def threads(n_jobs=None):
    """Run the ``with`` block (a fit) under the policy: numba's kernels on at most
    :func:`thread_count` ``(n_jobs)`` threads (1: the serial builds only; numba's count is
    this thread's own, so other threads are untouched), BLAS and every other thread pool
    threadpoolctl finds (scikit-learn's OpenMP, which the Gaussian mixture's k-means start
    uses) on one thread."""
    check_param("n_jobs", n_jobs, NJobs())
    count = thread_count(n_jobs)
    previous = _num_threads()
    token = _ENCLOSING.set(count)
    numba.set_num_threads(count)
    try:
        # every pool threadpoolctl finds: BLAS, scikit-learn's OpenMP (the GMM's k-means
        # start); numba gives its regions its own count, so its kernels are not limited
        with threadpool_limits(limits=1):
            yield count
    finally:
        numba.set_num_threads(previous)
        _ENCLOSING.reset(token)
