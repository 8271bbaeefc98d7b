"""Configuration validation, lookup tables and input functions: the only place that reads config."""

import os
import re
from pathlib import Path

from snakemake.logging import logger

from nlp_robustness.config.references import acquired_datasets
from nlp_robustness.data.acquisition import download_file_path, is_mirror_substitute, mirror_download_file, plan_dataset
from nlp_robustness.data.document_ids import configured_without_document_ids, segments_as_units_note
from nlp_robustness.data.download import Checksum
from nlp_robustness.errors import InputError
from nlp_robustness.outputs.report_sections import (
    DOMAINS as DOMAINS_SECTION,
    HUMAN as HUMAN_SECTION,
    METRIC_ROBUSTNESS as METRIC_ROBUSTNESS_SECTION,
    NATURAL as NATURAL_SECTION,
    SENTIMENT as SENTIMENT_SECTION,
    family_section,
)
from nlp_robustness.perturbations.configuration import derived_testset, derived_testsets, function_category, parts
from nlp_robustness.perturbations.derive import perturbed_sides, sample_group
from nlp_robustness.perturbations.registry import family_module
from nlp_robustness.planning import bleu_tokenizers, plan_warnings, prepare_config, render_study_caption
from nlp_robustness.planning import study_comparisons_job, study_table_job, study_testsets
from nlp_robustness.run_directory import rebase_path
from nlp_robustness.run_owner import allowed, claim_run_directory, config_file_names, run_owner
from nlp_robustness.scheduler_fix import coalesce_reevaluation_timers
from nlp_robustness.statistics.pools import METHODS
from nlp_robustness.studies.metric_attack_conditions import conditions as metric_conditions
from nlp_robustness.studies.metric_attack_conditions import levels_of as metric_levels_of
from nlp_robustness.studies.metric_attack_conditions import metric_variants, pair_downloads
from nlp_robustness.studies.natural_robustness_config import perturbation_types
from nlp_robustness.studies.plan import study_plan
from nlp_robustness.studies.study_settings import METRIC_AGREEMENT, human_score_directions, human_score_epsilons, human_scores, metric_file_values, mt_study_directory
from nlp_robustness.studies.study_settings import mt_score_files as study_score_files
from nlp_robustness.studies.study_settings import pair_score_files as family_pair_score_files
from nlp_robustness.studies.study_settings import review_response_files
from nlp_robustness.studies.profile_plan import config_hash, plan_files, profile_plan
from nlp_robustness.studies.sentiment import sentiment_classifiers, sentiment_models


# Snakemake 9.27's scheduler starts one more wake-up timer per finished job while jobs wait for cores, and
# ends up spending a seventh of two cores on scheduling rounds: keep one timer (nlp_robustness.scheduler_fix;
# Snakemake 9.27.1 only, another version runs unpatched with one warning, from the main process only).
# Cores held for the training chain's two-core jobs: the scheduler plugin greedy-urgent (profiles/default).
coalesce_reevaluation_timers(warn=workflow.is_main_process)

# The config is checked, completed (every default is written once, in the schema, and filled in here) and
# made canonical (records' keys sorted, so reordering keys or writing out a default reruns nothing); the
# manifest is loaded and checked against it. Nothing after this point restates a default.
# Its relative paths are the launch directory's, rebased when the Snakefile's workdir: moved to its run_directory.
MANIFEST = prepare_config(config, workflow.basedir, [rebase_path(str(path), workflow.workdir_init, Path.cwd()) for path in workflow.configfiles],
                          launch_directory=workflow.workdir_init)
if workflow.overwrite_workdir is not None and config.get("run_directory", ".") != ".":
    logger.warning(f"run_directory {config['run_directory']} is not used: --directory {workflow.overwrite_workdir} is this run's directory")
# A run directory's owner is the config of its last run with jobs (its resolved config's digest); a run of another
# config whose jobs would replace the owner's files is refused before its first job, unless allow_mixed_run_directory
# (nlp_robustness.run_owner). The key is taken out of the config first: it changes no params and no result.
ALLOW_MIXED_RUN_DIRECTORY = allowed(config)
RUN_OWNER = run_owner(config, config_file_names(workflow.configfiles, workflow.workdir_init))


