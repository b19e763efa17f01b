"""An `Embedder` backed by a local sentence-transformers model (offline; nothing is downloaded)."""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Literal, overload

import numpy as np
import numpy.typing as npt
import torch
from sentence_transformers import SentenceTransformer

from core.embed.bundled_model import default_model_path as default_model_path  # re-exported
from core.embed.cuda_graph_encoder import BATCH_BUCKETS, CudaGraphQueryEncoder
from core.embed.token_additivity import whitespace_additive

TOKEN_COUNT_CACHE_SIZE = 16_384
"""Texts whose token counts are remembered (least recently used go first)."""
TOKEN_COUNT_CACHE_MAX_CHARS = 8_192
"""Longer texts (whole assembled contexts, documents) are counted but not remembered."""
QUERY_GRAPH_WARM_UP_LENGTHS = (16, 32, 64)  # tokens; longer queries are captured on first use


class SentenceTransformerEmbedder:
    """A sentence-transformers model loaded from `model_path`; thread-safe.

    Encoding is serialised by a lock; token counting uses its own copy of the tokenizer behind
    another lock, so counting during ingestion does not wait for a running encode.
    `half_precision`: run the model in fp16; None means on for CUDA devices. It only applies on
    CUDA (CPU always runs fp32, also for a model directory saved in fp16); returned NumPy
    embeddings are float32 either way. `cuda_graphs`: on a CUDA device, embed query batches of
    up to 64 texts by replaying CUDA graphs (`CudaGraphQueryEncoder`) when the model allows it;
    larger batches, documents, CPU and unsupported models use sentence-transformers directly.
    """

    def __init__(
        self,
        model_path: str,
        device: str = "cpu",
        batch_size: int = 32,
        half_precision: bool | None = None,
        cuda_graphs: bool = True,
    ) -> None:
        self._model = SentenceTransformer(model_path, device=device, local_files_only=True)
        on_cuda = self._model.device.type == "cuda"
        self.precision = "fp16" if on_cuda and half_precision is not False else "fp32"
        if self.precision == "fp16":
            self._model.half()
        else:
            self._model.float()  # a no-op for fp32 weights; an fp16 model copy runs fp32 here
        self._batch_size = batch_size
        self._encode_lock = threading.Lock()
        self._tokenizer: Any = copy.deepcopy(self._model.tokenizer)
        self._tokenizer_lock = threading.Lock()
        self._token_counts: OrderedDict[str, int] = OrderedDict()  # LRU, under _tokenizer_lock
        self.additive_token_counts = whitespace_additive(self._tokenizer)
        dimension = self._model.get_embedding_dimension()
        sequence_length = self._model.max_seq_length
        if dimension is None or sequence_length is None:
            raise ValueError(f"model {model_path!r} declares no embedding dimension or length")
        self.model_name = model_path
        self.dimension: int = int(dimension)
        special_tokens = int(self._tokenizer.num_special_tokens_to_add(pair=False))
        self.max_tokens: int = int(sequence_length) - special_tokens
        self.device = str(self._model.device)
        self._query_graphs = (
            CudaGraphQueryEncoder.for_model(self._model) if cuda_graphs and on_cuda else None
        )

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embeddings of passages: float32, shape (len(texts), dimension), L2-normalised."""
        return self._encode(texts, query=False)

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embeddings of queries: float32, shape (len(texts), dimension), L2-normalised."""
        vectors = self._replay_queries(texts)
        if vectors is not None:
            return vectors.cpu().float().numpy().reshape(len(texts), self.dimension)
        return self._encode(texts, query=True)

    def embed_queries_tensor(self, texts: Sequence[str]) -> torch.Tensor:
        """Query embeddings left on the model's device: (len(texts), dimension), L2-normalised,
        in the model's dtype (float16 on CUDA with half precision, else float32)."""
        replayed = self._replay_queries(texts)
        if replayed is not None:
            return replayed
        return self._encode(texts, query=True, as_tensor=True)

    def warm_up_query_graphs(
        self,
        batch_buckets: Sequence[int] = BATCH_BUCKETS,
        seq_buckets: Sequence[int] = QUERY_GRAPH_WARM_UP_LENGTHS,
    ) -> None:
        """Capture the query CUDA graphs of these buckets now, before the first query needs them;
        a no-op without graph replay."""
        if self._query_graphs is not None:
            with self._encode_lock:
                self._query_graphs.warm_up(batch_buckets, seq_buckets)

    @property
    def query_graphs(self) -> str:
        """How queries are embedded: "off" (sentence-transformers), "eager-static" (bucketed
        forward without graphs) or "cuda-graphs (N captured)"."""
        encoder = self._query_graphs
        if encoder is None:
            return "off"
        if not encoder.graphs_active:
            return "eager-static"
        return f"cuda-graphs ({len(encoder.captured_buckets())} captured)"

    @property
    def dtype(self) -> torch.dtype:
        """The torch dtype the model computes in."""
        return torch.float16 if self.precision == "fp16" else torch.float32

    def count_tokens(self, text: str) -> int:
        """Number of tokenizer tokens in `text`, special tokens excluded."""
        return self.count_tokens_batch([text])[0]

    def count_tokens_batch(self, texts: Sequence[str]) -> list[int]:
        """Token counts of each text (special tokens excluded); texts counted recently come from
        an LRU of TOKEN_COUNT_CACHE_SIZE entries, the rest from one tokenizer call.

        Context assembly measures the same chunks for many queries (about 20 counts per
        Retrieve, roughly 0.5-1 ms each on a CPU core), so the cache takes most of that work off
        every request after the first that saw a chunk.
        """
        if not texts:
            return []
        with self._tokenizer_lock:
            cached = {text: self._token_counts.get(text) for text in texts}
            missing = [text for text, count in cached.items() if count is None]
            known = {text: count for text, count in cached.items() if count is not None}
            if missing:
                encoded = self._tokenizer(missing, add_special_tokens=False, verbose=False)
                known.update(zip(missing, map(len, encoded["input_ids"]), strict=True))
            for text, count in known.items():
                if len(text) <= TOKEN_COUNT_CACHE_MAX_CHARS:
                    self._token_counts[text] = count
                    self._token_counts.move_to_end(text)
            while len(self._token_counts) > TOKEN_COUNT_CACHE_SIZE:
                self._token_counts.popitem(last=False)
        return [known[text] for text in texts]

    def _replay_queries(self, texts: Sequence[str]) -> torch.Tensor | None:
        """Query vectors from the graph encoder; None without one or when no bucket fits."""
        if self._query_graphs is None or not texts:
            return None
        with self._encode_lock:
            return self._query_graphs.encode(texts)

    @overload
    def _encode(
        self, texts: Sequence[str], *, query: bool, as_tensor: Literal[False] = False
    ) -> npt.NDArray[np.float32]: ...

    @overload
    def _encode(
        self, texts: Sequence[str], *, query: bool, as_tensor: Literal[True]
    ) -> torch.Tensor: ...

    def _encode(
        self, texts: Sequence[str], *, query: bool, as_tensor: bool = False
    ) -> npt.NDArray[np.float32] | torch.Tensor:
        """Eager sentence-transformers encoding: float32 NumPy, or (`as_tensor`) a tensor on the
        model's device in its dtype."""
        if not texts:
            if as_tensor:
                return torch.empty((0, self.dimension), dtype=self.dtype, device=self._model.device)
            return np.empty((0, self.dimension), dtype=np.float32)
        encode = self._model.encode_query if query else self._model.encode_document
        with self._encode_lock:
            vectors = encode(
                list(texts),
                batch_size=self._batch_size,
                normalize_embeddings=True,
                show_progress_bar=False,
                convert_to_numpy=not as_tensor,
                convert_to_tensor=as_tensor,
            )
        if as_tensor:
            assert isinstance(vectors, torch.Tensor)
            return vectors.reshape(len(texts), self.dimension)
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.dimension)
