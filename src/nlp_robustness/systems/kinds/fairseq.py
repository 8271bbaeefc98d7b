"""Kind ``fairseq``: a ConvS2S model (:mod:`nlp_robustness.systems.fairseq`), pretrained from the manifest
(``pretrained``) or trained by the workflow (``training``, rules/fairseq.smk).

A fairseq job may translate every perturbed test set of a family (``translation_jobs: per_family``): one
start-up of torch and fairseq instead of one per set, each set in its own ``fairseq-generate`` run (its
translations are those of a job of its own). With ``per_family_joint`` the sets' sources are one batched
run, in the family's order, and each set's report records the whole job's report under ``job``.

:class:`FairseqModels` holds the input functions of the training rules (rules/fairseq.smk).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nlp_robustness.data.acquisition import extraction_dir_path
from nlp_robustness.systems.registry import JobNeeds, SystemContext, TranslationBatch, write_batch, write_report, write_translations

if TYPE_CHECKING:
    from nlp_robustness.data.manifest_entries import Manifest

RULE = "translate_fairseq"
CONDA_ENV = "fairseq.yaml"
BATCHES_FAMILIES = True
GPU = True
#: Minutes a cluster scheduler allows a translation job.
RUNTIME = 120


def languages(spec: Mapping[str, Any], manifest: Manifest) -> tuple[str, str]:
    """(source, target) language of a system: its pretrained model's, or its first training dataset's."""
    if "pretrained" in spec:
        model = manifest.models[spec["pretrained"]]
        return model.source_language, model.target_language
    dataset = manifest.datasets[spec["training"]["datasets"][0]]
    return dataset.source_language, dataset.target_language


def model_prefix(system: str) -> str:
    """Where the workflow trains an in-house model."""
    return f"results/models/{system}"


def model_inputs(system: str, spec: Mapping[str, Any], context: SystemContext) -> dict[str, str]:
    """The files of a system's model: the extracted pretrained archive, or what training wrote."""
    if "pretrained" in spec:
        download = context.manifest.downloads[context.manifest.models[spec["pretrained"]].download]
        return {"model_dir": extraction_dir_path(context.download_dir, download)}
    prefix = model_prefix(system)
    return {"checkpoint": f"{prefix}/checkpoint_best.pt", "data_bin": f"{prefix}/data-bin", "bpe_codes": f"{prefix}/bpecodes"}


def bundle(system: str, spec: Mapping[str, Any], context: SystemContext) -> dict[str, str]:
    """Paths of a system's checkpoint, dictionaries and BPE codes, and its languages
    (:class:`~nlp_robustness.systems.fairseq.checkpoints.ModelBundle` fields)."""
    source_language, target_language = languages(spec, context.manifest)
    if "pretrained" in spec:
        model = context.manifest.models[spec["pretrained"]]
        directory = extraction_dir_path(context.download_dir, context.manifest.downloads[model.download])
        files = {role: f"{directory}/{member}" for role, member in model.files.items()}
    else:
        prefix = model_prefix(system)
        files = {
            "checkpoint": f"{prefix}/checkpoint_best.pt",
            "source_dictionary": f"{prefix}/data-bin/dict.{source_language}.txt",
            "target_dictionary": f"{prefix}/data-bin/dict.{target_language}.txt",
            "bpe_codes": f"{prefix}/bpecodes",
        }
    return {**files, "source_language": source_language, "target_language": target_language}


def translation_threads(spec: Mapping[str, Any]) -> int:
    """Torch threads of a system's translation jobs: ``translation_cpu_threads``, else ``cpu_threads``.

    Training needs its own fixed count (its weights differ with 1 and 2 threads). Beam search of the
    default model gives the same translations with either, and one thread uses its core better
    (about 34 s against 2 x 22 s of core time for WMT'15), so two one-thread jobs side by side
    translate more per second than one two-thread job: the default config translates with one.
    """
    threads = spec.get("translation_cpu_threads")
    return int(spec["cpu_threads"] if threads is None else threads)


def translation_settings(system: str, spec: Mapping[str, Any], context: SystemContext) -> dict[str, Any]:
    """Model files, beam search, device and threads (:func:`translation_threads`)
    (:func:`nlp_robustness.systems.fairseq.translate.translate_with_settings`)."""
    return {
        "bundle": bundle(system, spec, context),
        "generation": spec["generation"],
        "device": spec["device"],
        "cpu_threads": translation_threads(spec),
    }


