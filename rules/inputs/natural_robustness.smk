# Lookup tables and input functions of Natural Robustness (rules/natural_robustness.smk); included by rules/common.smk.

from nlp_robustness.studies.natural_robustness_controls import (
    circular_pairs,
    identity_samples,
    identity_testsets,
    read_control,
    type_controls,
    type_samples,
)


NATURAL = config.get("natural_robustness")
NATURAL_TYPES = perturbation_types(NATURAL, FAMILIES) if NATURAL else {}  # type -> family
NATURAL_SYSTEMS = list(NATURAL["systems"]) if NATURAL else []
NATURAL_CLASSIFIERS = SENTIMENT_ROWS if NATURAL else []  # TF-IDF classifiers, then Hugging Face models
# Record sample -> its identity test sets (perturbed/<sample>/identity/<part>: the sampled originals in the layout of
# the perturbed test sets), one per sample that the families drawing it share; type -> the sample it is compared
# with; type -> part -> its control test set (perturbed/<family>/<type>/identity/<part>: its records unperturbed
# in its perturbed sets' layout when it has fewer than type_noise_floor_below perturbations, else empty).
# nlp_robustness.studies.natural_robustness_responses says why.
NATURAL_SAMPLES = identity_samples(NATURAL, FAMILIES)
NATURAL_TYPE_SAMPLES = type_samples(NATURAL_SAMPLES, NATURAL_TYPES)
NATURAL_TYPE_CONTROLS = type_controls(NATURAL, FAMILIES)
# Family -> the identity test sets its translation job translates with its perturbed ones (rules/translate.smk): a
# sample's in the job of its first family (translated once). A control test set is translated in a job of its own
# (translate_<kind>), only when it is not empty: the checkpoint natural_identity_testset writes it.
NATURAL_IDENTITY = identity_testsets(NATURAL, FAMILIES)
DERIVED_TESTSETS += [name for names in NATURAL_IDENTITY.values() for name in names]
DERIVED_TESTSETS += [name for names in NATURAL_TYPE_CONTROLS.values() for name in names.values()]


def natural_review_files():
    """The sentiment side's perturbed reviews, by type."""
    return review_response_files(NATURAL_TYPES)


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
        # families that rewrite parses (structure) parse the reviews in the job: the models of the sides they perturb
        **({"parser": review_parser(family)} if family_needs_parse(family) else {}),
    }


def review_parser(family):
    options = FAMILIES[family]["options"]
    return {"models": {side: options[f"{side}_model"] for side in perturbed_sides(family_module(family))},
            "batch_size": options["batch_size"]}


def perturb_review_inputs(wildcards):
    return {
        "records": "results/natural_robustness/sentiment/records.tsv",
        "resources": list(family_resource_files(wildcards.family).values()),
    }


def _translated(system, names):
    """Test sets (parts of one) with one system's translations of them."""
    return {"tables": [f"results/testsets/{name}.tsv" for name in names],
            "translations": [f"results/translations/{system}/{name}.txt" for name in names]}


def natural_mt_response_job(wildcards):
    """One system's translations of every perturbed test set of the types, of the record samples' identity test
    sets, of the types' control test sets and of their test sets; type -> its record sample; the same-response
    settings."""
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
        "identity": {
            sample: _translated(system, spec.testsets()) for sample, spec in NATURAL_SAMPLES.items()
        },
        "controls": {
            perturbation_type: _translated(system, list(names.values())) for perturbation_type, names in NATURAL_TYPE_CONTROLS.items()
        },
        "types": NATURAL_TYPE_SAMPLES,
        "testsets": {testset: {"table": f"results/testsets/{testset}.tsv", "translations": f"results/translations/{system}/{testset}.txt"} for testset in testsets},
        "same_response": NATURAL["same_response"],
    }


def natural_mt_response_inputs(wildcards):
    """The job's files but the control test sets' translations (natural_mt_control_translations)."""
    job = natural_mt_response_job(wildcards)
    inputs = _flatten({key: value for key, value in job.items() if key not in ("same_response", "types", "controls")})
    return inputs + [table for files in job["controls"].values() for table in files["tables"]]


