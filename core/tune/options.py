"""`TuneOptions`: the bounds of one tune (pairs, epochs, steps, time) and its training settings."""

from __future__ import annotations

from dataclasses import dataclass

MIN_PAIRS = 32
"""Fewer self-supervised pairs than this are too few to train on (FailedPrecondition)."""


@dataclass(frozen=True, slots=True)
class TuneOptions:
    """How a collection's model copy is fine-tuned.

    Training stops at the first of: `max_epochs` passes over the training pairs, `max_steps`
    optimizer steps (0 = no step bound), `max_seconds` of training, or `patience` held-out
    evaluations in a row without a better held-out top-1 accuracy; the best evaluated weights
    are kept (the base model's when nothing beat it).
    """

    max_pairs: int = 4000
    held_out_share: float = 0.1
    max_epochs: int = 3
    max_steps: int = 0
    max_seconds: float = 1200.0
    batch_size: int = 32
    learning_rate: float = 2e-5
    warmup_share: float = 0.1
    eval_every_steps: int = 50
    patience: int = 2
    train_max_tokens: int = 128
    scale: float = 20.0
    seed: int = 12
    min_pairs: int = MIN_PAIRS

    def __post_init__(self) -> None:
        if self.max_pairs < self.min_pairs:
            raise ValueError(
                f"max_pairs ({self.max_pairs}) must be >= min_pairs ({self.min_pairs})"
            )
        if not 0.0 < self.held_out_share < 0.5:
            raise ValueError(f"held_out_share must be in (0, 0.5), got {self.held_out_share}")
        for name in ("max_epochs", "batch_size", "eval_every_steps", "patience", "min_pairs"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.batch_size < 2:
            raise ValueError("batch_size must be >= 2 (in-batch negatives need a batch)")
        if self.max_steps < 0 or self.max_seconds <= 0 or self.learning_rate <= 0:
            raise ValueError("max_steps must be >= 0, max_seconds and learning_rate > 0")
