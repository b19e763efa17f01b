"""`OnnxEmbedder`: an `Embedder` running an ONNX export of a sentence-transformers model.

The forward pass (the Hugging Face encoder up to `last_hidden_state`) runs in onnxruntime on the
CPU; tokenisation (the model's own fast tokenizer, prompt prepended, special tokens added,
truncated at the model's `max_seq_length`, exactly as sentence-transformers does it), mean pooling
over the attention mask and L2 normalisation run in NumPy. Build and verify the files with
`core.embed.onnx_build`; this module only loads them.

One `onnxruntime.InferenceSession` serves every thread: `run` may be called concurrently and
releases the GIL while it computes, so only tokenisation is serialised here.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from core.embed.length_groups import CALL_OVERHEAD_TOKENS, length_groups
from core.embed.model_runtime import ONNXRUNTIME_INSTALL, ModelRuntime
from core.embed.query_tokenizer import QueryTokenizer, TokenRows
from core.embed.token_additivity import whitespace_additive
from core.embed.token_counter import TokenCounter

FloatArray = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class OnnxModelSpec:
    """What the runtime needs besides the ONNX file: read from the source model at build time."""

    max_seq_length: int
    """Tokens per text, special tokens included; more are truncated."""
    dimension: int
    query_prompt: str
    document_prompt: str
    normalize: bool
    """Whether the source model ends in a Normalize module (the embedder always normalises)."""


def import_onnxruntime() -> Any:
    """The onnxruntime module, or a RuntimeError naming the pip command that installs it."""
    try:
        import onnxruntime
    except ImportError as exc:
        raise RuntimeError(
            f"model.runtime onnx and onnx-int8 need onnxruntime, which is not installed: "
            f'{ONNXRUNTIME_INSTALL}; or set model.runtime = "torch"'
        ) from exc
    return onnxruntime


def session_options(threads: int) -> Any:
    """Options for a CPU session: `threads` intra-op threads (0: one per physical core), one
    inter-op thread, every graph optimisation, no spinning of idle pool threads (on a shared
    2-core host spinning workers take CPU from the request threads)."""
    ort = import_onnxruntime()
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3  # errors only: fusion notices are not for operators
    return options


class OnnxEmbedder:
    """Embeddings from `onnx_path` with the model's fast `tokenizer` (a transformers tokenizer
    or a `SavedTokenizer`, core.embed.saved_tokenizer); thread-safe.

    `model_name` is the source model's name with the runtime appended, so everything keyed by it
    (the query-embedding cache, eval's document-vector cache) keeps runtimes apart; a collection
    records it as the model that indexed it (the model check compares vectors, not names).
    """

    def __init__(
        self,
        onnx_path: Path,
        tokenizer: Any,
        spec: OnnxModelSpec,
        *,
        model_name: str,
        runtime: ModelRuntime,
        batch_size: int = 32,
        threads: int = 0,
    ) -> None:
        ort = import_onnxruntime()
        self._session = ort.InferenceSession(
            str(onnx_path), session_options(threads), providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self._session.get_inputs()}
        self.source = onnx_path
        """The ONNX file the session runs."""
        self._queries = QueryTokenizer(tokenizer, spec.max_seq_length, spec.query_prompt)
        self._documents = QueryTokenizer(tokenizer, spec.max_seq_length, spec.document_prompt)
        self._pad_id = self._queries.pad_id
        self._tokenize_lock = threading.Lock()
        self._counter = TokenCounter(tokenizer)
        self._batch_size = batch_size
        self.call_overhead_tokens = CALL_OVERHEAD_TOKENS
        """The fixed cost of one forward call in padded tokens, for `length_groups`; a huge value
        gives the fewest calls (one padded call per `batch_size` texts)."""
        self.spec = spec
        self.runtime = runtime
        self.model_name = f"{model_name} ({runtime.value})"
        self.dimension = spec.dimension
        special_tokens = int(tokenizer.num_special_tokens_to_add(pair=False))
        self.max_tokens = spec.max_seq_length - special_tokens
        self.device = "cpu"
        self.additive_token_counts = whitespace_additive(tokenizer)

    @property
    def threads(self) -> int:
        """The session's onnxruntime intra-op threads (0: onnxruntime's own choice)."""
        return int(self._session.get_session_options().intra_op_num_threads)

    def embed_documents(self, texts: Sequence[str]) -> FloatArray:
        """Embeddings of passages: float32, shape (len(texts), dimension), L2-normalised."""
        return self._encode(texts, self._documents)

    def embed_queries(self, texts: Sequence[str]) -> FloatArray:
        """Embeddings of queries: float32, shape (len(texts), dimension), L2-normalised."""
        return self._encode(texts, self._queries)

    def count_tokens(self, text: str) -> int:
        """Number of tokenizer tokens in `text`, special tokens excluded."""
        return self._counter.count([text])[0]

    def count_tokens_batch(self, texts: Sequence[str]) -> list[int]:
        """Token counts of each text (special tokens excluded), remembered in an LRU."""
        return self._counter.count(texts)

    def token_rows(self, texts: Sequence[str], *, query: bool) -> TokenRows:
        """Token ids and type ids per text as the model reads them (unpadded)."""
        with self._tokenize_lock:
            return (self._queries if query else self._documents)(texts)

    def _encode(self, texts: Sequence[str], tokenizer: QueryTokenizer) -> FloatArray:
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        with self._tokenize_lock:
            rows = tokenizer(texts)
        order = sorted(range(len(rows)), key=lambda i: len(rows[i][0]))
        lengths = [len(rows[i][0]) for i in order]
        groups = length_groups(lengths, self._batch_size, self.call_overhead_tokens)
        for start, stop in groups:  # the least padding and calls
            picked = order[start:stop]
            out[picked] = self._forward([rows[i] for i in picked])
        return out

    def _forward(self, rows: TokenRows) -> FloatArray:
        """Mean-pooled, L2-normalised vectors of one padded batch: (len(rows), dimension)."""
        width = max(len(ids) for ids, _ in rows)
        ids = np.full((len(rows), width), self._pad_id, dtype=np.int64)
        types = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for r, (row_ids, row_types) in enumerate(rows):
            ids[r, : len(row_ids)] = row_ids
            types[r, : len(row_types)] = row_types
            mask[r, : len(row_ids)] = 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        outputs = self._session.run(None, {k: v for k, v in feed.items() if k in self._inputs})
        hidden: FloatArray = np.asarray(outputs[0], dtype=np.float32)  # (batch, width, hidden)
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        normalised: FloatArray = (pooled / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)
        return normalised
