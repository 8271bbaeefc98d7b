"""Translation with a Hugging Face ``transformers`` sequence-to-sequence model (MarianMT/OPUS-MT, NLLB,
M2M-100, mBART, T5): loading from the hub cache or a local directory, batched beam search, and what a
report records about the model.

Where the model comes from
    ``model`` is a local directory when it exists as one or is written as a path (``/``, ``./``, ``../``,
    ``~`` or two or more ``/``); anything else is a hub id (``Helsinki-NLP/opus-mt-en-fr``). A local
    directory is read with ``local_files_only``; a hub id from the Hugging Face cache (``cache_dir``, else
    ``HF_HOME``/``HF_HUB_CACHE``), downloaded there when online, and never when ``HF_HUB_OFFLINE=1``.

Language codes
    M2M-100, NLLB and mBART models translate between many languages: the tokenizer marks the source
    (``src_lang``) and generation starts with the target's code (``forced_bos_token_id``). Their model
    types are :data:`LANGUAGE_CODE_MODEL_TYPES`; for them both codes are required. Other models take an
    optional ``prefix`` before every source (T5's ``translate English to French: ``, a multi-target Marian
    model's ``>>fra<< ``).

Determinism
    Beam search has no random choice; torch is seeded anyway, runs its deterministic kernels and a fixed
    number of CPU threads (``cpu_threads``), as sums ordered differently may change the last bits. Sources
    are sorted by length into batches (less padding) and the translations put back in input order; a
    source's translation does not depend on its batch beyond those last bits (the attention mask hides
    padding). CPU and GPU results may differ, so the device is recorded.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nlp_robustness.data.testsets import sha256_of
from nlp_robustness.errors import InputError

__all__ = [
    "DTYPES",
    "LANGUAGE_CODE_MODEL_TYPES",
    "HuggingfaceTranslator",
    "check_language_codes",
    "is_local_model",
    "local_model_type",
    "model_files",
    "resolve_device",
]

#: Values of the config key ``dtype`` (``auto``: the dtype the checkpoint was saved in).
DTYPES: tuple[str, ...] = ("auto", "float32", "float16", "bfloat16")
#: Values of the config key ``device``.
DEVICES: tuple[str, ...] = ("auto", "cpu", "cuda")
#: Model types whose tokenizer and generation need a source and a target language code.
LANGUAGE_CODE_MODEL_TYPES: frozenset[str] = frozenset({"m2m_100", "nllb_moe", "mbart"})
#: Seed of torch's generators (beam search draws nothing; a model with sampling in its generation
#: config is overridden with ``do_sample=False``).
SEED = 0


def is_local_model(model: str) -> bool:
    """Whether ``model`` names a local directory (see the module docstring) rather than a hub id."""
    return os.path.isdir(model) or model.startswith(("/", "./", "../", "~")) or model.count("/") >= 2


def local_model_type(model: str, key: str) -> str:
    """The ``model_type`` of a local model directory's config.json.

    Raises:
        InputError: No such directory, no config.json in it, or no model_type in that; naming ``key``.
    """
    directory = Path(model).expanduser()
    if not directory.is_dir():
        raise InputError(f"{key}: no model directory {model} (a local directory, or a hub id such as Helsinki-NLP/opus-mt-en-fr)")
    config_file = directory / "config.json"
    if not config_file.is_file():
        raise InputError(f"{key}: {model} has no config.json: not a model saved with save_pretrained")
    try:
        model_type = json.loads(config_file.read_text(encoding="utf-8")).get("model_type")
    except (json.JSONDecodeError, UnicodeDecodeError, AttributeError) as error:
        raise InputError(f"{config_file}: not a JSON object ({error})") from error
    if not isinstance(model_type, str):
        raise InputError(f"{config_file}: no model_type")
    return model_type


def check_language_codes(model: str, model_type: str, source_language: str | None, target_language: str | None, key: str) -> None:
    """Raise when a model of ``model_type`` needs language codes that the config lacks.

    Args:
        key: The system's config key (``systems.<name>``); the error names the missing sub-key.

    Raises:
        InputError: e.g. ``systems.m2m.source_language: model facebook/m2m100_418M (m2m_100) needs a source language code``.
    """
    if model_type not in LANGUAGE_CODE_MODEL_TYPES:
        return
    for side, code in (("source", source_language), ("target", target_language)):
        if not code:
            raise InputError(f"{key}.{side}_language: model {model} ({model_type}) needs a {side} language code")


def resolve_device(requested: str, key: str) -> str:
    """``"cpu"`` or ``"cuda"`` for the config value ``auto`` / ``cpu`` / ``cuda``.

    Raises:
        InputError: An unknown value, or ``cuda`` while torch sees no GPU; naming ``key``.
    """
    if requested not in DEVICES:
        raise InputError(f"{key}: device must be one of {', '.join(DEVICES)}, not {requested!r}")
    if requested == "cpu":
        return "cpu"
    import torch

    available = torch.cuda.is_available()
    if requested == "cuda" and not available:
        raise InputError(f"{key}: device 'cuda' asked for, but torch sees no GPU on this machine (use auto or cpu)")
    return "cuda" if available else "cpu"


def _torch_dtype(name: str, key: str) -> Any:
    """The torch dtype of the config value ``dtype`` (``"auto"`` passes through to transformers)."""
    if name not in DTYPES:
        raise InputError(f"{key}: dtype must be one of {', '.join(DTYPES)}, not {name!r}")
    if name == "auto":
        return "auto"
    import torch

    return getattr(torch, name)


def model_files(directory: str | os.PathLike[str]) -> list[Path]:
    """The files of a model directory (config, weights, tokenizer), sorted; hidden files left out."""
    return sorted(path for path in Path(directory).expanduser().iterdir() if path.is_file() and not path.name.startswith("."))


@dataclass
class HuggingfaceTranslator:
    """A loaded model and tokenizer, and the settings every batch is generated with.

    Build with :meth:`load`; :meth:`translate` any number of times.
    """

    model: Any
    tokenizer: Any
    settings: Mapping[str, Any]
    directory: Path
    commit: str | None
    device: str
    forced_bos_token_id: int | None
    load_seconds: float = 0.0
    truncated_sources: int = 0  # sources cut to max_source_tokens, over every translate() call

    @property
    def max_source_tokens(self) -> int:
        """The most tokens of a source the model reads: its tokenizer's ``model_max_length`` or its position
        embeddings, whichever is fewer (a longer source is cut there and counted, never an index error)."""
        return min(limit for limit in (self.tokenizer.model_max_length, _position_limit(self.model.config)) if limit)

    @property
    def max_new_tokens(self) -> int:
        """``max_length`` of the settings, within the decoder's positions (the first is the start token)."""
        positions = _position_limit(self.model.config)
        return self.settings["max_length"] if positions is None else min(self.settings["max_length"], positions - 1)

    @classmethod
    def load(cls, settings: Mapping[str, Any], key: str) -> HuggingfaceTranslator:
        """Load the model of ``settings`` (the system's config entry, defaults filled in).

        Args:
            key: The system's config key (``systems.<name>``), which errors name.

        Raises:
            InputError: Unknown local directory, a hub model not cached while offline, a missing or unknown
                language code, a bad dtype or device.
        """
        started = time.perf_counter()
        from nlp_robustness.systems.transformers_import import import_transformers

        transformers = import_transformers()  # before torch: it hides fairseq's mismatched torchaudio
        import torch
        from huggingface_hub import constants

        AutoConfig, AutoModelForSeq2SeqLM, AutoTokenizer = (
            transformers.AutoConfig, transformers.AutoModelForSeq2SeqLM, transformers.AutoTokenizer)

        model_name, revision = settings["model"], settings["revision"]
        local = is_local_model(model_name)
        if local:
            local_model_type(model_name, f"{key}.model")
            model_name = str(Path(model_name).expanduser())
        dtype = _torch_dtype(settings["dtype"], f"{key}.dtype")
        device = resolve_device(settings["device"], f"{key}.device")
        torch.manual_seed(SEED)
        torch.use_deterministic_algorithms(True, warn_only=True)
        torch.backends.cudnn.benchmark = False
        torch.set_num_threads(settings["cpu_threads"])
        source = {"revision": revision, "cache_dir": settings["cache_dir"], "local_files_only": local or constants.HF_HUB_OFFLINE}
        try:
            config = AutoConfig.from_pretrained(model_name, **source)
        except OSError as error:
            if local:
                raise InputError(f"{key}.model: {model_name} cannot be read as a model: {error}") from error
            cache = settings["cache_dir"] or constants.HF_HUB_CACHE
            fetch = f"hf download {model_name}" + (f" --revision {revision}" if revision else "")
            raise InputError(
                f"{key}.model: {model_name} is not a local directory and could not be loaded from the Hugging Face "
                f"hub or its cache {cache} (offline: HF_HUB_OFFLINE={'1' if constants.HF_HUB_OFFLINE else '0'}). "
                f"Fetch it once with internet (`{fetch}`, same HF_HOME), or save it with save_pretrained and "
                f"give that directory as model ({error})"
            ) from error
        check_language_codes(model_name, config.model_type, settings["source_language"], settings["target_language"], key)
        tokenizer = AutoTokenizer.from_pretrained(model_name, **source)
        model = AutoModelForSeq2SeqLM.from_pretrained(model_name, dtype=dtype, **source).to(device).eval()
        forced_bos_token_id = _set_language_codes(tokenizer, config.model_type, settings, key, model_name)
        if local:
            directory, commit = Path(model_name), None
        else:
            from transformers.utils import cached_file

            directory = Path(cached_file(model_name, "config.json", **source)).parent
            commit = getattr(config, "_commit_hash", None) or (directory.name if directory.parent.name == "snapshots" else None)
        return cls(model, tokenizer, settings, directory, commit, device, forced_bos_token_id, time.perf_counter() - started)

    def translate(self, sources: Sequence[str]) -> list[str]:
        """Translations of ``sources``, in their order, one line each (newlines in an output become spaces).

        Sources are sorted by tokenised length (longest first) into batches of ``batch_size``.
        """
        import torch

        prefix = self.settings["prefix"]
        texts = [prefix + source for source in sources]
        limit = self.max_source_tokens
        full_lengths = [len(ids) for ids in self.tokenizer(texts, verbose=False)["input_ids"]] if texts else []
        self.truncated_sources += sum(length > limit for length in full_lengths)
        lengths = [min(length, limit) for length in full_lengths]
        order = sorted(range(len(texts)), key=lambda index: (-lengths[index], index))
        translations: list[str] = [""] * len(texts)
        batch_size = self.settings["batch_size"]
        generation = {"num_beams": self.settings["beam"], "max_new_tokens": self.max_new_tokens, "do_sample": False}
        if self.forced_bos_token_id is not None:
            generation["forced_bos_token_id"] = self.forced_bos_token_id
        with torch.inference_mode():
            for start in range(0, len(order), batch_size):
                indices = order[start : start + batch_size]
                encoded = self.tokenizer([texts[index] for index in indices], return_tensors="pt", padding=True,
                                         truncation=True, max_length=limit)
                output = self.model.generate(**encoded.to(self.device), **generation)
                if self.forced_bos_token_id is not None:
                    # the decoder start, then the forced target code: not every tokenizer counts the code special
                    output = torch.cat([output[:, :1], output[:, 2:]], dim=1)
                for index, text in zip(indices, self.tokenizer.batch_decode(output, skip_special_tokens=True), strict=True):
                    translations[index] = " ".join(text.split())
        return translations

    def report(self, segments: int, seconds: float) -> dict[str, Any]:
        """What produced the translations: model, revision, commit, file hashes, type, dtype, device, settings."""
        return {
            "model": self.settings["model"],
            "revision": self.settings["revision"],
            "commit": self.commit,
            "model_type": self.model.config.model_type,
            "files": {path.name: sha256_of(path) for path in model_files(self.directory)},
            "dtype": str(self.model.dtype).removeprefix("torch."),
            "device": self.device,
            "source_language": self.settings["source_language"],
            "target_language": self.settings["target_language"],
            "prefix": self.settings["prefix"],
            "beam": self.settings["beam"],
            "max_length": self.settings["max_length"],
            "batch_size": self.settings["batch_size"],
            "cpu_threads": self.settings["cpu_threads"],
            "segments": segments,
            "max_source_tokens": self.max_source_tokens,
            "truncated_sources": self.truncated_sources,
            "load_seconds": round(self.load_seconds, 3),
            "seconds": round(seconds, 3),
        }


