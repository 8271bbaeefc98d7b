"""A user's own evaluation data by config alone: a WMT XML file read as a local file, and plain text with a
per-line domain file, each prepared and translated exactly as the manifest route prepares the same data.

Each test runs one tiny workflow (two domains of WMT'22 de-fr, two submissions, max_segments 10) holding the
route under test beside the manifest route (the default config's ``defr-*`` test sets and ``defr-*`` systems,
which read the same XML through the manifest), and targets only the test sets and the sentence score tables.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from nlp_robustness.data.wmt_xml import read_wmt_xml
from tests.e2e.workflow_runner import DEFAULT_CONFIG, run_workflow

pytestmark = pytest.mark.e2e

XML = Path("wmt22-general-defr-frde") / "xml" / "wmttest2022.de-fr.all.xml"
DOMAINS = ("news", "social")
SUBMISSIONS = ("Online-B", "LT22")


def _config(mirror_dir: Path, testsets: dict[str, Any], systems: dict[str, Any]) -> dict[str, Any]:
    """A config of ``testsets`` and ``systems`` (study ``own``) beside the manifest route's (study ``manifest``)."""
    manifest_testsets = {f"defr-{domain}": copy.deepcopy(DEFAULT_CONFIG["testsets"][f"defr-{domain}"]) for domain in DOMAINS}
    manifest_systems = {f"defr-{system}": {"kind": "hypotheses", "submission": system} for system in SUBMISSIONS}
    return {
        "mirror_dir": str(mirror_dir),
        **{key: copy.deepcopy(DEFAULT_CONFIG[key]) for key in ("dataset_manifest", "download", "metrics", "robustness")},
        "max_segments": 10,
        "uncertainty": {"resamples": 100},
        "testsets": {**testsets, **manifest_testsets},
        "systems": {**systems, **manifest_systems},
        "mt_studies": {
            "own": {"testsets": list(testsets), "systems": list(systems), "language_pair": "de-fr"},
            "manifest": {"testsets": list(manifest_testsets), "systems": list(manifest_systems)},
        },
    }


def _run(workdir: Path, config: dict[str, Any], pairs: list[tuple[str, str]]) -> None:
    """Run the workflow for the test sets and score tables of ``pairs`` (system, test set) only."""
    testsets = sorted({testset for _, testset in pairs})
    targets = [f"results/testsets/{testset}.tsv" for testset in testsets]
    targets += [f"results/scores/{system}/{testset}.tsv" for system, testset in pairs]
    result = run_workflow(workdir, config, *targets)
    assert result.returncode == 0, result.stdout[-5000:]


def _pairs(prefix: str) -> list[tuple[str, str]]:
    return [(f"{prefix}{system}", f"{prefix}{domain}") for system in SUBMISSIONS for domain in DOMAINS]


def _read(workdir: Path, path: str) -> str:
    return (workdir / path).read_text(encoding="utf-8")


def _scores(workdir: Path, system: str, testset: str) -> pd.DataFrame:
    table = pd.read_csv(workdir / "results" / "scores" / system / f"{testset}.tsv", sep="\t", dtype=str, keep_default_na=False)
    return table.drop(columns=[column for column in ("system", "testset") if column in table.columns])


