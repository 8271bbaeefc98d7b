"""The fairseq ConvS2S helpers: subword pipeline, output alignment, commands, checkpoints, corpus."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from nlp_robustness.errors import InputError
from nlp_robustness.systems.fairseq_mt import (
    FairseqError,
    SubwordCodec,
    TrainingOptions,
    check_checkpoint,
    learn_joint_bpe,
    model_summary_table,
    option_arguments,
    parse_generate_output,
    parse_training_log,
    prepare_training_corpus,
    resolve_device,
    single_line,
    split_holdout,
    train_command,
)

torch = pytest.importorskip("torch")
pytest.importorskip("sacremoses")
pytest.importorskip("subword_nmt")

FRENCH = [
    "L'homme a dit « bonjour » & au-revoir, n'est-ce pas ?",
    "Le sportif a sauté jeudi d'un hélicoptère au-dessus de Bogota, la capitale de la Colombie.",
    "Il coûte 3,50 euros (environ 4 dollars) : cher !",
]
ENGLISH = [
    "Sportsman Jhonathan Florez jumped from a helicopter above Bogota, the capital of Colombia, on Thursday.",
    "It's a well-known fact: \"quotes\" & ampersands survive.",
    "A mother-in-law's 3-4 e-mails.",
]


# --------------------------------------------------------------------------------------------
# Subword pipeline
# --------------------------------------------------------------------------------------------


def test_tokenization_escapes_and_splits_hyphens_like_the_wmt14_recipe() -> None:
    codec = SubwordCodec()
    tokens = codec.tokenize(["It's a mother-in-law & co."], "en")[0]
    assert tokens == "It &apos;s a mother @-@ in @-@ law &amp; co ."


@pytest.mark.parametrize(("language", "segments"), [("fr", FRENCH), ("en", ENGLISH)])
def test_detokenization_restores_the_normalised_text(language: str, segments: list[str]) -> None:
    codec = SubwordCodec()
    restored = codec.decode(codec.tokenize(segments, language), language)
    # Moses punctuation normalisation turns « » into plain quotes; everything else comes back as it was
    expected = [segment.replace("« ", '"').replace(" »", '"') for segment in segments]
    assert restored == expected


def test_bpe_units_join_back_into_the_tokens(tmp_path: Path) -> None:
    tokenized = SubwordCodec().tokenize(ENGLISH * 3 + FRENCH * 3, "en")
    codes = learn_joint_bpe(tokenized, merges=40, min_frequency=1)
    assert codes.startswith("#version")
    assert len(codes.splitlines()) - 1 == 40
    (tmp_path / "bpecodes").write_text(codes, encoding="utf-8")
    codec = SubwordCodec(tmp_path / "bpecodes")
    encoded = codec.encode(["Helicopters jumped above unbelievable mountains."], "en")[0]
    assert "@@ " in encoded  # unseen words are split
    assert encoded.replace("@@ ", "") == codec.tokenize(["Helicopters jumped above unbelievable mountains."], "en")[0]
    assert codec.decode([encoded], "en") == ["Helicopters jumped above unbelievable mountains."]


def test_decode_joins_units_and_undoes_aggressive_hyphen_splits_at_edges() -> None:
    codec = SubwordCodec()
    assert codec.decode(["Jhon@@ na @-@ de , l@@ a", "anti @-@", ""], "fr") == ["Jhonna-de, la", "anti-", ""]


def test_encode_without_codes_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="no BPE codes"):
        SubwordCodec().encode(["x"], "en")


def test_bad_codes_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        SubwordCodec(tmp_path / "missing.codes")
    broken = tmp_path / "broken.codes"
    broken.write_text("#version: 0.2\nonlyonefield\n", encoding="utf-8")
    with pytest.raises(InputError, match="broken.codes"):
        SubwordCodec(broken)


def test_single_line_replaces_every_line_boundary() -> None:
    assert single_line("a\nb\r\nc\rd\u2028e") == "a b c d e"
    assert single_line("") == ""


# --------------------------------------------------------------------------------------------
# fairseq-generate output
# --------------------------------------------------------------------------------------------

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


# --------------------------------------------------------------------------------------------
# Commands
# --------------------------------------------------------------------------------------------


def test_option_arguments() -> None:
    assert option_arguments({"lr": 0.5, "share-input-output-embed": True, "no-progress-bar": False, "x": None}) == [
        "--lr", "0.5", "--share-input-output-embed",
    ]


def test_train_command_sets_what_the_workflow_controls() -> None:
    options = TrainingOptions(arch="fconv", train_args={"lr": 0.002}, seed=7, max_epoch=3, patience=2)
    command = train_command("bin", "ckpt", options, "cpu")
    assert command[0] == "bin"
    for flag, value in [("--arch", "fconv"), ("--seed", "7"), ("--max-epoch", "3"), ("--patience", "2"), ("--lr", "0.002")]:
        assert command[command.index(flag) + 1] == value
    assert "--cpu" in command and "--no-epoch-checkpoints" in command
    assert "--cpu" not in train_command("bin", "ckpt", options, "cuda")


def test_train_args_may_not_override_the_workflow() -> None:
    options = TrainingOptions(arch="fconv", train_args={"save-dir": "/elsewhere", "seed": 3})
    with pytest.raises(InputError, match="save-dir, seed"):
        train_command("bin", "ckpt", options, "cpu")


TRAIN_LOG = """
2026 | INFO | valid | epoch 001 | valid on 'valid' subset | loss 7.891 | nll_loss 7.194 | ppl 146.45 | num_updates 68
2026 | INFO | train | epoch 001 | loss 9.016 | nll_loss 8.456 | ppl 351.14 | num_updates 68 | lr 0.002
2026 | INFO | valid | epoch 002 | valid on 'valid' subset | loss 6.817 | nll_loss 5.934 | ppl 61.12 | num_updates 136 | best_loss 6.817
2026 | INFO | train | epoch 002 | loss 8.0 | nll_loss 7.4 | ppl 200.0 | num_updates 136 | lr 0.002
2026 | INFO | valid | epoch 003 | valid on 'valid' subset | loss 6.9 | nll_loss 6.0 | ppl 64.0 | num_updates 204 | best_loss 6.817
2026 | INFO | train | epoch 003 | loss 7.5 | nll_loss 7.0 | ppl 128.0 | num_updates 204 | lr 0.002
"""


def test_training_log_gives_epochs_and_the_best_dev_loss() -> None:
    record = parse_training_log(TRAIN_LOG)
    assert record == {
        "epochs": 3,
        "updates": 204,
        "valid_loss_by_epoch": [7.891, 6.817, 6.9],
        "best_epoch": 2,
        "best_valid_loss": 6.817,
    }


def test_a_training_log_without_validation_is_an_error() -> None:
    with pytest.raises(FairseqError, match="without a single validation"):
        parse_training_log("| train | epoch 001 | loss 9.0 | num_updates 3\n")


def test_fairseq_runs_with_fixed_threads_and_a_reproducible_mkl_path() -> None:
    from nlp_robustness.systems.fairseq_mt import fairseq_environment

    environment = fairseq_environment(3, base={"PATH": "/bin", "MKL_CBWR": "COMPATIBLE"})
    assert environment["PATH"] == "/bin"
    assert environment["OMP_NUM_THREADS"] == environment["MKL_NUM_THREADS"] == "3"
    assert environment["MKL_CBWR"] == "AUTO,STRICT" and environment["MKL_DYNAMIC"] == "FALSE"
    assert environment["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] == "1"


def test_device_resolution() -> None:
    assert resolve_device("cpu") == "cpu"
    assert resolve_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(InputError, match="device must be one of"):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(InputError, match="no GPU"):
            resolve_device("cuda")


# --------------------------------------------------------------------------------------------
# Checkpoints
# --------------------------------------------------------------------------------------------


def _checkpoint(path: Path) -> Path:
    state = {"model": {"encoder.weight": torch.zeros(3, 4), "decoder.bias": torch.zeros(5)}, "cfg": {"model": {"arch": "fconv"}}}
    torch.save(state, path)
    return path


def test_a_good_checkpoint_is_described(tmp_path: Path) -> None:
    assert check_checkpoint(_checkpoint(tmp_path / "model.pt")) == {"arch": "fconv", "parameters": 17}


def test_old_style_checkpoints_with_args_are_accepted(tmp_path: Path) -> None:
    import argparse

    path = tmp_path / "old.pt"
    torch.save({"model": {"w": torch.zeros(2)}, "args": argparse.Namespace(arch="fconv_wmt_en_fr")}, path)
    assert check_checkpoint(path)["arch"] == "fconv_wmt_en_fr"


def test_corrupt_truncated_and_foreign_checkpoints_are_named(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        check_checkpoint(tmp_path / "missing.pt")
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"this is not a checkpoint" * 100)
    with pytest.raises(InputError, match=r"garbage\.pt: not a readable fairseq checkpoint"):
        check_checkpoint(garbage)
    truncated = tmp_path / "truncated.pt"
    data = _checkpoint(tmp_path / "whole.pt").read_bytes()
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match=r"truncated\.pt: not a readable fairseq checkpoint"):
        check_checkpoint(truncated)
    foreign = tmp_path / "foreign.pt"
    torch.save({"weights": torch.zeros(2)}, foreign)
    with pytest.raises(InputError, match=r"foreign\.pt: not a fairseq checkpoint"):
        check_checkpoint(foreign)
    pickled = tmp_path / "pickled.pt"
    pickled.write_bytes(pickle.dumps({"model": {}}))
    with pytest.raises(InputError, match="pickled.pt"):
        check_checkpoint(pickled)


# --------------------------------------------------------------------------------------------
# Training corpus
# --------------------------------------------------------------------------------------------


def test_holdout_is_a_seeded_disjoint_sample() -> None:
    train, dev = split_holdout(100, 10, seed=3)
    assert len(dev) == 10 and len(train) == 90
    assert sorted(train + dev) == list(range(100))
    assert split_holdout(100, 10, seed=3) == (train, dev)
    assert split_holdout(100, 10, seed=4)[1] != dev
    assert dev != list(range(90, 100))  # not simply the end of a sorted corpus
    for bad in (0, 100, 200):
        with pytest.raises(InputError, match="cannot hold out"):
            split_holdout(100, bad, seed=3)


PAIRS = [
    ("The cat sleeps.", "Le chat dort."),
    ("The dog sleeps.", "Le chien dort."),
    ("", "Vide."),
    ("I like the cat.", "J'aime le chat."),
    ("I like the dog.", "J'aime le chien."),
    ("The cat and the dog sleep.", "Le chat et le chien dorment."),
] * 5


def test_training_corpus_with_a_holdout() -> None:
    corpus = prepare_training_corpus(
        PAIRS, source_language="en", target_language="fr", bpe_merges=30, bpe_min_frequency=1, holdout=6, seed=1
    )
    assert corpus.statistics["development_pairs"] == 6
    assert len(corpus.dev_sources) == len(corpus.valid_source) == len(corpus.valid_target) == 6
    # the pairs with an empty side are dropped from training only
    empty_in_dev = sum(1 for source in corpus.dev_sources if not source)
    assert corpus.statistics["dropped_training_pairs"] == 5 - empty_in_dev
    assert corpus.statistics["training_pairs"] == len(corpus.train_source) == 24 - (5 - empty_in_dev)
    assert all(line.strip() for line in corpus.train_source)
    assert len(corpus.bpe_codes.splitlines()) - 1 <= 30


def test_training_corpus_with_a_separate_dev_set_and_a_size_limit() -> None:
    dev = [("The bird sings.", "L'oiseau chante.")]
    corpus = prepare_training_corpus(
        PAIRS, source_language="en", target_language="fr", bpe_merges=20, dev_pairs=dev, max_segments=6
    )
    assert corpus.dev_sources == ["The bird sings."] and corpus.dev_references == ["L'oiseau chante."]
    assert corpus.statistics["training_pairs"] == 5
    with pytest.raises(InputError, match="either a development dataset or a holdout"):
        prepare_training_corpus(PAIRS, source_language="en", target_language="fr", bpe_merges=20)
    with pytest.raises(InputError, match="either a development dataset or a holdout"):
        prepare_training_corpus(PAIRS, source_language="en", target_language="fr", bpe_merges=20, dev_pairs=dev, holdout=3)


def test_model_summary_table() -> None:
    record = {
        "system": "convs2s",
        "corpus": {"training_pairs": 100, "development_pairs": 10, "bpe_merges": 500},
        "training": {"arch": "fconv", "model": {"parameters": 1234}, "epochs": 4, "best_epoch": 3,
                     "best_valid_loss": 5.5, "seconds": 12.345, "device": "cpu"},
        "dev_bleu": 12.3456,
        "dev_chrf": 40.0,
    }
    table = model_summary_table([record])
    assert table.to_dict("records") == [{
        "system": "convs2s", "arch": "fconv", "parameters": 1234, "training_pairs": 100, "development_pairs": 10,
        "bpe_merges": 500, "epochs": 4, "best_epoch": 3, "best_valid_loss": 5.5, "training_seconds": 12.3,
        "device": "cpu", "dev_bleu": 12.35, "dev_chrf": 40.0,
    }]
