"""Whether a tokenizer's counts add up across whitespace: count(a + "\\n\\n" + b) == count(a) +
count(b).

Context assembly sums block sizes instead of re-tokenizing the whole context when this holds.
It holds for a Hugging Face fast tokenizer whose pre-tokenizer splits on whitespace before the
model sees any text (BERT's, `Whitespace`, `WhitespaceSplit`) and whose normaliser works one
character at a time (BERT's, Unicode forms, lowercasing, accent stripping): no token can then
span a whitespace run, and whitespace itself yields no token. Byte-level BPE and SentencePiece
tokenizers mark the space inside the next token, so they do not qualify.
"""

from __future__ import annotations

from typing import Any

__all__ = ["whitespace_additive"]

_SPLITTING_PRE_TOKENIZERS = frozenset({"BertPreTokenizer", "Whitespace", "WhitespaceSplit"})
_PER_CHARACTER_NORMALIZERS = frozenset(
    {"BertNormalizer", "Lowercase", "NFC", "NFD", "NFKC", "NFKD", "StripAccents"}
)


def whitespace_additive(tokenizer: Any) -> bool:
    """True when `tokenizer` (a transformers fast tokenizer) provably counts additively across
    whitespace; False when it might not, or when it is not a fast tokenizer."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return False
    pre_tokenizer, normalizer = backend.pre_tokenizer, backend.normalizer
    if pre_tokenizer is None or type(pre_tokenizer).__name__ not in _SPLITTING_PRE_TOKENIZERS:
        return False
    return normalizer is None or type(normalizer).__name__ in _PER_CHARACTER_NORMALIZERS
