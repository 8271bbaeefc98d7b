"""Configuration validation, lookup tables and input functions: the only place that reads config."""

import re
from pathlib import Path

from snakemake.logging import logger
from snakemake.utils import validate

from nlp_robustness.data.acquisition import (
    download_file_path,
    extraction_dir_path,
    is_mirror_substitute,
    mirror_download_file,
    missing_mirror_files,
    plan_dataset,
)
from nlp_robustness.config import (
    acquired_datasets,
    check_duplicate_keys,
    fill_dependent_defaults,
    human_leave_out,
    sentiment_leave_out,
    mt_leave_out,
    validate_config,
    validate_dataset_references,
    validate_human_references,
    validate_sentiment_references,
    validate_system_references,
)
from nlp_robustness.data.download import Checksum
from nlp_robustness.errors import InputError
from nlp_robustness.statistics.engine import METHODS, leave_out_labels
from nlp_robustness.studies.sentiment import aggregation_of
from nlp_robustness.data.manifest import load_manifest
from nlp_robustness.perturbations.configuration import (
    complete_perturbations,
    derived_testset,
    derived_testsets,
    function_category,
    parts,
)
from nlp_robustness.perturbations.derive import sample_group
from nlp_robustness.perturbations.registry import family_module
from nlp_robustness.studies.profile import complete_profile, config_hash, plan_files, profile_plan
from nlp_robustness.studies.natural_robustness import CRITERIA, MT_CRITERIA, complete_natural_robustness, perturbation_types
from nlp_robustness.studies.metric_attacks import (
    aggregation_of as metric_aggregation_of,
    complete_metric_robustness,
    conditions as metric_conditions,
    levels_of as metric_levels_of,
    metric_variants,
    pair_downloads,
)


# The config is checked, then completed: every default is written once, in the schema, and filled in
# here; nothing after this point restates one.
# A key written twice in a config file (a system, a test set) would keep its last value silently.
check_duplicate_keys(workflow.configfiles)  # every config file Snakemake read: --configfile or configfile:
validate_config(config, workflow.source_path("../schemas/config.schema.yaml"))  # names the first bad key
validate(config, "../schemas/config.schema.yaml", set_default=True)  # fills in the schema's defaults
fill_dependent_defaults(config)  # sentiment.epsilon, human.epsilon: robustness.epsilon unless given
complete_perturbations(config)  # families' functions, settings and options checked against their own schemas
complete_natural_robustness(config)  # its families, types, left-out types and systems checked
complete_profile(config)  # its metric and perturbation families checked

TESTSETS = list(config["testsets"])
SYSTEMS = list(config["systems"])
METRICS = list(config["metrics"])
LEAVE_OUT = mt_leave_out(config)
ROBUSTNESS = config["robustness"]
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


# Read here, when the workflow is planned; no job sees this absolute path.
DATASET_MANIFEST = _workflow_path(config["dataset_manifest"])
# As the config writes it, relative to the workflow directory: fetch_download resolves it against its
# script's directory. An absolute path of the checkout in its params would rerun every download, and
# all that follows, of a project copied to another directory with its results/ and .snakemake/.
CHECKSUM_LOCK = DOWNLOAD["checksum_lock"]
try:
    MANIFEST = load_manifest(DATASET_MANIFEST, workflow.source_path("../schemas/datasets.schema.yaml"))
except InputError as error:
    raise InputError(f"config key 'dataset_manifest': {error}") from None
validate_dataset_references(
    config, {key: dataset.kind for key, dataset in MANIFEST.datasets.items()}, config["dataset_manifest"]
)
validate_system_references(
    config, {key: dataset.kind for key, dataset in MANIFEST.datasets.items()}, MANIFEST.models, config["dataset_manifest"]
)
validate_sentiment_references(
    config,
    {key: dataset.domains for key, dataset in MANIFEST.datasets.items()},
    {key: dataset.kind for key, dataset in MANIFEST.datasets.items()},
    config["dataset_manifest"],
)
# The sentiment branch (optional): classifiers are named after their training domains.
SENTIMENT = config.get("sentiment")
SENTIMENT_CLASSIFIERS = list(SENTIMENT["training"]["domains"]) if SENTIMENT else []
SENTIMENT_LEAVE_OUT = sentiment_leave_out(config)
validate_human_references(config, MANIFEST.downloads, config["dataset_manifest"])
complete_metric_robustness(config, list(MANIFEST.downloads))  # attacks, pairs, layers, conditions checked
# Robustness of evaluation metrics to attacked references (optional; rules/metric_robustness.smk):
# WMT19 to-English pairs, conditions = clean + attack x level, rows = metric variants.
METRIC_ROBUSTNESS = config.get("metric_robustness")
WMT19_PAIRS = list(METRIC_ROBUSTNESS["pairs"]) if METRIC_ROBUSTNESS else []
METRIC_CONDITIONS = metric_conditions(METRIC_ROBUSTNESS) if METRIC_ROBUSTNESS else []
METRIC_LEVELS = metric_levels_of(METRIC_ROBUSTNESS) if METRIC_ROBUSTNESS else {}
METRIC_VARIANTS = metric_variants(METRIC_ROBUSTNESS) if METRIC_ROBUSTNESS else []
# The human-judgement branch (optional): systems scored by humans on several domains.
HUMAN = config.get("human")
HUMAN_SYSTEMS = list(HUMAN["systems"]) if HUMAN else []
HUMAN_DOMAINS = list(HUMAN["domains"]) if HUMAN else []
HUMAN_LEAVE_OUT = human_leave_out(config)
HUMAN_SCORES = ["human", *METRICS]
# Where every manifest dataset is read from (mirror or downloads), decided now so that a dry run
# shows every download; any manifest dataset can be requested as results/datasets/<key>.tsv.
DATASET_PLANS = {
    key: plan_dataset(dataset, MANIFEST, MIRROR_DIR, DOWNLOAD_DIR) for key, dataset in MANIFEST.datasets.items()
}
ACQUIRED_DATASETS = acquired_datasets(config)
for _key in ACQUIRED_DATASETS:
    _missing = missing_mirror_files(MANIFEST.datasets[_key], MIRROR_DIR) if MIRROR_DIR is not None else []
    if _missing and len(_missing) < len(MANIFEST.datasets[_key].mirror.files):
        logger.warning(
            f"dataset {_key}: mirror_dir {MIRROR_DIR} holds only part of it (missing {', '.join(_missing)}); "
            f"the whole dataset is taken from its downloads"
        )
