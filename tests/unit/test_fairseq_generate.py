"""fairseq-generate: its command line and its output put back in input order."""

from __future__ import annotations

import pytest

from nlp_robustness.systems.fairseq.checkpoints import ModelBundle
from nlp_robustness.systems.fairseq.generate import GenerationOptions, generate_command, parse_generate_output
from nlp_robustness.systems.fairseq.runtime import FairseqError

GENERATE_OUTPUT = """2026-11-22 | INFO | fairseq_cli.generate | loading model
S-2\tshort
T-2\tcourt
H-2\t-0.31\tcourt
D-2\t-0.31\tcourt
P-2\t-0.1 -0.2
S-0\ta longer sentence
H-0\t-0.52\tune phrase plus longue
S-1\tempty output
H-1\t-1.2\t
Generate test with beam=5: BLEU4 = 1.00
"""


def test_generate_output_is_put_back_in_input_order() -> None:
    assert parse_generate_output(GENERATE_OUTPUT, 3) == ["une phrase plus longue", "", "court"]


@pytest.mark.parametrize(
    ("output", "expected", "message"),
    [
        (GENERATE_OUTPUT, 5, r"no hypothesis for 2 of 5 input\(s\) \(ids 3, 4\)"),
        (GENERATE_OUTPUT + "H-2\t-0.1\tencore\n", 3, "several hypotheses for ids 2"),
        (GENERATE_OUTPUT, 2, "hypotheses for unknown ids 2"),
    ],
)
def test_misaligned_generate_output_raises(output: str, expected: int, message: str) -> None:
    with pytest.raises(FairseqError, match=message):
        parse_generate_output(output, expected)


def test_generate_command_keeps_every_sentence_and_the_best_hypothesis() -> None:
    bundle = ModelBundle("model.pt", "dict.en.txt", "dict.fr.txt", "bpecodes")
    command = generate_command("bin", bundle, GenerationOptions(beam=3), "cpu")
    assert command[0] == "bin" and command[-1] == "--cpu"
    for flag, value in [("--path", "model.pt"), ("--beam", 3), ("--nbest", 1), ("--required-batch-size-multiple", 1),
                        ("--dataset-impl", "raw")]:
        assert command[command.index(flag) + 1] == value
    assert "--cpu" not in generate_command("bin", bundle, GenerationOptions(), "cuda")


def test_the_raw_split_is_what_fairseq_generate_reads(tmp_path) -> None:
    """<split>.<src>-<tgt>.<lang> beside dict.<lang>.txt: the files fairseq's raw dataset loads."""
    from nlp_robustness.systems.fairseq.binarize import write_raw_split

    (tmp_path / "model").mkdir()
    for language in ("en", "fr"):
        (tmp_path / "model" / f"{language}.dict").write_text(f"{language}word 5\n", encoding="utf-8")
    write_raw_split("test", ["a b", "c"], ["x", "y z"], tmp_path / "data", "en", "fr",
                    source_dictionary=str(tmp_path / "model" / "en.dict"), target_dictionary=str(tmp_path / "model" / "fr.dict"))
    assert (tmp_path / "data" / "test.en-fr.en").read_text(encoding="utf-8") == "a b\nc\n"
    assert (tmp_path / "data" / "test.en-fr.fr").read_text(encoding="utf-8") == "x\ny z\n"
    assert (tmp_path / "data" / "dict.fr.txt").read_text(encoding="utf-8") == "frword 5\n"
