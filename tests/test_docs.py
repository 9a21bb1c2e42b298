"""Every ``python`` block of the README and the user guide runs as written (blocks of one file
in order, sharing their names, in a scratch folder)."""

import os
import re
import warnings

import pytest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


@pytest.mark.parametrize("name", ["README.md", os.path.join("docs", "guide.md")])
def test_python_blocks_run(name, tmp_path, monkeypatch):
    with open(os.path.join(ROOT, name), encoding="utf-8") as handle:
        blocks = BLOCK.findall(handle.read())
    assert blocks, f"{name} has no python block"
    monkeypatch.chdir(tmp_path)  # what the examples write lands here
    monkeypatch.setenv("MPLBACKEND", "Agg")
    namespace = {"__name__": "__docs__"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an example may show a warning; it must not fail
        for number, block in enumerate(blocks, 1):
            exec(compile(block, f"{name}, python block {number}", "exec"), namespace)


def test_every_module_compiles_without_a_warning():
    """No docstring holds an invalid escape such as ``\\s`` outside a raw string: Python 3.11
    warns of it on every first import (a DeprecationWarning a user's -W error turns into a
    SyntaxError), 3.12 with a SyntaxWarning, and a later Python refuses it."""
    source = os.path.join(ROOT, "src", "mixbayes")
    noisy = []
    for folder, _, files in os.walk(source):
        for name in sorted(f for f in files if f.endswith(".py")):
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                try:
                    compile(text, path, "exec")
                except SyntaxError as exc:
                    noisy.append(f"{os.path.relpath(path, source)}: {exc}")
    assert not noisy, noisy
