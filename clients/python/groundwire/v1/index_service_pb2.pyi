from groundwire.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class DenseIndexKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DENSE_INDEX_KIND_UNSPECIFIED: _ClassVar[DenseIndexKind]
    DENSE_INDEX_KIND_FLAT: _ClassVar[DenseIndexKind]
    DENSE_INDEX_KIND_HNSW: _ClassVar[DenseIndexKind]
    DENSE_INDEX_KIND_IVF_FLAT: _ClassVar[DenseIndexKind]
    DENSE_INDEX_KIND_AUTO: _ClassVar[DenseIndexKind]

class ChunkerKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CHUNKER_KIND_UNSPECIFIED: _ClassVar[ChunkerKind]
    CHUNKER_KIND_STRUCTURE: _ClassVar[ChunkerKind]
    CHUNKER_KIND_FIXED: _ClassVar[ChunkerKind]
    CHUNKER_KIND_SENTENCE: _ClassVar[ChunkerKind]

class DocumentOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DOCUMENT_OUTCOME_UNSPECIFIED: _ClassVar[DocumentOutcome]
    DOCUMENT_OUTCOME_UPSERTED: _ClassVar[DocumentOutcome]
    DOCUMENT_OUTCOME_UNCHANGED: _ClassVar[DocumentOutcome]
    DOCUMENT_OUTCOME_FAILED: _ClassVar[DocumentOutcome]
DENSE_INDEX_KIND_UNSPECIFIED: DenseIndexKind
DENSE_INDEX_KIND_FLAT: DenseIndexKind
DENSE_INDEX_KIND_HNSW: DenseIndexKind
DENSE_INDEX_KIND_IVF_FLAT: DenseIndexKind
DENSE_INDEX_KIND_AUTO: DenseIndexKind
CHUNKER_KIND_UNSPECIFIED: ChunkerKind
CHUNKER_KIND_STRUCTURE: ChunkerKind
CHUNKER_KIND_FIXED: ChunkerKind
CHUNKER_KIND_SENTENCE: ChunkerKind
DOCUMENT_OUTCOME_UNSPECIFIED: DocumentOutcome
DOCUMENT_OUTCOME_UPSERTED: DocumentOutcome
DOCUMENT_OUTCOME_UNCHANGED: DocumentOutcome
DOCUMENT_OUTCOME_FAILED: DocumentOutcome

class DenseIndexConfig(_message.Message):
    __slots__ = ("kind", "hnsw_m", "hnsw_ef_construction", "hnsw_ef_search", "ivf_nlist", "ivf_nprobe")
    KIND_FIELD_NUMBER: _ClassVar[int]
    HNSW_M_FIELD_NUMBER: _ClassVar[int]
    HNSW_EF_CONSTRUCTION_FIELD_NUMBER: _ClassVar[int]
    HNSW_EF_SEARCH_FIELD_NUMBER: _ClassVar[int]
    IVF_NLIST_FIELD_NUMBER: _ClassVar[int]
    IVF_NPROBE_FIELD_NUMBER: _ClassVar[int]
    kind: DenseIndexKind
    hnsw_m: int
    hnsw_ef_construction: int
    hnsw_ef_search: int
    ivf_nlist: int
    ivf_nprobe: int
    def __init__(self, kind: _Optional[_Union[DenseIndexKind, str]] = ..., hnsw_m: _Optional[int] = ..., hnsw_ef_construction: _Optional[int] = ..., hnsw_ef_search: _Optional[int] = ..., ivf_nlist: _Optional[int] = ..., ivf_nprobe: _Optional[int] = ...) -> None: ...

class ChunkingOptions(_message.Message):
    __slots__ = ("kind", "max_tokens", "overlap_tokens")
    KIND_FIELD_NUMBER: _ClassVar[int]
    MAX_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OVERLAP_TOKENS_FIELD_NUMBER: _ClassVar[int]
    kind: ChunkerKind
    max_tokens: int
    overlap_tokens: int
    def __init__(self, kind: _Optional[_Union[ChunkerKind, str]] = ..., max_tokens: _Optional[int] = ..., overlap_tokens: _Optional[int] = ...) -> None: ...

class UpsertDocumentsRequest(_message.Message):
    __slots__ = ("collection", "documents", "chunking")
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    CHUNKING_FIELD_NUMBER: _ClassVar[int]
    collection: str
    documents: _containers.RepeatedCompositeFieldContainer[_common_pb2.Document]
    chunking: ChunkingOptions
    def __init__(self, collection: _Optional[str] = ..., documents: _Optional[_Iterable[_Union[_common_pb2.Document, _Mapping]]] = ..., chunking: _Optional[_Union[ChunkingOptions, _Mapping]] = ...) -> None: ...

