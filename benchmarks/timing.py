"""Timing shared by the benchmark scripts (run as ``python benchmarks/<script>.py``: this folder is on the path)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

Result = TypeVar("Result")


def best_time(function: Callable[[], Result], repeats: int) -> tuple[float, Result]:
    """Smallest wall-clock time of ``repeats`` calls, and the result of the last call."""
    best = float("inf")
    for _ in range(max(repeats, 1)):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result
