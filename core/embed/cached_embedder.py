"""An Embedder wrapper that keeps document vectors in a SQLite file, keyed by model and text.

For evaluation and benchmarks, where the same corpus is embedded again and again; the server
itself stores each chunk's vector in its collection store and never re-embeds.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from core.embed.delegating_embedder import DelegatingEmbedder
from core.embed.protocol import Embedder


class CachedEmbedder(DelegatingEmbedder):
    """Delegates to `inner`; `embed_documents` reads and fills the cache at `path`."""

    def __init__(self, inner: Embedder, path: Path) -> None:
        super().__init__(inner)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), check_same_thread=False)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vector BLOB NOT NULL)"
        )
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def _key(self, text: str) -> bytes:
        return hashlib.sha256(
            f"{self.model_name}\x00{text}".encode("utf-8", "surrogatepass")
        ).digest()

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Cached vectors where present, the rest computed in one batch and stored."""
        keys = [self._key(t) for t in texts]
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        with self._lock:
            found = dict(self._lookup(keys))
        missing = [i for i, k in enumerate(keys) if k not in found]
        for i, key in enumerate(keys):
            if key in found:
                out[i] = np.frombuffer(found[key], dtype=np.float32)
        if missing:
            computed = self._inner.embed_documents([texts[i] for i in missing])
            out[missing] = computed
            with self._lock, self._db:
                self._db.executemany(
                    "INSERT OR REPLACE INTO vectors VALUES (?, ?)",
                    [
                        (keys[i], computed[j].astype(np.float32).tobytes())
                        for j, i in enumerate(missing)
                    ],
                )
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        return out

    def _lookup(self, keys: Sequence[bytes]) -> list[tuple[bytes, bytes]]:
        rows: list[tuple[bytes, bytes]] = []
        for start in range(0, len(keys), 500):
            batch = keys[start : start + 500]
            marks = ",".join("?" * len(batch))
            rows.extend(
                self._db.execute(f"SELECT key, vector FROM vectors WHERE key IN ({marks})", batch)
            )
        return rows

    def close(self) -> None:
        """Close the cache file."""
        self._db.close()