class DocumentResult(_message.Message):
    __slots__ = ("document_id", "outcome", "chunk_count", "error", "risk_flags")
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    CHUNK_COUNT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    RISK_FLAGS_FIELD_NUMBER: _ClassVar[int]
    document_id: str
    outcome: DocumentOutcome
    chunk_count: int
    error: str
    risk_flags: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, document_id: _Optional[str] = ..., outcome: _Optional[_Union[DocumentOutcome, str]] = ..., chunk_count: _Optional[int] = ..., error: _Optional[str] = ..., risk_flags: _Optional[_Iterable[str]] = ...) -> None: ...

class UpsertDocumentsResponse(_message.Message):
    __slots__ = ("results", "upserted", "unchanged", "failed", "chunks_written", "sequence")
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    UPSERTED_FIELD_NUMBER: _ClassVar[int]
    UNCHANGED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_WRITTEN_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[DocumentResult]
    upserted: int
    unchanged: int
    failed: int
    chunks_written: int
    sequence: int
    def __init__(self, results: _Optional[_Iterable[_Union[DocumentResult, _Mapping]]] = ..., upserted: _Optional[int] = ..., unchanged: _Optional[int] = ..., failed: _Optional[int] = ..., chunks_written: _Optional[int] = ..., sequence: _Optional[int] = ...) -> None: ...

class DeleteDocumentsRequest(_message.Message):
    __slots__ = ("collection", "document_ids")
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_IDS_FIELD_NUMBER: _ClassVar[int]
    collection: str
    document_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, collection: _Optional[str] = ..., document_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class DeleteDocumentsResponse(_message.Message):
    __slots__ = ("deleted", "not_found", "sequence")
    DELETED_FIELD_NUMBER: _ClassVar[int]
    NOT_FOUND_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    deleted: int
    not_found: _containers.RepeatedScalarFieldContainer[str]
    sequence: int
    def __init__(self, deleted: _Optional[int] = ..., not_found: _Optional[_Iterable[str]] = ..., sequence: _Optional[int] = ...) -> None: ...

class GetDocumentRequest(_message.Message):
    __slots__ = ("collection", "document_id")
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    collection: str
    document_id: str
    def __init__(self, collection: _Optional[str] = ..., document_id: _Optional[str] = ...) -> None: ...

class GetDocumentResponse(_message.Message):
    __slots__ = ("document", "content_hash", "chunks")
    DOCUMENT_FIELD_NUMBER: _ClassVar[int]
    CONTENT_HASH_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    document: _common_pb2.Document
    content_hash: str
    chunks: _containers.RepeatedCompositeFieldContainer[_common_pb2.Chunk]
    def __init__(self, document: _Optional[_Union[_common_pb2.Document, _Mapping]] = ..., content_hash: _Optional[str] = ..., chunks: _Optional[_Iterable[_Union[_common_pb2.Chunk, _Mapping]]] = ...) -> None: ...

class CreateCollectionRequest(_message.Message):
    __slots__ = ("name", "dense_index", "chunking", "description")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DENSE_INDEX_FIELD_NUMBER: _ClassVar[int]
    CHUNKING_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    name: str
    dense_index: DenseIndexConfig
    chunking: ChunkingOptions
    description: str
    def __init__(self, name: _Optional[str] = ..., dense_index: _Optional[_Union[DenseIndexConfig, _Mapping]] = ..., chunking: _Optional[_Union[ChunkingOptions, _Mapping]] = ..., description: _Optional[str] = ...) -> None: ...

class CollectionInfo(_message.Message):
    __slots__ = ("name", "description", "dense_index", "chunking", "document_count", "chunk_count", "embedding_model", "embedding_dim", "tuned_model")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    DENSE_INDEX_FIELD_NUMBER: _ClassVar[int]
    CHUNKING_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_COUNT_FIELD_NUMBER: _ClassVar[int]
    CHUNK_COUNT_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_DIM_FIELD_NUMBER: _ClassVar[int]
    TUNED_MODEL_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    dense_index: DenseIndexConfig
    chunking: ChunkingOptions
    document_count: int
    chunk_count: int
    embedding_model: str
    embedding_dim: int
    tuned_model: str
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., dense_index: _Optional[_Union[DenseIndexConfig, _Mapping]] = ..., chunking: _Optional[_Union[ChunkingOptions, _Mapping]] = ..., document_count: _Optional[int] = ..., chunk_count: _Optional[int] = ..., embedding_model: _Optional[str] = ..., embedding_dim: _Optional[int] = ..., tuned_model: _Optional[str] = ...) -> None: ...

