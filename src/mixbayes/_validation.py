"""Every input check and parameter rule of mixbayes, with one message style.

Messages name the argument, the rule it breaks and the value received, e.g.
``n_components must be an integer in [1, 3891]; got 0.`` so that a user can act
on them without reading a traceback.
"""

from __future__ import annotations

import numbers
import os
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

__all__ = [
    "Interval",
    "Options",
    "NJobs",
    "validate_params",
    "check_param",
    "check_counts",
    "check_points",
    "check_n_components",
    "check_random_state",
    "check_file",
    "plural",
]


def plural(n, noun, nouns=None, spec=""):
    """A count and its noun in agreement, for messages and printed summaries.

    ``plural(1, "feature")`` is ``"1 feature"`` and ``plural(3, "feature")`` ``"3 features"``;
    ``nouns`` gives an irregular plural and ``spec`` formats the number (``">5"`` to align).
    """
    word = noun if n == 1 else (nouns if nouns is not None else noun + "s")
    return f"{format(n, spec)} {word}"


def first_few(names, most=5):
    """``names`` joined by commas, the first ``most`` and how many more ("a, b and 3 more")."""
    return ", ".join(names[:most]) + (f" and {len(names) - most} more"
                                      if len(names) > most else "")


# --------------------------------------------------------------------------- parameter rules
@dataclass(frozen=True)
class Interval:
    """A numeric rule: ``kind`` is ``"int"`` or ``"real"``; ``None`` bounds are open-ended."""

    kind: str
    low: float | None = None
    high: float | None = None
    closed: str = "both"  # "both", "left", "right" or "neither"
    allow_none: bool = False

    def accepts(self, value) -> bool:
        if value is None:
            return self.allow_none
        if isinstance(value, bool):
            return False
        if self.kind == "int" and not isinstance(value, numbers.Integral):
            return False
        if not isinstance(value, numbers.Real) or not np.isfinite(value):
            return False
        lo_ok = self.low is None or (
            value >= self.low if self.closed in ("both", "left") else value > self.low
        )
        hi_ok = self.high is None or (
            value <= self.high if self.closed in ("both", "right") else value < self.high
        )
        return lo_ok and hi_ok

    def describe(self) -> str:
        noun = "an integer" if self.kind == "int" else "a finite number"
        if self.low is not None and self.high is not None:
            left = "[" if self.closed in ("both", "left") else "("
            right = "]" if self.closed in ("both", "right") else ")"
            rule = f"{noun} in {left}{self.low}, {self.high}{right}"
        elif self.low is not None:
            op = ">=" if self.closed in ("both", "left") else ">"
            rule = f"{noun} {op} {self.low}"
        elif self.high is not None:
            op = "<=" if self.closed in ("both", "right") else "<"
            rule = f"{noun} {op} {self.high}"
        else:
            rule = noun
        return rule + (" or None" if self.allow_none else "")


@dataclass(frozen=True)
class Options:
    """A rule that accepts one of a fixed set of values."""

    values: tuple

    def accepts(self, value) -> bool:
        return any(value == v and type(value) is type(v) for v in self.values)

    def describe(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)


@dataclass(frozen=True)
class Either:
    """A rule that accepts what any of ``rules`` accepts (e.g. an integer or ``"auto"``)."""

    rules: tuple

    def accepts(self, value) -> bool:
        return any(rule.accepts(value) for rule in self.rules)

    def describe(self) -> str:
        return " or ".join(rule.describe() for rule in self.rules)


@dataclass(frozen=True)
class RandomState:
    """A rule for ``random_state``: None, an int, or a ``numpy.random.Generator``/``RandomState``."""

    def accepts(self, value) -> bool:
        return (
            value is None
            or (isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 0)
            or isinstance(value, (np.random.Generator, np.random.RandomState))
        )

    def describe(self) -> str:
        return "None, a non-negative integer or a numpy random generator"


@dataclass(frozen=True)
class NJobs:
    """A rule for ``n_jobs`` (scikit-learn's): None or a non-zero integer (see
    :func:`mixbayes._kernel_tools.thread_count` for what each means)."""

    def accepts(self, value) -> bool:
        return value is None or (isinstance(value, numbers.Integral)
                                 and not isinstance(value, bool) and value != 0)

    def describe(self) -> str:
        return ("None (the default policy), a positive number of threads, or a negative "
                "integer (-1: every core, -2: all but one)")


