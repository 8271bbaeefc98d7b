"""The WMT22 de->fr study of the shared small run, recomputed from the organisers' XML with sacrebleu.

Independent of the workflow's reader: the XML is parsed here with ElementTree, each domain's first
``max_segments`` segments are scored with sacrebleu's sentence BLEU, and the per-domain means, the pooled
Mean/Var/COV and the between-domain SD (method of moments, written out here) must equal the run's tables.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import sacrebleu
from sacrebleu.metrics import BLEU

from tests.e2e.workflow_runner import small_config

pytestmark = pytest.mark.e2e

STUDY = "wmt22-de-fr"


def _segments_by_domain(xml_path: Path, systems: list[str]) -> dict[str, dict[str, list[str]]]:
    """domain -> {"reference": [...], "document": [...], system: [...]} in file order."""
    found: dict[str, dict[str, list[str]]] = {}
    for document in ElementTree.parse(xml_path).getroot().iter("doc"):
        texts = found.setdefault(document.get("domain"), {"reference": [], "document": [], **{system: [] for system in systems}})
        references = [(segment.text or "").strip() for segment in document.find("ref").iter("seg")]
        texts["reference"] += references
        texts["document"] += [document.get("id")] * len(references)
        for hypothesis in document.findall("hyp"):
            if hypothesis.get("system") in systems:
                texts[hypothesis.get("system")] += [(segment.text or "").strip() for segment in hypothesis.iter("seg")]
    return found


def _between_sd(domains: list[dict[str, np.ndarray]]) -> float:
    """The between-domain SD of the nested random-effects model (domains, documents within them, segments within
    documents) by the ANOVA method of moments, written out from the expected mean squares (Searle, Casella and
    McCulloch 1992, 3.6): ``domains`` is one mapping document -> scores per domain."""
    k = len(domains)
    cells = [(index, scores) for index, documents in enumerate(domains) for scores in documents.values()]
    total = sum(len(scores) for _, scores in cells)
    grand = np.concatenate([scores for _, scores in cells]).mean()
    domain_scores = [np.concatenate(list(documents.values())) for documents in domains]
    domain_sizes = np.array([len(scores) for scores in domain_scores], dtype=float)
    ss_domains = sum(n * (scores.mean() - grand) ** 2 for n, scores in zip(domain_sizes, domain_scores))
    ss_documents = sum(len(scores) * (scores.mean() - domain_scores[index].mean()) ** 2 for index, scores in cells)
    ss_segments = sum(((scores - scores.mean()) ** 2).sum() for _, scores in cells)
    msa, msb, mse = ss_domains / (k - 1), ss_documents / (len(cells) - k), ss_segments / (total - len(cells))
    within_share = sum(len(scores) ** 2 / domain_sizes[index] for index, scores in cells)
    k1 = (total - within_share) / (len(cells) - k)
    k2 = (within_share - sum(len(scores) ** 2 for _, scores in cells) / total) / (k - 1)
    k3 = (total - (domain_sizes ** 2).sum() / total) / (k - 1)
    document_variance = (msb - mse) / k1
    return math.sqrt(max(0.0, (msa - mse - k2 * document_variance) / k3))


def _small_run_study(mirror_dir: Path) -> tuple[dict, int, dict[str, str], dict[str, str], dict[str, dict[str, list[str]]]]:
    """The small config's WMT22 de-fr study: its spec, max_segments, system -> submission, test set -> domain, and
    the XML's segments by domain (:func:`_segments_by_domain`)."""
    config = small_config(mirror_dir)
    study = config["mt_studies"][STUDY]
    submissions = {name: config["systems"][name]["submission"] for name in study["systems"]}
    xml = _segments_by_domain(mirror_dir / "wmt22-general-defr-frde/xml/wmttest2022.de-fr.all.xml", list(submissions.values()))
    testsets = {name: config["testsets"][name]["select"]["domain"] for name in study["testsets"]}
    return study, config["max_segments"], submissions, testsets, xml