class CreateCollectionResponse(_message.Message):
    __slots__ = ("collection",)
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    collection: CollectionInfo
    def __init__(self, collection: _Optional[_Union[CollectionInfo, _Mapping]] = ...) -> None: ...

class DropCollectionRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class DropCollectionResponse(_message.Message):
    __slots__ = ("dropped_documents",)
    DROPPED_DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    dropped_documents: int
    def __init__(self, dropped_documents: _Optional[int] = ...) -> None: ...

class ListCollectionsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListCollectionsResponse(_message.Message):
    __slots__ = ("collections",)
    COLLECTIONS_FIELD_NUMBER: _ClassVar[int]
    collections: _containers.RepeatedCompositeFieldContainer[CollectionInfo]
    def __init__(self, collections: _Optional[_Iterable[_Union[CollectionInfo, _Mapping]]] = ...) -> None: ...

class StatsRequest(_message.Message):
    __slots__ = ("collection",)
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    collection: str
    def __init__(self, collection: _Optional[str] = ...) -> None: ...

class StatsResponse(_message.Message):
    __slots__ = ("collection", "sequence", "dense_sequence", "lexical_sequence", "dense_vectors", "tombstones", "disk_bytes", "dense_memory_bytes", "dense_device", "dense_engine", "embedding_cache_hits", "embedding_cache_misses", "retrieval_cache_hits", "retrieval_cache_misses", "retrieval_cache_entries", "memories", "link_edges", "device_memory_allocated_bytes", "device_memory_reserved_bytes", "device_memory_total_bytes", "cache_processes")
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    DENSE_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    LEXICAL_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    DENSE_VECTORS_FIELD_NUMBER: _ClassVar[int]
    TOMBSTONES_FIELD_NUMBER: _ClassVar[int]
    DISK_BYTES_FIELD_NUMBER: _ClassVar[int]
    DENSE_MEMORY_BYTES_FIELD_NUMBER: _ClassVar[int]
    DENSE_DEVICE_FIELD_NUMBER: _ClassVar[int]
    DENSE_ENGINE_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_CACHE_HITS_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_CACHE_MISSES_FIELD_NUMBER: _ClassVar[int]
    RETRIEVAL_CACHE_HITS_FIELD_NUMBER: _ClassVar[int]
    RETRIEVAL_CACHE_MISSES_FIELD_NUMBER: _ClassVar[int]
    RETRIEVAL_CACHE_ENTRIES_FIELD_NUMBER: _ClassVar[int]
    MEMORIES_FIELD_NUMBER: _ClassVar[int]
    LINK_EDGES_FIELD_NUMBER: _ClassVar[int]
    DEVICE_MEMORY_ALLOCATED_BYTES_FIELD_NUMBER: _ClassVar[int]
    DEVICE_MEMORY_RESERVED_BYTES_FIELD_NUMBER: _ClassVar[int]
    DEVICE_MEMORY_TOTAL_BYTES_FIELD_NUMBER: _ClassVar[int]
    CACHE_PROCESSES_FIELD_NUMBER: _ClassVar[int]
    collection: CollectionInfo
    sequence: int
    dense_sequence: int
    lexical_sequence: int
    dense_vectors: int
    tombstones: int
    disk_bytes: int
    dense_memory_bytes: int
    dense_device: str
    dense_engine: str
    embedding_cache_hits: int
    embedding_cache_misses: int
    retrieval_cache_hits: int
    retrieval_cache_misses: int
    retrieval_cache_entries: int
    memories: int
    link_edges: int
    device_memory_allocated_bytes: int
    device_memory_reserved_bytes: int
    device_memory_total_bytes: int
    cache_processes: int
    def __init__(self, collection: _Optional[_Union[CollectionInfo, _Mapping]] = ..., sequence: _Optional[int] = ..., dense_sequence: _Optional[int] = ..., lexical_sequence: _Optional[int] = ..., dense_vectors: _Optional[int] = ..., tombstones: _Optional[int] = ..., disk_bytes: _Optional[int] = ..., dense_memory_bytes: _Optional[int] = ..., dense_device: _Optional[str] = ..., dense_engine: _Optional[str] = ..., embedding_cache_hits: _Optional[int] = ..., embedding_cache_misses: _Optional[int] = ..., retrieval_cache_hits: _Optional[int] = ..., retrieval_cache_misses: _Optional[int] = ..., retrieval_cache_entries: _Optional[int] = ..., memories: _Optional[int] = ..., link_edges: _Optional[int] = ..., device_memory_allocated_bytes: _Optional[int] = ..., device_memory_reserved_bytes: _Optional[int] = ..., device_memory_total_bytes: _Optional[int] = ..., cache_processes: _Optional[int] = ...) -> None: ...

