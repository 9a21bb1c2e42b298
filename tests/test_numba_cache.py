"""The package imports where numba finds no writable cache folder (a read-only install, no
writable home): ``mixbayes._numba_cache`` points numba at the temporary directory."""

import os
import shutil
import subprocess
import sys

import numba
import pytest

import mixbayes
from mixbayes import _numba_cache


def _blocked_copy(tmp_path):
    """A copy of the package whose every ``__pycache__`` is a file (so not a writable folder,
    even for root, whom file modes do not stop), and a cache home under a file."""
    source = os.path.dirname(mixbayes.__file__)
    copy = tmp_path / "site" / "mixbayes"
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__"))
    for folder, _, files in os.walk(copy):
        (open(os.path.join(folder, "__pycache__"), "w")).close()
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    return copy, blocker


def test_import_succeeds_with_no_writable_cache_folder(tmp_path):
    package, blocker = _blocked_copy(tmp_path)
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("NUMBA_CACHE_DIR", "PYTHONPATH")}
    environment.update(PYTHONPATH=str(package.parent), XDG_CACHE_HOME=str(blocker / "cache"),
                       TMPDIR=str(temporary), PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run(
        [sys.executable, "-c", "import mixbayes, numba; print(mixbayes.__file__); "
                               "print(numba.config.CACHE_DIR)"],
        env=environment, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    imported, cache = done.stdout.split()
    assert imported.startswith(str(package))
    assert cache.startswith(str(temporary / "mixbayes-numba-cache-"))


def test_numba_keeps_its_own_choice_where_a_folder_is_writable(tmp_path, monkeypatch):
    monkeypatch.setattr(numba.config, "CACHE_DIR", "")
    (tmp_path / "module.py").write_text("")
    assert _numba_cache.ensure_cache_location(str(tmp_path)) is None
    assert numba.config.CACHE_DIR == ""
    # the sources' folder blocked: the user's cache folder is numba's next choice
    shutil.rmtree(tmp_path / "__pycache__")
    (tmp_path / "__pycache__").write_text("")
    monkeypatch.setattr(_numba_cache, "_user_cache_dir", lambda: str(tmp_path / "user"))
    assert _numba_cache.ensure_cache_location(str(tmp_path)) is None
    # both blocked: the temporary directory's folder
    monkeypatch.setattr(_numba_cache, "_user_cache_dir",
                        lambda: str(tmp_path / "__pycache__" / "user"))
    monkeypatch.setattr(_numba_cache.tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    chosen = _numba_cache.ensure_cache_location(str(tmp_path))
    assert chosen is not None and chosen.startswith(str(tmp_path / "tmp"))
    assert numba.config.CACHE_DIR == chosen
    # a folder set by the user (NUMBA_CACHE_DIR) is never replaced
    assert _numba_cache.ensure_cache_location(str(tmp_path)) is None


def test_no_writable_folder_anywhere_is_a_clear_import_error(tmp_path, monkeypatch):
    monkeypatch.setattr(numba.config, "CACHE_DIR", "")
    (tmp_path / "module.py").write_text("")
    (tmp_path / "__pycache__").write_text("")
    monkeypatch.setattr(_numba_cache, "_user_cache_dir",
                        lambda: str(tmp_path / "__pycache__" / "user"))
    monkeypatch.setattr(_numba_cache.tempfile, "tempdir", str(tmp_path / "__pycache__"))
    with pytest.raises(ImportError, match="NUMBA_CACHE_DIR"):
        _numba_cache.ensure_cache_location(str(tmp_path))
