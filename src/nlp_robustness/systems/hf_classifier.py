"""Hugging Face sequence-classification models as sentiment classifiers (config ``sentiment.models.<name>``).

A model a user brings (a hub id such as ``distilbert-base-uncased-finetuned-sst-2-english``, or a local
directory written by ``save_pretrained``) joins the sentiment study beside the TF-IDF classifiers of
:mod:`nlp_robustness.systems.sentiment_classifier`: it reads the same documents (review fields joined by a
line break) and answers negative (0) or positive (1), as :data:`~.sentiment_classifier.LABEL_CLASSES` says.

* **Labels.** The config maps each review label to one class of the model, by the model's label name
  (``config.id2label``) or by index. The mapping is checked against the model's config before its weights
  are loaded, and the prediction is the argmax over the two mapped classes only: a model with more classes
  (a neutral one, star ratings) is asked which of the two it prefers.
* **Where a model comes from.** An existing directory is read with ``local_files_only``; a name that
  looks like a path (more than one ``/``, or starting with ``.``, ``/`` or ``~``) but is no directory is an
  error; anything else is a hub id at ``revision``, through the Hugging Face cache (``HF_HOME``), offline
  when ``HF_HUB_OFFLINE=1``.
* **Order and determinism.** Documents are classified in batches of ``batch_size`` in input order, in
  evaluation mode (no dropout) without gradients; the same inputs on the same device give the same labels.
* **Report.** The model id, requested revision and the commit the hub resolved, the sha256 of every file
  of the model directory (weights, tokenizer, config), the label mapping, device, dtype and thread count.

torch and transformers are imported inside :func:`load_classifier`, so the workflow can read this module's
settings without them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from nlp_robustness.data.testsets import sha256_of
from nlp_robustness.errors import InputError
from nlp_robustness.systems.sentiment_classifier import LABEL_CLASSES

__all__ = [
    "DEVICES",
    "DTYPES",
    "HuggingFaceClassifier",
    "ModelSettings",
    "choose_device",
    "class_indices",
    "file_hashes",
    "is_local_model",
    "load_classifier",
    "looks_like_path",
]

#: Devices a model may ask for: ``auto`` is the GPU when torch sees one, else the CPU.
DEVICES = ("auto", "cpu", "cuda")
#: Floating-point types the weights may be loaded in.
DTYPES = ("float32", "float16", "bfloat16")


@dataclass(frozen=True)
class ModelSettings:
    """One ``sentiment.models.<name>`` entry (kind ``huggingface``).

    Attributes:
        name: The entry's name: the classifier's row in every table.
        model: A hub id or a local directory.
        revision: Hub revision (branch, tag or commit); ``None``: the hub's default branch. Hub models only.
        labels: Review label (``negative``, ``positive``) -> the model's label name or class index.
        batch_size: Documents per forward pass.
        max_length: Tokens per document; longer ones are truncated.
        device: One of :data:`DEVICES`.
        cpu_threads: torch's intra-op threads on the CPU.
        fields: Review fields joined (by a line break) into the document the model reads.
        dtype: One of :data:`DTYPES`.
    """

    name: str
    model: str
    revision: str | None
    labels: Mapping[str, str | int]
    batch_size: int = 32
    max_length: int = 512
    device: str = "auto"
    cpu_threads: int = 1
    fields: tuple[str, ...] = ("title", "review_text")
    dtype: str = "float32"

    @property
    def key(self) -> str:
        """The config key of this entry, for messages."""
        return f"sentiment.models.{self.name}"

    @classmethod
    def from_config(cls, name: str, mapping: Mapping[str, Any]) -> "ModelSettings":
        """Settings from a completed config entry (the schema's defaults filled in); ``kind`` is dropped.

        Raises:
            InputError: A key is missing, or the labels are not exactly ``negative`` and ``positive``.
        """
        fields = [key for key in cls.__dataclass_fields__ if key != "name"]
        missing = [key for key in fields if key not in mapping]
        if missing:
            raise InputError(f"sentiment.models.{name} lacks {', '.join(missing)} (the schema's defaults were not filled in)")
        labels = dict(mapping["labels"])
        if sorted(labels) != sorted(LABEL_CLASSES):
            raise InputError(
                f"invalid configuration at key 'sentiment.models.{name}.labels': needs exactly the review labels "
                f"{', '.join(LABEL_CLASSES)} (got {', '.join(map(str, labels)) or 'none'})"
            )
        values = {key: mapping[key] for key in fields}
        return cls(name=name, **{**values, "labels": labels, "fields": tuple(values["fields"])})

    def as_dict(self) -> dict[str, Any]:
        return {key: list(value) if isinstance(value, tuple) else value for key, value in asdict(self).items()}


def looks_like_path(model: str) -> bool:
    """Whether ``model`` is meant as a directory: a hub id is ``name`` or ``owner/name``."""
    return model.startswith((".", "/", "~")) or model.count("/") > 1 or os.sep != "/" and os.sep in model


def is_local_model(model: str) -> bool:
    """Whether ``model`` is read from a local directory rather than the hub."""
    return Path(model).expanduser().is_dir()


def _model_labels(id2label: Mapping[Any, str], num_labels: int) -> str:
    return ", ".join(f"{index} {id2label.get(index, id2label.get(str(index), '?'))}" for index in range(num_labels))


def class_indices(settings: ModelSettings, id2label: Mapping[Any, str], num_labels: int) -> dict[str, int]:
    """The model's class index of each review label (``negative``, ``positive``).

    A label given as an integer is an index below ``num_labels``; one given as a string is a label name
    of ``id2label`` (exact spelling). The two review labels must map to two distinct classes.

    Raises:
        InputError: Naming ``sentiment.models.<name>.labels.<label>`` and the model's labels.
    """
    names = {int(index): str(label) for index, label in id2label.items()}
    known = _model_labels(names, num_labels)
    indices: dict[str, int] = {}
    for review_label in LABEL_CLASSES:
        wanted = settings.labels[review_label]
        key = f"{settings.key}.labels.{review_label}"
        if isinstance(wanted, bool) or not isinstance(wanted, (int, str)):
            raise InputError(f"invalid configuration at key '{key}': expected a label name or index, got {wanted!r}")
        if isinstance(wanted, int):
            if not 0 <= wanted < num_labels:
                raise InputError(
                    f"invalid configuration at key '{key}': class index {wanted} is out of range; "
                    f"{settings.model} has {num_labels} labels ({known})"
                )
            index = wanted
        else:
            matches = [index for index in range(num_labels) if names.get(index) == wanted]
            if not matches:
                raise InputError(
                    f"invalid configuration at key '{key}': {wanted!r} is not a label of {settings.model} (its labels: {known})"
                )
            index = matches[0]
        for other, taken in indices.items():
            if taken == index:
                raise InputError(
                    f"invalid configuration at key '{key}': class {index} ({names.get(index, '?')}) is also "
                    f"labels.{other}; the two review labels need two distinct classes of {settings.model} (its labels: {known})"
                )
        indices[review_label] = index
    return indices


def choose_device(requested: str, cuda_available: bool, key: str) -> str:
    """``cpu`` or ``cuda``: ``auto`` is ``cuda`` when torch sees a GPU.

    Raises:
        InputError: ``cuda`` was asked for and torch sees none, or an unknown device (naming ``key``).
    """
    if requested not in DEVICES:
        raise InputError(f"invalid configuration at key '{key}': device must be one of {', '.join(DEVICES)}, got {requested!r}")
    if requested == "auto":
        return "cuda" if cuda_available else "cpu"
    if requested == "cuda" and not cuda_available:
        raise InputError(f"invalid configuration at key '{key}': 'cuda' requested but torch sees no GPU")
    return requested


def file_hashes(directory: str | os.PathLike[str]) -> dict[str, str]:
    """The sha256 of every file under ``directory`` (links followed, hidden entries skipped), by relative path."""
    root = Path(directory)
    hashes = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if any(part.startswith(".") for part in relative.parts) or not path.is_file():
            continue
        hashes[relative.as_posix()] = sha256_of(path)
    return hashes


@dataclass
class HuggingFaceClassifier:
    """A loaded model: :meth:`predict` maps documents to review classes (negative 0, positive 1)."""

    settings: ModelSettings
    tokenizer: Any
    model: Any
    device: str
    classes: dict[str, int]  # review label -> the model's class index
    directory: Path  # where its files are (the local directory or the hub cache's snapshot)
    commit: str | None  # the hub commit of the files (None for a local directory)
    model_labels: dict[int, str]

    @property
    def max_tokens(self) -> int:
        """Tokens of a document the model reads: ``max_length``, within its position embeddings (a longer
        document is truncated there, never an index error)."""
        positions = getattr(self.model.config, "max_position_embeddings", None)
        return self.settings.max_length if not positions else min(self.settings.max_length, int(positions))

    def predict(self, documents: Sequence[str]) -> NDArray[np.int64]:
        """The review class of every document, in input order, in batches of ``batch_size``."""
        import torch

        columns = [self.classes[label] for label in sorted(LABEL_CLASSES, key=LABEL_CLASSES.__getitem__)]
        predicted = []
        with torch.inference_mode():
            for start in range(0, len(documents), self.settings.batch_size):
                batch = list(documents[start:start + self.settings.batch_size])
                encoded = self.tokenizer(batch, truncation=True, max_length=self.max_tokens, padding=True, return_tensors="pt")
                logits = self.model(**{name: tensor.to(self.device) for name, tensor in encoded.items()}).logits
                # argmax over the two mapped classes only; a tie goes to negative (the first)
                predicted.append(logits[:, columns].float().argmax(dim=1).cpu().numpy())
        return np.concatenate(predicted).astype(np.int64) if predicted else np.zeros(0, dtype=np.int64)

    def report(self, reviews_per_domain: Mapping[str, int], wall_seconds: float) -> dict[str, Any]:
        """A JSON-ready record of what answered: model, revision, file hashes, labels, device, sizes, time."""
        import torch
        import transformers

        return {
            "classifier": self.settings.name,
            "kind": "huggingface",
            "model": self.settings.model,
            "local_directory": self.commit is None,
            "revision": self.settings.revision,
            "commit": self.commit,
            "files_sha256": file_hashes(self.directory),
            "labels": {label: {"index": index, "model_label": self.model_labels.get(index)} for label, index in self.classes.items()},
            "model_labels": {str(index): label for index, label in sorted(self.model_labels.items())},
            "device": self.device,
            "dtype": self.settings.dtype,
            "cpu_threads": self.settings.cpu_threads,
            "batch_size": self.settings.batch_size,
            "max_length": self.settings.max_length,
            "fields": list(self.settings.fields),
            "reviews_per_domain": dict(reviews_per_domain),
            "wall_seconds": round(float(wall_seconds), 3),
            "versions": {"torch": torch.__version__, "transformers": transformers.__version__},
        }


def _import_transformers() -> Any:
    from nlp_robustness.systems.transformers_import import import_transformers

    return import_transformers()


def load_classifier(settings: ModelSettings) -> HuggingFaceClassifier:
    """Load the tokenizer and model of ``settings``, check the label mapping first, put it on its device.

    Raises:
        InputError: The model directory does not exist, the model cannot be loaded (not in the cache
            offline, not a sequence classifier, ...), a label mapping that does not fit the model, or a
            device torch does not have; each names the config key.
    """
    import torch

    transformers = _import_transformers()
    device = choose_device(settings.device, torch.cuda.is_available(), f"{settings.key}.device")
    if settings.dtype not in DTYPES:
        raise InputError(f"invalid configuration at key '{settings.key}.dtype': must be one of {', '.join(DTYPES)}")
    local = is_local_model(settings.model)
    if not local and looks_like_path(settings.model):
        raise InputError(f"invalid configuration at key '{settings.key}.model': no model directory {settings.model}")
    if local and settings.revision is not None:
        raise InputError(
            f"invalid configuration at key '{settings.key}.revision': {settings.model} is a local directory; "
            "a revision applies to hub models only"
        )
    source = str(Path(settings.model).expanduser()) if local else settings.model
    options: dict[str, Any] = {"local_files_only": True} if local else {"revision": settings.revision}
    try:
        config = transformers.AutoConfig.from_pretrained(source, **options)
    except (OSError, ValueError) as error:
        where = ("the directory holds no Hugging Face model config" if local else
                 "not a hub model here, or not in the Hugging Face cache while offline (HF_HUB_OFFLINE=1); "
                 "a directory is given as a path that exists")
        raise InputError(f"invalid configuration at key '{settings.key}.model': cannot load {settings.model}: {where} ({error})") from error
    model_labels = {int(index): str(label) for index, label in config.id2label.items()}
    classes = class_indices(settings, model_labels, int(config.num_labels))
    if settings.cpu_threads:
        torch.set_num_threads(settings.cpu_threads)
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(source, **options)
        model = transformers.AutoModelForSequenceClassification.from_pretrained(source, dtype=getattr(torch, settings.dtype), **options)
    except (OSError, ValueError) as error:
        raise InputError(f"invalid configuration at key '{settings.key}.model': cannot load {settings.model} as a sequence classifier ({error})") from error
    model.to(device).eval()
    commit = None if local else getattr(config, "_commit_hash", None)
    directory = Path(source) if local else Path(transformers.utils.cached_file(source, "config.json", **options)).parent
    return HuggingFaceClassifier(settings, tokenizer, model, device, classes, directory, commit, model_labels)
