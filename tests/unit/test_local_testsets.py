"""Test sets of a user's own files with domains (nlp_robustness.data.local_testsets): a WMT XML file and plain
text with a domain file; their tables, the plan-time checks and each message; the file pair's route unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from nlp_robustness.data.acquisition import plan_dataset, read_dataset
from nlp_robustness.data.local_testsets import LocalFiles, check_local_testsets, read_domain_file, read_local_testset
from nlp_robustness.data.manifest import load_manifest
from nlp_robustness.data.testset_preparation import check_text_files, prepare_testset
from nlp_robustness.data.testsets import load_parallel_files
from nlp_robustness.errors import InputError
from tests.paths import MANIFEST, MANIFEST_SCHEMA, MIRROR
from tests.unit.test_wmt_xml import _doc, _good_doc, _side, _write

WMT22 = MIRROR / "wmt22-general-defr-frde" / "xml" / "wmttest2022.de-fr.all.xml"
needs_mirror = pytest.mark.skipif(not WMT22.is_file(), reason=f"WMT'22 mirror not found under {MIRROR}")


def _plain(tmp_path: Path, domains: list[str], source: list[str] | None = None) -> dict[str, str]:
    """A plain pair of len(domains) lines and the domain file ``domains`` (lines as written)."""
    n = len(source) if source is not None else len(domains)
    files = {"source": source or [f"quelle {i}" for i in range(1, n + 1)], "reference": [f"ref {i}" for i in range(1, n + 1)],
             "domain_file": domains}
    spec = {"format": "plain", "domain": "x"}
    for key, lines in files.items():
        path = tmp_path / f"{key}.txt"
        path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
        spec[key] = str(path)
    return spec


def _xml_spec(path: Path, **more) -> dict:
    return {"file": str(path), "format": "wmt-xml", "translator": "A", "domain": "x", **more}


def _error(testsets: dict, files: LocalFiles | None = None) -> str:
    with pytest.raises(InputError) as caught:
        check_local_testsets(testsets, files or LocalFiles())
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_a_domain_file_gives_domains_and_optionally_document_ids(tmp_path: Path) -> None:
    path = tmp_path / "d.tsv"
    path.write_text("news\td1\nnews\td1\nsocial\td2\n", encoding="utf-8")
    read = read_domain_file(path)
    assert read.domains == ("news", "news", "social") and read.doc_ids == ("d1", "d1", "d2") and read.values == ("news", "social")
    path.write_text("news\nsocial\n", encoding="utf-8")
    assert read_domain_file(path).doc_ids is None
    for text, message in [
        ("news\td1\nsocial\n", f"{path}: line 2: no document id, but line 1 gives one: give a document id on every line or on none"),
        ("news\nsocial\td2\n", f"{path}: line 2: a document id, but line 1 gives none: give a document id on every line or on none"),
        ("news\n\n", f"{path}: line 2: no domain"),
        ("news\td1\tx\n", f"{path}: line 1: 3 tab-separated fields; a line is a domain, optionally a tab and a document id"),
    ]:
        path.write_text(text, encoding="utf-8")
        with pytest.raises(InputError) as caught:
            read_domain_file(path)
        assert str(caught.value) == message


def test_plain_files_with_a_domain_file_select_lines_by_domain_with_line_numbers_and_documents(tmp_path: Path) -> None:
    spec = _plain(tmp_path, ["news\td1", "social\td2", "news\td3", "social\td2"]) | {"select": {"domain": "news"}}
    table, files, origin = read_local_testset(spec)
    prepared, counts = prepare_testset(table, max_segments=None, allow_empty_segments=False, drop_source_equals_reference=False,
                                       files=files, select=spec["select"])
    assert prepared["segment_id"].tolist() == ["1", "3"] and prepared["doc_id"].tolist() == ["d1", "d3"]
    assert prepared["source"].tolist() == ["quelle 1", "quelle 3"] and list(prepared.columns) == ["segment_id", "doc_id", "source", "reference"]
    assert counts["segments_read"] == 4 and counts["segments_selected"] == 2 and counts["documents"] == 2
    assert set(origin) == {"source", "reference", "format", "domain_file", "source_sha256", "reference_sha256", "domain_file_sha256"}
    assert check_local_testsets({"news": spec}, LocalFiles()) == {"news": 4}  # the whole file: a hypotheses file's lines


def test_an_empty_line_of_a_selected_domain_names_its_line_in_the_whole_file(tmp_path: Path) -> None:
    spec = _plain(tmp_path, ["news", "social", "news"], source=["a", "", ""]) | {"select": {"domain": "news"}}
    assert _error({"t": spec}).startswith(f"testsets.t: {spec['source']}: line 3: empty source segment (segment 2 of the test set;")
    assert check_local_testsets({"t": spec | {"select": {"domain": "social"}, "allow_empty_segments": True}}, LocalFiles()) == {"t": 3}


def test_plan_time_errors_of_a_domain_file(tmp_path: Path) -> None:
    spec = _plain(tmp_path, ["news", "social", "news"])
    short = tmp_path / "short.tsv"
    short.write_text("news\nsocial\n", encoding="utf-8")
    assert _error({"t": spec | {"domain_file": str(short)}}) == (
        f"testsets.t.domain_file: {short} has 2 lines, but {spec['source']} and {spec['reference']} have 3: a domain file has one "
        "line per segment"
    )
    assert _error({"t": spec | {"select": {"domain": "nwes"}}}) == (
        f"testsets.t.select.domain: 'nwes' is not a domain of {spec['domain_file']} (its domains: news, social)"
    )
    assert _error({"t": spec | {"select": {"genre": "news"}}}) == (
        "testsets.t.select.genre: unknown column 'genre' (a test set of own files selects on: domain)"
    )
    Path(spec["domain_file"]).write_text("news\nsocial\n\n", encoding="utf-8")
    assert _error({"t": spec}) == f"testsets.t.domain_file: {spec['domain_file']}: line 3: no domain"


def test_a_local_wmt_xml_file_may_lack_domains_unless_one_is_selected(tmp_path: Path) -> None:
    path = _write(tmp_path, [_good_doc("d1", "news"), _doc("d2", None, [
        _side("src", 'lang="de"', ["x"]), _side("ref", 'lang="fr" translator="A"', ["y"]),
        _side("hyp", 'system="S1" lang="fr"', ["h1"]), _side("hyp", 'system="S2" lang="fr"', ["h2"])])])
    assert check_local_testsets({"t": _xml_spec(path)}, LocalFiles()) == {"t": 3}
    table, files, origin = read_local_testset(_xml_spec(path))
    assert table["domain"].tolist() == ["news", "news", ""] and table["doc_id"].tolist() == ["d1", "d1", "d2"]
    assert files == (str(path), str(path), "wmt-xml") and origin["translator"] == "A"
    assert _error({"t": _xml_spec(path, select={"domain": "news"})}) == (
        f"testsets.t.select.domain: {path}: line 30: document 'd2' has no domain attribute, so the file's documents cannot be "
        "selected by domain"
    )
    bare = _write(tmp_path, [_doc("d1", None, [_side("src", 'lang="de"', ["x"]), _side("ref", 'lang="fr" translator="A"', ["y"])])])
    assert _error({"t": _xml_spec(bare, select={"domain": "news"})}) == (
        f"testsets.t.select.domain: {bare} has no document with a domain attribute, so none can be selected"
    )


def test_plan_time_errors_of_a_wmt_xml_file(tmp_path: Path) -> None:
    path = _write(tmp_path, [_good_doc("d1", "news"), _good_doc("d2", "social")])
    assert _error({"t": _xml_spec(path, translator="B")}) == f"testsets.t.translator: 'B' is not a translator of {path} (its translators: A)"
    assert _error({"t": _xml_spec(path, select={"domain": "nwes"})}) == (
        f"testsets.t.select.domain: 'nwes' is not a domain of {path} (its domains: news, social)"
    )
    path.write_text(path.read_text(encoding="utf-8").replace("</dataset>", ""), encoding="utf-8")
    assert _error({"t": _xml_spec(path)}).startswith(f"testsets.t.file: {path}: line ")


def test_the_translator_of_a_local_wmt_xml_file_without_a_translator_key(tmp_path: Path) -> None:
    """One reference translator (WMT'23's refA) is read whatever its name; A among several; otherwise the error
    names the key and lists the file's translators; the provenance records the translator read."""
    def written(folder: str, translators: list[str]) -> Path:
        (tmp_path / folder).mkdir()
        sides = [_side("src", 'lang="ru"', ["quelle"])]
        sides += [_side("ref", f'lang="en" translator="{name}"', [f"reference {name}"]) for name in translators]
        return _write(tmp_path / folder, [_doc("d1", "news", sides + [_side("hyp", 'system="S" lang="en"', ["hyp"])])])

    def spec(path: Path, **more) -> dict:
        return {"file": str(path), "format": "wmt-xml", "domain": "news", **more}

    one = written("one", ["refA"])
    assert check_local_testsets({"t": spec(one)}, LocalFiles()) == {"t": 1}
    table, _, origin = read_local_testset(spec(one))
    assert table["reference"].tolist() == ["reference refA"] and origin["translator"] == "refA"
    two = written("two", ["A", "B"])
    assert read_local_testset(spec(two))[0]["reference"].tolist() == ["reference A"]
    assert read_local_testset(spec(two, translator="B"))[0]["reference"].tolist() == ["reference B"]
    neither = written("neither", ["B", "C"])
    assert _error({"t": spec(neither)}) == (
        f"testsets.t.translator: {neither} has 2 reference translators and none is A (B, C): name the one to read"
    )
    assert check_local_testsets({"t": spec(neither, translator="C")}, LocalFiles()) == {"t": 1}
    assert _error({"t": spec(one, translator="A")}) == f"testsets.t.translator: 'A' is not a translator of {one} (its translators: refA)"


