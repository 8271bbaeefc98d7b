"""Training an in-house fairseq model: the fairseq-train command, its log, the model summary table."""

from __future__ import annotations

import pytest

from nlp_robustness.errors import InputError
from nlp_robustness.systems.fairseq.runtime import FairseqError
from nlp_robustness.systems.fairseq.training import TrainingOptions, train_args_problem, train_command
from nlp_robustness.systems.fairseq.training_log import model_summary_table, parse_training_log


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


#: train_args that run code the config chooses (docs/reliability.md, "Running a config you did not write").
CODE = {
    "user-dir": {"user-dir": "/tmp/plugins"},
    "user_dir": {"user_dir": "/tmp/plugins"},  # fairseq's own spelling (the config's schema refuses the underscore)
    "restore-file": {"restore-file": "/tmp/other.pt"},
    "eval": {"encoder-layers": "__import__('os').system('touch /tmp/owned') or [(192, 3)]"},
}


@pytest.mark.parametrize("train_args", CODE.values(), ids=CODE.keys())
def test_train_args_that_run_code_are_refused_unless_allowed(train_args: dict) -> None:
    with pytest.raises(InputError, match=r"training\.train_args\..*training\.allow_code_in_train_args: true lets it run"):
        train_command("bin", "ckpt", TrainingOptions(arch="fconv", train_args=train_args), "cpu")
    command = train_command("bin", "ckpt", TrainingOptions(arch="fconv", train_args=train_args, allow_code=True), "cpu")
    ((option, value),) = train_args.items()
    assert command[command.index(f"--{option}") + 1] == value  # allowed: on the command line as written


def test_layer_expressions_and_plain_values_are_not_code() -> None:
    train_args = {"encoder-layers": "[(192, 3)] * 3 + [(256, 3)]", "decoder-attention": "True", "adam-betas": "(0.9, 0.98)",
                  "optimizer": "adam", "lr": 0.002, "lr-scheduler": "inverse_sqrt", "clip-norm": "0.1", "warmup-init-lr": "-1"}
    assert train_args_problem(train_args) is None


def test_a_value_that_reads_as_an_option_is_refused_even_when_code_is_allowed() -> None:
    smuggled = {"lr": "--user-dir=/tmp/plugins"}
    for allow_code in (False, True):
        assert train_args_problem(smuggled, allow_code=allow_code) == (
            "lr", "the value '--user-dir=/tmp/plugins' would reach fairseq-train as an option of its own, not as the value of --lr", False)


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
    # no wall-clock time (the record's seconds): two runs of one config write the same table (issue 56)
    assert table.to_dict("records") == [{
        "system": "convs2s", "arch": "fconv", "parameters": 1234, "training_pairs": 100, "development_pairs": 10,
        "bpe_merges": 500, "epochs": 4, "best_epoch": 3, "best_valid_loss": 5.5,
        "device": "cpu", "dev_bleu": 12.35, "dev_chrf": 40.0,
    }]
    assert model_summary_table([{**record, "training": {**record["training"], "seconds": 99.9}}]).equals(table)


# --------------------------------------------------------------------------------------------
# The weights digest recorded in training.json and in every fairseq translation report
# --------------------------------------------------------------------------------------------


def _state() -> dict:
    import torch

    return {"b": torch.tensor([1.0, -2.5]), "a": torch.arange(6, dtype=torch.float32).view(2, 3)}


def test_the_weights_digest_is_fixed_for_fixed_weights() -> None:
    from nlp_robustness.systems.fairseq.checkpoints import weights_sha256

    state = _state()
    # the format is part of the records: a change would make old and new digests of one model differ
    assert weights_sha256(state) == "7f65c04a3d3261dc03339fd8b4f7eb4e3289fc7a0bca4aa3da1183286963ced8"
    assert weights_sha256(dict(reversed(list(state.items())))) == weights_sha256(state)  # key order does not count
    assert weights_sha256({"a": state["a"].t().contiguous().t(), "b": state["b"]}) == weights_sha256(state)  # nor memory layout


def test_the_weights_digest_sees_one_bit_a_dtype_a_shape_and_a_name() -> None:
    import torch

    from nlp_robustness.systems.fairseq.checkpoints import weights_sha256

    reference = weights_sha256(_state())
    flipped = _state()
    flipped["a"].view(torch.int32)[1, 2] ^= 1  # the last bit of one weight
    assert weights_sha256(flipped) != reference
    assert weights_sha256({**_state(), "b": _state()["b"].double()}) != reference
    assert weights_sha256({**_state(), "a": _state()["a"].view(3, 2)}) != reference
    renamed = _state()
    renamed["c"] = renamed.pop("b")
    assert weights_sha256(renamed) != reference


def test_a_checkpoints_digest_is_that_of_its_model_weights(tmp_path) -> None:
    import torch

    from nlp_robustness.systems.fairseq.checkpoints import checkpoint_weights_sha256, weights_sha256

    torch.save({"model": _state(), "cfg": {"model": {"arch": "fconv"}}, "extra_state": {"seconds": 1.5}}, tmp_path / "one.pt")
    torch.save({"model": _state(), "cfg": {"model": {"arch": "fconv"}}, "extra_state": {"seconds": 2.5}}, tmp_path / "two.pt")
    assert checkpoint_weights_sha256(tmp_path / "one.pt") == checkpoint_weights_sha256(tmp_path / "two.pt") == weights_sha256(_state())
