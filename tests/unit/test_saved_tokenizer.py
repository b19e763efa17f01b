"""`SavedTokenizer` against the transformers tokenizer of the bundled model, on the demo corpus:
the same token rows (truncated, both sides) and counts, the same attributes; and a directory
without the checked attributes file loads with transformers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from transformers import AutoTokenizer

from core.embed.bundled_model import default_model_path
from core.embed.onnx_verification import VERIFICATION_PASSAGES, VERIFICATION_QUERIES
from core.embed.saved_tokenizer import (
    ATTRIBUTES_FILE,
    SavedTokenizer,
    load_tokenizer,
    save_tokenizer,
)
from core.embed.token_additivity import whitespace_additive

DEMO = Path(__file__).resolve().parents[2] / "server" / "demo_corpus"
MAX_LENGTH = 256
CHECKED = VERIFICATION_QUERIES + VERIFICATION_PASSAGES


def _demo_texts() -> list[str]:
    texts = [path.read_text("utf-8") for path in sorted(DEMO.glob("*.md"))]
    return texts + [line for text in texts for line in text.splitlines() if line.strip()]


def _transformers_tokenizer(side: str = "right") -> Any:
    tokenizer = AutoTokenizer.from_pretrained(default_model_path(), local_files_only=True)
    tokenizer.truncation_side = side
    return tokenizer


@pytest.mark.parametrize("side", ["right", "left"])
def test_the_saved_tokenizer_tokenizes_the_demo_corpus_as_transformers_does(
    tmp_path: Path, side: str
) -> None:
    theirs = _transformers_tokenizer(side)
    assert save_tokenizer(theirs, tmp_path, MAX_LENGTH, CHECKED) == "tokenizers"
    ours = load_tokenizer(tmp_path)
    assert isinstance(ours, SavedTokenizer)
    texts = _demo_texts()
    truncated = {"truncation": "longest_first", "max_length": MAX_LENGTH}
    for call in (truncated, {"add_special_tokens": False}):
        expected = theirs(texts, verbose=False, **call)
        got = ours(texts, verbose=False, **call)
        assert got["input_ids"] == expected["input_ids"], call
    assert max(len(row) for row in ours(texts, **truncated)["input_ids"]) == MAX_LENGTH
    assert (ours.pad_token_id, ours.cls_token_id, ours.truncation_side) == (
        theirs.pad_token_id,
        theirs.cls_token_id,
        side,
    )
    assert ours.num_special_tokens_to_add(pair=False) == theirs.num_special_tokens_to_add(
        pair=False
    )
    assert whitespace_additive(ours) is whitespace_additive(theirs) is True


def test_without_the_attributes_file_transformers_loads_it(tmp_path: Path) -> None:
    theirs = _transformers_tokenizer()
    theirs.save_pretrained(str(tmp_path))  # what a build of recipe groundwire-onnx-1 left
    assert not (tmp_path / ATTRIBUTES_FILE).exists()
    loaded = load_tokenizer(tmp_path)
    assert not isinstance(loaded, SavedTokenizer)
    assert loaded(["Hello, World!"])["input_ids"] == theirs(["Hello, World!"])["input_ids"]