def natural_mt_control_translations(wildcards):
    """The translations of the control test sets that hold records (of a type with fewer than type_noise_floor_below
    perturbations), known once the checkpoint natural_identity_testset wrote them. A separate input function: while a
    checkpoint is pending only this one is deferred, and a dry run still lists every other job."""
    translations = []
    for files in natural_mt_response_job(wildcards)["controls"].values():
        for table, translation in zip(files["tables"], files["translations"]):
            path = checkpoints.natural_identity_testset.get(identity_testset=table[len("results/testsets/"):-len(".tsv")]).output[0]
            translations += [translation] if len(read_control(path)) else []
    return translations


# Identity or control test set -> how it is made (rule natural_identity_testset).
NATURAL_IDENTITY_JOBS = {
    **{
        sample.testset(part): {"samples": {testset: f"results/perturbations/{sample.families[0]}/samples/{testset}.tsv" for testset in testsets}}
        for sample in NATURAL_SAMPLES.values() for part, testsets in sample.parts.items()
    },
    **{
        name: {
            "part": part, "below": NATURAL["type_noise_floor_below"],
            "perturbed": {other: f"results/testsets/{derived_testset(NATURAL_TYPES[perturbation_type], perturbation_type, other)}.tsv"
                          for other in names},
        }
        for perturbation_type, names in NATURAL_TYPE_CONTROLS.items() for part, name in names.items()
    },
}


def natural_identity_job(wildcards):
    """A sample's identity test set of one part: the part's samples in the order its perturbed test sets list them;
    or a type's control test set of one part: the type's perturbed test sets (every part: the threshold counts them
    all), the part and the threshold."""
    return NATURAL_IDENTITY_JOBS[wildcards.identity_testset]


def natural_identity_inputs(wildcards):
    job = natural_identity_job(wildcards)
    return list(job.get("samples", job.get("perturbed", {})).values())


def natural_sentiment_response_job(wildcards):
    return {"perturbed": natural_review_files()}


def natural_sentiment_response_inputs(wildcards):
    return {
        "model": f"results/sentiment/models/{wildcards.classifier}/model.joblib",
        "records": "results/natural_robustness/sentiment/records.tsv",
        "perturbed": list(natural_review_files().values()),
    }


def natural_sentiment_model_response_inputs(wildcards):
    """A Hugging Face model's files (a local directory's), the records and the perturbed reviews."""
    return {
        "model_files": sentiment_model_files(wildcards),
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
    sample sizes, the interval (method, bootstrap), and the seed."""
    samples = [
        [testset, f"results/perturbations/{family}/samples/{testset}.tsv"]
        for family in NATURAL["families"] for testset in FAMILIES[family]["testsets"]
    ]
    return {
        "mt_samples": samples,
        "review_records": "results/natural_robustness/sentiment/records.tsv" if NATURAL_CLASSIFIERS else None,
        "responses": natural_response_files(),
        "types": NATURAL_TYPES, "sizes": NATURAL["sample_sizes"], "bootstrap": NATURAL["bootstrap"], "seed": NATURAL["seed"],
        "interval": NATURAL["interval"], "chrf_thresholds": NATURAL["chrf_thresholds"],
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
    return {
        "inputs": {"MT test sets": mt, **({"reviews": sentiment} if sentiment else {})},
        "chrf_threshold": NATURAL["same_response"]["chrf_threshold"],
        "circular": circular_pairs(NATURAL_TYPES, FAMILIES, config["systems"]),
    }


def natural_table_inputs(wildcards):
    files = [files[key] for types in natural_table_job()["inputs"].values() for files in types.values() for key in ("derived", "status")]
    return {"scores": "results/natural_robustness/scores.tsv", "thresholds": "results/natural_robustness/chrf_thresholds.tsv",
            "inputs": _flatten(files)}





def natural_robustness_outputs():
    """The scores, changes and consistency tables and the figures of the branch (none without its section)."""
    if not NATURAL:
        return []
    tables, figures = "results/tables/natural_robustness", "results/figures/natural_robustness"
    outputs = [f"{tables}/scores.{extension}" for extension in ("csv", "md", "tex", "html")]
    outputs += [f"{tables}/perturbation_changes.{extension}" for extension in ("csv", "md", "html")]
    outputs += [f"{tables}/chrf_thresholds.{extension}" for extension in ("csv", "md", "html")]
    outputs += expand(f"{figures}/{{figure}}.{{extension}}", figure=["scores"], extension=["png", "pdf"])
    return outputs
