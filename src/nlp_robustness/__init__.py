"""Measure the consistency (robustness) of NLP systems across test domains.

Logic for the Snakemake workflow of this repository: test-set parsers, machine translation adapters,
sentence scoring, the robustness metrics of Variance / Coefficient of Variation / (epsilon, gamma)-Robustness,
bagging and design bagging, and the table and figure writers. The package never imports snakemake.
"""

__version__ = "0.1.0"
