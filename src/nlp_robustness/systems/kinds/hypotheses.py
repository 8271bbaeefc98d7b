"""Kind ``hypotheses``: existing translations, from one file per test set (``files``) or from the submissions
a manifest dataset holds (``submission``), checked to align with the test set.

``submission: <name>`` reads the column ``hypothesis:<name>`` of the parsed table of the test set's dataset
(``results/datasets/<dataset>.tsv``; a ``wmt-xml`` dataset such as WMT'22 General MT holds every submitted
system's output). Rows are matched by ``segment_id``, so a test set that selects a domain, drops segments
or is cut to ``max_segments`` gets exactly its own segments' hypotheses. A perturbed test set has no
submission: nobody translated its perturbed sources.

A test set of a user's WMT XML file (``file``, ``format: wmt-xml``) holds its submissions itself: ``submission``
reads the file's ``<hyp system>``, matched by segment id the same way. A hypotheses file of a test set of a
user's file with domains (a WMT XML file, or plain text with a domain file) has one line per segment of the
*whole* file; the test set's own lines are picked by segment id (:func:`hypotheses_by_segment_id`), so the same
file serves each domain's test set.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from nlp_robustness.errors import InputError
from nlp_robustness.systems.registry import JobNeeds, SystemContext, TranslationBatch, write_report, write_translations

if TYPE_CHECKING:
    from nlp_robustness.data.local_testsets import LocalFiles
    from nlp_robustness.data.manifest_entries import Manifest

RULE = "import_hypotheses"
CONDA_ENV = "python.yaml"
BATCHES_FAMILIES = False
GPU = False

#: The parsed table of a manifest dataset (rules/datasets.smk, prepare_dataset).
DATASET_TABLE = "results/datasets/{dataset}.tsv"
#: A prepared test set's provenance file (rules/testsets.smk): how many segments it has before ``max_segments``.
TESTSET_PROVENANCE = "results/testsets/{testset}.provenance.json"


def _submission_dataset(system: str, spec: Mapping[str, Any], testset: str, context: SystemContext) -> str:
    """The manifest dataset whose table holds the submission's translation of ``testset``."""
    key = f"systems.{system}.submission"
    if testset in context.derived_testsets:
        raise InputError(
            f"{key}: the perturbed test set {testset} cannot be translated by a submission ({spec['submission']!r} "
            f"translated only the dataset's own sources); leave {system} out of that family's systems"
        )
    if testset not in context.testset_datasets:
        raise InputError(f"{key}: test set {testset} is not made from a manifest dataset or a WMT XML file, so it has no submissions")
    return context.testset_datasets[testset]


def needs(system: str, spec: Mapping[str, Any], testsets: Sequence[str], context: SystemContext) -> JobNeeds:
    """With ``files``: the test set's file, and how many of its lines the test set takes (``max_segments``
    for a test set, whose file translates the whole test set; all of them for a perturbed one, whose
    file has one line per kept row); for a test set of a user's file with domains, its provenance (the segments of
    the whole file), its lines being picked by segment id. With ``submission``: the parsed table of the test set's
    dataset and the submission's name, or the test set's WMT XML file, its translator and the submission's name.

    Raises:
        InputError: A submission asked to translate a perturbed test set or one not made from a manifest
            dataset (names ``systems.<system>.submission``).
    """
    (testset,) = testsets
    local = context.local_testsets.get(testset)
    if "submission" in spec and local is not None and "file" in local:
        return JobNeeds(
            inputs={"wmt_xml": local["file"]},
            params={"submission": spec["submission"], "file": local["file"], "translator": local.get("translator")},
            threads=1, mem_mb=1000, runtime=10,
        )
    if "submission" in spec:
        dataset = _submission_dataset(system, spec, testset, context)
        return JobNeeds(
            inputs={"dataset": DATASET_TABLE.format(dataset=dataset)},
            params={"submission": spec["submission"], "dataset": dataset},
            threads=1,
            mem_mb=1000,
            runtime=10,
        )
    if local is not None:  # one line per segment of the whole file: every test set of it picks its own
        inputs = {"hypotheses": spec["files"][testset], "testset_provenance": TESTSET_PROVENANCE.format(testset=testset)}
        return JobNeeds(inputs=inputs, params={"by_segment_id": True}, threads=1, mem_mb=1000, runtime=10)
    max_segments = None if testset in context.derived_testsets else context.max_segments
    inputs = {"hypotheses": spec["files"][testset]}
    if max_segments is not None:  # the file is checked against the whole test set, which only the provenance counts
        inputs["testset_provenance"] = TESTSET_PROVENANCE.format(testset=testset)
    return JobNeeds(inputs=inputs, params={"max_segments": max_segments}, threads=1, mem_mb=1000, runtime=10)


