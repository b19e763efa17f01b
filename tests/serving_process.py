"""Which process of `serve --processes 2` serves each of several channels (one connection each).

Each channel caches one retrieval in the process that serves it; ClearCache, which a reader
forwards, empties the primary's cache only; so afterwards the channels whose Stats still report
cache entries are the reader's. Needs a collection holding at least one document.
"""

from __future__ import annotations

from collections.abc import Sequence

import grpc

from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import index_service_pb2_grpc as ix_grpc
from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc


def on_reader(channels: Sequence[grpc.Channel], collection: str) -> list[bool]:
    """For each channel, True when a reader process serves it (its cache entries survive a
    ClearCache); call it before anything else fills the caches of `collection`."""
    for number, channel in enumerate(channels):
        rs_grpc.RetrievalServiceStub(channel).Retrieve(
            rs.RetrieveRequest(query=f"probe question number {number}", collection=collection)
        )
    rs_grpc.RetrievalServiceStub(channels[0]).ClearCache(rs.ClearCacheRequest())
    return [
        ix_grpc.IndexServiceStub(channel)
        .Stats(ix.StatsRequest(collection=collection))
        .retrieval_cache_entries
        > 0
        for channel in channels
    ]
