"""The crash-safety workload: stream small multi-section documents into a server until it is
killed, then check through the API what survived.

Every document has SECTIONS headed sections, each stored as one chunk carrying a unique codeword,
so a document that is visible but not whole (a half-written upsert) is detectable. Used by
tests/e2e/test_crash_safety.py and benchmarks/durability/crash_rounds.py.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

import grpc

from core.embed.embedding_text import embedding_text
from groundwire.v1 import common_pb2 as common
from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import index_service_pb2_grpc as ix_grpc
from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc

COLLECTION = "crash"
SECTIONS = 3
MAX_DOCUMENTS_PER_CALL = 3
RPC_TIMEOUT_S = 120  # generous: the cores are shared, and a slow call is not a failure
KILL_NOTICE_S = 10  # an RPC failing this long before the kill is announced was not killed


def codeword(name: str, section: int) -> str:
    """The token only section `section` of document `name` contains."""
    return f"zq{name}s{section}"


def record_document(name: str) -> common.Document:
    """A Markdown document of SECTIONS short sections (one chunk each)."""
    sections = "\n".join(
        f"## Part {s}\n\nPart {s} of {name} records codeword {codeword(name, s)} for the audit.\n"
        for s in range(SECTIONS)
    )
    return common.Document(document_id=f"{name}.md", text=f"# Record {name}\n\n{sections}")


@dataclass
class Ledger:
    """Documents sent so far and the ones the server acknowledged (appended by the writer)."""

    attempted: list[str] = field(default_factory=list)
    acknowledged: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    """Calls or documents the server failed without being killed (never expected)."""
    acknowledged_sequence: int = 0
    """The highest store sequence an acknowledged upsert reported."""


def ingest_until_killed(
    target: str, round_no: int, ledger: Ledger, stop: threading.Event, seed: int
) -> None:
    """Upsert 1-3 documents per call until the server dies or `stop` is set."""
    rng = random.Random(seed)
    with grpc.insecure_channel(target) as channel:
        stub = ix_grpc.IndexServiceStub(channel)
        i = 0
        while not stop.is_set():
            docs = [
                record_document(f"r{round_no}d{i + k}")
                for k in range(rng.randint(1, MAX_DOCUMENTS_PER_CALL))
            ]
            i += len(docs)
            ids = [d.document_id for d in docs]
            ledger.attempted.extend(ids)
            request = ix.UpsertDocumentsRequest(collection=COLLECTION, documents=docs)
            try:
                response = stub.UpsertDocuments(iter([request]), timeout=RPC_TIMEOUT_S)
            except grpc.RpcError as error:
                # Killed before acknowledging: these documents may or may not exist. An error
                # that is not followed by the kill is a server failure, not a crash.
                if not stop.wait(KILL_NOTICE_S):
                    ledger.rejected.append(f"{ids}: {error.code().name}: {error.details()}")
                return
            ledger.acknowledged_sequence = max(ledger.acknowledged_sequence, response.sequence)
            for result in response.results:
                if result.outcome == ix.DOCUMENT_OUTCOME_UPSERTED:
                    ledger.acknowledged.append(result.document_id)
                else:
                    ledger.rejected.append(f"{result.document_id}: {result.error}")


@dataclass(frozen=True, slots=True)
class RoundCheck:
    """What a check after a restart found; all tuples empty means the round was clean."""

    visible: int
    """Documents the server returns (acknowledged ones plus in-flight ones that committed)."""
    lost: tuple[str, ...]
    """Acknowledged documents the server does not return."""
    half_written: tuple[str, ...]
    """Documents the server returns without all of their sections."""
    index_mismatches: tuple[str, ...]
    """Ways in which Stats or retrieval disagree with the stored documents."""
    store_problems: tuple[str, ...] = ()
    """Integrity problems of the SQLite store file (see core.store.integrity) and a store
    sequence behind one acknowledged or seen before."""

    @property
    def clean(self) -> bool:
        """No loss, no partial document, no index disagreement, a sound store."""
        return not (self.lost or self.half_written or self.index_mismatches or self.store_problems)


def check_after_restart(
    target: str, ledger: Ledger, fresh: Sequence[str], rng: random.Random
) -> RoundCheck:
    """Check every attempted document, Stats, and retrieval of `fresh` plus 3 older documents."""
    with grpc.insecure_channel(target) as channel:
        index, retrieval = ix_grpc.IndexServiceStub(channel), rs_grpc.RetrievalServiceStub(channel)
        acknowledged = set(ledger.acknowledged)
        visible: dict[str, list[common.Chunk]] = {}
        lost, half_written = [], []
        for document_id in dict.fromkeys(ledger.attempted):
            chunks = _get_chunks(index, document_id)
            if chunks is None:
                if document_id in acknowledged:
                    lost.append(document_id)
                continue
            visible[document_id] = chunks
            if not _whole(document_id, chunks):
                half_written.append(document_id)
        mismatches = _stats_mismatches(index, visible)
        fresh_ids = set(fresh)
        older = [d for d in visible if d not in fresh_ids]
        probes = [d for d in fresh if d in visible] + rng.sample(older, min(3, len(older)))
        for document_id in probes:
            mismatches.extend(_retrieval_mismatches(retrieval, document_id, visible))
    return RoundCheck(len(visible), tuple(lost), tuple(half_written), tuple(mismatches))


def _get_chunks(index: ix_grpc.IndexServiceStub, document_id: str) -> list[common.Chunk] | None:
    request = ix.GetDocumentRequest(collection=COLLECTION, document_id=document_id)
    try:
        return list(index.GetDocument(request, timeout=RPC_TIMEOUT_S).chunks)
    except grpc.RpcError as error:
        if error.code() is grpc.StatusCode.NOT_FOUND:
            return None
        raise


def _whole(document_id: str, chunks: list[common.Chunk]) -> bool:
    name = document_id.removesuffix(".md")
    return len(chunks) == SECTIONS and all(
        codeword(name, s) in chunk.text for s, chunk in enumerate(chunks)
    )


def _stats_mismatches(
    index: ix_grpc.IndexServiceStub, visible: dict[str, list[common.Chunk]]
) -> list[str]:
    stats = index.Stats(ix.StatsRequest(collection=COLLECTION), timeout=RPC_TIMEOUT_S)
    chunks = sum(len(c) for c in visible.values())
    found = []
    if not stats.dense_sequence == stats.lexical_sequence == stats.sequence:
        found.append(
            f"sequences differ: store {stats.sequence}, dense {stats.dense_sequence}, "
            f"lexical {stats.lexical_sequence}"
        )
    if stats.dense_vectors != stats.collection.chunk_count:
        found.append(
            f"{stats.dense_vectors} dense vectors for {stats.collection.chunk_count} stored chunks"
        )
    if (stats.collection.document_count, stats.collection.chunk_count) != (len(visible), chunks):
        found.append(
            f"Stats counts {stats.collection.document_count} documents and "
            f"{stats.collection.chunk_count} chunks; GetDocument shows {len(visible)} and {chunks}"
        )
    return found


def _retrieval_mismatches(
    retrieval: rs_grpc.RetrievalServiceStub,
    document_id: str,
    visible: dict[str, list[common.Chunk]],
) -> list[str]:
    """Lexical search for a section's codeword and dense search for its exact text find it."""
    name = document_id.removesuffix(".md")
    stored = {c.chunk_id for chunks in visible.values() for c in chunks}
    target = visible[document_id][1]
    queries = {
        rs.RETRIEVAL_MODE_LEXICAL: codeword(name, 1),
        rs.RETRIEVAL_MODE_DENSE: embedding_text(target.section_path, target.text),
    }
    found = []
    for mode, query in queries.items():
        request = rs.RetrieveRequest(query=query, collection=COLLECTION, top_k=10)
        request.hybrid.mode = mode
        hits = [h.chunk.chunk_id for h in retrieval.Retrieve(request, timeout=RPC_TIMEOUT_S).hits]
        label = rs.RetrievalMode.Name(mode)
        if target.chunk_id not in hits:
            found.append(f"{label} search misses {target.chunk_id}")
        if unknown := set(hits) - stored:
            found.append(f"{label} search returns chunks the store lacks: {sorted(unknown)}")
    return found