onstart:
    _replaced = sorted({str(path) for job in workflow.dag.needrun_jobs() for path in job.output if os.path.exists(path)})
    if (_note := claim_run_directory(RUN_OWNER, _replaced, workflow.workdir_init, ALLOW_MIXED_RUN_DIRECTORY)) is not None:
        logger.info(_note)


TESTSETS = list(config["testsets"])
SYSTEMS = list(config["systems"])
# MT domain studies (nlp_robustness.studies.mt_studies): each its test sets, systems, left-out test sets and
# language pair; a test set's language pair decides its BLEU tokenizer.
MT_STUDIES = config["mt_studies"]
BLEU_TOKENIZERS = bleu_tokenizers(config)  # a perturbed test set is scored with the tokenizer of those it was drawn from
METRICS = list(config["metrics"])
ROBUSTNESS = config["robustness"]
UNCERTAINTY = config["uncertainty"]
DOWNLOAD = config["download"]
MIRROR_DIR = config["mirror_dir"]
MAX_SEGMENTS = config["max_segments"]
# Perturbation families (rules/perturbations.smk): each function of a family derives perturbed test sets
# (results/testsets/perturbed/<family>/<function>/<part>.tsv) that are translated and scored like the others.
PERTURBATIONS = config.get("perturbations")
FAMILIES = dict(PERTURBATIONS["families"]) if PERTURBATIONS else {}
PERTURBATION_METRICS = list(PERTURBATIONS["metrics"]) if PERTURBATIONS else []
DERIVED_TESTSETS = [name for family, spec in FAMILIES.items() for name in derived_testsets(family, spec)]
# Every test set is scored with the MT metrics and the perturbation metrics (beta and beta1 come from there).
SCORED_METRICS = METRICS + [metric for metric in PERTURBATION_METRICS if metric not in METRICS]
# Downloads are resources the workflow fetches (snakemake-workflows convention; gitignored). The
# rules in datasets.smk spell this prefix out in their output paths.
DOWNLOAD_DIR = "resources/downloads"


def _workflow_path(path):
    """A config path to a file of the workflow itself (manifest, lock): relative ones are resolved
    against the workflow directory, so the workflow runs from any working directory (`--directory`)."""
    return str(Path(workflow.basedir) / path)


# As the config writes it, relative to the workflow directory: fetch_download resolves it against its
# script's directory. An absolute path of the checkout in its params would rerun every download, and
# all that follows, of a project copied to another directory with its results/ and .snakemake/.
CHECKSUM_LOCK = DOWNLOAD["checksum_lock"]
# The sentiment branch (optional): TF-IDF classifiers trained here are named after their training domains;
# Hugging Face models (sentiment.models) by their config names. The study's rows are both.
SENTIMENT = config.get("sentiment")
SENTIMENT_CLASSIFIERS = list(SENTIMENT["training"]["domains"]) if SENTIMENT else []
SENTIMENT_MODELS = sentiment_models(config)
SENTIMENT_ROWS = sentiment_classifiers(config)
# Robustness of evaluation metrics to attacked references (optional; rules/metric_robustness.smk):
# WMT19 to-English pairs, conditions = clean + attack x level, rows = metric variants.
METRIC_ROBUSTNESS = config.get("metric_robustness")
WMT19_PAIRS = list(METRIC_ROBUSTNESS["pairs"]) if METRIC_ROBUSTNESS else []
METRIC_CONDITIONS = metric_conditions(METRIC_ROBUSTNESS) if METRIC_ROBUSTNESS else []
METRIC_LEVELS = metric_levels_of(METRIC_ROBUSTNESS) if METRIC_ROBUSTNESS else {}
METRIC_VARIANTS = metric_variants(METRIC_ROBUSTNESS) if METRIC_ROBUSTNESS else []
# The human-judgement branch (optional): systems scored by humans on several domains.
HUMAN_STUDIES = config["human_studies"]
HUMAN_DOMAINS = sorted({domain for spec in HUMAN_STUDIES.values() for domain in spec["domains"]})
# Where every manifest dataset is read from (mirror or downloads), decided now so that a dry run
# shows every download; any manifest dataset can be requested as results/datasets/<key>.tsv.
DATASET_PLANS = {
    key: plan_dataset(dataset, MANIFEST, MIRROR_DIR, DOWNLOAD_DIR) for key, dataset in MANIFEST.datasets.items()
}
ACQUIRED_DATASETS = acquired_datasets(config)
ARCHIVE_DOWNLOADS = [key for key, download in MANIFEST.downloads.items() if download.archive is not None]
# Test sets whose segments carry no document id (plain text, TSV, a domain file without ids): the bootstrap
# resamples their segments as independent units, which the log says now and every caption built on them says
# (nlp_robustness.data.document_ids).
TESTSETS_WITHOUT_DOCUMENT_IDS = configured_without_document_ids(config["testsets"], {key: plan.format for key, plan in DATASET_PLANS.items()})
# Two-domain studies (single-domain leave-one-out pools), partial mirror copies, test sets without document ids.
for _warning in plan_warnings(config, MANIFEST, ACQUIRED_DATASETS, TESTSETS_WITHOUT_DOCUMENT_IDS):
    logger.warning(_warning)


