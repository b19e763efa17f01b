from groundwire.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RetrievalMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RETRIEVAL_MODE_UNSPECIFIED: _ClassVar[RetrievalMode]
    RETRIEVAL_MODE_DENSE: _ClassVar[RetrievalMode]
    RETRIEVAL_MODE_LEXICAL: _ClassVar[RetrievalMode]
    RETRIEVAL_MODE_HYBRID: _ClassVar[RetrievalMode]

class FusionMethod(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FUSION_METHOD_UNSPECIFIED: _ClassVar[FusionMethod]
    FUSION_METHOD_RRF: _ClassVar[FusionMethod]
    FUSION_METHOD_WEIGHTED: _ClassVar[FusionMethod]
    FUSION_METHOD_MAX: _ClassVar[FusionMethod]
    FUSION_METHOD_DBSF: _ClassVar[FusionMethod]

class ExpansionStrategy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EXPANSION_STRATEGY_UNSPECIFIED: _ClassVar[ExpansionStrategy]
    EXPANSION_STRATEGY_BASIC: _ClassVar[ExpansionStrategy]
    EXPANSION_STRATEGY_WEIGHTED: _ClassVar[ExpansionStrategy]
    EXPANSION_STRATEGY_TYPE_AWARE: _ClassVar[ExpansionStrategy]
    EXPANSION_STRATEGY_SMART: _ClassVar[ExpansionStrategy]
RETRIEVAL_MODE_UNSPECIFIED: RetrievalMode
RETRIEVAL_MODE_DENSE: RetrievalMode
RETRIEVAL_MODE_LEXICAL: RetrievalMode
RETRIEVAL_MODE_HYBRID: RetrievalMode
FUSION_METHOD_UNSPECIFIED: FusionMethod
FUSION_METHOD_RRF: FusionMethod
FUSION_METHOD_WEIGHTED: FusionMethod
FUSION_METHOD_MAX: FusionMethod
FUSION_METHOD_DBSF: FusionMethod
EXPANSION_STRATEGY_UNSPECIFIED: ExpansionStrategy
EXPANSION_STRATEGY_BASIC: ExpansionStrategy
EXPANSION_STRATEGY_WEIGHTED: ExpansionStrategy
EXPANSION_STRATEGY_TYPE_AWARE: ExpansionStrategy
EXPANSION_STRATEGY_SMART: ExpansionStrategy

class HybridParams(_message.Message):
    __slots__ = ("mode", "fusion", "rrf_k", "dense_weight", "lexical_weight", "candidate_depth")
    MODE_FIELD_NUMBER: _ClassVar[int]
    FUSION_FIELD_NUMBER: _ClassVar[int]
    RRF_K_FIELD_NUMBER: _ClassVar[int]
    DENSE_WEIGHT_FIELD_NUMBER: _ClassVar[int]
    LEXICAL_WEIGHT_FIELD_NUMBER: _ClassVar[int]
    CANDIDATE_DEPTH_FIELD_NUMBER: _ClassVar[int]
    mode: RetrievalMode
    fusion: FusionMethod
    rrf_k: int
    dense_weight: float
    lexical_weight: float
    candidate_depth: int
    def __init__(self, mode: _Optional[_Union[RetrievalMode, str]] = ..., fusion: _Optional[_Union[FusionMethod, str]] = ..., rrf_k: _Optional[int] = ..., dense_weight: _Optional[float] = ..., lexical_weight: _Optional[float] = ..., candidate_depth: _Optional[int] = ...) -> None: ...

class ExpansionPolicy(_message.Message):
    __slots__ = ("enabled", "strategy", "max_per_hit", "max_total", "hops", "score_discount", "min_edge_weight", "preferred_edge_types")
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    STRATEGY_FIELD_NUMBER: _ClassVar[int]
    MAX_PER_HIT_FIELD_NUMBER: _ClassVar[int]
    MAX_TOTAL_FIELD_NUMBER: _ClassVar[int]
    HOPS_FIELD_NUMBER: _ClassVar[int]
    SCORE_DISCOUNT_FIELD_NUMBER: _ClassVar[int]
    MIN_EDGE_WEIGHT_FIELD_NUMBER: _ClassVar[int]
    PREFERRED_EDGE_TYPES_FIELD_NUMBER: _ClassVar[int]
    enabled: bool
    strategy: ExpansionStrategy
    max_per_hit: int
    max_total: int
    hops: int
    score_discount: float
    min_edge_weight: float
    preferred_edge_types: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, enabled: _Optional[bool] = ..., strategy: _Optional[_Union[ExpansionStrategy, str]] = ..., max_per_hit: _Optional[int] = ..., max_total: _Optional[int] = ..., hops: _Optional[int] = ..., score_discount: _Optional[float] = ..., min_edge_weight: _Optional[float] = ..., preferred_edge_types: _Optional[_Iterable[str]] = ...) -> None: ...

