# Lookup tables and input functions of the robustness profile (rules/profile.smk); included by rules/common.smk.


PROFILE = config.get("robustness_profile")
PROFILE_PLAN = profile_plan(config, STUDY_PLAN.gamma_curves()) if PROFILE else {"metric": None, "groups": []}
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
