"""Domain objects -> proto messages and proto documents -> domain documents."""

from __future__ import annotations

from collections.abc import Sequence

from core.answer.events import AnswerDelta, AnswerEvent, AnswerStarted
from core.catalog.collection import Collection
from core.catalog.snapshot import SnapshotInfo
from core.context.assembly import AssembledContext, ContextCitation
from core.memory.records import DEFAULT_IMPORTANCE, MemoryDraft
from core.models import Chunk, Document, Hit, SourceType, StageScores
from core.retrieve.request import RetrievalResult
from core.store.sqlite_store import StoredDocument
from groundwire.v1 import common_pb2 as common
from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import retrieval_service_pb2 as rs
from server.cache_clearing import CacheClear
from server.enum_maps import (
    CHUNKER_KINDS,
    FUSIONS,
    MODES,
    OUTPUT_SOURCE_TYPES,
    RISKS,
    SOURCE_TYPES,
    invert,
)

_SOURCE_TYPE_NUMBER = invert(OUTPUT_SOURCE_TYPES)
_RISK_NUMBER = invert(RISKS)
_MODE_NUMBER = invert(MODES)
_FUSION_NUMBER = invert(FUSIONS)
_CHUNKER_KIND_NUMBER = invert(CHUNKER_KINDS)
_DENSE_KIND_NUMBER = {
    "flat": ix.DENSE_INDEX_KIND_FLAT,
    "hnsw": ix.DENSE_INDEX_KIND_HNSW,
    "ivf_flat": ix.DENSE_INDEX_KIND_IVF_FLAT,
    "auto": ix.DENSE_INDEX_KIND_AUTO,
}


def chunk_to_proto(chunk: Chunk) -> common.Chunk:
    """A stored chunk as the API shows it."""
    return common.Chunk(
        chunk_id=chunk.chunk_id,
        document_id=chunk.document_id,
        ordinal=chunk.ordinal,
        text=chunk.text,
        section_path=list(chunk.section_path),
        has_code=chunk.has_code,
        token_estimate=chunk.token_estimate,
        source_type=_SOURCE_TYPE_NUMBER[chunk.source_type],
        source_path=chunk.source_path,
        page=chunk.page,
        metadata=dict(chunk.metadata),
        risk_flags=list(chunk.risk_flags),
        risk_level=_RISK_NUMBER[chunk.risk_level],
    )


def scores_to_proto(scores: StageScores) -> common.ChunkScores:
    """Per-stage scores; unset fields stay unset."""
    values = {
        name: getattr(scores, name)
        for name in (
            "dense",
            "bm25",
            "fused",
            "rerank",
            "expansion_discount",
            "dense_rank",
            "bm25_rank",
            "memory",
        )
        if getattr(scores, name) is not None
    }
    return common.ChunkScores(**values)


def hit_to_proto(hit: Hit, in_context: bool) -> rs.Hit:
    """One ranked hit."""
    return rs.Hit(
        chunk=chunk_to_proto(hit.chunk),
        rank=hit.rank,
        score=hit.score,
        scores=scores_to_proto(hit.scores),
        expanded_from=hit.expanded_from,
        in_context=in_context,
    )


def citation_to_proto(citation: ContextCitation) -> rs.Citation:
    """One citation of the assembled context."""
    return rs.Citation(
        tag=citation.tag,
        document_id=citation.document_id,
        chunk_id=citation.chunk_id,
        section_path=list(citation.section_path),
        source_path=citation.source_path,
    )


def context_to_proto(
    context: AssembledContext, max_tokens: int | None, max_chars: int | None
) -> rs.RetrievedContext:
    """The assembled context with its budget figures."""
    return rs.RetrievedContext(
        text=context.text,
        citations=[citation_to_proto(c) for c in context.citations],
        token_estimate=context.token_estimate,
        char_count=context.char_count,
        budget_tokens=max_tokens or 0,
        budget_chars=max_chars or 0,
        truncated_hits=context.shortened_or_left_out,
    )


def result_to_proto(
    result: RetrievalResult, max_tokens: int | None, max_chars: int | None
) -> rs.RetrieveResponse:
    """The whole Retrieve response."""
    included = set(result.context.included_row_ids)
    return rs.RetrieveResponse(
        hits=[hit_to_proto(h, h.chunk.row_id in included) for h in result.hits],
        context=context_to_proto(result.context, max_tokens, max_chars),
        collection=result.collection,
        mode=_MODE_NUMBER[result.mode],
        fusion=_FUSION_NUMBER[result.fusion]
        if result.fusion is not None
        else rs.FUSION_METHOD_UNSPECIFIED,
        applied_filters=list(result.applied_filters),
        total_candidates=result.total_candidates,
        timings=[rs.StageTiming(stage=s, millis=ms) for s, ms in result.timings],
        warnings=list(result.warnings),
        cache_hit=result.cache_hit,
        embedding_cache_hit=result.embedding_cache_hit,
        keywords=list(result.keywords),
        query_tokens=result.query_tokens,
    )


