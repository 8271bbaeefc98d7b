"""Bad configs fail in planning (nlp_robustness.planning.prepare_config), naming the key, before any job.

These are the checks Snakemake runs when it parses the workflow (rules/common.smk calls the same
function); here they run in-process, without Snakemake's start-up. tests/e2e keeps a few of them through
Snakemake, to pin that the message reaches the user there too.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from nlp_robustness.errors import InputError
from nlp_robustness.planning import prepare_config
from tests.e2e.workflow_runner import small_config
from tests.paths import MIRROR, REPOSITORY

SMALL = small_config()


def _fails(edit) -> str:
    config = copy.deepcopy(SMALL)
    edit(config)
    with pytest.raises(InputError) as error:
        prepare_config(config, REPOSITORY)
    return str(error.value)


def test_the_small_config_plans() -> None:
    config = copy.deepcopy(SMALL)
    manifest = prepare_config(config, REPOSITORY)
    assert "wmt14-newstest2014-enfr" in manifest.datasets and list(config["testsets"]) == list(SMALL["testsets"])


def _set(path: str, value):
    """An edit that sets the config key at dotted ``path`` (the last part may be new)."""
    def edit(config: dict) -> None:
        *parents, last = path.split(".")
        node = config
        for part in parents:
            node = node[part]
        node[last] = value
    return edit


def _rename(path: str, old: str, new: str):
    def edit(config: dict) -> None:
        node = config
        for part in path.split("."):
            node = node[part]
        node[new] = node.pop(old)
    return edit


@pytest.mark.parametrize(("edit", "expected"), [
    # the schema and the config's own cross-references
    (_set("systems.apertium-en-es-fr.kind", "babelfish"), ["systems.apertium-en-es-fr.kind", "babelfish"]),
    (_rename("robustness.bagging", "blocks", "blocs"), ["robustness.bagging", "blocs"]),
    (_set("mt_studies.paper.leave_out", ["wmt14", "mtnt18"]), ["mt_studies.paper.leave_out[1]", "mtnt18"]),
    (_set("mt_studies.paper.testsets", ["wmt14", "defr-news"]), ["mt_studies.paper.testsets", "different language pairs"]),
    (_set("mt_studies.paper.language_pair", "de-fr"), ["mt_studies.paper.language_pair", "wmt14 is en-fr"]),
    (_set("mt_studies.paper.systems", ["apertium-en-es-fr", "defr-LT22"]), ["mt_studies.", "defr-LT22", "one language pair"]),
    (_set("mt_studies.wmt22-de-fr.systems", ["defr-LT22", "nobody"]), ["mt_studies.wmt22-de-fr.systems[1]", "'nobody' is not a system"]),
    # a system added to the config joins the paper study (its systems: every system no other study names)
    (lambda config: config["systems"].update(mine={"kind": "hypotheses", "files": {"wmt14": "a.txt"}}),
     ["systems.mine.files", "wmt15", "mt_studies.paper"]),
    (lambda config: config["perturbations"]["families"]["word_order"].update(testsets=["wmt14", "defr-news"]),
     ["perturbations.families.word_order.testsets[1]", "defr-news is de-fr"]),
    (_set("perturbations.flip_margin", -1), ["perturbations.flip_margin"]),
    (_set("systems", {}), ["invalid configuration at key 'systems'"]),
    # a mirror that is not there would silently turn every dataset into a download (offline: a failure 36 s later)
    (_set("mirror_dir", "/no/such/mirror"), ["mirror_dir: /no/such/mirror does not exist", "mirror_dir: null"]),
    (_set("mirror_dir", str(Path(__file__))), [f"mirror_dir: {Path(__file__)} is not a folder"]),
    (_set("testsets", {}), ["invalid configuration at key 'testsets'"]),
    # references into the dataset manifest
    (_set("sentiment.test.domains", ["books", "kitchen"]),
     ["sentiment.test.domains[1]", "'kitchen' is not a domain of dataset amazon-sentiment-acl"]),
    # perturbation families: functions and settings checked against the family's own schemas
    (lambda config: config["perturbations"]["families"]["word_order"]["functions"].update(WordSalad={}),
     ["perturbations.families.word_order.functions.WordSalad"]),
    (lambda config: config["perturbations"]["families"]["word_order"]["functions"].update(NounSwaps={"noun_units": 3}),
     ["perturbations.families.word_order.functions.NounSwaps.noun_units"]),
    # character attacks and metric robustness
    (lambda config: config["metric_robustness"]["attacks"].update({"leetspeak": {}}), ["metric_robustness.attacks.leetspeak"]),
    (_set("metric_robustness.levels", [1.5]), ["metric_robustness"]),
    (lambda config: config["perturbations"]["families"]["character_attacks"]["options"].update({"levels": [0]}),
     ["character_attacks.options.levels"]),
    (_set("metric_robustness.pairs", ["lt-en"]), ["metric_robustness.bertscore.layers"]),
    # Natural Robustness
    (_set("natural_robustness.families", ["natural", "typos"]), ["natural_robustness.families[1]"]),
    (_set("natural_robustness.same_response.chrf_threshold", 150), ["chrf_threshold"]),
    (_set("natural_robustness.sample_sizes", [0]), ["natural_robustness.sample_sizes"]),
    (lambda config: config["perturbations"]["families"]["natural"]["functions"].update(typos={"rat": 0.2}),
     ["perturbations.families.natural.functions.typos"]),
    (_set("natural_robustness.leave_out", ["shouting"]), ["natural_robustness.leave_out[0]"]),
])
def test_a_bad_config_fails_in_planning_naming_its_key(edit, expected: list[str]) -> None:
    message = _fails(edit)
    assert all(text in message for text in expected), message
    assert "\n" not in message  # one line


def test_a_failed_plan_names_the_first_problem_only_once_and_changes_nothing_on_disk(tmp_path) -> None:
    before = sorted(path.name for path in tmp_path.iterdir())
    _fails(_set("mt_studies.paper.leave_out", ["nowhere"]))
    assert sorted(path.name for path in tmp_path.iterdir()) == before


WMT22_DEFR = MIRROR / "wmt22-general-defr-frde" / "xml" / "wmttest2022.de-fr.all.xml"


def _own_wmt_xml(config: dict) -> None:
    """The small config's WMT'22 de-fr test sets read from the XML as the user's own file (no manifest)."""
    for name, spec in config["testsets"].items():
        if spec.get("dataset") == "wmt22-general-defr":
            config["testsets"][name] = {"file": str(WMT22_DEFR), "format": "wmt-xml", "select": dict(spec["select"]), "domain": spec["domain"]}
    config["mt_studies"]["wmt22-de-fr"]["language_pair"] = "de-fr"  # a local file names no languages


