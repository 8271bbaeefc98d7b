# Lookup tables and input functions of MT studies' metrics read from files (mt_studies.<study>.metric_files; rule
# metric_file_scores in rules/score.smk; nlp_robustness.studies.metric_files); included by rules/common.smk.

from nlp_robustness.studies.metric_files import file_metrics, score_file_key


# Every study's file metrics (study -> names) and every such name (the file_metric wildcard).
FILE_METRICS = file_metrics(config)
FILE_METRIC_NAMES = sorted({metric for names in FILE_METRICS.values() for metric in names})


def _metric_file_entry(wildcards):
    """A study's score file entry of one file metric and test set (completed: nlp_robustness.studies.metric_files)."""
    return MT_STUDIES[wildcards.mt_study]["metric_files"][wildcards.file_metric]["testsets"][wildcards.testset]


def _metric_file_of_system(entry, system):
    """The entry narrowed to one system: its file and, for an MTME file, its name there (its job's params)."""
    if entry["format"] == "mtme":
        return {"format": "mtme", "file": entry["file"], "systems": {system: entry["systems"][system]}}
    return {"format": "plain", "files": {system: entry["files"][system]}}


def metric_file_inputs(wildcards):
    """The prepared test set, its provenance (the segments of the file it is made from) and the system's score file."""
    entry = _metric_file_of_system(_metric_file_entry(wildcards), wildcards.system)
    return {
        "testset": f"results/testsets/{wildcards.testset}.tsv",
        "provenance": f"results/testsets/{wildcards.testset}.provenance.json",
        "scores": entry["file"] if entry["format"] == "mtme" else entry["files"][wildcards.system],
    }


def metric_file_job(wildcards):
    """What a metric_file_scores job reads (its score file entry for the system) and the config key its errors name."""
    entry = _metric_file_entry(wildcards)
    return {
        "entry": _metric_file_of_system(entry, wildcards.system),
        "where": score_file_key(wildcards.mt_study, wildcards.file_metric, wildcards.testset, entry, wildcards.system),
    }
