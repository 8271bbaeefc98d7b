# Lookup tables and input functions of the human-judgement branch (rules/human.smk); included by rules/common.smk.


def _human_file(value):
    """A human study's file value: a download of the manifest (its downloaded or mirrored path) or a file path."""
    return download_file_path(DOWNLOAD_DIR, MANIFEST.downloads[value]) if value in MANIFEST.downloads else value


def human_domain_inputs(wildcards):
    """The files of one domain of a human study, by role."""
    spec = HUMAN_STUDIES[wildcards.human_study]
    if spec["format"] == "mqm":
        files = spec["domains"][wildcards.human_domain]
        inputs = {role: _human_file(files[role]) for role in ("scores", "source", "reference", "errors") if role in files}
        if "outputs" in files:
            inputs["outputs"] = [_human_file(files["outputs"][system]) for system in spec["systems"]]  # system order
        return inputs
    inputs = {role: _human_file(spec[role]) for role in ("scores", "domain_file", "source", "reference")}
    inputs["outputs"] = [_human_file(path) for path in {**spec["systems"], **spec["rated_references"]}.values()]
    return inputs


def human_study_domains(study):
    """The domains of a human study, in table order."""
    return list(HUMAN_STUDIES[study]["domains"])


def human_outputs():
    """The human-judgement branch's own tables (its robustness tables and figures are the study plan's)."""
    outputs = []
    for study, spec in HUMAN_STUDIES.items():
        outputs += expand("results/tables/human/{study}/{table}.{extension}", study=study,
                          table=["rankings", "pairwise", "agreement"], extension=["csv", "md", "html"])
        if spec["format"] == "wmt-da":
            outputs += expand("results/tables/human/{study}/domain_means.{extension}", study=study, extension=["csv", "md", "html"])
    return outputs


def human_study_pattern(kind):
    """Regex matching the human studies of one format (``mqm`` or ``wmt-da``)."""
    return _alternation([study for study, spec in HUMAN_STUDIES.items() if spec["format"] == kind])


def human_domain_means_inputs(wildcards):
    """A DA study's score files and its domains' rated-segment tables."""
    spec = HUMAN_STUDIES[wildcards.human_study]
    inputs = {"scores": _human_file(spec["scores"]),
              "segments": [f"results/human/{wildcards.human_study}/segments/{domain}.tsv" for domain in spec["domains"]]}
    if "system_scores" in spec:
        inputs["system_scores"] = _human_file(spec["system_scores"])
    return inputs


def _human_tables(study):
    return {score: f"human/{study}/{score}" for score in HUMAN_SCORES}


def human_rankings_job(study):
    """Everything a human study's rankings read, by score and row: summaries, gamma curves, replicates, comparisons."""
    tables = _human_tables(study)
    return {
        "summaries": {score: STUDY_PLAN.table_summaries(table) for score, table in tables.items()},
        "gamma": {score: STUDY_PLAN.table_curves(table) for score, table in tables.items()},
        "replicates": {score: STUDY_PLAN.table_replicates(table) for score, table in tables.items()},
        "comparisons": {score: f"results/tables/{table}/comparisons.csv" for score, table in tables.items()},
    }


def human_rankings_inputs(wildcards):
    """The files of :func:`human_rankings_job`, flattened."""
    job = human_rankings_job(wildcards.human_study)
    inputs = {kind: [path for by_row in job[kind].values() for path in by_row.values()] for kind in ("summaries", "gamma", "replicates")}
    inputs["comparisons"] = list(job["comparisons"].values())  # one table per score
    return inputs