class CompactCollectionRequest(_message.Message):
    __slots__ = ("collection",)
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    collection: str
    def __init__(self, collection: _Optional[str] = ...) -> None: ...

class CompactCollectionResponse(_message.Message):
    __slots__ = ("removed_tombstones", "disk_bytes_before", "disk_bytes_after", "sequence")
    REMOVED_TOMBSTONES_FIELD_NUMBER: _ClassVar[int]
    DISK_BYTES_BEFORE_FIELD_NUMBER: _ClassVar[int]
    DISK_BYTES_AFTER_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    removed_tombstones: int
    disk_bytes_before: int
    disk_bytes_after: int
    sequence: int
    def __init__(self, removed_tombstones: _Optional[int] = ..., disk_bytes_before: _Optional[int] = ..., disk_bytes_after: _Optional[int] = ..., sequence: _Optional[int] = ...) -> None: ...

class SnapshotInfo(_message.Message):
    __slots__ = ("snapshot_id", "collection", "sequence", "document_count", "chunk_count", "size_bytes", "created_unix_ms")
    SNAPSHOT_ID_FIELD_NUMBER: _ClassVar[int]
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_COUNT_FIELD_NUMBER: _ClassVar[int]
    CHUNK_COUNT_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    CREATED_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    snapshot_id: str
    collection: str
    sequence: int
    document_count: int
    chunk_count: int
    size_bytes: int
    created_unix_ms: int
    def __init__(self, snapshot_id: _Optional[str] = ..., collection: _Optional[str] = ..., sequence: _Optional[int] = ..., document_count: _Optional[int] = ..., chunk_count: _Optional[int] = ..., size_bytes: _Optional[int] = ..., created_unix_ms: _Optional[int] = ...) -> None: ...

class SnapshotCollectionRequest(_message.Message):
    __slots__ = ("collection",)
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    collection: str
    def __init__(self, collection: _Optional[str] = ...) -> None: ...

class SnapshotCollectionResponse(_message.Message):
    __slots__ = ("snapshot",)
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    snapshot: SnapshotInfo
    def __init__(self, snapshot: _Optional[_Union[SnapshotInfo, _Mapping]] = ...) -> None: ...

class ListSnapshotsRequest(_message.Message):
    __slots__ = ("collection",)
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    collection: str
    def __init__(self, collection: _Optional[str] = ...) -> None: ...

class ListSnapshotsResponse(_message.Message):
    __slots__ = ("snapshots",)
    SNAPSHOTS_FIELD_NUMBER: _ClassVar[int]
    snapshots: _containers.RepeatedCompositeFieldContainer[SnapshotInfo]
    def __init__(self, snapshots: _Optional[_Iterable[_Union[SnapshotInfo, _Mapping]]] = ...) -> None: ...

class RestoreCollectionRequest(_message.Message):
    __slots__ = ("collection", "snapshot_id", "target_collection")
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_COLLECTION_FIELD_NUMBER: _ClassVar[int]
    collection: str
    snapshot_id: str
    target_collection: str
    def __init__(self, collection: _Optional[str] = ..., snapshot_id: _Optional[str] = ..., target_collection: _Optional[str] = ...) -> None: ...

class RestoreCollectionResponse(_message.Message):
    __slots__ = ("collection", "sequence")
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    collection: CollectionInfo
    sequence: int
    def __init__(self, collection: _Optional[_Union[CollectionInfo, _Mapping]] = ..., sequence: _Optional[int] = ...) -> None: ...

class DeleteSnapshotRequest(_message.Message):
    __slots__ = ("collection", "snapshot_id")
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_ID_FIELD_NUMBER: _ClassVar[int]
    collection: str
    snapshot_id: str
    def __init__(self, collection: _Optional[str] = ..., snapshot_id: _Optional[str] = ...) -> None: ...