@pytest.mark.skipif(not WMT22_DEFR.is_file(), reason=f"WMT'22 mirror not found under {MIRROR}")
def test_a_users_wmt_xml_file_plans_and_its_errors_name_the_key_and_the_file() -> None:
    config = copy.deepcopy(SMALL)
    _own_wmt_xml(config)
    prepare_config(config, REPOSITORY)
    assert "translator" not in config["testsets"]["defr-news"]  # no default: the file's only one (here A) is read

    def own(edit):
        return lambda config: (_own_wmt_xml(config), edit(config))

    cases = [
        (_set("testsets.defr-news.select", {"domain": "nwes"}),
         f"testsets.defr-news.select.domain: 'nwes' is not a domain of {WMT22_DEFR} (its domains: conversation, ecommerce, news, social)"),
        (_set("systems.defr-Online-B.submission", "Online-Z"),
         f"systems.defr-Online-B.submission: 'Online-Z' is not a system of {WMT22_DEFR} (test set defr-conversation; its systems: "
         "LT22, Online-A, Online-B, Online-W, Online-Y, Online-G)"),
        (_set("testsets.defr-news.translator", "B"), f"testsets.defr-news.translator: 'B' is not a translator of {WMT22_DEFR} (its translators: A)"),
        (lambda config: config["testsets"]["defr-news"].update(source="a.de", reference="a.fr"),
         "invalid configuration at key 'testsets.defr-news': format wmt-xml reads one file holding source, references and systems: "
         "give 'file', not 'source'/'reference'"),
        (_set("testsets.defr-news.format", "plain"),
         "invalid configuration at key 'testsets.defr-news': 'file' is a WMT XML file, read with format: wmt-xml (a pair of files "
         "gives 'source' and 'reference')"),
        (_set("testsets.defr-news.domain_file", "d.tsv"),
         "invalid configuration at key 'testsets.defr-news': 'domain_file' goes with format: plain (a domain per line of 'source'), "
         "not wmt-xml"),
    ]
    for edit, message in cases:
        assert _fails(own(edit)) == message
    for edit, message in [
        (_set("testsets.wmt14.translator", "A"),
         "invalid configuration at key 'testsets.wmt14': a manifest dataset's test set names no file or format (translator): give "
         "'dataset' or files, not both"),
        (_set("testsets.wmt14", {"source": "a.en", "format": "plain", "domain": "news"}),
         "invalid configuration at key 'testsets.wmt14': a pair of files gives all of 'source', 'reference' and 'format' (missing: reference)"),
        (_set("testsets.wmt14", {"source": "a.en", "reference": "a.fr", "format": "wmt-sgml", "translator": "A", "domain": "news"}),
         "invalid configuration at key 'testsets.wmt14': 'translator' picks the reference of a WMT XML file (format: wmt-xml)"),
        (_set("testsets.wmt14", {"format": "wmt-xml", "domain": "news"}),
         "invalid configuration at key 'testsets.wmt14': format wmt-xml reads 'file' (the WMT XML file)"),
    ]:
        assert _fails(edit) == message
