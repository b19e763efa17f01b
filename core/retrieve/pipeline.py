"""The retrieval pipeline: embed, dense and lexical in parallel, filter, fuse, rank, assemble context."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace

import numpy as np

from core.catalog.catalog import CollectionCatalog
from core.catalog.collection import Collection
from core.context.assembly import assemble_context
from core.embed.protocol import Embedder
from core.models import Chunk, Hit
from core.retrieve.filters import risk_admits
from core.retrieve.fusion import FusionMethod, fuse
from core.retrieve.hit_builder import build_hits
from core.retrieve.modes import RetrievalMode
from core.retrieve.request import RetrievalRequest, RetrievalResult
from core.retrieve.stage_timer import StageTimer

logger = logging.getLogger(__name__)

Ranking = list[tuple[int, float]]

RERANK_UNAVAILABLE = "rerank was requested but no reranker is configured; hits are in fused order"
EXPANSION_UNAVAILABLE = "link-graph expansion is not available in this version; no hits were added"
NOTHING_MATCHED = "no chunk matched the query and filters"


class RetrievalPipeline:
    """Runs RetrievalRequests against the catalog's collections."""

    def __init__(
        self, catalog: CollectionCatalog, embedder: Embedder, executor: ThreadPoolExecutor
    ) -> None:
        self._catalog = catalog
        self._embedder = embedder
        self._executor = executor

    def retrieve(self, request: RetrievalRequest) -> RetrievalResult:
        """Run every stage for one request."""
        collection = self._catalog.get(request.tenant, request.collection)
        timer = StageTimer()
        lexical_future = self._start_lexical(collection, request, timer)
        dense = self._dense_ranking(collection, request, timer)
        lexical = lexical_future.result() if lexical_future is not None else None
        candidates = _candidate_ids(dense, lexical)
        with timer.stage("filter"):
            chunks = collection.get_chunks(candidates)
            admitted = {rid: c for rid, c in chunks.items() if self._admits(request, c)}
            dense, lexical = _keep(dense, admitted), _keep(lexical, admitted)
            if _needs_exact_fallback(request, dense, lexical, len(candidates)):
                dense, lexical, admitted = self._exact_filtered(collection, request, timer)
        with timer.stage("fuse"):
            hits = self._rank(request, dense, lexical, admitted)
        with timer.stage("context"):
            context = assemble_context(
                hits, request.budget, self._embedder.count_tokens, query=request.query
            )
        return RetrievalResult(
            hits=tuple(hits),
            context=context,
            collection=collection.name,
            mode=request.mode,
            fusion=request.fusion if request.mode is RetrievalMode.HYBRID else None,
            applied_filters=tuple(_describe_filters(request)),
            total_candidates=len(candidates),
            timings=timer.timings(),
            warnings=tuple(_warnings(request, hits)),
        )

    def retrieve_many(self, request: RetrievalRequest, queries: Sequence[str]) -> RetrievalResult:
        """Retrieve each query (normalised already) and fuse the results into one."""
        results = [self.retrieve(replace(request, query=query)) for query in queries]
        if len(results) == 1:
            return results[0]
        return fuse_results(results, request, self._embedder.count_tokens)

    def _admits(self, request: RetrievalRequest, chunk: Chunk) -> bool:
        return risk_admits(chunk, request.max_risk) and request.filters.matches(chunk)

    def _start_lexical(
        self, collection: Collection, request: RetrievalRequest, timer: StageTimer
    ) -> Future[Ranking] | None:
        if request.mode is RetrievalMode.DENSE:
            return None

        def run() -> Ranking:
            start = time.perf_counter()
            try:
                return collection.lexical_search(request.query, request.depth)
            finally:
                timer.record("lexical", (time.perf_counter() - start) * 1000.0)

        return self._executor.submit(run)

    def _dense_ranking(
        self,
        collection: Collection,
        request: RetrievalRequest,
        timer: StageTimer,
        allowed: np.ndarray | None = None,
    ) -> Ranking | None:
        if request.mode is RetrievalMode.LEXICAL:
            return None
        with timer.stage("embed"):
            vectors = self._embedder.embed_queries([request.query])
        with timer.stage("dense"):
            scores, ids = collection.dense_search(vectors, request.depth, allowed)
        return [(int(i), float(s)) for s, i in zip(scores[0], ids[0], strict=True) if i >= 0]

    def _exact_filtered(
        self, collection: Collection, request: RetrievalRequest, timer: StageTimer
    ) -> tuple[Ranking | None, Ranking | None, dict[int, Chunk]]:
        """Selective filters: search exactly among the admitted chunks so recall is not lost."""
        with timer.stage("filter_scan"):
            admitted = _scan_admitted(collection, lambda c: self._admits(request, c))
        allowed = np.fromiter(admitted, dtype=np.int64, count=len(admitted))
        dense = self._dense_ranking(collection, request, timer, allowed) if len(allowed) else []
        lexical = None
        if request.mode is not RetrievalMode.DENSE:
            with timer.stage("lexical_filtered"):
                wide = collection.lexical_search(request.query, max(request.depth, 10_000))
            lexical = [(rid, s) for rid, s in wide if rid in admitted][: request.depth]
        if request.mode is RetrievalMode.LEXICAL:
            dense = None
        return dense, lexical, admitted

    def _rank(
        self,
        request: RetrievalRequest,
        dense: Ranking | None,
        lexical: Ranking | None,
        chunks: dict[int, Chunk],
    ) -> list[Hit]:
        if request.mode is RetrievalMode.HYBRID:
            fused = fuse(
                request.fusion,
                [dense or [], lexical or []],
                request.rrf_k,
                [request.dense_weight, request.lexical_weight],
            )
        else:
            fused = list(dense if dense is not None else lexical or [])
        return build_hits(fused, dense, lexical, chunks, request)


