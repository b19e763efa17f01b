"""A client-streaming UpsertDocuments refused by the primary of `serve --processes 2` ends with
the primary's own status, message and rich details, every time, whichever process the
connection reached.

The primary refuses the stream at its first message while the caller (and a reader forwarding
it) still sends the rest; a reader that let a send racing with that refusal fail the forwarded
call reported INTERNAL ("Internal error from Core") instead. Many channels, each its own
connection, land on both processes (tests/serving_process.py tells which), and each sends many
refused streams.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Iterator

import grpc
import pytest
from grpc_status import rpc_status

from groundwire.v1 import common_pb2 as common
from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import index_service_pb2_grpc as ix_grpc
from tests.serve_subprocess import ServeSubprocess
from tests.serving_process import on_reader

CHANNELS = 12
STREAMS = {True: 240, False: 24}  # refused streams sent through the reader / the primary
FOLLOWING = 200  # messages the caller still streams after the refused first one
COLLECTION = "notes"
PER_MESSAGE = 256  # indexing.max_documents_per_message's default


@dataclasses.dataclass(frozen=True)
class Channel:
    """One channel (its own connection) and whether a reader process serves it."""

    channel: grpc.Channel
    index: ix_grpc.IndexServiceStub
    on_reader: bool = False


@dataclasses.dataclass(frozen=True)
class Refusal:
    first: ix.UpsertDocumentsRequest
    code: grpc.StatusCode
    message: str


REFUSALS = {
    "unknown-collection": Refusal(
        ix.UpsertDocumentsRequest(
            collection="missing", documents=[common.Document(document_id="d", text="Hello.")]
        ),
        grpc.StatusCode.NOT_FOUND,
        "collection 'missing' does not exist; create it with CreateCollection "
        "or list collections with ListCollections",
    ),
    "too-many-documents": Refusal(
        ix.UpsertDocumentsRequest(
            collection=COLLECTION,
            documents=[
                common.Document(document_id=f"d{n}", text="Hello.") for n in range(PER_MESSAGE + 1)
            ],
        ),
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        f"documents: at most {PER_MESSAGE} documents per message; got {PER_MESSAGE + 1}; "
        "send smaller messages",
    ),
}


def _connect(target: str) -> grpc.Channel:
    # a local subchannel pool: every channel opens its own TCP connection
    channel = grpc.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)])
    grpc.channel_ready_future(channel).result(timeout=30)
    return channel


@pytest.fixture(scope="module")
def channels(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Channel]]:
    directory = tmp_path_factory.mktemp("refusals")
    server = ServeSubprocess.start(
        directory / "data", directory / "server.log", env={"GROUNDWIRE_SERVER__PROCESSES": "2"}
    )
    opened: list[grpc.Channel] = []
    try:
        opened = [_connect(server.target) for _ in range(CHANNELS)]
        index = ix_grpc.IndexServiceStub(opened[0])
        index.CreateCollection(ix.CreateCollectionRequest(name=COLLECTION))
        note = common.Document(document_id="intro", text="Groundwire keeps notes.")
        index.UpsertDocuments(
            iter([ix.UpsertDocumentsRequest(collection=COLLECTION, documents=[note])])
        )
        readers = on_reader(opened, COLLECTION)
        yield [
            Channel(channel, ix_grpc.IndexServiceStub(channel), reader)
            for channel, reader in zip(opened, readers, strict=True)
        ]
    finally:
        for channel in opened:
            channel.close()
        server.stop()


def _stream(first: ix.UpsertDocumentsRequest) -> Iterator[ix.UpsertDocumentsRequest]:
    yield first
    text = "A note the primary never reads, streamed after the refused message. " * 8
    for number in range(FOLLOWING):
        document = common.Document(document_id=f"later-{number}", text=text)
        yield ix.UpsertDocumentsRequest(collection=COLLECTION, documents=[document])


def test_connections_reach_the_reader(channels: list[Channel]) -> None:
    on_reader = [c.on_reader for c in channels]
    assert any(on_reader) and not all(on_reader), on_reader


@pytest.mark.parametrize("refusal", REFUSALS.values(), ids=REFUSALS.keys())
def test_a_refused_stream_ends_with_the_primarys_status_every_time(
    channels: list[Channel], refusal: Refusal
) -> None:
    expected = (refusal.code.name, refusal.message, refusal.message)  # rich details relayed too
    for reader in (True, False):
        served = [c for c in channels if c.on_reader is reader]
        seen: collections.Counter[tuple[str, str, str | None]] = collections.Counter()
        for number in range(STREAMS[reader]):
            with pytest.raises(grpc.RpcError) as raised:
                served[number % len(served)].index.UpsertDocuments(
                    _stream(refusal.first), timeout=60
                )
            error = raised.value
            status = rpc_status.from_call(error)  # type: ignore[arg-type]
            detail = None if status is None else status.message
            seen[(error.code().name, error.details(), detail)] += 1
        assert seen == {expected: STREAMS[reader]}, ("reader" if reader else "primary", seen)
