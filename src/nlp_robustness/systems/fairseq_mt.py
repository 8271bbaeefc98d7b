"""fairseq ConvS2S (fconv) translation systems: subword pipeline, training and batched generation.

Two flavours share everything after the model is in hand (a *model bundle*: checkpoint, source and
target dictionaries, subword-nmt BPE codes):

* **pretrained** -- fairseq's published ``wmt14.v2.en-fr.fconv-py`` archive (``model.pt``,
  ``dict.en.txt``, ``dict.fr.txt``, ``bpecodes`` under ``wmt14.en-fr.fconv-py/``);
* **in-house** -- trained here: Moses tokenization and joint BPE learnt on the training corpus,
  ``fairseq-preprocess``, ``fairseq-train`` with early stopping on a development set.

Subword pipeline (:class:`SubwordCodec`)
    Text is prepared as the fairseq recipe that trained the WMT'14 en-fr ConvS2S did
    (``examples/translation/prepare-wmt14en2fr.sh``): Moses punctuation normalisation, Moses
    tokenization with aggressive hyphen splitting (``-a``) and HTML escaping (tokenizer.perl's
    default; also what fairseq's own ``--tokenizer moses`` does), then subword-nmt BPE with the
    model's codes. sacremoses and subword-nmt do this, no hand-written rules. The output is restored by
    removing the ``@@ `` continuation markers and Moses detokenization (which unescapes) in the target
    language. The script also removed non-printing characters; sacremoses' normaliser does the same
    with ``post_remove_control_chars``.

Alignment
    ``fairseq-generate`` sorts sentences by length and prints them out of order, and its batch
    iterator silently drops sentences unless ``--required-batch-size-multiple 1`` is passed, or when
    an input is longer than the model's maximum positions (``--skip-invalid-size-inputs-valid-test``).
    :func:`parse_generate_output` therefore puts hypotheses back in input order by id and raises
    :class:`FairseqError` if any id is missing or repeated, so a translation file always has exactly
    one line per test segment. Empty (or whitespace-only) segments are not sent to the model and
    translate to ``""``; line breaks inside a segment become spaces (a line break would otherwise
    split it in two).

The reference side
    fairseq's ``translation`` task reads a source *and* a target file for every split, so the test
    set's reference is binarized beside the source. It only fills that slot: nothing reads it back
    (scores are computed later from the untouched reference in the test-set table). Sources and
    references longer than ``max_tokens_per_side`` subword tokens are cut to that length so fairseq
    never skips a segment for being too long; the count of cut sources is reported.

Determinism
    fairseq seeds every random choice from ``--seed``; data loading runs in the main process
    (``--num-workers 0``) and the CPU thread count is fixed from the config (``cpu_threads``, not
    Snakemake's ``--cores``), because floating-point sums may be ordered differently with a
    different number of threads. MKL, which does torch's CPU matrix products, runs in its
    conditional numerical reproducibility mode (``MKL_CBWR=AUTO,STRICT``, no dynamic threads); its
    default path can depend on memory alignment, which made two same-seed trainings differ once.
    Results are reproducible for one device kind (CPU or a given GPU); CPU and GPU results differ in
    the last bits, so the device used is recorded in every report.
"""

from __future__ import annotations

import io
import os
import random
import re
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from nlp_robustness.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "DEVICES",
    "FairseqError",
    "GenerationOptions",
    "MAX_TRAINING_TOKENS",
    "ModelBundle",
    "RESERVED_TRAIN_OPTIONS",
    "SubwordCodec",
    "TrainingCorpus",
    "TrainingOptions",
    "TranslationReport",
    "binarize",
    "check_checkpoint",
    "fairseq_environment",
    "learn_joint_bpe",
    "model_summary_table",
    "option_arguments",
    "parse_generate_output",
    "parse_training_log",
    "prepare_training_corpus",
    "reserved_train_options",
    "resolve_device",
    "run_fairseq",
    "single_line",
    "split_holdout",
    "train_command",
    "train_model",
    "translate_segments",
    "translate_with_settings",
]

#: Values of the config key ``device``.
DEVICES: tuple[str, ...] = ("auto", "cpu", "cuda")

