"""Check the workflow's HTML report (``snakemake --report``) in a real headless browser.

Snakemake 9's report is a single-file React app (:mod:`nlp_robustness.outputs.report_page_checks`). Whether a
figure decodes, a caption's reStructuredText rendered without docutils errors or an HTML table shows in
its iframe is only known once a browser has run that app, so :func:`check_report` opens the report in
Debian's Chromium through Selenium (:mod:`nlp_robustness.outputs.report_browser`), shows every result the way
the app shows it (its own ``app.setView``), collects every problem and raises one :class:`ReportError` that
names each broken result. It also saves a screenshot of the landing page.

Command line: ``python -m nlp_robustness.report_check results/report.html --screenshot results/report/screenshot.png``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.webdriver import WebDriver

from nlp_robustness.errors import InputError
from nlp_robustness.outputs.report_browser import (
    CHROMEDRIVER, CHROMIUM, WINDOW_SIZE, headless_chromium, javascript_errors, save_screenshot, wait_until)
from nlp_robustness.outputs.report_page_checks import (
    APP_RENDERED_JS, LANDING_PAGE, check_landing_page, check_menu, check_result)

__all__ = ["WINDOW_SIZES", "ReportCheck", "ReportError", "check_report", "screenshot_path", "main"]

#: Every window size the opening page is checked at (a screenshot each): a small laptop and a desktop.
WINDOW_SIZES: tuple[tuple[int, int], ...] = ((1366, 768), WINDOW_SIZE)


class ReportError(InputError):
    """The report does not render as it should; ``failures`` holds one line per problem, each starting
    with the result path at fault (or ``landing page``)."""

    def __init__(self, report: Path, failures: Sequence[str]) -> None:
        self.report = report
        self.failures = tuple(failures)
        lines = "\n".join(f"  {failure}" for failure in self.failures)
        super().__init__(f"{report}: the report does not render as it should ({len(self.failures)} problem(s)):\n{lines}")


@dataclass(frozen=True)
class ReportCheck:
    """What :func:`check_report` checked in a report that passed."""

    report: Path
    #: Results embedded in the report, and how each was checked: images shown in the app, HTML pages shown
    #: in its iframe, and downloads (CSV and every other type) decoded from their data URI.
    results: int
    images: int
    html_pages: int
    downloads: int
    #: The menu's sections (category names) in the order the menu lists them.
    sections: tuple[str, ...]
    screenshot: Path
    #: Width and height of the landing-page screenshot in pixels.
    screenshot_size: tuple[int, int]
    #: The screenshot of the first image result, when one was asked for and the report has an image.
    result_screenshot: Path | None = None
    #: Window size -> landing-page screenshot, for every size checked (``screenshot`` is the last one's).
    screenshots: tuple[tuple[tuple[int, int], Path], ...] = ()


def screenshot_path(screenshot: Path, window_size: tuple[int, int], last: bool) -> Path:
    """Where the landing page at ``window_size`` is saved: ``screenshot`` for the last size checked, else
    ``<stem>-<width>x<height>.png`` beside it."""
    return screenshot if last else screenshot.with_name(f"{screenshot.stem}-{window_size[0]}x{window_size[1]}{screenshot.suffix}")


def _open_report(driver: WebDriver, report: Path, window_size: tuple[int, int], timeout: float) -> None:
    """Load the report in a page of ``window_size``; ReportError if its app does not render."""
    width, height = window_size
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
    driver.get(report.resolve().as_uri())
    if not wait_until(driver, APP_RENDERED_JS, timeout):
        raise ReportError(report, [f"{LANDING_PAGE}: the report app did not render within {timeout:g} s",
                                   *(f"{LANDING_PAGE}: {error}" for error in javascript_errors(driver))])


def check_report(report: Path, screenshot: Path, *, result_screenshot: Path | None = None, timeout: float = 30.0,
                 window_sizes: Sequence[tuple[int, int]] = WINDOW_SIZES, chromium: Path = CHROMIUM,
                 chromedriver: Path = CHROMEDRIVER) -> ReportCheck:
    """Open ``report`` (through file://) in headless Chromium and check that it renders; save screenshots.

    Checked: the React app renders within ``timeout`` seconds; at every window size of ``window_sizes``, the
    landing page shows a non-empty workflow description without docutils system messages and with every
    image loaded, and the rule graph, nothing of it under the menu or above the window, and no figure whose
    smallest text (recorded in the PNG, :data:`~nlp_robustness.outputs.report_sections.TEXT_PX_KEY`) is shown
    under :data:`~nlp_robustness.outputs.report_page_checks.MIN_TEXT_PX`; the menu lists every section; for
    every result (at the last size), its caption (shown in the side bar) has no
    docutils system message, an image shown by the app loads (``naturalWidth > 0``), an HTML page shown in
    the app's iframe holds a ``<table>`` with a data row, and any other result (CSV, ...) is a download whose
    base64 data URI decodes to content; no JavaScript error is logged meanwhile (each is charged to the page
    or result being shown). A PNG of the landing page at each size is written (:func:`screenshot_path`:
    ``screenshot`` for the last size; atomically, parents created) and, if ``result_screenshot`` is given,
    one of the first image result in menu order.

    Raises:
        ReportError: one or more checks failed; every failure is listed, each naming the result at fault.
        FileNotFoundError: ``report``, ``chromium`` or ``chromedriver`` is missing.
    """
    report = Path(report)
    if not report.is_file():
        raise FileNotFoundError(f"{report}: no such report (make it with snakemake --report {report})")
    failures: list[str] = []
    shots = []
    with headless_chromium(window_sizes[-1], chromium, chromedriver) as driver:
        driver.set_script_timeout(timeout + 10)
        for index, window_size in enumerate(window_sizes):
            _open_report(driver, report, window_size, timeout)
            failures += check_landing_page(driver, timeout, window_size)
            path = screenshot_path(screenshot, window_size, index == len(window_sizes) - 1)
            shots.append((window_size, path))
            size = save_screenshot(driver, path)
        results, sections, menu_failures = check_menu(driver)
        failures += menu_failures
        kinds = []
        for path, mime_type in results:
            kind, result_failures = check_result(driver, path, mime_type, timeout)
            kinds.append(kind)
            failures += result_failures
        images = [path for (path, _), kind in zip(results, kinds) if kind == "img"]
        written = result_screenshot if result_screenshot is not None and images else None
        if written is not None:
            check_result(driver, images[0], "image/png", timeout)
            save_screenshot(driver, written)
    failures = list(dict.fromkeys(failures))  # the same JavaScript error logged at every window size counts once
    if failures:
        raise ReportError(report, failures)
    return ReportCheck(report=report, results=len(kinds), images=kinds.count("img"), html_pages=kinds.count("html"),
                       downloads=kinds.count("download"), sections=tuple(sections), screenshot=screenshot,
                       screenshot_size=size, result_screenshot=written, screenshots=tuple(shots))


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: check a report, print what was checked; exit status 1 (message on stderr) if it fails."""
    parser = argparse.ArgumentParser(prog="python -m nlp_robustness.report_check", description=__doc__.split("\n\n")[0])
    parser.add_argument("report", type=Path, help="the report made by snakemake --report (a single HTML file)")
    parser.add_argument("--screenshot", type=Path, required=True, help="PNG of the landing page to write")
    parser.add_argument("--result-screenshot", type=Path, help="PNG of the first image result to write (optional)")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for each view (default 30)")
    arguments = parser.parse_args(argv)
    started = time.monotonic()
    try:
        check = check_report(arguments.report, arguments.screenshot, result_screenshot=arguments.result_screenshot,
                             timeout=arguments.timeout)
    except (ReportError, FileNotFoundError, WebDriverException) as error:
        print(f"report check failed: {error}", file=sys.stderr)
        return 1
    print(f"{check.report}: {check.results} results render ({check.images} images, {check.html_pages} HTML pages, "
          f"{check.downloads} downloads) in {len(check.sections)} sections; screenshot {check.screenshot} "
          f"({check.screenshot_size[0]}x{check.screenshot_size[1]}); {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