ARCHIVE_DOWNLOADS = [key for key, download in MANIFEST.downloads.items() if download.archive is not None]


def _alternation(names):
    """Regex matching exactly one of ``names`` (a pattern matching nothing when empty)."""
    return "|".join(re.escape(name) for name in names) if names else "(?!x)x"


# Studies measured by the one robustness engine (nlp_robustness.statistics.engine): their domains in
# order, their pools (whole pool first), how units become a sample, and the labels their blocks are
# seeded with besides (seed, method, left-out domain). The MT domain study has none: its blocks are the
# ones it had before the engine served several studies.
STUDIES = {"domains": {"module": "domains", "domains": TESTSETS, "leave_out": LEAVE_OUT, "aggregation": "unit", "namespace": [], "options": {}}}
if SENTIMENT:
    STUDIES["sentiment"] = {
        "module": "sentiment",
        "domains": SENTIMENT["test"]["domains"],
        "leave_out": SENTIMENT_LEAVE_OUT,
        "aggregation": aggregation_of(SENTIMENT["bagging_unit"]),
        "namespace": ["sentiment"],
        "options": {"bagging_unit": SENTIMENT["bagging_unit"]},
    }
if HUMAN:
    STUDIES["human"] = {"module": "human", "domains": HUMAN_DOMAINS, "leave_out": HUMAN_LEAVE_OUT, "aggregation": "unit", "namespace": ["human"], "options": {}}
for _family, _spec in FAMILIES.items():  # perturbation functions as domains, one study per family
    STUDIES[f"perturbations/{_family}"] = {
        "module": "perturbations", "domains": list(_spec["functions"]), "leave_out": leave_out_labels(_spec["leave_out"]),
        "aggregation": "unit", "namespace": ["perturbations", _family], "options": {},
    }
# Block sets (results/blocks/<name>.tsv): the study they serve and the files its unit keys are read
# from. The rows of the MT and human studies share their units; each classifier has its own (its own
# domain is tested on its held-out split), hence one block set per classifier.


def mt_score_files(system):
    """The sentence score tables of one MT system, by test set."""
    return {testset: f"results/scores/{system}/{testset}.tsv" for testset in TESTSETS}


def sentiment_prediction_files(classifier):
    """The prediction table of one classifier: its units' scores and, for its block set, their keys."""
    return {"predictions": f"results/sentiment/predictions/{classifier}.tsv"}


def human_segment_files():
    """The segment tables of the human domains: every system's units, scores and keys."""
    return {domain: f"results/human/segments/{domain}.tsv" for domain in HUMAN_DOMAINS}


BLOCK_SETS = {"domains": ("domains", {testset: f"results/testsets/{testset}.tsv" for testset in TESTSETS})}
if HUMAN:
    BLOCK_SETS["human"] = ("human", human_segment_files())
for _classifier in SENTIMENT_CLASSIFIERS:
    BLOCK_SETS[f"sentiment/{_classifier}"] = ("sentiment", sentiment_prediction_files(_classifier))


def perturbed_testset_files(family):
    """The perturbed test sets of a family by ``<function>/<part>``: the units of its consistency study."""
    spec = FAMILIES[family]
    return {
        f"{function}/{part}": f"results/testsets/{derived_testset(family, function, part)}.tsv"
        for function in spec["functions"] for part in parts(spec)
    }


def pair_score_files(family, system):
    """One system's pair-score tables of a family, by function."""
    return {function: f"results/perturbations/{family}/{function}/scores/{system}.tsv" for function in FAMILIES[family]["functions"]}


for _family in FAMILIES:
    BLOCK_SETS[f"perturbations/{_family}"] = (f"perturbations/{_family}", perturbed_testset_files(_family))
# Attack conditions as domains, one metric variant a row; a condition's sample value is its tau (units:
# the conditions themselves, or the DARR judgements scored +1 / -1: metric_robustness.bagging_unit).
METRIC_AGREEMENT = "results/metric_robustness/agreement.tsv"
if METRIC_ROBUSTNESS:
    STUDIES["metric_attacks"] = {
        "module": "metric_attacks", "domains": METRIC_CONDITIONS, "leave_out": leave_out_labels(METRIC_ROBUSTNESS["leave_out"]),
        "aggregation": metric_aggregation_of(METRIC_ROBUSTNESS["bagging_unit"]), "namespace": ["metric_attacks"],
        "options": {"bagging_unit": METRIC_ROBUSTNESS["bagging_unit"]}, "bagging": METRIC_ROBUSTNESS["bagging"],
    }
    BLOCK_SETS["metric_attacks"] = ("metric_attacks", {"agreement": METRIC_AGREEMENT})
