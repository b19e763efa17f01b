"""Which process of `serve --processes 2` serves each of several channels (one connection each).

ClearCache empties every process's caches and reports each process's part
(`ClearCacheResponse.processes`, 0 = the primary). So, channel by channel: empty the caches,
cache one retrieval through the channel, and clear again: the process that reports the one
entry is the one serving that channel. Needs a collection holding at least one document and the
retrieval cache on (the default).
"""

from __future__ import annotations

from collections.abc import Sequence

import grpc

from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc

Metadata = tuple[tuple[str, str], ...]


def serving_process(
    channel: grpc.Channel, collection: str, probe: str, metadata: Metadata = ()
) -> int:
    """The number of the process serving `channel` (0: the primary, 1..: readers); `metadata`
    authenticates the calls (a writer's key when the server has keys)."""
    stub = rs_grpc.RetrievalServiceStub(channel)
    stub.ClearCache(rs.ClearCacheRequest(collection=collection), metadata=metadata)
    stub.Retrieve(rs.RetrieveRequest(query=probe, collection=collection), metadata=metadata)
    cleared = stub.ClearCache(rs.ClearCacheRequest(collection=collection), metadata=metadata)
    assert cleared.complete, cleared
    holding = [p.process for p in cleared.processes if p.retrieval_entries > 0]
    assert len(holding) == 1, f"one process should hold the probe's entry: {cleared}"
    return holding[0]


def on_reader(channels: Sequence[grpc.Channel], collection: str) -> list[bool]:
    """For each channel, True when a reader process serves it."""
    return [
        serving_process(channel, collection, f"probe question number {number}") > 0
        for number, channel in enumerate(channels)
    ]
