# Lookup tables and input functions of perturbation families (rules/perturbations.smk); included by rules/common.smk.


def pair_score_files(family, system):
    """One system's pair-score tables of a family, by function."""
    return family_pair_score_files(family, system, list(FAMILIES[family]["functions"]))


def family_needs_parse(family):
    return family_module(family).NEEDS_PARSE


def perturbation_sample_params(wildcards):
    """What a family's sample of a test set depends on (and the group it is drawn under, for families that
    share their samples with others)."""
    params = {"seed": PERTURBATIONS["seed"], "sample_size": FAMILIES[wildcards.family]["sample_size"]}
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
        "parses": {  # the sides the family perturbs (a side it keeps needs no parse)
            testset: {side: f"results/perturbations/{family}/parses/{testset}.{side}.tsv" for side in perturbed_sides(family_module(family))}
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
        # beta2's BLEU tokenizer: the one beta1 was scored with (every part of a family shares it).
        "bleu_tokenize": BLEU_TOKENIZERS[derived_testset(wildcards.family, wildcards.function, next(iter(parts(spec))))],
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
            outputs += expand(
                f"{figures}/{{figure}}.{{extension}}",
                figure=["robust_vs_faithful", "beta_heatmaps", "scores_vs_alpha_and_length", "function_similarity"],
                extension=["png", "pdf"],
            )
    return outputs
