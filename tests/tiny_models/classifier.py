"""A tiny BERT-style sentiment classifier built from mirror reviews, for the Hugging Face classifier tests.

No model can be downloaded in the tests, so they build one: a WordPiece vocabulary trained (``tokenizers``)
on review text of the offline mirror (the ``amazon-sentiment-acl`` dataset of resources/datasets.yaml), a
2-layer BERT with hidden size 32 and labels ``{0: NEGATIVE, 1: POSITIVE}``, seeded, fine-tuned for a few
dozen steps on a few hundred reviews so it beats chance, and saved with ``save_pretrained`` like a hub
model. Everything is seeded and single-threaded, so two builds write the same weights.

``python -m tests.tiny_models.classifier OUT_DIR`` builds one for a workflow config (``model: OUT_DIR``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch

# fairseq pulls in a torchaudio built for another torch, which transformers imports while loading BERT and
# fails on; a None entry in sys.modules makes transformers treat it as not installed.
sys.modules.setdefault("torchaudio", None)

from tokenizers import Tokenizer, decoders, normalizers, pre_tokenizers, processors  # noqa: E402
from tokenizers.models import WordPiece  # noqa: E402
from tokenizers.trainers import WordPieceTrainer  # noqa: E402
from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast  # noqa: E402

from nlp_robustness.data.manifest import load_manifest  # noqa: E402
from nlp_robustness.data.reviews import read_blitzer_reviews  # noqa: E402
from tests.paths import MANIFEST, MANIFEST_SCHEMA, MIRROR  # noqa: E402

#: The review dataset of the manifest whose mirror copy the model is built from.
DATASET = "amazon-sentiment-acl"
#: Its labels as the model names them, by class index.
ID2LABEL = {0: "NEGATIVE", 1: "POSITIVE"}
SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
VOCABULARY_SIZE = 2000
MAX_LENGTH = 64
SEED = 0


def mirror_reviews(domain: str, mirror: Path = MIRROR, per_label: int = 200) -> tuple[list[str], list[int]]:
    """The first ``per_label`` positive and negative reviews of one domain (title, line break, text) and
    their classes (negative 0, positive 1), alternating labels, from the mirror copy named by the manifest."""
    dataset = load_manifest(MANIFEST, MANIFEST_SCHEMA).datasets[DATASET]
    assert dataset.mirror is not None, f"{DATASET} has no mirror copy in the manifest"
    texts: dict[str, list[str]] = {}
    for label in ("negative", "positive"):
        reviews = read_blitzer_reviews(mirror / dataset.mirror.files[f"{domain}/{label}"].path, domain=domain, label=label)
        texts[label] = [f"{title}\n{text}" for title, text in zip(reviews["title"], reviews["review_text"])][:per_label]
    documents, classes = [], []
    for negative, positive in zip(texts["negative"], texts["positive"]):
        documents += [negative, positive]
        classes += [0, 1]
    return documents, classes


def train_tokenizer(documents: list[str]) -> BertTokenizerFast:
    """A lower-casing BERT WordPiece tokenizer trained on ``documents`` (deterministic for the same input)."""
    tokenizer = Tokenizer(WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.decoder = decoders.WordPiece()
    tokenizer.train_from_iterator(documents, WordPieceTrainer(vocab_size=VOCABULARY_SIZE, special_tokens=SPECIAL_TOKENS, show_progress=False))
    # The trainer finds the same pieces every time but numbers its alphabet in hash-map order: renumber them
    # (special tokens first, then sorted), which WordPiece's longest-match lookup does not depend on.
    pieces = sorted(set(tokenizer.get_vocab()) - set(SPECIAL_TOKENS))
    tokenizer.model = WordPiece({piece: index for index, piece in enumerate([*SPECIAL_TOKENS, *pieces])}, unk_token="[UNK]")
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    return BertTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                             sep_token="[SEP]", mask_token="[MASK]", model_max_length=MAX_LENGTH, do_lower_case=True)


def build_tiny_classifier(directory: Path, *, mirror: Path = MIRROR, steps: int = 60) -> Path:
    """Build, fine-tune (``steps`` batches of 16 reviews of the ``books`` domain) and save the tiny classifier
    in ``directory``; return it."""
    documents, classes = mirror_reviews("books", mirror)
    tokenizer = train_tokenizer(documents)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        torch.manual_seed(SEED)
        config = BertConfig(
            vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
            max_position_embeddings=MAX_LENGTH, num_labels=2, id2label=dict(ID2LABEL),
            label2id={label: index for index, label in ID2LABEL.items()},
        )
        model = BertForSequenceClassification(config)
        encoded = tokenizer(documents, truncation=True, max_length=MAX_LENGTH, padding=True, return_tensors="pt")
        labels = torch.tensor(classes)
        order = np.random.default_rng(SEED).permutation(np.tile(np.arange(len(documents)), 1 + steps * 16 // len(documents)))
        optimiser = torch.optim.AdamW(model.parameters(), lr=3e-3)
        model.train()
        for step in range(steps):
            batch = torch.as_tensor(order[step * 16:(step + 1) * 16])
            loss = model(input_ids=encoded["input_ids"][batch], attention_mask=encoded["attention_mask"][batch],
                         token_type_ids=encoded["token_type_ids"][batch], labels=labels[batch]).loss
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        model.eval()
    finally:
        torch.set_num_threads(threads)
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


if __name__ == "__main__":
    print(build_tiny_classifier(Path(sys.argv[1])))