class RerankParams(_message.Message):
    __slots__ = ("enabled", "depth")
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    DEPTH_FIELD_NUMBER: _ClassVar[int]
    enabled: bool
    depth: int
    def __init__(self, enabled: _Optional[bool] = ..., depth: _Optional[int] = ...) -> None: ...

class ContextBudget(_message.Message):
    __slots__ = ("max_tokens", "max_chars")
    MAX_TOKENS_FIELD_NUMBER: _ClassVar[int]
    MAX_CHARS_FIELD_NUMBER: _ClassVar[int]
    max_tokens: int
    max_chars: int
    def __init__(self, max_tokens: _Optional[int] = ..., max_chars: _Optional[int] = ...) -> None: ...

class RetrieveRequest(_message.Message):
    __slots__ = ("query", "collection", "top_k", "filters", "max_risk_level", "hybrid", "expansion", "rerank", "score_threshold", "budget", "use_memory", "mmr_lambda", "max_hits_per_document")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    FILTERS_FIELD_NUMBER: _ClassVar[int]
    MAX_RISK_LEVEL_FIELD_NUMBER: _ClassVar[int]
    HYBRID_FIELD_NUMBER: _ClassVar[int]
    EXPANSION_FIELD_NUMBER: _ClassVar[int]
    RERANK_FIELD_NUMBER: _ClassVar[int]
    SCORE_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    BUDGET_FIELD_NUMBER: _ClassVar[int]
    USE_MEMORY_FIELD_NUMBER: _ClassVar[int]
    MMR_LAMBDA_FIELD_NUMBER: _ClassVar[int]
    MAX_HITS_PER_DOCUMENT_FIELD_NUMBER: _ClassVar[int]
    query: str
    collection: str
    top_k: int
    filters: _common_pb2.Filters
    max_risk_level: _common_pb2.RiskLevel
    hybrid: HybridParams
    expansion: ExpansionPolicy
    rerank: RerankParams
    score_threshold: float
    budget: ContextBudget
    use_memory: bool
    mmr_lambda: float
    max_hits_per_document: int
    def __init__(self, query: _Optional[str] = ..., collection: _Optional[str] = ..., top_k: _Optional[int] = ..., filters: _Optional[_Union[_common_pb2.Filters, _Mapping]] = ..., max_risk_level: _Optional[_Union[_common_pb2.RiskLevel, str]] = ..., hybrid: _Optional[_Union[HybridParams, _Mapping]] = ..., expansion: _Optional[_Union[ExpansionPolicy, _Mapping]] = ..., rerank: _Optional[_Union[RerankParams, _Mapping]] = ..., score_threshold: _Optional[float] = ..., budget: _Optional[_Union[ContextBudget, _Mapping]] = ..., use_memory: _Optional[bool] = ..., mmr_lambda: _Optional[float] = ..., max_hits_per_document: _Optional[int] = ...) -> None: ...

class Hit(_message.Message):
    __slots__ = ("chunk", "rank", "score", "scores", "expanded_from", "in_context")
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    EXPANDED_FROM_FIELD_NUMBER: _ClassVar[int]
    IN_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    chunk: _common_pb2.Chunk
    rank: int
    score: float
    scores: _common_pb2.ChunkScores
    expanded_from: str
    in_context: bool
    def __init__(self, chunk: _Optional[_Union[_common_pb2.Chunk, _Mapping]] = ..., rank: _Optional[int] = ..., score: _Optional[float] = ..., scores: _Optional[_Union[_common_pb2.ChunkScores, _Mapping]] = ..., expanded_from: _Optional[str] = ..., in_context: _Optional[bool] = ...) -> None: ...

class Citation(_message.Message):
    __slots__ = ("tag", "document_id", "chunk_id", "section_path", "source_path")
    TAG_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    CHUNK_ID_FIELD_NUMBER: _ClassVar[int]
    SECTION_PATH_FIELD_NUMBER: _ClassVar[int]
    SOURCE_PATH_FIELD_NUMBER: _ClassVar[int]
    tag: str
    document_id: str
    chunk_id: str
    section_path: _containers.RepeatedScalarFieldContainer[str]
    source_path: str
    def __init__(self, tag: _Optional[str] = ..., document_id: _Optional[str] = ..., chunk_id: _Optional[str] = ..., section_path: _Optional[_Iterable[str]] = ..., source_path: _Optional[str] = ...) -> None: ...