#: fairseq-train options the workflow sets itself; giving them in ``train_args`` is a config error.
RESERVED_TRAIN_OPTIONS: frozenset[str] = frozenset(
    {
        "arch", "save-dir", "seed", "max-epoch", "patience", "cpu", "source-lang", "target-lang",
        "num-workers", "no-epoch-checkpoints", "no-last-checkpoints", "no-save-optimizer-state", "log-format", "tensorboard-logdir",
        "wandb-project", "distributed-world-size", "max-source-positions", "max-target-positions",
    }
)

_BPE_MARKER = "@@ "
# Moses' aggressive hyphen splitting writes "a-b" as "a @-@ b"; its detokenizer leaves "@-@" alone
# (fairseq's recipes undo it with sed 's/ @\(\S*\)@ /\1/g'). A model may also emit it at an edge.
_AGGRESSIVE_SPLIT = re.compile(r" ?@(-)@ ?")


class FairseqError(RuntimeError):
    """A fairseq command failed or returned output that does not align with its input."""


def single_line(segment: str) -> str:
    """``segment`` with every line boundary (``\\n``, ``\\r``, U+2028, ...) replaced by a space."""
    return " ".join(segment.splitlines()) if segment else segment


# --------------------------------------------------------------------------------------------
# Subword pipeline
# --------------------------------------------------------------------------------------------


class SubwordCodec:
    """Moses normalisation + tokenization + subword-nmt BPE, and the way back (see the module doc).

    Args:
        bpe_codes: A subword-nmt codes file, or ``None`` to tokenize only (before BPE is learnt).
    """

    def __init__(self, bpe_codes: str | os.PathLike[str] | None = None) -> None:
        from sacremoses import MosesDetokenizer, MosesPunctNormalizer, MosesTokenizer

        self._normalizer_class = MosesPunctNormalizer
        self._tokenizer_class = MosesTokenizer
        self._detokenizer_class = MosesDetokenizer
        self._cache: dict[tuple[str, str], Any] = {}
        self._bpe = None
        if bpe_codes is not None:
            from subword_nmt.apply_bpe import BPE

            try:
                with open(bpe_codes, encoding="utf-8") as handle:
                    self._bpe = BPE(handle)
            except FileNotFoundError:
                raise InputError(f"BPE codes file not found: {bpe_codes}") from None
            except (ValueError, IndexError, UnicodeDecodeError, SystemExit) as error:
                # subword-nmt calls sys.exit() on a malformed line, after printing it to stderr
                raise InputError(f"{bpe_codes}: not a subword-nmt BPE codes file ({error or 'malformed line'})") from None

    def _tool(self, kind: str, language: str) -> Any:
        key = (kind, language)
        if key not in self._cache:
            if kind == "normalizer":
                self._cache[key] = self._normalizer_class(language, post_remove_control_chars=True)
            elif kind == "tokenizer":
                self._cache[key] = self._tokenizer_class(language)
            else:
                self._cache[key] = self._detokenizer_class(language)
        return self._cache[key]

    def tokenize(self, segments: Iterable[str], language: str) -> list[str]:
        """Moses-normalise and tokenize (aggressive hyphen splitting, HTML escaping), one line each."""
        normalizer, tokenizer = self._tool("normalizer", language), self._tool("tokenizer", language)
        return [
            tokenizer.tokenize(
                normalizer.normalize(single_line(segment)), aggressive_dash_splits=True, return_str=True, escape=True
            )
            for segment in segments
        ]

    def encode(self, segments: Iterable[str], language: str) -> list[str]:
        """Tokenize and split into BPE units (needs the codes)."""
        if self._bpe is None:
            raise ValueError("this SubwordCodec has no BPE codes")
        return [self._bpe.process_line(line) for line in self.tokenize(segments, language)]

    def decode(self, lines: Iterable[str], language: str) -> list[str]:
        """Join BPE units, undo aggressive hyphen splitting and Moses-detokenize (unescaping) in ``language``."""
        detokenizer = self._tool("detokenizer", language)
        return [
            detokenizer.detokenize(_AGGRESSIVE_SPLIT.sub(r"\1", (line + " ").replace(_BPE_MARKER, "")).split())
            for line in lines
        ]


