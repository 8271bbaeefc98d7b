"""The one import of Hugging Face ``transformers`` that every model of the workflow goes through."""

from __future__ import annotations

import sys
from types import ModuleType

__all__ = ["import_transformers"]


def import_transformers() -> ModuleType:
    """``transformers``, imported with torchaudio marked absent.

    fairseq pulls in a torchaudio built for another torch; transformers imports it while loading some models
    (BERT among them) and fails. A None entry in ``sys.modules`` makes transformers treat torchaudio as not
    installed; no model of the workflow reads audio.
    """
    sys.modules.setdefault("torchaudio", None)
    import transformers

    return transformers
