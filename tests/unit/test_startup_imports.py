"""The most frequent jobs start without the heavy modules they do not use (issue 29: start-up must not dominate a job).

Each ``script:`` job runs in a fresh interpreter that imports the script's top-level imports before any work. For the
scripts that run most often in the default run (per-row statistics, sentence scores, tables, perturbation scores,
translation and import of hypotheses, blocks, downloads), a fresh interpreter executes exactly those imports and the
test lists which heavy modules got loaded: none of scipy (scipy.stats alone takes about 0.8 s; the statistics import
scipy.special only when they compute an interval), matplotlib, the model libraries or scikit-learn; translation and
downloads also start without pandas.
benchmarks/bench_startup.py times the gain.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]

#: Loaded by no frequent job at start-up: the statistics take their quantiles from scipy.special when they need them
#: (statistics/quantiles.py); figures, models and classifiers belong to their own jobs.
HEAVY = ("scipy", "scipy.stats", "scipy.optimize", "matplotlib", "torch", "transformers", "spacy", "sentence_transformers",
         "sklearn", "fairseq")

#: Script -> modules beyond HEAVY that its start-up must not load.
FREQUENT_SCRIPTS: dict[str, tuple[str, ...]] = {
    "robustness_statistics.py": (),
    "score_sentences.py": (),
    "robustness_tables.py": (),
    "perturbation_scores.py": (),
    "study_blocks.py": (),
    "robustness_comparisons.py": (),
    "attack_references.py": (),
    "testset_means.py": (),
    "perturb_testset.py": (),
    "perturbation_sample.py": (),
    "translate.py": ("pandas",),
    "fetch_download.py": ("pandas",),
}

PROBE = """
import json, sys
import snakemake.script
exec(compile(sys.argv[1], "imports", "exec"), {})
print(json.dumps(sorted(name for name in json.loads(sys.argv[2]) if name in sys.modules)))
"""


def loaded_modules(imports: str, modules: tuple[str, ...]) -> list[str]:
    """Which of ``modules`` a fresh interpreter has loaded after ``import snakemake.script`` and ``imports``."""
    environment = {**os.environ, "PYTHONPATH": str(REPOSITORY / "src")}
    completed = subprocess.run([sys.executable, "-c", PROBE, imports, json.dumps(modules)], env=environment,
                               cwd=REPOSITORY, capture_output=True, text=True, check=False)
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout.strip().splitlines()[-1])


def top_level_imports(script: Path) -> str:
    """The script's top-level import statements: what its job imports before any work."""
    tree = ast.parse(script.read_text(encoding="utf-8"))
    return "\n".join(ast.unparse(node) for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom)))


@pytest.mark.parametrize("script", sorted(FREQUENT_SCRIPTS))
def test_frequent_jobs_start_without_heavy_modules(script: str) -> None:
    imports = top_level_imports(REPOSITORY / "scripts" / script)
    assert "nlp_robustness" in imports  # the script is still one of the package's thin scripts
    assert loaded_modules(imports, HEAVY + FREQUENT_SCRIPTS[script]) == []


def test_the_engine_and_its_uncertainty_start_without_scipy_stats() -> None:
    imports = "\n".join(f"import nlp_robustness.{module}" for module in (
        "statistics.engine", "statistics.pools", "statistics.blocks", "statistics.pool_uncertainty", "statistics.resampling",
        "statistics.replicate_statistics", "statistics.percentile_intervals", "statistics.paired_tests", "statistics.power",
        "statistics.comparisons", "statistics.rankings", "studies.registry", "outputs.tables"))
    assert loaded_modules(imports, HEAVY) == []


def test_the_probe_sees_a_heavy_import() -> None:
    # The check can fail: importing scipy.stats on purpose is seen.
    assert loaded_modules("from scipy import stats", ("scipy.stats", "matplotlib")) == ["scipy.stats"]


def test_an_interval_imports_scipy_special_only_when_computed() -> None:
    imports = "from nlp_robustness.statistics.quantiles import student_t_quantile"
    assert loaded_modules(imports, ("scipy", "scipy.stats")) == []
    assert loaded_modules(imports + "\nstudent_t_quantile(0.975, 9)", ("scipy.special", "scipy.stats")) == ["scipy.special"]


def test_the_apertium_and_hypotheses_kinds_start_without_heavy_modules() -> None:
    # What a translate_apertium or import_hypotheses job loads on top of scripts/translate.py.
    imports = "import nlp_robustness.systems.kinds.apertium\nimport nlp_robustness.systems.kinds.hypotheses"
    assert loaded_modules(imports, HEAVY + ("pandas",)) == []