def learn_joint_bpe(tokenized_lines: Iterable[str], merges: int, min_frequency: int = 2) -> str:
    """Learn ``merges`` subword-nmt BPE merge operations on tokenized text of both languages.

    Returns:
        The codes file's text (subword-nmt's format, with its version header).
    """
    from subword_nmt.learn_bpe import learn_bpe

    codes = io.StringIO()
    # learn_bpe reads a file object of text lines (it counts words itself).
    learn_bpe(io.StringIO("\n".join(tokenized_lines) + "\n"), codes, merges, min_frequency=min_frequency)
    return codes.getvalue()


def split_holdout(count: int, holdout: int, seed: int) -> tuple[list[int], list[int]]:
    """Split ``range(count)`` into training and held-out indices (both in ascending order).

    The held-out indices are a seeded uniform random sample (corpora such as Tatoeba are sorted
    alphabetically, so the last lines would be a biased development set).

    Raises:
        InputError: ``holdout`` leaves no training data.
    """
    if not 0 < holdout < count:
        raise InputError(f"cannot hold out {holdout} of {count} training segments as development set")
    order = list(range(count))
    random.Random(seed).shuffle(order)
    held_out = sorted(order[:holdout])
    held = set(held_out)
    return [index for index in range(count) if index not in held], held_out


# --------------------------------------------------------------------------------------------
# Running fairseq
# --------------------------------------------------------------------------------------------


def resolve_device(requested: str) -> str:
    """``"cpu"`` or ``"cuda"`` for the config value ``auto`` / ``cpu`` / ``cuda``.

    Raises:
        InputError: ``cuda`` was asked for and no GPU is visible.
    """
    if requested not in DEVICES:
        raise InputError(f"device must be one of {', '.join(DEVICES)}, not {requested!r}")
    if requested == "cpu":
        return "cpu"
    import torch

    available = torch.cuda.is_available()
    if requested == "cuda" and not available:
        raise InputError("config asks for device 'cuda' but torch sees no GPU on this machine")
    return "cuda" if available else "cpu"


