# Robustness of NLP systems as consistency of a quality score across test domains
# (variance, coefficient of variation, (epsilon, gamma)-Robustness; bagging, design bagging, leave-one-out).

from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


report: "report/workflow.rst"


include: "rules/common.smk"
include: "rules/datasets.smk"
include: "rules/testsets.smk"
include: "rules/translate.smk"
include: "rules/fairseq.smk"
include: "rules/score.smk"
include: "rules/robustness.smk"
include: "rules/sentiment.smk"
include: "rules/human.smk"
include: "rules/report.smk"


rule all:
    input:
        final_outputs(),
    default_target: True
