"""Where the tests find the repository's files and the offline data mirror."""

from __future__ import annotations

import os
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
MANIFEST = REPOSITORY / "resources" / "datasets.yaml"
MANIFEST_SCHEMA = REPOSITORY / "schemas" / "datasets.schema.yaml"
#: The offline mirror of the datasets: ../shared/data beside the repository unless NLP_ROBUSTNESS_MIRROR says otherwise.
MIRROR = Path(os.environ.get("NLP_ROBUSTNESS_MIRROR", REPOSITORY.parent / "shared" / "data")).resolve()
