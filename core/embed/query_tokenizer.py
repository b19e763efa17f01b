"""`QueryTokenizer`: token rows for texts exactly as sentence-transformers makes them.

Shared by the ONNX embedder and the CUDA-graph query encoder; needs only the model's Hugging
Face tokenizer (no torch).
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Sequence
from typing import Any

logger = logging.getLogger(__name__)

# texts on which the tokenizer backend must agree with the tokenizer call (the last is truncated)
PROBE_TEXTS = (
    "",
    "Hello, World!",
    "Ünïcödé façade, naïve café: ÀÉÎÕÜ?",
    "tabs\tand  spaces\nnew lines",
    "many words " * 400,
)
TokenRows = list[tuple[list[int], list[int]]]
"""Per text: token ids and token type ids, special tokens included, unpadded."""


class QueryTokenizer:
    """Token rows for queries as sentence-transformers makes them: the prompt prepended, special
    tokens added, truncated to `max_length` tokens.

    Calls the fast tokenizer's Rust backend directly (a tenth of the Python overhead of the
    tokenizer call) when it gives the same rows as the tokenizer call on probe texts, else the
    tokenizer call. Works on its own copy of `tokenizer`; not thread-safe (the encoder locks).
    """

    def __init__(self, tokenizer: Any, max_length: int, prompt: str) -> None:
        self._tokenizer = copy.deepcopy(tokenizer)
        self._max_length = max_length
        self._prompt = prompt
        pad = getattr(self._tokenizer, "pad_token_id", None)
        first = getattr(self._tokenizer, "cls_token_id", None)
        self.pad_id: int = int(pad) if pad is not None else 0
        self.filler_id: int = int(first) if first is not None else self.pad_id
        self._backend = self._checked_backend()

    @property
    def uses_backend(self) -> bool:
        """True when rows come from the Rust backend directly."""
        return self._backend is not None

    def __call__(self, texts: Sequence[str]) -> TokenRows:
        prompted = [self._prompt + text for text in texts]
        if self._backend is not None:
            return [(e.ids, e.type_ids) for e in self._backend.encode_batch(prompted)]
        return self._call_tokenizer(prompted)

    def _call_tokenizer(self, texts: list[str]) -> TokenRows:
        encoded = self._tokenizer(
            texts, truncation="longest_first", max_length=self._max_length, verbose=False
        )
        ids: list[list[int]] = encoded["input_ids"]
        types = encoded.get("token_type_ids") or [[0] * len(row) for row in ids]
        return list(zip(ids, types, strict=True))

    def _checked_backend(self) -> Any:
        backend = getattr(self._tokenizer, "backend_tokenizer", None)
        if backend is None or not getattr(self._tokenizer, "is_fast", False):
            return None
        backend = copy.deepcopy(backend)
        backend.no_padding()
        side = getattr(self._tokenizer, "truncation_side", "right")
        backend.enable_truncation(self._max_length, strategy="longest_first", direction=side)
        probes = [self._prompt + text for text in PROBE_TEXTS]
        direct = [(e.ids, e.type_ids) for e in backend.encode_batch(probes)]
        if direct != self._call_tokenizer(probes):
            logger.info("query tokenisation uses the tokenizer call (its backend disagrees)")
            return None
        return backend
