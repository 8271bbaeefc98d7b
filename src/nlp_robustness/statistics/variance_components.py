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

**Documents.** Real test sets come in documents (a news story, a talk, an abstract), and the segments of a
document share its topic, register and difficulty: their scores are correlated. With unit ids alone, document
noise is counted as between-domain spread (a domain of 29 documents has a noisy mean even with 1,000
segments), which biases sigma2_b upward. Given the document of every unit, the nested model

    y_ijk = mu + b_i + c_ij + e_ijk,    c_ij ~ (0, sigma2_c) (document j of domain i),

is estimated by the nested ANOVA method of moments (Searle, Casella and McCulloch 1992, Section 3.6): with
G documents of n_ij units (n_i. in domain i) and the mean squares MSA (domains), MSB(A) (documents within
domains) and MSE (units within documents),

    E[MSE] = s2_e,   E[MSB(A)] = s2_e + k1 s2_c,   E[MSA] = s2_e + k2 s2_c + k3 s2_b,
    k1 = (N - sum_i sum_j n_ij^2 / n_i.) / (G - k),   k2 = (sum_i sum_j n_ij^2 / n_i. - sum_ij n_ij^2 / N) / (k - 1),
    k3 = (N - sum_i n_i.^2 / N) / (k - 1),

so s2_c = (MSB(A) - MSE) / k1 and s2_b = (MSA - MSE - k2 s2_c) / k3, each truncated at 0 when reported (the
untruncated s2_c enters s2_b, which keeps s2_b unbiased before its own truncation). The within-domain
variance reported is then s2_c + s2_e (a unit's spread about its domain's mean), so the share stays
s2_b over the total. The same function computes it for every bootstrap replicate from per-document sums
(:func:`nested_components`), a document drawn twice counting as two documents. Without documents (every
unit its own document, or no document larger than one unit) it is the one-way estimator above.

The SD of the domain means (ddof = 1) is reported beside it: what one reads off a table of per-domain
means. Its square estimates sigma2_b + sigma2_w / n (balanced case), so it overstates the between part
when domains hold few units.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from nlp_robustness.errors import InputError

__all__ = ["VarianceComponents", "document_sums", "nested_components", "variance_components"]


@dataclass(frozen=True)
class VarianceComponents:
    """The decomposition of one set of unit scores by domain (see the module docstring)."""

    between_variance: float
    within_variance: float
    domain_mean_sd: float
    domains: int
    units: int
    #: the variance between documents within domains (NaN without documents)
    document_variance: float = math.nan

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


def nested_components(weights: NDArray[np.float64], sizes: NDArray[np.float64], sums: NDArray[np.float64],
                      squares: NDArray[np.float64], document_domain: NDArray[np.int64], n_domains: int) -> dict[str, NDArray[np.float64]]:
    """The nested method-of-moments decomposition (module docstring) of every row of ``weights`` (B, G): how often
    each of G documents counts (1 for the data itself; bootstrap counts for replicates). ``sizes``, ``sums`` and
    ``squares``: each document's units, and the sum and sum of squares of its (centred) scores;
    ``document_domain``: each document's domain code (0..n_domains-1).

    Returns ``between_variance``, ``document_variance`` (both truncated at 0), ``within_variance`` (documents plus
    units within them), ``domain_means`` (B, n_domains), each (B,) but the last.
    """
    indicator = np.zeros((sizes.size, n_domains))
    indicator[np.arange(sizes.size), document_domain] = 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        per_document = np.where(sizes > 0, sums**2 / sizes, 0.0)
        domain_units = (weights * sizes) @ indicator  # n_i.
        domain_sums = (weights * sums) @ indicator
        total_units = domain_units.sum(axis=1)
        total_sum = domain_sums.sum(axis=1)
        documents = weights @ (sizes > 0).astype(np.float64)  # drawn documents with units (an empty one adds none)
        between_domains = np.nansum(np.where(domain_units > 0, domain_sums**2 / domain_units, 0.0), axis=1)
        documents_square = weights @ per_document
        sum_squares_a = between_domains - total_sum**2 / total_units
        sum_squares_b = documents_square - between_domains
        sum_squares_e = weights @ squares - documents_square
        mean_square_a = sum_squares_a / (n_domains - 1)
        mean_square_b = sum_squares_b / (documents - n_domains)
        mean_square_e = sum_squares_e / (total_units - documents)
        size_squares = np.where(domain_units > 0, ((weights * sizes**2) @ indicator) / domain_units, 0.0).sum(axis=1)
        k1 = (total_units - size_squares) / (documents - n_domains)
        k2 = (size_squares - (weights @ sizes**2) / total_units) / (n_domains - 1)
        k3 = (total_units - (domain_units**2).sum(axis=1) / total_units) / (n_domains - 1)
        document = (mean_square_b - mean_square_e) / k1
        between = (mean_square_a - mean_square_e - k2 * document) / k3
        means = domain_sums / domain_units
    document = np.maximum(document, 0.0)
    return {"between_variance": np.maximum(between, 0.0), "document_variance": document,
            "within_variance": np.maximum(mean_square_e, 0.0) + document, "domain_means": means}


def document_sums(scores: NDArray[np.float64], documents: NDArray[np.int64], n_documents: int) -> tuple[NDArray[np.float64], ...]:
    """Units, sum and sum of squares of the scores (centred on their mean, for precision) of every document."""
    centred = scores - scores.mean()
    return (np.bincount(documents, minlength=n_documents).astype(np.float64),
            np.bincount(documents, weights=centred, minlength=n_documents),
            np.bincount(documents, weights=centred * centred, minlength=n_documents))


def variance_components(scores: ArrayLike, domains: ArrayLike, where: str = "scores",
                        documents: ArrayLike | None = None) -> VarianceComponents:
    """The method-of-moments decomposition of ``scores`` (one per unit) by ``domains`` (one label per unit), and
    with ``documents`` (one label per unit, unique within its domain) the nested one that takes the documents'
    noise out of the between-domain part (module docstring).

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
    if documents is not None:
        document_codes = np.unique(np.char.add(np.char.add(labels.astype(str), "\x1f"), np.asarray(documents).astype(str)),
                                   return_inverse=True)[1].reshape(-1)
        n_documents = int(document_codes.max()) + 1
        if n_domains < n_documents < n_units:  # documents of several units, and several documents per domain somewhere
            document_domain = np.zeros(n_documents, dtype=np.int64)
            document_domain[document_codes] = codes
            nested = nested_components(np.ones((1, n_documents)), *document_sums(values, document_codes, n_documents),
                                       document_domain, n_domains)
            return VarianceComponents(
                between_variance=float(nested["between_variance"][0]), within_variance=float(nested["within_variance"][0]),
                domain_mean_sd=float(np.std(means, ddof=1)), domains=n_domains, units=n_units,
                document_variance=float(nested["document_variance"][0]),
            )
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
