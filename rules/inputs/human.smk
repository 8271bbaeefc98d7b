# Lookup tables and input functions of the human-judgement branch (rules/human.smk); included by rules/common.smk.


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
    """The human-judgement branch's ranking tables (its robustness tables and figure are the study plan's)."""
    if not HUMAN:
        return []
    rankings = expand("results/tables/human/{table}.{extension}", table=["rankings", "pairwise", "agreement"], extension=["csv", "md", "html"])
    return rankings
