"""groundwire as a load_driver system: Retrieve over gRPC through the Python client (one channel
shared by the client threads), hits reduced to document ids in rank order; and an ingest probe."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks.peers.load_driver import K, Search
from groundwire import Client, Document

PROBE_COLLECTION = "ingest-probe"


@contextmanager
def groundwire_search(target: str, collection: str, mode: str) -> Iterator[Search]:
    """Text -> the top-K documents (Retrieve with one hit per document first, so K distinct
    documents as the peers return); mode "dense" or "default" (the server's default mode,
    hybrid)."""
    with Client(target, timeout=300) as client:

        def search(text: str) -> Sequence[str]:
            options: dict[str, Any] = {
                "collection": collection,
                "top_k": K,
                "max_hits_per_document": 1,
            }
            if mode != "default":
                options["mode"] = mode
            reply = client.retrieve(text, **options)
            return list(dict.fromkeys(hit.chunk.document_id for hit in reply.hits))[:K]

        yield search


def groundwire_ingest(target: str, dataset: Path, documents: int) -> dict[str, Any]:
    """UpsertDocuments of the first `documents` python-faq sections (title as a Markdown heading)
    into a fresh collection: documents and chunks per second, end to end."""
    docs = []
    with (dataset / "corpus.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            if len(docs) >= documents:
                break
            if line.strip():
                doc = json.loads(line)
                text = f"# {doc['title']}\n\n{doc['text']}" if doc["title"] else doc["text"]
                docs.append(Document(document_id=doc["_id"], text=text))
    with Client(target, timeout=3600) as client:
        client.create_collection(PROBE_COLLECTION, exist_ok=True)
        started = time.perf_counter()
        reply = client.upsert_documents(docs, collection=PROBE_COLLECTION)
        seconds = time.perf_counter() - started
    return {
        "probe_documents": len(docs),
        "chunks": reply.chunks_written,
        "seconds": round(seconds, 1),
        "docs_per_s_with_embedding": round(len(docs) / seconds, 2),
        "chunks_per_s": round(reply.chunks_written / seconds, 2),
    }
