"""Natural Robustness (paper 001) of MT systems and sentiment classifiers, and its consistency across perturbation types.

A *record* is one input: a segment of an MT test set (``wmt14/123``) or a product review
(``books/456``). The perturbation families named in ``natural_robustness.families`` (by default the
naive perturbations, :mod:`~nlp_robustness.perturbations.natural`, and the paraphrases,
:mod:`~nlp_robustness.perturbations.paraphrase`) perturb every sampled record once per function; each
function is a perturbation *type*. A *response* is what a system gives for an input: a translation, or a
classifier's label. A perturbation leaves the response unchanged when

* ``exact`` (MT): the two translations are equal after normalisation (NFKC, optionally case-folded and
  without punctuation, whitespace collapsed);
* ``chrf`` (MT): the sentence chrF of the new translation against the original one is at least the
  threshold (same_response.chrf_threshold);
* ``label`` (classifiers): the predicted label is the same.

The **score** is the share of perturbations that leave the response unchanged: **1.0 = robust**. (Paper
001's page writes the share of perturbations *causing different* responses while calling 1.0 robust;
we compute the share that matches its reading of the scale.) It is computed on nested record samples
(the first N records of a seeded order, by default five as the paper, and all sampled records) with
binomial intervals, on an effective number of perturbations for the pooled share
(:mod:`nlp_robustness.statistics.natural_robustness`).

**Consistency across perturbation types** is measured by the one robustness engine: the types are the
domains, a unit is one perturbation of one record scored 100 (unchanged) or 0, and a domain's value is
its share unchanged in percent (aggregation ``domain``, as the sentiment study's accuracies). The units
are the kept (type, record) pairs, which depend on the perturbed inputs only, so every system and
criterion of a kind (MT, sentiment) is measured on the same blocks.

Sentiment records are reviews of the sentiment test domains that no classifier was trained on (every
classifier's prediction table holds them: its own domain's held-out split, the other domains less the
texts it has seen), so every classifier answers the same records. A review is perturbed as the
document the classifiers read (its fields joined by a line break).

**Like with like, and the noise floor.** Apertium's translation of a segment depends on its neighbours.
:mod:`nlp_robustness.systems.apertium` separates segments by blank lines, so no transfer rule spans two,
but stages keep *state* from sentence to sentence: cat-fra's structural transfer
(``apertium-fra-cat.cat-fra.t1x``) keeps global variables -- ``genero``/``numero`` of the last noun
phrase, used to insert a French subject pronoun for a Catalan pro-drop verb ("Il y aura" / "Y aura",
"Ce n'est" / "Il n'est"), ``inici`` (the first sentence of the stream) -- and has rules that start at
the previous sentence's end (``sent NP``: "Le Nevada" / "le Nevada"); its tagger's choices also change
(first differing stage of 19 intermediate differences: transfer 15, tagger 4). Measured on the first
100 segments of newstest2014.en, each alone against the batch, final output of each stage given the
same input: eng-spa 0, es-fr 3, eng-cat 0, cat-fra 16 differ (chains: en-es-fr 3, en-ca-fr 16);
``-z`` (null flush) does not help (issue 28). A fixed short sentence ("He is here." in the stage's source
language) before every segment removed cat-fra's 16 on those segments but not the dependence in general
(on the 100 default NR records among their true predecessors vs the identity layout: en-es-fr 2 -> 2,
en-ca-fr 5 -> 4 differ; some state survives several sentences), so no batching change is made.

Instead, the original of every record is translated in the *same layout* as its perturbed versions. The
families that draw their records as one seeded sample (the natural, paraphrase and structure families:
sample group ``natural_robustness``) share one **identity test set** per part
(:func:`~nlp_robustness.studies.natural_robustness_controls.identity_testset`, keyed by the sample:
:func:`~nlp_robustness.studies.natural_robustness_controls.identity_samples`; the sampled records, original
sources, in the order of the perturbed test sets) that every system translates once through the same
rules; a family that samples differently gets its own. A perturbation's response is compared with the
record's translation there. The **identity control** (type ``identity/<sample>``, :data:`CONTROL_PREFIX`)
compares the same records translated in the whole-test-set layout with the identity layout: only the
neighbours differ, so its instability (1 - share unchanged, per criterion) is the noise a change of
neighbours alone causes -- an upper bound of the residual noise of the scores (in a perturbed test set the
neighbours are the same records, perturbed) and the bias the old whole-test-set comparison carried
(default run: exact 0.05 en-es-fr, 0.06 en-ca-fr; chrF 0.00, 0.01). One sample, one control: before, each
family had its own identity test set of the same records in the same layout, three measurements of one thing.

A type with few perturbations (a perturbed test set of a few records: fewer than
``type_noise_floor_below``, by default :data:`~nlp_robustness.statistics.natural_robustness.FEW_PERTURBATIONS`,
the count below which its interval is marked conservative) sits among different neighbours there than in
the identity test set, so the shared control does not bound its noise. It gets its own **per-type control**
(type ``identity/<type>``; :func:`~nlp_robustness.studies.natural_robustness_controls.type_control`): its
records unperturbed in its perturbed test set's layout, translated by every system, compared with their
translations in the identity test set -- the type's own noise floor, reported beside its score. Classifiers
answer a review alone: their control (``identity/reviews``) classifies the originals again and is 1.0 for
a deterministic classifier.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from nlp_robustness.data.testsets import TABLE_COLUMNS
from nlp_robustness.errors import InputError
from nlp_robustness.fileio import read_table
from nlp_robustness.perturbations.derive import DERIVED_COLUMNS
from nlp_robustness.sampling import RECORD_COLUMNS, record_order, sample_segments
from nlp_robustness.statistics.natural_robustness import (
    FEW_PERTURBATIONS,
    natural_robustness_scores,
    response_chrf,
    same_chrf,
    same_exact,
)
from nlp_robustness.statistics.pools import UNIT_COLUMNS
from nlp_robustness.statistics.study_design import StudyDesign, ids_across_domains

__all__ = ["CONTROL_PREFIX", "IDENTITY", "is_control", "has_variance_components", "resampling_design", 
    "CRITERIA", "MT_CRITERIA", "MT_RESPONSE_COLUMNS", "RECORD_COLUMNS", "SENTIMENT_RESPONSE_COLUMNS",
    "KINDS", "SCORE_COLUMNS", "complete_natural_robustness", "mt_records", "mt_responses", "natural_scores",
    "perturbation_types", "read_responses",
    "record_id", "review_records", "sentiment_responses", "unit_keys", "units",
]

#: How an MT system's responses are compared, and a classifier's.
MT_CRITERIA = ("exact", "chrf")
CRITERIA = (*MT_CRITERIA, "label")
#: What the rows of each kind of responder are called, and the criteria they are scored by.
KINDS = {"mt": ("MT system", MT_CRITERIA), "sentiment": ("classifier", ("label",))}
#: Columns of the score table: the row, then :func:`~nlp_robustness.statistics.natural_robustness.natural_robustness_scores`'s.
SCORE_COLUMNS = (
    "responder", "kind", "criterion", "family", "sample", "records", "type", "perturbations", "unchanged", "score",
    "ci_low", "ci_high", "interval", "design_effect",
)
MT_RESPONSE_COLUMNS = ("record", "type", "same_exact", "same_chrf", "chrf", "original_response", "perturbed_response")
SENTIMENT_RESPONSE_COLUMNS = ("record", "type", "same_label", "original_label", "perturbed_label")
#: The function name of a family's identity test set (``perturbed/<family>/identity/<part>``); no family may use it.
IDENTITY = "identity"
#: Responses of the identity controls have the type ``identity/<sample>`` (the shared control of a record sample),
#: ``identity/<type>`` (a per-type control) or ``identity/reviews`` (classifiers).
CONTROL_PREFIX = f"{IDENTITY}/"


def is_control(types: pd.Series) -> pd.Series:
    """Which response rows are the identity control's (not a perturbation type)."""
    return types.astype(str).str.startswith(CONTROL_PREFIX)


