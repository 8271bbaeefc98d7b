"""Check the workflow's HTML report (``snakemake --report``) in a real headless browser.

Snakemake 9's report is a single-file React app: every result is embedded in a global ``results`` object
(path -> mime type, caption HTML, ``data_uri``), the menu lists the keys of ``categories`` sorted with
``localeCompare``, and the landing page shows the workflow description beside the rule graph. Whether a
figure decodes, a caption's reStructuredText rendered without docutils errors or an HTML table shows in
its iframe is only known once a browser has run that app, so :func:`check_report` opens the report in
Debian's Chromium through Selenium (the system ChromeDriver: Selenium Manager never downloads anything),
shows every result the way the app shows it (its own ``app.setView``), collects every problem and raises
one :class:`ReportError` that names each broken result. It also saves a screenshot of the landing page.

Command line: ``python -m nlp_robustness.report_check results/report.html --screenshot results/report/screenshot.png``.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import contextlib
import struct
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from selenium import webdriver
from selenium.common.exceptions import JavascriptException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.chrome.webdriver import WebDriver

from nlp_robustness.errors import InputError
from nlp_robustness.fileio.atomic import atomic_write
from nlp_robustness.outputs.report_sections import TEXT_PX_KEY

__all__ = ["CHROMIUM", "CHROMEDRIVER", "WINDOW_SIZE", "WINDOW_SIZES", "LANDING_PAGE", "MIN_TEXT_PX", "TEXT_PX_KEY", "ReportCheck",
           "ReportError", "check_report", "data_uri_problem", "headless_chromium", "png_size", "png_text", "screenshot_path", "main"]

#: Debian's Chromium and its ChromeDriver (packages ``chromium`` and ``chromium-driver``; ``make system-packages``).
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
#: Width and height of the page in CSS pixels (device scale 1), hence of every screenshot.
WINDOW_SIZE = (1920, 1080)  # a common desktop: narrower, the report centres its wide opening page under the menu
#: Every window size the opening page is checked at (a screenshot each): a small laptop and a desktop.
WINDOW_SIZES: tuple[tuple[int, int], ...] = ((1366, 768), WINDOW_SIZE)
#: The smallest text, in CSS pixels, a figure of the opening page may show at a checked window size.
MIN_TEXT_PX = 10.0
#: What the landing page is called in failure messages (results are named by their path).
LANDING_PAGE = "landing page"

# Flags for an offline machine, also as root: no sandbox (root cannot have one), no GPU, no background
# network traffic (component updates, sync, QUIC probes), /tmp instead of a small /dev/shm.
_CHROMIUM_FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                   "--disable-background-networking", "--disable-component-update", "--disable-sync",
                   "--disable-dev-shm-usage", "--hide-scrollbars")
_POLL_SECONDS = 0.02
_MESSAGE_CHARACTERS = 300

# Docutils renders reStructuredText problems as <div class="system-message"> ("System Message: ERROR/3 ...").
_SYSTEM_MESSAGES_JS = """
function systemMessages(element) {
    const found = Array.from(element.querySelectorAll(".system-message")).map(
        (message) => message.textContent.replace(/\\s+/g, " ").trim());
    if (found.length === 0 && element.textContent.includes("System Message")) {
        found.push(element.textContent.replace(/\\s+/g, " ").trim());
    }
    return found;
}
"""

_APP_RENDERED_JS = "return typeof app !== 'undefined' && document.querySelector('#app nav li') !== null;"

# The landing page: the app opens on the rule graph and the workflow description, unless the report has
# metadata (then on those); the menu's "Workflow" item shows the former, as done here.
_LANDING_JS = _SYSTEM_MESSAGES_JS + """
const [timeoutMs, done] = arguments;
if (app.state.content !== "rulegraph") { app.setView({content: "rulegraph"}); }
const start = performance.now();
(function poll() {
    const description = document.querySelector("#app div.prose.max-w-lg");
    const graph = document.querySelector("#rulegraph canvas, #rulegraph svg");
    const images = description === null ? [] : Array.from(description.querySelectorAll("img"));
    const ready = description !== null && graph !== null && images.every((image) => image.complete);
    if (!ready && performance.now() - start < timeoutMs) { setTimeout(poll, 20); return; }
    done({
        description: description !== null,
        text: description === null ? "" : description.textContent.trim(),
        messages: description === null ? [] : systemMessages(description),
        imageSizes: images.map((image) => [image.getAttribute("src") || "",
                                           image.getBoundingClientRect().width, image.naturalWidth,
                                           (image.getAttribute("alt") || "").slice(0, 80),
                                           image.getBoundingClientRect().left]),
        brokenImages: images.filter((image) => !(image.complete && image.naturalWidth > 0)).map(
            (image) => (image.getAttribute("alt") || image.getAttribute("src") || "").slice(0, 80)),
        ruleGraph: graph !== null,
        // where the description starts, and where the menu beside it ends (the app centres an opening page
        // wider or taller than the window, cutting off its top or its left edge under the menu)
        box: description === null ? null : description.getBoundingClientRect().toJSON(),
        menuRight: Math.max(0, ...Array.from(document.querySelectorAll("#app nav")).map(
            (nav) => nav.getBoundingClientRect().right)),
    });
})();
"""

# The menu's sections as the app sorts them, the ones it shows, and every result in menu order
# (section, then subsection as sorted by the app, then as listed), each with its mime type; results that no
# section lists (the menu cannot reach them) come last.
_MENU_JS = """
const sorted = Object.keys(categories).sort((a, b) => a.localeCompare(b));
const shown = Array.from(document.querySelectorAll("#app nav li a span"))
    .map((span) => span.textContent).filter((text) => Object.hasOwn(categories, text));
