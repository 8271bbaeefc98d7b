"""What the paired tests (:mod:`.paired_tests`) can tell: how well B replicates know a bootstrap SE, and how many
units a difference would need to be detected.

A p-value of :func:`.paired_tests.difference` rests on the SE of the replicate differences, which B replicates
know only to a relative error of about 1 / sqrt(2 (B - 1)) (2 % at 1,000, 7 % at 100): :func:`se_precision`,
which the comparisons tables state when B is small. Where two rows are not told apart, :func:`units_to_detect`
says how many units per domain the observed difference would need at Holm's strictest step, alpha / m (normal
approximation, SE ~ 1/sqrt(n)): enough whatever the other pairs show.
"""

from __future__ import annotations

import math

from nlp_robustness.statistics.quantiles import normal_quantile

__all__ = [
    "se_precision",
    "units_to_detect",
]


def se_precision(resamples: int, confidence: float = 0.95) -> float:
    """The relative half-width of the ``confidence`` interval of a bootstrap SE from ``resamples`` replicates,
    z / sqrt(2 (B - 1)) (the SE of a normal SD): how well the B replicates know the SE behind each p-value."""
    if resamples < 2:
        return math.inf
    return float(normal_quantile((1 + confidence) / 2)) / math.sqrt(2 * (resamples - 1))


def units_to_detect(units_per_domain: float, estimate: float, standard_error: float, level: float,
                    power: float = 0.8) -> float:
    """Units per domain at which a two-sided test at ``level`` would detect ``estimate`` with ``power``:
    n * ((z_{1-level/2} + z_power) * SE / |estimate|)^2, the SE shrinking as 1/sqrt(n) (inf for no difference).
    The comparisons pass Holm's strictest level, alpha / m (module docstring)."""
    if not (math.isfinite(estimate) and math.isfinite(standard_error)) or standard_error <= 0:
        return math.nan
    if estimate == 0:
        return math.inf
    z = normal_quantile(1 - level / 2) + normal_quantile(power)
    return float(math.ceil(units_per_domain * (z * standard_error / abs(estimate)) ** 2))
