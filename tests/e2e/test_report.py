"""The workflow's HTML report renders in a real headless Chromium: every figure loads, every table shows in
its iframe, no caption shows a docutils error, and the menu lists the sections in reading order.

The report is made once (``snakemake --report``) from the session's shared ``finished_run`` of
tests/config/small.yaml, into its results/report.html as ``make run`` does.
"""

from __future__ import annotations

import json
import re
import subprocess
from html import escape as html_escape
from pathlib import Path

import pytest
import yaml
from PIL import Image

from nlp_robustness.outputs.report_browser import CHROMEDRIVER, CHROMIUM, WINDOW_SIZE
from nlp_robustness.outputs.report_sections import (
    DATA,
    DOMAINS,
    HUMAN,
    NATURAL,
    PROFILE,
    SECTIONS,
    SENTIMENT,
    WORD_ORDER,
)
from nlp_robustness.planning import prepare_config
from nlp_robustness.report_check import ReportCheck, check_report
from nlp_robustness.studies.plan import study_plan
from tests.e2e.workflow_runner import REPOSITORY, run_workflow

HUMAN_STUDIES = ("wmt21-mqm", "wmt22-de-en", "wmt22-ja-en")

pytestmark = [pytest.mark.e2e, pytest.mark.apertium]
needs_chromium = pytest.mark.skipif(
    not (CHROMIUM.is_file() and CHROMEDRIVER.is_file()),
    reason=f"needs Chromium and ChromeDriver ({CHROMIUM}, {CHROMEDRIVER}: make system-packages)")


@pytest.fixture(scope="module")
def made_report(finished_run: Path) -> subprocess.CompletedProcess[str]:
    """`snakemake --report results/report.html` in the finished run, as ``make run`` makes it."""
    config = yaml.safe_load((finished_run / "config.yaml").read_text(encoding="utf-8"))
    result = run_workflow(finished_run, config, "--report", str(finished_run / "results" / "report.html"))
    assert result.returncode == 0, result.stdout[-3000:]
    return result


@pytest.fixture(scope="module")
def report(made_report: subprocess.CompletedProcess[str], finished_run: Path) -> Path:
    return finished_run / "results" / "report.html"


@pytest.fixture(scope="module")
def checked(report: Path) -> ReportCheck:
    """The report checked in the browser (a failure raises ReportError, naming every broken result)."""
    return check_report(report, report.parent / "report" / "screenshot.png")


@needs_chromium
def test_every_result_renders(checked: ReportCheck) -> None:
    assert checked.images >= 1
    assert checked.html_pages >= 1  # tables are shown as HTML tables, checked for a data row
    assert checked.results == checked.images + checked.html_pages + checked.downloads


@needs_chromium
def test_screenshot_is_a_png_of_the_window(checked: ReportCheck, report: Path) -> None:
    assert checked.screenshot == report.parent / "report" / "screenshot.png"
    with Image.open(checked.screenshot) as image:
        assert (image.format, image.size) == ("PNG", WINDOW_SIZE)


@needs_chromium
def test_menu_lists_the_sections_in_reading_order(checked: ReportCheck) -> None:
    assert set(checked.sections) <= set(SECTIONS), checked.sections
    assert checked.sections == tuple(section for section in SECTIONS if section in checked.sections)
    assert checked.sections[0] == SECTIONS[0]  # the robustness profile comes first