const ordered = [];
for (const category of sorted) {
    for (const subcategory of Object.keys(categories[category]).sort((a, b) => a.localeCompare(b))) {
        for (const path of categories[category][subcategory]) { if (!ordered.includes(path)) { ordered.push(path); } }
    }
}
const unlisted = Object.keys(results).filter((path) => !ordered.includes(path));
return {sorted, shown, single: sorted.length === 1, unlisted,
        results: ordered.filter((path) => Object.hasOwn(results, path)).concat(unlisted).map(
            (path) => [path, results[path].mime_type])};
"""

# Show one result as a click on its buttons would (the app's own setView): its info (caption) in the side
# bar and, for an image or HTML page, the content beside it. Old iframes are marked first, so that the
# new one (the app recreates it for every view) is the one returned.
_SHOW_RESULT_JS = _SYSTEM_MESSAGES_JS + """
const [path, content, timeoutMs, done] = arguments;
const entry = results[path];
document.querySelectorAll("iframe").forEach((frame) => { frame.dataset.reportCheckSeen = "yes"; });
const view = {navbarMode: "resultinfo", resultPath: path};
if (content !== null) { view.content = content; view.contentPath = entry.data_uri; }
app.setView(view);
const start = performance.now();
(function poll() {
    const shown = app.state.resultPath === path && app.state.navbarMode === "resultinfo";
    const caption = document.querySelector("#app li.prose-invert");
    let element = null;
    if (content === "img") {
        element = Array.from(document.images).find(
            (image) => image.getAttribute("src") === entry.data_uri && image.complete) || null;
    } else if (content === "html") {
        element = Array.from(document.querySelectorAll("iframe")).find(
            (frame) => frame.getAttribute("src") === entry.data_uri && !frame.dataset.reportCheckSeen) || null;
    }
    const ready = shown && (!entry.caption || caption !== null) && (content === null || element !== null);
    if (!ready && performance.now() - start < timeoutMs) { setTimeout(poll, 10); return; }
    done({
        ready: ready,
        captionMessages: caption === null ? [] : systemMessages(caption),
        naturalWidth: content === "img" && element !== null ? element.naturalWidth : null,
        frame: content === "html" ? element : null,
    });
})();
"""

# Inside an HTML result's iframe, once its data: document has loaded.
_FRAME_LOADED_JS = "return location.protocol === 'data:' && document.readyState === 'complete';"
_TABLE_ROWS_JS = """
const rows = Array.from(document.querySelectorAll("table tr")).filter((row) => row.querySelector("td") !== null);
return {tables: document.querySelectorAll("table").length, dataRows: rows.length};
"""


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


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height of a PNG image (from its IHDR header); ``ValueError`` if ``data`` is not a PNG."""
    if len(data) < 24 or data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise ValueError("not a PNG image")
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def data_uri_problem(data_uri: str, mime_type: str) -> str | None:
    """What is wrong with a download's base64 data URI (as Snakemake embeds it), or None if nothing is.

    The payload must be valid base64 and not empty; a ``text/*`` result must also decode as text in the
    URI's charset (UTF-8 unless it names another) and hold more than white space.
    """
    header, comma, payload = data_uri.partition(",")
    if not header.startswith("data:") or not comma:
        return "its data URI is malformed"
    parameters = header[len("data:"):].split(";")
    if "base64" not in parameters:
        return "its data URI is not base64-encoded"
    try:
        content = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        return "its data URI does not decode (invalid base64)"
    if not content:
        return "its data URI holds no data (empty file)"
    if mime_type.startswith("text/"):
        charset = next((value.split("=", 1)[1] for value in parameters if value.startswith("charset=")), "utf-8")
        try:
            text = content.decode(charset)
        except (LookupError, UnicodeDecodeError) as error:
            return f"its data URI does not decode as {charset} text ({error})"
        if not text.strip():
            return "its data URI holds only white space"
    return None


