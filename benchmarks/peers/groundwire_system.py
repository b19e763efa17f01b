"""groundwire as a load_driver system: Retrieve over gRPC through the Python client (one channel
shared by the client threads), hits reduced to document ids in rank order; and an ingest probe."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks.peers.load_driver import K, Search
from core.embed.embedding_text import embedding_text
from core.embed.section_vectors import document_sections
from groundwire import Client, Document
from groundwire.connection import Connection

PROBE_COLLECTION = "ingest-probe"


@contextmanager
def groundwire_search(target: str, collection: str, mode: str) -> Iterator[Search]:
    """Text -> the top-K documents (Retrieve with one hit per document first, so K distinct
    documents as the peers return); mode "dense" or "default" (the server's default mode,
    hybrid). Each client thread has its own client and HTTP/2 connection, as separate callers
    would (a server with several processes on one port spreads connections, not calls)."""
    local = threading.local()
    clients: list[Client] = []
    lock = threading.Lock()
    own_connection = Connection(target, options=(("grpc.use_local_subchannel_pool", 1),))

    def client() -> Client:
        mine: Client | None = getattr(local, "client", None)
        if mine is None:
            mine = local.client = Client(own_connection, timeout=300)
            with lock:
                clients.append(mine)
        return mine

    def search(text: str) -> Sequence[str]:
        options: dict[str, Any] = {
            "collection": collection,
            "top_k": K,
            "max_hits_per_document": 1,
        }
        if mode != "default":
            options["mode"] = mode
        reply = client().retrieve(text, **options)
        return list(dict.fromkeys(hit.chunk.document_id for hit in reply.hits))[:K]

    try:
        yield search
    finally:
        for opened in clients:
            opened.close()


def groundwire_ingest(target: str, dataset: Path, documents: int) -> dict[str, Any]:
    """UpsertDocuments of the first `documents` python-faq sections (title as a Markdown heading)
    into a fresh collection: documents and chunks per second, end to end; beside it, the raw
    model's encode rate on the very chunks the server stored (`raw_encode`: sentence-transformers,
    torch) and the server's own passage path's (`raw_export`: onnxruntime, `load_export`)."""
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
        stored = [
            [
                (tuple(chunk.section_path), chunk.text)
                for chunk in client.get_document(
                    doc.document_id, collection=PROBE_COLLECTION
                ).chunks
            ]
            for doc in docs
        ]
    texts = [embedding_text(path, text) for chunks in stored for path, text in chunks]
    chunks_per_s = reply.chunks_written / seconds
    from sentence_transformers import SentenceTransformer

    from core.embed.sentence_transformer_embedder import default_model_path

    model = SentenceTransformer(default_model_path(), device="cpu")  # loaded once, for both
    raw = raw_encode_rate(texts, model)
    # what the indexer embeds besides: each section whole, unless it is one chunk's text
    known = set(texts)
    section_texts = list(
        dict.fromkeys(
            text for chunks in stored for _, text in document_sections(chunks) if text not in known
        )
    )
    raw_all = raw_encode_rate(texts + section_texts, model)
    export = load_export()
    raw_export = raw_export_rate(texts, export)
    raw_export_all = raw_export_rate(texts + section_texts, export)
    return {
        "probe_documents": len(docs),
        "chunks": reply.chunks_written,
        "seconds": round(seconds, 1),
        "docs_per_s_with_embedding": round(len(docs) / seconds, 2),
        "chunks_per_s": round(chunks_per_s, 2),
        "raw_encode": raw,
        "end_to_end_share_of_raw": round(chunks_per_s / raw["chunks_per_s"], 3),
        "section_texts": len(section_texts),
        "raw_encode_with_sections": raw_all,
        "end_to_end_share_of_raw_with_sections": round(
            reply.chunks_written / seconds / (len(texts) / raw_all["seconds"]), 3
        ),
        "raw_export": raw_export,
        "end_to_end_share_of_export": round(chunks_per_s / raw_export["chunks_per_s"], 3),
        "raw_export_with_sections": raw_export_all,
        "end_to_end_share_of_export_with_sections": round(
            reply.chunks_written / seconds / (len(texts) / raw_export_all["seconds"]), 3
        ),
    }


def load_export() -> Any:
    """The server's passage path under the default `model.runtime` on a CPU: the passage half
    of the embedder the server builds (under auto the fp32 export), from the host's cache, in a
    session of every available core's threads; whatever the default becomes, this times it."""
    from core.embed.embedder_factory import build_embedder
    from core.embed.onnx_build import cache_root
    from core.embed.sentence_transformer_embedder import default_model_path
    from core.embed.split_runtime_embedder import SplitRuntimeEmbedder
    from server.process_count import available_cores
    from server.settings import Settings

    built = build_embedder(
        default_model_path(),
        Settings().model.runtime,
        onnx_cache=cache_root(),
        onnx_threads=available_cores(),
        document_threads=available_cores(),
    )
    return built.documents if isinstance(built, SplitRuntimeEmbedder) else built


def raw_export_rate(texts: list[str], export: Any, batch_size: int = 32) -> dict[str, Any]:
    """The server's passage path (`load_export`) embedding `texts` as passages, batch 32 as the
    server does, in this process while the server idles."""
    result = _timed_rate(texts, export.embed_documents, batch_size)
    runtime = getattr(export, "runtime", None)  # an OnnxEmbedder's; torch has none
    result["runtime"] = runtime.value if runtime is not None else "torch"
    source = getattr(export, "source", None)  # the ONNX file it runs (fused or plain)
    if source is not None:
        result["file"] = source.name
    return result


def raw_encode_rate(texts: list[str], model: Any, batch_size: int = 32) -> dict[str, Any]:
    """`model` (the bundled model in sentence-transformers on the CPU, torch: what the peers
    run, and the server's passage path without a usable ONNX export) encoding `texts`, in this
    process while the server idles."""
    return _timed_rate(
        texts,
        lambda batch: model.encode(batch, batch_size=batch_size, normalize_embeddings=True),
        batch_size,
    )


def _timed_rate(
    texts: list[str], encode: Callable[[list[str]], Any], batch_size: int
) -> dict[str, Any]:
    """`encode(texts)` timed after a warm-up on one batch: texts, seconds and texts/s."""
    encode(texts[:batch_size])  # warm-up
    started = time.perf_counter()
    encode(texts)
    seconds = time.perf_counter() - started
    return {
        "chunks": len(texts),
        "seconds": round(seconds, 2),
        "chunks_per_s": round(len(texts) / seconds, 2),
    }
