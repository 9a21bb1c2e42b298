"""Sizes of the records that hold arrays, for ``sys.getsizeof`` (and so for dask).

A dask cluster accounts for every result it keeps and sends by ``dask.sizeof``, which for an
object it does not know asks ``sys.getsizeof``; a dataclass answers with its own few dozen
bytes, although ours hold a shard's prepared counts, its statistics or a topic block's
weights. :class:`Sized` counts the fields.
"""

from __future__ import annotations

import dataclasses
import sys

import numpy as np
import scipy.sparse as sp


def nbytes(value):
    """Bytes held by ``value``: an array's data, a sparse matrix's arrays, a record's fields,
    a tuple's or list's items."""
    if isinstance(value, np.ndarray):
        return value.nbytes
    if sp.issparse(value):
        return sum(getattr(value, name).nbytes for name in ("data", "indices", "indptr", "row",
                                                             "col") if hasattr(value, name))
    if isinstance(value, (tuple, list)):
        return sum(nbytes(item) for item in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return sum(nbytes(getattr(value, field.name)) for field in dataclasses.fields(value))
    return sys.getsizeof(value)


class Sized:
    """Mixin of a dataclass: ``sys.getsizeof`` counts the arrays in its fields."""

    __slots__ = ()

    def __sizeof__(self):
        return object.__sizeof__(self) + sum(nbytes(getattr(self, field.name))
                                             for field in dataclasses.fields(self))