# Natural Robustness (paper 001; rules/natural_robustness.smk): the functions of its families are the
# perturbation types; its rows are the MT systems (responses compared two ways) and the classifiers.
NATURAL = config.get("natural_robustness")
NATURAL_TYPES = perturbation_types(NATURAL, FAMILIES) if NATURAL else {}  # type -> family
NATURAL_SYSTEMS = list(NATURAL["systems"]) if NATURAL else []
NATURAL_CLASSIFIERS = SENTIMENT_CLASSIFIERS if NATURAL else []
NATURAL_ROWS = {"exact": NATURAL_SYSTEMS, "chrf": NATURAL_SYSTEMS, "label": NATURAL_CLASSIFIERS}
NATURAL_CRITERIA = [criterion for criterion in CRITERIA if NATURAL_ROWS[criterion]]


def natural_review_files():
    """The sentiment side's perturbed reviews, by type."""
    return {
        perturbation_type: f"results/natural_robustness/sentiment/perturbed/{family}/{perturbation_type}.tsv"
        for perturbation_type, family in NATURAL_TYPES.items()
    }


def natural_derived_files():
    """The MT side's perturbed test sets, by ``<type>/<part>``."""
    return {
        f"{perturbation_type}/{part}": f"results/testsets/{derived_testset(family, perturbation_type, part)}.tsv"
        for perturbation_type, family in NATURAL_TYPES.items() for part in parts(FAMILIES[family])
    }


if NATURAL:
    for _kind, _files in (("mt", natural_derived_files()), ("sentiment", natural_review_files() if NATURAL_CLASSIFIERS else None)):
        if _files is None:
            continue
        STUDIES[f"natural_robustness/{_kind}"] = {
            "module": "natural_robustness", "domains": list(NATURAL_TYPES), "leave_out": leave_out_labels(NATURAL["leave_out"]),
            "aggregation": "domain", "namespace": ["natural_robustness", _kind], "options": {},
        }
        BLOCK_SETS[f"natural_robustness/{_kind}"] = (f"natural_robustness/{_kind}", _files)


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
    metric=_alternation(METRICS),
    method=_alternation(METHODS),
    block_set=_alternation(BLOCK_SETS),
    classifier=_alternation(SENTIMENT_CLASSIFIERS),
    human_domain=_alternation(HUMAN_DOMAINS),
    human_system=_alternation(HUMAN_SYSTEMS),
    human_score=_alternation(HUMAN_SCORES),
    wmt19_pair=_alternation(WMT19_PAIRS),
    condition=_alternation(METRIC_CONDITIONS),
    level=_alternation(METRIC_LEVELS),
    metric_variant=_alternation(METRIC_VARIANTS),
    natural_criterion=_alternation(NATURAL_CRITERIA),
    responder=_alternation([*NATURAL_SYSTEMS, *NATURAL_CLASSIFIERS]),


def testset_spec(wildcards):
    """Config entry of a test set."""
    return config["testsets"][wildcards.testset]


def testset_input_files(wildcards):
    """What a test set is made from: its parsed manifest dataset, or the configured pair of files."""
    spec = testset_spec(wildcards)
    if "dataset" in spec:
        return {"dataset": f"results/datasets/{spec['dataset']}.tsv"}
    return {"source": spec["source"], "reference": spec["reference"]}


def download_mirror_file(wildcards):
    """The mirror's copy of a download, as the fetch job's input (none: the job downloads it)."""
    download = MANIFEST.downloads[wildcards.download]
    if wildcards.filename != download.filename:
        raise InputError(f"download {download.key} is stored as {download.filename}, not {wildcards.filename}")
    mirror_file = mirror_download_file(download, MIRROR_DIR)
    return [mirror_file] if mirror_file else []


def download_fetch_params(wildcards):
    """URL, checksum and mirror copy of a download (a manifest edit reruns exactly that download)."""
    download = MANIFEST.downloads[wildcards.download]
    checksum = download.checksum
    mirror_file = mirror_download_file(download, MIRROR_DIR)
    if is_mirror_substitute(download, mirror_file, MIRROR_DIR):
        # not the canonical bytes: checked against the substitute's own digest, never recorded in the lock
        substitute = download.mirror_substitute
        checksum = Checksum("sha256", substitute.sha256, f"sha256 of the mirror's substitute (downloads.{download.key}): {substitute.description}")
    return {
        "url": download.url,
        "checksum": None if checksum is None else {"algorithm": checksum.algorithm, "hexdigest": checksum.hexdigest, "source": checksum.source},
        "mirror_file": mirror_file,
        "mirror_looked_for": str(Path(MIRROR_DIR) / download.mirror) if MIRROR_DIR and download.mirror else None,
    }


def downloaded_archive(wildcards):
    return download_file_path(DOWNLOAD_DIR, MANIFEST.downloads[wildcards.archive_download])


def dataset_inputs(wildcards):
    """Files a dataset is parsed from: mirror files, or downloaded files and extraction directories."""
    return list(DATASET_PLANS[wildcards.dataset].inputs)


