"""Measure the consistency (robustness) of NLP systems across test domains.

The logic behind the Snakemake workflow of this repository, in layers that follow the data:

* :mod:`~nlp_robustness.data`: dataset manifest, checksummed downloads, safe extraction, parsers;
* :mod:`~nlp_robustness.systems`: the systems under test (Apertium, fairseq ConvS2S, sentiment classifiers);
* :mod:`~nlp_robustness.scoring`: quality scores of single outputs (sentence BLEU, chrF);
* :mod:`~nlp_robustness.perturbations`: perturbation families, perturbed test sets and their pair scores;
* :mod:`~nlp_robustness.statistics`: Metrics I-III, bagging, the one robustness engine, rank statistics;
* :mod:`~nlp_robustness.studies`: what each branch measures, as units with a domain and a score;
* :mod:`~nlp_robustness.outputs`: paper-shaped tables and figures.

Beneath them all: ``errors``, ``fileio`` (atomic writes, tables) and ``sampling`` (every seeded generator
and nested sample); above them all: ``config`` (validation of the workflow config). No module imports a
higher layer (tests/unit/test_import_layers.py). The package never imports snakemake.
"""

__version__ = "0.1.0"
