"""Training corpus of an in-house fairseq model: dev split, tokenization, joint BPE, binarization."""

import json
import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

import pandas as pd  # noqa: E402

from nlp_robustness.errors import InputError  # noqa: E402
from nlp_robustness.systems.fairseq.binarize import binarize  # noqa: E402
from nlp_robustness.systems.fairseq.corpus import prepare_training_corpus  # noqa: E402
from nlp_robustness.systems.fairseq.runtime import fairseq_environment  # noqa: E402
from nlp_robustness.fileio.atomic import atomic_write  # noqa: E402
from nlp_robustness.fileio.text_files import write_table  # noqa: E402
from nlp_robustness.data.testsets import read_testset_table  # noqa: E402

corpus_params = snakemake.params.corpus
source_language, target_language = corpus_params["source_language"], corpus_params["target_language"]
for dataset, languages in corpus_params["dataset_languages"].items():
    if languages != [source_language, target_language]:
        raise InputError(
            f"systems.{snakemake.wildcards.system}.training: dataset {dataset} is {languages[0]}->{languages[1]}, "
            f"the first training dataset {source_language}->{target_language}"
        )


def read_pairs(paths):
    pairs = []
    for path in paths:
        table = read_testset_table(path)
        pairs += list(zip(table["source"], table["reference"]))
    return pairs


pairs = read_pairs(snakemake.input.training)
dev_pairs = read_pairs(snakemake.input.dev) if snakemake.input.dev else None

corpus = prepare_training_corpus(
    pairs,
    source_language=source_language,
    target_language=target_language,
    bpe_merges=corpus_params["bpe_merges"],
    bpe_min_frequency=corpus_params["bpe_min_frequency"],
    dev_pairs=dev_pairs,
    holdout=corpus_params["holdout"],
    seed=corpus_params["seed"],
    max_segments=corpus_params["max_segments"],
)
logging.info("corpus: %s", corpus.statistics)

with open(snakemake.log[0], "a", encoding="utf-8") as log:
    binarize(  # into a staging folder beside data-bin/, renamed onto it when complete
        {
            "train": (corpus.train_source, corpus.train_target),
            "valid": (corpus.valid_source, corpus.valid_target),
        },
        snakemake.output.data_bin,
        source_language,
        target_language,
        joined_dictionary=True,
        workers=snakemake.threads,
        environment=fairseq_environment(snakemake.threads),
        log=log,
    )

with atomic_write(snakemake.output.bpe_codes) as handle:
    handle.write(corpus.bpe_codes)
dev = pd.DataFrame({"source": corpus.dev_sources, "reference": corpus.dev_references})
write_table(dev, snakemake.output.dev, ["source", "reference"])
with atomic_write(snakemake.output.statistics) as handle:
    json.dump({"system": snakemake.wildcards.system, **corpus.statistics}, handle, indent=2)