def _candidate_ids(dense: Ranking | None, lexical: Ranking | None) -> list[int]:
    seen: dict[int, None] = {}
    for ranking in (dense or [], lexical or []):
        for row_id, _ in ranking:
            seen.setdefault(row_id, None)
    return list(seen)


def _keep(ranking: Ranking | None, admitted: dict[int, Chunk]) -> Ranking | None:
    if ranking is None:
        return None
    return [(rid, score) for rid, score in ranking if rid in admitted]


def _needs_exact_fallback(
    request: RetrievalRequest, dense: Ranking | None, lexical: Ranking | None, candidates: int
) -> bool:
    """True when filters removed so much that fewer than top_k admitted candidates remain."""
    if request.filters.is_empty:
        return False
    remaining = max(len(dense or []), len(lexical or []))
    return remaining < request.top_k and candidates >= request.depth


def _scan_admitted(collection: Collection, admits: Callable[[Chunk], bool]) -> dict[int, Chunk]:
    admitted: dict[int, Chunk] = {}
    for row_ids, _ in collection.store.iter_live_vectors():
        chunks = collection.get_chunks([int(r) for r in row_ids])
        admitted.update((rid, c) for rid, c in chunks.items() if admits(c))
    return admitted


def _describe_filters(request: RetrievalRequest) -> Sequence[str]:
    return [f"risk_level <= {request.max_risk.name.lower()}", *request.filters.describe()]


def _warnings(request: RetrievalRequest, hits: Sequence[Hit]) -> list[str]:
    warnings: list[str] = []
    if request.rerank:
        warnings.append(RERANK_UNAVAILABLE)
    if request.expansion:
        warnings.append(EXPANSION_UNAVAILABLE)
    if not hits:
        warnings.append(NOTHING_MATCHED)
    return warnings


def fuse_results(
    results: Sequence[RetrievalResult],
    request: RetrievalRequest,
    count_tokens: Callable[[str], int],
) -> RetrievalResult:
    """One result from several (multi-query): hits fused by RRF on chunk, context re-assembled."""
    rankings = [[(h.chunk.row_id, h.score) for h in r.hits] for r in results]
    fused = fuse(FusionMethod.RRF, rankings, request.rrf_k)
    first: dict[int, Hit] = {}
    for result in results:
        for hit in result.hits:
            first.setdefault(hit.chunk.row_id, hit)
    hits = [
        replace(
            first[row_id], rank=rank, score=score, scores=replace(first[row_id].scores, fused=score)
        )
        for rank, (row_id, score) in enumerate(fused[: request.top_k], start=1)
    ]
    timings = tuple((f"q{i}.{stage}", ms) for i, r in enumerate(results) for stage, ms in r.timings)
    warnings = tuple(dict.fromkeys(w for r in results for w in r.warnings if w != NOTHING_MATCHED))
    return RetrievalResult(
        hits=tuple(hits),
        context=assemble_context(hits, request.budget, count_tokens, query=request.query),
        collection=results[0].collection,
        mode=results[0].mode,
        fusion=results[0].fusion,
        applied_filters=results[0].applied_filters,
        total_candidates=sum(r.total_candidates for r in results),
        timings=timings,
        warnings=warnings + ((NOTHING_MATCHED,) if not hits else ()),
    )
