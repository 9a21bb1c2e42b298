"""Save and load fitted models: one ``.npz`` file of arrays plus JSON metadata, no pickle.

The file holds every fitted array under its attribute name and a ``__meta__`` entry, a JSON
string with the class name, the constructor parameters, scalar fitted attributes and the
mixbayes version. When :func:`save` is given the vocabulary (the corpus the model was fitted
on), the file also holds its terms (``__vocabulary__``, strings) and, in the metadata, how text
became them (``preprocessing``); :func:`load_vocabulary` reads them back. Such a file is of
format 2 (older mixbayes versions say to upgrade); a file without a vocabulary stays format 1,
and format-1 files load as they always did. Writing goes to a temporary file in the same folder, flushed and fsynced,
then renamed over the target, so a reader never sees a half-written file. Loading only
instantiates classes registered here and never unpickles.
"""

import json
import numbers
import os
import tempfile

import numpy as np

__all__ = ["save", "load", "load_vocabulary"]

_FORMAT = 2  # the newest format read: 1 a model, 2 a model with its vocabulary
_VOCABULARY = "__vocabulary__"  # the entry of the terms (never a fitted attribute's name)


def _registry():
    from .mixture import DirichletMultinomialMixture, VariationalGaussianMixture
    from .hdp import HDPMixture
    from .topics import TopicModel
    from .tree import HierarchicalMixture

    return {cls.__name__: cls for cls in (DirichletMultinomialMixture, VariationalGaussianMixture,
                                          TopicModel, HDPMixture, HierarchicalMixture)}


def _json_value(value):
    if isinstance(value, list):
        return value
    if isinstance(value, tuple):  # a Gamma prior's (shape, rate); loaded back as a tuple
        return [_json_value(item) for item in value]
    if isinstance(value, dict):  # a few named figures, e.g. the tree's R-hat per quantity
        return {str(key): _json_value(item) for key, item in value.items()}
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"cannot store {type(value).__name__} as JSON")


def save(model, path, vocabulary=None):
    """Write a fitted model to ``path`` (``.npz`` is appended when missing), with its
    vocabulary when given.

    A model fitted on a dask cluster is saved as an in-process fit is: its per-document
    results (``labels_``, ``doc_topic_``, dask arrays on the workers) are computed into the
    file.

    Parameters
    ----------
    model : a fitted mixbayes estimator
    path : str or os.PathLike
    vocabulary : Corpus, Vocabulary or sequence of str, default=None
        The names of the model's features, one per feature: the corpus the model was fitted
        on (its terms and how its text became them, :attr:`mixbayes.Corpus.preprocessing`,
        are stored), a :class:`mixbayes.vocabulary.Vocabulary`, or the terms alone (for a
        model of points: its columns' names). Reports and ``mixbayes inspect`` then name the
        terms, and ``mixbayes predict`` reads new documents as the fitted ones were read.

    Returns
    -------
    str
        The path written.

    Raises
    ------
    ValueError
        When ``vocabulary`` does not name every feature of the model.
    """
    from sklearn.utils.validation import check_is_fitted

    name = type(model).__name__
    if name not in _registry():
        raise TypeError(f"model: cannot save an object of type {name}; supported: "
                        f"{sorted(_registry())}.")
    check_is_fitted(model)
    vocabulary = _vocabulary_of(vocabulary, model)
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a path (str or os.PathLike); got {type(path).__name__}.")
    path = os.fspath(path)
    if os.path.isdir(path):  # else model.npz beside it, which load(path) then refuses
        raise IsADirectoryError(f"path: {path!r} is a folder; name the file to write, e.g. "
                                f"{os.path.join(path, 'model.npz')!r}.")
    if not path.endswith(".npz"):
        path += ".npz"
    params = model.get_params(deep=False)
    if not isinstance(params.get("random_state"), (numbers.Integral, type(None))):
        params["random_state"] = None  # a Generator cannot be stored; the fit is, anyway
    for key, value in list(params.items()):
        if isinstance(value, np.ndarray) or (isinstance(value, (list, tuple))):
            params[key] = np.asarray(value, dtype=float).tolist()  # array-valued priors
    arrays, scalars = {}, {}
    for key, value in vars(model).items():
        if not key.endswith("_") or key.startswith("_"):
            continue
        if callable(getattr(type(value), "__dask_graph__", None)):
            # a fit on a dask cluster leaves labels_ (doc_topic_) on the workers; the file
            # holds what an in-process fit's holds, so they come here (the model keeps its own)
            value = np.asarray(value.compute())
        if isinstance(value, np.ndarray):
            if value.dtype == object:
                value = value.astype(str)
            arrays[key] = value
        else:
            scalars[key] = _json_value(value)
    from . import __version__

    meta = dict(format=1, cls=name, version=__version__,
                params={k: _json_value(v) for k, v in params.items()}, scalars=scalars)
    if vocabulary is not None:
        arrays[_VOCABULARY] = vocabulary.terms
        meta.update(format=2, preprocessing=None if vocabulary.preprocessing is None
                    else vocabulary.preprocessing.to_dict())
    write_atomically(path, lambda handle: np.savez_compressed(
        handle, __meta__=np.asarray(json.dumps(meta)), **arrays))
    return path