def fairseq_environment(cpu_threads: int, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """Environment for fairseq's commands: fixed threads and MKL code path, unpickling of self-made checkpoints.

    fairseq 0.12 checkpoints hold argparse/omegaconf objects, which torch >= 2.6 refuses to unpickle
    by default (``weights_only``); ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1`` restores the old behaviour.
    Only checkpoints this workflow made or verified by checksum are loaded.
    """
    environment = dict(os.environ if base is None else base)
    threads = str(cpu_threads)
    environment.update(
        TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD="1",
        OMP_NUM_THREADS=threads,
        MKL_NUM_THREADS=threads,
        # torch's CPU matrix products run in MKL, whose default code path may depend on memory
        # alignment and may drop threads at run time: two trainings with one seed then differ in the
        # last bits (seen once in CI). Conditional numerical reproducibility fixes the path.
        MKL_CBWR="AUTO,STRICT",
        MKL_DYNAMIC="FALSE",
        OMP_DYNAMIC="FALSE",
        PYTHONHASHSEED="0",
    )
    return environment


def _fairseq_executable(name: str) -> str:
    """The fairseq command ``name`` beside the running interpreter (a venv), else on PATH."""
    beside = Path(sys.executable).with_name(name)
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        raise InputError(f"{name} not found: install fairseq (see README, `make setup`)")
    return found


def run_fairseq(command: str, arguments: Sequence[str], log: io.TextIOBase | None, environment: Mapping[str, str]) -> str:
    """Run a fairseq CLI command, streaming its output into ``log`` as it comes, and return that output.

    Raises:
        FairseqError: Non-zero exit; the message carries the last lines of fairseq's output.
    """
    full = [_fairseq_executable(command), *map(str, arguments)]
    if log is not None:
        log.write("$ " + " ".join(full) + "\n")
        log.flush()
    lines: list[str] = []
    with subprocess.Popen(
        full, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, encoding="utf-8", env=dict(environment)
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if log is not None and not line.startswith(("S-", "T-", "H-", "D-", "P-")):
                log.write(line)  # progress and losses, live; not every hypothesis
                log.flush()
    if process.returncode != 0:
        tail = "".join(lines[-15:]).rstrip()
        raise FairseqError(f"{command} failed with exit status {process.returncode}:\n{tail}")
    return "".join(lines)


def check_checkpoint(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Load a fairseq checkpoint on the CPU to check it is one, before fairseq's CLI sees it.

    Returns:
        A short description: fairseq architecture and number of parameters.

    Raises:
        InputError: The file is missing, truncated or corrupt, or is not a fairseq checkpoint (names the file).
    """
    import pickle
    import zipfile

    import torch

    if not Path(path).is_file():
        raise InputError(f"fairseq checkpoint not found: {path}")
    try:
        state = torch.load(path, map_location="cpu", weights_only=False)
    except (RuntimeError, EOFError, OSError, ValueError, pickle.UnpicklingError, zipfile.BadZipFile, AttributeError) as error:
        raise InputError(f"{path}: not a readable fairseq checkpoint (corrupt or truncated?): {error}") from None
    if not isinstance(state, dict) or "model" not in state or not isinstance(state["model"], Mapping):
        raise InputError(f"{path}: not a fairseq checkpoint (no 'model' state dict)")
    cfg = state.get("cfg")
    arch = None
    if cfg is not None and "model" in cfg and cfg["model"] is not None:
        arch = getattr(cfg["model"], "arch", None) or (cfg["model"].get("arch") if isinstance(cfg["model"], Mapping) else None)
    elif state.get("args") is not None:  # checkpoints of fairseq < 0.10 (the published WMT'14 model)
        arch = getattr(state["args"], "arch", None)
    if arch is None:
        raise InputError(f"{path}: not a fairseq checkpoint (no model configuration)")
    parameters = sum(int(tensor.numel()) for tensor in state["model"].values() if hasattr(tensor, "numel"))
    return {"arch": str(arch), "parameters": parameters}


def option_arguments(options: Mapping[str, Any]) -> list[str]:
    """fairseq command-line arguments for ``{option: value}`` (``True``: a bare flag; ``False``/``None``: left out)."""
    arguments: list[str] = []
    for option, value in options.items():
        if value is None or value is False:
            continue
        arguments.append(f"--{option}")
        if value is not True:
            arguments.append(str(value))
    return arguments


# --------------------------------------------------------------------------------------------
# Model bundles and binarization
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelBundle:
    """Everything needed to translate with one model."""

    checkpoint: str
    source_dictionary: str
    target_dictionary: str
    bpe_codes: str
    source_language: str = "en"
    target_language: str = "fr"

    def check(self) -> dict[str, Any]:
        """Check every file exists and the checkpoint loads; returns :func:`check_checkpoint`'s description."""
        for role in ("source_dictionary", "target_dictionary", "bpe_codes"):
            if not Path(getattr(self, role)).is_file():
                raise InputError(f"model file missing ({role.replace('_', ' ')}): {getattr(self, role)}")
        return check_checkpoint(self.checkpoint)


def _cap_tokens(line: str, limit: int) -> tuple[str, bool]:
    tokens = line.split()
    if len(tokens) <= limit:
        return line, False
    return " ".join(tokens[:limit]), True


def binarize(
    split_files: Mapping[str, tuple[Sequence[str], Sequence[str]]],
    directory: str | os.PathLike[str],
    source_language: str,
    target_language: str,
    *,
    source_dictionary: str | None = None,
    target_dictionary: str | None = None,
    joined_dictionary: bool = False,
    workers: int = 1,
    environment: Mapping[str, str],
    log: io.TextIOBase | None = None,
) -> None:
    """Write BPE-encoded splits as text and binarize them with ``fairseq-preprocess`` into ``directory``.

    Args:
        split_files: ``{"train" | "valid" | "test": (source lines, target lines)}``.
        source_dictionary, target_dictionary: Existing dictionaries (a model's); otherwise they are
            built from the training split (one joined dictionary if ``joined_dictionary``).
    """
    directory = Path(directory)
    text_dir = directory / "text"
    text_dir.mkdir(parents=True, exist_ok=True)
    arguments = ["--source-lang", source_language, "--target-lang", target_language, "--destdir", directory, "--workers", workers]
    for split, (sources, targets) in split_files.items():
        if len(sources) != len(targets):
            raise ValueError(f"split {split}: {len(sources)} source lines but {len(targets)} target lines")
        prefix = text_dir / split
        for language, lines in ((source_language, sources), (target_language, targets)):
            Path(f"{prefix}.{language}").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        arguments += [f"--{'valid' if split == 'valid' else split}pref", prefix]
    if source_dictionary is not None:
        arguments += ["--srcdict", source_dictionary]
    if target_dictionary is not None:
        arguments += ["--tgtdict", target_dictionary]
    if joined_dictionary:
        arguments.append("--joined-dictionary")
    run_fairseq("fairseq-preprocess", arguments, log, environment)


# --------------------------------------------------------------------------------------------
# Generation
# --------------------------------------------------------------------------------------------

_HYPOTHESIS = re.compile(r"^H-(\d+)\t[^\t]*\t(.*)$")


def parse_generate_output(output: str, expected: int) -> list[str]:
    """Hypotheses (BPE units, best of n-best) of ``fairseq-generate`` in input order.

    Raises:
        FairseqError: Some input id has no hypothesis, or has more than one (the message lists them).
    """
    hypotheses: dict[int, str] = {}
    repeated: list[int] = []
    for line in output.splitlines():
        match = _HYPOTHESIS.match(line)
        if match is None:
            continue
        index = int(match.group(1))
        if index in hypotheses:
            repeated.append(index)
        hypotheses[index] = match.group(2)
    missing = [index for index in range(expected) if index not in hypotheses]
    extra = sorted(index for index in hypotheses if not 0 <= index < expected)
    if missing or repeated or extra:
        def few(indices: list[int]) -> str:
            return ", ".join(map(str, indices[:10])) + (" ..." if len(indices) > 10 else "")

        problems = []
        if missing:
            problems.append(f"no hypothesis for {len(missing)} of {expected} input(s) (ids {few(missing)})")
        if repeated:
            problems.append(f"several hypotheses for ids {few(repeated)}")
        if extra:
            problems.append(f"hypotheses for unknown ids {few(extra)}")
        raise FairseqError("fairseq-generate output does not align with its input: " + "; ".join(problems))
    return [hypotheses[index] for index in range(expected)]


@dataclass(frozen=True)
class GenerationOptions:
    """Beam search settings of ``fairseq-generate`` (config key ``generation``)."""

    beam: int = 5
    batch_size: int = 128
    lenpen: float = 1.0
    max_len_a: float = 0.0
    max_len_b: int = 200
    max_tokens_per_side: int = 1000


@dataclass
class TranslationReport:
    """What happened while translating one list of segments."""

    segments: int = 0
    translated: int = 0
    empty_sources: int = 0
    truncated_sources: int = 0
    device: str = "cpu"
    cpu_threads: int = 1
    seconds: float = 0.0
    sentences_per_second: float = 0.0
    model: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        return (
            f"{self.translated} of {self.segments} segments translated on {self.device} in {self.seconds:.1f} s "
            f"({self.sentences_per_second:.1f} sentences/s; {self.empty_sources} empty, "
            f"{self.truncated_sources} cut to the length limit)"
        )


def translate_segments(
    sources: Sequence[str],
    references: Sequence[str],
    bundle: ModelBundle,
    options: GenerationOptions,
    workdir: str | os.PathLike[str],
    *,
    device: str,
    cpu_threads: int,
    log: io.TextIOBase | None = None,
) -> tuple[list[str], TranslationReport]:
    """Translate ``sources`` with a model bundle; one output per input, in order (see the module doc).

    Args:
        references: Same length as ``sources``; only fills the target slot of fairseq's task.
        workdir: A scratch directory (binarized data, raw generate output).
        device: ``"cpu"`` or ``"cuda"`` (see :func:`resolve_device`).
    """
    if len(sources) != len(references):
        raise ValueError(f"{len(sources)} sources but {len(references)} references")
    report = TranslationReport(segments=len(sources), device=device, cpu_threads=cpu_threads)
    report.model = bundle.check()
    sent = [index for index, segment in enumerate(sources) if segment.strip()]
    report.empty_sources = len(sources) - len(sent)
    translations = [""] * len(sources)
    if not sent:
        return translations, report

    environment = fairseq_environment(cpu_threads)
    codec = SubwordCodec(bundle.bpe_codes)
    encoded_sources = codec.encode([sources[index] for index in sent], bundle.source_language)
    encoded_references = codec.encode([references[index] for index in sent], bundle.target_language)
    capped_sources = [_cap_tokens(line, options.max_tokens_per_side) for line in encoded_sources]
    report.truncated_sources = sum(cut for _, cut in capped_sources)
    # only fills the target slot; a placeholder keeps an empty reference from being a zero-length target
    capped_references = [_cap_tokens(line, options.max_tokens_per_side)[0] or "." for line in encoded_references]

    data_dir = Path(workdir) / "data-bin"
    started = time.perf_counter()
    binarize(
        {"test": ([line for line, _ in capped_sources], capped_references)},
        data_dir,
        bundle.source_language,
        bundle.target_language,
        source_dictionary=bundle.source_dictionary,
        target_dictionary=bundle.target_dictionary,
        environment=environment,
        log=log,
    )
    arguments: list[Any] = [
        data_dir,
        "--path", bundle.checkpoint,
        "--source-lang", bundle.source_language,
        "--target-lang", bundle.target_language,
        "--gen-subset", "test",
        "--beam", options.beam,
        "--nbest", 1,
        "--batch-size", options.batch_size,
        "--required-batch-size-multiple", 1,  # otherwise fairseq drops sentences silently
        "--lenpen", options.lenpen,
        "--max-len-a", options.max_len_a,
        "--max-len-b", options.max_len_b,
        "--num-workers", 0,
        "--seed", 1,
        "--log-format", "simple",
    ]
    if device == "cpu":
        arguments.append("--cpu")
    output = run_fairseq("fairseq-generate", arguments, log, environment)
    hypotheses = parse_generate_output(output, len(sent))
    for index, translation in zip(sent, codec.decode(hypotheses, bundle.target_language)):
        translations[index] = translation
    report.seconds = time.perf_counter() - started
    report.translated = len(sent)
    report.sentences_per_second = len(sent) / report.seconds if report.seconds > 0 else 0.0
    return translations, report


def translate_with_settings(
    sources: Sequence[str],
    references: Sequence[str],
    bundle: Mapping[str, str],
    generation: Mapping[str, Any],
    *,
    device: str,
    cpu_threads: int,
    log_path: str | os.PathLike[str],
) -> tuple[list[str], TranslationReport]:
    """:func:`translate_segments` from config values (a workflow job's params), in a scratch directory.

    Args:
        bundle: :class:`ModelBundle` fields; generation: :class:`GenerationOptions` fields.
        device: The config value (``auto`` / ``cpu`` / ``cuda``; see :func:`resolve_device`).
        log_path: fairseq's output is appended to this file.
    """
    import tempfile

    with tempfile.TemporaryDirectory(prefix="fairseq-") as workdir, open(log_path, "a", encoding="utf-8") as log:
        return translate_segments(
            sources,
            references,
            ModelBundle(**bundle),
            GenerationOptions(**generation),
            workdir,
            device=resolve_device(device),
            cpu_threads=cpu_threads,
            log=log,
        )


# --------------------------------------------------------------------------------------------
# Training
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TrainingOptions:
    """``fairseq-train`` settings of an in-house model (config key ``training``)."""

    arch: str
    train_args: Mapping[str, Any]
    source_language: str = "en"
    target_language: str = "fr"
    seed: int = 1
    max_epoch: int = 10
    patience: int = 3
    max_positions: int = 1024


def reserved_train_options(train_args: Iterable[str]) -> list[str]:
    """The options of ``train_args`` that the workflow sets itself (:data:`RESERVED_TRAIN_OPTIONS`), sorted."""
    return sorted(RESERVED_TRAIN_OPTIONS.intersection(train_args))


def train_command(data_dir: str | os.PathLike[str], save_dir: str | os.PathLike[str], options: TrainingOptions, device: str) -> list[str]:
    """Arguments of ``fairseq-train``: the config's ``train_args`` plus what the workflow fixes.

    Early stopping: fairseq validates after every epoch and stops when the validation loss has not
    improved for ``patience`` epochs (or after ``max_epoch``); ``checkpoint_best.pt`` is the epoch with
    the lowest validation loss.

    Raises:
        InputError: ``train_args`` sets an option the workflow controls (names it).
    """
    reserved = reserved_train_options(options.train_args)
    if reserved:
        raise InputError(f"training.train_args must not set {', '.join(reserved)} (the workflow sets them from other keys)")
    arguments = [
        str(data_dir),
        "--arch", options.arch,
        "--source-lang", options.source_language,
        "--target-lang", options.target_language,
        "--save-dir", str(save_dir),
        "--seed", str(options.seed),
        "--max-epoch", str(options.max_epoch),
        "--patience", str(options.patience),
        "--max-source-positions", str(options.max_positions),
        "--max-target-positions", str(options.max_positions),
        "--num-workers", "0",
        "--no-epoch-checkpoints",
        "--no-last-checkpoints",
        "--no-save-optimizer-state",  # translation needs the weights only (a third of the size)
        "--log-format", "simple",
        "--log-interval", "100",
        *option_arguments(options.train_args),
    ]
    if device == "cpu":
        arguments.append("--cpu")
    return arguments


_VALID_LINE = re.compile(r"\| valid \| epoch (\d+) \|.*?\| loss ([0-9.]+)")
_UPDATES = re.compile(r"\| train \| epoch (\d+) \|.*?\| num_updates (\d+)")


def parse_training_log(output: str) -> dict[str, Any]:
    """Epochs, updates and validation losses of one ``fairseq-train`` run (from its simple log)."""
    valid = [(int(epoch), float(loss)) for epoch, loss in _VALID_LINE.findall(output)]
    updates = [int(count) for _, count in _UPDATES.findall(output)]
    if not valid:
        raise FairseqError("fairseq-train finished without a single validation (no '| valid |' line in its log)")
    best_epoch, best_loss = min(valid, key=lambda item: (item[1], item[0]))
    return {
        "epochs": valid[-1][0],
        "updates": updates[-1] if updates else None,
        "valid_loss_by_epoch": [loss for _, loss in valid],
        "best_epoch": best_epoch,
        "best_valid_loss": best_loss,
    }


def train_model(
    data_dir: str | os.PathLike[str],
    save_dir: str | os.PathLike[str],
    options: TrainingOptions,
    *,
    device: str,
    cpu_threads: int,
    log: io.TextIOBase | None = None,
) -> dict[str, Any]:
    """Train with ``fairseq-train``; returns :func:`parse_training_log`'s record plus the wall time.

    The best checkpoint is ``save_dir/checkpoint_best.pt``.
    """
    started = time.perf_counter()
    output = run_fairseq("fairseq-train", train_command(data_dir, save_dir, options, device), log, fairseq_environment(cpu_threads))
    record = parse_training_log(output)
    record["seconds"] = time.perf_counter() - started
    record["device"] = device
    record["cpu_threads"] = cpu_threads
    if not (Path(save_dir) / "checkpoint_best.pt").is_file():
        raise FairseqError(f"fairseq-train wrote no checkpoint_best.pt into {save_dir}")
    return record


# --------------------------------------------------------------------------------------------
# Training corpus
# --------------------------------------------------------------------------------------------

#: Training pairs longer than this (BPE units, either side) are dropped, as fairseq's recipes do with
#: ``clean-corpus-n.perl ... 1 250``; empty pairs are dropped too. Development pairs are kept whole.
MAX_TRAINING_TOKENS = 250


@dataclass
class TrainingCorpus:
    """BPE-encoded training and development text of an in-house model, and the BPE codes learnt."""

    bpe_codes: str
    train_source: list[str]
    train_target: list[str]
    valid_source: list[str]
    valid_target: list[str]
    dev_sources: list[str]
    dev_references: list[str]
    statistics: dict[str, Any]


def prepare_training_corpus(
    pairs: Sequence[tuple[str, str]],
    *,
    source_language: str,
    target_language: str,
    bpe_merges: int,
    bpe_min_frequency: int = 2,
    dev_pairs: Sequence[tuple[str, str]] | None = None,
    holdout: int | None = None,
    seed: int = 1,
    max_segments: int | None = None,
) -> TrainingCorpus:
    """Split off the development set, learn joint BPE on the training side only, and encode both.

    Args:
        pairs: (source, reference) training pairs, in corpus order.
        dev_pairs: A separate development set; otherwise ``holdout`` pairs are drawn from ``pairs``
            (:func:`split_holdout`, seeded).
        max_segments: Keep only the first N training pairs (before the holdout is drawn).

    Raises:
        InputError: Neither or both of ``dev_pairs`` and ``holdout``; too few pairs.
    """
    if (dev_pairs is None) == (holdout is None):
        raise InputError("give either a development dataset or a holdout size")
    pairs = list(pairs[:max_segments] if max_segments is not None else pairs)
    if dev_pairs is None:
        train_indices, dev_indices = split_holdout(len(pairs), holdout, seed)
        dev_pairs = [pairs[index] for index in dev_indices]
        pairs = [pairs[index] for index in train_indices]
    codec = SubwordCodec()
    train_source_tokens = codec.tokenize([source for source, _ in pairs], source_language)
    train_target_tokens = codec.tokenize([target for _, target in pairs], target_language)
    codes = learn_joint_bpe(train_source_tokens + train_target_tokens, bpe_merges, bpe_min_frequency)

    from subword_nmt.apply_bpe import BPE

    bpe = BPE(io.StringIO(codes))
    train_source = [bpe.process_line(line) for line in train_source_tokens]
    train_target = [bpe.process_line(line) for line in train_target_tokens]
    kept = [
        index
        for index, (source, target) in enumerate(zip(train_source, train_target))
        if source.strip() and target.strip()
        and len(source.split()) <= MAX_TRAINING_TOKENS and len(target.split()) <= MAX_TRAINING_TOKENS
    ]
    dev_sources = [single_line(source) for source, _ in dev_pairs]
    dev_references = [single_line(reference) for _, reference in dev_pairs]
    valid_source = [bpe.process_line(line) for line in codec.tokenize(dev_sources, source_language)]
    valid_target = [bpe.process_line(line) for line in codec.tokenize(dev_references, target_language)]
    if not kept:
        raise InputError("no training pair is left after dropping empty and over-long pairs")
    statistics = {
        "training_pairs": len(kept),
        "dropped_training_pairs": len(pairs) - len(kept),
        "development_pairs": len(dev_pairs),
        "bpe_merges": bpe_merges,
        "source_bpe_tokens": sum(len(train_source[index].split()) for index in kept),
        "target_bpe_tokens": sum(len(train_target[index].split()) for index in kept),
    }
    return TrainingCorpus(
        bpe_codes=codes,
        train_source=[train_source[index] for index in kept],
        train_target=[train_target[index] for index in kept],
        valid_source=valid_source,
        valid_target=valid_target,
        dev_sources=dev_sources,
        dev_references=dev_references,
        statistics=statistics,
    )


def model_summary_table(records: Sequence[Mapping[str, Any]]) -> "pd.DataFrame":
    """One row per in-house model from its ``dev_scores.json`` record (corpus, training, dev scores)."""
    import pandas as pd

    rows = []
    for record in records:
        corpus, training = record["corpus"], record["training"]
        rows.append(
            {
                "system": record["system"],
                "arch": training["arch"],
                "parameters": training["model"]["parameters"],
                "training_pairs": corpus["training_pairs"],
                "development_pairs": corpus["development_pairs"],
                "bpe_merges": corpus["bpe_merges"],
                "epochs": training["epochs"],
                "best_epoch": training["best_epoch"],
                "best_valid_loss": training["best_valid_loss"],
                "training_seconds": round(training["seconds"], 1),
                "device": training["device"],
                "dev_bleu": round(record["dev_bleu"], 2),
                "dev_chrf": round(record["dev_chrf"], 2),
            }
        )
    return pd.DataFrame(rows)
