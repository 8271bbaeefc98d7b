"""MT domain studies: which systems are measured across which test sets, in which language pair.

A config's ``mt_studies`` names its studies; each one is the setting of paper 000's Table 1: its test sets
(the domains, in order), its systems (the rows), the test sets left out in turn, and its language pair. The
pair decides the sentence metrics' tokenisation (``tokenize``: sacrebleu's BLEU tokenizer; by default the
one sacrebleu picks for the target language: ``zh`` for Chinese, ``ja-mecab`` for Japanese, ``ko-mecab``
for Korean, ``13a`` otherwise) and which perturbation families can apply (a family declares the source
languages its rules are written for). Another language pair is config only: test sets, systems, a study.

Without ``mt_studies`` (or with ``mt_studies: null``) a config with test sets has one study,
:data:`DEFAULT_STUDY`, of every test set and every system; ``mt_studies: {}``, or a config without test sets and
systems (human studies, sentiment or metric robustness alone), has none. A study that leaves out ``systems``
takes every system no other study names, so a system added to the config joins it with no further edit.

Choices (tested in tests/unit/test_mt_studies.py):

* A study's language pair is its test sets' (the manifest's ``source_language``/``target_language``); it
  must be given when a test set is a pair of files, and it must agree with every manifest test set.
* A test set belongs to one language pair and one tokenisation: two studies may share it only with both
  equal (its score file is written once). A system translates one language pair: every study it is in has
  that pair.
* A system lacking a test set of its study (a ``hypotheses`` system without a file for it, or without the
  submission in the test set's dataset) is an error naming the key, when the workflow is planned.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

from nlp_robustness.errors import InputError

__all__ = ["DEFAULT_STUDY", "bleu_tokenizer", "complete_mt_studies", "mt_study_warnings", "study_of_system", "testset_pairs",
           "testset_tokenizers"]

#: The name of the one study of a config without ``mt_studies``.
DEFAULT_STUDY = "domains"

# sacrebleu 2.x BLEU: with tokenize=None, the tokenizer of the target language (sacrebleu.metrics.bleu).
_SACREBLEU_TARGET_TOKENIZERS = {"zh": "zh", "ja": "ja-mecab", "ko": "ko-mecab"}


def _error(key: str, message: str) -> InputError:
    return InputError(f"invalid configuration at key '{key}': {message}")


def bleu_tokenizer(language_pair: str, tokenize: str | None) -> str:
    """The BLEU tokenizer of a study: ``tokenize`` when given, else sacrebleu's default for the target
    language of ``language_pair`` (``src-tgt``)."""
    if tokenize is not None:
        return tokenize
    target = language_pair.split("-", 1)[1]
    return _SACREBLEU_TARGET_TOKENIZERS.get(target, "13a")


def _language_pair(name: str, study: Mapping[str, Any], testset_specs: Mapping[str, Mapping[str, Any]],
                   dataset_languages: Mapping[str, tuple[str | None, str | None]]) -> str:
    """The study's pair: as configured, checked against its manifest test sets, or inferred from them."""
    key = f"mt_studies.{name}"
    found: dict[str, str] = {}
    for testset in study["testsets"]:
        dataset = testset_specs[testset].get("dataset")
        if dataset is None or dataset not in dataset_languages:
            continue
        source, target = dataset_languages[dataset]
        if source and target:
            found[testset] = f"{source}-{target}"
    configured = study.get("language_pair")
    if configured is not None:
        wrong = {testset: pair for testset, pair in found.items() if pair != configured}
        if wrong:
            testset, pair = next(iter(wrong.items()))
            raise _error(f"{key}.language_pair", f"'{configured}', but test set {testset} is {pair} (its dataset "
                                                 f"{testset_specs[testset]['dataset']})")
        return str(configured)
    pairs = sorted(set(found.values()))
    if len(pairs) > 1:
        raise _error(f"{key}.testsets", f"the test sets are of different language pairs ({', '.join(pairs)}); a study has one")
    if not pairs:
        # the implicit study of a config without mt_studies: say where the key goes
        where = ""
        if name == DEFAULT_STUDY:
            where = f" (a config without mt_studies has one study, {name}: mt_studies: {{{name}: {{language_pair: en-fr}}}})"
        raise _error(f"{key}.language_pair", "no test set of the study is a manifest dataset, so the pair cannot be "
                                             f"inferred: give it (e.g. en-fr){where}")
    return pairs[0]


def _check_names(names: Sequence[str], known: Sequence[str], key: str, what: str) -> None:
    for index, name in enumerate(names):
        if name not in known:
            raise _error(f"{key}[{index}]", f"'{name}' is not {what} (known: {', '.join(known) or 'none'})")


def _check_hypotheses(system: str, spec: Mapping[str, Any], study: str, testsets: Sequence[str]) -> None:
    """A hypotheses system given by files needs one for every test set of each of its studies."""
    if spec["kind"] != "hypotheses" or "files" not in spec:
        return
    missing = [testset for testset in testsets if testset not in spec["files"]]
    if missing:
        raise _error(f"systems.{system}.files", f"no file for test set(s) {', '.join(missing)} of study "
                                                f"mt_studies.{study}")