def dataset_provenance(wildcards):
    """The canonical downloads of a dataset, whichever copy is read (recorded beside its table)."""
    dataset = MANIFEST.datasets[wildcards.dataset]
    keys = dict.fromkeys(ref.download for ref in dataset.download.files.values())
    return [
        {"download": key, "url": MANIFEST.downloads[key].url, "checksum_source": MANIFEST.downloads[key].checksum_source}
        for key in keys
    ]


def sentiment_training_table(wildcards):
    return f"results/datasets/{SENTIMENT['training']['dataset']}.tsv"


def sentiment_evaluation_inputs(wildcards):
    """A classifier, its split, the training reviews (for its held-out split and seen texts) and the test reviews."""
    prefix = f"results/sentiment/models/{wildcards.classifier}"
    return {
        "model": f"{prefix}/model.joblib",
        "split": f"{prefix}/split.tsv",
        "training_reviews": sentiment_training_table(wildcards),
        "test_reviews": f"results/datasets/{SENTIMENT['test']['dataset']}.tsv",
    }


def sentiment_outputs():
    """The sentiment branch's tables and figure (none without a sentiment section)."""
    if not SENTIMENT:
        return []
    return [
        *expand("results/tables/sentiment/robustness_{method}.{extension}", method=METHODS, extension=["csv", "md", "tex", "html"]),
        *expand("results/tables/sentiment/accuracy.{extension}", extension=["csv", "md", "html"]),
        "results/figures/sentiment/gamma_curves.png",
        "results/figures/sentiment/gamma_curves.pdf",
    ]


def _download_path(key):
    return download_file_path(DOWNLOAD_DIR, MANIFEST.downloads[key])


def human_domain_inputs(wildcards):
    """The downloaded (or mirrored) files of one human-judgement domain, by role."""
    spec = HUMAN["domains"][wildcards.human_domain]
    files = {role: _download_path(spec[role]) for role in ("scores", "source", "reference", "errors") if role in spec}
    if "outputs" in spec:
        files["outputs"] = [_download_path(spec["outputs"][system]) for system in HUMAN["systems"]]  # system order
    return files


def human_outputs():
    """The human-judgement branch's tables and figure (none without a human section)."""
    if not HUMAN:
        return []
    tables = expand(
        "results/tables/human/{human_score}/robustness_{method}.{extension}",
        human_score=HUMAN_SCORES, method=METHODS, extension=["csv", "md", "tex", "html"],
    )
    rankings = expand("results/tables/human/{table}.{extension}", table=["rankings", "pairwise", "agreement"], extension=["csv", "md", "html"])
    return tables + rankings + ["results/figures/human/gamma_curves.png", "results/figures/human/gamma_curves.pdf"]


def final_outputs():
    """Everything `snakemake` builds by default."""
    tables = expand(
        "results/tables/{metric}/robustness_{method}.{extension}",
        metric=METRICS,
        method=METHODS,
        extension=["csv", "md", "tex", "html"],
    )
    testset_means = expand("results/tables/{metric}/testset_means.{extension}", metric=METRICS, extension=["csv", "html"])
    figures = expand("results/figures/{metric}/gamma_curves.{extension}", metric=METRICS, extension=["png", "pdf"])
    datasets = expand("results/datasets/{dataset}.tsv", dataset=ACQUIRED_DATASETS)
    dataset_summary = expand("results/tables/datasets.{extension}", extension=["csv", "md", "html"]) if ACQUIRED_DATASETS else []
    models = expand("results/tables/models.{extension}", extension=["csv", "md", "html"]) if INHOUSE_MODELS else []
    return (
        tables + testset_means + figures + datasets + dataset_summary + models
        + sentiment_outputs() + human_outputs() + perturbation_outputs() + metric_robustness_outputs()
        + natural_robustness_outputs() + profile_outputs()
    )


def block_set_files(wildcards):
    """The files a block set's unit keys are read from."""
    return list(BLOCK_SETS[wildcards.block_set][1].values())


def block_set_job(wildcards):
    """Everything the study_blocks job uses: the study, its unit files by domain, pools, seed and design."""
    study, files = BLOCK_SETS[wildcards.block_set]
    spec = STUDIES[study]
    return {
        "study": spec["module"], "label": study, "unit_files": files, "domains": spec["domains"], "leave_out": spec["leave_out"],
        "namespace": spec["namespace"], "options": spec["options"], "seed": ROBUSTNESS["seed"],
        # a study may draw its own number and size of blocks (metric_robustness.bagging)
        "blocks": spec.get("bagging", ROBUSTNESS["bagging"])["blocks"], "fraction": spec.get("bagging", ROBUSTNESS["bagging"])["fraction"],
    }


def _study_job(study, row, score, unit_files, epsilon):
    spec = STUDIES[study]
    return {
        "study": spec["module"], "label": study, "row": row, "score": score, "unit_files": unit_files, "domains": spec["domains"],
        "leave_out": spec["leave_out"], "aggregation": spec["aggregation"], "options": spec["options"], "epsilon": epsilon,
    }


def _robustness_inputs(unit_files, block_set):
    return {"units": list(unit_files.values()), "blocks": f"results/blocks/{block_set}.tsv"}


def mt_robustness_inputs(wildcards):
    return _robustness_inputs(mt_score_files(wildcards.system), "domains")


def mt_robustness_job(wildcards):
    """One system under one metric in the MT domain study."""
    return _study_job("domains", wildcards.system, wildcards.metric, mt_score_files(wildcards.system), ROBUSTNESS["epsilon"])


