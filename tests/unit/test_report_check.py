"""The report check in a real headless Chromium, on real reports of a tiny Snakemake workflow and doctored copies.

The tiny workflow (written into a temporary directory) has a figure made with matplotlib, an HTML table
and a CSV, each marked with ``report()`` and an .rst caption, and a ``report:`` description; Snakemake
runs it and makes the report. The check passes on that report; copies with a broken image, an HTML page
without table, an empty CSV or a JavaScript error, and a second report made from reStructuredText with
errors, fail naming what is broken.
"""

from __future__ import annotations

import base64
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PIL import Image

from nlp_robustness.errors import InputError
from nlp_robustness.outputs.report_browser import CHROMEDRIVER, CHROMIUM, WINDOW_SIZE, png_size
from nlp_robustness.outputs.report_page_checks import LANDING_PAGE, data_uri_problem, png_text
from nlp_robustness.outputs.report_sections import TEXT_PX_KEY
from nlp_robustness.report_check import WINDOW_SIZES, ReportError, check_report, main

SNAKEMAKE = Path(sys.executable).with_name("snakemake")
FIGURE = "results/figure.png"
HTML_TABLE = "results/table.html"
CSV_TABLE = "results/table.csv"

needs_chromium = pytest.mark.skipif(
    not (CHROMIUM.is_file() and CHROMEDRIVER.is_file()),
    reason=f"needs Chromium and ChromeDriver ({CHROMIUM}, {CHROMEDRIVER}: apt-get install chromium chromium-driver)",
)

SNAKEFILE = '''
report: "report/workflow.rst"


rule all:
    input:
        "results/figure.png",
        "results/table.html",
        "results/table.csv",


rule figure:
    output:
        report("results/figure.png", caption="report/figure.rst", category="2. Figures"),
    run:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        figure, axes = plt.subplots(figsize=(3, 2))
        axes.plot([0, 1, 2], [1, 0, 1])
        figure.savefig(output[0])
        plt.close(figure)


rule table:
    output:
        html=report("results/table.html", caption="report/table.rst", category="1. Tables"),
        csv=report("results/table.csv", caption="report/table.rst", category="1. Tables"),
    run:
        import pandas as pd

        table = pd.DataFrame({"system": ["a", "b"], "bleu": [12.5, 30.25]})
        table.to_html(output.html, index=False)
        table.to_csv(output.csv, index=False)
'''

CAPTIONS = {
    "workflow.rst": "A tiny workflow: one **figure** and one table.\n",
    "figure.rst": "A line that goes down and up again.\n",
    "table.rst": "BLEU of two systems.\n",
}
# reStructuredText errors docutils renders into the HTML as system messages.
BROKEN_CAPTIONS = {
    "workflow.rst": "A tiny workflow.\n\n.. no-such-directive::\n\n   text\n",
    "figure.rst": "A line that goes *down and up again.\n",
}


def snakemake(workdir: Path, *arguments: str) -> None:
    result = subprocess.run([str(SNAKEMAKE), "--cores", "1", *arguments], cwd=workdir, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:]


