"""Fixed-seed runs of every command write what they wrote when the fixtures were recorded.

Each run in :data:`RUNS` is the ``mixbayes`` command on a tiny stored input
(``fixtures/inputs``: 60 documents x 30 terms with labels, 60 two-feature points with labels
and groups); ``fixtures/<run>.json`` holds its exit status, stdout, stderr and every file it
wrote, recorded at e2b1612 before the engine seam and the CLI split (issue 24), so that those changes are
shown to change no output. Text files are compared byte for byte except for these fields:

* ``"seconds"`` in JSON and the ``seconds`` column of ``selection.csv``, and ``in 0.4 s`` in the
  printed summary: wall-clock timings;
* ``version`` in ``model.npz``'s metadata: the package version, not the fit;
* ``model.npz`` is compared array by array (name, dtype, shape, bytes) and by its metadata, not
  as a file: numpy's zip members carry the time they were written;
* ``report.html`` is compared by its SHA-256 (the page is 30 kB of template each run);
* PNG figures: present and non-empty only; their bytes carry matplotlib's version and depend on
  its and freetype's rendering, not on what this package computed (the data they draw are in
  the other files).

Paths are relative (each run's working folder is a fresh temporary one), so none is absolute.
To record the fixtures again after a change meant to alter an output, run
``MIXBAYES_RECORD=1 pytest tests/cli/test_cli_fixtures.py`` and review the diff.
"""

import contextlib
import hashlib
import io
import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

FIXTURES = Path(__file__).parent / "fixtures"
INPUTS = FIXTURES / "inputs"
DOCS = ["data/counts.mtx"]
POINTS = ["points.csv", "--label-column", "label"]

# name -> the command's arguments (each run also gets --out out -q)
RUNS = {
    "dmm": ["cluster", *DOCS, "--model", "dmm", "-k", "3", "--n-init", "2", "--report",
            "--uncertainty"],
    "dmm_select": ["cluster", *DOCS, "--model", "dmm", "--select", "2:3", "--n-init", "1"],
    "gmm": ["cluster", *POINTS, "--model", "gmm", "-k", "4", "--report", "--uncertainty"],
    "hdp": ["cluster", *DOCS, "--model", "hdp", "--n-iter", "6", "--report",
            "--uncertainty"],
    "hdp_points": ["cluster", "points.csv", "--label-column", "label", "--model", "hdp",
                   "--groups", "groups.txt", "--n-iter", "6"],
    "tree": ["cluster", *POINTS, "--model", "tree", "--n-iter", "8", "--report",
             "--uncertainty"],
    "topics": ["topics", *DOCS, "-k", "3", "--report"],
    "topics_select": ["topics", *DOCS, "--select", "2:4", "--scan-all"],
    "dmm_workers": ["cluster", *DOCS, "--model", "dmm", "-k", "3", "--n-init", "2",
                    "--workers", "2"],
    "gmm_workers": ["cluster", *POINTS, "--model", "gmm", "-k", "4", "--workers", "2"],
    "topics_workers": ["topics", *DOCS, "-k", "3", "--workers", "2"],
}

_SECONDS_JSON = re.compile(r'("seconds": )-?[0-9.eE+-]+')
_SECONDS_TEXT = re.compile(r"\bin \d+\.\d s\b")


def _run(args, cwd):
    from mixbayes.cli import main

    out, err, here = io.StringIO(), io.StringIO(), os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(list(args))
            except SystemExit as stop:
                status = stop.code
    finally:
        os.chdir(here)
    return status, out.getvalue(), err.getvalue()


def _csv_without_seconds(text):
    lines = text.splitlines(keepends=True)
    header = lines[0].rstrip("\r\n").split(",")
    if "seconds" not in header:
        return text
    column = header.index("seconds")
    kept = [lines[0]]
    for line in lines[1:]:
        cells = line.rstrip("\r\n").split(",")
        cells[column] = "<s>"
        kept.append(",".join(cells) + line[len(line.rstrip("\r\n")):])
    return "".join(kept)


def _npz(path):
    with np.load(path, allow_pickle=False) as archive:
        meta = json.loads(str(archive["__meta__"]))
        meta.pop("version", None)
        arrays = {name: [str(archive[name].dtype), list(archive[name].shape),
                         hashlib.sha256(np.ascontiguousarray(archive[name]).tobytes())
                         .hexdigest()]
                  for name in sorted(archive.files) if name != "__meta__"}
    return dict(meta=meta, arrays=arrays)


def _outputs(folder):
    """Every file under ``folder``, normalised as the module's docstring says."""
    files = {}
    for path in sorted(folder.rglob("*")):
        if not path.is_file():
            continue
        name = path.relative_to(folder).as_posix()
        if path.suffix == ".png":
            files[name] = "png" if path.stat().st_size > 0 else "empty png"
        elif path.suffix == ".npz":
            files[name] = _npz(path)
        elif path.suffix == ".html":  # 30 kB of page each: its digest
            files[name] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            text = path.read_bytes().decode("utf-8")
            if path.suffix == ".json":
                text = _SECONDS_JSON.sub(r"\1<s>", text)
            elif path.suffix == ".csv":
                text = _csv_without_seconds(text)
            files[name] = text.splitlines(keepends=True)
    return files


def record(name, tmp_path):
    """The run's status, printed lines and outputs, normalised."""
    work = tmp_path / name
    shutil.copytree(INPUTS, work)
    status, stdout, stderr = _run(RUNS[name] + ["--out", "out", "-q"], work)
    return dict(args=RUNS[name], status=status,
                stdout=_SECONDS_TEXT.sub("in <s> s", stdout).splitlines(keepends=True),
                stderr=stderr.splitlines(keepends=True), files=_outputs(work / "out"))


@pytest.fixture
def threads(monkeypatch):
    """--workers starts threads, not processes (a worker process costs seconds to start)."""
    from mixbayes.cli import _dask

    monkeypatch.setattr(_dask, "PROCESSES", False)


@pytest.mark.parametrize("name", sorted(RUNS))
def test_outputs_match_the_fixture(name, tmp_path, threads):
    if name.endswith("_workers"):
        pytest.importorskip("distributed")
    got = record(name, tmp_path)
    path = FIXTURES / f"{name}.json"
    if os.environ.get("MIXBAYES_RECORD"):
        path.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    expected = json.loads(path.read_text(encoding="utf-8"))
    assert got["status"] == expected["status"] == 0, got["stderr"]
    assert sorted(got["files"]) == sorted(expected["files"])
    for file in expected["files"]:
        assert got["files"][file] == expected["files"][file], file
    assert got["stdout"] == expected["stdout"]
    assert got["stderr"] == expected["stderr"]