def snapshot_to_proto(info: SnapshotInfo) -> ix.SnapshotInfo:
    """One snapshot's description."""
    return ix.SnapshotInfo(
        snapshot_id=info.snapshot_id,
        collection=info.collection,
        sequence=info.sequence,
        document_count=info.document_count,
        chunk_count=info.chunk_count,
        size_bytes=info.size_bytes,
        created_unix_ms=info.created_unix_ms,
    )


def memory_from_proto(message: ix.Memory) -> MemoryDraft:
    """A memory as sent; validation happens in core."""
    return MemoryDraft(
        text=message.text,
        importance=message.importance if message.HasField("importance") else DEFAULT_IMPORTANCE,
        timestamp_ms=message.timestamp_unix_ms if message.HasField("timestamp_unix_ms") else None,
        metadata=dict(message.metadata),
    )


def document_from_proto(message: common.Document) -> Document:
    """A domain Document; the source type is inferred from the path when unspecified."""
    if message.source_type in SOURCE_TYPES:
        source_type = SOURCE_TYPES[message.source_type]
    else:
        source_type = SourceType.from_path(message.source_path)
    return Document(
        document_id=message.document_id,
        text=message.text,
        source_type=source_type,
        source_path=message.source_path,
        title=message.title,
        metadata=dict(message.metadata),
        content=message.content,
    )


def collection_info(collection: Collection) -> ix.CollectionInfo:
    """A collection's description and sizes."""
    config = collection.config
    documents, chunks = collection.store.counts()
    spec = config.dense
    dense = ix.DenseIndexConfig(
        kind=_DENSE_KIND_NUMBER.get(spec.kind, ix.DENSE_INDEX_KIND_UNSPECIFIED),
        hnsw_m=spec.hnsw_m,
        hnsw_ef_construction=spec.hnsw_ef_construction,
        hnsw_ef_search=spec.hnsw_ef_search,
        ivf_nprobe=spec.ivf_nprobe,
    )
    if spec.ivf_nlist is not None:
        dense.ivf_nlist = spec.ivf_nlist
    return ix.CollectionInfo(
        name=collection.name,
        description=config.description,
        dense_index=dense,
        chunking=ix.ChunkingOptions(
            kind=_CHUNKER_KIND_NUMBER[config.chunker_kind],
            max_tokens=config.chunk_max_tokens,
            overlap_tokens=config.chunk_overlap_tokens,
        ),
        document_count=documents,
        chunk_count=chunks,
        embedding_model=config.embedding_model,
        tuned_model=config.tuned_model,
        embedding_dim=config.embedding_dim,
    )


def document_to_proto(stored: StoredDocument) -> common.Document:
    """A stored document as the API shows it (binary content is never returned)."""
    return common.Document(
        document_id=stored.document_id,
        text=stored.text,
        source_type=_SOURCE_TYPE_NUMBER[stored.source_type],
        source_path=stored.source_path,
        title=stored.title,
        metadata=dict(stored.metadata),
    )


def answer_event_to_proto(event: AnswerEvent) -> rs.AnswerResponse:
    """One answer-stream event."""
    if isinstance(event, AnswerStarted):
        budget = event.budget
        retrieval = result_to_proto(event.retrieval, budget.max_tokens, budget.max_chars)
        return rs.AnswerResponse(
            started=rs.AnswerStarted(retrieval=retrieval, template=event.template)
        )
    if isinstance(event, AnswerDelta):
        return rs.AnswerResponse(delta=rs.AnswerDelta(text=event.text))
    return rs.AnswerResponse(
        summary=rs.AnswerSummary(
            finish_reason=event.finish_reason,
            usage=rs.TokenUsage(
                prompt_tokens=event.prompt_tokens, completion_tokens=event.completion_tokens
            ),
            citations=[citation_to_proto(c) for c in event.citations],
            invalid_citations=event.invalid_citations,
            faithfulness=event.faithfulness,
            generator=event.generator,
            model=event.model,
            timings=[rs.StageTiming(stage=s, millis=ms) for s, ms in event.timings],
            rewritten_queries=list(event.rewritten_queries),
            text=event.text,
        )
    )


def clear_cache_response(cleared: Sequence[CacheClear]) -> rs.ClearCacheResponse:
    """The ClearCache response: totals, each process's part, and whether all were cleared."""
    return rs.ClearCacheResponse(
        retrieval_entries=sum(c.retrieval_entries for c in cleared),
        embedding_entries=sum(c.embedding_entries for c in cleared),
        processes=[
            rs.ProcessCacheClear(
                process=c.process,
                pid=c.pid,
                cleared=c.cleared,
                retrieval_entries=c.retrieval_entries,
                embedding_entries=c.embedding_entries,
                error=c.error,
            )
            for c in cleared
        ],
        complete=all(c.cleared for c in cleared),
    )
