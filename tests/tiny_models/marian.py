"""Tiny translation models built by the tests, never downloaded: a 2-layer MarianMT with a SentencePiece
vocabulary trained on the mirror's Tatoeba English-French pairs.

The Marian model is seeded and trained for a few steps on CPU so that it writes something other than one
token repeated (about 5 s on one core; the SentencePiece training about 1 s): enough to tell sentences apart, order and batching, not to translate.
Everything is deterministic: one seed gives the same vocabulary, weights and files.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

import yaml

from tests.paths import MANIFEST, MIRROR

#: The manifest's downloads of the Tatoeba eng-fra test release (English and French sides, line-aligned).
TATOEBA_DOWNLOADS = ("tatoeba-v2021-08-07-eng", "tatoeba-v2021-08-07-fra")
#: Sentence pairs the vocabulary and the model are trained on.
PAIRS = 3000
VOCABULARY_SIZE = 500
TRAINING_STEPS = 200
SEED = 7


def tatoeba_pairs(count: int = PAIRS) -> list[tuple[str, str]]:
    """The first ``count`` (English, French) pairs of the mirror's Tatoeba test release."""
    downloads = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))["downloads"]
    english, french = (
        (MIRROR / downloads[key]["mirror"]).read_text(encoding="utf-8").splitlines()[:count] for key in TATOEBA_DOWNLOADS
    )
    return list(zip(english, french, strict=True))


def _train_sentencepiece(lines: list[str], model_file: Path) -> Path:
    """A unigram SentencePiece model of ``lines`` written to ``model_file`` (one thread, input in order, no
    path kept in the model: the same bytes every time)."""
    import io

    import sentencepiece

    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(lines),
        model_writer=model,
        vocab_size=VOCABULARY_SIZE,
        model_type="unigram",
        character_coverage=1.0,
        unk_id=0,
        bos_id=-1,
        eos_id=1,
        pad_id=-1,
        num_threads=1,
        shuffle_input_sentence=False,
        minloglevel=2,
    )
    model_file.write_bytes(model.getvalue())
    return model_file


def build_tiny_marian(directory: Path, *, train: bool = True) -> Path:
    """Write a tiny MarianMT English->French model and its tokenizer into ``directory`` (``save_pretrained``).

    Returns:
        ``directory``.
    """
    sys.modules.setdefault("torchaudio", None)  # fairseq's torchaudio is built for another torch
    import sentencepiece
    import torch
    from transformers import MarianConfig, MarianMTModel, MarianTokenizer

    pairs = tatoeba_pairs()
    directory.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        spm_file = _train_sentencepiece([line for pair in pairs for line in pair], Path(scratch) / "spm.model")
        pieces = sentencepiece.SentencePieceProcessor(model_file=str(spm_file))
        # Marian maps SentencePiece pieces to ids through vocab.json: </s> first, <pad> last (its decoder start)
        vocabulary = {"</s>": 0, "<unk>": 1}
        for piece in (pieces.id_to_piece(index) for index in range(pieces.get_piece_size())):
            vocabulary.setdefault(piece, len(vocabulary))
        vocabulary["<pad>"] = len(vocabulary)
        (Path(scratch) / "vocab.json").write_text(json.dumps(vocabulary, ensure_ascii=False), encoding="utf-8")
        for name in ("source.spm", "target.spm"):
            shutil.copyfile(spm_file, Path(scratch) / name)
        tokenizer = MarianTokenizer(
            source_spm=str(Path(scratch) / "source.spm"),
            target_spm=str(Path(scratch) / "target.spm"),
            vocab=str(Path(scratch) / "vocab.json"),
            source_lang="en",
            target_lang="fr",
        )
        tokenizer.save_pretrained(directory)

    pad = vocabulary["<pad>"]
    config = MarianConfig(
        vocab_size=len(vocabulary), d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=128,
        pad_token_id=pad, eos_token_id=0, decoder_start_token_id=pad, forced_eos_token_id=0,
        share_encoder_decoder_embeddings=True,
    )
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        torch.manual_seed(SEED)
        model = MarianMTModel(config)
        if train:
            _train(model, tokenizer, pairs)
        model.eval()
        model.generation_config.bad_words_ids = [[pad]]
        model.generation_config.num_beams = 1
        model.generation_config.max_length = 64
        model.save_pretrained(directory)
    finally:
        torch.set_num_threads(threads)
    return directory


def _train(model, tokenizer, pairs: list[tuple[str, str]]) -> None:
    """A few dozen Adam steps on short pairs, in a fixed order."""
    import torch

    short = [pair for pair in pairs if len(pair[0]) < 40][:640]
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    model.train()
    batch = 32
    for step in range(TRAINING_STEPS):
        chunk = short[(step * batch) % len(short) :][:batch]
        encoded = tokenizer([source for source, _ in chunk], text_target=[target for _, target in chunk],
                            padding=True, return_tensors="pt")
        encoded["labels"][encoded["labels"] == tokenizer.pad_token_id] = -100
        loss = model(**encoded).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