def _vocabulary_of(vocabulary, model):
    """``save``'s ``vocabulary`` as a :class:`~mixbayes.vocabulary.Vocabulary` (or None),
    checked against the model's features."""
    from .vocabulary import Vocabulary

    if vocabulary is None:
        return None
    if not isinstance(vocabulary, Vocabulary):
        vocabulary = (Vocabulary.of(vocabulary) if hasattr(vocabulary, "vocabulary")
                      else Vocabulary(vocabulary))
    p = getattr(model, "n_features_in_", None)
    if p is not None and len(vocabulary) != p:
        raise ValueError(f"vocabulary: it names {len(vocabulary)} features but the "
                         f"{type(model).__name__} was fitted to {p}.")
    return vocabulary


def umask():
    """The process's umask (read from /proc on Linux, which leaves it untouched; elsewhere set
    and put back at once)."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomically(path, write):
    """Call ``write(handle)`` on a temporary file (binary) in ``path``'s folder, flush and fsync
    it, then rename it over ``path``: a reader never sees a half-written file, and a failure
    leaves ``path`` as it was. The file gets the mode an ordinary ``open`` would give it (0o666
    less the umask), not the temporary file's 0o600."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):  # else mkstemp names its own temporary file
        raise FileNotFoundError(f"path: the folder {os.path.dirname(path) or folder!r} of "
                                f"{path!r} does not exist.")
    if os.path.isdir(path):  # else os.replace's error names the temporary file
        raise IsADirectoryError(f"path: {path!r} is a folder, not a file to write.")
    suffix = os.path.splitext(path)[1] + ".tmp"
    try:
        fd, tmp = tempfile.mkstemp(prefix=".mixbayes-", suffix=suffix, dir=folder)
    except PermissionError:  # its message names the temporary file, not the user's
        raise PermissionError(f"path: cannot write {path!r}: the folder "
                              f"{os.path.dirname(path) or folder!r} is not writable "
                              "(permission denied).") from None
    try:
        os.chmod(tmp, 0o666 & ~umask())
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def load(path):
    """Read a model written by :func:`save` (given the same ``path``: ``.npz`` is appended when
    the name without it does not exist, as :func:`save` appends it).

    Raises
    ------
    ValueError
        One line naming ``path`` when the file is not a model written by :func:`save` (truncated,
        tampered with, foreign, or holding pickled objects, which are never loaded), when it was
        written by a newer mixbayes, or when its arrays do not fit together (the model would
        fail later, deep inside numpy).
    """
    from ._validation import check_file

    if isinstance(path, (str, os.PathLike)) and not os.path.exists(path) and os.path.isfile(
            os.fspath(path) + ".npz"):
        path = os.fspath(path) + ".npz"
    path = check_file(path, "path")
    if os.path.isdir(path):
        raise ValueError(f"path: {path!r} is a folder, not a model saved by mixbayes (a .npz "
                         "file such as model.npz in it).")
    meta, arrays = _read(path)
    _check_format(path, meta)
    vocabulary = _stored_vocabulary(path, meta, arrays)
    name = meta.get("cls")
    if not isinstance(name, str) or name not in _registry():
        raise _fail(path, f"unknown model class {name!r}; known: {sorted(_registry())}")
    cls = _registry()[name]
    params, scalars = meta.get("params"), meta.get("scalars")
    if not isinstance(params, dict) or not isinstance(scalars, dict):
        raise _fail(path, "params and scalars must be JSON objects")
    defaults = cls().get_params(deep=False)
    unknown = sorted(set(params) - set(defaults))
    if unknown:
        raise _fail(path, f"{name} has no parameter(s) {unknown}")
    # JSON has no tuples: a parameter whose default is a tuple (the HDP's Gamma priors) comes
    # back as one, so that the loaded model's parameters equal the saved one's
    # (or one the class names in _tuple_params: the HDP's top prior, whose default is "auto")
    tuples = getattr(cls, "_tuple_params", ())
    params = {k: tuple(v) if isinstance(v, list) and (isinstance(defaults[k], tuple)
                                                      or k in tuples) else v
              for k, v in params.items()}
    model = cls(**params)
    try:
        from ._validation import validate_params

        validate_params(model, model._parameter_rules)
        schema = model._persist_schema(scalars)
        if schema.check_params is not None:
            schema.check_params()  # the options outside the rules
        _check_fitted(model, scalars, arrays, schema)
        if vocabulary is not None and vocabulary.size != scalars.get("n_features_in_"):
            raise ValueError(f"its vocabulary names {vocabulary.size} terms, its model "
                             f"{scalars.get('n_features_in_')} features")
    except (TypeError, ValueError) as exc:
        raise _fail(path, _one_line(exc)) from None
    for key, value in {**scalars, **arrays}.items():
        if schema.scalars.get(key) == "prior" and isinstance(value, list):
            value = tuple(value)  # JSON has no tuples
        setattr(model, key, value)
    try:
        _smoke_test(schema)
    except Exception as exc:  # noqa: BLE001 - whatever breaks, the file is refused
        raise _fail(path, f"the stored {name} does not work: {_one_line(exc)}") from None
    return model


