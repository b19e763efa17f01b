"""`SavedTokenizer`: a model's fast tokenizer read back with the `tokenizers` library alone.

An ONNX build (core.embed.onnx_build) saves the model's Hugging Face tokenizer; loading it with
transformers costs a process torch too (transformers 5 imports torch whenever it is installed),
which a reader process embedding queries by onnxruntime never needs otherwise. So the build also
records, in `ATTRIBUTES_FILE`, the few attributes the runtime reads besides the tokenizer's own
`tokenizer.json` (pad and CLS ids, truncation side, special tokens per text), after checking on
`texts` that the file alone tokenizes exactly as the transformers tokenizer does: with special
tokens and truncation (what the model reads) and without (token counts). `load_tokenizer` then
returns a `SavedTokenizer` (no transformers), or the transformers tokenizer when the check failed
or could not run (a slow tokenizer): that model's runtime imports torch, as before.

`SavedTokenizer` offers the part of the transformers fast-tokenizer interface the ONNX runtime
uses (`QueryTokenizer`, `TokenCounter`, `whitespace_additive`); like a transformers tokenizer it
is not thread-safe (its users each lock their own copy).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tokenizers import Tokenizer

logger = logging.getLogger(__name__)

ATTRIBUTES_FILE = "groundwire_tokenizer.json"
BACKEND_FILE = "tokenizer.json"


class SavedTokenizer:
    """A fast tokenizer from its backend file and recorded attributes."""

    is_fast = True

    def __init__(self, backend: Tokenizer, attributes: dict[str, Any]) -> None:
        self.backend_tokenizer = backend
        self.pad_token_id: int | None = attributes["pad_token_id"]
        self.cls_token_id: int | None = attributes["cls_token_id"]
        self.truncation_side: str = attributes["truncation_side"]
        self._special_tokens: int = attributes["special_tokens"]
        backend.no_padding()
        backend.no_truncation()

    @classmethod
    def load(cls, directory: Path) -> SavedTokenizer:
        """The tokenizer saved under `directory`; OSError or ValueError when it is not there."""
        attributes = json.loads((directory / ATTRIBUTES_FILE).read_text("utf-8"))
        return cls(Tokenizer.from_file(str(directory / BACKEND_FILE)), attributes)

    def __call__(
        self,
        texts: Sequence[str],
        *,
        truncation: str | bool = False,
        max_length: int | None = None,
        add_special_tokens: bool = True,
        verbose: bool = False,
    ) -> dict[str, list[list[int]]]:
        """Token ids and type ids per text, unpadded, as the transformers tokenizer call gives
        them (`truncation` "longest_first" or True with `max_length`; `verbose` is ignored)."""
        backend = self.backend_tokenizer
        if truncation and max_length is not None:
            wanted = {
                "max_length": max_length,
                "stride": 0,
                "strategy": "longest_first",
                "direction": self.truncation_side,
            }
            if backend.truncation != wanted:
                backend.enable_truncation(
                    max_length, strategy="longest_first", direction=self.truncation_side
                )
        elif backend.truncation is not None:
            backend.no_truncation()
        encoded = backend.encode_batch(list(texts), add_special_tokens=add_special_tokens)
        return {
            "input_ids": [e.ids for e in encoded],
            "token_type_ids": [e.type_ids for e in encoded],
        }

    def num_special_tokens_to_add(self, pair: bool = False) -> int:
        """Special tokens added to one text (`pair` is not supported)."""
        if pair:
            raise ValueError("SavedTokenizer tokenizes single texts only")
        return self._special_tokens


def save_tokenizer(tokenizer: Any, directory: Path, max_length: int, texts: Sequence[str]) -> str:
    """Save transformers `tokenizer` under `directory` for `load_tokenizer`: its own files, and
    the attributes file when the backend file alone gives the same tokens on `texts` (truncated
    at `max_length`, and without special tokens). Returns "tokenizers" when it does, else
    "transformers" (logged with the reason): loading then needs transformers."""
    tokenizer.save_pretrained(str(directory))
    (directory / ATTRIBUTES_FILE).unlink(missing_ok=True)
    reason = _disagreement(tokenizer, directory, max_length, texts)
    if reason is not None:
        logger.info("the tokenizer loads with transformers (and torch): %s", reason)
        return "transformers"
    attributes = _attributes(tokenizer)
    temporary = directory / f".{ATTRIBUTES_FILE}.{os.getpid()}.tmp"
    temporary.write_text(json.dumps(attributes, indent=2, sort_keys=True), "utf-8")
    os.replace(temporary, directory / ATTRIBUTES_FILE)
    return "tokenizers"


def load_tokenizer(directory: Path) -> Any:
    """The tokenizer saved by `save_tokenizer`: a `SavedTokenizer` when its attributes file is
    there, else the transformers tokenizer (which imports torch when it is installed)."""
    if (directory / ATTRIBUTES_FILE).is_file():
        return SavedTokenizer.load(directory)
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(directory), local_files_only=True)


def _attributes(tokenizer: Any) -> dict[str, Any]:
    pad = getattr(tokenizer, "pad_token_id", None)
    cls = getattr(tokenizer, "cls_token_id", None)
    return {
        "pad_token_id": None if pad is None else int(pad),
        "cls_token_id": None if cls is None else int(cls),
        "truncation_side": str(getattr(tokenizer, "truncation_side", "right")),
        "special_tokens": int(tokenizer.num_special_tokens_to_add(pair=False)),
    }


def _disagreement(
    tokenizer: Any, directory: Path, max_length: int, texts: Sequence[str]
) -> str | None:
    """Why the saved backend file cannot stand in for `tokenizer`, or None when it can."""
    if not getattr(tokenizer, "is_fast", False) or not (directory / BACKEND_FILE).is_file():
        return f"it is not a fast tokenizer with a {BACKEND_FILE}"
    saved = SavedTokenizer(
        Tokenizer.from_file(str(directory / BACKEND_FILE)), _attributes(tokenizer)
    )
    calls: list[dict[str, Any]] = [
        {"truncation": "longest_first", "max_length": max_length},
        {"add_special_tokens": False},
    ]
    for call in calls:
        theirs = tokenizer(list(texts), verbose=False, **call)
        ours = saved(texts, **call)
        types = theirs.get("token_type_ids") or [[0] * len(row) for row in theirs["input_ids"]]
        if ours["input_ids"] != theirs["input_ids"] or (
            call.get("add_special_tokens", True) and ours["token_type_ids"] != types
        ):
            return f"{BACKEND_FILE} alone tokenizes differently ({call})"
    return None
