"""`TokenCounter`: token counts of texts from a Hugging Face tokenizer, with an LRU in front."""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

TOKEN_COUNT_CACHE_SIZE = 16_384
"""Texts whose token counts are remembered (least recently used go first)."""
TOKEN_COUNT_CACHE_MAX_CHARS = 8_192
"""Longer texts (whole assembled contexts, documents) are counted but not remembered."""


class TokenCounter:
    """Counts tokens (special tokens excluded) with its own copy of `tokenizer`; thread-safe.

    Context assembly measures the same chunks for many queries (about 20 counts per Retrieve,
    roughly 0.5-1 ms each on a CPU core), so the cache takes most of that work off every
    request after the first that saw a chunk. Its own tokenizer and lock mean counting during
    ingestion never waits for a running encode.
    """

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer: Any = copy.deepcopy(tokenizer)
        self._lock = threading.Lock()
        self._counts: OrderedDict[str, int] = OrderedDict()  # LRU, under _lock

    def count(self, texts: Sequence[str]) -> list[int]:
        """Token counts of each text; texts counted recently come from an LRU of
        TOKEN_COUNT_CACHE_SIZE entries, the rest from one tokenizer call."""
        if not texts:
            return []
        with self._lock:
            cached = {text: self._counts.get(text) for text in texts}
            missing = [text for text, count in cached.items() if count is None]
            known = {text: count for text, count in cached.items() if count is not None}
            if missing:
                encoded = self.tokenizer(missing, add_special_tokens=False, verbose=False)
                known.update(zip(missing, map(len, encoded["input_ids"]), strict=True))
            for text, count in known.items():
                if len(text) <= TOKEN_COUNT_CACHE_MAX_CHARS:
                    self._counts[text] = count
                    self._counts.move_to_end(text)
            while len(self._counts) > TOKEN_COUNT_CACHE_SIZE:
                self._counts.popitem(last=False)
        return [known[text] for text in texts]