class RetrievedContext(_message.Message):
    __slots__ = ("text", "citations", "token_estimate", "char_count", "budget_tokens", "budget_chars", "truncated_hits")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    CITATIONS_FIELD_NUMBER: _ClassVar[int]
    TOKEN_ESTIMATE_FIELD_NUMBER: _ClassVar[int]
    CHAR_COUNT_FIELD_NUMBER: _ClassVar[int]
    BUDGET_TOKENS_FIELD_NUMBER: _ClassVar[int]
    BUDGET_CHARS_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_HITS_FIELD_NUMBER: _ClassVar[int]
    text: str
    citations: _containers.RepeatedCompositeFieldContainer[Citation]
    token_estimate: int
    char_count: int
    budget_tokens: int
    budget_chars: int
    truncated_hits: int
    def __init__(self, text: _Optional[str] = ..., citations: _Optional[_Iterable[_Union[Citation, _Mapping]]] = ..., token_estimate: _Optional[int] = ..., char_count: _Optional[int] = ..., budget_tokens: _Optional[int] = ..., budget_chars: _Optional[int] = ..., truncated_hits: _Optional[int] = ...) -> None: ...

class StageTiming(_message.Message):
    __slots__ = ("stage", "millis")
    STAGE_FIELD_NUMBER: _ClassVar[int]
    MILLIS_FIELD_NUMBER: _ClassVar[int]
    stage: str
    millis: float
    def __init__(self, stage: _Optional[str] = ..., millis: _Optional[float] = ...) -> None: ...

class RetrieveResponse(_message.Message):
    __slots__ = ("hits", "context", "collection", "mode", "fusion", "applied_filters", "total_candidates", "timings", "warnings", "cache_hit", "embedding_cache_hit", "query_tokens", "keywords")
    HITS_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    FUSION_FIELD_NUMBER: _ClassVar[int]
    APPLIED_FILTERS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_CANDIDATES_FIELD_NUMBER: _ClassVar[int]
    TIMINGS_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    CACHE_HIT_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_CACHE_HIT_FIELD_NUMBER: _ClassVar[int]
    QUERY_TOKENS_FIELD_NUMBER: _ClassVar[int]
    KEYWORDS_FIELD_NUMBER: _ClassVar[int]
    hits: _containers.RepeatedCompositeFieldContainer[Hit]
    context: RetrievedContext
    collection: str
    mode: RetrievalMode
    fusion: FusionMethod
    applied_filters: _containers.RepeatedScalarFieldContainer[str]
    total_candidates: int
    timings: _containers.RepeatedCompositeFieldContainer[StageTiming]
    warnings: _containers.RepeatedScalarFieldContainer[str]
    cache_hit: bool
    embedding_cache_hit: bool
    query_tokens: int
    keywords: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, hits: _Optional[_Iterable[_Union[Hit, _Mapping]]] = ..., context: _Optional[_Union[RetrievedContext, _Mapping]] = ..., collection: _Optional[str] = ..., mode: _Optional[_Union[RetrievalMode, str]] = ..., fusion: _Optional[_Union[FusionMethod, str]] = ..., applied_filters: _Optional[_Iterable[str]] = ..., total_candidates: _Optional[int] = ..., timings: _Optional[_Iterable[_Union[StageTiming, _Mapping]]] = ..., warnings: _Optional[_Iterable[str]] = ..., cache_hit: _Optional[bool] = ..., embedding_cache_hit: _Optional[bool] = ..., query_tokens: _Optional[int] = ..., keywords: _Optional[_Iterable[str]] = ...) -> None: ...

class ClearCacheRequest(_message.Message):
    __slots__ = ("collection",)
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    collection: str
    def __init__(self, collection: _Optional[str] = ...) -> None: ...

class ClearCacheResponse(_message.Message):
    __slots__ = ("retrieval_entries", "embedding_entries", "processes", "complete")
    RETRIEVAL_ENTRIES_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_ENTRIES_FIELD_NUMBER: _ClassVar[int]
    PROCESSES_FIELD_NUMBER: _ClassVar[int]
    COMPLETE_FIELD_NUMBER: _ClassVar[int]
    retrieval_entries: int
    embedding_entries: int
    processes: _containers.RepeatedCompositeFieldContainer[ProcessCacheClear]
    complete: bool
    def __init__(self, retrieval_entries: _Optional[int] = ..., embedding_entries: _Optional[int] = ..., processes: _Optional[_Iterable[_Union[ProcessCacheClear, _Mapping]]] = ..., complete: _Optional[bool] = ...) -> None: ...