def _alternation(names):
    """Regex matching exactly one of ``names`` (a pattern matching nothing when empty)."""
    return "|".join(re.escape(name) for name in names) if names else "(?!x)x"


# Every study the one robustness engine measures (nlp_robustness.studies.plan): its block sets, the
# statistics job of every row, its tables and gamma figures. The generic rules of rules/robustness.smk are
# keyed by it, and the profile reads its paths from it.
STUDY_PLAN = study_plan(
    config,
    {"domains": DOMAINS_SECTION, "sentiment": SENTIMENT_SECTION, "human": HUMAN_SECTION, "natural": NATURAL_SECTION,
     "metric_robustness": METRIC_ROBUSTNESS_SECTION, **{family: family_section(family) for family in FAMILIES}},
)


wildcard_constraints:
    dataset=_alternation(MANIFEST.datasets),
    download=_alternation(MANIFEST.downloads),
    archive_download=_alternation(ARCHIVE_DOWNLOADS),
    filename=_alternation(sorted({download.filename for download in MANIFEST.downloads.values()})),
    testset=_alternation(TESTSETS + DERIVED_TESTSETS),
    base_testset=_alternation(TESTSETS),
    family=_alternation(FAMILIES),
    function=_alternation(sorted({function for spec in FAMILIES.values() for function in spec["functions"]})),
    part=_alternation(sorted({part for spec in FAMILIES.values() for part in parts(spec)})),
    side="source|reference",
    perturbation_metric=_alternation(PERTURBATION_METRICS),
    system=_alternation(SYSTEMS),
    mt_study=_alternation(MT_STUDIES),
    metric=_alternation(METRICS),
    method=_alternation(METHODS),
    block_set=_alternation(STUDY_PLAN.block_sets),
    study_row=_alternation(STUDY_PLAN.statistics),
    study_table=_alternation(STUDY_PLAN.tables),
    gamma_figure=_alternation(STUDY_PLAN.gamma_figures),
    classifier=_alternation(SENTIMENT_CLASSIFIERS),
    sentiment_model=_alternation(SENTIMENT_MODELS),
    human_domain=_alternation(HUMAN_DOMAINS),
    human_study=_alternation(HUMAN_STUDIES),
    wmt19_pair=_alternation(WMT19_PAIRS),
    condition=_alternation(METRIC_CONDITIONS),
    level=_alternation(METRIC_LEVELS),


def testset_spec(wildcards):
    """Config entry of a test set."""
    return config["testsets"][wildcards.testset]


def testset_input_files(wildcards):
    """What a test set is made from: its parsed manifest dataset, the configured pair of files (and domain file),
    or the configured WMT XML file."""
    spec = testset_spec(wildcards)
    if "dataset" in spec:
        return {"dataset": f"results/datasets/{spec['dataset']}.tsv"}
    if "file" in spec:
        return {"file": spec["file"]}
    domain_file = {"domain_file": spec["domain_file"]} if "domain_file" in spec else {}
    return {"source": spec["source"], "reference": spec["reference"], **domain_file}