def test_a_file_read_once_per_planning_and_a_missing_one_left_to_snakemake(tmp_path: Path, monkeypatch) -> None:
    import nlp_robustness.data.local_testsets as local

    path = _write(tmp_path, [_good_doc("d1", "news"), _good_doc("d2", "social")])
    reads = []
    monkeypatch.setattr(local, "read_wmt_xml", lambda *arguments, **options: reads.append(arguments) or read(*arguments, **options))
    from nlp_robustness.data.wmt_xml import read_wmt_xml as read

    testsets = {domain: _xml_spec(path, select={"domain": domain}) for domain in ("news", "social")}
    assert check_local_testsets(testsets | {"gone": _xml_spec(tmp_path / "gone.xml")}, LocalFiles()) == {"news": 4, "social": 4}
    assert len(reads) == 1


def test_a_hypotheses_file_of_a_local_test_set_is_checked_against_the_whole_file(tmp_path: Path) -> None:
    spec = _plain(tmp_path, ["news", "social", "news"]) | {"select": {"domain": "news"}}
    hypotheses = tmp_path / "hyp.txt"
    hypotheses.write_text("a\nb\n", encoding="utf-8")
    whole = check_local_testsets({"t": spec}, LocalFiles())
    systems = {"s": {"kind": "hypotheses", "files": {"t": str(hypotheses)}}}
    with pytest.raises(InputError) as caught:
        check_text_files({"t": spec}, systems, 10, {}, whole)
    assert str(caught.value) == (
        f"systems.s.files.t: {hypotheses} has 2 lines, but {spec['source']} (domain file {spec['domain_file']}) has 3 segments: "
        "a hypotheses file of a test set read from a WMT XML file or with a domain file translates the whole file, one line "
        "per segment (test set t takes its own by segment id)"
    )
    hypotheses.write_text("a\nb\nc\n", encoding="utf-8")
    check_text_files({"t": spec}, systems, 10, {}, whole)


