"""One MT system's translations of the perturbed segments against its translations of the originals."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

import pandas as pd  # noqa: E402

from nlp_robustness.data.testset_formats import read_plain_lines  # noqa: E402
from nlp_robustness.data.testsets import read_testset_table  # noqa: E402
from nlp_robustness.fileio.text_files import read_table, write_table  # noqa: E402
from nlp_robustness.perturbations.derive import DERIVED_COLUMNS  # noqa: E402
from nlp_robustness.studies.natural_robustness_responses import MT_RESPONSE_COLUMNS, mt_responses  # noqa: E402
from nlp_robustness.studies.natural_robustness_controls import read_control  # noqa: E402

job = snakemake.params.job
derived = {
    perturbation_type: (
        pd.concat([read_table(path, DERIVED_COLUMNS, "perturbed test set") for path in files["tables"]], ignore_index=True),
        [line for path in files["translations"] for line in read_plain_lines(path)],
    )
    for perturbation_type, files in job["derived"].items()
}
testsets = {
    testset: (read_testset_table(files["table"]), read_plain_lines(files["translations"])) for testset, files in job["testsets"].items()
}
identity = {
    sample: (
        pd.concat([read_table(path, DERIVED_COLUMNS, "identity test set") for path in files["tables"]], ignore_index=True),
        [line for path in files["translations"] for line in read_plain_lines(path)],
    )
    for sample, files in job["identity"].items()
}
controls = {}  # type -> its control test set and translations (an empty one, of a type with many perturbations, has none)
for perturbation_type, files in job["controls"].items():
    parts = [(read_control(table), translations) for table, translations in zip(files["tables"], files["translations"])]
    controls[perturbation_type] = (
        pd.concat([table for table, _ in parts], ignore_index=True),
        [line for table, path in parts if len(table) for line in read_plain_lines(path)],
    )
responses = mt_responses(derived, testsets, job["same_response"], where=f"natural robustness of {snakemake.wildcards.system}",
                         identity=identity, types=job["types"], controls=controls)
write_table(responses, snakemake.output[0], MT_RESPONSE_COLUMNS)
logging.info("share unchanged per type:\n%s", responses.groupby("type", sort=False)[["same_exact", "same_chrf"]].mean().to_string())