def _wrong_type(rule, value) -> bool:
    """Whether ``value`` fails ``rule`` by its type (a TypeError) rather than its range."""
    if isinstance(rule, Interval):
        return (isinstance(value, bool) or not isinstance(value, numbers.Real)
                or (rule.kind == "int" and not isinstance(value, numbers.Integral)))
    if isinstance(rule, Either):
        return all(_wrong_type(r, value) for r in rule.rules)
    if isinstance(rule, Options):
        return not any(type(value) is type(v) for v in rule.values)
    return False


def validate_params(owner, rules: dict) -> None:
    """Check every ``name -> rule`` of ``rules`` against ``owner``'s attribute of that name.

    Raises
    ------
    TypeError or ValueError
        ``TypeError`` when the value has the wrong type, ``ValueError`` when it is out of range;
        the message names the parameter, the rule and the value received.
    """
    for name, rule in rules.items():
        check_param(name, getattr(owner, name), rule)


def check_param(name, value, rule) -> None:
    """Check one parameter ``name`` of value ``value`` against ``rule``, as
    :func:`validate_params` does."""
    if rule.accepts(value):
        return
    error = TypeError if _wrong_type(rule, value) else ValueError
    raise error(f"{name} must be {rule.describe()}; got {value!r}.")


def check_random_state(seed) -> np.random.Generator:
    """Turn ``random_state`` into a ``numpy.random.Generator`` (deterministic for ints)."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, np.random.RandomState):
        return np.random.default_rng(seed.randint(0, 2**31 - 1))
    return np.random.default_rng(seed)


# --------------------------------------------------------------------------- data checks
def is_distributed_input(X):
    """Whether ``X`` is a dask collection or a corpus of one (without importing dask)."""
    return any(callable(getattr(type(x), "__dask_graph__", None))
               for x in (X, getattr(X, "counts", None)))


def gathered(X, name="X", stacklevel=3):
    """A dask array (or a ShardedCorpus) given where the data are used in process (a model or
    a function with no cluster path), computed here, as numpy gathers a dense one (np.asarray
    would make an object array of a CSR chunk per cell), and said, since the data may be
    larger than this machine."""
    X = getattr(X, "counts", X)
    warnings.warn(
        f"{name} is dask data of {X.shape[0]} rows, used here in this process: it is "
        "gathered to the client (only the document mixture, the Gaussian mixture and the "
        "topic model fit on a cluster).", UserWarning, stacklevel=stacklevel)
    return X.compute()


def check_counts(X, name: str = "X", allow_empty_rows: bool = True) -> sp.csr_matrix:
    """Validate a document-term count matrix and return it as CSR with int64 counts.

    Accepts a dense array-like, any scipy sparse matrix or array, or a :class:`~mixbayes.Corpus`;
    a dask array of dense or CSR chunks (or a corpus of one) is computed here first.
    Rejects NaN/inf, negative and fractional entries, and matrices with no rows or columns.
    Empty documents (all-zero rows) are legitimate and kept.
    """
    if sp.issparse(getattr(X, "counts", None)):  # a Corpus (or any holder of CSR counts)
        X = X.counts
    if is_distributed_input(X):
        X = gathered(X, name, stacklevel=4)
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        values = X.data
        if np.iscomplexobj(values):
            raise ValueError(f"Complex data not supported: {name} must hold real counts.")
        if not (np.issubdtype(values.dtype, np.number) or values.dtype == bool):
            raise TypeError(f"{name} must hold numeric counts; got dtype {values.dtype}.")
    else:
        try:
            arr = np.asarray(X)
        except Exception as exc:  # ragged lists and the like
            raise TypeError(f"{name} must be a 2-D array or sparse matrix of counts; {exc}") from None
        if np.iscomplexobj(arr):
            raise ValueError(f"Complex data not supported: {name} must hold real counts.")
        if arr.dtype == object:
            try:
                arr = arr.astype(np.float64)
            except (TypeError, ValueError) as exc:
                raise TypeError(f"{name} must hold numeric counts: {exc}") from None
        if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
            raise TypeError(f"{name} must hold numeric counts; got an array of dtype {arr.dtype}.")
        if arr.dtype == np.float16:  # scipy.sparse has no float16; every float16 fits float32
            arr = arr.astype(np.float32)
        if arr.ndim != 2:
            raise ValueError(
                f"{name} must be 2-D (documents x terms); got an array with {arr.ndim} "
                "dimension(s). Reshape your data: a single document is X.reshape(1, -1)."
            )
        X = sp.csr_matrix(arr)
        values = X.data
    if X.shape[0] == 0:
        raise ValueError(
            f"{name} has no documents: 0 sample(s) (shape={X.shape}) while a minimum of 1 is "
            "required."
        )
    if X.shape[1] == 0:
        raise ValueError(
            f"{name} has an empty vocabulary: 0 feature(s) (shape={X.shape}) while a minimum "
            "of 1 is required."
        )
    if X.shape[1] > np.iinfo(np.int32).max:
        raise ValueError(f"{name} has {X.shape[1]} features; at most {np.iinfo(np.int32).max} "
                         "are supported.")
    if values.size:
        if values.dtype.kind == "f":
            if not np.all(np.isfinite(values)):
                raise ValueError(f"{name} contains NaN or infinite counts.")
        if values.min() < 0:
            raise ValueError(
                f"Negative values in data: {name} contains negative counts (minimum "
                f"{values.min()})."
            )
        if values.dtype.kind == "f" and not np.all(values == np.floor(values)):
            bad = values[values != np.floor(values)][0]
            raise ValueError(
                f"{name} contains fractional counts (e.g. {bad}); counts must be whole numbers."
            )
        if values.max() > np.iinfo(np.int64).max / 4:
            raise ValueError(f"{name} contains counts too large to add up safely ({values.max()}).")
    X = sp.csr_matrix(
        (values.astype(np.int64, copy=False), X.indices.astype(np.int32, copy=False),
         X.indptr.astype(np.int64, copy=False)),
        shape=X.shape,
    )
    X.eliminate_zeros()
    X.sum_duplicates()
    if not allow_empty_rows and np.any(np.diff(X.indptr) == 0):
        raise ValueError(f"{name} contains empty documents, which this operation does not allow.")
    return X


def check_points(X, name: str = "X", min_samples: int = 1) -> np.ndarray:
    """Validate real-valued points and return them as a 2-D float64 array.

    A 1-D array is one column of values. Rejects sparse, complex, ragged and non-numeric
    input, NaN/inf, and values so large that their variance overflows (every Gaussian model
    scales its priors by the data's variance). A dask array is computed here first, and said.
    """
    if is_distributed_input(X):
        X = gathered(X, name, stacklevel=4)
    if sp.issparse(X):
        raise TypeError(f"{name} is a sparse matrix, but dense data is required for points; "
                        "use X.toarray().")
    try:
        if np.iscomplexobj(X):
            raise TypeError(f"Complex data not supported: {name} must hold real numbers.")
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:  # ragged lists, strings, None
        if str(exc).startswith("Complex"):
            raise ValueError(str(exc)) from None
        raise TypeError(f"{name} must be a 2-D array of real numbers: {exc}") from None
    if X.ndim == 1:
        X = X[:, None]  # one-dimensional data: one feature
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (samples x features); got {X.ndim} dimensions.")
    if X.shape[1] == 0:
        raise ValueError(f"{name} has 0 feature(s) (shape={X.shape}) while a minimum of 1 is "
                         "required.")
    if X.shape[0] < min_samples:
        raise ValueError(f"{name} has {X.shape[0]} sample(s) (shape={X.shape}) while a minimum "
                         f"of {min_samples} is required.")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name} contains NaN or infinite values.")
    with np.errstate(over="ignore", invalid="ignore"):
        spread = np.ptp(X, axis=0)
        overflow = not np.all(np.isfinite(spread * spread * X.shape[0]))
    if overflow:
        raise ValueError(
            f"{name} holds values too large to work with (largest magnitude "
            f"{np.abs(X).max():.3g}); their variance overflows. Rescale the data."
        )
    return X


def check_n_components(n_components, n_samples: int, name: str = "n_components") -> int:
    """Check ``1 <= n_components <= n_samples``."""
    rule = Interval("int", 1, n_samples)
    if not rule.accepts(n_components):
        error = TypeError if not isinstance(n_components, numbers.Integral) else ValueError
        raise error(
            f"{name} must be {rule.describe()} (at most n_samples={n_samples}); "
            f"got {n_components!r}."
        )
    return int(n_components)


def check_n_features(X, estimator, name: str = "X") -> None:
    """Check that ``X`` has the number of columns seen in ``fit``."""
    if X.shape[1] != estimator.n_features_in_:
        raise ValueError(
            f"{name} has {X.shape[1]} features, but {type(estimator).__name__} is expecting "
            f"{estimator.n_features_in_} features as input (the number of columns seen in fit)."
            + (" A 1-D array is one feature; pass a single point as a row, X.reshape(1, -1)."
               if X.shape[1] == 1 and X.shape[0] == estimator.n_features_in_ else "")
        )


def check_file(path, name: str = "path") -> str:
    """Check that ``path`` names an existing, readable file or folder."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{name} must be a path (str or os.PathLike); got {type(path).__name__}.")
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{name}: no such file or folder: {path!r}.")
    if not os.access(path, os.R_OK):
        raise PermissionError(f"{name}: cannot read {path!r} (permission denied).")
    return path
