"""Save and load fitted models: one ``.npz`` file of arrays plus JSON metadata, no pickle.

The file holds every fitted array under its attribute name and a ``__meta__`` entry, a JSON
string with the class name, the constructor parameters, scalar fitted attributes and the
mixbayes version. Writing goes to a temporary file in the same folder, flushed and fsynced,
then renamed over the target, so a reader never sees a half-written file. Loading only
instantiates classes registered here and never unpickles.
"""

import json
import numbers
import os
import tempfile

import numpy as np

__all__ = ["save", "load"]

_FORMAT = 1


def _registry():
    from .mixture import DirichletMultinomialMixture, VariationalGaussianMixture
    from .hdp import HDPMixture
    from .topics import TopicModel

    return {cls.__name__: cls for cls in (DirichletMultinomialMixture, VariationalGaussianMixture,
                                          TopicModel, HDPMixture)}


def _json_value(value):
    if isinstance(value, list):
        return value
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"cannot store {type(value).__name__} as JSON")


def save(model, path):
    """Write a fitted model to ``path`` (``.npz`` is appended when missing).

    Returns
    -------
    str
        The path written.
    """
    from sklearn.utils.validation import check_is_fitted

    name = type(model).__name__
    if name not in _registry():
        raise TypeError(f"model: cannot save a {name}; supported: {sorted(_registry())}.")
    check_is_fitted(model)
    path = os.fspath(path)
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
        if isinstance(value, np.ndarray):
            if value.dtype == object:
                value = value.astype(str)
            arrays[key] = value
        else:
            scalars[key] = _json_value(value)
    from . import __version__

    meta = dict(format=_FORMAT, cls=name, version=__version__,
                params={k: _json_value(v) for k, v in params.items()}, scalars=scalars)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".mixbayes-", suffix=".npz.tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            np.savez_compressed(handle, __meta__=np.asarray(json.dumps(meta)), **arrays)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def load(path):
    """Read a model written by :func:`save`."""
    from ._validation import check_file

    path = check_file(path, "path")
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["__meta__"]))
            arrays = {k: data[k] for k in data.files if k != "__meta__"}
    except (OSError, ValueError, KeyError) as exc:
        raise ValueError(f"path: {path!r} is not a model saved by mixbayes ({exc}).") from None
    if meta.get("format") != _FORMAT or meta.get("cls") not in _registry():
        raise ValueError(f"path: {path!r} holds an unknown model format or class.")
    model = _registry()[meta["cls"]](**meta["params"])
    for key, value in {**meta["scalars"], **arrays}.items():
        setattr(model, key, value)
    return model