def load_vocabulary(path):
    """The vocabulary saved with the model of ``path`` (see :func:`save`), or None when the
    file holds none (a model saved without it, or by mixbayes before format 2).

    Only the vocabulary and the metadata are checked here (:func:`load` checks the model).

    Returns
    -------
    mixbayes.vocabulary.Vocabulary or None

    Raises
    ------
    ValueError
        One line naming ``path``, as :func:`load` raises it.
    """
    from ._validation import check_file
    from .preprocessing import Preprocessing
    from .vocabulary import Vocabulary

    if isinstance(path, (str, os.PathLike)) and not os.path.exists(path) and os.path.isfile(
            os.fspath(path) + ".npz"):
        path = os.fspath(path) + ".npz"
    path = check_file(path, "path")
    meta, arrays = _read(path)
    _check_format(path, meta)
    terms = _stored_vocabulary(path, meta, arrays)
    if terms is None:
        return None
    scalars = meta.get("scalars")
    if isinstance(scalars, dict) and terms.size != scalars.get("n_features_in_"):
        raise _fail(path, f"its vocabulary names {terms.size} terms, its model "
                          f"{scalars.get('n_features_in_')} features")
    raw = meta.get("preprocessing")
    try:
        preprocessing = None if raw is None else Preprocessing.from_dict(raw)
    except ValueError as exc:
        raise _fail(path, _one_line(exc)) from None
    return Vocabulary(terms, preprocessing)


def _check_format(path, meta):
    version = meta.get("format")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise _fail(path, f"unknown format {version!r}")
    if version > _FORMAT:
        raise ValueError(
            f"path: {path!r} was written by a newer mixbayes (format {version}); this version "
            f"reads formats 1 to {_FORMAT} — upgrade mixbayes to load it."
        )


