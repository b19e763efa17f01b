"""The ANN benchmark's data: python-faq sections split into ~150-word passages, the queries, and
their MiniLM embeddings cached under a directory (resumable: every embedded chunk is kept).

Queries are the 172 python-faq questions plus the first sentence of held-out passages (passages
drawn at random and left out of the indexed corpus).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder, default_model_path

PASSAGE_WORDS = 150
EMBED_CHUNK = 256
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+")

FloatArray = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class AnnData:
    """Indexed passages and queries, embedded: float32 (n, 384) and (q, 384), L2-normalised."""

    passages: list[str]
    queries: list[str]
    faq_queries: int  # the first `faq_queries` queries are the python-faq questions
    passage_vectors: FloatArray
    query_vectors: FloatArray


def split_passages(corpus: Path, words: int = PASSAGE_WORDS) -> list[str]:
    """Every section of `corpus` (BEIR corpus.jsonl) as title-prefixed passages of <= `words`."""
    passages: list[str] = []
    with corpus.open(encoding="utf-8") as lines:
        for line in lines:
            doc = json.loads(line)
            tokens = doc["text"].split()
            for start in range(0, len(tokens), words):
                body = " ".join(tokens[start : start + words])
                passages.append(f"{doc['title']}\n{body}" if doc["title"] else body)
    return passages


def first_sentence(passage: str, min_words: int = 5, max_words: int = 30) -> str:
    """The first sentence of at least `min_words` words of a passage's body (title line dropped,
    so reST directives such as ".." are skipped), cut to `max_words`; "" when there is none."""
    body = passage.split("\n", 1)[-1]
    for sentence in _SENTENCE_END.split(body):
        words = sentence.split()
        if len(words) >= min_words:
            return " ".join(words[:max_words])
    return ""


def load(dataset: Path, cache: Path, max_passages: int, held_out: int, seed: int = 5) -> AnnData:
    """Passages (at most `max_passages`, `held_out` of them turned into queries), embedded once."""
    pool = split_passages(dataset / "corpus.jsonl")
    order = np.random.default_rng(seed).permutation(len(pool))[:max_passages]
    chosen = [pool[i] for i in order]
    held = [first_sentence(p) for p in chosen[:held_out]]
    passages = chosen[held_out:]
    with (dataset / "queries.jsonl").open(encoding="utf-8") as lines:
        faq = [json.loads(line)["text"] for line in lines]
    queries = faq + [q for q in held if q]
    embedder = SentenceTransformerEmbedder(default_model_path(), "cpu", batch_size=32)
    passage_vectors = cached_embeddings(embedder, passages, cache, query=False)
    query_vectors = cached_embeddings(embedder, queries, cache, query=True)
    return AnnData(passages, queries, len(faq), passage_vectors, query_vectors)


def cached_embeddings(
    embedder: SentenceTransformerEmbedder, texts: list[str], cache: Path, *, query: bool
) -> FloatArray:
    """Embeddings of `texts` (float32 (n, d)), from `cache` when a previous run computed them."""
    key = hashlib.sha256("\x00".join([embedder.model_name, str(query), *texts]).encode())
    directory = cache / key.hexdigest()[:16]
    final = directory / "all.npy"
    if final.exists():
        return np.load(final)
    directory.mkdir(parents=True, exist_ok=True)
    embed = embedder.embed_queries if query else embedder.embed_documents
    parts: list[FloatArray] = []
    started = time.monotonic()
    for start in range(0, len(texts), EMBED_CHUNK):
        part_file = directory / f"part-{start:07d}.npy"
        if part_file.exists():
            parts.append(np.load(part_file))
            continue
        part = embed(texts[start : start + EMBED_CHUNK])
        np.save(part_file, part)
        parts.append(part)
        done = start + len(part)
        rate = done / max(time.monotonic() - started, 1e-9)
        print(f"embedded {done}/{len(texts)} ({rate:.0f}/s)", flush=True)
    vectors = np.concatenate(parts).astype(np.float32)
    np.save(final, vectors)
    return vectors
