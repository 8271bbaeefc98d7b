"""The Natural Robustness branch (paper 001) in the shared small run, checked by value.

Every perturbed input must differ from its original; the same-response decisions of the MT systems are
recomputed from the translations with sacrebleu and an independent normalisation, the classifiers'
from their saved models; the scores of both record samples are recomputed from those decisions, with the
record order rebuilt from its documented hash; the consistency study's pool values from the responses.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
import pytest
import sacrebleu
import yaml

from tests.e2e.workflow_runner import TINY_CLASSIFIER, TINY_TRANSLATOR, run_workflow, small_config, with_profile

pytestmark = [pytest.mark.e2e, pytest.mark.apertium]

FAMILIES = ("natural", "paraphrase", "structure")
IDENTITY = "perturbed/natural_robustness/identity/pooled"  # the identity test set the three families' one sample shares
SYSTEMS = ["apertium-en-es-fr", "apertium-en-ca-fr", "convs2s-tatoeba", TINY_TRANSLATOR]  # the paper study's, but copy-source
DOMAINS = ["books", "dvd", "electronics", "kitchen_&_housewares"]
CLASSIFIERS = [*DOMAINS, TINY_CLASSIFIER]  # one trained per domain, then the Hugging Face model


def read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)


def lines(path: Path) -> list[str]:
    """A translation file as every rule reads it: a segment a line, its ends stripped."""
    return [line.strip() for line in path.read_text(encoding="utf-8").split("\n")[:-1]]


def section(workdir: Path) -> tuple[dict, dict]:
    config = yaml.safe_load((workdir / "config.yaml").read_text(encoding="utf-8"))
    types = {function: family for family in FAMILIES for function in config["perturbations"]["families"][family]["functions"]}
    return config, types


def test_every_perturbed_input_differs_from_its_original_and_every_skip_is_recorded(finished_run: Path) -> None:
    config, types = section(finished_run)
    testsets = {name: read(finished_run / f"results/testsets/{name}.tsv").set_index("segment_id")
                for name in config["mt_studies"]["paper"]["testsets"]}  # English sources: the families' test sets
    records = read(finished_run / "results/natural_robustness/sentiment/records.tsv")
    assert records.groupby("doc_id").size().to_dict() == {domain: 4 for domain in DOMAINS}
    for perturbation_type, family in types.items():
        derived = read(finished_run / f"results/testsets/perturbed/{family}/{perturbation_type}/pooled.tsv")
        status = read(finished_run / f"results/perturbations/{family}/{perturbation_type}/pooled.segments.tsv")
        assert len(status) == 6 * len(testsets) and len(derived) == (status["kept"] == "True").sum() > 0
        assert (status.loc[status["kept"] == "False", "reason"] != "").all()
        for row in derived.itertuples():
            original = testsets[row.testset].loc[row.segment_id]
            assert row.original_source == original["source"] and row.reference == original["reference"]
            assert row.source != row.original_source, (perturbation_type, row.segment_id)
        reviews = read(finished_run / f"results/natural_robustness/sentiment/perturbed/{family}/{perturbation_type}.tsv")
        by_id = records.set_index("segment_id")
        assert len(reviews) > 0
        for row in reviews.itertuples():
            assert row.original_source == by_id.loc[row.segment_id, "source"] != row.source
            assert row.reference == by_id.loc[row.segment_id, "reference"]  # the gold label, untouched


def normalised(text: str) -> str:
    """The documented exact-match normalisation, written out independently."""
    text = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    text = "".join(character for character in text if not unicodedata.category(character).startswith("P"))
    return " ".join(text.split())


def test_mt_responses_match_the_translations(finished_run: Path) -> None:
    config, types = section(finished_run)
    threshold = config["natural_robustness"]["same_response"]["chrf_threshold"]
    chrf = sacrebleu.CHRF()
    for system in SYSTEMS:
        responses = read(finished_run / f"results/natural_robustness/responses/mt/{system}.tsv")
        whole = {}  # each record's translation within its whole test set
        for testset in config["mt_studies"]["paper"]["testsets"]:
            table = read(finished_run / f"results/testsets/{testset}.tsv")
            whole.update(zip(testset + "/" + table["segment_id"], lines(finished_run / f"results/translations/{system}/{testset}.txt")))
        # the one identity test set the three families share (one seeded sample): each record's translation in the
        # perturbed sets' layout, translated once
        identity = read(finished_run / f"results/testsets/{IDENTITY}.tsv")
        assert (identity["source"] == identity["original_source"]).all()  # unperturbed
        layout = dict(zip(identity["testset"] + "/" + identity["segment_id"],
                          lines(finished_run / f"results/translations/{system}/{IDENTITY}.txt"), strict=True))
        assert not any((finished_run / f"results/testsets/perturbed/{family}/identity/pooled.tsv").exists() for family in FAMILIES)

        def response(record: str, kind: str, original: str, translation: str) -> tuple[str, ...]:
            score = 100.0 if translation == original else chrf.sentence_score(translation, [original]).score
            return (record, kind, str(normalised(original) == normalised(translation)), str(score >= threshold), original, translation)

        expected, controls = [], []
        for perturbation_type, family in types.items():
            derived = read(finished_run / f"results/testsets/perturbed/{family}/{perturbation_type}/pooled.tsv")
            translations = lines(finished_run / f"results/translations/{system}/perturbed/{family}/{perturbation_type}/pooled.txt")
            for row, translation in zip(derived.itertuples(), translations, strict=True):
                record = f"{row.testset}/{row.segment_id}"
                expected.append(response(record, perturbation_type, layout[record], translation))
            # a type with few perturbations: its own control, its records unperturbed in its perturbed set's layout
            control = read(finished_run / f"results/testsets/perturbed/{family}/{perturbation_type}/identity/pooled.tsv")
            assert control.empty == (len(derived) >= config["natural_robustness"]["type_noise_floor_below"])
            if not control.empty:
                assert control[["testset", "segment_id"]].equals(derived[["testset", "segment_id"]])
                assert (control["source"] == derived["original_source"]).all()
                translated = lines(finished_run / f"results/translations/{system}/perturbed/{family}/{perturbation_type}/identity/pooled.txt")
                controls += [response(f"{row.testset}/{row.segment_id}", f"identity/{perturbation_type}", layout[f"{row.testset}/{row.segment_id}"],
                                      translation) for row, translation in zip(control.itertuples(), translated, strict=True)]
        # the shared identity control: whole-test-set layout vs the identity layout; then the per-type ones
        expected += [response(record, "identity/natural_robustness", whole[record], translation) for record, translation in layout.items()]
        expected += controls
        got = list(responses[["record", "type", "same_exact", "same_chrf", "original_response", "perturbed_response"]].itertuples(index=False, name=None))
        if system == "convs2s-tatoeba":  # translation_jobs: per_family -- one job translated every set of a family
            for perturbation_type, family in types.items():
                report = json.loads((finished_run / f"results/translations/{system}/perturbed/{family}/{perturbation_type}/pooled.report.json").read_text())
                # the shared identity set in the job of the sample's first family only
                assert report["translated_with"] == [*(f"perturbed/{family}/{name}/pooled" for name, owner in types.items() if owner == family),
                                                     *([IDENTITY] if family == FAMILIES[0] else [])]
                assert report["segments"] == (responses["type"] == perturbation_type).sum()
        assert got == expected, system
        assert np.allclose(responses["chrf"].astype(float), [100.0 if a == b else chrf.sentence_score(b, [a]).score
                                                              for a, b in zip(responses["original_response"], responses["perturbed_response"])])


def test_classifier_responses_match_their_models(finished_run: Path) -> None:
    _, types = section(finished_run)
    records = read(finished_run / "results/natural_robustness/sentiment/records.tsv")
    for classifier in DOMAINS:  # the trained ones (the Hugging Face model: tests/e2e/test_huggingface.py)
        model = joblib.load(finished_run / f"results/sentiment/models/{classifier}/model.joblib")
        original = dict(zip(records["doc_id"] + "/" + records["segment_id"], model.predict(records["source"].tolist())))
        responses = read(finished_run / f"results/natural_robustness/responses/sentiment/{classifier}.tsv")
        expected = []
        for perturbation_type, family in types.items():
            reviews = read(finished_run / f"results/natural_robustness/sentiment/perturbed/{family}/{perturbation_type}.tsv")
            for key, label in zip(reviews["testset"] + "/" + reviews["segment_id"], model.predict(reviews["source"].tolist())):
                expected.append((key, perturbation_type, str(original[key] == label)))
        # the identity control: every sampled review classified again (a deterministic model gives its label back)
        again = model.predict(records["source"].tolist())
        expected += [(key, "identity/reviews", str(original[key] == label)) for key, label in zip(original, again)]
        assert list(responses[["record", "type", "same_label"]].itertuples(index=False, name=None)) == expected


def record_order(records: list[tuple[str, str]], seed: int) -> list[str]:
    """Records (part, item) by blake2b-128 of (seed, group, part, item) joined by U+001F, as documented."""
    def rank(record: tuple[str, str]) -> bytes:
        text = "\x1f".join([str(seed), "natural_robustness", *record])
        return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()
    return [f"{part}/{item}" for part, item in sorted(records, key=rank)]


def test_scores_follow_the_responses_on_both_record_samples(finished_run: Path) -> None:
    config, types = section(finished_run)
    seed = config["natural_robustness"]["seed"]
    scores = read(finished_run / "results/natural_robustness/scores.tsv")
    mt_records = sorted({(testset, segment_id) for family in FAMILIES for testset in config["mt_studies"]["paper"]["testsets"]
                         for segment_id in read(finished_run / f"results/perturbations/{family}/samples/{testset}.tsv")["segment_id"]})
    reviews = read(finished_run / "results/natural_robustness/sentiment/records.tsv")
    orders = {"mt": record_order(mt_records, seed), "sentiment": record_order(list(zip(reviews["doc_id"], reviews["segment_id"])), seed)}
    rows = [("mt", system, criterion) for system in SYSTEMS for criterion in ("exact", "chrf")]
    rows += [("sentiment", classifier, "label") for classifier in CLASSIFIERS]
    # the identity controls (noise floors), not types: one for the families' shared record sample and one per type with
    # a non-empty control test set (few perturbations) for an MT system, one for a classifier
    small = [name for name, family in types.items()
             if len(read(finished_run / f"results/testsets/perturbed/{family}/{name}/identity/pooled.tsv"))]
    controls = {"mt": ["identity/natural_robustness", *(f"identity/{name}" for name in small)], "sentiment": ["identity/reviews"]}
    assert len(scores) == 2 * sum(len(types) + 1 + len(controls[kind]) for kind, _, _ in rows)
    for kind, row, criterion in rows:
        responses = read(finished_run / f"results/natural_robustness/responses/{kind}/{row}.tsv")
        for sample, size in (("5", 5), ("all", None)):
            chosen = set(orders[kind][:size])
            selected = responses[responses["record"].isin(chosen)]
            got = scores[(scores["responder"] == row) & (scores["criterion"] == criterion) & (scores["sample"] == sample)].set_index("type")
            for perturbation_type in [*types, "all", *controls[kind]]:
                if perturbation_type == "all":  # every perturbation, the control's rows left out
                    part = selected[~selected["type"].str.startswith("identity/")]
                else:
                    part = selected[selected["type"] == perturbation_type]
                same = (part[f"same_{criterion}"] == "True").to_numpy()
                assert int(got.at[perturbation_type, "records"]) == len(chosen)
                assert int(got.at[perturbation_type, "perturbations"]) == len(same)
                assert int(got.at[perturbation_type, "unchanged"]) == same.sum()
                if len(same):
                    score = float(got.at[perturbation_type, "score"])
                    assert score == pytest.approx(same.mean())
                    assert float(got.at[perturbation_type, "ci_low"]) <= score <= float(got.at[perturbation_type, "ci_high"])
                else:
                    assert got.at[perturbation_type, "score"] == ""
    markdown = (finished_run / "results/tables/natural_robustness/scores.md").read_text(encoding="utf-8")
    assert "1.0 = robust" in markdown and "**Sample: 5 records**" in markdown
    header = next(line for line in markdown.splitlines() if line.startswith("| system or classifier"))
    assert "| noise floor |" in header and "noise floor (natural)" not in header  # one shared noise floor
    assert all(f"| {name} | noise floor ({name}) |" in header for name in small)  # a small type's own, beside it
    changes = pd.read_csv(finished_run / "results/tables/natural_robustness/perturbation_changes.csv")
    assert set(changes["type"]) == set(types) and (changes["chrf_to_input"].astype(float) < 100).all()
    for figure in ("scores", "gamma_curves"):
        assert (finished_run / f"results/figures/natural_robustness/{figure}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_consistency_across_types_uses_the_engine_with_types_as_domains(finished_run: Path) -> None:
    _, types = section(finished_run)
    for kind, row, criterion in (("mt", "apertium-en-es-fr", "chrf"), ("sentiment", "dvd", "label")):
        responses = read(finished_run / f"results/natural_robustness/responses/{kind}/{row}.tsv")
        shares = [100.0 * (responses.loc[responses["type"] == name, f"same_{criterion}"] == "True").mean() for name in types]
        summary = read(finished_run / f"results/natural_robustness/robustness/{criterion}/{row}.summary.tsv")
        pool = summary[(summary["method"] == "pool") & (summary["left_out"] == "none")].iloc[0]
        assert float(pool["mean"]) == pytest.approx(np.mean(shares))
        assert float(pool["variance"]) == pytest.approx(np.var(shares))
        assert int(pool["domains"]) == len(types)
    blocks = read(finished_run / "results/blocks/natural_robustness/mt.tsv")
    assert set(blocks["domain"]) == set(types)
    table = pd.read_csv(finished_run / "results/tables/natural_robustness/robustness_pool.csv")
    assert list(table.iloc[:, 0]) == [f"{system} ({criterion})" for criterion in ("exact", "chrf") for system in SYSTEMS] + [
        f"{classifier} (label)" for classifier in CLASSIFIERS]


def _rules(output: str) -> dict[str, str]:
    return dict(re.findall(r"^(\w+)\s+(\d+)$", output, flags=re.MULTILINE))


def test_editing_one_function_reruns_only_that_function_and_the_summaries(finished_run: Path) -> None:
    config = yaml.safe_load((finished_run / "config.yaml").read_text(encoding="utf-8"))
    config["perturbations"]["families"]["natural"]["functions"]["typos"] = {"rate": 0.3}
    result = run_workflow(finished_run, config, "--dry-run", config_name="edited.yaml")  # the jobs and their count table
    assert result.returncode == 0, result.stdout[-3000:]
    per_function = [wildcards for wildcards in re.findall(r"wildcards: (.*)", result.stdout) if "function=" in wildcards]
    assert per_function and all("function=typos" in wildcards for wildcards in per_function)
    assert _rules(result.stdout) == with_profile({
        # the MT side: the typos test set, its control test set (a checkpoint: were it to hold records, their
        # translations would join the DAG once it is written) and its translations (every system translates the
        # family's sets in one job: translation_jobs per_family_joint); the family writes no beta reports (metrics: [])
        "perturb_testset": "1", "natural_identity_testset": "1", "translate_apertium_natural": "2", "translate_fairseq_natural": "1", "translate_huggingface_natural": "1",
        # the reviews perturbed by typos, every row's responses, scores and consistency
        "perturb_reviews": "1", "natural_responses_mt": "4", "natural_responses_sentiment": "4",
        "natural_responses_sentiment_model": "1", "natural_robustness_scores": "1",
        "natural_robustness_tables": "1", "natural_robustness_figure": "1", "study_blocks": "2",
        "robustness_statistics": "13", "robustness_tables": "3", "robustness_comparisons": "1", "gamma_curves": "1",
        "all": "1", "total": "40",
    })
    config = yaml.safe_load((finished_run / "config.yaml").read_text(encoding="utf-8"))
    config["natural_robustness"]["same_response"]["chrf_threshold"] = 70
    result = run_workflow(finished_run, config, "--dry-run", "--quiet", "rules", config_name="edited.yaml")
    assert _rules(result.stdout) == with_profile({  # no perturbation, translation or classifier: the MT responses and what follows
        "natural_responses_mt": "4", "natural_robustness_scores": "1", "natural_robustness_tables": "1", "natural_robustness_figure": "1",
        "robustness_statistics": "8", "robustness_tables": "3", "robustness_comparisons": "1", "gamma_curves": "1",
        "all": "1", "total": "21",
    })


# the other bad settings are checked in-process (tests/unit/test_bad_config.py); one through Snakemake
@pytest.mark.parametrize(("edit", "key"), [
    (lambda config: config["natural_robustness"].update(families=["natural", "typos"]), "natural_robustness.families[1]"),
])
def test_bad_natural_config_fails_before_any_job_naming_the_key(tmp_path: Path, mirror_dir: Path, edit, key: str) -> None:
    config = small_config(mirror_dir)
    edit(config)
    result = run_workflow(tmp_path, config, "--dry-run")
    assert result.returncode != 0 and key in result.stdout, result.stdout[-2000:]
    assert not (tmp_path / "results").exists()
