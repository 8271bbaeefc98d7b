"""Sentiment classifiers of the sentiment study (paper Section 5): one per training domain of the Amazon reviews.

The paper does not name its classifier. We use a standard, well-kept one: TF-IDF word n-grams
(scikit-learn ``TfidfVectorizer``) and L2-regularised logistic regression (``liblinear``), with the
regularisation strength ``C`` chosen on the validation split. Choices made here, where the paper is
silent (documented in docs/paper-000-domains.md, tested in tests/unit/test_sentiment.py):

* **Validation split.** 15 % of a domain's reviews, drawn with a seed, stratified by label and *grouped
  by text*: the Blitzer data repeat some reviews verbatim within a domain (23 to 46 per domain in
  sorted_data_acl), and a copy on each side of the split would inflate validation accuracy.
* **Model selection.** Highest validation accuracy over the ``C`` grid; ties go to the smallest ``C``
  (strongest regularisation). The model kept is the one trained on the 85 %: the validation split is
  then the training domain's own *held-out* test domain. Its accuracy is the one used to choose ``C``
  among a handful of values, so it is slightly optimistic; it is labelled ``held-out`` in every output.
* **No test review seen in training.** A test review whose text equals a training or validation review
  of the classifier is dropped from the test domain (counted as ``excluded_duplicates``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import joblib
import numpy as np
import pandas as pd
from numpy.typing import NDArray

from nlp_robustness.data.reviews import REVIEW_COLUMNS
from nlp_robustness.errors import InputError
from nlp_robustness.fileio.atomic import atomic_write
from nlp_robustness.fileio.text_files import read_table
from nlp_robustness.sampling import block_size, rng_for

if TYPE_CHECKING:
    from sklearn.pipeline import Pipeline

__all__ = [
    "ClassifierSettings",
    "LABEL_CLASSES",
    "PREDICTION_COLUMNS",
    "SPLIT_COLUMNS",
    "TEST_SOURCES",
    "TrainedClassifier",
    "binary_labels",
    "predict_test_domains",
    "read_reviews",
    "review_documents",
    "split_validation",
    "train_classifier",
    "train_domain_classifier",
    "training_side",
    "write_pipeline",
]

#: Review labels and the class each is given.
LABEL_CLASSES: dict[str, int] = {"negative": 0, "positive": 1}

#: Where a test domain's reviews come from, relative to the classifier: its own validation split, the
#: training domain in another dataset, or another domain.
TEST_SOURCES = ("held-out", "in-domain", "cross-domain")

#: Columns of a classifier's split table: every review of its training domain and its side.
SPLIT_COLUMNS = ("review_id", "split")

#: Columns of a prediction table.
PREDICTION_COLUMNS = ("review_id", "test_domain", "source", "label", "predicted", "correct")


@dataclass(frozen=True)
class ClassifierSettings:
    """TF-IDF n-gram features and logistic regression, with ``C`` chosen from ``c_grid`` on validation.

    Attributes:
        fields: Review fields joined (by a line break) into the document a classifier reads.
        ngram_max: Word n-grams of length 1..ngram_max are features.
        min_df: A feature must occur in at least this many training documents.
        sublinear_tf: Use 1 + log(tf) instead of raw term frequency.
        c_grid: Inverse regularisation strengths tried, each trained on the training split.
        max_iter: Iteration limit of the liblinear solver.
    """

    fields: tuple[str, ...] = ("title", "review_text")
    ngram_max: int = 2
    min_df: int = 2
    sublinear_tf: bool = True
    c_grid: tuple[float, ...] = (0.01, 0.1, 1.0, 10.0, 100.0)
    max_iter: int = 1000

    @classmethod
    def from_config(cls, mapping: Mapping[str, Any]) -> "ClassifierSettings":
        """Settings from the config's ``sentiment.classifier`` section, every key given: the workflow's
        defaults are the schema's (filled into the config), never this class's.

        Raises:
            InputError: A key is missing (names it).
        """
        missing = [name for name in cls.__dataclass_fields__ if name not in mapping]
        if missing:
            raise InputError(f"sentiment.classifier lacks {', '.join(missing)} (the schema's defaults were not filled in)")
        values = dict(mapping)
        for key in ("fields", "c_grid"):
            if key in values:
                values[key] = tuple(values[key])
        return cls(**values)

    def as_dict(self) -> dict[str, Any]:
        return {key: list(value) if isinstance(value, tuple) else value for key, value in asdict(self).items()}


def review_documents(reviews: pd.DataFrame, fields: Sequence[str]) -> list[str]:
    """The text a classifier reads for each review: ``fields`` joined by a line break, empty ones skipped."""
    missing = [name for name in fields if name not in reviews.columns]
    if missing:
        raise InputError(f"review table lacks field(s) {', '.join(missing)} (known: {', '.join(reviews.columns)})")
    columns = [reviews[name].astype(str).tolist() for name in fields]
    return ["\n".join(part for part in parts if part) for parts in zip(*columns)]


def binary_labels(reviews: pd.DataFrame, source: str) -> NDArray[np.int64]:
    """Class of every review (negative 0, positive 1); any other label is an error naming the review."""
    unknown = ~reviews["label"].isin(list(LABEL_CLASSES))
    if unknown.any():
        first = reviews.loc[unknown].iloc[0]
        raise InputError(
            f"{source}: review {first['review_id']} has label {first['label']!r}; a sentiment classifier needs "
            f"{' or '.join(LABEL_CLASSES)} reviews"
        )
    return reviews["label"].map(LABEL_CLASSES).to_numpy(dtype=np.int64)


def read_reviews(path: str) -> pd.DataFrame:
    """A review table written by the ``prepare_dataset`` rule (all columns as strings)."""
    return read_table(path, REVIEW_COLUMNS, "review table")


def split_validation(documents: Sequence[str], labels: Sequence[int], fraction: float, seed: int, domain: str) -> NDArray[np.bool_]:
    """Seeded validation split, stratified by label and grouped by text; True marks a validation review.

    Reviews with identical text form one group, which goes wholly to one side; a group's stratum is
    the label of its first review. In each stratum ``round(fraction * groups)`` groups (half up, at
    least one, at most all but one) are drawn with the generator ``rng_for(seed, "validation", domain)``.

    Raises:
        InputError: A label has fewer than two distinct texts (nothing to split).
    """
    frame = pd.DataFrame({"text": list(documents), "label": np.asarray(labels)})
    group_of = frame.groupby("text", sort=False).ngroup().to_numpy()
    first = frame.drop_duplicates("text")  # one row per group, in group order
    rng = rng_for(seed, "validation", domain)
    validation_groups: list[NDArray[np.int64]] = []
    for label in sorted(first["label"].unique()):
        groups = np.flatnonzero(first["label"].to_numpy() == label)
        if groups.size < 2:
            raise InputError(f"domain {domain}: label {label} has {groups.size} distinct review text(s); cannot hold any out")
        taken = min(block_size(int(groups.size), fraction), groups.size - 1)
        validation_groups.append(rng.permutation(groups)[:taken])
    return np.isin(group_of, np.concatenate(validation_groups))


@dataclass
class TrainedClassifier:
    """A fitted classifier and how it was chosen."""

    pipeline: Pipeline
    chosen_c: float
    validation_accuracy: float
    selection: pd.DataFrame = field(repr=False)  # c, validation_accuracy, chosen (one row per C)
    vocabulary_size: int = 0


def train_classifier(
    train_documents: Sequence[str],
    train_labels: Sequence[int],
    validation_documents: Sequence[str],
    validation_labels: Sequence[int],
    settings: ClassifierSettings,
) -> TrainedClassifier:
    """Fit the TF-IDF vocabulary on the training split, one logistic regression per ``C``; keep the best on validation.

    The vectoriser sees the training split only; ties in validation accuracy go to the smallest ``C``.
    """
    # Here only: scikit-learn takes over a second to import, and the jobs that read reviews train nothing.
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline

    vectorizer = TfidfVectorizer(
        ngram_range=(1, settings.ngram_max), min_df=settings.min_df, sublinear_tf=settings.sublinear_tf,
        lowercase=True, dtype=np.float64,
    )
    train_features = vectorizer.fit_transform(train_documents)
    validation_features = vectorizer.transform(validation_documents)
    validation_truth = np.asarray(validation_labels)
    rows, models = [], []
    for c in sorted(settings.c_grid):
        model = LogisticRegression(C=c, solver="liblinear", max_iter=settings.max_iter, random_state=0)
        model.fit(train_features, train_labels)
        accuracy = float(np.mean(model.predict(validation_features) == validation_truth))
        rows.append({"c": float(c), "validation_accuracy": 100.0 * accuracy})
        models.append(model)
    selection = pd.DataFrame(rows)
    best = int(np.argmax(selection["validation_accuracy"].to_numpy()))  # first maximum = smallest C
    selection["chosen"] = selection.index == best
    return TrainedClassifier(
        pipeline=Pipeline([("tfidf", vectorizer), ("logistic_regression", models[best])]),
        chosen_c=float(selection.at[best, "c"]),
        validation_accuracy=float(selection.at[best, "validation_accuracy"]),
        selection=selection,
        vocabulary_size=len(vectorizer.vocabulary_),
    )


#: Attributes scikit-learn caches for the running process only: ``TfidfVectorizer._stop_words_id`` is
#: ``id(stop_words)``, a memory address, set on every fit and transform to skip re-validating the stop words.
PROCESS_CACHES: tuple[str, ...] = ("_stop_words_id",)


def write_pipeline(pipeline: Pipeline, path: str) -> None:
    """Write a fitted pipeline with joblib, atomically, byte for byte the same for the same fit.

    The process caches of :data:`PROCESS_CACHES` are removed from its steps first (in place): they hold a
    memory address that differs between runs, and without them scikit-learn merely validates again.
    """
    for _, step in pipeline.steps:
        for attribute in PROCESS_CACHES:
            if hasattr(step, attribute):
                delattr(step, attribute)
    with atomic_write(path, mode="wb") as handle:
        joblib.dump(pipeline, handle)


def train_domain_classifier(
    reviews: pd.DataFrame, domain: str, *, validation_fraction: float, seed: int, settings: ClassifierSettings, source: str
) -> tuple[TrainedClassifier, pd.DataFrame, dict[str, Any]]:
    """Split one domain's reviews, train and select its classifier.

    Returns the classifier, the split table (:data:`SPLIT_COLUMNS`, ``training`` or ``validation`` for
    every review of the domain, file order) and a JSON-ready record of the training.

    Raises:
        InputError: The domain has no reviews in ``reviews`` (``source`` names the table), or a label
            other than positive/negative.
    """
    selected = reviews[reviews["domain"] == domain]
    if selected.empty:
        raise InputError(f"{source}: no reviews of training domain {domain!r} (domains: {', '.join(reviews['domain'].unique())})")
    documents = review_documents(selected, settings.fields)
    labels = binary_labels(selected, source)
    validation = split_validation(documents, labels, validation_fraction, seed, domain)
    train_documents = [document for document, held in zip(documents, validation) if not held]
    validation_documents = [document for document, held in zip(documents, validation) if held]
    trained = train_classifier(train_documents, labels[~validation], validation_documents, labels[validation], settings)
    split = pd.DataFrame({"review_id": selected["review_id"].to_numpy(),
                          "split": np.where(validation, "validation", "training")})
    record = {
        "classifier": domain,
        "training_reviews": int((~validation).sum()),
        "validation_reviews": int(validation.sum()),
        "training_positive": int(labels[~validation].sum()),
        "validation_positive": int(labels[validation].sum()),
        "distinct_texts": len(set(documents)),
        "vocabulary_size": trained.vocabulary_size,
        "chosen_c": trained.chosen_c,
        "validation_accuracy": trained.validation_accuracy,
        "selection": trained.selection.to_dict(orient="records"),
        "model": "TF-IDF word n-grams + L2 logistic regression (scikit-learn, liblinear); C chosen on the validation split",
        "settings": settings.as_dict(),
        "validation_fraction": validation_fraction,
        "seed": seed,
    }
    return trained, split, record


def training_side(reviews: pd.DataFrame, split: pd.DataFrame, settings: ClassifierSettings, source: str) -> tuple[pd.DataFrame, set[str]]:
    """The validation reviews of a classifier and the documents it has seen (training and validation).

    Raises:
        InputError: A review of the split table is not in ``reviews`` (the split belongs to another table).
    """
    sides = split.set_index("review_id")["split"]
    selected = reviews[reviews["review_id"].isin(sides.index)]
    if len(selected) != len(sides):
        raise InputError(f"{source}: {len(sides) - len(selected)} review(s) of the split table are not in the training reviews")
    validation = selected[selected["review_id"].map(sides).to_numpy() == "validation"]
    return validation, set(review_documents(selected, settings.fields))


def predict_test_domains(
    pipeline: Any,
    test_reviews: pd.DataFrame,
    test_domains: Sequence[str],
    training_domain: str | None,
    validation_reviews: pd.DataFrame | None,
    seen_documents: set[str],
    fields: Sequence[str],
    source: str,
) -> tuple[pd.DataFrame, dict[str, int]]:
    """Predict every review of every test domain; return the prediction table and dropped duplicates per domain.

    ``pipeline`` is anything with ``predict(documents) -> classes`` (a fitted pipeline, or a Hugging Face
    model of :mod:`nlp_robustness.systems.hf_classifier`); a document is a review's ``fields`` joined.
    The training domain is tested on ``validation_reviews`` (its held-out split) when they are given,
    that is, when the test dataset is the training dataset; otherwise on the test dataset's reviews of
    that domain (``in-domain``). ``training_domain`` None (a model trained elsewhere): every test domain
    is ``cross-domain``. A test review whose document is in ``seen_documents`` (the classifier's training
    and validation texts) is dropped and counted.

    Raises:
        InputError: A test domain has no reviews in ``test_reviews`` (``source`` names the table).
    """
    frames, excluded = [], {}
    for domain in test_domains:
        if domain == training_domain and validation_reviews is not None:
            reviews, origin = validation_reviews, "held-out"
        else:
            reviews = test_reviews[test_reviews["domain"] == domain]
            origin = "in-domain" if domain == training_domain else "cross-domain"
            if reviews.empty:
                raise InputError(f"{source}: no reviews of test domain {domain!r}")
            documents = review_documents(reviews, fields)
            unseen = np.array([document not in seen_documents for document in documents], dtype=bool)
            excluded[domain] = int((~unseen).sum())
            reviews = reviews[unseen]
            if reviews.empty:
                raise InputError(f"{source}: every review of test domain {domain!r} is also a training review")
        excluded.setdefault(domain, 0)
        truth = binary_labels(reviews, source)
        predicted = np.asarray(pipeline.predict(review_documents(reviews, fields))).astype(np.int64)
        frames.append(pd.DataFrame({
            "review_id": reviews["review_id"].to_numpy(), "test_domain": domain, "source": origin,
            "label": truth, "predicted": predicted, "correct": (predicted == truth).astype(np.int64),
        }))
    return pd.concat(frames, ignore_index=True)[list(PREDICTION_COLUMNS)], excluded