@contextlib.contextmanager
def headless_chromium(window_size: tuple[int, int] = WINDOW_SIZE, chromium: Path = CHROMIUM,
                      chromedriver: Path = CHROMEDRIVER) -> Iterator[WebDriver]:
    """A headless Chromium under the system ChromeDriver, with a fresh profile in a temporary directory,
    a page of exactly ``window_size`` CSS pixels at device scale 1 (so screenshots have that size) and
    the browser log (``goog:loggingPrefs``) kept for :func:`check_report`; quit on leaving.

    Raises:
        FileNotFoundError: ``chromium`` or ``chromedriver`` is missing.
    """
    for binary, package in ((chromium, "chromium"), (chromedriver, "chromium-driver")):
        if not binary.is_file():
            raise FileNotFoundError(f"{binary} not found: install the Debian package {package} (make system-packages)")
    width, height = window_size
    with tempfile.TemporaryDirectory(prefix="report-check-chromium-", ignore_cleanup_errors=True) as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = str(chromium)
        for flag in (*_CHROMIUM_FLAGS, f"--window-size={width},{height}", f"--user-data-dir={profile}"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(service=Service(executable_path=str(chromedriver)), options=options)
        try:
            # The window includes the browser's frame; the page itself gets exactly the size asked for.
            driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                   {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
            yield driver
        finally:
            driver.quit()


def _javascript_errors(driver: WebDriver) -> list[str]:
    """Errors logged by the page since the last call (uncaught exceptions, console.error, failed loads)."""
    return [f"JavaScript error: {entry['message'][:_MESSAGE_CHARACTERS]}"
            for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"]


def _save_screenshot(driver: WebDriver, path: Path) -> tuple[int, int]:
    """Write the visible page to ``path`` as PNG, atomically (parents created); its width and height. The
    app fades its menu in: the picture waits (up to two seconds) until no animation or transition runs."""
    _wait_until(driver, "return document.getAnimations().every((animation) => animation.playState !== 'running');", 2.0)
    data = driver.get_screenshot_as_png()
    with atomic_write(path, "wb") as handle:
        handle.write(data)
    return png_size(data)


def _wait_until(driver: WebDriver, script: str, timeout: float) -> bool:
    """Run ``script`` until it returns true or ``timeout`` seconds passed (errors meanwhile count as false)."""
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(JavascriptException):
            if driver.execute_script(script):
                return True
        if time.monotonic() > deadline:
            return False
        time.sleep(_POLL_SECONDS)


def png_text(data: bytes) -> dict[str, str]:
    """The ``tEXt`` chunks of a PNG image (keyword -> text, Latin-1); ``ValueError`` if ``data`` is not a PNG."""
    png_size(data)
    texts, position = {}, 8
    while position + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[position:position + 8])
        if kind == b"tEXt":
            keyword, _, text = data[position + 8:position + 8 + length].partition(b"\0")
            texts[keyword.decode("latin-1")] = text.decode("latin-1")
        if kind == b"IEND":
            break
        position += 12 + length
    return texts


def _small_text(source: str, displayed_width: float, natural_width: int) -> float | None:
    """The displayed size (CSS px) of the smallest text of an image that records it (:data:`TEXT_PX_KEY`), else None."""
    header, comma, payload = source.partition(",")
    if not (header.startswith("data:image/png") and header.endswith(";base64") and comma and natural_width):
        return None
    try:
        recorded = png_text(base64.b64decode(payload)).get(TEXT_PX_KEY)
    except (binascii.Error, ValueError):
        return None
    return None if recorded is None else float(recorded) * displayed_width / natural_width


def _check_landing_page(driver: WebDriver, timeout: float, window_size: tuple[int, int] = WINDOW_SIZE) -> list[str]:
    state = driver.execute_async_script(_LANDING_JS, timeout * 1000)
    failures, layout = [], []
    if not state["description"]:
        failures.append("the workflow description is not shown")
    elif not state["text"]:
        failures.append("the workflow description is empty")
    failures += [f"the workflow description shows a docutils system message: {message[:_MESSAGE_CHARACTERS]}"
                 for message in state["messages"]]
    failures += [f"an image of the workflow description did not load: {source}" for source in state["brokenImages"]]
    if not state["ruleGraph"]:
        failures.append(f"the rule graph did not render within {timeout:g} s")
    box = state["box"]
    if box is not None and (box["top"] < -1 or box["left"] < state["menuRight"] - 1):
        layout.append(f"the workflow description is cut off: it starts at ({box['left']:.0f}, {box['top']:.0f}) px, "
                        f"under the window's top or the menu's right edge ({state['menuRight']:.0f} px)")
    for source, displayed_width, natural_width, alt, left in state["imageSizes"]:
        if left < state["menuRight"] - 1:
            layout.append(f"the image {alt!r} is cut off: it starts at {left:.0f} px, under the menu (right edge "
                            f"{state['menuRight']:.0f} px)")
        text_px = _small_text(source, displayed_width, natural_width)
        if text_px is not None and text_px < MIN_TEXT_PX:
            layout.append(f"the image {alt!r} shows text of {text_px:.1f} px (under {MIN_TEXT_PX:g} px): shown "
                            f"{displayed_width:.0f} px wide, drawn {natural_width} px wide")
    size = f"at {window_size[0]}x{window_size[1]}"
    return [f"{LANDING_PAGE}: {failure}" for failure in failures + [f"{size}, {problem}" for problem in layout]
            + _javascript_errors(driver)]


def _check_html_frame(driver: WebDriver, frame: Any, timeout: float) -> str | None:
    """What is wrong with the HTML page shown in ``frame``, or None: it must hold a table with a data row."""
    driver.switch_to.frame(frame)
    try:
        if not _wait_until(driver, _FRAME_LOADED_JS, timeout):
            return f"the HTML page did not load in its iframe within {timeout:g} s"
        rows = driver.execute_script(_TABLE_ROWS_JS)
    finally:
        driver.switch_to.default_content()
    if rows["tables"] == 0:
        return "the HTML page shows no <table>"
    if rows["dataRows"] == 0:
        return "the HTML page's table has no data row"
    return None


def _check_result(driver: WebDriver, path: str, mime_type: str, timeout: float) -> tuple[str, list[str]]:
    """Show one result and check it; how it was checked (``img``, ``html`` or ``download``) and its failures."""
    kind = "img" if mime_type.startswith("image/") else "html" if mime_type == "text/html" else "download"
    state = driver.execute_async_script(_SHOW_RESULT_JS, path, None if kind == "download" else kind, timeout * 1000)
    failures = [f"its caption shows a docutils system message: {message[:_MESSAGE_CHARACTERS]}"
                for message in state["captionMessages"]]
    if not state["ready"]:
        failures.append(f"the app did not show it within {timeout:g} s")
    elif kind == "img" and not state["naturalWidth"]:
        failures.append(f"the image ({mime_type}) did not load: naturalWidth 0, its data does not decode")
    elif kind == "html":
        failures.append(_check_html_frame(driver, state["frame"], timeout))
    else:
        data_uri = driver.execute_script("return results[arguments[0]].data_uri;", path)
        failures.append(data_uri_problem(data_uri, mime_type))
    failures += _javascript_errors(driver)
    return kind, [f"{path}: {failure}" for failure in failures if failure is not None]


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
    if not _wait_until(driver, _APP_RENDERED_JS, timeout):
        raise ReportError(report, [f"{LANDING_PAGE}: the report app did not render within {timeout:g} s",
                                   *(f"{LANDING_PAGE}: {error}" for error in _javascript_errors(driver))])


def check_report(report: Path, screenshot: Path, *, result_screenshot: Path | None = None, timeout: float = 30.0,
                 window_sizes: Sequence[tuple[int, int]] = WINDOW_SIZES, chromium: Path = CHROMIUM,
                 chromedriver: Path = CHROMEDRIVER) -> ReportCheck:
    """Open ``report`` (through file://) in headless Chromium and check that it renders; save screenshots.

    Checked: the React app renders within ``timeout`` seconds; at every window size of ``window_sizes``, the
    landing page shows a non-empty workflow description without docutils system messages and with every
    image loaded, and the rule graph, nothing of it under the menu or above the window, and no figure whose
    smallest text (recorded in the PNG, :data:`TEXT_PX_KEY`) is shown under :data:`MIN_TEXT_PX`; the menu
    lists every section; for every result (at the last size), its caption (shown in the side bar) has no
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
            failures += _check_landing_page(driver, timeout, window_size)
            path = screenshot_path(screenshot, window_size, index == len(window_sizes) - 1)
            shots.append((window_size, path))
            size = _save_screenshot(driver, path)
        menu = driver.execute_script(_MENU_JS)
        if not menu["single"] and menu["shown"] != menu["sorted"]:
            failures.append(f"{LANDING_PAGE}: the menu lists the sections {menu['shown']}, not {menu['sorted']}")
        failures += [f"{path}: no section of the menu lists it" for path in menu["unlisted"]]
        kinds = []
        for path, mime_type in menu["results"]:
            kind, result_failures = _check_result(driver, path, mime_type, timeout)
            kinds.append(kind)
            failures += result_failures
        images = [path for (path, _), kind in zip(menu["results"], kinds) if kind == "img"]
        written = result_screenshot if result_screenshot is not None and images else None
        if written is not None:
            _check_result(driver, images[0], "image/png", timeout)
            _save_screenshot(driver, written)
    failures = list(dict.fromkeys(failures))  # the same JavaScript error logged at every window size counts once
    if failures:
        raise ReportError(report, failures)
    return ReportCheck(report=report, results=len(kinds), images=kinds.count("img"), html_pages=kinds.count("html"),
                       downloads=kinds.count("download"), sections=tuple(menu["sorted"]), screenshot=screenshot,
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