def whole_testset_segments(provenance: Mapping[str, Any]) -> int:
    """How many segments a prepared test set has before ``max_segments`` cut it, from its provenance record
    (``segments_before_cut``; in a record written before that count existed, the segments read or selected
    less those dropped)."""
    if "segments_before_cut" in provenance:
        return int(provenance["segments_before_cut"])
    return int(provenance.get("segments_selected", provenance["segments_read"])) - int(provenance["dropped_source_equals_reference"])


def checked_hypotheses(lines: Sequence[str], path: str, testset: str, whole: int, max_segments: int | None) -> list[str]:
    """The hypotheses of the test set's kept segments: ``lines`` (a whole file, one line per segment of the
    whole test set of ``whole`` segments) checked against ``whole``, then cut to ``max_segments``.

    The check comes first: cut first, a file one line short or with a line inserted would pass whenever it is
    longer than ``max_segments``, and every hypothesis after the gap would be scored against the wrong reference.

    Raises:
        InputError: The file's line count is not ``whole``; names the file, both counts and the test set.
    """
    if len(lines) != whole:
        cut = f" (max_segments {max_segments} keeps the first {min(whole, max_segments)})" if max_segments is not None else ""
        raise InputError(
            f"{path}: {len(lines)} lines but test set {testset} has {whole} segments{cut}: a hypotheses file translates "
            f"the whole test set, one line per segment"
        )
    return list(lines[:max_segments] if max_segments is not None else lines)


def hypotheses_by_segment_id(lines: Sequence[str], path: str, testset: str, whole: int, segment_ids: Sequence[str]) -> list[str]:
    """The hypotheses of a test set's segments from a file of the whole file it was selected from: ``lines`` (one
    per segment of the whole file of ``whole`` segments) checked against ``whole``, then line *i* for segment id *i*.

    Raises:
        InputError: The file's line count is not ``whole`` (names the file, both counts and the test set).
    """
    if len(lines) != whole:
        raise InputError(
            f"{path}: {len(lines)} lines but the file test set {testset} is read from has {whole} segments: a hypotheses "
            f"file of a test set of a WMT XML file or with a domain file translates the whole file, one line per segment"
        )
    return [lines[int(segment) - 1] for segment in segment_ids]


def submission_hypotheses(dataset_table: Any, testset_table: Any, submission: str, where: str) -> list[str]:
    """The submission's hypotheses of the test set's segments, in the test set's order, matched by ``segment_id``.

    Args:
        dataset_table: The parsed dataset table (``segment_id``, ``source``, ``hypothesis:<submission>``).
        testset_table: The prepared test set table.
        where: The dataset table's file, for errors.

    Raises:
        InputError: The dataset has no such submission, a segment id of the test set is not in it, or a
            segment's source differs from the dataset's (the test set was made from another dataset).
    """
    from nlp_robustness.data.wmt_xml_tables import HYPOTHESIS_PREFIX, hypothesis_column

    column = hypothesis_column(submission)
    if column not in dataset_table.columns:
        systems = [name[len(HYPOTHESIS_PREFIX):] for name in dataset_table.columns if name.startswith(HYPOTHESIS_PREFIX)]
        raise InputError(f"{where}: no submission {submission!r} (its submissions: {', '.join(systems) or 'none'})")
    rows = dataset_table.set_index("segment_id")
    missing = [segment for segment in testset_table["segment_id"] if segment not in rows.index]
    if missing:
        raise InputError(f"{where}: the test set's segment id(s) {', '.join(missing[:5])} are not in the dataset")
    matched = rows.loc[list(testset_table["segment_id"])]
    differ = [segment for segment, ours, theirs in zip(testset_table["segment_id"], testset_table["source"], matched["source"]) if ours != theirs]
    if differ:
        raise InputError(f"{where}: segment {differ[0]} of the test set has another source than the dataset's; is it made from this dataset?")
    return matched[column].tolist()


