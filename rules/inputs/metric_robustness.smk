# Lookup tables and input functions of metric robustness (rules/metric_robustness.smk); included by rules/common.smk.


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
    from nlp_robustness.studies.metric_attack_conditions import condition_attack_level

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


def metric_tau_uncertainty_job(wildcards=None):
    """The conditions and variants of the tau bootstrap, and its resamples, confidence and seed (the uncertainty section)."""
    return {
        "conditions": METRIC_CONDITIONS, "variants": METRIC_VARIANTS, "seed": UNCERTAINTY["seed"],
        "resamples": UNCERTAINTY["resamples"], "confidence": UNCERTAINTY["confidence"],
    }


def metric_reference_files():
    return {condition: f"results/metric_robustness/references/{condition}.tsv" for condition in METRIC_CONDITIONS}



def metric_robustness_outputs():
    """The tau, unknown-token and attack-rate tables, the figures and the consistency tables of the branch."""
    if not METRIC_ROBUSTNESS:
        return []
    tables, figures = "results/tables/metric_robustness", "results/figures/metric_robustness"
    outputs = [f"{tables}/{name}.{extension}" for name in ("tau", "unknown_tokens") for extension in ("csv", "md", "tex", "html")]
    outputs += [f"{tables}/tau_by_layer.csv", f"{tables}/best_layers.csv", f"{tables}/attack_rates.csv", f"{tables}/attack_rates.md"]
    outputs += [f"{tables}/tau_{name}.{extension}" for name in ("intervals", "differences") for extension in ("csv", "md")]
    outputs += expand(
        f"{figures}/{{figure}}.{{extension}}", figure=["unknown_tokens", "tau_vs_level", "tau_by_layer"], extension=["png", "pdf"]
    )
    return outputs
