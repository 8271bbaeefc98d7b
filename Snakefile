# Robustness of NLP systems as consistency of a quality score across test domains
# (variance, coefficient of variation, (epsilon, gamma)-Robustness; bagging, design bagging, leave-one-out).

from snakemake.utils import min_version

from nlp_robustness.config.files import check_config_syntax
from nlp_robustness.run_directory import move_log_files, remove_if_unused_at_exit, run_directory
from nlp_robustness.snakemake_messages import plain_input_errors

min_version("9.0")

# A bad config or input file stops planning with one line naming the key, file or line, not a traceback
# through the workflow's own files (nlp_robustness.snakemake_messages).
plain_input_errors()


# The default config (config.yaml of the working directory), unless `--configfile` names another: a
# config file given on the command line is the whole config (Snakemake would merge it into this one key
# by key, so that what it leaves out, a system or a branch, would come back from here). `--config
# key=value` still applies on top of either. Its syntax is checked first: Snakemake's reader would say only that
# it is "not valid JSON or YAML", without a line or column. A file given with --configfile is read by Snakemake
# before the workflow starts; the scheduler plugin of this repository, which Snakemake imports first, makes its
# reader name the line and column of those (nlp_robustness.snakemake_messages.name_config_file_faults).
if not workflow.overwrite_configfiles:
    check_config_syntax("config.yaml")

    configfile: "config.yaml"


# Each config's results/, logs/, downloads and Snakemake's records (.snakemake/) go to its run_directory (default
# ".": where snakemake is launched; `--directory` takes precedence), so that running another config reruns and
# overwrites nothing of this one's (docs/own-data.md, "Several configs in one checkout"); rules/common.smk rebases the
# config's relative paths onto it. A run directory this start creates is removed again at exit if it holds nothing but
# Snakemake's records (a failed start, a dry run); Snakemake's log, opened before, moves into it (nlp_robustness.run_directory).
if workflow.is_main_process and workflow.overwrite_workdir is None:
    remove_if_unused_at_exit(run_directory(config))


workdir: run_directory(config)


move_log_files(workflow.logger_manager.logfile_handlers, workflow.workdir_init)


include: "rules/common.smk"
include: "rules/datasets.smk"
include: "rules/testsets.smk"
include: "rules/translate.smk"
include: "rules/fairseq.smk"
include: "rules/score.smk"
include: "rules/corpus.smk"
include: "rules/robustness.smk"
include: "rules/perturbations.smk"
include: "rules/metric_robustness.smk"
include: "rules/natural_robustness.smk"
include: "rules/profile.smk"
include: "rules/sentiment.smk"
include: "rules/human.smk"
include: "rules/metric_consistency.smk"
include: "rules/benchmarks.smk"
include: "rules/report.smk"


# The report opens with the robustness profile's generated page once it exists (rules/common.smk).
report: report_description()


rule all:
    input:
        final_outputs(),
    default_target: True
