"""ChunkingOptions through the real server: a collection's default chunker, per-upsert overrides,
and field-naming errors."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest

from groundwire.v1 import common_pb2 as common
from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import index_service_pb2_grpc as ix_grpc

FAQ = """\
# Programming FAQ

## How can my code discover the name of an object?

Generally speaking, it can't, because objects don't really have names. Essentially, assignment
always binds a name to a value; the same is true of def and class statements, but in that case
the value is a callable. Arguably the class has a name: even though it is bound to two names and
invoked through the name B the created instance is still reported as an instance of class A.
However, it is impossible to say whether the instance's name is a or b, since both names are
bound to the same value. Generally speaking it should not be necessary for your code to know the
names of particular values.
"""


@pytest.fixture(scope="module")
def windows(index: ix_grpc.IndexServiceStub) -> Iterator[ix.CollectionInfo]:
    chunking = ix.ChunkingOptions(kind=ix.CHUNKER_KIND_FIXED, max_tokens=40, overlap_tokens=8)
    created = index.CreateCollection(
        ix.CreateCollectionRequest(name="windows", chunking=chunking), timeout=30
    )
    yield created.collection
    index.DropCollection(ix.DropCollectionRequest(name="windows"), timeout=30)


def _upsert(
    index: ix_grpc.IndexServiceStub, document_id: str, chunking: ix.ChunkingOptions | None = None
) -> list[common.Chunk]:
    request = ix.UpsertDocumentsRequest(
        collection="windows",
        documents=[common.Document(document_id=document_id, text=FAQ)],
        chunking=chunking,
    )
    index.UpsertDocuments(iter([request]), timeout=120)
    got = index.GetDocument(
        ix.GetDocumentRequest(collection="windows", document_id=document_id), timeout=30
    )
    return list(got.chunks)


def test_the_collection_shows_and_uses_its_chunking(
    index: ix_grpc.IndexServiceStub, windows: ix.CollectionInfo
) -> None:
    chunks = _upsert(index, "faq.md")

    assert (windows.chunking.kind, windows.chunking.max_tokens) == (ix.CHUNKER_KIND_FIXED, 40)
    assert windows.chunking.overlap_tokens == 8
    assert len(chunks) > 2
    assert all(0 < chunk.token_estimate <= 40 for chunk in chunks)
    assert chunks[0].text.startswith("# Programming FAQ")
    for previous, following in zip(chunks, chunks[1:], strict=False):
        assert previous.text.split()[-1] in following.text.split()[:8]


def test_an_upsert_may_ask_for_another_chunker(
    index: ix_grpc.IndexServiceStub, windows: ix.CollectionInfo
) -> None:
    chunking = ix.ChunkingOptions(kind=ix.CHUNKER_KIND_SENTENCE, max_tokens=64)

    chunks = _upsert(index, "faq-sentences.md", chunking)

    assert all(chunk.text.endswith(".") for chunk in chunks)
    assert all(list(chunk.section_path)[-1].startswith("How can my code") for chunk in chunks)
    assert all(chunk.token_estimate <= 64 for chunk in chunks)


@pytest.mark.parametrize(
    ("chunking", "details"),
    [
        (
            ix.ChunkingOptions(kind=ix.CHUNKER_KIND_FIXED, max_tokens=200, overlap_tokens=200),
            "chunking.overlap_tokens: must be smaller than chunking.max_tokens (200); got 200",
        ),
        (
            ix.ChunkingOptions(max_tokens=8),
            "chunking.max_tokens: must be between 32 and 1024 tokens; got 8; "
            "chunking.overlap_tokens: must be smaller than chunking.max_tokens (8); got 20",
        ),
    ],
    ids=["overlap", "size"],
)
def test_bad_chunking_is_invalid_argument(
    index: ix_grpc.IndexServiceStub, chunking: ix.ChunkingOptions, details: str
) -> None:
    with pytest.raises(grpc.RpcError) as info:
        index.CreateCollection(
            ix.CreateCollectionRequest(name="never", chunking=chunking), timeout=30
        )

    assert info.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert info.value.details() == details
