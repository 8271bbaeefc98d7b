"""The sentiment study (paper Section 5, Tables 2, 4 and 6): cross-domain consistency of classifier accuracy.

One classifier (:mod:`nlp_robustness.systems.sentiment_classifier`) is trained per training domain of
the Amazon multi-domain reviews and tested on every configured test domain, and every Hugging Face model
of ``sentiment.models`` (:mod:`nlp_robustness.systems.hf_classifier`, trained elsewhere) is tested on
every review of every test domain (:func:`sentiment_classifiers` lists them all); robustness is the
consistency of its *domain-level* accuracies (one score per test domain, in percent), with each test
domain left out in turn, measured by the engine of :mod:`nlp_robustness.statistics.engine`:

* **Units.** With ``bagging_unit: review`` (the default) the study's units are a classifier's test
  reviews, scored 100 when predicted right and 0 when wrong, and a sample is the accuracy of every
  domain (engine aggregation ``domain``): the blocks of Algorithms 5 and 6 are drawn over the pooled test
  reviews, as the paper bags "sub-sampled test data ... each containing 60 % of the data". With
  ``bagging_unit: domain`` the units are the test domains themselves, scored by their accuracy
  (aggregation ``unit``), and blocks are drawn over domains.
* **Blocks** are drawn per classifier, since each classifier's own domain is tested on its own held-out
  split, and seeded by (seed, ``sentiment``, method, left-out domain): classifiers whose pools have the
  same size get blocks at the same positions.
* **COV** is sigma / mu (as in the MT tables). The paper's sentiment tables print 100 * Var / Mean
  under that name (Table 2, dvd: 100 * 2.04 / 64.33 = 3.17); every table says so in a note.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from nlp_robustness.errors import InputError
from nlp_robustness.statistics.pools import UNIT_COLUMNS
from nlp_robustness.statistics.study_design import StudyDesign, replicate_units_by_cluster, units_in_domains

__all__ = ["has_variance_components", "resampling_design", 
    "ACCURACY_COLUMNS",
    "BAGGING_UNITS",
    "accuracy_by_domain",
    "accuracy_summary",
    "aggregation_of",
    "read_predictions",
    "sentiment_classifiers",
    "sentiment_models",
    "unit_keys",
    "units",
    "units_of_predictions",
]

#: What the engine draws blocks of (see the module docstring).
BAGGING_UNITS = ("review", "domain")

#: Columns of a classifier's accuracy table (one row per test domain).
ACCURACY_COLUMNS = ("test_domain", "source", "reviews", "correct", "accuracy", "excluded_duplicates")


def sentiment_models(config: Mapping[str, Any]) -> list[str]:
    """The Hugging Face models of ``sentiment.models``, config order (none without a sentiment section)."""
    section = config.get("sentiment")
    return list(section.get("models") or {}) if section else []


def sentiment_classifiers(config: Mapping[str, Any]) -> list[str]:
    """The rows of the sentiment study: the TF-IDF classifier of every training domain (named after it),
    then every Hugging Face model of ``sentiment.models`` (config order); none without a sentiment section.

    Raises:
        InputError: A model is named like a training domain (naming ``sentiment.models.<name>``).
    """
    section = config.get("sentiment")
    if not section:
        return []
    domains = list(section["training"]["domains"])
    models = sentiment_models(config)
    for name in models:
        if name in domains:
            raise InputError(
                f"invalid configuration at key 'sentiment.models.{name}': '{name}' is a training domain, whose "
                "TF-IDF classifier has that name (sentiment.training.domains); give the model another name"
            )
    return domains + models


def read_predictions(path: str) -> pd.DataFrame:
    """A classifier's prediction table (written by the ``sentiment_evaluate`` rule)."""
    return pd.read_csv(path, sep="\t", dtype={"review_id": str, "test_domain": str}, keep_default_na=False)


def aggregation_of(bagging_unit: str) -> str:
    """The engine aggregation of a bagging unit: reviews make domain accuracies, domains are units themselves."""
    if bagging_unit not in BAGGING_UNITS:
        raise InputError(f"sentiment.bagging_unit must be one of {', '.join(BAGGING_UNITS)}, got {bagging_unit!r}")
    return "domain" if bagging_unit == "review" else "unit"


def units_of_predictions(predictions: pd.DataFrame, test_domains: Sequence[str], bagging_unit: str) -> pd.DataFrame:
    """The study's units of one classifier (:data:`.pools.UNIT_COLUMNS`), test domains in config order.

    ``review``: one unit per test review, score 100 (right) or 0 (wrong); ``domain``: one unit per test
    domain (its name is its id), score its accuracy in percent.
    """
    aggregation_of(bagging_unit)
    frames = []
    for domain in test_domains:
        selected = predictions[predictions["test_domain"] == domain]
        if selected.empty:
            raise InputError(f"no predictions for test domain {domain!r}")
        frames.append(pd.DataFrame({
            "domain": domain, "unit_id": selected["review_id"].astype(str).to_numpy(),
            "score": 100.0 * selected["correct"].to_numpy(dtype=float),
        }))
    units = pd.concat(frames, ignore_index=True)[list(UNIT_COLUMNS)]
    if bagging_unit == "domain":
        accuracy = units.groupby("domain", sort=False)["score"].mean()
        units = pd.DataFrame({"domain": accuracy.index, "unit_id": accuracy.index, "score": accuracy.to_numpy()})
    return units