def sentiment_robustness_inputs(wildcards):
    return _robustness_inputs(sentiment_prediction_files(wildcards.classifier), f"sentiment/{wildcards.classifier}")


def sentiment_robustness_job(wildcards):
    """One classifier in the sentiment study (its score: domain-level accuracy)."""
    return _study_job("sentiment", wildcards.classifier, "accuracy", sentiment_prediction_files(wildcards.classifier), SENTIMENT["epsilon"])


def human_robustness_inputs(wildcards):
    return _robustness_inputs(human_segment_files(), "human")


def human_robustness_job(wildcards):
    """One system under one score (human, or a metric) in the human study."""
    epsilon = HUMAN["epsilon"] if wildcards.human_score == "human" else ROBUSTNESS["epsilon"]
    return _study_job("human", wildcards.human_system, wildcards.human_score, human_segment_files(), epsilon)


def row_files(pattern, rows, **wildcards):
    """Files of ``rows`` by row name (``pattern`` has a ``{row}`` field): a named mapping for scripts, so no
    script depends on the order of an input list."""
    return {row: pattern.format(row=row, **wildcards) for row in rows}


# ---- perturbations (rules/perturbations.smk) ----------------------------------------------------------


def family_needs_parse(family):
    return family_module(family).NEEDS_PARSE


def perturbation_sample_params(wildcards):
    """What a family's sample of a test set depends on (and the group it is drawn under, for families that
    share their samples with others)."""
    params = {"seed": PERTURBATIONS["seed"], "max_segments": FAMILIES[wildcards.family]["max_segments"]}
    group = sample_group(family_module(wildcards.family), wildcards.family)
    return params if group == wildcards.family else {**params, "group": group}


def parse_params(wildcards):
    """The spaCy model that parses one side of a family's sample (the family's options name it)."""
    options = FAMILIES[wildcards.family]["options"]
    return {"model": options[f"{wildcards.side}_model"], "batch_size": options["batch_size"]}


def _part_testsets(wildcards):
    return parts(FAMILIES[wildcards.family])[wildcards.part]


def perturb_job(wildcards):
    """Everything a perturb job uses: the function's settings (an edit reruns that function only)."""
    family = wildcards.family
    testsets = _part_testsets(wildcards)
    resources = family_resource_files(family)
    return {
        "family": family, "function": wildcards.function, "seed": PERTURBATIONS["seed"],
        "settings": FAMILIES[family]["functions"][wildcards.function],
        "samples": {testset: f"results/perturbations/{family}/samples/{testset}.tsv" for testset in testsets},
        "parses": {
            testset: {side: f"results/perturbations/{family}/parses/{testset}.{side}.tsv" for side in ("source", "reference")}
            for testset in testsets
        } if family_needs_parse(family) else None,
        # only families with resource files have the key, so the jobs of the others keep their params
        **({"resources": resources} if resources else {}),
    }


def family_resource_files(family):
    """The manifest files a family reads (e.g. the keyboard and visual neighbours of the character
    attacks), by resource name: ``module.RESOURCE_DOWNLOADS`` maps each to its download key."""
    resources = getattr(family_module(family), "RESOURCE_DOWNLOADS", {})
    return {name: download_file_path(DOWNLOAD_DIR, MANIFEST.downloads[key]) for name, key in resources.items()}


def perturb_inputs(wildcards):
    """The files of :func:`perturb_job`: the samples (and their parses, where the family needs them) of one part."""
    job = perturb_job(wildcards)
    inputs = {"samples": list(job["samples"].values())}
    if job["parses"] is not None:
        inputs["parses"] = [path for sides in job["parses"].values() for path in sides.values()]
    if "resources" in job:
        inputs["resources"] = list(job["resources"].values())
    return inputs


def _derived_files(wildcards, pattern):
    spec = FAMILIES[wildcards.family]
    return {
        part: pattern.format(system=wildcards.system, name=derived_testset(wildcards.family, wildcards.function, part))
        for part in parts(spec)
    }


def pair_score_job(wildcards):
    """The files of one system's pair scores under one function, by part, and the test sets' own scores."""
    spec = FAMILIES[wildcards.family]
    return {
        "derived": _derived_files(wildcards, "results/testsets/{name}.tsv"),
        "derived_scores": _derived_files(wildcards, "results/scores/{system}/{name}.tsv"),
        "translations": _derived_files(wildcards, "results/translations/{system}/{name}.txt"),
        "testset_scores": {testset: mt_score_files(wildcards.system)[testset] for testset in spec["testsets"]},
        "metrics": PERTURBATION_METRICS,
    }


def pair_score_inputs(wildcards):
    job = pair_score_job(wildcards)
    return [path for key in ("derived", "derived_scores", "translations", "testset_scores") for path in job[key].values()]


def family_report_job(wildcards):
    """Every file a family's tables and figures read, by system, function and part."""
    family = wildcards.family
    spec = FAMILIES[family]
    return {
        "functions": list(spec["functions"]),
        "categories": {function: function_category(family_module(family), function) for function in spec["functions"]},
        "systems": list(spec["systems"]),
        "pair_scores": {system: pair_score_files(family, system) for system in spec["systems"]},
        "status": {
            function: [f"results/perturbations/{family}/{function}/{part}.segments.tsv" for part in parts(spec)]
            for function in spec["functions"]
        },
        "derived": {
            function: [f"results/testsets/{derived_testset(family, function, part)}.tsv" for part in parts(spec)]
            for function in spec["functions"]
        },
        "translations": {
            system: {
                function: [f"results/translations/{system}/{derived_testset(family, function, part)}.txt" for part in parts(spec)]
                for function in spec["functions"]
            }
            for system in spec["systems"]
        },
        "testsets": {testset: f"results/testsets/{testset}.tsv" for testset in spec["testsets"]},
        "testset_translations": {
            system: {testset: f"results/translations/{system}/{testset}.txt" for testset in spec["testsets"]} for system in spec["systems"]
        },
    }