def _stored_vocabulary(path, meta, arrays):
    """The terms stored in ``arrays`` (taken out of them), checked; None when there are
    none."""
    terms = arrays.pop(_VOCABULARY, None)
    if terms is None:
        if "preprocessing" in meta:
            raise _fail(path, "its metadata has a preprocessing but no vocabulary")
        return None
    if meta.get("format", 1) < 2:
        raise _fail(path, "a vocabulary in a format-1 file")
    if terms.dtype.kind != "U" or terms.ndim != 1 or terms.size == 0:
        raise _fail(path, f"its vocabulary has dtype {terms.dtype} and shape {terms.shape}; "
                          "expected strings, one per feature")
    if not isinstance(meta.get("preprocessing"), (dict, type(None))):
        raise _fail(path, "its preprocessing is not a JSON object")
    return terms


def _fail(path, reason):
    """The one-line error of :func:`load`: the file and what is wrong with it."""
    return ValueError(f"path: {path!r} is not a model saved by mixbayes ({reason}).")


def _one_line(exc, limit=300):
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _read(path):
    """The metadata dict and the arrays of ``path``, never unpickling anything."""
    with open(path, "rb") as handle:
        head = handle.read(6)
    if not head.startswith((b"PK", b"\x93NUMPY")):  # numpy would take it for a pickle
        text = head and all(32 <= b < 127 or b in (9, 10, 13) for b in head)
        raise _fail(path, "not an .npz archive: " + ("it holds text" if text else
                                                      "neither a zip archive nor a NumPy file"))
    try:
        data = np.load(path, allow_pickle=False)
        if not isinstance(data, np.lib.npyio.NpzFile):
            raise _fail(path, "a single .npy array, not an .npz archive")
        with data:
            if "__meta__" not in data.files:
                raise _fail(path, "no __meta__ entry")
            raw = data["__meta__"]
            arrays = {k: data[k] for k in data.files if k != "__meta__"}
    except ValueError as exc:
        if str(exc).startswith("path: "):
            raise
        if "pickle" in str(exc):
            raise _fail(path, "it holds pickled objects, which are never loaded") from None
        raise _fail(path, _one_line(exc)) from None
    except Exception as exc:  # noqa: BLE001 - truncated or foreign: BadZipFile, zlib.error, EOFError
        raise _fail(path, f"{type(exc).__name__}: {_one_line(exc)}") from None
    if raw.dtype.kind != "U" or raw.ndim != 0:
        raise _fail(path, "__meta__ is not a JSON string")
    try:
        meta = json.loads(str(raw))
    except (ValueError, RecursionError) as exc:
        raise _fail(path, f"__meta__ is not valid JSON: {_one_line(exc)}") from None
    if not isinstance(meta, dict):
        raise _fail(path, f"__meta__ is a JSON {type(meta).__name__}, not an object")
    return meta, arrays


# --------------------------------------------------------------------------- what a model holds
# Each model declares its fitted attributes (mixbayes._schema.Schema); the checks are here.


def _scalar_ok(value, rule):
    if rule == "none":
        return value is None
    if rule == "strings":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if rule == "bool":
        return isinstance(value, bool)
    if rule == "prior":  # a Gamma prior's (shape, rate), or None
        return value is None or (isinstance(value, list) and len(value) == 2 and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v) and v > 0
            for v in value))
    if rule == "figures":
        return isinstance(value, dict) and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in value.values())
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if rule in ("count", "int"):
        return isinstance(value, int) and value >= (1 if rule == "count" else 0)
    if rule == "+":
        return np.isfinite(value) and value > 0
    return not np.isnan(value)  # "real": -inf is a legitimate ELBO of an impossible fit


