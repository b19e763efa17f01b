"""Prometheus series sampled from the runtime at scrape time: the query batcher, the caches,
collection sizes and GPU memory. Nothing is counted on the request path for these."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence

from prometheus_client.metrics_core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from core.cache.lru_ttl import CacheStats
from core.dense.device_memory import device_memory
from core.embed.micro_batcher import MicroBatcherStats, MicroBatchingEmbedder
from core.errors import GroundwireError
from server.runtime import Runtime

logger = logging.getLogger(__name__)

BATCH_SIZE_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
COLLECTION_LABELS = ("tenant", "collection")


class RuntimeCollector(Collector):
    """Reads the runtime's own counters when Prometheus scrapes; empty until it has loaded."""

    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime

    def collect(self) -> Iterator[Metric]:
        """Every runtime series (called by the registry on each scrape)."""
        runtime = self._runtime
        ready = GaugeMetricFamily("groundwire_ready", "1 once the model and indexes are loaded.")
        ready.add_metric([], 1.0 if runtime.ready else 0.0)
        yield ready
        if not runtime.ready:
            return
        try:
            yield from self._loaded_series()
        except GroundwireError as exc:  # closing meanwhile (IndexNotReady): a partial scrape
            logger.debug("metrics: runtime series skipped: %s", exc)

    def _loaded_series(self) -> Iterator[Metric]:
        runtime = self._runtime
        embedder = runtime.embedder
        if isinstance(embedder, MicroBatchingEmbedder):
            yield from _batcher_series(embedder.stats())
        caches: list[tuple[str, CacheStats]] = []
        if runtime.retrieval_cache is not None:
            caches.append(("retrieval", runtime.retrieval_cache.totals()))
        if runtime.embedding_cache is not None:
            caches.append(("embedding", runtime.embedding_cache.stats()))
        yield from _cache_series(caches)
        yield from self._collection_series()
        yield from _device_series(embedder.device)

    def _collection_series(self) -> Iterator[Metric]:
        families = {
            "documents": GaugeMetricFamily(
                "groundwire_collection_documents", "Live documents.", labels=COLLECTION_LABELS
            ),
            "chunks": GaugeMetricFamily(
                "groundwire_collection_chunks", "Live chunks.", labels=COLLECTION_LABELS
            ),
            "vectors": GaugeMetricFamily(
                "groundwire_collection_vectors",
                "Vectors in the dense index (tombstoned ones included).",
                labels=COLLECTION_LABELS,
            ),
            "tombstones": GaugeMetricFamily(
                "groundwire_collection_tombstones",
                "Deleted vectors still in the dense index until compaction.",
                labels=COLLECTION_LABELS,
            ),
            "dense_memory": GaugeMetricFamily(
                "groundwire_collection_dense_memory_bytes",
                "Memory held by the dense index.",
                labels=COLLECTION_LABELS,
            ),
            "disk": GaugeMetricFamily(
                "groundwire_collection_disk_bytes",
                "Bytes on disk in the collection's directory.",
                labels=COLLECTION_LABELS,
            ),
        }
        for tenant, collection in self._runtime.catalog.all():
            try:
                figures = collection.figures()
            except (GroundwireError, OSError) as exc:  # dropped or closed meanwhile
                logger.debug("metrics: skipped collection %s: %s", collection.name, exc)
                continue
            labels = [tenant, collection.name]
            families["documents"].add_metric(labels, figures.documents)
            families["chunks"].add_metric(labels, figures.chunks)
            families["vectors"].add_metric(labels, figures.dense_vectors)
            families["tombstones"].add_metric(labels, figures.dense_tombstones)
            families["dense_memory"].add_metric(labels, figures.dense_memory_bytes)
            families["disk"].add_metric(labels, figures.disk_bytes)
        yield from families.values()


def _batcher_series(stats: MicroBatcherStats) -> Iterator[Metric]:
    depth = GaugeMetricFamily(
        "groundwire_embed_queue_depth", "Query texts waiting for the embedding batcher."
    )
    depth.add_metric([], stats.pending_texts)
    yield depth
    yield HistogramMetricFamily(
        "groundwire_embed_batch_size",
        "Query texts per embedding forward pass (successful batches).",
        buckets=_cumulative(stats.batch_sizes, BATCH_SIZE_BUCKETS),
        sum_value=stats.texts,
    )
    busy = CounterMetricFamily(
        "groundwire_embed_batch_seconds",
        "Wall seconds spent in query embedding forward passes (successful batches).",
    )
    busy.add_metric([], stats.busy_s)
    yield busy
    failed = CounterMetricFamily(
        "groundwire_embed_failed_batches", "Query embedding batches that raised."
    )
    failed.add_metric([], stats.failed_batches)
    yield failed


def _cumulative(
    counts: Sequence[tuple[int, int]], bounds: Sequence[int]
) -> list[tuple[str, float]]:
    """Prometheus histogram buckets (le, cumulative count) from exact (size, count) pairs."""
    buckets = [(str(float(b)), float(sum(n for size, n in counts if size <= b))) for b in bounds]
    buckets.append(("+Inf", float(sum(n for _, n in counts))))
    return buckets


def _cache_series(stats: Sequence[tuple[str, CacheStats]]) -> Iterator[Metric]:
    names = {
        "hits": ("groundwire_cache_hits", "Cache lookups answered from the cache."),
        "misses": ("groundwire_cache_misses", "Cache lookups that found nothing usable."),
        "evictions": ("groundwire_cache_evictions", "Entries dropped to make room."),
        "expirations": ("groundwire_cache_expirations", "Entries dropped for age."),
    }
    for field, (name, help_text) in names.items():
        family = CounterMetricFamily(name, help_text, labels=["cache"])
        for cache, figures in stats:
            family.add_metric([cache], getattr(figures, field))
        yield family
    entries = GaugeMetricFamily("groundwire_cache_entries", "Entries held.", labels=["cache"])
    for cache, figures in stats:
        entries.add_metric([cache], figures.entries)
    yield entries


def _device_series(device: str) -> Iterator[Metric]:
    if not device.startswith("cuda"):
        return
    memory = device_memory(device)
    for name, value, help_text in (
        ("allocated", memory.allocated, "Bytes the torch allocator has handed out."),
        ("reserved", memory.reserved, "Bytes the torch allocator holds from the driver."),
        ("total", memory.total, "The device's memory."),
    ):
        family = GaugeMetricFamily(
            f"groundwire_gpu_memory_{name}_bytes", help_text, labels=["device"]
        )
        family.add_metric([device], value)
        yield family