def translate(batch: TranslationBatch) -> None:
    """Copy the hypotheses of the batch's one test set: a file's lines checked whole, then cut to ``max_segments``
    (:func:`checked_hypotheses`) or, for a test set of a user's file with domains, picked by segment id
    (:func:`hypotheses_by_segment_id`); or a submission's segments of the test set (from the dataset's table or the
    test set's WMT XML file).

    Raises:
        InputError: A file whose line count differs from the whole test set's segment count, naming both; a
            submission the dataset lacks, or test set segments it does not have.
    """
    from nlp_robustness.data.testset_formats import read_plain_lines
    from nlp_robustness.data.testsets import TABLE_COLUMNS, read_testset_table
    from nlp_robustness.fileio.text_files import read_table

    (testset,), (testset_file,) = batch.testsets, batch.testset_files
    table = read_testset_table(testset_file)
    if "submission" in batch.params and "file" in batch.params:  # a user's WMT XML file
        from nlp_robustness.data.wmt_xml import read_wmt_xml
        from nlp_robustness.data.wmt_xml_tables import wmt_xml_table

        xml_file = batch.inputs["wmt_xml"]
        parsed = read_wmt_xml(xml_file, batch.params.get("translator"), require_domain=False)
        hypotheses = submission_hypotheses(wmt_xml_table(parsed), table, batch.params["submission"], xml_file)
        origin = {"file": batch.params["file"], "submission": batch.params["submission"]}
    elif batch.params.get("by_segment_id"):
        hypotheses_file = batch.inputs["hypotheses"]
        with open(batch.inputs["testset_provenance"], encoding="utf-8") as handle:
            whole = int(json.load(handle)["segments_read"])
        hypotheses = hypotheses_by_segment_id(read_plain_lines(hypotheses_file), hypotheses_file, testset, whole, list(table["segment_id"]))
        origin = {"hypotheses_file": hypotheses_file}
    elif "submission" in batch.params:
        dataset_file = batch.inputs["dataset"]
        hypotheses = submission_hypotheses(
            read_table(dataset_file, TABLE_COLUMNS, "dataset table"), table, batch.params["submission"], dataset_file
        )
        origin = {"dataset": batch.params["dataset"], "submission": batch.params["submission"], "dataset_file": dataset_file}
    else:
        hypotheses_file = batch.inputs["hypotheses"]
        whole = len(table)
        if batch.params["max_segments"] is not None:
            with open(batch.inputs["testset_provenance"], encoding="utf-8") as handle:
                whole = whole_testset_segments(json.load(handle))
        hypotheses = checked_hypotheses(read_plain_lines(hypotheses_file), hypotheses_file, testset, whole, batch.params["max_segments"])
        origin = {"hypotheses_file": hypotheses_file}
    write_translations(hypotheses, batch.translation_files[0])
    write_report({"system": batch.system, "testset": testset, **origin, "segments": len(hypotheses)}, batch.report_files[0])
    logging.info("%d hypotheses imported from %s", len(hypotheses), next(iter(origin.values())))


def check_submissions(
    system: str,
    spec: Mapping[str, Any],
    testsets: Sequence[str],
    testset_specs: Mapping[str, Mapping[str, Any]],
    manifest: Manifest,
    local_files: LocalFiles | None = None,
) -> None:
    """Check, when the workflow is planned, that a ``submission`` system can translate ``testsets``: each is
    a configured test set made from a manifest dataset that declares that system (``systems`` of a
    ``wmt-xml`` dataset), or from a user's WMT XML file holding that system (read through ``local_files``, once;
    a file that is not there is left to Snakemake). A system with ``files`` (or of another kind) passes.

    Args:
        system: Its name (``systems.<system>``).
        spec: Its config entry.
        testsets: The test sets it translates (a study's, a family's perturbed ones included).
        testset_specs: The config's ``testsets`` section.

    Raises:
        InputError: One line naming ``systems.<system>.submission``: a perturbed or unknown test set, one
            made from a pair of files, a dataset with no submissions, or one without this system.
    """
    if spec.get("kind") != "hypotheses" or "submission" not in spec:
        return
    key, submission = f"systems.{system}.submission", spec["submission"]
    for testset in testsets:
        if testset not in testset_specs:
            raise InputError(
                f"{key}: test set {testset} is not a configured test set (a perturbed one?); a submission translates "
                f"only the test sets made from its dataset"
            )
        local = testset_specs[testset]
        if "file" in local:
            if local_files is None or not os.path.isfile(local["file"]):
                continue
            systems = local_files.wmt_xml(local["file"], local.get("translator")).systems
            if submission not in systems:
                raise InputError(
                    f"{key}: {submission!r} is not a system of {local['file']} (test set {testset}; its systems: "
                    f"{', '.join(systems) or 'none'})"
                )
            continue
        dataset_key = local.get("dataset")
        if dataset_key is None:
            raise InputError(
                f"{key}: test set {testset} is a pair of files, not a manifest dataset or a WMT XML file, so it has no submissions"
            )
        dataset = manifest.datasets.get(dataset_key)
        if dataset is None:
            continue  # an unknown dataset is reported by the check of testsets.<name>.dataset
        if not dataset.systems:
            raise InputError(f"{key}: dataset {dataset_key} of test set {testset} holds no submissions")
        if submission not in dataset.systems:
            raise InputError(
                f"{key}: {submission!r} is not a system of dataset {dataset_key} (test set {testset}; its systems: "
                f"{', '.join(dataset.systems)})"
            )
