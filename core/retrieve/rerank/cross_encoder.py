"""A reranker backed by a local sentence-transformers CrossEncoder (offline; nothing downloaded).

No cross-encoder ships with groundwire: point `model_path` at a directory holding one, for
example cross-encoder/ms-marco-MiniLM-L-6-v2 saved with `save_pretrained`.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from sentence_transformers import CrossEncoder

__all__ = ["CrossEncoderReranker"]


class CrossEncoderReranker:
    """Scores (query, passage) pairs jointly with a CrossEncoder; thread-safe.

    `device` is a torch device string ("cpu", "cuda", "cuda:1"), already resolved (see
    core.embed.device.select_device). On CUDA the weights are cast to fp16 unless
    `half_precision` is False. Scores are the model's raw logits (no sigmoid), so near-certain
    passages do not tie at 1.0. Pairs are scored in batches of `batch_size`; inputs longer than
    `max_length` tokens (default: the model's own limit) are truncated.
    """

    def __init__(
        self,
        model_path: str,
        device: str = "cpu",
        batch_size: int = 32,
        half_precision: bool = True,
        max_length: int | None = None,
    ) -> None:
        if not Path(model_path).is_dir():
            raise ValueError(f"cross-encoder model directory {model_path!r} does not exist")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self._model = CrossEncoder(
            model_path, device=device, local_files_only=True, max_length=max_length
        )
        labels = int(self._model.num_labels)
        if labels != 1:
            raise ValueError(
                f"cross-encoder {model_path!r} has {labels} output labels; a reranker needs "
                "one relevance score (num_labels = 1)"
            )
        if half_precision and str(self._model.device).startswith("cuda"):
            self._model.half()
        self._batch_size = batch_size
        self._lock = threading.Lock()
        self.name = f"cross-encoder:{model_path}"
        self.device = str(self._model.device)

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """One logit per passage, in the order given; higher means more relevant."""
        if not passages:
            return []
        pairs = [(query, passage) for passage in passages]
        with self._lock:
            logits = self._model.predict(
                pairs,
                batch_size=self._batch_size,
                show_progress_bar=False,
                activation_fn=torch.nn.Identity(),
                convert_to_numpy=True,
            )
        return [float(value) for value in np.asarray(logits, dtype=np.float32).reshape(-1)]
