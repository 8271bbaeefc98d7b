"""No module of nlp_robustness imports a module of a higher layer (imports inside functions included).

The layers, low to high, follow the data (see the package docstring):

0. ``errors``, ``fileio``, ``sampling``, ``display_names``: what every layer uses (the error type, file I/O,
   every seeded generator and nested sample, the names printed for metrics, methods and families);
1. ``data``: manifest, downloads, parsers of datasets and test sets;
2. ``systems``: the systems under test;
3. ``scoring``: quality scores of single outputs;
4. ``perturbations``: perturbed test sets and the pair scores of a perturbation (they read test sets, run
   Apertium round trips and score pairs, so they sit above data, systems and scoring; the statistics do
   not need them);
5. ``statistics``: Metrics I-III, bagging, the engine, rank statistics, Natural Robustness scores;
6. ``studies``: what each branch measures (units with a domain and a score);
7. ``outputs`` and ``report_check``: tables, figures, and the check of the rendered report;
8. ``config``, ``planning``, ``scheduler_fix`` and ``snakemake_messages``: the validation of the whole workflow config, which reads the names and
   limits of the layers it configures (the engine's leave-out labels, fairseq's reserved options), and the
   plan made from it before any job (the config completed and made canonical, the manifest checked; its
   paths rebased onto its ``run_directory``; ``run_owner``, which config a run directory's results belong to);
   ``scheduler_fix`` and ``snakemake_messages``, the changes the Snakefile makes to Snakemake (its scheduler, how it prints
   a bad input); nothing in the package
   imports them.

A module may import its own layer or a lower one. A new top-level module or sub-package must be given a
layer here, so the test fails on a module it cannot place.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE_ROOT = Path(__file__).resolve().parents[2] / "src" / "nlp_robustness"

#: Top-level module or sub-package of nlp_robustness -> its layer (low to high).
LAYERS: dict[str, int] = {
    "errors": 0, "fileio": 0, "sampling": 0, "display_names": 0,
    "data": 1,
    "systems": 2,
    "scoring": 3,
    "perturbations": 4,
    "statistics": 5,
    "studies": 6,
    "outputs": 7, "report_check": 7,
    "config": 8, "config_reference": 8, "config_schema": 8, "planning": 8, "run_directory": 8, "run_owner": 8, "scheduler_fix": 8, "snakemake_messages": 8,
}

#: (importing module, imported module) pairs that break the layering today, each with who removes it.
KNOWN_EXCEPTIONS: set[tuple[str, str]] = set()


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE_ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_modules(source: str, module: str, is_package: bool = False) -> list[tuple[int, str]]:
    """(line, module) of every nlp_robustness module the source of ``module`` imports, wherever the import
    statement is (module level, functions, branches)."""
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the importing package
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target == "nlp_robustness":  # ``from nlp_robustness import sampling``: the names are modules
                found += [(node.lineno, f"nlp_robustness.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, target))
    return [(line, name) for line, name in found if name == "nlp_robustness" or name.startswith("nlp_robustness.")]


def _layer(module: str) -> int | None:
    """The layer of an nlp_robustness module (the package itself: the lowest); None: not in :data:`LAYERS`."""
    parts = module.split(".")
    return 0 if len(parts) == 1 else LAYERS.get(parts[1])


MODULES = sorted(PACKAGE_ROOT.rglob("*.py"))


def _imports_of(path: Path) -> list[tuple[int, str]]:
    return _imported_modules(path.read_text(encoding="utf-8"), _module_name(path), path.name == "__init__.py")


def test_the_package_has_modules_to_check() -> None:
    assert len(MODULES) > 50 and PACKAGE_ROOT / "sampling.py" in MODULES


@pytest.mark.parametrize("path", MODULES, ids=lambda path: str(path.relative_to(PACKAGE_ROOT)))
def test_no_module_imports_a_higher_layer(path: Path) -> None:
    module = _module_name(path)
    own = _layer(module)
    assert own is not None, f"{module}: its top-level name has no layer in LAYERS (tests/unit/test_import_layers.py)"
    upward = []
    for line, imported in _imports_of(path):
        layer = _layer(imported)
        assert layer is not None, f"{module} line {line}: imports {imported}, whose top-level name has no layer in LAYERS"
        if layer > own and (module, imported) not in KNOWN_EXCEPTIONS:
            upward.append(f"{module} (layer {own}) line {line} imports {imported} (layer {layer})")
    assert not upward, "imports up a layer:\n" + "\n".join(upward)


def test_the_known_exceptions_still_exist() -> None:
    """An exception that was fixed must leave the allow-list, so it cannot come back unnoticed."""
    present = {
        (_module_name(path), imported) for path in MODULES for _, imported in _imports_of(path)
    }
    assert KNOWN_EXCEPTIONS <= present, f"fixed, remove from KNOWN_EXCEPTIONS: {sorted(KNOWN_EXCEPTIONS - present)}"


def test_the_checker_sees_imports_in_functions_relative_imports_and_package_imports() -> None:
    source = (
        "import os\n"
        "def f():\n    from nlp_robustness.studies import human\n"
        "from ..outputs import tables\n"
        "from nlp_robustness import sampling, errors\n"
        "import nlp_robustness.data.testsets\n"
    )
    found = sorted(_imported_modules(source, "nlp_robustness.statistics.fake"))
    assert found == [
        (3, "nlp_robustness.studies"), (4, "nlp_robustness.outputs"), (5, "nlp_robustness.errors"),
        (5, "nlp_robustness.sampling"), (6, "nlp_robustness.data.testsets"),
    ]
    assert [_layer(name) > _layer("nlp_robustness.statistics.fake") for _, name in found] == [True, True, False, False, False]
    assert _imported_modules("from . import base\n", "nlp_robustness.perturbations", is_package=True) == [(1, "nlp_robustness.perturbations")]
