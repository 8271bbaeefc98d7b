"""Drive the headless Chromium that :mod:`nlp_robustness.report_check` opens the workflow's HTML report in.

Debian's Chromium under the system ChromeDriver, through Selenium (Selenium Manager never downloads anything),
with a fresh profile and the flags an offline machine needs; waiting for a script to hold, reading the errors
the page logged, and saving a screenshot of exactly the page's size. What is checked on the page is in
:mod:`nlp_robustness.outputs.report_page_checks`.
"""

from __future__ import annotations

import contextlib
import struct
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from selenium import webdriver
from selenium.common.exceptions import JavascriptException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.chrome.webdriver import WebDriver

from nlp_robustness.fileio.atomic import atomic_write

__all__ = ["CHROMIUM", "CHROMEDRIVER", "MESSAGE_CHARACTERS", "WINDOW_SIZE", "headless_chromium", "javascript_errors",
           "png_size", "save_screenshot", "wait_until"]

#: Debian's Chromium and its ChromeDriver (packages ``chromium`` and ``chromium-driver``; ``make system-packages``).
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
#: Width and height of the page in CSS pixels (device scale 1), hence of every screenshot.
WINDOW_SIZE = (1920, 1080)  # a common desktop: narrower, the report centres its wide opening page under the menu
#: The characters of a logged error or docutils message kept in a failure message.
MESSAGE_CHARACTERS = 300

# Flags for an offline machine, also as root: no sandbox (root cannot have one), no GPU, no background
# network traffic (component updates, sync, QUIC probes), /tmp instead of a small /dev/shm.
_CHROMIUM_FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                   "--disable-background-networking", "--disable-component-update", "--disable-sync",
                   "--disable-dev-shm-usage", "--hide-scrollbars")
_POLL_SECONDS = 0.02


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height of a PNG image (from its IHDR header); ``ValueError`` if ``data`` is not a PNG."""
    if len(data) < 24 or data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise ValueError("not a PNG image")
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@contextlib.contextmanager
def headless_chromium(window_size: tuple[int, int] = WINDOW_SIZE, chromium: Path = CHROMIUM,
                      chromedriver: Path = CHROMEDRIVER) -> Iterator[WebDriver]:
    """A headless Chromium under the system ChromeDriver, with a fresh profile in a temporary directory,
    a page of exactly ``window_size`` CSS pixels at device scale 1 (so screenshots have that size) and
    the browser log (``goog:loggingPrefs``) kept for :func:`javascript_errors`; quit on leaving.

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


def javascript_errors(driver: WebDriver) -> list[str]:
    """Errors logged by the page since the last call (uncaught exceptions, console.error, failed loads)."""
    return [f"JavaScript error: {entry['message'][:MESSAGE_CHARACTERS]}"
            for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"]


def save_screenshot(driver: WebDriver, path: Path) -> tuple[int, int]:
    """Write the visible page to ``path`` as PNG, atomically (parents created); its width and height. The
    app fades its menu in: the picture waits (up to two seconds) until no animation or transition runs."""
    wait_until(driver, "return document.getAnimations().every((animation) => animation.playState !== 'running');", 2.0)
    data = driver.get_screenshot_as_png()
    with atomic_write(path, "wb") as handle:
        handle.write(data)
    return png_size(data)


def wait_until(driver: WebDriver, script: str, timeout: float) -> bool:
    """Run ``script`` until it returns true or ``timeout`` seconds passed (errors meanwhile count as false)."""
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(JavascriptException):
            if driver.execute_script(script):
                return True
        if time.monotonic() > deadline:
            return False
        time.sleep(_POLL_SECONDS)