def write_captions(workdir: Path, captions: dict[str, str]) -> None:
    for name, text in captions.items():
        (workdir / "report" / name).write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The tiny workflow run once; its report ("good") and one made after breaking two captions ("broken_rst")."""
    workdir = tmp_path_factory.mktemp("tiny_workflow")
    (workdir / "Snakefile").write_text(SNAKEFILE, encoding="utf-8")
    (workdir / "report").mkdir()
    write_captions(workdir, CAPTIONS)
    snakemake(workdir)
    snakemake(workdir, "--report", "good.html")
    write_captions(workdir, BROKEN_CAPTIONS)
    snakemake(workdir, "--report", "broken_rst.html")
    return {"good": workdir / "good.html", "broken_rst": workdir / "broken_rst.html"}


def replace_payload(html: str, filename: str, payload: bytes) -> str:
    """``html`` with the base64 payload of the data URI of the result ``filename`` replaced by ``payload``."""
    pattern = re.compile(r"(data:[^\"]*;filename=" + re.escape(filename) + r";base64,)[A-Za-z0-9+/=]*")
    doctored, count = pattern.subn(lambda match: match.group(1) + payload.decode("ascii"), html)
    assert count == 1, f"{filename} appears {count} times"
    return doctored


def doctored_copy(report: Path, target: Path, edit) -> Path:
    text = report.read_text(encoding="utf-8")
    edited = edit(text)
    assert edited != text
    target.write_text(edited, encoding="utf-8")
    return target


def test_data_uri_problem_accepts_a_csv_and_binary_content() -> None:
    csv = base64.b64encode("system,bleu\na,12.5\n".encode()).decode()
    assert data_uri_problem(f"data:text/csv;charset=utf8;filename=t.csv;base64,{csv}", "text/csv") is None
    binary = base64.b64encode(b"%PDF-1.4\xff\xfe").decode()
    assert data_uri_problem(f"data:application/pdf;charset=utf8;filename=f.pdf;base64,{binary}", "application/pdf") is None


@pytest.mark.parametrize(("data_uri", "problem"), [
    ("data:text/csv;charset=utf8;filename=t.csv;base64,", "empty file"),
    ("data:text/csv;charset=utf8;filename=t.csv;base64,bm90!!", "invalid base64"),
    ("data:text/csv;charset=utf8;filename=t.csv,a,b", "not base64"),
    ("results/t.csv", "malformed"),
    ("data:text/csv;charset=utf8;filename=t.csv;base64," + base64.b64encode(b" \n ").decode(), "white space"),
    ("data:text/csv;charset=utf8;filename=t.csv;base64," + base64.b64encode(b"caf\xe9").decode(), "utf8 text"),
])
def test_data_uri_problem_names_what_is_wrong(data_uri: str, problem: str) -> None:
    assert problem in data_uri_problem(data_uri, "text/csv")


def test_png_size_reads_the_header(tmp_path: Path) -> None:
    Image.new("RGB", (37, 11)).save(tmp_path / "image.png")
    assert png_size((tmp_path / "image.png").read_bytes()) == (37, 11)
    with pytest.raises(ValueError, match="not a PNG"):
        png_size(b"GIF89a" + bytes(30))


def test_a_missing_browser_is_named(tmp_path: Path) -> None:
    report = tmp_path / "report.html"
    report.write_text("<html></html>", encoding="utf-8")
    with pytest.raises(FileNotFoundError, match="chromium"):
        check_report(report, tmp_path / "shot.png", chromium=tmp_path / "no-chromium")


@needs_chromium
def test_check_passes_on_a_real_report(reports: dict[str, Path], tmp_path: Path) -> None:
    screenshot = tmp_path / "report" / "nested" / "screenshot.png"
    first_image = tmp_path / "first_image.png"
    check = check_report(reports["good"], screenshot, result_screenshot=first_image)
    assert (check.results, check.images, check.html_pages, check.downloads) == (3, 1, 1, 1)
    assert check.sections == ("1. Tables", "2. Figures")
    assert check.screenshot_size == WINDOW_SIZE
    with Image.open(screenshot) as image:
        assert (image.format, image.size) == ("PNG", WINDOW_SIZE)
    with Image.open(first_image) as image:
        assert (image.format, image.size) == ("PNG", WINDOW_SIZE)
    assert check.result_screenshot == first_image
    # One per window size, written atomically: no temporary file left beside the screenshots.
    assert sorted(path.name for path in screenshot.parent.iterdir()) == ["screenshot-1366x768.png", "screenshot.png"]


@needs_chromium
def test_every_broken_result_is_named(reports: dict[str, Path], tmp_path: Path) -> None:
    def breaks_three_results(text: str) -> str:
        text = replace_payload(text, "figure.png", base64.b64encode(b"this is not a PNG image"))
        text = replace_payload(text, "table.html", base64.b64encode(b"<html><body><p>no table here</p></body></html>"))
        return replace_payload(text, "table.csv", b"")

    report = doctored_copy(reports["good"], tmp_path / "report.html", breaks_three_results)
    with pytest.raises(ReportError) as raised:
        check_report(report, tmp_path / "screenshot.png")
    assert isinstance(raised.value, InputError)
    failures = raised.value.failures
    assert [failure for failure in failures if failure.startswith(f"{FIGURE}: the image")] != []
    assert f"{HTML_TABLE}: the HTML page shows no <table>" in failures
    assert f"{CSV_TABLE}: its data URI holds no data (empty file)" in failures
    assert not [failure for failure in failures if failure.startswith(LANDING_PAGE)]
    assert all(path in str(raised.value) for path in (FIGURE, HTML_TABLE, CSV_TABLE))


@needs_chromium
def test_a_table_without_data_rows_fails(reports: dict[str, Path], tmp_path: Path) -> None:
    header_only = b"<html><body><table><thead><tr><th>system</th></tr></thead><tbody></tbody></table></body></html>"
    report = doctored_copy(reports["good"], tmp_path / "report.html",
                           lambda text: replace_payload(text, "table.html", base64.b64encode(header_only)))
    with pytest.raises(ReportError) as raised:
        check_report(report, tmp_path / "screenshot.png")
    assert raised.value.failures == (f"{HTML_TABLE}: the HTML page's table has no data row",)


@needs_chromium
def test_docutils_errors_in_captions_and_description_fail(reports: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(ReportError) as raised:
        check_report(reports["broken_rst"], tmp_path / "screenshot.png")
    failures = raised.value.failures
    assert [failure for failure in failures
            if failure.startswith(f"{LANDING_PAGE}: the workflow description shows a docutils system message")
            and "no-such-directive" in failure]
    assert [failure for failure in failures
            if failure.startswith(f"{FIGURE}: its caption shows a docutils system message") and "emphasis" in failure]
    # The other captions are fine.
    assert not [failure for failure in failures if failure.startswith((HTML_TABLE, CSV_TABLE))]


@needs_chromium
def test_a_javascript_error_fails(reports: dict[str, Path], tmp_path: Path) -> None:
    def add_failing_script(text: str) -> str:
        page, end = text.rsplit("</body>", 1)  # the page's own end (a library embeds the string too)
        return f"{page}<script>reportCheckNoSuchFunction();</script>\n</body>{end}"

    started = time.monotonic()
    report = doctored_copy(reports["good"], tmp_path / "report.html", add_failing_script)
    with pytest.raises(ReportError) as raised:
        check_report(report, tmp_path / "screenshot.png")
    assert [failure for failure in raised.value.failures
            if failure.startswith(f"{LANDING_PAGE}: JavaScript error") and "reportCheckNoSuchFunction" in failure]
    assert len(raised.value.failures) == 1
    assert time.monotonic() - started < 20  # no view waited for its timeout


@needs_chromium
def test_an_opening_page_cut_off_under_the_menu_fails(reports: dict[str, Path], tmp_path: Path) -> None:
    # the app centres its opening page vertically: a description taller than the window loses its top
    report = doctored_copy(reports["good"], tmp_path / "report.html", lambda text: text.replace(
        "one table.</p>", 'one table.</p><div style=\\"height: 3000px\\"></div>', 1))
    with pytest.raises(ReportError) as raised:
        check_report(report, tmp_path / "screenshot.png")
    assert [failure for failure in raised.value.failures
            if failure.startswith(f"{LANDING_PAGE}: at 1366x768, the workflow description is cut off")], raised.value.failures


@needs_chromium
def test_an_app_that_does_not_render_fails_within_the_timeout(reports: dict[str, Path], tmp_path: Path) -> None:
    report = doctored_copy(reports["good"], tmp_path / "report.html",
                           lambda text: text.replace("const root = ReactDOM.createRoot(", "const root = ReactDOM.noSuchFunction(", 1))
    with pytest.raises(ReportError) as raised:
        check_report(report, tmp_path / "screenshot.png", timeout=3)
    failures = raised.value.failures
    assert failures[0] == f"{LANDING_PAGE}: the report app did not render within 3 s"
    assert [failure for failure in failures if "noSuchFunction is not a function" in failure]
    assert not (tmp_path / "screenshot.png").exists()


@needs_chromium
def test_results_the_menu_cannot_reach_fail(reports: dict[str, Path], tmp_path: Path) -> None:
    # Without its categories the menu lists no section (``categories`` is then the <script id="categories">
    # element, which the browser exposes under its id).
    report = doctored_copy(reports["good"], tmp_path / "report.html",
                           lambda text: text.replace("var categories = ", "var no_categories = ", 1))
    with pytest.raises(ReportError) as raised:
        check_report(report, tmp_path / "screenshot.png")
    assert set(raised.value.failures) == {f"{path}: no section of the menu lists it" for path in (FIGURE, HTML_TABLE, CSV_TABLE)}


@needs_chromium
def test_command_line(reports: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    screenshot = tmp_path / "screenshot.png"
    assert main([str(reports["good"]), "--screenshot", str(screenshot)]) == 0
    assert "3 results render (1 images, 1 HTML pages, 1 downloads) in 2 sections" in capsys.readouterr().out
    assert screenshot.is_file()
    broken = doctored_copy(reports["good"], tmp_path / "broken.html",
                           lambda text: replace_payload(text, "figure.png", base64.b64encode(b"garbage")))
    assert main([str(broken), "--screenshot", str(screenshot)]) == 1
    assert f"{FIGURE}: the image (image/png) did not load" in capsys.readouterr().err


# ---- the workflow's own opening page (the robustness profile overview), at both window sizes ----------------

PROFILE_SNAKEFILE = '''
report: "report/workflow.rst"


rule all:
    input:
        "results/figure.png",


rule figure:
    output:
        report("results/figure.png", caption="report/figure.rst", category="1. Robustness profile"),
    run:
        import shutil

        shutil.copy("overview.png", output[0])
'''


def profile_axes() -> "pd.DataFrame":
    """An axes table shaped like results/profile/axes.tsv: MT systems and sentiment classifiers, every axis."""
    import pandas as pd

    from nlp_robustness.studies.profile_plan import AXES

    groups = {"mt": ["apertium-en-es-fr", "convs2s-tatoeba", "copy-source", "opus-mt-en-fr"],
              "sentiment": ["books", "dvd", "electronics", "kitchen_&_housewares"]}
    rows = []
    for group, systems in groups.items():
        for offset, axis in enumerate(AXES):
            for position, system in enumerate(systems):
                rank = (position + offset) % len(systems) + 1
                rows.append({"group": group, "system": system, "axis": axis, "mean_rank": float(rank), "rank": rank})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def profile_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real report whose opening page is the one the profile stage generates (overview figure and reading)."""
    from nlp_robustness.outputs.profile import plot_axes_overview, report_description

    workdir = tmp_path_factory.mktemp("profile_workflow")
    (workdir / "Snakefile").write_text(PROFILE_SNAKEFILE, encoding="utf-8")
    (workdir / "report").mkdir()
    plot_axes_overview(profile_axes(), {"mt": "MT systems", "sentiment": "Sentiment classifiers"},
                       {"png": workdir / "overview.png", "pdf": workdir / "overview.pdf"})
    introduction = (Path(__file__).resolve().parents[2] / "report" / "workflow.rst").read_text(encoding="utf-8")
    reading = ["MT systems: most robust on test domains convs2s-tatoeba, least robust copy-source."] * 4
    description = report_description(introduction.replace("snakemake.config", "{'systems': {}, 'mt_studies': {}}"),
                                     workdir / "overview.png", reading, "0123abcd")
    (workdir / "report" / "workflow.rst").write_text(description, encoding="utf-8")
    (workdir / "report" / "figure.rst").write_text("The overview figure.\n", encoding="utf-8")
    snakemake(workdir)
    snakemake(workdir, "--report", "report.html")
    return workdir / "report.html"