def _check_fitted(model, scalars, arrays, schema):
    """Check every stored attribute against what the class declares (``schema``), so that a
    loaded model either works or is refused here (and never fails later, deep inside numpy)."""
    scalar_specs, array_specs = schema.scalars, schema.arrays
    for key, value in scalars.items():
        if key not in scalar_specs or not _scalar_ok(value, scalar_specs[key]):
            raise ValueError(f"unexpected or invalid scalar {key}={value!r}")
    stored = set(scalars) | set(arrays)
    required = {k for k, v in scalar_specs.items() if v not in ("none", "strings")}
    required |= {k for k, v in array_specs.items() if len(v) < 3}
    for key in schema.array_or_none:
        required.discard(key)  # an array, or None (a scalar) when too large
        if key not in stored:
            raise ValueError(f"missing {key}")
    missing = sorted(required - stored)
    if missing:
        raise ValueError(f"missing fitted attribute(s) {missing}")
    sizes = dict(p=scalars["n_features_in_"],
                 K=scalars.get("n_components_", getattr(model, "n_components", None)),
                 G=scalars.get("n_groups_"))
    sizes.update(schema.sizes(scalars, arrays))
    for key, value in arrays.items():
        if key not in array_specs:
            raise ValueError(f"unexpected array {key}")
        shape, rule = array_specs[key][:2]
        if rule in schema.dtypes:
            expected = schema.dtypes[rule]()
            if value.dtype != expected or value.ndim != len(shape):
                raise ValueError(f"{key} has dtype {value.dtype} and shape {value.shape}")
            continue
        if value.dtype.kind not in ("i", "u", "f") or (
                rule in ("label", "int", "feature", "node", "parent", "state")
                and value.dtype.kind == "f"):
            raise ValueError(f"{key} has dtype {value.dtype}")
        if value.ndim == len(shape) and "n" in shape:
            sizes.setdefault("n", value.shape[shape.index("n")])
        want = tuple(sizes.get(s, s) if isinstance(s, str) and s != "*" else s for s in shape)
        if value.ndim != len(want) or any(w != "*" and w != got for w, got in zip(want,
                                                                                 value.shape)):
            raise ValueError(f"{key} has shape {value.shape}; expected {want} "
                             f"(n_components={sizes['K']}, n_features={sizes['p']})")
        if rule == "real":
            bad = np.isnan(value).any()
        elif rule == "label":
            bad = value.size and (value.min() < 0 or value.max() >= sizes["K"])
        elif rule == "feature":
            bad = value.size and (value.min() < 0 or value.max() >= sizes["p"])
        elif rule == "int":
            bad = value.size and value.min() < 0
        elif rule == "margin":  # +inf where a point has no siblings
            bad = np.isnan(value).any() or np.isneginf(value).any()
        elif rule == "linkage":  # scipy's format: row i merges points or earlier rows
            n_points = sizes.get("n", value.shape[0] + 1)
            ids = value[:, :2]
            bad = (value.shape[0] != n_points - 1 or not np.all(np.isfinite(value))
                   or np.any(ids != np.round(ids)) or np.any(ids < 0)
                   or np.any(ids >= n_points + np.arange(value.shape[0])[:, None]))
        elif rule in ("node", "parent"):  # a node of the simplified tree (-1: none)
            # ... or of the raw kept state, for state_parent_ (more nodes where the tree
            # was simplified: single-child chains merged)
            limit = sizes["M"] if key == "state_parent_" else sizes["N"]
            bad = value.size and (value.min() < (0 if rule == "node" else -1)
                                  or value.max() >= limit)
        elif rule == "state":  # a node of the raw kept state (-1: none), not of the tree
            bad = value.size and (value.min() < -1 or value.max() >= sizes["M"])
        else:
            bad = not np.all(np.isfinite(value)) or (rule == "+" and np.any(value <= 0)) or (
                rule == ">=0" and np.any(value < 0))
        if bad:
            raise ValueError(f"{key} holds values outside its range ({rule})")
    for key in schema.positive_definite:
        if key in arrays:
            matrix = arrays[key]
            if not np.allclose(matrix, np.swapaxes(matrix, -1, -2)) or np.any(
                    np.linalg.eigvalsh(matrix) <= 0):
                raise ValueError(f"{key} is not symmetric positive definite")


def _smoke_test(schema):
    """Predict one sample with the loaded model (its schema's probe): a broken model fails
    here, not later."""
    import warnings

    if schema.probe is None:
        return
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        result = schema.probe()
    if result is None:  # the probe checked what it predicted itself
        return
    if not (np.all(np.isfinite(result)) and np.allclose(result.sum(axis=1), 1.0)):
        raise ValueError("its probabilities of a test sample are not finite or do not sum to 1")