def final_outputs():
    """Everything `snakemake` builds by default."""
    studies = STUDY_PLAN.outputs()  # every study's robustness tables and gamma figures
    testset_means = [f"results/tables/{mt_study_directory(study, metric)}/testset_means.{extension}"
                     for study in MT_STUDIES for metric in METRICS for extension in ("csv", "html")]
    corpus_tables = [f"results/tables/{study}/corpus_{table}.{extension}" for study in MT_STUDIES
                     for table in ("scores", "comparisons") for extension in ("csv", "md", "html")] if CORPUS_TABLE_METRICS else []
    datasets = expand("results/datasets/{dataset}.tsv", dataset=ACQUIRED_DATASETS)
    dataset_summary = expand("results/tables/datasets.{extension}", extension=["csv", "md", "html"]) if ACQUIRED_DATASETS else []
    models = expand("results/tables/models.{extension}", extension=["csv", "md", "html"]) if INHOUSE_MODELS else []
    return (
        studies + testset_means + corpus_tables + datasets + dataset_summary + models
        + sentiment_outputs() + human_outputs() + perturbation_outputs() + metric_robustness_outputs()
        + natural_robustness_outputs() + profile_outputs() + benchmark_outputs()
    )


def mt_score_files(system):
    """The sentence score tables of one MT system, by test set."""
    return study_score_files(system, TESTSETS)


def mt_study_score_tables(study):
    """The sentence score tables of every system of an MT study, by system and test set (config order)."""
    spec = MT_STUDIES[study]
    return {system: study_score_files(system, spec["testsets"]) for system in spec["systems"]}


def mt_study_corpus_inputs(wildcards):
    """The test sets and every system's translations of an MT study (system-major), the corpus_scores job's input."""
    spec = MT_STUDIES[wildcards.mt_study]
    return {
        "testsets": [f"results/testsets/{testset}.tsv" for testset in spec["testsets"]],
        "translations": [f"results/translations/{system}/{testset}.txt" for system in spec["systems"] for testset in spec["testsets"]],
    }


def mt_study_score_files(wildcards):
    """Every sentence score table of an MT study (the testset_means job's input), named system/test set."""
    tables = mt_study_score_tables(wildcards.mt_study)
    return {f"{system}/{testset}": path for system, files in tables.items() for testset, path in files.items()}


def bleu_tokenizer(testset):
    """The BLEU tokenizer of a test set: its study's (a perturbed test set: its base test sets', 13a by default)."""
    return BLEU_TOKENIZERS.get(testset, "13a")


def bleu_tokenizer_of(wildcards):
    """:func:`bleu_tokenizer` of the job's test set."""
    return bleu_tokenizer(wildcards.testset)


def block_set_files(wildcards):
    """The files a block set's unit keys are read from."""
    return list(STUDY_PLAN.block_sets[wildcards.block_set].unit_files.values())


def study_caption(item, **variables):
    """The report caption of a study's table or figure, with the note on its test sets without document ids."""
    template = Path(workflow.source_path(f"../report/{item.caption}.rst")).read_text(encoding="utf-8")
    return render_study_caption(template, item, STUDY_PLAN, TESTSETS_WITHOUT_DOCUMENT_IDS, **variables)


def resampling_note(testsets):
    """The caption sentence on those of ``testsets`` without document ids ("" when every one has them)."""
    return segments_as_units_note([testset for testset in testsets if testset in TESTSETS_WITHOUT_DOCUMENT_IDS])


def row_files(pattern, rows, **wildcards):
    """Files of ``rows`` by row name (``pattern`` has a ``{row}`` field): a named mapping for scripts, so no
    script depends on the order of an input list."""
    return {row: pattern.format(row=row, **wildcards) for row in rows}


# Each branch's lookup tables and input functions, beside this file (the linter keeps functions out of rule files).
include: "inputs/datasets.smk"
include: "inputs/perturbations.smk"
include: "inputs/metric_robustness.smk"
include: "inputs/natural_robustness.smk"
include: "inputs/sentiment.smk"
include: "inputs/human.smk"
include: "inputs/profile.smk"
include: "inputs/benchmarks.smk"
include: "inputs/metric_files.smk"
