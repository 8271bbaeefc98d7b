# Lookup tables and input functions of the human-judgement branch (rules/human.smk); included by rules/common.smk.


def _human_file(value):
    """A human study's file value: a download of the manifest (its downloaded or mirrored path) or a file path."""
    return download_file_path(DOWNLOAD_DIR, MANIFEST.downloads[value]) if value in MANIFEST.downloads else value


def human_domain_inputs(wildcards):
    """The files of one domain of a human study, by role."""
    spec = HUMAN_STUDIES[wildcards.human_study]
    metric_files = {f"metric:{key}": _human_file(value) for key, value, domain in metric_file_values(spec)
                    if domain in ("", wildcards.human_domain)}
    if spec["format"] == "mqm":
        files = spec["domains"][wildcards.human_domain]
        inputs = {role: _human_file(files[role]) for role in ("scores", "source", "reference", "errors") if role in files}
        if "outputs" in files:
            inputs["outputs"] = [_human_file(files["outputs"][system]) for system in spec["systems"]]  # system order
        return inputs | metric_files
    roles = ("scores", "documents", "source", "reference") if spec["format"] == "mtme" else ("scores", "domain_file", "source", "reference")
    inputs = {role: _human_file(spec[role]) for role in roles}
    rows = spec["systems"] if spec["format"] == "mtme" else {**spec["systems"], **spec["rated_references"]}
    inputs["outputs"] = [_human_file(path) for path in rows.values()]
    return inputs | metric_files


def human_metric_files(study):
    """A human study's metric files for its segment jobs: their config (file values -> paths the job reads)."""
    spec = HUMAN_STUDIES[study]
    return {"paths": {value: _human_file(value) for _key, value, _domain in metric_file_values(spec)},
            "spec": {key: spec[key] for key in ("format", "systems", "domains", "metric_files", "score_names") if key in spec}}


def human_study_domains(study):
    """The domains of a human study, in table order."""
    return list(HUMAN_STUDIES[study]["domains"])


def human_outputs():
    """The human-judgement branch's own tables (its robustness tables and figures are the study plan's)."""
    outputs = []
    for study, spec in HUMAN_STUDIES.items():
        outputs += expand("results/tables/human/{study}/{table}.{extension}", study=study,
                          table=["rankings", "pairwise", "agreement", "metric_consistency", "metric_consistency_pairs"],
                          extension=["csv", "md", "html"])
        outputs += [f"results/tables/human/{study}/metric_consistency_per_domain.html",
                    f"results/figures/human/{study}/metric_consistency.png"]
        if spec["format"] == "wmt-da":
            outputs += expand("results/tables/human/{study}/domain_means.{extension}", study=study, extension=["csv", "md", "html"])
    return outputs


def human_study_pattern(kind):
    """Regex matching the human studies of one format (``mqm``, ``wmt-da`` or ``mtme``)."""
    return _alternation([study for study, spec in HUMAN_STUDIES.items() if spec["format"] == kind])


def human_domain_means_inputs(wildcards):
    """A DA study's score files and its domains' rated-segment tables."""
    spec = HUMAN_STUDIES[wildcards.human_study]
    inputs = {"scores": _human_file(spec["scores"]),
              "segments": [f"results/human/{wildcards.human_study}/segments/{domain}.tsv" for domain in spec["domains"]]}
    if "system_scores" in spec:
        inputs["system_scores"] = _human_file(spec["system_scores"])
    return inputs


def human_study_scores(study):
    """The scores of a human study's engine rows: human, each of metrics, each of its metric_files."""
    return human_scores(HUMAN_STUDIES[study], METRICS)


def _human_tables(study):
    return {score: f"human/{study}/{score}" for score in human_study_scores(study)}


def human_rankings_job(study):
    """Everything a human study's rankings read, by score and row: summaries, gamma curves, replicates, comparisons."""
    tables = _human_tables(study)
    return {
        "summaries": {score: STUDY_PLAN.table_summaries(table) for score, table in tables.items()},
        "gamma": {score: STUDY_PLAN.table_curves(table) for score, table in tables.items()},
        "replicates": {score: STUDY_PLAN.table_replicates(table) for score, table in tables.items()},
        "comparisons": {score: f"results/tables/{table}/comparisons.csv" for score, table in tables.items()},
        "higher_is_better": human_score_directions(HUMAN_STUDIES[study], METRICS),
    }


def human_rankings_inputs(wildcards):
    """The files of :func:`human_rankings_job`, flattened."""
    job = human_rankings_job(wildcards.human_study)
    inputs = {kind: [path for by_row in job[kind].values() for path in by_row.values()] for kind in ("summaries", "gamma", "replicates")}
    inputs["comparisons"] = list(job["comparisons"].values())  # one table per score
    return inputs


def human_segment_tables(study):
    """A human study's segment tables (one per domain, in table order)."""
    return [f"results/human/{study}/segments/{domain}.tsv" for domain in human_study_domains(study)]


def human_score_epsilons_of(study):
    """The epsilon grid of every score of a human study (human, each of metrics, each file metric)."""
    return human_score_epsilons(HUMAN_STUDIES[study], METRICS, ROBUSTNESS["epsilon"])
