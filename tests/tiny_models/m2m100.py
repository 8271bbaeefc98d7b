"""A tiny M2M-100 (a model type that needs language codes) built by the tests: 1+1 layers of 16, random
weights, and an M2M100Tokenizer over the tiny Marian's SentencePiece model (tests/tiny_models/marian.py).
It translates nothing sensible; it exercises the source-language tokenizer and the forced first token."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

SEED = 11


def build_tiny_m2m100(directory: Path, marian_directory: Path) -> Path:
    """Write a tiny M2M-100 model and tokenizer into ``directory`` (``save_pretrained``), reusing the
    SentencePiece model of a tiny Marian in ``marian_directory``; returns ``directory``."""
    sys.modules.setdefault("torchaudio", None)  # fairseq's torchaudio is built for another torch
    import torch
    from transformers import M2M100Config, M2M100ForConditionalGeneration, M2M100Tokenizer

    directory.mkdir(parents=True, exist_ok=True)
    vocabulary = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for piece in json.loads((marian_directory / "vocab.json").read_text(encoding="utf-8")):
        vocabulary.setdefault(piece, len(vocabulary))
    (directory / "vocab.json").write_text(json.dumps(vocabulary, ensure_ascii=False), encoding="utf-8")
    shutil.copyfile(marian_directory / "source.spm", directory / "sentencepiece.bpe.model")
    tokenizer = M2M100Tokenizer(vocab_file=str(directory / "vocab.json"), spm_file=str(directory / "sentencepiece.bpe.model"))
    tokenizer.save_pretrained(directory)
    config = M2M100Config(
        vocab_size=max(tokenizer.lang_token_to_id.values()) + tokenizer.num_madeup_words + 1,  # language codes after the pieces d_model=16, encoder_layers=1, decoder_layers=1,
        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32,
        max_position_embeddings=64, pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2,
    )
    torch.manual_seed(SEED)
    M2M100ForConditionalGeneration(config).save_pretrained(directory)
    return directory


def build_tiny_m2m100_config(directory: Path) -> Path:
    """Write only the config.json of a tiny M2M-100 model (a model type that needs language codes) into
    ``directory``: enough for the check that asks for them, which reads the config before anything else."""
    directory.mkdir(parents=True, exist_ok=True)
    config = {"model_type": "m2m_100", "architectures": ["M2M100ForConditionalGeneration"], "vocab_size": 128,
              "d_model": 16, "encoder_layers": 1, "decoder_layers": 1}
    (directory / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    return directory