def _flatten(value):
    if isinstance(value, dict):
        return [path for item in value.values() for path in _flatten(item)]
    if isinstance(value, list):
        return [path for item in value for path in _flatten(item)]
    return [value]


def family_report_inputs(*keys):
    """Input function: the files under ``keys`` of :func:`family_report_job`."""
    return lambda wildcards: [path for key in keys for path in _flatten(family_report_job(wildcards)[key])]


def perturbation_robustness_inputs(wildcards):
    return _robustness_inputs(pair_score_files(wildcards.family, wildcards.system), f"perturbations/{wildcards.family}")


def perturbation_robustness_job(wildcards):
    """One system under one metric in a family's consistency study (beta1, functions as domains)."""
    family = wildcards.family
    return _study_job(
        f"perturbations/{family}", wildcards.system, wildcards.perturbation_metric,
        pair_score_files(family, wildcards.system), FAMILIES[family]["epsilon"],
    )


def perturbation_outputs():
    """Every family's tables and figures, for every perturbation metric."""
    outputs = []
    for family, spec in FAMILIES.items():
        if hasattr(family_module(family), "attack_rate"):  # families whose achieved rate differs from p
            outputs += [f"results/tables/perturbations/{family}/attack_rates.{extension}" for extension in ("csv", "md")]
        for metric in spec["metrics"]:
            tables = f"results/tables/perturbations/{family}/{metric}"
            figures = f"results/figures/perturbations/{family}/{metric}"
            outputs += [f"{tables}/means.{extension}" for extension in ("csv", "md", "tex", "html")]
            outputs += [f"{tables}/flip_examples.{extension}" for extension in ("csv", "md")]
            outputs += [f"{tables}/function_similarity.csv"]
            outputs += expand(f"{tables}/robustness_{{method}}.{{extension}}", method=METHODS, extension=["csv", "md", "tex", "html"])
            outputs += expand(
                f"{figures}/{{figure}}.{{extension}}",
                figure=["robust_vs_faithful", "beta_heatmaps", "scores_vs_alpha_and_length", "function_similarity", "gamma_curves"],
                extension=["png", "pdf"],
            )
    return outputs


# ---- metric robustness (rules/metric_robustness.smk) --------------------------------------------------


def wmt19_pair_files(wildcards):
    """The DARR judgements, the reference and every system output of one WMT19 pair (manifest downloads)."""
    reference, systems = pair_downloads(wildcards.wmt19_pair, list(MANIFEST.downloads))
    path = lambda key: download_file_path(DOWNLOAD_DIR, MANIFEST.downloads[key])
    return {
        "darr": path(METRIC_ROBUSTNESS["darr"]),
        "reference": path(reference),
        "outputs": {system: path(key) for system, key in systems.items()},
    }


def wmt19_pair_inputs(wildcards):
    files = wmt19_pair_files(wildcards)
    return [files["darr"], files["reference"], *files["outputs"].values()]


def attacked_reference_job(wildcards):
    """One condition on every pair's sampled references: the attack, its level and settings, the seed."""
    from nlp_robustness.studies.metric_attacks import condition_attack_level

    attack, level = condition_attack_level(wildcards.condition)
    return {
        "condition": wildcards.condition, "attack": attack, "p": level, "seed": METRIC_ROBUSTNESS["seed"],
        "settings": METRIC_ROBUSTNESS["attacks"].get(attack, {}),
        "segments": {pair: f"results/metric_robustness/segments/{pair}.tsv" for pair in WMT19_PAIRS},
        "resources": family_resource_files("character_attacks") if attack != "none" else {},
    }


def attacked_reference_inputs(wildcards):
    job = attacked_reference_job(wildcards)
    return [*job["segments"].values(), *job["resources"].values()]


def level_score_job(wildcards):
    """The references of every condition at one level, the outputs and judgements of every pair, the metrics."""
    return {
        "references": {condition: f"results/metric_robustness/references/{condition}.tsv" for condition in METRIC_LEVELS[wildcards.level]},
        "hypotheses": {pair: f"results/metric_robustness/hypotheses/{pair}.tsv" for pair in WMT19_PAIRS},
        "sentence_metrics": METRIC_ROBUSTNESS["sentence_metrics"],
        "bertscore": METRIC_ROBUSTNESS["bertscore"] if METRIC_ROBUSTNESS["bertscore"]["layers"] else None,
    }


def level_score_inputs(wildcards):
    job = level_score_job(wildcards)
    return [*job["references"].values(), *job["hypotheses"].values()]


def metric_tau_job(wildcards=None):
    """Every level's scores and every pair's judgements: the tau tables and the agreement units."""
    return {
        "scores": {level: f"results/metric_robustness/scores/{level}.tsv" for level in METRIC_LEVELS},
        "darr": {pair: f"results/metric_robustness/darr/{pair}.tsv" for pair in WMT19_PAIRS},
        "conditions": METRIC_CONDITIONS,
        "sentence_metrics": METRIC_ROBUSTNESS["sentence_metrics"],
        "layers": METRIC_ROBUSTNESS["bertscore"]["layers"],
        "variants": METRIC_VARIANTS,
    }