def _position_limit(config: Any) -> int | None:
    """How many positions a model's learned position embeddings have (None: relative positions, e.g. T5)."""
    limit = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)
    return int(limit) if limit else None


def _language_code_id(tokenizer: Any, code: str) -> int | None:
    """The token id of a language code (M2M-100's ``__fr__`` through ``get_lang_id``; NLLB's and mBART's
    codes are tokens themselves), or None when the tokenizer does not know it."""
    try:
        token_id = tokenizer.get_lang_id(code) if hasattr(tokenizer, "get_lang_id") else tokenizer.convert_tokens_to_ids(code)
    except (KeyError, ValueError):
        return None
    return None if token_id is None or token_id == tokenizer.unk_token_id else int(token_id)


def _set_language_codes(tokenizer: Any, model_type: str, settings: Mapping[str, Any], key: str, model: str) -> int | None:
    """Set the tokenizer's source language; the id generation must start with (the target's code), if any.

    Raises:
        InputError: A code the model's tokenizer does not know, naming its config key.
    """
    if model_type not in LANGUAGE_CODE_MODEL_TYPES:
        return None
    ids = {}
    for side in ("source", "target"):
        code = settings[f"{side}_language"]
        ids[side] = _language_code_id(tokenizer, code)
        if ids[side] is None:
            raise InputError(f"{key}.{side}_language: model {model} ({model_type}) has no language code {code!r}")
    tokenizer.src_lang = settings["source_language"]
    tokenizer.tgt_lang = settings["target_language"]
    return ids["target"]


def timed_translation(translator: HuggingfaceTranslator, sources: Sequence[str]) -> tuple[list[str], dict[str, Any]]:
    """Translations of ``sources`` and the report of the run (``seconds``: wall time of the translation,
    ``load_seconds``: of loading the model)."""
    start = time.perf_counter()
    translations = translator.translate(sources)
    return translations, translator.report(len(sources), time.perf_counter() - start)
