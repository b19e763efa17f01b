"""Fine-tuning a copy of a sentence-transformers model with in-batch negatives.

A plain torch loop over the SentenceTransformer modules (no `datasets`/`accelerate`): each batch
of (anchor, positive) pairs is embedded, every anchor is scored against every positive of the
batch (cosine x `scale`) and cross-entropy pulls each anchor to its own positive, the others
serving as negatives (the MultipleNegativesRankingLoss of sentence-transformers; Henderson et
al. 2017, "Efficient Natural Language Response Suggestion for Smart Reply"). AdamW with linear
warm-up and decay. Every `eval_every_steps` steps the held-out pairs are scored (top-1: does
each held-out anchor rank its own positive first among all held-out positives?); the best
weights are kept and training stops when `patience` evaluations in a row did not improve (top-1 first, then mean reciprocal rank).
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from sentence_transformers import SentenceTransformer

from core.tune.options import TuneOptions
from core.tune.pairs import TrainingPair

logger = logging.getLogger(__name__)

EVAL_BATCH = 64


@dataclass(frozen=True, slots=True)
class TrainingProgress:
    """One held-out evaluation during training."""

    epoch: int
    step: int
    held_out_accuracy: float
    best_accuracy: float
    elapsed_s: float


@dataclass(frozen=True, slots=True)
class TrainingResult:
    """What training did: held-out top-1 accuracy and MRR before and after (of the kept weights),
    epochs started, optimizer steps, why it stopped, and seconds spent."""

    held_out_before: float
    held_out_after: float
    held_out_mrr_before: float
    held_out_mrr_after: float
    epochs: int
    steps: int
    best_step: int
    stopped_because: str
    seconds: float


def load_trainable(model_path: str, device: str) -> SentenceTransformer:
    """A fresh fp32 copy of the model at `model_path` (offline)."""
    model = SentenceTransformer(model_path, device=device, local_files_only=True)
    return model.float()


def held_out_accuracy(model: SentenceTransformer, pairs: Sequence[TrainingPair]) -> float:
    """Share of held-out anchors whose own positive ranks first among all held-out positives."""
    return held_out_scores(model, pairs)[0]


def held_out_scores(
    model: SentenceTransformer, pairs: Sequence[TrainingPair]
) -> tuple[float, float]:
    """(top-1 accuracy, mean reciprocal rank) of each held-out anchor's own positive among all
    held-out positives. Weights are compared on both, in that order: with a few dozen held-out
    pairs top-1 moves in coarse steps, and the reciprocal rank still sees a positive move up."""
    if not pairs:
        return 0.0, 0.0
    model.eval()
    with torch.no_grad():
        anchors = _encode(model, [p.anchor for p in pairs])
        positives = _encode(model, [p.positive for p in pairs])
    scores = anchors @ positives.T
    own = scores.diagonal().unsqueeze(1)
    ranks = (scores > own).sum(dim=1) + 1
    top1 = (ranks == 1).float().mean().item()
    return float(top1), float((1.0 / ranks.float()).mean().item())


def fine_tune(
    model: SentenceTransformer,
    train: Sequence[TrainingPair],
    held_out: Sequence[TrainingPair],
    options: TuneOptions,
    progress: Callable[[TrainingProgress], None] = lambda p: None,
    should_stop: Callable[[], bool] = lambda: False,
) -> TrainingResult:
    """Train `model` in place on `train`; it ends holding the best held-out weights.

    `should_stop` is polled between steps (a cancelled RPC): training then ends like a time
    bound, with the best weights so far.
    """
    started = time.perf_counter()
    torch.manual_seed(options.seed)
    saved_length = model.max_seq_length
    model.max_seq_length = min(options.train_max_tokens, saved_length or options.train_max_tokens)
    before = held_out_scores(model, held_out)
    best, best_step, best_state = before, 0, _state(model)
    steps_per_epoch = max(1, len(train) // options.batch_size)
    total = steps_per_epoch * options.max_epochs
    if options.max_steps:
        total = min(total, options.max_steps)
    optimizer = torch.optim.AdamW(model.parameters(), lr=options.learning_rate)
    schedule = _linear_schedule(optimizer, max(1, int(total * options.warmup_share)), total)
    order = random.Random(options.seed)
    step, epoch, stale, stopped, evaluated = 0, 0, 0, "max epochs", 0
    while epoch < options.max_epochs and not _bounded(step, total):
        epoch += 1
        shuffled = list(train)
        order.shuffle(shuffled)
        for start in range(0, steps_per_epoch * options.batch_size, options.batch_size):
            if _bounded(step, total):
                stopped = "max steps"
                break
            if time.perf_counter() - started > options.max_seconds or should_stop():
                stopped = "max time" if not should_stop() else "cancelled"
                break
            model.train()
            loss = _batch_loss(model, shuffled[start : start + options.batch_size], options.scale)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()  # type: ignore[no-untyped-call]
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            step += 1
            if step % options.eval_every_steps and not _bounded(step, total):
                continue
            scores, evaluated = held_out_scores(model, held_out), step
            if scores > best:
                best, best_step, best_state, stale = scores, step, _state(model), 0
            else:
                stale += 1
            elapsed = time.perf_counter() - started
            progress(TrainingProgress(epoch, step, scores[0], best[0], elapsed))
            logger.info(
                "tune step %d (epoch %d): held-out top-1 %.3f, MRR %.3f", step, epoch, *scores
            )
            if stale >= options.patience:
                stopped = "held-out accuracy stopped improving"
                break
        else:
            continue
        break
    if stopped == "max epochs" and _bounded(step, total) and options.max_steps:
        stopped = "max steps"
    if step > evaluated:  # stopped between evaluations: the last weights get their chance too
        scores = held_out_scores(model, held_out)
        if scores > best:
            best, best_step, best_state = scores, step, _state(model)
        progress(TrainingProgress(epoch, step, scores[0], best[0], time.perf_counter() - started))
    model.load_state_dict(best_state)
    model.max_seq_length = saved_length
    model.eval()
    return TrainingResult(
        held_out_before=before[0],
        held_out_after=best[0],
        held_out_mrr_before=before[1],
        held_out_mrr_after=best[1],
        epochs=epoch,
        steps=step,
        best_step=best_step,
        stopped_because=stopped,
        seconds=time.perf_counter() - started,
    )


def _bounded(step: int, total: int) -> bool:
    return step >= total


def _batch_loss(
    model: SentenceTransformer, batch: Sequence[TrainingPair], scale: float
) -> torch.Tensor:
    anchors = _forward(model, [p.anchor for p in batch])
    positives = _forward(model, [p.positive for p in batch])
    scores = scale * (anchors @ positives.T)
    labels = torch.arange(len(batch), device=scores.device)
    return torch.nn.functional.cross_entropy(scores, labels)


def _forward(model: SentenceTransformer, texts: Sequence[str]) -> torch.Tensor:
    features: dict[str, Any] = model.preprocess(list(texts))
    on_device = {
        key: value.to(model.device) if isinstance(value, torch.Tensor) else value
        for key, value in features.items()
    }
    embeddings: torch.Tensor = model(on_device)["sentence_embedding"]
    return torch.nn.functional.normalize(embeddings, dim=-1)


def _encode(model: SentenceTransformer, texts: Sequence[str]) -> torch.Tensor:
    blocks = [_forward(model, texts[i : i + EVAL_BATCH]) for i in range(0, len(texts), EVAL_BATCH)]
    return torch.cat(blocks)


def _state(model: SentenceTransformer) -> dict[str, torch.Tensor]:
    return {key: value.detach().clone() for key, value in model.state_dict().items()}


def _linear_schedule(
    optimizer: torch.optim.Optimizer, warmup: int, total: int
) -> torch.optim.lr_scheduler.LambdaLR:
    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return max(0.0, (total - step) / max(1, total - warmup))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


__all__ = ["TrainingProgress", "TrainingResult", "fine_tune", "held_out_accuracy", "load_trainable"]