def test_snakemake_report_bundles_tables_and_figures(made_report: subprocess.CompletedProcess[str], report: Path,
                                                     finished_run: Path) -> None:
    assert "ERROR/" not in made_report.stdout  # reStructuredText caption errors are only printed, not raised
    html = report.read_text(encoding="utf-8")
    # every table and figure the workflow marks for the report, each with its caption; tables as HTML (the
    # report shows HTML inline, a CSV only as a download)
    methods = ("pool", "bagging", "design_bagging")
    listed = [
        *(f"results/tables/paper/{metric}/robustness_{method}.html" for metric in ("bleu", "chrf") for method in methods),
        "results/tables/paper/bleu/testset_means.html", "results/tables/paper/chrf/testset_means.html",
        *(f"results/tables/{study}/corpus_{table}.html" for study in ("paper", "wmt22-de-fr") for table in ("scores", "comparisons")),
        "results/tables/datasets.html", "results/tables/models.html",
        *(f"results/tables/sentiment/robustness_{method}.html" for method in methods), "results/tables/sentiment/accuracy.html",
        *(f"results/tables/human/{study}/{score}/robustness_{method}.html" for study in HUMAN_STUDIES
          for score in ("human", "bleu", "chrf") for method in methods),
        *(f"results/tables/human/{study}/{table}.html" for study in HUMAN_STUDIES for table in ("rankings", "pairwise", "agreement")),
        *(f"results/tables/human/{study}/domain_means.html" for study in HUMAN_STUDIES[1:]),
        "results/tables/human/wmt22-de-en/bleu-all/robustness_pool.html",
        *(f"results/figures/{branch}/gamma_curves.png" for branch in ("paper/bleu", "paper/chrf", "sentiment",
                                                                       *(f"human/{study}" for study in HUMAN_STUDIES))),
        *(f"results/tables/perturbations/word_order/{metric}/{table}.html" for metric in ("bleu", "chrf", "levenshtein")
          for table in ("means", "robustness_pool")),
        *(f"results/figures/perturbations/word_order/bleu/{figure}.png"
          for figure in ("robust_vs_faithful", "beta_heatmaps", "scores_vs_alpha_and_length", "function_similarity", "gamma_curves")),
        *(f"results/tables/natural_robustness/{table}.html" for table in ("scores", "perturbation_changes", "robustness_pool")),
        *(f"results/figures/natural_robustness/{figure}.png" for figure in ("scores", "gamma_curves")),
        *(f"results/tables/profile/{group}{table}.html" for group in ("mt", "mt-wmt22-de-fr", "sentiment", *HUMAN_STUDIES)
          for table in ("", "_kendall")),
        *(f"results/figures/profile/{figure}.png" for figure in ("mt", "mt-wmt22-de-fr", "sentiment", *HUMAN_STUDIES, "overview")),
    ]
    for path in listed:
        assert path in html, path
        if path.endswith(".html"):
            assert (finished_run / path).with_suffix(".csv").is_file(), path  # the CSV is still written beside it
    # the report's categories are its numbered sections (listed alphabetically, so in reading order), each
    # table or figure under its branch's section, nothing offered as a CSV download
    categories = json.loads(re.search(r"var categories = (\{.*\});", html).group(1))
    assert set(categories) <= set(SECTIONS), sorted(categories)
    assert {PROFILE, DOMAINS, SENTIMENT, HUMAN, WORD_ORDER, NATURAL, DATA} <= set(categories)
    assert reported_section(categories, "results/figures/profile/overview.png") == PROFILE
    reported = {path: (section, subsection) for section, subsections in categories.items()
                for subsection, paths in subsections.items() for path in paths}
    assert all(path.endswith((".html", ".png")) for path in reported), sorted(reported)
    assert set(categories[DOMAINS]) == {f"{study}: {metric}" for study in ("paper", "wmt22-de-fr") for metric in ("bleu", "chrf", "corpus scores")}
    assert reported["results/tables/paper/chrf/testset_means.html"] == (DOMAINS, "paper: chrf")
    assert reported["results/tables/datasets.html"][0] == reported["results/tables/models.html"][0] == DATA
    assert reported["results/tables/human/wmt21-mqm/bleu/robustness_pool.html"] == (HUMAN, "wmt21-mqm: scored by bleu")
    assert reported["results/tables/human/wmt22-ja-en/rankings.html"] == (HUMAN, "wmt22-ja-en: rankings")
    assert reported["results/tables/perturbations/word_order/levenshtein/means.html"] == (WORD_ORDER, "levenshtein")
    assert reported["results/figures/natural_robustness/gamma_curves.png"][0] == NATURAL
    assert reported["results/figures/sentiment/gamma_curves.png"][0] == SENTIMENT
    captions = [path.name for path in (REPOSITORY / "report").glob("*.rst") if path.name != "workflow.rst"]
    rules = "\n".join(path.read_text(encoding="utf-8") for path in (REPOSITORY / "rules").glob("*.smk"))
    # a rule names its caption, or the study plan names a study's (rendered into the generic rules' caption)
    config = yaml.safe_load((finished_run / "config.yaml").read_text(encoding="utf-8"))
    prepare_config(config, REPOSITORY)
    plan = study_plan(config, {section: section for section in ("domains", "sentiment", "human", "natural", "metric_robustness",
                                                                *config["perturbations"]["families"])})
    named = {f"{item.caption}.rst" for item in [*plan.tables.values(), *plan.gamma_figures.values()]}
    assert sorted(captions) == sorted(set(re.findall(r'caption="../report/([a-z_]+\.rst)"', rules)) | named)
    for caption in ("Robustness of sentiment classifiers", "Paper Table 8 analog", "Paper Figure 5 analog",
                    "(epsilon, gamma)-Robustness (paper Figure 4)", "Consistency across perturbations",
                    "Natural Robustness (paper 001)", "Consistency across perturbation types"):
        assert caption in html, caption


def reported_section(categories: dict, path: str) -> str:
    return next(section for section, subsections in categories.items() for paths in subsections.values() if path in paths)


def test_the_report_opens_with_the_profile_and_its_reading(report: Path, finished_run: Path) -> None:
    html = report.read_text(encoding="utf-8")
    description = json.loads(re.search(r"workflow_desc = (\".*?\");\n", html).group(1))
    document = json.loads((finished_run / "results/profile.json").read_text(encoding="utf-8"))
    assert "Robustness profile" in description and 'src="data:image/png;base64,' in description
    assert document["config_hash"] in description
    # the reading, escaped for reStructuredText and rendered back: the same text
    for paragraph in document["reading"]:
        assert html_escape(paragraph, quote=False) in re.sub(r"\s+", " ", description), paragraph[:80]
    assert "system-message" not in description
