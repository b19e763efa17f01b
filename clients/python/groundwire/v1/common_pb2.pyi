from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RiskLevel(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RISK_LEVEL_UNSPECIFIED: _ClassVar[RiskLevel]
    RISK_LEVEL_NONE: _ClassVar[RiskLevel]
    RISK_LEVEL_LOW: _ClassVar[RiskLevel]
    RISK_LEVEL_MEDIUM: _ClassVar[RiskLevel]
    RISK_LEVEL_HIGH: _ClassVar[RiskLevel]

class SourceType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SOURCE_TYPE_UNSPECIFIED: _ClassVar[SourceType]
    SOURCE_TYPE_MARKDOWN: _ClassVar[SourceType]
    SOURCE_TYPE_TEXT: _ClassVar[SourceType]
    SOURCE_TYPE_HTML: _ClassVar[SourceType]
    SOURCE_TYPE_PDF: _ClassVar[SourceType]
    SOURCE_TYPE_MEMORY: _ClassVar[SourceType]
RISK_LEVEL_UNSPECIFIED: RiskLevel
RISK_LEVEL_NONE: RiskLevel
RISK_LEVEL_LOW: RiskLevel
RISK_LEVEL_MEDIUM: RiskLevel
RISK_LEVEL_HIGH: RiskLevel
SOURCE_TYPE_UNSPECIFIED: SourceType
SOURCE_TYPE_MARKDOWN: SourceType
SOURCE_TYPE_TEXT: SourceType
SOURCE_TYPE_HTML: SourceType
SOURCE_TYPE_PDF: SourceType
SOURCE_TYPE_MEMORY: SourceType

class Chunk(_message.Message):
    __slots__ = ("chunk_id", "document_id", "ordinal", "text", "section_path", "has_code", "token_estimate", "source_type", "source_path", "page", "metadata", "risk_flags", "risk_level")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    CHUNK_ID_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    ORDINAL_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SECTION_PATH_FIELD_NUMBER: _ClassVar[int]
    HAS_CODE_FIELD_NUMBER: _ClassVar[int]
    TOKEN_ESTIMATE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_TYPE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_PATH_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    RISK_FLAGS_FIELD_NUMBER: _ClassVar[int]
    RISK_LEVEL_FIELD_NUMBER: _ClassVar[int]
    chunk_id: str
    document_id: str
    ordinal: int
    text: str
    section_path: _containers.RepeatedScalarFieldContainer[str]
    has_code: bool
    token_estimate: int
    source_type: SourceType
    source_path: str
    page: int
    metadata: _containers.ScalarMap[str, str]
    risk_flags: _containers.RepeatedScalarFieldContainer[str]
    risk_level: RiskLevel
    def __init__(self, chunk_id: _Optional[str] = ..., document_id: _Optional[str] = ..., ordinal: _Optional[int] = ..., text: _Optional[str] = ..., section_path: _Optional[_Iterable[str]] = ..., has_code: _Optional[bool] = ..., token_estimate: _Optional[int] = ..., source_type: _Optional[_Union[SourceType, str]] = ..., source_path: _Optional[str] = ..., page: _Optional[int] = ..., metadata: _Optional[_Mapping[str, str]] = ..., risk_flags: _Optional[_Iterable[str]] = ..., risk_level: _Optional[_Union[RiskLevel, str]] = ...) -> None: ...

class Document(_message.Message):
    __slots__ = ("document_id", "text", "content", "source_type", "source_path", "title", "metadata")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_TYPE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_PATH_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    document_id: str
    text: str
    content: bytes
    source_type: SourceType
    source_path: str
    title: str
    metadata: _containers.ScalarMap[str, str]
    def __init__(self, document_id: _Optional[str] = ..., text: _Optional[str] = ..., content: _Optional[bytes] = ..., source_type: _Optional[_Union[SourceType, str]] = ..., source_path: _Optional[str] = ..., title: _Optional[str] = ..., metadata: _Optional[_Mapping[str, str]] = ...) -> None: ...

class ChunkScores(_message.Message):
    __slots__ = ("dense", "bm25", "fused", "rerank", "expansion_discount", "dense_rank", "bm25_rank", "memory")
    DENSE_FIELD_NUMBER: _ClassVar[int]
    BM25_FIELD_NUMBER: _ClassVar[int]
    FUSED_FIELD_NUMBER: _ClassVar[int]
    RERANK_FIELD_NUMBER: _ClassVar[int]
    EXPANSION_DISCOUNT_FIELD_NUMBER: _ClassVar[int]
    DENSE_RANK_FIELD_NUMBER: _ClassVar[int]
    BM25_RANK_FIELD_NUMBER: _ClassVar[int]
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    dense: float
    bm25: float
    fused: float
    rerank: float
    expansion_discount: float
    dense_rank: int
    bm25_rank: int
    memory: float
    def __init__(self, dense: _Optional[float] = ..., bm25: _Optional[float] = ..., fused: _Optional[float] = ..., rerank: _Optional[float] = ..., expansion_discount: _Optional[float] = ..., dense_rank: _Optional[int] = ..., bm25_rank: _Optional[int] = ..., memory: _Optional[float] = ...) -> None: ...

class MetadataRange(_message.Message):
    __slots__ = ("key", "min", "max")
    KEY_FIELD_NUMBER: _ClassVar[int]
    MIN_FIELD_NUMBER: _ClassVar[int]
    MAX_FIELD_NUMBER: _ClassVar[int]
    key: str
    min: float
    max: float
    def __init__(self, key: _Optional[str] = ..., min: _Optional[float] = ..., max: _Optional[float] = ...) -> None: ...

class MetadataIn(_message.Message):
    __slots__ = ("key", "values")
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    key: str
    values: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, key: _Optional[str] = ..., values: _Optional[_Iterable[str]] = ...) -> None: ...

class Filters(_message.Message):
    __slots__ = ("document_ids", "source_types", "has_code", "section_path_prefix", "metadata_equals", "metadata_ranges", "metadata_in")
    class MetadataEqualsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    DOCUMENT_IDS_FIELD_NUMBER: _ClassVar[int]
    SOURCE_TYPES_FIELD_NUMBER: _ClassVar[int]
    HAS_CODE_FIELD_NUMBER: _ClassVar[int]
    SECTION_PATH_PREFIX_FIELD_NUMBER: _ClassVar[int]
    METADATA_EQUALS_FIELD_NUMBER: _ClassVar[int]
    METADATA_RANGES_FIELD_NUMBER: _ClassVar[int]
    METADATA_IN_FIELD_NUMBER: _ClassVar[int]
    document_ids: _containers.RepeatedScalarFieldContainer[str]
    source_types: _containers.RepeatedScalarFieldContainer[SourceType]
    has_code: bool
    section_path_prefix: _containers.RepeatedScalarFieldContainer[str]
    metadata_equals: _containers.ScalarMap[str, str]
    metadata_ranges: _containers.RepeatedCompositeFieldContainer[MetadataRange]
    metadata_in: _containers.RepeatedCompositeFieldContainer[MetadataIn]
    def __init__(self, document_ids: _Optional[_Iterable[str]] = ..., source_types: _Optional[_Iterable[_Union[SourceType, str]]] = ..., has_code: _Optional[bool] = ..., section_path_prefix: _Optional[_Iterable[str]] = ..., metadata_equals: _Optional[_Mapping[str, str]] = ..., metadata_ranges: _Optional[_Iterable[_Union[MetadataRange, _Mapping]]] = ..., metadata_in: _Optional[_Iterable[_Union[MetadataIn, _Mapping]]] = ...) -> None: ...