def _check_needed(name: str, study: Mapping[str, Any], implicit: bool, has_systems: bool) -> None:
    """A study has test sets and systems to translate them; what is missing is named by its key (the config's
    ``testsets``/``systems`` for the study of a config without ``mt_studies``)."""
    if not study["testsets"]:
        key = "testsets" if implicit else f"mt_studies.{name}.testsets"
        raise _error(key, "missing: the config's systems translate test sets (give testsets, or leave systems out: a "
                          "config of human_studies, sentiment or metric_robustness alone needs neither)")
    if not study["systems"]:
        key = "systems" if implicit or not has_systems else f"mt_studies.{name}.systems"
        detail = "every system is in another study's systems" if has_systems else "the config has no systems"
        raise _error(key, f"missing: MT study {name} translates its test sets with systems, and {detail} (give systems, "
                          "or mt_studies: {} for no MT study)")


def complete_mt_studies(config: MutableMapping[str, Any],
                        dataset_languages: Mapping[str, tuple[str | None, str | None]]) -> None:
    """Fill and check ``mt_studies`` in place (``dataset_languages``: manifest dataset -> (source, target)).

    Fills ``testsets`` (every test set), ``systems`` (every system that no other study names), ``leave_out``
    (every test set of the study; none for a study of one test set, where leaving it out would leave no pool)
    and ``language_pair``; ``tokenize`` stays as given (null: the target
    language's default, :func:`bleu_tokenizer`).

    Raises:
        InputError: Naming the first offending key.
    """
    testsets, systems = list(config["testsets"]), list(config["systems"])
    implicit = config.get("mt_studies") is None  # absent or null: the default study; {}: no MT study
    if implicit:
        config["mt_studies"] = {DEFAULT_STUDY: {}} if testsets or systems else {}
    # a study without a systems list takes every system no other study names: a system added to the config
    # joins it (and the branches that follow its language pair) with no other edit
    named = {system for study in config["mt_studies"].values() if "systems" in study for system in study["systems"]}
    unnamed = [system for system in systems if system not in named]
    pairs_of_testsets: dict[str, tuple[str, str, str]] = {}  # test set -> (pair, tokenizer, study)
    pairs_of_systems: dict[str, tuple[str, str]] = {}  # system -> (pair, study)
    for name, study in config["mt_studies"].items():
        key = f"mt_studies.{name}"
        study.setdefault("testsets", list(testsets))
        study.setdefault("systems", list(unnamed))
        _check_names(study["testsets"], testsets, f"{key}.testsets", "a test set")
        _check_names(study["systems"], systems, f"{key}.systems", "a system")
        _check_needed(name, study, implicit, bool(systems))
        study.setdefault("leave_out", list(study["testsets"]) if len(study["testsets"]) > 1 else [])
        _check_names(study["leave_out"], study["testsets"], f"{key}.leave_out", "a test set of this study")
        if len(study["testsets"]) < 2 and study["leave_out"]:
            raise _error(f"{key}.leave_out", "leaving out the only test set leaves no pool")
        study.setdefault("tokenize", None)
        study["language_pair"] = _language_pair(name, study, config["testsets"], dataset_languages)
        tokenizer = bleu_tokenizer(study["language_pair"], study["tokenize"])
        for testset in study["testsets"]:
            earlier = pairs_of_testsets.setdefault(testset, (study["language_pair"], tokenizer, name))
            if earlier[:2] != (study["language_pair"], tokenizer):
                raise _error(f"{key}.testsets", f"test set {testset} is also in study {earlier[2]} with language pair "
                                                f"{earlier[0]} and BLEU tokenizer {earlier[1]}; a test set is scored once")
        for system in study["systems"]:
            earlier_system = pairs_of_systems.setdefault(system, (study["language_pair"], name))
            if earlier_system[0] != study["language_pair"]:
                raise _error(f"{key}.systems", f"system {system} is also in study {earlier_system[1]} "
                                               f"({earlier_system[0]}); a system translates one language pair")
            _check_hypotheses(system, config["systems"][system], name, study["testsets"])


def mt_study_warnings(config: Mapping[str, Any]) -> list[str]:
    """One line per completed study of two test sets that leaves one out: each leave-one-out pool is then a
    single domain, so those columns measure no spread across domains (only the whole pool compares domains)."""
    return [
        f"mt_studies.{name}: two test sets ({', '.join(study['testsets'])}), so leaving one out leaves a single domain and "
        "the leave-one-out columns measure no spread across domains (leave_out: [] keeps the whole pool only)"
        for name, study in config["mt_studies"].items() if len(study["testsets"]) == 2 and study["leave_out"]
    ]


def testset_tokenizers(config: Mapping[str, Any]) -> dict[str, str]:
    """The BLEU tokenizer of every test set of a study (others: sacrebleu's default, ``13a``)."""
    found = {}
    for study in config["mt_studies"].values():
        for testset in study["testsets"]:
            found[testset] = bleu_tokenizer(study["language_pair"], study["tokenize"])
    return found


def testset_pairs(config: Mapping[str, Any]) -> dict[str, str]:
    """The language pair of every test set of a study."""
    return {testset: study["language_pair"] for study in config["mt_studies"].values() for testset in study["testsets"]}


def study_of_system(config: Mapping[str, Any]) -> dict[str, list[str]]:
    """System -> the studies it is a row of (config order)."""
    found: dict[str, list[str]] = {}
    for name, study in config["mt_studies"].items():
        for system in study["systems"]:
            found.setdefault(system, []).append(name)
    return found