def test_a_plain_pair_without_a_domain_file_is_read_as_before(tmp_path: Path) -> None:
    spec = _plain(tmp_path, ["news", "social"])
    del spec["domain_file"]
    assert check_local_testsets({"t": spec}, LocalFiles()) == {}
    table = load_parallel_files(spec["source"], spec["reference"], "plain")
    assert table.to_dict("list") == {"segment_id": ["1", "2"], "doc_id": ["", ""], "source": ["quelle 1", "quelle 2"],
                                     "reference": ["ref 1", "ref 2"]}


@needs_mirror
def test_a_local_wmt22_file_prepares_the_rows_of_the_manifest_dataset(tmp_path: Path) -> None:
    """Byte for byte (after the prepare step), a domain of the XML read as a local file is the manifest's test set."""
    manifest = load_manifest(MANIFEST, MANIFEST_SCHEMA)
    dataset = read_dataset(plan_dataset(manifest.datasets["wmt22-general-defr"], manifest, str(MIRROR), str(tmp_path)))
    local, files, _ = read_local_testset(_xml_spec(WMT22))
    for domain in ("news", "social"):
        options = {"max_segments": 10, "allow_empty_segments": False, "drop_source_equals_reference": False, "select": {"domain": domain}}
        ours, our_counts = prepare_testset(local, files=files, **options)
        theirs, their_counts = prepare_testset(dataset, **options)
        assert ours.equals(theirs) and our_counts == their_counts
