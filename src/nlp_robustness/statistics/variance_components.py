"""How much of a row's score variance lies between domains: a one-way random-effects decomposition.

Pooled Var and COV (Metrics I and II) of unit scores mix two things: how far the domains' mean scores
lie apart, and how spread the unit scores are *within* each domain. For a bounded score (sentence BLEU,
a 0/100 accuracy) the within-domain spread is tied to the mean, so a better system can look less
"consistent" only because its scores sit nearer the bound. The decomposition separates the two parts
with the one-way random-effects model

    y_ij = mu + b_i + e_ij,    b_i ~ (0, sigma2_b) (domain i),    e_ij ~ (0, sigma2_w) (unit j of domain i),

and reports the between-domain variance sigma2_b, its SD, the within-domain variance sigma2_w, its SD,
and the between share sigma2_b / (sigma2_b + sigma2_w) (the intraclass correlation).

**Estimator: the method of moments (the ANOVA estimator), not a REML fit.** With k domains of n_i units
(N in all), domain means ybar_i and grand mean ybar:

    MSB = sum_i n_i (ybar_i - ybar)^2 / (k - 1),      MSW = sum_ij (y_ij - ybar_i)^2 / (N - k),
    n0  = (N - sum_i n_i^2 / N) / (k - 1),
    sigma2_w = MSW,      sigma2_b = max(0, (MSB - MSW) / n0).

It is closed-form and exact (the same number on every machine, no optimiser, no convergence warning or
start value), it costs one pass over the scores (thousands of rows per leave-one-out pool), and it needs
no extra dependency. statsmodels' ``MixedLM`` (REML) gives the same estimates on balanced data whenever
the ANOVA estimate is not truncated; on unbalanced data the two differ a little, both being consistent.
MSW is unbiased for sigma2_w and (MSB - MSW) / n0 unbiased for sigma2_b; truncating a negative estimate
at 0 (the domains' means agree better than their units' spread predicts) makes sigma2_b biased upwards
when it is near 0, as any estimator kept in the parameter space is. The share is NaN when both parts
are 0 (every score equal).

The SD of the domain means (ddof = 1) is reported beside it: what one reads off a table of per-domain
means. Its square estimates sigma2_b + sigma2_w / n (balanced case), so it overstates the between part
when domains hold few units.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from nlp_robustness.errors import InputError

__all__ = ["VarianceComponents", "variance_components"]


@dataclass(frozen=True)
class VarianceComponents:
    """The decomposition of one set of unit scores by domain (see the module docstring)."""

    between_variance: float
    within_variance: float
    domain_mean_sd: float
    domains: int
    units: int

    @property
    def between_sd(self) -> float:
        return math.sqrt(self.between_variance)

    @property
    def within_sd(self) -> float:
        return math.sqrt(self.within_variance)

    @property
    def between_share(self) -> float:
        """sigma2_b / (sigma2_b + sigma2_w), in [0, 1]; NaN when both are 0."""
        total = self.between_variance + self.within_variance
        return self.between_variance / total if total > 0 else math.nan


def variance_components(scores: ArrayLike, domains: ArrayLike, where: str = "scores") -> VarianceComponents:
    """The method-of-moments decomposition of ``scores`` (one per unit) by ``domains`` (one label per unit).

    A domain of a single unit adds to the between part only; the within part needs at least one domain
    of two units or more.

    Raises:
        InputError: ``scores`` and ``domains`` differ in length, a score is not finite, there are fewer
            than two domains, or no domain has two units (``where`` names the study and pool).
    """
    values = np.asarray(scores, dtype=np.float64)
    labels = np.asarray(domains)
    if values.ndim != 1 or labels.shape != values.shape:
        raise InputError(f"{where}: {values.size} scores but {labels.size} domain labels")
    if not np.isfinite(values).all():
        raise InputError(f"{where}: a score is not a finite number; the variance decomposition needs every score")
    _, codes = np.unique(labels, return_inverse=True)
    codes = codes.reshape(-1)
    counts = np.bincount(codes).astype(np.float64)
    n_domains, n_units = counts.size, values.size
    if n_domains < 2:
        raise InputError(f"{where}: {n_domains} domain(s); between- and within-domain variance need at least 2 domains")
    if n_units <= n_domains:
        raise InputError(
            f"{where}: every domain has a single unit; the within-domain variance needs a domain of at least 2 units")
    means = np.bincount(codes, weights=values) / counts
    grand_mean = values.mean()
    mean_square_between = float(np.sum(counts * (means - grand_mean) ** 2)) / (n_domains - 1)
    mean_square_within = float(np.sum((values - means[codes]) ** 2)) / (n_units - n_domains)
    n0 = (n_units - float(np.sum(counts**2)) / n_units) / (n_domains - 1)
    return VarianceComponents(
        between_variance=max(0.0, (mean_square_between - mean_square_within) / n0),
        within_variance=mean_square_within,
        domain_mean_sd=float(np.std(means, ddof=1)),
        domains=n_domains,
        units=n_units,
    )