def has_variance_components(options: Mapping[str, Any]) -> bool:
    """Whether the engine decomposes this study's unit scores into between- and within-domain variance.

    With ``bagging_unit: review`` a domain's accuracy is the mean of its 0/100 reviews, which decompose by
    domain; with ``domain`` each domain is one unit and there is no within-domain part.
    """
    return options["bagging_unit"] == "review"


def unit_keys(files: Mapping[str, str], domains: Sequence[str], options: Mapping[str, Any]) -> pd.DataFrame:
    """The unit keys of one classifier (``files["predictions"]``: its prediction table)."""
    return units(files, domains, "", "", options)[["domain", "unit_id"]]


def units(files: Mapping[str, str], domains: Sequence[str], row: str, score: str, options: Mapping[str, Any]) -> pd.DataFrame:
    """The units of one classifier (``files["predictions"]``), by ``options["bagging_unit"]``."""
    return units_of_predictions(read_predictions(files["predictions"]), domains, options["bagging_unit"])


def resampling_design(files: Mapping[str, str] | None, domains: Sequence[str], row: str, score: str,
                      options: Mapping[str, Any]) -> StudyDesign:
    """How the bootstrap draws one classifier's units: a review belongs to one test domain, so reviews are drawn
    within their domain. With ``bagging_unit: domain`` a unit is a domain's accuracy, so the reviews behind it are
    drawn in its place (replicate units: their domain means are those accuracies), each review its own cluster.
    ``files`` None (the plan, before any file exists): the reviews are not read."""
    if options["bagging_unit"] != "domain":
        return units_in_domains()
    if files is None:
        return replicate_units_by_cluster(None, crossed=False)
    reviews = units_of_predictions(read_predictions(files["predictions"]), domains, "review")
    return replicate_units_by_cluster(reviews.assign(cluster=reviews["domain"] + "\t" + reviews["unit_id"]), crossed=False)


def accuracy_by_domain(predictions: pd.DataFrame, test_domains: Sequence[str], excluded: Mapping[str, int]) -> pd.DataFrame:
    """One row per test domain (config order): source, reviews, correct, accuracy in percent, duplicates dropped."""
    rows = []
    for domain in test_domains:
        selected = predictions[predictions["test_domain"] == domain]
        if selected.empty:
            raise InputError(f"no predictions for test domain {domain!r}")
        correct = int(selected["correct"].sum())
        rows.append({
            "test_domain": domain, "source": selected["source"].iloc[0], "reviews": len(selected), "correct": correct,
            "accuracy": 100.0 * correct / len(selected), "excluded_duplicates": int(excluded.get(domain, 0)),
        })
    return pd.DataFrame(rows, columns=list(ACCURACY_COLUMNS))


def accuracy_summary(records: Sequence[Mapping[str, Any]], accuracies: Mapping[str, pd.DataFrame], test_domains: Sequence[str]) -> pd.DataFrame:
    """One row per classifier: its training record (sizes, chosen C, validation accuracy), then its accuracy
    in percent on every test domain (config order) and the mean over the cross-domain ones.

    ``records`` are the TF-IDF classifiers' ``training.json`` contents (key ``classifier`` names each);
    ``accuracies`` maps every classifier to its :func:`accuracy_by_domain` table. A classifier of
    ``accuracies`` without a record (a Hugging Face model, trained elsewhere) follows, in ``accuracies``
    order, with its training columns missing (every test domain is cross-domain for it).
    """
    rows = []
    named = {record["classifier"]: record for record in records}
    for name in [*named, *(name for name in accuracies if name not in named)]:
        record = named.get(name, {})
        table = accuracies[name].set_index("test_domain")
        cross = table[table["source"] == "cross-domain"]["accuracy"]
        rows.append({
            "classifier": name, "training_reviews": record.get("training_reviews"),
            "validation_reviews": record.get("validation_reviews"), "vocabulary": record.get("vocabulary_size"),
            "chosen_c": record.get("chosen_c", float("nan")), "validation_accuracy": record.get("validation_accuracy", float("nan")),
            **{domain: float(table.at[domain, "accuracy"]) for domain in test_domains},
            "cross_domain_mean": float(cross.mean()) if len(cross) else float("nan"),
        })
    summary = pd.DataFrame(rows)
    for column in ("training_reviews", "validation_reviews", "vocabulary"):  # counts stay integers beside a missing one
        summary[column] = summary[column].astype("Int64")
    return summary