def test_a_local_wmt_xml_file_is_prepared_and_translated_as_the_manifest_dataset(tmp_path: Path, mirror_dir: Path) -> None:
    testsets = {
        domain: {"file": str(mirror_dir / XML), "format": "wmt-xml", "select": {"domain": domain}, "domain": domain}
        for domain in DOMAINS
    }
    systems = {system: {"kind": "hypotheses", "submission": system} for system in SUBMISSIONS}
    workdir = tmp_path / "run"
    _run(workdir, _config(mirror_dir, testsets, systems), _pairs("") + _pairs("defr-"))
    for domain in DOMAINS:
        ours = _read(workdir, f"results/testsets/{domain}.tsv")
        assert ours == _read(workdir, f"results/testsets/defr-{domain}.tsv")  # ids, document ids, texts: byte for byte
        table = pd.read_csv(workdir / "results" / "testsets" / f"{domain}.tsv", sep="\t", dtype=str, keep_default_na=False)
        assert len(table) == 10 and (table["doc_id"] != "").all()
        for system in SUBMISSIONS:
            translation = _read(workdir, f"results/translations/{system}/{domain}.txt")
            assert translation == _read(workdir, f"results/translations/defr-{system}/defr-{domain}.txt")
            pd.testing.assert_frame_equal(_scores(workdir, system, domain), _scores(workdir, f"defr-{system}", f"defr-{domain}"))


def _write_plain(folder: Path, xml: Path) -> dict[str, int]:
    """The documents of :data:`DOMAINS` of ``xml`` as plain files (source, reference, a domain file with document
    ids, a hypotheses file per submission), in file order; returns the line of each segment id of the XML."""
    parsed = read_wmt_xml(xml)
    folder.mkdir()
    lines: dict[str, list[str]] = {"source": [], "reference": [], "domains": [], **{system: [] for system in SUBMISSIONS}}
    line_of_position: dict[int, int] = {}
    position = 0
    for document in parsed.documents:
        for index in range(len(document.source)):
            position += 1
            if document.domain not in DOMAINS:
                continue
            lines["source"].append(document.source[index])
            lines["reference"].append(document.reference[index])
            lines["domains"].append(f"{document.domain}\t{document.doc_id}")
            for system in SUBMISSIONS:
                lines[system].append(document.hypotheses[system][index])
            line_of_position[position] = len(lines["source"])
    for name, texts in lines.items():
        (folder / f"{name}.txt").write_text("".join(f"{text}\n" for text in texts), encoding="utf-8")
    return line_of_position


def test_plain_files_with_a_domain_file_are_prepared_and_translated_as_the_manifest_dataset(tmp_path: Path, mirror_dir: Path) -> None:
    plain = tmp_path / "plain"
    line_of_position = _write_plain(plain, mirror_dir / XML)
    testsets = {
        domain: {"source": str(plain / "source.txt"), "reference": str(plain / "reference.txt"), "format": "plain",
                 "domain_file": str(plain / "domains.txt"), "select": {"domain": domain}, "domain": domain}
        for domain in DOMAINS
    }
    # one file of the whole source per system, named for each domain's test set
    systems = {system: {"kind": "hypotheses", "files": {domain: str(plain / f"{system}.txt") for domain in DOMAINS}} for system in SUBMISSIONS}
    workdir = tmp_path / "run"
    _run(workdir, _config(mirror_dir, testsets, systems), _pairs("") + _pairs("defr-"))
    for domain in DOMAINS:
        read = {name: pd.read_csv(workdir / "results" / "testsets" / f"{name}.tsv", sep="\t", dtype=str, keep_default_na=False)
                for name in (domain, f"defr-{domain}")}
        ours, manifest = read[domain], read[f"defr-{domain}"]
        # the same segments and documents; ids are the lines of the plain files (here only two domains' lines)
        assert ours["segment_id"].tolist() == [str(line_of_position[int(segment)]) for segment in manifest["segment_id"]]
        pd.testing.assert_frame_equal(ours.drop(columns="segment_id"), manifest.drop(columns="segment_id"))
        assert (ours["doc_id"] != "").all()
        for system in SUBMISSIONS:
            translation = _read(workdir, f"results/translations/{system}/{domain}.txt")
            assert translation == _read(workdir, f"results/translations/defr-{system}/defr-{domain}.txt")
            scores, manifest_scores = _scores(workdir, system, domain), _scores(workdir, f"defr-{system}", f"defr-{domain}")
            pd.testing.assert_frame_equal(scores.drop(columns="segment_id"), manifest_scores.drop(columns="segment_id"))
