"""The retrieval pipeline: cache, embed, dense and lexical in parallel, filter, fuse, memories,
rerank, expansion, context.

The stages before fusion live here; those after it in `post_fusion`. A result is cached per
(tenant, collection, query, parameters) at the collection's store sequence, so any write makes
cached results unreachable and deleted content never comes back from the cache.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from core.cache.retrieval_cache import RetrievalCache
from core.catalog.catalog import CollectionCatalog
from core.catalog.collection import Collection
from core.catalog.model_check import ModelCheck
from core.catalog.version import CollectionVersion
from core.context.assembly import assemble_context
from core.embed.protocol import AsyncQueryEmbedder, Embedder
from core.errors import Overloaded
from core.models import Chunk, Hit
from core.observe import attributes
from core.observe.stage_timer import StageTimer
from core.observe.tracing import span
from core.retrieve.filters import ChunkFilter, risk_admits
from core.retrieve.fusion import FusionMethod, fuse
from core.retrieve.hit_builder import build_hits
from core.retrieve.keywords import extract_keywords, lexical_query
from core.retrieve.lexical_candidates import with_lexical_candidates
from core.retrieve.modes import RetrievalMode
from core.retrieve.pending_search import PendingSearch, start_search
from core.retrieve.post_fusion import (
    MemoryOptions,
    with_diversity,
    with_expansion,
    with_memories,
    with_rerank,
)
from core.retrieve.query_embedding import (
    QueryVector,
    awaitable,
    embed_query,
    embed_query_async,
    host_row,
    memory_row,
)
from core.retrieve.request import RetrievalRequest, RetrievalResult
from core.retrieve.rerank import Reranker
from core.retrieve.section_scores import with_section_scores

if TYPE_CHECKING:  # a query tensor comes only from a GPU embedder, which loaded torch
    import torch

logger = logging.getLogger(__name__)

Ranking = list[tuple[int, float]]
Admitted = Mapping[int, Chunk | None]
"""The candidates a request admits, by row id: the chunk when the filter stage read it, None
when it read only what admission needs (`RetrievalPipeline._admitted`)."""

NOTHING_MATCHED = "no chunk matched the query and filters"
DEEPEST = 4096
"""Most candidates per retriever a per-document hit limit deepens the search to (when one
document's chunks fill every candidate): bounds the cost of a filter that admits one document."""
EMBEDDER_FAILED = "the embedding model failed ({reason}); fell back to BM25 (lexical) retrieval"


Offload = Callable[..., Awaitable[Any]]
"""Runs `fn(*args)` off the event loop and awaits it: `offload(fn, *args)` (the server passes
its worker pool, bound to the caller's deadline)."""


@dataclass(frozen=True, slots=True)
class _Started:
    """A request between its pre-embedding and post-embedding stages (`retrieve_async`)."""

    collection: Collection
    version: CollectionVersion | None  # the cache key's version, when caching
    timer: StageTimer
    keywords: tuple[str, ...]
    lexical_text: str
    lexical: PendingSearch[Ranking] | None  # asked for before the embedding: it needs no vector
    embedder: Embedder  # the collection's query embedder (awaitable)


@dataclass(frozen=True, slots=True)
class _Waits:
    """A request whose embedding cannot be awaited (`retrieve_async`): a thread waits for it."""

    collection: Collection


class RetrievalPipeline:
    """Runs RetrievalRequests against the catalog's collections."""

    def __init__(
        self,
        catalog: CollectionCatalog,
        embedder: Embedder,
        executor: ThreadPoolExecutor,
        cache: RetrievalCache[RetrievalResult] | None = None,
        reranker: Reranker | None = None,
        memory: MemoryOptions | None = None,
        model_check: ModelCheck | None = None,
        query_embedders: Callable[[Collection], Embedder] | None = None,
    ) -> None:
        """`model_check`: refuse collections indexed with another model (FailedPrecondition);
        None skips the check and trusts stored token counts only when the model names agree.
        `query_embedders`: the query embedder of each collection (a tuned collection has its
        own model, core/tune); `embedder` for all when None."""
        self._catalog = catalog
        self._embedder = embedder
        self._query_embedders = query_embedders
        self._executor = executor
        self._cache = cache
        self._reranker = reranker
        self._memory = memory or MemoryOptions()
        self._additive = embedder.additive_token_counts
        self._model_check = model_check

    def retrieve(self, request: RetrievalRequest) -> RetrievalResult:
        """Run every stage for one request (or answer it from the cache); traced as a
        `retrieve` span with a child span per stage when tracing is on."""
        with span("retrieve", attributes.retrieval_request(request)) as current:
            result = self._retrieve(request)
            if current.is_recording():
                current.set_attributes(attributes.retrieval_result(result))
            return result

    def _retrieve(self, request: RetrievalRequest) -> RetrievalResult:
        return self._retrieve_from(self._opened(request), request)

    def _opened(self, request: RetrievalRequest) -> Collection:
        """The request's collection, checked against the model."""
        collection = self._catalog.get(request.tenant, request.collection)
        if self._model_check is not None:
            self._model_check.require(collection)
        return collection

    def _cached(
        self, request: RetrievalRequest, collection: Collection
    ) -> tuple[CollectionVersion | None, RetrievalResult | None]:
        """The version the result is cached at (None without a cache) and a cached result."""
        if self._cache is None:
            return None, None
        version = collection.version()  # read first: a write meanwhile makes a miss later
        start = time.perf_counter()
        cached = self._cache.get(request, version)
        if cached is None:
            return version, None
        elapsed = (time.perf_counter() - start) * 1000.0
        return version, replace(cached, cache_hit=True, timings=(("cache", elapsed),))

    def _retrieve_from(self, collection: Collection, request: RetrievalRequest) -> RetrievalResult:
        version, cached = self._cached(request, collection)
        if cached is not None:
            return cached
        result = self._run(collection, request)
        if self._cache is not None and version is not None:
            self._cache.put(request, version, result)
        return result

    def retrieve_many(self, request: RetrievalRequest, queries: Sequence[str]) -> RetrievalResult:
        """Retrieve each query (normalised already) and fuse the results into one."""
        results = [self.retrieve(replace(request, query=query)) for query in queries]
        if len(results) == 1:
            return results[0]
        collection = self._catalog.get(request.tenant, request.collection)
        stored = self._counts_match(collection)
        return fuse_results(results, request, self._embedder.count_tokens, stored, self._additive)

    def _counts_match(self, collection: Collection) -> bool:
        """Whether the collection's stored chunk token counts came from this embedder's
        tokenizer: the model check passed (it runs before every retrieval), or without one, the
        recorded model name is the embedder's."""
        if self._model_check is not None:
            return True
        return collection.config.embedding_model == self._embedder.model_name

    def _embedder_for(self, collection: Collection) -> Embedder:
        """The query embedder of `collection`: its tuned model's, or the shared one."""
        if self._query_embedders is None:
            return self._embedder
        return self._query_embedders(collection)

    def _run(self, collection: Collection, request: RetrievalRequest) -> RetrievalResult:
        timer = StageTimer()
        keywords, lexical_text = _preprocess(request, timer)
        embedder = self._embedder_for(collection)
        query = self._embed(
            request, keywords, lexical_text, timer, embedder, collection.searches_on_device
        )
        return self._search(collection, request, query, timer)

    async def retrieve_async(
        self, request: RetrievalRequest, offload: Offload, waiting: Offload | None = None
    ) -> RetrievalResult:
        """`retrieve` for a coroutine: the stages before and after the query embedding run via
        `offload` (a worker thread each), the embedding is awaited on the loop, so a request
        waiting for its shared embedding batch holds no thread and batches can grow with the
        load. When the embedder cannot be awaited or the collection searches on a GPU (the
        vector then stays on the device), the whole retrieval runs via `waiting` (default
        `offload`), whose thread waits for the embedding: a pool with a thread per request the
        embedder should batch, not one sized to the cores."""
        if request.mode is RetrievalMode.LEXICAL:
            result: RetrievalResult = await offload(self.retrieve, request)
            return result
        with span("retrieve", attributes.retrieval_request(request)) as current:
            result = await self._retrieve_async(request, offload, waiting or offload)
            if current.is_recording():
                current.set_attributes(attributes.retrieval_result(result))
            return result

    async def _retrieve_async(
        self, request: RetrievalRequest, offload: Offload, waiting: Offload
    ) -> RetrievalResult:
        started: _Started | _Waits | RetrievalResult = await offload(self._begin, request)
        if isinstance(started, RetrievalResult):
            return started
        if isinstance(started, _Waits):
            result: RetrievalResult = await waiting(
                self._retrieve_from, started.collection, request
            )
            return result
        try:
            query = await self._embed_async(request, started)
        except BaseException:
            if started.lexical is not None:
                started.lexical.cancel()  # not started: never runs; running: its result is dropped
            raise
        return await offload(self._finish, request, started, query)  # type: ignore[no-any-return]

    def _begin(self, request: RetrievalRequest) -> _Started | _Waits | RetrievalResult:
        """The stages before the embedding: the collection (to be retrieved from by a thread
        that waits for its embedding when it cannot be awaited), a cached result, or the
        preprocessed query with its lexical search asked for (`_start_lexical`)."""
        collection = self._opened(request)
        embedder = self._embedder_for(collection)
        if collection.searches_on_device or not awaitable(embedder):
            return _Waits(collection)
        version, cached = self._cached(request, collection)
        if cached is not None:
            return cached
        timer = StageTimer()
        keywords, lexical_text = _preprocess(request, timer)
        lexical = self._start_lexical(collection, request, lexical_text, timer)
        return _Started(collection, version, timer, keywords, lexical_text, lexical, embedder)

    async def _embed_async(self, request: RetrievalRequest, started: _Started) -> QueryVector:
        """`_embed`, awaited: the same vector, the same BM25 fallback when the model fails."""
        embedder = started.embedder
        assert isinstance(embedder, AsyncQueryEmbedder)
        keywords, lexical_text = started.keywords, started.lexical_text
        with started.timer.stage("embed"):
            try:
                vector, hit = await embed_query_async(embedder, request.query)
            except Overloaded:
                raise  # a full batching queue is RESOURCE_EXHAUSTED with retry-after, not a fallback
            except Exception as exc:  # noqa: BLE001 - any model failure degrades to BM25
                logger.exception("query embedding failed; falling back to BM25")
                reason = type(exc).__name__
                warning = EMBEDDER_FAILED.format(reason=reason)
                return QueryVector(lexical_text, keywords, None, False, (warning,))
        return QueryVector(lexical_text, keywords, vector, hit, ())

    def _finish(
        self, request: RetrievalRequest, started: _Started, query: QueryVector
    ) -> RetrievalResult:
        """The stages after the embedding; the result is cached at the version read first."""
        result = self._search(started.collection, request, query, started.timer, started.lexical)
        if self._cache is not None and started.version is not None:
            self._cache.put(request, started.version, result)
        return result

    def _search(
        self,
        collection: Collection,
        request: RetrievalRequest,
        query: QueryVector,
        timer: StageTimer,
        lexical_future: PendingSearch[Ranking] | None = None,
    ) -> RetrievalResult:
        """Every stage after the embedding. `lexical_future`: the lexical search, when it was
        asked for before the embedding (it needs only the text)."""
        mode = request.mode if query.vector is not None else RetrievalMode.LEXICAL
        effective = replace(request, mode=mode)
        hits, candidates, exhausted = self._ranked(
            collection, effective, query, timer, lexical_future
        )
        while not exhausted and _crowded(hits, effective) and effective.depth < DEEPEST:
            # One document's chunks fill every candidate: search deeper, until top_k hits fit
            # the per-document limit or the collection has no more candidates.
            effective = replace(effective, candidate_depth=min(2 * effective.depth, DEEPEST))
            hits, candidates, exhausted = self._ranked(collection, effective, query, timer)
        warnings = list(query.warnings)
        with timer.stage("memory"):
            memory_vector = memory_row(query.vector, request.use_memory)
            hits, more = with_memories(
                hits, collection, request, memory_vector, query.keywords, self._memory,
                self._embedder.count_tokens,
            )  # fmt: skip
            warnings += more
        with timer.stage("rerank"):
            hits, more = with_rerank(hits, request, self._reranker)
            warnings += more
        if request.diversifies:
            with timer.stage("diversity"):
                hits = with_diversity(hits, collection, request)
        hits = hits[: request.top_k]
        with timer.stage("expand"):
            hits = with_expansion(hits, collection, request, lambda c: self._admits(request, c))
        with timer.stage("context"):
            context = assemble_context(
                hits,
                request.budget,
                self._embedder.count_tokens,
                query=request.query,
                stored_token_counts=self._counts_match(collection),
                additive_counts=self._additive,
            )
        if not hits:
            warnings.append(NOTHING_MATCHED)
        return RetrievalResult(
            hits=tuple(hits),
            context=context,
            collection=collection.name,
            mode=mode,
            fusion=request.fusion if mode is RetrievalMode.HYBRID else None,
            applied_filters=tuple(_describe_filters(request)),
            total_candidates=len(candidates),
            timings=timer.timings(),
            warnings=tuple(warnings),
            embedding_cache_hit=query.embedding_cache_hit,
            keywords=query.keywords,
            query_tokens=self._embedder.count_tokens(request.query),
        )

    def _ranked(
        self,
        collection: Collection,
        request: RetrievalRequest,
        query: QueryVector,
        timer: StageTimer,
        lexical_future: PendingSearch[Ranking] | None = None,
    ) -> tuple[list[Hit], list[int], bool]:
        """Search, filter and fuse `request.depth` candidates per retriever: (hits, candidate row
        ids, whether there are no more candidates to search: every retriever returned fewer than it
        was asked for)."""
        if lexical_future is None:
            lexical_future = self._start_lexical(collection, request, query.lexical_text, timer)
        dense = self._dense_ranking(collection, request, query.vector, timer)
        lexical = lexical_future.result() if lexical_future is not None else None
        exhausted = max(len(dense or []), len(lexical or [])) < request.depth
        candidates = _candidate_ids(dense, lexical)
        with timer.stage("filter"):
            admitted = self._admitted(collection, request, candidates)
            dense, lexical = _keep(dense, admitted), _keep(lexical, admitted)
            if _needs_exact_fallback(request, dense, lexical, len(candidates)):
                dense, lexical, admitted = self._exact_filtered(collection, request, query, timer)
                # searched among every admitted chunk: fewer than asked for means all of them
                exhausted = max(len(dense or []), len(lexical or [])) < request.depth
        # both lists exist in hybrid mode only (dense mode runs no lexical search, lexical no dense)
        if dense is not None and lexical and request.score_lexical_candidates:
            with timer.stage("lexical_candidates"):
                dense = _with_lexical_candidates(collection, dense, lexical, query.vector)
        if dense and request.section_weight > 0.0 and collection.config.section_vectors:
            with timer.stage("sections"):
                dense = _with_sections(collection, dense, query.vector, request.section_weight)
        with timer.stage("fuse"):
            hits = self._rank(collection, request, dense, lexical, admitted)
        return hits, candidates, exhausted

    def _embed(
        self,
        request: RetrievalRequest,
        keywords: tuple[str, ...],
        lexical_text: str,
        timer: StageTimer,
        embedder: Embedder,
        on_device: bool = False,
    ) -> QueryVector:
        """The query vector, or a lexical-only query with a warning when the embedder fails.

        `on_device`: the collection searches on a GPU, so the vector is asked for as a tensor
        left on the model's device.
        """
        if request.mode is RetrievalMode.LEXICAL:
            return QueryVector(lexical_text, keywords, None, False, ())
        with timer.stage("embed"):
            try:
                vector, hit = embed_query(embedder, request.query, on_device)
            except Overloaded:
                raise  # a full batching queue is RESOURCE_EXHAUSTED with retry-after, not a fallback
            except Exception as exc:  # noqa: BLE001 - any model failure degrades to BM25
                logger.exception("query embedding failed; falling back to BM25")
                reason = type(exc).__name__
                return QueryVector(
                    lexical_text, keywords, None, False, (EMBEDDER_FAILED.format(reason=reason),)
                )
        return QueryVector(lexical_text, keywords, vector, hit, ())

    def _admits(self, request: RetrievalRequest, chunk: Chunk) -> bool:
        return risk_admits(chunk, request.max_risk) and request.filters.matches(chunk)

    def _admitted(
        self, collection: Collection, request: RetrievalRequest, candidates: list[int]
    ) -> Admitted:
        """The live candidates the request admits. Without filters only each candidate's risk
        level is read (most candidates never become hits; `_rank` reads the chunks of those
        that can); with filters, every candidate's chunk."""
        if request.filters.is_empty:
            levels = collection.get_risk_levels(candidates)
            most = request.max_risk
            return {rid: None for rid, level in levels.items() if level <= most}
        chunks = collection.get_chunks(candidates)
        return {rid: c for rid, c in chunks.items() if self._admits(request, c)}

    def _start_lexical(
        self, collection: Collection, request: RetrievalRequest, text: str, timer: StageTimer
    ) -> PendingSearch[Ranking] | None:
        """The request's lexical search, asked for now and read after the dense search: started
        on the lexical pool when it waits on another server, else run when read
        (core/retrieve/pending_search.py)."""
        if request.mode is RetrievalMode.DENSE:
            return None

        def run() -> Ranking:
            with timer.stage("lexical"):
                return collection.lexical_search(text, request.depth)

        return start_search(run, collection.lexical_is_remote, self._executor)

    def _dense_ranking(
        self,
        collection: Collection,
        request: RetrievalRequest,
        vector: np.ndarray | torch.Tensor | None,
        timer: StageTimer,
        allowed: np.ndarray | None = None,
    ) -> Ranking | None:
        if request.mode is RetrievalMode.LEXICAL or vector is None:
            return None
        with timer.stage("dense") as stage:
            if stage.is_recording():
                stage.set_attributes(
                    {
                        attributes.ENGINE: collection.dense_engine,
                        attributes.DEVICE: collection.dense_device,
                    }
                )
            scores, ids = collection.dense_search(vector, request.depth, allowed)
        return [(int(i), float(s)) for s, i in zip(scores[0], ids[0], strict=True) if i >= 0]

    def _exact_filtered(
        self,
        collection: Collection,
        request: RetrievalRequest,
        query: QueryVector,
        timer: StageTimer,
    ) -> tuple[Ranking | None, Ranking | None, Admitted]:
        """Selective filters: search exactly among the admitted chunks so recall is not lost."""
        with timer.stage("filter_scan"):
            admitted = _scan_admitted(
                collection, request.filters, lambda c: self._admits(request, c)
            )
        allowed = np.fromiter(admitted, dtype=np.int64, count=len(admitted))
        dense = (
            self._dense_ranking(collection, request, query.vector, timer, allowed)
            if len(allowed)
            else []
        )
        lexical = None
        if request.mode is not RetrievalMode.DENSE:
            with timer.stage("lexical_filtered"):
                wide = collection.lexical_search(query.lexical_text, max(request.depth, 10_000))
            lexical = [(rid, s) for rid, s in wide if rid in admitted][: request.depth]
        if request.mode is RetrievalMode.LEXICAL:
            dense = None
        return dense, lexical, admitted

    def _rank(
        self,
        collection: Collection,
        request: RetrievalRequest,
        dense: Ranking | None,
        lexical: Ranking | None,
        admitted: Admitted,
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
        window = request.rerank_window if request.rerank or request.diversifies else request.top_k
        top = max(window, request.top_k)
        chunks = _hit_chunks(collection, fused, admitted, top, request.score_threshold)
        limit = request.max_hits_per_document
        while (
            limit > 0
            and len(chunks) == top  # fewer: the candidates ran out
            and _within_limit(fused, chunks, limit) < request.top_k
        ):  # one document's chunks crowd the window: widen it until top_k hits fit the limit
            top *= 2
            chunks = _hit_chunks(collection, fused, admitted, top, request.score_threshold, chunks)
        return build_hits(fused, dense, lexical, chunks, replace(request, top_k=top))


def _preprocess(request: RetrievalRequest, timer: StageTimer) -> tuple[tuple[str, ...], str]:
    """The query's keywords and the text the lexical index is searched with."""
    with timer.stage("preprocess"):
        keywords = extract_keywords(request.query)
        return keywords, lexical_query(request.query, keywords)


def _with_sections(
    collection: Collection, dense: Ranking, vector: np.ndarray | torch.Tensor | None, weight: float
) -> Ranking:
    """The dense ranking with each chunk's score mixed with its section vector's."""
    if vector is None:
        return dense
    ids, vectors = collection.store.get_section_vectors([row_id for row_id, _ in dense])
    return with_section_scores(dense, host_row(vector), ids, vectors, weight)


def _with_lexical_candidates(
    collection: Collection,
    dense: Ranking,
    lexical: Ranking,
    vector: np.ndarray | torch.Tensor | None,
) -> Ranking:
    """The dense ranking with each lexical-only candidate's exact cosine added
    (`lexical_candidates`)."""
    if vector is None:
        return dense
    return with_lexical_candidates(
        dense, lexical, lambda rows, k: collection.dense_search(vector, k, rows)
    )


def _candidate_ids(dense: Ranking | None, lexical: Ranking | None) -> list[int]:
    seen: dict[int, None] = {}
    for ranking in (dense or [], lexical or []):
        for row_id, _ in ranking:
            seen.setdefault(row_id, None)
    return list(seen)


def _crowded(hits: Sequence[Hit], request: RetrievalRequest) -> bool:
    """Whether a per-document limit leaves fewer than top_k of `hits` (a score threshold ends the
    list where it ends: deeper candidates score lower)."""
    limit = request.max_hits_per_document
    if limit <= 0 or request.score_threshold is not None:
        return False
    per_document: dict[str, int] = {}
    for hit in hits:
        per_document[hit.chunk.document_id] = per_document.get(hit.chunk.document_id, 0) + 1
    return sum(min(n, limit) for n in per_document.values()) < request.top_k


def _within_limit(fused: Ranking, chunks: Mapping[int, Chunk], limit: int) -> int:
    """How many of the hits `chunks` make (in `fused` order) fit `limit` hits per document: the
    hits a per-document limit lists before any document's next one."""
    per_document: dict[str, int] = {}
    fitting = 0
    for row_id, _ in fused:
        chunk = chunks.get(row_id)
        if chunk is None:
            continue
        seen = per_document.get(chunk.document_id, 0)
        fitting += seen < limit
        per_document[chunk.document_id] = seen + 1
    return fitting


def _hit_chunks(
    collection: Collection,
    fused: Ranking,
    admitted: Admitted,
    count: int,
    threshold: float | None,
    read: Mapping[int, Chunk] | None = None,
) -> dict[int, Chunk]:
    """The chunks of the first `count` admitted entries of `fused` scoring at least `threshold`:
    the only ones `build_hits` can turn into hits. Chunks the filter stage read, or given in
    `read` (an earlier call's result), are reused, the others read now; one deleted since the
    filter stage read it is absent, and the next entry takes its place."""
    known = read or {}
    wanted = [
        rid for rid, score in fused if rid in admitted and (threshold is None or score >= threshold)
    ]
    chunks: dict[int, Chunk] = {}
    start = 0
    while len(chunks) < count and start < len(wanted):
        batch = wanted[start : start + count - len(chunks)]
        start += len(batch)
        unread: list[int] = []
        for rid in batch:
            chunk = admitted[rid]
            if chunk is None:
                chunk = known.get(rid)
            if chunk is None:
                unread.append(rid)
            else:
                chunks[rid] = chunk
        if unread:
            chunks.update(collection.get_chunks(unread))
    return chunks


def _keep(ranking: Ranking | None, admitted: Admitted) -> Ranking | None:
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


def _scan_admitted(
    collection: Collection, chunk_filter: ChunkFilter, admits: Callable[[Chunk], bool]
) -> dict[int, Chunk]:
    admitted: dict[int, Chunk] = {}
    for chunks in collection.scan_chunks(chunk_filter):
        admitted.update((c.row_id, c) for c in chunks if admits(c))
    return admitted


def _describe_filters(request: RetrievalRequest) -> Sequence[str]:
    return [f"risk_level <= {request.max_risk.name.lower()}", *request.filters.describe()]


def fuse_results(
    results: Sequence[RetrievalResult],
    request: RetrievalRequest,
    count_tokens: Callable[[str], int],
    stored_token_counts: bool = False,
    additive_counts: bool = False,
) -> RetrievalResult:
    """One result from several (multi-query): hits fused by RRF on chunk, context re-assembled.

    `stored_token_counts` and `additive_counts` as for `assemble_context`.
    """
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
        context=assemble_context(
            hits,
            request.budget,
            count_tokens,
            query=request.query,
            stored_token_counts=stored_token_counts,
            additive_counts=additive_counts,
        ),
        collection=results[0].collection,
        mode=results[0].mode,
        fusion=results[0].fusion,
        applied_filters=results[0].applied_filters,
        total_candidates=sum(r.total_candidates for r in results),
        timings=timings,
        warnings=warnings + ((NOTHING_MATCHED,) if not hits else ()),
        keywords=tuple(dict.fromkeys(k for r in results for k in r.keywords)),
    )