def record_id(part: pd.Series, item: pd.Series) -> pd.Series:
    """The id of a record: ``<test set or domain>/<segment or review id>``."""
    return part.astype(str) + "/" + item.astype(str)


def perturbation_types(section: Mapping[str, Any], families: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Every perturbation type (function) of the section's families -> its family, in config order."""
    return {function: family for family in section["families"] for function in families[family]["functions"]}


def complete_natural_robustness(config: MutableMapping[str, Any]) -> None:
    """Check the ``natural_robustness`` section and fill its defaults that depend on other keys (in place;
    no-op without one): ``leave_out`` every type, ``epsilon`` ``robustness.epsilon``,
    ``type_noise_floor_below`` :data:`~nlp_robustness.statistics.natural_robustness.FEW_PERTURBATIONS` (the
    tables' conservative-interval count), and ``systems``, the systems that translate the perturbed test sets
    of every one of its families.

    Run after :func:`~nlp_robustness.perturbations.configuration.complete_perturbations`.

    Raises:
        InputError: naming the first offending key.
    """
    section = config.get("natural_robustness")
    if section is None:
        return
    families = (config.get("perturbations") or {}).get("families", {})
    for index, family in enumerate(section["families"]):
        if family not in families:
            raise InputError(
                f"invalid configuration at key 'natural_robustness.families[{index}]': '{family}' is not a family of "
                f"perturbations.families (configured: {', '.join(families) or 'none'})"
            )
    seen: dict[str, str] = {}
    for family in section["families"]:
        for function in families[family]["functions"]:
            if function in seen:
                raise InputError(
                    f"invalid configuration at key 'natural_robustness.families': function '{function}' is in both "
                    f"{seen[function]} and {family}; perturbation types must have distinct names"
                )
            if function == IDENTITY:
                raise InputError(
                    f"invalid configuration at key 'perturbations.families.{family}.functions.{IDENTITY}': the name "
                    "is reserved for the identity test sets of the natural-robustness noise floor"
                )
            seen[function] = family
    types = list(seen)
    section.setdefault("leave_out", list(types))
    for index, name in enumerate(section["leave_out"]):
        if name not in types:
            raise InputError(
                f"invalid configuration at key 'natural_robustness.leave_out[{index}]': '{name}' is not a perturbation "
                f"type (known: {', '.join(types)})"
            )
    if len(types) < 2 and section["leave_out"]:
        raise InputError("invalid configuration at key 'natural_robustness.leave_out': leaving out the only type leaves no pool")
    section.setdefault("epsilon", copy.deepcopy(config["robustness"]["epsilon"]))
    section.setdefault("type_noise_floor_below", FEW_PERTURBATIONS)
    if not isinstance(section["type_noise_floor_below"], int) or isinstance(section["type_noise_floor_below"], bool) \
            or section["type_noise_floor_below"] < 0:
        raise InputError("invalid configuration at key 'natural_robustness.type_noise_floor_below': must be an integer >= 0 "
                         f"(0: no per-type noise floor), not {section['type_noise_floor_below']!r}")
    if section["epsilon"]["stop"] < section["epsilon"]["start"]:
        raise InputError("invalid configuration at key 'natural_robustness.epsilon.stop': must be >= start")
    section["systems"] = [
        system for system in config["systems"] if all(system in families[family]["systems"] for family in section["families"])
    ]
    if not section["systems"]:
        raise InputError(
            "invalid configuration at key 'natural_robustness.families': no system translates the perturbed test "
            f"sets of all of {', '.join(section['families'])} (their systems keys)"
        )


# ---- records and responses ------------------------------------------------------------------------------


def mt_records(samples: Sequence[tuple[str, pd.DataFrame]]) -> pd.DataFrame:
    """The MT records (:data:`RECORD_COLUMNS`): every segment of the families' samples, given as (test set,
    sample table) pairs (the same test set may come once per family), each record once, first-seen order."""
    frames = [pd.DataFrame({"part": testset, "item": table["segment_id"].astype(str).to_numpy()}) for testset, table in samples]
    records = pd.concat(frames, ignore_index=True).drop_duplicates(ignore_index=True)
    records.insert(0, "record", record_id(records["part"], records["item"]))
    return records[list(RECORD_COLUMNS)]


def _original_responses(testsets: Mapping[str, tuple[pd.DataFrame, Sequence[str]]], where: str) -> dict[str, str]:
    """Record -> the system's translation of the unmodified segment (test set -> (table, translations))."""
    responses: dict[str, str] = {}
    for testset, (table, translations) in testsets.items():
        if len(translations) != len(table):
            raise InputError(f"{where}: {len(translations)} translations of the {len(table)} segments of {testset}")
        responses.update(zip(record_id(pd.Series(testset, index=table.index), table["segment_id"]), translations))
    return responses


def _layout_responses(table: pd.DataFrame, translations: Sequence[str], where: str, what: str) -> dict[str, str]:
    """Record -> translation, for a table with ``testset`` and ``segment_id`` columns (a perturbed or identity test set)."""
    if len(translations) != len(table):
        raise InputError(f"{where}: {len(translations)} translations of the {len(table)} segments {what}")
    return dict(zip(record_id(table["testset"], table["segment_id"]), translations))


def _compare(records: Sequence[str], label: str, original: list[str], perturbed: list[str],
             same_response: Mapping[str, Any]) -> pd.DataFrame:
    chrf = response_chrf(original, perturbed)
    return pd.DataFrame({
        "record": list(records), "type": label,
        "same_exact": same_exact(original, perturbed, casefold=same_response["casefold"], punctuation=same_response["punctuation"]),
        "same_chrf": same_chrf(chrf, same_response["chrf_threshold"]), "chrf": chrf,
        "original_response": original, "perturbed_response": perturbed,
    })


def mt_responses(
    derived: Mapping[str, tuple[pd.DataFrame, Sequence[str]]],
    testsets: Mapping[str, tuple[pd.DataFrame, Sequence[str]]],
    same_response: Mapping[str, Any],
    where: str = "responses",
    identity: Mapping[str, tuple[pd.DataFrame, Sequence[str]]] | None = None,
    types: Mapping[str, str] | None = None,
    controls: Mapping[str, tuple[pd.DataFrame, Sequence[str]]] | None = None,
) -> pd.DataFrame:
    """One system's responses to every kept perturbation (:data:`MT_RESPONSE_COLUMNS`), then its identity
    controls: one per record sample, then one per type with a (non-empty) control test set.

    Args:
        derived: Type -> (its perturbed test set, parts concatenated; the system's translations of it, aligned).
        testsets: Test set -> (its table; the system's translations of the whole test set, aligned).
        same_response: ``casefold``, ``punctuation`` (exact) and ``chrf_threshold`` (chrf).
        identity: Record sample -> (its identity test set, parts concatenated; the system's translations of it).
            Given, a perturbation is compared with the record's translation in its sample's identity test set
            (like with like), and rows ``identity/<sample>`` compare the whole-test-set translation (original)
            with the identity one (perturbed). None: perturbations are compared with the whole-test-set translations.
        types: Type -> its record sample, a key of ``identity`` (needed with ``identity``).
        controls: Type -> (its control test set, parts concatenated: its records unperturbed in its perturbed test
            set's order, or empty; the system's translations of it). Rows ``identity/<type>`` compare the record's
            translation in its sample's identity test set (original) with the one in the control (perturbed):
            the type's own noise floor. Needs ``identity``.

    Raises:
        InputError: Translations that do not align, a perturbed segment that is not in its test set, or a
            control test set whose records are not its type's perturbed ones in their order.
    """
    whole = _original_responses(testsets, where)
    layouts: dict[str, dict[str, str]] = {}
    for sample, (table, translations) in (identity or {}).items():
        layouts[sample] = _layout_responses(table, translations, where, f"of the identity test set of {sample}")
        missing = [record for record in layouts[sample] if record not in whole]
        if missing:
            raise InputError(f"{where}: the identity test set of {sample} holds {missing[0]}, which is not a segment of its test set")
    frames = []
    perturbed: dict[str, list[str]] = {}
    for perturbation_type, (table, translations) in derived.items():
        responses = _layout_responses(table, translations, where, f"perturbed by {perturbation_type}")
        perturbed[perturbation_type] = list(responses)
        originals = layouts[(types or {})[perturbation_type]] if identity is not None else whole
        missing = [record for record in responses if record not in originals]
        if missing:
            raise InputError(f"{where}: {perturbation_type} perturbed {missing[0]}, which is not a segment of its test set")
        frames.append(_compare(list(responses), perturbation_type, [originals[key] for key in responses],
                               list(responses.values()), same_response))
    for sample, responses in layouts.items():
        frames.append(_compare(list(responses), CONTROL_PREFIX + sample, [whole[key] for key in responses],
                               list(responses.values()), same_response))
    for perturbation_type, (table, translations) in (controls or {}).items():
        if table.empty:  # a type with enough perturbations: the shared control bounds its noise
            continue
        if identity is None:
            raise InputError(f"{where}: the control test set of {perturbation_type} needs the identity test sets")
        responses = _layout_responses(table, translations, where, f"of the control test set of {perturbation_type}")
        if list(responses) != perturbed.get(perturbation_type):
            raise InputError(f"{where}: the control test set of {perturbation_type} does not hold its perturbed records in "
                             "their order (rebuild it)")
        originals = layouts[(types or {})[perturbation_type]]
        frames.append(_compare(list(responses), CONTROL_PREFIX + perturbation_type, [originals[key] for key in responses],
                               list(responses.values()), same_response))
    return pd.concat(frames, ignore_index=True)[list(MT_RESPONSE_COLUMNS)]


def review_records(
    predictions: Mapping[str, pd.DataFrame], reviews: pd.DataFrame, documents: Sequence[str], test_domains: Sequence[str],
    reviews_per_domain: int | None, seed: int, group: str,
) -> pd.DataFrame:
    """The sentiment records as a test-set table (:data:`~nlp_robustness.data.testsets.TABLE_COLUMNS`:
    segment_id = review id, doc_id = test domain, source = the document the classifiers read, reference =
    the gold label), domain by domain: the reviews in every classifier's prediction table (``predictions``:
    classifier -> its table), a seeded nested sample of ``reviews_per_domain`` of them per domain.

    ``documents`` is aligned with ``reviews`` (the test reviews).

    Raises:
        InputError: A test domain keeps no review that every classifier was tested on.
    """
    answered = None
    for table in predictions.values():
        keys = set(zip(table["test_domain"].astype(str), table["review_id"].astype(str)))
        answered = keys if answered is None else answered & keys
    frame = pd.DataFrame({
        "segment_id": reviews["review_id"].astype(str).to_numpy(), "doc_id": reviews["domain"].astype(str).to_numpy(),
        "source": list(documents), "reference": reviews["label"].astype(str).to_numpy(),
    })
    parts = []
    for domain in test_domains:
        candidates = frame[frame["doc_id"] == domain]
        candidates = candidates[[(domain, review) in answered for review in candidates["segment_id"]]]
        if candidates.empty:
            raise InputError(f"natural robustness: no review of test domain {domain!r} was tested by every classifier")
        parts.append(sample_segments(candidates, reviews_per_domain, seed, group, domain))
    return pd.concat(parts, ignore_index=True)[list(TABLE_COLUMNS)]


def sentiment_responses(predict: Any, records: pd.DataFrame, derived: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """One classifier's responses to every kept perturbation (:data:`SENTIMENT_RESPONSE_COLUMNS`).

    Args:
        predict: The classifier: documents -> labels (``pipeline.predict``).
        records: The sentiment records (:func:`review_records`).
        derived: Type -> the perturbed records (perturbed test-set table; ``testset`` is the domain).
    """
    original = dict(zip(record_id(records["doc_id"], records["segment_id"]), np.asarray(predict(records["source"].tolist()))))
    frames = []
    for perturbation_type, table in derived.items():
        keys = record_id(table["testset"], table["segment_id"])
        perturbed = np.asarray(predict(table["source"].tolist()))
        before = np.array([original[key] for key in keys])
        frames.append(pd.DataFrame({
            "record": keys.to_numpy(), "type": perturbation_type, "same_label": before == perturbed,
            "original_label": before, "perturbed_label": perturbed,
        }))
    # the identity control: the originals classified again (the classifier reads a review alone)
    keys = record_id(records["doc_id"], records["segment_id"])
    again = np.asarray(predict(records["source"].tolist()))
    before = np.array([original[key] for key in keys])
    frames.append(pd.DataFrame({
        "record": keys.to_numpy(), "type": CONTROL_PREFIX + "reviews", "same_label": before == again,
        "original_label": before, "perturbed_label": again,
    }))
    return pd.concat(frames, ignore_index=True)[list(SENTIMENT_RESPONSE_COLUMNS)]


def natural_scores(
    records: Mapping[str, pd.DataFrame], responses: Mapping[str, Mapping[str, pd.DataFrame]], types: Mapping[str, str],
    sizes: Sequence[int | None], bootstrap: Mapping[str, Any], seed: int, interval: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """The score table (:data:`SCORE_COLUMNS`) of every row of every kind, under each of its criteria.

    Args:
        records: Kind (``mt``, ``sentiment``) -> its records (:data:`RECORD_COLUMNS`); each kind's samples
            are the first N records of one seeded order (:func:`record_order`, group ``natural_robustness``),
            so every row of a kind is scored on the same records.
        responses: Kind -> row (system, classifier) -> its responses table.
        types: Perturbation type -> family, in table order.
        sizes: Record sample sizes (None: every record).
        bootstrap: ``resamples`` and ``confidence`` (the level of every interval).
        seed: Seeds the record order and every row's bootstrap (with kind, row and criterion).
        interval: ``method`` (a binomial interval) and ``bootstrap_from_records`` (config
            ``natural_robustness.interval``); None: Wilson, never the bootstrap.
    """
    interval = {"method": "wilson", "bootstrap_from_records": None, **(interval or {})}
    frames = []
    for kind, rows in responses.items():
        order = record_order(records[kind], seed, "natural_robustness")
        for row, table in rows.items():
            control = is_control(table["type"])
            controls = list(dict.fromkeys(table.loc[control, "type"]))
            for criterion in KINDS[kind][1]:
                outcomes = pd.DataFrame({"record": table["record"], "type": table["type"], "same": table[f"same_{criterion}"].astype(bool)})
                options = dict(resamples=bootstrap["resamples"], confidence=bootstrap["confidence"], seed=seed,
                               method=interval["method"], bootstrap_from_records=interval["bootstrap_from_records"])
                scores = natural_robustness_scores(outcomes[~control], order, sizes, list(types), labels=[kind, row, criterion], **options)
                if controls:  # the identity control: scored alone (its pooled row would repeat it), after all
                    noise = natural_robustness_scores(outcomes[control], order, sizes, controls, labels=[kind, row, criterion, IDENTITY], **options)
                    scores = pd.concat([scores, noise[noise["type"] != "all"]], ignore_index=True)
                scores.insert(0, "family", scores["type"].map(lambda name: types.get(name, "control" if name.startswith(CONTROL_PREFIX) else "all")))
                scores.insert(0, "criterion", criterion)
                scores.insert(0, "kind", KINDS[kind][0])
                scores.insert(0, "responder", row)
                frames.append(scores)
    return pd.concat(frames, ignore_index=True)[list(SCORE_COLUMNS)]


def read_responses(path: str) -> pd.DataFrame:
    """A responses table (MT or sentiment): ``same_*`` columns as booleans."""
    table = read_table(path, ["record", "type"], "responses table")
    for column in [name for name in table.columns if name.startswith("same_")]:
        table[column] = table[column].map({"True": True, "False": False})
        if table[column].isna().any():
            raise InputError(f"{path}: column {column} holds a value other than True or False")
    return table


# ---- the engine study: perturbation types as domains ----------------------------------------------------


def resampling_design(files: Mapping[str, str] | None, domains: Sequence[str], row: str, score: str,
                      options: Mapping[str, Any]) -> StudyDesign:
    """How the bootstrap draws a row's units: a record appears under every perturbation type, so records are
    drawn with all their perturbations (crossed)."""
    return ids_across_domains()


def has_variance_components(options: Mapping[str, Any]) -> bool:
    """Whether the engine decomposes this study's unit scores into between- and within-domain variance.

    A type's share unchanged is the mean of its 0/100 units, so the units decompose by type.
    """
    return True


def unit_keys(files: Mapping[str, str], domains: Sequence[str], options: Mapping[str, Any]) -> pd.DataFrame:
    """Unit keys ``domain, unit_id``: every kept (type, record) pair. ``files`` maps ``<type>/<part>`` to a
    perturbed test set (MT) or ``<type>`` to the perturbed reviews (sentiment)."""
    frames = []
    for name, path in files.items():
        table = read_table(path, list(DERIVED_COLUMNS), "perturbed test set")
        frames.append(pd.DataFrame({"domain": name.split("/", 1)[0], "unit_id": record_id(table["testset"], table["segment_id"])}))
    return pd.concat(frames, ignore_index=True)


def units(files: Mapping[str, str], domains: Sequence[str], row: str, score: str, options: Mapping[str, Any]) -> pd.DataFrame:
    """One row's units (``files``: family -> its responses table; ``score``: the criterion), scored 100 when
    the perturbation left the response unchanged and 0 otherwise."""
    frames = []
    for path in files.values():
        table = read_responses(path)
        table = table[~is_control(table["type"])]  # the identity control is no perturbation type
        frames.append(pd.DataFrame({
            "domain": table["type"], "unit_id": table["record"], "score": 100.0 * table[f"same_{score}"].astype(float),
        }))
    return pd.concat(frames, ignore_index=True)[list(UNIT_COLUMNS)]
