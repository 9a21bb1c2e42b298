"""The numba kernels' shared pieces: the one serial/parallel policy (a parallel build from
:data:`_PARALLEL_FROM` multiply-adds a call) and the row softmax."""

import math
import types

from numba import njit

# exp(-50) = 2e-22: a term this far below the row maximum cannot change the normaliser (>= 1)
# in double precision, even summed over thousands of components, so its exp is skipped and its
# responsibility is an exact zero (which also keeps the word statistics sparse)
NEGLIGIBLE = -50.0


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

    A parallel region costs tens of microseconds to launch, more than the whole kernel on a
    small corpus; results are identical either way (each output row is summed in order).
    """
    serial = njit(cache=True)(py_func)
    parallel = njit(cache=True, parallel=True)(renamed(py_func, "_parallel"))

    def dispatch(*args, work):
        return (parallel if work >= _PARALLEL_FROM else serial)(*args)

    dispatch.__doc__ = py_func.__doc__
    dispatch.__name__ = py_func.__name__
    dispatch.serial, dispatch.parallel = serial, parallel
    return dispatch


# multiply-adds per call from which the parallel build runs. A parallel region's threads wait
# for work by spinning; on a machine whose other core is busy they are descheduled and a
# region stalls for milliseconds (issue 23). At 200,000 a VariationalGaussianMixture(3,
# n_init=5) on wdbc (569 x 30, full: 1.5 million a call) ran 0.42 s quiet, 4.2x that beside
# one busy process and 11.7x beside three; serial below 5 million it runs 0.28 s quiet, 1.2x
# and 2.7x (a fair share beside three is 2.5x). Large fits (a DMM of 20,000 x 5,000 at K = 20,
# 40 million a call) still run in parallel.
_PARALLEL_FROM = 5_000_000
