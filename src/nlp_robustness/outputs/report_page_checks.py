"""What :mod:`nlp_robustness.report_check` checks on the report's page once Chromium shows it.

Snakemake 9's report is a single-file React app: every result is embedded in a global ``results`` object
(path -> mime type, caption HTML, ``data_uri``), the menu lists the keys of ``categories`` sorted with
``localeCompare``, and the landing page shows the workflow description beside the rule graph. The scripts
here run in that app (its own ``app.setView`` shows a page as a click would) and report what they found;
the functions turn that into failure lines, each starting with the result path at fault (or
:data:`LANDING_PAGE`): the landing page (description, images, rule graph, layout, text size), the menu's
sections, and every result (caption, image, HTML table, download). The browser itself is driven by
:mod:`nlp_robustness.outputs.report_browser`.
"""

from __future__ import annotations

import base64
import binascii
import struct
from typing import Any

from selenium.webdriver.chrome.webdriver import WebDriver

from nlp_robustness.outputs.report_browser import MESSAGE_CHARACTERS, WINDOW_SIZE, javascript_errors, png_size, wait_until
from nlp_robustness.outputs.report_sections import TEXT_PX_KEY

__all__ = ["APP_RENDERED_JS", "LANDING_PAGE", "MIN_TEXT_PX", "check_landing_page", "check_menu", "check_result",
           "data_uri_problem", "png_text"]

#: The smallest text, in CSS pixels, a figure of the opening page may show at a checked window size.
MIN_TEXT_PX = 10.0
#: What the landing page is called in failure messages (results are named by their path).
LANDING_PAGE = "landing page"

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

#: True once the report's app has rendered its menu.
APP_RENDERED_JS = "return typeof app !== 'undefined' && document.querySelector('#app nav li') !== null;"

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


def check_landing_page(driver: WebDriver, timeout: float, window_size: tuple[int, int] = WINDOW_SIZE) -> list[str]:
    """The landing page's failures at ``window_size`` (the page already open at that size): the workflow
    description shown, not empty, without docutils system messages, its images loaded, the rule graph rendered,
    nothing cut off under the menu or above the window, no figure text under :data:`MIN_TEXT_PX`; then the
    JavaScript errors logged meanwhile."""
    state = driver.execute_async_script(_LANDING_JS, timeout * 1000)
    failures, layout = [], []
    if not state["description"]:
        failures.append("the workflow description is not shown")
    elif not state["text"]:
        failures.append("the workflow description is empty")
    failures += [f"the workflow description shows a docutils system message: {message[:MESSAGE_CHARACTERS]}"
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
            + javascript_errors(driver)]


def check_menu(driver: WebDriver) -> tuple[list[list[str]], list[str], list[str]]:
    """Every result in menu order ([path, mime type]; results no section lists last), the menu's sections as the
    app sorts them, and the failures: the menu shows the sections in another order, or a result no section lists."""
    menu = driver.execute_script(_MENU_JS)
    failures = []
    if not menu["single"] and menu["shown"] != menu["sorted"]:
        failures.append(f"{LANDING_PAGE}: the menu lists the sections {menu['shown']}, not {menu['sorted']}")
    failures += [f"{path}: no section of the menu lists it" for path in menu["unlisted"]]
    return menu["results"], menu["sorted"], failures


def _check_html_frame(driver: WebDriver, frame: Any, timeout: float) -> str | None:
    """What is wrong with the HTML page shown in ``frame``, or None: it must hold a table with a data row."""
    driver.switch_to.frame(frame)
    try:
        if not wait_until(driver, _FRAME_LOADED_JS, timeout):
            return f"the HTML page did not load in its iframe within {timeout:g} s"
        rows = driver.execute_script(_TABLE_ROWS_JS)
    finally:
        driver.switch_to.default_content()
    if rows["tables"] == 0:
        return "the HTML page shows no <table>"
    if rows["dataRows"] == 0:
        return "the HTML page's table has no data row"
    return None


def check_result(driver: WebDriver, path: str, mime_type: str, timeout: float) -> tuple[str, list[str]]:
    """Show one result and check it; how it was checked (``img``, ``html`` or ``download``) and its failures."""
    kind = "img" if mime_type.startswith("image/") else "html" if mime_type == "text/html" else "download"
    state = driver.execute_async_script(_SHOW_RESULT_JS, path, None if kind == "download" else kind, timeout * 1000)
    failures = [f"its caption shows a docutils system message: {message[:MESSAGE_CHARACTERS]}"
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
    failures += javascript_errors(driver)
    return kind, [f"{path}: {failure}" for failure in failures if failure is not None]
