"""Coverage of the tau interval, level and power of the metric-pair test of the meta-evaluation of metrics on
cross-domain consistency (statistics/metric_consistency.py), on simulated studies with a known truth.

**Generating parameters** (fixed, seed 53): 14 systems x 4 domains; the true quality of system s in domain d is
q[s, d] = a_s + c_d + t_s z[s, d] (level a_s ~ N(0, 0.5^2), domain difficulty c_d ~ N(0, 0.5^2), interaction z ~ N(0,
1) scaled by t_s ~ U(0.05, 0.6): the systems differ in consistency). Every simulated study draws 30 documents per domain
of 5 segments each:

* people: h = q[s, d] + u_doc (N(0, 0.3^2), shared by the systems) + e (N(0, 1));
* metrics A1 and A2 (track people): f(q[s, d]) + v_doc + e' with the monotone f(x) = exp(x / 1.5), each its own
  independent document effect (N(0, 0.3^2)) and noise (N(0, 1)): equal noise, the same transform;
* metric B (does not track): the system's mean quality mean_d q[s, d] plus its own domain profile t'_s z'[s, d]
  (fixed, independent of z) + its own document effect and noise: the same quality level, unrelated consistency.

**Estimand.** The population value of a measure is its value on the generating domain means (document effects and
noise have mean 0): for the interaction SD, interaction_sd of q (people) and of f(q) (A); for the between SD, the
SD (ddof 1) of the domain means (the nested ANOVA's between variance estimates that for fixed domains). The
estimand of a metric's tau is Kendall tau-b between the metric's population values and people's: it is not 1 for A
(f is not linear: exp stretches the better systems' spread), and it is the same for A1 and A2 (the null of the
paired test).

Sample taus are attenuated (noise in both sides' values pulls tau towards 0) and a replicate's tau is not centred
on the sample's, so percentile intervals (0.90 for A's between-SD tau) and basic ones (0.73 for A's interaction-SD
tau, 150 studies) missed nominal; the module uses the Wald interval with the bootstrap SE
(statistics/metric_agreement.py). Tolerance: three binomial SDs of a rate on 300 studies (0.038 at 0.95, 0.038 at
0.05). Measured with 300 studies and 200 resamples: printed by ``pytest -s`` and copied into the module docstring of
metric_consistency.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from nlp_robustness.statistics.metric_agreement import kendall_tau_b
from nlp_robustness.statistics.consistency_measures import interaction_sd
from nlp_robustness.statistics.metric_consistency import meta_evaluate

SYSTEMS = [f"system{index}" for index in range(14)]
DOMAINS, DOCUMENTS, SEGMENTS = 4, 30, 5
STUDIES, RESAMPLES, LEVEL = 300, 200, 0.05
MEASURES = ("between_sd", "interaction_sd")


def transform(values: np.ndarray) -> np.ndarray:
    return np.exp(values / 1.5)


@functools.cache
def parameters() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(53)
    n = len(SYSTEMS)
    quality = (rng.normal(0, 0.5, (n, 1)) + rng.normal(0, 0.5, (1, DOMAINS))
               + rng.uniform(0.05, 0.6, (n, 1)) * rng.normal(size=(n, DOMAINS)))
    other = quality.mean(axis=1, keepdims=True) + rng.uniform(0.05, 0.6, (n, 1)) * rng.normal(size=(n, DOMAINS))
    return {"human": quality, "A1": transform(quality), "A2": transform(quality), "B": other}


def population(measure: str, means: np.ndarray) -> np.ndarray:
    return interaction_sd(means) if measure == "interaction_sd" else np.std(means, axis=1, ddof=1)


def simulate(rng: np.random.Generator) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    domain = np.repeat(np.arange(DOMAINS), DOCUMENTS * SEGMENTS)
    document = np.repeat(np.arange(DOMAINS * DOCUMENTS), SEGMENTS)
    shape = (len(SYSTEMS), domain.size)
    scores = {name: means[:, domain] + rng.normal(0, 0.3, DOMAINS * DOCUMENTS)[document] + rng.normal(0, 1.0, shape)
              for name, means in parameters().items()}
    return scores, domain.astype(str), document.astype(str)


@functools.cache
def outcomes() -> dict[str, dict[str, float]]:
    rng = np.random.default_rng(2053)
    truth = {measure: {name: float(kendall_tau_b(population(measure, parameters()[name]), population(measure, parameters()["human"])))
                       for name in ("A1", "B")} for measure in MEASURES}
    counts = {measure: {"cover A": 0, "cover B": 0, "null p": 0, "null holm": 0, "power": 0, "tau A": 0.0} for measure in MEASURES}
    for study in range(STUDIES):
        scores, domains, documents = simulate(rng)
        result = meta_evaluate(scores, "human", domains, documents, SYSTEMS, None, dict.fromkeys(scores, True), RESAMPLES,
                               study, ("simulation",), measures=MEASURES)
        agreement = result.agreement.set_index(["metric", "measure"])
        pairs = result.metric_pairs.set_index(["measure", "metric_a", "metric_b"])
        for measure in MEASURES:
            found = counts[measure]
            for name, key in (("A1", "cover A"), ("B", "cover B")):
                row = agreement.loc[(name, measure)]
                found[key] += row["tau_lo"] <= truth[measure][name] <= row["tau_hi"]
            found["tau A"] += agreement.loc[("A1", measure), "tau"] / STUDIES
            null = pairs.loc[(measure, "A1", "A2")]
            found["null p"] += null["p"] < LEVEL
            found["null holm"] += bool(null["separated"])
            found["power"] += bool(pairs.loc[(measure, "A1", "B")]["separated"])
    rates = {measure: {key: (value if key == "tau A" else value / STUDIES) for key, value in found.items()}
             for measure, found in counts.items()}
    for measure in MEASURES:
        rates[measure] |= {"true tau A": truth[measure]["A1"], "true tau B": truth[measure]["B"]}
        print(f"\n{measure}: " + ", ".join(f"{key} {value:.3f}" for key, value in rates[measure].items()))
    return rates


def binomial_tolerance(rate: float) -> float:
    """Three binomial SDs of a rate measured on :data:`STUDIES` studies."""
    return 3 * math.sqrt(rate * (1 - rate) / STUDIES)


def test_tau_interval_covers_the_population_tau():
    for measure, rates in outcomes().items():
        assert 0.3 < rates["true tau A"] < 0.95, measure  # a tau the interval can miss on both sides
        for key in ("cover A", "cover B"):
            assert abs(rates[key] - 0.95) <= binomial_tolerance(0.95), (measure, key, rates[key])


def test_metric_pair_test_holds_its_level_under_the_null():
    for measure, rates in outcomes().items():
        assert rates["null p"] <= LEVEL + binomial_tolerance(LEVEL), (measure, rates["null p"])
        assert rates["null holm"] <= rates["null p"]


def test_metric_pair_test_separates_a_tracking_metric_from_an_unrelated_one():
    for measure, rates in outcomes().items():
        assert rates["power"] >= 0.8, (measure, rates["power"])
