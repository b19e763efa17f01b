"""`CollectionTuner`: pairs -> fine-tune -> save the model -> re-embed -> swap, one collection at a
time each, with the collection's writes refused meanwhile (its snapshot stays the truth)."""

from __future__ import annotations

import logging
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from core.catalog.collection import Collection
from core.errors import Conflict, FailedPrecondition
from core.tune.collection_embedders import CollectionEmbedders
from core.tune.options import TuneOptions
from core.tune.pairs import split_pairs, structure_pairs
from core.tune.reembed import build_engine, live_documents, reembed_documents, whole_texts
from core.tune.tuned_model import new_model_id, save_tuned_model, tuned_model_path

if TYPE_CHECKING:  # training imports torch: only a tune does (a reader process never tunes)
    from core.tune.training import TrainingProgress

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TuneProgress:
    """Where a tune is: `stage` ("pairs", "train", "save", "reembed", "swap"), `done` of
    `total` units (training: steps; re-embedding: chunks, their section vectors with them), and
    the latest held-out top-1."""

    stage: str
    done: int = 0
    total: int = 0
    held_out_accuracy: float = 0.0
    elapsed_s: float = 0.0


@dataclass(frozen=True, slots=True)
class TuneReport:
    """What one tune did. `reembed_seconds`: re-embedding the chunks and building the dense
    index; `section_seconds`: re-embedding the `section_vectors` (0 when the collection keeps
    none), not part of `reembed_seconds`."""

    collection: str
    model_id: str
    pairs: int
    train_pairs: int
    held_out_pairs: int
    epochs: int
    steps: int
    held_out_before: float
    held_out_after: float
    held_out_mrr_before: float
    held_out_mrr_after: float
    stopped_because: str
    chunks: int
    train_seconds: float
    reembed_seconds: float
    total_seconds: float
    section_vectors: int = 0
    section_seconds: float = 0.0


class CollectionTuner:
    """Tunes collections; a second tune of a collection already being tuned is a Conflict."""

    def __init__(self, embedders: CollectionEmbedders, device: str, base_model_path: str) -> None:
        self._embedders = embedders
        self._device = device
        self._base_model_path = base_model_path
        self._running: set[Path] = set()
        self._lock = threading.Lock()

    def tune(
        self,
        collection: Collection,
        options: TuneOptions,
        progress: Callable[[TuneProgress], None] = lambda p: None,
        should_stop: Callable[[], bool] = lambda: False,
        before_commit: Callable[[], None] = lambda: None,
    ) -> TuneReport:
        """Fine-tune a copy of the base model on `collection`'s structure pairs and switch the
        collection to it. Old vectors serve until the swap; a failure (or crash) before it
        leaves the collection as it was. FailedPrecondition for too few pairs or a collection
        with memories; Conflict while it is tuned already."""
        key = collection.directory
        with self._lock:
            if key in self._running:
                raise Conflict(
                    f"collection {collection.name!r} is already being tuned; wait for that "
                    "TuneCollection to finish"
                )
            self._running.add(key)
        try:
            reason = (
                f"collection {collection.name!r} is being tuned (TuneCollection): writes are "
                "refused until its tuned model is swapped in; retry them then"
            )
            with collection.writes_blocked(reason):
                return self._tune(collection, options, progress, should_stop, before_commit)
        finally:
            with self._lock:
                self._running.discard(key)

    def _tune(
        self,
        collection: Collection,
        options: TuneOptions,
        progress: Callable[[TuneProgress], None],
        should_stop: Callable[[], bool],
        before_commit: Callable[[], None],
    ) -> TuneReport:
        started = time.perf_counter()
        _require_no_memories(collection)
        sequence = collection.store.sequence()
        progress(TuneProgress("pairs"))
        documents = live_documents(collection)
        wholes = whole_texts(collection, documents) if collection.config.section_vectors else None
        pairs = structure_pairs(documents)
        if len(pairs) < options.min_pairs:
            raise FailedPrecondition(
                f"collection {collection.name!r} gives {len(pairs)} training pairs (sections "
                f"with a heading and text); tuning needs at least {options.min_pairs}: index "
                "more documents with headings (Markdown, HTML, reST, or titled text) first"
            )
        train, held_out = split_pairs(
            pairs, options.held_out_share, options.max_pairs, options.seed
        )
        from core.tune.training import fine_tune, load_trainable

        model = load_trainable(self._base_model_path, self._device)

        def trained(step: TrainingProgress) -> None:
            total = options.max_epochs * max(1, len(train) // options.batch_size)
            if options.max_steps:
                total = min(total, options.max_steps)
            progress(
                TuneProgress("train", step.step, total, step.held_out_accuracy, step.elapsed_s)
            )

        result = fine_tune(model, train, held_out, options, trained, should_stop)
        if should_stop():
            raise InterruptedError("tuning was cancelled")
        progress(TuneProgress("save", elapsed_s=time.perf_counter() - started))
        model_id = new_model_id()
        path = save_tuned_model(model, collection.directory, model_id)
        del model
        previous = collection.config.tuned_model
        adopted = False
        try:
            embedder = self._embedders.load(str(path))
            reembed_started = time.perf_counter()
            fresh = reembed_documents(
                documents,
                embedder,
                collection.config.section_lead_weight,
                wholes,
                lambda done, total: progress(
                    TuneProgress("reembed", done, total, elapsed_s=time.perf_counter() - started)
                ),
                should_stop,
            )
            engine = build_engine(collection, fresh.row_ids, fresh.vectors)
            reembed_seconds = time.perf_counter() - reembed_started - fresh.section_seconds
            if should_stop():
                raise InterruptedError("tuning was cancelled")
            progress(TuneProgress("swap", elapsed_s=time.perf_counter() - started))
            with collection.write_lock:
                collection.adopt_embeddings(
                    model_id,
                    fresh.row_ids,
                    fresh.vectors,
                    engine,
                    sequence,
                    before_commit,
                    fresh.sections,
                )
            adopted = True
        finally:
            if not adopted:
                self._embedders.forget(collection, model_id)
                shutil.rmtree(path, ignore_errors=True)
        if previous:
            self._embedders.forget(collection, previous)
            shutil.rmtree(tuned_model_path(collection.directory, previous), ignore_errors=True)
        report = TuneReport(
            collection=collection.name,
            model_id=model_id,
            pairs=len(pairs),
            train_pairs=len(train),
            held_out_pairs=len(held_out),
            epochs=result.epochs,
            steps=result.steps,
            held_out_before=result.held_out_before,
            held_out_after=result.held_out_after,
            held_out_mrr_before=result.held_out_mrr_before,
            held_out_mrr_after=result.held_out_mrr_after,
            stopped_because=result.stopped_because,
            chunks=len(fresh.row_ids),
            train_seconds=result.seconds,
            reembed_seconds=reembed_seconds,
            total_seconds=time.perf_counter() - started,
            section_vectors=fresh.section_count,
            section_seconds=fresh.section_seconds,
        )
        logger.info("tuned collection %s: %s", collection.name, report)
        return report


def _require_no_memories(collection: Collection) -> None:
    count = collection.memory_count()
    if count:
        raise FailedPrecondition(
            f"collection {collection.name!r} holds {count} long-term memories, whose vectors a "
            "tune would not re-embed; tune a collection without memories"
        )
