"""The package's floors: who may import whom, checked on every import statement in src/mixbayes.

An ``ast`` walk finds every import, the deferred ones inside functions included, and resolves
relative ones to module names. The rules (DESIGN.md, "Layout"):

* the models (``mixture``, ``topics``, ``hdp``, ``tree``), ``families``, ``metrics`` and
  ``corpus`` never import ``mixbayes.distributed`` or ``mixbayes.cli``: an engine is chosen
  through ``mixbayes._engines``, which ``distributed`` fills when imported;
* ``families`` never imports a model;
* ``distributed`` never imports ``cli``;
* a module imports another package's private module (``_name``) or private name only when
  that package is its own or one above it (the ground floor: ``mixbayes._validation`` serves
  every package); a private *name* only from its own package. The exceptions are listed in
  :data:`ALLOWED` with the reason; the list is to shrink, not grow.
"""

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
MODELS = ("mixbayes.mixture", "mixbayes.topics", "mixbayes.hdp", "mixbayes.tree")
ENGINE_FREE = MODELS + ("mixbayes.families", "mixbayes.metrics", "mixbayes.corpus")

# (importer, imported module or module:name) -> why it is still there (issue 24 emptied it)
ALLOWED = {}


def _module_name(path):
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_package(module):
    return (SRC / module.replace(".", "/") / "__init__.py").exists()


def _is_module(module):
    return _is_package(module) or (SRC / (module.replace(".", "/") + ".py")).exists()


def imports(source, module, package):
    """``(imported module, name or None, line)`` for every import in ``source`` (the text of
    ``module``, whose package is ``package``); a name that is a submodule counts as a module."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(alias.name, None, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            for alias in node.names:
                if _is_module(f"{target}.{alias.name}"):
                    found.append((f"{target}.{alias.name}", None, node.lineno))
                else:
                    found.append((target, alias.name, node.lineno))
    return found


def _sources():
    for path in sorted((SRC / "mixbayes").rglob("*.py")):
        module = _module_name(path)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        yield module, package, path.read_text(encoding="utf-8")


def _within(module, prefix):
    return module == prefix or module.startswith(prefix + ".")


def _private_package(target):
    """The package owning the first private part of ``target``, or None when none is."""
    parts = target.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:i])
    return None


def violations(module, package, source):
    """``(rule, importer, imported)`` for every import of ``source`` that breaks a rule."""
    found = []
    for target, name, line in imports(source, module, package):
        if not _within(target, "mixbayes"):
            continue
        shown = target  # a rule on modules names the module; one on names, the name too
        if any(_within(module, floor) for floor in ENGINE_FREE):
            for above in ("mixbayes.distributed", "mixbayes.cli"):
                if _within(target, above):
                    found.append(("imports an engine or the CLI", module, shown))
        if _within(module, "mixbayes.families") and any(_within(target, m) for m in MODELS):
            found.append(("a family imports a model", module, shown))
        if _within(module, "mixbayes.distributed") and _within(target, "mixbayes.cli"):
            found.append(("distributed imports the CLI", module, shown))
        owner = _private_package(target)
        if owner is not None and not _within(package, owner):
            found.append(("another package's private module", module, shown))
        if name is not None and name.startswith("_") and not name.startswith("__"):
            home = target if _is_package(target) else target.rpartition(".")[0]
            if home != package:
                found.append(("another package's private name", module, f"{target}:{name}"))
    return sorted(set(found))


def test_every_import_keeps_to_its_floor():
    found = [v for module, package, source in _sources() for v in violations(module, package, source)]
    unexpected = [v for v in found if (v[1], v[2]) not in ALLOWED]
    unexpected += [v for v in found if v[0] == "a family imports a model"
                   or v[0] == "distributed imports the CLI"]
    assert not unexpected, "\n".join(f"{m} -> {t}: {rule}" for rule, m, t in unexpected)
    stale = set(ALLOWED) - {(v[1], v[2]) for v in found}
    assert not stale, f"allowed but no longer imported (remove them from ALLOWED): {stale}"


@pytest.mark.parametrize("source, rule", [
    ("def fit(X):\n    from ..distributed import fit\n", "imports an engine or the CLI"),
    ("import mixbayes.cli\n", "imports an engine or the CLI"),
    ("from ..hdp._sampler import lookup\n", "another package's private module"),
    ("from ..corpus import _read\n", "another package's private name"),
])
def test_the_walk_catches_a_model_that_breaks_a_rule(source, rule):
    assert rule in [v[0] for v in violations("mixbayes.mixture.dmm", "mixbayes.mixture", source)]


def test_the_walk_lets_a_model_use_its_own_and_the_ground_floor():
    source = "from ._base import X\nfrom .._validation import plural\nfrom .. import _progress\n"
    assert violations("mixbayes.mixture.dmm", "mixbayes.mixture", source) == []