class ProcessCacheClear(_message.Message):
    __slots__ = ("process", "pid", "cleared", "retrieval_entries", "embedding_entries", "error")
    PROCESS_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    CLEARED_FIELD_NUMBER: _ClassVar[int]
    RETRIEVAL_ENTRIES_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_ENTRIES_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    process: int
    pid: int
    cleared: bool
    retrieval_entries: int
    embedding_entries: int
    error: str
    def __init__(self, process: _Optional[int] = ..., pid: _Optional[int] = ..., cleared: _Optional[bool] = ..., retrieval_entries: _Optional[int] = ..., embedding_entries: _Optional[int] = ..., error: _Optional[str] = ...) -> None: ...

class AnswerRequest(_message.Message):
    __slots__ = ("retrieve", "template", "temperature", "max_tokens", "rewrite")
    RETRIEVE_FIELD_NUMBER: _ClassVar[int]
    TEMPLATE_FIELD_NUMBER: _ClassVar[int]
    TEMPERATURE_FIELD_NUMBER: _ClassVar[int]
    MAX_TOKENS_FIELD_NUMBER: _ClassVar[int]
    REWRITE_FIELD_NUMBER: _ClassVar[int]
    retrieve: RetrieveRequest
    template: str
    temperature: float
    max_tokens: int
    rewrite: bool
    def __init__(self, retrieve: _Optional[_Union[RetrieveRequest, _Mapping]] = ..., template: _Optional[str] = ..., temperature: _Optional[float] = ..., max_tokens: _Optional[int] = ..., rewrite: _Optional[bool] = ...) -> None: ...

class AnswerStarted(_message.Message):
    __slots__ = ("retrieval", "template")
    RETRIEVAL_FIELD_NUMBER: _ClassVar[int]
    TEMPLATE_FIELD_NUMBER: _ClassVar[int]
    retrieval: RetrieveResponse
    template: str
    def __init__(self, retrieval: _Optional[_Union[RetrieveResponse, _Mapping]] = ..., template: _Optional[str] = ...) -> None: ...

class AnswerDelta(_message.Message):
    __slots__ = ("text",)
    TEXT_FIELD_NUMBER: _ClassVar[int]
    text: str
    def __init__(self, text: _Optional[str] = ...) -> None: ...

class TokenUsage(_message.Message):
    __slots__ = ("prompt_tokens", "completion_tokens")
    PROMPT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COMPLETION_TOKENS_FIELD_NUMBER: _ClassVar[int]
    prompt_tokens: int
    completion_tokens: int
    def __init__(self, prompt_tokens: _Optional[int] = ..., completion_tokens: _Optional[int] = ...) -> None: ...

class AnswerSummary(_message.Message):
    __slots__ = ("finish_reason", "usage", "citations", "invalid_citations", "faithfulness", "generator", "model", "timings", "rewritten_queries", "text")
    FINISH_REASON_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    CITATIONS_FIELD_NUMBER: _ClassVar[int]
    INVALID_CITATIONS_FIELD_NUMBER: _ClassVar[int]
    FAITHFULNESS_FIELD_NUMBER: _ClassVar[int]
    GENERATOR_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    TIMINGS_FIELD_NUMBER: _ClassVar[int]
    REWRITTEN_QUERIES_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    finish_reason: str
    usage: TokenUsage
    citations: _containers.RepeatedCompositeFieldContainer[Citation]
    invalid_citations: int
    faithfulness: float
    generator: str
    model: str
    timings: _containers.RepeatedCompositeFieldContainer[StageTiming]
    rewritten_queries: _containers.RepeatedScalarFieldContainer[str]
    text: str
    def __init__(self, finish_reason: _Optional[str] = ..., usage: _Optional[_Union[TokenUsage, _Mapping]] = ..., citations: _Optional[_Iterable[_Union[Citation, _Mapping]]] = ..., invalid_citations: _Optional[int] = ..., faithfulness: _Optional[float] = ..., generator: _Optional[str] = ..., model: _Optional[str] = ..., timings: _Optional[_Iterable[_Union[StageTiming, _Mapping]]] = ..., rewritten_queries: _Optional[_Iterable[str]] = ..., text: _Optional[str] = ...) -> None: ...

class AnswerResponse(_message.Message):
    __slots__ = ("started", "delta", "summary")
    STARTED_FIELD_NUMBER: _ClassVar[int]
    DELTA_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    started: AnswerStarted
    delta: AnswerDelta
    summary: AnswerSummary
    def __init__(self, started: _Optional[_Union[AnswerStarted, _Mapping]] = ..., delta: _Optional[_Union[AnswerDelta, _Mapping]] = ..., summary: _Optional[_Union[AnswerSummary, _Mapping]] = ...) -> None: ...
