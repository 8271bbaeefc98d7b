"""The scipy-free quantiles equal scipy.stats' bit for bit, on many values and at the edges."""

import numpy as np
import pytest
from scipy import stats

from nlp_robustness.statistics.quantiles import normal_quantile, student_t_quantile


def _probabilities() -> list[float]:
    rng = np.random.default_rng(29)
    grid = [1e-300, 1e-100, 1e-20, 1e-10, 1e-5, 0.001, 0.01, 0.025, 0.05, 0.1, 0.2, 0.5, 0.8, 0.9, 0.95, 0.975,
            0.99, 0.995, 0.999, 1 - 1e-10, 1 - 1e-16, np.nextafter(1.0, 0.0), np.nextafter(0.0, 1.0)]
    confidences = [(1 + confidence) / 2 for confidence in (0.5, 0.8, 0.9, 0.95, 0.99, 0.999)]
    return [float(value) for value in [*grid, *confidences, *rng.uniform(0, 1, 2000), *rng.uniform(0.9, 1, 500)]]


def _bits(value: float) -> bytes:
    return np.float64(value).tobytes()


def test_student_t_quantile_equals_scipy_bit_for_bit() -> None:
    degrees = [1, 2, 3, 4, 5, 7, 9, 10, 19, 29, 30, 49, 99, 199, 999, 10**6, 0.5, 2.5, 1e-3, np.int64(24), float("inf")]
    probabilities = _probabilities()
    for df in degrees:
        for probability in probabilities[:: 1 if df in (1, 9, 19, 99) else 7]:
            ours, theirs = student_t_quantile(probability, df), stats.t.ppf(probability, df)
            assert type(ours) is type(theirs), (probability, df)
            assert _bits(ours) == _bits(theirs), (probability, df, ours, theirs)


def test_normal_quantile_equals_scipy_bit_for_bit() -> None:
    for probability in _probabilities():
        ours, theirs = normal_quantile(probability), stats.norm.ppf(probability)
        assert type(ours) is type(theirs), probability
        assert _bits(ours) == _bits(theirs), (probability, ours, theirs)


@pytest.mark.parametrize("probability", [0.0, 1.0, -0.5, 1.5, float("nan")])
def test_edges_follow_scipy(probability: float) -> None:
    assert _bits(student_t_quantile(probability, 9)) == _bits(stats.t.ppf(probability, 9))
    assert _bits(normal_quantile(probability)) == _bits(stats.norm.ppf(probability))
    assert _bits(student_t_quantile(0.975, 0)) == _bits(stats.t.ppf(0.975, 0))
    assert _bits(student_t_quantile(0.975, -1)) == _bits(stats.t.ppf(0.975, -1))


def test_known_values() -> None:
    assert float(student_t_quantile(0.975, 9)) == pytest.approx(2.2621571627, abs=1e-9)
    assert float(normal_quantile(0.975)) == pytest.approx(1.9599639845, abs=1e-9)
    assert float(student_t_quantile(0.5, 4)) == 0.0 and not np.signbit(student_t_quantile(0.5, 4))