def metric_reference_files():
    return {condition: f"results/metric_robustness/references/{condition}.tsv" for condition in METRIC_CONDITIONS}


def metric_robustness_job(wildcards):
    """One metric variant in the attack-condition study (its units: +1 / -1 DARR agreements)."""
    return _study_job("metric_attacks", wildcards.metric_variant, "tau", {"agreement": METRIC_AGREEMENT}, METRIC_ROBUSTNESS["epsilon"])


def metric_robustness_outputs():
    """The tau, unknown-token and attack-rate tables, the figures and the consistency tables of the branch."""
    if not METRIC_ROBUSTNESS:
        return []
    tables, figures = "results/tables/metric_robustness", "results/figures/metric_robustness"
    outputs = [f"{tables}/{name}.{extension}" for name in ("tau", "unknown_tokens") for extension in ("csv", "md", "tex", "html")]
    outputs += [f"{tables}/tau_by_layer.csv", f"{tables}/best_layers.csv", f"{tables}/attack_rates.csv", f"{tables}/attack_rates.md"]
    outputs += expand(f"{tables}/robustness_{{method}}.{{extension}}", method=METHODS, extension=["csv", "md", "tex", "html"])
    outputs += expand(
        f"{figures}/{{figure}}.{{extension}}", figure=["unknown_tokens", "tau_vs_level", "tau_by_layer", "gamma_curves"], extension=["png", "pdf"]
    )
    return outputs


# ---- natural robustness (rules/natural_robustness.smk) ------------------------------------------------


def natural_review_record_job(wildcards=None):
    """Which reviews the classifiers answer, how a review becomes a document, and the sample's size and seed."""
    family = NATURAL["families"][0]
    return {
        "predictions": {classifier: f"results/sentiment/predictions/{classifier}.tsv" for classifier in NATURAL_CLASSIFIERS},
        "fields": SENTIMENT["classifier"]["fields"], "test_domains": SENTIMENT["test"]["domains"],
        "reviews_per_domain": NATURAL["reviews_per_domain"], "seed": PERTURBATIONS["seed"],
        "group": sample_group(family_module(family), family),
    }


def natural_review_record_inputs(wildcards):
    return {
        "reviews": f"results/datasets/{SENTIMENT['test']['dataset']}.tsv",
        "predictions": list(natural_review_record_job()["predictions"].values()),
    }


def perturb_review_job(wildcards):
    """One family function on the sampled reviews: the perturb job of a test set, with the reviews as one."""
    family = wildcards.family
    resources = family_resource_files(family)
    return {
        "family": family, "function": wildcards.function, "seed": PERTURBATIONS["seed"],
        "settings": FAMILIES[family]["functions"][wildcards.function],
        **({"resources": resources} if resources else {}),
    }


def perturb_review_inputs(wildcards):
    return {
        "records": "results/natural_robustness/sentiment/records.tsv",
        "resources": list(family_resource_files(wildcards.family).values()),
    }


def natural_mt_response_job(wildcards):
    """One system's translations of every perturbed test set of the types and of their test sets, and the
    same-response settings."""
    system = wildcards.system
    derived = {}
    for perturbation_type, family in NATURAL_TYPES.items():
        names = [derived_testset(family, perturbation_type, part) for part in parts(FAMILIES[family])]
        derived[perturbation_type] = {
            "tables": [f"results/testsets/{name}.tsv" for name in names],
            "translations": [f"results/translations/{system}/{name}.txt" for name in names],
        }
    testsets = list(dict.fromkeys(testset for family in NATURAL["families"] for testset in FAMILIES[family]["testsets"]))
    return {
        "derived": derived,
        "testsets": {testset: {"table": f"results/testsets/{testset}.tsv", "translations": f"results/translations/{system}/{testset}.txt"} for testset in testsets},
        "same_response": NATURAL["same_response"],
    }


def natural_mt_response_inputs(wildcards):
    return _flatten({key: value for key, value in natural_mt_response_job(wildcards).items() if key != "same_response"})


def natural_sentiment_response_job(wildcards):
    return {"perturbed": natural_review_files()}


def natural_sentiment_response_inputs(wildcards):
    return {
        "model": f"results/sentiment/models/{wildcards.classifier}/model.joblib",
        "records": "results/natural_robustness/sentiment/records.tsv",
        "perturbed": list(natural_review_files().values()),
    }


def natural_response_files():
    """Every row's responses table: MT systems, then classifiers."""
    files = {"mt": {system: f"results/natural_robustness/responses/mt/{system}.tsv" for system in NATURAL_SYSTEMS}}
    if NATURAL_CLASSIFIERS:
        files["sentiment"] = {classifier: f"results/natural_robustness/responses/sentiment/{classifier}.tsv" for classifier in NATURAL_CLASSIFIERS}
    return files


def natural_score_job(wildcards=None):
    """The records (MT: the families' samples; sentiment: the sampled reviews), every row's responses, the
    sample sizes, the bootstrap and its seed."""
    samples = [
        [testset, f"results/perturbations/{family}/samples/{testset}.tsv"]
        for family in NATURAL["families"] for testset in FAMILIES[family]["testsets"]
    ]
    return {
        "mt_samples": samples,
        "review_records": "results/natural_robustness/sentiment/records.tsv" if NATURAL_CLASSIFIERS else None,
        "responses": natural_response_files(),
        "types": NATURAL_TYPES, "sizes": NATURAL["sample_sizes"], "bootstrap": NATURAL["bootstrap"], "seed": NATURAL["seed"],
    }


