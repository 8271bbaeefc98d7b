"""One truth across a run's tables: every printed verdict, interval and Holm p-value says the same thing.

The workflow names a winner only where a paired test separates it. Three things on a page can say whether a pair is
separated: the Holm-adjusted p-value, the difference's interval (printed Holm-adjusted, so that it excludes 0
exactly when the adjusted p is below the level) and the verdict or ``separated`` column. :func:`check_tables`
reads every CSV under ``results/tables`` of a run and returns one message per row where they disagree:

* the interval excludes 0 but the Holm p is not below the level, or the other way round;
* the verdict (or ``separated``) says separated where the Holm p is not below the level, or the other way round;
* a difference that is zero, or zero up to floating-point noise (:data:`NUMERICAL_ZERO` of the estimates' scale),
  is separated or has a Holm p below the level.

A CSV that has a Holm column (any column whose name contains ``holm``) must be one of the known layouts
(:data:`LAYOUTS`, matched by its columns, not its path): a new table that prints Holm p-values in another layout is
reported as unchecked, so it cannot escape the check. :func:`check_run` adds the profile's claims
(:func:`nlp_robustness.outputs.profile_claims.check_claims`: every sentence of the reading against the verdict rows
it names). ``make run`` runs it on the default run; the end-to-end tests run it on the shared small run and on the
worked own-data configs; ``tests/unit/test_verdict_check.py`` plants each kind of contradiction.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["LAYOUTS", "NUMERICAL_ZERO", "Layout", "check_frame", "check_run", "check_tables", "main"]

#: A difference within this share of its estimates' scale (or of 1, for estimates near 0) is zero: rows computed
#: from the same scores in another order of summation differ by about 1e-15 relative.
NUMERICAL_ZERO = 1e-9
#: Verdicts that do not separate a pair.
NOT_SEPARATED = ("not distinguishable",)


@dataclass(frozen=True)
class Layout:
    """Where a table keeps one tested difference: its estimate, Holm-adjusted interval, Holm p and (optionally) its
    verdict or boolean ``separated`` column, and the estimates the difference is taken of (for its scale)."""

    name: str
    difference: str
    low: str
    high: str
    holm_p: str
    decision: str | None = None
    estimates: tuple[str, ...] = ()

    def matches(self, columns: Sequence[str]) -> bool:
        needed = {self.difference, self.low, self.high, self.holm_p} | ({self.decision} if self.decision else set())
        return needed <= set(columns)


#: The table layouts that print a Holm p (first match wins).
LAYOUTS: tuple[Layout, ...] = (
    Layout("paired comparisons", "difference", "lo", "hi", "p_holm", "verdict", ("estimate_a", "estimate_b")),
    Layout("corpus comparisons", "difference", "lo", "hi", "p_holm", "separated"),
    Layout("tau differences", "difference", "lo", "hi", "p_holm", None, ("tau_a", "tau_b")),
    Layout("perturbation means (beta2 - beta1)", "beta2_minus_beta1", "beta2_minus_beta1_lo", "beta2_minus_beta1_hi",
           "p_holm", None, ("beta1", "beta2")),
)


def _decision(value: object) -> bool | None:
    """A verdict or ``separated`` cell as separated (True) or not (False); None when empty."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or str(value) == "":
        return None
    text = str(value)
    if text in ("True", "False"):
        return text == "True"
    return text not in NOT_SEPARATED


def check_frame(frame: pd.DataFrame, layout: Layout, level: float, where: str) -> list[str]:
    """The rows of one table where its verdict, interval and Holm p disagree (module docstring)."""
    problems = []
    columns = [column for column in layout.estimates if column in frame.columns]
    for index, row in frame.iterrows():
        holm_p = pd.to_numeric(pd.Series([row[layout.holm_p]]), errors="coerce").iloc[0]
        estimate = pd.to_numeric(pd.Series([row[layout.difference]]), errors="coerce").iloc[0]
        if not (np.isfinite(holm_p) and np.isfinite(estimate)):
            continue
        low, high = (float(pd.to_numeric(pd.Series([row[column]]), errors="coerce").iloc[0]) for column in (layout.low, layout.high))
        line = f"{where}, line {index + 2}"
        significant = holm_p < level
        if math.isclose(holm_p, level, rel_tol=1e-9):
            continue  # on the boundary the interval's end is 0 up to rounding: neither reading is wrong
        if np.isfinite(low) and np.isfinite(high):
            excludes = low > 0 or high < 0
            if excludes != significant:
                problems.append(f"{line}: interval [{low:.4g}, {high:.4g}] {'excludes' if excludes else 'includes'} 0 "
                                f"but Holm p = {holm_p:.4g} is {'not ' if not significant else ''}below {level:g}")
        if layout.decision and layout.decision in frame.columns:
            decided = _decision(row[layout.decision])
            if decided is not None and decided != significant:
                problems.append(f"{line}: {layout.decision} '{row[layout.decision]}' with Holm p = {holm_p:.4g} "
                                f"({'below' if significant else 'not below'} {level:g})")
        scale = max([1.0] + [abs(float(value)) for value in pd.to_numeric(row[columns], errors="coerce") if np.isfinite(value)])
        if abs(estimate) <= NUMERICAL_ZERO * scale and significant:
            problems.append(f"{line}: a zero difference ({estimate:.3g}) separated at Holm p = {holm_p:.3g}")
    return problems


def check_tables(tables: Path, level: float) -> list[str]:
    """Every disagreement in the CSVs under ``tables`` (a run's ``results/tables``), and every CSV with a Holm
    column of no known layout."""
    problems = []
    for path in sorted(tables.rglob("*.csv")):
        header = pd.read_csv(path, nrows=0).columns
        if not any("holm" in str(column).lower() for column in header):
            continue
        where = str(path.relative_to(tables.parent.parent)) if tables.parent.parent in path.parents else str(path)
        layout = next((layout for layout in LAYOUTS if layout.matches(header)), None)
        if layout is None:
            problems.append(f"{where}: a Holm column in a layout the check does not know ({', '.join(map(str, header))})")
            continue
        problems += check_frame(pd.read_csv(path, keep_default_na=False, na_values=[""]), layout, level, where)
    return problems


def check_run(run_directory: Path, level: float) -> list[str]:
    """:func:`check_tables` on ``run_directory/results/tables`` and the profile's claims, where the run has a
    profile."""
    problems = check_tables(run_directory / "results" / "tables", level)
    try:
        from nlp_robustness.outputs.profile_claims import check_claims
    except ImportError:  # pragma: no cover - the profile's claims arrive with their module
        return problems
    return problems + check_claims(run_directory)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m nlp_robustness.outputs.verdict_check RUN_DIRECTORY [--level 0.05]``: exit 1 and print every
    disagreement, 0 when every table and the profile's reading agree with the tests."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_directory", type=Path)
    parser.add_argument("--level", type=float, default=0.05, help="the tests' level, 1 - uncertainty.confidence")
    arguments = parser.parse_args(argv)
    problems = check_run(arguments.run_directory, arguments.level)
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print(f"{arguments.run_directory}: every verdict, interval and Holm p of its tables agree")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