def test_the_wmt22_study_recomputes_from_the_xml(finished_run: Path, mirror_dir: Path) -> None:
    study, limit, submissions, testsets, xml = _small_run_study(mirror_dir)
    means = pd.read_csv(finished_run / f"results/tables/{STUDY}/bleu/testset_means.csv", index_col="system")
    pool = pd.read_csv(finished_run / f"results/tables/{STUDY}/bleu/robustness_pool.csv", index_col="system")
    bleu = BLEU(effective_order=True)
    for system, submission in submissions.items():
        scores, by_document = [], []
        for testset, domain in testsets.items():
            references, hypotheses = xml[domain]["reference"][:limit], xml[domain][submission][:limit]
            domain_scores = np.array([bleu.sentence_score(h, [r]).score for h, r in zip(hypotheses, references)])
            assert means.at[system, testset] == pytest.approx(domain_scores.mean(), abs=1e-4), (system, testset)
            scores.append(domain_scores)
            documents = np.array(xml[domain]["document"][:limit])
            by_document.append({document: domain_scores[documents == document] for document in dict.fromkeys(documents)})
        pooled = np.concatenate(scores)
        assert pool.at[system, "whole_pool_Mean"] == pytest.approx(pooled.mean(), rel=1e-9)
        assert pool.at[system, "whole_pool_Var"] == pytest.approx(pooled.var(), rel=1e-9)
        assert pool.at[system, "whole_pool_COV"] == pytest.approx(pooled.std() / pooled.mean(), rel=1e-9)
        # documents nested in the domains: the engine resamples them whole and takes their noise out of the between part
        assert pool.at[system, "whole_pool_between_SD"] == pytest.approx(_between_sd(by_document), rel=1e-6, abs=1e-9)
    # the study is its own profile group, ranked on quality, the paper's measures and the between-domain SD
    profile = pd.read_csv(finished_run / "results/tables/profile/mt-wmt22-de-fr.csv")
    assert set(profile["system"]) == set(study["systems"])


def test_the_corpus_table_recomputes_with_sacrebleu_from_the_xml(finished_run: Path, mirror_dir: Path) -> None:
    """Corpus BLEU and chrF of every system per domain and on the pool: sacrebleu's corpus_bleu/corpus_chrf of the
    XML's first max_segments segments of each domain; intervals contain the score; the comparisons name every pair."""
    study, limit, submissions, testsets, xml = _small_run_study(mirror_dir)
    scores = pd.read_csv(finished_run / f"results/tables/{STUDY}/corpus_scores.csv").set_index(["pool", "system"])
    for system, submission in submissions.items():
        pooled_hypotheses, pooled_references = [], []
        for testset, domain in testsets.items():
            references, hypotheses = xml[domain]["reference"][:limit], xml[domain][submission][:limit]
            pooled_hypotheses += hypotheses
            pooled_references += references
            row = scores.loc[(testset, system)]
            assert row["bleu"] == pytest.approx(sacrebleu.corpus_bleu(hypotheses, [references]).score, abs=1e-9)
            assert row["chrf"] == pytest.approx(sacrebleu.corpus_chrf(hypotheses, [references]).score, abs=1e-9)
            assert row["segments"] == limit and row["documents"] == len(set(xml[domain]["document"][:limit]))
        row = scores.loc[("all", system)]
        assert row["bleu"] == pytest.approx(sacrebleu.corpus_bleu(pooled_hypotheses, [pooled_references]).score, abs=1e-9)
        assert row["bleu_lo"] <= row["bleu"] <= row["bleu_hi"] and row["bleu_signature"].startswith("nrefs:1|case:mixed|eff:no|tok:13a")
    comparisons = pd.read_csv(finished_run / f"results/tables/{STUDY}/corpus_comparisons.csv")
    assert len(comparisons) == 15 * (len(testsets) + 1) * 2 and set(comparisons["pairs"]) == {15}