@needs_chromium
def test_the_profile_opening_page_is_whole_and_readable_at_both_window_sizes(profile_report: Path, tmp_path: Path) -> None:
    check = check_report(profile_report, tmp_path / "screenshot.png")
    assert [size for size, _ in check.screenshots] == list(WINDOW_SIZES)
    for size, path in check.screenshots:
        with Image.open(path) as image:
            assert image.size == size
    assert check.screenshots[0][1] == tmp_path / "screenshot-1366x768.png"


@needs_chromium
def test_a_figure_with_small_text_on_the_opening_page_fails(profile_report: Path, tmp_path: Path) -> None:
    # the same figure (its PNG records its smallest text) squeezed to 200 px wide: its text shows under 10 px
    assert float(png_text((profile_report.parent / "overview.png").read_bytes())[TEXT_PX_KEY]) > 10
    # the description's HTML sits in a JavaScript string of the report: its quotes may be escaped
    doctored = doctored_copy(profile_report, tmp_path / "report.html", lambda text: re.sub(
        r'alt=(\\?")Robustness profile', r'style=\1width: 200px\1 alt=\1Robustness profile', text, count=1))
    with pytest.raises(ReportError) as raised:
        check_report(doctored, tmp_path / "screenshot.png")
    small = [failure for failure in raised.value.failures if "shows text of" in failure]
    assert [failure for failure in small if failure.startswith(f"{LANDING_PAGE}: at 1366x768, the image")], raised.value.failures
    assert [failure for failure in small if failure.startswith(f"{LANDING_PAGE}: at 1920x1080, the image")], raised.value.failures
