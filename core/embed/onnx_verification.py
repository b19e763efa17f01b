"""Checks an ONNX embedder against the torch model it was exported from, text by text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from core.embed.onnx_embedder import OnnxEmbedder

MIN_COSINE = 0.99
"""Every verification text's ONNX vector must reach this cosine with the torch vector."""

VERIFICATION_QUERIES = (
    "gil",
    "How do I reverse a list in Python?",
    "why does my multithreaded program not use all cores",
    "What is the difference between a process and a thread?",
    "Ünïcödé façade: how are non-ASCII file names encoded?",
    "How can I find the methods or attributes of an object?",
    "error: externally-managed-environment when running pip install",
    "best way to read a large CSV file line by line without loading it into memory",
)
_PARAGRAPHS = (
    "The global interpreter lock is a mutex that protects access to Python objects, preventing "
    "multiple threads from executing Python bytecodes at once. It exists because CPython's memory "
    "management is not thread-safe. Programs that spend their time in C extensions which release "
    "the lock, such as NumPy or compression libraries, can still use several cores from threads.",
    "To install a package into a virtual environment, create the environment with python -m venv, "
    "activate it, and run pip install with the package name. Pinning exact versions in a "
    "requirements file makes builds reproducible; a lock file records the transitive "
    "dependencies as well, with hashes that pip checks before installing anything.",
    "A decorator is a callable that takes a function and returns another one. The @ syntax applies "
    "it at definition time. functools.wraps copies the name, docstring and signature of the "
    "wrapped function so that introspection and debugging keep working as expected.",
    "Dense retrieval embeds queries and passages into one vector space and ranks passages by "
    "cosine similarity; lexical retrieval scores exact term matches with BM25. Hybrid retrieval "
    "fuses both rankings, which helps with rare identifiers, error messages and version numbers "
    "that an embedding model has never seen during training.",
    "When a server process runs out of file descriptors, accept() fails with EMFILE. Raise the "
    "soft limit with ulimit -n, close idle keep-alive connections sooner, and check for leaks: "
    "every opened socket, pipe and file must be closed on every error path, not only on success.",
    "Floating-point numbers are stored in binary, so 0.1 + 0.2 is not exactly 0.3. Compare with "
    "math.isclose, format with a fixed number of decimals for display, and use the decimal module "
    "for money, where rounding must follow the rules of accounting rather than those of binary.",
)
VERIFICATION_PASSAGES = (
    _PARAGRAPHS[0],
    _PARAGRAPHS[4],
    " ".join(_PARAGRAPHS[:3]),  # about 200 tokens
    " ".join(_PARAGRAPHS),  # past 256 tokens: truncated
    " ".join(reversed(_PARAGRAPHS)) * 2,  # far past 256 tokens
)


@dataclass(frozen=True, slots=True)
class VerificationResult:
    """Per-text cosines folded into a verdict."""

    passed: bool
    reason: str
    """Empty when passed, else which texts fell below MIN_COSINE (and how far)."""
    min_cosine: float
    mean_cosine: float
    texts: int


def verify_against_torch(model: Any, embedder: OnnxEmbedder) -> VerificationResult:
    """Compare `embedder` with `model` (the SentenceTransformer it was exported from) on the
    verification texts: queries and passages, each embedded alone and all in one padded batch
    (both must match, so padding cannot change a vector); also checks that texts longer than
    the model's length are truncated to exactly `max_seq_length` tokens."""
    queries, passages = list(VERIFICATION_QUERIES), list(VERIFICATION_PASSAGES)
    torch_queries = np.asarray(
        model.encode_query(queries, normalize_embeddings=True, show_progress_bar=False)
    )
    torch_passages = np.asarray(
        model.encode_document(passages, normalize_embeddings=True, show_progress_bar=False)
    )
    cosines: list[tuple[str, float]] = []
    for label, texts, reference, embed in (
        ("query", queries, torch_queries, embedder.embed_queries),
        ("passage", passages, torch_passages, embedder.embed_documents),
    ):
        batched = embed(texts)
        alone = np.concatenate([embed([text]) for text in texts])
        for vectors, how in ((batched, "batched"), (alone, "alone")):
            for i, cosine in enumerate(np.sum(vectors * reference, axis=1)):
                cosines.append((f"{label} {i} ({how}, {len(texts[i])} chars)", float(cosine)))
    values = np.asarray([c for _, c in cosines])
    failing = [f"{name}: {cosine:.4f}" for name, cosine in cosines if cosine < MIN_COSINE]
    longest = max(len(ids) for ids, _ in embedder.token_rows(passages, query=False))
    if longest != embedder.spec.max_seq_length:
        failing.append(
            f"longest passage has {longest} tokens, expected {embedder.spec.max_seq_length}"
        )
    reason = ""
    if failing:
        reason = (
            f"{embedder.model_name} differs from the torch model: "
            f"{len(failing)} check(s) below cosine {MIN_COSINE}: " + "; ".join(failing[:6])
        )
    return VerificationResult(
        passed=not failing,
        reason=reason,
        min_cosine=float(values.min()),
        mean_cosine=float(values.mean()),
        texts=len(values),
    )
