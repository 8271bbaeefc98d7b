"""Achieved attack rates of a family's attacked sources, per function: the share of the attack's own eligible units
changed (families with ``unit_rate``: words, or letters for visual), and of all words and characters changed."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

import pandas as pd  # noqa: E402

from nlp_robustness.fileio.atomic import atomic_write  # noqa: E402
from nlp_robustness.fileio.text_files import read_table  # noqa: E402
from nlp_robustness.outputs.metric_robustness import RATE_CAPTION, attacked_source_rates, frame_markdown  # noqa: E402
from nlp_robustness.scoring.unknown_tokens import load_wordpiece_tokenizer  # noqa: E402
from nlp_robustness.perturbations.registry import family_module  # noqa: E402

job = snakemake.params.job
module = family_module(snakemake.wildcards.family)
derived = {
    function: pd.concat([read_table(path, ["original_source", "source"], "perturbed test set") for path in paths], ignore_index=True)
    for function, paths in job["derived"].items()
}
rates = attacked_source_rates(derived, module.attack_rate, module.parse_instance, getattr(module, "unit_rate", None),
                              load_wordpiece_tokenizer())
with atomic_write(snakemake.output.csv) as handle:
    rates.to_csv(handle, index=False)
with atomic_write(snakemake.output.markdown) as handle:
    handle.write(frame_markdown(rates, RATE_CAPTION.format(texts=f"sampled sources ({snakemake.wildcards.family})")
                                + "; unit_rate: the share of the attack's own unit changed (tokens, words or letters)"))
logging.info("\n%s", rates.to_string())
