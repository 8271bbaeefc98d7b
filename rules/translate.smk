# Translation of every test set by every system, whatever its kind (nlp_robustness.systems.registry): one
# per-test-set rule per kind, and for a kind that batches, one rule per family with translation_jobs:
# per_family or per_family_joint (its outputs are that family's sets), all from the two templates below. The kind says what a
# job needs (model files, params, threads, memory, GPUs) and translates; scripts/translate.py hands it the job.

from functools import partial

from nlp_robustness.data.local_testsets import is_local_testset
from nlp_robustness.systems.registry import KINDS, SystemContext, TranslationJobs, system_kind


# Test set -> its manifest dataset, where a hypotheses system's submission is read from.
TESTSET_DATASETS = {name: spec["dataset"] for name, spec in config["testsets"].items() if "dataset" in spec}
# Test sets of a user's file with domains (a WMT XML file's submissions; hypotheses files of the whole file).
LOCAL_TESTSETS = {name: spec for name, spec in config["testsets"].items() if is_local_testset(spec)}
SYSTEM_CONTEXT = SystemContext(MANIFEST, DOWNLOAD_DIR, MAX_SEGMENTS, frozenset(DERIVED_TESTSETS), TESTSET_DATASETS, LOCAL_TESTSETS)
# Families whose perturbed test sets a system of a batching kind translates in one job.
FAMILY_TRANSLATION_JOBS = {
    family: derived_testsets(family, spec) + NATURAL_IDENTITY.get(family, [])  # + its identity sets (natural_robustness)
    for family, spec in FAMILIES.items() if spec["translation_jobs"] in ("per_family", "per_family_joint")
}
TRANSLATION_JOBS = TranslationJobs(config["systems"], SYSTEM_CONTEXT, FAMILY_TRANSLATION_JOBS)


for _kind in KINDS:
    _module = system_kind(_kind)

    rule:
        """Translate a whole test set with a system of one kind, aligned line for line, and report how."""
        name:
            _module.RULE
        input:
            unpack(TRANSLATION_JOBS.inputs),
            testsets=["results/testsets/{testset}.tsv"],
        output:
            translations=["results/translations/{system}/{testset}.txt"],
            reports=["results/translations/{system}/{testset}.report.json"],
        log:
            f"logs/{_module.RULE}/{{system}}/{{testset}}.log",
        benchmark:
            f"logs/benchmarks/{_module.RULE}/{{system}}/{{testset}}.tsv",
        wildcard_constraints:
            system=_alternation(TRANSLATION_JOBS.systems_of_kind(_kind)),
            testset=_alternation(TRANSLATION_JOBS.single_testsets(_kind, TESTSETS + DERIVED_TESTSETS)),
        params:
            kind=_kind,
            family=None,
            joint=False,
            testsets=lambda wildcards: [wildcards.testset],
            settings=TRANSLATION_JOBS.params,
        threads: TRANSLATION_JOBS.threads
        resources:
            **TRANSLATION_JOBS.resources(_kind),
        conda:
            f"../envs/{_module.CONDA_ENV}"
        script:
            "../scripts/translate.py"

    if not _module.BATCHES_FAMILIES:
        continue
    for _family, _testsets in FAMILY_TRANSLATION_JOBS.items():

        rule:
            """Translate every perturbed test set of a family with a system in one job (one start-up)."""
            name:
                f"{_module.RULE}_{_family}"
            input:
                unpack(partial(TRANSLATION_JOBS.inputs, testsets=_testsets)),
                testsets=[f"results/testsets/{name}.tsv" for name in _testsets],
            output:
                translations=[f"results/translations/{{system}}/{name}.txt" for name in _testsets],
                reports=[f"results/translations/{{system}}/{name}.report.json" for name in _testsets],
            log:
                f"logs/{_module.RULE}/{{system}}/perturbed/{_family}.log",
            benchmark:
                f"logs/benchmarks/{_module.RULE}_{_family}/{{system}}.tsv",
            wildcard_constraints:
                system=_alternation(TRANSLATION_JOBS.systems_of_kind(_kind)),
            params:
                kind=_kind,
                family=_family,
                joint=FAMILIES[_family]["translation_jobs"] == "per_family_joint",  # one batched run over the sets
                testsets=_testsets,
                settings=partial(TRANSLATION_JOBS.params, testsets=_testsets),
            threads: partial(TRANSLATION_JOBS.threads, testsets=_testsets)
            resources:
                **TRANSLATION_JOBS.resources(_kind, _testsets),
            conda:
                f"../envs/{_module.CONDA_ENV}"
            script:
                "../scripts/translate.py"