def needs(system: str, spec: Mapping[str, Any], testsets: Sequence[str], context: SystemContext) -> JobNeeds:
    """The model's files; :func:`translation_threads` cores, ``mem_mb`` and ``gpus`` of the system's entry."""
    return JobNeeds(
        inputs=model_inputs(system, spec, context),
        params=translation_settings(system, spec, context),
        threads=translation_threads(spec),
        mem_mb=spec["mem_mb"],
        runtime=RUNTIME,
        gpus=spec["gpus"],
    )


def translate(batch: TranslationBatch) -> None:
    """Each test set of the batch in its own beam search, all in one process; with ``batch.joint``, every set
    in one beam search (sources in order), each set's lines its slice."""
    from nlp_robustness.data.testsets import read_testset_table
    from nlp_robustness.systems.fairseq.translate import translate_lists_with_settings, translate_with_settings

    tables = [read_testset_table(path) for path in batch.testset_files]
    if batch.joint:
        translations, report = translate_with_settings(
            [source for table in tables for source in table["source"]],
            [reference for table in tables for reference in table["reference"]],
            **batch.params,
            log_path=batch.log,
        )
        logging.info("%s", report.summary())
        write_batch(batch, [len(table) for table in tables], translations, report.as_dict())
        return
    results = translate_lists_with_settings(
        [(table["source"].tolist(), table["reference"].tolist()) for table in tables], **batch.params, log_path=batch.log
    )
    for testset, (translations, report), translation_file, report_file in zip(
        batch.testsets, results, batch.translation_files, batch.report_files, strict=True
    ):
        logging.info("%s: %s", testset, report.summary())
        write_translations(translations, translation_file)
        write_report({"system": batch.system, "testset": testset, **report.as_dict()}, report_file)


@dataclass(frozen=True)
class FairseqModels:
    """The fairseq systems of a config, for the rules that train and check models (rules/fairseq.smk):
    input functions of ``wildcards.system``.

    Attributes:
        systems: The config's ``systems`` section (defaults filled in).
        context: The manifest and the download directory.
    """

    systems: Mapping[str, Mapping[str, Any]]
    context: SystemContext

    def inhouse(self) -> list[str]:
        """fairseq systems the workflow trains (the others are pretrained models of the manifest)."""
        return [name for name, spec in self.systems.items() if spec["kind"] == "fairseq" and "training" in spec]

    def spec(self, wildcards: Any) -> Mapping[str, Any]:
        """The system's config entry (defaults filled in)."""
        return self.systems[wildcards.system]

    def languages(self, wildcards: Any) -> tuple[str, str]:
        return languages(self.spec(wildcards), self.context.manifest)

    def training_corpus_inputs(self, wildcards: Any) -> dict[str, list[str]]:
        """Parsed manifest tables an in-house model trains on, and its separate dev sets if any."""
        training = self.spec(wildcards)["training"]
        return {
            "training": [f"results/datasets/{dataset}.tsv" for dataset in training["datasets"]],
            "dev": [f"results/datasets/{dataset}.tsv" for dataset in training["dev"].get("datasets", [])],
        }

    def training_corpus_params(self, wildcards: Any) -> dict[str, Any]:
        """What the training corpus depends on (an edit of training.arch, say, leaves it alone)."""
        training = self.spec(wildcards)["training"]
        datasets = self.context.manifest.datasets
        source_language, target_language = self.languages(wildcards)
        return {
            "datasets": training["datasets"],
            "dataset_languages": {
                key: [datasets[key].source_language, datasets[key].target_language]
                for key in [*training["datasets"], *training["dev"].get("datasets", [])]
            },
            "max_segments": training["max_segments"],
            "holdout": training["dev"].get("holdout"),
            "bpe_merges": training["bpe_merges"],
            "bpe_min_frequency": training["bpe_min_frequency"],
            "seed": training["seed"],
            "source_language": source_language,
            "target_language": target_language,
        }

    def training_params(self, wildcards: Any) -> dict[str, Any]:
        training = self.spec(wildcards)["training"]
        params = {key: training[key] for key in ("arch", "train_args", "seed", "max_epoch", "patience")}
        # only when set: it permits, it does not change what is trained, and its default reruns no trained model
        if training.get("allow_code_in_train_args"):
            params["allow_code_in_train_args"] = True
        return params

    def model_inputs(self, wildcards: Any) -> dict[str, str]:
        return model_inputs(wildcards.system, self.spec(wildcards), self.context)

    def translation_settings(self, wildcards: Any) -> dict[str, Any]:
        return translation_settings(wildcards.system, self.spec(wildcards), self.context)

    def translation_threads(self, wildcards: Any) -> int:
        return translation_threads(self.spec(wildcards))
