"""Where numba caches the package's compiled kernels, chosen before any kernel is defined.

Every kernel is compiled with ``cache=True``, and numba looks for a place to cache it when the
decorator runs, that is when its module is imported: in ``$NUMBA_CACHE_DIR`` if set, else in
the ``__pycache__`` folder beside the module, else in the user's cache folder
(``~/.cache/numba``). When none is writable (a read-only install run by a user without a
writable home: a container, a cluster's shared environment) numba raises ``RuntimeError: cannot
cache function ...: no locator available`` and ``import mixbayes`` fails. There
:func:`ensure_cache_location` points numba at a folder of the temporary directory instead, so
the package imports and its kernels compile once per machine and user (per boot where the
temporary directory is cleared).
"""

import os
import tempfile

import numba


def ensure_cache_location(package_dir=os.path.dirname(os.path.abspath(__file__))):
    """Set ``numba.config.CACHE_DIR`` to a temporary folder where numba would find no writable
    cache folder for the modules under ``package_dir``; returns the folder set, or None where
    numba's own choice stands (``NUMBA_CACHE_DIR`` set, or a writable folder found)."""
    if numba.config.CACHE_DIR:
        return None
    if all(_writable(os.path.join(folder, "__pycache__"))
           for folder in _module_folders(package_dir)):
        return None
    if _writable(_user_cache_dir()):
        return None
    folder = os.path.join(tempfile.gettempdir(), f"mixbayes-numba-cache-{_user_name()}")
    if not _writable(folder):
        raise ImportError(
            "mixbayes: numba finds no writable folder for the package's compiled kernels "
            f"(not beside its sources in {package_dir}, not in {_user_cache_dir()}, not in "
            f"{folder}); set the environment variable NUMBA_CACHE_DIR to a writable folder.")
    numba.config.CACHE_DIR = folder
    return folder


def _module_folders(package_dir):
    """The package's folders that hold Python modules."""
    for folder, subfolders, files in os.walk(package_dir):
        subfolders[:] = [name for name in subfolders if name != "__pycache__"]
        if any(name.endswith(".py") for name in files):
            yield folder


def _writable(folder):
    """Whether ``folder`` exists or can be made, and a file can be written in it (numba's own
    test)."""
    try:
        os.makedirs(folder, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError:
        return False
    return True


def _user_cache_dir():
    """numba's user-wide cache folder (``numba.core.caching.UserWideCacheLocator``'s)."""
    from numba.misc.appdirs import AppDirs

    return AppDirs(appname="numba", appauthor=False).user_cache_dir


def _user_name():
    """A name of this user for the shared temporary directory."""
    getuid = getattr(os, "getuid", None)
    return str(getuid()) if getuid is not None else os.environ.get("USERNAME", "user")
