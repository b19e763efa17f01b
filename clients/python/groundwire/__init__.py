"""groundwire-client: sync and asyncio clients for a groundwire server.

The generated messages and stubs are in `groundwire.v1`; the commonly used messages are
re-exported here.
"""

from groundwire.answer_events import AnswerEvent, AnswerFinished, AnswerStarted, TokenDelta
from groundwire.answer_stream import AnswerStream
from groundwire.async_answer_stream import AsyncAnswerStream
from groundwire.async_client import AsyncClient
from groundwire.client import Client
from groundwire.connection import Connection
from groundwire.errors import FieldViolation, GroundwireError
from groundwire.retry import NO_RETRIES, RetryPolicy
from groundwire.v1.common_pb2 import Document, Filters, MetadataIn, MetadataRange
from groundwire.v1.index_service_pb2 import ChunkingOptions, DenseIndexConfig

__all__ = [
    "NO_RETRIES",
    "AnswerEvent",
    "AnswerFinished",
    "AnswerStarted",
    "AnswerStream",
    "AsyncAnswerStream",
    "AsyncClient",
    "ChunkingOptions",
    "Client",
    "Connection",
    "DenseIndexConfig",
    "Document",
    "FieldViolation",
    "Filters",
    "GroundwireError",
    "MetadataIn",
    "MetadataRange",
    "RetryPolicy",
    "TokenDelta",
]