class DeleteSnapshotResponse(_message.Message):
    __slots__ = ("freed_bytes",)
    FREED_BYTES_FIELD_NUMBER: _ClassVar[int]
    freed_bytes: int
    def __init__(self, freed_bytes: _Optional[int] = ...) -> None: ...

class Memory(_message.Message):
    __slots__ = ("text", "importance", "timestamp_unix_ms", "metadata")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    TEXT_FIELD_NUMBER: _ClassVar[int]
    IMPORTANCE_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    text: str
    importance: float
    timestamp_unix_ms: int
    metadata: _containers.ScalarMap[str, str]
    def __init__(self, text: _Optional[str] = ..., importance: _Optional[float] = ..., timestamp_unix_ms: _Optional[int] = ..., metadata: _Optional[_Mapping[str, str]] = ...) -> None: ...

class AddMemoriesRequest(_message.Message):
    __slots__ = ("collection", "memories")
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    MEMORIES_FIELD_NUMBER: _ClassVar[int]
    collection: str
    memories: _containers.RepeatedCompositeFieldContainer[Memory]
    def __init__(self, collection: _Optional[str] = ..., memories: _Optional[_Iterable[_Union[Memory, _Mapping]]] = ...) -> None: ...

class AddMemoriesResponse(_message.Message):
    __slots__ = ("memory_ids",)
    MEMORY_IDS_FIELD_NUMBER: _ClassVar[int]
    memory_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, memory_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class TuneCollectionRequest(_message.Message):
    __slots__ = ("collection", "max_steps", "max_epochs", "max_pairs", "max_seconds")
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    MAX_STEPS_FIELD_NUMBER: _ClassVar[int]
    MAX_EPOCHS_FIELD_NUMBER: _ClassVar[int]
    MAX_PAIRS_FIELD_NUMBER: _ClassVar[int]
    MAX_SECONDS_FIELD_NUMBER: _ClassVar[int]
    collection: str
    max_steps: int
    max_epochs: int
    max_pairs: int
    max_seconds: float
    def __init__(self, collection: _Optional[str] = ..., max_steps: _Optional[int] = ..., max_epochs: _Optional[int] = ..., max_pairs: _Optional[int] = ..., max_seconds: _Optional[float] = ...) -> None: ...

class TuneCollectionResponse(_message.Message):
    __slots__ = ("model_id", "pairs", "train_pairs", "held_out_pairs", "epochs", "steps", "held_out_accuracy_before", "held_out_accuracy_after", "stopped_because", "chunks", "train_seconds", "reembed_seconds", "total_seconds", "section_vectors", "section_seconds")
    MODEL_ID_FIELD_NUMBER: _ClassVar[int]
    PAIRS_FIELD_NUMBER: _ClassVar[int]
    TRAIN_PAIRS_FIELD_NUMBER: _ClassVar[int]
    HELD_OUT_PAIRS_FIELD_NUMBER: _ClassVar[int]
    EPOCHS_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    HELD_OUT_ACCURACY_BEFORE_FIELD_NUMBER: _ClassVar[int]
    HELD_OUT_ACCURACY_AFTER_FIELD_NUMBER: _ClassVar[int]
    STOPPED_BECAUSE_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    TRAIN_SECONDS_FIELD_NUMBER: _ClassVar[int]
    REEMBED_SECONDS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_SECONDS_FIELD_NUMBER: _ClassVar[int]
    SECTION_VECTORS_FIELD_NUMBER: _ClassVar[int]
    SECTION_SECONDS_FIELD_NUMBER: _ClassVar[int]
    model_id: str
    pairs: int
    train_pairs: int
    held_out_pairs: int
    epochs: int
    steps: int
    held_out_accuracy_before: float
    held_out_accuracy_after: float
    stopped_because: str
    chunks: int
    train_seconds: float
    reembed_seconds: float
    total_seconds: float
    section_vectors: int
    section_seconds: float
    def __init__(self, model_id: _Optional[str] = ..., pairs: _Optional[int] = ..., train_pairs: _Optional[int] = ..., held_out_pairs: _Optional[int] = ..., epochs: _Optional[int] = ..., steps: _Optional[int] = ..., held_out_accuracy_before: _Optional[float] = ..., held_out_accuracy_after: _Optional[float] = ..., stopped_because: _Optional[str] = ..., chunks: _Optional[int] = ..., train_seconds: _Optional[float] = ..., reembed_seconds: _Optional[float] = ..., total_seconds: _Optional[float] = ..., section_vectors: _Optional[int] = ..., section_seconds: _Optional[float] = ...) -> None: ...