def natural_score_inputs(wildcards):
    job = natural_score_job()
    return {
        "samples": [path for _, path in job["mt_samples"]],
        "records": [job["review_records"]] if job["review_records"] else [],
        "responses": _flatten(job["responses"]),
    }


def natural_table_job(wildcards=None):
    """The scores and every perturbed input (MT test sets, reviews) with the status of every sampled one."""
    mt = {
        perturbation_type: {
            "family": family,
            "derived": [f"results/testsets/{derived_testset(family, perturbation_type, part)}.tsv" for part in parts(FAMILIES[family])],
            "status": [f"results/perturbations/{family}/{perturbation_type}/{part}.segments.tsv" for part in parts(FAMILIES[family])],
        }
        for perturbation_type, family in NATURAL_TYPES.items()
    }
    sentiment = {
        perturbation_type: {
            "family": family,
            "derived": [path], "status": [path.replace(".tsv", ".segments.tsv")],
        }
        for (perturbation_type, family), path in zip(NATURAL_TYPES.items(), natural_review_files().values())
    } if NATURAL_CLASSIFIERS else {}
    return {"inputs": {"MT test sets": mt, **({"reviews": sentiment} if sentiment else {})}, "chrf_threshold": NATURAL["same_response"]["chrf_threshold"]}


def natural_table_inputs(wildcards):
    files = [files[key] for types in natural_table_job()["inputs"].values() for files in types.values() for key in ("derived", "status")]
    return {"scores": "results/natural_robustness/scores.tsv", "inputs": _flatten(files)}


def natural_consistency_inputs(wildcards):
    kind = "sentiment" if wildcards.natural_criterion == "label" else "mt"
    return {
        "units": natural_response_files()[kind][wildcards.responder],
        "blocks": f"results/blocks/natural_robustness/{kind}.tsv",
    }


def natural_consistency_job(wildcards):
    """One system under one criterion (or one classifier) in the consistency study of its kind."""
    kind = "sentiment" if wildcards.natural_criterion == "label" else "mt"
    files = {"responses": natural_response_files()[kind][wildcards.responder]}
    return _study_job(f"natural_robustness/{kind}", wildcards.responder, wildcards.natural_criterion, files, NATURAL["epsilon"])


def natural_consistency_files(kind):
    """Every row's consistency summary (``kind`` "summary") or gamma table, by row name ``<row> (<criterion>)``."""
    return {
        f"{row} ({criterion})": f"results/natural_robustness/robustness/{criterion}/{row}.{kind}.tsv"
        for criterion in NATURAL_CRITERIA for row in NATURAL_ROWS[criterion]
    }


def natural_robustness_outputs():
    """The scores, changes and consistency tables and the figures of the branch (none without its section)."""
    if not NATURAL:
        return []
    tables, figures = "results/tables/natural_robustness", "results/figures/natural_robustness"
    outputs = [f"{tables}/scores.{extension}" for extension in ("csv", "md", "tex", "html")]
    outputs += [f"{tables}/perturbation_changes.{extension}" for extension in ("csv", "md", "html")]
    outputs += expand(f"{tables}/robustness_{{method}}.{{extension}}", method=METHODS, extension=["csv", "md", "tex", "html"])
    outputs += expand(f"{figures}/{{figure}}.{{extension}}", figure=["scores", "gamma_curves"], extension=["png", "pdf"])
    return outputs


# ---- robustness profile (rules/profile.smk) -----------------------------------------------------------


PROFILE = config.get("robustness_profile")
PROFILE_PLAN = profile_plan(config) if PROFILE else {"metric": None, "groups": []}
PROFILE_GROUPS = [group["name"] for group in PROFILE_PLAN["groups"]]
PROFILE_LABELS = {group["name"]: group["label"] for group in PROFILE_PLAN["groups"]}
# The workflow's introduction opens the report; as a parameter (not an input path), so editing it reruns
# the opening page while a copy of the project in another directory reruns nothing.
PROFILE_INTRODUCTION = Path(_workflow_path("report/workflow.rst")).read_text(encoding="utf-8")
# Of the config as completed above: profile.json records which config its numbers came from.
CONFIG_HASH = config_hash(config)
PROFILE_DESCRIPTION = "results/profile/report.rst"


def profile_inputs(wildcards):
    """Every branch output the profile reads (tables and gamma curves)."""
    return plan_files(PROFILE_PLAN)


def report_description():
    """The report's opening page: the profile's generated page once the profile stage wrote it (absolute:
    Snakemake resolves this path against the workflow directory), else the workflow's introduction."""
    generated = Path(PROFILE_DESCRIPTION)
    return str(generated.resolve()) if PROFILE and generated.exists() else "report/workflow.rst"


def profile_outputs():
    """The profile's tables, JSON, figures and the report's opening page (none without its section)."""
    if not PROFILE:
        return []
    return [
        "results/profile.json", PROFILE_DESCRIPTION,
        *expand("results/tables/profile/{profile_group}{table}.{extension}", profile_group=PROFILE_GROUPS,
                table=["", "_kendall"], extension=["csv", "html"]),
        *expand("results/figures/profile/{figure}.{extension}", figure=[*PROFILE_GROUPS, "overview"], extension=["png", "pdf"]),
    ]
